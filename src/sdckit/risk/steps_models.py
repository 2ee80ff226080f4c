"""Gate thresholds on model-based risk: ``max_tau1``, ``max_tau2`` (log-linear model, main
effects, :mod:`sdckit.risk.loglinear`), ``max_population_uniques`` (Dankar et al.'s rule,
:mod:`sdckit.risk.population`), ``max_prosecutor_risk``, ``max_journalist_risk`` and
``max_marketer_risk`` (:mod:`sdckit.risk.attacker`).

Each check recomputes its measure from the released Microdata (its key variables and weight
role), independently of the steps' own claims. ``max_tau1``, ``max_tau2`` and
``max_population_uniques`` are expected numbers of records (counts); the attacker thresholds
are probabilities in (0, 1] compared with the highest risk (prosecutor, journalist) or the
average (marketer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InputError
from ..microdata import Microdata
from ..params import param
from ..registry import GateCheck, GateOutcome, register_gate_check
from ..result import StepResult


def _loglinear(released: Microdata, gate: str):
    from .loglinear import microdata_loglinear_risk

    if released.weight is None:
        raise InputError(f"gate.{gate}: the log-linear risk needs sampling weights; give the weight "
                         f"role or remove the {gate} threshold.")
    return microdata_loglinear_risk(released)


def _tau_check(name: str, attr: str, what: str):
    def check(original: Microdata, released: Microdata, results: Sequence[StepResult],
              threshold: float) -> GateOutcome:
        r = _loglinear(released, name)
        v = getattr(r, attr)
        ok = v <= threshold
        detail = (f"{attr} {v:.4f} ({what} among {r.n_sample_uniques} sample uniques, log-linear "
                  f"model {r.formula}) {'<=' if ok else '>'} {threshold:g}")
        if not ok:
            detail += "; recode or suppress the sample uniques of highest risk"
        return GateOutcome(name, threshold, {attr: v, "n_sample_uniques": r.n_sample_uniques}, ok, detail)
    check.__name__ = f"check_{name}"
    return check


check_max_tau1 = _tau_check("max_tau1", "tau1", "expected population uniques")
check_max_tau2 = _tau_check("max_tau2", "tau2", "expected correct matches")


@register_gate_check("max_tau1", requires=("weight",), description=(
    "tau1, the expected number of sample uniques that are population unique (log-linear model), "
    "at most the threshold"))
@dataclass(frozen=True)
class MaxTau1(GateCheck):
    """tau1 of the log-linear model: expected sample uniques that are population unique.

    References
    ----------
    Skinner, C. J. and Shlomo, N. (2008). Assessing identification risk in survey microdata
    using log-linear models. *JASA* 103(483), 989-1001 (tau_1).
    """

    tau1: float = param(kind="float", low=0.0, unit="records", symbol="tau_1", label="largest tau1",
                        help="expected number of sample uniques that are population unique")

    measured_labels = {"tau1": ("expected population uniques among the sample uniques (tau1)", "records"),
                       "n_sample_uniques": ("sample uniques", "records")}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_tau1(original, released, results, self.tau1)


@register_gate_check("max_tau2", requires=("weight",), description=(
    "tau2, the expected number of correct matches of sample uniques (log-linear model), at most "
    "the threshold"))
@dataclass(frozen=True)
class MaxTau2(GateCheck):
    """tau2 of the log-linear model: expected correct matches of sample uniques.

    References
    ----------
    Skinner, C. J. and Shlomo, N. (2008). Assessing identification risk in survey microdata
    using log-linear models. *JASA* 103(483), 989-1001 (tau_2).
    """

    tau2: float = param(kind="float", low=0.0, unit="records", symbol="tau_2", label="largest tau2",
                        help="expected number of correct matches of sample uniques")

    measured_labels = {"tau2": ("expected correct matches of sample uniques (tau2)", "records"),
                       "n_sample_uniques": ("sample uniques", "records")}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_tau2(original, released, results, self.tau2)


@register_gate_check("max_population_uniques", requires=("weight",), description=(
    "estimated number of population uniques (Dankar et al.'s rule over the Zayatz, Pitman and "
    "SNB models) at most the threshold"))
@dataclass(frozen=True)
class MaxPopulationUniques(GateCheck):
    """Estimated population uniques (Dankar et al.'s choice among the Zayatz, Pitman and SNB models)."""

    count: float = param(kind="float", low=0.0, unit="records", label="largest number of population uniques",
                         help="estimated number of records unique in the population")

    measured_labels = {"population_uniques": ("estimated population uniques", "records"),
                       "model": ("model chosen", None)}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_population_uniques(original, released, results, self.count)


def check_max_population_uniques(original: Microdata, released: Microdata,
                                 results: Sequence[StepResult], threshold: float) -> GateOutcome:
    from .population import microdata_population_uniques

    if released.weight is None:
        raise InputError("gate.max_population_uniques: the population size comes from the sampling "
                         "weights; give the weight role or remove the threshold.")
    r = microdata_population_uniques(released)
    ok = r.dankar <= threshold
    detail = (f"estimated population uniques {r.dankar:.1f} ({r.dankar_model} model, sampling "
              f"fraction {r.sampling_fraction:.4g}) {'<=' if ok else '>'} {threshold:g}")
    if not ok:
        detail += "; recode the keys to make rare combinations common"
    return GateOutcome("max_population_uniques", threshold,
                       {"population_uniques": r.dankar, "model": r.dankar_model}, ok, detail)


def _attacker_check(name: str, model: str, stat: str):
    def check(original: Microdata, released: Microdata, results: Sequence[StepResult],
              threshold: float) -> GateOutcome:
        from .attacker import attacker_risks

        rep = attacker_risks(released, threshold=threshold)
        r = getattr(rep, model)
        v = getattr(r, stat)
        ok = v <= threshold
        detail = (f"{model} risk: {stat} {v:.4g} {'<=' if ok else '>'} {threshold:g} "
                  f"({r.n_above} records above; population: {r.population})")
        if not ok:
            detail += "; generalise or suppress the records in the smallest classes"
        return GateOutcome(name, threshold, {stat: v, "n_above": r.n_above,
                                             "share_above": r.share_above}, ok, detail)
    check.__name__ = f"check_{name}"
    return check


check_max_prosecutor_risk = _attacker_check("max_prosecutor_risk", "prosecutor", "highest")
check_max_journalist_risk = _attacker_check("max_journalist_risk", "journalist", "highest")
check_max_marketer_risk = _attacker_check("max_marketer_risk", "marketer", "average")


def _attacker_param(label: str, help: str):
    return param(kind="float", low=0.0, high=1.0, low_open=True, unit="probability", label=label,
                 help=help)


@register_gate_check("max_prosecutor_risk",
                     description="highest prosecutor risk 1/f_k at most the threshold")
@dataclass(frozen=True)
class MaxProsecutorRisk(GateCheck):
    """Prosecutor risk: the intruder knows the target is in the file.

    See :mod:`sdckit.risk.attacker` (El Emam 2013, ch. 11-14).
    """

    risk: float = _attacker_param("largest prosecutor risk", "highest 1/f_k over the records")

    measured_labels = {"highest": ("highest prosecutor risk", "probability"),
                       "n_above": ("records above the threshold", "records"),
                       "share_above": ("share above the threshold", "share")}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_prosecutor_risk(original, released, results, self.risk)


@register_gate_check("max_journalist_risk", description=(
    "highest journalist risk 1/F_k (F_k from the weights) at most the threshold"))
@dataclass(frozen=True)
class MaxJournalistRisk(GateCheck):
    """Journalist risk: the target is in the population the file samples.

    See :mod:`sdckit.risk.attacker` (El Emam 2013, ch. 11-14).
    """

    risk: float = _attacker_param("largest journalist risk",
                                  "highest 1/F_k over the records (F_k from the weights)")

    measured_labels = {"highest": ("highest journalist risk", "probability"),
                       "n_above": ("records above the threshold", "records"),
                       "share_above": ("share above the threshold", "share")}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_journalist_risk(original, released, results, self.risk)


@register_gate_check("max_marketer_risk", description=(
    "marketer risk (expected share of records re-identified) at most the threshold"))
@dataclass(frozen=True)
class MaxMarketerRisk(GateCheck):
    """Marketer risk: the expected share of records re-identified.

    See :mod:`sdckit.risk.attacker` (El Emam 2013, ch. 11-14).
    """

    risk: float = _attacker_param("largest marketer risk", "expected share of records re-identified")

    measured_labels = {"average": ("marketer risk (expected share re-identified)", "probability"),
                       "n_above": ("records above the threshold", "records"),
                       "share_above": ("share above the threshold", "share")}

    def check(self, original: Microdata, released: Microdata,
              results: Sequence[StepResult]) -> GateOutcome:
        return check_max_marketer_risk(original, released, results, self.risk)


__all__ = ["MaxJournalistRisk", "MaxMarketerRisk", "MaxPopulationUniques", "MaxProsecutorRisk",
           "MaxTau1", "MaxTau2", "check_max_journalist_risk", "check_max_marketer_risk",
           "check_max_population_uniques", "check_max_prosecutor_risk", "check_max_tau1",
           "check_max_tau2"]
