"""Microdata: role validation, immutability, encoding and decoding of keys."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sdckit import InputError, Microdata
from sdckit.errors import InputWarning


def small_frame():
    return pd.DataFrame({"region": ["a", "b", "a", "c"], "sex": [1, 2, 1, 2],
                         "income": [10.0, 20.0, 30.0, 40.0], "w": [1.0, 2.0, 1.5, 3.0]})


def test_roles_and_codes():
    md = Microdata(small_frame(), key_vars=["region", "sex"], numeric_vars=["income"], weight="w")
    assert md.key_vars == ("region", "sex")
    assert list(md.categories("region")) == ["a", "b", "c"]
    assert md.codes("region").tolist() == [0, 1, 0, 2]
    assert md.weights().tolist() == [1.0, 2.0, 1.5, 3.0]
    assert "4 records" in md.describe() and "key 'region': 3 categories" in md.describe()


def test_input_frame_is_copied_and_microdata_is_immutable():
    df = small_frame()
    md = Microdata(df, key_vars=["region"])
    df.loc[0, "region"] = "zzz"
    assert md.frame.loc[0, "region"] == "a"
    with pytest.raises(AttributeError):
        md.key_vars = ("sex",)
    with pytest.raises(ValueError):
        md.codes("region")[0] = 5  # read-only codes


def test_missing_column_lists_close_names():
    with pytest.raises(InputError, match=r"'regoin' does not exist; did you mean 'region'"):
        Microdata(small_frame(), key_vars=["regoin"])


def test_same_column_in_two_roles():
    with pytest.raises(InputError, match=r"'sex' is given two roles \(key_vars and sensitive\)"):
        Microdata(small_frame(), key_vars=["sex"], sensitive=["sex"])


@pytest.mark.parametrize("values, pattern", [
    (["x", 1, 1, 1], "non-numeric"),
    ([1.0, -1.0, 1.0, 1.0], "values <= 0"),
    ([1.0, 0.0, 1.0, 1.0], "values <= 0"),
    ([1.0, np.nan, 1.0, 1.0], "missing in 1 records"),
])
def test_bad_weights(values, pattern):
    df = small_frame().assign(w=values)
    with pytest.raises(InputError, match=pattern):
        Microdata(df, key_vars=["region"], weight="w")


def test_empty_frame():
    with pytest.raises(InputError, match="no records"):
        Microdata(small_frame().iloc[:0], key_vars=["region"])


def test_single_category_and_identifier_keys_warn():
    df = small_frame().assign(const=1, rid=[1, 2, 3, 4])
    with pytest.warns(InputWarning, match="single category"):
        Microdata(df, key_vars=["const"])
    with pytest.warns(InputWarning, match="looks like an identifier"):
        Microdata(df, key_vars=["rid"])


def test_non_numeric_numeric_var():
    with pytest.raises(InputError, match="numeric column 'region' holds non-numeric values"):
        Microdata(small_frame(), numeric_vars=["region"])


def test_key_all_missing_is_refused():
    df = small_frame().assign(empty=[np.nan] * 4)
    with pytest.raises(InputError, match="missing in every record"):
        Microdata(df, key_vars=["empty"])


def test_with_data_keeps_roles():
    md = Microdata(small_frame(), key_vars=["region"], weight="w")
    md2 = md.with_data(small_frame().iloc[:3])
    assert md2.roles == md.roles and md2.n_records == 3


@given(values=hnp.arrays(np.int64, st.integers(2, 40), elements=st.integers(-1, 5)),
       kind=st.sampled_from(["int", "str", "float", "category"]),
       perm_seed=st.integers(0, 10**6))
def test_with_codes_round_trip(values, kind, perm_seed):
    """Decoding the codes of a permuted column gives the permuted original column."""
    if (values >= 0).sum() == 0:
        values[0] = 1
    base = pd.Series(values)
    if kind == "int":
        col = base.where(base >= 0, np.nan) if (values < 0).any() else base
    elif kind == "float":
        col = base.astype(float).where(base >= 0, np.nan) / 2
    elif kind == "str":
        col = base.map(lambda v: f"c{v}").where(base >= 0, None).astype(object)
    else:
        col = pd.Series(pd.Categorical(base.where(base >= 0, np.nan), categories=[5, 4, 3, 2, 1, 0, 9]))
    df = pd.DataFrame({"k": col})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        md = Microdata(df, key_vars=["k"])
        perm = np.random.default_rng(perm_seed).permutation(len(df))
        out = md.with_codes({"k": md.codes("k")[perm]})
    expected = df["k"].iloc[perm].reset_index(drop=True)
    got = out.frame["k"].reset_index(drop=True)
    assert got.dtype == df["k"].dtype
    pd.testing.assert_series_equal(got, expected, check_names=False)
