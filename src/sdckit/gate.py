"""The release gate: thresholds checked on the released data before anything is written.

Each threshold is a registered :class:`~sdckit.registry.GateCheck`. This module holds the
foundation's checks; other subpackages register theirs in their ``steps`` module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._validation import check_int
from .microdata import Microdata
from .registry import GateOutcome, gate_check, register_gate_check
from .result import StepResult


def _validate_k(value: Any) -> int:
    return check_int("the gate", "k_anonymity", value, min_value=2)


@register_gate_check("k_anonymity", _validate_k,
                     "every record's key combination occurs at least k times (f_k >= k)")
def check_k_anonymity(original: Microdata, released: Microdata, results: Sequence[StepResult],
                      threshold: int) -> GateOutcome:
    """k-anonymity: every record's f_k >= k on the released key variables.

    Missing key values count as wildcards (sdcMicro's rule with alpha = 1), so values removed
    by local suppression are credited; without missing values this is the plain count.
    """
    from .risk.missing import wildcard_frequencies

    keys = list(released.key_vars)
    freq = wildcard_frequencies([released.codes(v) for v in keys],
                                [released.n_categories(v) for v in keys], alpha=1.0, names=keys)
    n = freq.n_records
    bad = int((freq.fk < threshold).sum())
    reached = int(freq.fk.min())
    detail = (f"all {n} records have f_k >= {threshold} (smallest f_k = {reached})"
              if bad == 0 else
              f"{bad} of {n} records have f_k < {threshold} (smallest f_k = {reached}); "
              f"{bad} records must be protected further")
    return GateOutcome("k_anonymity", threshold, {"violations": bad, "k_reached": reached},
                       bad == 0, detail)


def run_gate(thresholds: dict[str, Any], original: Microdata, released: Microdata,
             results: Sequence[StepResult]) -> list[GateOutcome]:
    """Check every threshold; returns all outcomes (the caller refuses to write on a failure)."""
    outcomes = []
    for name, threshold in thresholds.items():
        check = gate_check(name)
        outcomes.append(check.check(original, released, results, threshold))
    return outcomes
