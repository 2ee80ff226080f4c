import numpy as np
import pandas as pd
import pytest

from sdckit.errors import InputError
from sdckit.tables.table import Hierarchy, Table

from .helpers import seed_table


def test_seed_table_totals_and_relations():
    t = seed_table()
    v = t.value.reshape(t.shape)
    # totals of the seed's table (row totals 20/55/25/35, column totals 50/35/30/20, N = 135)
    assert v[0, 0] == 135
    assert list(v[1:, 0]) == [20, 55, 25, 35]
    assert list(v[0, 1:]) == [50, 35, 30, 20]
    assert np.allclose(t.relations @ t.value, 0)
    assert t.relations.shape == (10, 25)  # 5 row relations + 5 column relations
    assert t.is_inner.sum() == 16


def test_from_microdata_counts_and_top_contributions():
    df = pd.DataFrame({"a": ["x", "x", "y", "y", "y"], "b": ["u", "v", "u", "u", "v"],
                       "t": [5.0, 1.0, 7.0, 2.0, 4.0]})
    t = Table.from_microdata(df, ["a", "b"], response="t", n_top=2)
    # hand computation: cell (y, u) has contributions 7 and 2; (Total, u) has 7, 5, 2
    assert t.value[t.cell_index("y", "u")] == 9
    assert t.freq[t.cell_index("y", "u")] == 2
    assert list(t.top[t.cell_index("Total", "u")]) == [7, 5]
    assert t.value[t.cell_index("Total", "Total")] == 19
    assert np.allclose(t.relations @ t.value, 0)
    f = Table.from_microdata(df, ["a", "b"])
    assert f.value[f.cell_index("y", "Total")] == 3


def test_holdings_count_as_one_contributor():
    df = pd.DataFrame({"a": ["x"] * 3, "h": [1, 1, 2], "t": [3.0, 4.0, 5.0]})
    t = Table.from_microdata(df, ["a"], response="t", holding="h")
    i = t.cell_index("x")
    assert t.freq[i] == 2 and list(t.top[i][:2]) == [7, 5]


def test_hrc_hierarchy_and_three_levels():
    h = Hierarchy.from_hrc("A\n@A1\n@@A11\n@@A12\n@A2\nB\n")
    assert h.codes == ("Total", "A", "A1", "A11", "A12", "A2", "B")
    assert h.n_levels == 3
    df = pd.DataFrame({"r": ["A11", "A12", "A2", "B", "B"]})
    t = Table.from_microdata(df, ["r"], hierarchies={"r": h})
    assert t.value[t.cell_index("A1")] == 2 and t.value[t.cell_index("A")] == 3
    assert t.value[t.cell_index("Total")] == 5
    assert np.allclose(t.relations @ t.value, 0)


def test_parent_child_hierarchy():
    pc = pd.DataFrame({"parent": ["N", "N", "S"], "child": ["n1", "n2", "s1"]})
    h = Hierarchy.from_parent_child(pc)
    assert h.codes[0] == "Total" and set(h.leaves) == {"n1", "n2", "s1"}


def test_tauargus_region_hrc_reads(shared_data):
    h = Hierarchy.from_hrc(shared_data / "tauargus_meta" / "region2.hrc")
    assert h.n_levels >= 1 and len(h.leaves) > 3


def test_codes_missing_from_hierarchy_are_named():
    h = Hierarchy.from_hrc("A\n@A1\n")
    df = pd.DataFrame({"r": ["A1", "Q"]})
    with pytest.raises(InputError, match="'Q'"):
        Table.from_microdata(df, ["r"], hierarchies={"r": h})


def test_non_additive_table_names_the_totals():
    rows = []
    for i, r in enumerate(["Total", "a", "b"]):
        rows.append((r, [10, 4, 5][i]))
    df = pd.DataFrame(rows, columns=["d", "n"])
    with pytest.raises(InputError, match=r"\('Total',\) = 10 but its parts sum to 9"):
        Table.from_cells(df, ["d"], "n")


def test_negative_magnitudes_warn():
    df = pd.DataFrame({"a": ["x", "x"], "t": [5.0, -2.0]})
    with pytest.warns(UserWarning, match="absolute"):
        t = Table.from_microdata(df, ["a"], response="t")
    assert t.top[t.cell_index("x")][0] == 5 and t.top[t.cell_index("x")][1] == 2
