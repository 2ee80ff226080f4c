"""Microaggregation: replace each record's values by the mean (or median) of a group of at
least k similar records, so that every released combination is shared by k or more records.

MDAV (maximum distance to average vector) for several variables at once, the optimal
univariate method of Hansen & Mukherjee, and a partitioned MDAV for millions of records.
All work on standardised variables and give groups of k..2k-1 records, within strata.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd

from .._validation import check_choice, check_int, check_names
from ..errors import InputError
from ..microdata import Microdata
from ..registry import register_step
from ..result import Guarantee
from ._numeric import ContinuousResult, _names, check_numeric, moments_summary, select_numeric, standardise, strata_rows


# --------------------------------------------------------------------------- MDAV
# The active records are kept compacted in W (rows 0..m-1) with their original indices in
# idx, so every scan is sequential; a removed row is overwritten by the last active row.
# Each scan is split in chunks over the cores (prange) and the chunk results are combined.

@numba.njit(cache=True, inline="always")
def _d2(W, t, c):  # pragma: no cover - compiled
    s = 0.0
    for j in range(W.shape[1]):
        d = W[t, j] - c[j]
        s += d * d
    return s


@numba.njit(cache=True, parallel=True)
def _scan(W, m, c, k, n_chunks):  # pragma: no cover - compiled
    """One pass over the m active rows: the farthest row from c, and the k nearest rows to c."""
    far_d = np.full(n_chunks, -1.0)
    far_t = np.full(n_chunks, -1, dtype=np.int64)
    near_d = np.full((n_chunks, k), np.inf)
    near_t = np.full((n_chunks, k), -1, dtype=np.int64)
    size = (m + n_chunks - 1) // n_chunks
    for ch in numba.prange(n_chunks):
        lo = ch * size
        hi = min(m, lo + size)
        for t in range(lo, hi):
            d = _d2(W, t, c)
            if d > far_d[ch]:
                far_d[ch] = d
                far_t[ch] = t
            if d < near_d[ch, k - 1]:
                q = k - 1
                while q > 0 and near_d[ch, q - 1] > d:
                    near_d[ch, q] = near_d[ch, q - 1]
                    near_t[ch, q] = near_t[ch, q - 1]
                    q -= 1
                near_d[ch, q] = d
                near_t[ch, q] = t
    # combine the chunks
    best = -1.0
    far = -1
    for ch in range(n_chunks):
        if far_d[ch] > best:
            best = far_d[ch]
            far = far_t[ch]
    flat_d = near_d.ravel()
    flat_t = near_t.ravel()
    order = np.argsort(flat_d)
    near = np.empty(k, dtype=np.int64)
    for q in range(k):
        near[q] = flat_t[order[q]]
    return far, near


@numba.njit(cache=True)
def _remove(W, idx, m, rows, labels, g, sums):  # pragma: no cover - compiled
    """Give the rows label g, subtract them from the column sums and swap-remove them."""
    rows = np.sort(rows)
    for q in range(rows.shape[0] - 1, -1, -1):
        t = rows[q]
        labels[idx[t]] = g
        for j in range(W.shape[1]):
            sums[j] -= W[t, j]
        m -= 1
        if t != m:
            for j in range(W.shape[1]):
                W[t, j] = W[m, j]
            idx[t] = idx[m]
    return m


@numba.njit(cache=True)
def _mdav(Z, k, n_chunks):  # pragma: no cover - compiled
    """MDAV (Domingo-Ferrer & Mateo-Sanz 2002) on standardised Z: group labels 0..G-1."""
    n, p = Z.shape
    W = Z.copy()
    idx = np.arange(n)
    labels = np.full(n, -1, dtype=np.int64)
    sums = np.zeros(p)
    for i in range(n):
        for j in range(p):
            sums[j] += W[i, j]
    m = n
    c = np.empty(p)
    g = 0
    while m >= 3 * k:
        for j in range(p):
            c[j] = sums[j] / m
        r, _ = _scan(W, m, c, 1, n_chunks)            # x_r: the record farthest from the centroid
        xr = W[r].copy()
        s, near_r = _scan(W, m, xr, k, n_chunks)      # x_s: farthest from x_r; x_r's k nearest
        xs = W[s].copy()
        m = _remove(W, idx, m, near_r, labels, g, sums)
        g += 1
        _, near_s = _scan(W, m, xs, k, n_chunks)      # x_s's k nearest among the rest
        m = _remove(W, idx, m, near_s, labels, g, sums)
        g += 1
    if m >= 2 * k:
        for j in range(p):
            c[j] = sums[j] / m
        r, _ = _scan(W, m, c, 1, n_chunks)
        _, near_r = _scan(W, m, W[r].copy(), k, n_chunks)
        m = _remove(W, idx, m, near_r, labels, g, sums)
        g += 1
    for t in range(m):                                # the rest: one group of k..2k-1 records
        labels[idx[t]] = g
    if m > 0:
        g += 1
    return labels


def _chunks(n: int) -> int:
    """Chunks per scan: one per thread, but none smaller than 4,096 rows."""
    return max(1, min(numba.get_num_threads(), n // 4096))


def _as_2d(X) -> np.ndarray:
    X = np.ascontiguousarray(X, dtype=np.float64)
    return X[:, None] if X.ndim == 1 else X


def _check_k(k: int, n: int, where: str) -> int:
    k = check_int(where, "k", k, min_value=2)
    if k > n:
        raise InputError(f"{where}: k = {k} is larger than the number of records ({n}); "
                         "groups of k records cannot be formed: lower k or add records.")
    return k


def mdav(X: np.ndarray, k: int) -> np.ndarray:
    """MDAV group labels (0..G-1) of the rows of ``X``.

    Standardise ``X`` first when its columns have different scales (:func:`microaggregate_array`
    does). Every group has between k and 2k - 1 records.

    Parameters
    ----------
    X : ndarray (n, p) or (n,)
        Complete records (no NaN).
    k : int >= 2, <= n
        Minimum group size.

    Returns
    -------
    ndarray of int64 (n,)

    Notes
    -----
    MDAV (Domingo-Ferrer & Mateo-Sanz 2002; the form of Domingo-Ferrer & Torra 2005,
    Algorithm 1): while at least 3k records remain, take the centroid c of the remaining
    records, x_r the record farthest from c, x_s the record farthest from x_r, form a group
    of x_r and its k - 1 nearest records and a group of x_s and its k - 1 nearest among the
    rest. With 2k..3k-1 left, one more group around the record farthest from the centroid;
    the rest (k..2k-1 records) is the last group. Each step is a scan of the remaining
    records compiled with numba and split over the cores: O(n^2 / k) distance evaluations.

    References
    ----------
    Domingo-Ferrer, J. and Mateo-Sanz, J. M. (2002). Practical data-oriented microaggregation
    for statistical disclosure control. *IEEE TKDE* 14(1), 189-201.
    Domingo-Ferrer, J. and Torra, V. (2005). Ordinal, continuous and heterogeneous
    k-anonymity through microaggregation. *Data Min. Knowl. Discov.* 11(2), 195-212.
    """
    X = _as_2d(X)
    k = _check_k(k, X.shape[0], "mdav")
    check_numeric(X, None, where="mdav")
    return _mdav(X, k, _chunks(X.shape[0]))


def _principal_axis(X: np.ndarray) -> np.ndarray:
    """First principal axis of the rows of X (eigenvector of the p x p scatter matrix)."""
    Xc = X - X.mean(axis=0)
    _, vecs = np.linalg.eigh(Xc.T @ Xc)
    return vecs[:, -1]


def mdav_partitioned(X: np.ndarray, k: int, block: int = 10_000) -> np.ndarray:
    """Scalable MDAV for millions of records: MDAV within cells of a principal-axis k-d split.

    The records are split recursively at the median of their projection on the cell's first
    principal axis until every cell holds at most ``block`` records (each cell keeps >= k
    records); MDAV runs in each cell. The cost is O(n * block / k) distance evaluations
    instead of O(n^2 / k); groups never straddle cells, which costs some SSE against full
    MDAV (measured in docs/methods/microaggregation.md). Every group has k..2k-1 records.

    Parameters
    ----------
    X : ndarray (n, p)
        Complete records, standardised when scales differ.
    k : int >= 2
    block : int >= 2k
        Largest cell.
    """
    X = _as_2d(X)
    k = _check_k(k, X.shape[0], "mdav_partitioned")
    block = check_int("mdav_partitioned", "block", block, min_value=2 * k)
    n = X.shape[0]
    labels = np.empty(n, dtype=np.int64)
    offset = 0
    stack = [np.arange(n)]
    while stack:                                   # a cell is split or solved: O(log(n / block)) levels
        rows = stack.pop()
        if rows.size <= block:
            lab = _mdav(np.ascontiguousarray(X[rows]), k, _chunks(rows.size))
            labels[rows] = lab + offset
            offset += int(lab.max()) + 1
            continue
        proj = X[rows] @ _principal_axis(X[rows])
        half = rows.size // 2                      # both halves >= block / 2 >= k
        part = np.argpartition(proj, half)
        stack.append(rows[part[half:]])
        stack.append(rows[part[:half]])
    return labels

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
    k = _check_k(k, x.size, "optimal_univariate")
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
    Z = _as_2d(Z)
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
    X = _as_2d(X)
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


def _variable_blocks(p: int, variables_per_group: int | None, method: str) -> list[list[int]]:
    if method == "univariate":
        return [[j] for j in range(p)]
    size = variables_per_group or p
    return [list(range(i, min(i + size, p))) for i in range(0, p, size)]


def _group(Z: np.ndarray, k: int, method: str, block: int) -> np.ndarray:
    if method == "univariate":
        return optimal_univariate(Z[:, 0], k)
    if method == "mdav_partitioned":
        return mdav_partitioned(Z, k, block)
    return _mdav(np.ascontiguousarray(Z), k, _chunks(Z.shape[0]))


def microaggregate_array(X: np.ndarray, k: int, *, variables_per_group: int | None = None,
                         method: str = "mdav", aggregate: str = "mean", strata: np.ndarray | None = None,
                         missing: str = "refuse", block: int = 10_000, names: Sequence[str] | None = None
                         ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Microaggregate the columns of ``X`` on standardised values; returns (masked X, labels).

    Parameters
    ----------
    X : ndarray (n, p)
        Continuous values in their own units.
    k : int >= 2
        Minimum group size; every group has k..2k-1 records.
    variables_per_group : int, optional
        Microaggregate the variables this many at a time (consecutive columns; e.g. 4 as in
        Sebé et al.'s Table 5.2), each block with its own groups; default: all at once.
        Ignored by ``method="univariate"`` (each variable on its own).
    method : {"mdav", "mdav_partitioned", "univariate"}
        MDAV; MDAV within principal-axis cells of at most ``block`` records (millions of
        records); the optimal univariate method of Hansen & Mukherjee, per variable.
    aggregate : {"mean", "median"}
        The value given to a group's members (in original units).
    strata : ndarray of int, optional
        Stratum code per record: groups are formed within strata (each stratum needs k records).
    missing : {"refuse", "separate"}
        "refuse": NaN is an error (counted, with where). "separate": within a block, records
        are grouped with records of the same missingness pattern, on the variables they have;
        NaN stays NaN; a record missing all the block's variables is left as it is (label -1).
        A pattern with fewer than k records is an error.
    block : int
        Largest cell of ``mdav_partitioned``.
    names : list of str, optional
        Column names for messages.

    Returns
    -------
    X_masked : ndarray (n, p)
        A new array; the input is not modified.
    labels : list of ndarray of int64
        Group labels per variable block (in ``_variable_blocks`` order), -1 for a record left as is.
    """
    owner = "microaggregate_array"
    check_choice(owner, "method", method, METHODS)
    check_choice(owner, "aggregate", aggregate, ("mean", "median"))
    check_choice(owner, "missing", missing, ("refuse", "separate"))
    if variables_per_group is not None:
        check_int(owner, "variables_per_group", variables_per_group, min_value=1)
    X = check_numeric(X, names, where=owner, allow_nan=(missing == "separate"))
    n, p = X.shape
    k = _check_k(k, n, owner)
    Z, _, _ = standardise(X, names, where=owner)
    strata_list = [np.arange(n)] if strata is None else strata_rows(np.asarray(strata))
    out = X.copy()
    all_labels = []
    for cols in _variable_blocks(p, variables_per_group, method):
        labels = np.full(n, -1, dtype=np.int64)
        offset = 0
        nan = np.isnan(Z[:, cols])
        pattern = (nan * (1 << np.arange(len(cols)))).sum(axis=1) if nan.any() else np.zeros(n, dtype=np.int64)
        for rows_s in strata_list:
            for pat in np.unique(pattern[rows_s]):
                rows = rows_s[pattern[rows_s] == pat]
                have = [c for i, c in enumerate(cols) if not (pat >> i) & 1]
                if not have:
                    continue                       # nothing observed: nothing to aggregate
                if rows.size < k:
                    what = "stratum" if pat == 0 else f"group of records missing {_nan_names(cols, pat, names)}"
                    raise InputError(f"{owner}: a {what} has {rows.size} records, fewer than k = {k}; "
                                     "merge strata, impute, or lower k.")
                lab = _group(Z[np.ix_(rows, have)], k, method, block)
                labels[rows] = lab + offset
                offset += int(lab.max()) + 1
        out[:, cols] = aggregate_groups(X[:, cols], labels, aggregate)
        all_labels.append(labels)
    return out, all_labels


def _nan_names(cols: list[int], pattern: int, names: Sequence[str] | None) -> str:
    nm = _names(names, max(cols) + 1)
    return ", ".join(repr(nm[c]) for i, c in enumerate(cols) if (pattern >> i) & 1)


METHODS = ("mdav", "mdav_partitioned", "univariate")


def check_microaggregation(X: np.ndarray, out: np.ndarray, labels_list: Sequence[np.ndarray],
                           blocks: Sequence[Sequence[int]], k: int, how: str) -> dict:
    """Independent check of a microaggregation with pandas group-bys (not the bincount code).

    Returns the smallest and largest group, whether every group has k..2k-1 records, and
    whether every released value equals its group's mean (median) of the original values
    (relative tolerance 1e-9) for every group and variable; records with label -1 must be
    unchanged.
    """
    lo, hi, sizes_ok, values_ok = None, None, True, True
    for labels, cols in zip(labels_list, blocks):
        grouped = labels >= 0
        values_ok &= bool(np.array_equal(out[~grouped][:, cols], X[~grouped][:, cols], equal_nan=True))
        if not grouped.any():
            continue
        sizes = pd.Series(labels[grouped]).value_counts()
        lo = int(sizes.min()) if lo is None else min(lo, int(sizes.min()))
        hi = int(sizes.max()) if hi is None else max(hi, int(sizes.max()))
        sizes_ok &= bool(sizes.min() >= k and sizes.max() <= 2 * k - 1)
        frame = pd.DataFrame(X[grouped][:, cols])
        ref = frame.groupby(labels[grouped]).transform(how).to_numpy()
        got = out[grouped][:, cols]
        scale = np.nanmax(np.abs(X[:, cols]), axis=0, initial=0.0) + 1e-300
        close = np.abs(got - ref) <= 1e-9 * scale
        values_ok &= bool((close | (np.isnan(got) & np.isnan(ref))).all())
    return {"min_group": lo, "max_group": hi, "sizes_ok": sizes_ok, "values_ok": values_ok}


@dataclass(frozen=True)
class MicroaggregationResult(ContinuousResult):
    """Microaggregation result; ``labels`` holds the group labels of each variable block
    (internal: group membership is not published)."""

    labels: tuple = ()


@register_step("microaggregation")
@dataclass(frozen=True)
class Microaggregation:
    """Microaggregation of numeric variables with minimum group size k.

    Parameters
    ----------
    k : int >= 2
        Minimum group size; every group has k to 2k - 1 records.
    variables : list of str, optional
        Numeric variables (default: the numeric_vars role).
    method : {"mdav", "mdav_partitioned", "univariate"}
        MDAV on the standardised variables (all at once or ``variables_per_group`` at a
        time); MDAV within principal-axis cells of at most ``block`` records, for millions of
        records; the optimal univariate method (Hansen & Mukherjee) per variable.
    variables_per_group : int, optional
        Microaggregate the variables this many at a time (e.g. 4, seed 004's Table 5.2).
    aggregate : {"mean", "median"}
        Value given to every member of a group.
    missing : {"refuse", "separate"}
        Records with missing values: refused (default), or grouped separately by their
        missingness pattern on the variables they have (NaN stays NaN).
    block : int
        Largest cell of ``mdav_partitioned``.

    Notes
    -----
    Groups are formed within strata (the Microdata's strata role); a stratum with fewer
    than k records is an error. Guarantees, checked independently on the output: every
    group has between k and 2k - 1 records, and every released value equals its group's
    aggregate. The summary reports SSE and SSE/SST on the standardised variables.

    References
    ----------
    Domingo-Ferrer, J. and Mateo-Sanz, J. M. (2002). Practical data-oriented microaggregation
    for statistical disclosure control. *IEEE TKDE* 14(1), 189-201.
    Hansen, S. L. and Mukherjee, S. (2003). A polynomial algorithm for optimal univariate
    microaggregation. *IEEE TKDE* 15(4), 1043-1044.
    """

    k: int = 3
    variables: Sequence[str] | None = None
    method: str = "mdav"
    variables_per_group: int | None = None
    aggregate: str = "mean"
    missing: str = "refuse"
    block: int = 10_000

    def __post_init__(self) -> None:
        o = "Microaggregation"
        check_int(o, "k", self.k, min_value=2)
        check_choice(o, "method", self.method, METHODS)
        check_choice(o, "aggregate", self.aggregate, ("mean", "median"))
        check_choice(o, "missing", self.missing, ("refuse", "separate"))
        check_int(o, "block", self.block, min_value=2 * self.k)
        if self.variables_per_group is not None:
            check_int(o, "variables_per_group", self.variables_per_group, min_value=1)
        if self.variables is not None:
            object.__setattr__(self, "variables", check_names(o, "variables", self.variables))

    def apply(self, microdata: Microdata, *, rng=None) -> MicroaggregationResult:  # noqa: ARG002 (deterministic)
        where = "microaggregation"
        names, X, strata = select_numeric(microdata, self.variables, where=where,
                                          allow_nan=(self.missing == "separate"))
        if self.k > X.shape[0]:
            raise InputError(f"{where}: k = {self.k} is larger than the number of records ({X.shape[0]}).")
        out, labels = microaggregate_array(X, self.k, variables_per_group=self.variables_per_group,
                                           method=self.method, aggregate=self.aggregate, strata=strata,
                                           missing=self.missing, block=self.block, names=names)
        blocks = _variable_blocks(len(names), self.variables_per_group, self.method)
        Z, _, _ = standardise(X, names, where=where)
        sse = sst = 0.0
        for lab, cols in zip(labels, blocks):
            s, t = group_sse(Z[:, cols], lab)
            sse, sst = sse + s, sst + t
        chk = check_microaggregation(X, out, labels, blocks, self.k, self.aggregate)
        released = microdata.with_columns({v: out[:, j] for j, v in enumerate(names)})
        summary = {"variables": names, "method": self.method, "k": self.k,
                   "variable_blocks": [[names[c] for c in cols] for cols in blocks],
                   "groups": int(sum(int(lab.max()) + 1 for lab in labels if (lab >= 0).any())),
                   "min_group": chk["min_group"], "max_group": chk["max_group"],
                   "sse": sse, "sst": sst, "sse_sst": sse / sst if sst else 0.0}
        summary.update(moments_summary(X, out, names))
        guarantees = (
            Guarantee("min_group_size", f"every group has between {self.k} and {2 * self.k - 1} records",
                      [chk["min_group"], chk["max_group"]], chk["sizes_ok"]),
            Guarantee("group_values", f"every released value equals its group's {self.aggregate}",
                      chk["values_ok"], chk["values_ok"]),
        )
        params = {"k": self.k, "variables": names, "method": self.method,
                  "variables_per_group": self.variables_per_group, "aggregate": self.aggregate,
                  "missing": self.missing}
        return MicroaggregationResult(where, released, params, summary, guarantees, labels=tuple(labels))
