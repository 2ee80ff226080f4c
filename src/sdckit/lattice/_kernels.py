"""The lattice search's kernels: class keys, grouping and lattice tagging, in numba or numpy.

Every kernel has a numba version (:mod:`._kernels_nb`) and a numpy twin (:mod:`._kernels_np`)
that returns the same result, so the backend changes the search's speed, never its result.
Loading numba and its compiled kernels costs about 0.5 s of CPU, more than a search on a table
the size of ARX's adult file (30,162 records) spends in the kernels in numpy. So a process starts
on numpy (``auto``) and moves to numba for good once the numpy kernels have used
:data:`NUMPY_CPU_BUDGET` seconds of CPU, once a kernel is handed more than
:data:`NUMPY_MAX_ROWS` rows (a second roll-up more than :data:`NUMPY_MAX_ROLLUP_ROWS`), or
where numba is loaded already (another command paid for it); a
call the numpy twin cannot take (``NotVectorised``) goes to numba. ``use("numba")`` or
``use("numpy")`` fixes the choice (tests; ``sdckit warm`` compiles the numba kernels into the
cache). Budgets are CPU seconds, so a loaded machine moves later, and the result is the same.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from . import _kernels_np as _np_kernels

#: CPU seconds the numpy kernels may use in a process before the search moves to numba (the adult
#: search above uses 0.3-0.5 s in numpy, against about 0.5 s to load numba and 0.2 s in its kernels)
NUMPY_CPU_BUDGET = 1.0
#: a kernel call on more rows than this moves the search to numba at once
NUMPY_MAX_ROWS = 200_000
#: the second roll-up on more rows than this moves the search to numba at once (the first is
#: the base table's, built once by the encoding): a search repeats its roll-ups node after node,
#: and on 100,000 rows numpy's takes about 3 times numba's CPU (5.4 against 1.7 ms a roll-up,
#: measured), so the CPU budget would buy about a third of its worth of numba's work
NUMPY_MAX_ROLLUP_ROWS = 50_000

_state = {"backend": "auto", "numpy_cpu": 0.0, "large_rollups": 0}
_UNSIGNED = {np.dtype(np.int8): np.uint8, np.dtype(np.int16): np.uint16}


def use(backend: str) -> None:
    """Fix the backend: ``"numba"``, ``"numpy"`` or ``"auto"`` (the default; see the module)."""
    if backend not in ("auto", "numba", "numpy"):
        raise ValueError(f"backend must be 'auto', 'numba' or 'numpy'. Got {backend!r}.")
    _state["backend"] = backend
    _state["numpy_cpu"] = 0.0
    _state["large_rollups"] = 0


def backend() -> str:
    """The backend the next call uses: ``"numba"`` or ``"numpy"``."""
    chosen = _state["backend"]
    if chosen == "auto":
        if "numba" in sys.modules or _state["numpy_cpu"] > NUMPY_CPU_BUDGET:
            _state["backend"] = chosen = "numba"  # for good: numba's load is paid once
        else:
            return "numpy"
    return chosen


_nb_kernels: dict = {}


def _numba(name: str):
    fn = _nb_kernels.get(name)
    if fn is None:  # the first call imports numba (and loads or compiles the kernel)
        from . import _kernels_nb

        fn = _nb_kernels[name] = getattr(_kernels_nb, name)
    return fn


def _call(name: str, rows: int, *args):
    if _state["backend"] == "numba":  # the common case once the work has grown
        return _numba(name)(*args)
    if backend() == "numpy":
        if rows > NUMPY_MAX_ROWS and _state["backend"] == "auto":
            _state["backend"] = "numba"
        else:
            t0 = time.process_time()
            try:
                return getattr(_np_kernels, name)(*args)
            except _np_kernels.NotVectorised:
                pass  # numba's walk handles it
            finally:
                _state["numpy_cpu"] += time.process_time() - t0
    return _numba(name)(*args)


def stage_keys(keys_in, base_mult, raw2d, rep, cmn, cols, mults):
    """keys[i] = keys_in[i] * base_mult + sum_k cmn[cols[k], raw2d[rep[i], cols[k]]] * mults[k]."""
    return _call("stage_keys", rep.size, keys_in, base_mult, raw2d, rep, cmn, cols, mults)


def group(keys, counts, wsum):
    """Group equal keys in order of first appearance: ``(gid, first, counts, wsum)`` per group."""
    return _call("group", keys.size, keys, counts, wsum)


def group_dense(keys, counts, wsum, size):
    """:func:`group` for keys known to lie in ``[0, size)``."""
    return _call("group_dense", keys.size, keys, counts, wsum, size)


def rollup(raw, counts, wsum, cm3, lv, ncodes):
    """Group the rows of a table into the classes of the node with levels ``lv`` (see the numba kernel)."""
    if raw.dtype in _UNSIGNED:
        # raw codes are never negative: read them unsigned, so that an index needs no
        # negative-index wrap-around check (the same values, about a fifth less time per row)
        raw = raw.view(_UNSIGNED[raw.dtype])
    if raw.shape[0] > NUMPY_MAX_ROLLUP_ROWS and _state["backend"] == "auto":
        _state["large_rollups"] += 1
        if _state["large_rollups"] > 1:
            _state["backend"] = "numba"  # for good, as the other rules
    return _call("rollup", raw.shape[0], raw, counts, wsum, cm3, lv, ncodes)


def take_rows(raw, rep, first, ncodes, lv):
    """``(raw[first], rep[first])``, column-major: the codes and base patterns of each class's
    first row (0 in a column with one code at the levels ``lv``: never read above them)."""
    return _call("take_rows", first.size, raw, rep, first, ncodes, lv)


def best_slot(slot_levels, slot_rows, lv, limit):
    """The cached table with the fewest rows (fewer than ``limit``) at a node below ``lv``; -1."""
    return _call("best_slot", 0, slot_levels, slot_rows, lv, limit)


def largest_above(levels, rows, count, lv):
    """The most rows of a known table at a node above ``lv``; 0 if none."""
    return _call("largest_above", 0, levels, rows, count, lv)


def class_stats(size, ok, n, k):
    """Suppressed records, kept classes, smallest kept class, DM and the DM bound of a node."""
    return _call("class_stats", size.size, size, ok, n, k)


def tag(status, start, strides, radix, value, up):
    """Set ``status`` to ``value`` on the up-set (``up``) or down-set of node ``start``; the
    number of nodes newly tagged."""
    return _call("tag", 0, status, start, strides, radix, value, up)


def next_open(order, pos, status, pruned):
    """The first position ``>= pos`` in ``order`` whose node is untagged and not pruned; -1."""
    return _call("next_open", 0, order, pos, status, pruned)


def flash_path(start, status, pruned, strides, radix, rel):
    """Flash's path from ``start`` upwards through untagged, unpruned nodes."""
    return _call("flash_path", 0, start, status, pruned, strides, radix, rel)


def inherited_min(val, strides, radix):
    """out[N] = min(val[N], out[P] for every predecessor P)."""
    return _call("inherited_min", 0, val, strides, radix)


def inherited_bounds(lb, strides, radix):
    """inh[N] = max(lb[N], inh[P] for every predecessor P)."""
    return _call("inherited_bounds", 0, lb, strides, radix)
