"""The sdckit command through subprocess: output, JSON interface and exit codes."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from tests.conftest import shared_file

CMD = [sys.executable, "-m", "sdckit"]


def run(*args, cwd=None):
    return subprocess.run([*CMD, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_version():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("sdckit ")


def test_risk_on_adult_matches_brute_force_groupby():
    path = shared_file("arx_adult.csv")
    keys = ["age", "sex", "race", "marital-status"]
    r = run("risk", path, "--keys", ",".join(keys), "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    # brute force: pandas groupby size per record
    df = pd.read_csv(path)
    fk = df.groupby(keys, dropna=False)[keys[0]].transform("size")
    assert got["n_records"] == len(df)
    assert got["n_combinations"] == df.groupby(keys, dropna=False).ngroups
    assert got["n_sample_uniques"] == int((fk == 1).sum())
    assert got["k_violations"] == {str(k): int((fk < k).sum()) for k in (2, 3, 5)}


def test_risk_text_and_output_file(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame({"a": [1, 1, 2], "b": [1, 1, 1]}).to_csv(path, index=False)
    out = tmp_path / "risk.csv"
    r = run("risk", path, "--keys", "a,b", "--output", out)
    assert r.returncode == 0, r.stderr
    assert "sample uniques" in r.stdout
    assert pd.read_csv(out)["fk"].tolist() == [2, 2, 1]


@pytest.mark.parametrize("args, code, pattern", [
    (["risk", "missing.csv", "--keys", "a"], 2, "missing.csv: no such file"),
    (["risk", "{data}", "--keys", "a,zz"], 2, "the key_vars column 'zz' does not exist"),
    (["risk", "{data}"], 2, "Missing option '--keys'"),
    (["protect", "nospec.toml"], 2, "no such spec file"),
    (["nosuchcommand"], 2, "No such command"),
])
def test_errors_are_one_line_with_exit_code(tmp_path, args, code, pattern):
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": [1, 2], "b": [1, 1]}).to_csv(data, index=False)
    r = run(*[a.format(data=data) for a in args])
    assert r.returncode == code
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and pattern in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_failed_gate_exits_3_and_writes_nothing(tmp_path):
    pd.DataFrame({"a": [1, 2, 3], "b": [1, 1, 2]}).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text('[input]\npath = "d.csv"\n[roles]\nkey_vars = ["a"]\n'
                                     '[gate]\nk_anonymity = 2\n[output]\ndirectory = "out"\n')
    r = run("protect", tmp_path / "s.toml")
    assert r.returncode == 3
    assert "k_anonymity = 2: 3 of 3 records have f_k < 2" in r.stderr
    assert not (tmp_path / "out").exists()


def test_demo_end_to_end(tmp_path):
    r = run("demo", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["passed"] is True
    out = tmp_path / "sdckit-demo"
    data = pd.read_csv(out / "census_released.csv")
    assert len(data) == 10_000 and "Person ID" not in data.columns
    report = (out / "report.html").read_text()
    assert report.startswith("<!DOCTYPE html>") and "Release report" in report
    # internal files (seeds, row order, the sweep's runs) sit in a sibling folder, never in the
    # folder meant for publication
    internal_dir = tmp_path / "sdckit-demo-internal"
    internal = json.loads((internal_dir / "internal_report.json").read_text())
    seed = internal["seeds"]["root"]["entropy"]
    assert seed and seed not in report
    assert not (out / "internal_report.json").exists() and not (out / "explore").exists()
    assert (internal_dir / "explore" / "runs_internal.csv").exists()
    assert got["report"] == str(out / "report.html")
    # the R-U map of at least three methods, with the threshold and the Pareto front
    assert len(got["ru_map_methods"]) >= 3
    assert 'id="ru-map"' in report and 'data-threshold="' in report and "pareto" in report
    _browser_check(out / "report.html")
    assert "Information kept in the key variables" in report
    # the release proposed by the sweep runs with sdckit protect and passes its gate
    r = run("protect", got["explore_spec"], "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["passed"] is True
    # sdckit report reads the release back: public figures only, never the seed
    r = run("report", out, "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["passed"] is True and summary["n_records"] == 10_000 and seed not in r.stdout


def _browser_check(page):
    """Load the report in headless Chromium: no console errors, and the map is in the DOM."""
    import shutil

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (make test installs it when root)")
    r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                        "--no-first-run", "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", f"--user-data-dir={page.parent / 'chromium-profile'}",
                        "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    # the Vega-Lite map rendered: its method curves, the gate's threshold and the release itself
    assert '<svg' in r.stdout and 'id="ru-map"' in r.stdout and "method_curve_marks" in r.stdout
    assert "threshold_marks" in r.stdout and "this_release_marks" in r.stdout
    console_errors = [line for line in r.stderr.splitlines() if "CONSOLE" in line and "ERROR" in line.upper()]
    assert not console_errors, console_errors


def test_table_count_action_prints_the_seeds_count():
    # 18,272,363,056: the number of 4 x 4 tables with the seed's delinquent-children margins
    r = run("table", "count", "--rows", "20,55,25,35", "--cols", "50,35,30,20", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["count"] == 18272363056 and {"method", "seconds"} <= set(d)
    bad = run("table", "count", "--rows", "1,2", "--cols", "4")
    assert bad.returncode == 2 and "same grand total" in bad.stderr and len(bad.stderr.splitlines()) == 1


def test_pram_release_then_analyst_estimate(tmp_path):
    """protect writes the PRAM matrix next to the data; estimate reads both back. With the
    invariant matrix the moment estimate of every category is its original count within 4
    standard errors (original counts: pandas value_counts on the input)."""
    data = tmp_path / "d.csv"
    rng = __import__("numpy").random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(1, 5, 4000), "b": rng.integers(1, 3, 4000)})
    df.to_csv(data, index=False)
    (tmp_path / "s.toml").write_text(
        '[input]\npath = "d.csv"\n[roles]\nkey_vars = ["a", "b"]\n[run]\nseed = 3\n'
        '[[steps]]\nmethod = "pram"\nvariables = ["a"]\nmin_diagonal = 0.8\n'
        '[gate]\nmin_diagonal = 0.8\nnone = "a test of the analyst\'s estimate"\n'
        '[output]\ndirectory = "out"\ndata = "r.csv"\n')
    r = run("protect", tmp_path / "s.toml", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    matrix = next(out.glob("pram_*.csv"))
    e = run("estimate", out / "r.csv", "--matrix", matrix, "--json")
    assert e.returncode == 0, e.stderr
    got = json.loads(e.stdout)
    truth = df["a"].value_counts().rename(index=str)   # the published matrix labels are text
    assert len(got["rows"]) == 4
    for row in got["rows"]:
        assert abs(row["estimate"] - truth[str(row["a"])]) < 4 * row["std_error"] + 1e-9
