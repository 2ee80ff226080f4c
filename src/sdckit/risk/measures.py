"""The optional analyses of :func:`sdckit.risk.report.measure_risk` as composable measures.

The core of a risk report (frequencies, k-anonymity, individual and global risk) always runs;
the data's roles add their measures (:class:`Households` for a household role,
:class:`Diversity` for sensitive variables). Each further analysis is a small frozen measure object, added rather than flagged::

    measure_risk(md, measures=[Suda2(max_size=3), Uniqueness(max_size=2), LogLinear()])

A measure's ``add(context)`` reads the data and what the core measured and adds its figures to
the summary, its per-record columns to the records and its result object to the report.
Measures run in a fixed order (``order``), so a report's summary lists its figures the same way
whichever order they were given in. The flags of :func:`measure_risk` (``suda=True``,
``uniqueness_max_size=2``, ...) build the same measures.

References
----------
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for micro-data
using the R package sdcMicro. *Journal of Statistical Software* 67(4) (``measure_risk``,
``suda2``, ``modRisk``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._validation import check_choice, check_float, check_int, param_error
from ..errors import InputError
from ..microdata import Microdata

__all__ = ["Attacker", "Contributions", "Diversity", "Households", "LogLinear", "Measure", "MeasureContext",
           "PopulationUniques", "Suda2", "Uniqueness"]


@dataclass
class MeasureContext:
    """What a measure reads and adds to: the data, the core's records and summary, the k values
    asked for, and the report's result objects (``parts``: ``suda``, ``uniqueness``)."""

    microdata: Microdata
    records: pd.DataFrame
    summary: dict
    ks: list
    parts: dict = field(default_factory=dict)


class Measure:
    """Base of the measures: ``order`` places it among the others; ``add`` does the work."""

    order: ClassVar[int] = 0

    def add(self, context: MeasureContext) -> None:  # pragma: no cover - every measure overrides it
        raise NotImplementedError


@dataclass(frozen=True)
class Households(Measure):
    """Household risk (mean and sum of r_hh over records); added for data with a household role."""

    order: ClassVar[int] = 5

    def add(self, context: MeasureContext) -> None:
        from .individual import household_risk

        hh = household_risk(context.records["risk"].to_numpy(), household_codes(context.microdata))
        context.records["hh_risk"] = hh
        context.summary["household_risk"] = float(hh.mean())
        context.summary["household_expected_reidentifications"] = float(hh.sum())


@dataclass(frozen=True)
class Diversity(Measure):
    """l-diversity and t-closeness of the sensitive variables; added for data with a
    sensitive role."""

    recursive_c: float = 2.0
    ordinal: tuple | None = None

    order: ClassVar[int] = 15

    def add(self, context: MeasureContext) -> None:
        from .ldiversity import l_diversity, t_closeness

        ldiv = l_diversity(context.microdata, recursive_c=self.recursive_c)
        tclose = t_closeness(context.microdata, ordinal=self.ordinal)
        for col in ldiv.records.columns:
            context.records[f"ldiv_{col}"] = ldiv.records[col]
        context.summary["l_diversity"] = ldiv.to_dict()
        context.summary["t_closeness"] = tclose.to_dict()
        context.parts["ldiversity"], context.parts["tcloseness"] = ldiv, tclose


@dataclass(frozen=True)
class Suda2(Measure):
    """SUDA2 scores and DIS-SUDA (Elliot et al.; sdcMicro's ``suda2``), with the DIS
    contribution of each key variable."""

    max_size: int | None = None
    weights: str = "elliot"
    dis_fraction: float | None = None

    order: ClassVar[int] = 10

    def __post_init__(self) -> None:
        from .suda import SCORE_WEIGHTS

        check_choice("Suda2", "weights", self.weights, SCORE_WEIGHTS)
        if self.max_size is not None:
            check_int("Suda2", "max_size", self.max_size, min_value=1)
        if self.dis_fraction is not None:
            check_float("Suda2", "dis_fraction", self.dis_fraction, low=0, high=1, low_open=True, high_open=True)

    def add(self, context: MeasureContext) -> None:
        from .contributions import suda_contributions
        from .suda import microdata_suda2

        md, n = context.microdata, context.microdata.n_records
        dis_fraction = self.dis_fraction
        if dis_fraction is None:  # n / sum of weights with a weight role, else sdcMicro's 0.01
            w = md.weights()
            dis_fraction = float(min(max(n / w.sum(), 1e-9), 1 - 1e-9)) if w is not None else 0.01
        res = microdata_suda2(md, max_size=self.max_size, weights=self.weights, dis_fraction=dis_fraction)
        context.records["suda_score"] = res.score
        context.records["dis_suda_score"] = res.dis_score
        context.summary["suda"] = res.summary()
        context.summary["suda"]["dis_contributions"] = suda_contributions(suda=res).dis_percent
        context.parts["suda"] = res


@dataclass(frozen=True)
class Uniqueness(Measure):
    """Uniqueness by combination of up to ``max_size`` key variables (k = the largest k asked
    for); the table is ``report.uniqueness``, its first 10 rows go to the summary."""

    max_size: int = 2

    order: ClassVar[int] = 20

    def __post_init__(self) -> None:
        check_int("Uniqueness", "max_size", self.max_size, min_value=1)

    def add(self, context: MeasureContext) -> None:
        from .uniqueness import uniqueness_by_combination

        table = uniqueness_by_combination(context.microdata, max_size=self.max_size,
                                          k=max([k for k in context.ks if k >= 2] or [2]))
        context.summary["uniqueness"] = table.head(10).to_dict(orient="records")
        context.parts["uniqueness"] = table


@dataclass(frozen=True)
class LogLinear(Measure):
    """Log-linear model risk (Skinner & Shlomo's tau1, tau2; sdcMicro's ``modRisk``):
    per-record ``ll_risk`` and ``ll_pop_unique``."""

    method: str | None = None
    formula: str | None = None

    order: ClassVar[int] = 30

    def add(self, context: MeasureContext) -> None:
        from .loglinear import microdata_loglinear_risk

        ll = microdata_loglinear_risk(context.microdata, formula=self.formula, method=self.method or "default")
        context.records["ll_risk"] = ll.record_risk
        context.records["ll_pop_unique"] = ll.record_pop_unique
        # tau1, tau2: Skinner & Shlomo's sums over sample uniques (records); gr1, gr2: the
        # figures sdcMicro's modRisk prints (its own scaling), for a side-by-side check
        context.summary["loglinear"] = {"method": ll.method, "tau1": ll.tau1, "tau2": ll.tau2,
                                        "gr1": ll.sdcmicro_gr1, "gr2": ll.sdcmicro_gr2}
        context.summary["loglinear_model"] = ll.summary()


@dataclass(frozen=True)
class PopulationUniques(Measure):
    """Estimated population uniques (:mod:`sdckit.risk.population`)."""

    order: ClassVar[int] = 40

    def add(self, context: MeasureContext) -> None:
        from .population import microdata_population_uniques

        context.summary["population_uniques"] = microdata_population_uniques(context.microdata).summary()


@dataclass(frozen=True)
class Attacker(Measure):
    """Prosecutor, journalist and marketer risks (:mod:`sdckit.risk.attacker`)."""

    threshold: float = 0.2
    population: Any = None

    order: ClassVar[int] = 50

    def __post_init__(self) -> None:
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)):
            raise param_error("Attacker", "threshold", "a number", self.threshold)

    def add(self, context: MeasureContext) -> None:
        from .attacker import attacker_risks

        context.summary["attacker"] = attacker_risks(context.microdata, threshold=self.threshold,
                                                     population=self.population).summary()


@dataclass(frozen=True)
class Contributions(Measure):
    """Each key variable's contribution to the sample uniques (:mod:`sdckit.risk.contributions`)."""

    order: ClassVar[int] = 60

    def add(self, context: MeasureContext) -> None:
        from .contributions import uniqueness_contributions

        context.summary["key_contributions"] = uniqueness_contributions(context.microdata).to_dict(orient="records")


def household_codes(microdata: Microdata) -> np.ndarray:
    """The household role as integer codes (a record without a household id is refused)."""
    col = microdata.frame[microdata.household]
    codes, _ = pd.factorize(col, use_na_sentinel=True)
    miss = np.flatnonzero(codes < 0)
    if miss.size:
        raise InputError(f"household column {microdata.household!r} is missing in {miss.size} "
                         f"records (first row {col.index[miss[0]]}); every record needs a "
                         "household id: give single-person households their own id.")
    return codes.astype(np.int64)



def ordered(measures) -> list:
    """The measures in their fixed order; one of each kind (a kind given twice is refused)."""
    seen: dict[type, Measure] = {}
    for m in measures:
        if not isinstance(m, Measure):
            raise param_error("measure_risk", "measures", "a list of measures (Suda2(), Uniqueness(), ...)", m)
        if type(m) in seen and seen[type(m)] != m:
            raise param_error("measure_risk", "measures", f"at most one {type(m).__name__} (given twice)", m)
        seen[type(m)] = m
    return sorted(seen.values(), key=lambda m: m.order)
