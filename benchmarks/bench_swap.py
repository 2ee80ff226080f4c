"""Benchmark: targeted record swapping and local suppression to k-anonymity.

Record swapping: synthetic persons in households (about 2.5 persons each) with a 3-level
geography (4 regions > 40 districts > 800 municipalities), swapping key = household size,
uniques key = sex x employment. Target (issue): 1,000,000 persons in 400,000 households
under 30 s. Baseline: one random permutation of the household ids and one `take` of the
geography (the least work any swap of whole households must do).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from _common import SHARED_DATA, emit, parse_args, peak_mb, timed

from sdckit import Microdata
from sdckit.masking.local_suppression import GreedySuppression, LocalSuppression, exact_local_suppression
from sdckit.masking.record_swap import RecordSwap

HIER = ["region", "district", "muni"]


def persons(n_households: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    size = rng.choice([1, 2, 3, 4, 5], n_households, p=[0.3, 0.3, 0.2, 0.15, 0.05])
    hid = np.repeat(np.arange(n_households), size)
    n = hid.size
    region = rng.integers(0, 4, n_households)
    district = region * 10 + rng.integers(0, 10, n_households)
    muni = district * 20 + rng.integers(0, 20, n_households)
    return pd.DataFrame({"hid": hid, "region": region[hid], "district": district[hid], "muni": muni[hid],
                         "hsize": size[hid], "sex": rng.integers(1, 3, n), "age": rng.integers(0, 18, n),
                         "emp": rng.integers(0, 4, n)})


def bench_record_swap(n_households: int, repeat: int) -> None:
    df = persons(n_households)
    md = Microdata(df, key_vars=["sex", "emp"], household="hid")
    step = RecordSwap(hierarchy=HIER, similar=[["hsize"]], risk_variables=["sex", "age", "emp"],
                      swap_rate=0.05, k_anonymity=3)
    step.apply(Microdata(persons(200), key_vars=["sex"], household="hid"), rng=0)  # compile
    seconds, result = timed(lambda: step.apply(md, rng=1), repeat)
    geo = df[HIER].to_numpy()

    def baseline():
        perm = np.random.default_rng(0).permutation(n_households)
        return geo.take(perm[df["hid"].to_numpy()], axis=0)

    base, _ = timed(baseline, repeat)
    peak = peak_mb(lambda: step.apply(md, rng=1))
    s = result.summary
    emit(case="record_swap_3level", n=len(df), n_households=n_households, seconds=seconds, peak_mb=peak,
         baseline_seconds=base, swap_rate_requested=s["swap_rate_requested"],
         swap_rate_realised=s["swap_rate_realised"], risky_swapped_share=s["risky_swapped_share"],
         risky_households=s["risky_households"], risky_without_partner=s["risky_without_partner"])


def bench_local_suppression_adult(repeat: int, quick: bool) -> None:
    path = SHARED_DATA / "arx_adult.csv"
    if not path.exists():
        emit(case="local_suppression_adult", skipped=f"{path} is absent")
        return
    keys = ["age", "sex", "race", "marital-status", "native-country"]
    md = Microdata(pd.read_csv(path), key_vars=keys)
    for share in ((0.1,) if quick else (0.1, 0.02)):
        step = LocalSuppression(k=5, algorithm=GreedySuppression(batch_share=share))
        seconds, r = timed(lambda: step.apply(md, rng=1), repeat)
        emit(case="local_suppression_adult", n=md.n_records, k=5, batch_share=share, seconds=seconds,
             peak_mb=peak_mb(lambda: step.apply(md, rng=1)), suppressions=r.summary["suppressions"],
             suppressions_per_variable=r.summary["suppressions_per_variable"],
             restored=r.summary["restored"], k_violations_after=r.summary["k_violations_after"])
    # gap of the heuristic against the exact MILP on random samples of adult (k = 3); "exact"
    # is HiGHS' best pattern, proven optimal only where the status says "Optimal"
    frame = pd.read_csv(path)
    size, samples, limit = (25, 3, 3.0) if quick else (60, 5, 60.0)
    gaps = []
    for seed in range(samples):
        sub = Microdata(frame.sample(size, random_state=seed), key_vars=["age", "sex", "race"])
        heur = LocalSuppression(k=3).apply(sub, rng=seed).summary["suppressions"]
        t0 = time.perf_counter()
        _, opt, status = exact_local_suppression([sub.codes(v) for v in sub.key_vars], 3, time_limit=limit)
        gaps.append((heur, round(opt), status, time.perf_counter() - t0))
    emit(case="local_suppression_gap_adult_samples", n=size, k=3, heuristic=[g[0] for g in gaps],
         exact=[g[1] for g in gaps], status=[g[2] for g in gaps], exact_seconds=[round(g[3], 2) for g in gaps])


def bench_local_suppression_synthetic(n: int, repeat: int) -> None:
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"a": rng.integers(0, 10, n), "b": rng.integers(0, 20, n),
                       "c": rng.integers(0, 30, n), "d": rng.zipf(1.6, n) % 200})
    md = Microdata(df, key_vars=list("abcd"))
    step = LocalSuppression(k=3)
    seconds, r = timed(lambda: step.apply(md, rng=1), repeat)
    emit(case="local_suppression_synthetic", n=n, k=3, seconds=seconds, peak_mb=peak_mb(lambda: step.apply(md, rng=1)),
         suppressions=r.summary["suppressions"], k_violations_after=r.summary["k_violations_after"])


def main() -> None:
    args = parse_args(__doc__)
    if args.n:
        sizes = [max(1, int(args.n / 2.5))]
    else:
        sizes = [40_000] if args.quick else [40_000, 400_000]
    for n_hh in sizes:
        bench_record_swap(n_hh, 1 if n_hh > 100_000 else args.repeat)
    if not args.n:
        bench_local_suppression_adult(1, args.quick)
        if not args.quick:  # the synthetic case takes minutes at 1,000,000 rows
            bench_local_suppression_synthetic(1_000_000, 1)


if __name__ == "__main__":
    main()
