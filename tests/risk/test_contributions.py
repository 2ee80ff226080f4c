"""Per-variable contributions: SUDA2 / DIS-SUDA shares and uniques lost per key."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.risk.contributions import suda_contributions, uniqueness_contributions
from sdckit.risk.suda import microdata_suda2


def data():
    return pd.DataFrame({"a": [1, 1, 1, 2, 2, 3], "b": [1, 1, 2, 2, 2, 2], "c": [1, 2, 1, 1, 1, 1]})


def test_uniqueness_contributions_by_hand():
    md = Microdata(data(), key_vars=["a", "b", "c"])
    t = uniqueness_contributions(md).set_index("variable")
    # all keys: (1,1,1) (1,1,2) (1,2,1) unique, (2,2,1) x2, (3,2,1) unique -> 4 uniques
    assert (t["uniques"] == 4).all()
    # drop a: (b,c) = 11,12,21,21,21,21 -> 2 uniques; drop b: (a,c) = 11,12,11,21,21,31 -> 2
    # drop c: (a,b) = 11,11,12,22,22,32 -> 2
    assert t.loc["a", "uniques_dropped"] == 2 and t.loc["a", "lost_dropped"] == 2
    assert t.loc["b", "uniques_dropped"] == 2 and t.loc["c", "uniques_dropped"] == 2
    # coarsen a by {3: 2}: (2,2,1) x3, rest as before -> 3 uniques, 1 lost
    t2 = uniqueness_contributions(md, coarsen={"a": {3: 2}}).set_index("variable")
    assert t2.loc["a", "uniques_coarsened"] == 3 and t2.loc["a", "lost_coarsened"] == 1


def test_suda_contributions_reuse_msus():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({k: rng.integers(0, m, 300) for k, m in zip("abcd", (3, 6, 2, 9))})
    md = Microdata(df, key_vars=list("abcd"))
    res = microdata_suda2(md, dis_fraction=0.1)
    c = suda_contributions(suda=res)
    # SUDA shares are sdcMicro's contributionPercent, computed by suda.py itself
    assert c.suda_percent == pytest.approx(res.attribute_contributions())
    # DIS shares by hand: sum_i dis_i * share_iv / sum_i dis_i
    raw = (res.contributions * res.dis_score[:, None]).sum(axis=0) / res.dis_score.sum()
    assert [c.dis_percent[v] for v in "abcd"] == pytest.approx(list(100 * raw))


def test_suda_contributions_single_identifying_variable():
    # (a, b) classes all hold >= 6 records; d is unique for 5 records and common otherwise:
    # every MSU is {d}, so d holds 100 % of the SUDA and DIS-SUDA totals (hand reasoning)
    d = [1, 2, 3, 4, 5] + [0] * 20
    df = pd.DataFrame({"a": [i % 2 for i in range(25)], "b": [(i // 2) % 2 for i in range(25)], "d": d})
    c = suda_contributions(Microdata(df, key_vars=["a", "b", "d"]), dis_fraction=0.1)
    assert c.dis_percent == pytest.approx({"a": 0.0, "b": 0.0, "d": 100.0})
    assert c.suda_percent == pytest.approx({"a": 0.0, "b": 0.0, "d": 100.0})


def test_bad_coarsen_key():
    md = Microdata(data(), key_vars=["a", "b"])
    with pytest.raises(InputError, match="not key variables"):
        uniqueness_contributions(md, coarsen={"z": {1: 2}})


@given(st.integers(0, 5000))
def test_dropping_or_coarsening_never_adds_uniques(seed):
    """Fewer or coarser keys merge classes, so sample uniques can only be lost."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({k: rng.integers(0, m, 60) for k, m in zip("abc", (4, 7, 3))})
    t = uniqueness_contributions(Microdata(df, key_vars=list("abc")))
    assert (t["lost_dropped"] >= 0).all() and (t["lost_coarsened"] >= 0).all()
    assert (t["uniques_dropped"] <= t["uniques"]).all()


def test_in_risk_report():
    from sdckit.risk import measure_risk
    md = Microdata(data(), key_vars=["a", "b", "c"])
    rep = measure_risk(md, contributions=True, suda=True, dis_fraction=0.1)
    rows = {r["variable"]: r for r in rep.summary["key_contributions"]}
    assert rows["a"]["lost_dropped"] == 2                      # hand count above
    assert set(rep.summary["suda"]["dis_contributions"]) == {"a", "b", "c"}
    assert "sample uniques lost per key" in rep.describe()
