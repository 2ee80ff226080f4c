"""The workbench's front end against the declarations, and the state every page derives.

- ``static/js/widgets.js`` holds ONE kind -> widget table; it must cover every kind that
  :data:`sdckit.params.KINDS` declares (the table is parsed from the JS source).
- Every declared parameter of every registered step and gate check gets a label the forms show
  (the declared one, or one derived from the help in :mod:`sdckit.app.words`), never the bare
  parameter name, and no symbol that repeats the label ("kk").
- State that stays true: a removed column is offered nowhere, a duplicate step is refused in a
  sentence, sweeps stay in the session, a spec imported before its data names the file it needs,
  the overwrite box replaces the command-line advice, public and internal files are listed apart,
  an implausible weight is warned about, and SPSS user-missing codes are read as missing.
"""

from __future__ import annotations

import re
import time
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from sdckit.app.cli import build
from sdckit.app.session import declared_missing_codes, weight_problem
from sdckit.app.words import param_label, shown_symbol
from sdckit.params import KINDS, Param, step_params
from sdckit.registry import gate_check, known_gate_checks, known_steps, step_class

DEMO = Path(__file__).resolve().parents[2] / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"
KEYS = ["Region", "Sex", "Age", "Marital Status", "Country of Birth"]
TOKEN = "test-token-frontend-0123"
JS = resources.files("sdckit.app").joinpath("static", "js")


def widget_kinds() -> set[str]:
    """The keys of the WIDGETS table in widgets.js (two-space indented ``kind: {`` lines)."""
    text = JS.joinpath("widgets.js").read_text("utf-8")
    start = text.index("export const WIDGETS = {")
    end = text.index("\n};", start)
    return set(re.findall(r"^  ([a-z_]+): \{", text[start:end], flags=re.M))


def test_the_widget_table_covers_every_declared_kind():
    kinds = widget_kinds()
    assert set(KINDS) <= kinds, f"kinds without a widget: {sorted(set(KINDS) - kinds)}"
    assert "variant" in kinds  # the chooser that shows only the chosen variant's fields
    # and it is the only place: no other module switches on a parameter kind
    for f in JS.iterdir():
        if f.name != "widgets.js" and f.name.endswith(".js"):
            assert "case \"int\"" not in f.read_text("utf-8"), f.name


def test_the_page_loads_native_es_modules_that_exist(tmp_path):
    c, _ = _client(tmp_path)
    page = c.get("/").text
    assert '<script type="module" src="/static/js/main.js"></script>' in page
    main = c.get("/static/js/main.js")
    assert main.status_code == 200 and main.headers["content-type"].startswith("text/javascript")
    for name in re.findall(r'from "\./([a-z_]+\.js)"', main.text):
        assert c.get(f"/static/js/{name}").status_code == 200, name
    assert c.get("/static/js/../server.py").status_code == 404
    assert c.get("/static/js/nothere.js").status_code == 404


def _owners():
    from sdckit.tables.registry import (
        known_table_methods,
        known_table_rules,
        table_method_class,
        table_rule_class,
    )

    for n in known_steps():
        yield n, step_params(step_class(n))
    for n in known_gate_checks():
        yield "gate:" + n, step_params(gate_check(n).cls)
    for n in known_table_methods():
        yield "table:" + n, step_params(table_method_class(n))
    for n in known_table_rules():
        yield "rule:" + n, step_params(table_rule_class(n))


def test_every_declared_parameter_has_a_label_and_no_doubled_symbol(tmp_path):
    c, _ = _client(tmp_path)
    served = c.get("/api/methods").json()["labels"]
    for owner, params in _owners():
        for p in params:
            label = served[owner][p.name]["label"]
            assert label and label == param_label(p), (owner, p.name)
            if p.help:  # a bare parameter name is no label
                assert label.lower() not in (p.name.lower(), p.name.replace("_", " ").lower()), (owner, p.name, label)
            sym = served[owner][p.name]["symbol"]
            assert sym is None or sym.lower() not in re.split(r"[^a-z0-9_]+", label.lower()), (owner, p.name)


def test_label_derivation_from_help():
    # hand-written cases of the one rule (app/words.py)
    p = Param(name="n_attacks", kind="int", help="target records")
    assert param_label(p) == "Target records"
    p = Param(name="secret", kind="str", help="columns the intruder guesses (default: the sensitive variables)")
    assert param_label(p) == "Columns the intruder guesses"
    p = Param(name="closed", kind="choice", choices=("left", "right"), help="with breaks: intervals [a, b) or (a, b]")
    assert param_label(p) == "Intervals [a, b) or"[:-3]
    assert param_label(Param(name="k", kind="int", label="k-anonymity", help="x")) == "k-anonymity"
    # a declared label that only repeats the name counts as missing
    assert param_label(Param(name="time_limit", kind="float", label="time limit", help="time per LP")) == "Time per LP"
    assert shown_symbol("k-anonymity", "k") is None and shown_symbol("smallest keep probability", "d") == "d"


def test_a_weight_that_is_no_sampling_weight_is_named_with_the_reason():
    assert "below 1" in weight_problem(pd.Series([0.5, 2.0, 3.0]))
    assert "category code" in weight_problem(pd.Series([1, 2, 3, 1, 2] * 20))
    assert weight_problem(pd.Series(np.linspace(10.0, 250.0, 100))) is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=1.0, max_value=1e4, allow_nan=False), min_size=6, max_size=60))
def test_many_distinct_weights_of_at_least_one_pass(values):
    s = pd.Series(values)
    if s.nunique() > 5:  # a plausible weight: every value >= 1 and more than a handful of values
        assert weight_problem(s) is None


def _client(tmp_path, data: Path | None = None):
    data = data or _small(tmp_path)
    app, token, url = build(data, host="127.0.0.1", port=8000, token=TOKEN, workdir=tmp_path / "wb")
    c = TestClient(app, base_url="http://127.0.0.1:8000")
    assert c.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    c.headers["X-CSRF-Token"] = app.state.csrf
    return c, app


def _small(tmp_path) -> Path:
    p = tmp_path / "data" / "census600.csv"
    if not p.exists():
        p.parent.mkdir(exist_ok=True)
        pd.read_csv(DEMO).head(600).to_csv(p, index=False)
    return p


def test_a_removed_column_is_offered_nowhere_and_a_second_remove_is_refused(tmp_path):
    c, _ = _client(tmp_path)
    st0 = c.get("/api/state").json()
    assert "Person ID" in st0["offered_columns"]
    st1 = c.post("/api/steps", json={"action": "add", "step": {"method": "remove", "variables": ["Person ID"]}}).json()
    assert "Person ID" not in st1["offered_columns"] and "Person ID" in st1["columns"]
    assert st1["present_steps"] == ["remove"]
    # after a "reload" (a fresh GET of the state) the same holds
    assert "Person ID" not in c.get("/api/state").json()["offered_columns"]
    r = c.post("/api/steps", json={"action": "add", "step": {"method": "remove", "variables": ["Person ID"]}})
    assert r.status_code == 400 and "already removed" in r.json()["error"]
    r = c.post("/api/roles", json={"roles": {"key_vars": ["Person ID", "Sex"]}})
    assert r.status_code == 400 and "remove step" in r.json()["error"]
    assert len(c.get("/api/state").json()["spec"]["steps"]) == 1


def test_a_duplicate_step_is_refused_with_a_sentence(tmp_path):
    c, _ = _client(tmp_path)
    c.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    step = {"method": "local_suppression", "k": 2}
    assert c.post("/api/steps", json={"action": "add", "step": step}).status_code == 200
    r = c.post("/api/steps", json={"action": "add", "step": step})
    assert r.status_code == 400 and "already in the list" in r.json()["error"]
    assert "\n" not in r.json()["error"]


def test_sweeps_and_their_results_stay_in_the_session(tmp_path):
    c, _ = _client(tmp_path)
    c.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    job = c.post("/api/explore", json={"candidates": [{"method": "local_suppression", "grid": {"k": [2, 3]}}],
                                       "threshold": 0.05, "seeds": [1]}).json()
    t0 = time.time()
    while c.get(f"/api/jobs/{job['id']}").json()["status"] in ("queued", "running"):
        assert time.time() - t0 < 120
        time.sleep(0.05)
    sweeps = c.get("/api/explore/sweeps").json()["sweeps"]
    assert len(sweeps) == 1 and len(sweeps[0]["result"]["points"]) == 2
    assert c.get("/api/state").json()["sweeps"] == 1


def test_a_spec_imported_before_its_data_names_the_file_and_continues_on_upload(tmp_path):
    c, app = _client(tmp_path)
    text = ('[input]\npath = "later.csv"\n[roles]\nkey_vars = ["Sex", "Age"]\n'
            '[[steps]]\nmethod = "local_suppression"\nk = 2\n[gate]\nk_anonymity = 2\n')
    r = c.post("/api/import", content=text.encode(), headers={"Content-Type": "application/toml"})
    assert r.status_code == 400 and "'later.csv'" in r.json()["error"] and "upload later.csv" in r.json()["error"]
    body = pd.read_csv(DEMO).head(300).to_csv(index=False).encode()
    r = c.post("/api/upload", content=body, headers={"X-Filename": "later.csv"})
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["spec"]["steps"] == [{"method": "local_suppression", "k": 2}]
    assert s["spec"]["roles"]["key_vars"] == ["Sex", "Age"] and s["n_records"] == 300


def test_overwrite_box_and_public_and_internal_files_apart(tmp_path):
    c, app = _client(tmp_path)
    c.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    c.post("/api/steps", json={"action": "add", "step": {"method": "remove", "variables": ["Person ID"]}})
    c.post("/api/steps", json={"action": "add", "step": {"method": "local_suppression", "k": 2}})
    c.post("/api/gate", json={"gate": {"k_anonymity": 2}})
    out = str(tmp_path / "wb" / "rel")
    assert c.post("/api/output", json={"directory": out, "data": "r.csv"}).status_code == 200

    def release():
        job = c.post("/api/release", json={}).json()
        while (j := c.get(f"/api/jobs/{job['id']}").json())["status"] in ("queued", "running"):
            time.sleep(0.05)
        return j

    j = release()
    assert j["status"] == "done", j.get("error")
    res = j["result"]
    assert "r.csv" in res["public_files"] and res["internal_files"]
    assert not set(res["public_files"]) & set(res["internal_files"])
    assert all("internal" not in f for f in res["public_files"])
    j = release()  # again into the same folder: the box, not a command-line flag
    assert j["status"] == "failed" and "--overwrite" not in j["error"] and "tick" in j["error"]
    st = c.post("/api/output", json={"directory": out, "data": "r.csv", "overwrite": True}).json()
    assert st["spec"]["output"]["overwrite"] is True
    assert release()["status"] == "done"


def test_weight_warning_reaches_the_state(tmp_path):
    c, _ = _client(tmp_path)
    st = c.post("/api/roles", json={"roles": {"key_vars": KEYS, "weight": "Population Base"}}).json()
    assert any("Population Base" in w and "sampling weight" in w for w in st["warnings"])


def test_spss_user_missing_codes_are_read_as_missing(tmp_path):
    pyreadstat = pytest.importorskip("pyreadstat")
    df = pd.read_csv(DEMO).head(400)[["Sex", "Age", "Health"]]
    p = tmp_path / "data" / "health.sav"
    p.parent.mkdir()
    pyreadstat.write_sav(df, str(p), variable_value_labels={"Sex": {1: "Male", 2: "Female"},
                                                           "Health": {-9: "No code required", 1: "Very good health"}},
                         missing_ranges={"Health": [-9]})
    from sdckit.io.files import read_data

    _, meta = read_data(p)
    assert declared_missing_codes(meta) == [-9]
    c, app = _client(tmp_path, p)
    s = app.state.session
    assert int(s.frame["Health"].isna().sum()) == int((df["Health"] == -9).sum()) > 0
    # in the spec, per column: the command line reads it the same
    assert s.state["input"]["na_values"] == {"Health": [-9]}
    rows = c.get("/api/frequencies?column=Health").json()["rows"]
    assert rows[-1] == {"value": None, "records": int((df["Health"] == -9).sum()), "label": "missing", "missing": True}
    sex = c.get("/api/frequencies?column=Sex").json()["rows"]
    assert [(r["value"], r["label"]) for r in sex] == [(1, "Male"), (2, "Female")]
    # unticked: the codes stay categories
    root = next(i for i, r in enumerate(s.roots) if (r / "health.sav").exists())
    c.post("/api/open", json={"root": root, "name": "health.sav", "honour_missing": False})
    assert int(s.frame["Health"].isna().sum()) == 0


def test_gate_rows_carry_a_label_a_unit_and_a_sentence(tmp_path):
    c, _ = _client(tmp_path)
    c.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    c.post("/api/gate", json={"gate": {"k_anonymity": 2, "max_global_risk": 0.5}})
    rows = {g["name"]: g for g in c.get("/api/results").json()["gate"]}
    k = rows["k_anonymity"]
    assert k["label"] == "k-anonymity" and k["threshold_text"] == "2 records"
    assert k["measured"].startswith("k reached: ") and "{" not in k["measured"]
    g = rows["max_global_risk"]
    assert g["threshold_text"] == "50.00%" and "%" in g["measured"] and "{" not in g["measured"]


def test_step_bars_follow_the_codes_with_their_labels_and_new_categories_after():
    from sdckit.app.figures import frequency_compare

    before = pd.Series([3, 1, 2, 8, 5, 4, 7, 6, np.nan] * 4)
    bands = {1: "0-15", 2: "16-34", 3: "16-34", 4: "35-54", 5: "35-54", 6: "55+", 7: "55+", 8: "55+"}
    after = before.map(bands)
    r = frequency_compare(before, after, labels={1.0: "children", 2.0: "young"})
    shown = [b["category"] for b in r["bars"] if b["when"] == "before"]
    # by hand: the codes in their order (labels with the code), then the bands in age order,
    # then missing; never "1.0", never the order of the text ("55+" after "35-54")
    assert shown == ["children (1)", "young (2)", "3", "4", "5", "6", "7", "8",
                     "0-15", "16-34", "35-54", "55+", "(missing)"]
    counts = {b["category"]: b["records"] for b in r["bars"] if b["when"] == "after"}
    assert counts["16-34"] == 8 and counts["55+"] == 12 and counts["(missing)"] == 4


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(min_value=-3, max_value=12), min_size=1, max_size=80))
def test_step_bars_count_every_record_once(values):
    from sdckit.app.figures import frequency_compare

    s = pd.Series(values, dtype="float64")
    r = frequency_compare(s, s.where(s != 0), limit=100)
    for when in ("before", "after"):
        assert sum(b["records"] for b in r["bars"] if b["when"] == when) == len(values)
    before = [b["category"] for b in r["bars"] if b["when"] == "before" and b["category"] != "(missing)"]
    assert before == sorted(before, key=float)  # in the order of the codes


def test_compare_lists_each_steps_settings_with_the_defaults_the_other_branch_changed(tmp_path):
    c, _ = _client(tmp_path)
    c.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    c.post("/api/steps", json={"action": "add", "step": {"method": "local_suppression"}})
    c.post("/api/history", json={"action": "branch", "name": "alt"})
    c.post("/api/steps", json={"action": "update", "index": 0, "step": {"method": "local_suppression", "k": 5}})
    r = c.get("/api/compare?a=main&b=alt").json()["results"]
    main, alt = r["main"]["settings"][0]["settings"], r["alt"]["settings"][0]["settings"]
    assert list(main) == list(alt) and len(main) == 1
    (label,) = main
    assert label != "k" and main[label] == "3 records" and alt[label] == "5 records"
    assert "{" not in str(r["main"]["gate"])


def test_the_risk_histogram_has_the_reports_bins_and_counts(tmp_path):
    from sdckit.report.fragments import risk_histogram
    from sdckit.risk.report import measure_risk

    c, app = _client(tmp_path)
    c.post("/api/roles", json={"roles": {"key_vars": KEYS}})
    panel = c.get("/api/risk").json()
    s = app.state.session
    md = s.microdata(s.state["roles"])
    report = risk_histogram(measure_risk(md).records["risk"].to_numpy())  # the report's figure
    assert [(b["band"], b["records"]) for b in panel["risk_histogram"]] == \
        list(zip(report["band"], report["records"].astype(int), strict=True))
    assert sum(b["records"] for b in panel["risk_histogram"]) == md.n_records


def test_riskiest_records_and_utility_panel_are_the_reports_fragments_without_json(tmp_path):
    c, _ = _client(tmp_path)
    c.post("/api/roles", json={"roles": {"key_vars": KEYS, "sensitive": ["Health"]}})
    assert "empty" in c.get("/api/utility").json()
    c.post("/api/steps", json={"action": "add", "step": {"method": "local_suppression", "k": 2}})
    r = c.get("/api/risk/records?page=2").json()
    assert "Records 21 to 40" in r["riskiest"] and "<table" in r["below_k"] and "Health" in r["ldiversity"]
    u = c.get("/api/utility").json()["html"]
    for html in (r["riskiest"], r["below_k"], r["ldiversity"], u):
        assert '{"' not in html and '":' not in html
    assert c.get("/api/risk/records?page=x").status_code == 400
