"""Cyclic perturbation: designs cover every cell equally, margins are kept, the seed's example."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError, ParameterError
from sdckit.tables.cyclic import (
    CyclicPerturbation,
    check_cyclic,
    coverage,
    cycle_design,
    shift_cycles,
    shift_cycles_3way,
)

ORIGINAL = np.array([[15, 1, 3, 1], [20, 10, 10, 15], [3, 10, 10, 2], [12, 14, 7, 2]])    # seed 002
PERTURBED = np.array([[16, 0, 2, 2], [21, 11, 9, 14], [2, 11, 11, 1], [11, 13, 8, 3]])   # seed 002


@given(st.integers(2, 7), st.integers(2, 7))
@settings(max_examples=30)
def test_shift_design_covers_each_cell_twice(R, C):
    cyc = shift_cycles(R, C)
    assert cyc.shape == (max(R, C), R, C)
    assert (coverage(cyc) == 2).all()
    assert not cyc.sum(axis=1).any() and not cyc.sum(axis=2).any()
    assert set(np.unique(cyc)) <= {-1, 0, 1}


@given(st.integers(2, 4), st.integers(2, 4), st.integers(2, 4))
@settings(max_examples=20)
def test_3way_design_keeps_2way_margins(I, J, K):
    cyc = shift_cycles_3way((I, J, K))
    assert (coverage(cyc) == 4).all()
    for axis in (1, 2, 3):
        assert not cyc.sum(axis=axis).any()


def test_basic_design_coverage():
    assert (coverage(cycle_design((3, 4), "basic")) == (3 - 1) * (4 - 1)).all()


def test_seed_design_is_the_shift_design():
    # seed 002 "Cyclic Perturbation: Details": cycle k has + at (i, i+k) and - at (i, i+k+1)
    for k, c in enumerate(shift_cycles(4, 4)):
        expected = np.zeros((4, 4), int)
        for i in range(4):
            expected[i, (i + k) % 4] += 1
            expected[i, (i + k + 1) % 4] -= 1
        assert np.array_equal(c, expected)


def test_seed_example_reconstructed():
    # the seed's perturbed table is the original plus cycle 1 minus cycle 3 (unique in {-1,0,1}^4)
    cyc = shift_cycles(4, 4)
    hits = [e for e in itertools.product([-1, 0, 1], repeat=4)
            if np.array_equal(ORIGINAL + np.tensordot(np.array(e), cyc, axes=1), PERTURBED)]
    assert hits == [(1, 0, -1, 0)]
    checks = check_cyclic(ORIGINAL, PERTURBED, cyc, np.array(hits[0]))
    assert checks["margins_kept"] and checks["consistent"] and checks["within_coverage"]


tables = st.integers(2, 5).flatmap(lambda R: st.integers(2, 5).flatmap(
    lambda C: st.lists(st.integers(0, 6), min_size=R * C, max_size=R * C).map(lambda v: np.array(v).reshape(R, C))))


@given(tables, st.floats(0, 0.5), st.floats(0, 0.5), st.integers(0, 2**32 - 1))
@settings(max_examples=50)
def test_perturbation_keeps_margins(t, alpha, beta, seed):
    before = t.copy()
    res = CyclicPerturbation(alpha=alpha, beta=beta).apply(t, rng=seed)
    assert np.array_equal(t, before)
    assert all(g.holds for g in res.guarantees)
    assert np.array_equal(res.perturbed.sum(0), t.sum(0)) and np.array_equal(res.perturbed.sum(1), t.sum(1))
    assert (res.perturbed >= 0).all() and (np.abs(res.perturbed - t) <= 2).all()


def test_3way_perturbation_keeps_2way_margins():
    t = np.random.default_rng(0).integers(0, 5, (3, 4, 2))
    res = CyclicPerturbation(0.3, 0.3).apply(t, rng=4)
    for axis in range(3):
        assert np.array_equal(res.perturbed.sum(axis), t.sum(axis))
    assert res.checks["consistent"]


def test_coin_frequencies():
    # with no zeros near, the applied signs follow (alpha, beta, 1 - alpha - beta)
    t = np.full((4, 4), 50)
    res = [CyclicPerturbation(0.2, 0.3).apply(t, rng=s).applied for s in range(3000)]
    a = np.concatenate(res)
    assert abs((a == 1).mean() - 0.2) < 0.02 and abs((a == -1).mean() - 0.3) < 0.02


def test_bad_settings():
    with pytest.raises(ParameterError, match="'alpha \\+ beta' parameter"):
        CyclicPerturbation(0.7, 0.6)
    with pytest.raises(InputError, match="change a fixed margin"):
        CyclicPerturbation().apply(ORIGINAL, cycles=np.ones((1, 4, 4), int))
    with pytest.raises(InputError, match="negative count"):
        CyclicPerturbation().apply([[1, -2], [3, 4]])
