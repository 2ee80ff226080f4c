"""Table protection benchmark: secondary suppression, the audit, controlled rounding.

Cases (one JSON line each, keys n_cells, n_primary, n_secondary, cost, audit_ok, seconds):

* ``suppress_2d_optimal`` / ``suppress_2d_heuristic``: R x C tables (20, 40, 100, 200) tabulated
  from synthetic microdata, threshold rule n = 3, cost = cell value. The pytauargus OPT
  figures quoted in the issue (secondaries and seconds on its machines, other synthetic data)
  are printed beside ours as ``ref_n_secondary`` / ``ref_seconds``.
* ``suppress_hier3``: a 2-D table whose first dimension is a 3-level hierarchy, modular
  (HiTaS-style) and optimal.
* ``suppress_3d``: a 6 x 6 x 6 table, optimal.
* ``audit``: the LP audit of 1,000 suppressed cells of a 100 x 100 table.
* ``suppress_large_hypercube``: a 4-dimensional hierarchical table (every dimension: total,
  4 groups, 7 leaves each: 33^4 = 1,185,921 cells; with ``--quick`` 3 groups of 5: 130,321
  cells) of Poisson counts with lognormal margin propensities (mean 60 per inner cell, and a
  sparser one with mean 15 and 19 times as many primaries), threshold rule n = 3, tau-Argus
  costs, protected by the hypercube method; reports the secondaries, the certificates, and the
  protection audit (``audit_status`` exact, sampled or failed, ``audit_ok`` true only when
  exact and passing, ``n_audited``, ``n_not_audited``, ``audit_lps``, ``audit_cpu_seconds``,
  ``n_proven_by_certificates``: primaries the audit proved with the hypercube certificates it
  verified itself). Then, on the same pattern, the audit without the certificates (one LP per
  primary and direction, no budget) as ``audit_lp_only_*``. Baseline: tabulating the inner
  cells with ``bincount`` and flagging the threshold cells.
* ``compare_2d`` / ``compare_hier3`` / ``compare_4d``: Gaussian-elimination suppression
  (``gauss``), hypercube and optimal (not on the 4-D table) on the same table and
  threshold rule, tau-Argus costs: secondaries, cost, CPU seconds, and each pattern's validity by
  the same exact protection audit (no budget), timed apart (``audit_cpu_seconds``). Baseline:
  the primary rule alone.
* ``large_hypercube_exact_audit``: the sparse 4-D table (mean 15, 1,185,921 cells) by the
  hypercube method (no clean-up) and an exact protection audit without a budget
  (``--n -1`` runs it alone; ``--n -2`` the comparison alone).
* ``rounding``: controlled rounding (network LP) of a 200 x 200 table to base 5.
* ``ckm_5tables``: the cell key method on 1,000,000 records (100,000 with ``--quick``) into 5
  frequency tables of up to 10^5 cells (margins included), a generated p-table (D=5, V=3,
  js=2); reports the cells perturbed, the largest change, whether the margin shared by two
  tables got the same noise, and the lost additivity. Baseline: a ``bincount`` of the inner
  cells of each table and one ``take`` in a perturbation array.

``baseline_seconds`` is the simplest numpy work of the same input: tabulating the microdata
with ``bincount`` and flagging the threshold cells (suppression cases), or rounding every cell
to the nearest multiple without control (rounding).

Run: ``python benchmarks/bench_tables.py [--quick] [--n N]`` (``--n 1000000``: the large
hypercube case alone; ``peak_mb`` is not traced there, ``peak_rss_mb`` is the process's peak RSS).
"""

from __future__ import annotations

import resource
import time
import warnings

import numpy as np
import pandas as pd
from _common import emit, parse_args, peak_mb

from sdckit.tables.audit import audit
from sdckit.tables.audit_large import protection_audit
from sdckit.tables.gauss import GaussSuppression
from sdckit.tables.hypercube import HypercubeSuppression
from sdckit.tables.modular import ModularSuppression
from sdckit.tables.rounding import ControlledRounding
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.suppression import HeuristicSuppression, OptimalSuppression
from sdckit.tables.table import Hierarchy, Table

# pytauargus OPT on the machines: size -> (secondaries, seconds)
REFERENCE = {20: (8, 0.2), 40: (22, 1.2), 100: (21, 6.7), 200: (8, 25.0)}
warnings.simplefilter("ignore")


def microdata(shape: tuple[int, ...], per_cell: float, seed: int) -> pd.DataFrame:
    """Records whose cell probabilities are products of lognormal margin propensities (sigma 0.5)."""
    rng = np.random.default_rng(seed)
    cols = {}
    n = int(per_cell * np.prod(shape))
    for d, k in enumerate(shape):
        p = rng.lognormal(0.0, 0.5, k)
        cols[f"d{d}"] = rng.choice(k, n, p=p / p.sum())
    return pd.DataFrame({c: pd.Series(v).map(lambda i: f"{i:03d}") for c, v in cols.items()})


def baseline(df: pd.DataFrame, shape) -> float:
    t0 = time.perf_counter()
    codes = np.ravel_multi_index([df[c].astype(int).to_numpy() for c in df.columns], shape)
    f = np.bincount(codes, minlength=int(np.prod(shape)))
    _ = (f > 0) & (f < 3)
    return time.perf_counter() - t0


def _peak(fn, seconds: float):
    return round(peak_mb(fn), 2) if seconds < 5 else None


def run_suppression(case: str, method, table: Table, base_s: float, **extra) -> None:
    p = primary_cells(table, ThresholdRule(3))
    t0 = time.perf_counter()
    res = method.apply(table, p)
    s = time.perf_counter() - t0
    emit(case=case, n=table.n_cells, n_cells=table.n_cells, n_primary=p.n_primary, n_secondary=res.n_secondary,
         cost=res.cost, audit_ok=res.audit.ok, seconds=s, peak_mb=_peak(lambda: method.apply(table, p), s),
         baseline_seconds=base_s, proven_optimal=res.proven_optimal, gap=None if res.gap != res.gap else res.gap, status=res.status, **extra)


def case_2d(size: int, time_limit: float, heuristic: bool = True) -> None:
    per_cell = 20.0
    df = microdata((size, size), per_cell, seed=size)
    t = Table.from_microdata(df, ["d0", "d1"])
    ref = REFERENCE.get(size, (None, None))
    b = baseline(df, (size, size))
    run_suppression("suppress_2d_optimal", OptimalSuppression(time_limit=time_limit), t, b, size=f"{size}x{size}",
                    ref_n_secondary=ref[0], ref_seconds=ref[1])
    if heuristic:
        run_suppression("suppress_2d_heuristic", HeuristicSuppression(), t, b, size=f"{size}x{size}")


def hier_table(branch: int, n_act: int, per_cell: float, seed: int) -> Table:
    """Region hierarchy branch x branch x branch (3 levels) by n_act activities."""
    lines = []
    for a in range(branch):
        lines.append(f"R{a}")
        for b in range(branch):
            lines.append(f"@R{a}{b}")
            lines += [f"@@R{a}{b}{c}" for c in range(branch)]
    h = Hierarchy.from_hrc("\n".join(lines))
    leaves = np.array(h.leaves)
    df = microdata((leaves.size, n_act), per_cell, seed)
    df["d0"] = leaves[df["d0"].astype(int).to_numpy()]
    return Table.from_microdata(df, ["d0", "d1"], hierarchies={"d0": h}), df


def case_hier(branch: int, n_act: int, time_limit: float) -> None:
    t, df = hier_table(branch, n_act, 8.0, seed=7)
    b = baseline(df.assign(d0=pd.factorize(df["d0"])[0]), (branch ** 3, n_act))
    size = f"{branch}x{branch}x{branch} regions x {n_act}"
    run_suppression("suppress_hier3_modular", ModularSuppression(time_limit=time_limit), t, b, size=size)
    run_suppression("suppress_hier3_optimal", OptimalSuppression(time_limit=time_limit), t, b, size=size)


def case_3d(k: int, time_limit: float) -> None:
    df = microdata((k, k, k), 6.0, seed=3)
    t = Table.from_microdata(df, ["d0", "d1", "d2"])
    run_suppression("suppress_3d_optimal", OptimalSuppression(time_limit=time_limit), t, baseline(df, (k, k, k)),
                    size=f"{k}x{k}x{k}")


def case_audit(size: int, n_sup: int) -> None:
    df = microdata((size, size), 10.0, seed=11)
    t = Table.from_microdata(df, ["d0", "d1"])
    rng = np.random.default_rng(0)
    sup = np.zeros(t.n_cells, bool)
    sup[rng.choice(np.flatnonzero(t.is_inner), n_sup, replace=False)] = True
    p = primary_cells(t, ThresholdRule(3))
    t0 = time.perf_counter()
    res = audit(t, sup, primary=p)
    s = time.perf_counter() - t0
    emit(case="audit", n=n_sup, n_cells=t.n_cells, n_primary=int((p.sensitive & sup).sum()), n_secondary=0,
         cost=0.0, audit_ok=res.ok, seconds=s, peak_mb=_peak(lambda: audit(t, sup, primary=p), s),
         baseline_seconds=baseline(df, (size, size)), n_lps=res.n_lps, size=f"{size}x{size}",
         n_suppressed=n_sup, n_unbounded=int(np.isinf(res.upper).sum()))


def large_table(groups: int, leaves: int, dims: int = 4, mean: float = 60.0, seed: int = 4):
    """Every dimension: total, ``groups`` groups of ``leaves`` leaves; inner cells Poisson with mean
    ``mean`` times a product of lognormal (sigma 0.6) propensities. Returns the table and the
    inner counts with their cell indices (for the baseline)."""
    rng = np.random.default_rng(seed)
    lines = []
    for g in range(groups):
        lines.append(f"G{g}")
        lines += [f"@G{g}L{k}" for k in range(leaves)]
    h = Hierarchy.from_hrc("\n".join(lines))
    shape = (len(h),) * dims
    prop = [rng.lognormal(0.0, 0.6, len(h)) for _ in range(dims)]
    leaf = np.flatnonzero(h.is_leaf)
    grids = np.meshgrid(*[leaf] * dims, indexing="ij")
    cells = np.ravel_multi_index([g.reshape(-1) for g in grids], shape)
    mu = mean * np.prod([prop[d][g.reshape(-1)] for d, g in enumerate(grids)], axis=0)
    counts = rng.poisson(mu).astype(float)
    arr = np.zeros(shape)
    arr.reshape(-1)[cells] = counts
    for d in range(dims):  # totals bottom-up (pre-order: children after parents)
        arr = np.moveaxis(arr, d, 0)
        for i in range(len(h) - 1, -1, -1):
            if h.children[i]:
                arr[i] = arr[h.children[i]].sum(axis=0)
        arr = np.moveaxis(arr, 0, d)
    v = arr.reshape(-1)
    return Table([f"d{d}" for d in range(dims)], [h] * dims, v, v.astype(np.int64)), cells, counts


def case_large(groups: int, leaves: int, mean: float = 60.0, lp_audit: bool = True) -> None:
    t, cells, counts = large_table(groups, leaves, mean=mean)
    p = primary_cells(t, ThresholdRule(3))
    t0 = time.perf_counter()
    f = np.bincount(cells, weights=counts, minlength=t.n_cells)  # baseline: tabulate and flag
    _ = (f > 0) & (f < 3)
    base = time.perf_counter() - t0
    method = HypercubeSuppression(cost="tauargus", audit_seconds=240.0)  # CPU seconds
    t0, c0 = time.perf_counter(), time.process_time()
    res = method.apply(t, p)
    s, cpu = time.perf_counter() - t0, time.process_time() - c0
    a = res.audit
    from sdckit.tables.audit_large import protection_audit

    lp_only = protection_audit(t, res.suppressed, p, max_lps=None, cpu_budget=600.0, rng=0) if lp_audit else None
    emit(case="suppress_large_hypercube", n=t.n_cells, n_cells=t.n_cells, dims=4,
         size=f"4 dims x (1 + {groups} + {groups * leaves} codes)", mean_count=mean, n_primary=p.n_primary,
         n_secondary=res.n_secondary, cost=res.cost, audit_ok=a.ok, audit_status=a.status, n_audited=a.n_audited,
         n_not_audited=a.n_not_audited, audit_lps=a.n_lps, audit_seconds=a.seconds, audit_cpu_seconds=a.cpu_seconds,
         n_proven_by_certificates=a.n_proven_by_given, cpu_seconds=cpu,
         audit_lp_only_status=lp_only and lp_only.status, audit_lp_only_lps=lp_only and lp_only.n_lps,
         audit_lp_only_n_audited=lp_only and lp_only.n_audited,
         audit_lp_only_cpu_seconds=lp_only and lp_only.cpu_seconds,
         load=round(__import__("os").getloadavg()[0], 2),
         n_certified=res.n_certified, n_certificates_ok=res.n_certificates_ok, n_lp_fallback=res.n_lp_fallback,
         n_singleton_cubes=res.n_singleton_cubes, seconds=s, peak_mb=None,
         peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1), baseline_seconds=base)


def compare_methods(case: str, t: Table, size: str, *, optimal: bool = True, time_limit: float = 120.0) -> None:
    """Gaussian elimination, hypercube and optimal suppression on one table and rule: cost,
    secondaries, CPU seconds and validity by one exact audit of each pattern (no budget; the
    same audit for every method, run after it and timed apart)."""
    p = primary_cells(t, ThresholdRule(3))
    methods = [("gauss", GaussSuppression(cost="tauargus")),
               ("hypercube", HypercubeSuppression(cost="tauargus"))]
    if optimal:
        methods.append(("optimal", OptimalSuppression(cost="tauargus", time_limit=time_limit)))
    t0 = time.perf_counter()
    _ = primary_cells(t, ThresholdRule(3))  # baseline: the primary rule alone
    base = time.perf_counter() - t0
    for name, m in methods:
        t0, c0 = time.perf_counter(), time.process_time()
        res = m.apply(t, p)
        s, cpu = time.perf_counter() - t0, time.process_time() - c0
        c1 = time.process_time()
        exact = protection_audit(t, res.suppressed, p, max_lps=None, cpu_budget=None)
        emit(case=case, method=name, n=t.n_cells, n_cells=t.n_cells, size=size, n_primary=p.n_primary,
             n_secondary=res.n_secondary, cost=res.cost, audit_status=exact.status, audit_ok=exact.ok,
             audit_lps=exact.n_lps, audit_cpu_seconds=time.process_time() - c1, seconds=s, cpu_seconds=cpu,
             peak_mb=None, peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
             baseline_seconds=base, proven_optimal=bool(getattr(res, "proven_optimal", False)),
             load=round(__import__("os").getloadavg()[0], 2))


def case_compare(quick: bool) -> None:
    """The comparison on the 2-D, hierarchical and 4-D tables."""
    for size in ((20, 40) if quick else (40, 100)):
        t = Table.from_microdata(microdata((size, size), 20.0, seed=size), ["d0", "d1"])
        compare_methods("compare_2d", t, f"{size}x{size}")
    t, _ = hier_table(3, 6, 8.0, seed=7) if quick else hier_table(4, 10, 8.0, seed=7)
    compare_methods("compare_hier3", t, "3-level regions x activities", time_limit=20.0 if quick else 120.0)
    g, l = (2, 3) if quick else (3, 5)
    t, _, _ = large_table(g, l)
    compare_methods("compare_4d", t, f"4 dims x (1 + {g} + {g * l} codes)", optimal=False)


def case_large_exact(groups: int, leaves: int, mean: float, method: str = "hypercube") -> None:
    """The 4-D table protected by ``method`` and audited exactly (no budget): the time in all."""
    t, cells, counts = large_table(groups, leaves, mean=mean)
    p = primary_cells(t, ThresholdRule(3))
    t0 = time.perf_counter()
    f = np.bincount(cells, weights=counts, minlength=t.n_cells)
    _ = (f > 0) & (f < 3)
    base = time.perf_counter() - t0
    # time_limit: HiGHS's limit per fallback LP is wall time; on a loaded machine 600 s ran out
    m = (HypercubeSuppression(cost="tauargus", cleanup=False, audit_lps=0, time_limit=7200.0) if method == "hypercube"
         else GaussSuppression(cost="tauargus", interval_protection=False, audit_lps=0))
    t0, c0 = time.perf_counter(), time.process_time()
    res = m.apply(t, p)
    s1, cpu1 = time.perf_counter() - t0, time.process_time() - c0
    proofs = getattr(res, "certificates", None)
    c1, t1 = time.process_time(), time.perf_counter()
    exact = protection_audit(t, res.suppressed, p, max_lps=None, cpu_budget=None, proofs=proofs)
    emit(case=f"large_{method}_exact_audit", n=t.n_cells, n_cells=t.n_cells, mean_count=mean,
         size=f"4 dims x (1 + {groups} + {groups * leaves} codes)", n_primary=p.n_primary,
         n_secondary=res.n_secondary, cost=res.cost, audit_status=exact.status, audit_ok=exact.ok,
         n_audited=exact.n_audited, audit_lps=exact.n_lps, n_proven_by_certificates=exact.n_proven_by_given,
         method_cpu_seconds=cpu1, audit_cpu_seconds=time.process_time() - c1, cpu_seconds=time.process_time() - c0,
         seconds=s1 + time.perf_counter() - t1, peak_mb=None,
         peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1), baseline_seconds=base,
         load=round(__import__("os").getloadavg()[0], 2))


def case_rounding(size: int, base: int) -> None:
    df = microdata((size, size), 10.0, seed=13)
    t = Table.from_microdata(df, ["d0", "d1"])
    for method in ("optimal", "unbiased"):
        cr = ControlledRounding(base=base, method=method, intervals=False)
        t0 = time.perf_counter()
        res = cr.apply(t, rng=1)
        s = time.perf_counter() - t0
        t1 = time.perf_counter()
        _ = base * np.rint(t.value / base)  # uncontrolled rounding: not additive
        b = time.perf_counter() - t1
        c = res.checks
        emit(case=f"rounding_{method}", n=t.n_cells, n_cells=t.n_cells, n_primary=0, n_secondary=0,
             cost=float(np.abs(res.rounded - t.value).sum()), audit_ok=bool(all(c.values())), seconds=s,
             peak_mb=_peak(lambda: cr.apply(t, rng=1), s), baseline_seconds=b, size=f"{size}x{size}", base=base,
             zero_restricted=res.zero_restricted, status=res.status)


def case_ckm(n_records: int) -> None:
    """Cell key method: 5 tables of one microdata; same noise on the shared margin."""
    from sdckit.tables.ckm import PTable, add_record_keys, ckm_frequency

    rng = np.random.default_rng(2022)
    sizes = {"a": 150, "b": 50, "c": 20, "d": 10, "e": 5}
    df = pd.DataFrame({k: pd.Series(rng.integers(0, m, n_records)).map(lambda i: f"{i:03d}") for k, m in sizes.items()})
    df = add_record_keys(df, rng=rng)
    tables = [["a", "b", "d"], ["a", "c", "e"], ["b", "c", "d"], ["a", "b"], ["c", "d", "e"]]
    pt = PTable.generate(D=5, V=3.0, js=2, pstay=0.5)

    def run():
        return [ckm_frequency(df, dims, ptable=pt) for dims in tables]

    t0 = time.perf_counter()
    res = run()
    s = time.perf_counter() - t0
    # baseline: inner-cell counts by bincount and one take per table
    codes = {k: df[k].astype(int).to_numpy() for k in sizes}
    t0 = time.perf_counter()
    for dims in tables:
        flat = np.ravel_multi_index([codes[d] for d in dims], [sizes[d] for d in dims])
        f = np.bincount(flat, minlength=int(np.prod([sizes[d] for d in dims])))
        _ = np.take(rng.integers(-5, 6, 64), np.minimum(f, 63))
    base = time.perf_counter() - t0
    # the (a, b) margin of table 1 and the inner cells of table 4 are the same cells
    f1 = res[0].frame().query("d == 'Total'").set_index(["a", "b"])["perturbed"]
    f4 = res[3].frame(totals=False).set_index(["a", "b"])["perturbed"]
    same = bool((f1.loc[f4.index] == f4).all())
    emit(case="ckm_5tables", n=n_records, n_records=n_records, n_tables=len(tables),
         n_cells=[r.n_cells for r in res], max_cells=max(r.n_cells for r in res),
         n_perturbed=sum(r.n_perturbed for r in res), max_abs_perturbation=max(r.max_abs_perturbation for r in res),
         shared_cells_same_noise=same, n_broken_relations=sum(r.additivity()["n_broken"] for r in res),
         seconds=s, peak_mb=round(peak_mb(run), 2), baseline_seconds=base)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    if args.n and args.n >= 100_000:  # the large hierarchical table only
        for mean in (60.0, 15.0):
            case_large(*((4, 7) if args.n >= 1_000_000 else (3, 5)), mean=mean)
        return
    if args.n == -1:  # the sparse 4-D table (mean 15), hypercube and an exact audit, full size
        case_large_exact(4, 7, 15.0)
        return
    if args.n == -2:  # the comparison of gauss, hypercube and optimal alone
        case_compare(quick=args.quick)
        return
    if args.n:
        case_2d(args.n, time_limit=120.0, heuristic=args.n <= 100)
        return
    if args.quick:
        for size in (20, 40):
            case_2d(size, time_limit=20.0)
        case_hier(3, 6, time_limit=20.0)
        case_3d(6, time_limit=20.0)
        case_audit(40, 200)
        case_large(3, 5)
        case_compare(quick=True)
        case_rounding(60, 5)
        case_ckm(100_000)
        return
    for size in (20, 40, 100, 200):
        case_2d(size, time_limit=300.0 if size < 200 else 120.0, heuristic=size <= 100)
    case_hier(4, 10, time_limit=120.0)
    case_3d(6, time_limit=120.0)
    case_audit(100, 1000)
    case_large(4, 7)
    case_large(4, 7, mean=15.0)
    case_compare(quick=False)
    case_large_exact(4, 7, 15.0)
    case_rounding(200, 5)
    case_ckm(1_000_000)


if __name__ == "__main__":
    main()
