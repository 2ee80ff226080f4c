"""Failing-by-projection tags and the class-count bound, checked against every node (brute force)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.lattice import Evaluator, KAnonymity, Problem
from sdckit.lattice.metrics import class_count_bound

from .test_search import MODELS, S_HIER, random_problem


def _below(p: Problem, a: int, b: int) -> bool:
    return bool(np.all(p.levels_of(a) <= p.levels_of(b)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), model=st.sampled_from(sorted(MODELS)),
       suppression=st.sampled_from([0.0, 0.1, 0.3]), max_nodes=st.sampled_from([4, 16, 1024]))
def test_projection_failing_nodes_fail(seed, model, suppression, max_nodes):
    # reference: every node evaluated; a node tagged failing from a projection must fail
    df, qis, hier, _, pop = random_problem(seed, population=model == "delta")
    p = Problem(df, qis, hier, sensitive="s", sensitive_hierarchy=S_HIER, population=pop)
    ev = Evaluator(p, MODELS[model](), suppression, "discernibility")
    fail = p.projection_failing(ev.k_min, ev.max_suppressed, max_nodes)
    for node in np.flatnonzero(fail):
        assert not ev.evaluate(int(node)).satisfied, (model, p.levels_of(int(node)))
    # the tagged set is a down-set
    for a in np.flatnonzero(fail):
        for q in ev.predecessors(int(a)):
            assert fail[q]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 6), suppression=st.sampled_from([0.0, 0.1, 0.3]))
def test_class_count_bound_is_below_dm_of_every_satisfying_node_above(seed, k, suppression):
    # reference: DM of every node by exhaustive evaluation. For each node N, C(N) = fewest of
    # its label combinations and the classes of any node below it; the bound must lie below
    # the DM of every satisfying node at or above N, and, with the records N must suppress by
    # its projections, below the DM of N itself
    df, qis, hier, _, _ = random_problem(seed)
    p = Problem(df, qis, hier)
    ev = Evaluator(p, [KAnonymity(k)], suppression, "discernibility")
    evs = [ev.evaluate(n) for n in range(p.n_nodes)]
    s_lo = p.projection_suppressed_bound(k, 16)
    for a in range(p.n_nodes):
        assert s_lo[a] <= evs[a].n_suppressed
        lv = p.levels_of(a)
        combos = float(np.prod([p.ncodes[j, lv[j]] for j in range(len(qis))]))
        c = min([combos] + [evs[m].n_all_classes for m in range(p.n_nodes) if _below(p, m, a)])
        bound = float(class_count_bound(p.n, k, ev.max_suppressed, np.array([c]))[0])
        for b in range(p.n_nodes):
            if evs[b].satisfied and _below(p, a, b):
                assert bound <= evs[b].metric + 1e-6, (lv, p.levels_of(b), bound, evs[b].metric)
        own = float(class_count_bound(p.n, k, ev.max_suppressed, np.array([c]), np.array([s_lo[a]]))[0])
        if evs[a].satisfied:
            assert own <= evs[a].metric + 1e-6, (lv, own, evs[a].metric)
        else:
            assert s_lo[a] <= ev.max_suppressed or own == np.inf


def test_class_count_bound_by_hand():
    # n = 10, k = 2, no suppression, at most 2 classes: sum |E|^2 >= 10^2 / 2 = 50 (two
    # classes of 5); with 1 class the DM is 100; with room for 5 classes k n = 20 binds
    got = class_count_bound(10, 2, 0, np.array([2.0, 1.0, 5.0]))
    assert list(got) == [50.0, 100.0, 20.0]
    # one class and 4 suppressed records allowed: f(s) = (10 - s)^2 + 10 s, least at s = 4
    assert float(class_count_bound(10, 2, 4, np.array([1.0]))[0]) == 6 ** 2 + 40
    # 2 classes, at least 3 records suppressed of at most 4: f(3) = 49 / 2 + 30 = 54.5
    # (f grows on [3, 4]); more than 4 to suppress: no satisfying node, infinite bound
    assert float(class_count_bound(10, 2, 4, np.array([2.0]), 3)[0]) == 54.5
    assert float(class_count_bound(10, 2, 4, np.array([2.0]), 5)[0]) == np.inf
