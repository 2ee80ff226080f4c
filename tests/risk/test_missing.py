"""Frequencies with missing key values as wildcards, against a brute-force pairwise count."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import InputError
from sdckit.risk.missing import wildcard_frequencies


def brute_force(codes, weights, alpha, all_missing_match_complete=True):
    """The wildcard rule written record by record (O(n^2)), independent of the grouped code.

    Record j counts towards record i with weight: 1 if j has exactly i's key (own count);
    else 0 unless i and j agree wherever both are observed, and then
    1 if i has missing values and j is complete, alpha otherwise.
    A record with all keys missing gets f = n, F = sum of weights.
    """
    rows = list(zip(*[c.tolist() for c in codes]))
    n = len(rows)
    f = np.zeros(n)
    F = np.zeros(n)
    for i, a in enumerate(rows):
        if all(x < 0 for x in a):
            f[i], F[i] = n, weights.sum()
            continue
        for j, b in enumerate(rows):
            if a == b:
                wgt = 1.0
            elif (not all_missing_match_complete and all(x >= 0 for x in a)
                  and all(y < 0 for y in b)):
                continue  # sdcMicro: all-missing records do not count for complete keys
            elif all(x < 0 or y < 0 or x == y for x, y in zip(a, b)):
                i_missing = any(x < 0 for x in a)
                j_complete = all(y >= 0 for y in b)
                wgt = 1.0 if (i_missing and j_complete) else alpha
            else:
                continue
            f[i] += wgt
            F[i] += wgt * weights[j]
    return f, F


@st.composite
def keys_with_missing(draw):
    n = draw(st.integers(1, 40))
    m = draw(st.integers(1, 4))
    ncat = [draw(st.integers(1, 4)) for _ in range(m)]
    codes = [np.array(draw(st.lists(st.integers(-1, c - 1), min_size=n, max_size=n)), dtype=np.int32)
             for c in ncat]
    weights = np.array(draw(st.lists(st.floats(0.5, 50), min_size=n, max_size=n)))
    alpha = draw(st.sampled_from([1.0, 0.5, 0.0, 0.25]))
    compat = draw(st.booleans())
    return codes, ncat, weights, alpha, compat


@given(keys_with_missing())
def test_wildcard_frequencies_equal_brute_force(data):
    codes, ncat, weights, alpha, compat = data
    if all((np.stack(codes) < 0).all(axis=0)):
        with pytest.raises(InputError, match="all its key variables"):
            wildcard_frequencies(codes, ncat, weights, alpha=alpha)
        return
    got = wildcard_frequencies(codes, ncat, weights, alpha=alpha,
                               all_missing_match_complete=compat)
    f, F = brute_force(codes, weights, alpha, compat)
    np.testing.assert_allclose(got.fk, f, rtol=1e-12)
    np.testing.assert_allclose(got.Fk, F, rtol=1e-12)


def test_hand_computed_case():
    # keys (a, b); -1 = missing. Hand count with alpha = 0.5:
    # r0 (1,1): own 2 (r0, r1) + 0.5 * r2 (NA,1) matches + 0.5 * r3 (1,NA) matches = 3.0
    # r2 (NA,1): own 1 + complete matches r0, r1, r4? r4 is (2,1): yes -> 3 complete, weight 1;
    #            r3 (1,NA) agrees where both observed (nothing in common) -> 0.5 ; total 4.5
    # r3 (1,NA): own 1 + complete r0, r1 (a=1) -> 2; r2 (NA,1) -> 0.5; total 3.5
    # r4 (2,1): own 1 + 0.5 * r2 = 1.5
    a = np.array([0, 0, -1, 0, 1], dtype=np.int32)
    b = np.array([0, 0, 0, -1, 0], dtype=np.int32)
    got = wildcard_frequencies([a, b], [2, 1], alpha=0.5)
    np.testing.assert_allclose(got.fk, [3.0, 3.0, 4.5, 3.5, 1.5])
    # with alpha = 1 the values are integers (int64)
    got1 = wildcard_frequencies([a, b], [2, 1], alpha=1.0)
    assert got1.fk.dtype == np.int64
    assert got1.fk.tolist() == [4, 4, 5, 4, 2]


def test_no_missing_is_the_plain_count():
    a = np.array([0, 1, 1, 2], dtype=np.int32)
    got = wildcard_frequencies([a], [3], alpha=0.3)
    assert got.fk.tolist() == [1, 2, 2, 1]


def test_alpha_out_of_range_is_refused():
    a = np.array([0, -1], dtype=np.int32)
    with pytest.raises(InputError, match="'alpha' parameter"):
        wildcard_frequencies([a], [1], alpha=1.5)


def test_one_percent_missing_large_is_fast_enough_to_run():
    # not a timing assertion: checks the vectorised path on many rows against a direct formula
    rng = np.random.default_rng(3)
    n = 50_000
    a = rng.integers(0, 20, n).astype(np.int32)
    b = rng.integers(0, 5, n).astype(np.int32)
    miss = rng.random(n) < 0.01
    b[miss] = -1
    got = wildcard_frequencies([a, b], [20, 5], alpha=1.0)
    # complete record: count of (a, b) + count of (a, NA); record with NA: count of all with a
    key = a.astype(np.int64) * 6 + (b + 1)
    cnt = np.bincount(key, minlength=20 * 6)
    per_a = np.bincount(a, minlength=20)
    expect = np.where(miss, per_a[a], cnt[key] + cnt[a.astype(np.int64) * 6])
    assert np.array_equal(got.fk, expect)


def test_all_keys_missing_everywhere_refused():
    a = np.array([-1, -1], dtype=np.int32)
    with pytest.raises(InputError, match="every record has all its key variables"):
        wildcard_frequencies([a, a], [2, 2])


def test_all_missing_record_and_the_sdcmicro_switch():
    # (0,0), (0,0), (NA,NA): by hand, the all-missing record matches both complete records
    a = np.array([0, 0, -1], dtype=np.int32)
    assert wildcard_frequencies([a, a], [1, 1]).fk.tolist() == [3, 3, 3]
    # sdcMicro (two or more keys) leaves it out of the complete keys' counts
    compat = wildcard_frequencies([a, a], [1, 1], all_missing_match_complete=False)
    assert compat.fk.tolist() == [2, 2, 3]
