"""API tests of the workbench with Starlette's test client: access control, forms from the
step declarations, history, release equal to ``sdckit protect``, explore jobs, tables."""

from __future__ import annotations

import time
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from starlette.testclient import TestClient

from sdckit.app.cli import build
from sdckit.app.session import Session
from sdckit.errors import InputError
from sdckit.params import schema
from sdckit.registry import known_steps, step_class

DEMO = Path(__file__).resolve().parents[2] / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"
KEYS = ["Region", "Sex", "Age", "Marital Status", "Country of Birth"]
TOKEN = "test-token-0123456789"
AGE4 = {"0-15": [1], "16-34": [2, 3], "35-54": [4, 5], "55+": [6, 7, 8]}


@pytest.fixture
def small(tmp_path) -> Path:
    """The first 600 records of the demo (fast releases)."""
    p = tmp_path / "data" / "census600.csv"
    p.parent.mkdir()
    pd.read_csv(DEMO).head(600).to_csv(p, index=False)
    return p


def _client(tmp_path, data: Path | None, **kw) -> tuple[TestClient, object]:
    app, token, url = build(data, host="127.0.0.1", port=8000, token=TOKEN, workdir=tmp_path / "wb", **kw)
    client = TestClient(app, base_url="http://127.0.0.1:8000")
    return client, app


@pytest.fixture
def client(tmp_path, small):
    c, app = _client(tmp_path, small)
    r = c.get(f"/?token={TOKEN}", follow_redirects=False)
    assert r.status_code == 303
    c.headers["X-CSRF-Token"] = app.state.csrf
    return c


def _wait(c, job: dict, timeout: float = 180) -> dict:
    t0 = time.time()
    while time.time() - t0 < timeout:
        j = c.get(f"/api/jobs/{job['id']}").json()
        if j["status"] not in ("queued", "running"):
            return j
        time.sleep(0.05)
    raise AssertionError(f"job {job['id']} did not finish")


# ---------------------------------------------------------------------- access control
def test_requests_without_the_token_are_refused(tmp_path, small):
    c, app = _client(tmp_path, small)
    assert c.get("/").status_code == 401
    assert c.get("/api/state").status_code == 401
    assert c.get("/static/app.js").status_code == 401
    assert c.get("/?token=not-the-token").status_code == 403
    c.cookies.set("sdckit_token", "forged")
    assert c.get("/api/state").status_code == 403


def test_token_in_first_url_becomes_a_cookie_and_leaves_the_address(tmp_path, small):
    c, app = _client(tmp_path, small)
    r = c.get(f"/?token={TOKEN}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    cookies = r.headers.get_list("set-cookie")
    assert any(h.startswith(f"sdckit_token={TOKEN}") and "HttpOnly" in h and "SameSite=Strict" in h for h in cookies)
    assert c.get("/").status_code == 200
    assert c.get("/api/state").json()["has_data"] is True


def test_state_changes_need_the_csrf_token(tmp_path, small):
    c, app = _client(tmp_path, small)
    c.get(f"/?token={TOKEN}")
    body = {"roles": {"key_vars": KEYS}}
    assert c.post("/api/roles", json=body).status_code == 403  # cookie alone is not enough
    assert c.post("/api/roles", json=body, headers={"X-CSRF-Token": "guess"}).status_code == 403
    assert c.post("/api/roles", json=body, headers={"X-CSRF-Token": app.state.csrf,
                                                    "Origin": "http://evil.example"}).status_code == 403
    assert c.post("/api/roles", json=body, headers={"X-CSRF-Token": app.state.csrf}).status_code == 200


def test_foreign_host_header_is_refused(tmp_path, small):
    app, *_ = build(small, host="127.0.0.1", port=8000, token=TOKEN, workdir=tmp_path / "wb")
    c = TestClient(app, base_url="http://attacker.example:8000")
    assert c.get(f"/?token={TOKEN}").status_code == 403


def test_non_loopback_host_needs_an_explicit_token(tmp_path):
    with pytest.raises(InputError, match="--token"):
        build(None, host="0.0.0.0", port=8000, token=None, workdir=tmp_path)
    app, token, url = build(None, host="0.0.0.0", port=8000, token="a-long-shared-token", workdir=tmp_path)
    assert token == "a-long-shared-token" and url.endswith("?token=a-long-shared-token")


def test_cli_url_is_loopback_with_the_token(tmp_path, small):
    app, token, url = build(small, host="127.0.0.1", port=8123, token="T-123456789", workdir=tmp_path)
    assert url == "http://127.0.0.1:8123/?token=T-123456789"


def test_upload_limit_and_no_path_traversal(tmp_path, small):
    c, app = _client(tmp_path, None, max_upload_mb=1)
    c.get(f"/?token={TOKEN}")
    c.headers["X-CSRF-Token"] = app.state.csrf
    big = b"a,b\n" + b"1,2\n" * 300_000  # 1.2 MB
    r = c.post("/api/upload", content=big, headers={"X-Filename": "big.csv"})
    assert r.status_code == 413 and "upload limit" in r.json()["error"]
    # a file name with folders is reduced to its name, inside the uploads folder only
    r = c.post("/api/upload", content=small.read_bytes(), headers={"X-Filename": "../../escape.csv"})
    assert r.status_code == 200
    assert (tmp_path / "wb" / "uploads" / "escape.csv").is_file()
    assert not (tmp_path / "escape.csv").exists() and not (tmp_path.parent / "escape.csv").exists()
    assert c.post("/api/upload", content=b"x", headers={"X-Filename": "evil.sh"}).status_code == 400
    # the picker opens names from its folders only: a name with a folder or '..' is forbidden
    for name in ("../census600.csv", "/etc/passwd", "..", "a/b.csv"):
        r = c.post("/api/open", json={"root": 0, "name": name})
        assert r.status_code == 403, name
        assert "Traceback" not in r.text


def test_errors_are_one_line_json(client):
    r = client.post("/api/steps", json={"action": "add", "step": {"method": "local_suppression", "k": 1}})
    assert r.status_code == 400
    err = r.json()["error"]
    assert "\n" not in err and "k" in err and "Traceback" not in r.text
    r = client.post("/api/steps", json={"action": "add", "step": {"method": "no_such_method"}})
    assert r.status_code == 400 and "unknown step method" in r.json()["error"]
    assert client.get("/api/nothing").status_code == 404


# ---------------------------------------------------------------------- forms and session
def test_every_registered_method_has_a_generated_form(client):
    methods = client.get("/api/methods").json()["methods"]
    assert [m["name"] for m in methods] == known_steps()
    for m in methods:  # the form is the declaration, field for field
        assert m == schema(step_class(m["name"]))


def test_seed_is_kept_off_the_public_pages(client):
    state = client.get("/api/state").json()
    assert "run" not in state["spec"]
    seed = tomllib.loads(client.get("/api/export").text)["run"]["seed"]
    assert str(seed) not in client.get("/api/state").text
    assert str(seed) not in client.get("/").text
    assert f"<code id='seed'>{seed}</code>" in client.get("/internal").text
    assert "seed" not in tomllib.loads(client.get("/api/export?seed=0").text).get("run", {})


def test_history_undo_redo_and_branches(client):
    client.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    client.post("/api/steps", json={"action": "add", "step": {"method": "recode", "variable": "Age", "mapping": AGE4}})
    s = client.post("/api/steps", json={"action": "add", "step": {"method": "local_suppression", "k": 3}}).json()
    assert [x["method"] for x in s["spec"]["steps"]] == ["recode", "local_suppression"]
    s = client.post("/api/history", json={"action": "undo"}).json()
    assert [x["method"] for x in s["spec"]["steps"]] == ["recode"] and s["history"]["can_redo"]
    s = client.post("/api/history", json={"action": "redo"}).json()
    assert len(s["spec"]["steps"]) == 2
    s = client.post("/api/history", json={"action": "branch", "name": "k5"}).json()
    assert s["history"]["branch"] == "k5"
    s = client.post("/api/steps", json={"action": "update", "index": 1,
                                        "step": {"method": "local_suppression", "k": 5}}).json()
    assert s["spec"]["steps"][1]["k"] == 5
    s = client.post("/api/history", json={"action": "switch", "name": "main"}).json()
    assert s["spec"]["steps"][1]["k"] == 3  # the main line is untouched
    cmp = client.get("/api/compare?a=main&b=k5").json()["results"]
    # k = 5 suppresses more: the smallest class of the k5 branch is at least 5
    assert cmp["k5"]["risk"]["k_reached"] >= 5 > cmp["main"]["risk"]["k_reached"] >= 3
    # a new change after undo drops the redo part
    client.post("/api/history", json={"action": "undo"})
    s = client.post("/api/steps", json={"action": "delete", "index": 0}).json()
    assert s["spec"]["steps"] == [] and not s["history"]["can_redo"]


def test_step_results_carry_guarantees_utility_and_matrix(client):
    client.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    client.post("/api/steps", json={"action": "add", "step": {"method": "pram", "variables": ["Marital Status"],
                                                              "min_diagonal": 0.9}})
    res = client.get("/api/results").json()
    assert res["error"] is None
    v = res["steps"][0]
    assert v["guarantees"] and all(g["holds"] for g in v["guarantees"])
    m = v["matrices"][0]
    cats = sorted({c["from"] for c in m["cells"]})
    # each row of the drawn matrix sums to 1 and its diagonal is >= 0.9, as promised
    for a in cats:
        assert abs(sum(c["p"] for c in m["cells"] if c["from"] == a) - 1) < 1e-9
        assert [c["p"] for c in m["cells"] if c["from"] == a and c["to"] == a][0] >= 0.9 - 1e-12
    f = v["frequencies"]["Marital Status"]
    before = {b["category"]: b["records"] for b in f["bars"] if b["when"] == "before"}
    assert sum(before.values()) == 600
    # Hellinger and TVD from the bars, by hand
    after = {b["category"]: b["records"] for b in f["bars"] if b["when"] == "after"}
    tvd = 0.5 * sum(abs(before[k] - after[k]) for k in before) / 600
    assert f["tvd"] == pytest.approx(tvd)


def test_risk_panel_matches_a_brute_force_count(client):
    client.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    r = client.get("/api/risk").json()
    df = pd.read_csv(client.app.state.session.state["input"]["path"])
    fk = df.groupby(KEYS)[KEYS[0]].transform("size")  # brute force f_k by group sizes
    assert r["n_sample_uniques"] == int((fk == 1).sum())
    assert r["k_violations"]["3"] == int((fk < 3).sum())
    assert sum(b["records"] for b in r["fk_distribution"]) == len(df)
    assert r["global_risk"] == pytest.approx((1 / fk).mean())  # no weights: r_i = 1 / f_k
    assert {c["variable"] for c in r["suda"]["contributions"]} == set(KEYS)


@pytest.mark.slow  # two full releases with reports (~15 s); the browser test checks the same in the default run
def test_release_writes_what_protect_writes(client, tmp_path):
    """The app's release and `sdckit protect` on the exported spec give the same data bytes."""
    from sdckit.cli import main

    client.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    for step in [{"method": "remove", "variables": ["Person ID"]},
                 {"method": "recode", "variable": "Age", "mapping": AGE4},
                 {"method": "pram", "variables": ["Marital Status"], "min_diagonal": 0.9},
                 {"method": "local_suppression", "k": 2}]:
        assert client.post("/api/steps", json={"action": "add", "step": step}).status_code == 200
    client.post("/api/gate", json={"gate": {"k_anonymity": 2}})
    # releases go inside the workbench's output folder (its work folder here)
    app_dir = (tmp_path / "wb" / "app_release").resolve()
    assert client.post("/api/output", json={"directory": "app_release", "data": "out.csv"}).status_code == 200
    j = _wait(client, client.post("/api/release", json={}).json())
    assert j["status"] == "done", j
    assert j["result"]["passed"] is True
    assert j["done"] == j["total"] == 4 and j["message"] == "written"
    spec = client.get("/api/export").text
    raw = tomllib.loads(spec)
    assert raw["output"]["directory"] == str(app_dir)
    spec_file = tmp_path / "exported.toml"
    spec_file.write_text(spec.replace(str(app_dir), str(tmp_path / "cli_release")), "utf-8")
    assert main(["protect", str(spec_file), "--json"]) == 0
    a = (app_dir / "out.csv").read_bytes()
    b = (tmp_path / "cli_release" / "out.csv").read_bytes()
    assert a == b
    assert sorted(p.name for p in app_dir.iterdir()) == \
        sorted(p.name for p in (tmp_path / "cli_release").iterdir())
    assert client.get("/release/0/report").status_code == 200
    assert client.get("/release/5/report").status_code == 404


def test_import_spec_continues_a_session(client, small, tmp_path):
    text = f"""
[input]
path = "{small.name}"
[roles]
key_vars = {KEYS!r}
[run]
seed = 7
[[steps]]
method = "local_suppression"
k = 2
[gate]
k_anonymity = 2
""".replace("'", '"')
    r = client.post("/api/import", content=text.encode(), headers={"Content-Type": "application/toml"})
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["spec"]["steps"] == [{"method": "local_suppression", "k": 2}]
    assert tomllib.loads(client.get("/api/export").text)["run"]["seed"] == 7
    r = client.post("/api/import", content=b"[input]\npath = 3", headers={"Content-Type": "application/toml"})
    assert r.status_code == 400 and "\n" not in r.json()["error"]


def test_explore_runs_in_the_background_and_a_point_loads(client):
    client.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    body = {"candidates": [{"method": "local_suppression", "grid": {"k": [2, 3]}}], "threshold": 0.5, "seeds": [1]}
    job = client.post("/api/explore", json=body).json()
    assert job["kind"] == "explore"
    j = _wait(client, job)
    assert j["status"] == "done" and j["done"] == j["total"] == 2, j
    assert j["message"].startswith("explore sweep: 2/2")  # from the sweep's own progress events
    pts = j["result"]["points"]
    assert [p["params"] for p in pts] == [{"k": 2}, {"k": 3}]
    s = client.post("/api/explore/load", json={"method": pts[1]["method"], "params": pts[1]["params"]}).json()
    assert s["spec"]["steps"][-1] == {"method": "local_suppression", "k": 3}


def test_a_cancelled_job_stops(tmp_path):
    from sdckit.app.jobs import JobManager

    jm = JobManager()
    seen = []

    def work(job):
        for i in range(1000):
            job.progress(i, 1000)
            seen.append(i)
            time.sleep(0.002)
        return "finished"

    job = jm.submit("sweep", work)
    time.sleep(0.05)
    job.cancel()
    t0 = time.time()
    while job.status == "running" and time.time() - t0 < 5:
        time.sleep(0.01)
    assert job.status == "cancelled" and job.result is None and len(seen) < 1000


def test_tables_page_suppression_passes_its_audit(client):
    r = client.post("/api/table", json={"dims": ["Region", "Age"], "rules": [{"type": "threshold", "n": 5}],
                                        "method": "optimal"})
    assert r.status_code == 200, r.text
    job = _wait(client, r.json())  # protection runs as a job (progress, cancel)
    assert job["status"] == "done" and job["kind"] == "table", job
    t = job["result"]
    df = pd.read_csv(client.app.state.session.state["input"]["path"])
    inner = df.groupby(["Region", "Age"]).size()
    n_small = int(((inner > 0) & (inner < 5)).sum())  # primary cells by hand (inner cells)
    statuses = [c["status"] for row in t["grid"]["cells"] for c in row]
    assert statuses.count("primary") >= n_small > 0
    assert t["summary"]["audit_ok"] is True
    assert all(a["protected"] for a in t["audit"])
    # rounding: every shown cell is a multiple of the base and the table stays additive
    t = _wait(client, client.post("/api/table", json={"dims": ["Region", "Sex"], "rules": [], "method": "rounding",
                                                      "options": {"base": 5}}).json())["result"]
    vals = [[c["value"] for c in row] for row in t["grid"]["cells"]]
    assert all(v % 5 == 0 for row in vals for v in row)
    assert all(abs(row[0] - sum(row[1:])) < 1e-9 for row in vals)


def test_table_protection_is_a_job_and_bad_requests_are_refused_at_once(client):
    # suppression without a rule, an unknown method and a bad rule: 400 in one line, no job
    for body in ({"dims": ["Region", "Age"], "rules": [], "method": "optimal"},
                 {"dims": ["Region", "Age"], "rules": [{"type": "threshold", "n": 3}], "method": "simplex"},
                 {"dims": ["Region", "Age"], "rules": [{"type": "threshold", "m": 3}], "method": "modular"}):
        r = client.post("/api/table", json=body)
        assert r.status_code == 400 and "\n" not in r.json()["error"], (body, r.text)
    r = client.post("/api/table", json={"dims": ["Region", "Age"], "rules": [{"type": "threshold", "n": 3}],
                                        "method": "heuristic"})
    job = r.json()
    assert job["kind"] == "table" and job["status"] in ("queued", "running", "done")
    done = _wait(client, job)
    assert done["status"] == "done" and done["result"]["summary"]["method"] == "heuristic"


def test_session_open_refuses_files_outside_its_folders(tmp_path, small):
    s = Session(tmp_path / "wb", [small.parent])
    assert s.resolve_pick(0, small.name) == small.resolve()
    with pytest.raises(InputError):
        s.resolve_pick(0, "../" + small.name)
    with pytest.raises(InputError):
        s.resolve_pick(3, small.name)


def test_labelled_spss_upload_shows_its_labels(tmp_path):
    import pyreadstat

    c, app = _client(tmp_path, None)
    c.get(f"/?token={TOKEN}")
    c.headers["X-CSRF-Token"] = app.state.csrf
    df = pd.DataFrame({"sex": [1.0, 2.0, 1.0, 2.0], "age": [30.0, 41.0, 55.0, None]})
    path = tmp_path / "labelled.sav"
    pyreadstat.write_sav(df, str(path), column_labels={"sex": "Sex of person", "age": "Age in years"},
                         variable_value_labels={"sex": {1.0: "male", 2.0: "female"}})
    r = c.post("/api/upload", content=path.read_bytes(), headers={"X-Filename": "labelled.sav"})
    assert r.status_code == 200, r.text
    cols = {v["name"]: v for v in c.get("/api/variables").json()["columns"]}
    assert cols["sex"]["label"] == "Sex of person"
    assert cols["sex"]["value_labels"] == {"1": "male", "2": "female"} or \
        cols["sex"]["value_labels"] == {"1.0": "male", "2.0": "female"}
    assert cols["age"]["n_missing"] == 1 and cols["sex"]["n_categories"] == 2


def test_tables_page_loads_a_cell_list(client, tmp_path):
    cells = "region,sex,n\nA,m,10\nA,f,2\nB,m,7\nB,f,9\n"
    r = client.post("/api/upload?kind=table", content=cells.encode(), headers={"X-Filename": "cells.csv"})
    assert r.status_code == 200
    t = _wait(client, client.post("/api/table", json={"dims": ["region", "sex"], "table_file": r.json()["table_file"],
                                                      "value": "n", "rules": [{"type": "threshold", "n": 3}],
                                                      "method": "optimal"}).json())["result"]
    grid = {(row, col): cell for row, cells_ in zip(t["grid"]["rows"], t["grid"]["cells"])
            for col, cell in zip(t["grid"]["cols"], cells_)}
    # totals computed from the inner cells (by hand: A = 12, B = 16, m = 17, f = 11, all = 28)
    assert grid[("Total", "Total")]["value"] == 28 and grid[("A", "Total")]["value"] == 12
    assert grid[("A", "f")]["status"] == "primary"  # 2 contributors < 3
    # one suppressed cell in a row could be recomputed from the total: a secondary joins it
    assert sum(c["status"] == "secondary" for c in grid.values()) >= 1 and t["summary"]["audit_ok"]
    r = client.post("/api/table", json={"dims": ["region"], "table_file": "/etc/passwd", "value": "n"})
    assert r.status_code == 403  # outside the workbench's folders


def test_household_risk_panel(tmp_path):
    # 6 records in 3 households; keys make records 0 and 5 unique (f_k = 1, r = 1)
    df = pd.DataFrame({"hh": [1, 1, 2, 2, 3, 3], "sex": [1, 2, 1, 2, 1, 1],
                       "region": ["a", "a", "a", "a", "b", "c"]})
    p = tmp_path / "hh.csv"
    df.to_csv(p, index=False)
    c, app = _client(tmp_path, p)
    c.get(f"/?token={TOKEN}")
    c.headers["X-CSRF-Token"] = app.state.csrf
    c.post("/api/roles", json={"roles": {"key_vars": ["sex", "region"], "household": "hh"}})
    r = c.get("/api/risk").json()
    # by hand: f_k = 2,2,2,2,1,1 -> r = 1/2,1/2,1/2,1/2,1,1; household risk of a record =
    # 1 - prod over its household (1 - r): households 1, 2 -> 0.75, household 3 -> 1
    assert r["household_risk"] == pytest.approx((4 * 0.75 + 2 * 1.0) / 6)
    assert sum(b["records"] for b in r["household_histogram"]) == 6
    assert r["n_sample_uniques"] == 2


def test_pages_send_a_content_security_policy(client):
    h = client.get("/").headers
    assert "script-src 'self' 'unsafe-eval'" in h["content-security-policy"]
    assert h["x-frame-options"] == "DENY" and h["referrer-policy"] == "no-referrer"


def test_categories_of_a_column_for_the_recode_helper(client):
    r = client.get("/api/categories?column=Age").json()
    df = pd.read_csv(client.app.state.session.state["input"]["path"])
    counts = df["Age"].value_counts().sort_index()  # by pandas directly
    assert [v["value"] for v in r["values"]] == counts.index.tolist()
    assert [v["records"] for v in r["values"]] == counts.tolist()
    assert client.get("/api/categories?column=nope").status_code == 400


def test_a_failing_step_is_reported_in_one_line(client):
    client.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    r = client.post("/api/steps", json={"action": "add", "step": {"method": "pram", "variables": ["no_such_column"]}})
    if r.status_code == 400:  # refused when the step is built: fine, one line
        assert "\n" not in r.json()["error"]
        return
    res = client.get("/api/results").json()
    assert res["failed_step"] == 0 and res["error"].startswith("step 1 (pram)")
    assert "\n" not in res["error"] and "Traceback" not in res["error"]


def test_app_command_help_and_refusal():
    from sdckit.cli import main

    assert main(["app", "--help"]) == 0
    assert main(["app", "--host", "0.0.0.0", "--no-browser"]) == 2


def test_all_columns_linkage_is_the_gates_measure(client):
    """The panel's all-columns figure equals what the max_linkage_all_columns gate measures."""
    client.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    for step in [{"method": "remove", "variables": ["Person ID"]},
                 {"method": "recode", "variable": "Age", "mapping": AGE4}]:
        client.post("/api/steps", json={"action": "add", "step": step})
    client.post("/api/gate", json={"gate": {"max_linkage_all_columns": 1.0}})
    res = client.get("/api/results").json()
    gate = {g["name"]: g for g in res["gate"]}["max_linkage_all_columns"]
    assert res["risk_after"]["linkage"]["correct_link_share"] == pytest.approx(gate["value"]["correct_link_share"])
    # the recode is published: an intruder recodes what they know, so links stay possible
    assert res["risk_after"]["linkage"]["correct_link_share"] > 0


# ---------------------------------------------------------------------- cell key method

SHARED_PTABLE = Path(__file__).resolve().parents[3] / "shared" / "data" / "tauargus_meta" / "ptab_freq.txt"


def _ckm_by_hand(df: pd.DataFrame, dims: list[str], pt_frame: pd.DataFrame) -> dict:
    """Counts and exact decimal cell keys by a pandas groupby (margins included), then the
    p-table applied row by row: the interval [lb, ub) holding the key, counts above the
    largest i use that row, empty cells stay 0."""
    from decimal import Decimal

    imax = int(pt_frame["i"].max())

    def look(n: int, ck: Decimal) -> int:
        if n == 0:
            return 0
        rows = pt_frame[pt_frame["i"] == min(n, imax)].sort_values("p_int_ub")
        for ub, v in zip(rows["p_int_ub"], rows["v"]):
            if Decimal(repr(float(ub))) > ck:
                return int(v)
        return int(rows["v"].iloc[-1])

    out = {}
    d = df.assign(**{c: df[c].astype(str) for c in dims})
    for by in ([dims[0], dims[1]], [dims[0]], [dims[1]], []):
        groups = d.groupby(by) if by else [((), d)]
        for codes, g in groups:
            codes = codes if isinstance(codes, tuple) else (codes,)
            s = sum((Decimal(repr(k)) for k in g["Key"]), Decimal(0))
            full = dict(zip(by, codes))
            cell = (full.get(dims[0], "Total"), full.get(dims[1], "Total"))
            out[cell] = len(g) + look(len(g), s - int(s))
    return out


def _ckm_client(tmp_path) -> tuple[TestClient, pd.DataFrame]:
    """600 demo records with record keys (12 decimals, uniform, seed 3) in a Key column."""
    df = pd.read_csv(DEMO).head(600)
    df["Key"] = np.floor(np.random.default_rng(3).random(len(df)) * 1e12) / 1e12
    p = tmp_path / "data" / "keyed.csv"
    p.parent.mkdir()
    df.to_csv(p, index=False)
    c, app = _client(tmp_path, p)
    assert c.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    c.headers["X-CSRF-Token"] = app.state.csrf
    return c, pd.read_csv(p)


def _check_ckm_grid(t: dict, expected: dict, original: dict) -> None:
    g = t["grid"]
    got = {(r, c): cell for r, row in zip(g["rows"], g["cells"]) for c, cell in zip(g["cols"], row)}
    assert set(expected) <= set(got)
    expected = {k: expected.get(k, 0.0) for k in got}  # cells without records: 0, unperturbed
    original = {k: original.get(k, 0.0) for k in got}
    assert {k: v["value"] for k, v in got.items()} == expected
    assert {k: v["original"] for k, v in got.items()} == original
    changed = {k for k in expected if expected[k] != original[k]}
    assert {k for k, v in got.items() if v["status"] == "perturbed"} == changed
    s = t["summary"]
    assert s["n_perturbed"] == len(changed) > 0
    assert s["max_abs_perturbation"] == max(abs(expected[k] - original[k]) for k in expected)
    # the lost additivity, counted by hand on the grid: each total against the sum of its parts
    rows, cols = g["rows"], g["cols"]
    inner_r, inner_c = [r for r in rows if r != "Total"], [c for c in cols if c != "Total"]
    broken = sum(expected[(r, "Total")] != sum(expected[(r, c)] for c in inner_c) for r in rows) \
        + sum(expected[("Total", c)] != sum(expected[(r, c)] for r in inner_r) for c in cols)
    assert s["additivity_broken"] == broken and s["additivity_relations"] == len(rows) + len(cols)


def test_tables_page_cell_key_method_from_parameters(tmp_path):
    from sdckit.tables.ckm import PTable

    c, df = _ckm_client(tmp_path)
    body = {"dims": ["Region", "Sex"], "rules": [], "method": "ckm", "options": {"D": 3, "V": 1.5, "js": 1}}
    r = c.post("/api/table", json=body)
    assert r.status_code == 200, r.text
    t = r.json()
    pt = PTable.generate(D=3, V=1.5, js=1).frame  # the same p-table, built here to look up by hand
    expected = _ckm_by_hand(df, ["Region", "Sex"], pt)
    original = _ckm_by_hand(df, ["Region", "Sex"], pt.assign(v=0.0))
    _check_ckm_grid(t, {k: float(v) for k, v in expected.items()}, {k: float(v) for k, v in original.items()})
    assert t["summary"]["record_keys"] == "column Key"
    # js = 1: no published count of 1 (the p-table never maps a count to 1..js)
    assert all(cell["value"] != 1 for row in t["grid"]["cells"] for cell in row)
    # bad parameters and a cell list are refused in one line
    bad = c.post("/api/table", json={**body, "options": {"D": "five", "V": 1}})
    assert bad.status_code == 400 and "\n" not in bad.json()["error"]


@pytest.mark.skipif(not SHARED_PTABLE.is_file(), reason="../shared/data/tauargus_meta/ptab_freq.txt (EUPL) is absent")
def test_tables_page_cell_key_method_with_a_tauargus_ptable(tmp_path):
    c, df = _ckm_client(tmp_path)
    up = c.post("/api/upload?kind=ptable", content=SHARED_PTABLE.read_bytes(), headers={"X-Filename": "ptab_freq.txt"})
    assert up.status_code == 200, up.text
    assert "|v| <= 5" in up.json()["ptable"]
    body = {"dims": ["Region", "Age"], "rules": [], "method": "ckm", "options": {"ptable_file": up.json()["ptable_file"]}}
    t = c.post("/api/table", json=body).json()
    pt = pd.read_csv(SHARED_PTABLE, sep=";")
    pt["p_int_ub"] = pt["p_int_ub"].astype(float)
    expected = _ckm_by_hand(df, ["Region", "Age"], pt)
    original = _ckm_by_hand(df, ["Region", "Age"], pt.assign(v=0))
    _check_ckm_grid(t, {k: float(v) for k, v in expected.items()}, {k: float(v) for k, v in original.items()})
    # a p-table outside the upload folder is refused
    r = c.post("/api/table", json={**body, "options": {"ptable_file": str(SHARED_PTABLE)}})
    assert r.status_code == 403 and "upload button" in r.json()["error"]


def test_tables_page_cell_key_method_draws_missing_keys_from_the_session_seed(client):
    body = {"dims": ["Region", "Sex"], "rules": [], "method": "ckm", "options": {"D": 2, "V": 1.0, "js": 0}}
    a, b = client.post("/api/table", json=body), client.post("/api/table", json=body)
    assert a.status_code == 200, a.text
    assert a.json()["grid"] == b.json()["grid"]  # same seed, same record keys, same noise
    assert a.json()["summary"]["record_keys"].startswith("drawn from the session seed")
    seed = client.app.state.session.state["run"]["seed"]
    assert str(seed) not in a.text
    assert a.json()["summary"]["max_abs_perturbation"] <= 2
    # a cell list has no records, so no record keys: refused in one line
    r = client.post("/api/table", json={**body, "table_file": "x.csv", "value": "n"})
    assert r.status_code == 400 and "\n" not in r.json()["error"]


def test_progress_events_feed_a_job_and_cancel_stops_a_sweep_between_runs(small):
    """The sweep's sdckit.progress events update the job; a cancel asked after the first run
    stops the sweep at the next event (deterministic: the cancel is asked from the listener)."""
    from sdckit.app.jobs import Cancelled, Job
    from sdckit.explore.sweep import Candidate, Sweep
    from sdckit.microdata import Microdata
    from sdckit.progress import ProgressEvents

    md = Microdata(pd.read_csv(small), key_vars=KEYS)
    sweep = Sweep(md, [Candidate("local_suppression", {"k": [2, 3, 4, 5]})], seeds=[1], n_jobs=1,
                  cache_dir=None, progress=False)
    job, seen = Job("explore-1", "explore"), []

    def listen(ev):
        seen.append((ev.kind, ev.done, ev.total))
        if ev.kind == "advance" and ev.done == 1:
            job.cancel()  # the steward presses cancel during the second run
        job.on_event(ev)

    with ProgressEvents(listen, bars=False), pytest.raises(Cancelled):
        sweep.run()
    assert seen[:2] == [("start", 0, 4), ("advance", 1, 4)]
    assert job.done == 1 and job.total == 4 and job.message.startswith("explore sweep: 1/4")


def test_cancel_stops_a_release_between_steps_before_anything_is_written(small, tmp_path):
    from sdckit.app.jobs import Cancelled, Job
    from sdckit.progress import ProgressEvents
    from sdckit.release import protect

    out = tmp_path / "rel"
    spec = tmp_path / "r.toml"
    spec.write_text(f"""[input]\npath = "{small}"\n[roles]\nkey_vars = {KEYS!r}\n
[[steps]]\nmethod = "remove"\nvariables = ["Person ID"]\n
[[steps]]\nmethod = "local_suppression"\nk = 2\n
[[steps]]\nmethod = "local_suppression"\nk = 3\n
[gate]\nk_anonymity = 2\n[output]\ndirectory = "{out}"\ndata = "out.csv"\n[run]\nseed = 5\n""".replace("'", '"'))
    job, steps_done = Job("release-1", "release"), []

    def listen(ev):
        if ev.name == "release steps" and ev.kind == "advance":
            steps_done.append(ev.done)
            if ev.done == 1:
                job.cancel()
        job.on_event(ev)

    with ProgressEvents(listen, bars=False), pytest.raises(Cancelled):
        protect(spec)
    assert steps_done == [1] and job.done == 1 and job.total == 3
    assert not (out / "out.csv").exists()  # stopped before the gate and the writing
    # without a cancel the same spec releases (the spec itself is fine)
    with ProgressEvents(Job("release-2", "release").on_event, bars=False):
        run, paths = protect(spec)
    assert run.passed and (out / "out.csv").is_file()
