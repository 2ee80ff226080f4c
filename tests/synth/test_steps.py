"""The synthesise step and its gate thresholds: a release spec end to end, the gate's figures
against a direct computation, a failing gate writing nothing, and the report section."""

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from sdckit import Microdata
from sdckit.errors import ParameterError
from sdckit.registry import build_gate_check, build_step
from sdckit.release import Release
from sdckit.synth import disclosure_measures
from sdckit.synth.expr import parse_rule
from sdckit.synth.steps import MaxDiSCO, MaxRepU, MaxTCAP, Synthesise

ROOT = Path(__file__).resolve().parents[2]
CENSUS = resources.files("sdckit") / "data" / "uk_census2011_teaching_10k.csv"


@pytest.fixture(scope="module")
def census() -> Microdata:
    df = pd.read_csv(CENSUS, nrows=3000).drop(columns=["Person ID"])
    return Microdata(df, key_vars=["Region", "Sex", "Age", "Marital Status"], sensitive=["Health"])


@pytest.fixture(scope="module")
def run(census):
    step = Synthesise(strata=("Region",), rules=("Age == 1 -> `Marital Status` == 1",), utility_permutations=5)
    return Release(census, [step], gate={"max_disco": 50, "max_repU": 50, "max_tcap": 100}, rng=3).run()


def test_release_keeps_the_promises_and_roles(run, census):
    r = run.results[0]
    assert run.passed
    assert all(g.holds for g in r.guarantees) and {g.name for g in r.guarantees} >= {
        "record_count", "rules_hold", "strata_never_mix", "original_categories"}
    out = run.released
    assert out.key_vars == census.key_vars and out.n_records == census.n_records
    assert (out.frame["Region"] == census.frame["Region"]).all()
    assert not out.frame.equals(census.frame)
    # keys decode to the original labels and dtypes
    for v in census.key_vars:
        assert out.frame[v].dtype == census.frame[v].dtype
        assert set(out.frame[v]) <= set(census.frame[v])


def test_gate_figures_equal_a_direct_computation(run, census):
    d = disclosure_measures(census, run.released, list(census.key_vars), "Health")
    by_name = {o.name: o for o in run.gate}
    assert by_name["max_disco"].value["DiSCO"] == pytest.approx(d.attribute["DiSCO"], abs=1e-12)
    assert by_name["max_repU"].value["repU"] == pytest.approx(d.identity["repU"], abs=1e-12)
    assert by_name["max_tcap"].value["TCAP"] == pytest.approx(d.cap["TCAP"], abs=1e-12)
    r = run.results[0]
    assert r.disclosure[0]["attribute"]["DiSCO"] == pytest.approx(d.attribute["DiSCO"])


def test_report_section_is_words_and_tables(run):
    html = run.results[0].report_section()
    assert "The synthetic file is not the original" in html
    assert "S_pMSE" in html and "disclosed correctly" in html
    for v in run.results[0].methods:
        assert v in html
    assert "{" not in re.sub(r"<[^>]+>", "", html)   # no JSON in the public section


def test_a_failing_gate_is_reported(census):
    run = Release(census, [Synthesise(utility="none")], gate={"max_disco": 0.0}, rng=1).run()
    out = [o for o in run.gate if o.name == "max_disco"][0]
    assert not out.passed and "DiSCO" in out.detail


def test_step_parameters_use_the_template():
    with pytest.raises(ParameterError, match=r"^The 'methods' parameter of Synthesise must be"):
        Synthesise(methods={"Age": "forest"})
    with pytest.raises(ParameterError, match=r"^The 'rules' parameter of Synthesise must be"):
        Synthesise(rules=("Age < 3",))
    with pytest.raises(ParameterError, match=r"^The 'missing_codes' parameter of Synthesise must be"):
        Synthesise(missing_codes={"x": ["a"]})
    step = build_step("synthesise", {"default_method": "sample", "min_leaf": 10})
    assert step.default_method == "sample" and step.min_leaf == 10


def test_gate_checks_round_trip_their_spec_form():
    assert build_gate_check("max_disco", 5) == MaxDiSCO(percent=5)
    assert build_gate_check("max_repU", {"percent": 1, "keys": ["a"]}) == MaxRepU(percent=1, keys=("a",))
    assert build_gate_check("max_tcap", 10).to_value() == 10
    check = MaxTCAP(percent=2, targets=["t"])
    assert build_gate_check("max_tcap", check.to_value()) == check


def test_protect_a_spec_end_to_end(tmp_path):
    spec = (ROOT / "examples" / "synthesis.toml").read_text()
    spec = spec.replace('path = "../src/sdckit/data/uk_census2011_teaching_10k.csv"', f'path = "{CENSUS}"')
    (tmp_path / "synthesis.toml").write_text(spec)
    r = subprocess.run([sys.executable, "-m", "sdckit", "protect", "synthesis.toml", "--json"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    out = tmp_path / "synthesis-release"
    data = pd.read_csv(out / "census_synthetic.csv")
    assert len(data) == 10_000 and "Person ID" not in data.columns
    rule = parse_rule("Age == 1 -> `Marital Status` == 1")
    assert rule.holds({c: data[c].to_numpy() for c in ("Age", "Marital Status")}, len(data)).all()
    report = (out / "report.html").read_text()
    assert "The synthetic file is not the original" in report
    assert "20261126" not in report                              # the seed stays internal
    internal = tmp_path / "synthesis-release-internal"
    assert any("20261126" in p.read_text() for p in internal.glob("*.json"))   # it is kept internally
    # a gate the synthetic file cannot meet: nothing is written, exit code 3
    strict = spec.replace("max_disco = 5 ", "max_disco = 0 ").replace('directory = "synthesis-release"',
                                                                      'directory = "strict"')
    (tmp_path / "strict.toml").write_text(strict)
    r2 = subprocess.run([sys.executable, "-m", "sdckit", "protect", "strict.toml", "--json"], cwd=tmp_path,
                        capture_output=True, text=True, timeout=600)
    assert r2.returncode == 3, r2.stdout + r2.stderr
    assert not (tmp_path / "strict").exists()
    assert "max_disco" in json.loads(r2.stdout)["error"]["message"]
