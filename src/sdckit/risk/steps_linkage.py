"""Gate thresholds on the disclosure risk of continuous variables: ``max_dld`` (distance-based
record linkage, percent) and ``max_id`` (rank-interval disclosure, percent).

Both recompute the measure from the original and released numeric variables (the original's
``numeric_vars`` role), independently of the steps' own claims.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InputError
from ..microdata import Microdata
from ..params import param
from ..registry import GateCheck, GateOutcome, register_gate_check
from ..result import StepResult
from .interval import interval_disclosure
from .linkage import distance_linkage


def _numeric_pair(original: Microdata, released: Microdata, gate: str):
    names = list(original.numeric_vars)
    if not names:
        raise InputError(f"gate.{gate}: the data have no numeric variables; give the numeric_vars role "
                         f"or remove the {gate} threshold.")
    missing = [v for v in names if v not in released.columns]
    if missing:
        raise InputError(f"gate.{gate}: numeric variables {missing} are not in the release; the measure "
                         "needs the same variables in both files.")
    return original.numeric_array(names), released.numeric_array(names), names


@register_gate_check("max_dld", requires=("numeric",), description=(
    "distance-based record linkage DLD (percent of records re-identified) at most the threshold"))
@dataclass(frozen=True)
class MaxDLD(GateCheck):
    """Distance-based record linkage DLD on the numeric variables, in percent.

    References
    ----------
    Domingo-Ferrer, J. and Torra, V. (2001). A quantitative comparison of disclosure control
    methods for microdata. In *Confidentiality, Disclosure and Data Access*, North-Holland, 111-133.
    """

    percent: float = param(kind="float", low=0.0, high=100.0, unit="percent of records",
                           label="largest DLD", symbol="DLD",
                           help="percent of records an intruder re-identifies by nearest distance")

    measured_labels = {"dld": ("records re-identified by distance-based linkage", "percent"),
                       "primed": ("measured on the masked data's own scale", None)}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_dld(original, released, results, self.percent)


def check_max_dld(original: Microdata, released: Microdata, results: Sequence[StepResult],
                  threshold: float) -> GateOutcome:
    X, Xm, names = _numeric_pair(original, released, "max_dld")
    r = distance_linkage(X, Xm, names=names)
    ok = r.value <= threshold
    worst = max(r.per_subset, key=r.per_subset.get)
    detail = (f"DLD{chr(39) if r.primed else ''} {r.value:.3f}% {'<=' if ok else '>'} {threshold:g}% "
              f"(averaged over {len(r.per_subset)} intruder variable sets; highest {r.per_subset[worst]:.2f}% "
              f"knowing {worst})" + ("" if ok else "; mask the numeric variables more strongly"))
    return GateOutcome("max_dld", threshold, {"dld": r.value, "primed": r.primed}, ok, detail)


@register_gate_check("max_id", requires=("numeric",), description=(
    "interval disclosure ID (percent of original values inside the rank intervals, widths 1-10%) "
    "at most the threshold"))
@dataclass(frozen=True)
class MaxID(GateCheck):
    """Rank-interval disclosure ID on the numeric variables, in percent.

    References
    ----------
    Domingo-Ferrer, J. and Torra, V. (2001). A quantitative comparison of disclosure control
    methods for microdata. In *Confidentiality, Disclosure and Data Access*, North-Holland, 111-133.
    """

    percent: float = param(kind="float", low=0.0, high=100.0, unit="percent of values",
                           label="largest interval disclosure", symbol="ID",
                           help="percent of original values inside the rank intervals of the released ones")

    measured_labels = {"id": ("original values inside the released interval", "percent"),
                       "primed": ("measured on the masked data's own scale", None)}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_id(original, released, results, self.percent)


def check_max_id(original: Microdata, released: Microdata, results: Sequence[StepResult],
                 threshold: float) -> GateOutcome:
    X, Xm, names = _numeric_pair(original, released, "max_id")
    r = interval_disclosure(X, Xm, names=names)
    ok = r.value <= threshold
    worst = max(r.per_variable, key=r.per_variable.get)
    detail = (f"ID{chr(39) if r.primed else ''} {r.value:.3f}% {'<=' if ok else '>'} {threshold:g}% "
              f"(highest variable {worst!r}: {r.per_variable[worst]:.2f}%)"
              + ("" if ok else "; mask the numeric variables more strongly"))
    return GateOutcome("max_id", threshold, {"id": r.value, "primed": r.primed}, ok, detail)


__all__ = ["MaxDLD", "MaxID", "check_max_dld", "check_max_id"]
