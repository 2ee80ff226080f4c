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

``dp = { type = "safepub_fixed", epsilon = 1.0, delta = 1e-6, levels = { age = 2, sex = 0 } }`` is the
data-independent variant (:mod:`.safepub_fixed`; ARX's ``EDDifferentialPrivacy`` with a
``DataGeneralizationScheme``): the steward gives every quasi-identifier's level (or ARX's
``preset`` degree for those without one), no search is made, and the whole ``epsilon`` sets
``beta`` and ``k``. The same settings are refused beside it; the metric is not used.
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
from .safepub_fixed import PRESETS, level_labels, safepub_fixed


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


@dataclass(frozen=True)
class FixedSafePubDP:
    """(epsilon, delta)-differential privacy at a generalisation the steward gives (SafePub's
    data-independent variant; Li, Qardaji and Su 2012; ARX's ``DataGeneralizationScheme``).

    Parameters
    ----------
    epsilon : float in (0, 20]
        The privacy budget; all of it sets ``beta`` and ``k`` (no search).
    delta : float in (0, 1)
        The delta of (epsilon, delta)-differential privacy.
    levels : mapping
        Quasi-identifier -> level of its hierarchy (0: its values as they are).
    preset : str, optional
        ARX's generalisation degree for the quasi-identifiers without a level: none (level 0),
        low (0.2 of the hierarchy's height), low_medium (0.4), medium (0.5), medium_high (0.6),
        high (0.8) or complete (the top), rounded half up. Without it every quasi-identifier
        needs a level.
    """

    variant_name: ClassVar[str] = "safepub_fixed"

    epsilon: float = param(2.0, kind="float", low=0, high=20, low_open=True, symbol="epsilon",
                           help="privacy budget of the release (all of it sets beta and k)")
    delta: float = param(1e-6, kind="float", low=0, high=1, low_open=True, high_open=True, symbol="delta",
                         help="delta of (epsilon, delta)-differential privacy")
    levels: dict | None = param({}, kind="mapping", value_kind="int", nullable=True, label="level per quasi-identifier",
                         help="quasi-identifier -> level of its hierarchy (0 keeps the values), fixed "
                              "before the data are seen")
    preset: str | None = param(None, kind="choice", choices=tuple(PRESETS), nullable=True,
                               help="ARX's generalisation degree for the quasi-identifiers without a level "
                                    "(share of each hierarchy's height)")

    def __post_init__(self) -> None:
        check_params(self)
        if self.levels is None:   # a form's empty table: no level given (the preset applies)
            object.__setattr__(self, "levels", {})
        for q, lv in self.levels.items():
            if lv < 0:
                raise InputError(f"dp: level {lv} of {q!r} is negative; give a level from 0 to its "
                                 "hierarchy's height.")
        if not self.levels and self.preset is None:
            raise InputError("dp (safepub_fixed): give levels (quasi-identifier -> level) or a preset.")


#: the settings ``Generalise.dp`` takes
DP_VARIANTS = (NoDP, SafePubDP, FixedSafePubDP)

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
    if step.dp.variant_name == "safepub" and step.metric not in SCORE_METRICS:
        raise InputError(f"generalise: dp (SafePub) has no score function for metric {step.metric!r}; set metric "
                         f"to one of {', '.join(SCORE_METRICS)}.")


def dp_release(step: Any, md: Any, qis: list[str], hierarchies: dict, rng: Any) -> StepResult:
    """The ``generalise`` step's result under ``dp = safepub`` or ``safepub_fixed``: the released
    sample, the summary (no seed) and the checks on the released frame."""
    frame = md.frame
    extra = [c for c in frame.columns if c not in qis]
    if extra:
        raise InputError(f"generalise: dp (SafePub) protects whole records, and column {extra[0]!r} is not a "
                         "quasi-identifier: add it to qis (with a hierarchy) or drop it before this step.")
    dp = step.dp
    rng = np.random.default_rng(rng)   # a seed, a generator, or None (fresh entropy)
    if dp.variant_name == "safepub_fixed":
        out, res = safepub_fixed(frame, qis, hierarchies, epsilon=dp.epsilon, delta=dp.delta, levels=dp.levels,
                                 preset=dp.preset, rng=rng, min_k=step.k)
        summary = {"levels": res.level_map, "search": "none (levels given)", "dp": res.to_dict(),
                   "n_input": int(len(frame)), "n_released": res.n_released}
    else:
        out, res = safepub(frame, qis, hierarchies, epsilon=dp.epsilon, delta=dp.delta, steps=dp.steps,
                           epsilon_search=dp.search_budget, metric=step.metric, rng=rng, min_k=step.k)
        summary = {"levels": res.level_map, "metric": step.metric, "search": "safepub", "dp": res.to_dict(),
                   "n_input": int(len(frame)), "n_released": res.n_released}
    sizes = out.groupby(qis, sort=False, dropna=False).size() if len(out) else None
    smallest = int(sizes.min()) if sizes is not None else 0
    guarantees = [Guarantee("dp_min_class_size", f"every released class has >= {res.k} records (SafePub's k)",
                            smallest, sizes is None or smallest >= res.k),
                  Guarantee("dp_released_subset", "the release holds at most the drawn records",
                            int(len(out)), len(out) <= res.n_sampled)]
    if dp.variant_name == "safepub_fixed":   # the released values, read against the hierarchies' tables
        allowed = level_labels(hierarchies, res.level_map)
        off = sum(int((~out[q].astype(str).isin(allowed[q])).sum()) for q in qis)
        guarantees.append(Guarantee("dp_given_levels", "every released value is a label of its quasi-identifier's "
                                    "given level", off, off == 0))
    with warnings.catch_warnings():
        # a QI generalised to its top level has one category: expected here, not a warning
        warnings.simplefilter("ignore", InputWarning)
        new = md.with_data(out.reset_index(drop=True))
    params = {"qis": list(qis), "k": step.k, "metric": step.metric, "dp": variant_value(dp)}
    return StepResult("generalise", new, params=params, summary=summary, guarantees=tuple(guarantees))
