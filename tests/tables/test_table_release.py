"""Tables end to end: ``sdckit table`` with ``[output] folder`` writes a release (public and
internal folders, certificate) that ``sdckit verify`` checks; one changed cell fails verify
naming the file; dimensions with missing values get a choice (category, drop, refuse) and an
ARX-style hierarchy can be attached."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from sdckit.cli import main
from sdckit.report.verify import verify_release

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tables"


class _Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.exit_code, self.output, self.err = code, out, err


class _Runner:
    """``sdckit`` as the console script runs it (one-line errors on stderr, exit codes)."""

    capsys = None

    def invoke(self, _app, args: list[str]) -> _Result:
        code = main(list(args))
        cap = self.capsys.readouterr()
        return _Result(code, cap.out if "--json" in args else cap.out + cap.err, cap.err)


runner = _Runner()
app = None


@pytest.fixture(autouse=True)
def _capture(capsys):
    runner.capsys = capsys
    yield

SPEC = """
[input]
table = "delinquent.csv"
value = "n"
[table]
dimensions = ["county", "education"]
[[rules]]
type = "threshold"
n = 3
[protection]
method = "{method}"
{extra}
[output]
folder = "release"
table = "delinquent.csv"
"""


@pytest.fixture
def spec_dir(tmp_path):
    for f in EXAMPLES.glob("delinquent*"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def _release(spec_dir: Path, method: str = "optimal", extra: str = "", *args: str) -> dict:
    spec = spec_dir / "rel.toml"
    spec.write_text(SPEC.format(method=method, extra=extra))
    r = runner.invoke(app, ["table", str(spec), "--json", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


@pytest.mark.parametrize("method,extra", [("optimal", ""), ("rounding", "base = 5"),
                                          ("dp", "mechanism = 'laplace'\nepsilon = 1.0\nseed = 5")])
def test_release_verifies_and_a_changed_cell_fails_naming_the_file(spec_dir, method, extra):
    if method == "dp":  # a DP table takes no rules; its budget is required
        (spec_dir / "rel.toml").write_text("")
        spec = SPEC.format(method=method, extra=extra).replace("[[rules]]\ntype = \"threshold\"\nn = 3\n", "")
        spec += "[budget]\nmax_epsilon = 1.0\n"
        (spec_dir / "rel.toml").write_text(spec)
        r = runner.invoke(app, ["table", str(spec_dir / "rel.toml"), "--json"])
        assert r.exit_code == 0, r.output
        out = json.loads(r.output)
    else:
        out = _release(spec_dir, method, extra)
    rel = out["release"]
    # public and internal files listed apart; nothing internal in the public folder
    assert set(rel["public"]) == {".sdckit-release", "certificate.json", "delinquent.csv", "report.html",
                                  "sdmx_data.csv", "sdmx_structure.xml", "datapackage.json", "satre_record.json"}
    assert "internal_certificate.json" in rel["internal"] and "internal_report.html" in rel["internal"]
    assert rel["audit_status"] == "exact" and rel["verdict"].startswith("Passed")
    pub = spec_dir / "release"
    cert = json.loads((pub / "certificate.json").read_text())
    t = cert["tables"][0]
    assert t["audit"]["status"] == "exact" and t["file"] == "delinquent.csv"
    if method == "optimal":  # the rule's threshold and what it measured (4 cells below 3, see test_cli)
        assert t["rules"][0]["thresholds"]["n"] == 3 and t["rules"][0]["measured"]["sensitive_cells"] == 4
    text = (pub / "certificate.json").read_text() + (pub / "report.html").read_text()
    assert "seed" not in json.dumps(cert.get("spec")) and str(spec_dir) not in text
    page = (pub / "report.html").read_text()
    assert "Audit verdict: exact" in page
    assert verify_release(pub).ok
    r = runner.invoke(app, ["verify", str(pub)])
    assert r.exit_code == 0, r.output
    # change one cell of the released CSV: verify fails and names the file
    csv = pub / "delinquent.csv"
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    row = df.index[(df["county"] == "Beta") & (df["education"] == "Low")][0]
    df.loc[row, "value"] = str(int(df.loc[row, "value"]) + 1)
    csv.chmod(0o644)
    df.to_csv(csv, index=False)
    res = verify_release(pub)
    assert not res.ok and any(p.startswith("delinquent.csv: changed since release") for p in res.problems)
    r = runner.invoke(app, ["verify", str(pub)])
    assert r.exit_code == 5 and "delinquent.csv: changed since release" in r.output


def test_suppressed_cells_show_the_code_and_statuses_are_words(spec_dir):
    _release(spec_dir)
    df = pd.read_csv(spec_dir / "release" / "delinquent.csv", dtype=str, keep_default_na=False)
    assert set(df["status"]) == {"safe", "suppressed"}  # primary and secondary not told apart
    assert (df.loc[df["status"] == "suppressed", "value"] == "x").all() and (df["status"] == "suppressed").sum() == 7
    page = (spec_dir / "release" / "report.html").read_text()
    assert "7 cells suppressed (withheld)" in page and "primary" not in page


def test_a_second_release_needs_overwrite(spec_dir):
    _release(spec_dir)
    spec = spec_dir / "rel.toml"
    r = runner.invoke(app, ["table", str(spec)])
    assert r.exit_code != 0 and "already there" in r.output
    out = _release(spec_dir, "optimal", "", "--overwrite")
    assert verify_release(spec_dir / "release").ok and out["release"]["passed"]


MICRO_SPEC = """
[input]
microdata = "people.csv"
[table]
dimensions = ["region", "sex"]
{missing}
[[rules]]
type = "threshold"
n = 2
[protection]
method = "optimal"
[output]
folder = "out"
"""


def _people(spec_dir: Path) -> Path:
    # 12 records, 3 with no region: the counts below are read off this list
    rows = [("N", "m")] * 4 + [("N", "f")] * 3 + [("S", "m")] * 2 + [("", "f")] * 2 + [("", "m")]
    pd.DataFrame(rows, columns=["region", "sex"]).to_csv(spec_dir / "people.csv", index=False)
    return spec_dir / "people.csv"


def test_missing_values_refuse_by_default_in_one_line(spec_dir):
    _people(spec_dir)
    (spec_dir / "m.toml").write_text(MICRO_SPEC.format(missing=""))
    r = runner.invoke(app, ["table", str(spec_dir / "m.toml")])
    assert r.exit_code != 0 and "Traceback" not in r.output
    line = r.output.strip().splitlines()[-1]
    assert "people.csv" in line and "`region`" in line and "3 missing values" in line
    assert all(w in line for w in ('"category"', '"drop"', '"refuse"'))


def test_missing_values_as_a_category_or_dropped_with_a_count(spec_dir):
    _people(spec_dir)
    (spec_dir / "m.toml").write_text(MICRO_SPEC.format(missing='missing = {region = "category"}'))
    out = json.loads(runner.invoke(app, ["table", str(spec_dir / "m.toml"), "--json"]).output)
    assert out["missing"]["region"] == {"choice": "category", "n_missing": 3, "n_dropped": 0, "label": "Missing"}
    df = pd.read_csv(spec_dir / "out" / "m.csv", dtype=str, keep_default_na=False)
    assert "Missing" in set(df["region"]) and df.loc[(df["region"] == "Total") & (df["sex"] == "Total"),
                                                     "value"].item() == "12"
    assert verify_release(spec_dir / "out").ok
    (spec_dir / "m.toml").write_text(MICRO_SPEC.format(missing='missing = "drop"').replace('"out"', '"out2"'))
    out = json.loads(runner.invoke(app, ["table", str(spec_dir / "m.toml"), "--json"]).output)
    assert out["missing"]["region"]["n_dropped"] == 3
    df = pd.read_csv(spec_dir / "out2" / "m.csv", dtype=str, keep_default_na=False)
    assert df.loc[(df["region"] == "Total") & (df["sex"] == "Total"), "value"].item() == "9"
    page = (spec_dir / "out2" / "report.html").read_text()
    assert "3 records left out" in page


def test_a_bad_missing_choice_names_the_key(spec_dir):
    _people(spec_dir)
    (spec_dir / "m.toml").write_text(MICRO_SPEC.format(missing='missing = {region = "guess"}'))
    r = runner.invoke(app, ["table", str(spec_dir / "m.toml")])
    assert r.exit_code != 0 and "table.missing.region: must be one of" in r.output


def test_an_arx_hierarchy_attached_to_a_dimension(spec_dir):
    _people(spec_dir)
    # ARX-style: raw value; its group; "*" (the total)
    (spec_dir / "region.csv").write_text("N;North;*\nS;South;*\n")
    spec = MICRO_SPEC.format(missing='missing = "drop"') + '[hierarchies.region]\narx = "region.csv"\n'
    (spec_dir / "m.toml").write_text(spec)
    r = runner.invoke(app, ["table", str(spec_dir / "m.toml"), "--json"])
    assert r.exit_code == 0, r.output
    df = pd.read_csv(spec_dir / "out" / "m.csv", dtype=str, keep_default_na=False)
    assert {"North", "South", "N", "S", "Total"} <= set(df["region"])
    assert df.loc[(df["region"] == "North") & (df["sex"] == "Total"), "value"].item() in ("7", "x")
