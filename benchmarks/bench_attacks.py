"""Speed of the attacks (sdckit.attacks) on large files.

Run from the project root:  .venv/bin/python benchmarks/bench_attacks.py [--quick] [--n N]

Data: n original records, n control records and a released file of n records, 20 columns (14
categorical with 2 to 60 categories, 6 numeric) drawn from one population with a latent factor
that ties the columns together; the release is the original records with every cell replaced,
with probability 0.1, by the value of another random record (a lightly masked file). Sampling as
Anonymeter samples: ``n_attacks = 500`` predicates (singling out, multivariate, 3 columns) and
500 original and 500 control targets (linkability, 10 + 10 columns; inference of one
categorical column from the 19 others; the inference once more with ``tie_break="quicksort"``,
Anonymeter's neighbours: a full distance row and sort per target, timed up to 100,000 records); membership inference scores 1,000 members and 1,000
non-members (5 disjoint groups behind the interval), the density attack from samples of 20,000
released and reference records. Every attack reads the whole files: the predicates are counted on all n
original and control records and the neighbours searched among all n released records.

One JSON line per attack: ``seconds`` (wall), ``cpu_seconds`` (this process),
``peak_mb`` (resident high-water mark so far), the figure, and ``baseline_seconds``: numpy's
time for the same number of full passes over the released file (one vectorised distance of one
target to every released record, timed three times and multiplied by the number of targets the
attack searches), the simplest way to do the same search. A last line gives the total.
"""

from __future__ import annotations

import os
import resource
import sys
import time

import numpy as np
import pandas as pd
from _common import emit, parse_args

from sdckit.attacks import inference, linkability, membership_inference, singling_out  # noqa: E402
from sdckit.attacks.encode import encode_frames  # noqa: E402

N_CAT, N_NUM = 14, 6
#: the largest file on which the "quicksort" tie rule (Anonymeter's neighbours) is timed
QUICKSORT_MAX_N = 100_000


def population(n: int, rng: np.random.Generator) -> pd.DataFrame:
    z = rng.normal(size=n)
    cols = {}
    for j in range(N_CAT):
        k = 2 + (j * 58) // (N_CAT - 1)
        logits = np.outer(z, np.linspace(-1, 1, k)) * (0.5 + 0.1 * j) + rng.gumbel(size=(n, k))
        cols[f"c{j}"] = logits.argmax(axis=1).astype(np.int16)
    for j in range(N_NUM):
        cols[f"x{j}"] = np.round(z * (1 + j) + rng.normal(scale=1 + j, size=n), 2)
    return pd.DataFrame(cols)


def masked(frame: pd.DataFrame, rng: np.random.Generator, p: float = 0.1) -> pd.DataFrame:
    n = len(frame)
    out = {}
    for c in frame.columns:
        v = frame[c].to_numpy()
        swap = rng.random(n) < p
        out[c] = np.where(swap, v[rng.integers(0, n, n)], v)
    return pd.DataFrame(out)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def baseline_pass(enc, n_targets: int, rng) -> float:
    """numpy: distances of one target to every released record, timed 3 times, times n_targets."""
    rel = enc.released
    best = np.inf
    for _ in range(3):
        q = enc.original[rng.integers(0, enc.original.shape[0])]
        t0 = time.perf_counter()
        diff = np.where(enc.is_numeric, np.minimum(np.abs(rel - q) * enc.inv_range, 1.0), rel != q)
        diff.sum(axis=1).argmin()
        best = min(best, time.perf_counter() - t0)
    return best * n_targets


def run(n: int) -> None:
    rng = np.random.default_rng(20260)
    t0 = time.perf_counter()
    original, control = population(n, rng), population(n, rng)
    released = masked(original, rng)
    emit(case="data", n=n, seconds=time.perf_counter() - t0, columns=N_CAT + N_NUM)
    numeric = [f"x{j}" for j in range(N_NUM)]
    total_wall, total_cpu = time.perf_counter(), time.process_time()
    t0, c0 = time.perf_counter(), time.process_time()
    enc = encode_frames(released, original, control, numeric=numeric)
    emit(case="encode", n=n, seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0, peak_mb=peak_mb())
    cols = list(enc.columns)
    attacks = {
        "singling_out": (lambda: singling_out(original, released, control, n_attacks=500, n_cols=3, rng=1,
                                              encoded=enc), 0),
        "linkability": (lambda: linkability(original, released, control, aux_a=cols[:10], aux_b=cols[10:],
                                            n_attacks=500, rng=2, encoded=enc), 2000),
        "inference": (lambda: inference(original, released, control, secret="c13",
                                        aux=[c for c in cols if c != "c13"], n_attacks=500, rng=3, encoded=enc), 1000),
        "inference_quicksort": (lambda: inference(original, released, control, secret="c13",
                                                  aux=[c for c in cols if c != "c13"], n_attacks=500, rng=3,
                                                  encoded=enc, tie_break="quicksort"), 1000),
        "mia_distance": (lambda: membership_inference(original, released, control, method="distance",
                                                      n_targets=1000, n_repeats=5, rng=4, encoded=enc), 2000),
        "mia_density": (lambda: membership_inference(original, released, control, method="density",
                                                     n_targets=1000, n_repeats=5, max_sample=20_000, rng=5,
                                                     encoded=enc), 0),
    }
    if n > QUICKSORT_MAX_N:   # a full distance row and sort per target: not a rule for millions of records
        del attacks["inference_quicksort"]
    for name, (fn, n_targets) in attacks.items():
        t0, c0 = time.perf_counter(), time.process_time()
        res = fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        figures = ({"risk": res.risk, "ci": list(res.ci)} if hasattr(res, "risk")
                   else {"auc": res.auc, "auc_ci": list(res.auc_ci), "tpr_at_1pct_fpr": res.tpr})
        extra = {"baseline_seconds": baseline_pass(enc, n_targets, rng)} if n_targets else {}
        emit(case=name, n=n, seconds=wall, cpu_seconds=cpu, peak_mb=peak_mb(), **figures, **extra)
    emit(case="total", n=n, seconds=time.perf_counter() - total_wall, cpu_seconds=time.process_time() - total_cpu,
         peak_mb=peak_mb(), load_average=os.getloadavg()[0], threads=int(os.environ.get("NUMBA_NUM_THREADS", 0))
         or __import__("numba").get_num_threads())


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    sizes = [args.n] if args.n else ([20_000] if args.quick else [100_000, 1_000_000])
    # compile once outside the timings (the kernels are cached on disk after the first run)
    run_small = population(300, np.random.default_rng(0))
    singling_out(run_small, run_small, run_small, n_attacks=5, rng=0)
    membership_inference(run_small, run_small, run_small, method="density", n_targets=5, n_repeats=2, rng=0)
    for n in sizes:
        run(n)


if __name__ == "__main__":
    sys.exit(main())
