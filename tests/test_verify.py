"""``sdckit verify``: the certificate of the demo release, and what verify finds when a
released file is changed or removed."""

import hashlib
import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from sdckit.report.verify import verify_release
from tests.report.demo_release import write_demo_release

CMD = [sys.executable, "-m", "sdckit"]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("verify")
    run, paths, _ = write_demo_release(out, with_map=False)
    return run, paths


@pytest.fixture
def copy(release, tmp_path):
    """A fresh copy of the release folder (tests change files in it)."""
    _, paths = release
    dst = tmp_path / "release"
    shutil.copytree(paths["data"].parent, dst)
    return dst


def _verify_cli(folder, capsys):
    """``sdckit verify FOLDER --json`` through the command's entry point (in process)."""
    from sdckit.cli import main

    capsys.readouterr()
    code = main(["verify", str(folder), "--json"])
    out, err = capsys.readouterr()
    assert len(out.strip().splitlines()) == 1  # one JSON document on stdout
    return code, json.loads(out)


def test_certificate_holds_hashes_versions_gate_and_no_seed(release):
    run, paths = release
    folder = paths["data"].parent
    cert = json.loads((folder / "certificate.json").read_text())
    files = {f["name"]: f["sha256"] for f in cert["files"]}
    # independent hashes with hashlib over the whole files
    for name in ("census_released.csv", "pram_Marital-Status.csv", "pram_Marital-Status.json"):
        assert files[name] == hashlib.sha256((folder / name).read_bytes()).hexdigest()
    assert cert["dependencies"]["numpy"] == __import__("numpy").__version__
    assert {"k_anonymity", "min_diagonal", "max_global_risk"} <= {g["name"] for g in cert["gate"]}
    assert all(g["passed"] for g in cert["gate"]) and cert["guarantees_hold"]
    assert "seed" not in cert["spec"].get("run", {})
    assert "input" not in cert
    text = (folder / "certificate.json").read_text()
    assert str(run.seeds.root.entropy) not in text and "20261122" not in text
    internal = json.loads(paths["internal_certificate"].read_text())
    src = run.original.meta.source
    assert internal["input"]["sha256"] == hashlib.sha256(open(src, "rb").read()).hexdigest()
    assert "20261122" not in paths["internal_certificate"].read_text()


def test_verify_passes_on_the_demo_release(release, capsys):
    _, paths = release
    code, out = _verify_cli(paths["data"].parent, capsys)
    assert code == 0 and out["ok"] is True and out["problems"] == []
    checked = " ".join(c["check"] for c in out["checks"])
    assert "gate k_anonymity = 3" in checked and "rows sum to 1" in checked and "invariance" in checked


def test_one_changed_cell_fails_naming_the_data_file(copy, capsys):
    data = copy / "census_released.csv"
    df = pd.read_csv(data)
    df.loc[0, "Health"] = 5 if df.loc[0, "Health"] != 5 else 4  # one non-key cell
    df.to_csv(data, index=False)
    code, out = _verify_cli(copy, capsys)
    assert code == 5 and out["ok"] is False
    assert any(p.startswith("census_released.csv: changed since release") for p in out["problems"])
    assert not any("gate" in p for p in out["problems"])  # a non-key cell breaks no threshold


def test_a_removed_matrix_fails_naming_it(copy, capsys):
    (copy / "pram_Marital-Status.csv").unlink()
    code, out = _verify_cli(copy, capsys)
    assert code != 0
    assert any(p.startswith("pram_Marital-Status.csv: missing") for p in out["problems"])


def test_a_changed_key_cell_fails_the_threshold(copy):
    data = copy / "census_released.csv"
    df = pd.read_csv(data)
    # give record 0 a region code no other record has: a sample unique, so f_k = 1 < 3
    df["Region"] = df["Region"].astype(object)
    df.loc[0, "Region"] = "Z99999999"
    df.to_csv(data, index=False)
    res = verify_release(copy)
    assert not res.ok
    assert any(p.startswith("gate k_anonymity = 3: fails on census_released.csv") for p in res.problems)
    assert any(p.startswith("census_released.csv: changed since release") for p in res.problems)


def test_a_matrix_edited_below_its_promise_fails(copy):
    m = copy / "pram_Marital-Status.csv"
    df = pd.read_csv(m, index_col=0)
    df.iloc[1] = [0.3, 0.4, 0.3]  # row still sums to 1, diagonal 0.4 < 0.9
    df.to_csv(m)
    res = verify_release(copy)
    assert any("pram_Marital-Status.csv: smallest diagonal entry 0.4 is below the promised 0.9" in p
               for p in res.problems)
    assert any(p.startswith("gate min_diagonal = 0.9: fails") for p in res.problems)


def test_verify_text_output_and_missing_certificate(copy):
    (copy / "certificate.json").unlink()
    # the command itself, once, as a user runs it: text output and a non-zero exit
    r = subprocess.run([*CMD, "verify", str(copy)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 5 and "certificate.json: missing" in r.stdout
    assert r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1
