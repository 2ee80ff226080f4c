"""Step summaries: the before/after figures of the continuous masking steps (noise, rank
swapping) in few passes over the data, and a summary whose costly figures are computed when
something reads them (a report), not on the hot path of the step."""

from __future__ import annotations

import numpy as np

from ._numeric import moments_summary


def complete_moments_summary(before: np.ndarray, after: np.ndarray, names, *,
                             corr_before: np.ndarray | None = None) -> dict:
    """The effect of a continuous step on each variable (values changed, means and sds before
    and after, the largest change of a correlation): the figures of
    :func:`~sdckit.masking._numeric.moments_summary`, with complete data
    (no missing value on either side: the usual case) in fewer passes: the values changed
    counted at once, the means and sds without the missing-value copies, the correlations
    on the arrays as they are. The same figures, bit for bit (the same reductions on the
    same values); with missing values the general summary. ``corr_before``: the correlation
    matrix of ``before`` (``np.corrcoef(before, rowvar=False)``), when the caller has it."""
    if before.size == 0 or np.isnan(before).any() or np.isnan(after).any():
        return moments_summary(before, after, names)
    changed = int(np.count_nonzero(before != after))
    p = before.shape[1]
    if before.shape[0] < 3 or p < 2:
        dc = np.zeros((p, p))
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            # C order, as the general summary's row selection leaves them (the same product)
            cb = np.corrcoef(np.ascontiguousarray(before), rowvar=False) if corr_before is None else corr_before
            dc = np.abs(np.corrcoef(np.ascontiguousarray(after), rowvar=False) - cb)
    return {
        "values_changed": changed,
        "values_changed_share": float(changed / before.size),
        "moments": {v: {"mean_before": float(np.mean(before[:, j])), "mean_after": float(np.mean(after[:, j])),
                        "sd_before": float(np.std(before[:, j], ddof=1)),
                        "sd_after": float(np.std(after[:, j], ddof=1))}
                    for j, v in enumerate(names)},
        "max_correlation_change": float(np.nanmax(dc)) if dc.size else 0.0,
    }


class LazySummary(dict):
    """A step summary some of whose figures are computed on the first read.

    A figure only a report shows, and which costs more than the step (the distinct values of
    a continuous column before and after top coding: a hash of every value), is computed
    when anything reads the mapping (an item, ``get``, ``items()``, ``values()``, ``==``,
    ``repr``, a copy, JSON, pickling), never on the hot path. Its key holds its place in the
    order from the start, so the mapping reads as the plain dict it becomes.
    """

    __slots__ = ("_pending",)

    def __init__(self, items: dict, pending):
        super().__init__(items)
        self._pending = pending          # () -> {key: value} for the keys still to compute

    def _resolve(self) -> None:
        pending = self._pending
        if pending is not None:
            self._pending = None
            dict.update(self, pending())

    def __getitem__(self, key):
        self._resolve()
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        self._resolve()
        return dict.get(self, key, default)

    def items(self):
        self._resolve()
        return dict.items(self)

    def values(self):
        self._resolve()
        return dict.values(self)

    def __iter__(self):                  # a type-level __iter__ sends dict(x), {**x} through
        return dict.__iter__(self)       # keys() and __getitem__ (not the raw storage)

    def __eq__(self, other):
        self._resolve()
        if isinstance(other, LazySummary):
            other._resolve()
        return dict.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def __repr__(self) -> str:
        self._resolve()
        return dict.__repr__(self)

    def copy(self) -> dict:
        self._resolve()
        return dict(dict.items(self))

    def pop(self, *args):
        self._resolve()
        return dict.pop(self, *args)

    def popitem(self):
        self._resolve()
        return dict.popitem(self)

    def setdefault(self, key, default=None):
        self._resolve()
        return dict.setdefault(self, key, default)

    def __setitem__(self, key, value):
        self._resolve()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        self._resolve()
        dict.__delitem__(self, key)

    def update(self, *args, **kwargs):
        self._resolve()
        dict.update(self, *args, **kwargs)

    def __ior__(self, other):
        self.update(other)
        return self

    def __or__(self, other):
        return self.copy() | other

    def __ror__(self, other):
        return other | self.copy()

    def __reduce__(self):
        return dict, (self.copy(),)

    def __reduce_ex__(self, protocol):
        return self.__reduce__()

    def __copy__(self) -> dict:
        return self.copy()

    def __deepcopy__(self, memo) -> dict:
        import copy

        return copy.deepcopy(self.copy(), memo)


#: the keys :func:`complete_moments_summary` adds to a step summary, in order
MOMENT_KEYS = ("values_changed", "values_changed_share", "moments", "max_correlation_change")


def lazy_moments_summary(head: dict, before: np.ndarray, after: np.ndarray, names, **kw) -> LazySummary:
    """``head`` followed by :func:`complete_moments_summary`'s figures, computed when read: the
    means, sds and correlations are report figures, the step's guarantee is checked without
    them."""
    return LazySummary({**head, **dict.fromkeys(MOMENT_KEYS)},
                       lambda: complete_moments_summary(before, after, names, **kw))
