"""Hierarchy builders and checks, and the one-line errors of bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.lattice import (
    Problem,
    check_hierarchy,
    date_hierarchy,
    find_hierarchies,
    grouping_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    order_hierarchy,
)
from sdckit.lattice.hierarchies import Hierarchy


def _is_coarsening(h: Hierarchy) -> bool:
    t = h.table
    for lvl in range(1, t.shape[1] - 1):
        if (t.groupby(lvl)[lvl + 1].nunique() > 1).any():
            return False
    return t[0].is_unique


@given(st.lists(st.integers(0, 120), min_size=1, max_size=40))
def test_interval_hierarchy_nests(values):
    h = interval_hierarchy(values, [5, 10, 20])
    assert _is_coarsening(h)
    row = dict(zip(h.table[0], h.table[1]))
    # 37 lies in 35-39 when present (hand check of ARX's labels)
    if 37 in values:
        assert row["37"] == "35-39"
    assert h.table.iloc[:, -1].nunique() == 1


@given(st.lists(st.from_regex(r"[0-9]{3,5}", fullmatch=True), min_size=1, max_size=30))
def test_masking_hierarchy_nests(codes):
    h = masking_hierarchy(codes)
    assert _is_coarsening(h)
    assert h.table.iloc[:, -1].nunique() == 1


def test_masking_labels():
    h = masking_hierarchy(["12345", "12399"], 2)
    assert h.table.iloc[0].tolist()[:3] == ["12345", "1234*", "123**"]


def test_order_grouping_date_builders():
    h = order_hierarchy(["a", "b", "c", "d", "e"], [2, 4])
    assert _is_coarsening(h) and h.table.iloc[0, 1] == "[a..b]"
    g = grouping_hierarchy(["x", "y", "z"], [{"x": "xy", "y": "xy", "z": "z"}])
    assert _is_coarsening(g) and g.n_levels == 2
    d = date_hierarchy(["2020-01-15", "2020-02-01", "2013-07-04"], ("month", "year", "decade"))
    assert _is_coarsening(d)
    assert d.table.iloc[2].tolist()[1:4] == ["2013-07", "2013", "2010s"]
    with pytest.raises(InputError, match="not a multiple"):
        interval_hierarchy([1, 2, 3], [5, 7])


def test_not_a_coarsening_is_refused():
    bad = Hierarchy(pd.DataFrame({0: ["a", "b", "c"], 1: ["ab", "ab", "c"], 2: ["X", "Y", "Y"]}), "h_x.csv")
    with pytest.raises(InputError, match=r"h_x.csv: level 2 is not a coarsening of level 1: label 'ab'"):
        check_hierarchy(bad)


def test_value_missing_from_hierarchy_names_value_and_file(tmp_path):
    (tmp_path / "data_hierarchy_x.csv").write_text("a;A;*\nb;A;*\n")
    hier = find_hierarchies(tmp_path, ["x"])
    with pytest.raises(InputError, match=r"data_hierarchy_x.csv: value 'zz' of column 'x' is not in the hierarchy"):
        Problem(pd.DataFrame({"x": ["a", "zz"]}), ["x"], hier)


def test_missing_hierarchy_file(tmp_path):
    with pytest.raises(InputError, match=r"no hierarchy file for quasi-identifier 'age'"):
        find_hierarchies(tmp_path, ["age"])


def test_wide_keys_split_into_stages():
    # 12 columns with 60 values each: 60^12 > 2^62, so keys are built in stages; the classes
    # must still be exactly the distinct rows (reference: pandas drop_duplicates)
    rng = np.random.default_rng(0)
    n, q = 500, 12
    cols = {f"c{j}": [str(v) for v in rng.integers(0, 60, size=n)] for j in range(q)}
    df = pd.DataFrame(cols)
    df = pd.concat([df, df.iloc[:50]], ignore_index=True)
    hier = {c: Hierarchy(pd.DataFrame({0: [str(i) for i in range(60)], 1: ["*"] * 60}), c) for c in cols}
    p = Problem(df, list(cols), hier)
    assert p.table(np.zeros(q, dtype=np.int64)).n_classes == len(df.drop_duplicates())
    lv = np.zeros(q, dtype=np.int64)
    lv[:6] = 1
    assert p.table(lv).n_classes == len(df.iloc[:, 6:].drop_duplicates())
