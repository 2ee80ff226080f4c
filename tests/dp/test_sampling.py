"""Exact samplers: the numba kernels draw exactly what the Python-integer reference draws from
the same bits, the draws follow their exact distributions (chi-square and binomial tests at a
stated level, fixed seeds), and no floating-point draw is made."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from sdckit.dp import sampling as S
from sdckit.dp.sampling import (
    BitReader,
    BitSource,
    discrete_gaussian,
    discrete_gaussian_pmf,
    discrete_laplace,
    discrete_laplace_pmf,
    gaussian_parameters,
    laplace_parameters,
    reference_bernoulli_exp,
    reference_discrete_gaussian,
    reference_discrete_laplace,
    symmetric_quantile,
)

#: significance level of every distributional test here (seeds fixed: the tests cannot flake;
#: a correct sampler fails one with probability 0.001 for a new seed)
ALPHA = 0.001


class NoFloatGenerator(np.random.Generator):
    """A Generator whose floating-point draws fail the test: the samplers may use bits only."""

    def _forbidden(self, *args, **kwargs):
        raise AssertionError("a floating-point draw was made")

    random = normal = standard_normal = uniform = exponential = standard_exponential = _forbidden
    laplace = gamma = beta = geometric = poisson = binomial = choice = _forbidden


class CountingSource(BitSource):
    """A pure bit source: the words of a fixed array, then fresh words of a seeded stream."""

    def __init__(self, seed: int) -> None:
        super().__init__(np.random.default_rng(seed))
        self.n_words = 0

    def words(self, n: int) -> np.ndarray:
        self.n_words += n
        return super().words(n)


def _reference_stream(draw, n: int, seed: int) -> list[int]:
    r = BitReader(BitSource(np.random.default_rng(seed)), chunk=7)
    return [draw(r) for _ in range(n)]


@pytest.mark.parametrize("a,b", [(12, 1), (5, 2), (7, 10), (160001, 4096), ((1 << 26) - 3, 1 << 29)])
def test_gaussian_kernel_draws_what_the_reference_draws(a, b):
    # the same bit stream read by two implementations (numba int64, Python ints). The last
    # parameters (sigma^2 just under 1/8, a denominator near the kernel's limit) put the int64
    # bound of the acceptance test at |Y| = 4: about 1% of the proposals take the kernel's
    # path for far-out proposals (64 draws of Bernoulli(exp(-1)) made in the kernel)
    fast = discrete_gaussian(a, b, 3000, np.random.default_rng(11))
    ref = _reference_stream(lambda r: reference_discrete_gaussian(r, a, b), 3000, 11)
    assert fast.tolist() == ref


@pytest.mark.parametrize("s,t", [(1, 4), (3, 7), (1, 1), (5, 1 << 20)])
def test_laplace_kernel_draws_what_the_reference_draws(s, t):
    fast = discrete_laplace(s, t, 3000, np.random.default_rng(12))
    ref = _reference_stream(lambda r: reference_discrete_laplace(r, s, t), 3000, 12)
    assert fast.tolist() == ref


def test_refills_and_overflow_handover_keep_the_stream():
    """The driver: words running out mid-draw (draw restarted from its first bit with more words)
    and draws handed to the reference (status 2) give the reference's sequence exactly."""
    a, b = 12, 1
    t = math.isqrt(a // b) + 1

    handed: set[int] = set()

    def kernel(words, pos, out, start, *args):
        # a stand-in kernel on the reference: out of words -> status 1; draws 3, 8, 13, ... are
        # handed over once each -> status 2
        for i in range(start, out.size):
            if i % 5 == 3 and i not in handed:
                handed.add(i)
                return 2, i, pos
            r = BitReader(None, words, pos)
            try:
                out[i] = reference_discrete_gaussian(r, a, b)
            except EOFError:
                return 1, i, pos
            pos = r.pos
        return 0, out.size, pos

    got = S.run_batch(200, BitSource(np.random.default_rng(3)), kernel, (a, b, t),
                       lambda r: reference_discrete_gaussian(r, a, b), words_per_draw=0.05)
    ref = _reference_stream(lambda r: reference_discrete_gaussian(r, a, b), 200, 3)
    assert got.tolist() == ref


def _chi2_pvalue(draws: np.ndarray, pmf) -> float:
    """Chi-square goodness of fit, bins merged in the tails until each expects >= 5 draws."""
    n = draws.size
    lo, hi = int(draws.min()), int(draws.max())
    x = np.arange(lo, hi + 1)
    obs = np.bincount(draws - lo, minlength=x.size).astype(float)
    exp = pmf(x) * n
    # the mass outside [lo, hi] joins the end bins
    exp[0] += n * max(0.0, 1.0 - pmf(x).sum()) / 2
    exp[-1] += n * max(0.0, 1.0 - pmf(x).sum()) / 2
    o, e = [], []
    acc_o = acc_e = 0.0
    for oi, ei in zip(obs, exp):
        acc_o += oi
        acc_e += ei
        if acc_e >= 5:
            o.append(acc_o)
            e.append(acc_e)
            acc_o = acc_e = 0.0
    o[-1] += acc_o
    e[-1] += acc_e
    e = np.array(e) * (n / np.sum(e))
    return float(stats.chisquare(o, e).pvalue)


@pytest.mark.parametrize("a,b,seed", [(12, 1, 1), (5, 2, 2), (7, 10, 3), (400, 1, 4)])
def test_discrete_gaussian_follows_its_exact_distribution(a, b, seed):
    draws = discrete_gaussian(a, b, 200_000, seed)
    p = _chi2_pvalue(draws, lambda x: discrete_gaussian_pmf(x, a / b))
    assert p > ALPHA, p
    # and the variance is the exact one of N_Z(0, sigma^2) (sum over the support, CKS 2020 eq. 1)
    xs = np.arange(-2000, 2001)
    var = float(np.sum(xs ** 2 * discrete_gaussian_pmf(xs, a / b)))
    assert abs(draws.var() - var) < 5 * var * math.sqrt(2 / draws.size)


@pytest.mark.parametrize("s,t,seed", [(1, 4, 5), (3, 7, 6), (2, 1, 7)])
def test_discrete_laplace_follows_its_exact_distribution(s, t, seed):
    draws = discrete_laplace(s, t, 200_000, seed)
    p = _chi2_pvalue(draws, lambda x: discrete_laplace_pmf(x, t / s))
    assert p > ALPHA, p


@pytest.mark.parametrize("num,den", [(0, 1), (1, 3), (1, 1), (5, 2), (7, 3), (123456789, 98765432)])
def test_bernoulli_exp_has_probability_exp_minus_gamma(num, den):
    r = BitReader(BitSource(np.random.default_rng(num + 17 * den)))
    n = 40_000
    k = sum(reference_bernoulli_exp(r, num, den) for _ in range(n))
    p = math.exp(-num / den)
    if p == 1.0:
        assert k == n
    else:
        assert stats.binomtest(k, n, p).pvalue > ALPHA


def test_samplers_make_no_floating_point_draw():
    gen = NoFloatGenerator(np.random.PCG64(5))
    g = discrete_gaussian(12, 1, 5000, gen)
    lap = discrete_laplace(1, 4, 5000, gen)
    assert g.dtype == np.int64 and lap.dtype == np.int64 and g.std() > 0 and lap.std() > 0
    # the output is a function of the bits alone: the same words give the same draws
    a = discrete_gaussian(12, 1, 2000, CountingSource(9))
    b = discrete_gaussian(12, 1, 2000, CountingSource(9))
    assert np.array_equal(a, b)


def test_a_whole_dp_table_draws_its_noise_from_bits_only(monkeypatch):
    """Every generator the mechanism makes refuses floating-point draws, and the noise comes
    through BitSource.words: applying a DP table still works."""
    from sdckit.dp.mechanisms import DiscreteGaussianCounts, DiscreteLaplaceCounts
    from sdckit.dp.synthetic import synthetic_counts

    t = synthetic_counts((2, 3), (2,), rng=0)  # built before the patch (it draws Poisson counts)
    seen = []
    real = BitSource.words

    def spy(self, n):
        seen.append(n)
        return real(self, n)

    monkeypatch.setattr(BitSource, "words", spy)
    monkeypatch.setattr(np.random, "default_rng", lambda seed=None: NoFloatGenerator(np.random.PCG64(seed)))
    for method in (DiscreteGaussianCounts(rho=1.0, n_simulations=1), DiscreteLaplaceCounts(epsilon=1.0)):
        seen.clear()
        res = method.apply(t, rng=4)
        assert seen and res.published.dtype == np.int64 and res.ok


def test_parameters_never_spend_more_than_asked():
    for rho in (0.01, 0.1, 0.5, 1.0, 2.0, 1 / 3):
        for l2sq in (1, 4, 16, 31):
            a, b, spent = gaussian_parameters(rho, l2sq)
            assert spent <= Fraction(rho)
            assert float(spent) > rho * (1 - 1e-6)  # a power-of-two denominator loses almost nothing
            assert Fraction(a, b) >= Fraction(l2sq) / (2 * Fraction(rho))
    for eps in (0.01, 0.1, 1.0, 3.7):
        for l1 in (1, 4, 16):
            s, t, spent = laplace_parameters(eps, l1)
            assert spent <= Fraction(eps) and float(spent) > eps * (1 - 1e-6)


def test_symmetric_quantile_is_exact_on_a_hand_case():
    # discrete Laplace with scale 1, e = exp(-1): the tails are geometric series,
    # P(|X| <= q) = 1 - 2 e^(q+1) / (1 + e): q = 1 gives 0.802..., q = 2 gives 0.927...
    q, cov = symmetric_quantile(lambda x: discrete_laplace_pmf(x, 1.0), 0.9, 50)
    e = math.exp(-1)
    assert q == 2
    assert cov == pytest.approx(1 - 2 * e ** 3 / (1 + e), rel=1e-12)
    assert 1 - 2 * e ** 2 / (1 + e) < 0.9
