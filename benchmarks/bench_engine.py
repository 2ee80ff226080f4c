"""Benchmark: the in-memory engine (``sdckit protect``) beside the Dask engine on the same spec.

The data are :mod:`bench_dask`'s synthetic persons (5 integer keys, income, hours, weight,
person id; 1,000,000 rows per Parquet part), written once as Parquet parts (for Dask) and as
one Parquet file with the same rows (for the in-memory engine). Both engines run
:data:`bench_dask.ENGINE_SPEC`: remove the person id, measure the risk, PRAM of marital status,
noise on income, a gate (global risk, the PRAM matrix's smallest diagonal), write the release
as Parquet with both reports.

Cases (one JSON line each):

* ``memory_engine``: ``sdckit.release.protect(spec)`` in a fresh process, timed around the
  call (reading, steps, gate, reports, writing; the report and step modules the call imports
  are counted, the interpreter start and ``import sdckit.release`` are not); ``seconds`` wall,
  ``cpu_seconds`` of the process, ``peak_mb`` its peak resident memory, ``stage_seconds``
  (wall: read = reading the spec's input into a Release, run = steps and gate, write_data =
  the released data file, reports_and_catalogue = the rest of writing: reports, certificate,
  catalogue files, switching the folders in; other = loading the spec and checking the
  output folders);
* ``dask_1_worker``, ``dask_2_workers``: ``protect_with_dask`` on a LocalCluster of that many
  single-threaded workers (the cluster starts before the clock, as in bench_dask.py);
  ``cpu_seconds`` = client process + workers;
* ``memory_vs_dask_1_worker``: the ratio of the wall times (the target: at most 2).

Every line has ``rows_per_second``. ``--quick``: 200,000 rows; ``--n N`` one size (default
5,000,000); ``--workers 1,2``. The machine is shared: read the ratio from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pyarrow.parquet as pq
from _common import ROOT, emit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dask import ENGINE_SPEC, ensure_data, run_case  # noqa: E402

#: run in a fresh interpreter: the in-memory engine on one spec, timed around protect()
MEMORY_RUN = r"""
import json, resource, sys, time
import sdckit.release as release
spec, out = sys.argv[1], sys.argv[2]
stages = {}
def timed(name, fn):  # wall seconds inside fn, added to stages[name] (the call itself unchanged)
    def inner(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            stages[name] = stages.get(name, 0.0) + time.perf_counter() - t
    return inner
release.Release.from_spec = classmethod(timed("read", release.Release.from_spec.__func__))
release.ReleaseRun.write = timed("write", release.ReleaseRun.write)
release.write_data = timed("write_data", release.write_data)
c0, t0 = time.process_time(), time.perf_counter()
run, paths = release.protect(spec, overwrite=True)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
json.dump({"seconds": seconds, "cpu_seconds": cpu, "peak_mb": peak, "passed": run.passed,
           "run_seconds": run.seconds, "step_seconds": list(run.timings), "stages": stages}, open(out, "w"))
"""


def single_file(parts: Path, target: Path) -> Path:
    """The parts of ``parts`` as one Parquet file (the same rows in the same order)."""
    if not target.exists():
        files = sorted(parts.glob("*.parquet"))
        with pq.ParquetWriter(target, pq.read_schema(files[0])) as w:
            for f in files:
                w.write_table(pq.read_table(f))
    return target


def memory_case(n: int, work: Path) -> dict:
    parts, _ = ensure_data(n, work)
    data = single_file(parts, work / f"persons_{n}.parquet")
    out = work / f"release_{n}_memory"
    spec = work / f"release_{n}_memory.toml"
    spec.write_text(ENGINE_SPEC.format(input=data, output=out))
    result = work / "memory_result.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # as installed: modules load from their bytecode
    proc = subprocess.run([sys.executable, "-c", MEMORY_RUN, str(spec), str(result)], env=env,
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        return {"case": "memory_engine", "n": n, "error": tail}
    r = json.loads(result.read_text())
    st = r["stages"]
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(out.with_name(out.name + "-internal"), ignore_errors=True)
    return {"case": "memory_engine", "n": n, "seconds": r["seconds"], "rows_per_second": n / r["seconds"],
            "cpu_seconds": r["cpu_seconds"], "peak_mb": r["peak_mb"], "passed": r["passed"],
            "steps_and_gate_seconds": r["run_seconds"], "step_seconds": [round(x, 3) for x in r["step_seconds"]],
            "stage_seconds": {"read": round(st.get("read", 0.0), 3), "run": round(r["run_seconds"], 3),
                              "write_data": round(st.get("write_data", 0.0), 3),
                              "reports_and_catalogue": round(st.get("write", 0.0) - st.get("write_data", 0.0), 3),
                              "other": round(r["seconds"] - st.get("read", 0.0) - r["run_seconds"]
                                             - st.get("write", 0.0), 3)},
            "note": "fresh process; timed around sdckit.release.protect (read, steps, gate, reports, write)"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="200,000 rows")
    p.add_argument("--n", type=int, default=None, help="one size (default 5,000,000)")
    p.add_argument("--workers", default="1,2", help="Dask worker counts to run (default 1,2)")
    p.add_argument("--work", default=None, help="folder for the generated data (default: a temporary one)")
    args = p.parse_args()
    warnings.simplefilter("ignore")
    n = 200_000 if args.quick else args.n or 5_000_000
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="sdckit_bench_engine_"))
    try:
        mem = memory_case(n, work)
        emit(**mem)
        dask_seconds = {}
        for w in [int(x) for x in args.workers.split(",")]:
            row = run_case(n, work, compare=False, n_workers=w, spec_name="engine")
            row["case"] = f"dask_{w}_worker" + ("s" if w > 1 else "")
            dask_seconds[w] = row["seconds"]
            emit(**{k: v for k, v in row.items() if k not in ("equal_to_memory_engine", "baseline_seconds")})
        if "seconds" in mem and 1 in dask_seconds:
            emit(case="memory_vs_dask_1_worker", n=n, memory_seconds=mem["seconds"],
                 dask_1_worker_seconds=dask_seconds[1], ratio=mem["seconds"] / dask_seconds[1],
                 target="at most 2")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
