import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit.tables.audit import audit
from sdckit.tables.rules import ThresholdRule, primary_cells

from .helpers import SEED_COLS, SEED_INNER, SEED_ROWS, enumerate_intervals, seed_table, table_2d

SEED_PATTERN = [("Alpha", "Medium"), ("Alpha", "High"), ("Alpha", "VeryHigh"), ("Gamma", "High"),
                ("Gamma", "VeryHigh"), ("Delta", "Medium"), ("Delta", "VeryHigh")]


def test_seed_pattern_intervals_match_enumeration():
    t = seed_table()
    sup = np.zeros(t.n_cells, bool)
    for c in SEED_PATTERN:
        sup[t.cell_index(*c)] = True
    res = audit(t, sup, primary=primary_cells(t, ThresholdRule(3)))
    assert res.ok
    mask = np.zeros((4, 4), bool)
    for r, c in SEED_PATTERN:
        mask[SEED_ROWS.index(r), SEED_COLS.index(c)] = True
    # reference: brute-force enumeration of every integer completion
    ref = enumerate_intervals(SEED_INNER, mask)
    for (i, j), want in ref.items():
        assert res.interval(t.cell_index(SEED_ROWS[i], SEED_COLS[j])) == want
    # integer audit gives the same bounds on a 2-D table (totally unimodular relations)
    resi = audit(t, sup, integer=True)
    assert np.allclose(resi.lower, res.lower) and np.allclose(resi.upper, res.upper)


def test_single_suppression_in_a_row_is_disclosed():
    t = table_2d([[1, 5], [6, 7]])
    p = primary_cells(t, ThresholdRule(3))
    sup = p.sensitive.copy()
    res = audit(t, sup, primary=p)
    assert res.interval(t.cell_index("r0", "c0")) == (1, 1)
    assert not res.ok and res.n_unprotected == 1


def test_four_cycle_protects():
    t = table_2d([[1, 5], [6, 7]])
    p = primary_cells(t, ThresholdRule(3))
    sup = np.zeros(t.n_cells, bool)
    for c in [("r0", "c0"), ("r0", "c1"), ("r1", "c0"), ("r1", "c1")]:
        sup[t.cell_index(*c)] = True
    res = audit(t, sup, primary=p)
    # hand: y00 in [max(0, 6 - 13 + ...)...]: y00 = 1 + d with d in [-1, 5] (y01 = 5 - d >= 0, y10 = 6 - d >= 0)
    assert res.interval(t.cell_index("r0", "c0")) == (0, 6)
    assert res.ok



@given(st.integers(0, 10_000))
def test_lp_intervals_equal_enumeration_on_random_2d_tables(seed):
    # 2-D tables with margins: the relations are totally unimodular, so LP bounds are the
    # integer bounds; the reference is the brute-force enumeration of integer completions
    rng = np.random.default_rng(seed)
    r, c = rng.integers(2, 4), rng.integers(2, 4)
    inner = rng.integers(0, 6, size=(r, c))
    mask = rng.random((r, c)) < 0.5
    if not mask.any():
        mask[0, 0] = True
    t = table_2d(inner)
    sup = np.zeros(t.shape, bool)
    sup[1:, 1:] = mask
    res = audit(t, sup.reshape(-1))
    for (i, j), want in enumerate_intervals(inner, mask).items():
        assert res.interval(t.cell_index(f"r{i}", f"c{j}")) == pytest.approx(want, abs=1e-7)
