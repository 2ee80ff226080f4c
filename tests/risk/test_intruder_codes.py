"""``linkage_risk`` from key codes (a Microdata view) and from columns (a DataFrame view) against
the measure computed record by record from its definition: record i is re-identified with
probability [z_i compatible with c_i] / M(c_i), M(c) the number of people whose view agrees
with c on every key c does not suppress (labels compared as canonical texts)."""

import warnings

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.risk.intruder import intruder_microdata, intruder_view, linkage_risk
from sdckit.utility.categorical import canonical_label


def brute_force_linkage(released: pd.DataFrame, view: pd.DataFrame, keys: list[str]) -> float:
    """O(n^2) Python: a label per cell, every (record, person) pair compared."""
    def lab(x):
        return None if pd.isna(x) else canonical_label(x)
    c = [[lab(x) for x in released[k]] for k in keys]
    z = [[lab(x) for x in view[k]] for k in keys]
    n = len(released)

    def compatible(j, i):   # person j's view agrees with record i's released keys
        return all(c[v][i] is None or z[v][j] == c[v][i] for v in range(len(keys)))

    total = 0.0
    for i in range(n):
        m = sum(compatible(j, i) for j in range(n))
        if compatible(i, i) and m > 0:
            total += 1.0 / m
    return total / n


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40), st.integers(0, 10_000), st.floats(0.0, 0.6), st.floats(0.0, 0.4),
       st.booleans())
def test_linkage_risk_matches_the_record_by_record_definition(n, seed, change, suppress, float_key):
    rng = np.random.default_rng(seed)
    orig = pd.DataFrame({"a": rng.integers(1, 4, n), "b": rng.choice(["x", "y", "z"], n),
                         "c": rng.integers(0, 3, n).astype(float) if float_key else rng.integers(0, 3, n)})
    rel = orig.copy()
    flip = rng.random(n) < change                     # a PRAM-like change of "a"
    rel.loc[flip, "a"] = rng.integers(1, 5, int(flip.sum()))
    gone = rng.random((2, n)) < suppress              # local suppression of "b" and "c"
    gone[:, 0] = False                                # (a key missing in every record is refused)
    rel["b"] = rel["b"].where(~gone[0], None)
    rel["c"] = rel["c"].astype(float).where(~gone[1])   # 1.0 is labelled as 1
    keys = ["a", "b", "c"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")               # single-category keys are fine here
        md_o, md_r = Microdata(orig, key_vars=keys), Microdata(rel, key_vars=keys)
    want = brute_force_linkage(rel, orig, keys)
    assert np.isclose(linkage_risk(md_r, intruder_view(md_o, [])), want, rtol=1e-12, atol=1e-15)
    assert np.isclose(linkage_risk(md_r, intruder_microdata(md_o, [])), want, rtol=1e-12, atol=1e-15)
    # the original against itself (the same key codes on both sides, coded once)
    assert np.isclose(linkage_risk(md_o, intruder_microdata(md_o, [])), brute_force_linkage(orig, orig, keys),
                      rtol=1e-12, atol=1e-15)
    # the release against itself, with its suppressed values
    assert np.isclose(linkage_risk(md_r, md_r), brute_force_linkage(rel, rel, keys), rtol=1e-12, atol=1e-15)


def test_linkage_risk_wide_codes_are_hashed_and_renumbered_before_they_overflow():
    # 8 keys of about 350 labels each: a radix product beyond the dense limit (hash path) and
    # beyond int64 (the codes are renumbered midway)
    rng = np.random.default_rng(3)
    n = 500
    keys = [f"k{i}" for i in range(8)]
    frame = pd.DataFrame({k: rng.integers(0, 10**6, n) for k in keys})
    frame.iloc[:150, :] = frame.iloc[0, :].to_numpy()       # 150 records share one combination
    rel = frame.copy()
    rel["k0"] = rel["k0"].where(rng.random(n) > 0.3, -1)     # a changed value, as PRAM would
    md_o, md_r = Microdata(frame, key_vars=keys), Microdata(rel, key_vars=keys)
    assert np.prod([float(md_o.n_categories(k) + 1) for k in keys]) > np.iinfo(np.int64).max
    want = brute_force_linkage(rel, frame, keys)
    assert np.isclose(linkage_risk(md_r, intruder_microdata(md_o, [])), want, rtol=1e-12)
    assert np.isclose(linkage_risk(md_r, intruder_view(md_o, [])), want, rtol=1e-12)
