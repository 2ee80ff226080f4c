"""Reading and writing data files: round trips with labels, atomic writes, clear errors."""

import hashlib
import os

import numpy as np
import pandas as pd
import pytest

from sdckit import DatasetMeta, InputError
from sdckit.io import files
from sdckit.io.atomic import atomic_write_with
from sdckit.io.files import read_data, read_microdata, write_data


def frame():
    return pd.DataFrame({"sex": [1, 2, 1, 2, 1], "age": [20.5, 30.0, 41.0, 50.0, 66.0],
                         "region": ["north", "south", "north", "east", "south"]})


META = DatasetMeta(column_labels={"sex": "Sex of respondent", "age": "Age in years"},
                   value_labels={"sex": {1: "male", 2: "female"}})


@pytest.mark.parametrize("ext", ["csv", "parquet", "sav", "dta"])
def test_round_trip_values(tmp_path, ext):
    path = tmp_path / f"d.{ext}"
    write_data(frame(), path, meta=META)
    back, meta = read_data(path)
    # SPSS and Stata store numbers as doubles: compare values, not dtypes
    pd.testing.assert_frame_equal(back, frame(), check_dtype=False)
    assert meta.source == str(path) and meta.file_format == ext


@pytest.mark.parametrize("ext", ["parquet", "sav", "dta"])
def test_round_trip_keeps_labels(tmp_path, ext):
    path = tmp_path / f"d.{ext}"
    write_data(frame(), path, meta=META)
    _, meta = read_data(path)
    assert dict(meta.column_labels) == dict(META.column_labels)
    assert {float(k): v for k, v in meta.value_labels["sex"].items()} == {1.0: "male", 2.0: "female"}
    # and through a second generation
    path2 = tmp_path / f"e.{ext}"
    md = read_microdata(path, key_vars=["sex"])
    write_data(md, path2)
    _, meta2 = read_data(path2)
    assert dict(meta2.column_labels) == dict(META.column_labels)


def test_na_values(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame({"a": [1, -9, 2], "b": ["x", "-9", "y"]}).to_csv(path, index=False)
    df, _ = read_data(path, na_values=[-9])
    assert df["a"].isna().tolist() == [False, True, False]
    assert df["b"].isna().tolist() == [False, True, False]


def test_failure_mid_write_leaves_nothing(tmp_path, monkeypatch):
    """A writer that dies halfway: no partial target, no temporary file, old file intact."""
    target = tmp_path / "out.csv"
    target.write_text("old content\n")

    def dying_writer(tmp):
        with open(tmp, "w") as fh:
            fh.write("half a fi")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write_with(target, dying_writer)
    assert target.read_text() == "old content\n"
    assert os.listdir(tmp_path) == ["out.csv"]


def test_row_count_check_refuses_short_file(tmp_path, monkeypatch):
    """If the written file does not hold every record, nothing is written."""
    monkeypatch.setattr(files, "count_records", lambda path, fmt: 3)
    target = tmp_path / "out.csv"
    with pytest.raises(InputError, match="wrote 3 records but the data hold 5"):
        write_data(frame(), target)
    assert not target.exists() and os.listdir(tmp_path) == []


def test_refuses_to_overwrite_input(tmp_path):
    path = tmp_path / "in.csv"
    frame().to_csv(path, index=False)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    md = read_microdata(path, key_vars=["sex"])
    with pytest.raises(InputError, match="refusing to write over the input file"):
        write_data(md, path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("content, pattern", [
    (None, "no such file"),
    ("", "the file is empty"),
    ("a,b\n", "header but no records"),
])
def test_bad_files(tmp_path, content, pattern):
    path = tmp_path / "x.csv"
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputError, match=pattern):
        read_data(path)


def test_unknown_suffix(tmp_path):
    with pytest.raises(InputError, match="cannot tell the file format"):
        read_data(tmp_path / "x.xlsx")


def test_garbage_sav_is_a_clear_error(tmp_path):
    path = tmp_path / "x.sav"
    path.write_bytes(b"this is not an SPSS file at all" * 10)
    with pytest.raises(InputError, match="cannot be read as sav"):
        read_data(path)


def test_sas7bdat_reader_is_wired(tmp_path):
    """SAS files are read through pyreadstat; a broken one gets the file's name in the error."""
    path = tmp_path / "x.sas7bdat"
    path.write_bytes(np.random.default_rng(0).bytes(2048))
    with pytest.raises(InputError, match=r"x\.sas7bdat: cannot be read as sas7bdat"):
        read_data(path)
