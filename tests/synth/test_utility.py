"""Utility measures: the logistic fit against statsmodels, identities, and hand-computed tables."""

import math

import numpy as np
import pandas as pd
import pytest

from sdckit.synth import compare_fit, propensity_utility, table_utility
from sdckit.synth.utility import logit_fitted_values


def testlogit_fitted_values_matches_statsmodels():
    # reference: statsmodels' Newton-Raphson Logit, an independent implementation
    import statsmodels.api as sm

    rng = np.random.default_rng(0)
    n = 400
    X = np.column_stack([np.ones(n), rng.normal(size=n), rng.integers(0, 2, n)])
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + X[:, 1] - 0.8 * X[:, 2])))).astype(float)
    mu, k, converged = logit_fitted_values(X, y)
    ref = sm.Logit(y, X).fit(disp=0, tol=1e-12).predict(X)
    assert converged and k == 3
    np.testing.assert_allclose(mu, ref, atol=1e-8)


def test_collinear_columns_count_once():
    rng = np.random.default_rng(1)
    n = 200
    a = rng.normal(size=n)
    X = np.column_stack([np.ones(n), a, 2 * a, np.zeros(n)])
    y = (rng.random(n) < 0.5).astype(float)
    assert logit_fitted_values(X, y)[1] == 2


def _frame(seed, n=300):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.choice(list("pqr"), n), "b": rng.choice(["u", "v"], n), "x": rng.normal(size=n)})


def test_identical_files_have_zero_pmse_and_the_counted_parameters():
    d = _frame(2)
    u = propensity_utility(d, d.copy(), method="logit")
    assert u.pMSE == pytest.approx(0.0, abs=1e-20)
    # t ~ .^2: intercept; a (2), b (1), x (1); a:b (2), a:x (2), b:x (1) -> 10 parameters, df 9
    assert u.df == 9
    uc = propensity_utility(d, d.copy(), method="cart", n_permutations=5, rng=0)
    assert uc.pMSE == pytest.approx(0.0, abs=1e-20)


def test_standardised_pmse_uses_the_theoretical_null():
    d, s = _frame(3), _frame(4, n=250)
    u = propensity_utility(d, s, method="logit", maxorder=0)
    N = len(d) + len(s)
    c = len(s) / N
    # Snoke et al. (2018) eq. (3): E[pMSE] = (k - 1)(1 - c)^2 c / N; main effects: k - 1 = 2 + 1 + 1
    assert u.df == 4
    assert u.S_pMSE == pytest.approx(u.pMSE / (4 * (1 - c) ** 2 * c / N))


def test_cart_null_is_reproducible_with_a_seed():
    d, s = _frame(5), _frame(6)
    a = propensity_utility(d, s, method="cart", n_permutations=8, rng=3)
    b = propensity_utility(d, s, method="cart", n_permutations=8, rng=3)
    assert a.S_pMSE == b.S_pMSE and a.pMSE > 0


def test_missing_values_and_codes_get_indicators():
    d = pd.DataFrame({"x": [1.0, np.nan, -8.0, 4.0, 5.0, 6.0] * 10, "a": list("pqpqpq") * 10})
    u = propensity_utility(d, d.copy(), method="logit", maxorder=0, cont_na={"x": [-8]})
    assert u.variables == ("x", "a", "x_NA", "x_cna_1")


def test_table_measures_hand_computed():
    # one-way table: original counts (10, 30), synthetic (20, 20); N = 80, c = 1/2
    d = pd.DataFrame({"v": ["a"] * 10 + ["b"] * 30})
    s = pd.DataFrame({"v": ["a"] * 20 + ["b"] * 20})
    t = table_utility(d, s, ["v"])
    m = t.measures
    assert t.df == 1
    # expected (ts + td) c = (15, 25); difference ts - td c / (1 - c) = (10, -10)
    assert m["VW"] == pytest.approx(100 / 15 + 100 / 25)
    assert m["FT"] == pytest.approx(4 * ((math.sqrt(20) - math.sqrt(10)) ** 2 + (math.sqrt(20) - math.sqrt(30)) ** 2))
    assert m["pMSE"] == pytest.approx((100 / 15 + 100 / 25) * 0.5 * 0.25 / 80)
    jsd = 0.5 * (0.25 * math.log2(0.25 / 0.375) + 0.75 * math.log2(0.75 / 0.625)) + \
        0.5 * (0.5 * math.log2(0.5 / 0.375) + 0.5 * math.log2(0.5 / 0.625))
    assert m["JSD"] == pytest.approx(jsd)
    # cell propensities 2/3 (a) and 2/5 (b): F_syn(2/5) = 1/2, F_orig(2/5) = 3/4
    assert m["SPECKS"] == pytest.approx(0.25)
    # W: 20 synthetic at 2/5 tie with 30 originals (20 * 15) + 20 at 2/3 above 30, tie 10 (20 * 35)
    assert m["U"] == pytest.approx(1000.0)
    assert m["S_pMSE"] == pytest.approx(m["VW"])


def test_numeric_variables_are_grouped_by_quantiles():
    rng = np.random.default_rng(7)
    d = pd.DataFrame({"x": rng.normal(size=500)})
    t = table_utility(d, d.copy(), ["x"], ngroups=5)
    assert t.n_cells == 5 and t.measures["VW"] == pytest.approx(0.0)


def test_compare_fit_of_a_file_with_itself():
    rng = np.random.default_rng(8)
    n = 300
    d = pd.DataFrame({"y": rng.normal(size=n), "x": rng.normal(size=n), "g": rng.choice(list("ab"), n)})
    f = compare_fit(d, d.copy(), "y", ["x", "g"])
    assert f.mean_abs_std_diff == pytest.approx(0.0, abs=1e-12)
    assert f.mean_ci_overlap == pytest.approx(1.0)
    assert f.lack_of_fit == pytest.approx(0.0, abs=1e-12)
    s = d.assign(y=d["y"] + 0.5)
    g = compare_fit(d, s, "y", ["x", "g"])
    intercept = g.coefficients[0]
    assert intercept["std_diff"] == pytest.approx(0.5 / intercept["original_se"])
