"""tau-Argus files: .rda/.hrc/.cdl readers, data files, .arb batch runs and the output formats."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import InputError
from sdckit.tables.argus import parse_arb, read_argus_data, read_cdl, read_rda, run_arb
from sdckit.tables.audit import audit
from sdckit.tables.table import Table

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
META = SHARED / "tauargus_meta"
needs_shared = pytest.mark.skipif(not (META / "microdata.rda").is_file(),
                                  reason="../shared/data/tauargus_meta (tau-Argus example files, EUPL) is absent")

MICRO_ARB = """// written from the tau-Argus manual's batch examples (section 5.5)
<OPENMICRODATA> "micro.csv"
<OPENMETADATA> "microdata.rda"
<SPECIFYTABLE> "Sex""Age"|||
<SAFETYRULE> FREQ(10,20)
<SPECIFYTABLE> "Sex""Age"|"Savings"||
<SAFETYRULE> P(15,1)|NK(3,75)
<READMICRODATA>
<SUPPRESS> MOD(1,5,1,0,0)
<WRITETABLE> (1,1,AS+,"t1_mod.csv")
<WRITETABLE> (1,2,AS+,"t1_piv.csv")
<SUPPRESS> CKM(1)
<WRITETABLE> (1,7,AO+AD+AC+,"t1_ckm.csv")
<SUPPRESS> OPT(2,60)
<WRITETABLE> (2,2,AS+FL+,"t2_opt.csv")
<SUPPRESS> GH(2)
<WRITETABLE> (2,1,AS+,"t2_gh.csv")
<SUPPRESS> RND(1,5)
<WRITETABLE> (1,3,,"t1_rnd.csv")
<GOINTERACTIVE>
"""


@pytest.fixture()
def work(tmp_path):
    for f in META.iterdir():
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(SHARED / "tauargus_ckm_microdata.csv", tmp_path / "micro.csv")
    shutil.copy(SHARED / "tauargus_pp_table.csv", tmp_path / "pp.csv")
    return tmp_path


@needs_shared
def test_read_rda_microdata_and_tabular():
    m = read_rda(META / "microdata.rda")
    assert m.names == ["Sex", "Age", "HighIncome", "Savings", "Weigt", "Key"] and m.separator == ";"
    assert m["Key"].role == "record_key" and m["Weigt"].role == "weight" and m["Savings"].role == "numeric"
    assert m["Savings"].arg("CKM") == "T(3)" and m["Key"].arg("PFILE") == "ptab_freq.txt"
    h = m.hierarchy("Age")
    assert h.codes == ("Total", "A1", "1", "A2", "2", "3", "4", "5", "6")  # from dim_age.hrc, by hand
    pp = read_rda(META / "pp.rda")
    assert [v.name for v in pp.by_role("top")] == ["Top1", "Top2"] and pp["StatusVar"].role == "status"
    assert pp["FreqVar"].role == "frequency" and pp["Region"].arg("TOTCODE") == "Total"
    r = pp.hierarchy("Region")
    assert r.codes[:5] == ("Total", "Nr", "1", "2", "3") and len(r) == 17
    assert r.parent[r.index["10"]] == r.index["Ws"]
    cdl = read_cdl(META / "region.cdl")
    assert len(cdl) == 16 and cdl["8"] == "Noord-Holland" and cdl["Zd"] == "South"


def test_fixed_width_data_and_hierlevels(tmp_path):
    (tmp_path / "m.rda").write_text("Ind 1 3 999\n  <RECODEABLE>\n  <HIERARCHICAL>\n  <HIERLEVELS> 1 1 1\n"
                                    "Val 4 5\n  <NUMERIC>\n")
    (tmp_path / "m.asc").write_text("111   10\n112   20\n121    5\n211    7\n")
    meta = read_rda(tmp_path / "m.rda")
    df = read_argus_data(tmp_path / "m.asc", meta)
    assert df["Ind"].tolist() == ["111", "112", "121", "211"] and df["Val"].tolist() == ["10", "20", "5", "7"]
    h = meta.hierarchy("Ind", codes=df["Ind"])
    # by hand: 1 -> 11 -> {111, 112}, 1 -> 12 -> {121}, 2 -> 21 -> {211}
    assert h.codes == ("Total", "1", "11", "111", "112", "12", "121", "2", "21", "211")
    t = Table.from_microdata(df, ["Ind"], response="Val", hierarchies={"Ind": h})
    assert t.value[t.cell_index("1")] == 35 and t.value[t.cell_index("Total")] == 42


def _matrix_cells(path: Path) -> dict[tuple[str, str], str]:
    """A two-variable tau-Argus matrix (output type 1): {(row code, column code): cell text}."""
    lines = [ln for ln in path.read_text().splitlines() if ln]
    cols = [c.strip('"') for c in lines[0].split(",")[1:]]
    out = {}
    for ln in lines[1:]:
        row, *cells = ln.split(",")
        for col, text in zip(cols, cells, strict=True):
            out[(row.strip('"'), col)] = text
    return out


@needs_shared
def test_batch_run_writes_files_and_patterns_pass_audit(work):
    (work / "job.arb").write_text(MICRO_ARB)
    out = run_arb(work / "job.arb")
    names = [Path(f).name for f in out["files"]]
    assert names == ["t1_mod.csv", "t1_piv.csv", "t1_ckm.csv", "t2_opt.csv", "t2_gh.csv", "t1_rnd.csv"]
    methods = [j.get("method") for j in out["jobs"] if j["command"] == "<SUPPRESS>"]
    assert methods == ["MOD", "CKM", "OPT", "GH", "RND"]
    assert all(j["audit_ok"] for j in out["jobs"] if j.get("method") in ("MOD", "OPT", "GH"))
    assert any("GOINTERACTIVE" in n for n in out["notes"])
    # independent check of a written pattern: read the file back, audit the suppressed cells
    micro = pd.read_csv(work / "micro.csv", dtype=str)
    meta = read_rda(work / "microdata.rda")
    t = Table.from_microdata(micro, ["Sex", "Age"], hierarchies={"Sex": meta.hierarchy("Sex"),
                                                                 "Age": meta.hierarchy("Age")})
    cells = _matrix_cells(work / "t1_mod.csv")  # type 1: tau-Argus's matrix (Sex rows, Age columns)
    assert len(cells) == t.n_cells == 45
    sup = np.zeros(t.n_cells, bool)
    for (sex, age), text in cells.items():
        c = t.cell_index(sex, age)
        if text not in ("x", "-"):
            assert float(text) == t.value[c]
        sup[c] = text == "x"
    assert sup.any() and audit(t, sup).ok
    # primary cells (FREQ(10,20): 0 < count < 10) carry tau-Argus's status 5 (CS_UNSAFE_FREQ) in
    # the pivot file of the same table (type 2, AS+), by hand
    piv = pd.read_csv(work / "t1_piv.csv", dtype=str)
    u = {(r.Sex, r.Age) for r in piv.itertuples() if r.Status == "5"}
    assert u == {t.cell_codes(c) for c in range(t.n_cells) if 0 < t.freq[c] < 10}
    assert {(r.Sex, r.Age) for r in piv.itertuples() if r.Status in ("5", "11")} == \
        {t.cell_codes(c) for c in np.flatnonzero(sup)}
    # CKM file: perturbed = original + difference; the grand total's cell key by exact decimal sum
    # (tau-Argus's TableSet.writeCKM: fields separated by ";", codes quoted, no names line)
    ck = pd.read_csv(work / "t1_ckm.csv", sep=";", header=None, names=["Sex", "Age", "value", "orig", "diff", "key"],
                     dtype={"Sex": str, "Age": str})
    assert (ck.value == ck.orig + ck["diff"]).all()
    s = sum((Decimal(x) for x in micro["Key"]), Decimal(0))
    tot = ck[(ck.Sex == "Total") & (ck.Age == "Total")].iloc[0]
    assert abs(float(s - int(s)) - tot.key) < 1e-9
    pivot = pd.read_csv(work / "t2_opt.csv", dtype=str)
    assert list(pivot.columns) == ["Sex", "Age", "Savings", "Status"]  # tau-Argus's first line
    rnd = pd.read_csv(work / "t1_rnd.csv", header=None, names=["Sex", "Age", "value"])
    assert (rnd.value % 5 == 0).all()


@needs_shared
def test_tabular_batch(work):
    (work / "pp.arb").write_text('<OPENTABLEDATA>  "pp.csv"\n<OPENMETADATA>   "pp.rda"\n'
                                 '<SPECIFYTABLE>   "Size""Region"|"Var2"|"Var2_Shadow"|"Var2"\n'
                                 "<SAFETYRULE> FREQ(3,30)\n<READTABLE> 1T\n<SUPPRESS> MOD(1,5,1,0,0)\n"
                                 '<WRITETABLE> (1,1,AS+,"pp_out.csv")\n')
    out = run_arb(work / "pp.arb")
    sup = [j for j in out["jobs"] if j["command"] == "<SUPPRESS>"][0]
    assert sup["audit_ok"] and sup["n_primary"] > 0
    cells = _matrix_cells(work / "pp_out.csv")
    assert sum(v == "x" for v in cells.values()) == sup["n_primary"] + sup["n_secondary"]
    assert any("not additive" in n for n in out["notes"])  # the shipped table's totals do not add up


@needs_shared
def test_linked_tables_in_batch(work):
    (work / "l.arb").write_text('<OPENMICRODATA> "micro.csv"\n<OPENMETADATA> "microdata.rda"\n'
                                '<SPECIFYTABLE> "Sex""Age"|||\n<SAFETYRULE> FREQ(15,20)\n'
                                '<SPECIFYTABLE> "Sex""HighIncome"|||\n<SAFETYRULE> FREQ(15,20)\n'
                                "<READMICRODATA>\n<SUPPRESS> MOD(0,5)\n"
                                '<WRITETABLE> (1,1,AS+,"l1.csv")\n<WRITETABLE> (2,1,AS+,"l2.csv")\n')
    out = run_arb(work / "l.arb")
    j = [x for x in out["jobs"] if x["command"] == "<SUPPRESS>"][0]
    assert j["linked"] and j["audit_ok"] and j["consistent"] and j["n_shared"] > 0


@pytest.mark.parametrize("line, text, needle", [
    ("<TABLEFORMAT> 1, Size", "TABLEFORMAT", "<TABLEFORMAT> is not supported"),
    ("<HOLDINGS> \"x.hst\", 1", "HOLDINGS", "<HOLDINGS> is not supported"),
])
def test_unsupported_command_named_with_line(tmp_path, line, text, needle):
    f = tmp_path / "x.arb"
    f.write_text(f'// header\n<OPENMICRODATA> "a.csv"\n{line}\n')
    with pytest.raises(InputError, match=rf"x\.arb: line 3: {needle}"):
        parse_arb(f)


@needs_shared
def test_unsupported_suppress_method_and_output_type(work):
    (work / "b.arb").write_text('<OPENMICRODATA> "micro.csv"\n<OPENMETADATA> "microdata.rda"\n'
                                '<SPECIFYTABLE> "Sex""Age"|||\n<SAFETYRULE> FREQ(10,20)\n<READMICRODATA>\n'
                                "<SUPPRESS> XYZ(1)\n")
    with pytest.raises(InputError, match=r"b\.arb: line 6: <SUPPRESS> XYZ is not supported"):
        run_arb(work / "b.arb")
    (work / "c.arb").write_text('<OPENMICRODATA> "micro.csv"\n<OPENMETADATA> "microdata.rda"\n'
                                '<SPECIFYTABLE> "Sex""Age"|||\n<SAFETYRULE> FREQ(10,20)\n<READMICRODATA>\n'
                                '<SUPPRESS> RND(1,5)\n<WRITETABLE> (1,5,AS+,"o.txt")\n')
    with pytest.raises(InputError, match=r"c\.arb: line 7: output type 5 \(intermediate\) needs the protection"):
        run_arb(work / "c.arb")


@needs_shared
def test_batch_writes_intermediate_and_jj_files(work):
    (work / "j.arb").write_text('<OPENMICRODATA> "micro.csv"\n<OPENMETADATA> "microdata.rda"\n'
                                '<SPECIFYTABLE> "Sex""Age"|"Savings"||\n<SAFETYRULE> P(15,1)|NK(3,75)\n'
                                '<READMICRODATA>\n<SUPPRESS> OPT(1,60)\n<WRITETABLE> (1,5,AR+,"t.txt")\n'
                                '<WRITETABLE> (1,6,,"t.jj")\n')
    out = run_arb(work / "j.arb")
    assert [Path(f).name for f in out["files"]] == ["t.txt", "t.jj"] and (work / "t.jj.frq").is_file()
    lines = (work / "t.txt").read_text().splitlines()
    assert len(lines) == 45  # every cell of Sex (5 codes, dim_sex.hrc) x Age (9 codes, dim_age.hrc)
    fields = [ln.split(";") for ln in lines]
    # codes, value, contributors, shadow, cost, top 3 (NK(3,75)), status, levels, audit (6)
    assert {len(f) for f in fields} == {2 + 4 + 3 + 1 + 2 + 6}
    status = [f[9] for f in fields]
    assert "U" in status and "M" in status and set(status) <= {"S", "U", "M"}
    jj = (work / "t.jj").read_text().splitlines()
    # relations: Sex's 3 codes with children over Age's 9 codes, Age's 3 over Sex's 5
    assert jj[:2] == ["0", "45"] and int(jj[47]) == len(jj) - 48 == 3 * 9 + 3 * 5
    letters = [ln.split()[3] for ln in jj[2:47]]
    assert [s.lower() for s in status] == letters


@needs_shared
def test_cli_argus_json(work, capsys):
    from sdckit.cli import main
    (work / "job.arb").write_text(MICRO_ARB)
    code = main(["table", "--argus", str(work / "job.arb"), "--json"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    out = json.loads(cap.out)  # exactly one JSON document on stdout
    assert len(out["files"]) == 6 and all(Path(f).is_file() for f in out["files"])
    assert {"line", "command"} <= set(out["jobs"][0])
    bad = work / "bad.arb"
    bad.write_text("<RECODE> 1, Size, 2\n")
    code = main(["table", "--argus", str(bad), "--json"])
    cap = capsys.readouterr()
    assert code != 0 and "line 1: table 1 is not specified" in cap.err
    assert len(cap.err.strip().splitlines()) == 1
    assert json.loads(cap.out)["error"]["exit_code"] == code
