"""ARX's privacy models beyond k-anonymity, l-diversity and t-closeness: k-map, beta-likeness,
delta-disclosure privacy and a bound on the estimated population uniqueness.

Each model declares its monotonicity as :mod:`.models` defines it (``monotone(with_suppression)``),
the same as ARX 3.9.2 declares it, except where noted:

* **k-map** (Sweeney 2002; El Emam & Dankar 2008, sec. 2): every kept class matches at least
  ``k`` records of the population. With a population table (the data are a subset of it, as
  ARX's research subset) a class's population count is counted; with only the population
  size ``N``, ARX's estimator replaces ``k`` by a smaller ``k'`` the class's *sample* count
  must reach: with ``lambda = (n / N) k`` and ``x*`` the smallest ``x`` whose Poisson
  cumulative probability is at least ``1 - significance``, ``k' = x* + 2`` (Poisson) or, for
  the zero-truncated Poisson, ``k' = x* + 1`` with ``x* >= 1`` the smallest ``x`` with
  ``sum_{i=1..x} P(i) / (1 - P(0)) >= 1 - significance``; ``k' = k`` when that is not below
  ``k``, and ``k' <= n`` (ARX's ``KMap``). Population counts only grow when classes merge:
  monotone with and without suppression.
* **beta-likeness** (Cao & Karras 2012, Definitions 2 and 4): for every sensitive value ``s``
  present in a kept class, ``(p_s - q_s) / q_s <= beta`` (``p`` the class's distribution,
  ``q`` the whole data's); the *enhanced* variant bounds it by ``min(beta, -ln q_s)``. A union
  of satisfying classes satisfies (``p`` of a union is a convex combination): monotone without
  suppression only.
* **delta-disclosure privacy** (Brickell & Shmatikov 2008, Definition 4): for every value
  present in a kept class, ``|log2(p_s / q_s)| < delta`` (ARX's base-2 logarithm and strict
  inequality; values absent from a class are not checked, as in ARX). Not monotone (a union
  can hold a value at a share below ``q_s 2^-delta``).
* **population uniqueness** (Dankar et al. 2012): the estimated share of the population that
  is unique on the quasi-identifiers, from the kept classes' sizes (Zayatz, Pitman, SNB or
  Dankar et al.'s choice among them, :func:`sdckit.risk.population.population_uniques`), is
  at most ``threshold``; a release with no sample unique passes (as ARX). A global model
  checked on the kept records; declared not monotone (ARX declares the Zayatz variant
  monotone without suppression; sdckit does not rely on it and searches without that pruning).
  ARX also suppresses further classes until the model holds; sdckit suppresses only the
  classes the class-based models reject.

References
----------
Sweeney, L. (2002). k-anonymity: a model for protecting privacy. *IJUFKS* 10(5), 557-570.
El Emam, K., Dankar, F. K. (2008). Protecting privacy using k-anonymity. *JAMIA* 15(5).
Cao, J., Karras, P. (2012). Publishing microdata with a robust privacy guarantee. *PVLDB*
5(11), 1388-1399. Brickell, J., Shmatikov, V. (2008). The cost of privacy: destruction of
data-mining utility in anonymized data publishing. *KDD 2008*, 70-78. Dankar, F. K., El Emam,
K., Neisa, A., Roffey, T. (2012). Estimating the re-identification risk of clinical data sets.
*BMC Med. Inform. Decis. Mak.* 12:66.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .models import Model, NodeView
from .models import make_models as make_base_models

_EPS = 1e-12

#: k-map estimators (ARX's cell size estimators)
KMAP_ESTIMATORS = ("poisson", "zero_truncated_poisson")
#: population uniqueness models
UNIQUENESS_MODELS = ("zayatz", "pitman", "snb", "dankar")


def derived_k(k: int, n: int, population_size: float, estimator: str, significance: float) -> int:
    """ARX's ``k'`` for k-map without a population table (module notes)."""
    from scipy import stats  # noqa: PLC0415 (loads only for the models that need it)

    lam = (n / float(population_size)) * k
    thr = 1.0 - significance
    pois = stats.poisson(lam)
    if estimator == "poisson":
        x = int(pois.ppf(thr))
        while x > 0 and pois.cdf(x - 1) >= thr:   # ppf is the smallest x with cdf(x) >= thr
            x -= 1
        kk = x + 2 if x + 1 < k else k
    elif estimator == "zero_truncated_poisson":
        v2 = 1.0 - pois.pmf(0)
        x, acc = 1, 0.0
        while True:
            acc += pois.pmf(x) / v2
            if acc >= thr or x + 1 >= k:
                break
            x += 1
        kk = x + 1 if acc >= thr and x + 1 < k else k
    else:
        raise InputError(f"k-map estimator {estimator!r} is not known; use {' or '.join(KMAP_ESTIMATORS)}.")
    return int(max(1, min(k, kk, n)))


@dataclass(frozen=True)
class KMap(Model):
    """Every kept class matches at least ``k`` population records (module notes)."""

    k: int
    population_size: float | None = None
    estimator: str | None = None
    significance: float = 0.01
    name = "k-map"

    @property
    def needs_population(self) -> bool:   # a population table, unless estimated from N
        return self.estimator is None

    def monotone(self, with_suppression):
        return True

    def min_class_size_for(self, problem) -> int:
        """k' with the estimator (a kept class needs that many sample records), else 1."""
        return 1 if self.estimator is None else self.k_prime(problem.n)

    def k_prime(self, n: int) -> int:
        return derived_k(int(self.k), n, float(self.population_size), self.estimator, self.significance)

    def class_ok(self, view):
        size = view.table.class_size
        if self.estimator is None:
            return view.problem.population_counts(view.table, view.levels) >= self.k
        return size >= self.k_prime(view.problem.n)

    def describe(self):
        how = "population table" if self.estimator is None else \
            f"{self.estimator} estimate, N = {self.population_size:g}"
        return f"{self.k}-map ({how})"


@dataclass(frozen=True)
class BetaLikeness(Model):
    """``(p_s - q_s) / q_s <= beta`` (enhanced: ``<= min(beta, -ln q_s)``) for every sensitive
    value of every kept class (Cao & Karras 2012)."""

    beta: float
    enhanced: bool = False
    name = "beta-likeness"
    needs_sensitive = True

    def monotone(self, with_suppression):
        return not with_suppression

    def class_ok(self, view):
        p = view.distribution()
        q = view.problem.sens_overall[None, :]
        limit = np.minimum(self.beta, -np.log(q)) if self.enhanced else np.full_like(q, self.beta)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = (p - q) / q
        return ~((p > 0) & (rel > limit + _EPS)).any(axis=1)

    def describe(self):
        return f"{'enhanced' if self.enhanced else 'basic'} {self.beta:g}-likeness"


@dataclass(frozen=True)
class DeltaDisclosure(Model):
    """``|log2(p_s / q_s)| < delta`` for every sensitive value present in every kept class
    (Brickell & Shmatikov 2008; ARX's base 2)."""

    delta: float
    name = "delta-disclosure"
    needs_sensitive = True

    def monotone(self, with_suppression):
        return False

    def class_ok(self, view):
        p = view.distribution()
        q = view.problem.sens_overall[None, :]
        with np.errstate(divide="ignore"):
            d = np.abs(np.log2(np.where(p > 0, p, 1.0) / q))
        return ~((p > 0) & (d >= self.delta - _EPS)).any(axis=1)

    def describe(self):
        return f"{self.delta:g}-disclosure privacy"


@dataclass(frozen=True)
class PopulationUniquenessBound(Model):
    """The estimated share of population uniques, from the kept classes, is at most
    ``threshold`` (module notes)."""

    threshold: float
    population_size: float
    model: str = "dankar"
    name = "population uniqueness"
    class_based = False

    def __post_init__(self) -> None:
        if self.model not in UNIQUENESS_MODELS:
            raise InputError(f"population uniqueness model {self.model!r} is not known; use one of "
                             f"{', '.join(UNIQUENESS_MODELS)}.")

    def monotone(self, with_suppression):
        return False

    def share(self, sizes: np.ndarray) -> float:
        """Estimated population uniques / N from the kept class sizes."""
        from scipy import stats  # noqa: PLC0415

        from ..risk.population import population_uniques  # noqa: PLC0415

        sizes = np.asarray(sizes, dtype=np.int64)
        if sizes.sum() == 0 or not (sizes == 1).any():
            return 0.0
        # N relative to the kept records: the population the kept records were drawn from
        n = int(sizes.sum())
        big_n = max(float(self.population_size), float(n))
        if self.model == "zayatz":
            # the one estimate asked for, in one vectorised call (Zayatz 1991, as ARX's ModelZayatz):
            # uniques = c_1 (c_1 P_1 / sum_j c_j P_j) / pi, P_j = P(1 in the sample | j in the population)
            big = int(round(big_n))
            js, cs = np.unique(sizes[sizes > 0], return_counts=True)
            c1 = float(cs[0]) if js[0] == 1 else 0.0
            if big <= n:
                return c1 / big
            pj = stats.hypergeom.pmf(1, big, js, n)
            den = float((cs * pj).sum())
            if not den > 0:
                return math.inf
            return c1 * (c1 * float(pj[0]) / den) / (n / big) / big
        res = population_uniques(sizes, population_size=big_n)
        est = {"zayatz": res.zayatz, "pitman": res.pitman, "snb": res.snb, "dankar": res.dankar}[self.model]
        if not math.isfinite(est):
            return math.inf
        return float(est) / res.N

    def global_ok(self, view: NodeView, kept: np.ndarray) -> tuple[bool, float]:
        s = self.share(view.table.class_size[kept])
        return s <= self.threshold + _EPS, s

    def describe(self):
        return f"population uniqueness ({self.model}) <= {self.threshold:g}"


def make_models(*, k_map: int | None = None, population_size: float | None = None,
                k_map_estimator: str | None = None, significance: float = 0.01, beta: float | None = None,
                beta_variant: str = "basic", delta_disclosure: float | None = None,
                population_uniqueness: float | None = None, uniqueness_model: str = "dankar",
                profitability: str | None = None, cost_benefit=None, **base) -> list[Model]:
    """Every model the settings name (shared by the release step and the CLI): those of
    :func:`.models.make_models` (``base``: k, l, l_variant, c, t, t_distance, delta_min,
    delta_max, average_risk, max_risk) and ARX's further ones: ``k_map`` (with a population
    table, or with ``population_size`` and ``k_map_estimator``), ``beta`` (``beta_variant``
    basic or enhanced), ``delta_disclosure`` and ``population_uniqueness`` (with
    ``population_size`` and ``uniqueness_model``) and ARX's ``profitability`` model (a kind of
    :data:`.profitability.PROFITABILITY_TYPES`, or None / "none", with the amounts
    ``cost_benefit``, a :class:`.profitability.CostBenefit`, ARX's defaults when None)."""
    out = make_base_models(**base)
    if k_map is not None:
        if k_map_estimator is not None:
            if k_map_estimator not in KMAP_ESTIMATORS:
                raise InputError(f"k-map estimator {k_map_estimator!r} is not known; use "
                                 f"{' or '.join(KMAP_ESTIMATORS)}.")
            if population_size is None:
                raise InputError("k-map with an estimator needs the population size (population_size).")
        out.append(KMap(int(k_map), None if population_size is None else float(population_size),
                        k_map_estimator, float(significance)))
    if beta is not None:
        if beta_variant not in ("basic", "enhanced"):
            raise InputError(f"beta-likeness variant {beta_variant!r} is not known; use basic or enhanced.")
        out.append(BetaLikeness(float(beta), beta_variant == "enhanced"))
    if delta_disclosure is not None:
        out.append(DeltaDisclosure(float(delta_disclosure)))
    if population_uniqueness is not None:
        if population_size is None:
            raise InputError("the population uniqueness model needs the population size (population_size).")
        out.append(PopulationUniquenessBound(float(population_uniqueness), float(population_size),
                                             uniqueness_model))
    if profitability not in (None, "none"):
        from .profitability import CostBenefit, Profitability  # noqa: PLC0415

        out.append(Profitability(str(profitability), cost_benefit if cost_benefit is not None else CostBenefit()))
    return out
