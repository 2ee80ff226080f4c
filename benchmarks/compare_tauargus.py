"""sdckit's secondary suppression against tau-Argus (pytauargus) on the benchmark's 2-D tables.

For each size, the R x C table of ``bench_tables.py`` (same synthetic microdata, same seed,
threshold rule n = 3, cost = cell value) is protected by sdckit's ``OptimalSuppression`` and
``HeuristicSuppression`` and, on the same microdata, by the tau-Argus engine of pytauargus with
its optimal method ``OPT`` (Fischetti & Salazar-Gonzalez on HiGHS):

* the microdata go to tau-Argus as a fixed-width ``.asc`` with a ``.rda`` (codes ``d0``, ``d1``
  and a numeric ``n = 1`` per record), so its table is the sum of ``n`` = the count and its
  default cost (the response) is the cell value, as sdckit's ``cost="value"``;
* the rule ``FREQ(3,10)`` makes the cells with 1 or 2 contributors unsafe, with protection
  levels 1 up and 1 down in its optimiser's input, as ``ThresholdRule(3)`` (max(10% of the
  value, 1), the lower one capped at the value); ``primaries_match`` checks the primaries;
* empty cells are never secondaries on either side.

pytauargus runs in its own virtual environment (default ``/work/pytau-venv``, or the
``TAUARGUS_VENV`` variable) through a subprocess: the project never imports it. To create one:
``uv venv /tmp/pytau-venv --python <python 3.11> && uv pip install --python
/tmp/pytau-venv/bin/python pytauargus`` (0.6.0 was used). The script
prints one line and exits 0 when that environment is absent.

tau-Argus scales its costs so that the largest (the grand total) is 20,000 and rounds them up to
integers; on large tables every small cell then costs 1. sdckit's optimal model is therefore run
twice: with ``cost="value"`` (``sdckit_opt``, the benchmark's) and with tau-Argus' own integer
costs read from its JJ file (``sdckit_opt_taucost``).

One JSON line per size: ``n_cells``, ``n_primary``; for each sdckit run (``sdckit_opt``,
``sdckit_heur`` up to 100 x 100, ``sdckit_opt_taucost``) ``_n_secondary``, ``_cost`` (sum of
the secondaries' values), ``_seconds``, ``_audit_ok`` (sdckit's audit) and ``_tau_audit_ok``
(tau-Argus' audit of that pattern, fed to it in its JJ format); tau-Argus' ``tau_n_secondary``,
``tau_cost`` (values), ``tau_taucost`` (its own costs; ``sdckit_opt_taucost_taucost`` is the same
figure for sdckit's pattern), ``tau_seconds`` (the whole batch: tabulation, OPT, writing the
table), ``tau_audit_ok_by_sdckit``, ``tau_self_audit_ok``; and whether each sdckit optimal count
is within 10% of tau-Argus' (``*_within_10pct``); ``*_time_ratio`` is sdckit's seconds over
tau-Argus' seconds in the same run.

Run: ``python benchmarks/compare_tauargus.py [--quick] [--n N]`` (default sizes 20, 40, 100).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from _common import emit, parse_args

from bench_tables import microdata

from sdckit.tables.audit import audit
from sdckit.tables.rules import ThresholdRule, primary_cells
from sdckit.tables.suppression import HeuristicSuppression, OptimalSuppression, cell_costs
from sdckit.tables.table import Table

warnings.simplefilter("ignore")
VENV = Path(os.environ.get("TAUARGUS_VENV", "/work/pytau-venv"))
PER_CELL = 20.0  # bench_tables.case_2d: 20 records per inner cell on average, seed = size
OPT_MINUTES = 5  # tau-Argus OPT time limit (minutes)

# Runs inside the pytauargus environment. "batch": run the batch (timed), tau-Argus' own audit of
# its pattern, and the table in the JJ format of its optimiser (cell values, scaled costs,
# statuses, a-priori bounds, protection levels). "audit": tau-Argus' audit of JJ files.
RUNNER = """
import json, sys, time
from pytauargus.engine import run_batch
from pytauargus._tauargus import audit_jj
if sys.argv[1] == "batch":
    t0 = time.perf_counter()
    eng = run_batch(sys.argv[2])
    s = time.perf_counter() - t0
    rows = eng.audit(0)
    lo, hi = eng._table_cell_bounds(0)
    eng._tau.write_jj_format(0, sys.argv[3], lo, hi, False, False, False)
    print(json.dumps({"seconds": s, "n_unsafe": sum(bool(r["unsafe"]) for r in rows), "version": eng.version}))
else:
    print(json.dumps([sum(bool(r["unsafe"]) for r in audit_jj(f)) for f in sys.argv[2:]]))
"""


def run_venv(*args: str, cwd: str, timeout: float):
    proc = subprocess.run([str(VENV / "bin" / "python"), "-c", RUNNER, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"pytauargus failed: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_inputs(df, folder: Path, minutes: int) -> Path:
    """Fixed-width microdata, its metadata and the batch file tau-Argus reads."""
    w = [int(df[c].str.len().max()) for c in ("d0", "d1")]
    lines = df["d0"].str.pad(w[0]) + " " + df["d1"].str.pad(w[1]) + " 1"
    (folder / "micro.asc").write_text("\n".join(lines) + "\n")
    (folder / "micro.rda").write_text(
        f'd0 1 {w[0]}\n  <RECODEABLE>\n  <TOTCODE> "Total"\n'
        f'd1 {w[0] + 2} {w[1]}\n  <RECODEABLE>\n  <TOTCODE> "Total"\n'
        f"n {w[0] + w[1] + 3} 1\n  <NUMERIC>\n")
    arb = folder / "batch.arb"
    arb.write_text(
        f'<OPENMICRODATA> "{folder / "micro.asc"}"\n<OPENMETADATA> "{folder / "micro.rda"}"\n'
        '<SPECIFYTABLE> "d0""d1"|"n"||\n<SAFETYRULE> FREQ(3,10)\n<READMICRODATA>\n'
        f'<SUPPRESS> OPT(1,{minutes})\n<WRITETABLE> (1,5,SO+,"{folder / "out.tab"}")\n')
    return arb


def read_statuses(path: Path, table: Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """tau-Argus' cell order (its intermediate table lists the cells in the JJ order) as sdckit
    cell indices, and its primary (U) and secondary (M) masks over sdckit's cells
    (``code1;code2;value;freq;cost;status;lower;upper`` per cell)."""
    rows = [f.split(";") for f in path.read_text().splitlines() if f]
    order = np.array([table.cell_index(f[0].strip('"'), f[1].strip('"')) for f in rows])
    status = np.array([f[5] for f in rows])
    u = np.zeros(table.n_cells, bool)
    m = np.zeros(table.n_cells, bool)
    u[order[status == "U"]] = True
    m[order[status == "M"]] = True
    return order, u, m


def jj_with_pattern(jj: list[str], order: np.ndarray, secondary: np.ndarray, path: Path) -> Path:
    """The JJ table with its secondaries replaced by ``secondary`` (sdckit cells), for tau-Argus' audit.
    JJ lines: header ``0``, the number of cells, then ``index value cost status lb ub lpl upl sliding``."""
    out = list(jj)
    for k in range(order.size):
        f = out[2 + k].split()
        if f[3] == "m":
            f[3] = "s"
        if secondary[order[k]]:
            f[3] = "m"
        out[2 + k] = " ".join(f)
    path.write_text("\n".join(out) + "\n")
    return path


def sdckit_fields(key: str, res) -> dict:
    return {f"{key}_n_secondary": res.n_secondary, f"{key}_cost": float(res.table.value[res.secondary].sum()),
            f"{key}_seconds": res.seconds, f"{key}_audit_ok": res.audit.ok}


def compare(size: int, time_limit: float, heuristic: bool, timeout: float) -> None:
    df = microdata((size, size), PER_CELL, seed=size)
    t = Table.from_microdata(df, ["d0", "d1"])
    p = primary_cells(t, ThresholdRule(3))
    row = {"case": "tauargus_opt", "size": f"{size}x{size}", "n": t.n_cells, "n_cells": t.n_cells,
           "n_primary": p.n_primary}
    with tempfile.TemporaryDirectory(prefix="tauargus_") as tmp:
        folder = Path(tmp)
        tau = run_venv("batch", str(write_inputs(df, folder, OPT_MINUTES)), str(folder / "table.jj"),
                       cwd=tmp, timeout=timeout)
        order, u, m = read_statuses(folder / "out.tab", t)
        jj = (folder / "table.jj").read_text().splitlines()
        tau_cost = np.zeros(t.n_cells)
        tau_cost[order] = [float(jj[2 + k].split()[2]) for k in range(order.size)]
        # sdckit's cost = "tauargus" option reproduces these costs (scaled to 20,000, rounded up)
        row["tauargus_cost_option_equals_jj"] = bool(np.array_equal(cell_costs(t, "tauargus"), tau_cost))
        results = {"sdckit_opt": OptimalSuppression(time_limit=time_limit).apply(t, p)}
        if heuristic:
            results["sdckit_heur"] = HeuristicSuppression().apply(t, p)
        # the same optimal model under tau-Argus' own (scaled, rounded-up) integer costs
        results["sdckit_opt_taucost"] = OptimalSuppression(time_limit=time_limit).apply(t, p, weights=tau_cost)
        for key, res in results.items():
            row.update(sdckit_fields(key, res))
        row["sdckit_opt_proven"] = results["sdckit_opt"].proven_optimal
        files = [jj_with_pattern(jj, order, r.secondary, folder / f"{k}.jj") for k, r in results.items()]
        unsafe = run_venv("audit", *map(str, files), cwd=tmp, timeout=timeout)
    row.update({f"{k}_tau_audit_ok": n == 0 for k, n in zip(results, unsafe)})
    row.update({"tau_n_secondary": int(m.sum()), "tau_cost": float(t.value[m].sum()),
                "tau_taucost": float(tau_cost[m].sum()),
                "sdckit_opt_taucost_taucost": float(tau_cost[results["sdckit_opt_taucost"].secondary].sum()),
                "tau_seconds": tau["seconds"], "primaries_match": bool(np.array_equal(u, p.sensitive)),
                "tau_audit_ok_by_sdckit": audit(t, u | m, primary=p).ok,
                "tau_self_audit_ok": tau["n_unsafe"] == 0, "tau_version": tau["version"]})
    # time ratio to tau-Argus in this run (tau-Argus' time includes its tabulation)
    for key in ("sdckit_opt", "sdckit_opt_taucost"):
        row[f"{key}_time_ratio"] = row[f"{key}_seconds"] / max(row["tau_seconds"], 1e-9)
    n_ref = row["tau_n_secondary"]
    for key in ("sdckit_opt", "sdckit_opt_taucost"):
        row[f"{key}_within_10pct"] = abs(row[f"{key}_n_secondary"] - n_ref) <= 0.1 * max(n_ref, 1)
    emit(**row)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    if not (VENV / "bin" / "python").exists():
        print(f"compare_tauargus: skipped, no pytauargus environment at {VENV} (set TAUARGUS_VENV)")
        return
    sizes = [args.n] if args.n else ([20, 40] if args.quick else [20, 40, 100])
    for size in sizes:
        compare(size, time_limit=300.0 if size < 200 else 120.0, heuristic=size <= 100,
                timeout=60.0 * OPT_MINUTES + 120.0)


if __name__ == "__main__":
    sys.exit(main())
