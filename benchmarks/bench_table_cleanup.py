"""The hypercube's clean-up pass on the hierarchical tables where the hypercube costs more than the optimum.

For the 3-level region hierarchy of ``bench_tables.py`` (``hier_table``: branch^3 regions x
activities, threshold rule n = 3, cost = cell value) the hypercube pattern is made without and
with the clean-up pass (``HypercubeSuppression(cleanup=False / True)``), and the proven optimum
(``OptimalSuppression``, the anchor, timed in the same run) gives the ratio. One JSON line per
table: ``n_secondary_before`` / ``cost_before`` (no clean-up), ``n_secondary_after`` /
``cost_after``, ``optimal_n_secondary`` / ``optimal_cost``, ``ratio_before`` / ``ratio_after``
(cost over the optimum), ``cleanup_complete`` (every secondary tried within the CPU budget),
``cleanup_lps``, ``audit_status`` (the final pattern's audit), ``seconds`` / ``cpu_seconds`` (the
hypercube with its clean-up), ``baseline_seconds`` (the optimal method's), ``peak_mb``.

Run: ``python benchmarks/bench_table_cleanup.py [--quick] [--n BRANCH]``.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
import warnings

from _common import emit, parse_args
from bench_tables import hier_table

from sdckit.tables.audit import audit
from sdckit.tables.hypercube import HypercubeSuppression
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.suppression import OptimalSuppression

warnings.simplefilter("ignore")


def case(branch: int, n_act: int) -> None:
    t, _ = hier_table(branch, n_act, 8.0, seed=7)
    p = primary_cells(t, ThresholdRule(3))
    raw = HypercubeSuppression(cleanup=False).apply(t, p)
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    hc = HypercubeSuppression().apply(t, p)
    sec, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    t0 = time.perf_counter()
    opt = OptimalSuppression(time_limit=120.0).apply(t, p)
    base = time.perf_counter() - t0
    assert audit(t, hc.suppressed, primary=p).ok  # the full LP audit of the cleaned pattern
    c = hc.cleanup or {}
    emit(case="hypercube_cleanup", table=f"{branch}^3 regions x {n_act}", n=t.n_cells, n_primary=p.n_primary,
         n_secondary_before=raw.n_secondary, cost_before=raw.cost, n_secondary_after=hc.n_secondary,
         cost_after=hc.cost, optimal_n_secondary=opt.n_secondary, optimal_cost=opt.cost,
         optimal_proven=opt.proven_optimal, ratio_before=raw.cost / opt.cost, ratio_after=hc.cost / opt.cost,
         secondary_ratio_before=raw.n_secondary / opt.n_secondary,
         secondary_ratio_after=hc.n_secondary / opt.n_secondary, cleanup_complete=c.get("complete"),
         cleanup_lps=c.get("n_lps"), cleanup_cpu_seconds=c.get("cpu_seconds"), audit_status=hc.audit.status,
         seconds=sec, cpu_seconds=cpu, baseline_seconds=base, peak_mb=peak)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    sizes = [(args.n, 2 * args.n + 2)] if args.n else ([(3, 6)] if args.quick else [(3, 6), (4, 10), (5, 12)])
    for branch, n_act in sizes:
        case(branch, n_act)


if __name__ == "__main__":
    sys.exit(main())
