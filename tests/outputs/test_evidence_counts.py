"""Shortcuts of the recording: the evidence of a count table (every record adds 1) equals the
general computation with a value of 1 per record (an independent path: lexsort and ranks); an
integer axis's levels from numpy equal pandas' sorted factorize."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.outputs.checks import cell_evidence


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 300), st.booleans(), st.integers(1, 4),
       st.integers(0, 2**31 - 1))
def test_count_shortcut_equals_the_general_path(r, c, n, margins, nk_n, seed):
    rng = np.random.default_rng(seed)
    cell = rng.integers(-1, r * c, n)
    fast = cell_evidence(cell, None, (r, c), margins=margins, nk_n=nk_n)
    general = cell_evidence(cell, np.ones(n), (r, c), margins=margins, nk_n=nk_n)
    for name in ("count", "total", "largest", "top2", "top_n", "negative", "missing"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(general, name), err_msg=name)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-3, 5), min_size=1, max_size=60), st.lists(st.booleans(), min_size=1, max_size=60))
def test_integer_axes_take_numpy_levels_equal_to_pandas_factorize(ints, bools):
    import pandas as pd

    from sdckit.outputs.session import _codes

    n = min(len(ints), len(bools))
    a = pd.Series(ints[:n], name="a")
    b = pd.Series(bools[:n], name="b")
    code, labels = _codes([a, b])
    # independent: pandas' own factorize (sorted) on each axis, combined in mixed radix
    ca, ua = pd.factorize(a, sort=True)
    cb, ub = pd.factorize(b, sort=True)
    np.testing.assert_array_equal(code, ca * len(ub) + cb)
    assert labels == list(pd.MultiIndex.from_product([list(ua), list(ub)]))
    assert [type(x) for x in labels[0]] == [type(x) for x in list(pd.MultiIndex.from_product([list(ua), list(ub)]))[0]]
