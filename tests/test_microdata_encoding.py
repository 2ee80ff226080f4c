"""Key encoding by counting (integers) and the shallow copy-on-write frame: the same codes,
categories and decoded columns as the hash-table encoding (``pd.factorize(sort=True)``)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.microdata import decode_arrow_strings, encode_column

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@given(values=st.lists(st.integers(-200, 200), min_size=1, max_size=300),
       dtype=st.sampled_from(INT_DTYPES), offset=st.sampled_from([0, 1, 1900, 10**9]))
def test_integer_keys_encode_as_factorize(values, dtype, offset):
    """Reference: pandas' hash-table factorisation with sorted categories."""
    info = np.iinfo(dtype)
    arr = np.clip(np.asarray(values, dtype=np.int64) + offset, info.min, info.max).astype(dtype)
    s = pd.Series(arr)
    codes, cats = encode_column(s)
    ref_codes, ref_uniques = pd.factorize(s, sort=True, use_na_sentinel=True)
    assert codes.dtype == np.int32
    assert np.array_equal(codes, ref_codes)
    assert cats.equals(pd.Index(ref_uniques)) and cats.dtype == pd.Index(ref_uniques).dtype


@given(values=st.lists(st.integers(-(2**40), 2**40), min_size=2, max_size=50))
def test_wide_ranges_fall_back_to_factorize(values):
    """Values spread too widely for a count table (identifiers) are hashed: same result."""
    s = pd.Series(np.asarray(values, dtype=np.int64))
    codes, cats = encode_column(s)
    ref_codes, ref_uniques = pd.factorize(s, sort=True)
    assert np.array_equal(codes, ref_codes) and cats.equals(pd.Index(ref_uniques))


@given(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "xyz", "é", ""])), min_size=1, max_size=80))
def test_arrow_string_decoding_matches_the_categorical_path(labels):
    """Codes decoded through an Arrow take equal pandas' Categorical.from_codes (the general
    path), with and without missing codes."""
    if all(v is None for v in labels):
        labels = ["a"] + labels
    s = pd.Series(labels, dtype="str")
    codes, cats = encode_column(s)
    fast = decode_arrow_strings(s.dtype, cats, codes)
    assert fast is not None
    ref = pd.Series(pd.Categorical.from_codes(codes, categories=cats)).astype(s.dtype)
    got = pd.Series(fast)
    assert ((got == ref) | (got.isna() & ref.isna())).all()


def test_microdata_codes_match_a_hash_encoding_and_the_caller_frame_is_not_shared():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"k": rng.integers(1, 30, 5000), "age": rng.integers(0, 100, 5000),
                       "w": rng.uniform(1, 2, 5000)})
    md = Microdata(df, key_vars=["k", "age"], weight="w")
    for v in ("k", "age"):
        ref_codes, ref_uniques = pd.factorize(df[v], sort=True)
        assert np.array_equal(md.codes(v), ref_codes)
        assert md.categories(v).equals(pd.Index(ref_uniques))
    before = md.frame.copy(deep=True)
    df.loc[0, "k"] = 999           # a change to the caller's frame does not reach the Microdata
    df["age"] = 0
    assert md.frame.equals(before)
    with pytest.raises(ValueError):
        md.codes("k")[0] = 1
