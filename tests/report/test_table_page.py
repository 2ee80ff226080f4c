"""The public table page and CSV: suppression code, rounded cells marked, status column."""

import shutil
from pathlib import Path

import pandas as pd
import pytest

from sdckit.errors import SpecError
from sdckit.tables.cli import table_command

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tables"
BASE = """
[input]
table = "delinquent.csv"
value = "n"
[table]
dimensions = ["county", "education"]
[[rules]]
type = "threshold"
n = 3
"""


@pytest.fixture
def spec_dir(tmp_path):
    for f in EXAMPLES.glob("delinquent*"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def _run(spec_dir, extra=""):
    p = spec_dir / "s.toml"
    p.write_text(BASE + extra)
    return table_command(str(p))


def test_suppressed_cells_show_x_and_the_csv_has_a_status(spec_dir):
    summary, run = _run(spec_dir)
    pub = pd.read_csv(summary["outputs"]["public_table"], dtype=str)
    internal = pd.read_csv(summary["outputs"]["table"])
    # the same 7 cells withheld as in the internal published table (primary 4 + secondary 3)
    assert (pub["status"] == "suppressed").sum() == (internal["status"] == "suppressed").sum() == 7
    assert (pub.loc[pub["status"] == "suppressed", "value"] == "x").all()
    safe = pub[pub["status"] == "safe"]
    # every other cell shows its count: compare with the input cells (a brute-force look-up)
    src = pd.read_csv(spec_dir / "delinquent.csv", dtype={"county": str, "education": str})
    merged = safe.merge(src, on=["county", "education"], how="left")
    inner = merged.dropna(subset=["n"])
    assert (inner["value"].astype(float) == inner["n"].astype(float)).all()
    page = Path(summary["outputs"]["public_report"]).read_text()
    assert page.count(">x</td>") == 7 and "= suppressed cell" in page


def test_the_suppression_code_is_configurable(spec_dir):
    summary, _ = _run(spec_dir, '[output]\nsuppression_code = "."\n')
    pub = pd.read_csv(summary["outputs"]["public_table"], dtype=str, keep_default_na=False)
    assert (pub.loc[pub["status"] == "suppressed", "value"] == ".").all()
    assert Path(summary["outputs"]["public_report"]).read_text().count(">.</td>") == 7
    with pytest.raises(SpecError, match="reads as a number"):
        _run(spec_dir, '[output]\nsuppression_code = "0"\n')


def test_rounded_cells_are_marked(spec_dir):
    summary, run = _run(spec_dir, "[protection]\nmethod = 'rounding'\nbase = 3\n")
    pub = pd.read_csv(summary["outputs"]["public_table"])
    assert (pub["status"] == "rounded").all() and (pub["value"] % 3 == 0).all()
    page = Path(summary["outputs"]["public_report"]).read_text()
    assert page.count("<td class='rounded'>") == run.table.n_cells and "rounded to the base" in page
    assert page.count("<sup>r</sup>") == run.table.n_cells + 1  # every cell and the legend
