"""Benchmark: the Dask engine on synthetic census-scale person records.

Synthetic persons (5 integer keys: region 300, age 100, sex 2, marital status 6, education
10 categories; 2 numeric variables: income lognormal, hours normal rounded to whole hours;
weights, multiples of 1/4 between 10 and 200; a person id) are generated as partitioned
Parquet (1,000,000 rows per part, each part from its own seed), then ``protect_with_dask``
runs a release spec on a LocalCluster of single-threaded worker processes (127.0.0.1, memory
limit 4 GB each; ``--workers 1,2`` runs one cluster size after the other on the same data).

Two specs (``--spec``):

* ``dask`` (default): key frequencies f_k / F_k and individual risk (summary), PRAM of age
  and marital status (invariant, min_diagonal 0.8), correlated noise on income and hours
  (level 0.01: noise covariance 1% of the data's, noise sd 10% of each variable's), writing
  the release as partitioned Parquet;
* ``engine``: the spec :mod:`bench_engine` runs with the in-memory engine on the same rows
  (:data:`ENGINE_SPEC`: remove the person id, risk, PRAM of marital status, noise on income, a
  gate on global risk and the PRAM diagonal, writing Parquet), so the two engines can be read
  side by side.

Figures per case: wall seconds of the run, rows per second and per core, CPU seconds of the
client process and of the workers (``ru_utime + ru_stime``), peak resident memory of the client
process and of each worker process (``ru_maxrss``; the data generation runs on another cluster
before), throughput per core. With ``--quick`` (2,000,000 rows) the data are also read into
memory and the in-memory reference path runs on them: ``equal_to_memory_engine`` is true when
the release is identical (bit for bit) and f_k, F_k per record equal the in-memory
frequencies; ``baseline_seconds`` is that in-memory numpy work (frequencies by bincount,
PRAM and noise on one partition) in the same process.

Usage: ``python benchmarks/bench_dask.py --quick``; ``--n 10000000``; with no option the
10M and 100M cases (the 100M case needs about 10 GB of disk and takes long on 2 cores);
``--n 5000000 --workers 1,2 --spec engine`` for the engine comparison; ``--frequencies``
times the risk pass alone (the table kept and measured on the workers against the whole
table brought to the client, alternated on one cluster: ``frequencies_on_workers`` and
``frequencies_whole_table`` lines).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _common import emit

PART_ROWS = 1_000_000
KEYS = {"region": 300, "age": 100, "sex": 2, "marital": 6, "education": 10}

SPEC = """
[input]
path = "{input}"
format = "parquet"

[roles]
key_vars = ["region", "age", "sex", "marital", "education"]
numeric_vars = ["income", "hours"]
weight = "weight"

[run]
seed = 20261123

[[steps]]
method = "pram"
variables = ["age", "marital"]
matrix = {{ type = "invariant" }}
min_diagonal = 0.8

[[steps]]
method = "noise"
variables = ["income", "hours"]
level = 0.01

[gate]
none = "a timing of the engine: the gate is not measured here"

[output]
directory = "{output}"
data = "persons_released.parquet"
keep_order = true
"""


#: the release spec of the engine comparison, run by both engines (bench_engine.py): ``{input}``
#: is a Parquet file for the in-memory engine, a folder of Parquet parts for Dask
ENGINE_SPEC = """
[input]
path = "{input}"
format = "parquet"

[roles]
key_vars = ["region", "age", "sex", "marital", "education"]
numeric_vars = ["income", "hours"]
weight = "weight"

[run]
seed = 20261123

[[steps]]
method = "remove"
variables = ["person_id"]

[[steps]]
method = "pram"
variables = ["marital"]
matrix = {{ type = "invariant" }}
min_diagonal = 0.8

[[steps]]
method = "noise"
variables = ["income"]
level = 0.01

[gate]
max_global_risk = 0.2
min_diagonal = 0.8

[output]
directory = "{output}"
data = "persons_released.parquet"
keep_order = true
overwrite = true
"""

SPECS = {"dask": SPEC, "engine": ENGINE_SPEC}


def make_part(path: str, start: int, stop: int, seed: int) -> int:
    """Rows [start, stop) of the synthetic population, written to one Parquet file."""
    rng = np.random.default_rng([seed, start])
    n = stop - start
    region = rng.integers(1, KEYS["region"] + 1, n).astype(np.int32)
    age = np.minimum(rng.gamma(4.0, 10.0, n).astype(np.int32), 99)
    df = pd.DataFrame({
        "person_id": np.arange(start, stop, dtype=np.int64),
        "region": region,
        "age": age,
        "sex": rng.integers(1, 3, n).astype(np.int8),
        "marital": rng.choice(np.arange(1, 7, dtype=np.int8), n, p=[0.4, 0.35, 0.1, 0.08, 0.05, 0.02]),
        "education": rng.integers(1, 11, n).astype(np.int8),
        "income": rng.lognormal(10.0, 0.8, n),
        "hours": np.round(rng.normal(37.0, 8.0, n)),
        "weight": np.round(rng.uniform(10.0, 200.0, n) * 4) / 4,
    })
    df.to_parquet(path, index=False)
    return n


def generate(folder: Path, n: int, seed: int = 1) -> None:
    """Write ``n`` rows as parts of PART_ROWS rows, in parallel on a throwaway cluster."""
    import dask
    from distributed import Client, LocalCluster

    folder.mkdir(parents=True, exist_ok=True)
    rows = min(PART_ROWS, max(1, n // 4))
    tasks = [dask.delayed(make_part)(str(folder / f"part.{i:05d}.parquet"), a, min(n, a + rows), seed)
             for i, a in enumerate(range(0, n, rows))]
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                      memory_limit="4GB") as cluster, Client(cluster):
        dask.compute(*tasks)


def worker_peaks(client) -> list[float]:
    return [v / 1024 for v in client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss).values()]


def worker_cpu(client) -> list[float]:
    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime
    return list(client.run(cpu).values())


def ensure_data(n: int, work: Path) -> tuple[Path, float | None]:
    data = work / f"persons_{n}"
    if data.exists():
        return data, None
    t = time.perf_counter()
    generate(data, n)
    return data, time.perf_counter() - t


def run_case(n: int, work: Path, *, compare: bool, keep: bool = False, n_workers: int = 2,
             spec_name: str = "dask") -> dict:
    from distributed import Client, LocalCluster

    from sdckit.engine.run import protect_with_dask

    data, gen_seconds = ensure_data(n, work)
    out = work / f"release_{n}_{spec_name}_{n_workers}"
    spec = work / f"release_{n}_{spec_name}_{n_workers}.toml"
    spec.write_text(SPECS[spec_name].format(input=data, output=out))
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                      memory_limit="4GB") as cluster, Client(cluster) as client:
        cpu0, wcpu0 = time.process_time(), sum(worker_cpu(client))
        t = time.perf_counter()
        run = protect_with_dask(spec, scheduler=cluster.scheduler_address, progress=False)
        seconds = time.perf_counter() - t
        client_cpu, workers_cpu = time.process_time() - cpu0, sum(worker_cpu(client)) - wcpu0
        workers = worker_peaks(client)
    client_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    steps = run.public_dict()["steps"]
    pram = next(d for d in steps if "matrices" in d)
    row = {"case": "risk_pram2_noise2_write" if spec_name == "dask" else "engine_spec_dask",
           "n": n, "seconds": seconds, "rows_per_second": n / seconds,
           "rows_per_second_per_core": n / seconds / n_workers, "cpu_seconds": client_cpu + workers_cpu,
           "cpu_seconds_client": client_cpu, "cpu_seconds_workers": workers_cpu,
           "n_partitions": run.n_partitions, "n_workers": run.n_workers, "peak_mb_client": client_peak,
           "peak_mb_workers": max(workers), "peak_mb_each_worker": [round(w, 1) for w in workers],
           "stage_seconds": {k: round(v, 3) for k, v in run.seconds.items()},
           "generate_seconds": gen_seconds, "global_risk": run.risk_before.summary["global_risk"],
           "n_combinations": run.risk_before.summary["n_combinations"],
           "pram_min_diagonal": min(m["min_diagonal"] for m in pram["matrices"].values())}
    if compare:
        row.update(compare_in_memory(data, run))
    else:
        row.update({"equal_to_memory_engine": None, "baseline_seconds": None})
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(out.with_name(out.name + "-internal"), ignore_errors=True)
    return row


def compare_in_memory(data: Path, run) -> dict:
    """The in-memory path on the same data and seed: frequencies and the release."""
    from sdckit.engine.frame import same_values
    from sdckit.engine.masking import run_in_memory
    from sdckit.risk.frequencies import frequencies_from_codes

    df = pd.read_parquet(data).reset_index(drop=True)
    t = time.perf_counter()
    keys = list(KEYS)
    codes = [np.asarray(pd.Categorical(df[k], categories=run.categories[k]).codes) for k in keys]
    freq = frequencies_from_codes(codes, [len(run.categories[k]) for k in keys], df["weight"].to_numpy())
    root = np.random.SeedSequence(run.spec.seed)
    released_mem = run_in_memory(df, run.plans, root.spawn(len(run.plans)))
    baseline = time.perf_counter() - t
    released = pd.read_parquet(run.paths["data"]).reset_index(drop=True)
    same_release = same_values(released, released_mem)
    # the run kept its combination table on the workers (it holds the f_k histogram): its
    # histogram against the in-memory f_k, then the engine's whole table (built again here,
    # outside the timings, by the engine's combination_table) looked up record by record
    from sdckit.engine.frame import read_partitioned
    from sdckit.engine.risk import combination_table
    from sdckit.risk.frequencies import combination_codes

    fv, rec = np.unique(freq.fk, return_counts=True)
    hist_equal = bool(np.array_equal(run.risk_before.fk, fv) and np.array_equal(run.risk_before.table.counts, rec))
    pmd = read_partitioned(data, key_vars=keys, weight="weight",
                           categories={k: list(run.categories[k]) for k in keys})
    table = combination_table(pmd).compute()
    code, _ = combination_codes(codes, [len(run.categories[k]) for k in keys])
    row = table.lookup(code)
    fk_equal = bool(np.array_equal(table.counts[row], freq.fk)) and hist_equal
    Fk_equal = bool(np.array_equal(table.weighted[row], freq.Fk))
    return {"equal_to_memory_engine": bool(same_release and fk_equal and Fk_equal),
            "release_equal": bool(same_release), "fk_equal": fk_equal, "Fk_equal": Fk_equal,
            "fk_histogram_equal": hist_equal, "baseline_seconds": baseline}


def frequencies_case(n: int, work: Path, n_workers: int, repeat: int) -> list[dict]:
    """The risk pass alone, both ways on one cluster, alternated ``repeat`` times (best of each):
    ``on_workers`` (:func:`sdckit.engine.risk.frequency_table`: merged per hash bucket and
    measured on the workers, the client gets figures) and ``whole_table`` (the anchor,
    :func:`sdckit.engine.risk.combination_table`: the merged table brought to the client, the
    risk computed there). ``summary_equal``: the two summaries agree (global risk to 1e-12)."""
    from distributed import Client, LocalCluster

    from sdckit.engine.frame import read_partitioned
    from sdckit.engine.risk import combination_table, frequency_table, risk_from_table

    data, _ = ensure_data(n, work)
    ways = {"on_workers": lambda pmd: risk_from_table(frequency_table(pmd).compute()),
            "whole_table": lambda pmd: risk_from_table(combination_table(pmd).compute())}
    best: dict[str, dict] = {}
    out: dict[str, object] = {}
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                      memory_limit="4GB") as cluster, Client(cluster) as client:
        pmd = read_partitioned(data, key_vars=list(KEYS), weight="weight")
        for _ in range(max(1, repeat)):
            for way, fn in ways.items():
                cpu0, wcpu0 = time.process_time(), sum(worker_cpu(client))
                t = time.perf_counter()
                out[way] = fn(pmd).summary
                row = {"seconds": time.perf_counter() - t, "cpu_seconds_client": time.process_time() - cpu0,
                       "cpu_seconds_workers": sum(worker_cpu(client)) - wcpu0}
                row["cpu_seconds"] = row["cpu_seconds_client"] + row["cpu_seconds_workers"]
                if way not in best or row["cpu_seconds"] < best[way]["cpu_seconds"]:
                    best[way] = row
    a, b = out["on_workers"], out["whole_table"]
    equal = all(a[k] == b[k] for k in a if k not in ("global_risk", "expected_reidentifications")) and \
        abs(a["global_risk"] - b["global_risk"]) <= 1e-12 * abs(b["global_risk"])
    return [{"case": f"frequencies_{way}", "n": n, "n_workers": n_workers, "n_partitions": pmd.npartitions,
             "rows_per_second": n / r["seconds"], **r, "n_combinations": b["n_combinations"],
             "summary_equal": bool(equal), "load1": os.getloadavg()[0]} for way, r in best.items()]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="2,000,000 rows, compared with the in-memory path")
    p.add_argument("--n", type=int, default=None, help="one size")
    p.add_argument("--workers", default="2", help="worker processes of the LocalCluster, e.g. 1,2 (default 2)")
    p.add_argument("--spec", choices=sorted(SPECS), default="dask",
                   help="dask: PRAM of 2 variables and noise on 2; engine: the spec of bench_engine.py")
    p.add_argument("--no-compare", action="store_true", help="skip the in-memory comparison")
    p.add_argument("--work", default=None, help="folder for the generated data (default: a temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the generated data and releases")
    p.add_argument("--frequencies", action="store_true",
                   help="time the risk pass alone, the table kept on the workers against the whole table")
    p.add_argument("--repeat", type=int, default=3, help="alternated repeats of --frequencies (best of each)")
    args = p.parse_args()
    warnings.simplefilter("ignore")
    sizes = [2_000_000] if args.quick else [args.n] if args.n else [10_000_000, 100_000_000]
    workers = [int(w) for w in args.workers.split(",")]
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="sdckit_bench_dask_"))
    try:
        for n in sizes:
            free = shutil.disk_usage(work).free
            if free < n * 120:  # input + release, about 60 bytes per row each
                emit(case="risk_pram2_noise2_write", n=n, skipped=f"only {free / 1e9:.1f} GB free in {work}")
                continue
            for w in workers:
                if args.frequencies:
                    for row in frequencies_case(n, work, w, args.repeat):
                        emit(**row)
                    continue
                emit(**run_case(n, work, compare=n <= 10_000_000 and args.spec == "dask" and not args.no_compare,
                                keep=args.keep, n_workers=w, spec_name=args.spec))
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
