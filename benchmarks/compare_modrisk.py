"""sdckit's log-linear risk beside sdcMicro's ``modRisk``, on the same data in one run.

Run from the project root:  .venv/bin/python benchmarks/compare_modrisk.py [--quick] [--n N]

Data: ``../shared/data/sdcmicro/testdata.csv`` (shared only: skipped with a message when
absent), keys urbrur, roof, walls, water, electcon, relat, sex, weight sampling_weight, main
effects, every method (default, CE, PML, weightedLLM, IPF). The keys are passed to R as
factors (with integer columns R's ``glm`` would fit a linear trend in the codes instead of a
categorical main effect). Prints one JSON line per method with sdckit's tau1 / tau2, its
figures in sdcMicro's conventions (``sdcmicro_gr1`` / ``sdcmicro_gr2``), sdcMicro's ``gr1`` /
``gr2``, both times (best of ``--repeat``) and the time ratio (sdckit / sdcMicro). Two more
lines fit main effects plus urbrur:water and roof:walls (every method but IPF, which sdcMicro
refuses with interactions). Needs ``Rscript`` with sdcMicro
(``../shared/tools/sdcmicro/install.sh``); without it each line says why sdcMicro was skipped.

BLAS runs single-threaded (``OPENBLAS_NUM_THREADS=1`` unless set): on a small shared machine
OpenBLAS's threads contend and slow the small dense solves by 10x or more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before numpy: see the module notes
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import SHARED_DATA, emit, parse_args, r_available, timed  # noqa: E402

from sdckit.risk.loglinear import METHODS, loglinear_risk  # noqa: E402

KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
WEIGHT = "sampling_weight"

R_SCRIPT = r"""
suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
x <- read.csv(args[1])
keys <- strsplit(args[2], ",")[[1]]
for (k in keys) x[[k]] <- factor(x[[k]])
x <- x[, c(keys, "%(weight)s")]
form <- as.formula(paste("~", args[4]))
reps <- as.integer(args[3])
for (m in strsplit(args[5], ",")[[1]]) {
  best <- Inf
  for (r in seq_len(reps)) {
    t <- system.time(res <- modRisk(x, method = m, weights = "%(weight)s", formulaM = form))[["elapsed"]]
    best <- min(best, t)
  }
  cat(sprintf('{"method": "%s", "gr1": %.12g, "gr2": %.12g, "seconds": %.6f}\n', m, res$gr1, res$gr2, best))
}
"""


def run_r(path: Path, n_repeat: int, formula: str, methods) -> dict | str:
    why = r_available()
    if why:
        return why
    script = R_SCRIPT.replace("%(weight)s", WEIGHT)
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as fh:
        fh.write(script)
    out = subprocess.run(["Rscript", fh.name, str(path), ",".join(KEYS), str(n_repeat), formula,
                          ",".join(methods)], capture_output=True, text=True)
    Path(fh.name).unlink(missing_ok=True)
    if out.returncode != 0:
        return f"sdcMicro modRisk failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"
    res = {}
    for line in out.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            d = json.loads(line)
            res[d["method"]] = d
    return res


def main() -> None:
    args = parse_args(__doc__)
    src = SHARED_DATA / "sdcmicro" / "testdata.csv"
    if not src.exists():
        emit(case="modrisk_vs_sdcmicro", skipped=f"{src} is absent (shared-only data)")
        return
    df = pd.read_csv(src)
    path = src
    tmp = None
    if args.n is not None and args.n != len(df):   # resample to n records (same rows for both tools)
        rng = np.random.default_rng(20261123)
        df = df.iloc[rng.integers(0, len(df), args.n)].reset_index(drop=True)
        tmp = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
        df.to_csv(tmp.name, index=False)
        path = Path(tmp.name)
    repeat = 1 if args.quick else args.repeat
    codes = [pd.factorize(df[k], sort=True)[0] for k in KEYS]
    w = df[WEIGHT].to_numpy(np.float64)
    main_effects = " + ".join(KEYS)
    cases = [("main", main_effects, list(METHODS)),
             ("2way", main_effects + " + urbrur:water + roof:walls",
              [m for m in METHODS if m != "IPF"])]
    for label, formula, methods in cases:
        r_res = run_r(path, repeat, formula, methods)
        for m in methods:
            sec, res = timed(lambda: loglinear_risk(codes, w, names=KEYS, method=m, formula=formula),
                             repeat)
            line = {"case": f"modrisk_{m}" + ("" if label == "main" else f"_{label}"), "n": len(df),
                    "method": m, "formula": formula, "seconds": sec,
                    "tau1": res.tau1, "tau2": res.tau2,
                    "sdckit_gr1": res.sdcmicro_gr1, "sdckit_gr2": res.sdcmicro_gr2,
                    "n_sample_uniques": res.n_sample_uniques,
                    "n_nonempty_cells": res.n_nonempty_cells,
                    "diagnostic_tau1": res.diagnostic["tau1"]["score"]}
            r = None if isinstance(r_res, str) else r_res.get(m)
            if r is None:
                line["sdcmicro"] = f"skipped: {r_res if isinstance(r_res, str) else 'no result from R'}"
            else:
                line.update({"sdcmicro_gr1": r["gr1"], "sdcmicro_gr2": r["gr2"],
                             "sdcmicro_seconds": r["seconds"],
                             "rel_diff_gr1": f"{abs(res.sdcmicro_gr1 - r['gr1']) / abs(r['gr1']):.2e}",
                             "rel_diff_gr2": f"{abs(res.sdcmicro_gr2 - r['gr2']) / abs(r['gr2']):.2e}",
                             "time_ratio": sec / r["seconds"] if r["seconds"] > 0 else None})
            emit(**line)
    if tmp is not None:
        Path(tmp.name).unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
