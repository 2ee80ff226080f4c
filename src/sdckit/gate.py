"""The release gate: thresholds checked on the released data before anything is written.

Each threshold is a registered :class:`~sdckit.registry.GateCheck`; the method packages
register theirs in their ``steps`` modules (``k_anonymity`` in :mod:`sdckit.risk.steps`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .microdata import Microdata
from .registry import GateOutcome, gate_check
from .result import StepResult
from .risk.steps import check_k_anonymity  # noqa: F401  (its former home)


def run_gate(thresholds: dict[str, Any], original: Microdata, released: Microdata,
             results: Sequence[StepResult]) -> list[GateOutcome]:
    """Check every threshold; returns all outcomes (the caller refuses to write on a failure).

    The identifier check (``allow_identifiers``) runs on every release, with an empty list of
    allowed columns unless the gate names some.
    """
    outcomes = []
    thresholds = {"allow_identifiers": (), **thresholds}
    for name, threshold in thresholds.items():
        check = gate_check(name)
        outcomes.append(check.check(original, released, results, threshold))
    return outcomes
