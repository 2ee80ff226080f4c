"""The workbench's tables API (``sdckit.app.tables.TABLE_ROUTES``): the forms' declarations from
the registry, protect with a missing-value choice and the audit's verdict in words, release
with public and internal files apart, checked by verify."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from starlette.testclient import TestClient

from sdckit.app.cli import build
from sdckit.report.verify import verify_release
from sdckit.tables.registry import known_table_methods

TOKEN = "test-token-0123456789"


@pytest.fixture
def client(tmp_path):
    # 300 records; 'region' has 7 missing values (read off this construction)
    rng = np.random.default_rng(11)
    df = pd.DataFrame({"region": rng.choice(["N", "S", "E", "W"], 300), "sex": rng.choice(["m", "f"], 300)})
    df.loc[:6, "region"] = None
    data = tmp_path / "data" / "people.csv"
    data.parent.mkdir()
    df.to_csv(data, index=False)
    app, _, _ = build(data, host="127.0.0.1", port=8000, token=TOKEN, workdir=tmp_path / "wb")
    c = TestClient(app, base_url="http://127.0.0.1:8000")
    assert c.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    c.headers["X-CSRF-Token"] = app.state.csrf
    return c


def _wait(c, job: dict, timeout: float = 120) -> dict:
    t0 = time.time()
    while time.time() - t0 < timeout:
        j = c.get(f"/api/jobs/{job['id']}").json()
        if j["status"] not in ("queued", "running"):
            return j
        time.sleep(0.05)
    raise AssertionError("job did not finish")


def test_methods_come_from_the_registry(client):
    r = client.get("/api/tables/methods")
    assert r.status_code == 200, r.text
    d = r.json()
    assert [m["name"] for m in d["methods"]] == known_table_methods()
    opt = next(m for m in d["methods"] if m["name"] == "optimal")
    assert opt["label"] and all(p["label"] and p["help"] for p in opt["params"])
    assert {r["name"] for r in d["rules"]} >= {"threshold", "p%", "pq", "nk"}


def test_missing_values_are_refused_in_one_line_then_a_choice_works(client):
    body = {"dims": ["region", "sex"], "rules": [{"type": "threshold", "n": 3}], "method": "rounding",
            "params": {"base": 5}}
    r = client.post("/api/tables/protect", json=body)
    assert r.status_code == 400
    msg = r.json()["error"]
    assert "\n" not in msg and "people.csv" in msg and "`region`" in msg and "7 missing values" in msg
    job = client.post("/api/tables/protect", json={**body, "missing": {"region": "category"}}).json()
    out = _wait(client, job)["result"]
    assert out["audit"]["status"] == "exact" and out["audit"]["sentence"]
    assert "Missing" in out["grid"]["rows"] and out["missing"]["region"]["n_missing"] == 7
    assert out["status_words"]["rounded"] == "rounded"
    vals = [c["value"] for row in out["grid"]["cells"] for c in row]
    assert all(v % 5 == 0 for v in vals)


def test_dp_protect_answers_at_once_and_bad_params_use_the_template(client):
    body = {"dims": ["region", "sex"], "method": "dp_laplace_counts", "params": {"epsilon": 1.0},
            "missing": {"region": "drop"}}
    out = client.post("/api/tables/protect", json=body).json()
    assert out["audit"]["status"] == "exact" and out["missing"]["region"]["n_dropped"] == 7
    r = client.post("/api/tables/protect", json={**body, "params": {"epsilon": -1}})
    assert r.status_code == 400 and "params.epsilon: must be a number > 0" in r.json()["error"]


def test_release_lists_public_and_internal_apart_and_verifies(client, tmp_path):
    body = {"dims": ["region", "sex"], "rules": [{"type": "threshold", "n": 20}], "method": "optimal",
            "missing": {"region": "drop"}, "folder": "table-release", "name": "people_table"}
    done = _wait(client, client.post("/api/tables/release", json=body).json())
    assert done["status"] == "done", done
    rel = done["result"]
    assert "people_table.csv" in rel["public"] and "certificate.json" in rel["public"]
    assert "internal_certificate.json" in rel["internal"] and not set(rel["public"]) & {"audit.csv"}
    assert rel["verdict"].startswith("Passed") and rel["audit_status"] == "exact"
    folder = Path(tmp_path / "wb" / "table-release")
    assert verify_release(folder).ok
    again = _wait(client, client.post("/api/tables/release", json=body).json())
    assert again["status"] == "failed" and "already there" in again["error"]
    ok = _wait(client, client.post("/api/tables/release", json={**body, "overwrite": True}).json())
    assert ok["status"] == "done" and verify_release(folder).ok
