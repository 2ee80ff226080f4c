"""The ``dp`` setting of the ``generalise`` step: (epsilon, delta)-differential privacy by SafePub.

``dp = { type = "safepub", epsilon = 2.0, delta = 1e-6, steps = 300, search_budget = 0.1 }``
replaces the lattice search by SafePub (:mod:`.safepub`). As in ARX, the suppression limit does
not apply (every class below ``k`` is removed, whatever their number) and local recoding is
refused; unlike ARX, the models whose checks the score functions do not cover (l-diversity,
t-closeness, the risk, k-map, likeness, disclosure, uniqueness and profitability models) are
refused beside it, and every column of the data must be a quasi-identifier: the guarantee covers
whole released records, and a column released as it is would single out its records. ``k``, when
set, raises the class size (the larger of it and SafePub's ``k``; a larger ``k`` keeps the
guarantee, Li et al. 2012).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError, InputWarning
from ..params import check_params, param, variant_value
from ..result import Guarantee, StepResult
from .safepub import SCORE_METRICS, safepub


@dataclass(frozen=True)
class NoDP:
    """No differential privacy: the lattice search with the step's privacy models."""

    variant_name: ClassVar[str] = "none"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class SafePubDP:
    """(epsilon, delta)-differential privacy by SafePub (Bild, Kuhn and Prasser 2018).

    Parameters
    ----------
    epsilon : float in (0, 20]
        The privacy budget of the whole release (search and anonymisation).
    delta : float in (0, 1)
        The delta of (epsilon, delta)-differential privacy.
    steps : int >= 1
        Steps of the private search (ARX requires a limit).
    search_budget : float > 0
        The part of ``epsilon`` the search spends (ARX's default 0.1); below ``epsilon``.
    """

    variant_name: ClassVar[str] = "safepub"

    epsilon: float = param(2.0, kind="float", low=0, high=20, low_open=True, symbol="epsilon",
                           help="privacy budget of the whole release")
    delta: float = param(1e-6, kind="float", low=0, high=1, low_open=True, high_open=True, symbol="delta",
                         help="delta of (epsilon, delta)-differential privacy")
    steps: int = param(300, kind="int", low=1, help="steps of the private search")
    search_budget: float = param(0.1, kind="float", low=0, low_open=True,
                                 help="part of epsilon spent by the search (the rest sets beta and k)")

    def __post_init__(self) -> None:
        check_params(self)
        if self.search_budget >= self.epsilon:
            raise InputError(f"dp: search_budget ({self.search_budget:g}) must be below epsilon ({self.epsilon:g}); "
                             "lower search_budget or raise epsilon.")


#: the settings ``Generalise.dp`` takes
DP_VARIANTS = (NoDP, SafePubDP)

#: the step's settings that SafePub does not take, with their neutral value
_REFUSED = (("l", None), ("t", None), ("average_risk", None), ("max_risk", None), ("k_map", None),
            ("beta", None), ("delta_disclosure", None), ("population_uniqueness", None), ("local_recoding", 0),
            ("time_limit", None))


def refuse_conflicts(step: Any) -> None:
    """Refuse the step's settings that SafePub does not take (module notes)."""
    for name, neutral in _REFUSED:
        if getattr(step, name) != neutral:
            raise InputError(f"generalise: dp (SafePub) does not take {name} = {getattr(step, name)!r}; "
                             f"unset {name} or set dp = {{ type = \"none\" }}.")
    if step.profitability.variant_name != "none":
        raise InputError("generalise: dp (SafePub) does not take the profitability model; unset profitability.")
    if step.suppression != 0.0:
        raise InputError(f"generalise: dp (SafePub) removes every class below its k, whatever their number; "
                         f"suppression = {step.suppression:g} does not apply: leave it at 0.")
    if step.search.variant_name != "exact":
        raise InputError(f"generalise: dp (SafePub) makes its own private search; search = "
                         f"{step.search.variant_name!r} does not apply: leave the search unset.")
    if step.metric not in SCORE_METRICS:
        raise InputError(f"generalise: dp (SafePub) has no score function for metric {step.metric!r}; set metric "
                         f"to one of {', '.join(SCORE_METRICS)}.")


def dp_release(step: Any, md: Any, qis: list[str], hierarchies: dict, rng: Any) -> StepResult:
    """The ``generalise`` step's result under ``dp = safepub``: the released sample, the
    summary (no seed) and the class-size check on the released frame."""
    frame = md.frame
    extra = [c for c in frame.columns if c not in qis]
    if extra:
        raise InputError(f"generalise: dp (SafePub) protects whole records, and column {extra[0]!r} is not a "
                         "quasi-identifier: add it to qis (with a hierarchy) or drop it before this step.")
    dp = step.dp
    rng = np.random.default_rng(rng)   # a seed, a generator, or None (fresh entropy)
    out, res = safepub(frame, qis, hierarchies, epsilon=dp.epsilon, delta=dp.delta, steps=dp.steps,
                       epsilon_search=dp.search_budget, metric=step.metric, rng=rng, min_k=step.k)
    summary = {"levels": res.level_map, "metric": step.metric, "search": "safepub", "dp": res.to_dict(),
               "n_input": int(len(frame)), "n_released": res.n_released}
    sizes = out.groupby(qis, sort=False, dropna=False).size() if len(out) else None
    smallest = int(sizes.min()) if sizes is not None else 0
    guarantees = (Guarantee("dp_min_class_size", f"every released class has >= {res.k} records (SafePub's k)",
                            smallest, sizes is None or smallest >= res.k),
                  Guarantee("dp_released_subset", "the release holds at most the drawn records",
                            int(len(out)), len(out) <= res.n_sampled))
    with warnings.catch_warnings():
        # a QI generalised to its top level has one category: expected here, not a warning
        warnings.simplefilter("ignore", InputWarning)
        new = md.with_data(out.reset_index(drop=True))
    params = {"qis": list(qis), "k": step.k, "metric": step.metric, "dp": variant_value(dp)}
    return StepResult("generalise", new, params=params, summary=summary, guarantees=guarantees)
