"""Distributed frequencies and risk against the in-memory functions (LocalCluster, 2 workers)."""

import numpy as np
import pandas as pd
import pytest

from sdckit.engine.frame import from_pandas, read_partitioned, write_partitioned
from sdckit.engine.risk import measure_risk_partitioned
from sdckit.errors import InputError
from sdckit.microdata import Microdata
from sdckit.risk.frequencies import key_frequencies
from sdckit.risk.missing import microdata_frequencies
from sdckit.risk.report import measure_risk

from .conftest import person_frame

KEYS = ["region", "sex", "age", "job"]


@pytest.mark.parametrize("npartitions", [1, 3, 7])
def test_frequencies_and_risk_equal_the_in_memory_engine(client, npartitions):
    df = person_frame(6000, seed=npartitions, integer_weights=True, missing=False)
    pmd = from_pandas(df, npartitions=npartitions, key_vars=KEYS, weight="weight")
    risk = measure_risk_partitioned(pmd)
    rec = risk.records(pmd).compute().reset_index(drop=True)
    md = Microdata(df, key_vars=KEYS, weight="weight")
    mem = measure_risk(md)
    # integer weights: every sum is exact, so F_k and the risk agree bit for bit
    for col in ["fk", "Fk", "risk", "violates_k2", "violates_k3", "violates_k5", "above_threshold"]:
        assert np.array_equal(rec[col].to_numpy(), mem.records[col].to_numpy()), col
    for key in ["n_records", "n_combinations", "n_sample_uniques", "k_violations", "k_reached",
                "max_individual_risk", "risk_threshold", "n_above_threshold"]:
        assert risk.summary[key] == mem.summary[key], key
    assert risk.summary["global_risk"] == pytest.approx(mem.summary["global_risk"], rel=1e-12)


def test_missing_keys_as_wildcards_and_fractional_weights_for_any_partitioning(client):
    df = person_frame(5000, seed=11, missing=True)  # job missing in every 97th record
    runs = []
    for p in (1, 4, 9):
        pmd = from_pandas(df, npartitions=p, key_vars=KEYS, weight="weight")
        risk = measure_risk_partitioned(pmd)
        runs.append((risk, risk.records(pmd).compute().reset_index(drop=True)))
    for risk, rec in runs[1:]:
        for col in ["fk", "Fk", "risk"]:  # bit for bit whatever the partitioning
            assert np.array_equal(rec[col].to_numpy(), runs[0][1][col].to_numpy()), col
        assert risk.summary == runs[0][0].summary
    # the in-memory measure (wildcard rule, alpha = 1): f_k and k-anonymity exactly; F_k and
    # the risk up to the order of the weight sums (bincount's running sum vs correctly rounded)
    risk, rec = runs[0]
    mem = measure_risk(Microdata(df, key_vars=KEYS, weight="weight"))
    assert np.array_equal(rec["fk"].to_numpy(), mem.records["fk"].to_numpy())
    assert np.allclose(rec["Fk"], mem.records["Fk"], rtol=1e-13, atol=0)
    assert np.allclose(rec["risk"], mem.records["risk"], rtol=1e-12, atol=0)
    for key in ["n_records", "n_combinations", "n_sample_uniques", "k_violations", "k_reached",
                "n_records_with_missing_keys"]:
        assert risk.summary[key] == mem.summary[key], key
    assert risk.summary["n_records_with_missing_keys"] > 0
    # without wildcards (plain bincount on codes with missing as a value) f_k would differ
    plain = key_frequencies(Microdata(df, key_vars=KEYS, weight="weight")).fk
    assert not np.array_equal(plain, rec["fk"].to_numpy())


def test_partitioned_parquet_agrees_categories_across_parts(client, tmp_path):
    df = person_frame(900, seed=5)
    parts = tmp_path / "in"
    parts.mkdir()
    # the first part lacks job 'e' and region 8; categories must still agree
    first = df[(df["job"] != "e") & (df["region"] != 8)].iloc[:300]
    rest = df.drop(first.index)
    first.to_parquet(parts / "part.0.parquet", index=False)
    rest.to_parquet(parts / "part.1.parquet", index=False)
    pmd = read_partitioned(parts, key_vars=KEYS, numeric_vars=["income", "hours"], weight="weight")
    both = pd.concat([first, rest], ignore_index=True)
    md = Microdata(both, key_vars=KEYS, weight="weight")
    for k in KEYS:
        assert list(pmd.categories[k]) == list(md.categories(k))
    assert list(pmd.offsets) == [0, 300, len(both)]
    rec = measure_risk_partitioned(pmd).records(pmd).compute()
    assert np.array_equal(rec["fk"].to_numpy(), microdata_frequencies(md).fk)  # wildcard rule
    out = write_partitioned(pmd.frame, tmp_path / "out.parquet", n_records=pmd.n_records)
    back = pd.read_parquet(out)
    assert back.shape == both.shape


def test_reading_errors_name_column_value_and_partition(client, tmp_path):
    df = person_frame(200, seed=6)
    df.loc[150, "weight"] = -1.0
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    with pytest.raises(InputError, match="weight column 'weight' has 1 values"):
        read_partitioned(path, key_vars=KEYS, weight="weight")
    with pytest.raises(InputError, match="'regoin' does not exist"):
        read_partitioned(path, key_vars=["regoin"])
    good = person_frame(200, seed=6, missing=False)
    pmd = from_pandas(good, npartitions=3, key_vars=KEYS, categories={"job": ["a", "b", "c", "d"]})
    with pytest.raises(Exception, match=r"'job' has values not in its category list \(partition \d\): 'e'"):
        measure_risk_partitioned(pmd)
