"""Noise: correlations kept in expectation by correlated noise, the attenuation of uncorrelated
noise, Kim's transformation, exact moment match, multiplicative noise, checker, bad input."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.errors import ParameterError
from sdckit.masking.noise import Noise, add_noise_array, check_noise
from sdckit.registry import build_step

SIGMA = np.array([[4.0, 2.4, -1.0], [2.4, 9.0, 1.5], [-1.0, 1.5, 1.0]])


def data(n, seed=0):
    return np.random.default_rng(seed).multivariate_normal([100.0, 50.0, 10.0], SIGMA, size=n)


def corr(X):
    return np.corrcoef(X, rowvar=False)


def test_correlated_noise_keeps_correlations_in_expectation():
    # Cov(x + e) = (1 + c) Sigma when Cov(e) = c Sigma (Kim 1986), so corr is unchanged in
    # expectation; sampling sd of a correlation at n = 200,000 is below 0.0023: tolerance 0.01
    X = data(200_000)
    Y = add_noise_array(X, 0.5, 11, method="correlated")
    np.testing.assert_allclose(corr(Y), corr(X), atol=0.01)
    np.testing.assert_allclose(np.cov(Y, rowvar=False), 1.5 * np.cov(X, rowvar=False), rtol=0.03, atol=0.05)


def test_uncorrelated_noise_attenuates_correlations():
    # with Var(e_j) = c s_j^2, corr(y_i, y_j) = corr(x_i, x_j) / (1 + c) in expectation
    X = data(200_000)
    Y = add_noise_array(X, 1.0, 12, method="additive")
    np.testing.assert_allclose(corr(Y), corr(X) / 2 + np.eye(3) / 2, atol=0.01)
    np.testing.assert_allclose(Y.var(axis=0), 2 * X.var(axis=0), rtol=0.02)


def test_kim_restores_means_and_covariances_in_expectation():
    X = data(200_000)
    Y = add_noise_array(X, 1.0, 13, method="correlated", restore="kim")
    np.testing.assert_allclose(Y.mean(axis=0), X.mean(axis=0), atol=0.02)
    np.testing.assert_allclose(np.cov(Y, rowvar=False), np.cov(X, rowvar=False), rtol=0.03, atol=0.05)
    assert check_noise(X, Y, 1.0, "correlated", "kim")["holds"]


@given(st.integers(5, 200), st.integers(0, 10**6), st.sampled_from(["additive", "correlated", "multiplicative"]))
def test_exact_restore_matches_moments(n, seed, method):
    X = data(n, seed)
    Y = add_noise_array(X, 0.3, seed, method=method, restore="exact")
    np.testing.assert_allclose(Y.mean(axis=0), X.mean(axis=0), rtol=1e-10)
    np.testing.assert_allclose(np.cov(Y, rowvar=False), np.cov(X, rowvar=False), rtol=1e-8, atol=1e-10)
    assert check_noise(X, Y, 0.3, method, "exact")["holds"]


def test_multiplicative_noise():
    X = data(100_000)
    Y = add_noise_array(X, 0.01, 14, method="multiplicative")
    f = Y / X
    assert f.mean() == pytest.approx(1.0, abs=0.001)            # E f = 1
    assert f.var() == pytest.approx(0.01, rel=0.02)              # Var f = level
    np.testing.assert_allclose(Y.mean(axis=0), X.mean(axis=0), rtol=0.002)


def test_checker_detects_wrong_level_and_missing_stays():
    X = data(20_000)
    Y = add_noise_array(X, 0.1, 15, method="additive")
    assert check_noise(X, Y, 0.1, "additive", "none")["holds"]
    assert not check_noise(X, Y, 0.2, "additive", "none")["holds"]   # the noise is half of that
    Yc = add_noise_array(X, 0.1, 15, method="additive")
    assert not check_noise(X, Yc, 0.1, "correlated", "none")["holds"]  # uncorrelated is not correlated
    X[[3, 8], 1] = np.nan
    Y = add_noise_array(X, 0.1, 16, method="correlated")
    assert np.array_equal(np.isnan(Y), np.isnan(X))


def test_bad_input():
    with pytest.raises(ParameterError, match="The 'level' parameter of Noise must be a number > 0. Got 0"):
        Noise(level=0)
    with pytest.raises(ParameterError, match="'kim' only with method 'correlated'"):
        Noise(kind="additive", restore="kim")
    df = pd.DataFrame({"x": [1.0, 2, 3, 5], "c": [2.0] * 4, "n": [1.0, np.nan, 2, 3]})
    md = Microdata(df)
    with pytest.raises(InputError, match="'c' is constant"):
        Noise(variables=["x", "c"]).apply(md)
    with pytest.raises(InputError, match=r"1 missing values \('n': 1 \(row 1\)\)"):
        Noise(variables=["x", "n"], restore="exact").apply(md)


def test_step_from_spec():
    df = pd.DataFrame(data(3000, 3), columns=["a", "b", "c"])
    md = Microdata(df, numeric_vars=["a", "b", "c"])
    for params in ({"level": 0.2}, {"level": 0.2, "kind": "additive"}, {"level": 0.05, "kind": "multiplicative"},
                   {"level": 0.5, "restore": "kim"}, {"level": 0.5, "restore": "exact"}):
        r = build_step("noise", params).apply(md, rng=5)
        assert all(g.holds for g in r.guarantees), (params, r.guarantees)
        assert r.summary["values_changed"] == 9000
    assert md.frame.equals(df)
    assert "mean after" in r.report_html()
