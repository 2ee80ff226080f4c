"""Side by side with ARX 3.9.2: ARX's privacy models and quality metrics on adult, optimum and value.

For each case (a model or metric at one setting; every model and metric that sdckit has
from ARX, at two settings each) both tools search ARX's adult data with its hierarchies
(8 quasi-identifiers, 6,480 nodes; the journalist profitability cases search the research
subset of every tenth row, ``n``, against the whole file as the population) and the script
prints one JSON line: the optimum node of
each tool, the metric value of each, ``same_value`` (relative difference below 1e-8) and
``same_node`` (for a case with a microaggregated attribute also ``same_released``: ARX's released
column, written by the driver, against sdckit's, row by row), and each tool's CPU seconds (sdckit: process time of the exact search; ARX: the
thread's CPU time inside ``ARXAnonymizer.anonymize``, the JVM's start and the data's loading
not counted). ``load_average`` says how busy the machine was; ``peak_mb`` is the Python process's peak
resident memory so far (the JVM is a separate process).

ARX is built on demand, never in the tests: ``--arx-git`` names a clone (or bare mirror) of
github.com/arx-deidentifier/arx; the script takes ``src/main`` and ``lib/ant`` at tag
``v3.9.2`` into ``--build`` (default ``~/.cache/sdckit-arx``), compiles the classes the
driver (``benchmarks/arx_driver/ArxCompare.java``) needs with ``javac -sourcepath`` (about a
minute), with two empty stand-ins for jars of the repository's ``lib`` that ARX's
certificate and logistic-regression code name but the search never loads
(``org.apache.pdfbox.pdmodel.font.PDFont``, ``org.apache.hadoop.io.Writable``). It needs
``git``, ``javac`` and ``java`` (17 works) on the path.

``--scale N`` runs instead the scale case of issue 42: the seeded synthetic data of
``benchmarks/bench_lattice.py`` (N records, 12 quasi-identifiers; ``--lattice full``: heights
3 and 2, 2,985,984 nodes; ``--lattice quick``: heights 2 and 1, 46,656 nodes), k = 5, 1 %
suppression, DM, written once as CSV and hierarchy files to a temporary folder (deleted
afterwards). Each tool runs in its own child process that reads those files and searches:
ARX in the JVM (``-Xmx8g``) through the driver, sdckit in ``python compare_arx.py
--sdckit-child FOLDER`` (``pandas.read_csv`` of the data as strings and the hierarchy files, as
``sdckit anonymise`` reads them; the data frame is dropped once encoded). ``--mode limit``
(default): ARX's best-effort bottom-up search (Lightning) with a time limit of ``--limit``
seconds, wall clock, against sdckit's anytime search with ``--limit`` CPU seconds of its
process. ``--mode optimum``: both search for the proven optimum, ARX with its default optimal
algorithm (Flash; ARX refuses it for lattices above 100,000 nodes, its default threshold, so
this mode is meant for ``--lattice quick``), sdckit with its exact search. Figures per tool:
the best DM (sdckit's bound, ``gap`` = best / bound and ``relative_gap`` = (best - bound) /
best), the CPU seconds of the search (ARX: the thread's CPU time inside ``anonymize``, as the
driver reports it; sdckit: process time of the search), the CPU seconds of the whole child
process (reading and encoding included; ``os.wait4``'s user + system time) and the peak
resident memory of each child (``ru_maxrss`` from ``os.wait4`` of that child alone).

Run from the project root:
``python benchmarks/compare_arx.py --arx-git PATH [--quick] [--only NAME,PREFIX*]
[--scale N --limit S --mode limit|optimum --lattice full|quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.lattice import Evaluator, Problem, exact, find_hierarchies, generalise_frame
from sdckit.lattice.microaggregation import microaggregate_frame, prepare_problem
from sdckit.lattice.models_arx import make_models
from sdckit.lattice.profitability import CostBenefit

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
QIS8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
SENS = "salary-class"
TAG = "v3.9.2"
STUBS = {
    "org/apache/pdfbox/pdmodel/font/PDFont.java":
        "package org.apache.pdfbox.pdmodel.font;\npublic class PDFont {}\n",
    "org/apache/hadoop/io/Writable.java":
        "package org.apache.hadoop.io;\npublic interface Writable {\n"
        "  void write(java.io.DataOutput out) throws java.io.IOException;\n"
        "  void readFields(java.io.DataInput in) throws java.io.IOException;\n}\n",
}

# (name, settings): the settings name the models as make_models does and the metric; each
# model with the discernibility metric (ARX's non-monotonic DM), each metric with k-anonymity
CASES = [
    ("loss_k5_s0", {"k": 5, "suppression": 0.0, "metric": "loss"}),
    ("loss_k5_s1", {"k": 5, "suppression": 0.01, "metric": "loss"}),
    ("dm_star_k5_s0", {"k": 5, "suppression": 0.0, "metric": "dm_star"}),
    ("dm_star_k10_s2", {"k": 10, "suppression": 0.02, "metric": "dm_star"}),
    ("height_k5_s0", {"k": 5, "suppression": 0.0, "metric": "height"}),
    ("height_k10_s2", {"k": 10, "suppression": 0.02, "metric": "height"}),
    ("ambiguity_k5_s0", {"k": 5, "suppression": 0.0, "metric": "ambiguity"}),
    ("ambiguity_k5_s1", {"k": 5, "suppression": 0.01, "metric": "ambiguity"}),
    ("nnue_k5_s0", {"k": 5, "suppression": 0.0, "metric": "normalised_entropy"}),
    ("nnue_k5_s1", {"k": 5, "suppression": 0.01, "metric": "normalised_entropy"}),
    ("classification_k5_s0", {"k": 5, "suppression": 0.0, "metric": "classification"}),
    ("classification_k5_s1", {"k": 5, "suppression": 0.01, "metric": "classification"}),
    ("kmap_poisson_k5", {"k_map": 5, "population_size": 300_000, "k_map_estimator": "poisson",
                         "suppression": 0.0, "metric": "discernibility"}),
    ("kmap_ztp_k10_s1", {"k_map": 10, "population_size": 100_000, "k_map_estimator": "zero_truncated_poisson",
                         "suppression": 0.01, "metric": "discernibility"}),
    ("beta_basic_1", {"beta": 1.0, "beta_variant": "basic", "suppression": 0.0, "metric": "discernibility"}),
    ("beta_enhanced_1", {"beta": 1.0, "beta_variant": "enhanced", "suppression": 0.0, "metric": "discernibility"}),
    ("beta_basic_05_k5", {"beta": 0.5, "beta_variant": "basic", "k": 5, "suppression": 0.0,
                          "metric": "discernibility"}),
    ("delta_1", {"delta_disclosure": 1.0, "suppression": 0.0, "metric": "discernibility"}),
    ("delta_15_k5", {"delta_disclosure": 1.5, "k": 5, "suppression": 0.0, "metric": "discernibility"}),
    ("t_ordered_02", {"t": 0.2, "t_distance": "ordered", "suppression": 0.0, "metric": "discernibility"}),
    ("t_ordered_01_k5", {"t": 0.1, "t_distance": "ordered", "k": 5, "suppression": 0.0, "metric": "discernibility"}),
    ("uniqueness_zayatz", {"population_uniqueness": 0.001, "population_size": 300_000,
                           "uniqueness_model": "zayatz", "suppression": 0.0, "metric": "discernibility"}),
    ("uniqueness_zayatz_loss", {"population_uniqueness": 0.0005, "population_size": 1_000_000,
                                "uniqueness_model": "zayatz", "suppression": 0.0, "metric": "loss"}),
    # ARX's profitability models (game: publisher benefit, publisher loss, adversary gain, adversary
    # cost; ARX's defaults 1200, 300, 300, 4) and its publisher payout and entropy-based loss metrics;
    # the journalist cases search the research subset of every tenth row against the whole file
    ("profit_prosecutor_payout", {"profitability": "prosecutor", "suppression": 1.0, "metric": "publisher_payout"}),
    ("profit_prosecutor_payout_b100_l1000", {"profitability": "prosecutor", "game": (100, 1000, 300, 4),
                                             "suppression": 1.0, "metric": "publisher_payout"}),
    ("profit_prosecutor_dm_b50_c10_s5", {"profitability": "prosecutor", "game": (50, 300, 300, 10),
                                         "suppression": 0.05, "metric": "discernibility"}),
    ("profit_prosecutor_no_attack_dm_s2", {"profitability": "prosecutor_no_attack", "suppression": 0.02,
                                           "metric": "discernibility"}),
    ("profit_prosecutor_no_attack_loss_g100_c3", {"profitability": "prosecutor_no_attack",
                                                  "game": (1200, 300, 100, 3), "suppression": 0.01,
                                                  "metric": "loss"}),
    ("profit_journalist_payout_b100_l1000", {"profitability": "journalist", "game": (100, 1000, 300, 4),
                                             "subset_mod": 10, "suppression": 1.0, "metric": "publisher_payout"}),
    ("profit_journalist_payout_b200_g1000", {"profitability": "journalist", "game": (200, 2000, 1000, 5),
                                             "subset_mod": 10, "suppression": 1.0, "metric": "publisher_payout"}),
    ("profit_journalist_no_attack_dm_s2", {"profitability": "journalist_no_attack", "subset_mod": 10,
                                           "suppression": 0.02, "metric": "discernibility"}),
    ("profit_journalist_no_attack_loss_g1000_c3", {"profitability": "journalist_no_attack",
                                                   "game": (1200, 300, 1000, 3), "subset_mod": 10,
                                                   "suppression": 0.0, "metric": "loss"}),
    ("payout_k5_s2", {"k": 5, "suppression": 0.02, "metric": "publisher_payout"}),
    ("payout_k10_s0_b100_l1000", {"k": 10, "game": (100, 1000, 300, 4), "suppression": 0.0,
                                  "metric": "publisher_payout"}),
    ("entropy_il_k5_s2", {"k": 5, "suppression": 0.02, "metric": "entropy_information_loss"}),
    ("entropy_il_k10_s0", {"k": 10, "suppression": 0.0, "metric": "entropy_information_loss"}),
    # ARX's generalisation/suppression factor (gsFactor; 0.5 in the cases above) of the metrics it changes
    ("loss_gs02_k5_s1", {"k": 5, "suppression": 0.01, "metric": "loss", "gs_factor": 0.2}),
    ("loss_gs08_k5_s1", {"k": 5, "suppression": 0.01, "metric": "loss", "gs_factor": 0.8}),
    ("loss_gs08_k10_s2", {"k": 10, "suppression": 0.02, "metric": "loss", "gs_factor": 0.8}),
    ("classification_gs02_k5_s1", {"k": 5, "suppression": 0.01, "metric": "classification", "gs_factor": 0.2}),
    ("classification_gs08_k5_s1", {"k": 5, "suppression": 0.01, "metric": "classification", "gs_factor": 0.8}),
    # age microaggregated (not a lattice dimension: 7 generalised QIs), released values compared too
    ("micro_mean_k5_s0_loss", {"k": 5, "suppression": 0.0, "metric": "loss",
                               "microaggregate": {"age": "arithmetic_mean"}}),
    ("micro_mean_k10_s1_loss", {"k": 10, "suppression": 0.01, "metric": "loss",
                                "microaggregate": {"age": "arithmetic_mean"}}),
    ("micro_median_k5_s1_loss", {"k": 5, "suppression": 0.01, "metric": "loss",
                                 "microaggregate": {"age": "median"}}),
    ("micro_median_k10_s0_dm", {"k": 10, "suppression": 0.0, "metric": "discernibility",
                                "microaggregate": {"age": "median"}}),
    ("micro_mean_k5_s1_loss_gs08", {"k": 5, "suppression": 0.01, "metric": "loss", "gs_factor": 0.8,
                                    "microaggregate": {"age": "arithmetic_mean"}}),
]
QUICK = {"loss_k5_s0", "dm_star_k5_s0", "beta_basic_1", "t_ordered_02", "profit_prosecutor_no_attack_dm_s2"}
MODEL_KEYS = ("k", "k_map", "population_size", "k_map_estimator", "beta", "beta_variant", "delta_disclosure",
              "t", "t_distance", "population_uniqueness", "uniqueness_model", "profitability")


def _emit(d: dict) -> None:
    print(json.dumps(d), flush=True)


def build_arx(arx_git: Path, build: Path) -> str:
    """Compile ARX's classes the driver needs (module notes); returns the class path."""
    build.mkdir(parents=True, exist_ok=True)
    git = ["git", "--git-dir", str(arx_git / ".git") if (arx_git / ".git").exists() else str(arx_git)]
    src = build / "src" / "main"
    if not src.exists():
        tar = subprocess.run([*git, "archive", TAG, "src/main"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "x", "-C", str(build)], input=tar, check=True)
    jars = []
    names = subprocess.run([*git, "ls-tree", "-r", "--name-only", TAG, "lib/ant"], check=True,
                           capture_output=True, text=True).stdout.split()
    for name in names:
        if not name.endswith(".jar") or any(s in name for s in ("swt", "eclipse", "ojdbc", "mysql", "jtds")):
            continue
        dest = build / name
        if not dest.exists():
            blob = subprocess.run([*git, "show", f"{TAG}:{name}"], capture_output=True)
            if blob.returncode != 0:
                continue   # a jar absent from the clone: the stand-ins cover what the search needs
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(blob.stdout)
        jars.append(str(dest))
    stubs = build / "stubs"
    for rel, text in STUBS.items():
        (stubs / rel).parent.mkdir(parents=True, exist_ok=True)
        (stubs / rel).write_text(text)
    classes = build / "classes"
    driver = ROOT / "benchmarks" / "arx_driver" / "ArxCompare.java"
    stamp = classes / "ArxCompare.class"
    cp = ":".join(jars)
    if not stamp.exists() or stamp.stat().st_mtime < driver.stat().st_mtime:
        shutil.rmtree(classes, ignore_errors=True)
        classes.mkdir()
        subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(classes), "-cp", cp,
                        "-sourcepath", f"{src}:{stubs}", str(driver)], check=True)
    return f"{classes}:{cp}"


def arx_line(name: str, s: dict, dump_dir: Path | None = None) -> str:
    tok = {"id": name, "qis": ",".join(QIS8), "sensitive": SENS, "suppression": s["suppression"],
           "metric": {"discernibility": "dm"}.get(s["metric"], s["metric"])}
    if "k" in s:
        tok["k"] = s["k"]
    if "k_map" in s:
        tok.update(kmap=s["k_map"], population=s["population_size"], estimator=s["k_map_estimator"])
    if "beta" in s:
        tok.update(beta=s["beta"], beta_variant=s["beta_variant"])
    if "delta_disclosure" in s:
        tok["delta"] = s["delta_disclosure"]
    if s.get("t_distance") == "ordered":
        tok["t_ordered"] = s["t"]
    if "population_uniqueness" in s:
        tok.update(uniqueness=s["population_uniqueness"], population=s["population_size"],
                   uniqueness_model=s["uniqueness_model"])
    if "profitability" in s:
        tok["profitability"] = s["profitability"]
        if s["profitability"].startswith("journalist"):
            tok["payout_attacker"] = "journalist"
    if "game" in s:
        tok.update(zip(("benefit", "publisher_loss", "gain", "cost"), s["game"]))
    if "subset_mod" in s:
        tok["subset_mod"] = s["subset_mod"]
    if "gs_factor" in s:
        tok["gs"] = s["gs_factor"]
    for column, function in s.get("microaggregate", {}).items():   # one microaggregated column a case
        tok["microagg"] = f"{column}:{function}"
        if dump_dir is not None:
            tok["dump"] = dump_dir / f"{name}.txt"
    return " ".join(f"{k}={v}" for k, v in tok.items())


def run_arx(classpath: str, cases: list, dump_dir: Path | None = None) -> dict:
    lines = "\n".join(arx_line(n, s, dump_dir) for n, s in cases) + "\n"
    res = subprocess.run(["java", "-Xmx4g", "-cp", classpath, "ArxCompare", str(SHARED / "arx_adult.csv"),
                          str(SHARED / "arx_adult_hierarchies")], input=lines, capture_output=True, text=True,
                         check=True)
    out = {}
    for line in res.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            out[d["id"]] = d
    return out


def run_sdckit(problem: Problem, s: dict, data: pd.DataFrame | None = None) -> dict:
    cb = CostBenefit(*s["game"]) if "game" in s else None
    models = make_models(cost_benefit=cb, **{k: v for k, v in s.items() if k in MODEL_KEYS})
    problem.clear_cache()
    prepare_problem(problem, data if data is not None else pd.DataFrame(index=range(problem.n)),
                    gs_factor=s.get("gs_factor", 0.5), microaggregate=s.get("microaggregate"))
    t, c = time.perf_counter(), time.process_time()
    ev = Evaluator(problem, models, s["suppression"], s["metric"], cost_benefit=cb)
    r = exact(ev)
    released = None
    if s.get("microaggregate"):   # the released values of the microaggregated column(s)
        out, sup = generalise_frame(data, ev, r.levels)
        released = microaggregate_frame(data, out, sup, problem.qis, s["microaggregate"])
    return {"levels": r.level_map(), "value": r.value, "cpu_seconds": round(time.process_time() - c, 4),
            "seconds": round(time.perf_counter() - t, 4), "nodes_checked": r.nodes_checked, "optimal": r.optimal,
            "released": released}


def _run_child(cmd: list[str], stdin_text: str, folder: Path, name: str) -> tuple[str, dict]:
    """Run ``cmd`` as a child process with ``stdin_text`` on its standard input; returns its
    standard output and its resources from ``os.wait4``: peak resident memory (``ru_maxrss``)
    and CPU seconds (user + system) of that child alone, and its wall seconds."""
    inp, out, err = folder / f"{name}.in", folder / f"{name}.out", folder / f"{name}.err"
    inp.write_text(stdin_text)
    t = time.perf_counter()
    with open(inp) as fi, open(out, "w") as fo, open(err, "w") as fe:
        proc = subprocess.Popen(cmd, stdin=fi, stdout=fo, stderr=fe, cwd=ROOT)
        _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{name} exited with {proc.returncode}: {err.read_text()[-2000:]}")
    return out.read_text(), {"peak_mb": round(ru.ru_maxrss / 1024, 1),
                             "process_cpu_seconds": round(ru.ru_utime + ru.ru_stime, 2),
                             "process_seconds": round(wall, 2)}


def sdckit_child(folder: Path, limit: float, mode: str) -> None:
    """The sdckit side of the scale case, run in its own process: read ``data.csv`` and the
    ``h_<qi>.csv`` hierarchies of ``folder`` as ``sdckit anonymise`` does, encode, search
    (``limit``: the anytime search with ``--limit`` CPU seconds; ``optimum``: the exact search,
    no limit), print one JSON line."""
    from sdckit.lattice import KAnonymity  # noqa: PLC0415
    from sdckit.lattice.anytime import anytime  # noqa: PLC0415

    c0 = time.process_time()
    data = pd.read_csv(folder / "data.csv", dtype=str, keep_default_na=False)
    qis = list(data.columns)
    hier = find_hierarchies(folder, qis)
    p = Problem(data, qis, hier)
    del data   # the search needs only the encoded patterns
    ev = Evaluator(p, [KAnonymity(5)], 0.01, "discernibility")
    c1 = time.process_time()
    events: list[dict] = []
    if mode == "optimum":
        r = exact(ev)
    else:
        r = anytime(ev, time_limit=limit, progress=events.append)
    c2 = time.process_time()
    _emit({"dm": r.value, "bound": r.bound, "optimal": r.optimal, "levels": list(r.levels),
           "nodes_checked": r.nodes_checked, "n_nodes": p.n_nodes, "method": r.method,
           "read_encode_cpu_seconds": round(c1 - c0, 2), "search_cpu_seconds": round(c2 - c1, 2),
           "events": events})


def _released_equal(released: pd.DataFrame, arx_values: list[str] | None, micro: dict) -> dict:
    """Whether sdckit's released values of the (one) microaggregated column equal ARX's output, row by
    row: ``*`` for ``*``, numbers within 1e-9 relative (ARX prints Java's shortest double)."""
    column = next(iter(micro))
    if arx_values is None or len(arx_values) != len(released):
        return {"same_released": False, "released_note": "no ARX output to compare"}
    ours = released[column].astype(str).to_numpy()
    theirs = np.asarray(arx_values, dtype=object)
    star = (ours == "*") | (theirs == "*")
    same_star = bool(((ours == "*") == (theirs == "*")).all())
    a = pd.to_numeric(pd.Series(ours[~star]), errors="coerce").to_numpy()
    b = pd.to_numeric(pd.Series(theirs[~star]), errors="coerce").to_numpy()
    diff = np.abs(a - b) / np.maximum(1.0, np.abs(b))
    worst = float(np.nanmax(diff)) if diff.size else 0.0
    return {"same_released": same_star and not np.isnan(diff).any() and worst <= 1e-9,
            "released_max_rel_diff": worst, "n_released_suppressed": int((theirs == "*").sum())}


def scale_case(classpath: str, n: int, limit: float, mode: str = "limit", lattice: str = "full") -> None:
    """Issue 42's scale case (module notes): each tool in its own child process on the same files."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_lattice import synthetic  # noqa: PLC0415

    data, hier = synthetic(n, lattice == "quick", np.random.default_rng(20261123))
    qis = list(hier)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data.to_csv(folder / "data.csv", index=False)
        del data
        for q, h in hier.items():
            h.table.to_csv(folder / f"h_{q}.csv", index=False, header=False)
        line = f"id=scale qis={','.join(qis)} sensitive=x0 k=5 suppression=0.01 metric=dm hier_prefix=h_"
        if mode == "limit":
            line += f" algorithm=bottom_up time_limit_ms={int(limit * 1000)}"
        out, arx_proc = _run_child(["java", "-Xmx8g", "-cp", classpath, "ArxCompare", str(folder / "data.csv"),
                                    str(folder)], line + "\n", folder, "arx")
        arx = next(json.loads(x) for x in out.splitlines() if x.startswith("{"))
        out, sdc_proc = _run_child([sys.executable, str(Path(__file__).resolve()), "--sdckit-child", str(folder),
                                    "--limit", str(limit), "--mode", mode], "", folder, "sdckit")
        sdc = json.loads(out.splitlines()[-1])
    arx_dm, dm, bound = arx.get("value"), sdc["dm"], sdc["bound"]
    events = sdc.pop("events")
    _emit({"case": f"synthetic_12qi_{'anytime' if mode == 'limit' else 'optimum'}", "n": n,
           "n_nodes": sdc["n_nodes"], "lattice": lattice, "mode": mode, "limit": limit if mode == "limit" else None,
           "sdckit_method": sdc["method"], "sdckit_dm": dm, "sdckit_bound": bound,
           "gap": dm / bound if bound > 0 else None,
           "relative_gap": (dm - bound) / dm if dm > 0 else None, "optimal": sdc["optimal"],
           "sdckit_levels": sdc["levels"], "nodes_checked": sdc["nodes_checked"],
           "cpu_seconds": sdc["search_cpu_seconds"], "read_encode_cpu_seconds": sdc["read_encode_cpu_seconds"],
           "process_cpu_seconds": sdc_proc["process_cpu_seconds"], "seconds": sdc_proc["process_seconds"],
           "peak_mb": sdc_proc["peak_mb"],
           "arx_dm": arx_dm, "arx_error": arx.get("error"), "arx_levels": list((arx.get("levels") or {}).values()),
           "arx_cpu_seconds": arx.get("cpu_seconds"), "arx_seconds": arx.get("seconds"),
           "arx_process_cpu_seconds": arx_proc["process_cpu_seconds"], "arx_process_seconds": arx_proc["process_seconds"],
           "arx_peak_mb": arx_proc["peak_mb"],
           "sdckit_dm_le_arx": arx_dm is not None and dm <= arx_dm,
           "same_dm": arx_dm is not None and abs(dm - arx_dm) <= 1e-9 * max(1.0, abs(arx_dm)),
           "peak_le_arx": sdc_proc["peak_mb"] <= arx_proc["peak_mb"],
           "cpu_ratio_arx_over_sdckit": round(arx["cpu_seconds"] / sdc["search_cpu_seconds"], 2)
           if arx.get("cpu_seconds") and sdc["search_cpu_seconds"] > 0 else None,
           "process_cpu_ratio_arx_over_sdckit": round(arx_proc["process_cpu_seconds"]
                                                      / max(sdc_proc["process_cpu_seconds"], 1e-9), 2),
           "first_best_below_arx_cpu_seconds": next((e["cpu_seconds"] for e in events
                                                     if arx_dm is not None and e["best"] is not None
                                                     and e["best"] <= arx_dm), None),
           "events": events, "load_average": [load, os.getloadavg()[0]]})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arx-git", type=Path, default=None, help="clone or bare mirror of arx-deidentifier/arx")
    ap.add_argument("--build", type=Path, default=Path.home() / ".cache" / "sdckit-arx")
    ap.add_argument("--quick", action="store_true", help="four cases")
    ap.add_argument("--only", default=None, help="cases by name, comma-separated (a name ending in * a prefix)")
    ap.add_argument("--scale", type=int, default=None, help="records of the synthetic scale case (instead)")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds each tool gets in the scale case")
    ap.add_argument("--mode", choices=("limit", "optimum"), default="limit",
                    help="scale case: each tool with --limit, or both searching for the proven optimum")
    ap.add_argument("--lattice", choices=("full", "quick"), default="full",
                    help="scale case: heights 3 and 2 (2,985,984 nodes) or 2 and 1 (46,656 nodes)")
    ap.add_argument("--sdckit-child", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.sdckit_child is not None:
        sdckit_child(args.sdckit_child, args.limit, args.mode)
        return 0
    if args.arx_git is None:
        ap.error("--arx-git is required")
    if args.scale:
        scale_case(build_arx(args.arx_git, args.build), args.scale, args.limit, args.mode, args.lattice)
        return 0
    if not (SHARED / "arx_adult.csv").exists():
        _emit({"case": "adult", "skipped": "the adult data are absent"})
        return 0
    only = None if args.only is None else [x.strip() for x in args.only.split(",") if x.strip()]

    def wanted(n: str) -> bool:
        return only is None or any(n == o or (o.endswith("*") and n.startswith(o[:-1])) for o in only)

    cases = [(n, s) for n, s in CASES if (not args.quick or n in QUICK) and wanted(n)]
    t = time.perf_counter()
    classpath = build_arx(args.arx_git, args.build)
    build_s = time.perf_counter() - t
    dump_dir = Path(tempfile.mkdtemp(prefix="sdckit-arx-"))
    try:
        arx = run_arx(classpath, cases, dump_dir)
        dumps = {n: (dump_dir / f"{n}.txt").read_text().splitlines() for n, s in cases
                 if s.get("microaggregate") and (dump_dir / f"{n}.txt").exists()}
    finally:
        shutil.rmtree(dump_dir, ignore_errors=True)
    data = pd.read_csv(SHARED / "arx_adult.csv", dtype=str)
    problem_hier = find_hierarchies(SHARED / "arx_adult_hierarchies", QIS8)
    problem = Problem(data, QIS8, problem_hier, sensitive=SENS)
    exact(Evaluator(problem, make_models(k=5), 0.0, "discernibility"))   # warm-up (numba)
    subsets: dict[int, Problem] = {}
    for name, s in cases:
        prob = problem
        if "subset_mod" in s:   # the research subset (every subset_mod-th row) against the whole file
            mod = int(s["subset_mod"])
            if mod not in subsets:
                subsets[mod] = Problem(data.iloc[::mod].reset_index(drop=True), QIS8, problem_hier,
                                       sensitive=SENS, population=data)
            prob = subsets[mod]
        micro = s.get("microaggregate", {})
        if micro:   # the microaggregated columns are not lattice dimensions
            qis = [q for q in QIS8 if q not in micro]
            prob = Problem(data, qis, {q: problem_hier[q] for q in qis}, sensitive=SENS)
        ours = run_sdckit(prob, s, data)
        theirs = arx.get(name, {"error": "no output"})
        tv = theirs.get("value")
        same_value = tv is not None and abs(ours["value"] - tv) <= 1e-8 * max(1.0, abs(tv))
        extra = {}
        if micro:
            extra = _released_equal(ours["released"], dumps.get(name), micro)
        _emit({**extra, "case": name, "n": prob.n, "arx_n": theirs.get("n", problem.n), "settings": s, "sdckit_levels": ours["levels"],
               "arx_levels": theirs.get("levels"), "sdckit_value": ours["value"], "arx_value": tv,
               "same_value": bool(same_value), "same_node": ours["levels"] == theirs.get("levels"),
               "sdckit_optimal": ours["optimal"], "nodes_checked": ours["nodes_checked"],
               "cpu_seconds": ours["cpu_seconds"], "seconds": ours["seconds"],
               "arx_cpu_seconds": theirs.get("cpu_seconds"), "arx_seconds": theirs.get("seconds"),
               "arx_error": theirs.get("error"), "build_seconds": round(build_s, 1),
               "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
               "load_average": os.getloadavg()[0]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
