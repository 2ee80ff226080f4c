"""The priority-based hierarchy builder against the tables ARX 3.9.2's builder prints, and its
promises as properties."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.lattice.hierarchies import check_hierarchy, priority_hierarchy
from sdckit.masking.hierarchy_builder import build_hierarchy

# Printed by ARX 3.9.2's HierarchyBuilderPriorityBased (benchmarks/arx_driver/ArxPriorityHierarchy.java):
#   java ArxPriorityHierarchy highest_to_lowest 4 integer 7 3 12 1 9 10 2 13 5 11 4 8 6
ARX_INTEGER_H2L_4 = """13;13;13;13;*
12;12;12;12;*
11;11;11;11;*
10;10;10;10;*
9;9;9;*;*
8;8;8;*;*
7;7;7;*;*
6;6;*;*;*
5;5;*;*;*
4;4;*;*;*
3;*;*;*;*
2;*;*;*;*
1;*;*;*;*"""
# Printed by ARX 3.9.2's HierarchyBuilderPriorityBased (benchmarks/arx_driver/ArxPriorityHierarchy.java):
#   java ArxPriorityHierarchy lowest_to_highest 10 priorities nurse=2 clerk=5 surgeon=1 driver=2 teacher=3 farmer
ARX_PRIORITIES_L2H_10 = """farmer;farmer;farmer;farmer;farmer;farmer;*
surgeon;surgeon;surgeon;surgeon;surgeon;*;*
nurse;nurse;nurse;nurse;*;*;*
driver;driver;driver;*;*;*;*
teacher;teacher;*;*;*;*;*
clerk;*;*;*;*;*;*"""
# Printed by ARX 3.9.2's HierarchyBuilderPriorityBased (benchmarks/arx_driver/ArxPriorityHierarchy.java):
#   java ArxPriorityHierarchy lowest_to_highest 3 string pear apple fig banana cherry date kiwi
ARX_STRING_L2H_3 = """apple;apple;apple;*
banana;banana;banana;*
cherry;cherry;cherry;*
date;date;*;*
fig;fig;*;*
kiwi;*;*;*
pear;*;*;*"""


def _rows(h):
    return [";".join(map(str, r)) for r in h.table.to_numpy(dtype=object).tolist()]


def test_equals_arx_integers_highest_to_lowest():
    h = priority_hierarchy([7, 3, 12, 1, 9, 10, 2, 13, 5, 11, 4, 8, 6], max_levels=4)
    assert _rows(h) == ARX_INTEGER_H2L_4.splitlines()


def test_equals_arx_priorities_lowest_to_highest():
    values = ["nurse", "clerk", "surgeon", "driver", "teacher", "farmer"]
    h = priority_hierarchy(values, priorities={"nurse": 2, "clerk": 5, "surgeon": 1, "driver": 2, "teacher": 3},
                           direction="lowest_to_highest")
    assert _rows(h) == ARX_PRIORITIES_L2H_10.splitlines()


def test_equals_arx_text_through_the_editor_entry_point():
    values = pd.Series(["pear", "apple", "fig", "banana", "cherry", "date", "kiwi", "pear", None])
    h = build_hierarchy(values, "priority", {"direction": "lowest_to_highest", "max_levels": "3"}, name="fruit")
    assert _rows(h) == ARX_STRING_L2H_3.splitlines()


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.integers(-50, 50), min_size=1, max_size=30, unique=True),
       max_levels=st.integers(1, 12), descending=st.booleans(), with_priorities=st.booleans())
def test_promises(values, max_levels, descending, with_priorities):
    prio = {str(v): (v * 7) % 5 for v in values} if with_priorities else None
    h = priority_hierarchy(values, priorities=prio, max_levels=max_levels,
                           direction="highest_to_lowest" if descending else "lowest_to_highest")
    t = h.table
    levels = min(len(values), max_levels)
    check_hierarchy(h)   # one parent per label at every level
    assert t.shape == (len(values), levels + 1)
    assert sorted(t[0].astype(int)) == sorted(values) and (t[levels] == "*").all()
    shown = [(t[c] != "*").sum() for c in range(levels + 1)]
    assert shown[0] == len(values) and all(a >= b for a, b in zip(shown, shown[1:]))
    # a value shown at a level is itself; the shown values are the first rows (the priority order)
    for c in range(levels + 1):
        mask = (t[c] != "*").to_numpy()
        assert (t.loc[mask, c] == t.loc[mask, 0]).all()
        assert mask[: mask.sum()].all()
    key = [prio[str(v)] for v in t[0].astype(int)] if prio else list(t[0].astype(int))
    assert key == sorted(key, reverse=descending)
    # each of the levels hides ceil/floor of m / levels values more (ARX's offset m / levels)
    assert all(shown[c] - shown[c + 1] >= 1 for c in range(levels))


def test_bad_settings():
    with pytest.raises(InputError, match="direction"):
        priority_hierarchy(["a"], direction="up")
    with pytest.raises(InputError, match="max_levels"):
        priority_hierarchy(["a"], max_levels=0)
    with pytest.raises(InputError, match="whole number"):
        priority_hierarchy(["a"], priorities={"a": 1.5})
