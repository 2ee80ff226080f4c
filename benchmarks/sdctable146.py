"""A seeded table shaped like the one of sdcTable's user-support issue #146, protected and audited.

The issue (sdcTools/UserSupport #146, 2020) describes a frequency table that sdcTable's
SIMPLEHEURISTIC had not protected after 48 hours and whose HYPERCUBE/HITAS runs crashed beyond
100 GB: 650,000 non-empty inner cells (pre-aggregated rows); five dimensions V1 (3,000 codes, a
3-level geography), V2 (10), V3 (2), V4 (75), V5 (10); after the frequency rule (n = 3) 1.4
million safe cells, 2.4 million sensitive cells and 110 million empty cells.

The generator builds that shape: V1 is Total > 10 regions > 10 districts each > 30 areas each
(3,000 areas), V2..V5 flat; every inner cell is non-empty with probability 650,000 / 45,000,000
(so the full table has about 650,000 non-empty inner cells of 45 million), and a non-empty cell
holds a geometric count (p = 0.5: half are 1, a quarter 2), so that most non-empty cells are
sensitive, as in the issue. ``fraction`` scales V1's regions, districts per region and areas per
district and V4's codes by ``fraction ** 0.25`` each (inner cells by about ``fraction``), keeping
V2, V3, V5 and the density.

Run: ``python benchmarks/sdctable146.py [--quick] [--n N]``: ``N`` is the target number of cells
(default and ``--quick``: the smallest shape, 16,335 cells, which this machine protects in
under a minute; 127,413 cells (--n 60000) did not finish in 10 CPU minutes; the full table has 85.8 million
cells, ``--n 0`` prints the full size's counts without protecting it). The pattern is made by the
Gaussian-elimination method with interval protection (:mod:`sdckit.tables.gauss`) and checked by
an exact protection audit without a budget. Each line is one JSON object: cells, sensitive
cells, secondaries, the exact audit's status and counts, CPU seconds, peak RSS.
Baseline: tabulating the inner cells with ``bincount`` and flagging the threshold cells.
"""

from __future__ import annotations

import resource
import time
import warnings

import numpy as np
from _common import emit, parse_args

from sdckit.tables.audit_large import protection_audit
from sdckit.tables.gauss import GaussSuppression
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.table import Hierarchy, Table, aggregate_totals

warnings.simplefilter("ignore")
FULL = {"regions": 10, "districts": 10, "areas": 30, "v2": 10, "v3": 2, "v4": 75, "v5": 10}
DENSITY = 650_000 / 45_000_000


def shape_for(fraction: float) -> dict:
    """The dimension sizes at ``fraction`` of the full table's inner cells."""
    r = float(fraction) ** 0.25
    return FULL | {k: max(2, round(FULL[k] * r)) for k in ("regions", "districts", "areas", "v4")}


def geography(regions: int, districts: int, areas: int) -> Hierarchy:
    lines = []
    for a in range(regions):
        lines.append(f"R{a}")
        for b in range(districts):
            lines.append(f"@R{a}D{b}")
            lines += [f"@@R{a}D{b}A{c}" for c in range(areas)]
    return Hierarchy.from_hrc("\n".join(lines))


def issue146_table(fraction: float = 1.0, seed: int = 146) -> tuple[Table, np.ndarray, np.ndarray]:
    """The table at ``fraction`` of full size, with its non-empty inner cells and their counts."""
    s = shape_for(fraction)
    rng = np.random.default_rng(seed)
    hs = [geography(s["regions"], s["districts"], s["areas"])] + [
        Hierarchy.flat([f"{d}{i}" for i in range(s[d])]) for d in ("v2", "v3", "v4", "v5")]
    shape = tuple(len(h) for h in hs)
    leaves = [np.flatnonzero(h.is_leaf) for h in hs]
    n_inner = int(np.prod([x.size for x in leaves]))
    k = rng.binomial(n_inner, DENSITY)
    pick = np.unique(rng.integers(0, n_inner, k))
    idx = np.unravel_index(pick, tuple(x.size for x in leaves))
    cells = np.ravel_multi_index([leaves[d][i] for d, i in enumerate(idx)], shape)
    counts = rng.geometric(0.5, pick.size).astype(float)
    vals = np.zeros(int(np.prod(shape)))
    vals[cells] = counts
    v = aggregate_totals(hs, shape, vals)
    return Table(["V1", "V2", "V3", "V4", "V5"], hs, v, v.astype(np.int64)), cells, counts


def run(fraction: float) -> None:
    c0, t0 = time.process_time(), time.perf_counter()
    t, cells, counts = issue146_table(fraction)
    gen_cpu = time.process_time() - c0
    b0 = time.perf_counter()
    f = np.bincount(cells, weights=counts, minlength=t.n_cells)
    _ = (f > 0) & (f < 3)
    base = time.perf_counter() - b0
    p = primary_cells(t, ThresholdRule(3))
    c1 = time.process_time()
    # Gaussian elimination: empty cells (98.6% of the inner cells) are published first and never
    # secondaries; the interval repair runs with an unbounded audit (HiGHS's time limit is wall
    # time, hence generous)
    res = GaussSuppression(cost="tauargus", audit_lps=10**9, audit_seconds=1e9, time_limit=7200.0).apply(t, p)
    method_cpu = time.process_time() - c1
    c2 = time.process_time()
    aud = protection_audit(t, res.suppressed, p, max_lps=None, cpu_budget=None)
    audit_cpu = time.process_time() - c2
    emit(case="sdctable146_gauss_exact_audit", n=t.n_cells, n_cells=t.n_cells, fraction=f"{fraction:.3g}",
         shape=list(t.shape), n_nonempty_inner=int(cells.size), n_primary=p.n_primary,
         n_empty=int((t.freq == 0).sum()), n_secondary=res.n_secondary, n_interval_added=res.n_interval_added,
         audit_status=aud.status, audit_ok=aud.ok, n_audited=aud.n_audited, audit_lps=aud.n_lps,
         generate_cpu_seconds=gen_cpu,
         method_cpu_seconds=method_cpu, audit_cpu_seconds=audit_cpu, cpu_seconds=time.process_time() - c0,
         seconds=time.perf_counter() - t0, peak_mb=None,
         peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1), baseline_seconds=base,
         load=round(__import__("os").getloadavg()[0], 2))


def full_size_counts() -> None:
    """Cells of the full table (from the shape alone: nothing is allocated)."""
    s = shape_for(1.0)
    v1 = 1 + s["regions"] * (1 + s["districts"] * (1 + s["areas"]))
    n = v1 * (s["v2"] + 1) * (s["v3"] + 1) * (s["v4"] + 1) * (s["v5"] + 1)
    inner = s["regions"] * s["districts"] * s["areas"] * s["v2"] * s["v3"] * s["v4"] * s["v5"]
    emit(case="sdctable146_full_size", n=n, n_cells=n, n_inner=inner, expected_nonempty_inner=round(inner * DENSITY),
         seconds=0.0, peak_mb=None, baseline_seconds=0.0)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    full = full_size_counts
    if args.n == 0:
        full()
        return
    target = args.n or 20  # the smallest shape (16,335 cells): larger ones with --n
    full()
    run(min(1.0, target / 85_826_268))


if __name__ == "__main__":
    main()
