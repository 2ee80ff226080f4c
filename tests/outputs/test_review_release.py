"""The checker's side: decisions, the signed release of approved outputs, ``sdckit verify`` on it,
and the ``sdckit outputs`` command."""

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from sdckit.cli import main
from sdckit.errors import InputError
from sdckit.outputs import Review, Session, check_results
from sdckit.report.outputs_release import release_outputs
from sdckit.report.signing import generate_keypair
from sdckit.report.verify import verify_release


@pytest.fixture
def results(tmp_path):
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"grade": rng.choice(["a", "b", "c"], 240), "sex": rng.choice(["f", "m"], 240),
                       "age": rng.integers(18, 80, 240).astype(float)})
    df.loc[df.index[:3], "grade"] = "d"
    df["income"] = 1000 + 20 * df.age + rng.normal(0, 100, 240)
    s = Session()
    s.crosstab(df.grade, df.sex, margins=True)                # output_0: fails (row d), margins give it away
    s.ols(df.income, sm.add_constant(df[["age"]]))           # output_1: passes
    s.crosstab(df.sex, df.grade.isin(["a", "b"]))             # output_2: passes
    return s.finalise(tmp_path / "session")


def test_decisions_and_exception_rules(results):
    r = Review(results)
    with pytest.raises(InputError, match="output_0: fails its checks and the researcher asked for no exception"):
        r.approve("output_0", "fine", "C. Hecker")
    with pytest.raises(InputError, match="the reason is missing"):
        r.reject("output_0", "  ", "C. Hecker")
    r.reject("output_0", "row d has 3 records and the margins give it back", "C. Hecker")
    r.request_exception("output_0", "row d is a published category")
    assert r.decision("output_0") is None        # a new request reopens a rejected output
    r.approve("output_0", "accepted: published elsewhere", "C. Hecker")
    r.save()
    again = Review(results)
    assert again.decision("output_0")["checker"] == "C. Hecker"
    assert again.undecided() == ["output_1", "output_2"]
    q = {o["id"]: o for o in again.queue()}
    assert any("recovered exactly" in w for w in q["output_0"]["words"])


def test_release_verifies_and_fails_after_an_edit(results, tmp_path):
    r = Review(results)
    with pytest.raises(InputError, match="3 outputs have no decision"):
        release_outputs(r, tmp_path / "release")
    r.approve("output_1", "model with 238 residual degrees of freedom", "C. Hecker")
    r.approve("output_2", "all cells at least 10", "C. Hecker")
    r.reject("output_0", "small row", "C. Hecker")
    r.save()
    key, pub = generate_keypair(tmp_path / "keys", "checker")
    out = release_outputs(results, tmp_path / "release", signing_key=key)
    assert out["approved"] == ["output_1", "output_2"] and out["rejected"] == ["output_0"]
    folder = tmp_path / "release"
    cert = json.loads((folder / "certificate.json").read_text())
    assert cert["data"]["kind"] == "outputs" and cert["signature"] is not None
    assert [o["checker"] for o in cert["outputs"]] == ["C. Hecker", "C. Hecker"]
    assert not (folder / "output_0_0.csv").exists()           # the rejected output stays behind
    res = verify_release(folder, key=pub)
    assert res.ok, res.problems
    released = json.loads((folder / "results.json").read_text())
    assert sorted(released["results"]) == ["output_1", "output_2"]
    name = released["results"]["output_2"]["files"][0]["name"]
    (folder / name).write_text((folder / name).read_text() + "x,1,1\n")
    res = verify_release(folder, key=pub)
    assert not res.ok and any("changed since release" in p for p in res.problems)


def test_verify_fails_when_results_list_an_unapproved_output(results, tmp_path):
    r = Review(results)
    for k in r.results:
        r.approve(k, "ok", "C. Hecker") if k != "output_0" else r.reject(k, "small", "C. Hecker")
    release_outputs(r, tmp_path / "rel")
    folder = tmp_path / "rel"
    cert = json.loads((folder / "certificate.json").read_text())
    cert["outputs"][0]["verdict"] = "rejected"
    (folder / "certificate.json").write_text(json.dumps(cert))
    res = verify_release(folder)
    assert not res.ok and any("outputs[0].verdict" in p for p in res.problems)


def test_cli_check_json_and_errors(results, tmp_path, capsys):
    rules = tmp_path / "rules.toml"
    rules.write_text("[rules]\nsafe_threshold = 3\n")
    assert main(["outputs", "check", str(results), "--rules", str(rules), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rules"]["threshold"] == 3 and doc["n_outputs"] == 3
    o0 = doc["outputs"][0]
    assert o0["rechecked"] and [c["name"] for c in o0["checks"]] == ["MinimumThresholdCheck",
                                                                     "PresenceOfZeroCheck", "MarginAuditCheck"]
    assert doc == json.loads(json.dumps(check_results(results, __import__("sdckit.outputs").outputs.load_rules(rules))))
    assert main(["outputs", "check", str(tmp_path / "nope"), "--json"]) == 2
    out = capsys.readouterr()
    assert json.loads(out.out)["error"]["exit_code"] == 2 and out.err.count("\n") == 1
    assert main(["outputs", "frobnicate", str(results)]) == 2
    assert "unknown action 'frobnicate'" in capsys.readouterr().err


def test_cli_decisions_and_release(results, tmp_path, capsys):
    for uid in ("output_1", "output_2"):
        assert main(["outputs", "approve", str(results), "--output", uid, "--reason", "safe", "--checker", "C"]) == 0
    assert main(["outputs", "reject", str(results), "--output", "output_0", "--reason", "small", "--checker", "C"]) == 0
    capsys.readouterr()
    assert main(["outputs", "release", str(results), "--to", str(tmp_path / "rel"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["approved"] == ["output_1", "output_2"] and out["folder"] == "rel"
    assert main(["verify", str(tmp_path / "rel"), "--json"]) == 0
