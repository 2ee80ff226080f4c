"""The bound of the open region and the anytime search's bound phase, against brute force.

References are exhaustive: every node of small random lattices evaluated (its records
suppressed, whether it satisfies, its metric), and the exhaustive optimum.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError, ParameterError
from sdckit.lattice import Evaluator, KAnonymity, Problem, exhaustive
from sdckit.lattice import _kernels as K
from sdckit.lattice import anytime as anytime_module
from sdckit.lattice.anytime import anytime
from sdckit.lattice.metrics import partition_bound
from sdckit.lattice.search import open_bounds

from .test_search import MODELS, S_HIER, random_problem


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 6), max_nodes=st.sampled_from([4, 16, 64, 4096]))
def test_projection_suppressed_bound_is_below_every_nodes_suppression(seed, k, max_nodes):
    # reference: the records each node suppresses under k-anonymity, counted at every node
    df, qis, hier, _, _ = random_problem(seed)
    p = Problem(df, qis, hier)
    ev = Evaluator(p, [KAnonymity(k)], 1.0, "discernibility")
    got = p.projection_suppressed_bound(k, max_nodes)
    for node in range(p.n_nodes):
        assert got[node] <= ev.evaluate(node).n_suppressed, (p.levels_of(node), max_nodes)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 6), suppression=st.sampled_from([0.0, 0.1, 0.3]))
def test_partition_bound_is_below_dm_of_every_satisfying_node(seed, k, suppression):
    # reference: per node, the classes of the projections on a split of the QIs counted with a
    # pandas group-by of the generalised records, and the node's DM evaluated; a satisfying
    # node's DM is at least Q1 / C2 + s (n - 2 M1 / C2) at either end of [0, S]
    df, qis, hier, _, _ = random_problem(seed)
    if len(qis) < 2:
        return
    p = Problem(df, qis, hier)
    ev = Evaluator(p, [KAnonymity(k)], suppression, "discernibility")
    g1, g2 = qis[: len(qis) // 2], qis[len(qis) // 2:]
    for node in range(p.n_nodes):
        e = ev.evaluate(node)
        if not e.satisfied:
            continue
        lv = p.levels_of(node)
        gen = pd.DataFrame({q: hier[q].table.set_index(hier[q].table.columns[0]).iloc[:, lv[j] - 1].reindex(df[q])
                            .to_numpy() if lv[j] > 0 else df[q].to_numpy() for j, q in enumerate(qis)})
        f1 = gen.groupby(g1).size().to_numpy(dtype=float)
        c2 = len(gen.groupby(g2).size())
        want = partition_bound(p.n, ev.max_suppressed, np.array([(f1 ** 2).sum()]), np.array([f1.max()]),
                               np.array([c2]))[0]
        assert e.metric >= want - 1e-9 * e.metric, (lv, e.metric, want)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), model=st.sampled_from(sorted(MODELS)),
       metric=st.sampled_from(["discernibility", "loss", "precision"]),
       suppression=st.sampled_from([0.0, 0.1, 0.3]), share=st.floats(0.0, 0.6), max_nodes=st.sampled_from([4, 64]))
def test_open_bounds_are_below_the_metric_of_every_open_satisfying_node(seed, model, metric, suppression,
                                                                         share, max_nodes):
    # a part of the lattice checked (a seeded random subset), the rest open; reference: every
    # node evaluated by a second evaluator. An open node that satisfies has its metric >= its bound.
    df, qis, hier, _, pop = random_problem(seed, population=model == "delta")
    p = Problem(df, qis, hier, sensitive="s", sensitive_hierarchy=S_HIER, population=pop)
    ev = Evaluator(p, MODELS[model](), suppression, metric)
    status = np.zeros(p.n_nodes, dtype=np.int8)
    pruned = np.zeros(p.n_nodes, dtype=np.int8)
    if ev.k_min > 1:
        ev.suppressed_bound = p.projection_suppressed_bound(ev.k_min, max_nodes)
        status[ev.suppressed_bound > ev.max_suppressed] = 2
    rng = np.random.default_rng(seed)
    # two complementary projections (a seeded random split of the QIs): the partition bound
    split = rng.random(len(qis)) < 0.5
    groups = [np.flatnonzero(split).tolist(), np.flatnonzero(~split).tolist()]
    if all(groups):
        for g in groups:
            assert ev.add_projection(g)
        status[(ev.suppressed_bound if ev.suppressed_bound is not None else 0) > ev.max_suppressed] = 2
    for node in np.flatnonzero(rng.random(p.n_nodes) < share):
        e = ev.evaluate(int(node))
        if ev.monotone:
            K.tag(status, int(node), p.strides, p.radix, np.int8(1 if e.satisfied else 2), e.satisfied)
    ids, bounds = open_bounds(ev, status, pruned, chunk=7)   # small chunks: the chunked path
    assert np.all(np.diff(ids) > 0)
    ref = Evaluator(p, MODELS[model](), suppression, metric)
    for node, b in zip(ids.tolist(), bounds.tolist()):
        assert node not in ev.evals and status[node] != 2
        e = ref.evaluate(node)
        if e.satisfied:
            assert e.metric >= b - 1e-9 * max(1.0, abs(e.metric)), (p.levels_of(node), e.metric, b)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), model=st.sampled_from(sorted(MODELS)),
       suppression=st.sampled_from([0.0, 0.1, 0.3]), share=st.sampled_from([0.0, 0.5, 1.0]),
       budget=st.sampled_from([3, 8, None]), projection=st.sampled_from([4, 16, 4096]))
def test_bound_phase_keeps_the_bound_below_the_optimum(seed, model, suppression, share, budget, projection):
    # reference: the exhaustive optimum. The bound phase (larger projections of `projection`
    # nodes, then resolving the least-bound open nodes) must keep the bound <= the optimum,
    # and without a budget the search still proves the optimum.
    df, qis, hier, _, pop = random_problem(seed, population=model == "delta")
    p = Problem(df, qis, hier, sensitive="s", sensitive_hierarchy=S_HIER, population=pop)
    try:
        brute = exhaustive(Evaluator(p, MODELS[model](), suppression, "discernibility"))
    except InputError:
        return
    old = anytime_module.BOUND_PROJECTION_NODES
    anytime_module.BOUND_PROJECTION_NODES = projection
    try:
        ev = Evaluator(p, MODELS[model](), suppression, "discernibility")
        ev.projection_nodes = 2
        events = []
        try:
            got = anytime(ev, time_limit=None, max_nodes=budget, bound_share=share, progress=events.append)
        except InputError as exc:
            assert budget is not None and "within its budget" in str(exc)
            return
    finally:
        anytime_module.BOUND_PROJECTION_NODES = old
    assert got.value >= brute.value - 1e-9
    assert got.bound <= brute.value + 1e-9 * max(1.0, brute.value)
    if budget is None:
        assert got.optimal and got.value == pytest.approx(brute.value, rel=1e-12)
    for e in events:
        if e["bound"] is not None and e["best"] is not None:
            assert e["relative_gap"] == pytest.approx((e["best"] - e["bound"]) / e["best"])


def test_bound_phase_raises_the_bound_on_a_seeded_case():
    # a fixed case (reference: the exhaustive optimum, DM 142); with the same budget of 6 checked
    # nodes, spending half of it on the bound proves the optimum where spending none leaves a
    # bound below it (135.2 when written), and the events say when the phase starts
    df, qis, hier, _, _ = random_problem(11)
    p = Problem(df, qis, hier)
    brute = exhaustive(Evaluator(p, [KAnonymity(3)], 0.1, "discernibility"))
    runs = {}
    for share in (0.0, 0.5):
        p.clear_cache()
        ev = Evaluator(p, [KAnonymity(3)], 0.1, "discernibility")
        runs[share] = anytime(ev, time_limit=None, max_nodes=6, bound_share=share)
    assert runs[0.0].bound < brute.value
    assert runs[0.5].bound == brute.value and runs[0.5].optimal
    assert any(e["event"] == "bound_phase" for e in runs[0.5].events)
    assert not any(e["event"] == "bound_phase" for e in runs[0.0].events)


def test_bound_share_out_of_range_is_refused():
    df, qis, hier, _, _ = random_problem(3)
    ev = Evaluator(Problem(df, qis, hier), [KAnonymity(2)], 0.1, "discernibility")
    with pytest.raises(ParameterError, match="'bound_share' parameter of the anytime search must be"):
        anytime(ev, time_limit=None, bound_share=1.5)
