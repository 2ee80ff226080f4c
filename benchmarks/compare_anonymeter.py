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
``<missing>``), so both treat every column as categorical. Settings are Anonymeter's defaults:
``n_attacks = 500``; singling out multivariate with ``n_cols = 3``; linkability with the first 8
columns in one file and the other 9 in the second, ``n_neighbors = 1``; inference of ``Health``
from the 16 other columns. For linkability and inference the script draws the 500 original and
500 control targets (seed s) and gives both tools exactly those records, so the two tools attack
the same people; singling out needs the whole files. Anonymeter runs with ``seed = s`` (singling
out) and ``numpy.random.seed(s)`` (its linkability and inference draw from numpy's global
generator); sdckit with ``rng = s``.

Three comparisons are printed, one JSON line per seed, release and attack, and a summary line
for each:

1. ``"same queries"`` (singling out): both tools count the same predicates, twice: those
   Anonymeter wrote (recorded from its evaluator run by wrapping its query writer, unchanged,
   and given to sdckit's ``singling_out(queries=...)``) and those sdckit wrote
   (``singling_out_queries``, given to Anonymeter's evaluator in place of its own writer, so
   that its own code counts them). ``identical_counts``: the same number of predicates that
   isolate one original record and one control record. The risks can still differ a little
   when the original and control halves hold different numbers of distinct records: both tools
   then correct the control count to the original's size, sdckit with the exact expected count
   (hypergeometric; a fit of Cohen & Nissim's model when the control is smaller), Anonymeter
   with that model fitted to counts on random subsamples that its seed does not govern
   (``anonymeter/evaluators/singling_out_evaluator.py``, ``_measure_queries_success``).
2. ``"own draws"``: each tool's own predicates and tie-breaks, the three risks side by side.
3. ``"tie range"`` (linkability, inference): the nearest-neighbour attacks cannot share a tie
   rule: Anonymeter keeps the first of numba's (unstable) quicksort of the distances
   (``anonymeter/neighbors/mixed_types_kneighbors.py``, ``_nearest_neighbors``), neither the
   lowest row nor a seeded draw. An independent brute-force search gives, for the same targets,
   the fewest and the most successes any tie rule allows and the mean under a random choice;
   each tool's counts (sdckit with ``tie_break="random"`` and ``"first"``) must lie in that
   range when the two definitions agree.

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
    print(json.dumps(out))


def setup() -> None:
    uv = ROOT / ".uv" / "bin" / "uv"
    subprocess.run([str(uv), "venv", "--python", str(ROOT / ".venv" / "bin" / "python"), str(ANON_VENV)], check=True)
    subprocess.run([str(uv), "pip", "install", "--python", str(ANON_PY), "anonymeter==1.1.0"], check=True)


# --------------------------------------------------------------------------- sdckit side

def _agreement(sd_risk, sd_ci, sd_raw, sd_err, a):
    """The three agreement tests between an sdckit result and an Anonymeter one."""
    import numpy as np

    s_in = bool(a["ci"][0] - 1e-12 <= sd_risk <= a["ci"][1] + 1e-12)
    a_in = bool(sd_ci[0] - 1e-12 <= a["risk"] <= sd_ci[1] + 1e-12)
    combined = bool(abs(sd_raw - a["raw_risk"]) <= 1.959964 * float(np.hypot(sd_err, a["risk_error"])))
    return s_in, a_in, combined


def tie_ranges(released, targets, aux_a, aux_b, aux, secret):
    """What tie-breaking can make of the linkability and inference attacks on ``targets``.

    An independent brute-force search (numpy; every column categorical, as both tools treat
    these files): for each target the set of released records nearest on ``aux_a``, on
    ``aux_b`` and on ``aux`` (fewest differing columns). Returns, per attack, the fewest
    successes any tie rule gives, the most, and the mean under a uniformly random choice among
    tied records: linkability succeeds for a target when the records chosen on its two parts
    are the same one (possible when the two nearest sets meet, certain when both are that one
    record); inference when the chosen record has the target's secret.
    """
    import numpy as np

    cols = list(released.columns)
    codes = {}
    for c in cols:
        cats = {v: i for i, v in enumerate(sorted(set(released[c]) | set(targets[c])))}
        codes[c] = (released[c].map(cats).to_numpy(), targets[c].map(cats).to_numpy())

    def nearest_sets(names):
        rel = np.stack([codes[c][0] for c in names], axis=1)
        tgt = np.stack([codes[c][1] for c in names], axis=1)
        out = []
        for i in range(0, len(tgt), 50):
            dist = (tgt[i:i + 50, None, :] != rel[None, :, :]).sum(axis=2)
            out += [np.flatnonzero(row == row.min()) for row in dist]
        return out

    sa, sb, sx = nearest_sets(aux_a), nearest_sets(aux_b), nearest_sets(aux)
    link_lo = sum(len(x) == 1 and len(y) == 1 and x[0] == y[0] for x, y in zip(sa, sb))
    link_hi = sum(len(np.intersect1d(x, y)) > 0 for x, y in zip(sa, sb))
    link_mean = sum(len(np.intersect1d(x, y)) / (len(x) * len(y)) for x, y in zip(sa, sb))
    sec_rel = released[secret].to_numpy()
    sec_tgt = targets[secret].to_numpy()
    right = [sec_rel[x] == t for x, t in zip(sx, sec_tgt)]
    inf_lo = sum(bool(r.all()) for r in right)
    inf_hi = sum(bool(r.any()) for r in right)
    inf_mean = sum(float(r.mean()) for r in right)
    ties = float(np.mean([len(x) for x in sx]))
    return {"linkability": (int(link_lo), int(link_hi), float(link_mean)),
            "inference": (int(inf_lo), int(inf_hi), float(inf_mean)),
            "mean_tied_records_inference": ties}


def _sdckit_attack(attack, ori, released, con, ori_t, con_t, aux_a, aux_b, aux, seed, tie_break="random"):
    """One of sdckit's three attacks with the comparison's settings."""
    from sdckit.attacks import inference, linkability, singling_out

    if attack == "singling_out":
        return singling_out(ori, released, con, mode="multivariate", n_attacks=N_ATTACKS, n_cols=3, rng=seed)
    if attack == "linkability":
        return linkability(ori_t, released, con_t, aux_a=aux_a, aux_b=aux_b, n_attacks=N_ATTACKS, rng=seed,
                           tie_break=tie_break)
    return inference(ori_t, released, con_t, secret=SECRET, aux=aux, n_attacks=N_ATTACKS, rng=seed,
                     tie_break=tie_break)


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="one seed, the synthetic file only")
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
    seeds = range(1 if args.quick else args.seeds)
    cases = ("synthetic",) if args.quick else ("synthetic", "masked")
    keys = ("lines", "sdckit_in_anonymeter_ci", "anonymeter_in_sdckit_ci", "within_combined_error")
    own = dict.fromkeys(keys, 0)
    same = dict.fromkeys(keys + ("identical_counts",), 0)
    ties = {"lines": 0, "anonymeter_in_tie_range": 0, "sdckit_random_in_tie_range": 0,
            "sdckit_first_in_tie_range": 0}
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
                for k, v in zip(keys, (1, s_in, a_in, combined)):
                    same[k] += v
                same["identical_counts"] += identical
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

            # 2. each tool's own draws (predicates, tie-breaks)
            files = (ori, released, con, ori_t, con_t, aux_a, aux_b, aux, seed)
            results = {}
            for attack in ("singling_out", "linkability", "inference"):
                res = results[attack] = _sdckit_attack(attack, *files)
                a = anon[attack]
                s_in, a_in, combined = _agreement(res.risk, res.ci, res.raw_risk, res.risk_error, a)
                for k, v in zip(keys, (1, s_in, a_in, combined)):
                    own[k] += v
                print(json.dumps({
                    **head, "comparison": "own draws", "attack": attack,
                    "sdckit_risk": round(res.risk, 6), "sdckit_ci": [round(v, 6) for v in res.ci],
                    "anonymeter_risk": round(a["risk"], 6), "anonymeter_ci": [round(v, 6) for v in a["ci"]],
                    "sdckit_rates": [round(res.attack_rate, 4), round(res.control_rate, 4), round(res.baseline_rate, 4)],
                    "anonymeter_rates": [round(a["attack_rate"], 4), round(a["control_rate"], 4),
                                         round(a["baseline_rate"], 4)],
                    "sdckit_in_anonymeter_ci": s_in, "anonymeter_in_sdckit_ci": a_in,
                    "within_combined_error": combined,
                    "seconds": round(res.seconds, 4), "cpu_seconds": round(res.cpu_seconds, 4),
                    "anonymeter_seconds": round(a["seconds"], 4), "anonymeter_cpu_seconds": round(a["cpu_seconds"], 4),
                    "release_seconds": round(make_seconds, 3)}), flush=True)

            # 3. the nearest-neighbour attacks: what tie-breaking allows, on the same targets
            ranges = {"original": tie_ranges(released, ori_t, aux_a, aux_b, aux, SECRET),
                      "control": tie_ranges(released, con_t, aux_a, aux_b, aux, SECRET)}
            for attack in ("linkability", "inference"):
                first = _sdckit_attack(attack, *files, tie_break="first")
                counts = {"anonymeter": (anon[attack]["n_success"], anon[attack]["n_control"]),
                          "sdckit_random": (results[attack].n_success, results[attack].n_control),
                          "sdckit_first": (first.n_success, first.n_control)}
                inside = {}
                for who, (n_o, n_c) in counts.items():
                    lo_o, hi_o, _ = ranges["original"][attack]
                    lo_c, hi_c, _ = ranges["control"][attack]
                    inside[who] = bool(lo_o <= n_o <= hi_o and lo_c <= n_c <= hi_c)
                ties["lines"] += 1
                for who in counts:
                    ties[f"{who}_in_tie_range"] += inside[who]
                print(json.dumps({
                    **head, "comparison": "tie range", "attack": attack,
                    "tie_range_original": list(ranges["original"][attack][:2]),
                    "tie_range_control": list(ranges["control"][attack][:2]),
                    "random_tie_mean": [round(ranges["original"][attack][2], 2), round(ranges["control"][attack][2], 2)],
                    "mean_tied_records_inference": round(ranges["original"]["mean_tied_records_inference"], 2),
                    **{f"{who}_counts": [int(n_o), int(n_c)] for who, (n_o, n_c) in counts.items()},
                    **{f"{who}_in_tie_range": v for who, v in inside.items()},
                    "sdckit_first_risk": round(first.risk, 6), "sdckit_first_ci": [round(v, 6) for v in first.ci],
                    "anonymeter_risk": round(anon[attack]["risk"], 6)}), flush=True)
    load = os.getloadavg()[0]
    print(json.dumps({"case": "summary", "comparison": "same queries", **same, "load_average": load}), flush=True)
    print(json.dumps({"case": "summary", "comparison": "own draws", **own, "load_average": load}), flush=True)
    print(json.dumps({"case": "summary", "comparison": "tie range", **ties, "load_average": load}), flush=True)


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
    else:
        main()
