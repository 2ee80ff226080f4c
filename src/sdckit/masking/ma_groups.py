"""Microaggregation on arrays, the parts shared by every grouping: the group-size check, the
optimal univariate partition of Hansen & Mukherjee (2003), and the group SSE and aggregation
(mean or median). MDAV and its kernels are in :mod:`sdckit.masking.mdav_kernels`, which
re-exports these names.

References
----------
Hansen, S. L. and Mukherjee, S. (2003). A polynomial algorithm for optimal univariate
microaggregation. *IEEE TKDE* 15(4), 1043-1044.
"""

from __future__ import annotations

import numba
import numpy as np

from .._validation import check_int
from ..errors import InputError
from ._numeric import check_numeric


def as_2d(X) -> np.ndarray:
    """``X`` as a C-contiguous float64 array of rows (a vector becomes one column)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    return X[:, None] if X.ndim == 1 else X


def check_k(k: int, n: int, where: str) -> int:
    """``k`` checked as a group size for ``n`` records (2 <= k <= n), in the words of ``where``."""
    k = check_int(where, "k", k, min_value=2)
    if k > n:
        raise InputError(f"{where}: k = {k} is larger than the number of records ({n}); "
                         "groups of k records cannot be formed: lower k or add records.")
    return k


# --------------------------------------------------------------------------- optimal univariate
@numba.njit(cache=True)
def _optimal_univariate(x_sorted, k):  # pragma: no cover - compiled
    n = x_sorted.shape[0]
    s1 = np.zeros(n + 1)
    s2 = np.zeros(n + 1)
    for i in range(n):
        s1[i + 1] = s1[i] + x_sorted[i]
        s2[i + 1] = s2[i] + x_sorted[i] * x_sorted[i]
    best = np.full(n + 1, np.inf)
    prev = np.full(n + 1, -1, dtype=np.int64)
    best[0] = 0.0
    for j in range(k, n + 1):
        # the last group is x[i:j] with k <= j - i <= 2k - 1 (Hansen & Mukherjee's shortest path)
        lo = max(0, j - 2 * k + 1)
        for i in range(lo, j - k + 1):
            if best[i] == np.inf:
                continue
            m = j - i
            sse = (s2[j] - s2[i]) - (s1[j] - s1[i]) ** 2 / m
            if sse < 0.0:
                sse = 0.0
            c = best[i] + sse
            if c < best[j]:
                best[j] = c
                prev[j] = i
    labels = np.empty(n, dtype=np.int64)
    j = n
    g = 0
    while j > 0:
        i = prev[j]
        for t in range(i, j):
            labels[t] = g
        g += 1
        j = i
    return labels, best[n]


def optimal_univariate(x: np.ndarray, k: int) -> np.ndarray:
    """Optimal univariate microaggregation (Hansen & Mukherjee 2003): group labels of ``x``.

    Among all partitions into groups of at least k values, the one of least within-group
    sum of squares. Hansen & Mukherjee show an optimal partition has groups of k..2k-1
    values contiguous in sorted order, and find it as a shortest path over the sorted values:
    node i = "the first i values are grouped", arc (i, j) for k <= j - i <= 2k - 1 with length
    the SSE of x_(i+1..j). The DP visits each node once with at most k arcs: O(n k) after the
    O(n log n) sort; each arc length is O(1) from prefix sums.

    Parameters
    ----------
    x : ndarray (n,)
        Values (no NaN).
    k : int >= 2, <= n

    Returns
    -------
    ndarray of int64 (n,)
        Group labels in the input order (0 = smallest values).

    References
    ----------
    Hansen, S. L. and Mukherjee, S. (2003). A polynomial algorithm for optimal univariate
    microaggregation. *IEEE TKDE* 15(4), 1043-1044.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    k = check_k(k, x.size, "optimal_univariate")
    check_numeric(x, None, where="optimal_univariate")
    order = np.argsort(x, kind="stable")
    xs = x[order]
    # centre to keep the prefix-sum differences accurate
    lab_sorted, _ = _optimal_univariate(xs - xs.mean(), int(k))
    labels = np.empty(x.size, dtype=np.int64)
    labels[order] = lab_sorted.max() - lab_sorted      # the kernel labels from the top down
    return labels


def group_sse(Z: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """Within-group sum of squares (SSE) and total sum of squares (SST) of ``Z``.

    SSE = sum_groups sum_members ||z - mean_group||^2, SST = sum ||z - mean||^2, over the
    values present (NaN skipped, records with label -1 skipped).
    """
    Z = as_2d(Z)
    labels = np.asarray(labels)
    keep = labels >= 0
    Z, labels = Z[keep], labels[keep]
    G = int(labels.max()) + 1 if labels.size else 0
    sse = sst = 0.0
    for j in range(Z.shape[1]):
        ok = ~np.isnan(Z[:, j])
        z, lab = Z[ok, j], labels[ok]
        if z.size == 0:
            continue
        cnt = np.bincount(lab, minlength=G).astype(np.float64)
        mean = np.bincount(lab, weights=z, minlength=G) / np.maximum(cnt, 1)
        sse += float(((z - mean[lab]) ** 2).sum())
        sst += float(((z - z.mean()) ** 2).sum())
    return sse, sst


def aggregate_groups(X: np.ndarray, labels: np.ndarray, how: str = "mean") -> np.ndarray:
    """Each row replaced by its group's mean or median per column (label -1: kept as is)."""
    X = as_2d(X)
    labels = np.asarray(labels, dtype=np.int64)
    out = X.copy()
    rows = np.flatnonzero(labels >= 0)
    lab = labels[rows]
    G = int(lab.max()) + 1 if lab.size else 0
    for j in range(X.shape[1]):
        x = X[rows, j]
        ok = ~np.isnan(x)
        x, lj, r = x[ok], lab[ok], rows[ok]
        cnt = np.bincount(lj, minlength=G)
        if how == "mean":
            value = np.bincount(lj, weights=x, minlength=G) / np.maximum(cnt, 1)
        else:  # median: sort by (group, value), take the middle one or two of each group
            order = np.lexsort((x, lj))
            xs = x[order]
            start = np.concatenate(([0], np.cumsum(cnt)[:-1]))
            mid_lo = np.minimum(start + (cnt - 1) // 2, max(xs.size - 1, 0))
            mid_hi = np.minimum(start + cnt // 2, max(xs.size - 1, 0))
            value = (xs[mid_lo] + xs[mid_hi]) / 2 if xs.size else np.zeros(G)
        out[r, j] = value[lj]
    return out
