"""measure_risk, the before/after comparison and the risk gate checks."""

import json

import numpy as np
import pandas as pd
import pytest

from sdckit import InputError, Microdata
from sdckit.gate import run_gate
from sdckit.registry import discover, gate_check
from sdckit.risk import compare_risk, measure_risk
from sdckit.risk.individual import individual_risk
from tests.conftest import shared_file

KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def small():
    # keys (a, b), weights w, households h
    df = pd.DataFrame({"a": [1, 1, 1, 2, 2, 3], "b": ["x", "x", "y", "y", "y", "y"],
                       "w": [10.0, 10.0, 5.0, 20.0, 20.0, 4.0], "h": [1, 1, 2, 2, 3, 3],
                       "s": ["p", "q", "p", "p", "p", "q"]})
    return df


def test_summary_hand_case():
    md = Microdata(small(), key_vars=["a", "b"], weight="w", household="h")
    rep = measure_risk(md)
    d = rep.to_dict()
    # combinations (1,x) x2, (1,y), (2,y) x2, (3,y): f = 2,2,1,2,2,1; F = 20,20,5,40,40,4
    assert rep.records["fk"].tolist() == [2, 2, 1, 2, 2, 1]
    assert rep.records["Fk"].tolist() == [20, 20, 5, 40, 40, 4]
    assert d["n_combinations"] == 4 and d["n_sample_uniques"] == 2
    assert d["k_violations"] == {"2": 2, "3": 6, "5": 6} and d["k_reached"] == 1
    # f = 1, F = 5: p = 0.2 -> 0.2/0.8 * ln 5; f = 2, F = 20: p = 0.1 -> o - o^2 ln 10
    r_u5 = 0.25 * np.log(5)
    o = 0.1 / 0.9
    r_20 = o - o * o * np.log(10)
    o2 = 0.05 / 0.95
    r_40 = o2 - o2 * o2 * np.log(20)
    r_u4 = (0.25 / 0.75) * np.log(4)
    expect = np.array([r_20, r_20, r_u5, r_40, r_40, r_u4])
    np.testing.assert_allclose(rep.records["risk"], expect, rtol=1e-12)
    assert d["expected_reidentifications"] == pytest.approx(expect.sum())
    assert d["global_risk"] == pytest.approx(expect.sum() / 6)
    # households {0,1}, {2,3}, {4,5}: r_hh = 1 - prod(1 - r_i)
    hh = [1 - (1 - r_20) ** 2, 1 - (1 - r_u5) * (1 - r_40), 1 - (1 - r_40) * (1 - r_u4)]
    np.testing.assert_allclose(rep.records["hh_risk"], np.repeat(hh, 2), rtol=1e-12)
    assert d["household_risk"] == pytest.approx(np.mean(np.repeat(hh, 2)))
    json.dumps(d)  # plain JSON
    assert "records" in rep.describe()
    assert "<table" in rep.report_html()


def test_suda_and_sensitive_sections():
    md = Microdata(small(), key_vars=["a", "b"], sensitive=["s"])
    rep = measure_risk(md, suda=True)
    d = rep.to_dict()
    assert set(d["suda"]) >= {"n_scored", "sum_scores", "max_score", "sum_dis"}
    # no weights: population, r = 1/f
    assert rep.records["risk"].tolist() == [0.5, 0.5, 1.0, 0.5, 0.5, 1.0]
    assert d["l_diversity"]["s_distinct"] == 1
    assert "suda_score" in rep.records and "ldiv_s_distinct" in rep.records


def test_bad_inputs():
    df = small()
    df.loc[2, "h"] = np.nan
    with pytest.raises(InputError, match="household column 'h' is missing in 1 records"):
        measure_risk(Microdata(df, key_vars=["a", "b"], household="h"))
    with pytest.raises(InputError, match="weight"):
        Microdata(small().assign(w=[1.0, 0, 1, 1, 1, 1]), key_vars=["a"], weight="w")
    with pytest.raises(InputError):
        measure_risk(Microdata(small(), key_vars=["a", "b"]), suda=True, suda_max_size=3)
    allmiss = pd.DataFrame({"a": [1.0, np.nan, np.nan], "b": [np.nan, 1.0, np.nan]})
    rep = measure_risk(Microdata(allmiss, key_vars=["a", "b"]))
    assert rep.records["fk"].iloc[2] == 3  # an all-missing record may be anyone: f = n


def test_testdata_matches_brute_force_groupby():
    df = pd.read_csv(shared_file("sdcmicro/testdata.csv"))
    md = Microdata(df, key_vars=KEYS, weight="sampling_weight", household="ori_hid")
    rep = measure_risk(md, suda=True)
    g = df.groupby(KEYS, dropna=False)
    fk = g["sex"].transform("size").to_numpy()
    Fk = g["sampling_weight"].transform("sum").to_numpy()
    assert np.array_equal(rep.records["fk"].to_numpy(), fk)
    np.testing.assert_allclose(rep.records["Fk"], Fk)
    er = individual_risk(fk, Fk).sum()
    assert rep.summary["expected_reidentifications"] == pytest.approx(er)
    assert rep.summary["suda"]["n_scored"] == (fk == 1).sum()  # every sample unique has an MSU
    hh = df.assign(r=rep.records["risk"].to_numpy()).groupby("ori_hid")["r"].transform(
        lambda x: 1 - np.prod(1 - x))
    assert rep.summary["household_risk"] == pytest.approx(hh.mean())


def test_compare_before_after():
    md = Microdata(small(), key_vars=["a", "b"], weight="w")
    after = md.with_codes({"a": np.zeros(6, dtype=np.int32)})
    cmp = compare_risk(measure_risk(md), measure_risk(after))
    rows = {m: (b, a) for m, b, a in cmp.rows}
    assert rows["sample uniques (f_k = 1)"] == (2, 0)
    assert rows["key combinations"] == (4, 2)
    assert "released" in cmp.report_html()
    json.dumps(cmp.to_dict())
    assert "before" in cmp.describe()


def test_gate_checks():
    discover()
    md = Microdata(small(), key_vars=["a", "b"], weight="w", sensitive=["s"])
    rep = measure_risk(md)
    out = run_gate({"max_global_risk": 0.5, "max_individual_risk": 0.3, "l_diversity": 2},
                   md, md, [])
    by = {o.name: o for o in out}
    assert by["max_global_risk"].passed
    assert by["max_global_risk"].value["global_risk"] == pytest.approx(rep.summary["global_risk"])
    assert by["max_individual_risk"].passed == (rep.summary["max_individual_risk"] <= 0.3)
    # class (1,y) holds one record -> one sensitive value: fails l = 2
    assert not by["l_diversity"].passed
    strict = next(o for o in run_gate({"max_individual_risk": 0.01}, md, md, []) if o.name == "max_individual_risk")
    assert not strict.passed and "records have individual risk above" in strict.detail
    with pytest.raises(InputError):
        gate_check("max_global_risk").validate(0)
    with pytest.raises(InputError):
        gate_check("l_diversity").validate(1)


def test_uniqueness_table_in_report():
    md = Microdata(small(), key_vars=["a", "b"], weight="w")
    rep = measure_risk(md, uniqueness_max_size=2)
    assert rep.uniqueness is not None and len(rep.uniqueness) == 3
    # a alone: value 3 unique -> 1/6; a + b: (1,y) and (3,y) unique -> 2/6 (hand count)
    top = rep.summary["uniqueness"][0]
    assert top["variables"] == "a + b" and top["share_unique"] == pytest.approx(2 / 6)
    assert "most uniques" in rep.describe()
    page = rep.report_html()
    assert "a + b" in page and "<img" in page
    json.dumps(rep.to_dict())
