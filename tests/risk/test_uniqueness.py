"""Uniqueness by combination against a brute-force groupby."""

import itertools

import numpy as np
import pandas as pd
import pytest

from sdckit import Microdata, ParameterError
from sdckit.risk.uniqueness import uniqueness_by_combination


def test_equals_groupby_and_is_sorted():
    rng = np.random.default_rng(11)
    df = pd.DataFrame({"a": rng.integers(0, 30, 500), "b": rng.integers(0, 2, 500),
                       "c": rng.integers(0, 5, 500), "d": rng.integers(0, 3, 500)})
    md = Microdata(df, key_vars=list(df.columns))
    table = uniqueness_by_combination(md, max_size=3, k=3)
    assert len(table) == 4 + 6 + 4
    for row in table.itertuples(index=False):
        cols = row.variables.split(" + ")
        size = df.groupby(cols)[cols[0]].transform("size")
        assert row.share_unique == pytest.approx((size == 1).mean())
        assert row.share_below_k == pytest.approx((size < 3).mean())
        assert row.n_combinations == len(df.drop_duplicates(cols))
    assert table["share_unique"].is_monotonic_decreasing
    # adding a variable never lowers uniqueness (every superset in the table)
    d = {tuple(r.variables.split(" + ")): r.share_unique for r in table.itertuples()}
    for combo, share in d.items():
        for sub in itertools.combinations(combo, len(combo) - 1):
            if sub:
                assert share >= d[sub]


def test_max_size_above_keys_refused():
    md = Microdata(pd.DataFrame({"a": [1, 2, 2]}), key_vars=["a"])
    with pytest.raises(ParameterError, match="max_size"):
        uniqueness_by_combination(md, max_size=2)
