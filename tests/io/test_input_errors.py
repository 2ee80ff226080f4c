"""Inputs that are not what a function takes get one SDCError line: measure_risk of something
that is not a Microdata, read_microdata of a DataFrame (built into a Microdata, as the
docstring says) or of neither, and a CSV file with another delimiter (named in the message)."""

from __future__ import annotations

import pandas as pd
import pytest

from sdckit.errors import InputError, ParameterError, SDCError, SpecError
from sdckit.io.files import read_data, read_microdata
from sdckit.microdata import Microdata
from sdckit.risk.report import measure_risk


@pytest.mark.parametrize("value", [None, "persons.csv", 3, [1, 2], pd.DataFrame({"a": [1, 2]})])
def test_measure_risk_of_a_non_microdata_is_one_sdc_error(value):
    with pytest.raises(SDCError, match="measure_risk needs a Microdata") as info:
        measure_risk(value)
    assert "\n" not in str(info.value)
    name = "None" if value is None else type(value).__name__
    assert f"got {name};" in str(info.value)


def test_measure_risk_of_a_dataframe_says_how_to_build_one():
    with pytest.raises(InputError, match=r"got DataFrame; build one with sdckit.Microdata\(frame"):
        measure_risk(pd.DataFrame({"a": [1]}))


def test_read_microdata_builds_from_a_dataframe_without_touching_it():
    df = pd.DataFrame({"region": [1, 1, 2, 2, -9, 1], "sex": ["m", "f", "m", "f", "m", "f"]})
    before = df.copy()
    md = read_microdata(df, key_vars=["region", "sex"], na_values=[-9])
    pd.testing.assert_frame_equal(df, before)  # the caller's frame is not modified
    assert isinstance(md, Microdata) and md.key_vars == ("region", "sex")
    assert md.frame["region"].isna().sum() == 1  # -9 read as missing, as for a file
    ref = Microdata(df, key_vars=["region", "sex"])
    assert measure_risk(read_microdata(df, key_vars=["region", "sex"])).summary["n_sample_uniques"] == \
        measure_risk(ref).summary["n_sample_uniques"]
    with pytest.raises(InputError, match="file_format and delimiter apply to files"):
        read_microdata(df, file_format="csv", key_vars=["region"])


@pytest.mark.parametrize("value", [3, None, b"persons.csv", ["a.csv"]])
def test_read_microdata_of_neither_a_path_nor_a_frame(value):
    with pytest.raises(InputError, match="give the path of a data file or a pandas DataFrame"):
        read_microdata(value, key_vars=["a"])


def test_read_data_of_a_frame_points_to_read_microdata():
    with pytest.raises(InputError, match="pass it to read_microdata"):
        read_data(pd.DataFrame({"a": [1]}))


# ---------------------------------------------------------------------- delimiters
def _write(path, sep: str, n_cols: int = 18):
    cols = [f"c{i}" for i in range(n_cols)]
    path.write_text(sep.join(cols) + "\n" + sep.join(str(i % 3) for i in range(n_cols)) + "\n"
                    + sep.join(str(i % 2) for i in range(n_cols)) + "\n")
    return path


@pytest.mark.parametrize("sep, shown, option, toml", [(";", "';'", "';'", '";"'), ("\t", "tab", "'tab'", '"\\t"'),
                                                      ("|", "'|'", "'|'", '"|"')])
def test_another_delimiter_is_named_with_its_count_and_the_way_to_pass_it(tmp_path, sep, shown, option, toml):
    p = _write(tmp_path / "persons.csv", sep)
    with pytest.raises(InputError) as info:
        read_data(p)
    # 18 columns: 17 delimiters in the first line (counted by hand)
    assert str(info.value) == (f"{p}: looks {shown}-delimited (found 17 {shown} and no ',' in its first line); "
                               f"pass --delimiter {option} or [input] delimiter = {toml}.")
    frame, _ = read_data(p, delimiter="tab" if sep == "\t" else sep)
    assert frame.shape == (2, 18) and frame["c4"].tolist() == [1, 0]


def test_a_one_column_file_and_a_comma_file_read_as_before(tmp_path):
    (tmp_path / "one.csv").write_text("age\n1\n2\n")
    assert read_data(tmp_path / "one.csv")[0].shape == (2, 1)
    # a comma file whose values hold ';' is still a comma file
    (tmp_path / "c.csv").write_text("a,b\nx;y,1\n")
    assert read_data(tmp_path / "c.csv")[0]["a"].tolist() == ["x;y"]


@pytest.mark.parametrize("bad", ["", ";;", "a", "1", '"', "\n"])
def test_a_bad_delimiter_uses_the_parameter_template(tmp_path, bad):
    p = _write(tmp_path / "x.csv", ";")
    with pytest.raises(ParameterError, match=r"The 'delimiter' parameter of read_data must be one character"):
        read_data(p, delimiter=bad)


def test_a_delimiter_for_a_parquet_file_is_refused(tmp_path):
    p = tmp_path / "x.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(p)
    with pytest.raises(InputError, match="a delimiter applies to CSV files only"):
        read_data(p, delimiter=";")


def test_spec_input_delimiter_reaches_the_reader(tmp_path):
    from sdckit.release import Release
    from sdckit.spec import spec_from_dict

    _write(tmp_path / "persons.csv", ";", n_cols=3)
    raw = {"input": {"path": "persons.csv", "delimiter": ";"}, "roles": {"key_vars": ["c0", "c1"]},
           "gate": {"none": "a test of the reader"}}
    spec = spec_from_dict(raw, base_dir=tmp_path)
    assert spec.delimiter == ";"
    assert list(Release.from_spec(spec).microdata.frame.columns) == ["c0", "c1", "c2"]
    with pytest.raises(SpecError, match="input.delimiter: must be one character"):
        spec_from_dict({**raw, "input": {"path": "persons.csv", "delimiter": ";;"}}, base_dir=tmp_path)


def test_cli_risk_names_the_delimiter_and_takes_the_option(tmp_path, capsys):
    from sdckit.cli import main

    p = _write(tmp_path / "persons.csv", ";", n_cols=3)
    assert main(["risk", str(p), "--keys", "c0,c1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {p}: looks ';'-delimited (found 2 ';'") and err.count("\n") == 1
    assert main(["risk", str(p), "--keys", "c0,c1", "--delimiter", ";", "--json"]) == 0
