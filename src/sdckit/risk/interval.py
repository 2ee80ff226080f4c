"""Interval disclosure of continuous microdata: ID (rank-based intervals, averaged over widths
of 1% to 10%), the primed ID' for files without a record correspondence, and sdcMicro's
sd-based variant (``dRisk``).

ID (Domingo-Ferrer & Torra 2001): each variable of the masked file is ranked on its own; around
each masked value x'_ij a rank interval is formed from the masked values whose ranks differ
from the rank of x'_ij by at most p percent of the number of records. ID_p is the percentage
of original values x_{t(i),j} that fall inside the interval around their corresponding masked
value; ID is the mean of ID_p over p = 1, 2, ..., 10. The corresponding original record t(i)
is record i itself (ID) or c(i), the original record nearest to masked record i on all
standardised variables (ID', seed section 5.1).

Choices where the sources leave room (also in docs/methods/linkage_risk.md):
- the half-width in ranks is w_p = floor(p n' / 100) on each side (the interval spans ranks
  r - w_p .. r + w_p);
- a masked value shared by several records (ties, e.g. after microaggregation) has ranks
  r_lo .. r_hi; its interval runs from rank r_lo - w_p to r_hi + w_p (clipped to the file).

sdcMicro's variant (:func:`interval_disclosure_sd`): a record is at risk when its original
values lie inside [x'_ij - k sd'_j, x'_ij + k sd'_j] (sd'_j the masked variable's standard
deviation) for all but at most ``max_outside`` variables; sdcMicro's ``dRisk`` uses k = 0.05
and counts records with 0 or 1 variable outside (``max_outside = 1``). The result is the share
of records at risk (0..1), as ``dRisk`` returns it.

References
----------
Domingo-Ferrer, J. and Torra, V. (2001). A quantitative comparison of disclosure control
methods for microdata. In *Confidentiality, Disclosure and Data Access*, North-Holland, 111-133.
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for micro-data
using the R package sdcMicro. *Journal of Statistical Software* 67(4) (``dRisk``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_float, check_int
from ..errors import InputError
from ..utility.numeric import as_pair, correspondence

DEFAULT_WIDTHS = tuple(range(1, 11))


@dataclass(frozen=True)
class IntervalDisclosure:
    """ID or ID' in percent, with the figure per width p and per variable."""

    value: float
    primed: bool
    per_width: dict = field(default_factory=dict)
    per_variable: dict = field(default_factory=dict)
    note: str = ""

    def to_dict(self) -> dict:
        return {"measure": "ID'" if self.primed else "ID", "value": self.value, "primed": self.primed,
                "per_width": dict(self.per_width), "per_variable": dict(self.per_variable), "note": self.note}


def rank_interval_hits(ref: np.ndarray, masked: np.ndarray, width_percent: float) -> np.ndarray:
    """Boolean (n', d): is ref[i, j] inside the rank interval of width p% around masked[i, j]?"""
    n = masked.shape[0]
    w = int(np.floor(width_percent * n / 100.0))
    hits = np.empty(masked.shape, dtype=bool)
    for j in range(masked.shape[1]):  # one vectorised pass per variable
        s = np.sort(masked[:, j])
        lo_rank = np.searchsorted(s, masked[:, j], side="left")
        hi_rank = np.searchsorted(s, masked[:, j], side="right") - 1
        lo = s[np.maximum(lo_rank - w, 0)]
        hi = s[np.minimum(hi_rank + w, n - 1)]
        hits[:, j] = (ref[:, j] >= lo) & (ref[:, j] <= hi)
    return hits


def interval_disclosure(X, Xm, *, primed: bool | None = None, widths: Sequence[float] = DEFAULT_WIDTHS,
                        names: Sequence[str] | None = None, c: np.ndarray | None = None) -> IntervalDisclosure:
    """ID (or ID'): percentage of original values inside the rank intervals around their masked
    values, averaged over the widths (default 1%..10%). See the module docstring."""
    X, Xm, names = as_pair(X, Xm, where="ID", names=names)
    widths = [check_float("interval_disclosure", "widths", float(p), low=0.0, high=100.0, low_open=True)
              for p in widths]
    if not widths:
        raise InputError("interval_disclosure: give at least one width.")
    true, primed, note = correspondence(X, Xm, primed, c, "ID")
    ref = X[true]
    per_width, per_var = {}, np.zeros(X.shape[1])
    for p in widths:
        hits = rank_interval_hits(ref, Xm, p)
        per_width[f"{p:g}"] = 100.0 * float(hits.mean())
        per_var += hits.mean(axis=0)
    per_var = 100.0 * per_var / len(widths)
    return IntervalDisclosure(float(np.mean(list(per_width.values()))), primed, per_width,
                              {names[j]: float(per_var[j]) for j in range(len(names))}, note)


def interval_disclosure_sd(X, Xm, *, k: float = 0.05, max_outside: int = 1, primed: bool | None = None,
                           c: np.ndarray | None = None) -> float:
    """sdcMicro's ``dRisk``: share (0..1) of records whose original values lie within
    x'_ij +/- k sd(x'_j) for all but at most ``max_outside`` variables."""
    k = check_float("interval_disclosure_sd", "k", k, low=0.0, low_open=True)
    max_outside = check_int("interval_disclosure_sd", "max_outside", max_outside, min_value=0)
    X, Xm, _ = as_pair(X, Xm, where="interval disclosure (sd)")
    true, _, _ = correspondence(X, Xm, primed, c, "ID")
    sd = Xm.std(axis=0, ddof=1)
    ref = X[true]
    outside = ((ref < Xm - k * sd) | (ref > Xm + k * sd)).sum(axis=1)
    return float((outside <= max_outside).mean())


__all__ = ["DEFAULT_WIDTHS", "IntervalDisclosure", "interval_disclosure", "interval_disclosure_sd",
           "rank_interval_hits"]
