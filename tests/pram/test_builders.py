"""Matrix builders: invariance p R = p, the min_diagonal guarantee on the FINAL matrix for every
category (rare ones included), sdcMicro's construction and its weakness, the registry."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import InputError
from sdckit.pram import builders as b
from sdckit.pram.matrix import TransitionMatrix

counts_st = st.lists(st.integers(0, 5000), min_size=2, max_size=12).filter(lambda c: sum(c) > 0)


def sdcmicro_reference(p, pds, alpha):
    """Transcription of sdcMicro's R loops (pram.R): P, Qest[k, j] = P[j, k] p[j] / s, R = P Qest."""
    L = len(p)
    P = np.empty((L, L))
    for i in range(L):
        P[i, :] = (1 - pds[i]) / (L - 1)
        P[i, i] = pds[i]
    Q = np.empty((L, L))
    for k in range(L):
        s = sum(p[j] * P[j, k] for j in range(L))
        for j in range(L):
            Q[k, j] = P[j, k] * p[j] / s
    return alpha * (P @ Q) + (1 - alpha) * np.eye(L)


@settings(max_examples=40)
@given(counts=counts_st, m=st.floats(0.3, 0.97), alpha=st.floats(0.2, 1.0),
       base=st.sampled_from(["proportional", "uniform"]))
def test_invariant_keeps_p_and_min_diagonal_on_final_matrix(counts, m, alpha, base):
    p = np.asarray(counts, float)
    built = b.invariant_matrix(range(p.size), p, min_diagonal=m, alpha=alpha, base=base)
    R = built.matrix.P
    assert np.abs(p / p.sum() @ R - p / p.sum()).max() < 1e-12          # p R = p
    assert np.abs(R.sum(axis=1) - 1).max() <= 1e-12
    assert R.min() >= 0
    assert np.diag(R).min() >= m                                         # every category, rare or empty
    assert built.base_diagonal < 1


@settings(max_examples=25)
@given(seed=st.integers(0, 10**6), L=st.integers(2, 9), pd=st.floats(0.5, 0.95), alpha=st.floats(0.1, 1.0))
def test_bayes_inverse_gives_invariance_and_matches_sdcmicro(seed, L, pd, alpha):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(L))
    pds = rng.uniform(pd, 1, L)
    ref = sdcmicro_reference(p, pds, alpha)
    P = np.repeat(((1 - pds) / (L - 1))[:, None], L, axis=1)
    np.fill_diagonal(P, pds)
    R = b.invariant_array(P, p, alpha)
    assert np.allclose(R, ref, atol=1e-13)
    assert np.abs(p @ R - p).max() < 1e-12
    # the diagonal formula used by the search agrees with the built matrix
    assert np.allclose(b.invariant_diagonal(P, p, alpha), np.diag(R), atol=1e-13)


def test_bayes_inverse_by_hand():
    # P = [[0.8, 0.2], [0.4, 0.6]], p = (0.5, 0.5): column masses c = (0.6, 0.4);
    # Q[0, 0] = 0.8*0.5/0.6 = 2/3, Q[0, 1] = 0.4*0.5/0.6 = 1/3, Q[1, 0] = 0.2*0.5/0.4 = 1/4, Q[1, 1] = 3/4
    Q = b.bayes_inverse(np.array([[0.8, 0.2], [0.4, 0.6]]), np.array([0.5, 0.5]))
    assert np.allclose(Q, [[2 / 3, 1 / 3], [1 / 4, 3 / 4]])


def test_sdcmicro_pd_is_not_the_final_diagonal():
    # a rare category (1 record in 1000): sdcMicro's pd = 0.8, alpha = 0.5 leaves it far below 0.8
    p = np.array([500, 300, 150, 40, 9, 1.0])
    s = b.sdcmicro_invariant(list("abcdef"), p, pd=0.8, alpha=0.5)
    assert s.diagonal[-1] < 0.6 and s.is_invariant(p)
    g = b.invariant_matrix(list("abcdef"), p, min_diagonal=0.8, alpha=0.5)
    assert g.matrix.min_diagonal >= 0.8 and g.matrix.is_invariant(p)


def test_zero_frequency_categories_keep_their_value():
    p = np.array([10, 0, 30, 0, 5.0])
    R = b.invariant_matrix(range(5), p, min_diagonal=0.7).matrix.P
    assert R[1, 1] == 1.0 and R[3, 3] == 1.0
    assert R[:, 1].sum() == 1.0 and R[:, 3].sum() == 1.0  # nobody released into an empty category


def test_max_entropy_and_identity():
    m = b.max_entropy_matrix(list("abcd"), 0.7)
    assert np.allclose(np.diag(m.P), 0.7) and np.allclose(m.P[0, 1:], 0.1)
    assert np.array_equal(b.identity_matrix(list("ab")).P, np.eye(2))
    with pytest.raises(InputError, match="single variable has no sparse form"):
        b.max_entropy_matrix(range(5000), 0.8)


def test_neighbour_matrix_moves_one_variable_only():
    shape = (3, 4, 2)
    P = b.neighbour_array(shape, 0.6)
    assert np.allclose(np.asarray(P.sum(axis=1)).ravel(), 1)
    coo = P.tocoo()
    a = np.array(np.unravel_index(coo.row, shape))
    c = np.array(np.unravel_index(coo.col, shape))
    differ = (a != c).sum(axis=0)
    assert set(differ.tolist()) <= {0, 1}
    assert np.allclose(P.diagonal(), 0.6)
    assert np.allclose(coo.data[differ == 1], 0.4 / (2 + 3 + 1))


@settings(max_examples=10)
@given(seed=st.integers(0, 10**6), base=st.sampled_from(["proportional", "uniform"]))
def test_sparse_joint_invariant(seed, base):
    rng = np.random.default_rng(seed)
    shape = (30, 40)
    counts = rng.poisson(0.8, 1200).astype(float)  # many empty and single-record combinations
    built = b.invariant_matrix(range(1200), counts, min_diagonal=0.9, base=base, shape=shape)
    R = built.matrix.P
    assert sp.issparse(R)
    p = counts / counts.sum()
    assert np.abs(R.T @ p - p).max() < 1e-12
    assert R.diagonal().min() >= 0.9


def test_invariant_errors():
    with pytest.raises(InputError, match="min_diagonal"):
        b.invariant_matrix(range(3), [1, 2, 3], min_diagonal=1.0)
    with pytest.raises(InputError, match="not all 0"):
        b.invariant_matrix(range(3), [0, 0, 0])
    with pytest.raises(InputError, match="recode"):
        b.invariant_matrix(range(1500), np.ones(1500))


def test_registry_of_matrix_types(monkeypatch):
    from dataclasses import dataclass

    from sdckit.params import check_params, param
    from sdckit.pram.steps import Pram

    monkeypatch.setattr(b, "_TYPES", dict(b._TYPES))  # the test type is forgotten afterwards

    @b.register_matrix_type("test_half")
    @dataclass(frozen=True)
    class Half:
        """Keep with probability keep, else any category evenly (a test type)."""

        keep: float = param(0.5, kind="float", low=0.0, high=1.0, help="keep probability")

        def __post_init__(self):
            check_params(self)

        def build(self, context):
            L = context.n_categories
            P = np.full((L, L), (1 - self.keep) / L) + np.eye(L) * self.keep
            return TransitionMatrix(context.categories, P), {"note": "half"}

    assert "test_half" in b.known_matrix_methods() and Half in b.matrix_types()
    assert b.matrix_type("test_half") is Half
    # a registered type is a value of Pram.matrix at once, from Python and from a spec table
    assert Pram(["x"], matrix={"type": "test_half", "keep": 0.7}).matrix == Half(keep=0.7)
    with pytest.raises(InputError, match="The 'keep' parameter of Half must be a number in"):
        Pram(["x"], matrix={"type": "test_half", "keep": 2})
    with pytest.raises(InputError, match="the known ones are"):
        b.matrix_type("nope")
    with pytest.raises(TypeError, match="registered twice"):
        b.register_matrix_type("invariant")(Half)
