"""A Dask release writes the catalogue files too: the codebook (valid DDI-Codebook 2.5), the
data package (one resource per data part, valid under ``frictionless validate``) and the SATRE
record, listed in the certificate so ``sdckit verify`` covers them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

from sdckit.catalogue.ddi import read_ddi, validate_ddi  # noqa: E402
from sdckit.engine.run import protect_with_dask  # noqa: E402
from sdckit.report.verify import verify_release  # noqa: E402
from tests.engine.conftest import person_frame  # noqa: E402

SPEC = """
[input]
path = "persons"
format = "parquet"

[roles]
key_vars = ["region", "sex", "age", "job"]
numeric_vars = ["income", "hours"]
weight = "weight"

[run]
seed = 20261127

[[steps]]
method = "pram"
variables = ["age", "job"]
matrix = {{ type = "invariant" }}
min_diagonal = 0.7

[gate]
max_individual_risk = 0.99

[output]
directory = "release"
data = "{data}"
licence = "CC-BY-4.0"
{output}
"""


def _release(tmp_path: Path, data: str = "persons_released.csv", output: str = "") -> Path:
    df = person_frame(3000, seed=4)
    folder = tmp_path / "persons"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(df)), 3)):
        df.iloc[part].to_parquet(folder / f"part.{i}.parquet", index=False)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(data=data, output=output))
    protect_with_dask(spec, n_workers=2, processes=False, progress=False)
    return tmp_path / "release"


def test_dask_release_writes_listed_catalogue_files(tmp_path):
    pub = _release(tmp_path)
    cert = json.loads((pub / "certificate.json").read_text())
    roles = {f["name"]: f["role"] for f in cert["files"]}
    for name in ("codebook.xml", "datapackage.json", "satre_record.json"):
        assert roles[name] == "catalogue"
    res = verify_release(pub)
    assert res.ok, res.problems
    # the codebook: valid, every released column with its role; PRAM said in words, its
    # matrices as related materials
    assert validate_ddi(pub / "codebook.xml") == []
    cb = read_ddi(pub / "codebook.xml")
    assert [v.name for v in cb.variables] == list(cert["data"]["columns"])
    assert cb.roles()["weight"] == "weight" and cb.variable("age").treatment
    assert {m.uri for m in cb.materials} == {"pram_age.csv", "pram_job.csv"}
    # the data package: one resource per data part, each with its SHA-256 as certified
    pkg = json.loads((pub / "datapackage.json").read_text())
    parts = {f["name"]: f["sha256"] for f in cert["files"] if f["role"] == "data_part"}
    assert {r["path"]: r["hash"] for r in pkg["resources"]} == {n: f"sha256:{h}" for n, h in parts.items()}
    assert len({r["name"] for r in pkg["resources"]}) == len(parts) == 3
    assert pkg["licenses"][0]["name"] == "CC-BY-4.0"
    rec = json.loads((pub / "satre_record.json").read_text())
    assert [t["name"] for t in rec["thresholds"]] == [g["name"] for g in cert["gate"]]
    text = "".join(p.read_text() for p in (pub / "codebook.xml", pub / "datapackage.json", pub / "satre_record.json"))
    assert "20261127" not in text and str(tmp_path) not in text
    # one changed catalogue file fails verify, naming it
    (pub / "datapackage.json").chmod(0o644)
    (pub / "datapackage.json").write_text(json.dumps({**pkg, "title": "edited"}))
    res = verify_release(pub)
    assert not res.ok and any(p.startswith("datapackage.json: changed since release") for p in res.problems)


def test_dask_data_package_validates_with_frictionless(tmp_path):
    pub = _release(tmp_path)
    frictionless = Path(sys.executable).with_name("frictionless")
    if not frictionless.is_file():
        pytest.skip("the frictionless command is not installed")
    r = subprocess.run([str(frictionless), "validate", "--json", "datapackage.json"], cwd=pub,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:]
    assert json.loads(r.stdout)["valid"] is True


def test_dask_catalogue_key_chooses_the_files(tmp_path):
    pub = _release(tmp_path, output='catalogue = ["satre"]')
    names = {p.name for p in pub.iterdir()}
    assert "satre_record.json" in names and not names & {"codebook.xml", "datapackage.json"}
    assert verify_release(pub).ok
