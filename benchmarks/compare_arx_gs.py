"""Side by side with ARX 3.9.2: the generalisation/suppression factor on precision, the average
class size, the publisher payout and the entropy-based information loss, on adult.

The cases (each metric at two factors, k-anonymity with suppression) are searched by both
tools on ARX's adult data with its hierarchies (8 quasi-identifiers, 6,480 nodes); ARX runs
through ``benchmarks/arx_driver/ArxGsMetrics.java`` (the metrics built with a factor, which
``ArxCompare`` does not do for them), compiled against the ARX classes that
``compare_arx.py`` builds (``--arx-git``, ``--build``: the same options). Per case one JSON
line: each tool's optimum node and value, ``same_value`` (relative difference below 1e-8),
``same_node``, the CPU seconds of each search (sdckit: process time of the exact search; ARX:
the thread's CPU time inside ``ARXAnonymizer.anonymize``), ``peak_mb`` (the Python process)
and ``load_average``.

Run from the project root: ``python benchmarks/compare_arx_gs.py --arx-git PATH [--build DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pandas as pd
from compare_arx import QIS8, ROOT, SENS, SHARED, build_arx, run_sdckit

from sdckit.lattice import Evaluator, Problem, exact, find_hierarchies
from sdckit.lattice.models_arx import make_models

#: ARX's default game (ARXCostBenefitConfiguration): benefit, publisher loss, adversary gain, cost
GAME = (1200.0, 300.0, 300.0, 4.0)
CASES = [
    (f"{metric}_gs{str(gs).replace('.', '')}_k{k}_s{round(sup * 100)}",
     {"k": k, "suppression": sup, "metric": metric, "gs_factor": gs, "game": GAME})
    for metric in ("precision", "aecs", "publisher_payout", "entropy_information_loss")
    for gs in (0.2, 0.8)
    for k, sup in ((5, 0.01),)
]


def build_driver(classpath: str, build: Path) -> str:
    """Compile ``ArxGsMetrics`` against the ARX classes; returns the class path."""
    driver = ROOT / "benchmarks" / "arx_driver" / "ArxGsMetrics.java"
    classes = build / "classes_gs"
    stamp = classes / "ArxGsMetrics.class"
    if not stamp.exists() or stamp.stat().st_mtime < driver.stat().st_mtime:
        classes.mkdir(parents=True, exist_ok=True)
        src = f"{build / 'src' / 'main'}:{build / 'stubs'}"
        subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(classes), "-cp", classpath,
                        "-sourcepath", src, str(driver)], check=True)
    return f"{classes}:{classpath}"


def run_arx(classpath: str, cases: list) -> dict:
    lines = []
    for name, s in cases:
        tok = {"id": name, "qis": ",".join(QIS8), "k": s["k"], "suppression": s["suppression"],
               "metric": s["metric"], "gs": s["gs_factor"]}
        tok.update(zip(("benefit", "publisher_loss", "gain", "cost"), s["game"]))
        lines.append(" ".join(f"{k}={v}" for k, v in tok.items()))
    res = subprocess.run(["java", "-Xmx4g", "-cp", classpath, "ArxGsMetrics", str(SHARED / "arx_adult.csv"),
                          str(SHARED / "arx_adult_hierarchies")], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True)
    return {d["id"]: d for d in (json.loads(x) for x in res.stdout.splitlines() if x.startswith("{"))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arx-git", type=Path, required=True)
    ap.add_argument("--build", type=Path, default=Path.home() / ".cache" / "sdckit-arx")
    args = ap.parse_args(argv)
    if not (SHARED / "arx_adult.csv").exists():
        print(json.dumps({"case": "adult", "skipped": "the adult data are absent"}))
        return 0
    classpath = build_driver(build_arx(args.arx_git, args.build), args.build)
    arx = run_arx(classpath, CASES)
    data = pd.read_csv(SHARED / "arx_adult.csv", dtype=str)
    problem = Problem(data, QIS8, find_hierarchies(SHARED / "arx_adult_hierarchies", QIS8), sensitive=SENS)
    exact(Evaluator(problem, make_models(k=5), 0.0, "discernibility"))   # warm-up (numba)
    for name, s in CASES:
        ours = run_sdckit(problem, s, data)
        theirs = arx.get(name, {"error": "no output"})
        tv = theirs.get("value")
        same = tv is not None and abs(ours["value"] - tv) <= 1e-8 * max(1.0, abs(tv))
        print(json.dumps({"case": name, "n": problem.n, "settings": {k: v for k, v in s.items() if k != "game"},
                          "sdckit_levels": ours["levels"], "arx_levels": theirs.get("levels"),
                          "sdckit_value": ours["value"], "arx_value": tv, "same_value": bool(same),
                          "same_node": ours["levels"] == theirs.get("levels"), "sdckit_optimal": ours["optimal"],
                          "nodes_checked": ours["nodes_checked"], "cpu_seconds": ours["cpu_seconds"],
                          "seconds": ours["seconds"], "arx_cpu_seconds": theirs.get("cpu_seconds"),
                          "arx_seconds": theirs.get("seconds"), "arx_error": theirs.get("error"),
                          "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                          "load_average": os.getloadavg()[0]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
