"""Individual, global-threshold and household risk against independent computations."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import InputError
from sdckit.risk.individual import global_risk_threshold, household_risk, individual_risk


def nb_series(f, p, terms=200_000):
    """E[1/F | f] summed term by term: sum_j C(f+j-1, j) p^f (1-p)^j / (f+j) (log-space)."""
    j = np.arange(terms, dtype=np.float64)
    logc = (np.vectorize(math.lgamma)(f + j) - math.lgamma(f) - np.vectorize(math.lgamma)(j + 1))
    logt = logc + f * math.log(p) + j * math.log1p(-p) - np.log(f + j)
    return float(np.exp(logt).sum())


@pytest.mark.parametrize("f,F", [(1, 4.0), (1, 30.0), (2, 5.0), (2, 40.0), (3, 7.5), (5, 20.0),
                                 (8, 9.0), (12, 100.0), (1.5, 6.0), (19, 1900.0), (20, 2000.0),
                                 (45, 4500.0), (176, 17600.0), (60, 65.0)])
def test_exact_equals_negative_binomial_series(f, F):
    # reference: the defining series summed numerically
    got = individual_risk(np.array([f]), np.array([F]), method="exact")[0]
    assert got == pytest.approx(nb_series(f, f / F), rel=1e-7)


@pytest.mark.parametrize("F", [1.5, 3.0, 10.0, 250.0])
def test_closed_forms_for_f_1_and_2(F):
    # hand formulas of Benedetti-Franconi (mu-Argus manual): f = 1 and f = 2
    p1 = 1 / F
    r1 = p1 / (1 - p1) * math.log(1 / p1)
    p2 = 2 / (2 * F)
    o = p2 / (1 - p2)
    r2 = o - o * o * math.log(1 / p2)
    got = individual_risk(np.array([1, 2]), np.array([F, 2 * F]))
    assert got[0] == pytest.approx(r1, rel=1e-12)
    assert got[1] == pytest.approx(r2, rel=1e-12)
    # the exact method agrees with the closed forms for f = 1, 2
    ex = individual_risk(np.array([1, 2]), np.array([F, 2 * F]), method="exact")
    np.testing.assert_allclose(ex, got, rtol=1e-9)


def test_approximation_for_f_at_least_3():
    # r = p / (f - (1 - p)) with p = 4 / 10
    got = individual_risk(np.array([4]), np.array([10.0]))[0]
    assert got == pytest.approx(0.4 / (4 - 0.6))


def test_population_and_f_equal_F():
    fk = np.array([1, 2, 5])
    assert individual_risk(fk).tolist() == [1.0, 0.5, 0.2]                  # no weights: 1/f
    assert individual_risk(fk, fk.astype(float)).tolist() == [1.0, 0.5, 0.2]  # f = F: 1/f


@given(st.integers(1, 30), st.floats(1.0, 500.0))
def test_risk_is_a_probability_and_falls_with_F(f, ratio):
    F = f * ratio
    r = individual_risk(np.array([f, f]), np.array([F, F * 2]), method="exact")
    assert 0.0 <= r[1] <= r[0] <= 1.0 / f + 1e-12


def test_bad_frequencies_refused():
    with pytest.raises(InputError, match="weight"):
        individual_risk(np.array([1, 2]), np.array([0.0, 3.0]))


def brute_threshold(risk, gmax):
    """Every observed value tau, largest first; ER(tau) computed directly (mu-Argus eq. 17)."""
    n = len(risk)
    if risk.sum() < gmax * n:
        return None
    for tau in sorted(set(risk.tolist()), reverse=True):
        er = sum(r for r in risk if r <= tau) + tau * sum(1 for r in risk if r > tau)
        if er < gmax * n:
            return tau
    return 0.0


@given(st.lists(st.sampled_from([0.01, 0.05, 0.1, 0.2, 0.5, 1.0]), min_size=1, max_size=30),
       st.sampled_from([0.01, 0.05, 0.1, 0.3]))
def test_threshold_equals_brute_force(values, gmax):
    risk = np.array(values)
    assert global_risk_threshold(risk, gmax) == brute_threshold(risk, gmax)
    # the same from one value per distinct risk and its record count
    vals, cnt = np.unique(risk, return_counts=True)
    assert global_risk_threshold(vals, gmax, counts=cnt) == brute_threshold(risk, gmax)


def test_threshold_hand_case():
    # risks 0.5, 0.5, 0.1, 0.1 (ER 1.2, n 4); target 0.2 -> ER < 0.8
    # tau = 0.1: 0.1 + 0.1 + 0.1 * 2 = 0.4 < 0.8 -> threshold 0.1 (tau = 0.5 gives 1.2)
    assert global_risk_threshold(np.array([0.5, 0.5, 0.1, 0.1]), 0.2) == 0.1
    assert global_risk_threshold(np.array([0.01, 0.02]), 0.5) is None


def test_household_risk_hand_case():
    # household A: 1 - (1-0.5)(1-0.2) = 0.6; household B: 0.1
    r = household_risk(np.array([0.5, 0.2, 0.1]), np.array([7, 7, 3]))
    np.testing.assert_allclose(r, [0.6, 0.6, 0.1])
    with pytest.raises(InputError, match="household id"):
        household_risk(np.array([0.5, 0.2]), np.array([1, -1]))
