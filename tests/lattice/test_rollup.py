"""Roll-up, pivots and the bounded table cache: a node's table never depends on where it came from."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.lattice import Evaluator, KAnonymity, Problem, exact, exhaustive

from .test_search import S_HIER, random_problem


def _direct_classes(df: pd.DataFrame, qis, hier, levels, sensitive=None) -> dict:
    """Class sizes (and sensitive counts) of one node with pandas only: each QI mapped to its
    label at the node's level through the hierarchy table, then a group-by."""
    g = pd.DataFrame({q: df[q].map(dict(zip(hier[q].table[0], hier[q].table[lv]))) for q, lv in zip(qis, levels)})
    if sensitive is not None:
        g["_s"] = df[sensitive].to_numpy()
        return {k: int(v) for k, v in g.groupby(list(qis) + ["_s"]).size().items()}
    sizes = g.groupby(list(qis)).size()
    return {(k if isinstance(k, tuple) else (k,)): int(v) for k, v in sizes.items()}


def _table_classes(p: Problem, levels, with_sensitive: bool) -> dict:
    t = p.table(levels)
    gen = p.generalised_codes(t, levels)
    labels = [tuple(str(p.columns[j].labels[int(levels[j])][gen[c, j]]) for j in range(len(p.qis)))
              for c in range(t.n_classes)]
    if not with_sensitive:
        return {labels[c]: int(t.class_size[c]) for c in range(t.n_classes)}
    sens = p.sens_labels[p.sens[t.rep]]
    return {labels[int(t.cls[e])] + (str(sens[e]),): int(t.cnt[e]) for e in range(t.n_rows)}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), pivot_rows=st.sampled_from([1, 4, 10 ** 9]),
       cache_rows=st.sampled_from([1, 30, 10 ** 9]), with_sensitive=st.booleans(), data=st.data())
def test_rolled_up_table_equals_direct_count(seed, pivot_rows, cache_rows, with_sensitive, data):
    # reference: a pandas group-by of the records at each node (independent of the kernels);
    # the nodes are visited in a random order, so each is rolled up from whatever the cache
    # (with pivots forced on or off, and a budget that evicts everything or nothing) holds
    df, qis, hier, _, _ = random_problem(seed)
    p = Problem(df, qis, hier, sensitive="s" if with_sensitive else None, pivot_rows=pivot_rows,
                cache_rows=cache_rows)
    order = data.draw(st.permutations(range(p.n_nodes)))
    for node in order[:25]:
        lv = p.levels_of(node)
        got = _table_classes(p, lv, with_sensitive)
        ref = _direct_classes(df, qis, hier, lv, "s" if with_sensitive else None)
        assert got == ref, (lv, pivot_rows, cache_rows)
    assert p._cache_rows <= max(cache_rows, max(p._slot_rows[p._slot_node >= 0], default=0))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), a=st.integers(0, 10 ** 6), b=st.integers(0, 10 ** 6))
def test_rollup_from_any_node_below_equals_rollup_from_the_base(seed, a, b):
    # for a random pair N <= N' (N the meet of two random nodes), N' rolled up from N's table
    # has the same classes, counts and entropy sums as N' counted from the base patterns
    df, qis, hier, _, _ = random_problem(seed)
    p = Problem(df, qis, hier, sensitive="s", sensitive_hierarchy=S_HIER)
    lo = np.minimum(p.levels_of(a % p.n_nodes), p.levels_of(b % p.n_nodes))
    hi = np.maximum(p.levels_of(a % p.n_nodes), p.levels_of(b % p.n_nodes))
    below = p._make_table(p.base.rep, p.base.cnt, p.base.wsum, lo)
    via = p._rollup(below, hi)
    direct = p._rollup(p.base, hi)

    def canon(t):
        gen = p.generalised_codes(t, hi)
        key = [tuple(gen[c]) for c in range(t.n_classes)]
        order = sorted(range(t.n_classes), key=lambda c: key[c])
        ent = sorted((key[int(t.cls[e])], int(p.sens[t.rep[e]]), int(t.cnt[e])) for e in range(t.n_rows))
        return ([key[c] for c in order], [int(t.class_size[c]) for c in order],
                [round(float(t.class_wsum[c]), 9) for c in order], ent)

    assert canon(via) == canon(direct)
    assert int(via.class_size.sum()) == p.n


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 5), suppression=st.sampled_from([0.0, 0.05, 0.2]),
       pivot_rows=st.sampled_from([1, 10 ** 9]), cache_rows=st.sampled_from([1, 10 ** 9]))
def test_exact_optimum_does_not_depend_on_pivots_or_cache(seed, k, suppression, pivot_rows, cache_rows):
    # reference: the exhaustive check of every node with the default cache
    df, qis, hier, _, _ = random_problem(seed)
    ref_p = Problem(df, qis, hier)
    try:
        ref = exhaustive(Evaluator(ref_p, [KAnonymity(k)], suppression, "discernibility"))
    except InputError:  # no node satisfies
        return
    p = Problem(df, qis, hier, pivot_rows=pivot_rows, cache_rows=cache_rows)
    got = exact(Evaluator(p, [KAnonymity(k)], suppression, "discernibility"))
    assert got.optimal and got.value == ref.value
