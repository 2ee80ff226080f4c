"""The attack thresholds of the release gate: declared, read from the spec, run on a release."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd
import pytest

from sdckit.attacks.steps import ATTACK_GATES, MaxMiaAuc, MaxSinglingOut, attack_section_html
from sdckit.errors import InputError, ParameterError, SpecError
from sdckit.gate import as_gate
from sdckit.io.files import read_microdata
from sdckit.masking.recode import Recode
from sdckit.registry import known_gate_checks
from sdckit.release import Release


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The census sample cut in two halves: the input of a release and a control file."""
    d = tmp_path_factory.mktemp("attack_gate")
    df = pd.read_csv(resources.files("sdckit") / "data" / "uk_census2011_teaching_10k.csv")
    df = df.drop(columns=["Person ID"])
    perm = np.random.default_rng(5).permutation(len(df))
    df.iloc[perm[:3000]].to_csv(d / "input.csv", index=False)
    df.iloc[perm[3000:6000]].to_csv(d / "control.csv", index=False)
    return d


def test_registered_and_declared():
    assert set(ATTACK_GATES) <= set(known_gate_checks())
    g = as_gate({"max_singling_out": {"risk": 0.1, "control_file": "c.csv"}})
    assert g["max_singling_out"] == 0.1
    assert isinstance(g.checks[0], MaxSinglingOut) and g.checks[0].mode == "multivariate"


def test_a_threshold_without_control_records_is_refused_with_the_fix():
    with pytest.raises(SpecError, match=r"gate\.max_inference.*control_file = \"control\.csv\""):
        as_gate({"max_inference": 0.1}, where="gate")
    with pytest.raises(ParameterError, match="'auc' parameter of MaxMiaAuc must be a number in"):
        MaxMiaAuc(auc=0.3, control_file="c.csv")
    with pytest.raises(SpecError, match="unknown parameter"):
        as_gate({"max_singling_out": {"risk": 0.1, "control_file": "c.csv", "n_col": 2}}, where="gate")


def test_gate_runs_the_attacks_with_the_published_recodes(files):
    md = read_microdata(files / "input.csv", key_vars=["Region", "Sex", "Age", "Marital Status"])
    steps = [Recode("Age", {"young": [1, 2, 3], "mid": [4, 5], "old": [6, 7, 8]})]
    gate = {"k_anonymity": 2,
            "max_singling_out": {"risk": 0.2, "control_file": str(files / "control.csv"), "n_attacks": 200},
            # a relative control_file is taken from the input file's folder
            "max_inference": {"risk": 1.0, "control_file": "control.csv", "secret": ["Health"],
                              "n_attacks": 200},
            "max_mia_auc": {"auc": 0.75, "control_file": "control.csv", "n_targets": 300, "n_repeats": 3}}
    run = Release(md, steps, gate=gate, rng=1).run()
    out = {o.name: o for o in run.gate}
    so = out["max_singling_out"]
    # only Age was recoded: most records stay unique on the other columns, which the release
    # publishes as they are, so predicates written from it isolate original records
    assert not so.passed and so.value["risk"] > 0.5 and so.threshold == 0.2
    # the intruder recoded the original's ages as published: without that, Age would never match
    assert so.value["attack_rate"] > 0.9
    assert out["max_inference"].passed            # an upper end <= 1 always passes
    assert "upper end of its 95% interval" in out["max_inference"].detail
    mia = out["max_mia_auc"]
    assert mia.value["auc"] > 0.8 and not mia.passed
    html = attack_section_html(run.gate)
    assert html.count("<li>") == 3 and "FAILED" in html and "control.csv" not in html and "{" not in html


def test_missing_control_file_is_named(files):
    md = read_microdata(files / "input.csv", key_vars=["Region", "Sex"])
    gate = {"max_linkability": {"risk": 0.1, "control_file": "nowhere.csv"}}
    with pytest.raises(InputError, match=r"gate\.max_linkability\.control_file: nowhere\.csv: no such file"):
        Release(md, [], gate=gate, rng=1).run()


def test_a_written_release_reports_the_attacks_and_publishes_no_control_path(files, tmp_path):
    """The public report carries the attack section; the certificate's spec names the control
    file by its name only (a path of the steward's machine is never published)."""
    import json

    spec = tmp_path / "release.toml"
    control = files / "control.csv"
    spec.write_text(f"""
[input]
path = "{files / 'input.csv'}"
[roles]
key_vars = ["Region", "Sex", "Age", "Marital Status"]
[run]
seed = 3
[[steps]]
method = "recode"
variable = "Age"
mapping = {{ young = [1, 2, 3], mid = [4, 5], old = [6, 7, 8] }}
[gate]
max_global_risk = 1.0
max_mia_auc = {{ auc = 1.0, control_file = "{control}", n_targets = 200, n_repeats = 2 }}
[output]
directory = "{tmp_path / 'rel'}"
data = "released.csv"
""")
    from sdckit.release import protect

    run, paths = protect(spec)
    report = paths["report"].read_text("utf-8")
    assert "Privacy attacks" in report and "membership" in report.lower()
    cert = (tmp_path / "rel" / "certificate.json").read_text("utf-8")
    assert str(files) not in cert and str(tmp_path) not in cert
    assert json.loads(cert)["spec"]["gate"]["max_mia_auc"]["control_file"] == "control.csv"
