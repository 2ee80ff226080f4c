"""sdckit's synthesis beside synthpop 1.9-2 (R), side by side in one run.

Run from the project root:  .venv/bin/python benchmarks/compare_synthpop.py [--quick] [--seeds S]

Cases (both tools read the same CSV file; character columns are categories, numbers numeric,
in both):

* ``sd2011``: synthpop's SD2011 survey (``../shared/data/synthpop_SD2011.csv``, 5,000
  records), 12 variables: sex, age, region, placesize, edu, socprof, marital, income, ls,
  depress, smoke, workab; income's -8 is a special code (synthpop's ``cont.na``). Keys of the
  disclosure measures: sex, age, region, placesize; target: depress.
* ``census``: the bundled census sample (10,000 records), every column but the person id (17,
  names made R-safe); keys Region, Sex, Age, Marital_Status; target Health.

For each case both tools make ``--seeds`` (5) CART syntheses in the data's column order
(synthpop's ``syn(method = "cart")``, sdckit's ``Synthesiser()``: the first variable sampled,
``minbucket = 5``, ``cp = 1e-8``). Then one R process judges all of them with synthpop's own
functions: ``utility.gen(method = "cart")`` (S_pMSE from 50 permutations, the default),
``utility.gen(method = "logit", maxorder = 0)`` and ``disclosure()``.

Lines:

* ``<case>_synthesis``: mean CPU seconds of one synthesis (R: user + system time of the R
  process around ``syn``; sdckit: ``time.process_time`` of fit + draw + output frame) and their
  ratio ``cpu_ratio`` (synthpop / sdckit: > 1 means sdckit is faster), wall seconds likewise;
  mean S_pMSE (CART and logit propensity, both by synthpop) of each tool's files and the ratio
  sdckit / synthpop; mean repU and DiSCO (by synthpop) of each tool's files.
* ``<case>_agreement``: sdckit's measures recomputed on synthpop's own synthetic files against
  synthpop's: the largest absolute difference over every ``disclosure()`` figure (identity,
  attribute, CAP) and over the files, and over the logit pMSE (``maxorder = 0`` on every
  variable and ``maxorder = 1`` on a subset).

Without ``Rscript`` or synthpop the script says why and stops (install with
``bash ../shared/tools/synthpop/install.sh``). ``--quick``: the census case on 2,000 records, 2
seeds and 10 permutations (the R side still takes a minute or so).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import ROOT, SHARED_DATA, emit

from sdckit.synth import Synthesiser, disclosure_measures, propensity_utility  # noqa: E402

SD2011_VARS = ["sex", "age", "region", "placesize", "edu", "socprof", "marital", "income", "ls", "depress",
               "smoke", "workab"]

R_SCRIPT = r"""
suppressPackageStartupMessages(library(synthpop))
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]; seeds <- as.integer(args[2]); nperms <- as.integer(args[3])
keys <- strsplit(args[4], ",")[[1]]; target <- args[5]
pairs <- strsplit(args[6], ",")[[1]]
cna <- if (args[7] == "") NULL else eval(parse(text = args[7]))
ods <- read.csv(file.path(dir, "orig.csv"), stringsAsFactors = TRUE)
cpu <- function() { p <- proc.time(); p[["user.self"]] + p[["sys.self"]] + p[["user.child"]] + p[["sys.child"]] }
num <- function(x) sprintf("%.17g", x)
for (s in seq_len(seeds)) {
  c0 <- cpu(); w0 <- proc.time()[["elapsed"]]
  sy <- syn(ods, method = "cart", seed = s, cont.na = cna, print.flag = FALSE)
  cat(sprintf('{"kind": "time", "seed": %d, "cpu": %s, "wall": %s}\n', s, num(cpu() - c0),
              num(proc.time()[["elapsed"]] - w0)))
  write.csv(sy$syn, file.path(dir, sprintf("synthpop_%d.csv", s)), row.names = FALSE)
}
for (tool in c("synthpop", "sdckit")) for (s in seq_len(seeds)) {
  sy <- read.csv(file.path(dir, sprintf("%s_%d.csv", tool, s)), stringsAsFactors = TRUE)
  set.seed(s)
  uc <- utility.gen(sy, ods, method = "cart", nperms = nperms, cont.na = cna, print.flag = FALSE)
  ul <- utility.gen(sy, ods, method = "logit", maxorder = 0, cont.na = cna, print.flag = FALSE)
  up <- utility.gen(sy, ods, method = "logit", maxorder = 1, vars = pairs, cont.na = cna, print.flag = FALSE)
  d <- disclosure(sy, ods, keys = keys, target = target, print.flag = FALSE)
  v <- c(unlist(d$ident[1, ]), unlist(d$attrib[1, ]), unlist(d$allCAPs[1, ]))
  cat(sprintf('{"kind": "measure", "tool": "%s", "seed": %d, "S_pMSE_cart": %s, "pMSE_logit0": %s, "S_pMSE_logit0": %s, "pMSE_logit1": %s, "S_pMSE_logit1": %s, %s}\n',
              tool, s, num(uc$S_pMSE), num(ul$pMSE), num(ul$S_pMSE), num(up$pMSE), num(up$S_pMSE),
              paste(sprintf('"%s": %s', names(v), ifelse(is.na(v), "null", num(v))), collapse = ", ")))
}
"""


def r_available() -> str | None:
    """None when Rscript and synthpop are there, else why not."""
    if shutil.which("Rscript") is None:
        return "Rscript not found: install R and synthpop with ../shared/tools/synthpop/install.sh"
    chk = subprocess.run(["Rscript", "-e", "suppressMessages(library(synthpop))"], capture_output=True, text=True)
    if chk.returncode != 0:
        return "R package synthpop not installed: run bash ../shared/tools/synthpop/install.sh"
    return None


def cases(quick: bool) -> list[dict]:
    out = []
    census = pd.read_csv(ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv")
    census = census.drop(columns=["Person ID"])
    census.columns = [c.replace(" ", "_") for c in census.columns]
    if quick:
        census = census.head(2000)
    out.append({"case": "census", "data": census, "keys": ["Region", "Sex", "Age", "Marital_Status"],
                "target": "Health", "cont_na": {},
                "pairs": ["Sex", "Age", "Marital_Status", "Student", "Health", "Economic_Activity"]})
    if not quick:
        path = SHARED_DATA / "synthpop_SD2011.csv"
        if path.exists():
            sd = pd.read_csv(path)[SD2011_VARS]
            out.insert(0, {"case": "sd2011", "data": sd, "keys": ["sex", "age", "region", "placesize"],
                           "target": "depress", "cont_na": {"income": [-8]},
                           "pairs": ["sex", "age", "placesize", "marital", "income", "depress"]})
        else:
            print(json.dumps({"case": "sd2011", "skipped": f"{path} is absent (../shared beside the checkout)"}))
    return out


def run_case(c: dict, seeds: int, nperms: int) -> None:
    data = c["data"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data.to_csv(work / "orig.csv", index=False)
        orig = pd.read_csv(work / "orig.csv")   # what both tools read
        cpu, wall = [], []
        synth = Synthesiser(missing_codes=c["cont_na"])
        for s in range(1, seeds + 1):
            c0, w0 = time.process_time(), time.perf_counter()
            out = synth.fit(orig).draw(rng=s).frame(orig)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
            out.to_csv(work / f"sdckit_{s}.csv", index=False)
        (work / "compare.R").write_text(R_SCRIPT)
        cna = ("list(" + ", ".join(f"{k} = c({', '.join(str(v) for v in vs)})" for k, vs in c["cont_na"].items()) + ")"
               if c["cont_na"] else "")
        load0 = os.getloadavg()[0]
        r = subprocess.run(["Rscript", str(work / "compare.R"), str(work), str(seeds), str(nperms), ",".join(c["keys"]),
                            c["target"], ",".join(c["pairs"]), cna], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"R failed on {c['case']}: {r.stderr[-2000:]}")
        lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
        times = [x for x in lines if x["kind"] == "time"]
        meas = [x for x in lines if x["kind"] == "measure"]

        def mean(tool: str, key: str) -> float:
            return float(np.mean([x[key] for x in meas if x["tool"] == tool]))

        r_cpu = float(np.mean([t["cpu"] for t in times]))
        r_wall = float(np.mean([t["wall"] for t in times]))
        emit(case=f"{c['case']}_synthesis", n=len(orig), variables=orig.shape[1], seeds=seeds,
             sdckit_cpu_seconds=float(np.mean(cpu)), synthpop_cpu_seconds=r_cpu, cpu_ratio=r_cpu / float(np.mean(cpu)),
             sdckit_seconds=float(np.mean(wall)), synthpop_seconds=r_wall, ratio=r_wall / float(np.mean(wall)),
             sdckit_S_pMSE_cart=mean("sdckit", "S_pMSE_cart"), synthpop_S_pMSE_cart=mean("synthpop", "S_pMSE_cart"),
             S_pMSE_cart_ratio=mean("sdckit", "S_pMSE_cart") / mean("synthpop", "S_pMSE_cart"),
             sdckit_S_pMSE_logit=mean("sdckit", "S_pMSE_logit0"),
             synthpop_S_pMSE_logit=mean("synthpop", "S_pMSE_logit0"),
             S_pMSE_logit_ratio=mean("sdckit", "S_pMSE_logit0") / mean("synthpop", "S_pMSE_logit0"),
             sdckit_S_pMSE_logit_pairs=mean("sdckit", "S_pMSE_logit1"),
             synthpop_S_pMSE_logit_pairs=mean("synthpop", "S_pMSE_logit1"),
             sdckit_repU=mean("sdckit", "repU"), synthpop_repU=mean("synthpop", "repU"),
             sdckit_DiSCO=mean("sdckit", "DiSCO"), synthpop_DiSCO=mean("synthpop", "DiSCO"),
             permutations=nperms, load_1min=round(load0, 2), load_1min_after=round(os.getloadavg()[0], 2))
        # sdckit's measures on synthpop's files against synthpop's own
        dmax, p0max, p1max, s0max = 0.0, 0.0, 0.0, 0.0
        for x in (m for m in meas if m["tool"] == "synthpop"):
            syn = pd.read_csv(work / f"synthpop_{x['seed']}.csv")
            d = disclosure_measures(orig, syn, c["keys"], c["target"])
            ours = {**d.identity, **d.attribute, **d.cap}
            for k, v in ours.items():
                ref = x[k]
                if ref is None or (isinstance(v, float) and np.isnan(v)):
                    continue
                dmax = max(dmax, abs(v - ref))
            u0 = propensity_utility(orig, syn, method="logit", maxorder=0, cont_na=c["cont_na"])
            u1 = propensity_utility(orig, syn, method="logit", maxorder=1, variables=c["pairs"], cont_na=c["cont_na"])
            p0max = max(p0max, abs(u0.pMSE - x["pMSE_logit0"]))
            p1max = max(p1max, abs(u1.pMSE - x["pMSE_logit1"]))
            s0max = max(s0max, abs(u0.S_pMSE - x["S_pMSE_logit0"]))
        emit(case=f"{c['case']}_agreement", n=len(orig), files=seeds, disclosure_max_abs_diff=dmax,
             pmse_logit_max_abs_diff=max(p0max, p1max), pmse_logit_main_max_abs_diff=p0max,
             pmse_logit_pairs_max_abs_diff=p1max, S_pMSE_logit_main_max_abs_diff=s0max,
             disclosure_within_1e9=dmax <= 1e-9, pmse_within_1e6=max(p0max, p1max) <= 1e-6)


def main() -> None:
    seeds = None
    if "--seeds" in sys.argv:
        i = sys.argv.index("--seeds")
        seeds = int(sys.argv[i + 1])
        del sys.argv[i:i + 2]
    quick = "--quick" in sys.argv
    why = r_available()
    if why:
        print(json.dumps({"case": "compare_synthpop", "skipped": why}))
        return
    for c in cases(quick):
        run_case(c, seeds or (2 if quick else 5), 10 if quick else 50)


if __name__ == "__main__":
    main()
