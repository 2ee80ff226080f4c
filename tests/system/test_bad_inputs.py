"""Bad inputs, tried as a new user would: every case gives exit 2 (bad input) or 3 (failed gate),
exactly one line on stderr starting ``error: `` that names the file, column, value or rule,
writes nothing, leaves every input byte for byte as it was (SHA-256 before and after), and with
``--json`` prints exactly one JSON document on stdout.

The cases are a table: (id, argv, files to create, expected exit code, message fragment). Most
run in-process through :func:`sdckit.cli.main` (a subprocess costs a second each); a few run
through the installed entry point to check the process boundary too.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdckit.cli import main
from sdckit.params import step_params
from sdckit.registry import discover, known_steps, step_class


def _data_csv(n: int = 80) -> str:
    rng = np.random.default_rng(19)
    df = pd.DataFrame({"region": rng.integers(1, 4, n), "sex": rng.integers(1, 3, n),
                       "age": rng.integers(1, 9, n), "job": rng.integers(1, 6, n),
                       "w": rng.integers(2, 10, n) / 2, "inc": rng.integers(1, 20, n) * 1000.0,
                       "flag": rng.integers(0, 2, n).astype(bool), "town": rng.choice(["a", "b", "c"], n)})
    return df.to_csv(index=False)


DATA = _data_csv()
CELLS = "county,education,n\n" + "".join(f"{c},{e},{(3 * i + 2 * j) % 11 + 1}\n"
                                         for i, c in enumerate("ABC") for j, e in enumerate("xyz"))
NW = "a,w\n" + "1,2\n" * 5 + "2,3\n" * 5  # weights: a bad row is appended
HIER = {"h/hierarchy_age.csv": "".join(f"{a};{'low' if a < 5 else 'high'};*\n" for a in range(1, 9))}
GRID = "4,5,6\n7,8,9\n1,2,3\n"
BASE_FILES = {"d.csv": DATA, "cells.csv": CELLS, "grid.csv": GRID}

REL = """
[input]
path = "d.csv"
[roles]
key_vars = ["region", "sex", "age"]
[run]
seed = 1
[[steps]]
method = "pram"
variables = ["age"]
matrix = { type = "invariant" }
min_diagonal = 0.8
[gate]
min_diagonal = 0.8
max_individual_risk = 1.0
[output]
directory = "rel"
data = "out.csv"
"""

TAB = """
[input]
table = "cells.csv"
value = "n"
[table]
dimensions = ["county", "education"]
[[rules]]
type = "threshold"
n = 3
[output]
table = "pub.csv"
"""

# the smallest valid parameters of each step, so one out-of-range value is the only fault
REQUIRED = {
    "pram": {"variables": ["age"]},
    "recode": {"variable": "age"},
    "record_swap": {"hierarchy": ["region"]},
    "remove": {"variables": ["job"]},
    "postmask": {"masking": {"method": "noise", "level": 0.1}, "variables": ["inc"]},
    "microaggregation": {"variables": ["inc"]},
    "noise": {"variables": ["inc"]},
    "rank_swap": {"variables": ["inc"]},
    "neighbours": {"variables": ["inc"], "neighbourhood": {"type": "radius", "eps": 1.0}},
    "generalise": {"qis": ["age"]},
}


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    return repr(v)


def step_spec(method: str, **params) -> str:
    body = {**REQUIRED.get(method, {}), **params}
    lines = "".join(f"{k} = {_toml_value(v)}\n" for k, v in body.items())
    head = REL.split("[[steps]]")[0]
    return (head + f"[[steps]]\nmethod = \"{method}\"\n{lines}[gate]\nmax_individual_risk = 1.0\n"
            "[output]\ndirectory = \"rel\"\ndata = \"out.csv\"\n")


def _out_of_range_cases() -> list[tuple]:
    """For every declared numeric parameter with a range: one value below it, one above it."""
    discover()
    cases = []
    for name in known_steps():
        for p in step_params(step_class(name)):
            if p.kind not in ("int", "float"):
                continue
            for side, bound in (("low", p.low), ("high", p.high)):
                if bound is None:
                    continue
                bad = bound - 1 if side == "low" else bound + 1
                if p.kind == "int":
                    bad = int(bad)
                else:
                    bad = float(bad)
                cases.append((f"range-{name}-{p.name}-{side}", ["protect", "s.toml"],
                              {"s.toml": step_spec(name, **{p.name: bad})}, 2, f"steps[0].{p.name}"))
    return cases


# (id, argv, files, exit code, message fragment)
CASES: list[tuple] = [
    # ------------------------------------------------------------------ risk: files
    ("risk-missing-file", ["risk", "nope.csv", "--keys", "a"], {}, 2, "nope.csv: no such file"),
    ("risk-empty-file", ["risk", "e.csv", "--keys", "a"], {"e.csv": ""}, 2, "e.csv: the file is empty"),
    ("risk-header-only", ["risk", "h.csv", "--keys", "a"], {"h.csv": "a,b\n"}, 2, "h.csv: has a header but no records"),
    ("risk-binary", ["risk", "b.csv", "--keys", "a"], {"b.csv": bytes(range(256)) * 4}, 2, "b.csv"),
    ("risk-folder", ["risk", "fold.csv", "--keys", "a"], {"fold.csv/x": "1"}, 2, "fold.csv: is a folder"),
    ("risk-bad-suffix", ["risk", "d.xlsx", "--keys", "a"], {"d.xlsx": "a\n1\n"}, 2, "cannot tell the file format"),
    ("risk-sav-not-sav", ["risk", "fake.sav", "--keys", "a"], {"fake.sav": DATA}, 2, "fake.sav: cannot be read as sav"),
    ("risk-dta-not-dta", ["risk", "fake.dta", "--keys", "a"], {"fake.dta": DATA}, 2, "fake.dta: cannot be read as dta"),
    ("risk-parquet-not-parquet", ["risk", "fake.parquet", "--keys", "a"], {"fake.parquet": DATA}, 2,
     "fake.parquet: cannot be read as parquet"),
    ("risk-sas-not-sas", ["risk", "fake.sas7bdat", "--keys", "a"], {"fake.sas7bdat": DATA}, 2,
     "fake.sas7bdat: cannot be read as sas7bdat"),
    ("risk-dup-columns", ["risk", "dup.csv", "--keys", "sex"], {"dup.csv": "sex,sex\n1,2\n2,1\n"}, 2,
     "'sex' appears twice"),
    ("risk-dup-columns-json", ["risk", "dup.csv", "--keys", "sex", "--json"], {"dup.csv": "sex,sex\n1,2\n"}, 2,
     "'sex' appears twice"),
    ("risk-latin1", ["risk", "l1.csv", "--keys", "name"], {"l1.csv": "name,x\nJos\xe9,1\nRen\xe9e,2\n".encode("latin-1")},
     2, "l1.csv"),
    ("risk-utf16", ["risk", "u16.csv", "--keys", "a"], {"u16.csv": "a,b\n1,2\n".encode("utf-16")}, 2, "u16.csv"),
    ("risk-ragged", ["risk", "rag.csv", "--keys", "a"], {"rag.csv": "a,b\n1,2\n1,2,3,4\n"}, 2, "rag.csv"),
    ("risk-unknown-key", ["risk", "d.csv", "--keys", "region,zz"], {}, 2, "'zz'"),
    ("risk-typo-key", ["risk", "d.csv", "--keys", "regoin"], {}, 2, "region"),
    ("risk-empty-keys", ["risk", "d.csv", "--keys", ""], {}, 2, "keys"),
    ("risk-missing-keys-option", ["risk", "d.csv"], {}, 2, "--keys"),
    ("risk-dup-key", ["risk", "d.csv", "--keys", "sex,sex"], {}, 2, "sex"),
    ("risk-weight-missing", ["risk", "d.csv", "--keys", "sex", "--weight", "ww"], {}, 2, "'ww'"),
    ("risk-weight-text", ["risk", "d.csv", "--keys", "sex", "--weight", "town"], {}, 2, "town"),
    ("risk-weight-bool", ["risk", "d.csv", "--keys", "sex", "--weight", "flag"], {}, 2, "flag"),
    ("risk-weight-bool-json", ["risk", "d.csv", "--keys", "sex", "--weight", "flag", "--json"], {}, 2, "flag"),
    ("risk-weight-negative", ["risk", "nw.csv", "--keys", "a", "--weight", "w"], {"nw.csv": NW + "2,-1\n"}, 2, "w"),
    ("risk-weight-zero", ["risk", "nw.csv", "--keys", "a", "--weight", "w"], {"nw.csv": NW + "2,0\n"}, 2, "w"),
    ("risk-weight-nan", ["risk", "nw.csv", "--keys", "a", "--weight", "w"], {"nw.csv": NW + "2,\n"}, 2, "w"),
    ("risk-weight-inf", ["risk", "nw.csv", "--keys", "a", "--weight", "w"], {"nw.csv": NW + "2,inf\n"}, 2, "w"),
    ("risk-weight-is-key", ["risk", "d.csv", "--keys", "sex,w", "--weight", "w"], {}, 2, "w"),
    ("risk-household-missing", ["risk", "d.csv", "--keys", "sex", "--household", "hh"], {}, 2, "'hh'"),
    ("risk-sensitive-missing", ["risk", "d.csv", "--keys", "sex", "--sensitive", "zz"], {}, 2, "'zz'"),
    ("risk-missing-alpha", ["risk", "d.csv", "--keys", "sex", "--missing-alpha", "2"], {}, 2, "--missing-alpha"),
    ("risk-missing-alpha-neg", ["risk", "d.csv", "--keys", "sex", "--missing-alpha", "-1"], {}, 2, "--missing-alpha"),
    ("risk-risk-method", ["risk", "d.csv", "--keys", "sex", "--risk-method", "magic"], {}, 2, "--risk-method"),
    ("risk-uniqueness-zero", ["risk", "d.csv", "--keys", "sex", "--uniqueness", "0"], {}, 2, "--uniqueness"),
    ("risk-suda-size", ["risk", "d.csv", "--keys", "sex", "--suda", "--suda-max-size", "0"], {}, 2, "--suda-max-size"),
    ("risk-max-global-risk", ["risk", "d.csv", "--keys", "sex", "--max-global-risk", "1.5"], {}, 2, "--max-global-risk"),
    ("risk-max-global-risk-neg", ["risk", "d.csv", "--keys", "sex", "--max-global-risk", "-0.1"], {}, 2,
     "--max-global-risk"),
    ("risk-alpha-text", ["risk", "d.csv", "--keys", "sex", "--missing-alpha", "abc"], {}, 2, "--missing-alpha"),
    ("risk-model", ["risk", "d.csv", "--keys", "sex", "--model", "poisson"], {}, 2, "poisson"),
    ("risk-ll-method", ["risk", "d.csv", "--keys", "sex,age", "--model", "loglinear", "--method", "magic"], {}, 2,
     "magic"),
    ("risk-formula", ["risk", "d.csv", "--keys", "sex,age", "--model", "loglinear", "--formula", "sex+zz"], {}, 2,
     "zz"),
    ("risk-attacker-range", ["risk", "d.csv", "--keys", "sex", "--attacker", "1.5"], {}, 2, "--attacker"),
    ("risk-population-table-missing", ["risk", "d.csv", "--keys", "sex", "--attacker", "0.2",
                                       "--population-table", "pop.csv"], {}, 2, "pop.csv"),
    ("risk-na-values-unused", ["risk", "d.csv", "--keys", "zz", "--na-values", "-9"], {}, 2, "zz"),
    ("risk-output-over-input", ["risk", "d.csv", "--keys", "sex", "--output", "d.csv"], {}, 2, "d.csv"),
    ("risk-output-under-file", ["risk", "d.csv", "--keys", "sex", "--output", "d.csv/r.csv"], {}, 2, "d.csv"),
    ("risk-output-bad-suffix", ["risk", "d.csv", "--keys", "sex", "--output", "r.xlsx"], {}, 2, "r.xlsx"),
    ("risk-unknown-option", ["risk", "d.csv", "--keys", "sex", "--kees", "a"], {}, 2, "--kees"),
    # ------------------------------------------------------------------ protect: spec files
    ("protect-missing-spec", ["protect", "nope.toml"], {}, 2, "nope.toml"),
    ("protect-empty-spec", ["protect", "s.toml"], {"s.toml": ""}, 2, "s.toml"),
    ("protect-bad-toml", ["protect", "s.toml"], {"s.toml": "[input\npath = 1"}, 2, "s.toml"),
    ("protect-binary-spec", ["protect", "s.toml"], {"s.toml": bytes(range(256))}, 2, "s.toml"),
    ("protect-no-input", ["protect", "s.toml"], {"s.toml": REL.replace('path = "d.csv"', "")}, 2, "input.path"),
    ("protect-input-missing", ["protect", "s.toml"], {"s.toml": REL.replace("d.csv", "nope.csv")}, 2, "nope.csv"),
    ("protect-input-wrong-type", ["protect", "s.toml"], {"s.toml": REL.replace('"d.csv"', "3")}, 2, "input.path"),
    ("protect-input-format", ["protect", "s.toml"], {"s.toml": REL.replace('path = "d.csv"', 'path = "d.csv"\nformat = "xls"')},
     2, "xls"),
    ("protect-unknown-section", ["protect", "s.toml"], {"s.toml": REL + "\n[outptu]\nx = 1\n"}, 2, "outptu"),
    ("protect-unknown-input-key", ["protect", "s.toml"], {"s.toml": REL.replace('path = "d.csv"', 'path = "d.csv"\npaht = 1')},
     2, "paht"),
    ("protect-unknown-role", ["protect", "s.toml"], {"s.toml": REL.replace("key_vars", "key_var")}, 2, "key_var"),
    ("protect-role-missing-column", ["protect", "s.toml"], {"s.toml": REL.replace('"age"]', '"agee"]')}, 2, "agee"),
    ("protect-weight-bool", ["protect", "s.toml"], {"s.toml": REL.replace("[run]", 'weight = "flag"\n[run]')}, 2, "flag"),
    ("protect-weight-text", ["protect", "s.toml"], {"s.toml": REL.replace("[run]", 'weight = "town"\n[run]')}, 2, "town"),
    ("protect-seed-text", ["protect", "s.toml"], {"s.toml": REL.replace("seed = 1", 'seed = "abc"')}, 2, "seed"),
    ("protect-seed-negative", ["protect", "s.toml"], {"s.toml": REL.replace("seed = 1", "seed = -5")}, 2, "seed"),
    ("protect-unknown-method", ["protect", "s.toml"], {"s.toml": REL.replace('method = "pram"', 'method = "pramm"')}, 2,
     "pramm"),
    ("protect-step-no-method", ["protect", "s.toml"], {"s.toml": REL.replace('method = "pram"\n', "")}, 2, "method"),
    ("protect-step-unknown-param", ["protect", "s.toml"], {"s.toml": REL.replace("min_diagonal = 0.8\n[gate]",
                                                                                 "min_diag = 0.8\n[gate]")}, 2, "min_diag"),
    ("protect-step-wrong-type", ["protect", "s.toml"], {"s.toml": REL.replace("min_diagonal = 0.8\n[gate]",
                                                                              'min_diagonal = "high"\n[gate]')}, 2,
     "min_diagonal"),
    ("protect-pram-bad-matrix", ["protect", "s.toml"], {"s.toml": REL.replace('"invariant"', '"magic"')}, 2, "magic"),
    ("protect-pram-missing-column", ["protect", "s.toml"], {"s.toml": REL.replace('variables = ["age"]', 'variables = ["zz"]')},
     2, "zz"),
    ("protect-pram-matrix-file-missing", ["protect", "s.toml"],
     {"s.toml": REL.replace('matrix = { type = "invariant" }\nmin_diagonal = 0.8', 'matrix = { type = "file", file = "m.csv" }')}, 2, "m.csv"),
    ("protect-pram-matrix-file-garbage", ["protect", "s.toml"],
     {"s.toml": REL.replace('matrix = { type = "invariant" }\nmin_diagonal = 0.8', 'matrix = { type = "file", file = "m.csv" }'),
      "m.csv": "not,a\nmatrix,at all\n"}, 2, "m.csv"),
    ("protect-recode-partial", ["protect", "s.toml"], {"s.toml": step_spec("recode", mapping={"young": [1, 2], "old": [3, 4]})},
     2, "others"),
    ("protect-recode-missing-column", ["protect", "s.toml"], {"s.toml": step_spec("recode", variable="zz", mapping={"a": [1]})},
     2, "zz"),
    ("protect-recode-nothing", ["protect", "s.toml"], {"s.toml": step_spec("recode")}, 2, "mapping"),
    ("protect-recode-hierarchy-missing", ["protect", "s.toml"], {"s.toml": step_spec("recode", hierarchy_file="h.csv", level=1)},
     2, "h.csv"),
    ("protect-remove-missing-column", ["protect", "s.toml"], {"s.toml": step_spec("remove", variables=["zz"])}, 2, "zz"),
    ("protect-noise-text-column", ["protect", "s.toml"], {"s.toml": step_spec("noise", variables=["town"])}, 2, "town"),
    ("protect-micro-text-column", ["protect", "s.toml"], {"s.toml": step_spec("microaggregation", variables=["town"])}, 2,
     "town"),
    ("protect-rankswap-text-column", ["protect", "s.toml"], {"s.toml": step_spec("rank_swap", variables=["town"])}, 2, "town"),
    ("protect-ls-importance-length", ["protect", "s.toml"], {"s.toml": step_spec("local_suppression", importance=[1])}, 2,
     "importance"),
    ("protect-swap-missing-column", ["protect", "s.toml"], {"s.toml": step_spec("record_swap", hierarchy=["zz"])}, 2, "zz"),
    ("protect-gate-unknown", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nk_anonimity = 3")}, 2,
     "k_anonimity"),
    ("protect-gate-k-zero", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nk_anonymity = 0")}, 2,
     "k_anonymity"),
    ("protect-gate-k-text", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", '[gate]\nk_anonymity = "3"')}, 2,
     "k_anonymity"),
    ("protect-gate-k-float", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nk_anonymity = 2.5")}, 2,
     "k_anonymity"),
    ("protect-gate-risk-above-one", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nmax_global_risk = 2")},
     2, "max_global_risk"),
    ("protect-gate-risk-negative", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nmax_global_risk = -0.5")},
     2, "max_global_risk"),
    ("protect-gate-min-diagonal", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]\nmin_diagonal = 0.8",
                                                                                "[gate]\nmin_diagonal = 1.5")}, 2,
     "min_diagonal"),
    ("protect-gate-linkage-all", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nmax_linkage_all_columns = 7")},
     2, "max_linkage_all_columns"),
    ("protect-gate-linkage", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nmax_linkage_risk = -1")}, 2,
     "max_linkage_risk"),
    ("protect-gate-allow-ids-type", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nallow_identifiers = 3")},
     2, "allow_identifiers"),
    ("protect-gate-ldiv", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nl_diversity = 0")}, 2,
     "l_diversity"),
    ("protect-gate-recognition", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nmax_recognition_ratio = -1")},
     2, "max_recognition_ratio"),
    ("protect-gate-fails", ["protect", "s.toml"], {"s.toml": REL.replace("[gate]", "[gate]\nk_anonymity = 70")}, 3,
     "k_anonymity"),
    ("protect-gate-fails-json", ["protect", "s.toml", "--json"],
     {"s.toml": REL.replace("[gate]", "[gate]\nk_anonymity = 70")}, 3, "k_anonymity"),
    ("protect-identifier-gate", ["protect", "s.toml"], {"s.toml": REL.replace("d.csv", "ids.csv"),
                                                         "ids.csv": "person_id,region,sex,age\n" + "".join(
                                                             f"{i},{i % 3},{i % 2},{i % 8}\n" for i in range(60))}, 3,
     "person_id"),
    ("protect-output-over-input", ["protect", "s.toml"], {"s.toml": REL.replace('directory = "rel"', 'directory = "."')
                                                          .replace('data = "out.csv"', 'data = "d.csv"')}, 2, "d.csv"),
    ("protect-output-under-file", ["protect", "s.toml"], {"s.toml": REL.replace('directory = "rel"', 'directory = "d.csv/rel"')},
     2, "d.csv"),
    ("protect-output-existing-folder", ["protect", "s.toml"], {"s.toml": REL, "rel/keep.txt": "mine"}, 2, "rel"),
    ("protect-output-unknown-key", ["protect", "s.toml"], {"s.toml": REL.replace('data = "out.csv"',
                                                                                 'data = "out.csv"\nformat = "csv"')}, 2,
     "format"),
    ("protect-output-bad-suffix", ["protect", "s.toml"], {"s.toml": REL.replace("out.csv", "out.xlsx")}, 2, "out.xlsx"),
    ("protect-output-internal-inside", ["protect", "s.toml"],
     {"s.toml": REL.replace('data = "out.csv"', 'data = "out.csv"\ninternal_directory = "rel/int"')}, 2,
     "internal_directory"),
    ("protect-keep-order-text", ["protect", "s.toml"], {"s.toml": REL.replace('data = "out.csv"',
                                                                              'data = "out.csv"\nkeep_order = "yes"')}, 2,
     "keep_order"),
    ("protect-engine", ["protect", "s.toml", "--engine", "spark"], {"s.toml": REL}, 2, "spark"),
    ("protect-na-values-type", ["protect", "s.toml"], {"s.toml": REL.replace('path = "d.csv"', 'path = "d.csv"\nna_values = -9')},
     2, "na_values"),
    # ------------------------------------------------------------------ explore
    ("explore-missing-spec", ["explore", "nope.toml"], {}, 2, "nope.toml"),
    ("explore-no-explore-section", ["explore", "s.toml"], {"s.toml": REL}, 2, "explore"),
    ("explore-bad-toml", ["explore", "s.toml"], {"s.toml": "[explore\n"}, 2, "s.toml"),
    # ------------------------------------------------------------------ report / verify
    ("report-missing-folder", ["report", "nope"], {}, 2, "nope"),
    ("report-not-a-release", ["report", "fold"], {"fold/x.txt": "hello"}, 2, "fold"),
    ("report-corrupt-internal", ["report", "fold"], {"fold-internal/internal_report.json": "{not json",
                                                      "fold/.sdckit-release": "x"}, 2, "internal_report.json"),
    ("report-internal-wrong-shape", ["report", "fold"], {"fold-internal/internal_report.json": "[1, 2, 3]",
                                                          "fold/.sdckit-release": "x"}, 2, "internal_report.json"),
    ("report-file-not-folder", ["report", "d.csv"], {}, 2, "d.csv"),
    ("report-page-size", ["report", "fold", "--page-size", "A7"], {"fold/x.txt": "x"}, 2, "fold"),
    ("verify-missing-folder", ["verify", "nope"], {}, 2, "nope"),
    # ------------------------------------------------------------------ table: spec
    ("table-no-target", ["table"], {}, 2, "table"),
    ("table-missing-spec", ["table", "nope.toml"], {}, 2, "nope.toml"),
    ("table-bad-toml", ["table", "t.toml"], {"t.toml": "[input\n"}, 2, "t.toml"),
    ("table-input-missing", ["table", "t.toml"], {"t.toml": TAB.replace("cells.csv", "nope.csv")}, 2, "nope.csv"),
    ("table-dimension-missing", ["table", "t.toml"], {"t.toml": TAB.replace('"education"]', '"educ"]')}, 2, "educ"),
    ("table-value-missing", ["table", "t.toml"], {"t.toml": TAB.replace('value = "n"', 'value = "m"')}, 2, "'m'"),
    ("table-value-text", ["table", "t.toml"], {"t.toml": TAB, "cells.csv": CELLS.replace(",7\n", ",seven\n")}, 2, "seven"),
    ("table-value-nan", ["table", "t.toml"], {"t.toml": TAB, "cells.csv": CELLS.replace(",7\n", ",\n")}, 2, "cells.csv"),
    ("table-value-inf", ["table", "t.toml"], {"t.toml": TAB, "cells.csv": CELLS.replace(",7\n", ",inf\n")}, 2, "cells.csv"),
    ("table-value-negative", ["table", "t.toml"], {"t.toml": TAB, "cells.csv": CELLS.replace(",7\n", ",-30\n")}, 2, "-30"),
    ("table-dup-cells", ["table", "t.toml"], {"t.toml": TAB, "cells.csv": CELLS + "A,x,5\n"}, 2, "cells.csv"),
    ("table-rule-unknown", ["table", "t.toml"], {"t.toml": TAB.replace("threshold", "thresh")}, 2, "rules[0]"),
    ("table-rule-n-negative", ["table", "t.toml"], {"t.toml": TAB.replace("n = 3", "n = -3")}, 2, "rules[0]"),
    ("table-method-unknown", ["table", "t.toml"], {"t.toml": TAB + "[protection]\nmethod = 'best'\n"}, 2, "protection.method"),
    ("table-cost-unknown", ["table", "t.toml"], {"t.toml": TAB + "[protection]\ncost = 'price'\n"}, 2, "protection.cost"),
    ("table-unknown-protection-key", ["table", "t.toml"], {"t.toml": TAB + "[protection]\ntimelimit = 3\n"}, 2, "timelimit"),
    ("table-rounding-base", ["table", "t.toml"], {"t.toml": TAB + "[protection]\nmethod = 'rounding'\nbase = 0\n"}, 2, "base"),
    ("table-output-over-input", ["table", "t.toml"], {"t.toml": TAB.replace('table = "pub.csv"', 'table = "cells.csv"')}, 2,
     "cells.csv"),
    ("table-output-over-spec", ["table", "t.toml"], {"t.toml": TAB.replace('table = "pub.csv"', 'table = "t.toml"')}, 2,
     "t.toml"),
    ("table-output-under-file", ["table", "t.toml"], {"t.toml": TAB.replace('table = "pub.csv"', 'table = "cells.csv/p.csv"')},
     2, "cells.csv"),
    ("table-hierarchy-missing", ["table", "t.toml"], {"t.toml": TAB.replace("[[rules]]", '[hierarchies.county]\nhrc = "c.hrc"\n[[rules]]')},
     2, "c.hrc"),
    ("table-empty-cells", ["table", "t.toml"], {"t.toml": TAB, "cells.csv": ""}, 2, "cells.csv"),
    ("table-header-only", ["table", "t.toml"], {"t.toml": TAB, "cells.csv": "county,education,n\n"}, 2, "cells.csv"),
    # ------------------------------------------------------------------ table: count / posterior / perturb / argus
    ("count-no-margins", ["table", "count"], {}, 2, "--rows"),
    ("count-text-margins", ["table", "count", "--rows", "a,b", "--cols", "1,2"], {}, 2, "--rows"),
    ("count-unequal-totals", ["table", "count", "--rows", "3,4", "--cols", "1,2"], {}, 2, "total"),
    ("count-negative", ["table", "count", "--rows", "-1,4", "--cols", "1,2"], {}, 2, "-1"),
    ("count-samples-zero", ["table", "count", "--rows", "3,4", "--cols", "3,4", "--estimate", "--samples", "0"], {}, 2,
     "--samples"),
    ("posterior-no-table", ["table", "posterior"], {}, 2, "--table"),
    ("posterior-missing-table", ["table", "posterior", "--table", "nope.csv"], {}, 2, "nope.csv"),
    ("posterior-text-cells", ["table", "posterior", "--table", "g.csv"], {"g.csv": "1,2\na,4\n"}, 2, "g.csv"),
    ("posterior-ragged", ["table", "posterior", "--table", "g.csv"], {"g.csv": "1,2\n3\n"}, 2, "g.csv"),
    ("posterior-cell-outside", ["table", "posterior", "--table", "grid.csv", "--cells", "9,9"], {}, 2, "9,9"),
    ("posterior-cell-garbage", ["table", "posterior", "--table", "grid.csv", "--cells", "x;y"], {}, 2, "--cells"),
    ("posterior-at-least-garbage", ["table", "posterior", "--table", "grid.csv", "--at-least", "1"], {}, 2, "--at-least"),
    ("posterior-alpha-range", ["table", "posterior", "--table", "grid.csv", "--alpha", "1.5"], {}, 2, "alpha"),
    ("posterior-model", ["table", "posterior", "--table", "grid.csv", "--model", "magic"], {}, 2, "magic"),
    ("perturb-design", ["table", "perturb", "--table", "grid.csv", "--design", "zigzag"], {}, 2, "zigzag"),
    ("perturb-beta-negative", ["table", "perturb", "--table", "grid.csv", "--beta", "-0.1"], {}, 2, "beta"),
    ("perturb-negative-cells", ["table", "perturb", "--table", "g.csv"], {"g.csv": "1,-2\n3,4\n"}, 2, "g.csv"),
    ("perturb-empty-table", ["table", "perturb", "--table", "g.csv"], {"g.csv": ""}, 2, "g.csv"),
    ("table-unknown-action", ["table", "countt"], {}, 2, "countt"),
    ("argus-missing", ["table", "--argus", "nope.arb"], {}, 2, "nope.arb"),
    ("argus-garbage", ["table", "--argus", "b.arb"], {"b.arb": "<GARBAGE> 1 2 3\n"}, 2, "b.arb"),
    ("argus-binary", ["table", "--argus", "b.arb"], {"b.arb": bytes(range(256))}, 2, "b.arb"),
    # ------------------------------------------------------------------ estimate
    ("estimate-missing-data", ["estimate", "nope.csv", "--matrix", "pram_age.csv"], "PRAM", 2, "nope.csv"),
    ("estimate-missing-matrix", ["estimate", "d.csv", "--matrix", "nope.csv"], {}, 2, "nope.csv"),
    ("estimate-garbage-matrix", ["estimate", "d.csv", "--matrix", "m.csv"], {"m.csv": "garbage,,\n\x00\x01,zz\n"}, 2, "m.csv"),
    ("estimate-garbage-json-matrix", ["estimate", "d.csv", "--matrix", "m.json"], {"m.json": "{not json"}, 2, "m.json"),
    ("estimate-binary-matrix", ["estimate", "d.csv", "--matrix", "m.csv"], {"m.csv": bytes(range(256))}, 2, "m.csv"),
    ("estimate-empty-matrix", ["estimate", "d.csv", "--matrix", "m.csv"], {"m.csv": ""}, 2, "m.csv"),
    ("estimate-missing-by", ["estimate", "r.csv", "--matrix", "pram_age.csv", "--by", "zz"], "PRAM", 2, "zz"),
    ("estimate-text-weight", ["estimate", "r.csv", "--matrix", "pram_age.csv", "--weight", "town"], "PRAM", 2, "town"),
    ("estimate-missing-weight", ["estimate", "r.csv", "--matrix", "pram_age.csv", "--weight", "ww"], "PRAM", 2, "ww"),
    ("estimate-no-matrix-option", ["estimate", "d.csv"], {}, 2, "--matrix"),
    # ------------------------------------------------------------------ anonymise
    ("anonymise-missing-file", ["anonymise", "nope.csv", "--hierarchies", "h", "--qis", "age", "--k", "2"], {"h/x": ""}, 2,
     "nope.csv"),
    ("anonymise-no-model", ["anonymise", "d.csv", "--hierarchies", "h", "--qis", "age"], {"h/x": ""}, 2, "--k"),
    ("anonymise-missing-hierarchies", ["anonymise", "d.csv", "--hierarchies", "nope", "--qis", "age", "--k", "2"], {}, 2,
     "nope"),
    ("anonymise-unknown-qi", ["anonymise", "d.csv", "--hierarchies", "h", "--qis", "zz", "--k", "2"], HIER, 2, "zz"),
    ("anonymise-k-zero", ["anonymise", "d.csv", "--hierarchies", "h", "--qis", "age", "--k", "0"], HIER, 2, "k"),
    ("anonymise-metric", ["anonymise", "d.csv", "--hierarchies", "h", "--qis", "age", "--k", "2", "--metric", "magic"],
     HIER, 2, "magic"),
    ("anonymise-suppression", ["anonymise", "d.csv", "--hierarchies", "h", "--qis", "age", "--k", "2", "--suppression",
                               "1.5"], HIER, 2, "suppression"),
    ("anonymise-output-over-input", ["anonymise", "d.csv", "--hierarchies", "h", "--qis", "age", "--k", "2", "--output",
                                     "d.csv"], HIER,
     2, "d.csv"),
    # ------------------------------------------------------------------ general
    ("no-such-command", ["protects", "s.toml"], {}, 2, "protects"),
    ("steps-unknown-option", ["steps", "--jsn"], {}, 2, "--jsn"),
    ("demo-output-under-file", ["demo", "--output", "d.csv/demo"], {}, 2, "d.csv"),
    ("demo-output-over-input-folder", ["demo", "--output", "fold"], {"fold/mine.txt": "keep"}, 2, "fold"),
]

CASES += _out_of_range_cases()

JSON_COMMANDS = {"risk", "protect", "explore", "report", "table", "estimate", "verify", "anonymise", "steps", "demo"}


def _pram_release(tmp: Path) -> None:
    """A released file and its published PRAM matrix, for the estimate cases."""
    rng = np.random.default_rng(1)
    n = 60
    pd.DataFrame({"age": rng.integers(1, 4, n), "region": rng.integers(1, 3, n),
                  "town": rng.choice(["a", "b"], n)}).to_csv(tmp / "r.csv", index=False)
    (tmp / "pram_age.csv").write_text("from,1,2,3\n1,0.8,0.1,0.1\n2,0.1,0.8,0.1\n3,0.1,0.1,0.8\n")


def _make_files(tmp: Path, files) -> None:
    for name, content in BASE_FILES.items():
        (tmp / name).write_text(content)
    if files == "PRAM":
        _pram_release(tmp)
        return
    for name, content in files.items():
        p = tmp / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)


def _snapshot(tmp: Path) -> dict[str, str]:
    out = {}
    for p in sorted(tmp.rglob("*")):
        rel = str(p.relative_to(tmp))
        out[rel] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _check(case, code, out, err, before, after):
    cid, argv, _, want_code, fragment = case
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == want_code, f"{cid}: exit {code}, wanted {want_code}; stderr: {err!r}"
    assert "Traceback" not in err, f"{cid}: traceback: {err}"
    assert len(lines) == 1 and lines[0].startswith("error: "), f"{cid}: stderr not one error line: {err!r}"
    assert fragment.lower() in lines[0].lower(), f"{cid}: {fragment!r} not in {lines[0]!r}"
    assert after == before, f"{cid}: files changed: {set(after.items()) ^ set(before.items())}"
    if "--json" in argv:
        doc = json.loads(out)  # exactly one document: json.loads refuses trailing text
        if argv[0] == "verify" and "error" not in doc:  # verify's own document: ok false, the problems
            assert doc["ok"] is False and doc["problems"], f"{cid}: {doc}"
        else:
            assert doc["error"]["exit_code"] == want_code, f"{cid}: {doc}"
    else:
        assert "error" not in out.lower() or out.strip() == "", f"{cid}: error text on stdout: {out!r}"


def _with_json(case) -> tuple:
    cid, argv, files, code, fragment = case
    # the generated range cases share one code path: their --json twin is checked by the other protect cases
    if (argv and argv[0] in JSON_COMMANDS and "--json" not in argv and not argv[-1].startswith("--jsn")
            and not cid.startswith("range-")):
        return (cid + "+json", [*argv, "--json"], files, code, fragment)
    return case


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("SDCKIT_PROGRESS", "0")
    monkeypatch.delenv("SDCKIT_DEBUG", raising=False)


def test_the_table_holds_at_least_150_cases_with_unique_ids():
    ids = [c[0] for c in CASES]
    assert len(ids) >= 150 and len(set(ids)) == len(ids)
    assert all(c[3] in (2, 3) for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input(case, tmp_path, monkeypatch, capsys):
    """One line, exit 2 or 3, nothing written, inputs unchanged; the same with --json."""
    _make_files(tmp_path, case[2])
    monkeypatch.chdir(tmp_path)
    for variant in (case, _with_json(case)) if _with_json(case) is not case else (case,):
        before = _snapshot(tmp_path)
        capsys.readouterr()
        code = main(list(variant[1]))
        out, err = capsys.readouterr()
        _check(variant, code, out, err, before, _snapshot(tmp_path))


PROCESS_CASES = [c for c in CASES if c[0] in {"risk-weight-bool-json", "protect-gate-fails-json", "table-output-over-input",
                                              "estimate-garbage-matrix", "risk-binary"}]


@pytest.mark.parametrize("case", PROCESS_CASES, ids=[c[0] for c in PROCESS_CASES])
def test_bad_input_through_the_command(case, tmp_path):
    """The same promises across the process boundary (the console entry point)."""
    _make_files(tmp_path, case[2])
    before = _snapshot(tmp_path)
    env = {**os.environ, "SDCKIT_PROGRESS": "0"}
    env.pop("SDCKIT_DEBUG", None)
    r = subprocess.run([sys.executable, "-m", "sdckit", *case[1]], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120, env=env)
    _check(case, r.returncode, r.stdout, r.stderr, before, _snapshot(tmp_path))


def test_app_refuses_a_missing_data_file(tmp_path):
    """The workbench checks its arguments before it serves anything (run in a subprocess with a
    timeout: a server that started by mistake is killed)."""
    before = _snapshot(tmp_path)
    try:
        r = subprocess.run([sys.executable, "-m", "sdckit", "app", "nope.csv", "--no-browser"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("sdckit app started serving with a missing data file")
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "nope.csv" in lines[0]
    assert _snapshot(tmp_path) == before


VERIFY_CASES = [
    ("verify-no-certificate", ["verify", "fold"], {"fold/x.txt": "hello"}, 5, "certificate.json"),
    ("verify-corrupt-certificate", ["verify", "fold"], {"fold/certificate.json": "{bad"}, 5, "certificate.json"),
    ("verify-certificate-wrong-shape", ["verify", "fold"], {"fold/certificate.json": "[]"}, 5, "certificate.json"),
    ("verify-binary-certificate", ["verify", "fold"], {"fold/certificate.json": bytes(range(256))}, 5, "certificate.json"),
]


@pytest.mark.parametrize("case", VERIFY_CASES, ids=[c[0] for c in VERIFY_CASES])
def test_verify_reports_a_folder_that_does_not_verify(case, tmp_path, monkeypatch, capsys):
    """A folder without a readable certificate does not verify: verify's own exit code 5, one line."""
    _make_files(tmp_path, case[2])
    monkeypatch.chdir(tmp_path)
    for variant in (case, _with_json(case)):
        before = _snapshot(tmp_path)
        capsys.readouterr()
        code = main(list(variant[1]))
        out, err = capsys.readouterr()
        _check(variant, code, out, err, before, _snapshot(tmp_path))


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
@pytest.mark.parametrize("argv", [["protect", "s.toml"], ["risk", "d.csv", "--keys", "sex", "--output", "ro/r.csv"],
                                  ["table", "t.toml"]])
def test_unwritable_output_folder(argv, tmp_path, monkeypatch, capsys):
    """An output folder the user may not write: one line naming it, exit 2, nothing written."""
    _make_files(tmp_path, {"s.toml": REL.replace('directory = "rel"', 'directory = "ro/rel"'),
                           "t.toml": TAB.replace('table = "pub.csv"', 'table = "ro/pub.csv"'), "ro/.keep": ""})
    monkeypatch.chdir(tmp_path)
    os.chmod(tmp_path / "ro", 0o555)
    try:
        before = _snapshot(tmp_path)
        capsys.readouterr()
        code = main(argv)
        out, err = capsys.readouterr()
        _check(("unwritable", argv, {}, 2, "ro"), code, out, err, before, _snapshot(tmp_path))
    finally:
        os.chmod(tmp_path / "ro", 0o755)
