"""ARX's profitability (game-theoretic) models, the entropy-based information loss and the
publisher payout metric: brute force over every node of small lattices, values and class checks
against pandas computations written out from the definitions, and ARX's own figures on adult."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.cli import main
from sdckit.errors import InputError, ParameterError
from sdckit.lattice import Evaluator, KAnonymity, Problem, exact, exhaustive, find_hierarchies
from sdckit.lattice.metrics import metric_value
from sdckit.lattice.models import NodeView
from sdckit.lattice.models_arx import make_models
from sdckit.lattice.profitability import CostBenefit, Profitability, entropy_information_loss
from sdckit.registry import build_step

from .test_search import S_HIER, random_problem

GAMES = {"default": CostBenefit(), "fine": CostBenefit(100, 400, 300, 4), "cheap": CostBenefit(50, 100, 30, 10)}
MODELS = {
    "prosecutor": lambda g: [Profitability("prosecutor", g)],
    "prosecutor_no_attack": lambda g: [Profitability("prosecutor_no_attack", CostBenefit(1200, 300, 10, 3))],
    "journalist": lambda g: [Profitability("journalist", g)],
    "journalist_no_attack": lambda g: [Profitability("journalist_no_attack", CostBenefit(1200, 300, 12, 4))],
    "k_only": lambda g: [KAnonymity(2)],
    "k_and_prosecutor": lambda g: [KAnonymity(2), Profitability("prosecutor", g)],
}
METRICS = ("publisher_payout", "entropy_information_loss", "discernibility", "loss")


def _solve(fn, ev):
    try:
        return fn(ev)
    except InputError as exc:
        assert "no node satisfies" in str(exc)
        return None


def _problem(seed: int, population: bool = True):
    df, qis, hier, _, pop = random_problem(seed, population=population)
    return Problem(df, qis, hier, sensitive="s", sensitive_hierarchy=S_HIER, population=pop), df, qis, hier, pop


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), model=st.sampled_from(sorted(MODELS)), game=st.sampled_from(sorted(GAMES)),
       metric=st.sampled_from(METRICS), suppression=st.sampled_from([0.0, 0.1, 0.3, 1.0]))
def test_exact_equals_brute_force(seed, model, game, metric, suppression):
    # reference: every node of the lattice checked (exhaustive), against the exact search
    p, *_ = _problem(seed)
    g = GAMES[game]
    brute = _solve(exhaustive, Evaluator(p, MODELS[model](g), suppression, metric, cost_benefit=g))
    p.clear_cache()
    got = _solve(exact, Evaluator(p, MODELS[model](g), suppression, metric, cost_benefit=g))
    assert (brute is None) == (got is None)
    if brute is not None:
        assert got.optimal
        assert got.value == pytest.approx(brute.value, rel=1e-12, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), model=st.sampled_from(sorted(MODELS)), suppression=st.sampled_from([0.0, 0.3]))
def test_models_declared_monotone_are_monotone(seed, model, suppression):
    # sat(N) => sat(N') for every pair N <= N', whenever the models claim monotonicity (the no-attack kinds)
    p, *_ = _problem(seed)
    ev = Evaluator(p, MODELS[model](CostBenefit()), suppression, "discernibility")
    assert ev.monotone == (model in ("prosecutor_no_attack", "journalist_no_attack", "k_only"))
    if not ev.monotone:
        return
    evs = [ev.evaluate(n) for n in range(p.n_nodes)]
    for a in evs:
        if a.satisfied:
            for b in evs:
                if all(x <= y for x, y in zip(a.levels, b.levels)):
                    assert b.satisfied, (model, a.levels, b.levels)


def test_prosecutor_profitability_is_not_monotone():
    # one class of 20 records: at the bottom IL = 0 and the payout 100 - 400 / 20 = 80 > 0 keeps it;
    # at the top every label is '*', IL = 1 and the payout 0 - 400 / 20 < 0 suppresses it
    df = pd.DataFrame({"a": ["x"] * 20, "b": ["u"] * 20})
    from sdckit.masking.hierarchy import Hierarchy

    hier = {"a": Hierarchy(pd.DataFrame({0: ["x", "y"], 1: ["*", "*"]}, dtype=str), "a.csv"),
            "b": Hierarchy(pd.DataFrame({0: ["u", "v"], 1: ["*", "*"]}, dtype=str), "b.csv")}
    p = Problem(df, ["a", "b"], hier)
    ev = Evaluator(p, [Profitability("prosecutor", CostBenefit(100, 400, 300, 4))], 0.0, "discernibility")
    assert ev.evaluate(p.node_id(np.array([0, 0]))).satisfied
    assert not ev.evaluate(p.node_id(np.array([1, 1]))).satisfied


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), game=st.sampled_from(sorted(GAMES)), suppression=st.sampled_from([0.0, 0.3, 1.0]),
       model=st.sampled_from(["k_only", "prosecutor", "journalist"]))
def test_bounds_hold_above_every_node(seed, game, suppression, model):
    # LB(N) <= metric(N') for every satisfying N' >= N, every pair of the lattice
    p, *_ = _problem(seed)
    g = GAMES[game]
    for metric in ("publisher_payout", "entropy_information_loss"):
        ev = Evaluator(p, MODELS[model](g), suppression, metric, cost_benefit=g)
        evs = [ev.evaluate(n) for n in range(p.n_nodes)]
        for a in evs:
            for b in evs:
                if b.satisfied and all(x <= y for x, y in zip(a.levels, b.levels)):
                    assert a.bound <= b.metric + 1e-6, (metric, a.levels, b.levels)


def _reference(df, qis, hier, levels, pop, game: CostBenefit, journalist: bool, kept_rule):
    """Per record, from the generalised records with pandas: the entropy-based IL (the shares of
    the labels counted in the hierarchy tables, Wan et al. 2015 eq. 3 as ARX computes it), the
    class size, the success probability and the payout written out; ``kept_rule(size)`` marks
    the kept records."""
    gen = pd.DataFrame({q: df[q].map(dict(zip(hier[q].table[0], hier[q].table[lv]))) for q, lv in zip(qis, levels)})
    log_share = np.zeros(len(df))
    log_domain = 0.0
    for q, lv in zip(qis, levels):
        tab = hier[q].table
        log_share += np.log10(gen[q].map(tab[lv].value_counts() / len(tab)).to_numpy(dtype=float))
        log_domain += math.log10(len(tab))
    il = np.clip(log_share / log_domain + 1.0, 0.0, 1.0) if log_domain > 0 else np.zeros(len(df))
    size = np.asarray(gen.groupby(qis)[qis[0]].transform("size"), dtype=float)
    p = 1.0 / size
    if journalist:
        pgen = pd.DataFrame({q: pop[q].map(dict(zip(hier[q].table[0], hier[q].table[lv])))
                             for q, lv in zip(qis, levels)})
        pcount = pgen.groupby(qis).size()
        pc = pd.MultiIndex.from_frame(gen[qis]).map(lambda key: pcount.get(key, 0)).to_numpy(dtype=float) \
            if len(qis) > 1 else gen[qis[0]].map(pcount).fillna(0).to_numpy(dtype=float)
        p = np.where(pc > 0, 1.0 / np.maximum(pc, 1), p)
    fine = np.where(game.adversary_gain * p - game.adversary_cost > 0, game.publisher_loss * p, 0.0)
    payout = game.publisher_benefit * (1.0 - il) - fine
    return il, size, payout, kept_rule(size, payout)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), node_pick=st.floats(0, 1, exclude_max=True), game=st.sampled_from(sorted(GAMES)),
       journalist=st.booleans(), k=st.integers(1, 4))
def test_metric_values_match_pandas(seed, node_pick, game, journalist, k):
    p, df, qis, hier, pop = _problem(seed)
    g = GAMES[game]
    if journalist:
        g = CostBenefit(g.publisher_benefit, g.publisher_loss, g.adversary_gain, g.adversary_cost, True)
    lv = p.levels_of(int(node_pick * p.n_nodes))
    view = NodeView(p, lv, p.table(lv))
    kept = view.table.class_size >= k
    il, size, payout, keep = _reference(df, qis, hier, [int(v) for v in lv], pop, g, journalist,
                                        lambda s, _: s >= k)
    ref_payout = float(np.where(keep, g.publisher_benefit - payout, g.publisher_benefit).sum())
    ref_il = float(np.where(keep, il, 1.0).sum())
    assert metric_value("publisher_payout", view, kept, g) == pytest.approx(ref_payout, rel=1e-9, abs=1e-7)
    assert metric_value("entropy_information_loss", view, kept, g) == pytest.approx(ref_il, rel=1e-9, abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), node_pick=st.floats(0, 1, exclude_max=True), game=st.sampled_from(sorted(GAMES)),
       kind=st.sampled_from(["prosecutor", "journalist", "prosecutor_no_attack", "journalist_no_attack"]))
def test_class_checks_match_the_definitions(seed, node_pick, game, kind):
    # reference: a record is kept by the payout kinds when its written-out payout is > 0, by the
    # no-attack kinds when the adversary's gain is below its cost, G p < C (p = 1 / the class size
    # in the data, or in the population table for the journalist)
    p, df, qis, hier, pop = _problem(seed)
    g = GAMES[game]
    lv = p.levels_of(int(node_pick * p.n_nodes))
    view = NodeView(p, lv, p.table(lv))
    journalist = kind.startswith("journalist")
    il, _, payout, keep = _reference(df, qis, hier, [int(v) for v in lv], pop, g, journalist, lambda s, pay: pay > 0)
    if kind.endswith("no_attack"):
        # with B = 0, L = 1, G = 1 and C = 0 the written-out payout is -p for every record
        _, _, minus_p, _ = _reference(df, qis, hier, [int(v) for v in lv], pop, CostBenefit(0.0, 1.0, 1.0, 0.0),
                                      journalist, lambda s, pay: pay)
        # ARX's no-attack condition is strict, G p < C (its derivation in ProfitabilityProsecutorNoAttack)
        keep = (g.adversary_gain * -minus_p < g.adversary_cost) | (g.adversary_gain == 0)
    got = Profitability(kind, g).class_ok(view)[p.record_classes(lv)]
    assert np.array_equal(got, keep), (kind, lv)
    assert np.allclose(entropy_information_loss(view)[p.record_classes(lv)], il, rtol=1e-12, atol=1e-12)


def test_no_attack_k_by_hand():
    # ARX's reduction: k = G / C + 1 when G / C is whole, ceil(G / C) otherwise, 1 when G = 0
    assert CostBenefit().no_attack_k() == 76                      # 300 / 4 = 75
    assert CostBenefit(adversary_gain=100, adversary_cost=3).no_attack_k() == 34   # 33.3
    assert CostBenefit(adversary_gain=0, adversary_cost=0).no_attack_k() == 1
    with pytest.raises(InputError, match="adversary_cost"):
        Profitability("prosecutor_no_attack", CostBenefit(adversary_cost=0))
    with pytest.raises(ParameterError, match="'publisher_loss' parameter of CostBenefit"):
        CostBenefit(publisher_loss=-1)
    with pytest.raises(InputError, match="not known"):
        make_models(profitability="marketer")


def test_journalist_needs_a_population_table():
    df, qis, hier, _, _ = random_problem(3)
    with pytest.raises(InputError, match="population table"):
        Evaluator(Problem(df, qis, hier), [Profitability("journalist")], 0.0, "publisher_payout")


ADULT = Path(__file__).resolve().parents[3] / "shared" / "data"
QIS8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


@pytest.mark.skipif(not (ADULT / "arx_adult.csv").exists(), reason="ARX's adult data are absent")
def test_equals_arx_on_adult():
    # reference: ARX 3.9.2 on adult (benchmarks/compare_arx.py, cases profit_prosecutor_no_attack_dm_s2
    # and entropy_il_k5_s2): ProfitabilityProsecutorNoAttack with ARX's default game (k = 76), 2 %
    # suppression, DM: optimum (1, 0, 1, 2, 3, 2, 2, 2), DM 3.343274E7; k = 5, 2 %, the entropy-based
    # information loss: optimum (1, 2, 0, 2, 3, 0, 1, 2), 17469.151988440073
    data = pd.read_csv(ADULT / "arx_adult.csv", dtype=str)
    p = Problem(data, QIS8, find_hierarchies(ADULT / "arx_adult_hierarchies", QIS8))
    r = exact(Evaluator(p, make_models(profitability="prosecutor_no_attack"), 0.02, "discernibility"))
    assert r.levels == (1, 0, 1, 2, 3, 2, 2, 2) and r.value == 33432740.0
    r = exact(Evaluator(p, [KAnonymity(5)], 0.02, "entropy_information_loss"))
    assert r.levels == (1, 2, 0, 2, 3, 0, 1, 2)
    assert r.value == pytest.approx(17469.151988440073, rel=1e-10)


def _adult_md():
    from sdckit.microdata import Microdata

    from ..conftest import shared_file

    data = pd.read_csv(shared_file("arx_adult.csv"), dtype=str)
    return Microdata(data, key_vars=["sex", "age", "race", "education"], sensitive=["salary-class"])


@pytest.mark.parametrize("game, names", [
    ({"type": "prosecutor", "publisher_benefit": 100.0, "publisher_loss": 1000.0}, {"profitability"}),
    ({"type": "prosecutor_no_attack", "adversary_gain": 30.0, "adversary_cost": 4.0}, {"profitability_no_attack"}),
])
def test_step_guarantees_hold(game, names):
    from ..conftest import shared_file

    step = build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")), "k": None,
                                     "suppression": 0.5, "metric": "publisher_payout", "profitability": game})
    res = step.apply(_adult_md())
    got = {g.name: g for g in res.guarantees}
    assert names <= set(got)
    assert all(g.holds for g in res.guarantees), [g for g in res.guarantees if not g.holds]
    s = res.summary
    # the metric is the payout given up against the maximum n B
    assert s["metric_value"] == pytest.approx(s["publisher_payout_max"] - s["publisher_payout"], rel=1e-9)
    assert res.params["profitability"]["type"] == game["type"]


def test_step_refuses_local_recoding_with_the_game():
    from ..conftest import shared_file

    with pytest.raises(InputError, match="local_recoding"):
        build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")), "k": 5,
                                  "metric": "publisher_payout", "local_recoding": 1})


def test_anonymise_cli_profitability(capsys):
    from ..conftest import shared_file

    rc = main(["anonymise", str(shared_file("arx_adult.csv")), "--hierarchies",
               str(shared_file("arx_adult_hierarchies")), "--qis", "sex,age,race,education",
               "--profitability", "prosecutor_no_attack", "--adversary-gain", "30", "--suppression", "0.02",
               "--metric", "publisher_payout", "--json"])
    assert rc in (0, None)
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["metric"] == "publisher_payout" and out["optimal"]
    assert out["value"] == pytest.approx(out["publisher_payout_max"] - out["publisher_payout"], rel=1e-9)
