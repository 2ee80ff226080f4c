"""Record-linkage risk: DLD by hand, DLD against brute-force nearest-neighbour linkage,
DLD' for files of other sizes, PLD and its EM, the max_dld gate."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.errors import InputError
from sdckit.registry import gate_check
from sdckit.risk.linkage import (
    distance_linkage,
    fellegi_sunter_em,
    intruder_subsets,
    nearest_link_credit,
    probabilistic_linkage,
)

X = np.array([[1, 10], [2, 20], [3, 30], [4, 40]], dtype=float)
XM = np.array([[2, 10], [2, 20], [3, 30], [3, 40]], dtype=float)


def test_dld_hand_computed():
    # knowing column 0: masked 2,2,3,3 -> nearest originals 2,2,3,3 (records 1,1,2,2): 2 of 4 right
    # knowing column 1: values unchanged: 4 of 4
    # knowing both (standardised, both columns on the same scale): records 0 and 3 are equally
    # near two originals, one of them their own -> 1/2 each; records 1, 2 exact -> (0.5+1+1+0.5)/4
    r = distance_linkage(X, XM, subsets=[[0], [1], [0, 1]])
    assert r.per_subset == pytest.approx({"x0": 50.0, "x1": 100.0, "x0+x1": 75.0})
    assert r.value == pytest.approx(75.0)
    assert not r.primed


def brute_force_credit(Zo, Zm, true):
    """Nearest-neighbour linkage by the full distance matrix; ties shared equally."""
    d2 = ((Zm[:, None, :] - Zo[None, :, :]) ** 2).sum(-1)
    dmin = d2.min(axis=1, keepdims=True)
    tied = np.isclose(d2, dmin, rtol=1e-9, atol=1e-12)
    return np.where(tied[np.arange(len(true)), true], 1.0 / tied.sum(axis=1), 0.0)


@given(st.integers(0, 100_000), st.integers(5, 40), st.integers(1, 4), st.booleans())
@settings(max_examples=40)
def test_dld_equals_brute_force(seed, n, d, integers):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, d))
    B = A + rng.normal(scale=0.7, size=(n, d))
    if integers:  # many ties
        A, B = np.round(A), np.round(B)
    if np.any(A.std(axis=0) == 0):
        return
    r = distance_linkage(A, B, subsets=[list(range(d))])
    mean, sd = A.mean(0), A.std(0, ddof=1)
    expected = 100 * brute_force_credit((A - mean) / sd, (B - mean) / sd, np.arange(n)).mean()
    assert r.value == pytest.approx(expected, abs=1e-9)


def test_nearest_link_credit_primed_target():
    rng = np.random.default_rng(3)
    Zo = rng.normal(size=(100, 3))
    Zm = rng.normal(size=(60, 3))
    true = rng.integers(0, 100, 60)
    assert np.allclose(nearest_link_credit(Zo, Zm, true), brute_force_credit(Zo, Zm, true))


def test_primed_dld_for_other_sizes():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(80, 3))
    sub = A[rng.permutation(80)[:30]]
    r = distance_linkage(A, sub)
    assert r.primed and "DLD'" in r.note
    assert r.value == pytest.approx(100.0)       # exact copies: every link is the nearest record
    with pytest.raises(InputError, match="primed=False"):
        distance_linkage(A, sub, primed=False)


def test_default_subsets():
    subs = intruder_subsets(4)
    assert subs[:4] == [(0,), (1,), (2,), (3,)]
    assert (0, 1, 2, 3) in subs and len(subs) == len(set(subs))
    assert len(intruder_subsets(13)) == 13 * 7 + 1


def test_subset_names_and_errors():
    a = pd.DataFrame(X, columns=["a", "b"])
    b = pd.DataFrame(XM, columns=["a", "b"])
    assert distance_linkage(a, b, subsets=[["b"]]).value == 100.0
    with pytest.raises(InputError, match="not a column"):
        distance_linkage(a, b, subsets=[["c"]])
    with pytest.raises(InputError, match="different columns"):
        distance_linkage(a, b.rename(columns={"b": "c"}))


def test_pld_identical_files_and_noise():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(150, 3))
    assert probabilistic_linkage(A, A, subsets=[[0, 1, 2]], agree_within=0.05).value == pytest.approx(100.0)
    far = probabilistic_linkage(A, A + rng.normal(scale=3.0, size=A.shape), subsets=[[0, 1, 2]])
    near = probabilistic_linkage(A, A + rng.normal(scale=0.05, size=A.shape), subsets=[[0, 1, 2]])
    assert far.value < near.value


def test_em_recovers_known_m_and_u():
    # expected pattern counts of a mixture with known m, u, match share (exact, no sampling)
    m, u, p, s = np.array([0.95, 0.9, 0.85]), np.array([0.1, 0.2, 0.05]), 0.02, 3
    g = ((np.arange(8)[:, None] >> np.arange(s)) & 1).astype(float)
    pm = np.prod(np.where(g == 1, m, 1 - m), axis=1)
    pu = np.prod(np.where(g == 1, u, 1 - u), axis=1)
    counts = np.round(1e9 * (p * pm + (1 - p) * pu)).astype(np.int64)
    m_hat, u_hat, p_hat = fellegi_sunter_em(counts, s, n_iter=5000)
    assert m_hat == pytest.approx(m, abs=1e-3)
    assert u_hat == pytest.approx(u, abs=1e-3)
    assert p_hat == pytest.approx(p, abs=1e-3)


def test_pld_refuses_too_many_pairs():
    with pytest.raises(InputError, match="max_pairs"):
        probabilistic_linkage(np.arange(20.0).reshape(10, 2), np.arange(20.0).reshape(10, 2), max_pairs=50)


def test_gate_max_dld():
    rng = np.random.default_rng(6)
    df = pd.DataFrame(rng.normal(size=(100, 3)), columns=["a", "b", "c"])
    original = Microdata(df, numeric_vars=["a", "b", "c"])
    check = gate_check("max_dld")
    assert check.validate(20) == 20.0
    same = check.check(original, original, [], 50.0)
    assert not same.passed and same.value["dld"] == pytest.approx(100.0)
    noisy = original.with_columns({v: df[v] + rng.normal(scale=3, size=100) for v in "abc"})
    assert check.check(original, noisy, [], 50.0).passed
    with pytest.raises(InputError, match="numeric"):
        check.check(Microdata(df), Microdata(df), [], 50.0)
