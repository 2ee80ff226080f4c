"""SUDA2: MSUs against a brute-force search, scores and DIS-SUDA by hand."""

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import Microdata, ParameterError
from sdckit.risk.suda import microdata_suda2, msu_weights, suda2
from tests.conftest import shared_file


def brute_force_msus(codes, max_size):
    """All MSUs of every record by exhaustive search over variable subsets.

    Subset S is an MSU of record i when i is observed on all of S, unique on S
    (missing counts as its own value for the others) and unique on no proper subset.
    """
    rows = list(zip(*[c.tolist() for c in codes]))
    M = len(codes)
    counters = {}
    for s in range(1, M + 1):
        for S in itertools.combinations(range(M), s):
            counters[S] = Counter(tuple(r[v] for v in S) for r in rows)

    def unique(i, S):
        return all(rows[i][v] >= 0 for v in S) and counters[S][tuple(rows[i][v] for v in S)] == 1

    found = [[] for _ in rows]
    for i in range(len(rows)):
        for s in range(1, max_size + 1):
            for S in itertools.combinations(range(M), s):
                if unique(i, S) and not any(unique(i, T) for t in range(1, s)
                                            for T in itertools.combinations(S, t)):
                    found[i].append(S)
    return found


@st.composite
def key_data(draw):
    n = draw(st.integers(1, 40))
    m = draw(st.integers(1, 6))
    ncat = [draw(st.integers(1, 4)) for _ in range(m)]
    codes = [np.array(draw(st.lists(st.integers(-1, c - 1), min_size=n, max_size=n)),
                      dtype=np.int32) for c in ncat]
    max_size = draw(st.integers(1, m))
    return codes, ncat, max_size


@given(key_data())
def test_msus_equal_brute_force(data):
    codes, ncat, K = data
    res = suda2(codes, ncat, max_size=K)
    found = brute_force_msus(codes, K)
    M = len(codes)
    w = [math.factorial(M - s) for s in range(1, M + 1)]   # (M - s)!
    for i, msus in enumerate(found):
        sizes = Counter(len(S) for S in msus)
        assert res.msu_counts[i].tolist() == [sizes.get(s, 0) for s in range(1, K + 1)]
        assert res.score[i] == sum(w[len(S) - 1] for S in msus)
        if msus:
            contrib = [sum(w[len(S) - 1] for S in msus if v in S) / res.score[i] for v in range(M)]
            np.testing.assert_allclose(res.contributions[i], contrib, rtol=1e-12)


def test_hand_computed_scores_and_dis():
    # r0 = r1 = (0,0,0); r2 = (0,1,0) unique on {v2}; r3 = (1,0,0) unique on {v1}
    codes = [np.array(c, dtype=np.int32) for c in ([0, 0, 0, 1], [0, 0, 1, 0], [0, 0, 0, 0])]
    res = suda2(codes, [2, 2, 1], dis_fraction=0.1)
    # weight of a size-1 MSU with M = 3: (3-1)! = 2
    assert res.score.tolist() == [0, 0, 2, 2]
    # DIS = U pi / (U pi + P (1-pi)) = 2*0.1 / (0.2 + 2*0.9) = 0.1
    assert res.dis == pytest.approx(0.1)
    # dis_i = 1 / (1 + (U/DIS - U) / (s^Q * sum s^-Q)) = 1 / (1 + 18 / 2) = 0.1
    np.testing.assert_allclose(res.dis_score, [0, 0, 0.1, 0.1])
    assert res.contributions[2].tolist() == [0.0, 1.0, 0.0]
    assert res.attribute_contributions() == {"key 0": 50.0, "key 1": 50.0, "key 2": 0.0}
    ihsn = suda2(codes, [2, 2, 1], weights="ihsn")
    # IHSN weight of size 1 with M = 3: (2^2 - 1) / C(3, 1) = 1
    assert ihsn.score.tolist() == [0, 0, 1, 1]


def test_weights():
    assert msu_weights(4).tolist() == [6, 2, 1, 1]                       # (M-s)!
    np.testing.assert_allclose(msu_weights(4, "ihsn"), [7 / 4, 3 / 6, 1 / 4, 0])


def test_max_size_above_number_of_keys_refused():
    codes = [np.array([0, 1], dtype=np.int32)] * 2
    with pytest.raises(ParameterError, match="'max_size' parameter of suda2 must be an int <= 2"):
        suda2(codes, [2, 2], max_size=3)
    with pytest.raises(ParameterError, match="dis_fraction"):
        suda2(codes, [2, 2], dis_fraction=1.0)


def test_testdata_msus_equal_brute_force_on_a_subset():
    import pandas as pd

    df = pd.read_csv(shared_file("sdcmicro/testdata.csv")).iloc[::10]
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat"]
    md = Microdata(df, key_vars=keys)
    res = microdata_suda2(md)
    found = brute_force_msus([md.codes(k) for k in keys], len(keys))
    assert res.msu_counts.sum() == sum(len(x) for x in found)
    for i, msus in enumerate(found):
        sizes = Counter(len(S) for S in msus)
        assert res.msu_counts[i].tolist() == [sizes.get(s, 0) for s in range(1, 7)]


@st.composite
def wider_key_data(draw):
    n = draw(st.integers(1, 300))
    m = draw(st.integers(1, 8))
    ncat = [draw(st.integers(1, 6)) for _ in range(m)]
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    codes = [rng.integers(-1, c, n).astype(np.int32) if draw(st.booleans())
             else rng.integers(0, c, n).astype(np.int32) for c in ncat]
    return codes, ncat, draw(st.integers(1, m))


@given(wider_key_data())
def test_depth_first_search_equals_levelwise_search(data):
    # reference: the level-wise search (one bincount per subset on every group), itself
    # checked against brute force above; both must give identical MSUs, scores, contributions
    codes, ncat, K = data
    a = suda2(codes, ncat, max_size=K, search="depth_first")
    b = suda2(codes, ncat, max_size=K, search="levelwise")
    assert np.array_equal(a.msu_counts, b.msu_counts)
    assert np.array_equal(a.score, b.score)
    assert np.array_equal(a.dis_score, b.dis_score)
    assert np.allclose(a.contributions, b.contributions, rtol=0, atol=1e-12)


def test_depth_first_equals_levelwise_on_a_larger_file():
    # 20,000 records x 8 skewed keys: many MSUs of every size (reference: level-wise search)
    rng = np.random.default_rng(11)
    ncat = [2, 3, 4, 6, 8, 10, 12, 16]
    codes = [rng.choice(c, 20_000, p=rng.dirichlet(np.full(c, 0.7))).astype(np.int32) for c in ncat]
    codes[3][rng.random(20_000) < 0.02] = -1
    a = suda2(codes, ncat, search="depth_first")
    b = suda2(codes, ncat, search="levelwise")
    assert a.msu_counts.sum() > 10_000
    assert np.array_equal(a.msu_counts, b.msu_counts) and np.array_equal(a.score, b.score)
    assert np.allclose(a.contributions, b.contributions, rtol=0, atol=1e-12)


def test_depth_first_equals_levelwise_with_wide_keys_and_near_duplicates():
    # a key with 300 categories (rows stored as 16-bit codes) and records that come in
    # near-duplicate pairs (equal on all but one key, so many blocks of two rows agree on
    # every later variable and are dropped by the search); reference: the level-wise search
    rng = np.random.default_rng(5)
    n = 6_000
    ncat = [300, 5, 4, 3, 2, 2]
    base = [rng.integers(0, c, n // 2) for c in ncat]
    twin = [b.copy() for b in base]
    j = rng.integers(0, len(ncat), n // 2)                 # each twin differs on one key
    for v, c in enumerate(ncat):
        twin[v][j == v] = (twin[v][j == v] + 1) % c
    codes = [np.concatenate([b, t]).astype(np.int32) for b, t in zip(base, twin)]
    codes[1][rng.random(n) < 0.03] = -1
    for K in (3, 6):
        a = suda2(codes, ncat, max_size=K, search="depth_first")
        b = suda2(codes, ncat, max_size=K, search="levelwise")
        assert a.msu_counts.sum() > 1_000
        assert np.array_equal(a.msu_counts, b.msu_counts) and np.array_equal(a.score, b.score)
        assert np.allclose(a.contributions, b.contributions, rtol=0, atol=1e-12)
