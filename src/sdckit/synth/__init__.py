"""Synthetic microdata: sequential synthesis, its utility and its disclosure risk.

* :func:`synthesise` / :class:`Synthesiser`: sequential synthesis (CART and parametric
  models, passive variables, rules, strata, special codes), fitted once and drawn any number
  of times (:mod:`sdckit.synth.synthesis`);
* :func:`propensity_utility`, :func:`table_utility`, :func:`compare_fit`: pMSE and S_pMSE,
  table measures, fitted-model comparison (:mod:`sdckit.synth.utility`);
* :func:`disclosure_measures`: identity (repU) and attribute (DiSCO, TCAP) disclosure
  (:mod:`sdckit.synth.disclosure`);
* the ``synthesise`` release step and the ``max_repU``, ``max_disco`` and ``max_tcap`` gate
  thresholds (:mod:`sdckit.synth.steps`).
"""

from __future__ import annotations

from typing import Any

from .disclosure import DisclosureMeasures, disclosure_measures
from .expr import Expression, Rule, parse_expression, parse_rule
from .synthesis import FittedSynthesis, SynthesisDraw, Synthesiser
from .utility import (
    FitComparison,
    PropensityUtility,
    TableUtility,
    compare_fit,
    propensity_utility,
    table_utility,
)


def synthesise(data: Any, k: int | None = None, *, rng: Any = None, n_jobs: int = 1, **settings: Any):
    """A synthetic copy of ``data`` (a DataFrame or Microdata) with ``k`` records (default: as
    many as the original), as a DataFrame with the original's columns and dtypes.

    ``settings`` are those of :class:`Synthesiser` (``method``, ``methods``, ``passive``,
    ``rules``, ``strata``, ``missing_codes``, ``smoothing``, ...). The same ``rng`` gives the
    same file; ``n_jobs`` threads fit variables side by side (the file does not depend on it).
    """
    from .synthesis import frame_and_keys

    frame, _ = frame_and_keys(data)
    fitted = Synthesiser(**settings).fit(data, n_jobs=n_jobs)
    return fitted.draw(k, rng=rng).frame(frame)


__all__ = ["synthesise", "Synthesiser", "FittedSynthesis", "SynthesisDraw", "disclosure_measures",
           "DisclosureMeasures", "propensity_utility", "PropensityUtility", "table_utility", "TableUtility",
           "compare_fit", "FitComparison", "parse_expression", "parse_rule", "Expression", "Rule"]
