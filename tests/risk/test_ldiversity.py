"""l-diversity and t-closeness: hand cases, a published example, brute force on ARX's adult."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.risk.ldiversity import l_diversity, t_closeness
from tests.conftest import shared_file


def brute_l(df, keys, s, c):
    """Per-record distinct / entropy / recursive l with pandas groupby and plain Python."""
    out = {}
    for _, g in df.groupby(keys, dropna=False):
        vals = g[s].dropna().tolist()
        counts = sorted(pd.Series(vals).value_counts().tolist(), reverse=True) if vals else []
        n = sum(counts)
        distinct = len(counts)
        entropy = math.exp(-sum(r / n * math.log(r / n) for r in counts)) if counts else 0.0
        rec = 0
        for l in range(1, distinct + 1):
            if counts[0] < c * sum(counts[l - 1:]):
                rec = l
            else:
                break
        for i in g.index:
            out[i] = (distinct, entropy, rec)
    return out


def test_hand_case():
    # class A: values x, x, y -> distinct 2, entropy exp(-(2/3 ln 2/3 + 1/3 ln 1/3)),
    #   recursive c=2: l=1: 2 < 2*3 yes; l=2: 2 < 2*1 no -> 1
    # class B: x, y, z -> distinct 3, entropy 3; recursive: 1 < 2*1 for l = 3 -> 3
    df = pd.DataFrame({"k": ["A"] * 3 + ["B"] * 3, "s": ["x", "x", "y", "x", "y", "z"]})
    res = l_diversity(Microdata(df, key_vars=["k"], sensitive=["s"]))
    assert res.records["s_distinct"].tolist() == [2, 2, 2, 3, 3, 3]
    h = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))
    np.testing.assert_allclose(res.records["s_entropy"], [math.exp(h)] * 3 + [3.0] * 3)
    assert res.records["s_recursive"].tolist() == [1, 1, 1, 3, 3, 3]
    assert res.summary["s_distinct"] == 2


@st.composite
def frames(draw):
    n = draw(st.integers(1, 50))
    k1 = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    k2 = draw(st.lists(st.sampled_from([1, 2]), min_size=n, max_size=n))
    s = draw(st.lists(st.sampled_from(["u", "v", "w", "x", None]), min_size=n, max_size=n))
    c = draw(st.sampled_from([0.5, 1.0, 2.0, 3.5]))
    return pd.DataFrame({"k1": k1, "k2": k2, "s": s}), c


@given(frames())
def test_l_diversity_equals_brute_force(data):
    df, c = data
    res = l_diversity(Microdata(df, key_vars=["k1", "k2"], sensitive=["s"]), recursive_c=c)
    ref = brute_l(df, ["k1", "k2"], "s", c)
    for i in df.index:
        d, e, r = ref[i]
        assert res.records.at[i, "s_distinct"] == d
        assert res.records.at[i, "s_entropy"] == pytest.approx(e, rel=1e-12)
        assert res.records.at[i, "s_recursive"] == r


def test_multi_attribute_is_min_over_variables_with_others_as_keys():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"k": rng.integers(0, 3, 80), "s1": rng.integers(0, 4, 80),
                       "s2": rng.integers(0, 3, 80)})
    res = l_diversity(Microdata(df, key_vars=["k"], sensitive=["s1", "s2"]))
    a = brute_l(df, ["k", "s2"], "s1", 2.0)
    b = brute_l(df, ["k", "s1"], "s2", 2.0)
    for i in df.index:
        assert res.records.at[i, "multi_distinct"] == min(a[i][0], b[i][0])
        assert res.records.at[i, "multi_recursive"] == min(a[i][2], b[i][2])


def test_sensitive_equal_to_key_refused():
    df = pd.DataFrame({"k": [1, 2], "s": [1, 2]})
    with pytest.raises(InputError, match="also a key variable"):
        l_diversity(Microdata(df, key_vars=["k", "s"]), sensitive=["s"])


def test_adult_l_diversity_and_k_anonymity_agree_with_groupby():
    df = pd.read_csv(shared_file("arx_adult.csv"))
    keys = ["sex", "age", "race", "marital-status"]
    md = Microdata(df, key_vars=keys, sensitive=["occupation"])
    res = l_diversity(md)
    # brute force: pandas groupby nunique / value counts
    g = df.groupby(keys)["occupation"]
    distinct = g.transform("nunique")
    assert (res.records["occupation_distinct"].to_numpy() == distinct.to_numpy()).all()

    def ent(x):
        p = x.value_counts(normalize=True).to_numpy()
        return math.exp(-(p * np.log(p)).sum())
    entropy = g.transform(ent)
    np.testing.assert_allclose(res.records["occupation_entropy"], entropy, rtol=1e-10)
    from sdckit.risk import measure_risk
    rep = measure_risk(md)
    size = df.groupby(keys)["sex"].transform("size").to_numpy()
    assert rep.summary["k_violations"] == {"2": int((size < 2).sum()), "3": int((size < 3).sum()),
                                           "5": int((size < 5).sum())}
    assert rep.summary["k_reached"] == size.min()
    assert rep.summary["l_diversity"]["occupation_distinct"] == distinct.min()


def test_t_closeness_published_example():
    # Li, Li & Venkatasubramanian (2007), Table 3/4: salaries 3k..11k, the 3-anonymous table;
    # class {3k, 4k, 5k} has ordered-distance EMD 0.375 to the whole table (paper, sec. 4.2).
    # Hand, cumulative differences p - q in ninths over 3k..10k, summed and divided by 8:
    # {6k, 8k, 11k}: |-1-2-3-1-2+0-1-2| = 12/9 -> 1/6; {7k, 9k, 10k}: 1+2+3+4+2+3+1+1 = 17/9 -> 17/72.
    df = pd.DataFrame({"zip": ["476**"] * 3 + ["4790*"] * 3 + ["476**"] * 3,
                       "age": ["2*"] * 3 + [">=40"] * 3 + ["3*"] * 3,
                       "salary": [3, 4, 5, 6, 11, 8, 7, 9, 10],
                       "disease": ["gastric ulcer", "gastritis", "stomach cancer", "gastritis",
                                   "flu", "bronchitis", "bronchitis", "pneumonia", "stomach cancer"]})
    md = Microdata(df, key_vars=["zip", "age"], sensitive=["salary", "disease"])
    res = t_closeness(md, ordinal=["salary"])
    assert t_closeness(md).ground_distance["salary"] == "equal"  # numeric: nominal unless named
    assert res.ground_distance == {"salary": "ordered", "disease": "equal"}
    np.testing.assert_allclose(res.records["salary_t"][:3], 0.375)
    np.testing.assert_allclose(res.records["salary_t"][3:6], 1 / 6)
    np.testing.assert_allclose(res.records["salary_t"][6:], 17 / 72)
    # nominal disease, class 1 {gastric ulcer, gastritis, stomach cancer} vs whole
    # (gu 1, gastritis 2, sc 2, flu 1, bronchitis 2, pneumonia 1)/9:
    # 1/2 (|1/3-1/9| + |1/3-2/9| + |1/3-2/9| + 1/9 + 2/9 + 1/9) = 1/2 * 8/9 = 4/9
    assert res.records["disease_t"][0] == pytest.approx(4 / 9)
    assert res.summary["salary"] == pytest.approx(0.375)


@given(frames())
def test_t_closeness_equals_scipy_wasserstein_and_total_variation(data):
    from scipy.stats import wasserstein_distance

    df, _ = data
    df = df.dropna(subset=["s"])
    if df.empty:
        return
    md = Microdata(df, key_vars=["k1", "k2"], sensitive=["s"])
    ordered = t_closeness(md, ordinal=["s"]).records["s_t"]
    nominal = t_closeness(md).records["s_t"]
    values = sorted(df["s"].unique())
    pos = np.arange(len(values), dtype=float)
    q = df["s"].value_counts(normalize=True).reindex(values, fill_value=0).to_numpy()
    for _, g in df.groupby(["k1", "k2"]):
        p = g["s"].value_counts(normalize=True).reindex(values, fill_value=0).to_numpy()
        # ordered distance = 1-D Wasserstein distance on positions 0..m-1, divided by m-1
        ref_o = wasserstein_distance(pos, pos, p, q) / (len(values) - 1) if len(values) > 1 else 0.0
        ref_n = 0.5 * np.abs(p - q).sum()           # equal distance = total variation
        for i in g.index:
            assert ordered[i] == pytest.approx(ref_o, abs=1e-12)
            assert nominal[i] == pytest.approx(ref_n, abs=1e-12)
