"""The anytime search: its best is feasible, its bound is below the optimum, and with budget
to spare it proves the optimum of every node's brute-force check."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.lattice import Evaluator, KAnonymity, Problem, exhaustive
from sdckit.lattice.anytime import anytime
from sdckit.lattice.searches import search

from .test_arx_models_metrics import NEW_MODELS
from .test_search import MODELS, S_HIER, random_problem

ALL_MODELS = {**MODELS, **NEW_MODELS}


def _solve(fn, ev):
    try:
        return fn(ev)
    except InputError as exc:
        assert "no node satisfies" in str(exc) or "found no satisfying node" in str(exc)
        return None


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), model=st.sampled_from(sorted(ALL_MODELS)),
       metric=st.sampled_from(["discernibility", "loss", "dm_star", "ambiguity", "precision"]),
       suppression=st.sampled_from([0.0, 0.1, 0.3]), budget=st.sampled_from([2, 5, None]))
def test_best_is_feasible_and_bound_below_the_optimum(seed, model, metric, suppression, budget):
    # reference: every node checked (exhaustive)
    df, qis, hier, _, pop = random_problem(seed, population=model in ("delta", "kmap_table"))
    p = Problem(df, qis, hier, sensitive="s", sensitive_hierarchy=S_HIER, population=pop)
    brute = _solve(exhaustive, Evaluator(p, ALL_MODELS[model](), suppression, metric))
    p.clear_cache()
    ev = Evaluator(p, ALL_MODELS[model](), suppression, metric)
    events = []
    try:
        got = anytime(ev, time_limit=None, max_nodes=budget, progress=events.append)
    except InputError as exc:
        # no satisfying node at all, or none found within a node budget
        assert brute is None or (budget is not None and "within its budget" in str(exc))
        return
    assert brute is not None
    assert ev.evaluate(got.node).satisfied
    assert got.value >= brute.value - 1e-9
    assert got.bound <= brute.value + 1e-9
    if budget is None:
        # no budget: the search runs until every node is checked, failing or pruned
        assert got.optimal and got.value == pytest.approx(brute.value, rel=1e-12, abs=1e-9)
    bests = [e["best"] for e in events if e["best"] is not None]
    assert bests == sorted(bests, reverse=True)
    assert events[-1]["event"] == "end" and events[-1]["best"] == got.value


def test_reachable_through_search_with_events():
    df, qis, hier, _, _ = random_problem(7)
    p = Problem(df, qis, hier)
    seen = []
    r = search(Evaluator(p, [KAnonymity(2)], 0.1, "discernibility"), "anytime", time_limit=30.0,
               progress=seen.append)
    assert r.method == "anytime" and r.events and seen == list(r.events)
    assert r.to_dict()["events"][-1]["event"] == "end"
