"""Benchmark of the disclosure-risk measures: frequencies + individual risk, wildcard
frequencies with missing values, SUDA2 (7 keys at 100,000; 10 keys at 1,000,000, the case
``suda2_10keys`` with CPU seconds beside the wall time).

Run from the project root:  .venv/bin/python benchmarks/bench_risk.py [--quick] [--n N]
Prints one JSON object per case per line: case, n, seconds (best of the repeats), peak_mb
(tracemalloc, a separate run), quality figures, and baseline_seconds (the simplest numpy
work of the same kind: one bincount of a precomputed combination code and one take).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

# single-threaded BLAS (unless set): on a small shared machine OpenBLAS's threads contend and
# slow the dense Newton solves of the log-linear case by 3-10x
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sdckit.risk.frequencies import frequencies_from_codes  # noqa: E402
from sdckit.risk.individual import individual_risk  # noqa: E402
from sdckit.risk.missing import wildcard_frequencies  # noqa: E402
from sdckit.risk.suda import suda2  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"


def timed(fn, repeat=3):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak / 2**20, out


def keys(n, rng, ncat=(12, 30, 8, 40)):
    return [rng.integers(0, c, n).astype(np.int32) for c in ncat], list(ncat)


def baseline(codes, ncat):
    code = np.zeros(codes[0].shape[0], dtype=np.int64)
    for c, m in zip(codes, ncat):
        code = code * m + c

    def run():
        cnt = np.bincount(code)
        return cnt.take(code)
    t, _, _ = timed(run)
    return t


def case_freq_risk(n, rng, repeat):
    codes, ncat = keys(n, rng)
    w = rng.uniform(50, 150, n)

    def run():
        f = frequencies_from_codes(codes, ncat, w)
        r = individual_risk(f.counts, f.weighted_counts)[f.group]  # one value per combination
        return f, r
    t, peak, (f, r) = timed(run, repeat)
    return {"case": f"freq_individual_risk_{n // 1_000_000 if n >= 1_000_000 else n}"
                    + ("M" if n >= 1_000_000 else ""),
            "n": n, "seconds": round(t, 4), "peak_mb": round(peak, 1), "n_keys": 4,
            "n_combinations": f.n_combinations, "n_sample_uniques": f.n_sample_uniques,
            "expected_reidentifications": round(float(r.sum()), 4),
            "global_risk": float(r.sum() / n), "baseline_seconds": round(baseline(codes, ncat), 4)}


def case_missing(n, rng, repeat):
    codes, ncat = keys(n, rng)
    w = rng.uniform(50, 150, n)
    miss = rng.random(n) < 0.01
    codes[1] = codes[1].copy()
    codes[1][miss] = -1

    def run():
        return wildcard_frequencies(codes, ncat, w, alpha=1.0)
    t, peak, f = timed(run, repeat)
    return {"case": "wildcard_freq_1pct_missing", "n": n, "seconds": round(t, 4),
            "peak_mb": round(peak, 1), "n_missing": int(miss.sum()),
            "n_combinations": f.n_combinations, "n_sample_uniques": int((f.fk == 1).sum()),
            "baseline_seconds": round(baseline([np.maximum(c, 0) for c in codes], ncat), 4)}


def case_measure_risk(n, rng, repeat):
    """The whole report (wildcard f_k/F_k with 1 % missing, risk, threshold, flags, frame)."""
    import pandas as pd

    from sdckit import Microdata
    from sdckit.risk import measure_risk

    codes, ncat = keys(n, rng)
    df = pd.DataFrame({f"k{i}": c.astype(np.float64) for i, c in enumerate(codes)})
    df.loc[rng.random(n) < 0.01, "k1"] = np.nan
    df["w"] = rng.uniform(50, 150, n)
    md = Microdata(df, key_vars=[f"k{i}" for i in range(4)], weight="w")
    t, peak, rep = timed(lambda: measure_risk(md), repeat)
    s = rep.summary
    return {"case": "measure_risk_1pct_missing", "n": n, "seconds": round(t, 4),
            "peak_mb": round(peak, 1), "n_combinations": s["n_combinations"],
            "n_sample_uniques": s["n_sample_uniques"],
            "expected_reidentifications": round(s["expected_reidentifications"], 4),
            "global_risk": s["global_risk"],
            "baseline_seconds": round(baseline([np.maximum(c, 0) for c in codes], ncat), 4)}


def case_suda(n, rng, repeat):
    ncat = (2, 5, 6, 8, 10, 12, 16)
    codes = [rng.integers(0, c, n).astype(np.int32) for c in ncat]

    def run():
        return suda2(codes, list(ncat))
    t, peak, res = timed(run, repeat)
    s = res.summary()
    return {"case": "suda2_7keys", "n": n, "seconds": round(t, 4), "peak_mb": round(peak, 1),
            "n_scored": s["n_scored"], "n_msu": s["n_msu"], "sum_scores": s["sum_scores"],
            "max_score": s["max_score"], "sum_dis": round(s["sum_dis"], 4),
            "baseline_seconds": round(baseline(codes, list(ncat)), 4)}


def case_suda_10keys(n, repeat):
    """SUDA2 on n records x 10 skewed keys (2..20 categories, Dirichlet(1) probabilities,
    seed 20240611): the issue's 1,000,000 x 10 case. ``cpu_seconds`` is the process CPU
    time of the best run (the machine may be shared; wall time swings with the load).
    ``peak_mb`` counts the search's row buffers at their reserved size (the pages a depth
    of the search does not reach are never touched, so the resident peak is lower)."""
    rng = np.random.default_rng(20240611)
    ncat = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20)
    codes = [rng.choice(c, n, p=rng.dirichlet(np.ones(c))).astype(np.int32) for c in ncat]
    suda2([c[:1000] for c in codes], list(ncat))          # load the kernels
    best = best_cpu = float("inf")
    res = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = suda2(codes, list(ncat))
        best_cpu = min(best_cpu, time.process_time() - c0)
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    suda2(codes, list(ncat))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    s = res.summary()
    return {"case": "suda2_10keys", "n": n, "seconds": round(best, 4), "cpu_seconds": round(best_cpu, 4),
            "peak_mb": round(peak / 2**20, 1),
            "n_scored": s["n_scored"], "n_msu": s["n_msu"], "sum_scores": s["sum_scores"],
            "max_score": s["max_score"], "sum_dis": round(s["sum_dis"], 4),
            "baseline_seconds": round(baseline(codes, list(ncat)), 4)}


def case_suda_testdata(repeat):
    import pandas as pd

    path = SHARED / "sdcmicro" / "testdata.csv"
    if not path.exists():
        return None
    df = pd.read_csv(path)
    names = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    codes, ncat = [], []
    for v in names:
        c, u = pd.factorize(df[v], sort=True)
        codes.append(c.astype(np.int32))
        ncat.append(len(u))

    def run():
        return suda2(codes, ncat, dis_fraction=0.01)
    t, peak, res = timed(run, repeat)
    s = res.summary()
    return {"case": "suda2_sdcmicro_testdata", "n": len(df), "seconds": round(t, 4),
            "peak_mb": round(peak, 1), "n_scored": s["n_scored"], "n_msu": s["n_msu"],
            "n_msu_by_size": s["n_msu_by_size"], "sum_scores": s["sum_scores"],
            "max_score": s["max_score"], "sum_dis": round(s["sum_dis"], 4),
            "baseline_seconds": round(baseline(codes, ncat), 4)}


def case_loglinear(n, rng, repeat, method="default"):
    """Log-linear risk (Skinner & Shlomo): 6 keys, main effects + k0:k1 + k2:k3, 1.7M cells.

    k1 depends on k0 and k3 on k2 (half of the records copy a function of the other key), so
    the two interactions are real. Baseline: the key table by one bincount plus the
    main-effects fit in closed form (outer product of the one-way margins).
    """
    from sdckit.risk.loglinear import loglinear_risk

    ncat = (40, 30, 12, 10, 6, 2)
    k0 = np.minimum(rng.geometric(0.08, n) - 1, ncat[0] - 1)
    k1 = np.where(rng.random(n) < 0.5, k0 % ncat[1], rng.integers(0, ncat[1], n))
    k2 = rng.integers(0, ncat[2], n)
    k3 = np.where(rng.random(n) < 0.5, k2 % ncat[3], rng.integers(0, ncat[3], n))
    codes = [k0, k1, k2, k3, rng.integers(0, ncat[4], n), rng.integers(0, ncat[5], n)]
    names = [f"k{i}" for i in range(6)]
    w = rng.uniform(20, 200, n)
    formula = " + ".join(names) + " + k0:k1 + k2:k3"
    t, peak, r = timed(lambda: loglinear_risk(codes, w, names=names, formula=formula, method=method),
                       repeat)

    def base():
        cell = np.ravel_multi_index(codes, ncat)
        f = np.bincount(cell, minlength=int(np.prod(ncat))).reshape(ncat).astype(float)
        mu = np.full(ncat, float(n))
        for j in range(len(ncat)):
            other = tuple(i for i in range(len(ncat)) if i != j)
            mu = mu * (f.sum(axis=other, keepdims=True) / n)
        return mu
    tb, _, _ = timed(base, repeat)
    return {"case": f"loglinear_{method}_6keys_2way", "n": n, "seconds": round(t, 4),
            "peak_mb": round(peak, 1), "n_cells": r.n_cells, "n_params": r.n_params,
            "n_iter": r.n_iter, "converged": r.converged, "n_sample_uniques": r.n_sample_uniques,
            "tau1": round(r.tau1, 4), "tau2": round(r.tau2, 4),
            "diagnostic_tau1": round(r.diagnostic["tau1"]["score"], 3),
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
            "baseline_seconds": round(tb, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes, under 30 s in all")
    ap.add_argument("--n", type=int, default=None, help="one size for every synthetic case")
    a = ap.parse_args()
    rng = np.random.default_rng(20240611)
    repeat = 3
    if a.n is not None:
        freq_sizes, miss_n, suda_n = [a.n], a.n, a.n
    elif a.quick:
        freq_sizes, miss_n, suda_n = [1_000_000], 1_000_000, 100_000
    else:
        freq_sizes, miss_n, suda_n = [1_000_000, 10_000_000], 1_000_000, 100_000
    for n in freq_sizes:
        print(json.dumps(case_freq_risk(n, rng, repeat if n <= 2_000_000 else 1)), flush=True)
    print(json.dumps(case_missing(miss_n, rng, repeat)), flush=True)
    print(json.dumps(case_measure_risk(miss_n, rng, repeat)), flush=True)
    print(json.dumps(case_suda(suda_n, rng, repeat)), flush=True)
    print(json.dumps(case_suda_10keys(a.n if a.n is not None else (100_000 if a.quick else 1_000_000),
                                      1 if a.quick else 2)), flush=True)
    td = case_suda_testdata(repeat)
    if td is not None:
        print(json.dumps(td), flush=True)
    ll_n = a.n if a.n is not None else 1_000_000
    for m in ("default", "IPF"):
        print(json.dumps(case_loglinear(ll_n, rng, 1 if a.quick else repeat, m)), flush=True)


if __name__ == "__main__":
    main()
