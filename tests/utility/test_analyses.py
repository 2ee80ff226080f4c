"""Operational utility check: analyses run on both data sets and compared side by side."""

import math

import numpy as np
import pandas as pd
import pytest

from sdckit import InputError, Microdata
from sdckit.utility.analyses import (
    LinearRegression,
    LogisticRegression,
    PrincipalComponents,
    UserAnalysis,
    analysis_from_dict,
    compare_analyses,
)


def data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "g": rng.choice(["u", "v", "w"], n)})
    df["y"] = 1 + 2 * df["a"] - df["b"] + (df["g"] == "v") * 0.5 + rng.normal(size=n)
    return df


def test_ols_matches_normal_equations():
    df = data()
    est = LinearRegression("y", ["a", "b"]).run(df)
    # independent computation: least squares and sigma^2 (X'X)^-1 by numpy
    x = np.column_stack([np.ones(len(df)), df["a"], df["b"]])
    beta, *_ = np.linalg.lstsq(x, df["y"].to_numpy(), rcond=None)
    resid = df["y"].to_numpy() - x @ beta
    se = np.sqrt(np.diag(resid @ resid / (len(df) - 3) * np.linalg.inv(x.T @ x)))
    assert [est["estimates"][k] for k in ("const", "a", "b")] == pytest.approx(beta)
    assert [est["se"][k] for k in ("const", "a", "b")] == pytest.approx(se)


def test_comparison_in_units_of_the_original_se():
    df = data()
    rel = df.copy()
    rel["y"] = rel["y"] + 0.3 * rel["a"]  # shifts the slope of a by exactly 0.3
    cmp = compare_analyses(df, rel, [LinearRegression("y", ["a", "b", "g"])])
    t = cmp.to_frame().set_index("quantity")
    assert t.loc["a", "difference"] == pytest.approx(0.3)
    assert t.loc["a", "diff_in_se"] == pytest.approx(0.3 / t.loc["a", "original_se"])
    assert t.loc["b", "difference"] == pytest.approx(0.0, abs=1e-10)
    assert {"g[v]", "g[w]"} <= set(t.index)  # categorical regressor as dummies
    assert cmp.max_rel_diff() == pytest.approx(t.loc["a", "rel_diff"])
    same = compare_analyses(Microdata(df), Microdata(df), [LinearRegression("y", ["a", "b"])])
    assert same.max_rel_diff() == 0.0


def test_missing_released_records_leave_the_fit():
    df = data()
    rel = df.copy()
    rel.loc[rel.index[:10], ["y", "a"]] = np.nan
    row = compare_analyses(df, rel, [LinearRegression("y", ["a"])]).rows[0]
    assert (row["n_original"], row["n_released"]) == (400, 390)


def test_logistic_with_one_binary_regressor_has_closed_form():
    # MLE by hand: intercept = logit(P(y=1|x=0)), slope = logit(P(y=1|x=1)) - intercept
    x = np.r_[np.zeros(100), np.ones(100)]
    y = np.r_[np.ones(20), np.zeros(80), np.ones(70), np.zeros(30)]
    df = pd.DataFrame({"x": x, "y": y})
    est = LogisticRegression("y", ["x"]).run(df)["estimates"]
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    assert est["const"] == pytest.approx(logit(0.2), abs=1e-6)
    assert est["x"] == pytest.approx(logit(0.7) - logit(0.2), abs=1e-6)
    with pytest.raises(InputError, match="must be 0/1"):
        LogisticRegression("y", ["x"]).run(df.assign(y=df["y"] * 2))


def test_pca_shares_and_loading_angles():
    # two standardised variables with correlation r: eigenvalues 1 +- r, shares (1 +- r) / 2
    rng = np.random.default_rng(1)
    z = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], 3000)
    df = pd.DataFrame({"u": z[:, 0], "v": z[:, 1]})
    r = df["u"].corr(df["v"])
    est = PrincipalComponents(["u", "v"]).run(df)["estimates"]
    assert est["explained[1]"] == pytest.approx((1 + r) / 2)
    cmp = compare_analyses(df, df.assign(u=-df["u"] * 3), [PrincipalComponents(["u", "v"])])
    angles = [row["released"] for row in cmp.rows if row["quantity"].startswith("loading_angle")]
    # flipping and rescaling u: the correlation changes sign, loadings rotate by 90 degrees
    assert angles == pytest.approx([90.0, 90.0], abs=1e-6)
    cmp2 = compare_analyses(df, df * 2.0, [PrincipalComponents(["u", "v"])])
    assert [row["released"] for row in cmp2.rows if "angle" in row["quantity"]] == pytest.approx([0, 0], abs=1e-6)


def test_user_function_and_spec_tables():
    df = data()
    cmp = compare_analyses(df, df.assign(a=df["a"] + 1),
                           [UserAnalysis("mean of a", lambda f: f["a"].mean()),
                            UserAnalysis("quantiles", lambda f: f["b"].quantile([0.5, 0.9]))])
    t = cmp.to_frame()
    assert t.loc[t.analysis == "mean of a", "difference"].iloc[0] == pytest.approx(1.0)
    assert len(t[t.analysis == "quantiles"]) == 2
    a = analysis_from_dict({"kind": "pca", "variables": ["a", "b"], "n_components": 1})
    assert isinstance(a, PrincipalComponents)
    with pytest.raises(Exception, match="kind"):
        analysis_from_dict({"kind": "anova"})
    with pytest.raises(InputError, match="'zz' does not exist"):
        compare_analyses(df, df, [LinearRegression("zz", ["a"])])
    html = cmp.report_html()
    assert "<table class='analyses'>" in html and "mean of a" in html


def test_failed_release_analysis_is_listed_when_asked():
    df = data()
    rel = df.copy()
    rel[["y", "a", "b"]] = np.nan
    cmp = compare_analyses(df, rel, [LinearRegression("y", ["a"])], raise_errors=False)
    assert cmp.errors and not cmp.rows
