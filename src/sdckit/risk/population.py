"""Estimators of the number of population uniques from a sample (as in ARX).

From the sample's class-size histogram (c_j = number of key combinations seen j times), the
sample size n and the population size N (sampling fraction pi = n / N):

* **Zayatz** (1991): the share of sample uniques that are population unique is estimated
  with hypergeometric sampling, taking the sample's class-size distribution for the
  population's:

      P(F=1 | f=1) = c_1 h(1; N, 1, n) / sum_j c_j h(1; N, j, n),
      h(1; N, j, n) = P(a sample of n from N holds exactly 1 of j marked units),
      uniques = c_1 P(F=1 | f=1) / pi.

* **Pitman** (Hoshino 2001): the partition of the population into classes follows Pitman's
  sampling formula with parameters (theta, alpha), 0 < alpha < 1, theta > -alpha. The
  maximum-likelihood (theta, alpha) of the sample partition (u classes) maximise

      L = sum_{i=1}^{u-1} log(theta + i alpha) - sum_{i=1}^{n-1} log(theta + i)
          + sum_j c_j sum_{i=1}^{j-1} log(i - alpha),

  and the expected number of population uniques is Gamma(theta + 1) / Gamma(theta + alpha)
  N^alpha (Hoshino 2001, eq. 12).

* **SNB** (Chen & Keller-McNulty 1998): population class sizes follow a shifted negative
  binomial, P(F = j) = C(j + alpha - 2, j - 1) beta^alpha (1 - beta)^(j - 1), j >= 1, and
  f | F ~ Binomial(F, pi). With K the number of non-empty population classes (Shlosser's
  estimator, Haas et al. 1995) the two moment equations K P(f = 1) = c_1, K P(f = 2) = c_2
  give (alpha, beta), and uniques = K beta^alpha. With D = 1 - (1 - beta)(1 - pi) (the
  probability generating function of f is z (beta / (1 - (1 - beta) z))^alpha at z = 1 - pi + pi s):

      P(f = 1) = pi (beta / D)^alpha [1 + alpha (1 - beta)(1 - pi) / D],
      P(f = 2) = pi^2 alpha (1 - beta) beta^alpha / (2 D^(alpha + 2))
                 [2 - (1 - alpha)(1 - beta)(1 - pi)].

* **Dankar et al.** (2012) decision rule: Pitman when pi <= 0.1 (Zayatz if Pitman fails);
  otherwise the smaller of Zayatz and SNB (Zayatz if SNB fails).

References
----------
Zayatz, L. (1991). Estimation of the percent of unique population elements on a microdata
file using the sample. Statistical Research Division Report Census/SRD/RR-91/08, US Bureau of
the Census.

Hoshino, N. (2001). Applying Pitman's sampling formula to microdata disclosure risk
assessment. Journal of Official Statistics 17(4), 499-520.

Chen, G. and Keller-McNulty, S. (1998). Estimation of identification disclosure risk in
microdata. Journal of Official Statistics 14(1), 79-95.

Haas, P. J., Naughton, J. F., Seshadri, S. and Stokes, L. (1995). Sampling-based estimation
of the number of distinct values of an attribute. VLDB 1995, 311-322. (Shlosser's estimator.)

Dankar, F. K., El Emam, K., Neisa, A. and Roffey, T. (2012). Estimating the re-identification
risk of clinical data sets. BMC Medical Informatics and Decision Making 12, 66.

Prasser, F. and Kohlmayer, F. et al., ARX (``RiskModelPopulationUniqueness``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats
from scipy.special import gammaln

from .._validation import check_float
from ..errors import InputError
from ..result import jsonable

ESTIMATORS = ("zayatz", "pitman", "snb", "dankar")


def class_histogram(fk_per_class: np.ndarray) -> dict[int, int]:
    """{size j: number of classes of size j} from the sizes of the sample's classes."""
    sizes, counts = np.unique(np.asarray(fk_per_class, dtype=np.int64), return_counts=True)
    return {int(s): int(c) for s, c in zip(sizes, counts) if s > 0}


def zayatz_uniques(hist: dict[int, int], n: int, N: int) -> float:
    """Zayatz's estimate of the number of population uniques."""
    c1 = hist.get(1, 0)
    if c1 == 0:
        return 0.0
    pi = n / N
    num = c1 * stats.hypergeom.pmf(1, N, 1, n)
    den = sum(c * stats.hypergeom.pmf(1, N, j, n) for j, c in hist.items())
    if not den > 0:
        return float("nan")
    return float(c1 * (num / den) / pi)


def _pitman_negloglik(params, hist_sizes, hist_counts, u, n):
    theta, alpha = params
    if not (0 < alpha < 1) or theta <= -alpha:
        return np.inf
    # sum_{i=1}^{u-1} log(theta + i alpha) = (u-1) log alpha + lgamma(theta/alpha + u) - lgamma(theta/alpha + 1)
    a = (u - 1) * np.log(alpha) + gammaln(theta / alpha + u) - gammaln(theta / alpha + 1)
    b = gammaln(theta + n) - gammaln(theta + 1)          # sum_{i=1}^{n-1} log(theta + i)
    c = np.sum(hist_counts * (gammaln(hist_sizes - alpha) - gammaln(1 - alpha)))
    return -(a - b + c)


def pitman_parameters(hist: dict[int, int], n: int) -> tuple[float, float]:
    """Maximum-likelihood (theta, alpha) of Pitman's sampling formula (Hoshino 2001)."""
    sizes = np.array(sorted(hist), dtype=np.float64)
    counts = np.array([hist[int(s)] for s in sizes], dtype=np.float64)
    u = float(counts.sum())
    best = None
    # start from a grid over alpha, the best theta on a log grid; then Nelder-Mead polish
    for a0 in (0.1, 0.3, 0.5, 0.7, 0.9):
        for t0 in (0.1, 1.0, 10.0, 100.0, 1000.0, 1e4):
            v = _pitman_negloglik((t0, a0), sizes, counts, u, n)
            if best is None or v < best[0]:
                best = (v, t0, a0)

    def obj(z):   # theta = exp(z0) - alpha * tanh-ish guard; alpha = logistic(z1)
        alpha = 1.0 / (1.0 + np.exp(-z[1]))
        theta = np.exp(z[0]) - alpha
        return _pitman_negloglik((theta, alpha), sizes, counts, u, n)

    a0 = best[2]
    z0 = np.array([np.log(best[1] + a0), np.log(a0 / (1 - a0))])
    res = optimize.minimize(obj, z0, method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})
    alpha = 1.0 / (1.0 + np.exp(-res.x[1]))
    theta = float(np.exp(res.x[0]) - alpha)
    return theta, float(alpha)


def pitman_uniques(hist: dict[int, int], n: int, N: int) -> float:
    """Pitman-model estimate Gamma(theta + 1) / Gamma(theta + alpha) N^alpha (Hoshino 2001)."""
    if hist.get(1, 0) == 0:
        return 0.0
    theta, alpha = pitman_parameters(hist, n)
    val = float(np.exp(gammaln(theta + 1) - gammaln(theta + alpha) + alpha * np.log(N)))
    return val if 0 <= val <= N else float("nan")


def shlosser_classes(hist: dict[int, int], pi: float) -> float:
    """Shlosser's estimate of the number of non-empty population classes (Haas et al. 1995):
    d + c_1 sum_j (1 - q)^j c_j / sum_j j q (1 - q)^(j - 1) c_j, q = pi."""
    d = sum(hist.values())
    c1 = hist.get(1, 0)
    q = pi
    num = sum((1 - q) ** j * c for j, c in hist.items())
    den = sum(j * q * (1 - q) ** (j - 1) * c for j, c in hist.items())
    return float(d + c1 * num / den) if den > 0 else float(d)


def snb_probabilities(alpha: float, beta: float, pi: float) -> tuple[float, float]:
    """P(f = 1), P(f = 2) under the shifted negative binomial with binomial sampling."""
    qz = (1 - beta) * (1 - pi)
    D = 1 - qz
    p1 = pi * (beta / D) ** alpha * (1 + alpha * qz / D)
    p2 = pi ** 2 * alpha * (1 - beta) * beta ** alpha / (2 * D ** (alpha + 2)) * (2 - (1 - alpha) * qz)
    return p1, p2


def snb_uniques(hist: dict[int, int], n: int, N: int) -> float:
    """SNB-model estimate K beta^alpha (Chen & Keller-McNulty 1998); NaN when it has no solution."""
    c1, c2 = hist.get(1, 0), hist.get(2, 0)
    if c1 == 0:
        return 0.0
    pi = n / N
    K = shlosser_classes(hist, pi)
    if c2 == 0 or K <= 0:
        return float("nan")

    def eqs(z):
        alpha, beta = np.exp(z[0]), 1.0 / (1.0 + np.exp(-z[1]))
        p1, p2 = snb_probabilities(alpha, beta, pi)
        return [np.log(K * p1 / c1), np.log(K * p2 / c2)]

    best = None
    for a0 in (0.05, 0.3, 1.0, 3.0):
        for b0 in (0.01, 0.1, 0.5, 0.9):
            z0 = np.array([np.log(a0), np.log(b0 / (1 - b0))])
            with np.errstate(all="ignore"):
                sol = optimize.root(eqs, z0, method="hybr")
            if sol.success and np.all(np.isfinite(sol.x)):
                r = float(np.abs(eqs(sol.x)).max())
                if r < 1e-8 and (best is None or r < best[0]):
                    best = (r, sol.x)
    if best is None:
        return float("nan")
    alpha, beta = np.exp(best[1][0]), 1.0 / (1.0 + np.exp(-best[1][1]))
    val = float(K * beta ** alpha)
    return val if 0 <= val <= N else float("nan")


@dataclass(frozen=True)
class PopulationUniqueness:
    """Estimates of the number of population uniques and Dankar et al.'s choice."""

    n: int
    N: int
    sampling_fraction: float
    n_sample_uniques: int
    zayatz: float
    pitman: float
    snb: float
    dankar: float
    dankar_model: str
    notes: tuple = ()

    def summary(self) -> dict:
        return jsonable({"n_records": self.n, "population_size": self.N,
                         "sampling_fraction": self.sampling_fraction,
                         "n_sample_uniques": self.n_sample_uniques,
                         "zayatz": self.zayatz, "pitman": self.pitman, "snb": self.snb,
                         "population_uniques": self.dankar, "dankar_model": self.dankar_model,
                         "population_uniqueness": self.dankar / self.N if self.N else 0.0,
                         "notes": list(self.notes)})

    def to_dict(self) -> dict:
        return self.summary()

    def describe(self) -> str:
        def f(v):
            return "n/a" if v != v else f"{v:,.1f}"
        lines = [f"population uniques (n = {self.n:,}, N = {self.N:,}, pi = {self.sampling_fraction:.4g}, "
                 f"{self.n_sample_uniques:,} sample uniques)",
                 f"  Zayatz {f(self.zayatz)}, Pitman {f(self.pitman)}, SNB {f(self.snb)}",
                 f"  Dankar et al.'s rule: {self.dankar_model} -> {f(self.dankar)} "
                 f"({100 * self.dankar / self.N:.4f} % of the population)"]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def population_uniques(sample_class_sizes: Sequence[int] | np.ndarray, *,
                       population_size: float | None = None,
                       sampling_fraction: float | None = None) -> PopulationUniqueness:
    """Zayatz, Pitman and SNB estimates of the population uniques and Dankar et al.'s choice.

    Parameters
    ----------
    sample_class_sizes : int array
        The size f_k of each key combination seen in the sample (one entry per combination).
    population_size : float, optional
        N; or give ``sampling_fraction`` (pi = n / N).

    References
    ----------
    Zayatz (1991); Hoshino (2001); Chen and Keller-McNulty (1998); Dankar et al. (2012).
    """
    fk = np.asarray(sample_class_sizes, dtype=np.int64)
    n = int(fk.sum())
    if n == 0:
        raise InputError("population uniques: the sample is empty.")
    if (population_size is None) == (sampling_fraction is None):
        raise InputError("population uniques: give exactly one of population_size (N) or "
                         "sampling_fraction (n / N).")
    if sampling_fraction is not None:
        pi = check_float("population_uniques", "sampling_fraction", sampling_fraction, low=0.0,
                         high=1.0, low_open=True)
        N = int(round(n / pi))
    else:
        N = int(round(check_float("population_uniques", "population_size", population_size,
                                  low=1.0)))
        if N < n:
            raise InputError(f"population uniques: the population size {N:,} is below the sample "
                             f"size {n:,} (an implied sampling fraction above 1); give N >= n.")
    pi = n / N
    hist = class_histogram(fk)
    c1 = hist.get(1, 0)
    notes = []
    if c1 == 0:
        notes.append("no sample uniques: every estimate is 0")
        return PopulationUniqueness(n, N, pi, 0, 0.0, 0.0, 0.0, 0.0, "none", tuple(notes))
    if N == n:
        notes.append("the sample is the population: the uniques are the sample uniques")
        return PopulationUniqueness(n, N, pi, c1, float(c1), float(c1), float(c1), float(c1),
                                    "census", tuple(notes))
    z = zayatz_uniques(hist, n, N)
    p = pitman_uniques(hist, n, N)
    s = snb_uniques(hist, n, N)
    ok = lambda v: v == v and v > 0   # noqa: E731
    if pi <= 0.1:
        model, val = ("pitman", p) if ok(p) else ("zayatz", z)
    elif ok(s):
        model, val = ("zayatz", z) if z < s else ("snb", s)
    else:
        model, val = "zayatz", z
    for name, v in (("Pitman", p), ("SNB", s), ("Zayatz", z)):
        if not ok(v):
            notes.append(f"the {name} model has no valid solution on these data")
    return PopulationUniqueness(n, N, pi, c1, z, p, s, float(val) if ok(val) else 0.0, model,
                                tuple(notes))


def microdata_population_uniques(microdata, *, population_size: float | None = None,
                                 sampling_fraction: float | None = None) -> PopulationUniqueness:
    """:func:`population_uniques` of a Microdata's key combinations; N from the weights when
    neither N nor pi is given."""
    from .frequencies import key_frequencies

    freq = key_frequencies(microdata)
    if population_size is None and sampling_fraction is None:
        w = microdata.weights()
        if w is None:
            raise InputError("population uniques need the population size: give a weight role, "
                             "--population-size N or a sampling fraction.")
        population_size = float(w.sum())
    return population_uniques(freq.counts, population_size=population_size,
                              sampling_fraction=sampling_fraction)


__all__ = ["ESTIMATORS", "PopulationUniqueness", "class_histogram", "microdata_population_uniques",
           "pitman_parameters", "pitman_uniques", "population_uniques", "shlosser_classes",
           "snb_probabilities", "snb_uniques", "zayatz_uniques"]
