"""Evolved invariant PRAM: every matrix ever produced is invariant and within the diagonal
bounds; same rng, same result; it beats random sdcMicro-style invariant matrices."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import InputError, ParameterError
from sdckit.pram.evolve import EvolvePRAM, Problem, random_sdcmicro_baselines, sdcmicro_invariant


def make_problem(seed, L=5, n=400, n_other=3):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(L, 3.0))
    v = rng.choice(L, n, p=p)
    v[:L] = np.arange(L)  # every category present
    others = [rng.integers(0, 4, n) for _ in range(n_other)]
    return Problem.from_codes(v, others, L)


@settings(max_examples=15)
@given(seed=st.integers(0, 10**6), L=st.integers(2, 6), d_min=st.floats(0.55, 0.85),
       width=st.floats(0.0, 0.14))
def test_every_matrix_is_invariant_and_within_bounds(seed, L, d_min, width):
    prob = make_problem(seed, L)
    d_max = d_min + width
    ea = EvolvePRAM(d_min=d_min, d_max=d_max, generations=8, population=8, pareto=True)
    seen = []
    real = ea._mutate

    def watching(F, p, rng):  # check every mutated child, as the algorithm makes it
        G = real(F, p, rng)
        seen.append(G)
        return G

    object.__setattr__(ea, "_mutate", watching)
    try:
        res = ea.run(prob, rng=seed)
    except InputError as exc:  # the LP proved no invariant matrix meets the bounds
        assert "no invariant PRAM matrix" in str(exc)
        return
    p = prob.p
    for F in seen:
        X = F / p[:, None]
        assert np.abs(p @ X - p).max() < 1e-12 and np.abs(X.sum(axis=1) - 1).max() < 1e-12
        d = np.diag(X)
        assert (d >= d_min - 1e-12).all() and (d <= d_max + 1e-12).all() and (X >= 0).all()
    assert res.max_invariance_error < 1e-12
    assert res.min_diagonal_seen >= d_min - 1e-12 and res.max_diagonal_seen <= d_max + 1e-12


def test_same_rng_same_result():
    prob = make_problem(1)
    a = EvolvePRAM(generations=20, population=10).run(prob, rng=5)
    b = EvolvePRAM(generations=20, population=10).run(prob, rng=5)
    np.testing.assert_array_equal(a.matrix, b.matrix)
    assert a.fitness == b.fitness


def test_sdcmicro_invariant_is_invariant():
    """p R = p for the Bayes construction, checked on random p (independent algebra)."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.dirichlet(np.ones(6))
        R = sdcmicro_invariant(p, rng.uniform(0.5, 0.99))
        np.testing.assert_allclose(p @ R, p, atol=1e-14)
        np.testing.assert_allclose(R.sum(axis=1), 1, atol=1e-14)


def test_risk_at_identity_counts_sample_uniques():
    """Hand case: with X = I each sample-unique cell contributes 1 / 1."""
    v = np.array([0, 0, 1, 1, 2])
    o = [np.array([0, 1, 0, 0, 0])]
    prob = Problem.from_codes(v, o, 3)
    # cells: (0,0) x1, (0,1) x1, (1,0) x2, (2,0) x1 -> 3 uniques
    assert prob.risk(np.eye(3)) == pytest.approx(3.0)


def test_evolved_beats_random_baselines():
    prob = make_problem(7, L=6, n=2000)
    ea = EvolvePRAM(d_min=0.7, d_max=0.95, generations=60, population=24)
    res = ea.run(prob, rng=2)
    base = min(ea.fitness_of(prob, X).fitness for X in random_sdcmicro_baselines(prob, 0.7, 0.95, 20, rng=3))
    assert res.fitness.fitness < base


def test_bad_input():
    with pytest.raises(ParameterError, match=r"'d_min' parameter of EvolvePRAM must be a number in \(0.5, 1\]"):
        EvolvePRAM(d_min=0.5)
    with pytest.raises(ParameterError, match="must be <= d_max"):
        EvolvePRAM(d_min=0.9, d_max=0.8)
    with pytest.raises(InputError, match="zero frequency"):
        Problem.from_codes(np.array([0, 0, 2]), [], 3)
    # a dominant category that no invariant matrix with these bounds can accommodate
    prob = Problem.from_codes(np.array([0] * 95 + [1] * 5), [], 2)
    with pytest.raises(InputError, match="no invariant PRAM matrix has every diagonal in"):
        EvolvePRAM(d_min=0.6, d_max=0.9).run(prob, rng=0)
