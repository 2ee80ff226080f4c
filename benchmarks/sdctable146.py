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

Run: ``python benchmarks/sdctable146.py [--quick] [--n N] [--methods chain,gauss,hypercube]``.
``N`` is the target number of cells (default and ``--quick``: the smallest shape, 16,335 cells;
``--n 85826268``: the full table; ``--n 0`` prints the full size's counts without protecting
it). The default method is the hypercube with chain factors (:mod:`sdckit.tables.chain_cube`),
whose moves the exact protection audit verifies itself (no LP where every primary is proven);
``--methods`` adds the Gaussian-elimination method (:mod:`sdckit.tables.gauss`, audited exactly
without proofs) and the hypercube method (:mod:`sdckit.tables.hypercube`) for comparison, and
``--compare`` runs all three on small shapes of the same kind (V2 and V5 shrunk too) and on the
16,335-cell one, each method in its own process under a CPU limit (``--cpu-limit``, default 300 s;
a method that does not finish is reported with ``finished: false``). Every audit runs without a budget (``status`` says ``exact`` only when
every sensitive cell was proven protected by an LP optimum or a verified move). Each line is one
JSON object: cells, non-empty inner cells, sensitive cells, secondaries, cost (tau-Argus's
scaling), the audit's status and counts, method and audit CPU seconds, wall seconds, peak RSS
(of the process so far: run one ``--n`` per process for a size's own peak) and the load average.
Baseline: tabulating the inner cells with ``bincount`` and flagging the threshold cells.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import warnings

import numpy as np
from _common import emit

from sdckit.tables.audit_large import protection_audit
from sdckit.tables.chain_cube import ChainCubeSuppression
from sdckit.tables.gauss import GaussSuppression
from sdckit.tables.hypercube import HypercubeSuppression
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.suppression import cell_costs
from sdckit.tables.table import Hierarchy, Table, aggregate_totals

warnings.simplefilter("ignore")
FULL = {"regions": 10, "districts": 10, "areas": 30, "v2": 10, "v3": 2, "v4": 75, "v5": 10}
DENSITY = 650_000 / 45_000_000


def shape_for(fraction: float, small: dict | None = None) -> dict:
    """The dimension sizes at ``fraction`` of the full table's inner cells (``small``: sizes to
    override, for the comparison shapes)."""
    r = float(fraction) ** 0.25
    return FULL | {k: max(2, round(FULL[k] * r)) for k in ("regions", "districts", "areas", "v4")} | (small or {})


def geography(regions: int, districts: int, areas: int) -> Hierarchy:
    lines = []
    for a in range(regions):
        lines.append(f"R{a}")
        for b in range(districts):
            lines.append(f"@R{a}D{b}")
            lines += [f"@@R{a}D{b}A{c}" for c in range(areas)]
    return Hierarchy.from_hrc("\n".join(lines))


def issue146_table(fraction: float = 1.0, seed: int = 146, small: dict | None = None,
                   density: float = DENSITY) -> tuple[Table, np.ndarray, np.ndarray]:
    """The table at ``fraction`` of full size, with its non-empty inner cells and their counts."""
    s = shape_for(fraction, small)
    rng = np.random.default_rng(seed)
    hs = [geography(s["regions"], s["districts"], s["areas"])] + [
        Hierarchy.flat([f"{d}{i}" for i in range(s[d])]) for d in ("v2", "v3", "v4", "v5")]
    shape = tuple(len(h) for h in hs)
    leaves = [np.flatnonzero(h.is_leaf) for h in hs]
    n_inner = int(np.prod([x.size for x in leaves]))
    k = rng.binomial(n_inner, density)
    pick = np.unique(rng.integers(0, n_inner, k))
    idx = np.unravel_index(pick, tuple(x.size for x in leaves))
    cells = np.ravel_multi_index([leaves[d][i] for d, i in enumerate(idx)], shape)
    counts = rng.geometric(0.5, pick.size).astype(float)
    vals = np.zeros(int(np.prod(shape)))
    vals[cells] = counts
    v = aggregate_totals(hs, shape, vals)
    return Table(["V1", "V2", "V3", "V4", "V5"], hs, v, v.astype(np.int64)), cells, counts


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def protect(t: Table, p, method: str) -> tuple[np.ndarray, object, float, float]:
    """``(suppressed, exact audit, method CPU s, audit CPU s)`` of one method, every audit unbudgeted."""
    c1 = time.process_time()
    if method == "chain":
        # the method's own audit is the exact one: no LP or CPU budget, the moves handed as proofs
        res = ChainCubeSuppression(cost="tauargus", audit_lps=None, audit_seconds=None).apply(t, p)
        total = time.process_time() - c1
        return res.suppressed, res.audit, total - res.audit.cpu_seconds, res.audit.cpu_seconds
    if method == "gauss":
        # Gaussian elimination: empty cells (98.6% of the inner cells) are published first and never
        # secondaries; the interval repair runs with an unbounded audit (HiGHS's time limit is wall
        # time, hence generous)
        res = GaussSuppression(cost="tauargus", audit_lps=10**9, audit_seconds=1e9, time_limit=7200.0).apply(t, p)
    else:
        # its defaults otherwise (the clean-up pass included, 30 CPU s)
        res = HypercubeSuppression(cost="tauargus", audit_lps=10**9, audit_seconds=1e9, time_limit=7200.0).apply(t, p)
    method_cpu = time.process_time() - c1
    c2 = time.process_time()
    aud = protection_audit(t, res.suppressed, p, max_lps=None, cpu_budget=None)  # no proofs: LPs only
    return res.suppressed, aud, method_cpu, time.process_time() - c2


def run(fraction: float, methods: tuple[str, ...] = ("chain",), small: dict | None = None,
        density: float = DENSITY) -> None:
    c0, t0 = time.process_time(), time.perf_counter()
    t, cells, counts = issue146_table(fraction, small=small, density=density)
    gen_cpu = time.process_time() - c0
    b0 = time.perf_counter()
    f = np.bincount(cells, weights=counts, minlength=t.n_cells)
    _ = (f > 0) & (f < 3)
    base = time.perf_counter() - b0
    p = primary_cells(t, ThresholdRule(3))
    w = cell_costs(t, "tauargus")
    for method in methods:
        m0, w0 = time.process_time(), time.perf_counter()
        sup, aud, method_cpu, audit_cpu = protect(t, p, method)
        sec = sup & ~p.sensitive
        emit(case=f"sdctable146_{method}_exact_audit", method=method, n=t.n_cells, n_cells=t.n_cells,
             fraction=f"{fraction:.3g}", shape=list(t.shape), n_nonempty_inner=int(cells.size),
             n_primary=p.n_primary, n_empty=int((t.freq == 0).sum()), n_secondary=int(sec.sum()),
             cost=float(w[sec].sum()), grand_total_suppressed=bool(sup[0]),
             audit_status=aud.status, audit_ok=aud.ok, n_audited=aud.n_audited, audit_lps=aud.n_lps,
             n_proven_by_proofs=aud.n_proven_by_given, n_proofs_rejected=aud.n_proofs_rejected,
             generate_cpu_seconds=gen_cpu, method_cpu_seconds=method_cpu, audit_cpu_seconds=audit_cpu,
             cpu_seconds=time.process_time() - m0, seconds=time.perf_counter() - w0,
             total_seconds=time.perf_counter() - t0, peak_mb=None, peak_rss_mb=_rss_mb(),
             baseline_seconds=base, load=round(os.getloadavg()[0], 2))


def full_size_counts() -> None:
    """Cells of the full table (from the shape alone: nothing is allocated)."""
    s = shape_for(1.0)
    v1 = 1 + s["regions"] * (1 + s["districts"] * (1 + s["areas"]))
    n = v1 * (s["v2"] + 1) * (s["v3"] + 1) * (s["v4"] + 1) * (s["v5"] + 1)
    inner = s["regions"] * s["districts"] * s["areas"] * s["v2"] * s["v3"] * s["v4"] * s["v5"]
    emit(case="sdctable146_full_size", n=n, n_cells=n, n_inner=inner, expected_nonempty_inner=round(inner * DENSITY),
         seconds=0.0, peak_mb=None, baseline_seconds=0.0)


# small shapes of the same kind (every dimension shrunk, the density raised so that there are
# sensitive cells to protect) on which the hypercube method finishes: the comparison
COMPARE = [({"regions": 2, "districts": 2, "areas": 3, "v2": 3, "v3": 2, "v4": 3, "v5": 3}, 0.1),
           ({"regions": 2, "districts": 3, "areas": 3, "v2": 4, "v3": 2, "v4": 4, "v5": 3}, 0.05)]


def _compare(cpu_limit: float) -> None:
    """Each (shape, method) in a child process under a CPU-time limit (RLIMIT_CPU): a method that
    does not finish is reported as such, with the limit."""
    import subprocess
    import sys

    cases = [(i, m) for i in range(len(COMPARE)) for m in ("chain", "gauss", "hypercube")]
    cases += [(len(COMPARE), m) for m in ("chain", "gauss", "hypercube")]
    for i, m in cases:
        lim = int(cpu_limit)

        def limit(lim=lim):
            resource.setrlimit(resource.RLIMIT_CPU, (lim, lim + 5))

        out = subprocess.run([sys.executable, __file__, "--case", str(i), "--methods", m], preexec_fn=limit,
                             capture_output=True, text=True)
        lines = [x for x in out.stdout.splitlines() if x.startswith("{") and "_exact_audit" in x]
        if out.returncode == 0 and lines:
            print(lines[-1], flush=True)
        else:
            small, density = COMPARE[i] if i < len(COMPARE) else (None, DENSITY)
            t, cells, _ = issue146_table(1e-9, small=small, density=density)
            emit(case=f"sdctable146_{m}_exact_audit", method=m, n=t.n_cells, n_cells=t.n_cells, shape=list(t.shape),
                 n_nonempty_inner=int(cells.size), finished=False, cpu_limit_seconds=lim,
                 returncode=out.returncode, seconds=None, peak_mb=None, load=round(os.getloadavg()[0], 2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the smallest shape only")
    ap.add_argument("--n", type=int, default=None, help="target number of cells (0: full size counts only)")
    ap.add_argument("--methods", default="chain", help="comma list of chain, gauss, hypercube")
    ap.add_argument("--compare", action="store_true",
                    help="all three methods on the small shapes and the 16k table, each under a CPU limit")
    ap.add_argument("--cpu-limit", type=float, default=300.0, help="CPU seconds per method in --compare")
    ap.add_argument("--case", type=int, default=None, help=argparse.SUPPRESS)  # one comparison shape
    args = ap.parse_args()
    methods = tuple(m.strip() for m in args.methods.split(","))
    if args.case is not None:
        small, density = COMPARE[args.case] if args.case < len(COMPARE) else (None, DENSITY)
        run(1e-9, methods, small=small, density=density)
        return
    full_size_counts()
    if args.n == 0:
        return
    if args.compare:
        _compare(args.cpu_limit)
        return
    target = args.n or 20  # the smallest shape (16,335 cells): larger ones with --n
    run(min(1.0, target / 85_826_268), methods)


if __name__ == "__main__":
    main()
