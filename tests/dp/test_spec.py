"""``method = "dp"`` in a table spec: the example runs, writes the public table with intervals
and the report in words, refuses a release over budget (nothing written), and names bad keys."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sdckit.errors import GateError, SpecError
from sdckit.tables.cli import table_command

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tables"


@pytest.fixture
def spec_dir(tmp_path):
    for f in list(EXAMPLES.glob("dp_*")):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def _spec(spec_dir: Path, **changes) -> str:
    text = (spec_dir / "dp_persons.toml").read_text()
    for old, new in changes.items():
        assert old in text or old.startswith("+"), old
        text = text + "\n" + new if old.startswith("+") else text.replace(old, new)
    p = spec_dir / "s.toml"
    p.write_text(text)
    return str(p)


def test_the_example_spec_releases_a_consistent_table(spec_dir):
    summary, run = table_command(str(spec_dir / "dp_persons.toml"))
    assert summary["method"] == "dp" and summary["audit_ok"] and summary["budget"]["passed"]
    assert summary["consistency"]["broken"] == 0 and summary["n_negative"] == 0
    assert summary["budget"]["spent_per_table"] == {"dp_persons": {"rho": 0.5, "epsilon": 0.0, "delta": 0.0}}
    pub = pd.read_csv(spec_dir / "out" / "dp_persons_published.csv", dtype={"area": str})
    assert list(pub.columns) == ["area", "sex", "age", "value", "lower", "upper", "status"]
    assert (pub["lower"] <= pub["value"]).all() and (pub["value"] <= pub["upper"]).all()
    total = pub[(pub.area == "Total") & (pub.sex == "Total") & (pub.age == "Total")].iloc[0]
    assert total["status"] == "invariant" and total["value"] == 800 and total["lower"] == total["upper"] == 800
    page = (spec_dir / "out" / "dp_persons_public.html").read_text()
    report = (spec_dir / "out" / "dp_persons_report.html").read_text()
    for text in (page, report, pub.to_csv()):
        assert "20240501" not in text and str(spec_dir) not in text   # no seed, no path
    assert "without noise" in page and "simulation" in page


def test_same_spec_same_table(spec_dir):
    table_command(str(spec_dir / "dp_persons.toml"))
    first = (spec_dir / "out" / "dp_persons_published.csv").read_text()
    table_command(str(spec_dir / "dp_persons.toml"))
    assert (spec_dir / "out" / "dp_persons_published.csv").read_text() == first


def test_over_budget_writes_nothing(spec_dir):
    path = _spec(spec_dir, **{"max_epsilon = 6.0": "max_epsilon = 5.0"})
    with pytest.raises(GateError, match=r"OVER BUDGET.*nothing was written"):
        table_command(path)
    assert not (spec_dir / "out").exists()
    path = _spec(spec_dir, **{"max_epsilon = 6.0": "max_rho = 0.4", "delta = 1e-6": ""})
    with pytest.raises(GateError, match="rho = 0.5"):
        table_command(path)


@pytest.mark.parametrize("old,new,match", [
    ("[budget]", "[nobudget]", "unknown section"),
    ("rho = 0.5", "rho = -1", r"protection.rho: The 'rho' parameter of DiscreteGaussianCounts must be a number > 0"),
    ("mechanism = \"gaussian\"", "mechanism = \"laplace\"", "protection.epsilon: missing"),
    ("mechanism = \"gaussian\"", "mechanism = \"exponential\"", "protection.mechanism"),
    ("invariant_depth = 0 ", "invariant_depth = -2 ", "protection.invariant_depth"),
    ("max_epsilon = 6.0", "max_epsilon = 0", "budget.max_epsilon"),
    ("+", "[[rules]]\ntype = \"threshold\"\nn = 3", "rules: a DP table"),
])
def test_bad_specs_name_the_key(spec_dir, old, new, match):
    path = _spec(spec_dir, **{old: new})
    with pytest.raises(SpecError, match=match):
        table_command(path)


def test_budget_section_is_refused_for_other_methods(spec_dir):
    path = _spec(spec_dir, **{"method = \"dp\"": "method = \"rounding\""})
    with pytest.raises(SpecError, match="budget: a privacy budget goes with method = 'dp'"):
        table_command(path)


def test_missing_budget_is_refused(spec_dir):
    text = (spec_dir / "dp_persons.toml").read_text().split("[budget]")[0] + \
        "[output]\ntable = \"out/x.csv\"\n"
    (spec_dir / "s.toml").write_text(text)
    with pytest.raises(SpecError, match=r"budget: a DP table needs a privacy budget"):
        table_command(str(spec_dir / "s.toml"))


def test_command_line_json(spec_dir):
    proc = subprocess.run([sys.executable, "-m", "sdckit", "table", str(spec_dir / "dp_persons.toml"), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert {"n_cells", "method", "loss", "budget", "consistency", "simulated_coverage", "outputs"} <= set(out)
