"""Speed of sequential CART synthesis (sdckit.synth) on large files.

Run from the project root:  .venv/bin/python benchmarks/bench_synthesis.py [--quick] [--n N] [--jobs J]
                            .venv/bin/python benchmarks/bench_synthesis.py --dask [--n N] [--check-n M]

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

``--dask``: the ``synthesise`` step of a release spec on the Dask engine
(``sdckit.engine.run.protect_with_dask``, a LocalCluster of 2 single-threaded worker
processes), on ``--n`` records (default 10,000,000; the file is written first as Parquet parts
of 1,000,000 records, part j made by the generator above with seed 20261126 + j), every
variable CART, fitted on a seeded sample of 1,000,000 records (``fit_sample``: the sample fits
the client's memory and the trees' time; at the check size it is every record). Two lines:

* ``dask_equals_memory``: on the first ``--check-n`` records (default 1,000,000) the same spec
  runs in memory (``Release.from_spec(...).run()``: the released frame) and on the Dask engine
  (4 partitions); ``equal`` says whether every released value is the same (floats bit for bit);
  ``seconds`` of each engine;
* ``dask_cart_synthesis``: the whole file on the Dask engine: ``seconds`` (wall, read to
  written release), ``cpu_seconds`` (this process and the workers), ``peak_mb`` (this process)
  and ``worker_peak_mb`` (the largest worker), ``rows_per_second``, the engine's stage seconds,
  and ``baseline_seconds``: numpy's marginal draw (above) of the first 1,000,000 records,
  times the number of parts.

The step measures disclosure with the keys region, sex, marital, edu, health and the target c0
on either engine (``repU``, ``DiSCO``, ``TCAP`` on the second line; the Dask engine computes
them from count tables merged on the workers, drawing the synthetic partitions once more).
``--max-disco P`` and ``--max-repu P`` put those thresholds in the spec's gate (target c0, made
the sensitive variable): the first line then says whether the two engines' gate figures are
equal (``gate_equal``), and both lines give the outcomes (``gate``).
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


DASK_SPEC = """[input]
path = "{input}"
format = "parquet"

[roles]
key_vars = ["region", "sex", "marital", "edu", "health"]
{sensitive}

[run]
seed = 20261127

[[steps]]
method = "synthesise"
variables = {variables}
categorical = ["sex", "marital", "edu", "health"]
missing_codes = {{ income = [-8] }}
utility = "none"
disclosure_targets = ["c0"]
fit_sample = 1000000

[gate]
{gate}

[output]
directory = "{output}"
data = "released.parquet"
keep_order = true
overwrite = true
"""


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _gate(max_disco: float | None, max_repu: float | None) -> tuple[str, str]:
    """The spec's [gate] lines and roles line: the disclosure thresholds asked for (target c0,
    the step's disclosure target, so the step's figures serve the gate), or none."""
    lines = []
    if max_repu is not None:
        lines.append(f"max_repU = {max_repu:g}")
    if max_disco is not None:
        lines.append(f"max_disco = {max_disco:g}")
    if not lines:
        return 'none = "benchmark of the synthesis step\'s speed"', ""
    return "\n".join(lines), 'sensitive = ["c0"]'


def _gate_values(gate) -> dict:
    out = {}
    for g in gate:
        name, value, passed = ((g["name"], g["value"], g["passed"]) if isinstance(g, dict)
                               else (g.name, g.value, g.passed))
        if name in ("max_repU", "max_disco"):
            out[name] = {"passed": bool(passed), **{k: v for k, v in value.items() if k in ("repU", "DiSCO")}}
    return out


def dask_case(n: int, check_n: int, work, max_disco: float | None = None, max_repu: float | None = None) -> None:
    """The ``--dask`` cases (module docstring)."""
    import warnings
    from pathlib import Path

    from sdckit.engine.frame import same_values
    from sdckit.engine.run import protect_with_dask
    from sdckit.release import Release

    warnings.simplefilter("ignore")
    work = Path(work)
    part_rows = 1_000_000
    parts_dir = work / "parts"
    parts_dir.mkdir(parents=True, exist_ok=True)
    n_parts = -(-n // part_rows)
    t = time.perf_counter()
    columns = None
    for j in range(n_parts):
        f = parts_dir / f"part-{j:04d}.parquet"
        df, _ = make(min(part_rows, n - j * part_rows), seed=20261126 + j)
        columns = list(df.columns)
        if not f.exists():
            df.to_parquet(f, index=False)
    del df
    make_seconds = time.perf_counter() - t

    def spec(name: str, data: Path) -> Path:
        p = work / f"{name}.toml"
        gate, sensitive = _gate(max_disco, max_repu)
        p.write_text(DASK_SPEC.format(input=data.as_posix(), output=(work / f"out_{name}").as_posix(),
                                      variables="[" + ", ".join(f'"{c}"' for c in columns) + "]",
                                      gate=gate, sensitive=sensitive))
        return p

    # the equality check on the first check_n records (one part's worth by default)
    check, _ = make(check_n, seed=20261126)
    check_dir = work / "check"     # 4 parts: blocks of the draw cross the partitions' borders
    check_dir.mkdir(exist_ok=True)
    edges = np.linspace(0, check_n, 5).astype(int)
    for j in range(4):
        check.iloc[edges[j]:edges[j + 1]].to_parquet(check_dir / f"part-{j}.parquet", index=False)
    check.to_parquet(work / "check.parquet", index=False)   # the same records as one file, for memory
    del check
    t = time.perf_counter()
    memory_run = Release.from_spec(spec("check_memory", work / "check.parquet")).run()
    memory = memory_run.released.frame.reset_index(drop=True)
    memory_seconds = time.perf_counter() - t
    t = time.perf_counter()
    run = protect_with_dask(spec("check_dask", check_dir), n_workers=2, progress=False)
    dask_seconds = time.perf_counter() - t
    released = pd.read_parquet(run.paths["data"]).reset_index(drop=True)
    gates = {"memory": _gate_values(memory_run.gate), "dask": _gate_values(run.gate)}
    emit(case="dask_equals_memory", n=check_n, equal=bool(same_values(released, memory)),
         dask_partitions=run.n_partitions, memory_seconds=memory_seconds, dask_seconds=dask_seconds,
         gate=gates["dask"], gate_equal=gates["memory"] == gates["dask"],
         dask_disclosure=run.summaries[0].get("disclosure"), load_1min=round(os.getloadavg()[0], 2))
    del memory, released, memory_run

    load0 = os.getloadavg()[0]
    c0, ch0 = time.process_time(), _children_cpu()
    t = time.perf_counter()
    run = protect_with_dask(spec("full", parts_dir), n_workers=2, progress=False)
    seconds = time.perf_counter() - t
    cpu = time.process_time() - c0 + _children_cpu() - ch0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    one, _ = make(min(part_rows, n), seed=20261126)
    tb = time.perf_counter()
    baseline(one, np.random.default_rng(1))
    base_s = (time.perf_counter() - tb) * n / len(one)
    disclosure = (run.summaries[0].get("disclosure") or [{}])[0]
    emit(case="dask_cart_synthesis", n=n, variables=len(columns), workers=run.n_workers,
         partitions=run.n_partitions, records_fitted=run.summaries[0]["records_fitted"], seconds=seconds,
         cpu_seconds=cpu, peak_mb=peak, worker_peak_mb=worker_peak, rows_per_second=n / seconds,
         stage_seconds={k: round(v, 2) for k, v in run.seconds.items()}, make_data_seconds=make_seconds,
         baseline_seconds=base_s, gate=_gate_values(run.gate),
         repU=disclosure.get("identity", {}).get("repU"), DiSCO=disclosure.get("attribute", {}).get("DiSCO"),
         TCAP=disclosure.get("cap", {}).get("TCAP"),
         load_1min=round(load0, 2), load_1min_after=round(os.getloadavg()[0], 2))


def main() -> None:
    if "--dask" in sys.argv:
        import argparse
        import shutil
        import tempfile

        p = argparse.ArgumentParser(description="synthesise on the Dask engine")
        p.add_argument("--dask", action="store_true")
        p.add_argument("--n", type=int, default=10_000_000)
        p.add_argument("--check-n", type=int, default=1_000_000)
        p.add_argument("--work", default=None, help="folder for the generated data (default: a temporary one)")
        p.add_argument("--max-disco", type=float, default=None, help="gate: max_disco (percent; target c0)")
        p.add_argument("--max-repu", type=float, default=None, help="gate: max_repU (percent)")
        a = p.parse_args()
        work = a.work or tempfile.mkdtemp(prefix="sdckit_bench_synthesis_")
        try:
            dask_case(a.n, a.check_n, work, a.max_disco, a.max_repu)
        finally:
            if not a.work:
                shutil.rmtree(work, ignore_errors=True)
        return
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
