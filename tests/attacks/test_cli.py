"""``sdckit attack``: JSON with stable keys, words without it, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from sdckit.cli import main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("attack_cli")
    df = pd.read_csv(resources.files("sdckit") / "data" / "uk_census2011_teaching_10k.csv")
    df = df.drop(columns=["Person ID"])
    perm = np.random.default_rng(9).permutation(len(df))
    for i, name in enumerate(("original", "control", "independent")):
        df.iloc[perm[i * 1500:(i + 1) * 1500]].to_csv(d / f"{name}.csv", index=False)
    return d


def test_json(files, capsys):
    rc = main(["attack", str(files / "original.csv"), str(files / "independent.csv"), "--control",
               str(files / "control.csv"), "--secret", "Health", "--aux", "Region,Sex,Age,Marital Status",
               "--n-attacks", "100", "--n-targets", "200", "--n-repeats", "2",
               "--html", str(files / "attacks.html"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert [a["attack"] for a in out["attacks"]] == ["singling_out", "linkability", "inference",
                                                     "membership_distance", "membership_density"]
    link = out["attacks"][1]
    assert link["settings"]["aux_a"] == ["Region", "Sex"] and link["settings"]["aux_b"] == ["Age", "Marital Status"]
    for a in out["attacks"][:3]:
        assert {"risk", "ci_low", "ci_high", "attack_rate", "control_rate", "baseline_rate"} <= set(a)
    assert str(files) not in json.dumps(out)  # no paths in the output
    assert "Inference: guessing Health" in (files / "attacks.html").read_text()


def test_text_and_errors(files, capsys):
    rc = main(["attack", str(files / "original.csv"), str(files / "original.csv"), "--control",
               str(files / "control.csv"), "--attacks", "inference", "--secret", "Health", "--n-attacks", "50"])
    assert rc == 0 and "Inference: guessing Health" in capsys.readouterr().out
    rc = main(["attack", str(files / "original.csv"), str(files / "original.csv"), "--control",
               str(files / "control.csv"), "--attacks", "inference", "--json"])
    captured = capsys.readouterr()
    assert rc == 2 and json.loads(captured.out)["error"]["message"].startswith("the inference attack needs a secret")
    rc = main(["attack", str(files / "original.csv"), str(files / "original.csv"), "--control",
               str(files / "control.csv"), "--attacks", "singling", "--json"])
    assert rc == 2 and "unknown attack" in json.loads(capsys.readouterr().out)["error"]["message"]


def test_help_loads_no_numerical_library():
    code = ("import sys; import sdckit.attacks.cli; "
            "print(sorted(m for m in ('numpy', 'pandas', 'numba', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
