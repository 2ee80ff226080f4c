"""The combination table kept on the workers (frequency_table -> RiskTable) against the whole
merged table brought to the client (combination_table -> risk_from_table, the reference path),
and against the in-memory measure_risk."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.engine.frame import from_pandas
from sdckit.engine.risk import (
    RiskTable,
    bucket_of,
    combination_table,
    frequency_table,
    measure_risk_partitioned,
    risk_from_table,
)
from sdckit.microdata import Microdata
from sdckit.risk.report import measure_risk

from .conftest import person_frame

KEYS = ["region", "sex", "age", "job"]
FIGURES = ["n_records", "n_combinations", "n_sample_uniques", "k_violations", "k_reached", "max_individual_risk",
           "risk_threshold", "n_above_threshold", "max_global_risk", "risk_method", "weighted",
           "n_records_with_missing_keys"]


def _both(pmd, n_buckets=None, **kw):
    table = frequency_table(pmd, n_buckets=n_buckets, **kw).compute()
    fast = risk_from_table(table, **kw)
    ref = risk_from_table(combination_table(pmd).compute(), **kw)
    return table, fast, ref


@pytest.mark.parametrize("npartitions,n_buckets", [(1, None), (2, 2), (5, 3), (5, None), (40, 32), (40, 7)])
@pytest.mark.parametrize("max_global_risk", [0.01, 0.2, 1e-9])
def test_summary_equals_the_whole_table_path(client, npartitions, n_buckets, max_global_risk):
    # fractional weights; 0.2: the global risk is below the target (no threshold); 1e-9: no
    # observed risk reaches the target (threshold 0.0); None: the default (one bucket on the
    # 2 workers of the test cluster)
    df = person_frame(3000, seed=npartitions, missing=False)
    pmd = from_pandas(df, npartitions=npartitions, key_vars=KEYS, weight="weight")
    table, fast, ref = _both(pmd, n_buckets=n_buckets, max_global_risk=max_global_risk)
    assert isinstance(table, RiskTable) and not table.missing
    for key in FIGURES:
        assert fast.summary[key] == ref.summary[key], key
    assert fast.summary["global_risk"] == pytest.approx(ref.summary["global_risk"], rel=1e-12)
    # the client holds an f_k histogram, not a table of the data's size
    assert table.fk.size < table.n_combinations
    for k in (2, 3, 5):  # what the k-anonymity gate reads: counts[fk < k].sum()
        assert int(table.counts[table.fk < k].sum()) == ref.summary["k_violations"][str(k)]


def test_unweighted_and_exact_risk_equal_the_in_memory_engine(client):
    df = person_frame(4000, seed=3, missing=False)
    pmd = from_pandas(df, npartitions=6, key_vars=KEYS)
    for method in ("approx", "exact"):
        fast = measure_risk_partitioned(pmd, risk_method=method)
        mem = measure_risk(Microdata(df, key_vars=KEYS), risk_method=method)
        for key in FIGURES:
            assert fast.summary[key] == mem.summary[key], (method, key)
        assert fast.summary["global_risk"] == pytest.approx(mem.summary["global_risk"], rel=1e-12)


def test_missing_keys_use_the_whole_table(client):
    df = person_frame(3000, seed=8, missing=True)
    pmd = from_pandas(df, npartitions=4, key_vars=KEYS, weight="weight")
    table, fast, ref = _both(pmd, n_buckets=3)
    assert table.missing
    assert fast.summary == ref.summary and fast.summary["n_records_with_missing_keys"] > 0


def test_a_different_threshold_target_than_measured_is_recomputed(client):
    df = person_frame(2000, seed=9, missing=False)
    pmd = from_pandas(df, npartitions=3, key_vars=KEYS, weight="weight")
    table = frequency_table(pmd).compute()                     # measured for 0.01
    asked = risk_from_table(table, max_global_risk=0.05)
    ref = risk_from_table(combination_table(pmd).compute(), max_global_risk=0.05)
    assert asked.summary["risk_threshold"] == ref.summary["risk_threshold"]
    assert asked.summary["max_global_risk"] == 0.05


def test_records_from_a_risk_table_equal_the_in_memory_engine(client):
    df = person_frame(2500, seed=4, integer_weights=True, missing=False)
    pmd = from_pandas(df, npartitions=3, key_vars=KEYS, weight="weight")
    rec = measure_risk_partitioned(pmd).records(pmd).compute().reset_index(drop=True)
    mem = measure_risk(Microdata(df, key_vars=KEYS, weight="weight"))
    for col in ["fk", "Fk", "risk", "violates_k2", "above_threshold"]:
        assert np.array_equal(rec[col].to_numpy(), mem.records[col].to_numpy()), col


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(codes=st.lists(st.integers(0, 2**40), min_size=0, max_size=300, unique=True),
       n_buckets=st.integers(1, 33))
def test_buckets_partition_the_codes(codes, n_buckets):
    # every code lands in exactly one bucket, the same one wherever it is seen
    code = np.array(sorted(codes), dtype=np.int64)
    b = bucket_of(code, n_buckets)
    assert b.shape == code.shape and (b.size == 0 or (b.min() >= 0 and b.max() < n_buckets))
    again = bucket_of(code[::-1].copy(), n_buckets)[::-1]
    assert np.array_equal(b, again)


def test_a_frame_built_in_pandas_is_not_changed(client):
    df = person_frame(500, seed=2, missing=False)
    before = df.copy()
    pmd = from_pandas(df, npartitions=2, key_vars=KEYS, weight="weight")
    frequency_table(pmd).compute()
    pd.testing.assert_frame_equal(df, before)
