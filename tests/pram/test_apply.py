"""Applying PRAM: identity changes nothing, empirical transitions match P (chi-square, fixed rng),
missing values untouched, reproducible streams that differ per variable and stratum, joint PRAM."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from sdckit import InputError
from sdckit.pram.apply import SamplingTable, code_counts, pram_codes, pram_frame_codes, transition_counts
from sdckit.pram.builders import identity_matrix, neighbour_array
from sdckit.pram.matrix import TransitionMatrix


def random_matrix(L, seed, zeros=True):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(L), size=L)
    if zeros:
        P[rng.random((L, L)) < 0.3] = 0.0
        np.fill_diagonal(P, P.diagonal() + 0.2)
    return TransitionMatrix(range(L), P / P.sum(axis=1, keepdims=True))


@settings(max_examples=30)
@given(codes=st.lists(st.integers(-1, 7), min_size=1, max_size=300), seed=st.integers(0, 2**32))
def test_identity_changes_nothing(codes, seed):
    c = np.asarray(codes, dtype=np.int32)
    assert np.array_equal(pram_codes(c, identity_matrix(range(8)), seed), c)


@pytest.mark.parametrize("sparse", [False, True])
def test_empirical_transitions_match_P_chi_square(sparse):
    L, n_per = 6, 20000
    m = random_matrix(L, 11)
    if sparse:
        m = TransitionMatrix(m.categories, sp.csr_matrix(m.P))
    codes = np.repeat(np.arange(L, dtype=np.int32), n_per)
    out = pram_codes(codes, m, 2024)
    T = transition_counts(codes, out, L)
    P = m.to_dense()
    for k in range(L):
        support = P[k] > 0
        assert T[k, ~support].sum() == 0                 # zero-probability moves never happen
        stat, pval = chisquare(T[k, support], n_per * P[k, support])
        assert pval > 1e-3, (k, T[k], P[k])             # fixed rng: deterministic


def test_missing_untouched_and_input_not_modified():
    rng = np.random.default_rng(0)
    codes = rng.integers(-1, 4, 5000).astype(np.int32)
    keep = codes.copy()
    m = TransitionMatrix(range(4), np.full((4, 4), 0.25))
    out = pram_codes(codes, m, 1)
    assert np.array_equal(codes, keep)
    assert np.array_equal(out < 0, codes < 0) and (out[codes < 0] == -1).all()
    assert out.dtype == np.int32
    has = codes >= 0
    assert abs((out[has] != codes[has]).mean() - 0.75) < 0.03  # 3/4 change under the uniform matrix


def test_same_rng_same_output_and_streams_differ_per_variable_and_stratum():
    rng = np.random.default_rng(5)
    c = rng.integers(0, 5, 4000).astype(np.int32)
    m = TransitionMatrix(range(5), np.full((5, 5), 0.2))
    codes = {"a": c, "b": c.copy()}
    shapes = {"a": 5, "b": 5}
    mats = {(("a",), "all"): m, (("b",), "all"): m}
    one = pram_frame_codes(codes, shapes, mats, 99)
    two = pram_frame_codes(codes, shapes, mats, 99)
    assert all(np.array_equal(one[v], two[v]) for v in codes)           # same rng, same output
    assert not np.array_equal(one["a"], one["b"])                          # own stream per variable
    assert not np.array_equal(one["a"], pram_frame_codes(codes, shapes, mats, 100)["a"])
    ss = np.random.SeedSequence(7)  # a SeedSequence object reused gives the same output too
    assert np.array_equal(pram_frame_codes(codes, shapes, mats, ss)["a"],
                          pram_frame_codes(codes, shapes, mats, ss)["a"])
    strata = np.repeat([0, 1], 2000)
    cs = {"a": np.tile(c[:2000], 2)}
    ms = {(("a",), 0): m, (("a",), 1): m}
    out = pram_frame_codes(cs, {"a": 5}, ms, 3, strata=strata)["a"]
    assert not np.array_equal(out[:2000], out[2000:])                     # own stream per stratum


def test_joint_pram_over_sparse_space():
    shape = (4, 3, 5)
    rng = np.random.default_rng(2)
    codes = {v: rng.integers(0, s, 30000).astype(np.int32) for v, s in zip("xyz", shape)}
    codes["y"][:100] = -1
    J = int(np.prod(shape))
    m = TransitionMatrix(range(J), neighbour_array(shape, 0.5))
    out = pram_frame_codes(codes, dict(zip("xyz", shape)), {(("x", "y", "z"), "all"): m}, 8,
                           joint=[("x", "y", "z")])
    differ = sum((out[v] != codes[v]).astype(int) for v in "xyz")
    assert differ.max() == 1                                    # one variable at a time, as P says
    assert abs((differ == 1).mean() - 0.5) < 0.02
    for v in "xyz":  # a record missing in the group keeps all its values
        assert np.array_equal(out[v][:100], codes[v][:100])


@pytest.mark.parametrize("L, seed", [(1, 0), (3, 1), (7, 3), (25, 4)])
def test_alias_tables_reproduce_P_exactly(L, seed):
    # the probability of each outcome, summed from the tables: (prob_e + sum over entries
    # aliasing to it of (1 - prob)) / row size; must equal P (independent of sampling)
    m = random_matrix(L, seed) if L > 1 else TransitionMatrix([0], [[1.0]])
    t = SamplingTable.from_matrix(m)
    E = np.zeros((L, L))
    for r in range(L):
        lo, hi = t.indptr[r], t.indptr[r + 1]
        for e in range(lo, hi):
            E[r, t.indices[e]] += t.prob[e] / (hi - lo)
            E[r, t.indices[t.alias[e]]] += (1 - t.prob[e]) / (hi - lo)
    assert np.abs(E - m.to_dense()).max() < 1e-14


def test_codes_checked():
    with pytest.raises(InputError, match="outside"):
        pram_codes(np.array([9]), random_matrix(7, 3), 0)
    with pytest.raises(InputError, match="integer"):
        pram_codes(np.array([0.5]), random_matrix(7, 3), 0)


@settings(max_examples=40)
@given(pairs=st.lists(st.tuples(st.integers(-1, 5), st.integers(0, 5)), min_size=0, max_size=200),
       dtype=st.sampled_from([np.int8, np.int16, np.int32, np.int64]))
def test_one_pass_counts_equal_bincount(pairs, dtype):
    # reference: numpy bincount of the observed codes and of k * L + l over observed records
    L = 6
    before = np.array([b for b, _ in pairs], dtype=dtype)
    after = np.array([a if b >= 0 else -1 for b, a in pairs], dtype=dtype)
    obs = before >= 0
    ref = np.bincount(before[obs].astype(np.int64), minlength=L)
    assert np.array_equal(code_counts(before, L), ref)
    ref_t = np.bincount(before[obs].astype(np.int64) * L + after[obs], minlength=L * L).reshape(L, L)
    assert np.array_equal(transition_counts(before, after, L), ref_t)


def test_counts_refuse_codes_outside_the_categories():
    with pytest.raises(InputError):
        code_counts(np.array([0, 3, 6], dtype=np.int32), 6)
    # a released code outside 0..L-1 leaves the one-pass count; the general count takes over
    t = transition_counts(np.array([1, 2], dtype=np.int32), np.array([1, -1], dtype=np.int32), 3)
    assert t.sum() == 2
