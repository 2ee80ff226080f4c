"""Gate thresholds on disclosure risk: ``k_anonymity`` (:class:`KAnonymity`),
``max_global_risk`` (:class:`MaxGlobalRisk`), ``max_individual_risk``
(:class:`MaxIndividualRisk`), ``l_diversity`` (:class:`LDiversity`).

Each check measures the released data independently of the steps' own claims: it recomputes
the frequencies, the individual risks or the classes' sensitive values from the released
Microdata. The classes declare their thresholds with :func:`sdckit.params.param`, so the spec
reader, the docs and the workbench's forms read one declaration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InputError
from ..microdata import Microdata
from ..params import param
from ..registry import GateCheck, GateOutcome, register_gate_check
from ..result import StepResult


@register_gate_check("k_anonymity", engines=("memory", "dask"))
@dataclass(frozen=True)
class KAnonymity(GateCheck):
    """Every record's key combination occurs at least k times (f_k >= k).

    Missing key values count as wildcards (sdcMicro's rule with alpha = 1).

    References
    ----------
    Samarati, P. and Sweeney, L. (1998). Protecting privacy when disclosing information:
    k-anonymity and its enforcement through generalization and suppression. SRI-CSL-98-04.
    """

    k: int = param(kind="int", low=2, symbol="k", unit="records", label="k-anonymity",
                   help="every record's key combination must occur at least k times")

    measured_labels = {"k_reached": ("k reached", None), "violations": ("records below k", "records")}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_k_anonymity(original, released, results, self.k)

    # the Dask engine's protocol: the released keys' frequencies merged over partitions
    dask_summary = "frequencies"

    def finish(self, summary) -> GateOutcome:
        value = summary["summary"]["k_reached"]
        passed = value >= self.k
        below = int(summary["counts"][summary["fk"] < self.k].sum())
        return GateOutcome("k_anonymity", self.k, value, passed, f"smallest f_k is {value}"
                           + ("" if passed else f"; {below} records have f_k < {self.k}"))


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


@register_gate_check("max_global_risk", engines=("memory", "dask"))
@dataclass(frozen=True)
class MaxGlobalRisk(GateCheck):
    """Global risk (expected re-identifications / n) at most the threshold.

    The individual risks are recomputed from the released keys and weights
    (:func:`sdckit.risk.individual.individual_risk`); the global risk is their mean.
    """

    risk: float = param(kind="float", low=0.0, high=1.0, low_open=True, unit="share of records",
                        label="largest global risk",
                        help="expected re-identifications divided by the number of records")

    measured_labels = {"global_risk": ("global risk", "share"),
                       "expected_reidentifications": ("expected re-identifications", "records")}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_global_risk(original, released, results, self.risk)

    # the Dask engine's protocol: the released keys' frequencies merged over partitions
    dask_summary = "frequencies"

    def finish(self, summary) -> GateOutcome:
        value = summary["summary"]["global_risk"]
        return GateOutcome("max_global_risk", self.risk, value, value <= self.risk, f"global risk {value:.6g}")


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


@register_gate_check("max_individual_risk", engines=("memory", "dask"))
@dataclass(frozen=True)
class MaxIndividualRisk(GateCheck):
    """Every record's individual re-identification risk at most the threshold."""

    risk: float = param(kind="float", low=0.0, high=1.0, low_open=True, unit="probability",
                        label="largest individual risk",
                        help="the highest re-identification probability of any record")

    measured_labels = {"max_individual_risk": ("largest individual risk", "probability"),
                       "n_above": ("records above the threshold", "records")}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_individual_risk(original, released, results, self.risk)

    # the Dask engine's protocol: the released keys' frequencies merged over partitions
    dask_summary = "frequencies"

    def finish(self, summary) -> GateOutcome:
        value = summary["summary"]["max_individual_risk"]
        return GateOutcome("max_individual_risk", self.risk, value, value <= self.risk,
                           f"largest individual risk {value:.6g}")


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


@register_gate_check("l_diversity", requires=("sensitive",))
@dataclass(frozen=True)
class LDiversity(GateCheck):
    """Every key class holds at least l distinct values of each sensitive variable.

    References
    ----------
    Machanavajjhala, A. et al. (2007). l-diversity: privacy beyond k-anonymity. *ACM TKDD*
    1(1), section 4 (distinct l-diversity).
    """

    l: int = param(kind="int", low=2, symbol="l", unit="distinct values", label="l-diversity",  # noqa: E741
                   help="distinct sensitive values every key class must hold")

    measured_labels = {"l_reached": ("smallest l reached", None), "records_below": ("records in classes below l", "records")}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_l_diversity(original, released, results, self.l)


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


__all__ = ["KAnonymity", "LDiversity", "MaxGlobalRisk", "MaxIndividualRisk", "check_k_anonymity",
           "check_l_diversity", "check_max_global_risk", "check_max_individual_risk"]
