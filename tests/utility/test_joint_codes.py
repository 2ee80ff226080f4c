"""``joint_codes`` (one canonical label per distinct value, then a take) against its definition:
a canonical label computed for every record of both columns, then one factorisation of the
labels of ``a`` followed by those of ``b`` (the record-by-record implementation it replaces)."""

from decimal import Decimal

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.utility.categorical import canonical_label, joint_codes


def reference_joint_codes(a: pd.Series, b: pd.Series):
    """A label per record (Python), missing kept missing, one factorisation in order."""
    both = pd.concat([a.astype("object"), b.astype("object")], ignore_index=True)
    both = both.where(both.isna(), both.map(canonical_label))
    codes, uniques = pd.factorize(both, sort=False)
    n = len(a)
    return codes[:n].astype(np.int64), codes[n:].astype(np.int64), len(uniques)


def check(a: pd.Series, b: pd.Series) -> None:
    got, want = joint_codes(a, b), reference_joint_codes(a, b)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2] == want[2]
    assert got[0].dtype == np.int64 and got[1].dtype == np.int64


# values whose canonical labels collide or not: 1, 1.0 and "1" are one label; True is "True"
_object_values = st.one_of(st.integers(-3, 3), st.sampled_from([0.0, 1.0, 2.5, -0.0, np.nan]),
                           st.sampled_from(["1", "a", "b", "", "2.5"]), st.none(), st.booleans(),
                           st.sampled_from([Decimal("1"), Decimal("1.0")]))


@settings(max_examples=200, deadline=None)
@given(st.lists(_object_values, max_size=30), st.lists(_object_values, max_size=30))
def test_object_columns_match_the_record_by_record_labels(xs, ys):
    # mixed object columns, including True beside 1 and Decimal("1") beside Decimal("1.0"),
    # which a hash table keeps together although their labels differ
    check(pd.Series(xs, dtype=object), pd.Series(ys, dtype=object))


_dtypes = st.sampled_from(["int64", "int8", "float64", "float32", "Int64", "str", "category", "bool"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5) | st.none(), max_size=30), st.lists(st.integers(0, 5) | st.none(), max_size=30),
       _dtypes, _dtypes)
def test_typed_columns_match_the_record_by_record_labels(xs, ys, da, db):
    def column(values, dtype):
        s = pd.Series(values, dtype=object)
        if dtype in ("int64", "int8", "bool"):
            s = s.fillna(0).astype("int64").astype(dtype)
        elif dtype in ("float64", "float32"):
            s = s.astype("float64").astype(dtype) / 2      # halves: 0.5 keeps its decimals, 1.0 is "1"
        elif dtype == "str":
            s = s.map(lambda v: None if v is None else f"c{v}").astype("str")
        else:
            s = s.astype(dtype)
        return s
    check(column(xs, da), column(ys, db))


def test_first_appearance_order_over_a_then_b():
    a = pd.Series([3.0, 1.0, np.nan, 3.0])
    b = pd.Series(["1", "x", "3", None], dtype=object)
    ca, cb, m = joint_codes(a, b)
    # labels "3", "1" from a; "x" new in b; hand-computed
    assert ca.tolist() == [0, 1, -1, 0] and cb.tolist() == [1, 2, 0, -1] and m == 3
