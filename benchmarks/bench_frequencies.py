"""Benchmark: key-combination frequencies f_k and F_k (4 weighted keys, 10-50 categories each).

Targets (issue): 1,000,000 rows under 0.1 s (sdcMicro's freqCalc takes about 1 s on these
machines); 10,000,000 rows under 2 GB peak. Baseline: one bincount over a precomputed
int64 code and one gather (the least work any frequency count must do).
"""

from __future__ import annotations

import numpy as np
from _common import emit, parse_args, peak_mb, timed

from sdckit.risk.frequencies import frequencies_from_codes

N_CATEGORIES = [10, 20, 35, 50]


def make(n: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    codes = [rng.integers(0, m, n, dtype=np.int32) for m in N_CATEGORIES]
    weights = rng.uniform(1, 200, n)
    return codes, weights


def baseline(codes, weights) -> np.ndarray:
    code = codes[0].astype(np.int64)
    for c, m in zip(codes[1:], N_CATEGORIES[1:]):
        code = code * m + c
    counts = np.bincount(code)
    return counts[code]


def main() -> None:
    args = parse_args(__doc__)
    sizes = [args.n] if args.n else ([200_000, 1_000_000] if args.quick else [1_000_000, 10_000_000])
    for n in sizes:
        codes, weights = make(n)
        seconds, f = timed(lambda: frequencies_from_codes(codes, N_CATEGORIES, weights), args.repeat)
        base_s, _ = timed(lambda: baseline(codes, weights), args.repeat)
        peak = peak_mb(lambda: frequencies_from_codes(codes, N_CATEGORIES, weights))
        emit(case="frequencies_4keys_weighted", n=n, seconds=seconds, peak_mb=peak,
             baseline_seconds=base_s, n_combinations=f.n_combinations,
             n_sample_uniques=f.n_sample_uniques, k_violations_3=f.k_violations(3))


if __name__ == "__main__":
    main()
