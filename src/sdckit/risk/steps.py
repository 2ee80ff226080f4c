"""Gate thresholds on disclosure risk: ``k_anonymity``, ``max_global_risk``,
``max_individual_risk``, ``l_diversity``.

Each check measures the released data independently of the steps' own claims: it recomputes
the frequencies, the individual risks or the classes' sensitive values from the released
Microdata.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


from .._validation import check_float, check_int
from ..errors import InputError
from ..microdata import Microdata
from ..registry import GateOutcome, register_gate_check
from ..result import StepResult


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
    from .missing import wildcard_frequencies

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


def _validate_risk(name: str):
    def validate(value: Any) -> float:
        return check_float("the gate", name, value, low=0.0, high=1.0, low_open=True)
    return validate


@register_gate_check("max_global_risk", _validate_risk("max_global_risk"),
                     "global risk (expected re-identifications / n) at most the threshold")
def check_max_global_risk(original: Microdata, released: Microdata,
                          results: Sequence[StepResult], threshold: float) -> GateOutcome:
    """Global risk ER / n of the released data (individual risk as sdcMicro's measure_risk)."""
    from .individual import individual_risk
    from .missing import microdata_frequencies

    freq = microdata_frequencies(released)
    risk = individual_risk(freq.fk, freq.Fk, weighted=released.weight is not None)
    er = float(risk.sum())
    g = er / risk.shape[0]
    ok = g <= threshold
    detail = (f"global risk {g:.6g} ({er:.3f} expected re-identifications in {risk.shape[0]} "
              f"records) {'<=' if ok else '>'} {threshold:g}")
    if not ok:
        detail += "; protect the records of highest individual risk further"
    return GateOutcome("max_global_risk", threshold,
                       {"global_risk": g, "expected_reidentifications": er}, ok, detail)


@register_gate_check("max_individual_risk", _validate_risk("max_individual_risk"),
                     "every record's individual re-identification risk at most the threshold")
def check_max_individual_risk(original: Microdata, released: Microdata,
                              results: Sequence[StepResult], threshold: float) -> GateOutcome:
    """Largest individual risk of the released data."""
    from .individual import individual_risk
    from .missing import microdata_frequencies

    freq = microdata_frequencies(released)
    risk = individual_risk(freq.fk, freq.Fk, weighted=released.weight is not None)
    bad = int((risk > threshold).sum())
    mx = float(risk.max())
    detail = (f"largest individual risk {mx:.6g} <= {threshold:g}" if bad == 0 else
              f"{bad} of {risk.shape[0]} records have individual risk above {threshold:g} "
              f"(largest {mx:.6g}); they must be protected further")
    return GateOutcome("max_individual_risk", threshold,
                       {"max_individual_risk": mx, "n_above": bad}, bad == 0, detail)


def _validate_l(value: Any) -> int:
    return check_int("the gate", "l_diversity", value, min_value=2)


@register_gate_check("l_diversity", _validate_l,
                     "every key class holds at least l distinct values of each sensitive variable")
def check_l_diversity(original: Microdata, released: Microdata,
                      results: Sequence[StepResult], threshold: int) -> GateOutcome:
    """Distinct l-diversity of each sensitive variable of the released data."""
    from .ldiversity import l_diversity

    if not released.sensitive:
        raise InputError("gate.l_diversity: the data have no sensitive variable; give the "
                         "'sensitive' role or remove the l_diversity threshold.")
    res = l_diversity(released)
    per_var, bad_total = {}, 0
    for v in res.sensitive:
        col = res.records[f"{v}_distinct"].to_numpy()
        bad = int((col < threshold).sum())
        per_var[v] = {"l_reached": int(col.min()), "records_below": bad}
        bad_total += bad
    ok = bad_total == 0
    detail = ("; ".join(f"{v}: smallest distinct l {d['l_reached']}, "
                        f"{d['records_below']} records in classes with fewer than {threshold} values"
                        for v, d in per_var.items()))
    return GateOutcome("l_diversity", threshold, per_var, ok, detail)


__all__ = ["check_k_anonymity", "check_l_diversity", "check_max_global_risk", "check_max_individual_risk"]
