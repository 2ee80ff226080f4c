"""SPSS/Stata delivery: a labelled file with awkward names is read, recoded, PRAMmed, written
as .sav/.dta and read back with pyreadstat (an independent reader): names legalised with the
mapping published, labels right, missing-value codes kept, integer codes still integers."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from sdckit.io.files import read_data, write_data
from sdckit.io.labels import legal_names
from sdckit.release import protect

AGE_LABELS = {1: "0-15", 2: "16-24", 3: "25-34", 4: "35-44", 5: "45-54", 6: "55-64", 7: "65+",
              -9: "refused"}
MAR_LABELS = {1: "single", 2: "married", 3: "divorced"}
REGION_LABELS = {1: "north", 2: "south", 3: "east", 4: "west"}


def labelled_frame(n=400, seed=7):
    rng = np.random.default_rng(seed)
    age = rng.integers(1, 8, n).astype(float)
    age[:6] = -9  # user-missing code "refused"
    return pd.DataFrame({"age group": age, "marital-status": rng.integers(1, 4, n).astype(float),
                         "region": rng.integers(1, 5, n).astype(float),
                         "1st visit": rng.integers(0, 2, n).astype(float)})


def write_labelled_input(path: Path, fmt: str) -> pd.DataFrame:
    """The input file, built with pyreadstat under names pyreadstat accepts, then the names a
    newcomer's file would have are kept in the variable labels (SPSS/Stata refuse them as names)."""
    df = labelled_frame()
    legal = df.rename(columns={"age group": "age_group", "marital-status": "marital_status",
                               "1st visit": "v1st_visit"})
    labels = {"age_group": AGE_LABELS, "marital_status": MAR_LABELS, "region": REGION_LABELS}
    if fmt == "sav":
        pyreadstat.write_sav(legal, str(path), variable_value_labels=labels,
                             column_labels={"age_group": "age group"},
                             missing_ranges={"age_group": [-9]})
    else:
        labels = {k: {c: v for c, v in d.items() if c >= 0} for k, d in labels.items()}
        pyreadstat.write_dta(legal, str(path), variable_value_labels=labels,
                             column_labels={"age_group": "age group"})
    return legal


def spec_text(input_name: str, out_name: str) -> str:
    return f"""
[input]
path = "{input_name}"
[roles]
key_vars = ["age_group", "marital_status", "region"]
[run]
seed = 11
[[steps]]
method = "recode"
variable = "age_group"
mapping = {{ "young" = [1, 2, 3], "old" = [4, 5, 6, 7] }}
others = "keep"
[[steps]]
method = "pram"
variables = ["marital_status"]
matrix = {{ type = "invariant" }}
min_diagonal = 0.8
[gate]
min_diagonal = 0.8
none = "a test of value labels"
[output]
directory = "rel"
data = "{out_name}"
"""


@pytest.mark.parametrize("fmt", ["sav", "dta"])
def test_release_round_trip_keeps_labels_codes_and_missing(tmp_path, fmt):
    src = tmp_path / f"survey.{fmt}"
    original = write_labelled_input(src, fmt)
    spec = tmp_path / "release.toml"
    spec.write_text(spec_text(src.name, f"survey_released.{fmt}"))
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        run, paths = protect(spec)
    finally:
        os.chdir(cwd)
    reader = pyreadstat.read_sav if fmt == "sav" else pyreadstat.read_dta
    out = paths["data"]
    kw = {"user_missing": True} if fmt == "sav" else {}
    df, m = reader(str(out), **kw)
    assert df.shape[0] == original.shape[0]
    labels = m.variable_value_labels
    # PRAMmed variable: same categories, labels still attached and right
    assert labels["marital_status"] == MAR_LABELS
    assert set(df["marital_status"].unique()) <= set(MAR_LABELS)
    # untouched variable keeps its labels
    assert labels["region"] == REGION_LABELS
    # recoded variable: the old labels (1 = "0-15", ...) are gone; its values are the new labels
    assert "age_group" not in labels
    assert set(df["age_group"].unique()) <= {"young", "old", "-9"} | ({"-9.0"} if fmt == "sav" else set())
    # integer codes are written as integers (F format without decimals / Stata integer type)
    types = m.original_variable_types
    if fmt == "sav":
        assert re.fullmatch(r"F\d+\.0", types["region"]), types["region"]
        # the user-missing declaration is kept for the (recoded, now text) column only if still
        # numeric; region had none
        assert m.missing_ranges.get("region") is None
    else:
        assert m.readstat_variable_types["region"].startswith("int"), m.readstat_variable_types
        assert pd.api.types.is_integer_dtype(df["region"].dtype)
    assert np.all(df["region"].to_numpy() == np.round(df["region"].to_numpy()))


def test_sav_user_missing_codes_are_kept_through_a_release(tmp_path):
    """A PRAMmed release that does not touch the user-missing column writes the -9 codes and
    their declaration back (checked by reading with user_missing=True)."""
    src = tmp_path / "survey.sav"
    original = write_labelled_input(src, "sav")
    spec = tmp_path / "release.toml"
    text = spec_text(src.name, "out.sav")
    text = re.sub(r'\[\[steps\]\]\nmethod = "recode".*?others = "keep"\n', "", text, flags=re.S)
    spec.write_text(text)
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        _, paths = protect(spec)
    finally:
        os.chdir(cwd)
    df, m = pyreadstat.read_sav(str(paths["data"]), user_missing=True)
    assert m.missing_ranges["age_group"] == [{"lo": -9.0, "hi": -9.0}]
    # the same number of -9 codes as in the input (rows are shuffled, counts are not)
    assert int((df["age_group"] == -9).sum()) == int((original["age_group"] == -9).sum()) == 6
    assert m.variable_value_labels["age_group"] == AGE_LABELS
    # and without user_missing an ordinary reader sees them as missing
    df2, _ = pyreadstat.read_sav(str(paths["data"]))
    assert int(df2["age_group"].isna().sum()) == 6


@pytest.mark.parametrize("fmt", ["sav", "dta"])
def test_awkward_names_are_legalised_with_a_published_mapping(tmp_path, fmt):
    rng = np.random.default_rng(3)
    n = 120
    df = pd.DataFrame({"age group": rng.integers(1, 5, n), "marital-status": rng.integers(1, 4, n),
                       "1st visit": rng.integers(0, 2, n), "BY": rng.integers(0, 2, n),
                       "with": rng.integers(0, 2, n),
                       "a" * 70: rng.integers(0, 2, n), "age.group": rng.integers(0, 3, n),
                       "Région": rng.integers(1, 4, n)})
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    (tmp_path / "release.toml").write_text(f"""
[input]
path = "in.csv"
[roles]
key_vars = ["age group", "marital-status"]
[run]
seed = 5
[[steps]]
method = "pram"
variables = ["marital-status"]
matrix = {{ type = "invariant" }}
min_diagonal = 0.8
[gate]
none = "a test of column names"
[output]
directory = "rel"
data = "out.{fmt}"
""")
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        _, paths = protect(tmp_path / "release.toml")
    finally:
        os.chdir(cwd)
    mapping_file = paths["data"].parent / "column_names.csv"
    assert mapping_file.exists()
    with open(mapping_file, newline="") as fh:
        rows = list(csv.DictReader(fh))
    mapping = {r["original_name"]: r["delivered_name"] for r in rows}
    assert list(mapping) == list(df.columns)
    reader = pyreadstat.read_sav if fmt == "sav" else pyreadstat.read_dta
    back, m = reader(str(paths["data"]))
    assert sorted(back.columns) == sorted(mapping.values())
    # every original name is kept as the delivered variable's label
    for orig, new in mapping.items():
        if new != orig:
            assert m.column_names_to_labels[new] == orig
    # the values arrive under the mapped names (rows shuffled: compare the value counts)
    for orig, new in mapping.items():
        if orig != "marital-status":
            assert back[new].value_counts().sort_index().tolist() == df[orig].value_counts().sort_index().tolist()
    # the mapping is certified, and verify and estimate read the release under the original names
    from sdckit.cli import main

    folder = paths["data"].parent
    cert = json.loads((folder / "certificate.json").read_text())
    assert "column_names.csv" in [f["name"] for f in cert["files"]]
    assert main(["verify", str(folder), "--json"]) == 0
    assert main(["estimate", str(paths["data"]), "--matrix", str(folder / "pram_marital-status.csv"), "--json"]) == 0


@pytest.mark.parametrize("fmt", ["sav", "dta"])
def test_legal_names_rules(fmt):
    cols = ["age group", "marital-status", "1st", "BY", "by", "with", "x" * 80, "_n", "ok_name",
            "ok_name ", "Région", "", "a.b", "all"]
    mapping = legal_names(cols, fmt)
    names = list(mapping.values())
    if fmt == "sav":
        pat = re.compile(r"[A-Za-z][A-Za-z0-9_.@#$]*")
        reserved = {"ALL", "AND", "BY", "EQ", "GE", "GT", "LE", "LT", "NE", "NOT", "OR", "TO", "WITH"}
        for n in names:
            assert pat.fullmatch(n) and len(n.encode()) <= 64 and n.upper() not in reserved, n
        assert len({n.upper() for n in names}) == len(names)  # SPSS names ignore case
    else:
        pat = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
        for n in names:
            assert pat.fullmatch(n) and n not in {"_n", "with", "in", "if", "int"}, n
        assert len(set(names)) == len(names)
    assert mapping["ok_name"] == "ok_name"  # a legal name is never renamed
    assert legal_names(cols, "csv") == {c: c for c in cols}


def test_dta_round_trip_of_write_data_keeps_integers_and_labels(tmp_path):
    src = tmp_path / "a.dta"
    write_labelled_input(src, "dta")
    df, meta = read_data(src)
    out = write_data(df, tmp_path / "b.dta", meta=meta)
    back, m = pyreadstat.read_dta(str(out))
    assert m.variable_value_labels["region"] == REGION_LABELS
    assert pd.api.types.is_integer_dtype(back["region"].dtype)


def test_csv_with_na_values_keeps_integer_codes(tmp_path):
    src = tmp_path / "a.csv"
    src.write_text("x,y\n1,2\n-9,3\n4,5\n")
    df, meta = read_data(src, na_values=[-9])
    for fmt in ("csv", "sav", "dta"):
        out = write_data(df, tmp_path / f"b.{fmt}", meta=meta)
        if fmt == "csv":
            assert out.read_text() == "x,y\n1,2\n,3\n4,5\n"
        else:
            back, m = (pyreadstat.read_sav if fmt == "sav" else pyreadstat.read_dta)(str(out))
            assert back["x"].isna().tolist() == [False, True, False]
            t = m.original_variable_types["x"]
            if fmt == "sav":
                assert re.fullmatch(r"F\d+\.0", t), t
            else:
                assert m.readstat_variable_types["x"].startswith("int"), m.readstat_variable_types


def test_sas7bdat_is_read(tmp_path):
    """pyreadstat cannot write SAS files (nor catalogs), so reading is checked on the sample
    file shipped with R's haven package where it is installed."""
    sample = Path("/usr/lib/R/site-library/haven/examples/iris.sas7bdat")
    if not sample.exists():
        pytest.skip("no .sas7bdat sample on this machine (pyreadstat cannot write SAS files)")
    df, meta = read_data(sample)
    ref, _ = pyreadstat.read_sas7bdat(str(sample))
    assert df.shape == ref.shape == (150, 5)
    assert meta.file_format == "sas7bdat"
