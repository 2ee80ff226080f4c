"""ARX's generalisation/suppression factor and microaggregation in the lattice search: values
against pandas computations from the generalised records (the definitions of ARX 3.9.2's
``MetricMDNMLoss``, ``MetricSDClassification`` and ``DistributionAggregateFunction``), bounds and
the exact search against every node, and the step's release against plain Python aggregates.
ARX's own optima and values on adult are compared by ``benchmarks/compare_arx.py``."""

from __future__ import annotations

import math
import statistics
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError, SpecError
from sdckit.lattice import Evaluator, KAnonymity, Problem, exact, exhaustive
from sdckit.lattice.metrics import metric_value
from sdckit.lattice.metrics_arx import configure, gs_weights
from sdckit.lattice.microaggregation import (
    aggregate,
    check_quality_settings,
    microaggregate_frame,
    prepare_problem,
)
from sdckit.lattice.models import NodeView
from sdckit.lattice.profitability import CostBenefit
from sdckit.microdata import Microdata
from sdckit.registry import build_step

from .test_search import S_HIER, random_problem

GS_METRICS = ("loss", "loss_mean", "classification")
#: the other metrics ARX 3.9.2 weighs by the factor (MetricMDNMPrecision, MetricSDAECS,
#: MetricSDNMPublisherPayout, MetricSDNMEntropyBasedInformationLoss)
GS_METRICS_MORE = ("precision", "aecs", "publisher_payout", "entropy_information_loss")
#: amounts under which small classes are attacked (G / |E| > C for |E| < 12.5) and some payouts negative
GAME = CostBenefit(publisher_benefit=100.0, publisher_loss=400.0, adversary_gain=50.0, adversary_cost=4.0)
FUNCS = ("arithmetic_mean", "geometric_mean", "median", "mode", "interval")


def _weights(gs):
    # ARX 3.9.2, Metric's constructor: sFactor = gs < 0.5 ? 2 gs : 1; gFactor = gs <= 0.5 ? 1 : 1 - 2 (gs - 0.5)
    return (1.0 if gs <= 0.5 else 1.0 - 2.0 * (gs - 0.5)), (2.0 * gs if gs < 0.5 else 1.0)


def test_gs_weights_are_arx_s():
    for gs in (0.0, 0.2, 0.5, 0.8, 1.0):
        assert gs_weights(gs) == pytest.approx(_weights(gs))
    assert gs_weights(0.0) == (1.0, 0.0) and gs_weights(1.0) == (0.0, 1.0)
    with pytest.raises(InputError, match="factor"):
        gs_weights(1.5)


def _problem(seed, micro=False):
    df, qis, hier, _, _ = random_problem(seed)
    rng = np.random.default_rng(seed + 1)
    df = df.assign(x=rng.integers(0, 6, size=len(df)).astype(float))
    p = Problem(df, qis, hier, sensitive="s", sensitive_hierarchy=S_HIER)
    return p, df, qis, hier


def _reference(df, qis, hier, levels, k, gs, micro_col=None) -> dict:
    """loss, loss_mean and classification from the generalised records with pandas (ARX's
    formulas written out per record; classes of fewer than k records suppressed)."""
    g_f, s_f = _weights(gs)
    n = len(df)
    gen = pd.DataFrame({q: df[q].map(dict(zip(hier[q].table[0], hier[q].table[lv]))) for q, lv in zip(qis, levels)})
    size = np.asarray(gen.groupby(qis).transform("size")).ravel() if len(qis) > 1 else \
        gen.groupby(qis[0])[qis[0]].transform("size").to_numpy()
    sup = size < k
    dims = []
    for q, lv in zip(qis, levels):
        tab = hier[q].table
        d = len(tab)
        share = gen[q].map(tab[lv].value_counts()).to_numpy(dtype=float) / d
        cost = np.where(sup, share + s_f * (1 - share), g_f * share)
        lo = g_f * n / d
        dims.append(0.0 if d <= 1 else max((cost.sum() - lo) / (n - lo), 0.0))
    if micro_col is not None:
        v = df[micro_col].nunique()
        distinct = gen.assign(_x=df[micro_col].to_numpy()).groupby(qis)["_x"].transform("nunique").to_numpy()
        share = distinct / v
        dims.append(float(np.where(sup, share + s_f * (1 - share), g_f * share).sum() / n))
    dims = np.array(dims)
    cm = 0.0
    for _, grp in gen.assign(_s=df["s"].to_numpy(), _sup=sup).groupby(qis):
        if grp["_sup"].iloc[0]:
            cm += gs * len(grp)
            continue
        vc = grp["_s"].value_counts()
        cm += s_f * len(grp) if (len(vc) > 1 and vc.iloc[0] == vc.iloc[1]) else g_f * (len(grp) - vc.iloc[0])
    return {"loss": float(np.prod(1 + dims) ** (1 / len(dims)) - 1), "loss_mean": float(dims.mean()),
            "classification": cm / (max(gs, g_f, s_f) * n)}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 4), node_pick=st.floats(0, 1, exclude_max=True),
       gs=st.floats(0, 1), micro=st.booleans())
def test_values_match_pandas(seed, k, node_pick, gs, micro):
    p, df, qis, hier = _problem(seed)
    configure(p, gs_factor=gs, microaggregated={"x": df["x"].to_numpy()} if micro else None)
    lv = p.levels_of(int(node_pick * p.n_nodes))
    view = NodeView(p, lv, p.table(lv))
    kept = view.table.class_size >= k
    ref = _reference(df, qis, hier, [int(v) for v in lv], k, gs, "x" if micro else None)
    for metric in GS_METRICS:
        assert metric_value(metric, view, kept) == pytest.approx(ref[metric], rel=1e-9, abs=1e-12), metric


def _reference_more(df, qis, hier, levels, k, gs, game) -> dict:
    """precision, AECS, publisher payout and entropy-based information loss from the generalised
    records with pandas: ARX 3.9.2's formulas (MetricMDNMPrecision, MetricSDAECS,
    MetricSDNMPublisherPayout, MetricSDNMEntropyBasedInformationLoss) written out per record;
    classes of fewer than k records suppressed."""
    g_f, s_f = _weights(gs)
    n = len(df)
    gen = pd.DataFrame({q: df[q].map(dict(zip(hier[q].table[0], hier[q].table[lv]))) for q, lv in zip(qis, levels)})
    key = gen[qis].astype(str).agg("|".join, axis=1)
    size = key.map(key.value_counts()).to_numpy(dtype=float)
    sup = size < k
    n_sup, n_kept = float(sup.sum()), float((~sup).sum())
    # precision: per QI (gF n_kept level / height + sF n_sup) / n, arithmetic mean over the QIs
    heights = [hier[q].table.shape[1] - 1 for q in qis]
    prec = np.mean([(g_f * n_kept * (lv / h if h else 0.0) + s_f * n_sup) / n for lv, h in zip(levels, heights)])
    # AECS: n / (sF kept classes + gF [some record suppressed]) (ARX switches the factors on purpose)
    div = s_f * key[~sup].nunique() + (g_f if n_sup else 0.0)
    aecs = n / div if div > 0 else math.inf
    # entropy-based IL per record: log10(prod_j share_j) / log10(prod_j D_j) + 1, clipped to [0, 1]
    prod, dom = np.ones(n), 1.0
    for q, lv in zip(qis, levels):
        tab = hier[q].table
        prod *= gen[q].map(tab[lv].value_counts()).to_numpy(dtype=float) / len(tab)
        dom *= len(tab)
    il = np.zeros(n) if dom == 1 else np.clip(np.log10(prod) / math.log10(dom) + 1.0, 0.0, 1.0)
    # publisher payout per record (prosecutor): B (1 - IL) - L / |E| when G / |E| - C > 0
    p_succ = 1.0 / size
    pay = game.publisher_benefit * (1 - il) - np.where(game.adversary_gain * p_succ - game.adversary_cost > 0,
                                                       game.publisher_loss * p_succ, 0.0)
    b = game.publisher_benefit
    return {"precision": float(prec), "aecs": float(aecs),
            "publisher_payout": float(np.where(sup, s_f * b, g_f * (b - pay)).sum()),
            "entropy_information_loss": float(np.where(sup, s_f, g_f * il).sum())}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 4), node_pick=st.floats(0, 1, exclude_max=True),
       gs=st.floats(0, 1))
def test_more_metrics_match_pandas(seed, k, node_pick, gs):
    p, df, qis, hier = _problem(seed)
    configure(p, gs_factor=gs)
    lv = p.levels_of(int(node_pick * p.n_nodes))
    view = NodeView(p, lv, p.table(lv))
    kept = view.table.class_size >= k
    ref = _reference_more(df, qis, hier, [int(v) for v in lv], k, gs, GAME)
    for metric in GS_METRICS_MORE:
        assert metric_value(metric, view, kept, GAME) == pytest.approx(ref[metric], rel=1e-9, abs=1e-9), metric


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), suppression=st.sampled_from([0.0, 0.1, 0.3]),
       gs=st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.2, 0.5, 0.8, 1.0])))
def test_more_metrics_bounds_hold_and_exact_is_the_optimum(seed, k, suppression, gs):
    # LB(N) <= metric(N') for every satisfying N' >= N (also for gs < 0.5, where ARX's own bounds
    # assume a suppressed record costs at least a kept one); the exact search equals every node checked
    p, *_ = _problem(seed)
    configure(p, gs_factor=gs)
    for metric in GS_METRICS_MORE:
        ev = Evaluator(p, [KAnonymity(k)], suppression, metric, cost_benefit=GAME)
        evs = [ev.evaluate(n) for n in range(p.n_nodes)]
        for x in evs:
            for y in evs:
                if y.satisfied and all(u <= v for u, v in zip(x.levels, y.levels)):
                    assert x.bound <= y.metric * (1 + 1e-12) + 1e-9, (metric, x.levels, y.levels)
        best = [e.metric for e in evs if e.satisfied]
        if best:
            p.clear_cache()
            got = exact(Evaluator(p, [KAnonymity(k)], suppression, metric, cost_benefit=GAME))
            assert got.value == pytest.approx(min(best), rel=1e-12, abs=1e-12)
            brute = exhaustive(Evaluator(p, [KAnonymity(k)], suppression, metric, cost_benefit=GAME))
            assert got.value == pytest.approx(brute.value)


def test_more_metrics_at_the_default_factor_are_the_unweighted_ones():
    # gs = 0.5 (both weights 1) gives the metrics' unweighted definitions, written out here for a
    # fixed node: precision (sum kept level / height + n_sup q) / (n q), AECS n / (kept classes + 1)
    p, df, qis, hier = _problem(7)
    configure(p, gs_factor=0.5)
    lv = p.levels_of(p.n_nodes // 2)
    view = NodeView(p, lv, p.table(lv))
    kept = view.table.class_size >= 3
    size = view.table.class_size
    q = len(qis)
    share = sum(int(v) / (hier[c].table.shape[1] - 1) for v, c in zip(lv, qis) if hier[c].table.shape[1] > 1)
    n_sup = int(size[~kept].sum())
    assert metric_value("precision", view, kept) == pytest.approx((size[kept].sum() * share + n_sup * q) / (p.n * q))
    assert metric_value("aecs", view, kept) == pytest.approx(p.n / (kept.sum() + (n_sup > 0)))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 4), node_pick=st.floats(0, 1, exclude_max=True),
       a=st.floats(0, 0.5), b=st.floats(0, 0.5), half=st.sampled_from([0, 1]))
def test_linear_in_the_factor_where_arx_s_formula_is(seed, k, node_pick, a, b, half):
    # on [0, 0.5] (gF = 1, sF = 2 gs) loss_mean and classification are affine in gs; on [0.5, 1]
    # (gF = 2 - 2 gs, sF = 1, divisor max(...) = n) classification is: the midpoint's value is the mean
    p, *_ = _problem(seed)
    lv = p.levels_of(int(node_pick * p.n_nodes))
    view = NodeView(p, lv, p.table(lv))
    kept = view.table.class_size >= k
    a, b = a + 0.5 * half, b + 0.5 * half

    def at(gs, metric):
        configure(p, gs_factor=gs)
        return metric_value(metric, NodeView(p, lv, view.table), kept)

    for metric in ("classification",) + (("loss_mean",) if half == 0 else ()):
        mid = at((a + b) / 2, metric)
        assert mid == pytest.approx((at(a, metric) + at(b, metric)) / 2, rel=1e-9, abs=1e-12), metric


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), suppression=st.sampled_from([0.0, 0.1, 0.3]),
       gs=st.floats(0, 1), micro=st.booleans())
def test_bounds_hold_and_exact_is_the_optimum(seed, k, suppression, gs, micro):
    # LB(N) <= metric(N') for every satisfying N' >= N; the exact search equals every node checked
    p, df, *_ = _problem(seed)
    configure(p, gs_factor=gs, microaggregated={"x": df["x"].to_numpy()} if micro else None)
    for metric in GS_METRICS:
        ev = Evaluator(p, [KAnonymity(k)], suppression, metric)
        evs = [ev.evaluate(n) for n in range(p.n_nodes)]
        for x in evs:
            for y in evs:
                if y.satisfied and all(u <= v for u, v in zip(x.levels, y.levels)):
                    assert x.bound <= y.metric + 1e-9, (metric, x.levels, y.levels)
        best = [e.metric for e in evs if e.satisfied]
        if best:
            p.clear_cache()
            got = exact(Evaluator(p, [KAnonymity(k)], suppression, metric))
            assert got.value == pytest.approx(min(best), rel=1e-12, abs=1e-12)
            assert got.value == pytest.approx(exhaustive(Evaluator(p, [KAnonymity(k)], suppression, metric)).value)


def _independent(values: list, function: str):
    """The aggregate by the Python standard library (not the code under test)."""
    if function == "arithmetic_mean":
        return statistics.fmean(values)
    if function == "geometric_mean":
        return math.exp(statistics.fmean(math.log(v + 1) for v in values)) - 1
    if function == "median":
        return statistics.median(values)
    if function == "mode":
        counts = Counter(values)
        top = max(counts.values())
        return min(v for v, c in counts.items() if c == top)
    return f"[{min(values)!r}, {max(values)!r}]"


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), function=st.sampled_from(FUNCS), k=st.integers(2, 4),
       suppression=st.sampled_from([0.0, 0.2]), metric=st.sampled_from(["loss", "discernibility"]))
def test_step_releases_one_aggregate_per_class(seed, function, k, suppression, metric, tmp_path_factory):
    df, qis, hier, _, _ = random_problem(seed)
    rng = np.random.default_rng(seed)
    df = df.assign(x=rng.integers(0, 40, size=len(df)).astype(float))
    folder = tmp_path_factory.mktemp("h")
    for q, h in hier.items():
        h.table.to_csv(folder / f"h_{q}.csv", sep=";", header=False, index=False)
    step = build_step("generalise", {"hierarchy_dir": str(folder), "k": k, "suppression": suppression,
                                     "metric": metric, "microaggregate": {"x": function}})
    try:
        res = step.apply(Microdata(df, key_vars=qis + ["x"]))
    except InputError as exc:
        assert "no node satisfies" in str(exc)
        return
    out = res.microdata.frame
    assert "x" not in res.summary["levels"] and res.summary["microaggregated"] == {"x": function}
    assert all(g.holds for g in res.guarantees), [g for g in res.guarantees if not g.holds]
    sup = (out[qis] == "*").all(axis=1).to_numpy()
    assert (out.loc[sup, "x"] == "*").all()
    for _, grp in out.loc[~sup].groupby(qis):
        assert grp["x"].nunique() == 1
        want = _independent(df.loc[grp.index, "x"].tolist(), function)
        got = grp["x"].iloc[0]
        if function == "interval":
            assert got == want
        else:
            assert float(got) == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert df["x"].dtype == float   # the input is not modified


def test_aggregate_ties_and_text():
    assert aggregate(pd.Series(["b", "a", "b", "a", "c"]), "mode") == "a"   # tie: the smallest
    assert aggregate(pd.Series(["10", "9", "100"]), "interval") == "[9, 100]"   # numbers as numbers
    assert aggregate(pd.Series(["pear", "fig"]), "interval") == "[fig, pear]"
    assert aggregate(pd.Series([1.0, 3.0, 2.0, 10.0]), "median") == 2.5
    assert aggregate(pd.Series([np.nan, np.nan]), "arithmetic_mean") is None


def test_frame_keeps_suppressed_records_suppressed():
    original = pd.DataFrame({"a": ["u", "u", "v"], "x": [1.0, 3.0, 9.0]})
    released = pd.DataFrame({"a": ["u", "u", "*"], "x": [1.0, 3.0, 9.0]})
    out = microaggregate_frame(original, released, np.array([False, False, True]), ["a"], {"x": "arithmetic_mean"})
    assert out["x"].tolist() == ["2.0", "2.0", "*"]
    assert original["x"].tolist() == [1.0, 3.0, 9.0] and released["x"].tolist() == [1.0, 3.0, 9.0]


def test_refusals_in_one_line(tmp_path):
    base = {"hierarchy_dir": str(tmp_path), "k": 2}
    with pytest.raises(SpecError, match="gs_factor"):
        build_step("generalise", {**base, "gs_factor": 1.5})
    with pytest.raises(InputError, match="does not change the discernibility metric"):
        build_step("generalise", {**base, "gs_factor": 0.2})
    with pytest.raises(InputError, match="ARX weighs its own non-uniform entropy"):
        build_step("generalise", {**base, "gs_factor": 0.2, "metric": "non_uniform_entropy"})
    for metric in GS_METRICS + GS_METRICS_MORE:   # ARX weighs these: the factor is taken
        check_quality_settings(metric, 0.2, None)
    with pytest.raises(InputError, match="no contribution for a microaggregated"):
        build_step("generalise", {**base, "metric": "ambiguity", "microaggregate": {"age": "median"}})
    with pytest.raises(InputError, match="local recoding"):
        build_step("generalise", {**base, "local_recoding": 1, "microaggregate": {"age": "median"}})
    with pytest.raises(SpecError, match="microaggregate"):
        build_step("generalise", {**base, "microaggregate": {"age": "average"}})
    with pytest.raises(InputError, match="SafePub"):
        check_quality_settings("loss", 0.2, None, dp=True)
    with pytest.raises(InputError, match="SafePub"):
        check_quality_settings("loss", 0.5, {"age": "mode"}, dp=True)
    for q in ("a", "b"):
        pd.DataFrame({0: ["1", "2"], 1: ["*", "*"]}).to_csv(tmp_path / f"h_{q}.csv", sep=";", header=False,
                                                             index=False)
    md = Microdata(pd.DataFrame({"a": ["1", "2"] * 3, "b": ["1", "1", "2"] * 2, "x": ["p", "q"] * 3}),
                   key_vars=["a", "b"])
    with pytest.raises(InputError, match="both a quasi-identifier"):
        build_step("generalise", {**base, "qis": ["a", "x"], "microaggregate": {"x": "mode"}}).apply(md)
    with pytest.raises(InputError, match="needs numbers"):
        build_step("generalise", {**base, "microaggregate": {"x": "arithmetic_mean"}}).apply(md)
    p = Problem(md.frame, ["a", "b"], {q: _h(tmp_path, q) for q in ("a", "b")})
    with pytest.raises(InputError, match="not in the data"):
        prepare_problem(p, md.frame, microaggregate={"zz": "mode"})


def _h(folder, q):
    from sdckit.lattice import read_hierarchy

    return read_hierarchy(folder / f"h_{q}.csv")


def test_cli_takes_the_factor_and_microaggregation(tmp_path, capsys):
    from sdckit.cli import main

    for q in ("a", "b"):
        pd.DataFrame({0: ["1", "2"], 1: ["*", "*"]}).to_csv(tmp_path / f"h_{q}.csv", sep=";", header=False,
                                                             index=False)
    pd.DataFrame({"a": ["1", "2"] * 4, "b": ["1", "1", "2", "2"] * 2, "x": [1, 2, 3, 4, 5, 6, 7, 8],
                  "s": ["y", "n"] * 4}).to_csv(tmp_path / "d.csv", index=False)
    rc = main(["anonymise", str(tmp_path / "d.csv"), "--hierarchies", str(tmp_path), "--qis", "a,b", "--k", "4",
               "--metric", "loss", "--gs-factor", "0.2", "--microaggregate", "x=arithmetic_mean", "--json",
               "--output", str(tmp_path / "out.csv")])
    assert rc in (0, None)
    import json

    summary = json.loads(capsys.readouterr().out)
    assert summary["gs_factor"] == 0.2 and summary["microaggregated"] == {"x": "arithmetic_mean"}
    out = pd.read_csv(tmp_path / "out.csv", dtype=str)
    assert out.groupby(["a", "b"])["x"].nunique().max() == 1
