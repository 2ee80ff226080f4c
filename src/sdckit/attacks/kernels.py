"""Compiled loops of the attacks: nearest neighbours under the mixed (Gower-like) distance,
counting the records a predicate matches, and a mixed-type kernel density.

Every array holds one record per row as float64: a categorical column by its integer code, a
numeric column by its value, a missing value as NaN in either. The loops are tiled: a block of
candidate rows small enough to stay in the processor's cache is read once for a whole chunk
of queries, so the memory traffic does not grow with the number of queries. Each query's answer
depends only on the query and the candidates, never on the number of threads or the chunking.

Distance (Gower 1971, as Anonymeter uses it but for missing numbers; Giomi et al. 2023, sec. 4):
the sum over columns of 1 for two different categories, ``min(|a - b| / range, 1)`` for two
numbers, 0 for two missing values and 1 for one missing value. :func:`nearest_quicksort`
computes Anonymeter's own distance instead, bit for bit (see its docstring).
"""

from __future__ import annotations

import math

import numba
import numpy as np

#: candidate rows per tile (about 2048 x 20 x 8 bytes = 320 kB: fits an L2 cache)
TILE = 2048

# operators of a predicate term (singling out)
OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_ISNULL, OP_NOTNULL = range(8)


@numba.njit(cache=True, parallel=True)
def nearest(q_cat, q_num, c_cat, c_num, k):  # pragma: no cover - compiled
    """The ``k`` nearest candidates of each query: (indices, distances), nearest first.

    Categorical columns come as integer codes (``q_cat``, ``c_cat``; a missing value is one
    more code, e.g. -1), numeric columns as values already divided by their range (``q_num``,
    ``c_num``; NaN for missing). The categorical mismatches of a candidate are counted in one
    pass (a loop the compiler vectorises); the numeric terms are added one by one and the
    candidate abandoned as soon as its distance reaches the current k-th (put the most
    discriminating numeric columns first).

    A candidate replaces the current k-th only when strictly nearer, so among candidates at
    the same distance the one with the smaller row index wins: the caller permutes the
    candidate rows at random to break ties at random.
    """
    nq, dc = q_cat.shape
    dn = q_num.shape[1]
    n = c_cat.shape[0]
    best_d = np.full((nq, k), np.inf)
    best_i = np.full((nq, k), -1, np.int64)
    n_chunks = min(nq, 64)
    for ch in numba.prange(n_chunks):
        q0 = ch * nq // n_chunks
        q1 = (ch + 1) * nq // n_chunks
        for t0 in range(0, n, TILE):
            t1 = min(n, t0 + TILE)
            for i in range(q0, q1):
                worst = best_d[i, k - 1]
                if worst == 0.0:
                    continue  # k candidates at distance 0 already: none can be nearer
                qc = q_cat[i]
                qn = q_num[i]
                for j in range(t0, t1):
                    cc = c_cat[j]
                    m = 0
                    for c in range(dc):
                        m += qc[c] != cc[c]
                    s = float(m)
                    if s >= worst:
                        continue
                    for c in range(dn):
                        a = qn[c]
                        b = c_num[j, c]
                        if a != a or b != b:          # a missing value
                            s += 0.0 if (a != a and b != b) else 1.0
                        else:
                            t = abs(a - b)
                            s += t if t < 1.0 else 1.0
                        if s >= worst:
                            break
                    if s < worst:
                        pos = k - 1
                        while pos > 0 and best_d[i, pos - 1] > s:
                            best_d[i, pos] = best_d[i, pos - 1]
                            best_i[i, pos] = best_i[i, pos - 1]
                            pos -= 1
                        best_d[i, pos] = s
                        best_i[i, pos] = j
                        worst = best_d[i, k - 1]
                        if worst == 0.0:
                            break
    return best_i, best_d


@numba.njit(cache=True, inline="always")
def _term_holds(x, op, v):  # pragma: no cover - compiled
    if op == OP_ISNULL:
        return x != x
    if op == OP_NOTNULL:
        return x == x
    if x != x:          # a missing value satisfies no comparison (SQL's NULL)
        return False
    if op == OP_EQ:
        return x == v
    if op == OP_NE:
        return x != v
    if op == OP_LT:
        return x < v
    if op == OP_LE:
        return x <= v
    if op == OP_GT:
        return x > v
    return x >= v


@numba.njit(cache=True, parallel=True)
def count_matches(data, cols, ops, vals, n_terms, stop_at):  # pragma: no cover - compiled
    """Records of ``data`` each predicate matches, counted up to ``stop_at`` (a predicate
    that matches ``stop_at`` records is not scanned further).

    Predicate p is the conjunction of its ``n_terms[p]`` terms ``data[:, cols[p, t]] ops[p, t]
    vals[p, t]``.
    """
    n = data.shape[0]
    nq = cols.shape[0]
    counts = np.zeros(nq, np.int64)
    n_chunks = min(nq, 64)
    for ch in numba.prange(n_chunks):
        q0 = ch * nq // n_chunks
        q1 = (ch + 1) * nq // n_chunks
        for t0 in range(0, n, TILE):
            t1 = min(n, t0 + TILE)
            for p in range(q0, q1):
                cnt = counts[p]
                if cnt >= stop_at:
                    continue
                m = n_terms[p]
                for r in range(t0, t1):
                    ok = True
                    for t in range(m):
                        if not _term_holds(data[r, cols[p, t]], ops[p, t], vals[p, t]):
                            ok = False
                            break
                    if ok:
                        cnt += 1
                        if cnt >= stop_at:
                            break
                counts[p] = cnt
    return counts


@numba.njit(cache=True)
def _term_range(sorted_col, n_valid, op, v):  # pragma: no cover - compiled
    """The range [lo, hi) of a column's sorted order (missing values last) that can satisfy
    one term; a term ``!=`` keeps every present value."""
    present = sorted_col[:n_valid]
    if op == OP_EQ:
        return np.searchsorted(present, v, side="left"), np.searchsorted(present, v, side="right")
    if op == OP_LE:
        return 0, np.searchsorted(present, v, side="right")
    if op == OP_LT:
        return 0, np.searchsorted(present, v, side="left")
    if op == OP_GE:
        return np.searchsorted(present, v, side="left"), n_valid
    if op == OP_GT:
        return np.searchsorted(present, v, side="right"), n_valid
    if op == OP_ISNULL:
        return n_valid, sorted_col.shape[0]
    return 0, n_valid   # OP_NE, OP_NOTNULL


@numba.njit(cache=True, parallel=True)
def count_matches_indexed(data, order, sorted_cols, n_valid, cols, ops, vals, n_terms,
                          stop_at):  # pragma: no cover - compiled
    """:func:`count_matches` through per-column sorted orders: each predicate scans only the
    records its most selective term allows (a range of one column's sorted order).

    ``order[c]`` sorts column c (missing values last), ``sorted_cols[c]`` holds its values in
    that order and ``n_valid[c]`` the number of present values.
    """
    nq = cols.shape[0]
    counts = np.zeros(nq, np.int64)
    for p in numba.prange(nq):
        m = n_terms[p]
        best_lo, best_hi, best_c = 0, data.shape[0] + 1, 0
        for t in range(m):
            c = cols[p, t]
            lo, hi = _term_range(sorted_cols[c], n_valid[c], ops[p, t], vals[p, t])
            if hi - lo < best_hi - best_lo:
                best_lo, best_hi, best_c = lo, hi, c
        cnt = 0
        for i in range(best_lo, best_hi):
            r = order[best_c, i]
            ok = True
            for t in range(m):
                if not _term_holds(data[r, cols[p, t]], ops[p, t], vals[p, t]):
                    ok = False
                    break
            if ok:
                cnt += 1
                if cnt >= stop_at:
                    break
        counts[p] = cnt
    return counts


@numba.njit(cache=True, parallel=True)
def log_density(queries, sample, is_num, log_match, log_mismatch, bandwidth):  # pragma: no cover
    """Log of a product-kernel density fitted on ``sample`` at each query.

    Categorical column (codes, missing coded -1): Aitchison & Aitken's (1976) kernel,
    ``log_match`` when the categories agree, ``log_mismatch`` otherwise; numeric column (NaN
    for missing): ``log_match`` plus the log of a Gaussian kernel of width ``bandwidth`` when
    both values are present, ``log_match`` when both are missing, ``log_mismatch`` when one
    is. The density is the mean over the sample of the product of the column kernels
    (accumulated as a log-sum-exp).
    """
    nq, d = queries.shape
    n = sample.shape[0]
    out = np.empty(nq)
    offset = np.zeros(d)
    for c in range(d):
        if is_num[c]:
            offset[c] = log_match[c] - math.log(bandwidth[c]) - 0.5 * math.log(2.0 * math.pi)
    for i in numba.prange(nq):
        mx = -np.inf
        acc = 0.0
        for j in range(n):
            s = 0.0
            for c in range(d):
                a = queries[i, c]
                b = sample[j, c]
                if is_num[c]:
                    if a != a or b != b:
                        s += log_match[c] if (a != a and b != b) else log_mismatch[c]
                    else:
                        z = (a - b) / bandwidth[c]
                        s += offset[c] - 0.5 * z * z
                else:
                    s += log_match[c] if a == b else log_mismatch[c]
            if s > mx:
                acc = acc * math.exp(mx - s) + 1.0
                mx = s
            else:
                acc += math.exp(s - mx)
        out[i] = mx + math.log(acc) - math.log(n)
    return out


@numba.njit(cache=True, parallel=True)
def nearest_quicksort(q_num, q_cat, c_num, c_cat, k):  # pragma: no cover - compiled
    """The ``k`` nearest candidates of each query in the order numba's quicksort leaves them.

    The distance of every candidate is computed with Anonymeter's arithmetic (``anonymeter/
    neighbors/mixed_types_kneighbors.py``, ``gower_distance``): starting from 0.0, per numeric
    column in the given order ``|a - b|`` of the scaled values (``q_num``, ``c_num``: values
    divided by the column's range), or 1 when both are missing (one missing value makes the
    distance NaN); then 1.0 per differing categorical code (``q_cat``, ``c_cat``; missing is
    one more code). Sums of floating-point numbers depend on their order, so the columns must
    come in the order Anonymeter adds them (numeric columns by name, then the categorical).
    The whole distance row is then sorted by ``row.argsort()``, numba's default sort: an
    unstable quicksort, deterministic for a given row; the first ``k`` positions are kept.
    Cost: one full distance row and one sort per query (no early abandoning).
    """
    nq, dn = q_num.shape
    dc = q_cat.shape[1]
    n = c_num.shape[0]
    best_i = np.empty((nq, k), np.int64)
    best_d = np.empty((nq, k))
    for i in numba.prange(nq):
        row = np.empty(n)
        for j in range(n):
            s = 0.0
            for c in range(dn):
                a = q_num[i, c]
                b = c_num[j, c]
                if math.isnan(a) and math.isnan(b):
                    s += 1.0
                else:
                    s += math.fabs(a - b)
            for c in range(dc):
                if q_cat[i, c] != c_cat[j, c]:
                    s += 1.0
            row[j] = s
        order = row.argsort()
        for p in range(k):
            best_i[i, p] = order[p]
            best_d[i, p] = row[order[p]]
    return best_i, best_d
