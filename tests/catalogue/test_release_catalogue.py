"""The catalogue files of a microdata release: written into the public folder, listed in the
certificate (so ``sdckit verify`` covers them), valid (DDI schema, ``frictionless
validate``), free of seeds and paths; a DDI given as input sets labels, missing codes and roles
that the release's DDI keeps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdckit.catalogue.ddi import DdiCodebook, DdiVariable, read_ddi, validate_ddi, write_ddi
from sdckit.release import protect
from sdckit.report.verify import verify_release
from tests.release_helpers import persons, small_run

CATALOGUE = {"codebook.xml", "datapackage.json", "satre_record.json"}


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("rel")
    run = small_run(persons(d), 20261126)
    run.write(d / "release")
    return d / "release"


def test_catalogue_files_are_listed_and_verified(release):
    names = {p.name for p in release.iterdir()}
    assert CATALOGUE <= names
    cert = json.loads((release / "certificate.json").read_text())
    listed = {f["name"]: f["role"] for f in cert["files"]}
    assert all(listed.get(n) == "catalogue" for n in CATALOGUE)
    assert verify_release(release).ok
    (release / "codebook.xml").write_text((release / "codebook.xml").read_text().replace("job", "jab"))
    res = verify_release(release, recover=False)
    assert not res.ok and any("codebook.xml" in p for p in res.problems)


def test_public_catalogue_holds_no_seed_or_path(tmp_path):
    run = small_run(persons(tmp_path), 987654321)
    run.write(tmp_path / "release")
    for name in CATALOGUE:
        text = (tmp_path / "release" / name).read_text()
        assert "987654321" not in text
        assert str(tmp_path) not in text and "persons.csv" not in text


def test_codebook_is_valid_and_describes_the_release(tmp_path):
    pytest.importorskip("lxml")
    run = small_run(persons(tmp_path), 3)
    run.write(tmp_path / "release")
    path = tmp_path / "release" / "codebook.xml"
    assert validate_ddi(path) == []
    cb = read_ddi(path)
    assert [v.name for v in cb.variables] == [str(c) for c in run.released.columns]
    assert cb.variable("job").treatment and "PRAM of job" in cb.variable("job").treatment[0]
    assert [m.uri for m in cb.materials] == ["pram_job.csv"]
    assert cb.risk_statement.startswith("Passed")
    assert cb.roles()["key_vars"] == ("region", "sex", "job")


def test_datapackage_passes_frictionless_validate(tmp_path):
    frictionless = pytest.importorskip("frictionless")
    run = small_run(persons(tmp_path), 4)
    run.write(tmp_path / "release")
    report = frictionless.validate(str(tmp_path / "release" / "datapackage.json"))
    assert report.valid, report.flatten(["type", "note"])[:5]
    pkg = json.loads((tmp_path / "release" / "datapackage.json").read_text())
    fields = {f["name"]: f for f in pkg["resources"][0]["schema"]["fields"]}
    assert fields["job"]["constraints"]["enum"] == sorted(run.released.frame["job"].unique().tolist())


def test_satre_record_maps_the_certificate(release):
    rec = json.loads((release / "satre_record.json").read_text())
    cert = json.loads((release / "certificate.json").read_text())
    assert rec["output_package"]["run_id"] == cert["run_id"]
    assert [t["name"] for t in rec["thresholds"]] == [g["name"] for g in cert["gate"]]
    assert [s["method"] for s in rec["suppression_or_perturbation_rules"]] == [s["method"] for s in cert["steps"]]
    assert rec["tool_versions"]["sdckit"] == cert["sdckit_version"]
    assert rec["output_checker"] is None and rec["model_requirements"] == []
    hashes = {f["name"]: f["sha256"] for f in cert["files"]}
    for f in rec["output_package"]["files"]:
        assert hashes[f["name"]] == f["sha256"]


def _spec(folder: Path, extra_input: str = "", output: str = "", roles: str = "") -> Path:
    spec = folder / "release.toml"
    spec.write_text(f"""
[input]
path = "lfs.csv"
{extra_input}

[roles]
{roles}

[run]
seed = 11

[[steps]]
method = "pram"
variables = ["emp"]
min_diagonal = 0.8

[gate]
k_anonymity = 2
allow_identifiers = ["wt"]

[output]
directory = "out"
data = "lfs_released.csv"
{output}
""")
    return spec


def _lfs(folder: Path) -> Path:
    rng = np.random.default_rng(5)
    n = 400
    df = pd.DataFrame({"region": rng.integers(1, 4, n), "emp": rng.choice([1, 2, 3], n),
                       "age": rng.integers(16, 80, n), "wt": rng.uniform(50, 150, n).round(2)})
    df.loc[rng.random(n) < 0.05, "age"] = -9
    path = folder / "lfs.csv"
    df.to_csv(path, index=False)
    return path


def test_ddi_in_release_ddi_out_keeps_labels_and_missing_codes(tmp_path):
    _lfs(tmp_path)
    cb_in = DdiCodebook(title="LFS", variables=(
        DdiVariable("region", label="Region", value_labels={"1": "North", "2": "South", "3": "East"},
                    representation="numeric", role="key_vars"),
        DdiVariable("emp", label="Employment status", value_labels={"1": "Employed", "2": "Unemployed",
                                                                      "3": "Inactive"},
                    representation="numeric", role="key_vars"),
        DdiVariable("age", label="Age in years", missing=("-9",), value_labels={"-9": "Refused"},
                    representation="numeric"),
        DdiVariable("wt", label="Person weight", representation="numeric", weight=True)))
    write_ddi(cb_in, tmp_path / "lfs.xml")
    run, _ = protect(_spec(tmp_path, 'ddi = "lfs.xml"'))
    assert run.original.key_vars == ("region", "emp") and run.original.weight == "wt"
    assert run.original.frame["age"].isna().sum() > 0  # -9 read as missing
    out = read_ddi(tmp_path / "out" / "codebook.xml")
    for v in cb_in.variables:
        o = out.variable(v.name)
        assert o.label == v.label
        assert dict(o.value_labels) == dict(v.value_labels)
        assert o.missing == v.missing
    assert out.roles()["weight"] == "wt"
    assert verify_release(tmp_path / "out").ok


def test_catalogue_key_chooses_the_files(tmp_path):
    _lfs(tmp_path)
    protect(_spec(tmp_path, output='catalogue = ["frictionless"]\nlicence = "CC-BY-4.0"\n'
                              'description = "Teaching file"', roles='key_vars = ["region", "emp"]'))
    names = {p.name for p in (tmp_path / "out").iterdir()}
    assert "datapackage.json" in names and not names & {"codebook.xml", "satre_record.json"}
    pkg = json.loads((tmp_path / "out" / "datapackage.json").read_text())
    assert pkg["licenses"][0]["name"] == "CC-BY-4.0" and pkg["description"] == "Teaching file"
    assert verify_release(tmp_path / "out").ok


def test_bad_catalogue_key_is_refused(tmp_path):
    from sdckit.errors import SpecError
    from sdckit.spec import load_spec

    _lfs(tmp_path)
    with pytest.raises(SpecError, match=r"output.catalogue\[0\]: must be one of ddi, frictionless, satre"):
        load_spec(_spec(tmp_path, output='catalogue = ["dcat"]'))


def test_protect_ddi_flag_is_the_input_ddi(tmp_path, capsys):
    """``sdckit protect --ddi FILE`` reads the codebook as ``[input] ddi`` does: the same roles,
    missing codes and labels, kept in the released codebook; the public certificate names the
    file, never its path."""
    from sdckit.cli import main

    _lfs(tmp_path)
    cb_in = DdiCodebook(title="LFS", variables=(
        DdiVariable("region", label="Region", value_labels={"1": "North", "2": "South", "3": "East"},
                    representation="numeric", role="key_vars"),
        DdiVariable("emp", label="Employment status", representation="numeric", role="key_vars"),
        DdiVariable("age", label="Age in years", missing=("-9",), representation="numeric"),
        DdiVariable("wt", label="Person weight", representation="numeric", weight=True)))
    (tmp_path / "meta").mkdir()
    write_ddi(cb_in, tmp_path / "meta" / "lfs.xml")
    spec = _spec(tmp_path)  # no [input] ddi, no [roles]: the roles come from the codebook
    code = main(["protect", str(spec), "--ddi", str(tmp_path / "meta" / "lfs.xml"), "--json"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    out = read_ddi(tmp_path / "out" / "codebook.xml")
    assert out.variable("age").missing == ("-9",) and out.variable("region").label == "Region"
    assert out.roles()["weight"] == "wt"
    cert = (tmp_path / "out" / "certificate.json").read_text()
    assert json.loads(cert)["spec"]["input"]["ddi"] == "lfs.xml" and str(tmp_path) not in cert
    assert verify_release(tmp_path / "out").ok
    code = main(["protect", str(spec), "--ddi", str(tmp_path / "missing.xml"), "--overwrite"])
    err = capsys.readouterr().err
    assert code != 0 and "--ddi:" in err and "missing.xml is not a file" in err and len(err.strip().splitlines()) == 1
