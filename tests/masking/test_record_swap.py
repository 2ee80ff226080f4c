"""Targeted record swapping: margins kept, whole households, geography limits, swap rate."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.masking.record_swap import RecordSwap

HIER = ["region", "district", "muni"]


def make(n_hh, seed=0, n_region=3, n_district=4, n_muni=5):
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 5, n_hh)
    hid = np.repeat(np.arange(n_hh), size)
    n = hid.size
    region = rng.integers(0, n_region, n_hh)
    district = region * 100 + rng.integers(0, n_district, n_hh)
    muni = district * 100 + rng.integers(0, n_muni, n_hh)
    return pd.DataFrame({"hid": hid, "region": region[hid], "district": district[hid], "muni": muni[hid],
                         "hsize": size[hid], "sex": rng.integers(1, 3, n), "age": rng.integers(0, 6, n),
                         "income": rng.normal(size=n)})


def household_geo(df):
    return df.groupby("hid")[HIER].nunique().max().max()


@given(n_hh=st.integers(20, 300), seed=st.integers(0, 10**6), rate=st.floats(0.0, 0.6),
       k=st.integers(1, 4), across=st.booleans())
def test_invariants(n_hh, seed, rate, k, across):
    df = make(n_hh, seed)
    md = Microdata(df, key_vars=["sex", "age"], household="hid")
    step = RecordSwap(hierarchy=HIER, similar=[["hsize"]], risk_variables=["sex", "age"],
                      swap_rate=rate, k_anonymity=k, allow_across_top=across)
    out = step.apply(md, rng=seed).microdata.frame
    # every non-geographic value unchanged, record by record (so every margin is kept)
    for col in ["hid", "hsize", "sex", "age", "income"]:
        assert out[col].equals(df[col])
    # whole households move: one geography per household, and it is some household's geography
    assert household_geo(out) == 1
    before = set(map(tuple, df[HIER].drop_duplicates().to_numpy()))
    assert set(map(tuple, out[HIER].drop_duplicates().to_numpy())) <= before
    if not across:
        assert (out["region"] == df["region"]).all()


def test_rate_realised_within_one_household():
    df = make(4000, seed=3)
    md = Microdata(df, key_vars=["sex"], household="hid")
    for rate in (0.01, 0.05, 0.1, 0.333):
        r = RecordSwap(hierarchy=HIER, similar=["hsize"], risk_variables=[], swap_rate=rate,
                       k_anonymity=1).apply(md, rng=7)
        moved = (r.microdata.frame[HIER] != df[HIER]).any(axis=1)
        n_moved_hh = df.loc[moved, "hid"].nunique()
        assert abs(n_moved_hh - round(rate * 4000)) <= 1
        assert r.summary["households_swapped"] == n_moved_hh


def test_risky_household_is_moved_within_its_region():
    df = make(600, seed=5)
    # make one member of household 0 unique: an age nobody else has
    df.loc[df.index[df.hid == 0][0], "age"] = 99
    md = Microdata(df, key_vars=["sex", "age"], household="hid")
    r = RecordSwap(hierarchy=HIER, similar=[["hsize"]], risk_variables=["age"], swap_rate=0.0,
                   k_anonymity=2).apply(md, rng=11)
    out = r.microdata.frame
    h0_before = df.loc[df.hid == 0, HIER].iloc[0]
    h0_after = out.loc[out.hid == 0, HIER].iloc[0]
    assert h0_after["region"] == h0_before["region"]
    assert h0_after["district"] != h0_before["district"]  # at risk at the top level -> swapped across districts
    assert r.summary["risky_swapped_share"] == 1.0


def test_no_partner_is_reported_not_dropped():
    df = make(300, seed=2)
    df["hsize"] = df["hid"]  # no two households share a profile
    df.loc[df.index[df.hid == 0][0], "age"] = 99
    md = Microdata(df, key_vars=["age"], household="hid")
    r = RecordSwap(hierarchy=HIER, similar=["hsize"], risk_variables=["age"], swap_rate=0.0,
                   k_anonymity=2).apply(md, rng=1)
    assert r.summary["risky_without_partner"] >= 1
    assert r.microdata.n_records == len(df)
    pd.testing.assert_frame_equal(r.microdata.frame, df)


def test_same_rng_same_output_and_different_rng_differs():
    md = Microdata(make(500, seed=9), key_vars=["sex"], household="hid")
    step = RecordSwap(hierarchy=HIER, similar=["hsize"], swap_rate=0.2, k_anonymity=1)
    a = step.apply(md, rng=42).microdata.frame
    b = step.apply(md, rng=42).microdata.frame
    c = step.apply(md, rng=43).microdata.frame
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_household_across_geographies_is_refused():
    df = make(50, seed=1)
    first = df.index[df.hid == df.hid[df.hsize > 1].iloc[0]]
    df.loc[first[0], "muni"] = -1
    md = Microdata(df, key_vars=["sex"], household="hid")
    with pytest.raises(InputError, match="households span several areas of 'muni'"):
        RecordSwap(hierarchy=HIER, similar=["hsize"]).apply(md, rng=1)


@pytest.mark.parametrize("kwargs, pattern", [
    ({"swap_rate": 1.5}, r"'swap_rate' parameter of RecordSwap must be a number in \[0, 1\]"),
    ({"k_anonymity": 0}, r"'k_anonymity' parameter of RecordSwap must be an int >= 1"),
    ({"similar": 3}, r"'similar' parameter of RecordSwap"),
])
def test_bad_parameters(kwargs, pattern):
    with pytest.raises(InputError, match=pattern):
        RecordSwap(hierarchy=HIER, **kwargs)
