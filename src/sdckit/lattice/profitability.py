"""ARX's game-theoretic (profitability) privacy models, the entropy-based information loss
and the publisher payout metric (Wan et al. 2015).

A publisher releases a record for a benefit ``B`` (``publisher_benefit``) scaled by the
information the record keeps; an adversary pays ``C`` (``adversary_cost``) to attack a
record and gains ``G`` (``adversary_gain``) when the attack succeeds, which it does with
probability ``p``; a successful attack costs the publisher ``L`` (``publisher_loss``). The
adversary attacks when its expected payout ``G p - C`` is positive (Wan et al. 2015,
"Methods", the single-shot re-identification game); the publisher's expected payout for a
record is then

    ``payout = B (1 - IL) - (L p if G p - C > 0 else 0)``

with ``IL`` the record's *entropy-based information loss* (Wan et al. 2015, eq. 3; ARX's
``MetricSDNMEntropyBasedInformationLoss``): over the quasi-identifiers, with ``share_j`` the
share of the rows of hierarchy ``j`` that the record's label covers (ARX's domain shares) and
``D_j`` the hierarchy's rows,

    ``IL = log10(prod_j share_j) / log10(prod_j D_j) + 1``,

0 for raw values (``share_j = 1 / D_j``) and 1 when every QI is at ``*``; 0 when
``prod_j D_j = 1``; clipped to [0, 1] as ARX does. ``p`` is ``1 / |E|`` for the prosecutor
(the record's class in the data) and ``1 / |E_pop|`` for the journalist (its class in the
population; ``1 / |E|`` for a class the population table does not hold, as ARX).

The models (ARX 3.9.2's ``criteria/Profitability*.java``), checked per class:

* **prosecutor** and **journalist**: a class is kept when its publisher payout is positive
  (strictly). Not monotone (ARX declares both not monotone: generalising lowers ``p`` a
  little but can lower ``B (1 - IL)`` more, until keeping a record does not pay).
* **prosecutor_no_attack** and **journalist_no_attack**: no record is worth attacking:
  ``G / |E| < C``, i.e. ``|E| > G / C``: k-anonymity (prosecutor, ``|E|`` in the data) or
  k-map (journalist, ``|E_pop|`` in the population) with ``k = floor(G / C) + 1`` when ``G / C``
  is a whole number, ``ceil(G / C)`` otherwise, ``k = 1`` when ``G = 0`` (ARX's reduction).
  Monotone with and without suppression (class sizes only grow when classes merge).

The metrics (lower is better), weighted by ARX's generalisation/suppression factor ``gs``
(:mod:`.metrics_arx`: generalisation weight ``gF``, suppression weight ``sF``; both 1 at the
default 0.5):

* **publisher_payout** (ARX's ``MetricSDNMPublisherPayout``): ``sum_kept gF |E| (B - payout_E) +
  sum_suppressed sF |E| B``, the payout given up against the theoretical maximum ``n B``; at the
  default factor the payout itself is ``n B`` minus the value. Lower bound for every node above
  ``N``: ``sum_E |E| B min(gF IL_E, sF)`` over ``N``'s classes: ``IL`` of a record only grows with
  the levels, a kept record's payout is at most ``B (1 - IL)`` (so it costs at least ``gF B IL``)
  and a suppressed record costs ``sF B``. ARX's bound ``sum_E gF |E| B IL_E`` is the same for
  ``gs >= 0.5``; for ``gs < 0.5`` (``sF < gF``) a node above that suppresses may cost less.
* **entropy_information_loss** (ARX's ``MetricSDNMEntropyBasedInformationLoss``):
  ``sum_kept gF |E| IL_E + sF (records suppressed)``; bound ``sum_E |E| min(gF IL_E, sF)`` for
  the same reasons (ARX's: ``gF sum_E |E| IL_E``).

References
----------
Wan, Z., Vorobeychik, Y., Xia, W., Clayton, E. W., Kantarcioglu, M., Ganta, R., Heatherly, R.,
Malin, B. A. (2015). A game theoretic framework for analyzing re-identification risk. *PLoS
ONE* 10(3), e0120592. Prasser, F., Gaupp, J., Wan, Z., Xia, W., Vorobeychik, Y., Kantarcioglu,
M., Kuhn, K., Malin, B. (2017). An open source tool for game theoretic health data
de-identification. *AMIA Annu. Symp. Proc.* 2017, 1430-1439 (the models in ARX).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._validation import param_error
from ..errors import InputError
from ..params import check_params, param
from .metrics_arx import gs_factor_of, gs_weights
from .models import Model, NodeView

#: the profitability models, by their name in settings
PROFITABILITY_TYPES = ("prosecutor", "prosecutor_no_attack", "journalist", "journalist_no_attack")


@dataclass(frozen=True)
class CostBenefit:
    """The amounts of the game, per record (ARX's ``ARXCostBenefitConfiguration``, whose
    defaults these are), and the attacker model of the publisher payout metric.

    Parameters
    ----------
    publisher_benefit : float >= 0
        ``B``: what publishing one record (with no information lost) earns the publisher.
    publisher_loss : float >= 0
        ``L``: what one successful re-identification costs the publisher (a fine).
    adversary_gain : float >= 0
        ``G``: what one successful re-identification earns the adversary.
    adversary_cost : float >= 0
        ``C``: what one attack on a record costs the adversary.
    journalist : bool
        The payout metric's attacker: the journalist (success probability from the population
        table's class sizes, when the problem has one) instead of the prosecutor.
    """

    publisher_benefit: float = 1200.0
    publisher_loss: float = 300.0
    adversary_gain: float = 300.0
    adversary_cost: float = 4.0
    journalist: bool = False

    def __post_init__(self) -> None:
        for name in ("publisher_benefit", "publisher_loss", "adversary_gain", "adversary_cost"):
            v = getattr(self, name)
            try:
                f = float(v) if not isinstance(v, (bool, str)) else math.nan
            except (TypeError, ValueError):
                f = math.nan
            if not math.isfinite(f) or f < 0:
                raise param_error("CostBenefit", name, "a finite amount >= 0", v)

    def payout(self, information_loss: np.ndarray, success: np.ndarray) -> np.ndarray:
        """The publisher's expected payout per record (module notes; ARX's
        ``RiskModelCostBenefit.getExpectedPublisherPayout``)."""
        benefit = self.publisher_benefit * (1.0 - information_loss)
        attacked = self.adversary_gain * success - self.adversary_cost > 0
        return benefit - np.where(attacked, self.publisher_loss * success, 0.0)

    def no_attack_k(self) -> int:
        """The class size at which no attack pays: ``k`` of the no-attack models (module notes)."""
        g, c = float(self.adversary_gain), float(self.adversary_cost)
        if g == 0:
            return 1
        if c == 0:
            raise InputError("the no-attack profitability model with adversary_cost 0 and a positive "
                             "adversary_gain can never hold (every attack pays): raise adversary_cost.")
        thr = g / c
        return int(thr) + 1 if thr == math.floor(thr) else int(math.ceil(thr))


def max_information_loss(problem) -> float:
    """``log10(prod_j D_j)`` (ARX's maxIL), the product taken in the QIs' order."""
    prod = 1.0
    for col in problem.columns:
        prod *= float(col.n_domain)
    return math.log10(prod)


def _raw_shares(problem) -> list[np.ndarray]:
    """Per QI, a (levels x raw values) table of the share of the hierarchy's rows that each raw
    value's label at each level covers (ARX's domain shares), computed once per problem."""
    cache = problem.__dict__.get("_raw_shares")
    if cache is None:
        cache = []
        for col in problem.columns:
            tab = np.empty(col.code_map.shape, dtype=float)
            for lvl in range(col.code_map.shape[0]):
                tab[lvl] = np.asarray(col.leaves[lvl], dtype=float)[col.code_map[lvl]] / float(col.n_domain)
            cache.append(tab)
        problem._raw_shares = cache
    return cache


def entropy_information_loss(view: NodeView) -> np.ndarray:
    """Each class's entropy-based information loss per record, in [0, 1] (module notes)."""
    if "entropy_il" in view._memo:
        return view._memo["entropy_il"]
    p, t = view.problem, view.table
    max_il = max_information_loss(p)
    if max_il == 0 or not math.isfinite(max_il):
        out = np.zeros(t.n_classes)
    else:
        reps = p.raw2d[t.class_rep]
        shares = _raw_shares(p)
        prod = np.ones(t.n_classes)
        for j in range(len(p.columns)):
            # ARX multiplies the shares in the QIs' order, from 1.0 (MetricSDNMEntropyBasedInformationLoss)
            prod *= shares[j][int(view.levels[j])][reps[:, j]]
        out = np.clip(np.log10(prod) / max_il + 1.0, 0.0, 1.0)
    view._memo["entropy_il"] = out
    return out


def success_probability(view: NodeView, journalist: bool) -> np.ndarray:
    """The adversary's success probability per class: ``1 / |E|`` (prosecutor), or ``1 / |E_pop|``
    from the population table (journalist; ``1 / |E|`` where the population has no record of it)."""
    size = view.table.class_size.astype(float)
    if not journalist or view.problem.population is None:
        return 1.0 / size
    key = "population_counts"
    if key not in view._memo:
        view._memo[key] = np.asarray(view.problem.population_counts(view.table, view.levels), dtype=float)
    pop = view._memo[key]
    return np.where(pop > 0, 1.0 / np.where(pop > 0, pop, 1.0), 1.0 / size)


@dataclass(frozen=True)
class Profitability(Model):
    """ARX's profitability model (module notes): ``kind`` prosecutor or journalist keeps a class
    when the publisher's payout is positive; the no-attack kinds when no attack pays.

    Parameters
    ----------
    kind : str
        prosecutor, prosecutor_no_attack, journalist or journalist_no_attack.
    cost_benefit : CostBenefit
        The amounts of the game.
    """

    kind: str
    cost_benefit: CostBenefit = field(default_factory=CostBenefit)
    name = "profitability"

    def __post_init__(self) -> None:
        if self.kind not in PROFITABILITY_TYPES:
            raise InputError(f"profitability model {self.kind!r} is not known; use one of "
                             f"{', '.join(PROFITABILITY_TYPES)}.")
        if self.no_attack:
            self.cost_benefit.no_attack_k()   # refuses a game no class can satisfy

    @property
    def journalist(self) -> bool:
        return self.kind.startswith("journalist")

    @property
    def no_attack(self) -> bool:
        return self.kind.endswith("no_attack")

    @property
    def needs_population(self) -> bool:   # the journalist's class sizes come from a population table
        return self.journalist

    def monotone(self, with_suppression):
        return self.no_attack

    def min_class_size(self) -> int:
        return self.cost_benefit.no_attack_k() if self.kind == "prosecutor_no_attack" else 1

    def class_ok(self, view):
        if self.no_attack:
            k = self.cost_benefit.no_attack_k()
            if self.journalist:
                return np.asarray(view.problem.population_counts(view.table, view.levels)) >= k
            return view.table.class_size >= k
        payout = self.cost_benefit.payout(entropy_information_loss(view), success_probability(view, self.journalist))
        return payout > 0

    def describe(self):
        cb = self.cost_benefit
        what = f"no-attack profitability ({self.kind[:-10]})" if self.no_attack else f"profitability ({self.kind})"
        return (f"{what} [benefit {cb.publisher_benefit:g}, loss {cb.publisher_loss:g}, gain "
                f"{cb.adversary_gain:g}, cost {cb.adversary_cost:g}]")


def value(name: str, view: NodeView, kept: np.ndarray, cost_benefit: CostBenefit | None) -> float:
    """The metric ``name`` (publisher_payout or entropy_information_loss) of a node whose
    classes ``~kept`` are suppressed (module notes)."""
    size = view.table.class_size.astype(float)
    il = entropy_information_loss(view)
    g_f, s_f = gs_weights(gs_factor_of(view.problem))
    if name == "entropy_information_loss":
        return float(np.where(kept, g_f * size * il, s_f * size).sum())
    if name == "publisher_payout":
        cb = cost_benefit or CostBenefit()
        b = float(cb.publisher_benefit)
        payout = cb.payout(il, success_probability(view, cb.journalist))
        return float(np.where(kept, g_f * size * (b - payout), s_f * size * b).sum())
    raise ValueError(name)


def bound(name: str, view: NodeView, cost_benefit: CostBenefit | None) -> float:
    """``LB(N) <= value(N')`` for every node ``N' >= N`` (ARX's bounds, module notes)."""
    size = view.table.class_size.astype(float)
    il = entropy_information_loss(view)
    g_f, s_f = gs_weights(gs_factor_of(view.problem))
    if name == "entropy_information_loss":
        return float((size * np.minimum(g_f * il, s_f)).sum())
    if name == "publisher_payout":
        b = float((cost_benefit or CostBenefit()).publisher_benefit)
        return float((size * b * np.minimum(g_f * il, s_f)).sum())
    raise ValueError(name)


def publisher_payout(view: NodeView, kept: np.ndarray, cost_benefit: CostBenefit | None = None) -> float:
    """The publisher's total expected payout over the kept records (ARX's "Publisher payout"
    figure of the metric; its theoretical maximum is ``n B``)."""
    cb = cost_benefit or CostBenefit()
    payout = cb.payout(entropy_information_loss(view), success_probability(view, cb.journalist))
    return float((view.table.class_size.astype(float) * payout)[kept].sum())


def cost_benefit_of(models, default: CostBenefit | None = None) -> CostBenefit | None:
    """The amounts of the first profitability model among ``models`` (with the journalist
    attacker when that model's is), else ``default``."""
    for m in models:
        if isinstance(m, Profitability):
            cb = m.cost_benefit
            if m.journalist and not cb.journalist:
                cb = CostBenefit(cb.publisher_benefit, cb.publisher_loss, cb.adversary_gain, cb.adversary_cost,
                                 True)
            return cb
    return default


# --------------------------------------------------------------------------- the step's declarations
@dataclass(frozen=True)
class _Game:
    """The amounts of the game, declared once for every variant of the generalise step's
    ``profitability`` parameter."""

    publisher_benefit: float = param(1200.0, kind="float", low=0, unit="per record", symbol="B",
                                     help="what publishing one record earns the publisher (ARX's default 1200)")
    publisher_loss: float = param(300.0, kind="float", low=0, unit="per record", symbol="L",
                                  help="what one successful re-identification costs the publisher (a fine)")
    adversary_gain: float = param(300.0, kind="float", low=0, unit="per record", symbol="G",
                                  help="what one successful re-identification earns the adversary")
    adversary_cost: float = param(4.0, kind="float", low=0, unit="per record", symbol="C",
                                  help="what one attack on a record costs the adversary")

    def __post_init__(self) -> None:
        check_params(self)

    def cost_benefit(self) -> CostBenefit:
        """The amounts as a :class:`CostBenefit` (prosecutor attacker)."""
        return CostBenefit(float(self.publisher_benefit), float(self.publisher_loss), float(self.adversary_gain),
                           float(self.adversary_cost))


@dataclass(frozen=True)
class NoGame(_Game):
    """No profitability model; the amounts serve the publisher_payout metric (Wan et al. 2015)."""

    variant_name: ClassVar[str] = "none"


@dataclass(frozen=True)
class ProsecutorGame(_Game):
    """Keep a class when publishing it pays: benefit B (1 - IL) minus, when attacking pays the
    adversary (G / |E| > C), the expected fine L / |E| (Wan et al. 2015; ARX's prosecutor
    profitability, not monotone)."""

    variant_name: ClassVar[str] = "prosecutor"


@dataclass(frozen=True)
class ProsecutorNoAttackGame(_Game):
    """Keep a class when no attack on it pays the adversary: |E| > G / C (Wan et al. 2015;
    ARX's no-attack prosecutor profitability, k-anonymity with k from G / C)."""

    variant_name: ClassVar[str] = "prosecutor_no_attack"


#: the variants of the generalise step's ``profitability`` parameter (the journalist models need
#: a population table, which the step does not take: :class:`Profitability` in the library)
GAME_VARIANTS = (NoGame, ProsecutorGame, ProsecutorNoAttackGame)


def profitability_summary(view: NodeView, kept: np.ndarray, cost_benefit: CostBenefit | None = None) -> dict:
    """The figures of the game at a node: the publisher's total expected payout over the kept
    records, its theoretical maximum ``n B`` and the mean entropy-based information loss of the
    kept records."""
    cb = cost_benefit or CostBenefit()
    size = view.table.class_size.astype(float)
    il = entropy_information_loss(view)
    n_kept = float(size[kept].sum())
    return {"publisher_payout": publisher_payout(view, kept, cb),
            "publisher_payout_max": float(view.problem.n * cb.publisher_benefit),
            "entropy_information_loss_mean": float((size * il)[kept].sum() / n_kept) if n_kept else 0.0}
