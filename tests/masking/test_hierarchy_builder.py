"""The hierarchy builder: every kind gives one parent per value and label at every level, levels
that coarsen monotonically, intervals that hold their values, and a CSV that recode, generalise
(the lattice's encoder) and a table dimension read back."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata, ParameterError
from sdckit.errors import InputError
from sdckit.lattice.hierarchies import as_text, encode
from sdckit.masking.hierarchy import read_hierarchy
from sdckit.masking.hierarchy_builder import build_hierarchy, hierarchy_csv, hierarchy_levels, write_hierarchy
from sdckit.registry import build_step
from sdckit.tables.dimensions import hierarchy_from_arx


def assert_tree(h, values):
    """One row per distinct value; each level's label is a function of the level below's label
    (one parent); the number of distinct labels never grows going up; ``*`` on top."""
    t = h.table
    raw = t.iloc[:, 0]
    assert not raw.duplicated().any()
    assert set(raw) == set(as_text(pd.Series(values).dropna()))
    distinct = [t.iloc[:, i].nunique() for i in range(t.shape[1])]
    assert distinct == sorted(distinct, reverse=True)
    for lvl in range(t.shape[1] - 1):
        parents = t.groupby(t.columns[lvl])[t.columns[lvl + 1]].nunique()
        assert (parents == 1).all(), f"a label of level {lvl} has two parents"
    assert set(t.iloc[:, -1]) == {"*"} or t.iloc[:, -1].nunique() == 1


def widths_chain():
    return st.lists(st.sampled_from([1, 2, 3, 5]), min_size=1, max_size=3).map(
        lambda fs: list(np.cumprod(fs).astype(int)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-50, 120), min_size=1, max_size=60), widths_chain())
def test_intervals_cover_their_values(values, widths):
    h = build_hierarchy(values, "intervals", {"widths": widths})
    assert_tree(h, values)
    for row in h.table.to_numpy().tolist():
        v = int(row[0])
        for label in row[1:-1]:
            m = re.fullmatch(r"(-?\d+)-(-?\d+)", label)
            assert m, label
            lo, hi = int(m.group(1)), int(m.group(2))
            assert lo <= v <= hi
    # a coarser range holds the finer one
    for lvl in range(1, h.table.shape[1] - 2):
        for a, b in zip(h.table.iloc[:, lvl], h.table.iloc[:, lvl + 1], strict=True):
            (a0, a1), (b0, b1) = (map(int, re.fullmatch(r"(-?\d+)-(-?\d+)", x).groups()) for x in (a, b))
            assert b0 <= a0 and a1 <= b1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False).map(lambda x: round(x, 2) + 0.0), min_size=1, max_size=40),
       widths_chain())
def test_intervals_of_decimals_hold_their_values(values, widths):
    values = values + [0.25]   # not all whole numbers: half-open ranges "[a, b)"
    h = build_hierarchy(values, "intervals", {"widths": [w * 0.5 for w in widths]})
    assert_tree(h, values)
    for row in h.table.to_numpy().tolist():
        v = float(row[0])
        for label in row[1:-1]:
            lo, hi = (float(x) for x in re.fullmatch(r"\[(.+), (.+)\)", label).groups())
            assert lo <= v < hi or np.isclose(v, lo)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(list("abcdefghij")), min_size=1, max_size=50), widths_chain())
def test_grouping_groups_ordered_values(values, sizes):
    h = build_hierarchy(values, "grouping", {"sizes": sizes})
    assert_tree(h, values)
    ordered = sorted(set(values))
    for row in h.table.to_numpy().tolist():
        for label in row[1:-1]:
            first, last = re.fullmatch(r"\[(.+)\.\.(.+)\]", label).groups()
            assert first <= row[0] <= last and ordered.index(first) <= ordered.index(last)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.from_regex(r"[A-Z0-9]{1,6}", fullmatch=True), min_size=1, max_size=40))
def test_masking_masks_from_the_right(values):
    h = build_hierarchy(values, "masking", {})
    assert_tree(h, values)
    for row in h.table.to_numpy().tolist():
        v = row[0]
        for i, label in enumerate(row[1:len(v) + 1], start=1):
            assert label == v[:len(v) - i] + "*" * i


@settings(max_examples=40, deadline=None)
@given(st.lists(st.dates(min_value=pd.Timestamp("1950-01-01").date(),
                         max_value=pd.Timestamp("2030-12-31").date()), min_size=1, max_size=40))
def test_dates_go_day_month_year_decade(days):
    values = [d.isoformat() for d in days]
    h = build_hierarchy(values, "dates", {"levels": ["month", "quarter", "year", "decade"]})
    assert_tree(h, values)
    for day, month, quarter, year, decade in h.table.iloc[:, :5].to_numpy().tolist():
        assert month == day[:7] and year == day[:4] and quarter.startswith(year + "-Q")
        assert decade == f"{int(year) // 10 * 10}s"


def test_the_csv_is_read_by_recode_generalise_and_tables(tmp_path):
    """Round trip through the three readers: recode's generalisation equals the level's column
    (read from the built table, not from the file), the lattice encodes the data against it, and a
    table dimension gets one node per label."""
    rng = np.random.default_rng(3)
    age = rng.integers(0, 95, 300)
    h = build_hierarchy(age, "intervals", {"widths": [5, 10, 50]})
    path = write_hierarchy(h, tmp_path / "age.csv")
    assert path.read_text().splitlines()[0].count(";") == 4   # value, 3 levels, "*"
    back = read_hierarchy(path)
    pd.testing.assert_frame_equal(back.table, h.table.astype(str), check_dtype=False)
    md = Microdata(pd.DataFrame({"age": age, "sex": rng.integers(1, 3, 300)}), key_vars=["age", "sex"])
    out = build_step("recode", {"variable": "age", "hierarchy_file": str(path), "level": 2}).apply(md, rng=0)
    expect = dict(zip(h.table.iloc[:, 0], h.table.iloc[:, 2], strict=True))
    assert out.microdata.frame["age"].astype(str).tolist() == [expect[str(a)] for a in age]
    enc, _ = encode("age", pd.Series(age), back)
    assert enc.height == 4 and enc.n_codes[-1] == 1
    th = hierarchy_from_arx(path)
    labels = set(h.table.iloc[:, 1:-1].to_numpy().ravel()) | set(h.table.iloc[:, 0])
    assert labels <= set(th.codes)
    with pytest.raises(InputError, match="already exists"):
        write_hierarchy(h, path)


def test_levels_table_and_text():
    h = build_hierarchy(["1234", "1299", "5678"], "masking", {"n_levels": 2})
    view = hierarchy_levels(h)
    assert view["columns"] == ["value", "level 1", "level 2", "level 3"]
    assert view["rows"][0] == ["1234", "123*", "12**", "*"]
    assert view["distinct"] == [3, 3, 2, 1]
    assert hierarchy_csv(h).splitlines()[1] == "1299;129*;12**;*"


@pytest.mark.parametrize("kind, settings_, match", [
    ("spiral", {}, "'kind' parameter of build_hierarchy must be one of"),
    ("intervals", {"widths": [5, 7]}, "not a multiple of 5"),
    ("intervals", {"widths": []}, "'widths' parameter"),
    ("intervals", {"widths": [5], "sizes": [2]}, "'sizes' parameter of build_hierarchy must be a setting of intervals"),
    ("grouping", {"sizes": [2.5]}, "positive whole numbers"),
    ("intervals", {"widths": [0.5]}, "whole numbers for the whole-number values"),
    ("masking", {"char": "**"}, "one character"),
    ("dates", {"levels": ["year", "month"]}, "distinct, increasing"),
])
def test_bad_settings_are_refused_in_one_line(kind, settings_, match):
    with pytest.raises((ParameterError, InputError), match=match) as err:
        build_hierarchy([1, 2, 3, 10], kind, settings_)
    assert "\n" not in str(err.value)


def test_intervals_refuse_text():
    with pytest.raises(InputError, match="'x' is not a number"):
        build_hierarchy(["1", "x"], "intervals", {"widths": [2]})
