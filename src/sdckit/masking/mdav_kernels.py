"""MDAV and the other microaggregation algorithms, on arrays (no Microdata, no report).

MDAV (maximum distance to average vector; Domingo-Ferrer & Mateo-Sanz 2002) with a k-d tree
of the remaining records, the plain O(n^2 / k) reference MDAV and the partitioned MDAV for
millions of records; the optimal univariate partition of Hansen & Mukherjee (2003), the group
SSE and the group aggregation are in :mod:`sdckit.masking.ma_groups` (re-exported here). Every
algorithm gives groups of k..2k-1 records.

MDAV needs, per group, the record farthest from a point and the k records nearest to a
point, among the records not yet grouped. Instead of scanning all remaining records for each
query (O(n^2 / k) in all), two exact structures prune the search:

* a list of the remaining records ranked by their distance d0 to an earlier centroid c0
  (values copied in that order, grouped records dropped in batches): by the triangle
  inequality ||x - q|| <= d0(x) + ||q - c0||, so "farthest from q" scans the list from the
  top and stops once that bound is below the best distance found;
* a k-d tree whose records are stored in tree order (a leaf is a slice) and whose nodes keep
  the bounding box and count of their remaining records; a removed record shrinks its leaf's
  box and its ancestors' (up to the first unchanged box). Branch-and-bound searches skip a
  node whose box cannot hold a better record; the k nearest to a record start at its leaf.

Ties are broken by the smaller record index, so the result does not depend on the tree's
shape, the list's order or which structure answered.

References
----------
Domingo-Ferrer, J. and Mateo-Sanz, J. M. (2002). Practical data-oriented microaggregation for
statistical disclosure control. *IEEE TKDE* 14(1), 189-201.
Hansen, S. L. and Mukherjee, S. (2003). A polynomial algorithm for optimal univariate
microaggregation. *IEEE TKDE* 15(4), 1043-1044.
"""

from __future__ import annotations

import numba
import numpy as np

from .._validation import check_int
from ._numeric import check_numeric

# the group-size check, the optimal univariate partition and the group figures (re-exported here)
from .ma_groups import aggregate_groups, check_k, group_sse, optimal_univariate  # noqa: F401
from .ma_groups import as_2d as _as_2d

_LEAF = 16          # records per leaf of the k-d tree
_ENTRY_COST = 0.03   # CPU of reading one ranked-list entry / of searching one tree node


@numba.njit(cache=True)
def _select(Z, perm, dim, lo, hi, kth):  # pragma: no cover - compiled
    """Quickselect: reorder perm[lo..hi] so that perm[kth] holds a record of rank kth - lo by
    Z[:, dim], the records before it not larger, those after it not smaller (O(hi - lo))."""
    while hi > lo:
        a, b, c = perm[lo], perm[(lo + hi) // 2], perm[hi]   # median of three as pivot
        va, vb, vc = Z[a, dim], Z[b, dim], Z[c, dim]
        if (va < vb) == (vb < vc):
            piv = vb
        elif (vb < va) == (va < vc):
            piv = va
        else:
            piv = vc
        i, j = lo, hi
        while i <= j:                                # Hoare partition around piv
            while Z[perm[i], dim] < piv:
                i += 1
            while Z[perm[j], dim] > piv:
                j -= 1
            if i <= j:
                perm[i], perm[j] = perm[j], perm[i]
                i += 1
                j -= 1
        if kth <= j:
            hi = j
        elif kth >= i:
            lo = i
        else:
            return


@numba.njit(cache=True)
def _build_tree(Z, leaf):  # pragma: no cover - compiled
    """k-d tree of the rows of Z: each node split at the median of its widest side until it
    holds at most ``leaf`` records. Returns perm (the records in tree order: a node holds
    perm[start:end]), the leaf of each tree position, start, end, left, right, parent, the
    box of each node (lo_j, hi_j interleaved: box[node, 2j], box[node, 2j + 1]) and count."""
    n, p = Z.shape
    max_nodes = 2 * (n // max(1, leaf // 2) + 1) + 1
    start = np.empty(max_nodes, dtype=np.int64)
    end = np.empty(max_nodes, dtype=np.int64)
    left = np.full(max_nodes, -1, dtype=np.int64)
    right = np.full(max_nodes, -1, dtype=np.int64)
    parent = np.full(max_nodes, -1, dtype=np.int64)
    box = np.empty((max_nodes, 2 * p))
    count = np.zeros(max_nodes, dtype=np.int64)
    perm = np.arange(n)
    stack = np.empty(256, dtype=np.int64)
    start[0], end[0] = 0, n
    for j in range(p):
        lo, hi = np.inf, -np.inf
        for i in range(n):
            lo = min(lo, Z[i, j])
            hi = max(hi, Z[i, j])
        box[0, 2 * j], box[0, 2 * j + 1] = lo, hi
    n_nodes = 1
    top = 0
    stack[0] = 0
    while top >= 0:
        node = stack[top]
        top -= 1
        s, e = start[node], end[node]
        count[node] = e - s
        if e - s <= leaf:
            continue
        dim, spread = 0, -1.0
        for j in range(p):
            if box[node, 2 * j + 1] - box[node, 2 * j] > spread:
                spread = box[node, 2 * j + 1] - box[node, 2 * j]
                dim = j
        mid = (s + e) // 2
        _select(Z, perm, dim, s, e - 1, mid)         # the median record at mid, smaller before
        a, b = n_nodes, n_nodes + 1
        n_nodes += 2
        box[a] = box[node]                           # enclosing boxes for the next splits
        box[b] = box[node]
        box[a, 2 * dim + 1] = Z[perm[mid], dim]
        box[b, 2 * dim] = Z[perm[mid], dim]
        start[a], end[a], start[b], end[b] = s, mid, mid, e
        parent[a] = node
        parent[b] = node
        left[node], right[node] = a, b
        stack[top + 1] = a
        stack[top + 2] = b
        top += 2
    leaf_of = np.empty(n, dtype=np.int64)
    for node in range(n_nodes - 1, -1, -1):          # exact boxes, children before parents
        a, b = left[node], right[node]
        if a < 0:
            for j in range(p):
                lo, hi = np.inf, -np.inf
                for t in range(start[node], end[node]):
                    v = Z[perm[t], j]
                    lo = min(lo, v)
                    hi = max(hi, v)
                box[node, 2 * j], box[node, 2 * j + 1] = lo, hi
            for t in range(start[node], end[node]):
                leaf_of[t] = node
        else:
            for j in range(p):
                box[node, 2 * j] = min(box[a, 2 * j], box[b, 2 * j])
                box[node, 2 * j + 1] = max(box[a, 2 * j + 1], box[b, 2 * j + 1])
    return (perm, leaf_of, start[:n_nodes].copy(), end[:n_nodes].copy(), left[:n_nodes].copy(),
            right[:n_nodes].copy(), parent[:n_nodes].copy(), box[:n_nodes].copy(), count[:n_nodes].copy())


@numba.njit(cache=True, inline="always")
def _max_box_d2(q, box, node):  # pragma: no cover - compiled
    s = 0.0
    for j in range(q.shape[0]):
        a = q[j] - box[node, 2 * j]
        b = box[node, 2 * j + 1] - q[j]
        m = a if a > b else b
        s += m * m
    return s


@numba.njit(cache=True, inline="always")
def _min_box_d2(q, box, node):  # pragma: no cover - compiled
    s = 0.0
    for j in range(q.shape[0]):
        a = box[node, 2 * j] - q[j]
        if a > 0.0:
            s += a * a
        else:
            b = q[j] - box[node, 2 * j + 1]
            if b > 0.0:
                s += b * b
    return s


@numba.njit(cache=True, inline="always")
def _d2(Zt, t, q):  # pragma: no cover - compiled
    s = 0.0
    for j in range(q.shape[0]):
        d = Zt[t, j] - q[j]
        s += d * d
    return s


@numba.njit(cache=True)
def _remove(t, Zt, alive, leaf_of, start, end, left, right, parent, box, count):  # pragma: no cover
    """Mark tree position t grouped; shrink its leaf's box to the leaf's remaining records and
    its ancestors' boxes to the union of their children's (stopping once a box is unchanged)."""
    p = Zt.shape[1]
    alive[t] = False
    node = leaf_of[t]
    count[node] -= 1
    changed = False
    for j in range(p):
        lo, hi = np.inf, -np.inf
        for u in range(start[node], end[node]):
            if alive[u]:
                v = Zt[u, j]
                if v < lo:
                    lo = v
                if v > hi:
                    hi = v
        if lo != box[node, 2 * j] or hi != box[node, 2 * j + 1]:
            changed = True
            box[node, 2 * j], box[node, 2 * j + 1] = lo, hi
    node = parent[node]
    while node >= 0:
        count[node] -= 1
        if changed:
            a, b = left[node], right[node]
            changed = False
            for j in range(p):
                lo = min(box[a, 2 * j], box[b, 2 * j])
                hi = max(box[a, 2 * j + 1], box[b, 2 * j + 1])
                if lo != box[node, 2 * j] or hi != box[node, 2 * j + 1]:
                    changed = True
                    box[node, 2 * j], box[node, 2 * j + 1] = lo, hi
        node = parent[node]


@numba.njit(cache=True)
def _farthest(Zt, rec, alive, q, start, end, left, right, box, count, snode, sbound, arg, best):  # pragma: no cover
    """Tree position of the remaining record farthest from q (ties: smaller record index) and
    the number of nodes searched. ``arg`` (a tree position or -1) and ``best`` (its squared
    distance) start the search."""
    top = 0
    snode[0] = 0
    sbound[0] = np.inf
    ra = rec[arg] if arg >= 0 else -1
    visits = 0
    while top >= 0:
        node = snode[top]
        bnd = sbound[top]
        top -= 1
        if bnd < best:
            continue
        visits += 1
        a = left[node]
        if a < 0:
            for t in range(start[node], end[node]):
                if alive[t]:
                    d = _d2(Zt, t, q)
                    if d > best or (d == best and rec[t] < ra):
                        best, arg, ra = d, t, rec[t]
            continue
        b = right[node]
        da = _max_box_d2(q, box, a) if count[a] > 0 else -1.0
        db = _max_box_d2(q, box, b) if count[b] > 0 else -1.0
        if da > db:                                  # the farther child is popped first
            a, b, da, db = b, a, db, da
        if da >= best and da >= 0.0:
            top += 1
            snode[top] = a
            sbound[top] = da
        if db >= best and db >= 0.0:
            top += 1
            snode[top] = b
            sbound[top] = db
    return arg, visits


@numba.njit(cache=True)
def _nearest(Zt, rec, alive, q, tq, k, leaf_of, start, end, left, right, parent, box, count, snode,
             sbound, out_d, out_t):  # pragma: no cover - compiled
    """Tree positions of the k remaining records nearest to q = Zt[tq] (ties: smaller record
    index), in out_t: q's leaf first, then the siblings of its ancestors, each searched by
    branch and bound when its box is not farther than the k-th distance found."""
    for u in range(k):
        out_d[u] = np.inf
        out_t[u] = -1
    rlast = -1                                       # record index of the k-th found
    prev = -1
    node = leaf_of[tq]
    while node >= 0:
        if prev < 0:
            root = node
        else:
            root = left[node] if right[node] == prev else right[node]
            if count[root] == 0 or _min_box_d2(q, box, root) > out_d[k - 1]:
                prev = node
                node = parent[node]
                continue
        top = 0
        snode[0] = root
        sbound[0] = 0.0
        while top >= 0:
            nd = snode[top]
            bnd = sbound[top]
            top -= 1
            if bnd > out_d[k - 1]:
                continue
            a = left[nd]
            if a < 0:
                for t in range(start[nd], end[nd]):
                    if not alive[t]:
                        continue
                    d = _d2(Zt, t, q)
                    worst = out_d[k - 1]
                    if d < worst or (d == worst and rec[t] < rlast):
                        r = rec[t]
                        u = k - 1
                        while u > 0 and (out_d[u - 1] > d or (out_d[u - 1] == d and rec[out_t[u - 1]] > r)):
                            out_d[u] = out_d[u - 1]
                            out_t[u] = out_t[u - 1]
                            u -= 1
                        out_d[u] = d
                        out_t[u] = t
                        rlast = rec[out_t[k - 1]] if out_t[k - 1] >= 0 else -1
                continue
            b = right[nd]
            da = _min_box_d2(q, box, a) if count[a] > 0 else np.inf
            db = _min_box_d2(q, box, b) if count[b] > 0 else np.inf
            if da < db:                              # the nearer child is popped first
                a, b, da, db = b, a, db, da
            worst = out_d[k - 1]
            if da <= worst and da < np.inf:
                top += 1
                snode[top] = a
                sbound[top] = da
            if db <= worst and db < np.inf:
                top += 1
                snode[top] = b
                sbound[top] = db
        prev = node
        node = parent[node]


@numba.njit(cache=True)
def _rank(Zt, alive, c0, srt, d0s, Zs):  # pragma: no cover - compiled
    """The remaining records (tree positions) sorted by their distance d0 to c0, ascending,
    with d0 and a contiguous copy of their values; returns their number."""
    idx = np.flatnonzero(alive)
    m = idx.size
    d = np.empty(m)
    for u in range(m):
        d[u] = np.sqrt(_d2(Zt, idx[u], c0))
    order = np.argsort(d)
    for u in range(m):
        t = idx[order[u]]
        srt[u] = t
        d0s[u] = d[order[u]]
        for j in range(Zt.shape[1]):
            Zs[u, j] = Zt[t, j]
    return m


@numba.njit(cache=True)
def _compact(alive, srt, d0s, Zs, size):  # pragma: no cover - compiled
    """Drop the grouped records from the sorted list (order kept); returns the new size."""
    o = 0
    for u in range(size):
        t = srt[u]
        if alive[t]:
            srt[o] = t
            d0s[o] = d0s[u]
            for j in range(Zs.shape[1]):
                Zs[o, j] = Zs[u, j]
            o += 1
    return o


@numba.njit(cache=True)
def _farthest_scan(Zs, srt, d0s, size, alive, rec, q, dq0, arg, best):  # pragma: no cover - compiled
    """The remaining record farthest from q (tree position; ties: smaller record index),
    scanning the sorted list by decreasing d0: ||x - q|| <= d0(x) + ||q - c0|| (triangle
    inequality), so the scan stops once that bound is below the best distance found.
    Returns (position, squared distance, entries scanned)."""
    ra = rec[arg] if arg >= 0 else -1
    u = size - 1
    while u >= 0:
        if best >= 0.0 and (d0s[u] + dq0) * (1.0 + 1e-12) + 1e-300 < np.sqrt(best):
            break
        t = srt[u]
        if alive[t]:
            d = _d2(Zs, u, q)
            if d > best or (d == best and rec[t] < ra):
                best, arg, ra = d, t, rec[t]
        u -= 1
    return arg, best, size - 1 - u


@numba.njit(cache=True)
def _far_candidate(Zs, srt, size, alive, q):  # pragma: no cover - compiled
    """A first guess of the record farthest from q: the farthest among the 64 remaining
    records farthest from c0. Returns (tree position, squared distance)."""
    best, arg, seen = -1.0, -1, 0
    u = size - 1
    while u >= 0 and seen < 64:
        t = srt[u]
        if alive[t]:
            d = _d2(Zs, u, q)
            if d > best:
                best, arg = d, t
            seen += 1
        u -= 1
    return arg, best


@numba.njit(cache=True)
def mdav_kernel(Z, k, scan_max=-1):  # pragma: no cover - compiled
    """MDAV (Domingo-Ferrer & Mateo-Sanz 2002, sec. 3) on standardised Z: the compiled kernel.

    Parameters
    ----------
    Z : ndarray of float64, shape (n, p), C-contiguous
        The standardised records.
    k : int
        The minimum group size.
    scan_max : int
        Only chooses between two exact searches for "farthest from x_r": -1 (the default) picks
        the one predicted cheaper from the recent queries, 0 always the k-d tree, a huge value
        always the ranked list; the labels do not depend on it.

    Returns
    -------
    ndarray of int64, shape (n,)
        Group labels 0..G-1 (groups of k..2k-1 records).
    """
    n, p = Z.shape
    perm, leaf_of, start, end, left, right, parent, box, count = _build_tree(Z, _LEAF)
    Zt = np.empty((n, p))                            # the records in tree order: leaves are slices
    for t in range(n):
        for j in range(p):
            Zt[t, j] = Z[perm[t], j]
    pos = np.empty(n, dtype=np.int64)                # tree position of each record
    for t in range(n):
        pos[perm[t]] = t
    alive = np.ones(n, dtype=np.bool_)               # by tree position
    labels = np.full(n, -1, dtype=np.int64)
    snode = np.empty(1024, dtype=np.int64)           # search stacks (depth <= 64 levels)
    sbound = np.empty(1024)
    near_d = np.empty(k)
    near_t = np.empty(k, dtype=np.int64)
    sums = np.zeros(p)
    c = np.empty(p)
    c0 = np.zeros(p)
    xr = np.empty(p)
    xs = np.empty(p)
    srt = np.empty(n, dtype=np.int64)                # the d0-ranked list (tree positions)
    d0s = np.empty(n)
    Zs = np.empty((n, p))
    size = 0
    rank = True
    m = n
    g = 0
    r = s = -1
    scan_share = 0.5                                 # entries read / bound's length, recent scans
    tree_nodes = 1000.0                              # nodes searched, recent tree searches
    n_far = 0
    while m >= 2 * k:
        if g % 1024 == 0:                            # refresh the running sums (rounding drift)
            sums[:] = 0.0
            for i in range(n):
                if alive[pos[i]]:
                    for j in range(p):
                        sums[j] += Z[i, j]
        for j in range(p):
            c[j] = sums[j] / m                       # x-bar: centroid of the remaining records
        if rank:                                     # (re)rank the remaining records by d0 = ||x - c0||
            c0[:] = c
            size = _rank(Zt, alive, c0, srt, d0s, Zs)
            rank = False
        elif size > m + 1024:                        # drop the grouped records from the list
            size = _compact(alive, srt, d0s, Zs, size)
        delta = 0.0
        for j in range(p):
            delta += (c[j] - c0[j]) ** 2
        # x_r: the record farthest from x-bar (||x - x-bar|| <= d0(x) + ||x-bar - c0||)
        r, _, scanned = _farthest_scan(Zs, srt, d0s, size, alive, perm, c, np.sqrt(delta), -1, -1.0)
        for j in range(p):
            xr[j] = Zt[r, j]
        two = m >= 3 * k
        if two:                                      # x_s: the record farthest from x_r
            cand, cbest = _far_candidate(Zs, srt, size, alive, xr)
            dq0 = 0.0
            for j in range(p):
                dq0 += (xr[j] - c0[j]) ** 2
            dq0 = np.sqrt(dq0)
            # the list entries a scan would read at most: d0 >= sqrt(best) - ||x_r - c0||; a
            # scan predicted dearer than a tree search (skewed data: x_r far out in a tail)
            # goes to the k-d tree instead
            bound_len = size - np.searchsorted(d0s[:size], np.sqrt(cbest) / (1.0 + 1e-12) - dq0)
            if scan_max >= 0:
                use_scan = bound_len <= scan_max
            else:                                    # predicted cost: list entries vs tree nodes
                use_scan = bound_len * scan_share * _ENTRY_COST <= tree_nodes
                n_far += 1
                if n_far % 64 == 0:                  # keep both predictions current
                    use_scan = not use_scan
            if use_scan:
                s, _, read = _farthest_scan(Zs, srt, d0s, size, alive, perm, xr, dq0, cand, cbest)
                scan_share = 0.9 * scan_share + 0.1 * read / max(bound_len, 1)
            else:
                s, visits = _farthest(Zt, perm, alive, xr, start, end, left, right, box, count, snode,
                                      sbound, cand, cbest)
                tree_nodes = 0.9 * tree_nodes + 0.1 * visits
            for j in range(p):
                xs[j] = Zt[s, j]
        for side in range(2 if two else 1):          # a group: x_r (x_s) and its k - 1 nearest
            q = xr if side == 0 else xs
            _nearest(Zt, perm, alive, q, r if side == 0 else s, k, leaf_of, start, end, left, right,
                     parent, box, count, snode, sbound, near_d, near_t)
            for u in range(k):
                t = near_t[u]
                i = perm[t]
                labels[i] = g
                for j in range(p):
                    sums[j] -= Z[i, j]
                _remove(t, Zt, alive, leaf_of, start, end, left, right, parent, box, count)
            m -= k
            g += 1
        while size > 0 and not alive[srt[size - 1]]:
            size -= 1
        if scanned > 64 + m // 32:                   # the bound got loose: re-rank next time
            rank = True
    for t in range(n):                               # the rest (k..2k-1 records): the last group
        if alive[t]:
            labels[perm[t]] = g
    return labels


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
    the rest (k..2k-1 records) is the last group.

    The queries are exact, not approximated: "farthest from the centroid" scans the records
    by decreasing distance to an earlier centroid and stops by the triangle inequality;
    "farthest from x_r" does the same when that scan is predicted cheaper (from the recent
    queries), else a branch-and-bound search in a k-d tree whose boxes shrink as records are
    grouped; "k nearest" is a branch-and-bound search from the record's leaf. Ties go to the
    smaller record index. The grouping is the one a plain O(n^2 / k) implementation gives
    (tested against one), in a small fraction of the time (100,000 x 5, k = 3: 0.3 to 0.6 s
    of CPU, about 80 times less than sdcMicro on the same data;
    docs/methods/microaggregation.md).

    References
    ----------
    Domingo-Ferrer, J. and Mateo-Sanz, J. M. (2002). Practical data-oriented microaggregation
    for statistical disclosure control. *IEEE TKDE* 14(1), 189-201.
    Domingo-Ferrer, J. and Torra, V. (2005). Ordinal, continuous and heterogeneous
    k-anonymity through microaggregation. *Data Min. Knowl. Discov.* 11(2), 195-212.
    """
    X = _as_2d(X)
    k = check_k(k, X.shape[0], "mdav")
    check_numeric(X, None, where="mdav")
    return mdav_kernel(X, k)


def mdav_reference(X: np.ndarray, k: int) -> np.ndarray:
    """MDAV written plainly from Domingo-Ferrer & Torra (2005), Algorithm 1: every query is a
    full numpy scan of the remaining records, O(n^2 / k). Ties go to the smaller record index.

    Not for production use: it is the reference the fast :func:`mdav` is tested against and
    the benchmark's baseline.
    """
    X = _as_2d(X)
    n = X.shape[0]
    k = check_k(k, n, "mdav_reference")
    alive = np.ones(n, bool)
    labels = np.full(n, -1, dtype=np.int64)
    idx = np.arange(n)
    g = 0

    def farthest(q):
        a = idx[alive]
        return a[np.argmax(((X[a] - q) ** 2).sum(1))]

    def nearest(q):
        a = idx[alive]
        return a[np.lexsort((a, ((X[a] - q) ** 2).sum(1)))[:k]]

    while alive.sum() >= 3 * k:
        r = farthest(X[alive].mean(0))
        s = farthest(X[r])
        for q in (X[r].copy(), X[s].copy()):
            group = nearest(q)
            labels[group], alive[group] = g, False
            g += 1
    if alive.sum() >= 2 * k:
        group = nearest(X[farthest(X[alive].mean(0))])
        labels[group], alive[group] = g, False
        g += 1
    labels[alive] = g
    return labels


def principal_axis(X: np.ndarray) -> np.ndarray:
    """First principal axis of the rows of X.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        The records.

    Returns
    -------
    ndarray, shape (p,)
        The unit eigenvector of the largest eigenvalue of the p x p scatter matrix of the
        centred rows.
    """
    Xc = X - X.mean(axis=0)
    _, vecs = np.linalg.eigh(Xc.T @ Xc)
    return vecs[:, -1]


def mdav_partitioned(X: np.ndarray, k: int, block: int = 50_000) -> np.ndarray:
    """Scalable MDAV for millions of records: MDAV within cells of a principal-axis k-d split.

    The records are split recursively at the median of their projection on the cell's first
    principal axis until every cell holds at most ``block`` records (each cell keeps >= k
    records); MDAV runs in each cell. The cost grows like n / block times the cost of MDAV on
    ``block`` records, instead of the superlinear cost of MDAV on all n; groups never
    straddle cells, which costs some SSE against full MDAV (measured in
    docs/methods/microaggregation.md). Every group has k..2k-1 records.

    Parameters
    ----------
    X : ndarray (n, p)
        Complete records, standardised when scales differ.
    k : int >= 2
    block : int >= 2k
        Largest cell.
    """
    X = _as_2d(X)
    k = check_k(k, X.shape[0], "mdav_partitioned")
    check_numeric(X, None, where="mdav_partitioned")
    block = check_int("mdav_partitioned", "block", block, min_value=2 * k)
    n = X.shape[0]
    labels = np.empty(n, dtype=np.int64)
    offset = 0
    stack = [np.arange(n)]
    while stack:                                   # a cell is split or solved: O(log(n / block)) levels
        rows = stack.pop()
        if rows.size <= block:
            lab = mdav_kernel(np.ascontiguousarray(X[rows]), k)
            labels[rows] = lab + offset
            offset += int(lab.max()) + 1
            continue
        proj = X[rows] @ principal_axis(X[rows])
        half = rows.size // 2                      # both halves >= block / 2 >= k
        part = np.argpartition(proj, half)
        stack.append(rows[part[half:]])
        stack.append(rows[part[:half]])
    return labels
