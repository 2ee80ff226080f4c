"""Whole release steps against their cores: where the time around the method goes.

Run from the project root:  .venv/bin/python benchmarks/bench_steps.py [--quick] [--n N]

For every registered step with a generic input (and for reading a CSV file and measuring risk)
one JSON line: ``seconds`` (the whole ``apply``: checks, encoding, evidence, guarantees, the
new Microdata), ``core_seconds`` (the method's array function alone on the same arrays),
``overhead`` = seconds / core_seconds, and the CPU seconds of both (``cpu_seconds``,
``core_cpu_seconds``: on a shared machine wall times swing with the load; CPU times do not).
``baseline_seconds`` is the simplest numpy way to do the core's job where there is one (e.g.
uniforms + a cumulative-probability search for PRAM). Steps that need inputs a generic file
does not have (hierarchies, households, analyses) print a ``skipped`` line saying why.

Sizes: 1,000,000 records (``--quick``: 100,000); microaggregation at most 100,000 (MDAV is
quadratic in the block size, not an overhead question).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

# one BLAS thread, as in compare_sdcmicro.py: on a shared 2-core machine OpenBLAS's threads
# spin on small problems (the PRAM summary's 100 x 100 condition number: 55 ms of CPU with the
# default threads under load, 0.14 ms with one)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import emit  # noqa: E402

from sdckit import Microdata  # noqa: E402
from sdckit.io.files import read_data  # noqa: E402
from sdckit.masking.local_suppression import LocalSuppression, restore_suppressions, suppress_to_k  # noqa: E402
from sdckit.masking.microaggregation import Microaggregation, microaggregate_array  # noqa: E402
from sdckit.masking.noise import Noise, add_noise_array  # noqa: E402
from sdckit.masking.rank_swap import RankSwap, rank_swap_array  # noqa: E402
from sdckit.masking.recode import Recode  # noqa: E402
from sdckit.masking.remove import RemoveVariables  # noqa: E402
from sdckit.pram.apply import pram_codes  # noqa: E402
from sdckit.pram.steps import Pram  # noqa: E402
from sdckit.risk import measure_risk  # noqa: E402
from sdckit.risk.frequencies import frequencies_from_codes  # noqa: E402
from sdckit.risk.individual import individual_risk  # noqa: E402

KEYS = ["sex", "region", "age", "educ"]


def clock(fn, repeat):
    """Best wall and CPU seconds of ``repeat`` calls after one warm-up call; last result."""
    out = fn()
    best_w = best_c = float("inf")
    for _ in range(max(1, repeat)):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        best_w = min(best_w, time.perf_counter() - w)
        best_c = min(best_c, time.process_time() - c)
    return best_w, best_c, out


CASES = ("read_csv_and_encode", "frequencies_individual_risk", "pram_1var", "pram_3var", "noise_additive",
         "rank_swap", "recode_breaks", "recode_top", "remove", "microaggregation_mdav", "local_suppression")
SELECTED: set[str] = set(CASES)


def parse_args(description: str) -> argparse.Namespace:
    """``--quick``, ``--n N``, ``--repeat R`` as in every benchmark, and ``--cases``."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes only (100,000 records)")
    p.add_argument("--n", type=int, default=None, help="run one size only")
    p.add_argument("--repeat", type=int, default=3, help="timing repeats (best is reported)")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of: " + ", ".join(CASES))
    args = p.parse_args()
    unknown = sorted(set(args.cases.split(",")) - set(CASES))
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}: choose among {', '.join(CASES)}")
    SELECTED.clear()
    SELECTED.update(args.cases.split(","))
    return args


def case(name, n, step_fn, core_fn, repeat, baseline_fn=None, **extra):
    if name not in SELECTED:
        return
    sw, sc, _ = clock(step_fn, repeat)
    cw, cc, _ = clock(core_fn, repeat)
    line = {"case": name, "n": n, "seconds": sw, "core_seconds": cw, "overhead": sw / cw if cw else None,
            "cpu_seconds": sc, "core_cpu_seconds": cc, "cpu_overhead": sc / cc if cc else None}
    if baseline_fn is not None:
        line["baseline_seconds"] = clock(baseline_fn, repeat)[0]
    line.update(extra)
    emit(**line)


def make_frame(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({
        "sex": rng.choice(np.array(["f", "m"]), n),
        "region": rng.choice(np.array([f"r{i:02d}" for i in range(20)]), n, p=rng.dirichlet(np.ones(20))),
        "age": rng.integers(0, 100, n),
        "educ": rng.integers(1, 8, n),
        "w": np.round(rng.uniform(50, 150, n), 3),
        "x1": np.round(rng.lognormal(10, 1, n), 2),
        "x2": np.round(rng.normal(50, 10, n), 3),
        "x3": np.round(rng.gamma(2.0, 3.0, n), 3),
        "note": rng.integers(0, 10, n),
    })


def main() -> None:
    args = parse_args(__doc__)
    n = args.n or (100_000 if args.quick else 1_000_000)
    repeat = 1 if args.quick else args.repeat
    rng = np.random.default_rng(20261123)
    df = make_frame(n, rng)

    # reading + encoding a CSV file vs pyarrow's own read
    import pyarrow.csv as pacsv
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.csv"
        if "read_csv_and_encode" in SELECTED:
            df.to_csv(path, index=False)

        def read_and_encode():
            frame, meta = read_data(path)
            return Microdata(frame, meta=meta, key_vars=KEYS, weight="w", numeric_vars=["x1", "x2", "x3"])
        case("read_csv_and_encode", n, read_and_encode, lambda: pacsv.read_csv(path), repeat,
             note="core = pyarrow.csv.read_csv (multi-threaded) on the same file")

    md = Microdata(df, key_vars=KEYS, weight="w", numeric_vars=["x1", "x2", "x3"])
    codes = [md.codes(v) for v in KEYS]
    ncat = [md.n_categories(v) for v in KEYS]
    w = md.weights()

    def freq_core():
        f = frequencies_from_codes(codes, ncat, w)
        return individual_risk(f.fk, f.Fk)
    case("frequencies_individual_risk", n, lambda: measure_risk(md), freq_core, repeat,
         note="step = measure_risk on an encoded Microdata; core = frequencies_from_codes + individual_risk")

    # PRAM: the step vs its draw (pram_codes with the step's own matrices)
    for vars_ in (["region"], ["region", "educ", "age"]):
        if f"pram_{len(vars_)}var" not in SELECTED:
            continue
        step = Pram(variables=vars_, min_diagonal=0.8)
        res = step.apply(md, rng=1)
        mats = [res.matrices[((v,), "all")] for v in vars_]
        vcodes = [md.codes(v) for v in vars_]

        def core(mats=mats, vcodes=vcodes):
            g = np.random.default_rng(1)
            return [pram_codes(c, m, g) for c, m in zip(vcodes, mats)]

        def baseline(mats=mats, vcodes=vcodes):
            g = np.random.default_rng(1)
            out = []
            for c, m in zip(vcodes, mats):
                cum = np.cumsum(np.asarray(m.P.todense() if m.is_sparse else m.P), axis=1)
                u = g.random(c.size)
                out.append((u[:, None] > cum[c]).sum(axis=1) if cum.shape[0] <= 20 else
                           np.array([np.searchsorted(cum[k], x) for k, x in zip(c[:1000], u[:1000])]))
            return out
        case(f"pram_{len(vars_)}var", n, lambda step=step: step.apply(md, rng=1), core, repeat,
             baseline_fn=baseline if len(vars_) == 1 else None, variables=vars_)

    X = df[["x1", "x2", "x3"]].to_numpy(np.float64)
    case("noise_additive", n, lambda: Noise(level=0.1, kind="additive").apply(md, rng=1),
         lambda: add_noise_array(X, 0.1, 1, method="additive"), repeat,
         baseline_fn=lambda: X + np.random.default_rng(1).standard_normal(X.shape) * (np.sqrt(0.1) * X.std(axis=0)))
    case("rank_swap", n, lambda: RankSwap(p=5.0).apply(md, rng=1),
         lambda: rank_swap_array(X, 5.0, 1), repeat, baseline_fn=lambda: np.argsort(X, axis=0))

    breaks, labels = [-1, 17, 29, 44, 64, 120], ["0-17", "18-29", "30-44", "45-64", "65+"]
    ages = df["age"].to_numpy()
    case("recode_breaks", n, lambda: Recode(variable="age", breaks=breaks, labels=labels, closed="right").apply(md),
         lambda: np.asarray(labels, dtype=object)[np.searchsorted(breaks, ages, side="left") - 1], repeat,
         note="core = searchsorted + label take (numpy)")
    top = float(np.quantile(df["x1"], 0.99))
    x1 = df["x1"].to_numpy()
    case("recode_top", n, lambda: Recode(variable="x1", top=top).apply(md),
         lambda: np.minimum(x1, top), repeat, note="core = np.minimum")
    case("remove", n, lambda: RemoveVariables(variables=["note"]).apply(md),
         lambda: df.drop(columns=["note"]), repeat, note="core = DataFrame.drop")

    nm = min(n, 100_000)
    mdm = Microdata(df.iloc[:nm], numeric_vars=["x1", "x2", "x3"])
    Xm = X[:nm]
    case("microaggregation_mdav", nm, lambda: Microaggregation(k=3).apply(mdm, rng=1),
         lambda: microaggregate_array(Xm, 3), repeat=1)

    importance = list(np.argsort(np.argsort(ncat, kind="stable"), kind="stable") + 1)

    def ls_core():
        g = np.random.default_rng(1)
        out, _ = suppress_to_k(codes, ncat, 5, importance, rng=g)
        return restore_suppressions(codes, out, ncat, 5, rng=g, max_checks=200)
    case("local_suppression", n, lambda: LocalSuppression(k=5).apply(md, rng=1), ls_core, repeat=1)

    for name, why in (("record_swap", "needs a household id and a geographic hierarchy"),
                      ("neighbours", "needs analyses to track (a spec-level input)"),
                      ("postmask", "needs a masking spec to optimise after"),
                      ("generalise", "needs generalisation hierarchies (lattice search)")):
        emit(case=name, skipped=why)


if __name__ == "__main__":
    sys.exit(main())
