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
generator); sdckit with ``rng = s``. Nothing else is shared: each tool writes its own
predicates and breaks its own ties.

Each line (one per seed, release and attack) has both risks with their 95% intervals,
``sdckit_in_anonymeter_ci`` and ``anonymeter_in_sdckit_ci``, ``within_combined_error`` (the
difference at most 1.96 times the two errors combined, the test that two independent estimates
agree), and both tools' wall and CPU seconds. A last line counts the agreements. Two
independent estimates of one quantity, each with a 95% interval, fall inside each other's
interval about 84% of the time when the risk is away from 0 (their difference has twice the
variance); the combined test holds about 95% of the time.
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

def worker(folder: str, seed: int) -> None:
    """Run Anonymeter's three evaluators on the files in ``folder``; print one JSON object."""
    import warnings

    import numpy as np
    import pandas as pd
    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator
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
                     "baseline_rate": res.baseline_rate.value, "seconds": time.perf_counter() - t0,
                     "cpu_seconds": time.process_time() - c0}

    t0, c0 = time.perf_counter(), time.process_time()
    ev = SinglingOutEvaluator(ori, rel, control=con, n_attacks=N_ATTACKS, n_cols=3, seed=seed)
    record("singling_out", ev.evaluate(mode="multivariate"), t0, c0)
    np.random.seed(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    ev = LinkabilityEvaluator(ori_t, rel, aux_cols=(spec["aux_a"], spec["aux_b"]), control=con_t,
                              n_attacks=len(ori_t), n_neighbors=1)
    record("linkability", ev.evaluate(n_jobs=1), t0, c0)
    np.random.seed(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    ev = InferenceEvaluator(ori_t, rel, aux_cols=spec["aux"], secret=SECRET, control=con_t, n_attacks=len(ori_t))
    record("inference", ev.evaluate(n_jobs=1), t0, c0)
    print(json.dumps(out))


def setup() -> None:
    uv = ROOT / ".uv" / "bin" / "uv"
    subprocess.run([str(uv), "venv", "--python", str(ROOT / ".venv" / "bin" / "python"), str(ANON_VENV)], check=True)
    subprocess.run([str(uv), "pip", "install", "--python", str(ANON_PY), "anonymeter==1.1.0"], check=True)


# --------------------------------------------------------------------------- sdckit side

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

    from sdckit.attacks import inference, linkability, singling_out

    census = pd.read_csv(ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv")
    seeds = range(1 if args.quick else args.seeds)
    cases = ("synthetic",) if args.quick else ("synthetic", "masked")
    agree = {"lines": 0, "sdckit_in_anonymeter_ci": 0, "anonymeter_in_sdckit_ci": 0, "within_combined_error": 0}
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
            with tempfile.TemporaryDirectory() as tmp:
                d = Path(tmp)
                for name, f in (("original", ori), ("control", con), ("released", released),
                                ("original_targets", ori_t), ("control_targets", con_t)):
                    f.to_csv(d / f"{name}.csv", index=False)
                (d / "spec.json").write_text(json.dumps({"aux_a": aux_a, "aux_b": aux_b, "aux": aux}))
                proc = subprocess.run([str(ANON_PY), __file__, "--worker", tmp, str(seed)], capture_output=True,
                                      text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
                if proc.returncode != 0:
                    raise SystemExit(f"Anonymeter worker failed: {proc.stderr.strip().splitlines()[-1:]}")
                anon = json.loads(proc.stdout.strip().splitlines()[-1])
            ours = {
                "singling_out": lambda: singling_out(ori, released, con, mode="multivariate", n_attacks=N_ATTACKS,
                                                     n_cols=3, rng=seed),
                "linkability": lambda: linkability(ori_t, released, con_t, aux_a=aux_a, aux_b=aux_b,
                                                   n_attacks=N_ATTACKS, rng=seed),
                "inference": lambda: inference(ori_t, released, con_t, secret=SECRET, aux=aux,
                                               n_attacks=N_ATTACKS, rng=seed),
            }
            for attack, run in ours.items():
                res = run()
                a = anon[attack]
                s_in = a["ci"][0] - 1e-12 <= res.risk <= a["ci"][1] + 1e-12
                a_in = res.ci[0] - 1e-12 <= a["risk"] <= res.ci[1] + 1e-12
                combined = abs(res.raw_risk - a["raw_risk"]) <= 1.959964 * float(np.hypot(res.risk_error,
                                                                                           a["risk_error"]))
                agree["lines"] += 1
                agree["sdckit_in_anonymeter_ci"] += s_in
                agree["anonymeter_in_sdckit_ci"] += a_in
                agree["within_combined_error"] += combined
                print(json.dumps({
                    "case": case, "synthesiser": label if case == "synthetic" else None, "seed": seed,
                    "attack": attack, "n": len(ori), "n_control": len(con), "n_released": len(released),
                    "n_attacks": N_ATTACKS,
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
    print(json.dumps({"case": "summary", **agree, "load_average": os.getloadavg()[0]}), flush=True)


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
