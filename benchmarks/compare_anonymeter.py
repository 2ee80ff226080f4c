"""sdckit's attacks beside Anonymeter's (Giomi et al. 2023) on the same files, in one run.

Run from the project root:  .venv/bin/python benchmarks/compare_anonymeter.py [--quick] [--seeds N]

Anonymeter 1.1.0 pins numpy < 1.27 and pyarrow < 22, which the project's locked environment
cannot hold, so it runs in its own virtual environment, ``.venv-anonymeter`` (ignored by git),
called by this script as a subprocess (``--worker``). Make it once with ``--setup`` (or by hand:
``.uv/bin/uv venv --python .venv/bin/python .venv-anonymeter`` then
``.uv/bin/uv pip install --python .venv-anonymeter/bin/python anonymeter==1.1.0``).

Data, per seed s (0 .. N-1): the census teaching sample (``src/sdckit/data/
uk_census2011_teaching_10k.csv``, less ``Person ID``) cut at random (seed s) into two halves:
the original records (5,000) and the control records (5,000). Two releases of the original
half are attacked:

(a) ``synthetic``: a file synthesised from the original half by ``sdckit.synth`` (sequential
    CART, seed s). When ``sdckit.synth`` cannot be imported or fails, a stand-in is used and
    every line says so (``"synthesiser": "stand-in"``): each original record resampled with
    replacement and each of its cells replaced, with probability 0.2, by the value of another
    random original record (seed s).
(b) ``masked``: the demo's release (``src/sdckit/data/demo_release.toml``: recoding, PRAM,
    local suppression) run on the original half (its gate is not applied: only the released
    data are needed). The published recodings of Age and Marital Status are applied to the
    original and control records, as an intruder would.

Both tools get the same files, every column as text (a missing value is the category
``<missing>``), so both treat every column as categorical, except in the numeric-secret line.
Settings are Anonymeter's defaults: ``n_attacks = 500``; singling out multivariate with
``n_cols = 3``; linkability with the first 8 columns in one file and the other 9 in the second,
``n_neighbors = 1``; inference of ``Health`` from the 16 other columns, and once more with
``NUMERIC`` (Health and three other coded columns) as numbers: Anonymeter's evaluator told
``regression=True``, sdckit with ``numeric=NUMERIC``, both with the tolerance 0.05 relative to
the guess (Anonymeter's rule, sdckit's ``relative_to="guess"``). For linkability and inference
the script draws the 500 original and 500 control targets (seed s) and gives both tools exactly
those records, so the two tools attack the same people; singling out needs the whole files.
Anonymeter runs with ``seed = s`` (singling out) and ``numpy.random.seed(s)`` (its linkability
and inference draw from numpy's global generator); sdckit with ``rng = s``.

What the script does not match, and why: (i) given all the records as targets, each tool only
reorders them (Anonymeter with ``DataFrame.sample``, sdckit with its generator), which changes
no count; (ii) the naive attacker's draws (Anonymeter: ``syn.sample`` from numpy's global
generator for inference, an unseeded ``default_rng()`` for linkability) enter only the
baseline rate, never the risk; (iii) the singling-out predicates are each tool's own writer's
(reproducing Anonymeter's writer draw for draw would mean re-implementing its code), and its
correction of the control count to the original's size uses unseeded polars subsamples
(``anonymeter/evaluators/singling_out_evaluator.py``, ``_measure_queries_success``); so
singling out is compared on shared predicates (comparison 1).

One JSON line per check, then a summary line per comparison and attack:

0. ``"same neighbours"`` on the census halves: Anonymeter's neighbour search
   (``MixedTypeKNeighbors``) and sdckit's (``tie_break="quicksort"``, and ``"first"`` for
   contrast) of every record of one half (5,000; 500 with ``--quick``) among the other half's,
   ``k`` = 1 and 3, with ``NUMERIC`` as numbers (Hours worked per week's -9 read as missing):
   the number of queries whose neighbour indices are identical.
1. ``"same queries"`` (singling out): both tools count the same predicates, twice: those
   Anonymeter wrote (recorded from its evaluator run by wrapping its query writer, unchanged,
   and given to sdckit's ``singling_out(queries=...)``) and those sdckit wrote
   (``singling_out_queries``, given to Anonymeter's evaluator in place of its own writer, so
   that its own code counts them). ``identical_counts``: the same number of predicates that
   isolate one original record and one control record. The risks can still differ a little
   when the original and control halves hold different numbers of distinct records: both tools
   then correct the control count to the original's size, sdckit with the exact expected count
   (hypergeometric; a fit of Cohen & Nissim's model when the control is smaller), Anonymeter
   with that model fitted to counts on random subsamples that its seed does not govern.
2. ``"own draws"``: each tool's own predicates and tie-breaks (sdckit's default random ties),
   the risks side by side: two independent estimates of one quantity.
3. ``"same neighbours"`` (linkability, inference, inference of the numeric secret): sdckit with
   ``tie_break="quicksort"`` on the same targets: the counts must be identical to Anonymeter's.

Each risk line has both risks with their 95% intervals, ``sdckit_in_anonymeter_ci`` and
``anonymeter_in_sdckit_ci``, ``within_combined_error`` (the difference at most 1.96 times the
two errors combined, the test that two independent estimates agree), and both tools' wall and
CPU seconds. Two independent estimates of one quantity, each with a 95% interval, fall inside
each other's interval about 84% of the time when the risk is away from 0 (their difference has
twice the variance); the combined test holds about 95% of the time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ANON_VENV = ROOT / ".venv-anonymeter"
ANON_PY = ANON_VENV / "bin" / "python"
MISSING = "<missing>"
N_ATTACKS = 500
SECRET = "Health"
#: the columns given as numbers in the numeric-secret line and the neighbour check (the others are text);
#: none of them is recoded or suppressed by the demo release
NUMERIC = ["Health", "Family Composition", "Hours worked per week", "Approximated Social Grade"]


# --------------------------------------------------------------------------- Anonymeter side

def _terms_of(node, out):
    """The (column, operator, value) terms of a polars conjunction, from its JSON form."""
    ops = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtEq": "<=", "Gt": ">", "GtEq": ">="}
    if "BinaryExpr" in node:
        b = node["BinaryExpr"]
        if b["op"] == "And":
            _terms_of(b["left"], out)
            _terms_of(b["right"], out)
            return out
        lit = b["right"]["Literal"]
        kind = next(iter(lit.values()))              # {"Scalar": {"String": v}} or {"Dyn": {"Int": v}}
        out.append((b["left"]["Column"], ops[b["op"]], next(iter(kind.values()))))
        return out
    f = node["Function"]
    name = f["function"]["Boolean"]
    if name == "IsNull":
        out.append((f["input"][0]["Column"], "is_null", None))
    elif name == "Not" and f["input"][0]["Function"]["function"]["Boolean"] == "IsNull":
        out.append((f["input"][0]["Function"]["input"][0]["Column"], "not_null", None))
    else:
        raise ValueError(f"unsupported query node {name}")
    return out


def _expr_of(terms):
    """A polars conjunction of (column, operator, value) terms."""
    import operator
    from functools import reduce

    import polars as pl

    ops = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
           ">=": operator.ge}
    parts = []
    for col, op, val in terms:
        if op == "is_null":
            parts.append(pl.col(col).is_null())
        elif op == "not_null":
            parts.append(~pl.col(col).is_null())
        else:
            parts.append(ops[op](pl.col(col), val))
    return reduce(operator.and_, parts)


def worker(folder: str, seed: int) -> None:
    """Run Anonymeter's three evaluators on the files in ``folder``; print one JSON object.

    Singling out runs twice: with the queries Anonymeter writes (they are recorded, by wrapping
    its query writer without changing it, and returned), and with the queries sdckit wrote
    (``queries_sdckit.json``) in place of its own, so that Anonymeter's code counts them.
    """
    import warnings

    import numpy as np
    import pandas as pd
    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator
    from anonymeter.evaluators import singling_out_evaluator as soe
    from anonymeter.stats.confidence import residual_success

    warnings.filterwarnings("ignore")
    d = Path(folder)

    def read(name):
        return pd.read_csv(d / f"{name}.csv", dtype=str, keep_default_na=False)

    ori, con, rel = read("original"), read("control"), read("released")
    ori_t, con_t = read("original_targets"), read("control_targets")
    spec = json.loads((d / "spec.json").read_text())
    out = {}

    def record(name, ev, t0, c0):
        res = ev.results()
        risk = ev.risk()
        raw = residual_success(res.attack_rate, res.control_rate)
        out[name] = {"risk": risk.value, "ci": list(risk.ci), "raw_risk": raw.value, "risk_error": raw.error,
                     "attack_rate": res.attack_rate.value, "control_rate": res.control_rate.value,
                     "baseline_rate": res.baseline_rate.value, "n_success": int(res.n_success),
                     "n_control": float(res.n_control), "seconds": time.perf_counter() - t0,
                     "cpu_seconds": time.process_time() - c0}

    written = []
    own_writer = soe._generate_singling_out_queries

    def recording_writer(**kwargs):
        queries = own_writer(**kwargs)
        written.append(queries)
        return queries

    soe._generate_singling_out_queries = recording_writer
    t0, c0 = time.perf_counter(), time.process_time()
    ev = SinglingOutEvaluator(ori, rel, control=con, n_attacks=N_ATTACKS, n_cols=3, seed=seed)
    record("singling_out", ev.evaluate(mode="multivariate"), t0, c0)
    out["singling_out"]["n_control_plain"] = len(soe._evaluate_queries_and_return_successful(
        df=ev._control, queries=written[-1]))
    out["queries"] = [_terms_of(json.loads(q.meta.serialize(format="json")), []) for q in written[-1]]
    given = [_expr_of(t) for t in json.loads((d / "queries_sdckit.json").read_text())]
    soe._generate_singling_out_queries = lambda **kwargs: list(given)
    t0, c0 = time.perf_counter(), time.process_time()
    ev = SinglingOutEvaluator(ori, rel, control=con, n_attacks=N_ATTACKS, n_cols=3, seed=seed)
    record("singling_out_sdckit_queries", ev.evaluate(mode="multivariate"), t0, c0)
    out["singling_out_sdckit_queries"]["n_control_plain"] = len(soe._evaluate_queries_and_return_successful(
        df=ev._control, queries=given))
    soe._generate_singling_out_queries = own_writer
    np.random.seed(seed)  # noqa: NPY002 - Anonymeter draws its targets from numpy's global generator
    t0, c0 = time.perf_counter(), time.process_time()
    ev = LinkabilityEvaluator(ori_t, rel, aux_cols=(spec["aux_a"], spec["aux_b"]), control=con_t,
                              n_attacks=len(ori_t), n_neighbors=1)
    record("linkability", ev.evaluate(n_jobs=1), t0, c0)
    np.random.seed(seed)  # noqa: NPY002 - Anonymeter draws its targets from numpy's global generator
    t0, c0 = time.perf_counter(), time.process_time()
    ev = InferenceEvaluator(ori_t, rel, aux_cols=spec["aux"], secret=SECRET, control=con_t, n_attacks=len(ori_t))
    record("inference", ev.evaluate(n_jobs=1), t0, c0)
    # a numeric secret: the NUMERIC columns as numbers, Anonymeter told regression=True (its default,
    # regression=False, would compare the numbers for equality)
    ori_n, con_n, rel_n = (as_numbers(f, NUMERIC) for f in (ori_t, con_t, rel))
    np.random.seed(seed)  # noqa: NPY002 - Anonymeter draws its targets from numpy's global generator
    t0, c0 = time.perf_counter(), time.process_time()
    ev = InferenceEvaluator(ori_n, rel_n, aux_cols=spec["aux"], secret=SECRET, control=con_n, n_attacks=len(ori_n),
                            regression=True)
    record("inference_numeric", ev.evaluate(n_jobs=1), t0, c0)
    print(json.dumps(out))


def as_numbers(frame, columns):
    """``frame`` (text) with ``columns`` as numbers, the category ``<missing>`` as NaN."""
    import pandas as pd

    out = frame.copy()
    for c in columns:
        out[c] = pd.to_numeric(out[c].where(out[c] != MISSING), errors="raise")
    return out


def neighbours_worker(folder: str, k: int) -> None:
    """Anonymeter's neighbour search (``MixedTypeKNeighbors``, one thread) of every row of
    ``queries.csv`` among the rows of ``candidates.csv``; the columns named in ``numeric.json``
    are numbers, the others text. Prints one JSON object: the indices and the times."""
    import warnings

    import anonymeter.evaluators  # noqa: F401 - imported first: the neighbours module alone hits an import cycle
    import pandas as pd
    from anonymeter.neighbors.mixed_types_kneighbors import MixedTypeKNeighbors

    warnings.filterwarnings("ignore")
    d = Path(folder)
    numeric = json.loads((d / "numeric.json").read_text())
    cand, queries = (as_numbers(pd.read_csv(d / f"{name}.csv", dtype=str, keep_default_na=False), numeric)
                     for name in ("candidates", "queries"))
    t0, c0 = time.perf_counter(), time.process_time()
    idx = MixedTypeKNeighbors(n_neighbors=k, n_jobs=1).fit(cand).kneighbors(queries)
    print(json.dumps({"indices": idx.tolist(), "seconds": time.perf_counter() - t0,
                      "cpu_seconds": time.process_time() - c0}))


def setup() -> None:
    uv = ROOT / ".uv" / "bin" / "uv"
    subprocess.run([str(uv), "venv", "--python", str(ROOT / ".venv" / "bin" / "python"), str(ANON_VENV)], check=True)
    subprocess.run([str(uv), "pip", "install", "--python", str(ANON_PY), "anonymeter==1.1.0"], check=True)


# --------------------------------------------------------------------------- sdckit side

def anonymeter_neighbours(candidates, queries, numeric, k):
    """Anonymeter's ``k`` nearest candidates of every query (text frames; ``numeric`` columns
    converted to numbers on its side), through :func:`neighbours_worker`."""
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        candidates.to_csv(d / "candidates.csv", index=False)
        queries.to_csv(d / "queries.csv", index=False)
        (d / "numeric.json").write_text(json.dumps(list(numeric)))
        proc = subprocess.run([str(ANON_PY), str(Path(__file__).resolve()), "--neighbours-worker", tmp, str(k)],
                              capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    if proc.returncode != 0:
        raise RuntimeError(f"Anonymeter neighbour worker failed: {proc.stderr.strip().splitlines()[-1:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return np.asarray(out["indices"], dtype=np.int64), out["seconds"], out["cpu_seconds"]


def sdckit_neighbours(candidates, queries, numeric, k, tie_break="quicksort"):
    """sdckit's ``k`` nearest candidates of every query with ``tie_break`` (same frames as
    :func:`anonymeter_neighbours`); returns (indices, wall seconds, CPU seconds)."""
    import numpy as np

    from sdckit.attacks.encode import encode_frames
    from sdckit.attacks.neighbours import nearest_released

    t0, c0 = time.perf_counter(), time.process_time()
    cand, qry = as_numbers(candidates, numeric), as_numbers(queries, numeric)
    enc = encode_frames(cand, qry, None, numeric=list(numeric))
    idx, _ = nearest_released(enc, enc.original, np.arange(len(enc.columns)), k, np.random.default_rng(0),
                              tie_break)
    return idx, time.perf_counter() - t0, time.process_time() - c0


def _agreement(sd_risk, sd_ci, sd_raw, sd_err, a):
    """The three agreement tests between an sdckit result and an Anonymeter one."""
    import numpy as np

    s_in = bool(a["ci"][0] - 1e-12 <= sd_risk <= a["ci"][1] + 1e-12)
    a_in = bool(sd_ci[0] - 1e-12 <= a["risk"] <= sd_ci[1] + 1e-12)
    combined = bool(abs(sd_raw - a["raw_risk"]) <= 1.959964 * float(np.hypot(sd_err, a["risk_error"])))
    return s_in, a_in, combined


def _sdckit_attack(attack, ori, released, con, ori_t, con_t, aux_a, aux_b, aux, seed, tie_break="random"):
    """One of sdckit's attacks with the comparison's settings (``inference_numeric``: the
    NUMERIC columns as numbers, the tolerance relative to the guess as Anonymeter's)."""
    from sdckit.attacks import inference, linkability, singling_out

    if attack == "singling_out":
        return singling_out(ori, released, con, mode="multivariate", n_attacks=N_ATTACKS, n_cols=3, rng=seed)
    if attack == "linkability":
        return linkability(ori_t, released, con_t, aux_a=aux_a, aux_b=aux_b, n_attacks=N_ATTACKS, rng=seed,
                           tie_break=tie_break)
    if attack == "inference_numeric":
        return inference(as_numbers(ori_t, NUMERIC), as_numbers(released, NUMERIC), as_numbers(con_t, NUMERIC),
                         secret=SECRET, aux=aux, n_attacks=N_ATTACKS, rng=seed, tie_break=tie_break,
                         numeric=NUMERIC, tolerance=0.05, relative_to="guess")
    return inference(ori_t, released, con_t, secret=SECRET, aux=aux, n_attacks=N_ATTACKS, rng=seed,
                     tie_break=tie_break)


def neighbour_check(census, quick: bool) -> None:
    """The neighbours themselves: Anonymeter's and sdckit's (``tie_break="quicksort"``, and
    ``"first"`` for contrast) of every record of one census half among the other half's, with
    the NUMERIC columns as numbers (one of them with missing values: -9, "no code required",
    read as missing in Hours worked per week)."""
    import numpy as np

    perm = np.random.default_rng(0).permutation(len(census))
    half = len(census) // 2
    frame = _text(census.drop(columns=["Person ID"]))
    frame["Hours worked per week"] = frame["Hours worked per week"].replace("-9", MISSING)
    cand = frame.iloc[perm[:half]].reset_index(drop=True)
    queries = frame.iloc[perm[half:]].reset_index(drop=True)
    if quick:
        queries = queries.iloc[:500]
    for k in (1, 3):
        a_idx, a_wall, a_cpu = anonymeter_neighbours(cand, queries, NUMERIC, k)
        s_idx, s_wall, s_cpu = sdckit_neighbours(cand, queries, NUMERIC, k)
        f_idx, f_wall, f_cpu = sdckit_neighbours(cand, queries, NUMERIC, k, tie_break="first")
        print(json.dumps({
            "case": "census halves", "comparison": "same neighbours", "n": len(cand), "n_queries": len(queries),
            "k": k, "numeric_columns": NUMERIC,
            "queries_identical_quicksort": int((s_idx == a_idx).all(axis=1).sum()),
            "queries_identical_first": int((f_idx == a_idx).all(axis=1).sum()),
            "seconds": round(s_wall, 4), "cpu_seconds": round(s_cpu, 4),
            "first_seconds": round(f_wall, 4), "first_cpu_seconds": round(f_cpu, 4),
            "anonymeter_seconds": round(a_wall, 4), "anonymeter_cpu_seconds": round(a_cpu, 4)}), flush=True)


def _risk_line(head, comparison, attack, res, a, tally, extra=None):
    """Print one line comparing an sdckit result with an Anonymeter one; add it to ``tally``."""
    s_in, a_in, combined = _agreement(res.risk, res.ci, res.raw_risk, res.risk_error, a)
    row = tally.setdefault(attack, {"lines": 0, "sdckit_in_anonymeter_ci": 0, "anonymeter_in_sdckit_ci": 0,
                                    "within_combined_error": 0, "identical_counts": 0})
    identical = res.n_success == a["n_success"] and abs(res.n_control - a["n_control"]) < 1e-9
    for key, v in zip(row, (1, s_in, a_in, combined, identical)):
        row[key] += int(v)
    print(json.dumps({
        **head, "comparison": comparison, "attack": attack,
        "sdckit_risk": round(res.risk, 6), "sdckit_ci": [round(v, 6) for v in res.ci],
        "anonymeter_risk": round(a["risk"], 6), "anonymeter_ci": [round(v, 6) for v in a["ci"]],
        "sdckit_counts": [int(res.n_success), round(float(res.n_control), 4)],
        "anonymeter_counts": [int(a["n_success"]), round(float(a["n_control"]), 4)], "identical_counts": identical,
        "sdckit_rates": [round(res.attack_rate, 4), round(res.control_rate, 4), round(res.baseline_rate, 4)],
        "anonymeter_rates": [round(a["attack_rate"], 4), round(a["control_rate"], 4), round(a["baseline_rate"], 4)],
        "sdckit_in_anonymeter_ci": s_in, "anonymeter_in_sdckit_ci": a_in, "within_combined_error": combined,
        "seconds": round(res.seconds, 4), "cpu_seconds": round(res.cpu_seconds, 4),
        "anonymeter_seconds": round(a["seconds"], 4), "anonymeter_cpu_seconds": round(a["cpu_seconds"], 4),
        **(extra or {})}), flush=True)


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="one seed, the synthetic file only, 500 neighbour queries")
    p.add_argument("--seeds", type=int, default=5, help="seeds 0 .. N-1 (default 5)")
    p.add_argument("--setup", action="store_true", help="make .venv-anonymeter first")
    args = p.parse_args()
    if args.setup:
        setup()
    if not ANON_PY.exists():
        print(json.dumps({"skipped": f"{ANON_VENV.name} is missing: run this script with --setup "
                                     "(Anonymeter's pins conflict with the project's locked numpy and pyarrow)"}))
        return
    sys.path.insert(0, str(ROOT / "src"))
    import numpy as np
    import pandas as pd

    from sdckit.attacks import singling_out, singling_out_queries

    census = pd.read_csv(ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv")
    neighbour_check(census, args.quick)
    seeds = range(1 if args.quick else args.seeds)
    cases = ("synthetic",) if args.quick else ("synthetic", "masked")
    keys = ("lines", "sdckit_in_anonymeter_ci", "anonymeter_in_sdckit_ci", "within_combined_error")
    same = dict.fromkeys(keys[:3] + ("identical_counts",), 0)
    own: dict = {}
    quick_sort: dict = {}
    for seed in seeds:
        perm = np.random.default_rng(seed).permutation(len(census))
        half = len(census) // 2
        orig_full = census.iloc[perm[:half]].reset_index(drop=True)
        ctrl_full = census.iloc[perm[half:]].reset_index(drop=True)
        for case in cases:
            t_make = time.perf_counter()
            if case == "synthetic":
                released, ori, con, label = _synthetic(orig_full, ctrl_full, seed)
            else:
                released, ori, con, label = _masked(orig_full, ctrl_full)
            make_seconds = time.perf_counter() - t_make
            cols = [c for c in ori.columns]
            aux_a, aux_b = cols[:8], cols[8:]
            aux = [c for c in cols if c != SECRET]
            rng = np.random.default_rng([seed, 1])
            ori_t = ori.iloc[rng.choice(len(ori), N_ATTACKS, replace=False)].reset_index(drop=True)
            con_t = con.iloc[rng.choice(len(con), N_ATTACKS, replace=False)].reset_index(drop=True)
            q_sdckit = singling_out_queries(ori, released, con, mode="multivariate", n_attacks=N_ATTACKS, n_cols=3,
                                            rng=seed)
            with tempfile.TemporaryDirectory() as tmp:
                d = Path(tmp)
                for name, f in (("original", ori), ("control", con), ("released", released),
                                ("original_targets", ori_t), ("control_targets", con_t)):
                    f.to_csv(d / f"{name}.csv", index=False)
                (d / "spec.json").write_text(json.dumps({"aux_a": aux_a, "aux_b": aux_b, "aux": aux}))
                (d / "queries_sdckit.json").write_text(json.dumps(q_sdckit))
                proc = subprocess.run([str(ANON_PY), __file__, "--worker", tmp, str(seed)], capture_output=True,
                                      text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
                if proc.returncode != 0:
                    raise SystemExit(f"Anonymeter worker failed: {proc.stderr.strip().splitlines()[-1:]}")
                anon = json.loads(proc.stdout.strip().splitlines()[-1])
            head = {"case": case, "synthesiser": label if case == "synthetic" else None, "seed": seed,
                    "n": len(ori), "n_control": len(con), "n_released": len(released), "n_attacks": N_ATTACKS}

            # 1. the same predicates, counted by both tools
            given = {"anonymeter": (anon["singling_out"], [tuple(map(tuple, q)) for q in anon["queries"]]),
                     "sdckit": (anon["singling_out_sdckit_queries"], q_sdckit)}
            for writer, (a, queries) in given.items():
                res = singling_out(ori, released, con, n_attacks=N_ATTACKS, n_cols=3, rng=seed, queries=queries)
                s_in, a_in, combined = _agreement(res.risk, res.ci, res.raw_risk, res.risk_error, a)
                plain = res.settings["n_control_before_size_correction"]
                identical = res.n_success == a["n_success"] and plain == a["n_control_plain"]
                for k, v in zip(same, (1, s_in, a_in, identical)):
                    same[k] += v
                print(json.dumps({
                    **head, "comparison": "same queries", "attack": "singling_out", "queries_written_by": writer,
                    "n_queries": res.settings["n_predicates"],
                    "n_original_distinct": res.settings["n_original_distinct"],
                    "n_control_distinct": res.settings["n_control_distinct"],
                    "sdckit_counts": [res.n_success, plain, round(res.n_control, 4)],
                    "anonymeter_counts": [a["n_success"], a["n_control_plain"], round(a["n_control"], 4)],
                    "identical_counts": identical,
                    "sdckit_risk": round(res.risk, 6), "sdckit_ci": [round(v, 6) for v in res.ci],
                    "anonymeter_risk": round(a["risk"], 6), "anonymeter_ci": [round(v, 6) for v in a["ci"]],
                    "sdckit_in_anonymeter_ci": s_in, "anonymeter_in_sdckit_ci": a_in,
                    "seconds": round(res.seconds, 4), "cpu_seconds": round(res.cpu_seconds, 4),
                    "anonymeter_seconds": round(a["seconds"], 4),
                    "anonymeter_cpu_seconds": round(a["cpu_seconds"], 4)}), flush=True)

            # 2. each tool's own draws (predicates; sdckit's default random tie-break)
            files = (ori, released, con, ori_t, con_t, aux_a, aux_b, aux, seed)
            for attack in ("singling_out", "linkability", "inference", "inference_numeric"):
                res = _sdckit_attack(attack, *files)
                _risk_line(head, "own draws", attack, res, anon[attack], own,
                           {"release_seconds": round(make_seconds, 3)})

            # 3. the nearest-neighbour attacks with Anonymeter's tie rule, on the same targets
            for attack in ("linkability", "inference", "inference_numeric"):
                res = _sdckit_attack(attack, *files, tie_break="quicksort")
                _risk_line(head, "same neighbours", attack, res, anon[attack], quick_sort)
    load = os.getloadavg()[0]
    print(json.dumps({"case": "summary", "comparison": "same queries", "attack": "singling_out", **same,
                      "load_average": load}), flush=True)
    for comparison, tally in (("own draws", own), ("same neighbours", quick_sort)):
        for attack, row in tally.items():
            print(json.dumps({"case": "summary", "comparison": comparison, "attack": attack, **row,
                              "load_average": load}), flush=True)


def _text(frame):
    """Every column as text, a missing value as the category ``<missing>``."""
    import pandas as pd

    out = {}
    for c in frame.columns:
        s = frame[c]
        out[c] = s.map(lambda v: MISSING if pd.isna(v) else (str(int(v)) if isinstance(v, float) and float(v).is_integer()
                                                              else str(v)))
    return pd.DataFrame(out)


def _synthetic(orig_full, ctrl_full, seed):
    """A synthetic file of the original half: sdckit.synth when it works, else the stand-in."""
    import numpy as np

    ori = _text(orig_full.drop(columns=["Person ID"]))
    con = _text(ctrl_full.drop(columns=["Person ID"]))
    try:
        from sdckit.synth.synthesis import Synthesiser

        released = _text(Synthesiser().fit(ori).draw(rng=seed).frame(ori))
        return released[ori.columns].reset_index(drop=True), ori, con, "sdckit.synth"
    except Exception as exc:  # noqa: BLE001 - any failure of the module under construction
        print(json.dumps({"note": f"sdckit.synth unavailable ({type(exc).__name__}: {exc}); using the stand-in"}),
              file=sys.stderr)
    rng = np.random.default_rng([seed, 2])
    n = len(ori)
    base = ori.to_numpy()[rng.integers(0, n, n)]
    donor = ori.to_numpy()[rng.integers(0, n, n)]
    swap = rng.random(base.shape) < 0.2
    import pandas as pd

    return pd.DataFrame(np.where(swap, donor, base), columns=ori.columns), ori, con, "stand-in"


def _masked(orig_full, ctrl_full):
    """The demo release run on the original half; original and control with its published recodes."""
    import tomllib

    from sdckit.io.files import read_microdata
    from sdckit.registry import published_recodes
    from sdckit.release import Release
    from sdckit.spec import spec_from_dict

    raw = tomllib.loads((ROOT / "src" / "sdckit" / "data" / "demo_release.toml").read_text("utf-8"))
    raw.pop("gate", None)
    raw["gate"] = {"none": "attacked for the comparison only; nothing is written"}
    with tempfile.TemporaryDirectory() as tmp:
        orig_full.to_csv(Path(tmp) / "original.csv", index=False)
        ctrl_full.to_csv(Path(tmp) / "control.csv", index=False)
        raw["input"]["path"] = "original.csv"
        spec = spec_from_dict(raw, base_dir=tmp)
        run = Release.from_spec(spec).run()
        roles = dict(spec.roles)
        ori_md = read_microdata(Path(tmp) / "original.csv", **roles)
        con_md = read_microdata(Path(tmp) / "control.csv", **roles)
    for step in published_recodes(run.results):
        ori_md = step.apply(ori_md).microdata
        con_md = step.apply(con_md).microdata
    cols = [c for c in run.released.columns]
    released = _text(run.released.frame[cols])
    return released, _text(ori_md.frame[cols]), _text(con_md.frame[cols]), None


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--neighbours-worker":
        neighbours_worker(sys.argv[2], int(sys.argv[3]))
    else:
        main()
