"""sdckit beside sdcMicro 5.8.1 on the same generated files, in one run, method by method.

Run from the project root:  .venv/bin/python benchmarks/compare_sdcmicro.py [--quick] [--n N]

What is timed is what a user pays once the file is read: the reading of the file is
excluded on both sides, the encoding of the data for the method is included on both sides
(sdckit: the :class:`~sdckit.Microdata` is built inside the clock, so its encoding of the key
columns counts; sdcMicro: the ``factor()`` conversions the call needs are inside
``system.time``). Every line says so (``"encoding": "included"``).

Cases (both tools run each on the same CSV file; sdcMicro through one ``Rscript`` process that
times every call with ``system.time``, best of ``--repeat``; sdckit timed in this process,
after one untimed call that loads the numba kernels from their cache):

* ``freq_indivrisk``: ``freqCalc`` + ``indivRisk`` (4 weighted keys) vs ``Microdata`` +
  ``measure_risk`` (f_k, F_k, individual risk); quality: equality of f_k and F_k, largest risk
  difference;
* ``freq_indivrisk_fresh``: the same call once per tool in a fresh process on
  1,000,000 and 10,000,000 records (``--fresh-sizes``): the first call, as a user's script
  makes it; sdckit reads with ``sdckit.io.read_data``, R with ``data.table::fread``. Peak
  memory is each process's high-water mark (``VmHWM``): ``peak_mb`` over the whole process
  (reading included), ``compute_peak_mb`` from the end of the reading (the high-water mark is
  reset there: ``/proc/self/clear_refs``) to the end of the call, the data held;
* ``suda2``: ``suda2`` (7 keys, DisFraction 0.01) vs ``suda2``; quality: largest score and
  DIS-score difference;
* ``pram_1var`` / ``pram_3var``: ``pram(pd = 0.8, alpha = 0.5)`` vs the ``pram`` step
  (invariant matrix, ``min_diagonal = 0.8``); quality: smallest diagonal of the matrices
  used, share of records changed;
* ``mdav``: ``microaggregation(method = "mdav", aggr = 3)`` on 5 variables vs the
  ``microaggregation`` step (MDAV on the whole file); quality: SSE on standardised values;
* ``rankswap``: ``rankSwap(P = 0.05, TopPercent = 0, BottomPercent = 0)`` (P is a fraction in
  sdcMicro 5.8.1) vs ``rank_swap(p = 5)``; quality: largest rank distance moved (share of n),
  SSE on standardised values;
* ``addnoise``: ``addNoise(method = "additive", noise = 30)`` (sd = 0.3 s) vs ``noise(kind =
  "additive", level = 0.09)``; quality: variance ratio (expected 1.09);
* ``addnoise_correlated``: ``addNoise(method = "correlated", noise = 9)`` (noise covariance
  0.09 times the data's) on 4 variables vs ``noise(kind = "correlated", level = 0.09)``;
  quality: mean variance ratio (expected 1.09), largest change of a correlation;
* ``localsupp``: ``localSuppression(k = 5)`` on adult (``../shared/data/arx_adult.csv``; keys
  age, sex, race, marital-status, native-country; R gets ``make.names`` and factors) vs the
  ``local_suppression`` step; quality: number of suppressed values, k-anonymity checked on
  both outputs with sdckit's wildcard count (missing matches anything);
* ``globalrecode``: ``globalRecode(breaks, labels)`` (intervals ``(a, b]``) vs ``recode``
  (``closed = "right"``); quality: equality of the outputs;
* ``topbotcoding``: ``topBotCoding(kind = "top")`` at the 99th percentile vs ``recode(top =)``;
  quality: equality of the outputs;
* ``modrisk_*``: the lines of ``benchmarks/compare_modrisk.py`` (log-linear risk), run as it
  is, tagged ``"from": "compare_modrisk.py"``;
* ``ma_simple``, ``ma_single``, ``ma_onedims``, ``ma_pca``: ``microaggregation(method = m,
  aggr = 3)`` on the 5 variables vs ``microaggregation(algorithm = m)``; quality: largest
  relative difference of the outputs (deterministic: equal to rounding) and both SSEs;
* ``ma_rmd``: ``microaggregation(method = "rmd")`` vs ``algorithm = "rmd"`` on the first
  ``--rmd-n`` records of the same file (sdcMicro builds the n x n distance matrix); random in
  both (the MCD's subsets): quality: both SSEs;
* ``ma_clustpca``, ``ma_influence``, ``ma_clustmcdpca``, ``ma_mcdpca`` on the 5 variables,
  ``ma_clustpppca``, ``ma_pppca`` on the first ``--rmd-n`` records (sdcMicro's ``prcompRob``
  holds an n x n matrix of projections): ``microaggregation(method = m, aggr = 3)`` (nc = 8,
  CLARA) vs ``algorithm = { type = m }``; quality: largest relative difference (deterministic:
  equal to rounding), or for the MCD methods (random in both) both SSEs and the share of
  records released with equal values;
* ``addnoise_correlated2``: ``addNoise(method = "correlated2", delta = 0.3)`` vs ``noise(kind =
  "correlated2", level = 0.09)``; quality: the covariance factor on both sides (expected 0.91);
* ``shuffle``: ``shuffle(form = c1 + c2 + c3 ~ c4, method = "ds")`` vs the ``shuffle`` step;
  quality: outputs are permutations of the originals, Spearman correlation with c4 on both
  sides;
* ``recordswap_across``: ``recordSwap`` (hierarchy region > district, similar household size,
  k = 3, swaprate 0.05) vs ``record_swap(allow_across_top = true, donors = "anywhere")`` on
  generated households (``--n`` records); quality: persons moved across the top level and
  their share of the persons swapped.

Every line has ``sdckit_seconds``, ``sdcmicro_seconds`` and ``ratio`` (sdcMicro / sdckit, so
> 1 means sdckit is faster), wall times; and ``sdckit_cpu_seconds``, ``sdcmicro_cpu_seconds``
(R: user + system time of the R process in ``system.time``; sdckit: ``time.process_time``)
and ``cpu_ratio``: on a shared machine wall times swing with the load, CPU times much less.
Without ``Rscript`` or sdcMicro every case still runs sdckit and says why sdcMicro was
skipped (install with ``../shared/tools/sdcmicro/install.sh``). ``--cases a,b`` runs a subset
(the generated files are the same whatever the subset).

Sizes: ``--quick`` 10,000 records (adult whole); default: the sizes of the comparison table in
``docs/benchmarks_sdcmicro.md`` (1,000,000 for frequencies, PRAM, noise, recoding; 100,000 for
SUDA2, MDAV and rank swapping; 200,000 for correlated noise); ``--n N`` sets every generated
size to N.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import ROOT, SHARED_DATA, emit, r_available  # noqa: E402

from sdckit import Microdata  # noqa: E402
from sdckit.masking.local_suppression import LocalSuppression, check_k_anonymity_wildcard  # noqa: E402
from sdckit.masking.microaggregation import MICROAGGREGATION_ALGORITHMS, Microaggregation  # noqa: E402

ALGORITHMS = {t.variant_name: t for t in MICROAGGREGATION_ALGORITHMS}
from sdckit.masking.noise import Noise  # noqa: E402
from sdckit.masking.rank_swap import RankSwap  # noqa: E402
from sdckit.masking.recode import Recode  # noqa: E402
from sdckit.pram.steps import Pram  # noqa: E402
from sdckit.risk import measure_risk  # noqa: E402
from sdckit.risk.suda import suda2  # noqa: E402

ADULT_KEYS = ["age", "sex", "race", "marital-status", "native-country"]
FREQ_KEYS = ["k5", "k8", "k10", "k20"]
SUDA_KEYS = ["s2", "s5", "s6", "s8", "s10", "s12", "s16"]
PRAM_VARS = ["k10", "k8", "k5"]
NUM_VARS = ["x1", "x2", "x3", "x4", "x5"]
CORR_VARS = ["c1", "c2", "c3", "c4"]
RECODE_BREAKS = [-1, 17, 29, 44, 64, 120]
RECODE_LABELS = ["0-17", "18-29", "30-44", "45-64", "65+"]

# One R process runs every case: the data frame is read before the clock starts, each call is
# timed with system.time (best of reps), outputs go to CSV files in the work directory.
R_SCRIPT = r"""
suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]; reps <- as.integer(args[2]); cases <- strsplit(args[3], ",")[[1]]
cpu_last <- NA
best <- function(expr_fn) {
  b <- Inf; bc <- Inf; out <- NULL
  for (r in seq_len(reps)) {
    set.seed(r); st <- system.time(out <- expr_fn())
    b <- min(b, st[["elapsed"]]); bc <- min(bc, st[["user.self"]] + st[["sys.self"]])
  }
  cpu_last <<- bc
  list(seconds = b, out = out)
}
emit <- function(case, seconds, extra = "") cat(sprintf('{"case": "%s", "seconds": %.6f, "cpu_seconds": %.6f%s}\n', case, seconds, cpu_last, extra))
f <- function(name) file.path(dir, name)
run <- function(case) {
  if (case == "freq_indivrisk") {
    x <- read.csv(f("keys.csv"))
    kv <- c(@freq_keys@)
    r <- best(function() { fr <- freqCalc(x, keyVars = kv, w = "w"); list(fr = fr, ir = indivRisk(fr)) })
    write.csv(data.frame(fk = r$out$fr$fk, Fk = r$out$fr$Fk, risk = r$out$ir$rk), f("r_freq.csv"), row.names = FALSE)
    emit(case, r$seconds)
  } else if (case == "suda2") {
    x <- read.csv(f("suda.csv"))
    r <- best(function() suda2(x, variables = c(@suda_keys@), DisFraction = 0.01))
    write.csv(data.frame(score = r$out$score, dis = r$out$disScore), f("r_suda.csv"), row.names = FALSE)
    emit(case, r$seconds)
  } else if (case %in% c("pram_1var", "pram_3var")) {
    x <- read.csv(f("keys.csv"))
    vars <- if (case == "pram_1var") c("k10") else c(@pram_vars@)
    r <- best(function() { y <- x[, vars, drop = FALSE]; for (v in vars) y[[v]] <- factor(y[[v]])
                           pram(y, variables = vars, pd = 0.8, alpha = 0.5) })
    pp <- attr(r$out, "pram_params")
    mind <- min(sapply(pp, function(p) min(diag(p$Rs))))
    changed <- mean(unlist(lapply(vars, function(v) as.character(r$out[[v]]) != as.character(r$out[[paste0(v, "_pram")]]))))
    emit(case, r$seconds, sprintf(', "min_diagonal": %.6f, "changed_share": %.6f', mind, changed))
  } else if (case == "mdav") {
    x <- read.csv(f("num.csv"))
    r <- best(function() microaggregation(x, variables = c(@num_vars@), aggr = 3, method = "mdav"))
    write.csv(r$out$mx, f("r_mdav.csv"), row.names = FALSE)
    emit(case, r$seconds)
  } else if (case == "rankswap") {
    x <- read.csv(f("num.csv"))
    r <- best(function() rankSwap(x, variables = c(@num_vars@), TopPercent = 0, BottomPercent = 0, P = 0.05))
    write.csv(r$out[, c(@num_vars@)], f("r_rankswap.csv"), row.names = FALSE)
    emit(case, r$seconds)
  } else if (case == "addnoise") {
    x <- read.csv(f("keys.csv"))
    r <- best(function() addNoise(x[, c("income"), drop = FALSE], variables = "income", noise = 30, method = "additive"))
    y <- r$out$xm
    if (is.null(y)) y <- r$out
    y <- as.matrix(y)[, 1]
    emit(case, r$seconds, sprintf(', "variance_ratio": %.6f', var(y) / var(x$income)))
  } else if (case == "addnoise_correlated") {
    x <- read.csv(f("corr.csv"))
    vars <- c(@corr_vars@)
    r <- best(function() addNoise(x[, vars], variables = vars, noise = 9, method = "correlated"))
    y <- r$out$xm
    if (is.null(y)) y <- r$out
    y <- as.matrix(y)
    x0 <- as.matrix(x[, vars])
    emit(case, r$seconds, sprintf(', "variance_ratio": %.6f, "max_correlation_change": %.6f',
                                  mean(apply(y, 2, var) / apply(x0, 2, var)), max(abs(cor(y) - cor(x0)))))
  } else if (case == "localsupp") {
    x <- read.csv(f("adult.csv"), check.names = TRUE)
    kv <- make.names(c(@adult_keys@))
    x <- x[, kv]
    r <- best(function() { y <- x; for (v in kv) y[[v]] <- factor(y[[v]]); localSuppression(y, keyVars = kv, k = 5) })
    xa <- as.data.frame(r$out$xAnon)
    out <- data.frame(lapply(xa[, kv], function(col) ifelse(is.na(col), "", as.character(col))))
    names(out) <- c(@adult_keys@)
    write.csv(out, f("r_localsupp.csv"), row.names = FALSE)
    emit(case, r$seconds, sprintf(', "suppressions": %d', sum(is.na(xa[, kv]))))
  } else if (case == "globalrecode") {
    x <- read.csv(f("keys.csv"))
    r <- best(function() globalRecode(x$age, breaks = c(@breaks@), labels = c(@labels@)))
    write.csv(data.frame(age = as.character(r$out)), f("r_recode.csv"), row.names = FALSE)
    emit(case, r$seconds)
  } else if (case %in% c("ma_simple", "ma_single", "ma_onedims", "ma_pca")) {
    x <- read.csv(f("num.csv"))
    m <- sub("ma_", "", case)
    r <- best(function() microaggregation(x, variables = c(@num_vars@), aggr = 3, method = m))
    write.csv(r$out$mx, f(paste0("r_", case, ".csv")), row.names = FALSE)
    emit(case, r$seconds)
  } else if (case %in% c("ma_rmd", "ma_pppca", "ma_clustpppca")) {
    x <- read.csv(f("num_rmd.csv"))
    m <- sub("ma_", "", case)
    set.seed(1)
    r <- best(function() microaggregation(x, variables = c(@num_vars@), aggr = 3, method = m))
    write.csv(r$out$mx, f(paste0("r_", case, ".csv")), row.names = FALSE)
    emit(case, r$seconds)
  } else if (case %in% c("ma_clustpca", "ma_influence", "ma_clustmcdpca", "ma_mcdpca")) {
    x <- read.csv(f("num.csv"))
    m <- sub("ma_", "", case)
    set.seed(1)
    r <- best(function() suppressWarnings(suppressMessages(
      microaggregation(x, variables = c(@num_vars@), aggr = 3, method = m))))
    write.csv(r$out$mx, f(paste0("r_", case, ".csv")), row.names = FALSE)
    emit(case, r$seconds)
  } else if (case == "addnoise_correlated2") {
    x <- read.csv(f("corr.csv"))
    vars <- c(@corr_vars@)
    r <- best(function() addNoise(x[, vars], variables = vars, method = "correlated2", delta = 0.3))
    y <- as.matrix(r$out$xm); c0 <- cov(as.matrix(x[, vars])); c1 <- cov(y); off <- row(c0) != col(c0)
    emit(case, r$seconds, sprintf(', "covariance_factor": %.6f', sum(c1[off] * c0[off]) / sum(c0[off]^2)))
  } else if (case == "shuffle") {
    x <- read.csv(f("corr.csv"))
    r <- best(function() shuffle(x, form = c1 + c2 + c3 ~ c4, method = "ds"))
    write.csv(r$out$shuffled, f("r_shuffle.csv"), row.names = FALSE)
    emit(case, r$seconds)
  } else if (case == "recordswap_across") {
    x <- data.table::fread(f("hh.csv"))
    r <- best(function() recordSwap(x, hid = "hid", hierarchy = c("region", "district"), similar = "hsize",
                                    risk_variables = c("age", "sex"), k_anonymity = 3, swaprate = 0.05, seed = 1L))
    y <- as.data.frame(r$out); y <- y[order(y$pid), ]
    emit(case, r$seconds, sprintf(', "persons_across_top": %d, "persons_swapped": %d',
                                  sum(y$region != x$region[order(x$pid)]), sum(y$district != x$district[order(x$pid)])))
  } else if (case == "topbotcoding") {
    x <- read.csv(f("keys.csv"))
    q <- as.numeric(readLines(f("top.txt")))
    r <- best(function() topBotCoding(x$income, value = q, replacement = q, kind = "top"))
    write.csv(data.frame(income = r$out), f("r_topbot.csv"), row.names = FALSE)
    emit(case, r$seconds)
  }
}
for (case in cases) {
  res <- tryCatch(run(case), error = function(e)
    cat(sprintf('{"case": "%s", "error": "%s"}\n', case, gsub('"', "'", conditionMessage(e)))))
}
"""


def _rlist(values) -> str:
    return ", ".join(f'"{v}"' if isinstance(v, str) else repr(v) for v in values)


def _fill(script: str) -> str:
    for name, values in (("freq_keys", FREQ_KEYS), ("suda_keys", SUDA_KEYS), ("pram_vars", PRAM_VARS),
                         ("num_vars", NUM_VARS), ("adult_keys", ADULT_KEYS), ("corr_vars", CORR_VARS),
                         ("breaks", RECODE_BREAKS), ("labels", RECODE_LABELS)):
        script = script.replace(f"@{name}@", _rlist(values))
    return script


def run_r(workdir: Path, cases: list[str], repeat: int) -> dict:
    """Run the R script on ``cases``; returns {case: parsed JSON line or {'error': ...}}."""
    why = r_available()
    if why is not None:
        return {c: {"skipped": why} for c in cases}
    script = R_SCRIPT
    script = _fill(script)
    path = workdir / "compare.R"
    path.write_text(script)
    out = subprocess.run(["Rscript", str(path), str(workdir), str(repeat), ",".join(cases)],
                         capture_output=True, text=True)
    res = {}
    for line in out.stdout.splitlines():
        if line.strip().startswith("{"):
            d = json.loads(line)
            res[d["case"]] = d
    for c in cases:
        if c not in res:
            tail = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"
            res[c] = {"error": f"no result from R: {tail}"}
    return res


def make_files(workdir: Path, n_big: int, n_mid: int, rng: np.random.Generator, n_corr: int) -> dict:
    """Write the generated files; returns the frames (same values as the files)."""
    # keys.csv: 4 skewed categorical keys, a weight, an age and an income (n_big records)
    keys = {}
    for name, c in zip(FREQ_KEYS, (5, 8, 10, 20)):
        p = rng.dirichlet(np.full(c, 0.8))
        keys[name] = rng.choice(c, n_big, p=p) + 1
    keys["w"] = np.round(rng.uniform(50, 150, n_big), 3)
    keys["age"] = rng.integers(0, 100, n_big)
    keys["income"] = np.round(rng.lognormal(10, 0.8, n_big), 2)
    df_keys = pd.DataFrame(keys)
    df_keys.to_csv(workdir / "keys.csv", index=False)
    # suda.csv: 7 uniform keys (n_mid records)
    df_suda = pd.DataFrame({k: rng.integers(1, int(k[1:]) + 1, n_mid) for k in SUDA_KEYS})
    df_suda.to_csv(workdir / "suda.csv", index=False)
    # num.csv: 5 correlated positive variables (n_mid records)
    L = np.linalg.cholesky(0.5 * np.eye(5) + 0.5)
    Z = rng.standard_normal((n_mid, 5)) @ L.T
    df_num = pd.DataFrame({v: np.round(np.exp(1 + 0.5 * Z[:, j]) * 100, 4) for j, v in enumerate(NUM_VARS)})
    df_num.to_csv(workdir / "num.csv", index=False)
    top = float(np.quantile(df_keys["income"], 0.99))
    (workdir / "top.txt").write_text(repr(top))
    # corr.csv: 4 correlated positive variables for the correlated noise (n_corr records);
    # drawn from a generator of its own, so the other files do not depend on its size
    crng = np.random.default_rng(20261126)
    Lc = np.linalg.cholesky(0.4 * np.eye(4) + 0.6)
    Zc = crng.standard_normal((n_corr, 4)) @ Lc.T
    df_corr = pd.DataFrame({v: np.round(np.exp(2 + 0.4 * Zc[:, j]) * 50, 3) for j, v in enumerate(CORR_VARS)})
    df_corr.to_csv(workdir / "corr.csv", index=False)
    out = {"keys": df_keys, "suda": df_suda, "num": df_num, "top": top, "corr": df_corr}
    adult = SHARED_DATA / "arx_adult.csv"
    if adult.exists():
        shutil.copy(adult, workdir / "adult.csv")
        out["adult"] = pd.read_csv(adult)
    return out


# freq_indivrisk_fresh: one call per tool in a fresh process, its peak memory from /proc
R_FRESH = r"""
suppressMessages({library(sdcMicro); library(data.table)})
args <- commandArgs(trailingOnly = TRUE)
hwm <- function() { l <- readLines("/proc/self/status"); as.numeric(gsub("[^0-9]", "", l[grepl("^VmHWM", l)])) / 1024 }
x <- as.data.frame(fread(args[1]))
read_peak <- hwm()
reset <- tryCatch({ writeLines("5", "/proc/self/clear_refs"); TRUE }, error = function(e) FALSE)
set.seed(1)
st <- system.time({ fr <- freqCalc(x, keyVars = c(@freq_keys@), w = "w"); ir <- indivRisk(fr) })
compute_peak <- hwm()
fwrite(data.frame(fk = fr$fk, Fk = fr$Fk, risk = ir$rk), args[2])
cat(sprintf('{"seconds": %.6f, "cpu_seconds": %.6f, "compute_peak_mb": %.1f, "read_peak_mb": %.1f, "reset": %s}\n',
            st[["elapsed"]], st[["user.self"]] + st[["sys.self"]], compute_peak, read_peak, tolower(reset)))
"""


def _hwm_mb() -> float:
    """This process's resident-memory high-water mark (VmHWM), in MB."""
    with open("/proc/self/status") as fh:
        for raw in fh:
            if raw.startswith("VmHWM"):
                return int(raw.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fresh_sdckit(path: str, out: str) -> None:
    """The sdckit side of freq_indivrisk_fresh (run as ``--fresh-sdckit PATH OUT`` in a new
    interpreter): read the file, reset the high-water mark, then one timed call."""
    from sdckit.io import read_data

    df, meta = read_data(path)
    read_peak = _hwm_mb()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        reset = True
    except OSError:
        reset = False
    c0, t0 = time.process_time(), time.perf_counter()
    rep = measure_risk(Microdata(df, key_vars=FREQ_KEYS, weight="w", meta=meta), k_values=(2, 3, 5))
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    compute_peak = _hwm_mb()
    np.savez(out, fk=rep.records["fk"].to_numpy(), Fk=rep.records["Fk"].to_numpy(),
             risk=rep.records["risk"].to_numpy())
    print(json.dumps({"seconds": wall, "cpu_seconds": cpu, "compute_peak_mb": compute_peak,
                      "read_peak_mb": read_peak, "reset": reset}), flush=True)


def fresh_case(wd: Path, n: int) -> dict:
    """freq_indivrisk_fresh at ``n`` records: the file, then each tool in its own process."""
    rng = np.random.default_rng(20261125)
    cols = {}
    for name, c in zip(FREQ_KEYS, (5, 8, 10, 20)):
        p = rng.dirichlet(np.full(c, 0.8))
        cols[name] = rng.choice(c, n, p=p) + 1
    cols["w"] = np.round(rng.uniform(50, 150, n), 3)
    path = wd / f"fresh_{n}.csv"
    pd.DataFrame(cols).to_csv(path, index=False)
    del cols
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    sdk = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--fresh-sdckit", str(path),
                          str(wd / f"fresh_{n}_sdckit.npz")], capture_output=True, text=True, env=env, cwd=ROOT)
    lines = [raw for raw in sdk.stdout.splitlines() if raw.startswith("{")]
    if sdk.returncode != 0 or not lines:
        return {"case": "freq_indivrisk_fresh", "n": n,
                "error": (sdk.stderr.strip().splitlines() or ["sdckit run failed"])[-1]}
    s = json.loads(lines[-1])
    out = {"case": "freq_indivrisk_fresh", "n": n, "encoding": "included", "call": "first, fresh process",
           "sdckit_seconds": s["seconds"], "sdckit_cpu_seconds": s["cpu_seconds"],
           "sdckit_peak_mb": max(s["read_peak_mb"], s["compute_peak_mb"]),
           "sdckit_compute_peak_mb": s["compute_peak_mb"] if s["reset"] else None}
    why = r_available()
    if why is not None:
        out["sdcmicro"] = "skipped: " + why
        return out
    script = wd / "fresh.R"
    script.write_text(_fill(R_FRESH))
    r_out = wd / f"fresh_{n}_r.csv"
    rr = subprocess.run(["Rscript", str(script), str(path), str(r_out)], capture_output=True, text=True)
    lines = [raw for raw in rr.stdout.splitlines() if raw.startswith("{")]
    if rr.returncode != 0 or not lines:
        out["sdcmicro"] = "error: " + ((rr.stderr.strip().splitlines() or ["no result"])[-1])
        return out
    r = json.loads(lines[-1])
    out.update(sdcmicro_seconds=r["seconds"], sdcmicro_cpu_seconds=r["cpu_seconds"],
               sdcmicro_peak_mb=max(r["read_peak_mb"], r["compute_peak_mb"]),
               sdcmicro_compute_peak_mb=r["compute_peak_mb"] if r["reset"] else None,
               ratio=r["seconds"] / s["seconds"] if s["seconds"] > 0 else None,
               cpu_ratio=r["cpu_seconds"] / s["cpu_seconds"] if s["cpu_seconds"] > 0 else None)
    ours = np.load(wd / f"fresh_{n}_sdckit.npz")
    theirs = pd.read_csv(r_out)
    out.update(fk_equal=bool(np.array_equal(theirs["fk"].to_numpy(), ours["fk"])),
               Fk_max_abs_diff=float(np.abs(theirs["Fk"].to_numpy() - ours["Fk"]).max()),
               risk_max_abs_diff=float(np.abs(theirs["risk"].to_numpy() - ours["risk"]).max()))
    for f in (path, r_out, wd / f"fresh_{n}_sdckit.npz"):
        f.unlink(missing_ok=True)
    return out


def sse_std(X: np.ndarray, Y: np.ndarray) -> float:
    """Sum of squared differences on values standardised by the original sd."""
    sd = X.std(axis=0, ddof=1)
    return float((((X - Y) / sd) ** 2).sum())


def max_rank_move(X: np.ndarray, Y: np.ndarray) -> float:
    """Largest |rank of a record's original value - rank of its released value| / n."""
    n = X.shape[0]
    worst = 0
    for j in range(X.shape[1]):
        sx = np.sort(X[:, j])
        rx = np.searchsorted(sx, X[:, j], side="left")
        ry = np.searchsorted(sx, Y[:, j], side="left")
        worst = max(worst, int(np.abs(rx - ry).max()))
    return worst / n


def warm_timed(fn, repeat: int):
    """One untimed call (numba kernels compile or load from their cache), then ``repeat`` timed
    calls: ((best wall seconds, best CPU seconds of this process), last result)."""
    fn()
    wall = cpu = float("inf")
    out = None
    for _ in range(max(1, repeat)):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - t0)
    return (wall, cpu), out


def line(case: str, n: int, sdk: tuple[float, float], r: dict, **quality) -> None:
    sdk_seconds, sdk_cpu = sdk
    out = {"case": case, "n": n, "encoding": "included", "sdckit_seconds": sdk_seconds}
    if "seconds" in r:
        out["sdcmicro_seconds"] = r["seconds"]
        out["ratio"] = r["seconds"] / sdk_seconds if sdk_seconds > 0 else None
        if "cpu_seconds" in r:
            out.update(sdckit_cpu_seconds=sdk_cpu, sdcmicro_cpu_seconds=r["cpu_seconds"],
                       cpu_ratio=r["cpu_seconds"] / sdk_cpu if sdk_cpu > 0 else None)
    else:
        out["sdcmicro"] = "skipped: " + r.get("skipped", r.get("error", "no result"))
    out.update(quality)
    emit(**out)


CASES = ["freq_indivrisk", "freq_indivrisk_fresh", "suda2", "pram_1var", "pram_3var", "mdav", "rankswap",
         "addnoise", "addnoise_correlated", "localsupp", "globalrecode", "topbotcoding", "modrisk",
         "ma_simple", "ma_single", "ma_onedims", "ma_pca", "ma_rmd", "addnoise_correlated2", "shuffle",
         "recordswap_across", "ma_clustpca", "ma_clustpppca", "ma_clustmcdpca", "ma_influence", "ma_pppca",
         "ma_mcdpca"]
#: microaggregation cases on the first --rmd-n records (sdcMicro holds an n x n matrix: rmd's distances,
#: the projections of prcompRob)
MA_SMALL = ("ma_rmd", "ma_pppca", "ma_clustpppca")
#: microaggregation cases random in both tools (robust MCD subsets): SSEs and the share of equal records
MA_RANDOM = ("ma_rmd", "ma_clustmcdpca", "ma_mcdpca")


def make_households(workdir: Path, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """hh.csv for recordswap_across: about n persons in households of 1-5, region (4) > district
    (5 per region), age band and sex per person; household-level geography and size."""
    n_hh = max(10, n // 3)
    size = rng.integers(1, 6, n_hh)
    hid = np.repeat(np.arange(1, n_hh + 1), size)
    region = rng.integers(1, 5, n_hh)
    df = pd.DataFrame({"pid": np.arange(1, hid.size + 1), "hid": hid, "region": region[hid - 1],
                       "district": (region * 10 + rng.integers(1, 6, n_hh))[hid - 1], "hsize": size[hid - 1],
                       "age": rng.integers(0, 9, hid.size), "sex": rng.integers(1, 3, hid.size)})
    df.to_csv(workdir / "hh.csv", index=False)
    return df


def parse_args(description: str) -> argparse.Namespace:
    """``--quick``, ``--n N`` and ``--repeat R`` as in every benchmark, and ``--cases``."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes only (10,000 records; adult whole)")
    p.add_argument("--n", type=int, default=None, help="one size for every generated file")
    p.add_argument("--repeat", type=int, default=3, help="timing repeats (best is reported)")
    p.add_argument("--fresh-sizes", default=None,
                   help="sizes of freq_indivrisk_fresh (default 1000000,10000000; --quick 10000; --n N: N)")
    p.add_argument("--rmd-n", type=int, default=5000,
                   help="records of ma_rmd (sdcMicro's rmd holds an n x n distance matrix; default 5000)")
    p.add_argument("--cases", default=",".join(CASES),
                   help="comma-separated subset of: " + ", ".join(CASES) + " (default: all)")
    args = p.parse_args()
    unknown = sorted(set(args.cases.split(",")) - set(CASES))
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}: choose among {', '.join(CASES)}")
    return args


def main() -> None:
    args = parse_args(__doc__)
    n_big = 10_000 if args.quick else 1_000_000
    n_mid = 10_000 if args.quick else 100_000
    if args.n is not None:
        n_big = n_mid = args.n
    repeat = 1 if args.quick else args.repeat
    n_corr = 10_000 if args.quick else 200_000
    if args.n is not None:
        n_corr = args.n
    rng = np.random.default_rng(20261123)
    selected = args.cases.split(",")
    cases = [c for c in CASES if c in selected and c not in ("modrisk", "freq_indivrisk_fresh")]
    with tempfile.TemporaryDirectory() as tmp:
        wd = Path(tmp)
        if "freq_indivrisk_fresh" in selected:
            sizes = ([int(x) for x in args.fresh_sizes.split(",")] if args.fresh_sizes else
                     [10_000] if args.quick else [args.n] if args.n else [1_000_000, 10_000_000])
            for n_fresh in sizes:
                emit(**fresh_case(wd, n_fresh))
        if not cases and "modrisk" not in selected:
            return
        data = make_files(wd, n_big, n_mid, rng, n_corr)
        if "adult" not in data and "localsupp" in cases:
            cases.remove("localsupp")
            emit(case="localsupp", skipped=f"{SHARED_DATA / 'arx_adult.csv'} is absent (shared-only data)")
        n_rmd = min(args.rmd_n, n_mid)
        data["num"].iloc[:n_rmd].to_csv(wd / "num_rmd.csv", index=False)
        if "recordswap_across" in cases:
            data["hh"] = make_households(wd, n_mid, np.random.default_rng(20261127))
        R = run_r(wd, cases, repeat)
        dk, ds, dn = data["keys"], data["suda"], data["num"]
        X = dn[NUM_VARS].to_numpy(np.float64)

        # frequencies + individual risk (the keys encoded inside the clock)
        if "freq_indivrisk" in cases:
            sec, rep = warm_timed(lambda: measure_risk(Microdata(dk, key_vars=FREQ_KEYS, weight="w"),
                                                       k_values=(2, 3, 5)), repeat)
            q = {}
            if "seconds" in R["freq_indivrisk"]:
                rf = pd.read_csv(wd / "r_freq.csv")
                q = {"fk_equal": bool((rf["fk"].to_numpy() == rep.records["fk"].to_numpy()).all()),
                     "Fk_max_abs_diff": float(np.abs(rf["Fk"].to_numpy() - rep.records["Fk"].to_numpy()).max()),
                     "risk_max_abs_diff": float(np.abs(rf["risk"].to_numpy() - rep.records["risk"].to_numpy()).max())}
            line("freq_indivrisk", len(dk), sec, R["freq_indivrisk"], keys=len(FREQ_KEYS), **q)

        # SUDA2
        if "suda2" in cases:
            codes = [pd.factorize(ds[k], sort=True)[0].astype(np.int32) for k in SUDA_KEYS]
            ncat = [int(c.max()) + 1 for c in codes]
            sec, res = warm_timed(lambda: suda2(codes, ncat, dis_fraction=0.01), repeat)
            q = {"n_scored": int((res.score > 0).sum())}
            if "seconds" in R["suda2"]:
                rs = pd.read_csv(wd / "r_suda.csv")
                q.update(score_max_abs_diff=float(np.abs(rs["score"].to_numpy() - res.score).max()),
                         dis_max_abs_diff=float(np.abs(rs["dis"].to_numpy() - res.dis_score).max()))
            line("suda2", len(ds), sec, R["suda2"], keys=len(SUDA_KEYS), **q)

        # PRAM
        if "pram_1var" in cases or "pram_3var" in cases:
            for case, vars_ in (("pram_1var", PRAM_VARS[:1]), ("pram_3var", PRAM_VARS)):
                if case not in cases:
                    continue
                mdp = Microdata(dk[vars_], key_vars=vars_)
                step = Pram(variables=vars_, min_diagonal=0.8)
                sec, res = warm_timed(lambda: step.apply(Microdata(dk[vars_], key_vars=vars_), rng=1), repeat)
                mats = res.summary["matrices"]
                changed = float(np.mean([(res.microdata.codes(v) != mdp.codes(v)).mean() for v in vars_]))
                q = {"sdckit_min_diagonal": min(float(m["min_diagonal"]) for m in mats.values()),
                     "sdckit_changed_share": changed}
                r = R[case]
                if "min_diagonal" in r:
                    q.update(sdcmicro_min_diagonal=r["min_diagonal"], sdcmicro_changed_share=r["changed_share"])
                line(case, len(dk), sec, r, variables=len(vars_), **q)

        # MDAV
        if "mdav" in cases:
            step = Microaggregation(k=3)  # MDAV on the whole file
            sec, res = warm_timed(lambda: step.apply(Microdata(dn, numeric_vars=NUM_VARS), rng=1), repeat)
            q = {"sdckit_sse": sse_std(X, res.microdata.frame[NUM_VARS].to_numpy(np.float64))}
            if "seconds" in R["mdav"]:
                q["sdcmicro_sse"] = sse_std(X, pd.read_csv(wd / "r_mdav.csv")[NUM_VARS].to_numpy(np.float64))
            line("mdav", len(dn), sec, R["mdav"], k=3, variables=len(NUM_VARS), **q)

        # rank swapping
        if "rankswap" in cases:
            step = RankSwap(p=5.0, top_percent=0.0, bottom_percent=0.0)
            sec, res = warm_timed(lambda: step.apply(Microdata(dn, numeric_vars=NUM_VARS), rng=1), repeat)
            Y = res.microdata.frame[NUM_VARS].to_numpy(np.float64)
            q = {"sdckit_max_rank_move": max_rank_move(X, Y), "sdckit_sse": sse_std(X, Y)}
            if "seconds" in R["rankswap"]:
                Yr = pd.read_csv(wd / "r_rankswap.csv")[NUM_VARS].to_numpy(np.float64)
                q.update(sdcmicro_max_rank_move=max_rank_move(X, Yr), sdcmicro_sse=sse_std(X, Yr))
            line("rankswap", len(dn), sec, R["rankswap"], p_share=0.05, **q)

        # additive noise
        if "addnoise" in cases:
            inc = dk[["income"]]
            step = Noise(level=0.09, kind="additive")
            sec, res = warm_timed(lambda: step.apply(Microdata(inc, numeric_vars=["income"]), rng=1), repeat)
            q = {"sdckit_variance_ratio": float(res.microdata.frame["income"].var() / dk["income"].var())}
            if "variance_ratio" in R["addnoise"]:
                q["sdcmicro_variance_ratio"] = R["addnoise"]["variance_ratio"]
            line("addnoise", len(dk), sec, R["addnoise"], level=0.09, **q)

        # correlated noise
        if "addnoise_correlated" in cases:
            dc = data["corr"]
            step = Noise(level=0.09, kind="correlated")
            sec, res = warm_timed(lambda: step.apply(Microdata(dc, numeric_vars=CORR_VARS), rng=1), repeat)
            Xc, Yc = dc[CORR_VARS].to_numpy(np.float64), res.microdata.frame[CORR_VARS].to_numpy(np.float64)
            q = {"sdckit_variance_ratio": float(np.mean(Yc.var(axis=0, ddof=1) / Xc.var(axis=0, ddof=1))),
                 "sdckit_max_correlation_change": float(np.abs(np.corrcoef(Yc, rowvar=False)
                                                               - np.corrcoef(Xc, rowvar=False)).max())}
            r = R["addnoise_correlated"]
            if "variance_ratio" in r:
                q.update(sdcmicro_variance_ratio=r["variance_ratio"],
                         sdcmicro_max_correlation_change=r["max_correlation_change"])
            line("addnoise_correlated", len(dc), sec, r, level=0.09, variables=len(CORR_VARS), **q)

        # local suppression on adult
        if "localsupp" in cases:
            if "adult" in data:
                adult = data["adult"]
                mda = Microdata(adult, key_vars=ADULT_KEYS)
                step = LocalSuppression(k=5)
                sec, res = warm_timed(lambda: step.apply(Microdata(adult, key_vars=ADULT_KEYS), rng=1), repeat)
                q = {"sdckit_suppressions": res.summary["suppressions"]}
                r = R["localsupp"]
                if "suppressions" in r:
                    ra = pd.read_csv(wd / "r_localsupp.csv", dtype=str, keep_default_na=False)
                    rcodes, ncat = [], []
                    for v in ADULT_KEYS:
                        cats = mda.categories(v).astype(str)
                        c = pd.Index(cats).get_indexer(ra[v].to_numpy())
                        c[ra[v].to_numpy() == ""] = -1
                        rcodes.append(c.astype(np.int32))
                        ncat.append(len(cats))
                    chk = check_k_anonymity_wildcard(rcodes, ncat, 5)
                    q.update(sdcmicro_suppressions=r["suppressions"],
                             sdcmicro_k_violations_wildcard=int(chk.value))
                line("localsupp", len(adult), sec, r, k=5, keys=len(ADULT_KEYS), **q)

        # global recoding (intervals (a, b])
        if "globalrecode" in cases:
            age = dk[["age"]]
            step = Recode(variable="age", breaks=RECODE_BREAKS, labels=RECODE_LABELS, closed="right")
            sec, res = warm_timed(lambda: step.apply(Microdata(age), rng=1), repeat)
            q = {}
            if "seconds" in R["globalrecode"]:
                rr = pd.read_csv(wd / "r_recode.csv", dtype=str)["age"].to_numpy()
                q["outputs_equal"] = bool((res.microdata.frame["age"].astype(str).to_numpy() == rr).all())
            line("globalrecode", len(dk), sec, R["globalrecode"], **q)

        # top coding
        if "topbotcoding" in cases:
            top = data["top"]
            inc = dk[["income"]]
            step = Recode(variable="income", top=top, top_value=top)
            sec, res = warm_timed(lambda: step.apply(Microdata(inc, numeric_vars=["income"]), rng=1), repeat)
            q = {"n_coded": int((dk["income"] > top).sum())}
            if "seconds" in R["topbotcoding"]:
                rt = pd.read_csv(wd / "r_topbot.csv")["income"].to_numpy(np.float64)
                q["outputs_equal"] = bool(np.allclose(res.microdata.frame["income"].to_numpy(np.float64), rt,
                                                      rtol=0, atol=1e-9))
            line("topbotcoding", len(dk), sec, R["topbotcoding"], **q)

        # sdcMicro's other microaggregation methods (deterministic: outputs compared)
        for case in ("ma_simple", "ma_single", "ma_onedims", "ma_pca", "ma_rmd", "ma_clustpca", "ma_clustpppca",
                     "ma_clustmcdpca", "ma_influence", "ma_pppca", "ma_mcdpca"):
            if case not in cases:
                continue
            frame = dn if case not in MA_SMALL else dn.iloc[:n_rmd].reset_index(drop=True)
            Xc = frame[NUM_VARS].to_numpy(np.float64)
            step = Microaggregation(k=3, algorithm=ALGORITHMS[case[3:]]())
            sec, res = warm_timed(lambda s=step, fr=frame: s.apply(Microdata(fr, numeric_vars=NUM_VARS), rng=1),
                                  repeat)
            Y = res.microdata.frame[NUM_VARS].to_numpy(np.float64)
            q = {"sdckit_sse": sse_std(Xc, Y)}
            r = R[case]
            if "seconds" in r:
                Yr = pd.read_csv(wd / f"r_{case}.csv")[NUM_VARS].to_numpy(np.float64)
                q["sdcmicro_sse"] = sse_std(Xc, Yr)
                if case not in MA_RANDOM:
                    q["max_relative_difference"] = float(np.max(np.abs(Y - Yr) / np.abs(Yr)))
                else:                           # random in both: records released with the same values
                    q["share_equal_records"] = float(np.mean(np.all(np.abs(Y - Yr) <= 1e-9 * np.abs(Yr), axis=1)))
            line(case, len(frame), sec, r, k=3, variables=len(NUM_VARS), **q)

        # correlated2 noise: covariances shrink by 1 - delta^2 = 0.91
        if "addnoise_correlated2" in cases:
            dc = data["corr"]
            step = Noise(level=0.09, kind="correlated2")
            sec, res = warm_timed(lambda: step.apply(Microdata(dc, numeric_vars=CORR_VARS), rng=1), repeat)
            q = {"expected_covariance_factor": 0.91,
                 "sdckit_covariance_factor": res.summary["covariance_factor_realised"]}
            r = R["addnoise_correlated2"]
            if "covariance_factor" in r:
                q["sdcmicro_covariance_factor"] = r["covariance_factor"]
            line("addnoise_correlated2", len(dc), sec, r, level=0.09, **q)

        # data shuffling (Muralidhar & Sarathy)
        if "shuffle" in cases:
            from scipy.stats import spearmanr

            from sdckit.masking.shuffle import Shuffle

            dc = data["corr"]
            step = Shuffle(predictors=["c4"], variables=["c1", "c2", "c3"])
            sec, res = warm_timed(lambda: step.apply(Microdata(dc, numeric_vars=["c1", "c2", "c3"]), rng=1), repeat)
            out = res.microdata.frame

            def rho(frame):
                return [round(float(spearmanr(frame[v], dc["c4"]).statistic), 4) for v in ("c1", "c2", "c3")]

            q = {"original_spearman_with_c4": rho(dc), "sdckit_spearman_with_c4": rho(out),
                 "sdckit_permutation": bool(all(np.array_equal(np.sort(out[v]), np.sort(dc[v]))
                                                for v in ("c1", "c2", "c3")))}
            r = R["shuffle"]
            if "seconds" in r:
                rs = pd.read_csv(wd / "r_shuffle.csv")
                q["sdcmicro_spearman_with_c4"] = rho(rs)
                q["sdcmicro_permutation"] = bool(all(np.allclose(np.sort(rs[v]), np.sort(dc[v]), rtol=1e-12)
                                                     for v in ("c1", "c2", "c3")))
            line("shuffle", len(dc), sec, r, **q)

        # record swapping across the top level
        if "recordswap_across" in cases:
            from sdckit.masking.record_swap import RecordSwap

            hh = data["hh"]
            step = RecordSwap(hierarchy=["region", "district"], similar=["hsize"], risk_variables=["age", "sex"],
                              swap_rate=0.05, k_anonymity=3, allow_across_top=True, donors="anywhere")
            sec, res = warm_timed(lambda: step.apply(Microdata(hh, household="hid"), rng=1), repeat)
            out = res.microdata.frame
            across = int((out["region"] != hh["region"]).sum())
            swapped = int((out["district"] != hh["district"]).sum())
            q = {"sdckit_persons_across_top": across, "sdckit_persons_swapped": swapped,
                 "sdckit_across_share": across / max(swapped, 1)}
            r = R["recordswap_across"]
            if "persons_across_top" in r:
                q.update(sdcmicro_persons_across_top=r["persons_across_top"],
                         sdcmicro_persons_swapped=r["persons_swapped"],
                         sdcmicro_across_share=r["persons_across_top"] / max(r["persons_swapped"], 1))
            line("recordswap_across", len(hh), sec, r, **q)

    # log-linear risk (modRisk): the lines of compare_modrisk.py, run as it is
    if "modrisk" not in selected:
        return
    cmd = [sys.executable, str(ROOT / "benchmarks" / "compare_modrisk.py"), "--repeat", str(repeat)]
    if args.quick:
        cmd.append("--quick")
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    for raw in out.stdout.splitlines():
        if raw.startswith("{"):
            d = json.loads(raw)
            if "seconds" in d and "sdcmicro_seconds" in d:
                d["sdckit_seconds"] = d.pop("seconds")
                d["ratio"] = d["sdcmicro_seconds"] / d["sdckit_seconds"] if d["sdckit_seconds"] > 0 else None
            d.pop("time_ratio", None)   # sdckit / sdcMicro there; "ratio" here is the inverse
            d["from"] = "compare_modrisk.py"
            emit(**d)
    if out.returncode != 0:
        emit(case="modrisk", error=(out.stderr.strip().splitlines() or ["failed"])[-1])


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--fresh-sdckit":
        fresh_sdckit(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
