"""Benchmark: what the declared gate and the plan checks cost a release.

Cases (one JSON line each, per size n):

* ``gate_build``: the gate built and validated from its dict form (``Release(...)``'s
  constructor: every threshold through its declared constructor);
* ``plan_check``: :meth:`sdckit.release.Release.check` (roles, columns, the PRAM/recode
  sequence rules) before step 1; ``baseline_seconds`` is one ``np.bincount`` of a key's codes,
  the cheapest pass over the data, so the ratio shows the check does not read the records;
* ``prammed_variable_rule_baseline``: after a release of PRAM then local suppression, the
  vectorised comparison of the PRAMmed variable's codes before and after a later step, which
  is what ``Release.run()`` adds per PRAMmed variable and later step (the rule that no step
  changes a PRAMmed variable other than to missing).

Every case reports wall ``seconds`` and ``cpu_seconds`` (process time) and ``peak_mb``.
Run from the project root: ``.venv/bin/python benchmarks/bench_gate.py [--quick] [--n N]``.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from _common import emit, parse_args, peak_mb

from sdckit import Microdata
from sdckit.gate import as_gate
from sdckit.masking.local_suppression import LocalSuppression
from sdckit.pram.steps import Pram
from sdckit.release import Release

GATE = {"k_anonymity": 2, "max_global_risk": 0.5, "min_diagonal": 0.7, "allow_identifiers": ["note"]}


def census(n: int, seed: int = 1) -> Microdata:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"region": rng.integers(0, 10, n), "sex": rng.integers(1, 3, n),
                       "age": rng.integers(1, 9, n), "marital": rng.integers(1, 6, n),
                       "note": rng.choice(["a", "b"], n)})
    return Microdata(df, key_vars=["region", "sex", "age", "marital"])


def clocked(fn, repeat: int = 3):
    best_wall, best_cpu, out = float("inf"), float("inf"), None
    for _ in range(max(1, repeat)):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best_wall, best_cpu, out


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    sizes = [args.n] if args.n else ([10_000] if args.quick else [10_000, 100_000, 1_000_000])
    for n in sizes:
        md = census(n)
        steps = [Pram(["marital"], min_diagonal=0.8), LocalSuppression(k=2)]
        codes = md.codes("region")

        w, c, _ = clocked(lambda: as_gate(GATE), args.repeat)
        emit(case="gate_build", n=n, seconds=w, cpu_seconds=c, peak_mb=peak_mb(lambda: as_gate(GATE)),
             n_thresholds=len(GATE))

        release = Release(md, steps, GATE, rng=3)
        w, c, _ = clocked(release.check, args.repeat)
        bw, _, _ = clocked(lambda: np.bincount(codes), args.repeat)
        emit(case="plan_check", n=n, seconds=w, cpu_seconds=c, peak_mb=peak_mb(release.check),
             baseline_seconds=bw, n_steps=len(steps))

        run = release.run()
        before, after = md.codes("marital"), run.released.codes("marital")
        bw, bc, _ = clocked(lambda: int(((before != after) & (after >= 0)).sum()), args.repeat)
        emit(case="prammed_variable_rule_baseline", n=n, seconds=bw, cpu_seconds=bc,
             peak_mb=peak_mb(lambda: int(((before != after) & (after >= 0)).sum())),
             note="the comparison the rule makes per PRAMmed variable per later step",
             verdict=run.verdict)

if __name__ == "__main__":
    main()
