"""The distinct-row grouping of local suppression's kernels found by sorting gives the same
output as the grouping it replaced (a count over the whole combination-code space through
``frequencies_from_codes``): same codes, same moves, same restored values, for both the dense
(ascending code) and the sparse (first appearance) order of the rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit.masking.local_suppression as ls
from sdckit.risk.frequencies import frequencies_from_codes


def _rows_by_counting(columns, n_categories, weights):
    """The grouping before the change, kept here as the reference (it counts over the code space)."""
    inv = frequencies_from_codes(list(columns), list(n_categories)).group
    G = int(inv.max()) + 1
    first = np.full(G, inv.size, dtype=np.int64)
    np.minimum.at(first, inv, np.arange(inv.size, dtype=np.int64))
    w = np.bincount(inv, weights=weights, minlength=G).astype(np.float64)
    return inv, first, w


def _run(codes, ncat, k, importance, weights, seed):
    out, moves = ls.suppress_to_k(codes, ncat, k, importance, weights=weights, rng=np.random.default_rng(seed))
    back, restored = ls.restore_suppressions(codes, out, ncat, k, weights=weights,
                                             rng=np.random.default_rng(seed + 1), max_checks=50)
    return out, moves, back, restored


@st.composite
def keys(draw):
    n = draw(st.integers(8, 120))
    m = draw(st.integers(1, 5))
    # large category counts put the 2m-column grouping of the restore pass on the sparse path
    ncat = draw(st.lists(st.sampled_from([1, 2, 3, 5, 40, 300]), min_size=m, max_size=m)
                .filter(lambda c: int(np.prod([(x + 1) ** 2 for x in c], dtype=object)) < 2**62))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    codes = [rng.integers(0, c, n).astype(np.int32) for c in ncat]
    if draw(st.booleans()):  # some values already missing
        for c in codes:
            c[rng.random(n) < 0.1] = -1
    weights = rng.uniform(1, 5, n) if draw(st.booleans()) else None
    k = draw(st.integers(2, 4))
    return codes, ncat, k, weights


@settings(max_examples=60, deadline=None)
@given(keys(), st.integers(0, 1000))
def test_sorted_grouping_gives_the_same_suppressions(data, seed):
    codes, ncat, k, weights = data
    importance = list(range(1, len(codes) + 1))
    new = _run(codes, ncat, k, importance, weights, seed)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ls, "_rows", _rows_by_counting)
        old = _run(codes, ncat, k, importance, weights, seed)
    assert new[1] == old[1] and new[3] == old[3]
    for a, b in zip(new[0] + new[2], old[0] + old[2], strict=True):
        np.testing.assert_array_equal(a, b)


def test_both_orders_are_exercised():
    """The strategy reaches both paths: a code space above the dense limit, and one below it."""
    from sdckit.risk.frequencies import DENSE_LIMIT

    assert (301 ** 6) > DENSE_LIMIT and (4 ** 10) < DENSE_LIMIT
    rng = np.random.default_rng(0)
    for ncat in ([300] * 3, [3] * 5):
        codes = [rng.integers(0, c, 60).astype(np.int32) for c in ncat]
        new = ls._rows(codes + codes, ncat * 2, None)
        old = _rows_by_counting(codes + codes, ncat * 2, None)
        for a, b in zip(new, old, strict=True):
            np.testing.assert_array_equal(a, b)
