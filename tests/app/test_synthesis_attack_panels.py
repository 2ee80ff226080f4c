"""The synthesis panel of a synthesise step and the attack panel (a job with progress and
Cancel), through the workbench's API on the first 1,200 records of the bundled census sample.

Reference values come from independent calls of the library's public functions on the same
inputs: :func:`sdckit.synth.disclosure_measures` on the preview's original and synthetic data
for the panel's disclosure figures, and :func:`sdckit.attacks.run_attacks` (every attack in one
call) on the same control split for the attack panel (which runs one attack per call)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from sdckit import Microdata
from sdckit.app.attack_view import split_records
from sdckit.app.cli import build

DEMO = Path(__file__).resolve().parents[2] / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"
TOKEN = "panels-token-5b2e90c4"
KEYS = ["Region", "Sex", "Age", "Marital Status"]
SYNTH = {"method": "synthesise", "variables": ["Region", "Sex", "Age", "Marital Status", "Health", "Occupation"],
         "methods": {"Health": "sample"}, "rules": ["Age in [1, 2] -> `Marital Status` == 1"], "utility": "logit"}


def _client(tmp_path, n: int = 1200):
    p = tmp_path / "data" / "census.csv"
    p.parent.mkdir(exist_ok=True)
    pd.read_csv(DEMO).head(n).to_csv(p, index=False)
    app, *_ = build(p, host="127.0.0.1", port=8000, token=TOKEN, workdir=tmp_path / "wb")
    c = TestClient(app, base_url="http://127.0.0.1:8000")
    assert c.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    c.headers["X-CSRF-Token"] = app.state.csrf
    assert c.post("/api/roles", json={"roles": {"key_vars": KEYS, "sensitive": ["Health"]}}).status_code == 200
    return c, app


def _wait(c, job_id: str, limit: float = 240.0) -> dict:
    t0 = time.time()
    while time.time() - t0 < limit:
        j = c.get(f"/api/jobs/{job_id}").json()
        if j["status"] not in ("queued", "running"):
            return j
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still running after {limit} s")


def test_the_synthesis_panel_shows_the_steps_figures_in_words_with_percent(tmp_path):
    from sdckit.synth import disclosure_measures

    c, app = _client(tmp_path)
    r = c.post("/api/steps", json={"action": "add", "step": SYNTH})
    assert r.status_code == 200, r.text
    # the rule with a comma inside is kept whole (one rule, not two)
    assert r.json()["spec"]["steps"][0]["rules"] == SYNTH["rules"]
    v = c.get("/api/results").json()["steps"][0]
    panel = v["synthesis"]
    text = " ".join(panel["sentences"])
    assert "pMSE" in text and "S_pMSE" in text and "logistic regression" in text
    assert "{" not in text and "%" in text
    # one one-way table per synthesised variable, charted; its S_pMSE (measured by the step)
    # equals the one table_utility gives the panel on the same files (VW etc. beside it)
    one_way = [t for t in panel["tables"] if t["one_way"]]
    assert [t["table"] for t in one_way] == [x["variable"] for x in panel["chart"]]
    assert sorted(t["table"] for t in one_way) == sorted(SYNTH["variables"])
    assert all("VW" in t and t["df"] >= 0 for t in one_way)
    # disclosure per target, recomputed independently on the preview's original and release
    session = app.state.session
    pv = session.preview()
    ref = disclosure_measures(pv.original, pv.released, KEYS, "Health")
    row = next(d for d in panel["disclosure"] if d["target"] == "Health")
    assert row["replicated_uniques"] == f"{ref.identity['repU']:.2f}%"
    assert row["disclosed_correctly"] == f"{ref.attribute['DiSCO']:.2f}%"
    assert row["tcap"] == f"{ref.cap['TCAP']:.2f}%"
    assert panel["keys"] == KEYS
    # another step has no synthesis panel
    c.post("/api/steps", json={"action": "add", "step": {"method": "local_suppression", "k": 2}})
    assert c.get("/api/results").json()["steps"][1]["synthesis"] is None


def test_the_forms_schema_gives_the_synthesis_tables_their_value_widgets(tmp_path):
    c, _ = _client(tmp_path, n=200)
    m = next(x for x in c.get("/api/methods").json()["methods"] if x["name"] == "synthesise")
    ps = {p["name"]: p for p in m["params"]}
    assert ps["methods"]["value_kind"] == "choice" and "cart" in ps["methods"]["value_choices"]
    assert ps["passive"]["value_kind"] == "str" and ps["missing_codes"]["value_kind"] == "float_list"
    assert ps["rules"]["kind"] == "str_list"
    bad = c.post("/api/steps", json={"action": "add", "step": {**SYNTH, "methods": {"Health": "forest"}}})
    assert bad.status_code == 400 and "table of column -> one of" in bad.json()["error"]


def test_the_attack_panel_equals_the_attacks_run_at_once_on_the_same_split(tmp_path):
    from sdckit.attacks import run_attacks
    from sdckit.runner import run_steps

    c, app = _client(tmp_path)
    c.post("/api/steps", json={"action": "add", "step": {"method": "remove", "variables": ["Person ID"]}})
    c.post("/api/steps", json={"action": "add", "step": {"method": "local_suppression", "k": 3}})
    body = {"secret": ["Health"], "n_attacks": 100, "control_share": 0.4, "seed": 7}
    job = c.post("/api/attacks", json=body).json()
    j = _wait(c, job["id"])
    assert j["status"] == "done", j
    run = c.get("/api/attacks/runs").json()["runs"][-1]
    assert run["n_control"] == 480 and run["n_protected"] == 720
    names = [a["attack"] for a in run["attacks"]]
    assert names == ["singling_out", "linkability", "inference", "membership_distance", "membership_density"]
    for a in run["attacks"]:
        assert a["low"] <= a["value"] <= a["high"] and "95% interval" in a["sentence"] and "{" not in a["sentence"]
    # the reference: the same split, the same steps and run seed, every attack in one call
    session = app.state.session
    spec = session.validate(session.state)
    md = session.preview().original
    kept, control = split_records(md, 0.4, 7)
    released = run_steps(kept, spec.steps, spec.seed).released
    ref = run_attacks(kept, released, control, aux=KEYS, secret=["Health"], n_attacks=100, rng=7)
    assert [a["sentence"] for a in run["attacks"]] == [r.sentence() for r in ref.results]


def test_an_attack_run_can_be_cancelled_and_a_bad_request_is_one_line(tmp_path):
    c, _ = _client(tmp_path)
    c.post("/api/steps", json={"action": "add", "step": SYNTH})
    job = c.post("/api/attacks", json={"n_attacks": 100}).json()
    c.post(f"/api/jobs/{job['id']}/cancel")
    assert _wait(c, job["id"])["status"] == "cancelled"
    assert c.get("/api/attacks/runs").json()["runs"] == []
    r = c.post("/api/attacks", json={"aux": ["Nonesuch"]})
    assert r.status_code == 400 and "Nonesuch" in r.json()["error"] and "\n" not in r.json()["error"]
    r = c.post("/api/attacks", json={"secret": ["Sex"]})
    assert r.status_code == 400 and "cannot also be known" in r.json()["error"]
    r = c.post("/api/attacks", json={"control_share": 0.99})
    assert r.status_code == 400 and "control" in r.json()["error"]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(40, 400), share=st.floats(0.05, 0.95), seed=st.integers(0, 2**31))
def test_the_control_split_is_a_seeded_partition_in_the_original_order(n, share, seed):
    frame = pd.DataFrame({"id": np.arange(n), "x": np.arange(n) % 3})
    md = Microdata(frame, key_vars=["x"])
    kept, control = split_records(md, share, seed)
    ids_k, ids_c = kept.frame["id"].to_numpy(), control.frame["id"].to_numpy()
    assert len(ids_c) == round(n * share) and len(ids_k) + len(ids_c) == n
    assert set(ids_k).isdisjoint(ids_c) and set(ids_k) | set(ids_c) == set(range(n))
    assert (np.diff(ids_k) > 0).all() and (np.diff(ids_c) > 0).all()
    again, _ = split_records(md, share, seed)
    assert (again.frame["id"].to_numpy() == ids_k).all()
    assert kept.key_vars == ("x",)


@pytest.mark.parametrize("name", ["max_disco", "max_tcap"])
def test_the_per_target_disclosure_sentence_has_its_percent_signs(name):
    from sdckit.report.fragments import measured_sentence

    measure = "DiSCO" if name == "max_disco" else "TCAP"
    text = measured_sentence(name, {measure: 3.21, "target": "Health", "by_target": {"Health": 3.21, "Occupation": 1.5}})
    assert "Health: 3.21%" in text and "Occupation: 1.5%" in text


@pytest.mark.parametrize("tie", ["first", "quicksort"])
def test_the_attack_panels_tie_rule_reaches_the_attacks(tmp_path, tie):
    # the reference: the library's attacks called with the same rule on the same split
    from sdckit.attacks import run_attacks
    from sdckit.runner import run_steps

    c, app = _client(tmp_path, n=600)
    c.post("/api/steps", json={"action": "add", "step": {"method": "remove", "variables": ["Person ID"]}})
    info = c.get("/api/attacks/runs").json()
    assert set(info["tie_breaks"]) == {"random", "first", "quicksort"}
    body = {"secret": ["Health"], "attacks": ["linkability", "inference"], "n_attacks": 60, "control_share": 0.5,
            "seed": 3, "tie_break": tie}
    j = _wait(c, c.post("/api/attacks", json=body).json()["id"])
    assert j["status"] == "done", j
    run = c.get("/api/attacks/runs").json()["runs"][-1]
    assert run["tie_break"] == tie and info["tie_breaks"][tie] in run["intro"]
    session = app.state.session
    spec = session.validate(session.state)
    kept, control = split_records(session.preview().original, 0.5, 3)
    released = run_steps(kept, spec.steps, spec.seed).released
    sentences = []
    for attack in ("linkability", "inference"):
        ref = run_attacks(kept, released, control, aux=KEYS, secret=["Health"], attacks=[attack], n_attacks=60,
                          rng=3, tie_break=tie)
        sentences += [r.sentence() for r in ref.results]
    assert [a["sentence"] for a in run["attacks"]] == sentences
    r = c.post("/api/attacks", json={**body, "tie_break": "nearest"})
    assert r.status_code == 400 and "nearest" in r.json()["error"] and "\n" not in r.json()["error"]
