"""protect_with_dask end to end on a LocalCluster (in-process workers, no network)."""

import json

import numpy as np
import pandas as pd
import pytest

from sdckit.engine.frame import same_values
from sdckit.engine.masking import run_in_memory
from sdckit.engine.run import EngineError, protect_with_dask
from sdckit.errors import GateError, InputError, SpecError

from .conftest import person_frame

SPEC = """
[input]
path = "persons"
format = "parquet"

[roles]
key_vars = ["region", "sex", "age", "job"]
numeric_vars = ["income", "hours"]
weight = "weight"

[run]
seed = 20261122

[[steps]]
method = "pram"
variables = ["age", "job"]
matrix = {{ type = "invariant" }}
min_diagonal = 0.7

[[steps]]
method = "noise"
variables = ["income", "hours"]
level = 0.1

[gate]
{gate}

[output]
directory = "release"
data = "persons_released.parquet"
"""
#: the gate of the tests that are not about the gate: no risk threshold, on purpose
NO_RISK_GATE = 'none = "a test of the engine, not of the gate"'


def _write_input(tmp_path, df, n_parts=3):
    folder = tmp_path / "persons"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(df)), n_parts)):
        df.iloc[part].to_parquet(folder / f"part.{i}.parquet", index=False)
    return folder


def test_protect_writes_the_release_equal_to_the_in_memory_path(tmp_path):
    df = person_frame(8000, seed=1)
    _write_input(tmp_path, df)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(gate="max_individual_risk = 0.99"))
    run = protect_with_dask(spec, n_workers=2, processes=False, progress=False)
    assert run.passed and run.n_records == 8000 and run.n_partitions == 3
    parts = sorted(run.paths["data"].glob("*.parquet"), key=lambda f: int(f.stem.split(".")[-1]))
    released = pd.concat([pd.read_parquet(f) for f in parts], ignore_index=True)
    # rows are shuffled within partitions; the internal row order maps them back
    order = pd.concat([pd.read_parquet(f) for f in sorted(run.paths["row_order"].glob("*.parquet"),
                                                            key=lambda f: int(f.stem.split(".")[-1]))],
                      ignore_index=True)
    assert (order["released_row"].to_numpy() == np.arange(8000)).all()
    assert sorted(order["input_row"]) == list(range(8000))
    assert (order["input_row"].to_numpy() != np.arange(8000)).mean() > 0.9
    # the same plans and the step seeds of the run, applied in memory as one partition
    root = np.random.SeedSequence(20261122)
    reference = run_in_memory(df, run.plans, root.spawn(2)).iloc[order["input_row"].to_numpy()]
    assert same_values(released, reference.reset_index(drop=True))
    # the seed is a secret: it goes to the internal sibling folder only, never the public one
    pub, intl = tmp_path / "release", tmp_path / "release-internal"
    for f in pub.rglob("*"):
        if f.is_file():
            text = f.read_bytes()
            assert b"20261122" not in text and str(tmp_path).encode() not in text, f
    assert not any("internal" in f.name for f in pub.rglob("*"))
    internal = json.loads((intl / "internal_report.json").read_text())
    assert internal["seeds"]["root"]["entropy"] == "20261122"
    assert run.paths["internal_json"].parent == intl and (intl / "internal_certificate.json").exists()
    assert (pub / "pram_age.csv").exists() and (pub / ".sdckit-release").exists()
    assert run.risk_before.summary["n_records"] == 8000
    assert not list(tmp_path.glob(".release*"))  # no staging folder left


def test_dask_release_has_a_certificate_that_verify_rechecks(tmp_path):
    """The public folder's certificate lists every data part, matrix and the report with its
    SHA-256; `verify` re-reads the parts, re-checks the risk gate and the matrices, and
    detects a changed part."""
    from sdckit.report.verify import verify_release

    df = person_frame(4000, seed=8)
    _write_input(tmp_path, df)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(gate="max_individual_risk = 0.99\nmin_diagonal = 0.7"))
    run = protect_with_dask(spec, n_workers=2, processes=False, progress=False)
    cert = json.loads(run.paths["certificate"].read_text())
    parts = [f for f in cert["files"] if f["role"] == "data_part"]
    assert len(parts) == 3 and cert["data"]["n_records"] == 4000 and cert["engine"] == "dask"
    assert {m["file"] for m in cert["checks"]["matrices"]} == {"pram_age.csv", "pram_job.csv"}
    # the invariant matrices keep the input's frequencies (p P = p), so they are certified as such
    assert all(m["invariant"] for m in cert["checks"]["matrices"])
    assert "seed" not in json.dumps(cert["spec"]).lower()
    res = verify_release(tmp_path / "release")
    assert res.ok, res.problems
    # the public report reads as sentences and labelled tables, not as a JSON dump
    report = (tmp_path / "release" / "report.html").read_text()
    body = report.split("</style>", 1)[1]
    assert "Passed: the release met every gate threshold" in body  # the in-memory engine's words
    assert "records unique on the keys (f_k = 1)" in body and "PRAM changed the categories of age, job" in body
    assert '{"' not in body and "': " not in body
    checked = " ".join(c["check"] for c in res.checks if not c["skipped"])
    assert "max_individual_risk" in checked and "pram_age.csv" in checked
    # a changed part is found
    first = tmp_path / "release" / parts[0]["name"]
    pd.read_parquet(first).iloc[:-1].to_parquet(first, index=False)
    res = verify_release(tmp_path / "release")
    assert not res.ok and any(parts[0]["name"] in p for p in res.problems)


def test_dask_release_is_replaced_only_with_overwrite(tmp_path):
    df = person_frame(1500, seed=9)
    _write_input(tmp_path, df)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(gate=NO_RISK_GATE))
    protect_with_dask(spec, n_workers=1, processes=False, progress=False)
    before = (tmp_path / "release" / "certificate.json").read_bytes()
    with pytest.raises(InputError, match="a release is already there; pass --overwrite"):
        protect_with_dask(spec, n_workers=1, processes=False, progress=False)
    assert (tmp_path / "release" / "certificate.json").read_bytes() == before
    run = protect_with_dask(spec, n_workers=1, processes=False, progress=False, overwrite=True)
    assert run.paths["certificate"].exists() and (tmp_path / "release-internal" / "internal_report.json").exists()


def test_failed_gate_writes_nothing(tmp_path):
    df = person_frame(3000, seed=2)
    _write_input(tmp_path, df)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(gate="k_anonymity = 50"))
    with pytest.raises(GateError, match="k_anonymity = 50"):
        protect_with_dask(spec, n_workers=2, processes=False, progress=False)
    assert not (tmp_path / "release").exists() and not (tmp_path / "release-internal").exists()


def test_min_diagonal_gate_on_the_fitted_matrices(tmp_path):
    """The in-memory gate's rule on the Dask engine: the smallest diagonal of every fitted
    matrix (min_diagonal = 0.7 is guaranteed by the builder, so 0.7 passes and 0.99 fails)."""
    df = person_frame(3000, seed=4)
    _write_input(tmp_path, df)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(gate="min_diagonal = 0.7\n" + NO_RISK_GATE))
    run = protect_with_dask(spec, n_workers=2, processes=False, progress=False)
    (g,) = run.gate
    low = min(float(m.P.diagonal().min()) for p in run.plans if hasattr(p, "matrices")
              for ms in p.matrices.values() for m in ms)
    assert g["passed"] and abs(g["value"]["smallest"] - low) < 1e-15 and low >= 0.7 - 1e-9
    spec.write_text(SPEC.format(gate="min_diagonal = 0.99\n" + NO_RISK_GATE).replace('directory = "release"', 'directory = "r2"'))
    with pytest.raises(GateError, match="min_diagonal = 0.99"):
        protect_with_dask(spec, n_workers=2, processes=False, progress=False)
    assert not (tmp_path / "r2").exists()


def test_spec_errors_before_running(tmp_path):
    df = person_frame(500, seed=3)
    _write_input(tmp_path, df)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(gate=NO_RISK_GATE).replace('method = "noise"', 'method = "neighbours"'))
    with pytest.raises(SpecError, match="'neighbours' does not run on the Dask engine: each record is resampled"):
        protect_with_dask(spec, processes=False, progress=False)
    spec.write_text(SPEC.format(gate="l_diversity = 2"))
    with pytest.raises(SpecError, match="gate.l_diversity: not checked by the Dask engine"):
        protect_with_dask(spec, processes=False, progress=False)
    spec.write_text(SPEC.format(gate=NO_RISK_GATE).replace("level = 0.1", "levle = 0.1"))
    with pytest.raises(SpecError, match=r"steps\[1\].levle: unknown parameter"):
        protect_with_dask(spec, processes=False, progress=False)


def test_a_worker_error_names_the_partition(tmp_path):
    df = person_frame(900, seed=4, missing=False)
    _write_input(tmp_path, df)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(gate=NO_RISK_GATE))
    cats = {"job": ["a", "b", "c", "d"]}  # 'e' occurs: refused where it is met
    with pytest.raises((InputError, EngineError), match=r"'job' has values not in its category list \(partition \d\)"):
        protect_with_dask(spec, n_workers=2, processes=False, progress=False, categories=cats)


def test_summary_and_description_for_the_command_line(tmp_path):
    df = person_frame(2000, seed=5)
    _write_input(tmp_path, df, n_parts=2)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(gate=NO_RISK_GATE))
    run = protect_with_dask(spec, n_workers=1, processes=False, progress=False)
    d = run.summary_dict()
    json.dumps(d)  # plain JSON
    assert d["engine"] == "dask" and d["n_records"] == 2000 and d["steps"] == ["pram", "noise"]
    assert "20261122" not in json.dumps(d)
    assert "2,000 records in 2 partitions" in run.describe()


def test_csv_in_blocks_and_csv_out(tmp_path):
    # CSV read in byte blocks (several partitions from one file), released as CSV parts
    df = person_frame(6000, seed=6)
    df.to_csv(tmp_path / "persons.csv", index=False)
    spec = tmp_path / "release.toml"
    text = SPEC.format(gate=NO_RISK_GATE).replace('path = "persons"\nformat = "parquet"', 'path = "persons.csv"')
    text = text.replace('data = "persons_released.parquet"', 'data = "persons_released.csv"\nkeep_order = true')
    spec.write_text(text)
    run = protect_with_dask(spec, n_workers=2, processes=False, progress=False, blocksize=60_000)
    assert run.n_partitions > 2
    parts = sorted((tmp_path / "release" / "persons_released.csv").glob("*.csv"))
    released = pd.concat([pd.read_csv(p) for p in parts], ignore_index=True)
    reference = run_in_memory(pd.read_csv(tmp_path / "persons.csv"), run.plans, np.random.SeedSequence(20261122).spawn(2))
    assert released.shape == reference.shape
    for col in ["region", "sex", "age", "job"]:
        a, b = released[col].astype(object), reference[col].astype(object)
        assert (a.isna() == b.isna()).all() and (a[a.notna()].astype(str) == b[b.notna()].astype(str)).all(), col
    # floats go through decimal text: equal to 17 significant digits
    assert np.allclose(released[["income", "hours"]], reference[["income", "hours"]], rtol=1e-15, equal_nan=True)


BLOCK_SPEC = """
[input]
path = "persons"

[roles]
key_vars = ["region", "sex", "age", "job"]
numeric_vars = ["income", "hours"]
weight = "weight"

[run]
seed = 7

[[steps]]
method = "local_suppression"
k = 3

[[steps]]
method = "rank_swap"
variables = ["income"]
p = 3

[[steps]]
method = "microaggregation"
variables = ["hours"]
k = 4

[gate]
k_anonymity = 3

[output]
directory = "release"
data = "out.parquet"
keep_order = true
"""


def test_block_steps_from_a_spec(tmp_path):
    from sdckit.masking.rank_swap import check_rank_swap

    df = person_frame(3000, seed=7)
    _write_input(tmp_path, df)
    spec = tmp_path / "release.toml"
    spec.write_text(BLOCK_SPEC)
    run = protect_with_dask(spec, n_workers=2, processes=False, progress=False)
    assert run.passed and [p["method"] for p in run.public_dict()["steps"]] == \
        ["local_suppression", "rank_swap", "microaggregation"]
    out = pd.read_parquet(run.paths["data"]).reset_index(drop=True)
    chk = check_rank_swap(df[["income"]].to_numpy(), out[["income"]].to_numpy(), 3.0, 0, 0)
    assert chk["within_window"] and chk["multiset_kept"]
    assert out.groupby("hours").size().min() >= 4  # groups of k..2k-1 share one released value
    spec.write_text(BLOCK_SPEC.replace("p = 3", "p = 3\ntop_percent = 1"))
    with pytest.raises(SpecError, match="does not take 'top_percent'"):
        protect_with_dask(spec, processes=False, progress=False)
