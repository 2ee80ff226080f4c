"""The C1 checker (eq. (1)) and the reductions of section 4 against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError, ParameterError
from sdckit.pram.recognition import (
    brute_force_ratios,
    combination_counts,
    normalize_combinations,
    problem_combinations,
    recognition_check,
    reduced_check_set,
    reduced_max_ratio,
)


def _random_case(seed: int, *, gamma: float | None = None, sparse_rows: bool = False):
    """Small joint space, counts with rare and absent elements, a row-stochastic P."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(2, 4, size=int(rng.integers(2, 4))))
    N = int(np.prod(shape))
    counts = rng.choice([0, 0, 1, 2, 3, 5, 12, 30], size=N).astype(float)
    counts[rng.integers(N)] += 1  # at least one record
    P = rng.random((N, N)) * (rng.random((N, N)) < (0.3 if sparse_rows else 0.8))
    P += np.eye(N) * 1e-3
    P /= P.sum(axis=1, keepdims=True)
    if gamma is not None:  # diag >= gamma: mix with the identity
        lam = gamma + (1 - gamma) * rng.random(N)
        P = lam[:, None] * np.eye(N) + (1 - lam[:, None]) * P
    size = int(rng.integers(1, len(shape) + 1))
    combos = tuple(itertools.combinations(range(len(shape)), size))
    return shape, counts, P, combos


def _brute_violations(ratios, alpha):
    return {key for key, r in ratios.items() if r > alpha}


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), alpha=st.sampled_from([0.05, 0.1, 0.25, 0.5]),
       sparse=st.booleans())
def test_checker_equals_brute_force(seed, alpha, sparse):
    # reference: eq. (1) by explicit loops over m, pi, k0 and k (brute_force_ratios)
    shape, counts, P, combos = _random_case(seed, sparse_rows=sparse)
    ref = brute_force_ratios(P, counts, shape, combos)
    got = recognition_check(sp.csr_matrix(P) if sparse else P, counts, shape, combos, alpha)
    assert got.max_ratio == pytest.approx(max(ref.values()), rel=1e-12)
    assert {(v["element"], v["combination"], v["k0"]) for v in got.violations} == \
        _brute_violations(ref, alpha)
    worst = ref[(got.element, got.combination, got.k0)]
    assert worst == pytest.approx(got.max_ratio, rel=1e-12)
    for v in got.violations:
        assert v["ratio"] == pytest.approx(ref[(v["element"], v["combination"], v["k0"])], rel=1e-12)


def test_identity_gives_one_over_u_pi():
    # paper, section 2: for P = I the ratio is 1 / U_pi(k0) with k0 = m_pi
    shape = (2, 3, 2)
    counts = np.array([5, 0, 1, 7, 2, 9, 4, 4, 0, 3, 6, 1], dtype=float)
    combos = normalize_combinations(2, ["a", "b", "c"])
    got = recognition_check(np.eye(12), counts, shape, combos)
    smallest = min(combination_counts(counts, shape, pi)[combination_counts(counts, shape, pi) > 0].min()
                   for pi in combos)
    assert got.max_ratio == pytest.approx(1.0 / smallest)


def test_constant_matrix_gives_one_over_n():
    # paper, section 2: constant P gives 1/n for every (m, pi, k0)
    shape = (3, 2)
    counts = np.array([4, 0, 1, 2, 0, 3], dtype=float)
    got = recognition_check(np.full((6, 6), 1 / 6), counts, shape, [(0,), (1,), (0, 1)], 0.1)
    assert got.max_ratio == pytest.approx(1 / counts.sum())
    assert got.holds


def test_absent_combination_is_checked():
    # hand computation: X = {0,1} x {0,1}; counts (0,0):20, (0,1):1, (1,0):20, (1,1):0.
    # The rare (0,1) goes to the absent (1,1) w.p. 0.5: on pi = (0, 1), k0 = (1,1) the ratio
    # is 0.5 / (1 * 0.5) = 1 (and 1 on its own k0 = (0,1) too).
    shape = (2, 2)
    counts = np.array([20, 1, 20, 0], dtype=float)
    P = np.eye(4)
    P[1] = [0, 0.5, 0, 0.5]
    got = recognition_check(P, counts, shape, [(0, 1)], 0.1)
    assert got.max_ratio == pytest.approx(1.0)
    found = {(v["element"], v["k0"]): v["ratio"] for v in got.violations}
    assert found == {(1, (1, 1)): pytest.approx(1.0), (1, (0, 1)): pytest.approx(1.0)}
    # the reductions keep the absent k0 for every gamma (no diagonal term in its denominator)
    kept = reduced_check_set(counts, shape, [(0, 1)], 0.1, gamma=0.5)
    assert (1, 0, 3) in kept


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), alpha=st.sampled_from([0.05, 0.1, 0.2]),
       gamma=st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]))
def test_reductions_equal_full_check(seed, alpha, gamma):
    # reference: the brute-force check over every (m, pi, k0)
    shape, counts, P, combos = _random_case(seed, gamma=gamma)
    assert np.diag(P).min() >= gamma - 1e-12
    ref = brute_force_ratios(P, counts, shape, combos)
    full = _brute_violations(ref, alpha)
    best, viol = reduced_max_ratio(P, counts, shape, combos, alpha, gamma)
    got = {(m, combos[p], tuple(int(x) for x in np.unravel_index(k, [shape[j] for j in combos[p]])))
           for m, p, k, _ in viol}
    assert got == full
    assert (best > alpha) == (max(ref.values()) > alpha)
    # ineq. (2) alone (no gamma) also finds every violation
    _, viol2 = reduced_max_ratio(P, counts, shape, combos, alpha, None)
    assert len(viol2) == len(full)


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), gamma=st.sampled_from([0.8, 0.95]))
def test_reduction_bounds_hold(seed, gamma):
    # every triple the reductions drop has a brute-force ratio within its bound
    alpha = 0.1
    shape, counts, P, combos = _random_case(seed, gamma=gamma)
    ref = brute_force_ratios(P, counts, shape, combos)
    kept = set()
    for m, p, k in reduced_check_set(counts, shape, combos, alpha, gamma):
        pi = combos[p]
        kept.add((m, pi, tuple(int(x) for x in np.unravel_index(k, [shape[j] for j in pi]))))
    for (m, pi, k0), r in ref.items():
        if (m, pi, k0) not in kept:
            assert r <= alpha + 1e-12
    for (m, _pi, _k0), r in ref.items():  # ineq. (2)
        assert r <= 1 / counts[m] + 1e-12


def test_problem_combinations():
    shape = (2, 2)
    counts = np.array([20, 1, 20, 0], dtype=float)
    # U_{pi=(1,)}: b=0 -> 40, b=1 -> 1; U_{(0,1)}: (0,1) -> 1
    assert problem_combinations(counts, shape, [(1,), (0, 1)], 0.1) == [(0, 1), (1, 1)]


def test_bad_combinations():
    with pytest.raises(InputError, match="'zz'.*not one of the key variables"):
        normalize_combinations([["a", "zz"]], ["a", "b"])
    with pytest.raises(ParameterError, match="combinations"):
        normalize_combinations(4, ["a", "b", "c"])
    with pytest.raises(ParameterError, match="alpha"):
        recognition_check(np.eye(4), np.ones(4), (2, 2), [(0,)], 1.5)
    with pytest.raises(InputError, match="joint space"):
        recognition_check(np.eye(3), np.ones(4), (2, 2), [(0,)], 0.1)
