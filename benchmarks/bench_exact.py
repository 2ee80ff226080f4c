"""Benchmark: exact disclosure analysis of tables (counting, Markov bases, sampler, posterior).

Cases (one JSON line each):

* ``count_2way`` — number of R x C tables with random margins (multinomial table of the given
  total), exact row DP under a time limit (``count`` as a string, or ``timeout``). Baseline: the
  dense numpy dynamic programme :func:`count_bounded` on the same margins where its box is small.
* ``count_3way`` — I x J x K tables with the three 2-way margins of a random table.
* ``count_rounded_seed`` — the seed's base-3 controlled-rounded table (1,025,908,683).
* ``markov_basis`` — 4ti2 Markov bases of the no-three-way-interaction model (``moves``,
  seconds, no cache). Baseline: a lattice basis of the same model (numpy SVD null space), which
  is the start of the computation but does not connect the fibre.
* ``sampler_10x10`` — effective samples per second of the uniform Metropolis-Hastings walk on a
  10 x 10 table with the 2,025 basic moves. Baseline: drawing the same number of random move
  indices and signs with numpy.
* ``posterior_seed_example`` — the posterior of the seed's cyclic-perturbation example.
  Baseline: brute force, simulating every coin-outcome sequence for every candidate table.
* ``frontier_count`` — exact counts at the frontier (``count_tables_exact``, the method that
  ran; wall ``seconds``, ``cpu_seconds`` from ``time.process_time`` and the 1-minute load
  average, since the machine is shared) beside the Barvinok algorithm (``islpy-barvinok``, the algorithm LattE implements; run
  in a child process so that it can be stopped at its time limit; skipped with a message when
  not installed). Margins: the Diaconis-Gangolli hair/eye margins, and the row and column
  sums of a multinomial table with equal cell probabilities drawn with
  ``numpy.random.default_rng(0)`` (``random_table(shape, total, seed=0)``; the margins are
  printed with each case). ``baseline_seconds`` and ``baseline_cpu_seconds`` are Barvinok's
  wall and CPU time when it finishes. ``--frontier 5x5_total_300,6x6_total_300`` runs only the
  named cases of this kind and stops.
* ``count_prediction`` — the accuracy of the cost prediction that ``count_tables_exact`` checks
  against ``time_limit`` and ``max_memory_gb`` before a count starts
  (:func:`sdckit.tables.count.predict_count_cost`): per case and method, ``predicted_cpu_seconds``
  beside the measured ``cpu_seconds`` (``time.process_time``), their ``ratio`` (actual /
  predicted), ``predicted_memory_gb`` beside ``peak_mb`` (tracemalloc for the row DP; the
  compiled methods' arrays are numpy, so tracemalloc sees them too) and the load average.
  Baseline: the time of the prediction itself (``baseline_seconds``), which is what a refused
  count costs. ``--prediction`` runs only these cases.
* ``sis_20x20`` — sequential importance sampling of the 20 x 20 table at total 2,000 (same
  seeded margins): estimate, standard error, ESS, seconds. Baseline: the uniform-column
  proposal with the same number of samples (its ESS shows why the default proposal is used).
"""

from __future__ import annotations

import itertools
import shutil
import time

import numpy as np
from _common import emit, parse_args, peak_mb, timed

from sdckit.tables.count import (
    CountTimeout,
    FibreTooLarge,
    count_bounded,
    count_rounded,
    count_tables,
    count_tables_3way,
    count_tables_exact,
)
from sdckit.tables.cyclic import shift_cycles
from sdckit.tables.markov import design_matrix, markov_basis
from sdckit.tables.posterior import perturbation_posterior
from sdckit.tables.sampler import FibreSampler
from sdckit.tables.sis import sis_count

SEED_PERTURBED = np.array([[16, 0, 2, 2], [21, 11, 9, 14], [2, 11, 11, 1], [11, 13, 8, 3]])


def random_table(shape, total: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return rng.multinomial(total, np.full(n, 1 / n)).reshape(shape)


def bench_count_2way(n: int, total: int, limit: float) -> None:
    t = random_table((n, n), total) if total != 135 or n != 4 else np.array(
        [[15, 1, 3, 1], [20, 10, 10, 15], [3, 10, 10, 2], [12, 14, 7, 2]])
    rows, cols = t.sum(1), t.sum(0)
    t0 = time.perf_counter()
    try:
        count = count_tables(rows, cols, time_limit=limit)
        seconds, status = time.perf_counter() - t0, "exact"
        peak = peak_mb(lambda: count_tables(rows, cols)) if seconds < 5 else None
    except CountTimeout:
        count, seconds, status, peak = None, time.perf_counter() - t0, "timeout", None
    base = None
    box = np.prod(np.minimum.outer(rows, cols).sum(0)[:-1] + 1.0) * (n - 1)
    if box < 3e5:
        up = np.minimum.outer(rows, cols)
        base, bcount = timed(lambda: count_bounded(np.zeros_like(up), up, (rows, rows), (cols, cols)), 1)
        assert count is None or bcount == count
    emit(case="count_2way", n=n, shape=[n, n], total=int(total), rows=rows.tolist(), cols=cols.tolist(),
         seconds=seconds, peak_mb=peak, baseline_seconds=base, status=status, time_limit=limit,
         count=None if count is None else str(count), digits=None if count is None else len(str(count)))


def bench_count_3way(shape, total: int, limit: float) -> None:
    t = random_table(shape, total, seed=1)
    t0 = time.perf_counter()
    try:
        count, status = count_tables_3way(t.sum(2), t.sum(1), t.sum(0), time_limit=limit), "exact"
    except CountTimeout:
        count, status = None, "timeout"
    emit(case="count_3way", n=int(np.prod(shape)), shape=list(shape), total=total, seconds=time.perf_counter() - t0,
         peak_mb=None, baseline_seconds=None, status=status, time_limit=limit,
         count=None if count is None else str(count))


def bench_count_rounded() -> None:
    r = np.array([[15, 0, 3, 0, 18], [21, 9, 12, 15, 57], [3, 9, 9, 3, 24], [12, 15, 6, 3, 36], [51, 33, 30, 21, 135]])
    seconds, count = timed(lambda: count_rounded(r, 3), 3)
    emit(case="count_rounded_seed", n=16, seconds=seconds, peak_mb=peak_mb(lambda: count_rounded(r, 3)),
         baseline_seconds=None, count=count, seed_count=1_025_908_683, matches_seed=count == 1_025_908_683)


def bench_markov(shape) -> None:
    if not (shutil.which("4ti2-markov") or shutil.which("markov")):
        emit(case="markov_basis", shape=list(shape), skipped="4ti2-markov (Debian package 4ti2) is not installed")
        return
    seconds, moves = timed(lambda: markov_basis(shape, cache=False), 1)
    A = design_matrix(shape, [(0, 1), (0, 2), (1, 2)])
    from scipy.linalg import null_space
    base, lattice = timed(lambda: null_space(A.astype(float)), 3)
    emit(case="markov_basis", n=int(np.prod(shape)), shape=list(shape), seconds=seconds, peak_mb=None,
         baseline_seconds=base, moves=int(len(moves)), lattice_dimension=int(lattice.shape[1]))


def bench_sampler(n_samples: int) -> None:
    t = random_table((10, 10), 500, seed=2)
    sampler = FibreSampler(n_samples=n_samples, thin=20, burn_in=5_000)
    sampler.sample(t[:3, :3], rng=0)  # compile the kernel
    t0 = time.perf_counter()
    res = sampler.sample(t, rng=1)
    seconds = time.perf_counter() - t0
    steps = 5_000 + n_samples * 20

    def baseline():
        g = np.random.default_rng(0)
        return g.integers(0, 2025, steps), g.random(steps), g.random(steps)

    base, _ = timed(baseline, 3)
    emit(case="sampler_10x10", n=n_samples, total=500, steps=steps, seconds=seconds,
         peak_mb=peak_mb(lambda: FibreSampler(n_samples=min(n_samples, 2000), thin=20).sample(t, rng=1)),
         baseline_seconds=base, acceptance_rate=round(res.acceptance_rate, 4), ess_min=round(res.ess_min, 1),
         ess_median=round(float(np.median(res.ess)), 1), ess_per_second=round(res.ess_min / seconds, 1),
         steps_per_second=round(steps / seconds))


def bench_posterior() -> None:
    cyc = shift_cycles(4, 4)
    seconds, post = timed(lambda: perturbation_posterior(SEED_PERTURBED, cyc, 0.25, 0.25), 3)

    def brute():
        cands = {}
        for e in itertools.product(range(-2, 3), repeat=4):
            t = SEED_PERTURBED - np.tensordot(np.array(e), cyc, axes=1)
            if (t >= 0).all():
                cands[t.tobytes()] = t
        lik = []
        for t in cands.values():
            total = 0.0
            for outcome in itertools.product((1, -1, 0), repeat=4):
                s, p = t.copy(), 1.0
                for o, c in zip(outcome, cyc):
                    p *= 0.25 if o else 0.5
                    if o and (s + o * c >= 0).all():
                        s = s + o * c
                total += p * np.array_equal(s, SEED_PERTURBED)
            lik.append(total)
        return np.array(lik)

    base, lik = timed(brute, 1)
    emit(case="posterior_seed_example", n=16, seconds=seconds,
         peak_mb=peak_mb(lambda: perturbation_posterior(SEED_PERTURBED, cyc, 0.25, 0.25)), baseline_seconds=base,
         alpha=0.25, beta=0.25, n_candidates=post.n_candidates, brute_force_candidates=int((lik > 0).sum()),
         cell_1_2=[round(float(p), 4) for p in post.cell((0, 1))],
         cell_1_4=[round(float(p), 4) for p in post.cell((0, 3))],
         cell_3_4=[round(float(p), 4) for p in post.cell((2, 3))],
         cell_4_4=[round(float(p), 4) for p in post.cell((3, 3))], mode_violations=len(post.mode_violations()))


HAIR_EYE = ([108, 286, 71, 127], [220, 215, 93, 64])  # Diaconis & Gangolli (1995)


def _barvinok_child(rows, cols, queue) -> None:
    import re

    import islpy as isl

    R, C = len(rows), len(cols)
    names = [f"x{i}_{j}" for i in range(R) for j in range(C)]
    cons = [f"{v} >= 0" for v in names]
    cons += [" + ".join(f"x{i}_{j}" for j in range(C)) + f" = {rows[i]}" for i in range(R)]
    cons += [" + ".join(f"x{i}_{j}" for i in range(R)) + f" = {cols[j]}" for j in range(C)]
    t0, c0 = time.perf_counter(), time.process_time()
    card = isl.BasicSet("{ [" + ", ".join(names) + "] : " + " and ".join(cons) + " }").card()
    queue.put((time.perf_counter() - t0, time.process_time() - c0,
               int(re.search(r"\{\s*(\d+)\s*\}", str(card)).group(1))))


def barvinok(rows, cols, limit: float):
    """(wall seconds, CPU seconds, count) from islpy-barvinok, (None, None, reason) when absent or
    over ``limit`` seconds (wall)."""
    import importlib.util
    import multiprocessing as mp

    if importlib.util.find_spec("islpy") is None:
        return None, None, "islpy-barvinok is not installed (pip install islpy-barvinok)"
    queue = mp.get_context("fork").Queue()
    proc = mp.get_context("fork").Process(target=_barvinok_child, args=(list(rows), list(cols), queue))
    proc.start()
    proc.join(limit)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None, None, f"did not finish within {limit} s"
    if queue.empty():
        return None, None, "failed"
    return queue.get()


def bench_frontier(case: str, rows, cols, barvinok_limit: float) -> None:
    """sdckit's exact count (wall and CPU seconds, the method that ran, the load average of
    the shared machine) and Barvinok's in the same run."""
    import os
    import resource

    rows, cols = [int(x) for x in rows], [int(x) for x in cols]
    for m in ("kostka", "ie-mitm"):  # load the compiled kernels
        count_tables_exact([3, 4, 2, 5, 1], [5, 5, 3, 2], method=m)
    load = os.getloadavg()[0]
    c0 = time.process_time()
    try:
        res = count_tables_exact(rows, cols)
        count, method, seconds, status = str(res.count), res.method, res.seconds, "exact"
    except (FibreTooLarge, CountTimeout) as exc:
        count, method, seconds, status = None, None, None, f"refused: {exc}"
    cpu = time.process_time() - c0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # peak resident set of the process, MB
    b_seconds, b_cpu, b_count = barvinok(rows, cols, barvinok_limit)
    emit(case="frontier_count", name=case, n=len(rows) * len(cols), shape=[len(rows), len(cols)], total=sum(rows),
         rows=rows, cols=cols, seconds=seconds, cpu_seconds=cpu if count else None, peak_mb=None,
         peak_rss_mb=round(rss, 1), load_average=round(load, 2), method=method, status=status, count=count,
         baseline="barvinok", baseline_seconds=b_seconds, baseline_cpu_seconds=b_cpu,
         barvinok=(b_count if b_seconds is None else ("agrees" if str(b_count) == count else f"DISAGREES: {b_count}")))


def bench_sis(n_samples: int) -> None:
    t = random_table((20, 20), 2000, seed=0)
    rows, cols = t.sum(1), t.sum(0)
    sis_count([2, 3], [4, 1], n_samples=2, rng=0)  # load the compiled kernel
    res = sis_count(rows, cols, n_samples=n_samples, rng=1)
    base = sis_count(rows, cols, n_samples=n_samples, proposal="uniform", rng=1)
    d = res.to_dict()
    emit(case="sis_20x20", n=400, total=2000, rows=rows.tolist(), cols=cols.tolist(), n_samples=n_samples,
         seconds=res.seconds, peak_mb=None, estimate=d["estimate"], std_error=d["std_error"],
         log10_estimate=d["log10_estimate"], relative_std_error=round(10 ** (res.log10_std_error - res.log10_estimate), 5),
         ess=d["ess"], cv2=d["cv2"], baseline="uniform-column proposal", baseline_seconds=base.seconds,
         baseline_ess=round(base.ess, 2), baseline_log10_estimate=round(base.log10_estimate, 4))


def bench_prediction(quick: bool) -> None:
    import os

    from sdckit.tables import count_dp, count_ie
    from sdckit.tables.count import predict_count_cost, row_dp_count

    run = {"kostka": lambda r, c: count_dp.kostka_count(r, c), "ie-mitm": count_ie.ie_mitm_count,
           "row-dp": lambda r, c: row_dp_count(r, c, time_limit=120)}
    cases = [((4, 4), 300, ("kostka", "ie-mitm")), ((5, 5), 100, ("kostka",)),
             ((6, 6), 60, ("kostka", "row-dp")), ((8, 8), 40, ("kostka", "row-dp")), ((10, 4), 100, ("kostka", "row-dp")),
             ((5, 5), 200, ("kostka",)), ((7, 7), 100, ("kostka",)), ((10, 10), 60, ("kostka",))]
    if not quick:
        cases += [((4, 4), 300, ("row-dp",)), ((5, 5), 100, ("row-dp",)), ((10, 4), 100, ("ie-mitm",)),
                  ((7, 7), 50, ("row-dp",)), ((6, 6), 150, ("kostka",)),
                  ((8, 8), 70, ("kostka",)),
                  ((10, 10), 80, ("kostka",)), ((10, 10), 100, ("kostka",))]
    count_dp.kostka_count([3, 3, 3], [3, 3, 3])  # load the compiled kernels
    count_ie.ie_mitm_count([3, 3, 3], [3, 3, 3])
    for shape, total, methods in cases:
        t = random_table(shape, total, seed=0)
        r, c = t.sum(1).tolist(), t.sum(0).tolist()
        b0 = time.process_time()
        cost = predict_count_cost(r, c)
        pred_cpu = time.process_time() - b0
        for m in methods:
            sec, gb = cost[m]
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                run[m](r, c)
                status = "exact"
            except CountTimeout:
                status = "timeout"
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            peak = peak_mb(lambda: run[m](r, c)) if m == "row-dp" and cpu < 5 else None
            emit(case="count_prediction", method=m, n=int(np.prod(shape)), shape=list(shape), total=total,
                 status=status, seconds=wall, cpu_seconds=round(cpu, 4), predicted_cpu_seconds=round(sec, 4),
                 ratio=round(cpu / sec, 3) if sec > 0 else None, predicted_memory_gb=round(gb, 6), peak_mb=peak,
                 baseline_seconds=round(pred_cpu, 5), load=round(os.getloadavg()[0], 2))


def main() -> None:
    import sys

    if "--prediction" in sys.argv:
        sys.argv.remove("--prediction")
        args = parse_args(__doc__)
        bench_prediction(args.quick)
        return

    only = None  # --frontier NAME[,NAME...]: only these frontier_count cases (e.g. 5x5_total_300)
    if "--frontier" in sys.argv:
        i = sys.argv.index("--frontier")
        only = set(sys.argv[i + 1].split(","))
        del sys.argv[i:i + 2]
    args = parse_args(__doc__)
    frontier = [("hair_eye", *HAIR_EYE)]
    sizes = [(5, 100)] if args.quick and not only else [(5, 100), (5, 200), (5, 300), (6, 100), (6, 200), (6, 300),
                                                        (8, 100)]
    for n, total in sizes:
        t = random_table((n, n), total, seed=0)
        frontier.append((f"{n}x{n}_total_{total}", t.sum(1), t.sum(0)))
    for name, rows, cols in frontier:
        if only is None or name in only:
            bench_frontier(name, rows, cols, 30.0 if args.quick else 60.0)
    if only is not None:
        return
    bench_sis(500 if args.quick else 2000)
    bench_prediction(args.quick)
    if args.quick:
        counts = [(4, 135, 20), (6, 60, 10), (8, 40, 10)]
        three = [((3, 3, 3), 60), ((4, 3, 3), 60)]
        shapes = [(3, 3, 3), (4, 3, 3), (5, 3, 3)]
        n_samples = 5_000
    else:
        counts = [(4, 135, 60), (4, 200, 60), (6, 60, 60), (6, 100, 60), (8, 64, 60), (8, 100, 60)]
        three = [((3, 3, 3), 60), ((3, 3, 3), 100), ((3, 3, 3), 200), ((4, 3, 3), 100), ((4, 4, 4), 100),
                 ((5, 4, 3), 100)]
        shapes = [(3, 3, 3), (4, 3, 3), (5, 3, 3), (3, 3, 6)]
        n_samples = 20_000
    if args.n:
        counts = [(args.n, 100, 60)]
    for n, total, limit in counts:
        bench_count_2way(n, total, limit)
    if args.n:
        return
    bench_count_rounded()
    for shape, total in three:
        bench_count_3way(shape, total, 30.0)
    for shape in shapes:
        bench_markov(shape)
    bench_sampler(n_samples)
    bench_posterior()


if __name__ == "__main__":
    main()
