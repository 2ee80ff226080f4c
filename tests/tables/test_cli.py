import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from sdckit.errors import InputError, SDCError, SpecError
from sdckit.tables.cli import table_command

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tables"
KEYS = {"n_cells", "n_primary", "n_secondary", "cost", "audit_ok", "seconds"}


@pytest.fixture
def spec_dir(tmp_path):
    for f in EXAMPLES.glob("delinquent*"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def _write(spec_dir: Path, text: str) -> str:
    p = spec_dir / "s.toml"
    p.write_text(text)
    return str(p)


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


def test_delinquent_example_spec(spec_dir):
    summary, run = table_command(str(spec_dir / "delinquent.toml"))
    assert KEYS <= set(summary)
    # the seed's table: 25 cells, 4 cells under the threshold; the optimum costs 20 (see test_suppression)
    assert summary["n_cells"] == 25 and summary["n_primary"] == 4 and summary["audit_ok"]
    assert summary["cost"] == 20 and summary["n_secondary"] == 3
    json.dumps(summary)
    pub = pd.read_csv(summary["outputs"]["table"])
    assert (pub["status"] == "suppressed").sum() == 7 and pub["value"].isna().sum() == 7
    assert set(pub["status"]) == {"published", "suppressed"}  # primaries are not told apart
    page = Path(summary["outputs"]["report"]).read_text()
    assert "class='primary'" in page and "min</th>" in page
    assert Path(summary["outputs"]["audit"]).exists()
    # the public page: the 7 suppressed cells as x, primaries not told apart, with the audit's
    # intervals (Alpha / Medium in [0, 4], read off the audit) and no protection levels
    public = Path(summary["outputs"]["public_report"]).read_text()
    assert public.count(">x</td>") == 7 and "primary" not in public and ">p</td>" not in public
    assert "required" not in public and "<td>Alpha / Medium</td><td>0</td><td>4</td>" in public


@pytest.mark.parametrize("method", ["optimal", "modular", "heuristic", "rounding", "margins"])
def test_every_method_runs_from_a_spec(spec_dir, method):
    extra = f"\n[protection]\nmethod = '{method}'\n" + ("base = 3\n" if method == "rounding" else "")
    summary, run = table_command(_write(spec_dir, BASE + extra))
    assert KEYS <= set(summary) and summary["method"] == method
    if method != "margins":  # the margins of this table include no sensitive cell; inner ones are withheld
        assert summary["audit_ok"]
    assert Path(summary["outputs"]["table"]).exists() and Path(summary["outputs"]["report"]).exists()
    # every method has a public page and CSV (rounded cells are marked as rounded)
    assert "public_report" in summary["outputs"] and "public_table" in summary["outputs"]


@pytest.mark.parametrize("text, err, match", [
    (BASE + "[protection]\nmethod = 'best'\n", SpecError, "protection.method: must be one of"),
    (BASE + "[protection]\ncost = 'price'\n", SpecError, "protection.cost"),
    (BASE + "[protection]\ntimelimit = 3\n", SpecError, "protection.timelimit: unknown key; did you mean 'time_limit'"),
    (BASE.replace("threshold", "thresh"), SpecError, r"rules\[0\]"),
    (BASE.replace('"education"]', '"educ"]'), InputError, "'educ' is missing"),
    (BASE.replace("delinquent.csv", "nope.csv"), SpecError, "does not exist"),
    ("[input]\n", SpecError, "table: missing"),
])
def test_bad_specs_raise_one_clear_line(spec_dir, text, err, match):
    with pytest.raises(err, match=match) as e:
        table_command(_write(spec_dir, text))
    assert isinstance(e.value, SDCError) and "\n" not in str(e.value)


def test_non_additive_cells_file_names_the_total(spec_dir):
    df = pd.read_csv(spec_dir / "delinquent.csv")
    tot = pd.DataFrame({"county": ["Alpha"], "education": ["Total"], "n": [21]})  # parts sum to 20
    rows = df.groupby("county", sort=False)["n"].sum().reset_index().assign(education="Total")
    cols = df.groupby("education", sort=False)["n"].sum().reset_index().assign(county="Total")
    full = pd.concat([df, rows[rows.county != "Alpha"], tot, cols,
                      pd.DataFrame({"county": ["Total"], "education": ["Total"], "n": [136]})])
    full.to_csv(spec_dir / "delinquent.csv", index=False)
    with pytest.raises(InputError, match=r"\('Alpha', 'Total'\) = 21 but its parts sum to 20"):
        table_command(_write(spec_dir, BASE))
