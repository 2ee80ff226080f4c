"""The workbench's hierarchy editor through its API: levels shown, the CSV saved in the output
root's hierarchies folder (names checked, no overwrite unless asked), attached to a recode step
(whose result follows the file's level) and to a table dimension (the table grows the
hierarchy's subtotals)."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from sdckit.masking.hierarchy import read_hierarchy
from tests.app.test_api import TOKEN, _client


@pytest.fixture
def client(tmp_path):
    p = tmp_path / "data" / "people.csv"
    p.parent.mkdir()
    pd.DataFrame({"age": [3, 17, 17, 25, 38, 41, 41, 59, 64, 80] * 30,
                  "sex": [1, 2] * 150, "zip": ["12345", "12399", "54321"] * 100}).to_csv(p, index=False)
    c, app = _client(tmp_path, p)
    assert c.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    c.headers["X-CSRF-Token"] = app.state.csrf
    c.post("/api/roles", json={"roles": {"key_vars": ["age", "sex"]}}).raise_for_status()
    return c, app, tmp_path / "wb"


def test_levels_save_and_recode(client):
    c, app, work = client
    kinds = c.get("/api/hierarchy/kinds").json()
    assert [k["name"] for k in kinds["kinds"]] == ["intervals", "grouping", "masking", "dates", "priority"]
    assert all(s["label"] and "_" not in s["label"] for k in kinds["kinds"] for s in k["settings"])
    body = {"column": "age", "kind": "intervals", "settings": {"widths": "10, 20"}}
    v = c.post("/api/hierarchy/preview", json=body).json()
    assert v["columns"] == ["value", "level 1", "level 2", "level 3"]
    assert ["3", "0-9", "0-19", "*"] in v["rows"] and v["distinct"][0] == 8
    r = c.post("/api/hierarchy/save", json={**body, "name": "age"}).json()
    path = work / "hierarchies" / "age.csv"
    assert r["file"] == "age.csv" and path.is_file() and r["saved"] == ["age.csv"]
    assert read_hierarchy(path).mapping(1)["41"] == "40-49"
    again = c.post("/api/hierarchy/save", json={**body, "name": "age"})
    assert again.status_code == 400 and "already exists" in again.json()["error"]
    assert c.post("/api/hierarchy/save", json={**body, "name": "age", "overwrite": True}).status_code == 200
    for bad in ("../age.csv", "sub/age.csv"):
        assert c.post("/api/hierarchy/save", json={**body, "name": bad}).status_code in (400, 403)
    st = c.post("/api/steps", json={"action": "add", "step": {"method": "recode", "variable": "age",
                                                                  "hierarchy_file": r["path"], "level": 2}})
    assert st.status_code == 200, st.text
    res = c.get("/api/results").json()
    assert res["error"] is None
    assert "0-19" in str(res["steps"][0])


def test_bad_settings_answer_in_one_line(client):
    c, _, _ = client
    r = c.post("/api/hierarchy/preview", json={"column": "age", "kind": "intervals", "settings": {"widths": "5, 7"}})
    assert r.status_code == 400 and "not a multiple of 5" in r.json()["error"]
    r = c.post("/api/hierarchy/preview", json={"column": "nope", "kind": "masking"})
    assert r.status_code == 400 and "no column named 'nope'" in r.json()["error"]


def test_a_saved_hierarchy_groups_a_table_dimension(client):
    c, _, _ = client
    c.post("/api/hierarchy/save", json={"column": "zip", "kind": "masking", "settings": {"n_levels": "3"},
                                        "name": "zip.csv"}).raise_for_status()
    body = {"dims": ["zip", "sex"], "method": "rounding", "params": {"base": 5}, "rules": [],
            "hierarchies": {"zip": {"saved": "zip.csv"}}}
    r = c.post("/api/tables/protect", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    if "id" in out and "status" in out:  # a job: wait for it
        t0 = time.time()
        while (j := c.get(f"/api/jobs/{out['id']}").json())["status"] in ("queued", "running"):
            assert time.time() - t0 < 120
            time.sleep(0.05)
        out = j["result"]
    # the masking levels are subtotals of the zip dimension
    assert "123**" in str(out) and "12***" in str(out)
    r = c.post("/api/tables/protect", json={**body, "hierarchies": {"zip": {"saved": "../x.csv"}}})
    assert r.status_code in (400, 403)


def test_pram_step_card_explains_the_rise_with_the_report_fragment(tmp_path):
    """A PRAM step that raises sample uniques gets the report's sentence (the same fragment as
    the release report) with the intruder-side figure; a step that lowers them gets none."""
    from sdckit.report.fragments import risk_rise_html
    from tests.app.test_api import DEMO, KEYS

    c, app = _client(tmp_path, DEMO)
    assert c.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    c.headers["X-CSRF-Token"] = app.state.csrf
    c.post("/api/roles", json={"roles": {"key_vars": KEYS}}).raise_for_status()
    c.post("/api/steps", json={"action": "add", "step": {"method": "pram", "variables": ["Marital Status"],
                                                          "min_diagonal": 0.6}}).raise_for_status()
    c.post("/api/steps", json={"action": "add", "step": {"method": "local_suppression", "k": 3}}).raise_for_status()
    res = c.get("/api/results").json()
    pram, ls = res["steps"]
    session = app.state.session
    pv = session.preview()
    before = session.risk(pv.datas[0], suda=False, linkage=False)
    after = session.risk(pv.datas[1], suda=False, linkage=False)
    assert after["n_sample_uniques"] > before["n_sample_uniques"]   # PRAM raised the count
    html = pram["explain_html"]
    assert html.startswith(risk_rise_html(before, after, pram=True, subject="data after this step",
                                          baseline="the data before it")[:120])
    assert "because PRAM moves records into rarer key combinations" in html
    assert "re-identifies" in html and "intruder-side figure" in html
    assert ls["explain_html"] == ""
