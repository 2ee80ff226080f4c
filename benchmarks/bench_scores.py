"""Benchmark: Score' (IL', DLD', ID') on the CASC test file and on 1,000,000 x 5 synthetic data,
and Algorithm 13 (post-masking optimisation) on CASC until the paper's TargetE.

Baselines (same run): for Score', one scipy cKDTree build and nearest-neighbour query of all
masked records on all variables (the least work any linkage measure does); for Algorithm 13,
as many full O(n d^2) recomputations of the moments as the 1,000th of its steps (a step
without the running sums would need one each), scaled to its step count.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from _common import SHARED_DATA, emit, parse_args, peak_mb, timed
from scipy.spatial import cKDTree

from sdckit.explore.scores import score_primed
from sdckit.masking.postmask import postmask_optimise
from sdckit.masking.rank_swap import rank_swap_array

CASC = SHARED_DATA / "sdcmicro" / "CASCrefmicrodata.csv"


def synthetic(n: int, d: int = 5, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cov = 0.5 * np.ones((d, d)) + 0.5 * np.eye(d)
    return np.exp(rng.multivariate_normal(np.full(d, 3.0), cov, size=n) / 2)


def kd_baseline(X: np.ndarray, Xm: np.ndarray) -> float:
    mean, sd = X.mean(0), X.std(0, ddof=1)
    t0 = time.perf_counter()
    cKDTree((X - mean) / sd).query((Xm - mean) / sd)
    return time.perf_counter() - t0


def bench_score(case: str, X: np.ndarray, repeat: int, subsets=None) -> None:
    Xm = rank_swap_array(X, 14, 1)
    seconds, r = timed(lambda: score_primed(X, Xm, subsets=subsets), repeat)
    peak = peak_mb(lambda: score_primed(X, Xm, subsets=subsets))
    emit(case=case, n=X.shape[0], d=X.shape[1], seconds=seconds, peak_mb=peak,
         baseline_seconds=kd_baseline(X, Xm), score_prime=r.score, il_prime=r.il, dld_prime=r.dld,
         id_prime=r.id, intruder_subsets=len(r.details["dld_per_subset"]))


def bench_postmask(X: np.ndarray, q: float, target_e: float, max_steps: int) -> None:
    Xm = rank_swap_array(X, 14, 1)
    postmask_optimise(X, Xm, max_steps=10, rng=0)  # compile
    o = postmask_optimise(X, Xm, p=0.5, q=q, target_e=target_e, max_steps=max_steps, time_limit=120, rng=2)
    mean, sd = X.mean(0), X.std(0, ddof=1)
    Z = (Xm - mean) / sd
    reps = max(1, o.steps // 1000)
    t0 = time.perf_counter()
    for _ in range(reps):
        Z.mean(0), Z.T @ Z
    base = (time.perf_counter() - t0) * o.steps / reps
    emit(case=f"postmask_casc_q{q:g}", n=X.shape[0], d=X.shape[1], seconds=o.seconds,
         peak_mb=peak_mb(lambda: postmask_optimise(X, Xm, p=0.5, q=q, max_steps=1000, rng=2)),
         baseline_seconds=base, steps=o.steps, accepted=o.accepted, stop_reason=o.stop_reason,
         target_e=target_e, e_initial=o.e_initial, e_final=o.e_final, il1_initial=o.il1_initial,
         il1_final=o.il1_final, il1_target=o.il1_target,
         microseconds_per_step=1e6 * o.seconds / max(o.steps, 1))


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    repeat = 1 if args.quick else args.repeat
    if CASC.exists():
        X = pd.read_csv(CASC).to_numpy(dtype=np.float64)
        bench_score("score_prime_casc", X, repeat)
        for q, te in ((0.5, 0.04), (0.1, 0.09)):
            bench_postmask(X, q, te, 100_000 if args.quick else 5_000_000)
    else:
        emit(case="score_prime_casc", skipped=f"{CASC} is absent")
    n = args.n or (20_000 if args.quick else 1_000_000)
    Y = synthetic(n)
    # the default intruder sets on 5 variables: 5 windows of each size 1..5, 21 in all;
    # the quick run uses the single-variable sets and all variables
    subsets = [[j] for j in range(5)] + [list(range(5))] if args.quick else None
    bench_score(f"score_prime_synthetic_{n}x5", Y, 1, subsets)


if __name__ == "__main__":
    main()
