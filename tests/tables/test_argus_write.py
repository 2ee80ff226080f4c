"""tau-Argus output layouts (WRITETABLE types 1-7): each expected file below is written by
hand from tau-Argus's own writer (sdcTools/libtauargus ``TauArgus.cpp``: ``WriteCSVTable``,
``WriteCSVColumnLabels``, ``WriteCSVCell``, ``WriteCellRecord``, ``WriteSBSStaart``;
``JJFormat.cpp``: ``WriteCells``, ``WriteRestrictions``; sdcTools/tauargus
``SaveTable.makeFirstLine``, ``SaveTable.opschonenJJFileforKomma``, ``TableSet.write``,
``TableSet.writeCKM``), following its loops for this small table; types 5 and 6 are also
compared byte for byte with the files tau-Argus's engine (libtauargus through pytauargus 0.6.0)
wrote for a table of the shared tau-Argus example data (tests/tables/tauargus_reference)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from sdckit.errors import InputError
from sdckit.tables.argus.write import (
    argus_table_text,
    jj_frequencies,
    jj_text,
    parse_write_options,
    status_codes,
    table_status,
    top_n_needed,
    write_argus_table,
)
from sdckit.tables.table import Table

REFERENCE = Path(__file__).resolve().parent / "tauargus_reference"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


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


def test_intermediate_and_jj_without_protection_levels_are_refused_in_one_line(sex_age):
    t, st, v = sex_age
    for out_type, name in ((5, "intermediate"), (6, "JJ")):
        with pytest.raises(InputError, match=rf"output type {out_type} \({name}\) needs the protection levels") as info:
            argus_table_text(t, v, st, out_type, {})
        assert "\n" not in str(info.value)
    levels = {"lower_protection": np.zeros(t.n_cells), "upper_protection": np.zeros(t.n_cells)}
    with pytest.raises(InputError, match="output type 8 is not a tau-Argus output type"):
        argus_table_text(t, v, st, 8, {}, extra=levels)


def _levels(t: Table, st: np.ndarray) -> dict:
    primary = st == "U"
    return {"lower_protection": np.where(primary, 1.0, 0.0), "upper_protection": np.where(primary, 2.0, 0.0)}


def test_type6_jj_by_hand(sex_age, tmp_path):
    t, st, v = sex_age
    st = st.copy()
    st[t.cell_index("M", "Total")] = "M"   # a secondary cell
    st[t.cell_index("M", "2")] = "P"       # a protected cell: status z, as an empty one
    # JJFormat.cpp WriteCells: costs scaled so that the largest (5) is 20000; bounds 0 and 1.5 * 5
    # = 7.5 printed "%.0f" (8); primary levels 1 down, 2 up. opschonenJJFileforKomma then reprints
    # the bounds with one decimal, the levels with three, lowers the primary cells' lower level
    # to value - 0 - 0.1 = 0.9 (realLPL) and raises every upper level to at least 1 (realUPL);
    # a z line is copied as written. WriteRestrictions: Sex first (over Age's codes), then Age.
    expected = ("0\n9\n"
                "0 5 20000 s 0.0 8.0 0.000 1.000 0\n"
                "1 2 8000 s 0.0 8.0 0.000 1.000 0\n"
                "2 3 12000 s 0.0 8.0 0.000 1.000 0\n"
                "3 2 8000 s 0.0 8.0 0.000 1.000 0\n"
                "4 1 4000 u 0.0 8.0 0.900 2.000 0\n"
                "5 1 4000 u 0.0 8.0 0.900 2.000 0\n"
                "6 3 12000 m 0.0 8.0 0.000 1.000 0\n"
                "7 1 4000 u 0.0 8.0 0.900 2.000 0\n"
                "8 2 8000 z 0 8 0.000 0.000 0\n"
                "6\n"
                "0 3 : 0 (-1) 3 (1) 6 (1)\n0 3 : 1 (-1) 4 (1) 7 (1)\n0 3 : 2 (-1) 5 (1) 8 (1)\n"
                "0 3 : 0 (-1) 1 (1) 2 (1)\n0 3 : 3 (-1) 4 (1) 5 (1)\n0 3 : 6 (-1) 7 (1) 8 (1)\n")
    assert argus_table_text(t, v, st, 6, {}, extra=_levels(t, st)) == expected
    out = write_argus_table(tmp_path / "t.jj", t, v, st, 6, {}, where="t", extra=_levels(t, st))
    assert out.read_text() == expected
    # beside it, as tau-Argus: <file>.frq, the contributors and the holdings (none) per cell
    assert (tmp_path / "t.jj.frq").read_text() == "5 0\n2 0\n3 0\n2 0\n1 0\n1 0\n3 0\n1 0\n2 0\n"


def test_type5_intermediate_by_hand(sex_age):
    t, st, v = sex_age
    extra = {**_levels(t, st), "realized_lower": np.where(st == "U", 0.0, t.value),
             "realized_upper": np.where(st == "U", 3.0, t.value)}
    text = argus_table_text(t, v, st, 5, parse_write_options("AR+", "t"), extra=extra)
    lines = text.splitlines()
    # TableSet.write, a frequency table: codes; value; cost; status; levels (at least MinLPL = 1
    # for a non-zero cell); AR+: the audit's interval, its width, and in percent of the value
    # (0;0;0 for a safe cell)
    assert lines[0] == '"Total";"Total";5;5;S;1;1;5;5;0;0;0;0'
    assert lines[4] == '"F";"1";1;1;U;1;2;0;3;3;100.00;200.00;300.00'
    assert len(lines) == t.n_cells
    with pytest.raises(InputError, match="AR\\+ needs the audit's intervals"):
        argus_table_text(t, v, st, 5, parse_write_options("AR+", "t"), extra=_levels(t, st))


def test_type7_ckm_by_hand(sex_age):
    t, _, _ = sex_age
    d = np.array([0, 1, -1, 0, 0, 1, 0, -1, 0], float)
    keys = np.linspace(0.1, 0.9, 9)
    st = table_status(t, kind="ckm")
    extra = {"original": t.value, "difference": d, "cell_key": keys, "cell_key_decimals": 8}
    text = argus_table_text(t, t.value + d, st, 7, parse_write_options("AO+AD+AC+", "t"), extra=extra)
    # TableSet.writeCKM: every code followed by ";", the perturbed value, ";" original,
    # ";" difference, ";" cell key with the record key's 8 decimals; no names line
    assert text.splitlines()[:2] == ['"Total";"Total";5;5;0;0.10000000', '"Total";"1";3;2;1;0.20000000']
    plain = argus_table_text(t, t.value + d, st, 7, parse_write_options("QU-", "t"), extra=extra)
    assert plain.splitlines()[2] == "Total;2;2"
    with pytest.raises(InputError, match="output type 7 \\(CKM\\) needs a table protected by the cell key"):
        argus_table_text(t, t.value, table_status(t), 7, {}, extra=extra)


def test_top_n_needed_follows_the_rules():
    from sdckit.tables.rules import DominanceRule, PPercentRule, ThresholdRule

    # TableSet.numberOfTopNNeeded: n of NK(n,k), n + 1 = 2 for P(p,1)
    assert top_n_needed([PPercentRule(15), DominanceRule(3, 75)]) == 3
    assert top_n_needed([PPercentRule(15)]) == 2 and top_n_needed([ThresholdRule(3)]) == 0


@pytest.mark.skipif(not (SHARED / "tauargus_ckm_microdata.csv").is_file(),
                    reason="../shared/data (tau-Argus example files, EUPL) is absent")
def test_types_5_and_6_equal_tau_argus_engine_output():
    from sdckit.tables.argus import read_rda
    from sdckit.tables.rules import DominanceRule, PPercentRule, primary_cells

    meta = read_rda(SHARED / "tauargus_meta" / "microdata.rda")
    micro = pd.read_csv(SHARED / "tauargus_ckm_microdata.csv", dtype=str)
    micro["Savings"] = micro["Savings"].astype(float)
    t = Table.from_microdata(micro, ["Sex", "Age"], response="Savings", hierarchies={"Age": meta.hierarchy("Age")})
    rules = [PPercentRule(15), DominanceRule(3, 75)]  # P(15,1)|NK(3,75), as make_reference.py
    prim = primary_cells(t, rules)
    st = table_status(t, primary=prim.sensitive)
    extra = {"lower_protection": prim.lower, "upper_protection": prim.upper, "n_top": top_n_needed(rules)}
    for opts, name in (("", "savings_intermediate.txt"), ("SO+", "savings_intermediate_so.txt"),
                       ("HI+", "savings_intermediate_hi.txt")):
        assert argus_table_text(t, t.value, st, 5, parse_write_options(opts, "t"), extra=extra, decimals=0) == \
            (REFERENCE / name).read_text()
    for trivial, name in ((False, "savings_raw.jj"), (True, "savings_raw_tr.jj")):
        raw = jj_text(t, st, lower_protection=prim.lower, upper_protection=prim.upper, decimals=0, cleaned=False,
                      trivial=trivial)
        assert raw == (REFERENCE / name).read_text()
        assert jj_frequencies(t, trivial) == (REFERENCE / f"{name}.frq").read_text()


def test_rounded_table_writes_values_and_originals(sex_age):
    t, _, _ = sex_age
    rounded = np.round(t.value / 2) * 2
    st = table_status(t, kind="rounding")
    text = argus_table_text(t, rounded, st, 2, parse_write_options("AS+", "t"))
    # respType 1: Freq then the original value (makeFirstLine: <response>_Orig; Freq here)
    assert text.splitlines()[0] == '"sex","age","Freq","Freq_Orig"'
    assert text.splitlines()[1] == '"Total","Total",4,5'


@settings(max_examples=25, deadline=None)
@given(hst.integers(0, 2**32 - 1), hst.integers(1, 3))
def test_jj_relations_hold_on_the_table_and_cover_every_parent(seed, n_dims):
    """Every JJ relation says parent = sum of children on the table's own values, and there is
    one per (dimension, code with children, combination of the other dimensions' codes)."""
    rng = np.random.default_rng(seed)
    n = 60
    df = pd.DataFrame({f"d{k}": rng.choice(list("abcd")[: 2 + k], n) for k in range(n_dims)})
    df["v"] = rng.integers(1, 50, n).astype(float)
    hier = None
    if n_dims >= 2:  # a two-level hierarchy on d0: a, b under g1; c under g2 (codes in pre-order)
        from sdckit.tables.table import Hierarchy

        hier = {"d0": Hierarchy(["Total", "g1", "a", "b", "g2", "c"], [-1, 0, 1, 1, 0, 4])}
        df["d0"] = rng.choice(list("abc"), n)
    t = Table.from_microdata(df, [f"d{k}" for k in range(n_dims)], response="v", hierarchies=hier)
    text = jj_text(t, table_status(t), lower_protection=np.zeros(t.n_cells), upper_protection=np.zeros(t.n_cells))
    lines = text.splitlines()
    assert lines[:2] == ["0", str(t.n_cells)]
    rel = lines[3 + t.n_cells:]
    assert int(lines[2 + t.n_cells]) == len(rel)
    expected = sum(sum(1 for ch in h.children if ch) * (t.n_cells // len(h)) for h in t.hierarchies)
    assert len(rel) == expected
    for r in rel:
        head, body = r.split(" : ")
        terms = body.split()
        cells = [int(x) for x in terms[0::2]]
        signs = [int(x.strip("()")) for x in terms[1::2]]
        assert int(head.split()[1]) == len(cells) and signs[0] == -1 and set(signs[1:]) == {1}
        assert t.value[cells[0]] == pytest.approx(sum(t.value[c] for c in cells[1:]))


@settings(max_examples=25, deadline=None)
@given(hst.integers(0, 2**32 - 1), hst.integers(1, 2))
def test_jj_tr_plus_drops_only_children_and_its_relations_hold(seed, n_dims):
    """TR+ (libtauargus ``JJFormat.cpp`` ``WriteCells`` / ``GetRange`` with ``WithBogus``;
    ``Variable.cpp``: a code is bogus when it is its parent's only child): the cells of only
    children are left out, the rest renumbered in table order, and every relation, read through
    that numbering, says parent = sum of children on the table's own values; a parent whose only
    child has children sums those (g3 = d + e below, skipping h)."""
    from sdckit.tables.table import Hierarchy

    rng = np.random.default_rng(seed)
    n = 80
    # Total > g1 > {a, b}; Total > g2 > c (c only child); Total > g3 > h > {d, e} (h only child)
    hier = {"d0": Hierarchy(["Total", "g1", "a", "b", "g2", "c", "g3", "h", "d", "e"],
                            [-1, 0, 1, 1, 0, 4, 0, 6, 7, 7])}
    df = pd.DataFrame({"d0": rng.choice(list("abcde"), n)})
    if n_dims == 2:
        df["d1"] = rng.choice(list("xy"), n)
    df["v"] = rng.integers(1, 50, n).astype(float)
    t = Table.from_microdata(df, [f"d{k}" for k in range(n_dims)], response="v", hierarchies=hier)
    h0 = t.hierarchies[0]
    trivial = np.zeros(len(h0), bool)
    trivial[[list(h0.codes).index("c"), list(h0.codes).index("h")]] = True  # by hand from the tree above
    kept = [i for i in range(t.n_cells) if not trivial[np.unravel_index(i, t.shape)[0]]]
    text = jj_text(t, table_status(t), lower_protection=np.zeros(t.n_cells),
                   upper_protection=np.zeros(t.n_cells), trivial=True)
    lines = text.splitlines()
    assert lines[:2] == ["0", str(len(kept))]
    for j, i in enumerate(kept):
        assert lines[2 + j].split()[:2] == [str(j), f"{t.value[i]:.0f}"]
    rel = lines[3 + len(kept):]
    assert int(lines[2 + len(kept)]) == len(rel)
    n_other = 1 if n_dims == 1 else len(t.hierarchies[1])
    # d0: Total, g1, g2? no (its only child is gone), g3 (-> d, e): 3 per d1 code; d1: one per kept d0 code
    assert len(rel) == 3 * n_other + (0 if n_dims == 1 else len(h0) - 2)
    heads = []
    for r in rel:
        head, body = r.split(" : ")
        cells = [kept[int(x)] for x in body.split()[0::2]]
        heads.append(cells[0])
        assert t.value[cells[0]] == pytest.approx(sum(t.value[c] for c in cells[1:]))
    g3 = t.cell_index(*(["g3"] + (["Total"] if n_dims == 2 else [])))
    assert g3 in heads
    assert jj_frequencies(t, True).count("\n") == len(kept)
