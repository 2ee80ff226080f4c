"""Numba kernels of the lattice search: class keys, hash grouping and lattice tagging.

Called through :mod:`sdckit.lattice._kernels`, which chooses between these and their numpy twins
(:mod:`sdckit.lattice._kernels_np`, the same results); importing this module imports numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def stage_keys(keys_in, base_mult, raw2d, rep, cmn, cols, mults):
    """keys[i] = keys_in[i] * base_mult + sum_k cmn[cols[k], raw2d[rep[i], cols[k]]] * mults[k].

    ``cmn[j]`` is column ``j``'s code map at the node's level.

    One int64 mixed-radix key per row; ``keys_in`` is empty for the first stage.
    """
    m = rep.size
    out = np.empty(m, dtype=np.int64)
    nc = cols.size
    has_in = keys_in.size > 0
    for i in range(m):
        r = rep[i]
        acc = np.int64(0)
        if has_in:
            acc = keys_in[i] * base_mult
        for k in range(nc):
            j = cols[k]
            acc += np.int64(cmn[j, raw2d[r, j]]) * mults[k]
        out[i] = acc
    return out


@njit(cache=True)
def group(keys, counts, wsum):
    """Group equal keys by open-addressing hashing, in order of first appearance.

    Returns ``gid`` (group of each row), ``first`` (first row of each group), the summed
    ``counts`` and ``wsum`` per group. Time O(m), no sort.
    """
    m = keys.size
    bits = 1
    while (1 << bits) < 2 * m + 2:
        bits += 1
    size = 1 << bits
    mask = size - 1
    shift = np.uint64(64 - bits)
    slot_key = np.empty(size, dtype=np.int64)
    slot_gid = np.full(size, -1, dtype=np.int32)
    gid = np.empty(m, dtype=np.int32)
    first = np.empty(m, dtype=np.int64)
    csum = np.zeros(m, dtype=np.int64)
    wout = np.zeros(m, dtype=np.float64)
    ng = 0
    for i in range(m):
        k = keys[i]
        h = np.int64((np.uint64(k) * _GOLDEN) >> shift)
        while True:
            g = slot_gid[h]
            if g < 0:
                slot_gid[h] = ng
                slot_key[h] = k
                g = ng
                first[ng] = i
                ng += 1
                break
            if slot_key[h] == k:
                break
            h = (h + 1) & mask
        gid[i] = g
        csum[g] += counts[i]
        wout[g] += wsum[i]
    # copies: a slice would keep the whole m-row buffers alive in cached tables
    return gid, first[:ng].copy(), csum[:ng].copy(), wout[:ng].copy()


@njit(cache=True)
def tag(status, start, strides, radix, value, up):
    """Set ``status`` to ``value`` on the up-set (``up``) or down-set of node ``start``.

    Nodes already holding ``value`` stop the walk: the set tagged with one value is always an
    up-set (satisfying) or a down-set (failing), so their neighbours hold it already.
    Returns the number of nodes newly tagged.
    """
    q = strides.size
    stack = np.empty(64, dtype=np.int64)
    top = 0
    n_new = 0
    if status[start] != value:
        status[start] = value
        n_new += 1
    stack[0] = start
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        for j in range(q):
            lvl = (node // strides[j]) % radix[j]
            if up:
                if lvl + 1 >= radix[j]:
                    continue
                nb = node + strides[j]
            else:
                if lvl == 0:
                    continue
                nb = node - strides[j]
            if status[nb] == value:
                continue
            status[nb] = value
            n_new += 1
            if top >= stack.size:
                bigger = np.empty(stack.size * 2, dtype=np.int64)
                bigger[:top] = stack[:top]
                stack = bigger
            stack[top] = nb
            top += 1
    return n_new


@njit(cache=True)
def group_dense(keys, counts, wsum, size):
    """:func:`group` for keys known to lie in ``[0, size)``: a direct-address table, no hashing."""
    m = keys.size
    slot_gid = np.full(size, -1, dtype=np.int32)
    gid = np.empty(m, dtype=np.int32)
    first = np.empty(m, dtype=np.int64)
    csum = np.zeros(m, dtype=np.int64)
    wout = np.zeros(m, dtype=np.float64)
    ng = 0
    for i in range(m):
        k = keys[i]
        g = slot_gid[k]
        if g < 0:
            g = ng
            slot_gid[k] = g
            first[g] = i
            ng += 1
        gid[i] = g
        csum[g] += counts[i]
        wout[g] += wsum[i]
    # copies: a slice would keep the whole m-row buffers alive in cached tables
    return gid, first[:ng].copy(), csum[:ng].copy(), wout[:ng].copy()


@njit(cache=True)
def inherited_bounds(lb, strides, radix):
    """inh[N] = max(lb[N], inh[P] for every predecessor P): the largest bound of a checked node
    at or below N (``lb`` is -inf where unchecked). Node ids grow with every level, so one
    pass in id order sees the predecessors first."""
    return -inherited_min(-lb, strides, radix)


@njit(cache=True)
def rollup(raw, counts, wsum, cm3, lv, ncodes):
    """Group the rows of a table into the classes of the node with levels ``lv`` in one call.

    ``raw[i]`` holds row ``i``'s raw codes (one per quasi-identifier; column-major is faster,
    as a pass reads one column). The class key of row
    ``i`` is the mixed-radix number ``sum_j cm3[j, lv[j], raw[i, j]] * mult_j`` with
    ``mult_j = prod_{i<j} ncodes[i, lv[i]]``
    (the caller guarantees the product of the radices fits in int64); the products
    ``code * mult_j`` are tabulated once per call. A column with one code at its level adds
    nothing to any key and is skipped; the others are added one column at a time (a pass over
    the rows per column: the gathers of a pass are independent, where a row's loop over its
    columns is one chain of adds). Keys go into a direct-address table when the key space is
    small (at most ``max(4 m, 4096)`` cells; the keys are then int32, half the memory traffic),
    into an open-addressing hash table otherwise.

    Returns ``gid`` (class of each row, in order of first appearance), ``first`` (first row of
    each class), the summed ``counts`` and ``wsum`` per class.
    """
    q = lv.size
    m = raw.shape[0]
    prod = np.int64(1)
    for j in range(q):
        prod *= ncodes[j, lv[j]]
    if prod <= max(4 * m, 4096) and prod < 2 ** 31:
        keys32 = np.zeros(m, dtype=np.int32)
        _add_keys(keys32, raw, cm3, lv, ncodes)
        return group_dense(keys32, counts, wsum, prod)
    keys = np.zeros(m, dtype=np.int64)
    _add_keys(keys, raw, cm3, lv, ncodes)
    return group(keys, counts, wsum)


@njit(cache=True)
def _add_keys(keys, raw, cm3, lv, ncodes):
    """``keys[i] += sum_j cm3[j, lv[j], raw[i, j]] * mult_j`` (see :func:`rollup`), in the
    dtype of ``keys``, one pass over the rows per column with more than one code."""
    r_max = cm3.shape[2]
    scaled = np.empty(r_max, dtype=keys.dtype)
    prod = np.int64(1)
    for j in range(lv.size):
        nc = ncodes[j, lv[j]]
        if nc <= 1:
            continue  # one code: the column adds 0 to every key
        for c in range(r_max):
            scaled[c] = np.int64(cm3[j, lv[j], c]) * prod
        prod *= nc
        for i in range(keys.size):
            keys[i] += scaled[raw[i, j]]


@njit(cache=True)
def best_slot(slot_levels, slot_rows, lv, limit):
    """The cached table with the fewest rows (fewer than ``limit``) at a node below ``lv``
    (every level <= ``lv``'s); -1 when there is none."""
    best = -1
    best_rows = limit
    q = lv.size
    for s in range(slot_rows.size):
        rows = slot_rows[s]
        if rows >= best_rows:
            continue
        below = True
        for j in range(q):
            if slot_levels[s, j] > lv[j]:
                below = False
                break
        if below:
            best = s
            best_rows = rows
    return best


@njit(cache=True)
def largest_above(levels, rows, count, lv):
    """The most rows of a known table at a node above ``lv`` (every level >= ``lv``'s); 0 if
    none: a lower bound of the number of classes at ``lv`` (a finer partition has at least as
    many classes)."""
    best = 0
    q = lv.size
    for s in range(count):
        if rows[s] <= best:
            continue
        above = True
        for j in range(q):
            if levels[s, j] < lv[j]:
                above = False
                break
        if above:
            best = rows[s]
    return best


@njit(cache=True)
def take_rows(raw, rep, first, ncodes, lv):
    """``(raw[first], rep[first])``: the codes and base patterns of each class's first row; the
    codes column-major (:func:`rollup` reads them a column at a time).

    A column with one code at the levels ``lv`` is left 0: each level coarsens the one below, so
    the column has one code at every node above too, where :func:`rollup` never reads it.
    """
    g = first.size
    q = raw.shape[1]
    raw_out = np.zeros((q, g), dtype=raw.dtype).T
    rep_out = np.empty(g, dtype=rep.dtype)
    for c in range(g):
        rep_out[c] = rep[first[c]]
    for j in range(q):
        if ncodes[j, lv[j]] <= 1:
            continue
        for c in range(g):
            raw_out[c, j] = raw[first[c], j]
    return raw_out, rep_out


@njit(cache=True)
def inherited_min(val, strides, radix):
    """out[N] = min(val[N], out[P] for every predecessor P): the least value of a checked node
    at or below N (``val`` is +inf where unchecked); one pass in id order, as
    :func:`inherited_bounds`."""
    n = val.size
    q = strides.size
    out = np.empty(n, dtype=np.float64)
    for node in range(n):
        v = val[node]
        for j in range(q):
            if (node // strides[j]) % radix[j] > 0:
                w = out[node - strides[j]]
                if w < v:
                    v = w
        out[node] = v
    return out


@njit(cache=True)
def next_open(order, pos, status, pruned):
    """The first position ``>= pos`` in ``order`` whose node is untagged and not pruned; -1."""
    for i in range(pos, order.size):
        node = order[i]
        if status[node] == 0 and pruned[node] == 0:
            return i
    return -1


@njit(cache=True)
def flash_path(start, status, pruned, strides, radix, rel):
    """Flash's path from ``start`` upwards through untagged, unpruned nodes: at each step the
    successor that raises the quasi-identifier with the lowest relative level
    (``level * rel``, first on ties)."""
    q = strides.size
    path = np.empty(1 + int(np.sum(radix - 1)), dtype=np.int64)
    path[0] = start
    n = 1
    cur = start
    while True:
        best_j = -1
        best_r = np.inf
        for j in range(q):
            lvl = (cur // strides[j]) % radix[j]
            if lvl + 1 < radix[j]:
                nb = cur + strides[j]
                if status[nb] == 0 and pruned[nb] == 0:
                    r = lvl * rel[j]
                    if r < best_r:
                        best_j = j
                        best_r = r
        if best_j < 0:
            break
        cur = cur + strides[best_j]
        path[n] = cur
        n += 1
    return path[:n]


@njit(cache=True)
def class_stats(size, ok, n, k):
    """One pass over a node's classes: suppressed records, kept classes, smallest kept class,
    DM = sum_kept |E|^2 + n * suppressed, and the DM bound sum_E |E| min(max(|E|, k), n)."""
    n_sup = 0
    n_kept = 0
    min_kept = n + 1
    dm = 0.0
    lb = 0.0
    for c in range(size.size):
        e = size[c]
        if ok[c]:
            n_kept += 1
            dm += float(e) * float(e)
            if e < min_kept:
                min_kept = e
        else:
            n_sup += e
        lb += float(e) * float(min(max(e, k), n))
    dm += float(n) * float(n_sup)
    return n_sup, n_kept, min_kept, dm, lb
