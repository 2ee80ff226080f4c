"""Microaggregation in a cluster-then-order sequence, and by robust principal components: the
methods ``clustpca``, ``clustpppca``, ``clustmcdpca``, ``influence``, ``mcdpca`` and ``pppca``
of sdcMicro's ``microaggregation()``, with its definitions (Templ, Kowarik & Meindl 2015,
sec. 5.2; read in sdcMicro 5.8.1's ``microaggregation.R`` for the facts below).

All form groups of k consecutive records in one sequence (the last group taking the
remainder, as :func:`sdckit.masking.ma_methods.consecutive_labels`); they differ in the
sequence:

- ``clustpca``, ``clustpppca``, ``clustmcdpca``, ``influence``: the records are clustered
  into ``n_clusters`` clusters by CLARA (Kaufman & Rousseeuw 1990, ch. 3) on their values in
  their own units (sdcMicro computes a log transform but hands the untransformed values to
  ``cluster::clara``); the sequence is cluster 1's records, then cluster 2's, ..., each
  cluster in its own order: the first principal component of its standardised values
  (``clustpca``), the first robust projection-pursuit component (``clustpppca``), the first
  principal component of its MCD covariance (``clustmcdpca``), or the variable on which the
  cluster's medoid has its largest value (``influence``). A cluster with fewer records than
  variables is in the order of the first variable. Groups run across cluster boundaries.
- ``pppca``, ``mcdpca``: the whole file in the order of its first robust component.

CLARA here is the algorithm of ``cluster::clara`` with its defaults (5 samples of
min(n, 40 + 2 n_clusters) records drawn by the program's own congruential generator
x <- (5761 x + 999) mod 2^16, from x = 0; BUILD and SWAP on each sample; every record
assigned to its nearest medoid; the sample of least total distance kept; clusters numbered
by first appearance in the file), so it is deterministic and gives sdcMicro's clusters.

The projection-pursuit component is sdcMicro's ``prcompRob``: centre at the coordinatewise
median; the candidate directions are the centred records, normalised; the first component is
the candidate on which the projections of the records have the largest MAD (Croux &
Ruiz-Gazen 2005, sec. 2). The MCD covariance is a FAST-MCD estimate
(:func:`sdckit.masking.ma_methods.mcd_subset`, 500 starts) reweighted as ``MASS::cov.mcd`` reweights
(its sec. in Venables & Ripley 2002, 5.7): random, so these two methods record their seed.

References
----------
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for
micro-data using the R package sdcMicro. *Journal of Statistical Software* 67(4), sec. 5.2.
Kaufman, L. and Rousseeuw, P. J. (1990). *Finding Groups in Data*, Wiley, ch. 2 (PAM: BUILD
and SWAP) and ch. 3 (CLARA).
Croux, C. and Ruiz-Gazen, A. (2005). High breakdown estimators for principal components: the
projection-pursuit approach revisited. *Journal of Multivariate Analysis* 95(1), 206-226.
Venables, W. N. and Ripley, B. D. (2002). *Modern Applied Statistics with S*, 4th ed., sec. 5.7.
"""

from __future__ import annotations

import numba
import numpy as np

from .ma_methods import consecutive_labels, first_pc_scores, mcd_subset, standardise_ddof1

#: methods that cluster first (CLARA), then order within clusters
CLUSTER_METHODS = ("clustpca", "clustpppca", "clustmcdpca", "influence")
#: methods ordered by a robust first component of the whole file
ROBUST_PCA_METHODS = ("pppca", "mcdpca")
#: the methods whose order depends on a random MCD estimate
RANDOM_METHODS = ("clustmcdpca", "mcdpca")


# ------------------------------------------------------------------ CLARA
@numba.njit(cache=True)
def _distances(X, rows):
    """Euclidean distances between the records ``rows`` of ``X``, summed over the columns in
    their order (as the C program does, so that equal inputs give equal bits)."""
    m = rows.size
    p = X.shape[1]
    D = np.zeros((m, m))
    for a in range(1, m):
        for b in range(a):
            s = 0.0
            for j in range(p):
                d = X[rows[a], j] - X[rows[b], j]
                s += d * d
            D[a, b] = np.sqrt(s)
            D[b, a] = D[a, b]
    return D


@numba.njit(cache=True)
def _build_swap(D, k):
    """PAM's BUILD then SWAP on the distance matrix ``D`` of a sample (Kaufman & Rousseeuw 1990,
    sec. 2.4), as clara's sample step runs it (its original swap rule, ``pamLike = FALSE``).
    Returns a boolean mask of the k medoids."""
    n = D.shape[0]
    s = 0.0
    for a in range(n):
        for b in range(n):
            if D[a, b] > s:
                s = D[a, b]
    s = s * 1.1 + 1.0                                     # larger than every distance
    repr_ = np.zeros(n, dtype=np.bool_)
    near = np.full(n, s)
    for _ in range(k):                                    # BUILD: the largest gain, last on ties
        best, gain_max = -1, 0.0
        for i in range(n):
            if repr_[i]:
                continue
            gain = 0.0
            for j in range(n):
                c = near[j] - D[i, j]
                if c > 0.0:
                    gain += c
            if gain_max <= gain:
                gain_max, best = gain, i
        repr_[best] = True
        for j in range(n):
            if near[j] > D[best, j]:
                near[j] = D[best, j]
    if k == 1:
        return repr_
    second = np.empty(n)
    while True:                                           # SWAP while the total distance falls
        for j in range(n):
            near[j], second[j] = s, s
            for i in range(n):
                if repr_[i]:
                    if near[j] > D[i, j]:
                        second[j] = near[j]
                        near[j] = D[i, j]
                    elif second[j] > D[i, j]:
                        second[j] = D[i, j]
        change, h_best, i_best = 1.0, -1, -1
        for h in range(n):
            if repr_[h]:
                continue
            for i in range(n):
                if not repr_[i]:
                    continue
                dz = 0.0                                  # T_ih = sum_j C_jih
                for j in range(n):
                    if D[i, j] == near[j]:
                        small = D[h, j] if second[j] > D[i, j] else second[j]
                        dz += small - near[j]
                    elif D[h, j] < near[j]:
                        dz += D[h, j] - near[j]
                if change > dz:
                    change, h_best, i_best = dz, h, i
        if change < 0.0:
            repr_[h_best] = True
            repr_[i_best] = False
        else:
            return repr_


@numba.njit(cache=True)
def _assign_all(X, medoids):
    """Every record to its nearest medoid (squared distances, the first on ties; a medoid to
    its own cluster); returns (total distance, medoids renumbered by first appearance)."""
    n, p = X.shape
    k = medoids.size
    label = np.empty(n, dtype=np.int64)
    total = 0.0
    for i in range(n):
        best, dbest = 0, 0.0
        for c in range(k):
            m = medoids[c]
            if m == i:
                best, dbest = c, 0.0
                continue
            s = 0.0
            for j in range(p):
                d = X[m, j] - X[i, j]
                s += d * d
            if c == 0 or s < dbest:
                best, dbest = c, s
        label[i] = best
        total += np.sqrt(dbest)
    order = np.full(k, -1, dtype=np.int64)
    seen = np.zeros(k, dtype=np.bool_)
    nxt = 0
    for i in range(n):
        if nxt == k:
            break
        if not seen[label[i]]:
            seen[label[i]] = True
            order[nxt] = label[i]
            nxt += 1
    return total, medoids[order]


@numba.njit(cache=True)
def _final_labels(X, medoids):
    """Cluster of every record: its nearest medoid by distance (the first on ties)."""
    n, p = X.shape
    k = medoids.size
    label = np.empty(n, dtype=np.int64)
    for i in range(n):
        best, dbest = 0, 0.0
        for c in range(k):
            m = medoids[c]
            s = 0.0
            for j in range(p):
                d = X[m, j] - X[i, j]
                s += d * d
            s = np.sqrt(s)
            if c == 0 or dbest > s:
                best, dbest = c, s
        label[i] = best
    for c in range(k):
        label[medoids[c]] = c
    return label


def _clara_samples(n: int, sampsize: int, samples: int):
    """The samples of clara's own generator, as a generator of sorted 0-based index arrays;
    it is sent the medoids (0-based) of the best sample so far after each sample."""
    state = 0

    def draw() -> int:
        nonlocal state
        state = (state * 5761 + 999) & 0xFFFF
        return 1 + int(float(n) * (state / 65536.0))      # 1-based, as the C program

    if n == sampsize:                                     # one sample: the whole file
        yield np.arange(n)
        return
    large = n < 2 * sampsize                              # draw the records left out instead
    n_draw = n - sampsize if large else sampsize
    best: set[int] = set()
    for _ in range(samples):
        chosen: set[int]
        if best and not large:
            chosen = set(best)
        else:
            r = draw()
            while best and r in best:
                r = draw()
            chosen = {r}
        while len(chosen) < n_draw:
            r = draw()
            if (best and large and r in best) or r in chosen:
                continue
            chosen.add(r)
        if large:
            picked = np.setdiff1d(np.arange(1, n + 1), np.fromiter(chosen, dtype=np.int64))
        else:
            picked = np.array(sorted(chosen), dtype=np.int64)
        medoids = yield picked - 1
        if medoids is not None:
            best = {int(m) + 1 for m in medoids}


def clara(X: np.ndarray, k: int, *, samples: int = 5, sampsize: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """CLARA clustering of the rows of ``X`` (Euclidean, values as given), as ``cluster::clara``
    with ``rngR = FALSE`` and ``pamLike = FALSE`` (its defaults).

    Parameters
    ----------
    X : ndarray (n, p)
        Complete values.
    k : int
        Number of clusters, 1 <= k <= n - 1.
    samples : int
        Samples drawn (clara's ``samples``).
    sampsize : int, optional
        Records per sample; default min(n, 40 + 2k).

    Returns
    -------
    labels : ndarray of int64
        Cluster of every record, 0..k-1 (clara's ``clustering`` minus one).
    medoids : ndarray of int64
        Row of each cluster's medoid.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    sampsize = min(n, 40 + 2 * k) if sampsize is None else sampsize
    if not 1 <= k <= n - 1 or sampsize < max(2, k + 1) or sampsize > n:
        raise ValueError(f"clara: k = {k}, sampsize = {sampsize} need 1 <= k <= n - 1 = {n - 1} and "
                         f"k + 1 <= sampsize <= n")
    gen = _clara_samples(n, sampsize, samples)
    best_total, best_medoids = np.inf, None
    rows = next(gen)
    while True:
        D = _distances(X, rows)
        medoids = rows[np.flatnonzero(_build_swap(D, k))]  # rows ascending: medoids in file order
        total, medoids = _assign_all(X, medoids)
        if best_medoids is None or best_total > total:    # strictly better: the first on ties
            best_total, best_medoids = total, medoids
        try:
            rows = gen.send(best_medoids)
        except StopIteration:
            break
    return _final_labels(X, best_medoids), best_medoids


# ------------------------------------------------------------------ robust first components
def _median(v: np.ndarray) -> float:
    """R's ``median``: the middle value, or the mean of the two middle values."""
    n = v.size
    s = np.partition(v, [(n - 1) // 2, n // 2])
    a, b = s[(n - 1) // 2], s[n // 2]
    return float(a) if n % 2 else 0.5 * a + 0.5 * b


@numba.njit(cache=True)
def _med(v):
    n = v.size
    s = np.partition(v, n // 2)                          # O(n): the upper middle value in place
    if n % 2:
        return s[n // 2]
    return 0.5 * s[: n // 2].max() + 0.5 * s[n // 2]


@numba.njit(cache=True)
def _pp_direction(X, A):
    """Index of the candidate direction (row of ``A``) on which the projections of the rows of
    ``X`` have the largest MAD, the last on ties; candidates with a NaN are skipped."""
    n, p = X.shape
    best, best_mad = -1, -1.0
    y = np.empty(n)
    for c in range(A.shape[0]):
        if np.isnan(A[c, 0]):
            continue
        for r in range(n):
            s = 0.0
            for j in range(p):
                s += A[c, j] * X[r, j]
            y[r] = s
        m = _med(y)
        mad = 1.4826 * _med(np.abs(y - m))
        if mad >= best_mad:
            best, best_mad = c, mad
    return best


def pp_first_scores(X: np.ndarray) -> np.ndarray:
    """Scores on the first projection-pursuit component of ``X`` (sdcMicro's ``prcompRob``,
    MAD as the scale; Croux & Ruiz-Gazen 2005, sec. 2): the records centred at the
    coordinatewise median, projected on the candidate (a centred record, normalised) that
    maximises the MAD of the projections, its sign such that its first element is >= 0.
    A record at the median in every variable is no candidate (it has no direction)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    centre = np.array([_median(X[:, j]) for j in range(X.shape[1])])
    C = X - centre
    norm = np.sqrt((C * C).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        A = C * (1.0 / norm)[:, None]
    A[norm == 0] = np.nan
    j = _pp_direction(X, A)
    if j < 0:                                             # every record at the median: no order
        return np.zeros(X.shape[0])
    v = A[j].copy()
    if v[0] < 0:
        v = -v
    return _dot_rows(C, v)


@numba.njit(cache=True)
def _dot_rows(C, v):
    out = np.empty(C.shape[0])
    for r in range(C.shape[0]):
        s = 0.0
        for j in range(C.shape[1]):
            s += C[r, j] * v[j]
        out[r] = s
    return out


def mcd_estimate(X: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Reweighted MCD estimate of location and covariance as ``MASS::cov.mcd`` reweights it
    (Venables & Ripley 2002, sec. 5.7): the raw subset of h = floor((n + p + 1) / 2) records
    of least covariance determinant (FAST-MCD, :func:`sdckit.masking.ma_methods.mcd_subset`),
    its covariance inflated by (1 + 15 / (n - p))^2; the records with squared distance below
    chi2_p(0.975) q / chi2_p(h / n), q the h / n quantile of the distances, give the mean and
    covariance. Returns (centre, covariance) in the units of ``X``."""
    from scipy.stats import chi2

    n, p = X.shape
    h = (n + p + 1) // 2
    # 500 random starts, as Rousseeuw & Van Driessen's FAST-MCD (sec. 3); affine equivariant,
    # so the standardised values give the same subset
    best = mcd_subset(standardise_ddof1(X), rng, n_starts=500)
    sub = X[best]
    mu = sub.mean(axis=0)
    S = np.atleast_2d(np.cov(sub, rowvar=False)) * (1 + 15 / (n - p)) ** 2
    D = X - mu
    d = np.einsum("ij,ij->i", D @ np.linalg.pinv(S), D)
    cut = chi2.ppf(0.975, p) * np.quantile(d, h / n) / chi2.ppf(h / n, p)
    keep = d < cut
    if keep.sum() <= p:
        keep = np.zeros(n, dtype=bool)
        keep[best] = True
    return X[keep].mean(axis=0), np.atleast_2d(np.cov(X[keep], rowvar=False))


def mcd_pca_scores(X: np.ndarray, center: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Scores on the first principal component of an MCD covariance, as sdcMicro computes them
    (``princomp(scale(x, center, sqrt(diag(cor))), covmat = mcd)``: the records scaled by the
    correlation matrix's diagonal, centred at the MCD centre, on the eigenvector of the largest
    eigenvalue of ``cov`` with its first element >= 0)."""
    sd = np.sqrt(np.diag(cov))
    cor_diag = np.diag(cov / np.outer(sd, sd))
    Zs = (X - center) / np.sqrt(cor_diag)
    _, vectors = np.linalg.eigh(cov)
    v = vectors[:, -1]
    if v[0] < 0:
        v = -v
    return (Zs - center) @ v


# ------------------------------------------------------------------ the sequences
def _stable_order(score: np.ndarray) -> np.ndarray:
    return np.argsort(score, kind="stable")


def _first_pc_safe(X: np.ndarray) -> np.ndarray:
    """First principal component scores of the standardised columns; a constant column (sd 0,
    where sdcMicro's ``scale`` gives NaN and ``princomp`` stops) counts as zero."""
    sd = X.std(axis=0, ddof=1)
    if np.all(sd > 0):
        return first_pc_scores(X)
    keep = sd > 0
    if not keep.any():
        return np.zeros(X.shape[0])
    return first_pc_scores(X[:, keep]) if keep.sum() > 1 else standardise_ddof1(X[:, keep])[:, 0]


def _cluster_order(Xc: np.ndarray, method: str, medoid: np.ndarray, rng: np.random.Generator | None,
                   mcd=None) -> np.ndarray:
    """The order of one cluster's records (positions within the cluster)."""
    n, p = Xc.shape
    if method == "influence":                            # the medoid's largest variable (first on ties)
        return _stable_order(Xc[:, int(np.argmax(medoid))])
    if n < p:
        return _stable_order(Xc[:, 0])                    # sdcMicro's varsort = 1
    if method == "clustpca":
        return _stable_order(_first_pc_safe(Xc))
    if method == "clustpppca":
        return _stable_order(pp_first_scores(Xc))
    return _stable_order(_mcd_scores(Xc, rng, mcd))


def _mcd_scores(X: np.ndarray, rng: np.random.Generator | None, mcd=None) -> np.ndarray:
    n, p = X.shape
    if n <= p + 1 or np.any(X.std(axis=0, ddof=1) == 0):
        return _first_pc_safe(X)                          # no MCD here (MASS's cov.mcd stops)
    center, cov = mcd(X) if mcd is not None else mcd_estimate(X, np.random.default_rng(rng))
    return mcd_pca_scores(X, center, cov)


def clustered_sequence(X: np.ndarray, method: str, n_clusters: int,
                       rng: np.random.Generator | None = None, mcd=None) -> np.ndarray:
    """The sequence of records (row indices) of a cluster method: CLARA's clusters in their
    order, each in its own order; ``mcd(X) -> (centre, covariance)`` replaces the MCD
    estimate (e.g. by another tool's, to compare the orders given the same estimates)."""
    labels, medoids = clara(X, n_clusters)
    parts = []
    for c in range(n_clusters):
        rows = np.flatnonzero(labels == c)
        parts.append(rows[_cluster_order(X[rows], method, X[medoids[c]], rng, mcd)])
    return np.concatenate(parts)


def clustering_labels(X: np.ndarray, k: int, method: str, *, n_clusters: int = 8,
                      rng: np.random.Generator | None = None, mcd=None) -> np.ndarray:
    """Group labels of the methods of this module on the columns of ``X`` (complete values,
    in their own units); ``rng`` draws the MCD's subsets of ``clustmcdpca`` and ``mcdpca``
    (``mcd``: as in :func:`clustered_sequence`)."""
    if method in CLUSTER_METHODS:
        order = clustered_sequence(X, method, n_clusters, rng, mcd)
    elif method == "pppca":
        order = _stable_order(pp_first_scores(X))
    elif method == "mcdpca":
        order = _stable_order(_mcd_scores(X, rng, mcd))
    else:
        raise ValueError(method)
    return consecutive_labels(order, k)
