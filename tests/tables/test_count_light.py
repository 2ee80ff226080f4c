"""The numpy ie-mitm count for small margins (sdckit.tables.count_light) against the compiled
kernel of sdckit.tables.count_ie and the row dynamic programme (exact Python integers)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.tables import count_ie, count_light
from sdckit.tables.count import count_tables_exact, predict_count_cost, row_dp_count


@st.composite
def margins(draw, max_cols=4, max_rows=6, max_total=60):
    """Row and column sums of one table (at most four columns), drawn from a random table."""
    n_rows = draw(st.integers(2, max_rows))
    n_cols = draw(st.integers(2, max_cols))
    cells = draw(st.lists(st.lists(st.integers(0, max_total // (n_rows * n_cols) + 2), min_size=n_cols,
                                   max_size=n_cols), min_size=n_rows, max_size=n_rows))
    rows = [sum(r) for r in cells]
    cols = [sum(c) for c in zip(*cells)]
    return (rows, cols) if draw(st.booleans()) else (cols, rows)


@settings(max_examples=150, deadline=None)
@given(m=margins())
def test_numpy_count_equals_the_compiled_kernel(m):
    rows, cols = m
    small = count_light.ie_mitm_small(rows, cols)
    assert small is not None                      # these margins are all small
    assert small == count_ie.ie_mitm_count(rows, cols)


@settings(max_examples=60, deadline=None)
@given(m=margins(max_rows=4, max_total=30))
def test_numpy_count_equals_the_row_dp(m):
    rows, cols = m
    assert count_light.ie_mitm_small(rows, cols) == row_dp_count(rows, cols)


def test_hair_eye_margins():
    # Diaconis & Gangolli (1995): 1,225,914,276,768,514 tables
    assert count_light.ie_mitm_small([108, 286, 71, 127], [220, 215, 93, 64]) == 1_225_914_276_768_514


def test_the_rule_picks_what_the_compiled_path_picks():
    # same count, method and prediction whether the numpy path runs or not
    for rows, cols in (([108, 286, 71, 127], [220, 215, 93, 64]), ([20, 55, 25, 35], [50, 35, 30, 20]),
                       ([5, 3, 2], [4, 4, 2]), ([6, 6], [4, 4, 4])):
        res = count_tables_exact(rows, cols)
        cost = {k: v for k, v in predict_count_cost(rows, cols).items() if k != "row-dp"}
        assert res.method == min(cost, key=lambda k: cost[k][0])
        assert res.predicted_seconds == cost[res.method][0]
        assert res.count == count_ie.ie_mitm_count(rows, cols)


def test_large_margins_are_left_to_the_kernel():
    # work above SMALL_IE_WORK, or more than four columns and rows
    assert count_light.ie_mitm_small([300] * 4, [300] * 4) is None
    assert count_light.ie_mitm_small([9, 8, 7, 6, 5], [7] * 5) is None


@pytest.mark.parametrize("rows,cols", [([0, 3, 0], [1, 2]), ([5], [2, 3]), ([1, 1], [1, 2])])
def test_degenerate_margins(rows, cols):
    want = 0 if sum(rows) != sum(cols) else row_dp_count(rows, cols)
    assert count_light.ie_mitm_small(rows, cols) == want
