"""Benchmark: optimal PRAM against spontaneous recognition (Cator, Hensbergen & Rozenholc).

Cases (alpha = 0.1, Pi = every combination of 3 key variables):

- ``paper_48``: the paper's experiment, X = {0,1}^4 x {0,1,2}, n = 2,500, full support
  (target under 2 s); the restricted optimum on the same data is reported beside it
  (``restricted_l2_loss``: how far the restricted support is from the full optimum);
- ``census_<k>keys``: the bundled census sample with 5 and 6 key variables, restricted support;
- ``synthetic_occurring``: 6 skewed variables (259,200 elements), n = 100,000 records of which
  about 10,800 elements occur (``--quick``: n = 20,000, 4,250 occur), restricted support
  (target under 60 s).

Baseline: one evaluation of what every solve needs at least once, the exact C1 check of the
identity (numpy bincounts of the combination tables) and, for the full support, one l2 loss.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from _common import ROOT, emit, parse_args, peak_mb

from sdckit.pram.optimal import l2_gradient, optimal_matrix
from sdckit.pram.recognition import combination_counts, normalize_combinations

ALPHA = 0.1
CENSUS = ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"
CENSUS_KEYS = ["Sex", "Age", "Marital Status", "Student", "Country of Birth", "Health"]


def paper_counts(seed: int = 0) -> tuple[np.ndarray, tuple]:
    shape = (2, 2, 2, 2, 3)
    probs = np.ones(shape)
    for j, p in enumerate([0.85, 0.8, 0.8, 0.75]):
        probs = probs * np.array([1 - p, p]).reshape([2 if a == j else 1 for a in range(5)])
    probs = probs * np.array([0.7, 0.2, 0.1]).reshape(1, 1, 1, 1, 3)
    rng = np.random.default_rng(seed)
    return rng.multinomial(2500, probs.ravel() / probs.sum()).astype(float), shape


def census_counts(keys: list[str]) -> tuple[np.ndarray, tuple]:
    frame = pd.read_csv(CENSUS, usecols=keys)
    codes = [pd.factorize(frame[v], sort=True)[0] for v in keys]
    shape = tuple(int(c.max()) + 1 for c in codes)
    flat = np.ravel_multi_index(tuple(codes), shape)
    return np.bincount(flat, minlength=int(np.prod(shape))).astype(float), shape


def synthetic_counts(n: int, seed: int = 0) -> tuple[np.ndarray, tuple]:
    """Six independent skewed variables (Zipf margins, exponent 2): n = 100,000 gives about
    10,800 occurring elements of the 259,200, 1,170 of them frequent (U_0 >= 10)."""
    shape = (12, 10, 9, 8, 6, 5)
    rng = np.random.default_rng(seed)
    probs = np.ones(shape)
    for j, L in enumerate(shape):
        w = 1.0 / np.arange(1, L + 1) ** 2.0
        probs = probs * (w / w.sum()).reshape([L if a == j else 1 for a in range(len(shape))])
    return rng.multinomial(n, probs.ravel()).astype(float), shape


def baseline(counts, shape, combos, full: bool) -> float:
    t0 = time.perf_counter()
    worst = 0.0
    for pi in combos:  # C1 at P = I: 1 / U_pi(k0)
        u = combination_counts(counts, shape, pi)
        worst = max(worst, 1.0 / u[u > 0].min())
    if full:
        l2_gradient(np.eye(counts.size), counts)
    return time.perf_counter() - t0


def run(case: str, counts, shape, support: str, repeat: int, **extra) -> None:
    combos = normalize_combinations(3, [f"v{j}" for j in range(len(shape))])
    best, res = float("inf"), None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        res = optimal_matrix(counts, shape, combos, ALPHA, support=support)
        best = min(best, time.perf_counter() - t0)
    base = min(baseline(counts, shape, combos, support == "full") for _ in range(max(1, repeat)))
    peak = peak_mb(lambda: optimal_matrix(counts, shape, combos, ALPHA, support=support))
    emit(case=case, n=int(counts.sum()), n_elements=int(counts.size),
         n_occurring=int((counts > 0).sum()),
         n_rare=int(((counts > 0) & (counts * ALPHA < 1)).sum()), support=support, seconds=best,
         peak_mb=peak, baseline_seconds=base, l2_loss=res.loss, min_diagonal=res.min_diagonal,
         l2_loss_times_n2=res.loss * counts.sum() ** 2, expected_changes=res.expected_changes, max_ratio_before=res.check_before.max_ratio,
         max_ratio_after=res.check.max_ratio, c1_holds=res.check.holds,
         n_targets=res.details.get("n_targets"), n_source_groups=res.details.get("n_source_groups"),
         frank_wolfe_gap_times_n2=res.details.get("frank_wolfe_gap", np.nan) * counts.sum() ** 2,
         iterations=res.details.get("iterations"), solver=res.details.get("solver"), **extra)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    repeat = 1 if args.quick else args.repeat
    counts, shape = paper_counts()
    combos = normalize_combinations(3, [f"v{j}" for j in range(5)])
    restricted = optimal_matrix(counts, shape, combos, ALPHA, support="restricted")
    run("paper_48", counts, shape, "full", repeat,
        restricted_l2_loss_times_n2=restricted.loss * counts.sum() ** 2,
        restricted_min_diagonal=restricted.min_diagonal)
    for k in ((5,) if args.quick else (5, 6)):
        counts, shape = census_counts(CENSUS_KEYS[:k])
        run(f"census_{k}keys", counts, shape, "restricted", repeat)
    n = args.n or (20_000 if args.quick else 100_000)
    counts, shape = synthetic_counts(n)
    run("synthetic_occurring", counts, shape, "restricted", 1)


if __name__ == "__main__":
    main()
