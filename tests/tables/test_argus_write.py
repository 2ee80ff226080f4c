"""tau-Argus output layouts (WRITETABLE types 1-4, 7): each expected file below is written by
hand from tau-Argus's own writer (sdcTools/libtauargus ``TauArgus.cpp``: ``WriteCSVTable``,
``WriteCSVColumnLabels``, ``WriteCSVCell``, ``WriteCellRecord``, ``WriteSBSStaart``;
sdcTools/tauargus ``SaveTable.makeFirstLine``), following its loops for this small table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import InputError
from sdckit.tables.argus.write import argus_table_text, parse_write_options, status_codes, table_status
from sdckit.tables.table import Table


@pytest.fixture()
def sex_age():
    # cells (sex x age): F1=1, F2=1, M1=1, M2=2; totals F=2, M=3, 1=2, 2=3, Total=5
    df = pd.DataFrame({"sex": ["M", "F", "M", "F", "M"], "age": ["1", "1", "2", "2", "2"]})
    t = Table.from_microdata(df, ["sex", "age"])
    primary = t.freq == 1
    secondary = np.zeros(t.n_cells, bool)
    return t, table_status(t, primary=primary, suppressed=secondary), np.where(primary, np.nan, t.value)


def test_type1_is_the_matrix(sex_age):
    t, st, v = sex_age
    # WriteCSVColumnLabels: empty first field, the column codes; one line per row code; an
    # empty line after the layer; a suppressed cell is x
    expected = (',"Total","1","2"\n'
                '"Total",5,2,3\n'
                '"F",2,x,x\n'
                '"M",3,x,2\n'
                '\n')
    assert argus_table_text(t, v, st, 1, parse_write_options("AS+", "t")) == expected
    assert argus_table_text(t, v, st, 1, parse_write_options("QU-", "t")) == expected.replace('"', "")


def test_type1_layers_and_one_variable():
    df = pd.DataFrame({"r": ["a", "b"], "sex": ["M", "F"], "age": ["1", "2"]})
    t = Table.from_microdata(df, ["r", "sex", "age"])
    text = argus_table_text(t, t.value, table_status(t), 1, {})
    # three variables: each layer headed "Var 1,<code of r>"; empty cells are "-"
    assert text.split("\n")[:6] == ['Var 1,"Total"', ',"Total","1","2"', '"Total",2,1,1', '"F",1,-,1',
                                    '"M",1,1,-', '']
    assert text.count("Var 1,") == 3
    t1 = Table.from_microdata(df, ["sex"])
    # one variable: the labels line, then "," and the values (tau-Argus writes no final newline)
    assert argus_table_text(t1, t1.value, table_status(t1), 1, {}) == ',"Total","F","M"\n,2,1,1'


def test_type2_pivot_with_numeric_status(sex_age):
    t, st, v = sex_age
    # makeFirstLine: the variables, Freq, Status (AS+); WriteCSVCell with ShowUnsafe: an
    # unsafe cell shows its value and status 5 (CS_UNSAFE_FREQ); safe cells status 1
    expected = ('"sex","age","Freq","Status"\n'
                '"Total","Total",5,1\n"Total","1",2,1\n"Total","2",3,1\n'
                '"F","Total",2,1\n"F","1",1,5\n"F","2",1,5\n'
                '"M","Total",3,1\n"M","1",1,5\n"M","2",2,1\n')
    assert argus_table_text(t, v, st, 2, parse_write_options("AS+", "t")) == expected
    plain = argus_table_text(t, v, st, 2, {})
    assert plain.splitlines()[0] == '"sex","age","Freq"' and '"F","1",x' in plain


def test_type3_code_value_and_options(sex_age):
    t, st, v = sex_age
    text = argus_table_text(t, v, st, 3, {})
    assert text.splitlines()[:2] == ['"Total","Total",5', '"Total","1",2']  # no names line without FL+
    named = argus_table_text(t, v, st, 3, parse_write_options("FL+QU-", "t"))
    assert named.splitlines()[0] == "sex,age,Freq" and "F,1,x" in named


def test_type4_sbs(sex_age):
    t, st, v = sex_age
    # SBS: non-empty cells, the value shown even when unsafe, then ",<freq>,<letter>":
    # V safe, A frequency rule (WriteSBSStaart); HL+ adds each code's level (0: flat)
    text = argus_table_text(t, v, st, 4, parse_write_options("HL+", "t"))
    assert text.splitlines()[4] == '"F",0,"1",0,1,1,A'
    assert text.splitlines()[0] == '"Total",0,"Total",0,5,5,V'


def test_secondary_and_empty_status_codes():
    df = pd.DataFrame({"a": ["x", "y", "y"], "b": ["1", "2", "2"]})
    t = Table.from_microdata(df, ["a", "b"])
    sec = np.zeros(t.n_cells, bool)
    sec[t.cell_index("y", "Total")] = True
    st = table_status(t, suppressed=sec)
    codes = status_codes(t, st)
    assert codes[t.cell_index("y", "Total")] == 11  # CS_SECONDARY_UNSAFE
    assert codes[t.cell_index("x", "2")] == 14      # CS_EMPTY
    text = argus_table_text(t, np.where(sec, np.nan, t.value), st, 2, parse_write_options("AS+", "t"))
    assert '"x","2",-,14' in text and '"y","Total",2,11' in text


def test_intermediate_and_jj_are_refused_in_one_line(sex_age):
    t, st, v = sex_age
    for out_type, name in ((5, "intermediate"), (6, "JJ")):
        with pytest.raises(InputError, match=rf"output type {out_type} \({name}\) is not written") as info:
            argus_table_text(t, v, st, out_type, {})
        assert "\n" not in str(info.value)


def test_rounded_table_writes_values_and_originals(sex_age):
    t, _, _ = sex_age
    rounded = np.round(t.value / 2) * 2
    st = table_status(t, kind="rounding")
    text = argus_table_text(t, rounded, st, 2, parse_write_options("AS+", "t"))
    # respType 1: Freq then the original value (makeFirstLine: <response>_Orig; Freq here)
    assert text.splitlines()[0] == '"sex","age","Freq","Freq_Orig"'
    assert text.splitlines()[1] == '"Total","Total",4,5'
