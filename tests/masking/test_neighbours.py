"""Neighbourhood resampling (Matloff & Tendick): every value from a neighbour within eps,
untouched records identical, valid categories, no-neighbour policies, reproducibility."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import InputError, Microdata, ParameterError
from sdckit.masking.neighbours import Knn, MixedMetric, NeighbourResampling, Radius
from sdckit.masking.steps_neighbours import NeighboursStep
from sdckit.registry import build_step


def mixed(n, seed, n_cat_levels=(2, 3)):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "y": rng.gamma(2.0, 3.0, n).round(1)})
    for j, c in enumerate(n_cat_levels):
        df[f"c{j}"] = rng.choice([f"k{i}" for i in range(c)], n)
    return df


def brute_distances(df, continuous, categorical, weights):
    """n x n distances computed here from the definition (test-only, small n): standardised
    continuous values (sd with n - 1) times the weight; a binary variable as one standardised
    dummy; c > 2 categories as c standardised dummies scaled by 1/sqrt(2)."""
    cols = []
    for v in continuous:
        x = df[v].to_numpy(float)
        sd = x.std(ddof=1)
        if sd > 0:
            cols.append(weights.get(v, 1.0) * (x - x.mean()) / sd)
    for v in categorical:
        d = pd.get_dummies(df[v]).to_numpy(float)
        if d.shape[1] < 2:
            continue
        if d.shape[1] == 2:
            d = d[:, 1:]
        z = (d - d.mean(0)) / d.std(0, ddof=1)
        cols.append(weights.get(v, 1.0) * z / (1.0 if z.shape[1] == 1 else math.sqrt(2)))
    z = np.column_stack([c.reshape(len(df), -1) for c in cols])
    return np.sqrt(((z[:, None, :] - z[None, :, :]) ** 2).sum(-1))


def same(a, b):
    return (a == b) | (pd.isna(a) & pd.isna(b))


@settings(max_examples=40)
@given(n=st.integers(8, 120), seed=st.integers(0, 10**6), eps=st.floats(0.2, 2.5),
       q=st.floats(0.05, 1.0), bern=st.booleans(), policy=st.sampled_from(["suppress", "knn"]),
       w=st.floats(0.1, 1.5), k=st.integers(1, 5), max_groups=st.sampled_from([0, 4096]))
def test_values_come_from_neighbours_within_eps(n, seed, eps, q, bern, policy, w, k, max_groups):
    df = mixed(n, seed)
    cont, cat = ["x", "y"], ["c0", "c1"]
    weights = {"c0": w, "y": 0.7}
    step = NeighbourResampling(Radius(eps=eps, no_neighbour=policy, k=k), q=q,
                               selection="bernoulli" if bern else "exact",
                               categorical=cat, weights=weights, max_groups=max_groups, probe=3)
    try:
        res = step.apply(Microdata(df), rng=seed)
    except InputError as exc:  # every selected record alone: refused with a suggested eps
        assert "try eps" in str(exc)
        return
    out = res.microdata.frame
    d = brute_distances(df, cont, cat, weights)
    np.fill_diagonal(d, np.inf)
    cols = list(df.columns)
    for i in range(n):
        if not res.selected[i]:
            assert all(same(df[c].iloc[i], out[c].iloc[i]) for c in cols)  # untouched: identical
            continue
        near = np.flatnonzero(d[i] <= eps * (1 + 1e-9))
        if near.size == 0:
            if policy == "suppress":
                assert res.suppressed[i] and out.iloc[i].isna().all()
                continue
            kk = min(k, n - 1)
            near = np.flatnonzero(d[i] <= np.sort(d[i])[kk - 1] * (1 + 1e-9))  # k nearest (ties kept)
        assert not res.suppressed[i]
        for c in cols:  # each value is that variable's value in some neighbour
            assert (df[c].iloc[near] == out[c].iloc[i]).any(), (i, c)
    for c in cat:
        assert set(out[c].dropna()) <= set(df[c])
    assert all(g.holds for g in res.guarantees), [g for g in res.guarantees if not g.holds]
    if not bern:
        assert res.selected.sum() == math.floor(n * q)


@settings(max_examples=15)
@given(n=st.integers(10, 80), seed=st.integers(0, 10**6), k=st.integers(1, 6))
def test_knn_neighbourhood_takes_values_from_the_k_nearest(n, seed, k):
    df = mixed(n, seed, n_cat_levels=(3,))
    res = NeighbourResampling(Knn(k=k), categorical=["c0"]).apply(Microdata(df), rng=seed)
    d = brute_distances(df, ["x", "y"], ["c0"], {})
    np.fill_diagonal(d, np.inf)
    out = res.microdata.frame
    for i in range(n):
        kth = np.sort(d[i])[min(k, n - 1) - 1]
        near = np.flatnonzero(d[i] <= kth * (1 + 1e-9))
        for c in df.columns:
            assert (df[c].iloc[near] == out[c].iloc[i]).any()
    assert not res.suppressed.any() and all(g.holds for g in res.guarantees)


def test_same_rng_same_output_and_search_settings_do_not_matter():
    df = mixed(2000, 3, n_cat_levels=(2, 4))
    md = Microdata(df, key_vars=["c1"])
    base = NeighbourResampling(Radius(eps=0.6)).apply(md, rng=11).microdata.frame
    again = NeighbourResampling(Radius(eps=0.6)).apply(md, rng=11).microdata.frame
    pd.testing.assert_frame_equal(base, again)
    for kw in ({"probe": 2}, {"chunk_size": 97}, {"max_groups": 0}, {"workers": 2}):
        other = NeighbourResampling(Radius(eps=0.6), **kw).apply(md, rng=11).microdata.frame
        pd.testing.assert_frame_equal(base, other)
    assert not base.equals(NeighbourResampling(Radius(eps=0.6)).apply(md, rng=12).microdata.frame)


def test_distance_of_binary_and_multicategory_variables_by_hand():
    # hand computation: sex has 1 of 4 records "f": p = 1/4, dummy variance (n-1 divisor)
    # = p(1-p) n/(n-1) = 0.25; weight 0.5 -> distance 0.5 / sqrt(0.25) = 1.0 between m and f.
    df = pd.DataFrame({"sex": ["f", "m", "m", "m"], "r": ["a", "b", "c", "c"]})
    m = MixedMetric.fit(df, [], ["sex", "r"], {"sex": 0.5, "r": 0.0})
    x = m.transform(df)
    assert x.shape == (4, 1)
    assert np.linalg.norm(x[0] - x[1]) == pytest.approx(1.0)
    # region with 3 levels, weight 1: var_a = var_b = 0.25 (1 of 4 each), var_c = 1/3 (2 of 4);
    # d(a, b) = sqrt((1/0.25 + 1/0.25) / 2) = 2; d(a, c) = sqrt((4 + 3) / 2)
    m2 = MixedMetric.fit(df, [], ["r"])
    x2 = m2.transform(df)
    assert np.linalg.norm(x2[0] - x2[1]) == pytest.approx(2.0)
    assert np.linalg.norm(x2[0] - x2[2]) == pytest.approx(math.sqrt(3.5))


def test_paper_example_isolated_record_is_suppressed_or_resampled_from_knn():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"age": rng.normal(40, 5, 300), "phd": np.r_[1, np.zeros(299, int)]})
    md = Microdata(df)
    r = NeighbourResampling(Radius(eps=0.3), categorical=["phd"]).apply(md, rng=1)
    assert r.suppressed[0] and r.microdata.frame.iloc[0].isna().all()  # the lone PhD: record NA
    r2 = NeighbourResampling(Radius(eps=0.3, no_neighbour="knn", k=3), categorical=["phd"]).apply(md, rng=1)
    assert not r2.suppressed.any() and r2.fallback[0]
    assert r2.summary["records_knn_fallback"] >= 1


def test_per_record_eps_gives_every_record_min_neighbours():
    df = mixed(500, 8)
    r = NeighbourResampling(Radius(eps=0.05, min_neighbours=4),
                            categorical=["c0", "c1"]).apply(Microdata(df), rng=2)
    assert r.n_neighbours[r.selected].min() >= 4 and not r.suppressed.any()
    assert all(g.holds for g in r.guarantees)
    df["radius"] = 0.8
    r2 = NeighbourResampling(Radius(eps_column="radius"),
                             categorical=["c0", "c1"]).apply(Microdata(df), rng=2)
    assert (r2.microdata.frame["radius"] == 0.8).all()  # not resampled
    assert all(g.holds for g in r2.guarantees)


def test_keys_keep_their_categories_and_dtype():
    df = mixed(400, 2)
    df["c1"] = pd.Categorical(df["c1"], categories=["k0", "k1", "k2", "unused"])
    md = Microdata(df, key_vars=["c1"], numeric_vars=["x"])
    r = NeighbourResampling(Radius(eps=0.4)).apply(md, rng=0)
    out = r.microdata
    assert out.frame["c1"].dtype == df["c1"].dtype
    assert list(out.categories("c1")) == ["k0", "k1", "k2", "unused"]
    assert r.suppressed.sum() == (out.codes("c1") < 0).sum()


def test_bivariate_dependence_is_kept_at_small_eps():
    # section 3's theorem: independent draws from a small neighbourhood keep the joint law
    rng = np.random.default_rng(0)
    z = rng.multivariate_normal([0, 0], [[1, 0.8], [0.8, 1]], 5000)
    df = pd.DataFrame({"a": z[:, 0], "b": z[:, 1]})
    r = NeighbourResampling(Radius(eps=0.1, no_neighbour="knn")).apply(Microdata(df), rng=0)
    out = r.microdata.frame
    assert abs(out["a"].corr(out["b"]) - 0.8) < 0.03
    assert r.summary["records_changed"] > 4900


def test_bad_input():
    # the neighbourhood's settings fail in its own type, the step's in the step
    for kw, name in [({"eps": 0}, "eps"), ({"eps": -1}, "eps"), ({}, "eps"), ({"eps": 0.3, "k": 0}, "k"),
                     ({"eps": 0.3, "no_neighbour": "drop"}, "no_neighbour")]:
        with pytest.raises(ParameterError) as e:
            Radius(**kw)
        assert e.value.param == name
    with pytest.raises(ParameterError) as e:
        Knn(k=0)
    assert e.value.param == "k"
    for kw, name in [({"q": 0}, "q"), ({"q": 1.5}, "q"), ({"selection": "some"}, "selection"),
                     ({"weights": {"x": -1}}, "weights['x']"),
                     ({"neighbourhood": "radius"}, "neighbourhood")]:
        with pytest.raises(ParameterError) as e:
            NeighbourResampling(**{"neighbourhood": Radius(eps=0.3), **kw})
        assert e.value.param == name
    md = Microdata(mixed(50, 1))
    with pytest.raises(InputError, match="'xx'.*does not exist"):
        NeighbourResampling(Radius(eps=0.3), weights={"xx": 0.2}).apply(md)
    with pytest.raises(InputError, match="not numeric; list it in 'categorical'"):
        NeighbourResampling(Radius(eps=0.3), categorical=[]).apply(md)


def test_constant_column_is_left_out_with_a_note():
    df = mixed(200, 4)
    df["const"] = 7.0
    r = NeighbourResampling(Radius(eps=0.5)).apply(Microdata(df), rng=1)
    assert any("'const'" in n and "constant" in n for n in r.summary["notes"])
    assert set(r.microdata.frame["const"].dropna()) == {7.0}


def test_all_records_alone_is_refused_with_a_suggested_eps():
    df = pd.DataFrame({"x": np.arange(50.0) * 10})
    with pytest.raises(InputError, match=r"none of the 50 selected records.*try eps = "):
        NeighbourResampling(Radius(eps=0.001)).apply(Microdata(df), rng=0)


def test_release_step_reports_analyses_and_tracking():
    rng = np.random.default_rng(1)
    n = 800
    df = pd.DataFrame({"age": rng.uniform(20, 60, n), "sex": rng.integers(1, 3, n),
                       "phd": (rng.random(n) < 0.1).astype(int)})
    df["wage"] = 1000 * df["age"] + 5000 * df["phd"] + rng.normal(0, 5000, n)
    step = build_step("neighbours", {"neighbourhood": {"type": "radius", "eps": 0.5},
                                     "categorical": ["sex", "phd"],
                                     "weights": {"sex": 0.3, "phd": 0.3},
                                     "analyses": [{"kind": "linear", "outcome": "wage",
                                                   "regressors": ["age", "sex", "phd"]}],
                                     "track": ["sex == 2 and phd == 1 and age < 25"],
                                     "track_keys": ["sex", "phd"]})
    assert isinstance(step, NeighboursStep)
    r = step.apply(Microdata(df), rng=3)
    page = r.report_html()
    assert "<table class='analyses'>" in page
    # the tracking table points at the tracked people's records: internal report only
    assert "<table class='tracking'>" not in page and "tracking" not in r.summary
    internal = r.internal_report_html()
    assert "<table class='tracking'>" in internal
    assert "sex == 2 and phd == 1 and age &lt; 25" in internal
    assert r.summary["analyses_max_rel_diff"]
    assert all(g.holds for g in r.guarantees)
