"""Benchmark: a sweep of 4 methods x 10 parameter values x 3 seeds on the census sample, then the
same sweep from the cache. Targets (issue): under 2 minutes on these machines, re-run under 5 s.

Methods: local suppression (k), targeted record swapping (swap rate), recoding of Age by
interval breaks (10 break sets), and PRAM (min_diagonal) when the PRAM step is registered
(otherwise local suppression with another importance order takes its place). Baseline: one
pass of the risk and utility measures on the original data (the least work of one run).
"""

from __future__ import annotations

import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import ROOT, emit, parse_args

from sdckit import Microdata
from sdckit.explore import Candidate, Sweep
from sdckit.explore.measures import entropy_utility, linkage_risk
from sdckit.registry import known_steps

KEYS = ["Region", "Sex", "Age", "Marital Status", "Country of Birth"]


def candidates(n_values: int) -> list[Candidate]:
    ks = sorted({int(k) for k in np.geomspace(2, 60, n_values)})
    rates = [round(float(r), 3) for r in np.linspace(0.05, 0.5, n_values)]
    # Age holds codes 1..8: one inner break at 2..8, then two inner breaks (all strictly increasing)
    breaks = ([[0, b, 9] for b in range(2, 9)] + [[0, 3, 6, 9], [0, 2, 5, 9], [0, 4, 7, 9]])[:n_values]
    cands = [Candidate("local_suppression", {"k": ks}),
             Candidate("record_swap", {"swap_rate": rates},
                       {"hierarchy": ["Region"], "similar": ["Sex", "Age"],
                        "risk_variables": ["Marital Status", "Country of Birth"], "allow_across_top": True}),
             Candidate("recode", {"breaks": breaks}, {"variable": "Age"})]
    if "pram" in known_steps():
        cands.append(Candidate("pram", {"min_diagonal": [round(float(d), 3) for d in np.linspace(0.5, 0.95, n_values)]},
                               {"variables": ["Marital Status"]}))
    else:
        cands.append(Candidate("local_suppression", {"k": ks}, {"importance": [5, 4, 3, 2, 1]}))
    return cands


def main() -> None:
    args = parse_args(__doc__)
    df = pd.read_csv(ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv").drop(columns=["Person ID"])
    if args.n:
        df = df.sample(args.n, replace=args.n > len(df), random_state=0).reset_index(drop=True)
    md = Microdata(df, key_vars=KEYS)
    n_values, seeds = (4, [1]) if args.quick else (10, [1, 2, 3])
    cache = Path(tempfile.mkdtemp(prefix="sdckit-bench-explore-"))
    try:
        sweep = Sweep(md, candidates(n_values), seeds=seeds, cache_dir=cache, progress=False)
        t0 = time.perf_counter()
        first = sweep.run()
        t1 = time.perf_counter()
        second = sweep.run()
        t2 = time.perf_counter()
        view = md.frame[KEYS]
        tb = time.perf_counter()
        linkage_risk(md, view)
        entropy_utility(md, md)
        base = time.perf_counter() - tb
        methods = [c.method for c in sweep.candidates]
        # peak resident memory of this process and of the largest worker process (MB)
        peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                   resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
        emit(case="explore_sweep", n=len(df), methods=methods, settings=len(first.summary()), seeds=len(seeds),
             runs=len(first.runs), seconds=t1 - t0, peak_mb=peak, baseline_seconds=base,
             failures=len(first.failures()), n_computed=first.n_computed)
        emit(case="explore_sweep_cached", n=len(df), runs=len(second.runs), seconds=t2 - t1, peak_mb=peak,
             n_computed=second.n_computed, n_cached=second.n_cached)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
