"""Estimation for analysts: t* P^{-1} and seed 000's equation (4) are unbiased (average over
fixed-seed runs within its standard error), the covariance matches the spread of the runs,
EM gives the ML point on the simplex, a singular P is refused naming its condition number."""

import itertools

import numpy as np
import pandas as pd
import pytest

from sdckit import InputError, Microdata
from sdckit.pram.apply import pram_codes
from sdckit.pram.builders import Identity, invariant_matrix, max_entropy_matrix
from sdckit.pram.estimate import estimate_frequencies, ml_estimate, moment_covariance, moment_estimate
from sdckit.pram.matrix import TransitionMatrix

RUNS = 400


def test_moment_estimator_unbiased_and_covariance_matches_runs():
    t = np.array([600, 250, 100, 40, 10])
    codes = np.repeat(np.arange(5), t).astype(np.int32)
    m = max_entropy_matrix(range(5), 0.7)
    seeds = np.random.SeedSequence(123).spawn(RUNS)
    est, var = np.empty((RUNS, 5)), np.empty((RUNS, 5))
    for r, s in enumerate(seeds):
        released = np.bincount(pram_codes(codes, m, s), minlength=5)
        est[r] = moment_estimate(released, m)
        var[r] = np.diag(moment_covariance(released, m))
    mean, se = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(RUNS)
    assert np.all(np.abs(mean - t) < 4 * se), (mean, t, se)   # unbiased
    # the estimated variance is unbiased for the spread of the runs (within sampling error)
    assert np.allclose(var.mean(axis=0), est.var(axis=0, ddof=1), rtol=0.2)
    # the closed form P^-T diag(t*) P^-1 - diag(t_hat) equals the textbook sandwich
    # P^-T (diag(t*) - P^T diag(t_hat) P) P^-1 (computed here independently)
    P, Pinv, t_star = m.P, np.linalg.inv(m.P), released.astype(float)
    t_hat = t_star @ Pinv
    sandwich = Pinv.T @ (np.diag(t_star) - P.T @ np.diag(t_hat) @ P) @ Pinv
    assert np.allclose(moment_covariance(t_star, m), sandwich, atol=1e-8)


def test_equation_4_with_unperturbed_y_is_unbiased():
    rng = np.random.default_rng(9)
    n = 3000
    x = rng.choice(4, n, p=[0.4, 0.3, 0.2, 0.1])
    y = np.where(rng.random(n) < 0.3 + 0.15 * x, "yes", "no")
    truth = pd.crosstab(x, y).to_numpy()                  # U_0(k; y)
    m = invariant_matrix(["a", "b", "c", "d"], np.bincount(x), min_diagonal=0.75).matrix
    labels = np.array(["a", "b", "c", "d"])
    seeds = np.random.SeedSequence(5).spawn(200)
    est = []
    for s in seeds:
        rel = labels[pram_codes(x.astype(np.int32), m, s)]
        e = estimate_frequencies(pd.DataFrame({"v": rel, "y": y}), m, ["v"], by="y")
        est.append(e.estimate)
    est = np.asarray(est)
    mean, se = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(len(seeds))
    assert e.groups == ("no", "yes")
    assert np.all(np.abs(mean - truth) < 4 * se + 1e-9)
    # the shares are seed 000's mu_hat(k; y) = (1/n) sum_l P^{-1}_{lk} U(l; y): sum to 1 over (k; y)
    assert e.shares.sum() == pytest.approx(1.0)


def test_identity_matrix_gives_the_released_table():
    m = TransitionMatrix(["a", "b"], np.eye(2))
    e = estimate_frequencies(pd.DataFrame({"v": ["a", "b", "b", None]}), m, ["v"])
    assert np.array_equal(e.estimate[:, 0], [1, 2]) and np.all(e.std_error == 0)
    tab = e.table()
    assert list(tab.columns) == ["v", "released", "estimate", "std_error", "ml_estimate"]


def test_singular_matrix_is_refused_with_condition_number():
    m = TransitionMatrix(["a", "b"], [[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(InputError, match="condition number") as e:
        moment_estimate([3, 4], m)
    assert "ml_estimate" in str(e.value)


def test_em_is_the_simplex_maximum():
    P = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])
    m = TransitionMatrix(range(3), P)
    t_star = np.array([2.0, 40.0, 58.0])
    assert moment_estimate(t_star, m).min() < 0          # the moment estimate leaves the simplex
    res = ml_estimate(t_star, m)
    assert res.converged and res.shares.min() >= 0 and res.shares.sum() == pytest.approx(1)

    def ll(pi):
        return float((t_star * np.log(pi @ P)).sum())

    # brute force over a grid of the simplex (independent of EM)
    grid = [np.array([a, b_, 1 - a - b_]) / 1.0 for a, b_ in itertools.product(np.linspace(0, 1, 201), repeat=2)
            if a + b_ <= 1]
    best = max(grid, key=ll)
    assert ll(res.shares) >= ll(best) - 1e-9
    assert np.abs(res.shares - best).max() < 0.01
    # inside the simplex the ML point is the moment estimate
    inside = np.array([30.0, 30.0, 40.0])
    assert np.allclose(ml_estimate(inside, m).shares, moment_estimate(inside, m) / 100, atol=1e-7)


def test_analyst_with_only_the_released_file_and_published_matrix(tmp_path):
    from sdckit.pram.steps import Pram

    rng = np.random.default_rng(1)
    n = 20000
    df = pd.DataFrame({"occ": rng.choice(["clerk", "farmer", "nurse", "pilot"], n, p=[0.5, 0.3, 0.18, 0.02]),
                       "sex": rng.choice(["f", "m"], n)})
    md = Microdata(df, key_vars=["occ", "sex"])
    result = Pram(["occ"], min_diagonal=0.7).apply(md, rng=4)
    (tmp_path / "pram_occ.csv").write_text(result.artifacts["pram_occ.csv"])
    released = result.microdata.data.to_csv(tmp_path / "released.csv", index=False)
    # --- the analyst's side: two files
    released = pd.read_csv(tmp_path / "released.csv")
    m = TransitionMatrix.read(tmp_path / "pram_occ.csv")
    e = estimate_frequencies(released, m, by="sex")
    truth = pd.crosstab(df["occ"], df["sex"]).to_numpy()
    assert m.variables == ("occ",)
    assert np.all(np.abs(e.estimate - truth) < 4.5 * e.std_error + 1e-9)
    with pytest.raises(InputError, match="not in the transition matrix: 'astronaut'"):
        estimate_frequencies(pd.DataFrame({"occ": ["astronaut", "clerk"]}), m)


def test_joint_released_file_maps_to_the_joint_space():
    from sdckit.pram.steps import Pram

    rng = np.random.default_rng(4)
    n = 40000
    df = pd.DataFrame({"a": rng.integers(0, 11, n), "b": rng.choice(list("pqrstuvwxy"), n),
                       "c": rng.integers(0, 10, n), "y": rng.integers(0, 2, n)})
    md = Microdata(df, key_vars=["a", "b", "c"])
    truth = pd.crosstab([df["a"], df["b"], df["c"]], df["y"]).to_numpy()   # C order: a slowest
    assert truth.shape == (1100, 2)
    ident = Pram(["a", "b", "c"], joint=True, matrix=Identity()).apply(md, rng=1)
    m = ident.matrices[(("a", "b", "c"), "all")]
    e = estimate_frequencies(ident.microdata.frame, m, by="y")
    assert np.array_equal(e.estimate, truth)                       # exact label mapping
    r = Pram(["a", "b", "c"], joint=True, min_diagonal=0.9).apply(md, rng=2)   # 1100 cells: sparse
    m = r.matrices[(("a", "b", "c"), "all")]
    assert m.is_sparse
    e = estimate_frequencies(r.microdata.frame, m, by="y")
    assert np.all(np.abs(e.estimate - truth) < 5 * e.std_error + 1e-9)
