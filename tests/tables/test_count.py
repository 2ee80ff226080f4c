"""Exact counting of tables: the seed's figures and brute-force enumeration."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.tables.count import (
    CountTimeout,
    FibreTooLarge,
    bounded_compositions,
    count_bounded,
    count_rounded,
    count_suppressed,
    count_tables,
    count_tables_3way,
    enumerate_bounded,
    enumerate_tables,
)

ORIGINAL = np.array([[15, 1, 3, 1], [20, 10, 10, 15], [3, 10, 10, 2], [12, 14, 7, 2]])  # seed 002


def brute_force_tables(rows, cols):
    """All tables with the margins: free (R-1) x (C-1) block, the rest implied (independent of the DP)."""
    R, C = len(rows), len(cols)
    out = []
    ranges = [range(min(rows[i], cols[j]) + 1) for i in range(R - 1) for j in range(C - 1)]
    for free in itertools.product(*ranges):
        t = np.zeros((R, C), np.int64)
        t[:R - 1, :C - 1] = np.array(free, dtype=np.int64).reshape(R - 1, C - 1)
        t[:R - 1, C - 1] = np.array(rows[:R - 1]) - t[:R - 1, :C - 1].sum(1)
        t[R - 1, :] = np.array(cols) - t[:R - 1, :].sum(0)
        if (t >= 0).all() and t[R - 1].sum() == rows[R - 1]:
            out.append(t)
    return out


def test_seed_margins_count():
    # seed 002, "Release only the margins": 18,272,363,056 tables (computed by De Loera & Sturmfels)
    assert count_tables([20, 55, 25, 35], [50, 35, 30, 20]) == 18_272_363_056
    assert count_tables([50, 35, 30, 20], [20, 55, 25, 35]) == 18_272_363_056  # transposed


margins = st.integers(2, 3).flatmap(lambda R: st.integers(2, 3).flatmap(
    lambda C: st.lists(st.integers(0, 4), min_size=R * C, max_size=R * C).map(
        lambda v: np.array(v).reshape(R, C))))


@given(margins)
@settings(max_examples=40)
def test_count_equals_brute_force(table):
    rows, cols = table.sum(1).tolist(), table.sum(0).tolist()
    brute = brute_force_tables(rows, cols)
    assert count_tables(rows, cols) == len(brute)
    upper = np.minimum.outer(rows, cols)
    assert count_bounded(np.zeros_like(upper), upper, (rows, rows), (cols, cols)) == len(brute)
    enum = enumerate_tables(rows, cols)
    assert sorted(map(lambda t: t.tobytes(), enum)) == sorted(map(lambda t: t.tobytes(), brute))


def test_four_rows_uses_three_row_closed_form():
    # 4 x 3 margins: brute force over the free 3 x 2 block
    rows, cols = [3, 5, 2, 4], [6, 4, 4]
    assert count_tables(rows, cols) == len(brute_force_tables(rows, cols))


def test_bounded_compositions_by_hand():
    # x1 + x2 = 3 with x1 <= 1, x2 <= 3: (0,3), (1,2)
    assert bounded_compositions(3, [1, 3]) == 2
    assert bounded_compositions(5, [1, 3]) == 0


def test_seed_rounded_table_count():
    # seed 002, "Controlled Rounding (Base 3)": 1,025,908,683 possible original tables
    # (every cell, margin and the total within b - 1 = 2 of its rounded value)
    rounded = np.array([[15, 0, 3, 0, 18], [21, 9, 12, 15, 57], [3, 9, 9, 3, 24], [12, 15, 6, 3, 36],
                        [51, 33, 30, 21, 135]])
    assert count_rounded(rounded, 3) == 1_025_908_683


@given(st.lists(st.integers(0, 7), min_size=4, max_size=4), st.integers(2, 3))
@settings(max_examples=25)
def test_rounded_count_equals_brute_force(cells, b):
    # round a 2 x 2 table cell by cell to a multiple of b (additivity of the result is all we need)
    t = np.array(cells).reshape(2, 2)
    r = (t // b) * b
    full = np.zeros((3, 3), np.int64)
    full[:2, :2] = r
    full[:2, 2] = r.sum(1)
    full[2, :2] = r.sum(0)
    full[2, 2] = r.sum()
    w = b - 1
    brute = 0
    for v in itertools.product(*[range(max(0, x - w), x + w + 1) for x in r.ravel()]):
        s = np.array(v).reshape(2, 2)
        ok = (np.abs(s.sum(1) - full[:2, 2]) <= w).all() and (np.abs(s.sum(0) - full[2, :2]) <= w).all()
        brute += bool(ok and abs(s.sum() - full[2, 2]) <= w)
    assert count_rounded(full, b) == brute


def test_suppressed_count_by_brute_force():
    # seed 002's suppression pattern. Brute force: Alpha's three suppressed cells sum to 5 and
    # determine Gamma's and Delta's (two unknowns per column, one per row left): enumerate them
    mask = np.zeros((4, 4), bool)
    for i, j in [(0, 1), (0, 2), (0, 3), (2, 2), (2, 3), (3, 1), (3, 3)]:
        mask[i, j] = True
    rows, cols = ORIGINAL.sum(1), ORIGINAL.sum(0)
    brute = 0
    for a12, a13, a14, g13 in itertools.product(range(21), repeat=4):
        t = ORIGINAL.copy()
        t[0, 1], t[0, 2], t[0, 3], t[2, 2] = a12, a13, a14, g13
        t[2, 3] = rows[2] - t[2, :3].sum()
        t[3, 1] = cols[1] - t[:3, 1].sum()
        t[3, 3] = rows[3] - t[3, :3].sum()
        brute += bool((t >= 0).all() and (t.sum(1) == rows).all() and (t.sum(0) == cols).all())
    assert count_suppressed(ORIGINAL, mask, rows, cols) == brute


def test_3way_count_by_hand_and_enumeration():
    # 2 x 2 x 2 all ones: the fibre is t + x * move, move = +-1 checkerboard, x in {-1, 0, 1}
    t = np.ones((2, 2, 2), np.int64)
    assert count_tables_3way(t.sum(2), t.sum(1), t.sum(0)) == 3
    # 3 x 2 x 2: the no-3-way fibre has (I-1)(J-1)(K-1) = 2 free cells t[0,0,0], t[1,0,0]; every
    # other cell follows from the 2-way margins; brute force over the free pair
    rng = np.random.default_rng(5)
    t = rng.integers(0, 4, (3, 2, 2))
    a, b, c = t.sum(2), t.sum(1), t.sum(0)
    brute = 0
    for x0, x1 in itertools.product(range(13), repeat=2):
        s = np.zeros((3, 2, 2), np.int64)
        s[0, 0, 0], s[1, 0, 0] = x0, x1
        s[:2, 0, 1] = a[:2, 0] - s[:2, 0, 0]
        s[:2, 1, 0] = b[:2, 0] - s[:2, 0, 0]
        s[:2, 1, 1] = a[:2, 1] - s[:2, 1, 0]
        s[2] = c - s[:2].sum(0)
        brute += bool((s >= 0).all() and (s.sum(2) == a).all() and (s.sum(1) == b).all() and (s.sum(0) == c).all())
    assert count_tables_3way(a, b, c) == brute


def test_bad_input():
    with pytest.raises(InputError, match="row sums total 10 but the column sums total 11"):
        count_tables([5, 5], [5, 6])
    with pytest.raises(InputError, match="negative count -1"):
        count_tables([5, -1], [2, 2])
    with pytest.raises(InputError, match="non-integer count 2.5"):
        count_tables([2.5, 1], [2, 1.5])
    with pytest.raises(InputError, match="must come from one table"):
        count_tables_3way(np.ones((2, 2)), np.ones((2, 2)), 2 * np.ones((2, 2)))
    with pytest.raises(FibreTooLarge, match="18,272,363,056 tables"):
        enumerate_tables([20, 55, 25, 35], [50, 35, 30, 20])
    with pytest.raises(CountTimeout):
        count_tables([60] * 7, [70] * 6, time_limit=0.01)
    assert enumerate_bounded(np.zeros((2, 2), int), np.ones((2, 2), int), (3, 3), (0, 9)).shape == (0, 2, 2)
