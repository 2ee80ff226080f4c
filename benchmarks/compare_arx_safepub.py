"""Side by side with ARX 3.9.2: (epsilon, delta)-differential privacy by SafePub on adult.

ARX is built as in ``benchmarks/compare_arx.py`` (its ``build_arx``); the driver
``benchmarks/arx_driver/ArxSafePub.java`` is compiled beside it. The script prints JSON lines:

* ``case = "params"``: ARX's ``ParameterCalculation`` beta and k against sdckit's
  :func:`sdckit.lattice.dp_params.dp_parameters` for each (epsilon, delta);
* one line per (epsilon, metric): over ``--runs`` runs of each tool (sdckit seeded 0..runs-1,
  ARX from SecureRandom), the most frequent chosen nodes, the mean and sd of the records
  released and of the chosen node's height (sum of levels), and mean CPU seconds per run
  (sdckit: process time of :func:`sdckit.lattice.safepub.safepub`; ARX: the thread's CPU time
  inside ``anonymize``, the JVM's start and the data's loading not counted).

* with ``--fixed``, the data-independent variant (a generalisation the steward gives; ARX's
  ``EDDifferentialPrivacy`` with a ``DataGeneralizationScheme``): one line per ((epsilon, delta),
  scheme), with both tools' k and beta (the whole epsilon: no search budget), the mean and sd of
  the records released over ``--runs`` runs and the CPU seconds per run.

SafePub is randomised: the two tools agree in distribution, not run by run.

Run from the project root:
``python benchmarks/compare_arx_safepub.py --arx-git PATH [--runs 10] [--steps 100] [--fixed | --fixed-only]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

from compare_arx import QIS8, SHARED, build_arx  # noqa: E402

from sdckit.lattice import find_hierarchies  # noqa: E402
from sdckit.lattice.dp_params import dp_parameters  # noqa: E402
from sdckit.lattice.safepub import safepub  # noqa: E402
from sdckit.lattice.safepub_fixed import safepub_fixed  # noqa: E402

PAIRS = ((0.5, 1e-6), (1.0, 1e-6), (1.0, 1e-5), (2.0, 1e-4), (1.5, 1e-6), (2.0, 1e-6))
#: the data-independent cases: (epsilon, delta) settings and level schemes (explicit levels, or a preset)
FIXED_PAIRS = ((1.0, 1e-6), (2.0, 1e-5))
FIXED_SCHEMES = {"levels": {"sex": 0, "age": 2, "race": 1, "marital-status": 1, "education": 2, "native-country": 1,
                            "workclass": 1, "occupation": 1},
                 "preset_medium": "medium"}
ARX_METRIC = {"discernibility": "dm", "aecs": "aecs", "precision": "precision", "loss": "loss",
              "non_uniform_entropy": "entropy"}


def compile_driver(classpath: str, build: Path) -> str:
    """Compile ArxSafePub.java against ARX's classes; returns the class path with it."""
    out = build / "classes_safepub"
    driver = ROOT / "benchmarks" / "arx_driver" / "ArxSafePub.java"
    stamp = out / "ArxSafePub.class"
    if not stamp.exists() or stamp.stat().st_mtime < driver.stat().st_mtime:
        out.mkdir(parents=True, exist_ok=True)
        # ARX's sources beside: javac compiles the classes the driver needs that ArxCompare did not
        src = f"{build / 'src' / 'main'}:{build / 'stubs'}"
        subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(out), "-cp", classpath, "-sourcepath", src,
                        str(driver)], check=True)
    return f"{out}:{classpath}"


def run_arx(classpath: str, lines: list[str]) -> list[dict]:
    res = subprocess.run(["java", "-Xmx4g", "-cp", classpath, "ArxSafePub", str(SHARED / "arx_adult.csv"),
                          str(SHARED / "arx_adult_hierarchies")], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True)
    return [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]


def _summary(levels: list[tuple], released: list[int], cpu: list[float]) -> dict:
    heights = [sum(v) for v in levels]
    top = Counter(levels).most_common(3)
    return {"top_nodes": [[list(n), c] for n, c in top], "released_mean": float(np.mean(released)),
            "released_sd": float(np.std(released)), "height_mean": float(np.mean(heights)),
            "height_sd": float(np.std(heights)), "cpu_seconds": round(float(np.mean(cpu)), 4)}


def run_fixed(cp: str, runs: int, load: float) -> None:
    """The data-independent cases (module notes): one JSON line per ((epsilon, delta), scheme)."""
    data = pd.read_csv(SHARED / "arx_adult.csv", dtype=str)[QIS8]
    hier = find_hierarchies(SHARED / "arx_adult_hierarchies", QIS8)
    for eps, delta in FIXED_PAIRS:
        for name, scheme in FIXED_SCHEMES.items():
            levels = scheme if isinstance(scheme, dict) else {}
            preset = None if isinstance(scheme, dict) else scheme
            token = (f"levels={','.join(f'{q}:{v}' for q, v in levels.items())}" if levels
                     else f"preset={preset.upper()}")
            arx = run_arx(cp, [f"id={name} qis={','.join(QIS8)} epsilon={eps} delta={delta} {token} runs={runs}"])
            rel, cpu = [], []
            for seed in range(runs):
                c = time.process_time()
                out, res = safepub_fixed(data, QIS8, hier, epsilon=eps, delta=delta, levels=levels, preset=preset,
                                         rng=np.random.default_rng(seed))
                cpu.append(time.process_time() - c)
                rel.append(len(out))
            a_rel = [r["released"] for r in arx]
            a_levels = {tuple(r["levels"][q] for q in QIS8) for r in arx}
            s_levels = tuple(res.level_map[q] for q in QIS8)
            print(json.dumps({"case": f"safepub_fixed_{name}_eps{eps:g}_delta{delta:g}", "n": len(data), "runs": runs,
                              "levels": res.level_map, "same_levels": a_levels == {s_levels},
                              "sdckit_k": res.k, "arx_k": arx[0]["k"], "sdckit_beta": res.beta,
                              "arx_beta": arx[0]["beta"],
                              "same_k_beta": res.k == arx[0]["k"] and abs(res.beta - arx[0]["beta"]) < 1e-12,
                              "sdckit": {"released_mean": float(np.mean(rel)), "released_sd": float(np.std(rel)),
                                         "cpu_seconds": round(float(np.mean(cpu)), 4)},
                              "arx": {"released_mean": float(np.mean(a_rel)), "released_sd": float(np.std(a_rel)),
                                      "cpu_seconds": round(float(np.mean([r["cpu_seconds"] for r in arx])), 4)},
                              "load_average": round(load, 2)}), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arx-git", type=Path, required=True)
    ap.add_argument("--build", type=Path, default=Path.home() / ".cache" / "sdckit-arx")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--metrics", default="discernibility,loss")
    ap.add_argument("--epsilons", default="1.0,2.0")
    ap.add_argument("--fixed", action="store_true", help="also the data-independent variant (given levels)")
    ap.add_argument("--fixed-only", action="store_true", help="only the data-independent variant")
    a = ap.parse_args(argv)
    cp = compile_driver(build_arx(a.arx_git, a.build), a.build)
    load = os.getloadavg()[0]
    if a.fixed or a.fixed_only:
        run_fixed(cp, a.runs, load)
    if a.fixed_only:
        return 0
    arx_params = run_arx(cp, [f"mode=params epsilon={e} delta={d}" for e, d in PAIRS])
    for (e, d), r in zip(PAIRS, arx_params, strict=True):
        beta, k = dp_parameters(e, d)
        print(json.dumps({"case": "params", "epsilon": e, "delta": d, "arx_beta": r["beta"], "arx_k": r["k"],
                          "sdckit_beta": beta, "sdckit_k": k, "same": r["k"] == k and abs(r["beta"] - beta) < 1e-12}),
              flush=True)
    data = pd.read_csv(SHARED / "arx_adult.csv", dtype=str)[QIS8]
    hier = find_hierarchies(SHARED / "arx_adult_hierarchies", QIS8)
    for metric in a.metrics.split(","):
        for eps in (float(x) for x in a.epsilons.split(",")):
            delta = 1e-6
            arx = run_arx(cp, [f"id=x qis={','.join(QIS8)} epsilon={eps} delta={delta} steps={a.steps} budget=0.1 "
                               f"metric={ARX_METRIC[metric]} runs={a.runs}"])
            a_lv = [tuple(r["levels"][q] for q in QIS8) for r in arx]
            s_lv, s_rel, s_cpu = [], [], []
            for seed in range(a.runs):
                c = time.process_time()
                out, res = safepub(data, QIS8, hier, epsilon=eps, delta=delta, steps=a.steps, epsilon_search=0.1,
                                   metric=metric, rng=np.random.default_rng(seed))
                s_cpu.append(time.process_time() - c)
                s_lv.append(tuple(res.level_map[q] for q in QIS8))
                s_rel.append(len(out))
            print(json.dumps({"case": f"safepub_{metric}_eps{eps:g}", "n": len(data), "steps": a.steps,
                              "runs": a.runs, "k": dp_parameters(eps - 0.1, delta)[1],
                              "sdckit": _summary(s_lv, s_rel, s_cpu),
                              "arx": _summary(a_lv, [r["released"] for r in arx], [r["cpu_seconds"] for r in arx]),
                              "load_average": round(load, 2)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
