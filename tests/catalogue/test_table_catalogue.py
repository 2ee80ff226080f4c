"""Catalogue files of a table release: the SDMX-CSV 2.0 (every suppressed cell CONF_STATUS C
with no value, every perturbed or rounded cell OBS_STATUS E), its structure, the data package
and the SATRE record, all listed in the certificate; pysdmx reads the SDMX-CSV back into the
published values and flags; verify fails once one SDMX cell is edited."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as hst

from sdckit.catalogue.sdmx import primary_codes, sdmx_status
from sdckit.errors import SpecError
from sdckit.report.table_release import release_table_spec
from sdckit.report.verify import verify_release

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tables"

SPEC = """
[input]
table = "delinquent.csv"
value = "n"
[table]
dimensions = ["county", "education"]
{rules}
[protection]
method = "{method}"
{extra}
[output]
folder = "release"
table = "delinquent.csv"
licence = "CC-BY-4.0"
description = "Delinquent children by county and education level"
{output}
"""
THRESHOLD = "[[rules]]\ntype = \"threshold\"\nn = 3"
DP = "mechanism = 'laplace'\nepsilon = 1.0\nseed = 5\n[budget]\nmax_epsilon = 1.0"


def _release(tmp_path: Path, method: str = "optimal", extra: str = "", rules: str = THRESHOLD,
             output: str = "") -> Path:
    for f in EXAMPLES.glob("delinquent*"):
        shutil.copy(f, tmp_path / f.name)
    spec = tmp_path / "rel.toml"
    spec.write_text(SPEC.format(method=method, extra=extra, rules=rules, output=output))
    release_table_spec(spec)
    return tmp_path / "release"


def _published(pub: Path) -> pd.DataFrame:
    return pd.read_csv(pub / "delinquent.csv", dtype=str, keep_default_na=False)


def _pysdmx_frame(path: Path) -> pd.DataFrame:
    from pysdmx.io import read_sdmx

    return read_sdmx(path).data[0].data


@pytest.mark.parametrize("method,extra,rules", [("optimal", "", THRESHOLD), ("dp", DP, ""),
                                                ("rounding", "base = 5", THRESHOLD)])
def test_every_protected_cell_is_flagged_and_pysdmx_reads_it_back(tmp_path, method, extra, rules):
    pub = _release(tmp_path, method, extra, rules)
    cert = json.loads((pub / "certificate.json").read_text())
    listed = {f["name"]: f["role"] for f in cert["files"]}
    for name in ("sdmx_data.csv", "sdmx_structure.xml", "datapackage.json", "satre_record.json"):
        assert listed[name] == "catalogue"
    table = _published(pub)
    theirs = _pysdmx_frame(pub / "sdmx_data.csv")
    assert len(theirs) == len(table) == 25
    # the SDMX rows follow the table CSV's rows (both in the table's cell order)
    assert (theirs["county"].astype(str).to_numpy() == table["county"].to_numpy()).all()
    assert (theirs["education"].astype(str).to_numpy() == table["education"].to_numpy()).all()
    status = table["status"].to_numpy()
    conf, obs = theirs["CONF_STATUS"].to_numpy(), theirs["OBS_STATUS"].to_numpy()
    suppressed, changed = status == "suppressed", np.isin(status, ["perturbed", "rounded"])
    assert suppressed.any() or changed.any()
    # 100% of suppressed cells: CONF_STATUS C (primary and secondary alike), OBS_STATUS Q, no value
    assert (conf[suppressed] == "C").all() and (obs[suppressed] == "Q").all()
    value = pd.to_numeric(theirs["OBS_VALUE"].replace("", np.nan)).to_numpy(dtype=float)
    assert np.isnan(value[suppressed]).all()
    # 100% of perturbed and rounded cells: OBS_STATUS E, free for publication
    assert (obs[changed] == "E").all() and (conf[changed] == "F").all()
    assert ((conf[status == "safe"] == "F") & (obs[status == "safe"] == "A")).all()
    # the published values, read by pysdmx, equal the table CSV's (the public CSV rounds to 6
    # significant digits: compared to that precision)
    shown = pd.to_numeric(table["value"], errors="coerce").to_numpy(dtype=float)
    np.testing.assert_allclose(value[~suppressed], shown[~suppressed], rtol=1e-5)
    assert verify_release(pub).ok


def test_the_internal_sdmx_tells_primary_from_secondary(tmp_path):
    pub = _release(tmp_path)
    internal = pd.read_csv(tmp_path / "release-internal" / "sdmx_data_internal.csv", dtype=str,
                           keep_default_na=False)
    public = pd.read_csv(pub / "sdmx_data.csv", dtype=str, keep_default_na=False)
    # the threshold rule (n = 3) flags 4 cells (tests/tables/test_table_release.py), the
    # optimal pattern adds 3 secondary ones: 7 suppressed in all
    assert (internal["CONF_STATUS"] == "A").sum() == 4 and (internal["CONF_STATUS"] == "D").sum() == 3
    assert (public["CONF_STATUS"] == "C").sum() == 7 and set(public["CONF_STATUS"]) == {"C", "F"}
    assert "sdmx_data_internal.csv" not in {p.name for p in pub.iterdir()}


def test_verify_fails_after_one_sdmx_cell_is_edited(tmp_path):
    pub = _release(tmp_path)
    path = pub / "sdmx_data.csv"
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    row = df.index[df["CONF_STATUS"] == "C"][0]
    df.loc[row, ["OBS_VALUE", "OBS_STATUS", "CONF_STATUS"]] = ["1", "A", "F"]  # a suppressed cell "published"
    path.chmod(0o644)
    df.to_csv(path, index=False)
    res = verify_release(pub)
    assert not res.ok and any(p.startswith("sdmx_data.csv: changed since release") for p in res.problems)


@pytest.mark.parametrize("method,extra,rules", [("optimal", "", THRESHOLD), ("dp", DP, "")])
def test_data_package_validates_with_frictionless(tmp_path, method, extra, rules):
    pub = _release(tmp_path, method, extra, rules)
    pkg = json.loads((pub / "datapackage.json").read_text())
    assert [r["path"] for r in pkg["resources"]] == ["delinquent.csv", "sdmx_data.csv"]
    fields = {f["name"]: f for f in pkg["resources"][0]["schema"]["fields"]}
    assert fields["value"]["type"] == "number" and "x" in pkg["resources"][0]["schema"]["missingValues"]
    if method == "dp":  # the interval's ends are typed too (whole counts here)
        assert fields["lower"]["type"] in ("integer", "number") and fields["upper"]["type"] in ("integer", "number")
    assert pkg["licenses"][0]["name"] == "CC-BY-4.0" and pkg["description"].startswith("Delinquent")
    frictionless = Path(sys.executable).with_name("frictionless")
    if not frictionless.is_file():
        pytest.skip("the frictionless command is not installed")
    r = subprocess.run([str(frictionless), "validate", "--json", "datapackage.json"], cwd=pub,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:]
    assert json.loads(r.stdout)["valid"] is True


def test_satre_record_names_the_rules_and_the_audit(tmp_path):
    pub = _release(tmp_path)
    rec = json.loads((pub / "satre_record.json").read_text())
    assert rec["thresholds"][0]["name"] == "threshold" and rec["thresholds"][0]["threshold"]["n"] == 3
    assert rec["thresholds"][0]["measured"] == {"sensitive_cells": 4}
    assert rec["suppression_or_perturbation_rules"][0]["method"] == "optimal"
    assert rec["risk_appetite"]["audits"][0]["status"] == "exact"
    assert "seed" not in json.dumps(rec) and str(tmp_path) not in json.dumps(rec)


def test_catalogue_key_chooses_the_formats(tmp_path):
    pub = _release(tmp_path, output='catalogue = ["satre"]')
    names = {p.name for p in pub.iterdir()}
    assert "satre_record.json" in names and not names & {"sdmx_data.csv", "datapackage.json", "sdmx_structure.xml"}
    assert not (tmp_path / "release-internal" / "sdmx_data_internal.csv").exists()
    assert verify_release(pub).ok


def test_a_wrong_format_is_named_before_the_run(tmp_path):
    with pytest.raises(SpecError, match=r"output.catalogue\[0\]: must be one of sdmx, frictionless, satre"):
        _release(tmp_path, output='catalogue = ["ddi"]')
    assert not (tmp_path / "release").exists()


def test_public_status_mapping_and_rule_codes():
    # hand-built from CL_CONF_STATUS v1.3 / CL_OBS_STATUS v2.2 (see sdckit.catalogue.sdmx)
    conf, obs = sdmx_status(["safe", "suppressed", "rounded", "perturbed"])
    assert list(conf) == ["F", "C", "F", "F"] and list(obs) == ["A", "Q", "E", "E"]
    assert list(primary_codes(["threshold", "p%", "pq", "dominance", "zero", ""], [1])) == \
        ["A", "G", "G", "O", "C", "C"]
    assert primary_codes(["dominance"], [2])[0] == "T" and primary_codes(["dominance"], [1, 2])[0] == "G"
    assert primary_codes(["dominance"], [3])[0] == "C"


def test_catalogue_key_without_a_release_is_refused(tmp_path):
    from sdckit.tables.spec import run_table_spec

    for f in EXAMPLES.glob("delinquent*"):
        shutil.copy(f, tmp_path / f.name)
    spec = tmp_path / "loose.toml"
    spec.write_text(SPEC.format(method="optimal", extra="", rules=THRESHOLD, output='catalogue = ["sdmx"]')
                    .replace('folder = "release"\n', ""))
    with pytest.raises(SpecError, match=r"output.catalogue: catalogue files are written with a release"):
        run_table_spec(spec)


@given(hst.lists(hst.sampled_from(["safe", "suppressed", "rounded", "perturbed"]), min_size=1, max_size=60))
def test_every_public_protected_cell_carries_a_code(status):
    conf, obs = sdmx_status(status)
    s = np.asarray(status, dtype=object)
    # suppressed: confidential (C) and missing (Q); perturbed or rounded: estimated (E), free
    assert ((conf == "C") == (s == "suppressed")).all() and ((obs == "Q") == (s == "suppressed")).all()
    assert ((obs == "E") == np.isin(s, ["rounded", "perturbed"])).all()
    assert set(conf) <= {"C", "F"} and set(obs) <= {"A", "E", "Q"}
