"""Speed of sequential CART synthesis (sdckit.synth) on large files.

Run from the project root:  .venv/bin/python benchmarks/bench_synthesis.py [--quick] [--n N] [--jobs J]

Data (seeded generator, the same for every run): n records of 20 mixed variables tied to each
other: region (12 categories), sex, age (0-95, integer), marital status (5, single below 18),
education (7) and health (5) from age, income (lognormal in education and age; the special
code -8 below age 16, synthesised as a category of its own), hours, height and weight (numeric,
one decimal), and ten categorical variables with 3 to 30 categories, the odd ones tied to
education. Every variable is synthesised by CART (the first sampled) in the data's order, with
synthpop's defaults (``minbucket = 5``, ``cp = 1e-8``).

One JSON line per size: ``seconds`` (wall: fit + draw + building the output frame),
``fit_seconds``, ``draw_seconds``, ``cpu_seconds`` (this process, all threads), ``peak_mb``
(resident high-water mark of the process after the synthesis: the input frame included),
``jobs`` (threads fitting variables side by side: the file does not depend on it),
``load_1min`` before and after (the machine is shared: wall times only compare within one
run), and ``baseline_seconds``: numpy drawing every column independently from its marginal
(one ``integers`` draw and one ``take`` of its codes per column), the simplest synthesis.
Quality: ``S_pMSE_logit`` (synthpop's logit propensity model with every two-way interaction,
``maxorder = 1``, of sex, age, marital, edu, health, income and c1, on random samples of 50,000
original and 50,000 synthetic records), the largest one-way table ``S_pMSE`` over the variables
(all records), and the same two figures for the numpy baseline, whose one-way tables are right
but whose joint distribution is not.
"""

from __future__ import annotations

import os
import resource
import sys
import time

import numpy as np
import pandas as pd

from _common import emit, parse_args  # noqa: E402

from sdckit.synth import Synthesiser, propensity_utility, table_utility  # noqa: E402

SIZES = (1_000_000,)
#: the variables of the propensity model with every two-way interaction (about 200 parameters)
PAIRS = ["sex", "age", "marital", "edu", "health", "income", "c1"]
QUICK = (20_000,)


def make(n: int, seed: int = 20261126) -> pd.DataFrame:
    """The benchmark's file: 20 mixed variables tied together (module docstring)."""
    rng = np.random.default_rng(seed)
    d = {}
    d["region"] = np.char.add("R", rng.integers(0, 12, n).astype(str))
    d["sex"] = rng.integers(1, 3, n)
    age = np.clip(rng.normal(40, 18, n), 0, 95).round()
    d["age"] = age
    d["marital"] = np.where(age < 18, 1, rng.integers(1, 6, n))
    edu = np.clip((age / 20 + rng.normal(0, 1, n)).round(), 0, 6).astype(int)
    d["edu"] = edu
    d["health"] = np.clip((age / 30 + rng.normal(0, 1, n)).round(), 0, 4).astype(int) + 1
    inc = np.exp(7 + 0.2 * edu + 0.01 * age + rng.normal(0, 0.6, n)).round(0)
    inc[age < 16] = -8
    d["income"] = inc
    d["hours"] = np.clip(rng.normal(35, 10, n) + 2 * d["sex"], 0, 80).round()
    d["height"] = (155 + 12 * (d["sex"] - 1) + rng.normal(0, 7, n)).round(1)
    d["weight"] = (d["height"] - 100 + rng.normal(0, 10, n)).round(1)
    for j, k in enumerate((3, 4, 5, 6, 8, 10, 15, 20, 25, 30)):
        d[f"c{j}"] = np.char.add("L", ((rng.integers(0, k, n) + (edu if j % 2 else 0)) % k).astype(str))
    df = pd.DataFrame(d)
    categorical = ["sex", "marital", "edu", "health"]
    return df, categorical


def baseline(df: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Every column drawn independently from its marginal: one ``integers`` draw and one
    ``take`` of the column's codes each."""
    n = len(df)
    out = {}
    for c in df.columns:
        codes, uniques = pd.factorize(df[c])
        out[c] = pd.Series(uniques.take(codes.take(rng.integers(0, n, n))), name=c)
    return pd.DataFrame(out)


def quality(orig: pd.DataFrame, syn: pd.DataFrame, categorical: list, rng: np.random.Generator) -> dict:
    m = min(50_000, len(orig))
    a = orig.iloc[rng.choice(len(orig), m, replace=False)].reset_index(drop=True)
    b = syn.iloc[rng.choice(len(syn), m, replace=False)].reset_index(drop=True)
    u = propensity_utility(a, b, method="logit", maxorder=1, variables=PAIRS, cont_na={"income": [-8]},
                           categorical=categorical)
    one_way = max(table_utility(orig, syn, [c], cont_na={"income": [-8]}, categorical=categorical).measures["S_pMSE"]
                  for c in orig.columns)
    return {"S_pMSE_logit": u.S_pMSE, "max_one_way_S_pMSE": one_way}


def main() -> None:
    jobs = 2
    if "--jobs" in sys.argv:
        i = sys.argv.index("--jobs")
        jobs = int(sys.argv[i + 1])
        del sys.argv[i:i + 2]
    args = parse_args(__doc__.splitlines()[0])
    sizes = (args.n,) if args.n else (QUICK if args.quick else SIZES)
    for n in sizes:
        df, categorical = make(n)
        load0 = os.getloadavg()[0]
        c0 = time.process_time()
        t0 = time.perf_counter()
        fitted = Synthesiser(missing_codes={"income": [-8]}, categorical=tuple(categorical)).fit(df, n_jobs=jobs)
        t1 = time.perf_counter()
        draw = fitted.draw(rng=2)
        out = draw.frame(df)
        t2 = time.perf_counter()
        cpu = time.process_time() - c0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # before the baseline runs
        tb = time.perf_counter()
        base = baseline(df, np.random.default_rng(1))
        base_s = time.perf_counter() - tb
        q = quality(df, out, categorical, np.random.default_rng(3))
        qb = quality(df, base, categorical, np.random.default_rng(3))
        emit(case="cart_synthesis", n=n, variables=df.shape[1], seconds=t2 - t0, fit_seconds=t1 - t0,
             draw_seconds=t2 - t1, cpu_seconds=cpu,
             peak_mb=peak, jobs=jobs,
             load_1min=round(load0, 2), load_1min_after=round(os.getloadavg()[0], 2),
             baseline_seconds=base_s, **q, baseline_S_pMSE_logit=qb["S_pMSE_logit"],
             baseline_max_one_way_S_pMSE=qb["max_one_way_S_pMSE"])


if __name__ == "__main__":
    main()
