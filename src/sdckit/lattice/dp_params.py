"""The parameters of (epsilon, delta)-differential privacy by sampling and k-anonymisation.

Li, Qardaji and Su (2012) show that drawing each record with probability ``beta`` and then
applying a data-independent generalisation that suppresses every class of fewer than ``k``
records satisfies (epsilon, delta)-differential privacy when, with
``gamma = (e^epsilon - 1 + beta) / e^epsilon``,

``delta >= d(k) = max_{n >= n_m} sum_{j > gamma n} f(j; n, beta)``,  ``n_m = ceil(k / gamma - 1)``

(``f`` the binomial probability). Bild, Kuhn and Prasser (2018, sec. 4.1 and Appendix) take
``beta = 1 - e^-epsilon``, the largest sampling probability the bound allows, and the smallest
``k`` whose ``d(k)`` is below ``delta`` (``d`` falls as ``k`` grows, so the first such ``k`` is
found by doubling and bisection). The maximum over ``n`` is found as ARX's
``ParameterCalculation`` finds it: the terms ``a_n`` are taken from ``n_m`` on until they exceed
the Chernoff bound ``c_n = exp(-n (gamma ln(gamma / beta) - (gamma - beta)))`` of every later
term. ARX's loop returns one more than the first ``k`` with ``d(k) < delta``; :func:`dp_parameters`
returns the same ``k`` (a larger ``k`` can only lower ``d(k)``, so it is still safe).

References
----------
Li, N., Qardaji, W. and Su, D. (2012). On sampling, anonymization, and differential privacy or,
k-anonymization meets differential privacy. *ASIACCS 2012*, 32-33.
Bild, R., Kuhn, K. A. and Prasser, F. (2018). SafePub: a truthful data anonymization algorithm
with strong privacy guarantees. *PoPETs* 2018(1), 67-87.
"""

from __future__ import annotations

import math
from functools import lru_cache

from scipy.special import bdtrc

from .._validation import check_float, param_error


def sampling_probability(epsilon: float) -> float:
    """``beta = 1 - exp(-epsilon)`` (Bild et al. 2018, sec. 4.1)."""
    return -math.expm1(-epsilon)


def _gamma(epsilon: float, beta: float) -> float:
    power = math.exp(epsilon)
    return (power - 1.0 + beta) / power


def _binomial_tail(start: int, n: int, beta: float) -> float:
    """``sum_{j=start}^{n} f(j; n, beta)`` (the regularised incomplete beta function)."""
    if start > n:
        return 0.0
    return float(bdtrc(start - 1, n, beta))


def _delta_of_k(k: int, epsilon: float, beta: float, gamma: float, a_cache: dict, c_cache: dict) -> float:
    """``d(k)``: the largest ``a_n`` from ``n_m`` until it exceeds the bound ``c_n`` of the tail."""
    n = max(math.ceil(k / gamma - 1.0), 1)
    delta, bound = -math.inf, math.inf
    expo = gamma * math.log(gamma / beta) - (gamma - beta)
    while delta <= bound:
        if n not in a_cache:
            a_cache[n] = _binomial_tail(math.floor(n * gamma) + 1, n, beta)
            c_cache[n] = math.exp(-n * expo)
        delta = max(delta, a_cache[n])
        bound = c_cache[n]
        n += 1
    return delta


@lru_cache(maxsize=64)
def dp_parameters(epsilon: float, delta: float) -> tuple[float, int]:
    """The sampling probability ``beta`` and the class size ``k`` of (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float > 0
        The privacy budget of the anonymisation (without the search's share).
    delta : float in (0, 1)
        The delta of (epsilon, delta)-differential privacy.

    Returns
    -------
    (float, int)
        ``beta = 1 - exp(-epsilon)`` and ARX's ``k`` (module notes).
    """
    epsilon = check_float("(epsilon, delta)-differential privacy", "epsilon", epsilon, low=0, low_open=True)
    delta = check_float("(epsilon, delta)-differential privacy", "delta", delta, low=0, high=1, low_open=True,
                        high_open=True)
    if epsilon > 20:   # beta rounds to 1 and k grows without use: no release is private at such a budget
        raise param_error("(epsilon, delta)-differential privacy", "epsilon", "a number in (0, 20]", epsilon)
    beta = sampling_probability(epsilon)
    gamma = _gamma(epsilon, beta)
    a_cache: dict = {}
    c_cache: dict = {}

    def below(k: int) -> bool:
        return _delta_of_k(k, epsilon, beta, gamma, a_cache, c_cache) < delta

    # the first k with d(k) < delta (d falls with k): doubling, then bisection; ARX's linear scan
    # finds the same k (tests/lattice/test_safepub.py compares) and returns it plus one
    hi = 1
    while not below(hi):
        hi *= 2
    lo = hi // 2   # d(lo) >= delta, or lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if below(mid):
            hi = mid
        else:
            lo = mid
    return beta, hi + 1
