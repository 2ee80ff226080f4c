"""The roll-up kernel against a plain-Python grouping, and what the table cache keeps.

The reference grouping is a dict over tuples of each row's codes at the node (independent of
the kernels' mixed-radix keys, hashing and direct addressing); the cache tests check that a
table too large to be a cheaper source than the base is not cached and is still right.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.lattice import Evaluator, KAnonymity, Problem, exact, exhaustive
from sdckit.lattice import _kernels as K

from .test_kernel_backends import coded_tables
from .test_rollup import _direct_classes, _table_classes
from .test_search import random_problem


def _reference_groups(raw, counts, wsum, cm3, lv):
    """Rows grouped by their tuple of codes at ``lv``, in order of first appearance: the first
    row, the summed counts and the summed weights (in row order) of each group."""
    seen: dict[tuple, int] = {}
    first, csum, wout = [], [], []
    for i in range(raw.shape[0]):
        key = tuple(int(cm3[j, lv[j], raw[i, j]]) for j in range(raw.shape[1]))
        g = seen.setdefault(key, len(seen))
        if g == len(first):
            first.append(i)
            csum.append(0)
            wout.append(0.0)
        csum[g] += int(counts[i])
        wout[g] += float(wsum[i])
    return first, csum, wout


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@settings(max_examples=100, deadline=None)
@given(t=coded_tables())
def test_rollup_groups_rows_by_their_codes_at_the_node(backend, t):
    # columns with one code at their level are skipped by the kernels and int8 codes are read
    # unsigned: neither may change a class, its first row or its sums, for any code width
    raw, counts, wsum, cm3, lv, ncodes = t
    first, csum, wout = _reference_groups(raw, counts, wsum, cm3, lv)
    K.use(backend)
    try:
        for width in (np.int8, np.int16, np.int32):
            gid, f, c, w = K.rollup(raw.astype(width), counts, wsum, cm3, lv, ncodes)
            assert f.tolist() == first and c.tolist() == csum
            assert w.tolist() == wout  # summed in row order: equal to the last bit
            assert gid.tolist() == [first.index(int(f[g])) for g in gid]  # gid numbers first appearances
    finally:
        K.use("auto")


def test_a_table_larger_than_half_the_base_is_not_cached():
    # every record distinct: the bottom node's table has as many rows as the base; a node with
    # one column generalised fully keeps few classes and is cached
    rng = np.random.default_rng(7)
    df, qis, hier, _, _ = random_problem(11)
    p = Problem(df, qis, hier)
    bottom = np.zeros(len(qis), dtype=np.int64)
    assert p.table(bottom).n_rows > p.base.n_rows // 2
    assert p.node_id(bottom) not in p._slot_of
    assert p.table(bottom).raw is None  # no copy of the codes is made for a table not cached
    for node in rng.permutation(p.n_nodes)[:30]:
        lv = p.levels_of(int(node))
        tab = p.table(lv)
        assert _table_classes(p, lv, False) == _direct_classes(df, qis, hier, lv)
        assert (int(node) in p._slot_of) == (tab.n_rows <= p.base.n_rows // 2)
    assert all(t is None or t.n_rows <= p.base.n_rows // 2 for t in p._slot_table)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_exact_search_equals_exhaustive_with_the_cache_rule(seed):
    # the exact search reaches the exhaustive optimum with tables of more than half the base
    # not cached (nodes rolled up from the base or from smaller cached tables instead)
    df, qis, hier, _, _ = random_problem(seed)
    p = Problem(df, qis, hier, pivot_rows=1)
    r = exact(Evaluator(p, [KAnonymity(2)], 0.1, "discernibility"))
    ref = exhaustive(Evaluator(Problem(df, qis, hier), [KAnonymity(2)], 0.1, "discernibility"))
    assert (r.value, r.levels) == (ref.value, ref.levels)
