"""The gate threshold on explore's linkage risk, so a proposed release is gated on the very
measure the search used (``[explore] risk = "linkage"`` -> ``[gate] max_linkage_risk``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..microdata import Microdata
from ..params import param
from ..registry import GateCheck, GateOutcome, published_recodes, register_gate_check
from ..result import StepResult
from ..risk.intruder import intruder_view, linkage_risk


@register_gate_check("max_linkage_risk", description=(
    "expected share of correct re-identifications by an intruder who knows the original key "
    "values and the published global recodings (explore's linkage risk) at most the threshold"))
@dataclass(frozen=True)
class MaxLinkageRisk(GateCheck):
    """Explore's linkage risk of the release, so a proposal is gated on the measure its search used."""

    risk: float = param(kind="float", low=0.0, high=1.0, unit="share of records",
                        label="largest linkage risk",
                        help="expected share of records correctly re-identified on the keys")

    measured_labels = {"linkage_risk": ("expected share of correct re-identifications", "share")}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_linkage_risk(original, released, results, self.risk)


def check_max_linkage_risk(original: Microdata, released: Microdata, results: Sequence[StepResult],
                           threshold: float) -> GateOutcome:
    """Explore's linkage risk of the release, recomputed from the released file and the original."""
    view = intruder_view(original, published_recodes(results))
    risk = linkage_risk(released, view)
    ok = risk <= threshold
    detail = (f"linkage risk {risk:.4g} (expected share of correct re-identifications on the keys) "
              f"{'<=' if ok else '>'} {threshold:g}")
    return GateOutcome("max_linkage_risk", threshold, {"linkage_risk": risk}, ok, detail)
