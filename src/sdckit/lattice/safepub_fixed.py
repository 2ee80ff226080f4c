"""SafePub's data-independent variant: (epsilon, delta)-DP at a generalisation the steward gives.

Li, Qardaji and Su (2012; restated by Bild, Kuhn and Prasser 2018, sec. 4.1) prove that drawing
each record with probability ``beta`` and then applying a generalisation that does not depend on
the data, removing every class of fewer than ``k`` drawn records, satisfies (epsilon, delta)-DP
for the ``beta`` and ``k`` of :mod:`.dp_params`. Bild et al. replace the fixed generalisation by
a private search; ARX 3.9.2 keeps both: ``EDDifferentialPrivacy`` built with a
``DataGeneralizationScheme`` is data-independent, fixes every quasi-identifier's lattice to the
scheme's level (``DataManager``) and spends no search budget: ``initialize`` computes ``beta``
and ``k`` from the whole ``epsilon`` (the data-dependent variant subtracts the search budget).

The release:

1. ``beta = 1 - exp(-epsilon)`` and ``k`` from ``(epsilon, delta)`` (the whole budget);
2. every record is drawn independently with probability ``beta`` (one uniform per record from
   the rng, as ARX draws ``nextDouble() < beta`` per record);
3. the drawn records are generalised to the given levels; every class of fewer than ``k`` drawn
   records is removed.

The levels come from the steward: one per quasi-identifier, or ARX's preset degrees
(``GeneralizationDegree``), each a share of the hierarchy's height rounded as Java's
``Math.round`` (half up): ``level = floor(share * height + 1/2)``.

References
----------
Li, N., Qardaji, W. and Su, D. (2012). On sampling, anonymization, and differential privacy or,
k-anonymization meets differential privacy. *ASIACCS 2012*, 32-33.
Bild, R., Kuhn, K. A. and Prasser, F. (2018). SafePub: a truthful data anonymization algorithm
with strong privacy guarantees. *PoPETs* 2018(1), 67-87.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from .dp_params import dp_parameters
from .problem import Problem
from .safepub import release_at

#: ARX's ``DataGeneralizationScheme.GeneralizationDegree``: the share of each hierarchy's height
PRESETS = {"none": 0.0, "low": 0.2, "low_medium": 0.4, "medium": 0.5, "medium_high": 0.6, "high": 0.8,
           "complete": 1.0}


def preset_level(preset: str, height: int) -> int:
    """The level ARX's preset ``preset`` gives a hierarchy of height ``height`` (Java's half-up
    rounding of ``share * height``)."""
    if preset not in PRESETS:
        raise InputError(f"dp (safepub_fixed): preset {preset!r} is not one of {', '.join(PRESETS)}; "
                         "choose one of them or give every level.")
    return min(max(int(math.floor(PRESETS[preset] * height + 0.5)), 0), height)


def resolve_levels(qis: list[str], hierarchies: Mapping, levels: Mapping[str, int],
                   preset: str | None) -> dict[str, int]:
    """Each quasi-identifier's level: its entry in ``levels``, else the ``preset``'s level.

    Raises :class:`~sdckit.errors.InputError` for a level naming no quasi-identifier, a level
    outside ``0..height`` of its hierarchy, and a quasi-identifier without a level when no
    preset is set.
    """
    unknown = [q for q in levels if q not in qis]
    if unknown:
        raise InputError(f"dp (safepub_fixed): levels names {unknown[0]!r}, which is not a quasi-identifier "
                         f"(qis: {', '.join(qis)}); remove it from levels or add it to qis.")
    out = {}
    for q in qis:
        h = hierarchies[q]
        height = int(h.n_levels)
        if q in levels:
            lv = levels[q]
            if isinstance(lv, bool) or not isinstance(lv, (int, np.integer)) or not 0 <= int(lv) <= height:
                src = Path(h.source).name if h.source else "its hierarchy"
                raise InputError(f"dp (safepub_fixed): level {lv!r} of {q!r} is outside its hierarchy "
                                 f"({src}, height {height}); give a level from 0 to {height}.")
            out[q] = int(lv)
        elif preset is not None:
            out[q] = preset_level(preset, height)
        else:
            raise InputError(f"dp (safepub_fixed): quasi-identifier {q!r} has no level; add it to levels "
                             "(0 keeps its values) or set preset (ARX's generalisation degree, e.g. 'none').")
    return out


@dataclass
class FixedSafePubResult:
    """The outcome of :func:`safepub_fixed` (it holds no seed and no record of the input)."""

    level_map: dict
    k: int
    beta: float
    epsilon_anon: float
    n_sampled: int
    n_released: int

    def to_dict(self) -> dict:
        """The public summary: levels, parameters and the released count (not the number of
        records drawn: the guarantee covers the release, not it)."""
        return {"variant": "safepub_fixed", "levels": self.level_map, "k": self.k, "beta": self.beta,
                "epsilon_anon": self.epsilon_anon, "n_released": self.n_released}


def safepub_fixed(data: pd.DataFrame, qis: list[str], hierarchies: Mapping, *, epsilon: float, delta: float,
                  levels: Mapping[str, int], rng: np.random.Generator, preset: str | None = None,
                  min_k: int | None = None) -> tuple[pd.DataFrame, FixedSafePubResult]:
    """Release ``data`` with data-independent SafePub (module notes).

    Parameters
    ----------
    data : DataFrame
        The records; every column is a quasi-identifier (the guarantee covers whole records).
    qis : list of str
        The quasi-identifiers.
    hierarchies : mapping
        QI -> hierarchy.
    epsilon, delta : float
        The (epsilon, delta) of the release; the whole ``epsilon`` sets ``beta`` and ``k``.
    levels : mapping
        QI -> level of its hierarchy (0: the values as they are).
    rng : numpy.random.Generator
        The source of the sampling.
    preset : str, optional
        ARX's generalisation degree (:data:`PRESETS`) for the QIs without a level.
    min_k : int, optional
        A larger class size to enforce; the larger of the two applies.

    Returns
    -------
    (DataFrame, FixedSafePubResult)
        The released records (drawn, in classes of at least ``k``, QIs generalised) and the result.
    """
    chosen = resolve_levels(qis, hierarchies, levels, preset)
    beta, k = dp_parameters(epsilon, delta)   # the whole epsilon: no search (ARX's initialize)
    if min_k is not None:
        k = max(k, int(min_k))
    drawn = rng.random(len(data)) < beta      # Li et al. (2012): each record with probability beta
    sample = data.loc[drawn]
    if len(sample) == 0:
        return data.iloc[:0].copy(), FixedSafePubResult(chosen, k, beta, float(epsilon), 0, 0)
    problem = Problem(sample, qis, hierarchies)
    out, keep = release_at(sample, problem, np.array([chosen[q] for q in qis], dtype=np.int64), k)
    return out, FixedSafePubResult(chosen, k, beta, float(epsilon), int(drawn.sum()), int(keep.sum()))


def level_labels(hierarchies: Mapping, levels: Mapping[str, int]) -> dict[str, set]:
    """QI -> the set of labels its hierarchy has at the given level (read from the hierarchy's
    table, for the check on the released frame)."""
    return {q: set(hierarchies[q].table.iloc[:, int(lv)].astype(str)) for q, lv in levels.items()}
