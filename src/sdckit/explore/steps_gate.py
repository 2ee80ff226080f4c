"""The gate threshold on explore's linkage risk, so a proposed release is gated on the very
measure the search used (``[explore] risk = "linkage"`` -> ``[gate] max_linkage_risk``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._validation import check_float
from ..microdata import Microdata
from ..registry import GateOutcome, published_recodes, register_gate_check
from ..result import StepResult
from .measures import linkage_risk
from .sweep import intruder_view


def _validate(value: Any) -> float:
    return check_float("the gate", "max_linkage_risk", value, low=0.0, high=1.0)


@register_gate_check("max_linkage_risk", _validate,
                     "expected share of correct re-identifications by an intruder who knows the "
                     "original key values and the published global recodings (explore's linkage "
                     "risk) at most the threshold")
def check_max_linkage_risk(original: Microdata, released: Microdata, results: Sequence[StepResult],
                           threshold: float) -> GateOutcome:
    """Explore's linkage risk of the release, recomputed from the released file and the original."""
    view = intruder_view(original, published_recodes(results))
    risk = linkage_risk(released, view)
    ok = risk <= threshold
    detail = (f"linkage risk {risk:.4g} (expected share of correct re-identifications on the keys) "
              f"{'<=' if ok else '>'} {threshold:g}")
    return GateOutcome("max_linkage_risk", threshold, {"linkage_risk": risk}, ok, detail)
