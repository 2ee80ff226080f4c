"""Benchmark of the solution-space description (:func:`sdckit.lattice.solution_space.describe_space`).

What the description costs after a search: the counts of the nodes known without a check
(passes of the ``inherited_bounds`` kernel over every node id), the checked nodes (capped at
400) and the chosen node's neighbours (checked when the search did not).

Cases
-----
* ``adult_k5_s1``: ARX's adult data with its 8 hierarchies (6,480 nodes), k = 5, 1 %
  suppression, discernibility, the exact search.
* ``synthetic_12qi_anytime``: the seeded 12-QI data of ``bench_lattice.py`` (100,000 records;
  ``--quick``: 20,000 and the quick lattice of 46,656 nodes, else 2,985,984 nodes), k = 5, 1 %,
  the anytime search with a CPU budget (20 s; ``--quick``: 5 s).

``baseline_seconds`` / ``baseline_cpu_seconds`` time the search itself in the same run (the
anchor: the description's cost is read as a share of it); ``seconds``, ``cpu_seconds`` and
``peak_mb`` (traced by ``tracemalloc``, a second untimed run) are the description's.

Run from the project root: ``python benchmarks/bench_solution_space.py [--quick] [--n N]``;
one JSON line per case.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lattice import QIS8, SHARED, synthetic  # noqa: E402

from sdckit.lattice import Evaluator, KAnonymity, Problem, exact, find_hierarchies  # noqa: E402
from sdckit.lattice.anytime import anytime  # noqa: E402
from sdckit.lattice.solution_space import describe_space  # noqa: E402


def _measure(case: str, n: int, ev_factory, run) -> None:
    ev = ev_factory()
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    res = run(ev)
    base, base_cpu = time.perf_counter() - t, time.process_time() - c
    n_evals = len(ev.evals)
    t, c = time.perf_counter(), time.process_time()
    space = describe_space(ev, res)
    secs, cpu = time.perf_counter() - t, time.process_time() - c
    extra_checks = len(ev.evals) - n_evals
    ev2 = ev_factory()   # the peak of the description alone, on a second (untimed) run's evaluator
    res2 = run(ev2)
    tracemalloc.start()
    describe_space(ev2, res2)
    peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
    tracemalloc.stop()
    c_ = space.counts
    print(json.dumps({
        "case": case, "n": n, "n_nodes": c_["nodes"], "seconds": round(secs, 4), "cpu_seconds": round(cpu, 4),
        "peak_mb": round(peak, 1), "baseline_seconds": round(base, 4), "baseline_cpu_seconds": round(base_cpu, 4),
        "share_of_search_cpu": round(cpu / base_cpu, 4) if base_cpu > 0 else None,
        "nodes_checked": c_["checked"], "inferred_satisfying": c_["inferred_satisfying"],
        "inferred_failing": c_["inferred_failing"], "pruned": c_["pruned"], "not_reached": c_["not_reached"],
        "neighbours": len(space.neighbours), "neighbours_checked_for_view": extra_checks,
        "nodes_described": len(space.nodes), "capped": space.capped, "optimal": res.optimal,
        "load_average": [load, os.getloadavg()[0]]}), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small synthetic case (under 30 seconds)")
    ap.add_argument("--n", type=int, default=None, help="records of the synthetic case")
    args = ap.parse_args(argv)
    path = SHARED / "arx_adult.csv"
    if path.exists():
        data = pd.read_csv(path, dtype=str)
        p = Problem(data, QIS8, find_hierarchies(SHARED / "arx_adult_hierarchies", QIS8))
        exact(Evaluator(p, [KAnonymity(5)], 0.01, "discernibility"))   # warm-up (kernels, caches)

        def adult_ev():
            p.clear_cache()
            return Evaluator(p, [KAnonymity(5)], 0.01, "discernibility")

        _measure("adult_k5_s1", p.n, adult_ev, exact)
    else:
        print(json.dumps({"case": "adult_k5_s1", "skipped": f"{path.name} is absent"}))
    n = args.n or (20_000 if args.quick else 100_000)
    data, hier = synthetic(n, args.quick, np.random.default_rng(20261123))
    p = Problem(data, list(hier), hier)
    limit = 5.0 if args.quick else 20.0

    def synth_ev():
        p.clear_cache()
        return Evaluator(p, [KAnonymity(5)], 0.01, "discernibility")

    _measure("synthetic_12qi_anytime", n, synth_ev, lambda ev: anytime(ev, time_limit=limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
