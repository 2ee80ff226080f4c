"""Optimal PRAM (Cator et al.): loss and gradient, certified optimum, restricted support, set
cover, the usual matrices, the pram step and the max_recognition_ratio gate, the experiment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from sdckit import Microdata
from sdckit.errors import InputError, ParameterError, SolverError
from sdckit.pram import optimal as opt
from sdckit.pram.loss import l2_loss
from sdckit.pram.recognition import (
    brute_force_ratios,
    normalize_combinations,
    problem_combinations,
    projection_codes,
    recognition_check,
)

ROOT = Path(__file__).resolve().parents[2]


def _data(seed, shape=(2, 2, 3), n=120, p_one=0.85):
    """Counts with a rare corner (independent variables, value 0 rare)."""
    rng = np.random.default_rng(seed)
    probs = np.ones(shape)
    for j, L in enumerate(shape):
        w = np.full(L, p_one / (L - 1))
        w[0] = 1 - p_one
        probs = probs * w.reshape([L if a == j else 1 for a in range(len(shape))])
    return rng.multinomial(n, probs.ravel() / probs.sum()).astype(float)


def _stochastic_near_identity(rng, N, eps=0.05):
    P = np.eye(N) + eps * rng.random((N, N))
    return P / P.sum(axis=1, keepdims=True)


# --------------------------------------------------------------------------- loss and gradient
def test_loss_equals_definition_by_records():
    # reference: section 3's double sum over records i and (k, l), by plain loops
    rng = np.random.default_rng(1)
    counts = np.array([3.0, 0.0, 5.0, 2.0])
    P = _stochastic_near_identity(rng, 4, 0.3)
    W = np.linalg.inv(P)
    records = np.repeat(np.arange(4), counts.astype(int))
    n = records.size
    ref = sum(W[l, k] ** 2 * P[x, l] for x in records for k in range(4) for l in range(4)) / n**2 - 1 / n
    assert opt.l2_gradient(P, counts)[0] == pytest.approx(ref, rel=1e-12)
    assert l2_loss(P, counts) == pytest.approx(ref, rel=1e-12)


def test_gradient_matches_finite_differences():
    # reference: central differences of the loss
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 20, 6).astype(float)
    P = _stochastic_near_identity(rng, 6, 0.2)
    f, G = opt.l2_gradient(P, counts)
    h = 1e-6
    for (i, j) in [(0, 0), (1, 3), (5, 2), (4, 4)]:
        E = np.zeros_like(P)
        E[i, j] = h
        num = (opt.l2_gradient(P + E, counts)[0] - opt.l2_gradient(P - E, counts)[0]) / (2 * h)
        assert G[i, j] == pytest.approx(num, rel=1e-5, abs=1e-12)


def test_restricted_closed_form_equals_general_loss():
    # reference: the general formula l2 = c.s / n^2 - 1/n on the assembled P
    rng = np.random.default_rng(3)
    N, sources, targets = 8, np.array([0, 2, 5]), np.array([1, 7])
    counts = np.array([30, 2, 25, 0, 4, 40, 9, 0], dtype=float)
    M = 0.01 * rng.random((3, 2))
    P = np.eye(N)
    for a, f in enumerate(sources):
        P[f, f] = 1 - M[a].sum()
        P[f, targets] = M[a]
    val, g, blocks = opt.restricted_terms(M, counts[sources], counts.sum(), order=2)
    assert val == pytest.approx(opt.l2_gradient(P, counts)[0], rel=1e-10)
    # gradient and Hessian of the closed form by finite differences
    h = 1e-7
    E = np.zeros_like(M)
    E[1, 0] = h
    fd = (opt.restricted_terms(M + E, counts[sources], counts.sum())[0]
          - opt.restricted_terms(M - E, counts[sources], counts.sum())[0]) / (2 * h)
    assert g[1, 0] == pytest.approx(fd, rel=1e-5)
    g2 = opt.restricted_terms(M + E, counts[sources], counts.sum(), order=1)[1]
    assert (g2[1] - g[1])[0] / h == pytest.approx(blocks[1][0, 0], rel=1e-4)


# --------------------------------------------------------------------------- optimum
def _slsqp_reference(counts, shape, combos, alpha):
    """Independent solver: scipy SLSQP over every entry of P, C1 written out by loops, started
    from the interior point 0.5 I + 0.5 / N (not from the identity the SQP uses)."""
    N = counts.size
    n = counts.sum()
    rows = []
    for pi in combos:
        codes = projection_codes(shape, pi)
        for k0 in range(codes.max() + 1):
            G = (codes == k0).astype(float)
            for m in np.flatnonzero((counts > 0) & (counts * alpha < 1)):
                row = np.zeros((N, N))
                row[m] += G
                row -= alpha * np.outer(counts, G)   # sum_G P_m. - alpha sum_l U_0(l) sum_G P_l.
                rows.append(row.ravel())
    A = np.array(rows)
    R = np.kron(np.eye(N), np.ones(N))
    res = minimize(lambda x: opt.l2_gradient(x.reshape(N, N), counts)[0] * n * n,
                   (0.5 * np.eye(N) + 0.5 / N).ravel(), method="SLSQP",
                   jac=lambda x: opt.l2_gradient(x.reshape(N, N), counts)[1].ravel() * n * n,
                   bounds=[(0, 1)] * N * N,
                   constraints=[{"type": "ineq", "fun": lambda x: -A @ x, "jac": lambda x: -A},
                                {"type": "eq", "fun": lambda x: R @ x - 1, "jac": lambda x: R}],
                   options={"maxiter": 1000, "ftol": 1e-15})
    return res.fun / n**2, res.x.reshape(N, N)


def test_full_optimum_matches_independent_solver():
    # reference: scipy SLSQP on the same problem (written independently, all N^2 entries);
    # trust-constr reaches the same value, 0.0026692567, in 11 s
    shape = (2, 3)
    counts = np.array([1.0, 4.0, 12.0, 3.0, 30.0, 25.0])
    combos = [(0,), (1,), (0, 1)]
    res = opt.optimal_matrix(counts, shape, combos, 0.2)
    ref, P_ref = _slsqp_reference(counts, shape, combos, 0.2 * (1 - opt.SAFETY))
    assert max(brute_force_ratios(P_ref, counts, shape, combos).values()) <= 0.2 + 1e-9
    assert res.check.holds
    assert res.loss == pytest.approx(ref, rel=1e-4)


@settings(max_examples=8)
@given(seed=st.integers(0, 10_000), alpha=st.sampled_from([0.1, 0.2, 0.25]),
       gamma=st.sampled_from([None, 0.5]))
def test_optimum_meets_c1_by_brute_force(seed, alpha, gamma):
    # reference: eq. (1) by loops over every (m, pi, k0)
    shape = (2, 2, 3)
    counts = _data(seed, shape, n=150)
    combos = normalize_combinations(2, ["a", "b", "c"])
    for support in ("full", "restricted"):
        try:
            res = opt.optimal_matrix(counts, shape, combos, alpha, gamma=gamma, support=support)
        except SolverError as exc:  # restricted support can be infeasible; it must say why
            assert support == "restricted" and "binding constraints" in str(exc)
            continue
        ratios = brute_force_ratios(res.P, counts, shape, combos)
        assert max(ratios.values()) <= alpha
        P = res.P.toarray() if sp.issparse(res.P) else res.P
        assert np.allclose(P.sum(axis=1), 1, atol=1e-12) and P.min() >= 0
        if gamma:
            assert np.diag(P).min() >= gamma - 1e-9


def test_full_beats_restricted_and_usual_matrices():
    shape = (2, 2, 2, 3)
    counts = _data(7, shape, n=600)
    combos = normalize_combinations(3, list("abcd"))
    assert problem_combinations(counts, shape, combos, 0.1)
    full = opt.optimal_matrix(counts, shape, combos, 0.1)
    restricted = opt.optimal_matrix(counts, shape, combos, 0.1, support="restricted")
    assert full.check.holds and restricted.check.holds
    # the restricted support is feasible for the full problem: the full optimum is not worse
    assert full.loss <= restricted.loss * (1 + 1e-3)
    assert sp.issparse(restricted.P)
    for kind in ("invariant", "max_entropy"):
        usual = opt.weakest_usual(kind, counts, shape, combos, 0.1)
        assert usual["holds"] and usual["max_ratio"] <= 0.1
        assert full.loss < usual["l2_loss"]


def test_identity_when_nothing_is_rare():
    counts = np.full(8, 50.0)
    res = opt.optimal_matrix(counts, (2, 2, 2), [(0, 1, 2)], 0.1)
    assert np.array_equal(res.P, np.eye(8)) and res.loss == 0 and res.expected_changes == 0


def test_gamma_too_high_names_binding_constraints():
    shape = (2, 3)
    counts = np.array([1.0, 4.0, 12.0, 3.0, 30.0, 25.0])
    with pytest.raises(SolverError, match="binding constraints: C1"):
        opt.optimal_matrix(counts, shape, [(0, 1)], 0.2, gamma=0.999)


def test_bad_input():
    counts = np.array([3.0, 2.0, 1.0, 2.0])
    with pytest.raises(ParameterError, match="'alpha' parameter of OptimalPRAM"):
        opt.optimal_matrix(counts, (2, 2), [(0,)], 1.0)
    with pytest.raises(InputError, match="n = 8 records < 1/alpha = 10"):
        opt.optimal_matrix(counts, (2, 2), [(0,)], 0.1)
    big = np.ones(25 * 25)
    with pytest.raises(InputError, match="use support='restricted'"):
        opt.optimal_matrix(big, (25, 25), [(0,)], 0.5)
    with pytest.raises(ParameterError, match="support"):
        opt.optimal_matrix(counts, (2, 2), [(0,)], 0.5, support="sparse")


# --------------------------------------------------------------------------- restricted support
@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), method=st.sampled_from(["milp", "greedy"]))
def test_targets_cover_every_problem(seed, method):
    shape = (3, 2, 4, 3)
    counts = _data(seed, shape, n=400, p_one=0.9)
    combos = normalize_combinations(3, list("abcd"))
    problems = problem_combinations(counts, shape, combos, 0.1)
    targets, rule = opt.target_cover(counts, shape, combos, problems, method=method)
    for p, k in problems:
        assert (projection_codes(shape, combos[p])[targets] == k).any()
    if method == "milp" and problems:  # the MILP cover is never larger than the greedy one
        greedy, _ = opt.target_cover(counts, shape, combos, problems, method="greedy")
        assert targets.size <= greedy.size and "MILP" in rule


def test_restricted_on_a_larger_sparse_space():
    rng = np.random.default_rng(5)
    shape = (6, 5, 8, 6, 5)
    N = int(np.prod(shape))
    w = rng.gamma(0.3, size=N)
    counts = rng.multinomial(8_000, w / w.sum()).astype(float)
    combos = normalize_combinations(3, list("abcde"))
    res = opt.optimal_matrix(counts, shape, combos, 0.1, support="restricted", gamma=0.9)
    assert sp.issparse(res.P) and res.P.nnz < 3 * N
    assert res.check.holds and res.min_diagonal >= 0.9 - 1e-12
    assert res.check_before.max_ratio > 0.1


# --------------------------------------------------------------------------- usual matrices
def test_kron_shortcuts_equal_general_computation():
    # reference: recognition_check and l2_loss on the explicit Kronecker product
    shape = (2, 3, 2)
    counts = _data(11, shape, n=90)
    combos = normalize_combinations(2, list("abc"))
    for kind in ("invariant", "max_entropy"):
        mats = opt.usual_family(kind, counts, shape, 0.3)
        P = np.kron(np.kron(mats[0], mats[1]), mats[2])
        assert opt.kron_recognition_max(mats, counts, shape, combos) == pytest.approx(
            recognition_check(P, counts, shape, combos).max_ratio, rel=1e-12)
        loss, changes = opt.kron_loss(mats, counts, shape)
        assert loss == pytest.approx(l2_loss(P, counts), rel=1e-10)
        assert changes == pytest.approx(counts @ (1 - np.diag(P)), rel=1e-12)
    p = counts.reshape(shape).sum(axis=(1, 2))
    inv = opt.usual_family("invariant", counts, shape, 0.3)[0]
    assert np.allclose(p @ inv, p)  # invariant: p P = p


# --------------------------------------------------------------------------- pram step and gate
def _census_like(seed=0, n=600):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.choice(["x", "y"], n, p=[0.1, 0.9]),
                         "b": rng.choice(["p", "q", "r"], n, p=[0.05, 0.45, 0.5]),
                         "c": rng.choice(["u", "v"], n, p=[0.15, 0.85]),
                         "z": rng.normal(size=n)})


def test_pram_step_optimal_and_gate():
    from sdckit.pram.steps import Pram
    from sdckit.registry import gate_check

    md = Microdata(_census_like(), key_vars=["a", "b", "c"])
    step = Pram(variables=["a", "b", "c"], matrix=opt.Optimal(alpha=0.1, combinations=2), joint=True)
    res = step.apply(md, rng=3)
    assert all(g.holds for g in res.guarantees)
    ev = next(iter(res.evidence.values()))
    assert ev["c1_holds"] and ev["max_ratio_after"] <= 0.1 < ev["max_ratio_before"]
    assert ev["figure1"]["frequency"] and ev["destinations"]
    html = opt.report_section(ev)
    assert "<img" in html and "changed records go to" in html
    gate = gate_check("max_recognition_ratio")
    out = gate.check(md, res.microdata, [res], 0.1)
    assert out.passed and out.value["max_ratio"] <= 0.1
    # before PRAM: P = I, ratio 1 / (smallest U_pi(k0)) over 3-combinations (hand: the count
    # of the rarest (a, b, c) cell)
    u = md.frame.groupby(["a", "b", "c"]).size()
    before = gate.check(md, md, [], 0.1)
    assert before.value["max_ratio"] == pytest.approx(1 / u.min())
    assert not before.passed


def test_pram_step_optimal_needs_joint_and_alpha():
    from sdckit.pram.steps import Pram

    md = Microdata(_census_like(), key_vars=["a", "b", "c"])
    with pytest.raises(InputError, match="joint = true"):
        Pram(variables=["a", "b"], matrix=opt.Optimal(alpha=0.1)).apply(md, rng=1)
    # alpha is required: the table form names it, the Python form cannot be built without it
    with pytest.raises(InputError, match=r"Optimal's parameters \(alpha, .*alpha required"):
        Pram(variables=["a", "b"], matrix={"type": "optimal"}, joint=True)
    with pytest.raises(TypeError, match="alpha"):
        opt.Optimal()
    with pytest.raises(InputError, match="'zz'"):
        Pram(variables=["a", "b"], matrix=opt.Optimal(alpha=0.1, combinations=[["a", "zz"]]),
             joint=True).apply(md, rng=1)


# --------------------------------------------------------------------------- the experiment
def _run_experiment(*args) -> dict:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "cator_experiment.py"), *args],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_experiment_quick(tmp_path):
    line = _run_experiment("--quick", "--out", str(tmp_path / "f1.png"))
    assert (tmp_path / "f1.png").stat().st_size > 1000
    for key in ("alpha", "n", "n_elements", "n_rare", "max_ratio", "min_diagonal", "expected_changes",
                "l2_loss", "seconds", "invariant_l2_loss", "max_entropy_l2_loss"):
        assert key in line
    assert line["max_ratio"] <= line["alpha"] and line["c1_holds"]
    assert line["l2_loss"] < line["max_entropy_l2_loss"] and line["l2_loss"] < line["invariant_l2_loss"]


@pytest.mark.slow
def test_experiment_full_scale(tmp_path):
    # the figures for the paper's experiment (48 elements, n = 2,500, alpha = 0.1)
    line = _run_experiment("--out", str(tmp_path / "f1.png"))
    assert line["n_elements"] == 48 and line["n"] == 2500
    assert line["max_ratio"] <= 0.1
    assert line["min_diagonal"] >= 0.99
    assert line["expected_changes"] < 20
    assert line["l2_loss"] < 1e-5
    assert line["l2_loss"] < min(line["invariant_l2_loss"], line["max_entropy_l2_loss"])
