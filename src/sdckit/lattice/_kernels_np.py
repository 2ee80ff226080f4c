"""Numpy twins of the lattice search's numba kernels (:mod:`sdckit.lattice._kernels_nb`).

Each function returns exactly what its numba twin returns (the same values, dtypes and order:
classes numbered in order of first appearance, sums accumulated in row order), so a search gives
the same result on either. They exist for start-up: loading numba and its compiled kernels costs
about 0.5 s of CPU, more than a search on a table the size of ARX's adult file spends in the
kernels; :mod:`sdckit.lattice._kernels` starts on these and moves to numba once the work grows.

The lattice kernels read a node id as the mixed-radix number ``sum_j level_j * strides[j]``;
where ``strides`` are the C-order strides of an array of shape ``radix`` (in some order of the
quasi-identifiers, as :class:`sdckit.lattice.problem.Problem` numbers its nodes) the up-set,
down-set and inherited minima are slices and cumulative minima of that array.
:class:`NotVectorised` is raised where they are not, and the caller uses the numba kernel.
"""

from __future__ import annotations

import numpy as np


class NotVectorised(Exception):
    """The arguments fall outside what the numpy twin handles; call the numba kernel instead."""


def group(keys, counts, wsum):
    """Group equal keys in order of first appearance: ``(gid, first, counts, wsum)`` per group
    (pandas' hash factorisation numbers the keys in that order, as the numba kernel does)."""
    import pandas as pd

    if keys.size == 0:
        return (np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64))
    codes, _ = pd.factorize(keys, sort=False)
    # a row is its group's first exactly where the running maximum of the codes rises
    first = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1) > 0).astype(np.int64)
    return _sums(codes.astype(np.int32), first, counts, wsum)


def group_dense(keys, counts, wsum, size):
    """:func:`group` for keys known to lie in ``[0, size)``: a direct-address table, no sort of the rows."""
    m = keys.size
    first_pos = np.full(int(size), m, dtype=np.int64)
    np.minimum.at(first_pos, keys, np.arange(m, dtype=np.int64))  # each key's first row
    is_first = np.zeros(m + 1, dtype=bool)
    is_first[first_pos] = True  # (row m stands for the keys that do not occur)
    first = np.flatnonzero(is_first[:m])  # the first rows, in row order: groups by first appearance
    gid_of_key = np.empty(int(size), dtype=np.int32)
    gid_of_key[keys[first]] = np.arange(first.size, dtype=np.int32)
    return _sums(gid_of_key[keys], first, counts, wsum)


def _sums(gid, first, counts, wsum):
    # bincount adds in row order, as the numba loop does: the float sums agree bit for bit
    ng = first.size
    csum = np.bincount(gid, weights=counts, minlength=ng).astype(np.int64)
    wout = np.bincount(gid, weights=wsum, minlength=ng).astype(np.float64, copy=False)  # (int64 when empty)
    return gid, first, csum, wout


def stage_keys(keys_in, base_mult, raw2d, rep, cmn, cols, mults):
    """keys[i] = keys_in[i] * base_mult + sum_k cmn[cols[k], raw2d[rep[i], cols[k]]] * mults[k] (int64)."""
    out = (keys_in.astype(np.int64) * np.int64(base_mult) if keys_in.size > 0
           else np.zeros(rep.size, dtype=np.int64))
    rows = raw2d[rep]
    for k in range(cols.size):
        j = cols[k]
        out += cmn[j].astype(np.int64)[rows[:, j]] * np.int64(mults[k])
    return out


def rollup(raw, counts, wsum, cm3, lv, ncodes):
    """The classes of the node with levels ``lv``: class keys as mixed-radix numbers, grouped
    by :func:`group_dense` on a small key space (at most ``max(4 m, 4096)`` cells), else :func:`group`."""
    m = raw.shape[0]
    keys = np.zeros(m, dtype=np.int64)
    prod = np.int64(1)
    for j in range(lv.size):
        if ncodes[j, lv[j]] <= 1:
            continue  # one code: the column adds 0 to every key
        keys += cm3[j, lv[j]].astype(np.int64)[raw[:, j]] * prod
        prod *= np.int64(ncodes[j, lv[j]])
    if prod <= max(4 * m, 4096):
        return group_dense(keys, counts, wsum, int(prod))
    return group(keys, counts, wsum)


def take_rows(raw, rep, first, ncodes, lv):
    """``(raw[first], rep[first])``: the codes and base patterns of each class's first row; the
    codes column-major and 0 in a column with one code at ``lv``, as the numba kernel returns them."""
    out = np.zeros((raw.shape[1], first.size), dtype=raw.dtype).T
    keep = np.flatnonzero(ncodes[np.arange(lv.size), lv] > 1)
    out[:, keep] = raw[first][:, keep]
    return out, rep[first]


def best_slot(slot_levels, slot_rows, lv, limit):
    """The cached table with the fewest rows (fewer than ``limit``, the first on ties) at a node
    below ``lv``; -1 when there is none."""
    candidates = np.flatnonzero((slot_rows < limit) & (slot_levels <= lv).all(axis=1))
    if candidates.size == 0:
        return -1
    return int(candidates[np.argmin(slot_rows[candidates])])


def largest_above(levels, rows, count, lv):
    """The most rows of a known table at a node above ``lv``; 0 if none."""
    if count <= 0:
        return 0
    above = (levels[:count] >= lv).all(axis=1)
    return max(0, int(rows[:count][above].max())) if above.any() else 0


def class_stats(size, ok, n, k):
    """Suppressed records, kept classes, smallest kept class, DM and the DM bound (as the numba
    kernel; the float sums are of whole numbers below 2**53, exact in any order)."""
    e = size.astype(np.float64)
    kept = size[ok]
    n_sup = int(size[~ok].sum())
    dm = float(np.sum(e[ok] * e[ok])) + float(n) * float(n_sup)
    lb = float(np.sum(e * np.minimum(np.maximum(size, k), n).astype(np.float64)))
    return n_sup, int(kept.size), int(kept.min()) if kept.size else n + 1, dm, lb


_LAYOUTS: dict = {}  # (strides, radix) -> (axis order, shape), or None where not C order


def _layout(strides, radix):
    key = (np.asarray(strides).tobytes(), np.asarray(radix).tobytes())
    if key not in _LAYOUTS:
        if len(_LAYOUTS) > 64:
            _LAYOUTS.clear()
        # a quasi-identifier of one level is always at level 0: its axis is left out (its stride is free)
        order = [int(j) for j in np.argsort(-np.asarray(strides), kind="stable") if radix[j] > 1] or [0]
        shape = tuple(int(radix[j]) for j in order)
        expected = np.cumprod((1,) + shape[:0:-1])[::-1]  # C-order strides of that shape, in nodes
        _LAYOUTS[key] = (order, shape) if np.array_equal(np.asarray(strides)[order], expected) else None
    return _LAYOUTS[key]


def _lattice(values, strides, radix):
    """``values`` (one per node) as an array of the lattice's shape, and the axis order: a view,
    so writing it writes ``values``."""
    layout = _layout(strides, radix)
    if layout is None or values.size != int(np.prod(layout[1])):
        raise NotVectorised("node ids are not the C-order numbering of the lattice")
    order, shape = layout
    view = values.view()
    try:
        view.shape = shape  # refuses where a copy would be needed
    except AttributeError:
        raise NotVectorised("the node array is not contiguous") from None
    return view, order


def tag(status, start, strides, radix, value, up):
    """Set ``status`` to ``value`` on the up-set (``up``) or down-set of node ``start``; the
    number of nodes newly tagged.

    The numba walk stops at nodes already holding ``value``; it tags the whole up-set (down-set)
    when the nodes of that set holding ``value`` are closed upwards (downwards) within it, as
    they are in a search of monotone models (every path from ``start`` to an untagged node then
    runs through untagged nodes). That is checked here; where it does not hold,
    :class:`NotVectorised` is raised before anything is written.
    """
    view, order = _lattice(status, strides, radix)
    levels = (int(start) // np.asarray(strides)) % np.asarray(radix)
    block = view[tuple(slice(int(levels[j]), None) if up else slice(0, int(levels[j]) + 1) for j in order)]
    held = block == value
    n_held = int(np.count_nonzero(held))
    if 0 < n_held < held.size:  # (none held, or all: the walk reaches every node it tags)
        for axis in range(block.ndim):
            lo = (slice(None),) * axis + (slice(None, -1),)
            hi = (slice(None),) * axis + (slice(1, None),)
            # a node held whose successor (up) or predecessor (down) along this axis is not
            if (held[lo] & ~held[hi]).any() if up else (held[hi] & ~held[lo]).any():
                raise NotVectorised("the tagged nodes are not closed within the set: the walk may stop early")
    n_new = held.size - n_held
    block[...] = value
    return n_new


def next_open(order, pos, status, pruned):
    """The first position ``>= pos`` in ``order`` whose node is untagged and not pruned; -1."""
    nodes = order[pos:]
    open_ = (status[nodes] == 0) & (pruned[nodes] == 0)
    return pos + int(np.argmax(open_)) if open_.any() else -1


def flash_path(start, status, pruned, strides, radix, rel):
    """Flash's path from ``start`` upwards through untagged, unpruned nodes (the successor that
    raises the quasi-identifier with the lowest ``level * rel``, the first on ties)."""
    path = [int(start)]
    cur = int(start)
    while True:
        best_j, best_r = -1, np.inf
        for j in range(strides.size):
            lvl = (cur // strides[j]) % radix[j]
            if lvl + 1 < radix[j]:
                nb = cur + strides[j]
                if status[nb] == 0 and pruned[nb] == 0:
                    r = lvl * rel[j]
                    if r < best_r:
                        best_j, best_r = j, r
        if best_j < 0:
            return np.array(path, dtype=np.int64)
        cur += int(strides[best_j])
        path.append(cur)


def inherited_min(val, strides, radix):
    """out[N] = the least ``val`` at or below N: cumulative minima along each axis of the lattice."""
    out = np.array(val, dtype=np.float64)  # a copy: val is not changed
    view, _ = _lattice(out, strides, radix)
    for axis in range(view.ndim):
        np.minimum.accumulate(view, axis=axis, out=view)
    return out


def inherited_bounds(lb, strides, radix):
    """inh[N] = the largest ``lb`` at or below N."""
    return -inherited_min(-lb, strides, radix)
