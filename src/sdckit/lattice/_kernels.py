"""Numba kernels of the lattice search: class keys, hash grouping and lattice tagging."""

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
    return gid, first[:ng], csum[:ng], wout[:ng]


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
    return gid, first[:ng], csum[:ng], wout[:ng]


@njit(cache=True)
def inherited_bounds(lb, strides, radix):
    """inh[N] = max(lb[N], inh[P] for every predecessor P): the largest bound of a checked node
    at or below N (``lb`` is -inf where unchecked). Node ids grow with every level, so one
    pass in id order sees the predecessors first."""
    n = lb.size
    q = strides.size
    inh = np.empty(n, dtype=np.float64)
    for node in range(n):
        v = lb[node]
        for j in range(q):
            if (node // strides[j]) % radix[j] > 0:
                w = inh[node - strides[j]]
                if w > v:
                    v = w
        inh[node] = v
    return inh

