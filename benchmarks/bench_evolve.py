"""Benchmark: evolved invariant PRAM (population 50, 200 generations) for L = 10 and L = 30
categories, 10,000 records with 4 other keys (8, 2, 5 and 10 categories). Target (issue):
L = 10 under 30 s. Baseline: 10,000 fitness evaluations' worth of the expected released table
(one (L x L) @ (L x O) product each), the least work any search over matrices must do.
"""

from __future__ import annotations

import time

import numpy as np
from _common import emit, parse_args, peak_mb

from sdckit.pram.evolve import EvolvePRAM, Problem, random_sdcmicro_baselines


def make(n: int, L: int, seed: int = 0) -> Problem:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(L, 2.0))
    v = rng.choice(L, n, p=p)
    v[:L] = np.arange(L)
    others = [rng.integers(0, m, n) for m in (8, 2, 5, 10)]
    return Problem.from_codes(v, others, L)


def main() -> None:
    args = parse_args(__doc__)
    n = args.n or 10_000
    gens, pop = (40, 20) if args.quick else (200, 50)
    for L in (10, 30):
        prob = make(n, L)
        ea = EvolvePRAM(d_min=0.7, d_max=0.95, generations=gens, population=pop, patience=gens)
        t0 = time.perf_counter()
        res = ea.run(prob, rng=1)
        seconds = time.perf_counter() - t0
        X = res.matrix
        t1 = time.perf_counter()
        for _ in range(gens * pop):
            np.ascontiguousarray(X.T) @ prob.f
        base = time.perf_counter() - t1
        best_base = min(ea.fitness_of(prob, B).fitness for B in random_sdcmicro_baselines(prob, 0.7, 0.95, 20, rng=2))
        peak = peak_mb(lambda: EvolvePRAM(d_min=0.7, d_max=0.95, generations=5, population=pop).run(prob, rng=1))
        emit(case=f"evolve_L{L}", n=n, L=L, population=pop, generations=res.generations, seconds=seconds,
             peak_mb=peak, baseline_seconds=base, final_fitness=res.fitness.fitness,
             best_baseline_fitness=best_base, max_invariance_error=res.max_invariance_error)


if __name__ == "__main__":
    main()
