"""Benchmark of the lattice search (optimal generalisation, ARX's core).

Cases
-----
* ``adult_k5_s0``, ``adult_k5_s1``, ``adult_k10_s2``: ARX's adult data with its 8 hierarchies
  (6,480 nodes), k-anonymity with a suppression limit of 0, 1 % and 2 %, discernibility.
  Measured after a warm-up with the data loaded (encoding is timed apart as
  ``encode_seconds``); ``seconds`` and ``cpu_seconds`` are medians of five runs (wall clock
  and process CPU time: the machine may be shared, ``load_average`` says how busy it was).
  ``baseline_seconds`` is checking every node in the same run (the exhaustive search, same
  counting code), whose optimum must equal the exact search's; the speed-ups are the ratios
  of the two in wall clock and in CPU time. ``tables_built``, ``pivots`` and ``rows_rolled``
  count the class tables the search built (checked nodes and pivots) and the source rows read.
  ARX 3.9.2's figures on the same cases are printed beside ours (``arx_nodes``,
  ``arx_seconds``).
* ``synthetic_12qi``: 1,000,000 records (``--quick``: 100,000), 12 quasi-identifiers with
  interval hierarchies, a lattice of more than 10^6 nodes (``--quick``: about 10^5), k = 5 with
  1 % suppression: the exact search with a 5-minute limit (``--quick``: 30 s); if the limit
  stops it, it reports the best node found and a lower bound of the optimum, and ``gap`` =
  best / bound.
  ``baseline_seconds`` is one pass that groups every record at the bottom node with
  ``pandas.DataFrame.value_counts`` (the simplest count of one node).
* ``synthetic_12qi_anytime``: the same data and problem, the anytime search
  (:mod:`sdckit.lattice.anytime`) with the same limit in CPU seconds, in the same process
  after the exact search (its cache cleared): best DM, bound, gap, the CPU seconds at which
  the best was first found, and its progress events. ``peak_mb`` is the process's peak so
  far (it includes the exact search's run).

Run from the project root: ``python benchmarks/bench_lattice.py [--quick] [--n N]``; one JSON
line per case.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.lattice import Evaluator, KAnonymity, Problem, exact, exhaustive, find_hierarchies
from sdckit.lattice.anytime import anytime
from sdckit.lattice.hierarchies import interval_hierarchy

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
QIS8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
ARX = {(5, 0.0): (142, 0.027), (5, 0.01): (701, 0.236), (10, 0.02): (813, 0.226)}


def _emit(d: dict) -> None:
    print(json.dumps(d), flush=True)


def _peak_mb(fn, problem) -> float:
    """Peak traced memory of a second, untimed run (tracing slows numpy allocations)."""
    problem.clear_cache()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
    tracemalloc.stop()
    return round(peak, 1)


def adult_cases() -> None:
    path = SHARED / "arx_adult.csv"
    if not path.exists():
        _emit({"case": "adult", "skipped": f"{path} is absent"})
        return
    data = pd.read_csv(path, dtype=str)
    hier = find_hierarchies(SHARED / "arx_adult_hierarchies", QIS8)
    t = time.perf_counter()
    p = Problem(data, QIS8, hier)
    encode_s = time.perf_counter() - t
    exact(Evaluator(p, [KAnonymity(5)], 0.0, "discernibility"))  # warm-up (numba, caches)
    exhaustive(Evaluator(p, [KAnonymity(5)], 0.01, "discernibility"))
    for (k, s), (arx_nodes, arx_s) in ARX.items():
        times, cpus = [], []
        for _ in range(5):  # median of five runs (the machine is shared)
            p.clear_cache()
            t, c = time.perf_counter(), time.process_time()
            r = exact(Evaluator(p, [KAnonymity(k)], s, "discernibility"))
            times.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        tables = {"tables_built": p.n_tables, "pivots": p.n_pivots, "rows_rolled": p.rows_rolled}
        secs, cpu = float(np.median(times)), float(np.median(cpus))
        peak = _peak_mb(lambda: exact(Evaluator(p, [KAnonymity(k)], s, "discernibility")), p)
        p.clear_cache()
        t, c = time.perf_counter(), time.process_time()
        b = exhaustive(Evaluator(p, [KAnonymity(k)], s, "discernibility"))
        base, base_cpu = time.perf_counter() - t, time.process_time() - c
        _emit({"case": f"adult_k{k}_s{int(round(s * 100))}", "n": p.n, "n_patterns": p.m, "n_nodes": p.n_nodes,
               "seconds": round(secs, 4), "cpu_seconds": round(cpu, 4), "peak_mb": peak,
               "nodes_checked": r.nodes_checked, "nodes_per_s": round(r.nodes_checked / secs, 1), **tables,
               "dm": r.value, "levels": r.level_map(), "n_suppressed": r.n_suppressed, "optimal": r.optimal,
               "dm_every_node": b.value, "same_optimum": r.value == b.value, "baseline_seconds": round(base, 4),
               "baseline_cpu_seconds": round(base_cpu, 4), "speedup_vs_every_node": round(base / secs, 2),
               "cpu_speedup_vs_every_node": round(base_cpu / cpu, 2), "encode_seconds": round(encode_s, 3),
               "arx_nodes": arx_nodes, "arx_seconds": arx_s, "load_average": os.getloadavg()[0]})


def synthetic(n: int, quick: bool, rng: np.random.Generator) -> tuple[pd.DataFrame, dict]:
    """12 correlated numeric QIs (a latent factor plus noise), interval hierarchies."""
    z = rng.normal(size=n)
    cols, hier = {}, {}
    # domains and interval widths: full size 6 QIs of height 3 and 6 of height 2, a lattice of
    # 4^6 * 3^6 = 2,985,984 nodes; quick 6 of height 2 and 6 of height 1 (3^6 * 2^6 = 46,656)
    spec = ([(16, [4, 16])] * 6 + [(12, [12])] * 6) if quick else \
        ([(16, [2, 4, 16])] * 6 + [(12, [3, 12])] * 6)
    for j, (dom, widths) in enumerate(spec):
        x = np.clip(np.round((0.6 * z + 0.8 * rng.normal(size=n)) * dom / 6 + dom / 2), 0, dom - 1).astype(int)
        cols[f"x{j}"] = x.astype(str)
        hier[f"x{j}"] = interval_hierarchy(np.arange(dom), widths, start=0, name=f"x{j}")
    return pd.DataFrame(cols), hier


def synthetic_case(n: int, quick: bool, limit: float) -> None:
    rng = np.random.default_rng(20261123)
    data, hier = synthetic(n, quick, rng)
    qis = list(hier)
    t = time.perf_counter()
    vc = data.value_counts()
    base = time.perf_counter() - t
    t = time.perf_counter()
    p = Problem(data, qis, hier)
    encode_s = time.perf_counter() - t
    ev = Evaluator(p, [KAnonymity(5)], 0.01, "discernibility")
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    # exact search with the whole budget; when it runs out it reports the best node found and
    # a lower bound of the optimum (optimal = false)
    r = exact(ev, time_limit=limit)
    secs, cpu = time.perf_counter() - t, time.process_time() - c
    # peak resident memory of the process (tracing a run of this size would slow it down)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _emit({"case": "synthetic_12qi", "n": n, "n_patterns": p.m, "distinct_rows_pandas": int(len(vc)),
           "n_nodes": p.n_nodes, "seconds": round(secs, 3), "cpu_seconds": round(cpu, 3), "peak_mb": round(peak, 1),
           "nodes_checked": r.nodes_checked, "nodes_per_s": round(r.nodes_checked / secs, 1),
           "tables_built": p.n_tables, "pivots": p.n_pivots, "rows_rolled": p.rows_rolled,
           "dm": r.value, "bound": r.bound, "gap": round(r.value / r.bound, 4) if r.bound > 0 else None,
           "optimal": r.optimal, "search": r.method, "load_average": [load, os.getloadavg()[0]],
           "levels": r.level_map(), "n_suppressed": r.n_suppressed, "encode_seconds": round(encode_s, 3),
           "baseline_seconds": round(base, 4)})
    p.clear_cache()
    ev = Evaluator(p, [KAnonymity(5)], 0.01, "discernibility")
    events: list[dict] = []
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    a = anytime(ev, time_limit=limit, progress=events.append)
    secs, cpu = time.perf_counter() - t, time.process_time() - c
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    found = next((e["cpu_seconds"] for e in events if e["best"] == a.value), None)
    _emit({"case": "synthetic_12qi_anytime", "n": n, "n_nodes": p.n_nodes, "seconds": round(secs, 3),
           "cpu_seconds": round(cpu, 3), "peak_mb": round(peak, 1), "nodes_checked": a.nodes_checked,
           "dm": a.value, "bound": a.bound, "gap": round(a.value / a.bound, 4) if a.bound > 0 else None,
           "optimal": a.optimal, "best_found_at_cpu_seconds": found, "dm_exact_search": r.value,
           "levels": a.level_map(), "n_suppressed": a.n_suppressed, "events": events,
           "load_average": [load, os.getloadavg()[0]], "baseline_seconds": round(base, 4)})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small synthetic case (under a minute)")
    ap.add_argument("--n", type=int, default=None, help="records of the synthetic case")
    ap.add_argument("--skip-adult", action="store_true")
    args = ap.parse_args(argv)
    if not args.skip_adult:
        adult_cases()
    n = args.n or (100_000 if args.quick else 1_000_000)
    synthetic_case(n, args.quick, 30.0 if args.quick else 300.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
