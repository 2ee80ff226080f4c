import numpy as np
import pandas as pd
import pytest

from sdckit.errors import ParameterError
from sdckit.tables.rules import DominanceRule, PPercentRule, PQRule, ThresholdRule, primary_cells
from sdckit.tables.table import Table

from .helpers import seed_table


def test_threshold_on_seed_table_flags_the_seed_primaries():
    t = seed_table()
    p = primary_cells(t, ThresholdRule(3))
    # the seed marks 'p' at Alpha/Medium (1), Alpha/VeryHigh (1), Gamma/VeryHigh (2), Delta/VeryHigh (2)
    got = sorted(t.cell_codes(i) for i in np.flatnonzero(p.sensitive))
    assert got == sorted([("Alpha", "Medium"), ("Alpha", "VeryHigh"), ("Gamma", "VeryHigh"), ("Delta", "VeryHigh")])
    assert np.all(p.upper[p.sensitive] == 1)


def _mag():
    # cell x: contributions 50, 30, 15, 5 (X = 100); cell y: 40, 30, 30 (X = 100)
    df = pd.DataFrame({"a": ["x"] * 4 + ["y"] * 3, "t": [50.0, 30, 15, 5, 40, 30, 30]})
    return Table.from_microdata(df, ["a"], response="t")


def test_p_percent_rule_hand_computed():
    t = _mag()
    x, y = t.cell_index("x"), t.cell_index("y")
    p = primary_cells(t, PPercentRule(p=25))
    # x: X - x1 - x2 = 20 < 0.25 * 50 = 12.5? no -> safe; y: 30 < 10? no -> safe
    assert not p.sensitive[x] and not p.sensitive[y]
    p = primary_cells(t, PPercentRule(p=50))
    # x: 20 < 25 -> sensitive, level 25 - 20 = 5; y: 30 < 20? no
    assert p.sensitive[x] and p.upper[x] == pytest.approx(5) and p.lower[x] == pytest.approx(5)
    assert not p.sensitive[y]


def test_pq_rule_equals_p_rule_with_ratio():
    t = _mag()
    a = primary_cells(t, PQRule(p=25, q=50))
    b = primary_cells(t, PPercentRule(p=50))
    assert np.array_equal(a.sensitive, b.sensitive) and np.allclose(a.upper, b.upper)


def test_dominance_rule_hand_computed():
    t = _mag()
    x = t.cell_index("x")
    p = primary_cells(t, DominanceRule(n=2, k=75))
    # x: 50 + 30 = 80 > 75 -> sensitive, level 100/75 * 80 - 100 = 6.667; y: 70 > 75? no
    assert p.sensitive[x] and p.upper[x] == pytest.approx(100 / 75 * 80 - 100)
    assert not p.sensitive[t.cell_index("y")]


def test_zero_unsafe_marks_empty_cells():
    from .helpers import table_2d
    t = table_2d([[0, 5], [6, 7]])
    assert primary_cells(t, ThresholdRule(3)).n_primary == 0
    assert primary_cells(t, ThresholdRule(3), zero_unsafe=True).n_primary == 1


def test_parameter_message():
    with pytest.raises(ParameterError, match="The 'n' parameter of ThresholdRule must be an int >= 1. Got 0."):
        ThresholdRule(n=0)
