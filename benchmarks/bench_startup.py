"""Benchmark: what a command costs from the first call (each command a fresh process).

Cases (one JSON line per case and state):

* ``version``, ``help``: ``sdckit --version``, ``sdckit --help`` (target 0.15 s); neither imports
  typer (the root help is precomputed from typer's rendering), so their floor is ``import sdckit``.
* ``risk``: ``sdckit risk`` on the packaged 10,000-record census sample on 4 keys (target 1.0 s).
* ``anonymise``: ``sdckit anonymise`` on ARX's adult file (30,162 records) with its hierarchies,
  k = 5, 1% suppression, 8 quasi-identifiers (target 1.5 s; skipped when ../shared is absent); a
  search this size runs the numpy twins of the lattice kernels (no numba load), so its floor is
  ``import pandas``.
* ``table_count``: ``sdckit table count`` on the Diaconis-Gangolli hair/eye margins (as in
  bench_exact.py; target 1.0 s); small margins are counted in numpy (no numba load) and the
  command line is read without typer, so its floor is ``import numpy``.
* ``table_argus``: ``sdckit table --argus`` on a small tau-Argus batch (the manual's microdata
  example from tests/tables/test_argus.py: a Sex x Age table, FREQ(10,20), MOD suppression, one
  written table; target 1.0 s; skipped when ../shared is absent).

States of numba's on-disk cache (``NUMBA_CACHE_DIR`` pointed at a folder of this run, so the
cache of the source tree is neither read nor cleared):

* ``first``: an empty cache (as after clearing sdckit's numba cache): the command compiles the
  kernels it needs;
* ``second``: the next run on the cache the first one wrote (best of ``--repeat`` runs);
* ``after_warm_up``: the first run on a cache that ``sdckit warm`` (what the Makefile runs after
  installing) filled, best of ``--repeat`` runs each on a fresh copy of that cache (so every one
  is a first run on it, and a kernel the warm-up missed is compiled by each); the warm-up's own
  cost is the ``warm_up`` line. ``kernels_compiled`` counts the kernels such a run compiles and
  writes to the cache (numba's ``NUMBA_DEBUG_CACHE`` lines ``data saved``, from one more, untimed
  run): 0 when the warm-up covers every signature the command uses.
* ``--quick`` runs one state only, ``installed``: the cache where the installation keeps it.

``seconds`` is the wall time and ``cpu_seconds`` the child's user + system CPU time
(``resource.getrusage(RUSAGE_CHILDREN)`` deltas); ``peak_mb`` is the child's maximum resident
set. ``met`` compares ``cpu_seconds`` with ``target`` (CPU, so that the verdict does not depend
on the machine's load; ``load1`` is the 1-minute load average when the case ran). Each case also
times, in the same run, the floor of its process: the interpreter with the packages the command
cannot do without (``baseline_cpu_seconds``, e.g. ``import pandas`` for risk), and the
interpreter alone (``interpreter`` line). ``bytecode_share`` is the share of the main packages'
modules whose bytecode is compiled (the Makefile's warm-up compiles all of it; where
PYTHONDONTWRITEBYTECODE is set and it is not, every command compiles pandas, numba... from
source again).
"""

from __future__ import annotations

import importlib.util
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, SHARED_DATA, emit, parse_args

CENSUS = ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"
ADULT = SHARED_DATA / "arx_adult.csv"
ADULT_HIERARCHIES = SHARED_DATA / "arx_adult_hierarchies"
ARGUS_META = SHARED_DATA / "tauargus_meta"
ARGUS_MICRO = SHARED_DATA / "tauargus_ckm_microdata.csv"
HAIR_EYE = ("108,286,71,127", "220,215,93,64")  # Diaconis & Gangolli (1995), as in bench_exact.py
ARGUS_JOB = ('<OPENMICRODATA> "micro.csv"\n<OPENMETADATA> "microdata.rda"\n<SPECIFYTABLE> "Sex""Age"|||\n'
             '<SAFETYRULE> FREQ(10,20)\n<READMICRODATA>\n<SUPPRESS> MOD(1,5,1,0,0)\n'
             '<WRITETABLE> (1,1,AS+,"t1_mod.csv")\n')


def sdckit_command() -> list[str]:
    """The console script next to this interpreter (what a user types), else ``python -m sdckit``."""
    script = Path(sys.executable).with_name("sdckit")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "sdckit"]


def run_child(argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> dict:
    """Run one fresh process; its wall and CPU seconds, peak resident set and exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        err.seek(0)
        tail = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": wall, "cpu_seconds": cpu, "peak_mb": usage.ru_maxrss / 1024,
            "exit_code": proc.returncode, "error": tail[0] if proc.returncode and tail else None}


def best_of(argv: list[str], repeat: int, *, fresh_cache: tuple[Path, Path] | None = None, **kw) -> dict:
    """The run of least CPU among ``repeat`` runs; with ``fresh_cache=(source, target)`` each run
    starts on a fresh copy of the numba cache ``source`` at ``target`` (the env points there)."""
    runs = []
    for _ in range(max(1, repeat)):
        if fresh_cache is not None:
            shutil.rmtree(fresh_cache[1], ignore_errors=True)
            shutil.copytree(fresh_cache[0], fresh_cache[1])
        runs.append(run_child(argv, **kw))
    return min(runs, key=lambda r: r["cpu_seconds"])


def kernels_compiled(argv: list[str], *, env: dict[str, str], cwd: Path, fresh_cache: tuple[Path, Path]) -> int:
    """How many kernels one run on a fresh copy of the cache compiles (untimed)."""
    shutil.rmtree(fresh_cache[1], ignore_errors=True)
    shutil.copytree(fresh_cache[0], fresh_cache[1])
    proc = subprocess.run(argv, env={**env, "NUMBA_DEBUG_CACHE": "1"}, cwd=cwd, capture_output=True, text=True)
    return sum("[cache] data saved" in line for line in (proc.stdout + proc.stderr).splitlines())


def bytecode_share(packages=("typer", "pydantic", "numpy", "pandas", "numba", "scipy", "sdckit")) -> float:
    """The share of the main packages' modules that have compiled bytecode (the environment's state)."""
    have = total = 0
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        for folder in spec.submodule_search_locations:
            for src in Path(folder).rglob("*.py"):
                total += 1
                have += Path(importlib.util.cache_from_source(str(src))).is_file()
    return round(have / total, 3) if total else 0.0


def cases(work: Path) -> list[dict]:
    out = [
        {"case": "version", "n": 0, "args": ["--version"], "target": 0.15, "floor": ""},
        {"case": "help", "n": 0, "args": ["--help"], "target": 0.15, "floor": "import sdckit"},
        {"case": "risk", "n": 10_000, "target": 1.0, "floor": "import pandas",
         "args": ["risk", str(CENSUS), "--keys", "Region,Sex,Age,Marital Status", "--json"]},
    ]
    if ADULT.is_file() and ADULT_HIERARCHIES.is_dir():
        out.append({"case": "anonymise", "n": 30_162, "target": 1.5, "floor": "import pandas",
                    "args": ["anonymise", str(ADULT), "--hierarchies", str(ADULT_HIERARCHIES), "--qis",
                             "sex,age,race,marital-status,education,native-country,workclass,occupation",
                             "--k", "5", "--suppression", "0.01", "--json"]})
    else:
        out.append({"case": "anonymise", "skipped": f"{ADULT} (ARX's adult file) is absent"})
    out.append({"case": "table_count", "n": 16, "target": 1.0, "floor": "import numpy",
                "args": ["table", "count", "--rows", HAIR_EYE[0], "--cols", HAIR_EYE[1], "--json"]})
    if (ARGUS_META / "microdata.rda").is_file() and ARGUS_MICRO.is_file():
        folder = work / "argus"
        shutil.copytree(ARGUS_META, folder)
        shutil.copy(ARGUS_MICRO, folder / "micro.csv")
        (folder / "job.arb").write_text(ARGUS_JOB, encoding="utf-8")
        out.append({"case": "table_argus", "n": 4580, "target": 1.0,
                    "floor": "import pandas, highspy, scipy.sparse",
                    "args": ["table", "--argus", str(folder / "job.arb"), "--json"]})
    else:
        out.append({"case": "table_argus", "skipped": f"{ARGUS_META} (tau-Argus example files) is absent"})
    return out


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    sdckit = sdckit_command()
    base_env = dict(os.environ)
    common = {"bytecode_share": bytecode_share(),
              "dont_write_bytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))}
    with tempfile.TemporaryDirectory(prefix="sdckit-bench-startup-") as tmp:
        work = Path(tmp)
        interp = best_of([sys.executable, "-c", "pass"], args.repeat)
        emit(case="interpreter", n=0, seconds=interp["seconds"], cpu_seconds=interp["cpu_seconds"],
             peak_mb=interp["peak_mb"], **common)
        todo = cases(work)
        warm_cache = None
        if not args.quick:
            warm_cache = work / "numba-warm"
            w = run_child([*sdckit, "warm"], env={**base_env, "NUMBA_CACHE_DIR": str(warm_cache)})
            warm_cache.mkdir(exist_ok=True)  # (empty where the warm-up failed: its line says so)
            emit(case="warm_up", n=0, seconds=w["seconds"], cpu_seconds=w["cpu_seconds"], peak_mb=w["peak_mb"],
                 exit_code=w["exit_code"], error=w["error"], load1=os.getloadavg()[0], **common)
        for c in todo:
            if "skipped" in c:
                emit(case=c["case"], skipped=c["skipped"])
                continue
            argv = [*sdckit, *c["args"]]
            floor = best_of([sys.executable, "-c", c["floor"] or "pass"], args.repeat)
            if args.quick:
                states = [("installed", base_env, 1, None)]
            else:
                cold = {**base_env, "NUMBA_CACHE_DIR": str(work / f"numba-{c['case']}")}
                warmed = work / f"numba-warm-{c['case']}"  # a copy per run: the warm-up's cache stays as it was
                states = [("first", cold, 1, None), ("second", cold, args.repeat, None),
                          ("after_warm_up", {**base_env, "NUMBA_CACHE_DIR": str(warmed)}, args.repeat,
                           (warm_cache, warmed))]
            for state, env, repeat, fresh in states:
                r = best_of(argv, repeat, env=env, cwd=work, fresh_cache=fresh)
                extra = {} if fresh is None else {
                    "kernels_compiled": kernels_compiled(argv, env=env, cwd=work, fresh_cache=fresh)}
                emit(case=c["case"], state=state, n=c["n"], seconds=r["seconds"], cpu_seconds=r["cpu_seconds"],
                     peak_mb=r["peak_mb"], target=c["target"], met=r["exit_code"] == 0 and r["cpu_seconds"] <= c["target"],
                     baseline_cpu_seconds=floor["cpu_seconds"], baseline=c["floor"] or "interpreter",
                     exit_code=r["exit_code"], error=r["error"], load1=os.getloadavg()[0], **extra, **common)


if __name__ == "__main__":
    main()
