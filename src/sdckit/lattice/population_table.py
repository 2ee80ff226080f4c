"""A population table for the ``generalise`` step: reading it, checking that the data are a
research subset of it, the journalist profitability variants and the release checks that count
the population.

ARX's population models (k-map with a population table, the journalist profitability models)
take the data as a *research subset* of a population table (ARX's ``DataSubset``): every
record of the data is a record of the population. Only the quasi-identifiers are compared, so
the step checks what it can see: every combination of quasi-identifier values occurs at least
as often in the population as in the data (:func:`check_research_subset`). A table with fewer
records of a combination than the data would give a class fewer population records than data
records (a k-map count, or a journalist's success probability ``1 / |E_pop|``, on the wrong
side); :class:`~sdckit.lattice.problem.Problem` checks only that each combination occurs.

The released frame is re-checked by generalising the population's quasi-identifiers with the
hierarchy tables to the chosen levels and counting each released class in it with pandas
(:func:`population_guarantees`), apart from the search's class tables.

References
----------
Prasser, F., Kohlmayer, F. (2015). Putting statistical disclosure control into practice: the
ARX data anonymization tool. In *Medical Data Privacy Handbook*, Springer, 111-148 (the
research subset, k-map with a population table). Wan, Z. et al. (2015). A game theoretic
framework for analyzing re-identification risk. *PLoS ONE* 10(3), e0120592 (the journalist
game).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from ..errors import InputError
from ..result import Guarantee
from .hierarchies import as_text
from .profitability import CostBenefit, ProsecutorGame, ProsecutorNoAttackGame


# --------------------------------------------------------------------------- the journalist variants
@dataclass(frozen=True)
class JournalistGame(ProsecutorGame):
    """Keep a class when publishing it pays, the adversary's success probability being
    ``1 / |E_pop|``, the class's records in the population table (Wan et al. 2015; ARX's
    journalist profitability, not monotone). Needs ``population_file``."""

    variant_name: ClassVar[str] = "journalist"

    def cost_benefit(self) -> CostBenefit:
        """The amounts as a :class:`CostBenefit` with the journalist attacker."""
        return replace(super().cost_benefit(), journalist=True)


@dataclass(frozen=True)
class JournalistNoAttackGame(ProsecutorNoAttackGame):
    """Keep a class when no attack on it pays the adversary: ``|E_pop| > G / C`` in the
    population table (Wan et al. 2015; ARX's no-attack journalist profitability, k-map with k
    from G / C). Needs ``population_file``."""

    variant_name: ClassVar[str] = "journalist_no_attack"

    def cost_benefit(self) -> CostBenefit:
        """The amounts as a :class:`CostBenefit` with the journalist attacker."""
        return replace(super().cost_benefit(), journalist=True)


#: the variants of the step's ``profitability`` parameter that need a population table
JOURNALIST_VARIANTS = (JournalistGame, JournalistNoAttackGame)


# --------------------------------------------------------------------------- reading and checking
def read_population(path: str | Path, qis: list[str]) -> pd.DataFrame:
    """The population table's quasi-identifier columns (CSV or Parquet, read with
    :func:`sdckit.io.read_data`); a missing column is refused in one line naming the file."""
    from ..io import read_data  # noqa: PLC0415

    name = Path(path).name
    if not Path(path).is_file():
        raise InputError(f"population_file {name}: no such file; give the population table (CSV or Parquet).")
    frame, _ = read_data(path)
    missing = [q for q in qis if q not in frame.columns]
    if missing:
        raise InputError(f"population_file {name}: no column {missing[0]!r}; the population table needs every "
                         f"quasi-identifier ({', '.join(qis)}).")
    if len(frame) == 0:
        raise InputError(f"population_file {name}: the population table has no records.")
    return frame[qis]


def check_research_subset(data: pd.DataFrame, population: pd.DataFrame, qis: list[str], name: str) -> None:
    """Refuse data that are not a research subset of the population (module notes): a
    combination of quasi-identifier values with more records in the data than in the
    population table ``name``."""
    d = pd.DataFrame({q: as_text(data[q]).to_numpy() for q in qis})
    p = pd.DataFrame({q: as_text(population[q]).to_numpy() for q in qis})
    dc = d.groupby(qis, sort=False).size()
    pc = p.groupby(qis, sort=False).size().reindex(dc.index, fill_value=0)
    short = (pc < dc).to_numpy()
    if short.any():
        i = int(np.flatnonzero(short)[0])
        key = dc.index[i] if len(qis) > 1 else (dc.index[i],)
        row = dict(zip(qis, key, strict=True))
        raise InputError(f"population_file {name}: the data hold {int(dc.iloc[i])} records of {row} and the "
                         f"population table {int(pc.iloc[i])} ({int(short.sum())} combinations short); the "
                         "data must be a subset of the population's records (ARX's research subset): give "
                         "the population the data were drawn from.")


# --------------------------------------------------------------------------- the release checks
def _generalised(population: pd.DataFrame, qis: list[str], hierarchies: dict, levels: dict) -> pd.DataFrame:
    """The population's quasi-identifiers at ``levels`` (labels read from the hierarchy tables)."""
    out = {}
    for q in qis:
        tab = hierarchies[q].table
        label = pd.Series(tab.iloc[:, int(levels[q])].astype(str).to_numpy(),
                          index=as_text(tab.iloc[:, 0]).to_numpy())
        out[q] = as_text(population[q]).map(label).to_numpy()
    return pd.DataFrame(out)


def _information_loss(kept: pd.DataFrame, qis: list[str], hierarchies: dict, levels: dict) -> np.ndarray:
    """Each kept record's entropy-based information loss, from the label shares of the
    hierarchy tables (Wan et al. 2015, eq. 3; :mod:`.profitability`)."""
    log_share = np.zeros(len(kept))
    log_domain = 0.0
    for q in qis:
        tab = hierarchies[q].table
        share = tab.iloc[:, int(levels[q])].astype(str).value_counts() / float(len(tab))
        log_share += np.log10(kept[q].astype(str).map(share).to_numpy(dtype=float))
        log_domain += math.log10(len(tab))
    return np.clip(log_share / log_domain + 1.0, 0.0, 1.0) if log_domain > 0 else np.zeros(len(kept))


def population_guarantees(out: pd.DataFrame, suppressed: np.ndarray, qis: list[str], population: pd.DataFrame,
                          hierarchies: dict, levels: dict, *, k_map: int | None, game: str | None,
                          cost_benefit: CostBenefit | None) -> list[Guarantee]:
    """k-map with the population table and the journalist profitability model ``game``
    (``journalist`` or ``journalist_no_attack``, or None), checked on the released frame: each
    kept record's class is counted in the population generalised to ``levels``."""
    kept = out.loc[~np.asarray(suppressed, dtype=bool)]
    if len(kept) == 0 or (k_map is None and game is None):
        return []
    pop = _generalised(population, qis, hierarchies, levels)
    counts = pop.groupby(qis, sort=False).size()
    key = pd.MultiIndex.from_frame(kept[qis].astype(str)) if len(qis) > 1 else kept[qis[0]].astype(str)
    e_pop = counts.reindex(key, fill_value=0).to_numpy(dtype=float)
    g: list[Guarantee] = []
    smallest = float(e_pop.min())
    if k_map is not None:
        g.append(Guarantee("k_map", f"every released class matches >= {k_map} records of the population table",
                           int(smallest), smallest >= k_map))
    if game == "journalist_no_attack":
        cb = cost_benefit or CostBenefit()
        gain, cost = float(cb.adversary_gain), float(cb.adversary_cost)
        g.append(Guarantee("profitability_no_attack", f"no attack on a released record pays the adversary (every "
                           f"class's population count > gain {gain:g} / cost {cost:g}, journalist)", int(smallest),
                           gain == 0 or smallest * cost > gain))
    elif game == "journalist":
        cb = cost_benefit or CostBenefit()
        size = kept[qis].astype(str).groupby(qis, sort=False, dropna=False).transform("size")
        size = np.asarray(size, dtype=float).reshape(len(kept), -1)[:, 0]
        p = np.where(e_pop > 0, 1.0 / np.where(e_pop > 0, e_pop, 1.0), 1.0 / size)
        fine = np.where(cb.adversary_gain * p > cb.adversary_cost, cb.publisher_loss * p, 0.0)
        payout = cb.publisher_benefit * (1.0 - _information_loss(kept, qis, hierarchies, levels)) - fine
        worst = float(payout.min())
        g.append(Guarantee("profitability", "publishing every released record pays the publisher (expected payout "
                           "B (1 - IL) - fine > 0, journalist: p = 1 / population class size)", worst, worst > 0))
    return g
