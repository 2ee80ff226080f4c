"""Every ``--json`` call prints exactly one JSON document on stdout, whatever runs.

Each verb runs in a subprocess (C-level output such as a solver banner would reach the real
stdout, which an in-process runner cannot see), with an input that makes a solver run where the
verb has one. Also the clash of issue 18 as a user meets it: evolved PRAM then optimal PRAM in
one spec, in both orders.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "sdckit" / "data"


def sdckit(*args, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, "-m", "sdckit", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=900, env=env)


def one_document(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)  # raises on a banner, two documents or trailing text
    assert isinstance(doc, dict)
    return doc


def _pram_spec(tmp_path: pathlib.Path, order: list[str]) -> pathlib.Path:
    shutil.copy(DATA / "uk_census2011_teaching_10k.csv", tmp_path / "census.csv")
    steps = {
        "evolved": '''[[steps]]
method = "pram"
variables = ["Region"]
matrix = { type = "evolved", d_min = 0.6, d_max = 0.95, generations = 3, population = 6 }
''',
        "optimal": '''[[steps]]
method = "pram"
variables = ["Sex", "Marital Status"]
matrix = { type = "optimal", alpha = 0.5, combinations = 2 }
joint = true
''',
    }
    text = f'''[input]
path = "census.csv"
[roles]
key_vars = ["Region", "Sex", "Marital Status"]
[run]
seed = 7
[[steps]]
method = "remove"
variables = ["Person ID"]
{"".join(steps[o] for o in order)}
[gate]
max_global_risk = 1.0
[output]
directory = "out_{'_'.join(order)}"
data = "released.csv"
'''
    path = tmp_path / f"spec_{'_'.join(order)}.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("order", [["evolved", "optimal"], ["optimal", "evolved"]])
def test_protect_json_with_two_solver_steps_in_either_order(tmp_path, order):
    spec = _pram_spec(tmp_path, order)
    doc = one_document(sdckit("protect", spec, "--json", cwd=tmp_path))
    assert doc["passed"] is True


def test_table_spec_json_is_one_document(tmp_path):
    src = ROOT / "examples" / "tables"
    for name in ("delinquent.toml", "delinquent.csv"):
        shutil.copy(src / name, tmp_path / name)
    doc = one_document(sdckit("table", tmp_path / "delinquent.toml", "--json", cwd=tmp_path))
    assert doc  # optimal suppression + audit ran (HiGHS)


def test_table_actions_json(tmp_path):
    one_document(sdckit("table", "count", "--rows", "20,55,25,35", "--cols", "50,35,30,20", "--json",
                        cwd=tmp_path))
    cells = tmp_path / "t.csv"
    cells.write_text("15,1,3,1\n20,10,10,15\n3,10,10,2\n12,14,7,2\n")
    one_document(sdckit("table", "perturb", "--table", cells, "--seed", "3", "--json", cwd=tmp_path))
    one_document(sdckit("table", "posterior", "--table", cells, "--cells", "1,1", "--json", cwd=tmp_path))


def test_risk_json_is_one_document(tmp_path):
    one_document(sdckit("risk", DATA / "uk_census2011_teaching_10k.csv", "--keys", "Region,Sex,Age",
                        "--suda", "--json", cwd=tmp_path))


def test_demo_report_estimate_explore_json(tmp_path):
    demo = one_document(sdckit("demo", "--output", tmp_path / "demo", "--json", cwd=tmp_path))
    assert demo
    rep = one_document(sdckit("report", tmp_path / "demo", "--json", cwd=tmp_path))
    assert rep
    released = next((tmp_path / "demo").glob("*_released.csv"))
    matrices = sorted((tmp_path / "demo").glob("pram_*.csv"))
    if matrices:
        one_document(sdckit("estimate", released, "--matrix", matrices[0], "--json", cwd=tmp_path))
    # an explore sweep with a solver-using candidate (exact local suppression runs HiGHS)
    shutil.copy(DATA / "uk_census2011_teaching_10k.csv", tmp_path / "census.csv")
    (tmp_path / "explore.toml").write_text('''[input]
path = "census.csv"
[roles]
key_vars = ["Region", "Sex", "Marital Status"]
[[steps]]
method = "remove"
variables = ["Person ID"]
[explore]
risk = "linkage"
utility = "entropy"
threshold = 0.5
seeds = [1]
[[candidates]]
method = "pram"
grid = { min_diagonal = [0.6, 0.8] }
fixed = { variables = ["Marital Status"], matrix = { type = "evolved", d_max = 0.95, generations = 2, population = 4 } }
[[candidates]]
method = "local_suppression"
grid = { k = [2, 3] }
[output]
directory = "explore_out"
''')
    one_document(sdckit("explore", tmp_path / "explore.toml", "--json", cwd=tmp_path))
