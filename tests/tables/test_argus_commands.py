"""The .arb commands RECODE, APRIORY, COVER and the SUPPRESS methods NET, HYP and CTA, written in
the batch syntax of the tau-Argus manual (version 4.1, section 5.5, the batch commands). Each test
builds its own small microdata; reference values come from pandas group-bys of the same records."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import InputError
from sdckit.tables.argus import run_arb

HRC = "N\n@N1\n@@N11\n@@N12\n@N2\nS\n@S1\n@S2\n"
RDA = """<SEPARATOR> ","
Region 1
  <RECODEABLE>
  <TOTCODE> "Total"
  <HIERARCHICAL>
  <HIERCODELIST> "region.hrc"
  <HIERLEADSTRING> "@"
Sector 1
  <RECODEABLE>
  <TOTCODE> "Total"
Sales 1
  <NUMERIC>
"""
HEAD = '<OPENMICRODATA> "micro.csv"\n<OPENMETADATA> "micro.rda"\n'


def _micro(seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    leaves = ["N11", "N12", "N2", "S1", "S2"]
    n = 400
    df = pd.DataFrame({"Region": rng.choice(leaves, n, p=[0.3, 0.25, 0.2, 0.15, 0.1]),
                       "Sector": rng.choice(["1", "2", "3", "4"], n, p=[0.4, 0.3, 0.2, 0.1]),
                       "Sales": rng.integers(10, 500, n)})
    # a few sparse cells for the rules to find
    df = df[~((df.Region == "S2") & (df.Sector == "4"))]
    extra = pd.DataFrame({"Region": ["S2", "S2", "N2"], "Sector": ["4", "4", "4"], "Sales": [900, 30, 5]})
    return pd.concat([df, extra], ignore_index=True)


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    _micro().to_csv(tmp_path / "micro.csv", index=False)
    (tmp_path / "micro.rda").write_text(RDA)
    (tmp_path / "region.hrc").write_text(HRC)
    return tmp_path


def _run(work: Path, body: str) -> dict:
    (work / "b.arb").write_text(HEAD + body)
    return run_arb(work / "b.arb")


def _pivot(path: Path) -> pd.DataFrame:
    """Output type 2 (CSV for pivot tables): codes and value per cell."""
    df = pd.read_csv(path, dtype=str)  # its first line names the columns
    df.columns = ["Region", "Sector", "value"]
    return df


# ----------------------------------------------------------------------------- RECODE

def test_recode_truncates_a_hierarchy_at_a_level(work):
    out = _run(work, '<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n'
                     '<RECODE> 1, Region, 1\n<SUPPRESS> OPT(1)\n<WRITETABLE> (1,2,,"t.csv")\n')
    rec = next(j for j in out["jobs"] if j["command"] == "<RECODE>")
    assert rec["n_cells"] == 3 * 5  # Total, N, S x Total, 1..4
    got = _pivot(work / "t.csv")
    df = _micro()
    df["top"] = df.Region.str[0]
    ref = df.groupby(["top", "Sector"]).Sales.sum()
    for (r, s), v in ref.items():
        row = got[(got.Region == r) & (got.Sector == s)]
        if row.value.iloc[0] != "x":  # published cells carry the recoded sums
            assert float(row.value.iloc[0]) == v
    assert set(got.Region) == {"Total", "N", "S"}


def test_recode_with_a_treerecode_file_closes_the_listed_parents(work):
    (work / "tree.txt").write_text("<TREERECODE>\nN1\n")
    out = _run(work, '<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n'
                     '<RECODE> 1, Region, "tree.txt"\n<SUPPRESS> MOD(1)\n<WRITETABLE> (1,2,,"t.csv")\n')
    assert next(j for j in out["jobs"] if j["command"] == "<RECODE>")["n_cells"] == 7 * 5
    assert set(_pivot(work / "t.csv").Region) == {"Total", "N", "N1", "N2", "S", "S1", "S2"}


def test_recode_with_a_global_recode_file(work):
    (work / "sector.grc").write_text("<CODELIST> \"sector.cdl\"\nA: 1-2\nB: 3-\n")
    _run(work, '<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n'
               '<RECODE> 1, Sector, "sector.grc"\n<SUPPRESS> OPT(1)\n<WRITETABLE> (1,2,,"t.csv")\n')
    got = _pivot(work / "t.csv")
    df = _micro()
    df["grp"] = np.where(df.Sector.astype(int) <= 2, "A", "B")
    assert set(got.Sector) == {"Total", "A", "B"}
    ref = df.groupby("grp").Sales.sum()
    tot = got[got.Region == "Total"].set_index("Sector").value
    assert float(tot["A"]) == ref["A"] and float(tot["B"]) == ref["B"]


@pytest.mark.parametrize("recode, text, needle", [
    ("<RECODE> 1, Sector, 1", None, "truncation needs a hierarchical variable"),
    ("<RECODE> 1, Region, \"r.grc\"", "A: N11\n", "global recode of the hierarchical variable Region"),
    ("<RECODE> 1, Sector, \"s.grc\"", "<MISSING> 9\nA: 1\n", "<MISSING> is not supported"),
    ("<RECODE> 1, Size, 1", None, "'Size' is not a variable of table"),
])
def test_recode_refusals_are_one_line(work, recode, text, needle):
    if text is not None:
        (work / ("r.grc" if "r.grc" in recode else "s.grc")).write_text(text)
    with pytest.raises(InputError, match="b.arb: line 6: ") as exc:
        _run(work, f'<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n{recode}\n')
    assert needle in str(exc.value) and "\n" not in str(exc.value)


# ----------------------------------------------------------------------------- APRIORY

def _statuses(path: Path) -> dict:
    """Output type 5 (intermediate file): (codes) -> (status, lower level, upper level)."""
    out = {}
    for ln in path.read_text().splitlines():
        f = ln.split(";")
        k = f.index(next(x for x in f[4:] if x in ("S", "U", "M", "Z")), 4)
        out[(f[0].strip('"'), f[1].strip('"'))] = (f[k], float(f[k + 1]), float(f[k + 2]))
    return out


def test_apriory_sets_safe_unsafe_and_protection_levels(work):
    base = ('<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)|MAN(20)\n<READMICRODATA>\n'
            '<SUPPRESS> OPT(1)\n<WRITETABLE> (1,5,,"before.txt")\n')
    _run(work, base)
    before = _statuses(work / "before.txt")
    prim = [k for k, v in before.items() if v[0] == "U"]
    assert prim, "the fixture needs at least one primary"
    safe = prim[0]
    (work / "a.hst").write_text(f"{safe[0]};{safe[1]};S\nN12;2;U\nN2;1;U\nN2;1;PL;7;11\n")
    _run(work, base.replace('<SUPPRESS>', '<APRIORY> "a.hst", 1, ";"\n<SUPPRESS>').replace("before", "after"))
    after = _statuses(work / "after.txt")
    assert after[safe][0] != "U"  # S: no longer a primary
    assert after[("N12", "2")][0] == "U"  # U: a primary with the manual level, max(MAN's 20, 10% of the cell)
    df = _micro()
    v = df[(df.Region == "N12") & (df.Sector == "2")].Sales.sum()
    assert after[("N12", "2")][2] == pytest.approx(max(20.0, 0.1 * v), rel=1e-6, abs=1)
    assert after[("N2", "1")][:3] == ("U", 7.0, 11.0)  # PL: lower 7, upper 11


def test_apriory_costs_steer_the_pattern(work):
    # two patterns protect the primary; a prohibitive cost on a cell of the one chosen first
    # makes OPT choose another (and the audit still passes)
    base = '<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n'
    out1 = _run(work, base + '<SUPPRESS> OPT(1)\n<WRITETABLE> (1,5,,"one.txt")\n')
    first = [k for k, v in _statuses(work / "one.txt").items() if v[0] == "M"]
    lines = "".join(f"{r};{s};C;1000000000\n" for r, s in first)
    (work / "c.hst").write_text(lines)
    out2 = _run(work, base + '<APRIORY> "c.hst", 1, ";"\n<SUPPRESS> OPT(1)\n<WRITETABLE> (1,5,,"two.txt")\n')
    second = [k for k, v in _statuses(work / "two.txt").items() if v[0] == "M"]
    sup = [j for j in out2["jobs"] if j["command"] == "<SUPPRESS>"][0]
    assert sup["apriori_costs"] and sup["audit_ok"] and set(second) != set(first)
    assert [j for j in out1["jobs"] if j["command"] == "<SUPPRESS>"][0]["audit_ok"]


def test_apriory_expand_bogus_and_errors(work):
    base = '<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n'
    (work / "u.hst").write_text("N9;1;U\nN2;1;U\n")
    out = _run(work, base + '<APRIORY> "u.hst", 1, ";", 1\n')
    ap = [j for j in out["jobs"] if j["command"] == "<APRIORY>"][0]
    assert ap["lines"] == 2 and ap["skipped"] == 1 and ap["status"] == 1
    with pytest.raises(InputError, match=r"line 6: <APRIORY>: u.hst line 1: a code is not in table 1"):
        _run(work, base + '<APRIORY> "u.hst", 1, ";", 0\n')
    (work / "p.hst").write_text("N2;1;P\n")
    with pytest.raises(InputError, match=r"p.hst line 1: 'P' is not supported by sdckit"):
        _run(work, base + '<APRIORY> "p.hst", 1, ";"\n')


# ----------------------------------------------------------------------------- COVER, NET, HYP, CTA

def test_cover_is_accepted_and_said_in_the_log(work):
    out = _run(work, '<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<COVER>\n'
                     '<READMICRODATA>\n<SUPPRESS> MOD(1)\n')
    assert any("<COVER> accepted" in n and "jointly" in n for n in out["notes"])


def test_net_runs_the_optimal_method_and_says_so(work):
    base = '<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n'
    net = _run(work, base + "<SUPPRESS> NET(1)\n")
    opt = _run(work, base + "<SUPPRESS> OPT(1)\n")
    a = [j for j in net["jobs"] if j["command"] == "<SUPPRESS>"][0]
    b = [j for j in opt["jobs"] if j["command"] == "<SUPPRESS>"][0]
    assert a["sdckit_method"] == "optimal" and a["n_secondary"] == b["n_secondary"] and a["audit_ok"]
    assert any("no network-flow heuristic" in n for n in net["notes"])


def test_net_refuses_a_one_dimensional_table(work):
    with pytest.raises(InputError, match=r"line 6: <SUPPRESS> NET is tau-Argus's network heuristic for "
                                         r"2-dimensional tables; table 1 has 1 dimensions"):
        _run(work, '<SPECIFYTABLE> "Region"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n<SUPPRESS> NET(1)\n')


def test_hyp_is_the_hypercube(work):
    out = _run(work, '<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n'
                     "<SUPPRESS> HYP(1)\n")
    s = [j for j in out["jobs"] if j["command"] == "<SUPPRESS>"][0]
    assert s["sdckit_method"] == "hypercube" and s["audit_ok"]
    assert any("HYP: read as GH" in n for n in out["notes"])


def test_cta_publishes_an_additive_adjusted_table(work):
    out = _run(work, '<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n'
                     '<SUPPRESS> CTA(1)\n<WRITETABLE> (1,2,,"t.csv")\n')
    s = [j for j in out["jobs"] if j["command"] == "<SUPPRESS>"][0]
    assert s["method"] == "CTA" and s["audit_ok"] and s["proven_optimal"]
    got = _pivot(work / "t.csv")
    got["value"] = got.value.astype(float)
    v = got.set_index(["Region", "Sector"]).value
    # additivity, checked here from the written file: Region totals and the hierarchy
    for r in ("Total", "N", "N1", "S"):
        assert v[(r, "Total")] == pytest.approx(sum(v[(r, c)] for c in ("1", "2", "3", "4")), abs=1e-6)
    assert v[("N", "2")] == pytest.approx(v[("N1", "2")] + v[("N2", "2")], abs=1e-6)
    assert v[("N1", "3")] == pytest.approx(v[("N11", "3")] + v[("N12", "3")], abs=1e-6)
    with pytest.raises(InputError, match=r"line 6: <SUPPRESS> CTA\(1,5\): sdckit reads CTA\(table\) only"):
        _run(work, '<SPECIFYTABLE> "Region""Sector"|"Sales"||\n<SAFETYRULE> NK(1,90)\n<READMICRODATA>\n'
                   "<SUPPRESS> CTA(1,5)\n")
