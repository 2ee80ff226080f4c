"""Microaggregation by a sort order and by robust Mahalanobis distance: the methods sdcMicro's
``microaggregation()`` offers beside MDAV, as Templ et al. define them.

Sort-order methods form groups of k consecutive records in an order, the last group taking
the remainder (k + n mod k records), so every group has k..2k-1 records:

- ``simple``: the order of the file;
- ``single``: ascending order of one variable (the first of the block);
- ``onedims``: each variable on its own, in its ascending order (individual ranking);
- ``pca``: ascending order of the first principal component score of the standardised
  variables (the eigenvector of the largest eigenvalue of their covariance matrix).

Ties in an order keep the order of the file (a stable sort).

``rmd`` (robust Mahalanobis distance): on standardised variables, repeatedly take the
remaining record farthest from the robust centre (robust Mahalanobis distance, minimum
covariance determinant estimate) and group it with its k - 1 nearest remaining records
(Euclidean), until fewer than 2k records remain; those form the last group.

References
----------
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for
micro-data using the R package sdcMicro. *Journal of Statistical Software* 67(4), sec. 5.2.
Defays, D. and Nanopoulos, P. (1993). Panels of enterprises and confidentiality: the small
aggregates method. *Proc. Symposium on Design and Analysis of Longitudinal Surveys*, 195-204
(individual ranking).
Rousseeuw, P. J. and Van Driessen, K. (1999). A fast algorithm for the minimum covariance
determinant estimator. *Technometrics* 41(3), 212-223.
"""

from __future__ import annotations

import numpy as np

#: sort-order methods (deterministic)
SORTED_METHODS = ("simple", "single", "onedims", "pca")


def consecutive_labels(order: np.ndarray, k: int) -> np.ndarray:
    """Group labels of k consecutive records of ``order``; the last group takes the
    remainder: floor(n / k) groups, the last of k + (n mod k) records."""
    n = order.size
    g = n // k
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.minimum(np.arange(n, dtype=np.int64) // k, g - 1)
    return labels


def standardise_ddof1(X: np.ndarray) -> np.ndarray:
    """(x - mean) / sd per column, sd with n - 1 (R's ``scale``)."""
    return (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)


def first_pc_scores(X: np.ndarray) -> np.ndarray:
    """Scores on the first principal component of the standardised columns of ``X``, as
    R's ``princomp(scale(x))`` gives them: the eigenvector of the largest eigenvalue of the
    covariance matrix (divisor n), its sign chosen so that its first element is non-negative
    (``princomp``'s ``fix_sign = TRUE``), which fixes the direction of the sort."""
    Z = standardise_ddof1(X)
    C = Z - Z.mean(axis=0)
    cov = C.T @ C / Z.shape[0]
    _, vectors = np.linalg.eigh(cov)
    v = vectors[:, -1]
    if v[0] < 0:
        v = -v
    return C @ v


def sorted_labels(X: np.ndarray, k: int, method: str) -> np.ndarray:
    """Group labels of a sort-order method on the columns of ``X`` (complete values, one
    block; ``onedims`` takes one column at a time, so ``X`` has one column)."""
    n = X.shape[0]
    if method == "simple":
        order = np.arange(n)
    elif method in ("single", "onedims"):
        order = np.argsort(X[:, 0], kind="stable")
    elif method == "pca":
        order = np.argsort(first_pc_scores(X) if X.shape[1] > 1 else X[:, 0], kind="stable")
    else:
        raise ValueError(method)
    return consecutive_labels(order, k)


def robust_distances(X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Squared robust Mahalanobis distances of the standardised rows of ``X`` from the
    reweighted minimum covariance determinant estimate (:func:`fast_mcd`, as robustbase's
    ``covMcd`` that sdcMicro's rmd uses), its random starts drawn from ``rng``."""
    Z = standardise_ddof1(X)
    center, cov = fast_mcd(Z, rng)
    return rmd_distances(Z, center, cov)


def _mahalanobis(Z: np.ndarray, center: np.ndarray, cov: np.ndarray) -> np.ndarray | None:
    try:
        inv = np.linalg.inv(cov)
    except np.linalg.LinAlgError:
        return None
    D = Z - center
    return np.einsum("ij,ij->i", D @ inv, D)


def fast_mcd(Z: np.ndarray, rng: np.random.Generator, *, n_starts: int = 50, n_best: int = 10,
             max_steps: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Reweighted minimum covariance determinant estimate (Rousseeuw & Van Driessen 1999).

    The raw subset of :func:`mcd_subset`; its covariance is scaled for consistency
    (median d^2 / chi2_p(0.5)) and the estimate reweighted on the records with
    d^2 <= chi2_p(0.975) (their sec. 2). Returns (centre, covariance).
    """
    from scipy.special import chdtri  # chi2_p(q) = chdtri(p, 1 - q)

    p = Z.shape[1]
    best = mcd_subset(Z, rng, n_starts=n_starts, n_best=n_best, max_steps=max_steps)
    if best is None:
        return Z.mean(axis=0), np.atleast_2d(np.cov(Z, rowvar=False))
    mu, S = Z[best].mean(axis=0), np.atleast_2d(np.cov(Z[best], rowvar=False))
    d = _mahalanobis(Z, mu, S)
    S = S * (np.median(d) / chdtri(p, 0.5))                # consistency
    d = _mahalanobis(Z, mu, S)
    keep = d <= chdtri(p, 0.025)                           # reweighting
    if keep.sum() > p:
        mu = Z[keep].mean(axis=0)
        S = np.atleast_2d(np.cov(Z[keep], rowvar=False))
    return mu, S


def mcd_subset(Z: np.ndarray, rng: np.random.Generator, *, n_starts: int = 50, n_best: int = 10,
               max_steps: int = 100) -> np.ndarray | None:
    """The raw FAST-MCD subset (Rousseeuw & Van Driessen 1999): row indices of the
    h = floor((n + p + 1) / 2) records of least covariance determinant found, or None.

    ``n_starts`` random (p + 1)-subsets, each grown to h records and improved by two C-steps
    (the h records nearest in Mahalanobis distance under the current estimate: the
    determinant never grows, their Theorem 1); the ``n_best`` lowest determinants are
    iterated to convergence.
    """
    n, p = Z.shape
    h = (n + p + 1) // 2

    def fit(idx):
        sub = Z[idx]
        mu = sub.mean(axis=0)
        S = np.atleast_2d(np.cov(sub, rowvar=False))
        sign, logdet = np.linalg.slogdet(S)
        return mu, S, (logdet if sign > 0 else np.inf)

    def cstep(mu, S):
        d = _mahalanobis(Z, mu, S)
        if d is None:
            return None
        return np.argpartition(d, h - 1)[:h]

    found = []
    for _ in range(n_starts):
        idx = rng.choice(n, size=min(p + 1, n), replace=False)
        mu, S, logdet = fit(idx)
        while not np.isfinite(logdet) and idx.size < n:     # singular start: add records
            idx = np.union1d(idx, rng.choice(n, size=min(n, idx.size + 1), replace=False))
            mu, S, logdet = fit(idx)
        for _ in range(2):
            nxt = cstep(mu, S)
            if nxt is None:
                break
            idx = nxt
            mu, S, logdet = fit(idx)
        found.append((logdet, np.sort(idx)))
    found.sort(key=lambda t: t[0])
    best_logdet, best = np.inf, None
    for logdet, idx in found[:n_best]:
        mu, S, logdet = fit(idx)
        for _ in range(max_steps):
            nxt = cstep(mu, S)
            if nxt is None:
                break
            nxt = np.sort(nxt)
            if np.array_equal(nxt, idx):
                break
            idx = nxt
            mu, S, new = fit(idx)
            if new >= logdet:
                logdet = new
                break
            logdet = new
        if logdet < best_logdet:
            best_logdet, best = logdet, idx
    return best


def rmd_distances(Z: np.ndarray, center: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Squared Mahalanobis distances of the rows of ``Z`` from ``center`` under ``cov``."""
    D = Z - center
    return np.einsum("ij,ij->i", D @ np.linalg.inv(cov), D)


def rmd_labels(X: np.ndarray, k: int, md: np.ndarray) -> np.ndarray:
    """Group labels of the robust-Mahalanobis-distance method (sdcMicro's ``rmd``) given the
    records' robust distances ``md`` (any monotone function of them gives the same groups).

    Each round takes the remaining record of largest ``md`` (the first on ties) and groups it
    with the k - 1 remaining records nearest to it on the standardised variables (Euclidean;
    ties: file order), floor(n / k) - 1 rounds; the records left form the last group.
    """
    Z = standardise_ddof1(X)
    n = Z.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    left = np.ones(n, dtype=bool)
    score = np.asarray(md, dtype=np.float64).copy()
    for g in range(n // k - 1):
        s = int(np.argmax(np.where(left, score, -np.inf)))
        rows = np.flatnonzero(left)
        d = np.sqrt(((Z[rows] - Z[s]) ** 2).sum(axis=1))
        if rows.size > k:
            kth = np.partition(d, k - 1)[k - 1]
            cand = np.flatnonzero(d <= kth)               # rows in file order: ties go to the first
            pick = rows[cand[np.argsort(d[cand], kind="stable")[:k]]]
        else:
            pick = rows
        labels[pick] = g
        left[pick] = False
    labels[left] = max(n // k - 1, 0)
    return labels
