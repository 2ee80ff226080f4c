"""Cells a spreadsheet would run as formulas ("CSV injection") in released CSV files.

Reference rule: OWASP's CSV Injection page (a cell beginning with =, +, -, @, tab or carriage
return is a formula; prefix it with '). The expected cells below are written out by hand from
that rule, not computed with the code under test.
"""

from __future__ import annotations

import csv
import html
import io
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError, InputWarning, SpecError
from sdckit.io.files import read_data, write_data
from sdckit.io.formulas import formula_cells, guard_csv_text, is_formula_like, neutralise_formulas

NASTY = ["=cmd|' /C calc'!A0", "@SUM(A1:A9)", "+SUM(1,2)", "-2+3", "\tx", "\r=1", "=HYPERLINK(\"x\")"]
PLAIN = ["-2", "+3.5", "-1e-05", "ok", "", "a=b", " =x", "2-3", "'=already"]


@pytest.mark.parametrize("text", NASTY)
def test_formula_like_cells(text):
    assert is_formula_like(text)


@pytest.mark.parametrize("text", PLAIN)
def test_plain_cells_and_numbers_are_not_formulas(text):
    assert not is_formula_like(text)


def test_non_text_values_are_never_formulas():
    for v in (-2, -2.5, np.int64(-3), None, np.nan, pd.NA, True):
        assert not is_formula_like(v)


def _frame():
    return pd.DataFrame({"name": ["=cmd|x", "ok", "-2+3", "-2", "@SUM(A1)", None],
                         "n": [1, -2, 3, 4, 5, 6],
                         "cat": pd.Categorical(["+SUM", "x", "x", "x", "x", "\tz"])})


def test_findings_name_column_count_and_example():
    # by hand: name holds =cmd|x, -2+3, @SUM(A1) (3); n is numeric; cat holds +SUM and \tz (2)
    assert formula_cells(_frame()) == [{"column": "name", "count": 3, "example": "=cmd|x"},
                                       {"column": "cat", "count": 2, "example": "+SUM"}]


def test_quote_prefixes_an_apostrophe_and_leaves_the_input_alone():
    df = _frame()
    before = df.copy()
    out = neutralise_formulas(df)
    pd.testing.assert_frame_equal(df, before)  # the input is not modified
    assert out["name"].tolist()[:5] == ["'=cmd|x", "ok", "'-2+3", "-2", "'@SUM(A1)"]
    assert out["name"].isna().tolist() == df["name"].isna().tolist()
    assert list(out["cat"].cat.categories) == ["'+SUM", "'\tz", "x"] or \
        sorted(out["cat"].astype(str).unique()) == sorted(["'+SUM", "x", "'\tz"])
    assert out["n"].tolist() == df["n"].tolist()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=8), st.none(), st.integers(-50, 50)), min_size=1, max_size=30))
def test_quoting_leaves_no_formula_and_changes_nothing_else(values):
    df = pd.DataFrame({"v": pd.Series(values, dtype=object)})
    out = neutralise_formulas(df)
    assert formula_cells(out) == []
    for a, b in zip(df["v"], out["v"]):
        if is_formula_like(a):
            assert b == "'" + a
        else:
            assert b is a or b == a or (a is None and b is None)
    found = formula_cells(df)
    assert sum(f["count"] for f in found) == sum(is_formula_like(v) for v in values)


def test_write_data_warn_quote_refuse(tmp_path):
    df = _frame()
    with pytest.warns(InputWarning, match="formula-like cells.*'name'.*written as they are"):
        p = write_data(df, tmp_path / "warn.csv")
    assert "=cmd|x" in p.read_text().splitlines()[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # quoting is silent: the report says it
        p = write_data(df, tmp_path / "quote.csv", formula_guard="quote")
    rows = list(csv.reader(io.StringIO(p.read_text())))
    assert rows[1][0] == "'=cmd|x" and rows[3][0] == "'-2+3" and rows[4][0] == "-2" and rows[2][1] == "-2"
    with pytest.raises(InputError, match="refuse.csv: formula-like cells.*'name'.*csv_formula_guard = \"quote\""):
        write_data(df, tmp_path / "refuse.csv", formula_guard="refuse")
    assert not (tmp_path / "refuse.csv").exists()
    with pytest.raises(InputError, match="formula_guard"):
        write_data(df, tmp_path / "x.csv", formula_guard="strip")
    # Parquet cells are not formulas: written as they are, without a word
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = write_data(df, tmp_path / "d.parquet", formula_guard="refuse")
    assert read_data(p)[0]["name"].iloc[0] == "=cmd|x"


def test_a_formula_like_column_name_is_reported_never_renamed(tmp_path):
    df = pd.DataFrame({"=HYPERLINK(1)": ["a", "b"]})
    assert formula_cells(df) == [{"column": "=HYPERLINK(1)", "count": 1, "example": "=HYPERLINK(1)", "header": True}]
    with pytest.warns(InputWarning, match="column names as they are"):
        p = write_data(df, tmp_path / "h.csv", formula_guard="quote")
    assert p.read_text().splitlines()[0] == "=HYPERLINK(1)"
    with pytest.raises(InputError, match="the column name"):
        write_data(df, tmp_path / "h2.csv", formula_guard="refuse")


def test_matrix_csv_text_is_quoted_cell_by_cell():
    text = "original \\ released,=a,b\n=a,0.9,0.1\nb,0.1,0.9\n"
    assert guard_csv_text(text, "quote") == "original \\ released,'=a,b\n'=a,0.9,0.1\nb,0.1,0.9\n"
    clean = "original \\ released,a,b\na,0.9,0.1\nb,0.1,0.9\n"
    assert guard_csv_text(clean, "refuse") is clean
    with pytest.raises(InputError, match="2 formula-like cells"):
        guard_csv_text(text, "refuse", name="pram_v.csv")
    with pytest.warns(InputWarning):
        assert guard_csv_text(text, "warn") == text


# ---------------------------------------------------------------------- through a release
def _release(tmp_path, guard: str):
    from sdckit.microdata import Microdata
    from sdckit.registry import build_step
    from sdckit.release import Release
    from sdckit.spec import OutputSpec

    rng = np.random.default_rng(5)
    # (a label with '|' is left out: the matrix file reads 'a | b' as a joint label)
    labels = np.array(['=HYPERLINK("http://x.example","y")', "@SUM(A1:A2)", "plain", "-2+3"])
    df = pd.DataFrame({"job": labels[rng.integers(0, 4, 400)], "region": rng.integers(1, 4, 400),
                       "sex": rng.integers(1, 3, 400)})
    md = Microdata(df, key_vars=["job", "region", "sex"])
    steps = [build_step("pram", {"variables": ["job"], "min_diagonal": 0.8})]
    run = Release(md, steps, gate={"none": "a test of the CSV formula guard"}, rng=11).run()
    out = OutputSpec(tmp_path / f"rel-{guard}", data="released.csv", csv_formula_guard=guard)
    return run, out, df


def test_release_quote_writes_quoted_data_and_matrices_and_says_so(tmp_path):
    from sdckit.report.verify import verify_release

    run, out, df = _release(tmp_path, "quote")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)  # the key columns' own warnings
        paths = run.write(out)
    data = pd.read_csv(paths["data"], dtype=str)
    assert set(data["job"]) <= {"'=HYPERLINK(\"http://x.example\",\"y\")", "'@SUM(A1:A2)", "plain", "'-2+3"}
    assert formula_cells(data) == []
    matrix = next(p for p in paths["data"].parent.glob("pram_*.csv"))
    cells = [c for row in csv.reader(matrix.open()) for c in row]
    assert "'@SUM(A1:A2)" in cells and not any(is_formula_like(c) for c in cells)
    report = paths["report"].read_text()
    assert "were written with a leading" in report and 'csv_formula_guard = "quote"' in report
    # every category but "plain" is formula-like: count the released records outside it by hand
    n_released = int((run.released.frame["job"] != "plain").sum())
    assert f"data-formula-cells='{n_released + _matrix_cells(run)}'" in report
    assert verify_release(paths["data"].parent).ok  # data and matrices still agree


def _matrix_cells(run) -> int:
    text = next(t for r in run.results for k, t in r.artifacts.items() if k.endswith(".csv"))
    return sum(is_formula_like(c) for row in csv.reader(io.StringIO(text)) for c in row)


def test_release_warn_is_the_default_and_reported(tmp_path):
    run, out, _ = _release(tmp_path, "warn")
    with pytest.warns(InputWarning, match="formula-like"):
        paths = run.write(out)
    assert '"=HYPERLINK(' in paths["data"].read_text()
    report = paths["report"].read_text()
    section = report.split("id='formula-cells'")[1].split("</div>")[0]
    assert "were written as they are" in section and "<td>column job</td>" in section
    first = next(v for v in run.released.frame["job"] if is_formula_like(v))  # the example: the first one
    assert f"<td>{int((run.released.frame['job'] != 'plain').sum()):,}</td><td><code>{html.escape(first)}</code>" in section


def test_release_refuse_writes_nothing(tmp_path):
    run, out, _ = _release(tmp_path, "refuse")
    with pytest.raises(InputError, match="csv_formula_guard"):
        run.write(out)
    assert not out.directory.exists()
    assert not (tmp_path / f"{out.directory.name}-internal").exists()


def test_a_clean_release_says_no_cell_is_formula_like(tmp_path):
    from sdckit.microdata import Microdata
    from sdckit.release import Release

    md = Microdata(pd.DataFrame({"a": [1, 2, 1, 2] * 5, "b": ["x", "y"] * 10}), key_vars=["a", "b"])
    run = Release(md, [], gate={"none": "a test of the CSV formula guard"}, rng=1).run()
    paths = run.write(tmp_path / "clean")
    assert "data-formula-cells='0'" in paths["report"].read_text()


def test_spec_reads_the_guard_and_refuses_other_values(tmp_path):
    from sdckit.spec import spec_from_dict

    base = {"input": {"path": "x.csv"}, "roles": {"key_vars": ["a"]}}
    assert spec_from_dict({**base, "output": {"csv_formula_guard": "quote"}}).output.csv_formula_guard == "quote"
    assert spec_from_dict(base).output.csv_formula_guard == "warn"
    with pytest.raises(SpecError, match='output.csv_formula_guard: must be "warn", "quote" or "refuse"'):
        spec_from_dict({**base, "output": {"csv_formula_guard": "strip"}})
