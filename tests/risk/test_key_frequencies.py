"""Key-combination codes and f_k / F_k against a brute-force count."""

from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.risk import frequencies as fr


@st.composite
def coded_keys(draw):
    n = draw(st.integers(1, 60))
    m = draw(st.integers(1, 5))
    ncat = [draw(st.integers(1, 6)) for _ in range(m)]
    codes = [np.array(draw(st.lists(st.integers(-1, c - 1), min_size=n, max_size=n)), dtype=np.int32)
             for c in ncat]
    weights = np.array(draw(st.lists(st.floats(0.5, 100), min_size=n, max_size=n)))
    return codes, ncat, weights


@given(coded_keys())
def test_frequencies_equal_brute_force(data):
    """Reference: a Counter over the tuples of key codes (missing = its own value)."""
    codes, ncat, weights = data
    rows = list(zip(*[c.tolist() for c in codes]))
    count = Counter(rows)
    wsum = defaultdict(float)
    for r, w in zip(rows, weights):
        wsum[r] += w
    f = fr.frequencies_from_codes(codes, ncat, weights)
    assert f.fk.tolist() == [count[r] for r in rows]
    np.testing.assert_allclose(f.Fk, [wsum[r] for r in rows], rtol=1e-12)
    assert f.n_combinations == len(count)
    assert f.n_sample_uniques == sum(1 for r in rows if count[r] == 1)


@given(coded_keys())
def test_factorised_path_equals_dense_path(data):
    codes, ncat, weights = data
    dense = fr.frequencies_from_codes(codes, ncat, weights)
    code, _ = fr.combination_codes(codes, ncat)
    ids, g = fr.dense_groups(code, fr.DENSE_LIMIT + 1)  # a product above the limit: pd.factorize
    assert g == dense.n_combinations
    # same partition of records: equal ids <=> equal dense groups
    assert (pd.Series(ids).groupby(dense.group).nunique() == 1).all()


def test_overflow_is_a_clear_error():
    codes = [np.zeros(3, dtype=np.int32)] * 5
    with pytest.raises(InputError, match="overflow int64.*recode the keys"):
        fr.combination_codes(codes, [100_000] * 5, names=list("abcde"))


def test_key_frequencies_on_microdata_hand_case():
    """Hand count: (a,1) x2, (b,2) x1, (a,2) x1 with weights 1,2,3,4."""
    df = pd.DataFrame({"r": ["a", "a", "b", "a"], "s": [1, 1, 2, 2], "w": [1.0, 2.0, 3.0, 4.0]})
    md = Microdata(df, key_vars=["r", "s"], weight="w")
    f = fr.key_frequencies(md)
    assert f.fk.tolist() == [2, 2, 1, 1]
    assert f.Fk.tolist() == [3.0, 3.0, 3.0, 4.0]
    assert f.k_violations(2) == 2 and f.k_reached() == 1 and f.n_combinations == 3
