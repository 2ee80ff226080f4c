"""The compiled loops against plain numpy/pandas computations of the same definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.attacks.encode import encode_frames, missing_as_code
from sdckit.attacks.kernels import (
    OP_EQ,
    OP_GE,
    OP_GT,
    OP_ISNULL,
    OP_LE,
    OP_LT,
    OP_NE,
    OP_NOTNULL,
    count_matches,
    log_density,
    nearest,
)
from sdckit.attacks.neighbours import nearest_released, split_kinds
from sdckit.attacks.singling import Predicates, expected_singles


def _mixed(rng, n, n_cat=3, n_num=2, p_missing=0.1):
    cat = rng.integers(0, 4, (n, n_cat)).astype(float)
    num = rng.normal(size=(n, n_num))
    x = np.hstack([cat, num])
    x[rng.random(x.shape) < p_missing] = np.nan
    return x, np.array([False] * n_cat + [True] * n_num)


def _gower_matrix(q, c, is_num, inv_range):
    """Mixed distance of every query to every candidate, written column by column in numpy."""
    d = np.zeros((q.shape[0], c.shape[0]))
    for j in range(q.shape[1]):
        a, b = q[:, j][:, None], c[:, j][None, :]
        ma, mb = np.isnan(a), np.isnan(b)
        if is_num[j]:
            term = np.minimum(np.abs(a - b) * inv_range[j], 1.0)
        else:
            term = (a != b).astype(float)
        term = np.where(ma | mb, np.where(ma & mb, 0.0, 1.0), term)
        d += term
    return d


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4))
def test_nearest_finds_the_k_smallest_distances(seed, k):
    rng = np.random.default_rng(seed)
    cand, is_num = _mixed(rng, 60)
    q, _ = _mixed(rng, 7)
    inv = np.where(is_num, 0.25, 1.0)
    full = _gower_matrix(q, cand, is_num, inv)
    cols = np.arange(q.shape[1])
    q_cat, q_num = split_kinds(q, cols, is_num, inv)
    c_cat, c_num = split_kinds(cand, cols, is_num, inv)
    idx, dist = nearest(q_cat, q_num, c_cat, c_num, k)
    np.testing.assert_allclose(dist, np.sort(full, axis=1)[:, :k], atol=1e-12)
    np.testing.assert_allclose(np.take_along_axis(full, idx, axis=1), dist, atol=1e-12)
    # ties: the first candidate row at the k-th distance is kept (the caller permutes rows)
    first = np.argmin(full, axis=1)
    assert np.array_equal(idx[:, 0], first)


def test_nearest_released_breaks_ties_at_random():
    # every released record is at distance 0 from the target: the pick is uniform over them
    rel = pd.DataFrame({"a": ["x"] * 4})
    enc = encode_frames(rel, rel, rel)
    picks = [nearest_released(enc, enc.original[:1], np.array([0]), 1, np.random.default_rng(s))[0][0, 0]
             for s in range(400)]
    counts = np.bincount(picks, minlength=4)
    assert counts.min() > 60  # 100 expected each; a fixed tie rule would give 400, 0, 0, 0


def _holds(x, op, v):
    if op == OP_ISNULL:
        return np.isnan(x)
    if op == OP_NOTNULL:
        return ~np.isnan(x)
    with np.errstate(invalid="ignore"):
        out = {OP_EQ: x == v, OP_NE: x != v, OP_LT: x < v, OP_LE: x <= v, OP_GT: x > v, OP_GE: x >= v}[op]
    return out & ~np.isnan(x)  # a missing value satisfies no comparison


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1))
def test_count_matches_equals_a_vectorised_evaluation(seed):
    rng = np.random.default_rng(seed)
    data, _ = _mixed(rng, 300)
    nq, width = 40, 3
    cols = rng.integers(0, data.shape[1], (nq, width))
    ops = rng.integers(0, 8, (nq, width))
    vals = data[rng.integers(0, 300, (nq, width)), cols]
    n_terms = rng.integers(1, width + 1, nq)
    expect = np.empty(nq, dtype=int)
    for p in range(nq):
        mask = np.ones(300, dtype=bool)
        for t in range(n_terms[p]):
            mask &= _holds(data[:, cols[p, t]], ops[p, t], vals[p, t])
        expect[p] = mask.sum()
    got = count_matches(data, cols, ops, vals, n_terms, 10**9)
    assert np.array_equal(got, expect)
    capped = count_matches(data, cols, ops, vals, n_terms, 2)
    assert np.array_equal(capped, np.minimum(expect, 2))


def test_predicates_follow_null_semantics():
    data = np.array([[1.0], [np.nan], [2.0]])
    preds = Predicates(np.zeros((3, 1)), np.array([[OP_NE], [OP_ISNULL], [OP_NOTNULL]]),
                       np.array([[1.0], [0.0], [0.0]]), np.ones(3))
    assert preds.counts(data, stop_at=10).tolist() == [1, 1, 2]


def test_expected_singles_by_enumeration():
    # N = 4 records, predicates matching 1 and 2 of them, subsets of m = 2 (6 subsets):
    # 1 match: isolated in the 3 subsets holding it; 2 matches: in the 4 subsets holding one
    assert expected_singles(np.array([1, 2]), 4, 2)[0] == pytest.approx(3 / 6 + 4 / 6)
    assert expected_singles(np.array([0, 3]), 4, 4)[0] == pytest.approx(0.0)


def test_log_density_equals_a_direct_sum():
    rng = np.random.default_rng(3)
    sample, is_num = _mixed(rng, 50)
    q, _ = _mixed(rng, 6)
    lam = 0.2
    log_match = np.full(5, np.log(1 - lam))
    log_mismatch = np.array([np.log(lam / 3)] * 3 + [np.log(lam)] * 2)
    width = np.array([1.0, 1.0, 1.0, 0.5, 0.8])
    got = log_density(missing_as_code(q, is_num), missing_as_code(sample, is_num), is_num,
                      log_match, log_mismatch, width)
    expect = np.zeros(len(q))
    for i in range(len(q)):
        total = 0.0
        for j in range(len(sample)):
            prod = 1.0
            for c in range(5):
                a, b = q[i, c], sample[j, c]
                if np.isnan(a) or np.isnan(b):
                    prod *= (1 - lam) if (np.isnan(a) and np.isnan(b)) else np.exp(log_mismatch[c])
                elif is_num[c]:
                    prod *= (1 - lam) * np.exp(-0.5 * ((a - b) / width[c]) ** 2) / (width[c] * np.sqrt(2 * np.pi))
                else:
                    prod *= (1 - lam) if a == b else lam / 3
            total += prod
        expect[i] = np.log(total / len(sample))
    np.testing.assert_allclose(got, expect, rtol=1e-10)


def test_encode_joins_categories_printed_alike():
    rel = pd.DataFrame({"a": ["1", "2", None], "b": [1.5, 2.5, 3.5]})
    ori = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.0, 2.0]})
    enc = encode_frames(rel, ori, categorical=["a"])
    assert enc.categories["a"] == ["1", "2", "3"]
    assert enc.released[:, 0].tolist()[:2] == enc.original[:, 0].tolist()[:2]
    assert np.isnan(enc.released[2, 0])
    assert enc.is_numeric.tolist() == [False, True]
    assert enc.inv_range[1] == pytest.approx(1 / 3.0)  # range over both files: 3.5 - 0.5


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1))
def test_indexed_counting_equals_the_scan(seed):
    from sdckit.attacks.singling import Records

    rng = np.random.default_rng(seed)
    data, _ = _mixed(rng, 400)
    data[:, 0] = np.round(data[:, 0])  # repeated values, so ranges of equal values are long
    nq, width = 50, 3
    cols = rng.integers(0, data.shape[1], (nq, width))
    ops = rng.integers(0, 8, (nq, width))
    vals = data[rng.integers(0, 400, (nq, width)), cols]
    vals[rng.random(vals.shape) < 0.2] += 0.5  # values absent from the data, too
    preds = Predicates(cols, ops, vals, rng.integers(1, width + 1, nq))
    for stop in (2, 10**9):
        indexed = preds.counts(Records(data, index=True), stop)
        assert np.array_equal(indexed, preds.counts(Records(data, index=False), stop))
