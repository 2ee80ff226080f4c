"""Differentially private tables benchmark: exact samplers, top-down consistency, intervals.

Cases (one JSON line each):

* ``dp_table``: a frequency table of three geography levels (the nation, 20 states, 50
  counties each) by four flat dimensions (2, 7, 5 and 6 categories, each with its total):
  1,021 x 3 x 8 x 6 x 7 = 1,029,168 cells, of Poisson counts with gamma means (mean 3 per
  inner cell, many zeros; seeded). Released with ``DiscreteGaussianCounts(rho=0.5)`` (noise sd
  about 6.9 per cell; the nation's total invariant): every cell noised by the exact sampler,
  made consistent and non-negative top-down, intervals calibrated by 4 simulated runs, the
  public CSV (codes, value, lower, upper, status) and the report page written. ``seconds``
  and ``cpu_seconds`` cover exactly that (apply + write); the table's construction is
  ``build_seconds``. Quality: the independent check of every hierarchy relation
  (``relations``, ``broken``), ``negative`` cells, ``invariants_broken``, the share of cells
  whose true value lies in the stated 90% interval (``coverage``, target 0.90 +/- 0.02) and
  the simulation's own figure (``simulated_coverage``), the mean absolute error of the noisy
  cells and of the published ones. ``baseline_seconds``: numpy's float Gaussian for every
  cell, rounded and clipped at zero (no exactness, no consistency) and written the same way.
* ``sampler_gaussian`` / ``sampler_laplace``: 10^6 exact draws (sigma^2 = 48; scale 4), with
  numpy's ``normal`` / ``laplace`` for 10^6 floats as the baseline.
* ``topdown_only``: the post-processing of one noisy table, alone.

Run: ``python benchmarks/bench_dp.py [--quick] [--n N]`` (``--n``: about N cells, by the
number of counties per state). The machine's load average is printed with every line
(``load_1min``): timings on a shared machine are only comparable within one run.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import emit, parse_args

from sdckit.dp.mechanisms import DiscreteGaussianCounts
from sdckit.dp.postprocess import TopDownLayout, topdown
from sdckit.dp.sampling import discrete_gaussian, discrete_laplace
from sdckit.dp.synthetic import synthetic_counts
from sdckit.io.atomic import atomic_write_text

CATEGORIES = (2, 7, 5, 6)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _fanout(n_cells: int | None, quick: bool) -> tuple[int, int]:
    if quick:
        return (5, 10)
    if n_cells is None:
        return (20, 50)
    per_geo = int(np.prod([c + 1 for c in CATEGORIES]))
    counties = max(1, round((n_cells / per_geo - 21) / 20))
    return (20, counties)


def _write(res, folder: Path) -> None:
    atomic_write_text(folder / "published.csv", res.frame().to_csv(index=False))
    atomic_write_text(folder / "report.html", "<!doctype html><html><body>" + res.report_html() + "</body></html>")


def bench_table(fanout: tuple[int, int], rho: float, n_sim: int) -> None:
    t0 = time.perf_counter()
    table = synthetic_counts(fanout, CATEGORIES, mean=3.0, rng=20260101)
    build = time.perf_counter() - t0
    method = DiscreteGaussianCounts(rho=rho, invariant_depth=0, n_simulations=n_sim)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # warm the compiled kernels (numba cache) on a tiny table: not part of the timing
        method.apply(synthetic_counts((2, 2), CATEGORIES[:2], rng=1), rng=1)
        w0, c0 = time.perf_counter(), time.process_time()
        res = method.apply(table, rng=987654321)
        w1 = time.perf_counter()
        _write(res, folder)
        seconds, cpu = time.perf_counter() - w0, time.process_time() - c0
        write_seconds = time.perf_counter() - w1
        # baseline: float Gaussian noise of the same sd, rounded, clipped at zero, written
        b0 = time.perf_counter()
        gen = np.random.default_rng(1)
        base = np.maximum(np.rint(table.value + gen.normal(0, res.noise_sd, table.n_cells)), 0).astype(np.int64)
        df = table.to_frame()[list(table.dims)]
        df["value"] = base
        atomic_write_text(folder / "baseline.csv", df.to_csv(index=False))
        baseline = time.perf_counter() - b0
    truth = table.value
    chk = res.check
    emit(case="dp_table", n=table.n_cells, seconds=seconds, cpu_seconds=cpu, build_seconds=build,
         write_seconds=write_seconds, baseline_seconds=baseline,
         peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
         rho=float(res.charge.loss.rho), noise_sd=res.noise_sd, n_simulations=res.calibration.n_simulations,
         relations=chk["relations"], broken=chk["broken"], negative=chk["negative"],
         invariants=chk["invariants"], invariants_broken=chk["invariants_broken"],
         coverage=float(((truth >= res.lower) & (truth <= res.upper)).mean()),
         simulated_coverage=res.calibration.simulated_coverage,
         mean_interval_width=float(np.mean(res.upper - res.lower)),
         mae_noisy=float(np.abs(res.noisy - truth).mean()), mae_published=float(np.abs(res.published - truth).mean()),
         mae_baseline=float(np.abs(base - truth).mean()), load_1min=_load())
    # the post-processing alone, on the same noisy cells
    lay = TopDownLayout.from_hierarchies(table.hierarchies, 0)
    p0, c0 = time.perf_counter(), time.process_time()
    topdown(lay, res.noisy, invariant_totals={0: int(truth[0])})
    emit(case="topdown_only", n=table.n_cells, seconds=time.perf_counter() - p0, cpu_seconds=time.process_time() - c0,
         load_1min=_load())


def bench_samplers(n: int) -> None:
    discrete_gaussian(48, 1, 10, 0)   # compiled kernels from the cache
    discrete_laplace(1, 4, 10, 0)
    for case, draw, base in (("sampler_gaussian", lambda: discrete_gaussian(48, 1, n, 3),
                              lambda: np.random.default_rng(3).normal(0, 48 ** 0.5, n)),
                             ("sampler_laplace", lambda: discrete_laplace(1, 4, n, 3),
                              lambda: np.random.default_rng(3).laplace(0, 4, n))):
        w0, c0 = time.perf_counter(), time.process_time()
        x = draw()
        seconds, cpu = time.perf_counter() - w0, time.process_time() - c0
        b0 = time.perf_counter()
        base()
        emit(case=case, n=n, seconds=seconds, cpu_seconds=cpu, baseline_seconds=time.perf_counter() - b0,
             draws_per_second=n / seconds, sample_variance=float(x.var()), load_1min=_load())


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    bench_samplers(100_000 if args.quick else 1_000_000)
    bench_table(_fanout(args.n, args.quick), rho=0.5, n_sim=4)


if __name__ == "__main__":
    main()
