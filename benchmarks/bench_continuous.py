"""Benchmark: masking continuous variables (MDAV, partitioned MDAV, optimal univariate
microaggregation, rank swapping, noise).

Cases (issue 7): MDAV k = 3 on CASC (1080 x 13) and on 10,000 / 50,000 / 100,000 x 5 standard
normal (seed 0), against sdcMicro's measured 14.6 s (50,000) and 67.8 s (100,000); the
partitioned MDAV at 100,000 (its SSE penalty against full MDAV) and 1,000,000; the optimal
univariate method at 1,000,000; rank swapping and correlated noise at 10,000,000 x 5.

MDAV cases carry ``sse`` (within-group sum of squares of the standardised data), ``sse_sst``,
``min_group`` and ``max_group``. ``seconds`` is wall time (best of the repeats) and
``cpu_seconds`` the process CPU time of one run (numpy may use several threads): the machine may be shared, and the CPU time
is the steadier figure. Baselines (same run): MDAV, a plain numpy MDAV with full scans
(n <= 10,000 only: it is O(n^2 / k)); optimal univariate, one sort; rank swapping, one argsort
and one take per column; noise, drawing the normal numbers and one addition.
``peak_mb`` traces numpy allocations (numba's internal buffers are not traced).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from _common import SHARED_DATA, emit, parse_args, peak_mb, timed

from sdckit.masking.microaggregation import (
    group_sse,
    mdav,
    mdav_partitioned,
    mdav_reference,
    microaggregate_array,
    optimal_univariate,
)
from sdckit.masking.noise import add_noise_array
from sdckit.masking.rank_swap import check_rank_swap, rank_swap_array

SDCMICRO_SECONDS = {50_000: 14.6, 100_000: 67.8}  # sdcMicro's C++ MDAV, k = 3, measured for issue 7


def cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def quality(Z: np.ndarray, labels: np.ndarray) -> dict:
    sse, sst = group_sse(Z, labels)
    sizes = np.bincount(labels)
    return {"sse": sse, "sse_sst": sse / sst, "min_group": int(sizes.min()), "max_group": int(sizes.max()),
            "groups": int(sizes.size)}


def standard_normal(n: int, p: int = 5, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, p))


def bench_mdav(n: int, repeat: int) -> float:
    X = standard_normal(n)
    Z = (X - X.mean(0)) / X.std(0, ddof=1)
    cpu_s, labels = cpu(lambda: mdav(Z, 3))
    seconds, _ = timed(lambda: mdav(Z, 3), repeat)
    base = timed(lambda: mdav_reference(Z, 3), 1)[0] if n <= 10_000 else None
    ref = SDCMICRO_SECONDS.get(n)
    q = quality(Z, labels)
    emit(case="mdav_normal", n=n, p=5, k=3, seconds=seconds, cpu_seconds=cpu_s,
         peak_mb=peak_mb(lambda: mdav(Z, 3)), baseline_seconds=base, baseline="plain numpy MDAV",
         sdcmicro_seconds=ref, speedup_vs_sdcmicro=(ref / seconds if ref else None),
         cpu_speedup_vs_sdcmicro=(ref / cpu_s if ref else None), **q)
    return q["sse"]


def bench_casc(repeat: int) -> None:
    path = SHARED_DATA / "sdcmicro" / "CASCrefmicrodata.csv"
    if not path.exists():
        emit(case="mdav_casc", skipped=f"{path} is absent")
        return
    X = pd.read_csv(path).to_numpy(dtype=float)
    Z = (X - X.mean(0)) / X.std(0, ddof=1)
    seconds, (out, labels) = timed(lambda: microaggregate_array(X, 3), repeat)
    base, ref_labels = timed(lambda: mdav_reference(Z, 3), 1)
    emit(case="mdav_casc", n=X.shape[0], p=X.shape[1], k=3, seconds=seconds,
         peak_mb=peak_mb(lambda: microaggregate_array(X, 3)), baseline_seconds=base,
         baseline="plain numpy MDAV", same_groups_as_plain=bool(np.array_equal(labels[0], ref_labels)),
         **quality(Z, labels[0]))
    # seed 004's Table 5.1 setting: rank swapping with parameter 14 (percent)
    seconds, Y = timed(lambda: rank_swap_array(X, 14.0, 1), repeat)
    emit(case="rank_swap_casc", n=X.shape[0], p=X.shape[1], p_percent=14.0, seconds=seconds,
         peak_mb=peak_mb(lambda: rank_swap_array(X, 14.0, 1)), baseline_seconds=None,
         max_correlation_change=float(np.abs(np.corrcoef(Y, rowvar=False) - np.corrcoef(X, rowvar=False)).max()),
         within_window=check_rank_swap(X, Y, 14.0, 0.0, 0.0)["within_window"])
    # seed 004's Table 5.2 setting: 4 variables at a time, k = 10
    seconds, (out, labels) = timed(lambda: microaggregate_array(X, 10, variables_per_group=4), repeat)
    sse = sum(group_sse(Z[:, i:i + 4], lab)[0] for i, lab in zip(range(0, 13, 4), labels))
    sst = float(((Z - Z.mean(0)) ** 2).sum())
    emit(case="mdav_casc_4_at_a_time", n=X.shape[0], p=X.shape[1], k=10, variables_per_group=4,
         seconds=seconds, peak_mb=peak_mb(lambda: microaggregate_array(X, 10, variables_per_group=4)),
         baseline_seconds=None, sse=sse, sse_sst=sse / sst,
         min_group=int(min(np.bincount(lab).min() for lab in labels)),
         max_group=int(max(np.bincount(lab).max() for lab in labels)))


def bench_partitioned(n: int, blocks: list[int], full_sse: float | None) -> None:
    X = standard_normal(n)
    Z = (X - X.mean(0)) / X.std(0, ddof=1)
    for block in blocks:
        cpu_s, labels = cpu(lambda: mdav_partitioned(Z, 3, block))
        seconds, _ = timed(lambda: mdav_partitioned(Z, 3, block), 1)
        q = quality(Z, labels)
        emit(case="mdav_partitioned", n=n, p=5, k=3, block=block, seconds=seconds, cpu_seconds=cpu_s,
             peak_mb=peak_mb(lambda: mdav_partitioned(Z, 3, block)), baseline_seconds=None,
             sse_penalty_vs_full=(q["sse"] / full_sse - 1 if full_sse else None), **q)


def bench_univariate(n: int, repeat: int) -> None:
    x = np.random.default_rng(0).lognormal(size=n)
    seconds, labels = timed(lambda: optimal_univariate(x, 3), repeat)
    base, _ = timed(lambda: np.sort(x), repeat)
    sse, sst = group_sse(x, labels)
    sizes = np.bincount(labels)
    emit(case="optimal_univariate", n=n, k=3, seconds=seconds, peak_mb=peak_mb(lambda: optimal_univariate(x, 3)),
         baseline_seconds=base, baseline="np.sort", sse=sse, sse_sst=sse / sst,
         min_group=int(sizes.min()), max_group=int(sizes.max()))


def bench_rank_swap(n: int, repeat: int) -> None:
    X = standard_normal(n)
    cpu_s, _ = cpu(lambda: rank_swap_array(X, 5.0, 1))
    seconds, Y = timed(lambda: rank_swap_array(X, 5.0, 1), repeat)

    def baseline():
        out = np.empty_like(X)
        for j in range(X.shape[1]):
            order = np.argsort(X[:, j])
            out[order, j] = X[order, j]
        return out

    base, _ = timed(baseline, repeat)
    chk = check_rank_swap(X, Y, 5.0, 0.0, 0.0) if n <= 300_000 else None
    emit(case="rank_swap", n=n, p=5, p_percent=5.0, seconds=seconds, cpu_seconds=cpu_s,
         peak_mb=peak_mb(lambda: rank_swap_array(X, 5.0, 1)), baseline_seconds=base,
         baseline="argsort + take per column", values_changed_share=float((Y != X).mean()),
         max_rank_distance=(max(chk["max_rank_distance"]) if chk else None),
         window=(chk["window"][0] if chk else int(0.05 * n)),
         multiset_kept=bool(np.array_equal(np.sort(Y, axis=0), np.sort(X, axis=0))))


def bench_noise(n: int, repeat: int) -> None:
    X = standard_normal(n) @ np.array([[1, 0.5, 0, 0, 0], [0, 1, 0.3, 0, 0], [0, 0, 1, 0, 0.2],
                                       [0, 0, 0, 1, 0], [0, 0, 0, 0, 1.0]])
    cpu_s, _ = cpu(lambda: add_noise_array(X, 0.1, 1, method="correlated"))
    seconds, Y = timed(lambda: add_noise_array(X, 0.1, 1, method="correlated"), repeat)
    base, _ = timed(lambda: X + np.random.default_rng(1).standard_normal(X.shape), repeat)
    dc = float(np.abs(np.corrcoef(Y, rowvar=False) - np.corrcoef(X, rowvar=False)).max())
    emit(case="noise_correlated", n=n, p=5, level=0.1, seconds=seconds, cpu_seconds=cpu_s,
         peak_mb=peak_mb(lambda: add_noise_array(X, 0.1, 1, method="correlated")), baseline_seconds=base,
         baseline="normal draws + addition", max_correlation_change=dc)


def main() -> None:
    args = parse_args(__doc__)
    mdav(standard_normal(100), 3)                      # compile (cached on disk after the first run)
    optimal_univariate(np.arange(10.0), 3)
    rank_swap_array(np.arange(10.0), 50, 0)
    if args.n:
        if args.n <= 1_000_000:
            full = bench_mdav(args.n, 1)
            bench_partitioned(args.n, [max(2 * 3, args.n // 2)], full)
        else:  # full MDAV grows faster than n log n: only the partitioned variant
            bench_partitioned(args.n, [50_000], None)
        bench_univariate(args.n, args.repeat)
        bench_rank_swap(args.n, args.repeat)
        bench_noise(args.n, args.repeat)
        return
    bench_casc(args.repeat)
    if args.quick:
        full = bench_mdav(10_000, args.repeat)
        bench_partitioned(10_000, [2_500], full)
        bench_univariate(100_000, args.repeat)
        bench_rank_swap(300_000, 1)
        bench_noise(300_000, 1)
        return
    bench_mdav(10_000, args.repeat)
    bench_mdav(50_000, 1)
    full = bench_mdav(100_000, 1)
    bench_partitioned(100_000, [10_000, 25_000, 50_000], full)
    bench_partitioned(1_000_000, [50_000], None)
    bench_univariate(1_000_000, 1)
    bench_rank_swap(10_000_000, 1)
    bench_noise(10_000_000, 1)


if __name__ == "__main__":
    main()
