"""The frequency core (one count over the combination codes) against the record-by-record
definitions it replaces: f_k, F_k, groups, and measure_risk's summary counts."""

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.risk import measure_risk
from sdckit.risk.frequencies import DENSE_LIMIT, combination_codes, dense_groups, frequencies_from_codes


def reference_codes(codes, n_categories):
    """The mixed-radix code as defined: sum_k (c_k + 1) prod_{j>k} (m_j + 1), term by term."""
    out = np.zeros(codes[0].shape[0], dtype=np.int64)
    for c, m in zip(codes, n_categories):
        out = out * (m + 1) + (c.astype(np.int64) + 1)
    return out


@st.composite
def keyed(draw):
    m = draw(st.integers(1, 4))
    n = draw(st.integers(1, 400))
    ncat = [draw(st.integers(1, 60)) for _ in range(m)]
    missing = draw(st.booleans())
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    codes = [rng.integers(-1 if missing else 0, k, n).astype(np.int32) for k in ncat]
    return codes, ncat, rng.uniform(1, 5, n)


@given(keyed())
def test_combination_codes_equal_the_definition(case):
    codes, ncat, _ = case
    code, product = combination_codes(codes, ncat)
    assert np.array_equal(code, reference_codes(codes, ncat))
    assert product == int(np.prod([m + 1 for m in ncat]))


@given(keyed())
def test_frequencies_equal_the_group_by_group_reference(case):
    """Reference: dense group ids of the codes, then bincounts per group (the earlier core)."""
    codes, ncat, w = case
    f = frequencies_from_codes(codes, ncat, w)
    code, product = combination_codes(codes, ncat)
    g, G = dense_groups(code, product)
    cnt = np.bincount(g, minlength=G)
    wc = np.bincount(g, weights=w, minlength=G)
    assert np.array_equal(f.group, g) and f.group.dtype == np.int64
    assert np.array_equal(f.counts, cnt) and np.array_equal(f.fk, cnt[g])
    assert np.array_equal(f.weighted_counts, wc) and np.array_equal(f.Fk, wc[g])
    assert np.array_equal(f.group_sizes, cnt)
    f0 = frequencies_from_codes(codes, ncat)
    assert np.array_equal(f0.Fk, cnt[g].astype(float))


def test_the_hash_path_numbers_groups_as_before_when_codes_are_complete():
    """A code space just above the dense limit with missing slots, below it without: the path
    is chosen on the codes with missing slots, so groups keep their first-appearance ids."""
    rng = np.random.default_rng(0)
    ncat = [109, 19, 134, 116]
    assert np.prod([m + 1 for m in ncat]) > DENSE_LIMIT >= np.prod(ncat)
    codes = [rng.integers(0, k, 1470).astype(np.int32) for k in ncat]
    f = frequencies_from_codes(codes, ncat)
    g, _ = dense_groups(*combination_codes(codes, ncat))
    assert np.array_equal(f.group, g)


@given(keyed(), st.sampled_from([0.01, 0.05, 0.2]))
def test_measure_risk_summary_counts_equal_the_record_by_record_counts(case, max_global_risk):
    codes, ncat, w = case
    codes = [np.where(np.arange(c.size) == 0, 0, c) for c in codes]   # every key observed once
    cols = {f"k{i}": pd.Series(np.where(c >= 0, c, np.nan)) for i, c in enumerate(codes)}
    df = pd.DataFrame(cols).assign(w=w)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        md = Microdata(df, key_vars=list(cols), weight="w")
    rep = measure_risk(md, k_values=(2, 3, 5), max_global_risk=max_global_risk)
    r, s = rep.records, rep.summary
    fk, risk = r["fk"].to_numpy(), r["risk"].to_numpy()
    assert s["n_sample_uniques"] == int((fk == 1).sum())
    assert s["k_violations"] == {str(k): int((fk < k).sum()) for k in (2, 3, 5)}
    assert s["k_reached"] == int(np.floor(fk.min()))
    assert s["max_individual_risk"] == float(risk.max())
    assert s["n_above_threshold"] == int(r["above_threshold"].sum())
    missing = np.zeros(len(df), dtype=bool)
    for v in md.key_vars:
        missing |= md.codes(v) < 0
    assert s["n_records_with_missing_keys"] == int(missing.sum())
    for k in (2, 3, 5):
        assert np.array_equal(r[f"violates_k{k}"].to_numpy(), fk < k)
