"""Reproduce section 6 of Matloff & Tendick: neighbourhood resampling of an employee database.

Data: ``../shared/data/prgeng.csv`` (2000 US Census 5% PUMS, Silicon Valley programmers and
engineers, from the R package regtools; GPL packaging, so it is read from ../shared/data and
not copied). As in the paper: 5,000 records sampled (here with numpy seed 2018), variables
age, sex, wkswrkd, ms, phd, wageinc; weights 0.2 on the three categorical columns with
eps = 0.3, and 0.3 with eps = 0.6; whole records suppressed when they have no neighbour.

For each eps it prints the regression of wageinc on age, sex, wkswrkd, ms, phd before and
after (with the difference in units of the original standard error), the tracking of the
young female PhDs ("sex == 2 and phd == 1 and age < 31") and the share of records suppressed;
without ``--quick`` it also repeats the release with 20 seeds to show the spread. The last
line is one JSON object keyed by eps.

    python examples/matloff_prgeng.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sdckit import Microdata  # noqa: E402
from sdckit.masking.steps_neighbours import NeighboursStep  # noqa: E402
from sdckit.utility.analyses import LinearRegression  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "prgeng.csv"
COLUMNS = ["age", "sex", "wkswrkd", "ms", "phd", "wageinc"]
REGRESSORS = ["age", "sex", "wkswrkd", "ms", "phd"]
QUERY = "sex == 2 and phd == 1 and age < 31"
RUNS = {"0.3": (0.3, 0.2), "0.6": (0.6, 0.3)}  # eps -> (eps, weight of sex, ms, phd)
PAPER = {  # section 6: coefficients of the original 5,000 and the two releases, original SEs
    "original": [447.2, -9591.7, 1286.4, 17333.0, 21291.3],
    "0.3": [466.1, -8423.2, 1270.7, 18593.9, 22161.4],
    "0.6": [506.3, -9323.1, 1289.8, 17684.1, 22019.3],
    "se": [52.8, 1301.9, 38.6, 1453.7, 3627.7],
}


def sample(seed: int = 2018, size: int = 5000) -> pd.DataFrame:
    full = pd.read_csv(DATA)
    rows = np.sort(np.random.default_rng(seed).choice(len(full), size=size, replace=False))
    return full.iloc[rows][COLUMNS]  # the index keeps the row ids of prgeng (as R's rownames)


def step(eps: float, weight: float) -> NeighboursStep:
    return NeighboursStep(eps=eps, variables=COLUMNS, categorical=["sex", "ms", "phd"],
                          weights={"sex": weight, "ms": weight, "phd": weight},
                          analyses=[LinearRegression("wageinc", REGRESSORS, name="wageinc")],
                          track=[QUERY])


def table(cmp) -> pd.DataFrame:
    t = cmp.to_frame().set_index("quantity")
    return t.loc[REGRESSORS, ["original", "released", "rel_diff", "original_se", "diff_in_se"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one release per eps (no repeats)")
    args = ap.parse_args()
    if not DATA.exists():
        print(json.dumps({"skipped": f"{DATA} is absent (../shared/data beside the checkout)"}))
        return
    p1 = sample()
    md = Microdata(p1)
    print(f"prgeng sample: {len(p1)} records (numpy seed 2018); records matching {QUERY!r}: "
          f"{list(p1.query(QUERY).index)}")
    pd.set_option("display.width", 140)
    out = {}
    for key, (eps, w) in RUNS.items():
        r = step(eps, w).apply(md, rng=20180822)
        t = table(r.analyses)
        print(f"\n=== eps = {eps}, weights {w} on sex, ms, phd ===")
        print(f"suppressed: {r.summary['records_suppressed']} of {len(p1)} "
              f"({r.summary['suppressed_share']:.2%}); neighbours per record: mean "
              f"{r.summary['neighbours_mean']:.1f}, median {r.summary['neighbours_median']:.0f}")
        print(t.to_string(float_format=lambda v: f"{v:.4g}"))
        print(f"paper's released coefficients: {dict(zip(REGRESSORS, PAPER[key]))}")
        # how much of the change is the loss of the suppressed records alone (no resampling)?
        kept = LinearRegression("wageinc", REGRESSORS).run(p1[~r.suppressed])["estimates"]
        print("original data without the suppressed records, relative change: "
              + ", ".join(f"{q} {kept[q] / t.loc[q, 'original'] - 1:+.1%}" for q in REGRESSORS))
        for target in r.tracking.targets:
            print(f"tracking {target.description!r}: {len(target.original_rows)} original, "
                  f"{len(target.released_rows)} released {list(target.released_rows)}; originals "
                  f"among them: {list(target.original_among_released)}")
            for rec in target.records:
                d = rec.to_dict()
                print(f"  row {rec.row}: {rec.status}; was {d['original']}; now says "
                      f"{d['now']}; nearest released record {rec.nearest_row} at "
                      f"{rec.nearest_distance:.3f}")
        print(f"guarantees: {[(g.name, g.holds) for g in r.guarantees]}")
        out[key] = {"suppressed_share": r.summary["suppressed_share"],
                    "coef_original": {q: float(t.loc[q, "original"]) for q in REGRESSORS},
                    "coef_released": {q: float(t.loc[q, "released"]) for q in REGRESSORS},
                    "max_rel_diff": float(t["rel_diff"].max()),
                    "coef_original_unsuppressed": {q: float(kept[q]) for q in REGRESSORS},
                    "max_abs_diff_in_se": float(t["diff_in_se"].abs().max()),
                    "tracked_original_among_released": len(r.tracking.targets[0].original_among_released),
                    "tracked_released_matches": len(r.tracking.targets[0].released_rows)}
        if not args.quick:
            reps = []
            for seed in range(20):
                rr = step(eps, w).apply(md, rng=seed)
                tt = table(rr.analyses)
                reps.append((float(tt["rel_diff"].max()), rr.summary["suppressed_share"],
                             len(rr.tracking.targets[0].original_among_released)))
            a = np.array(reps)
            print(f"20 seeds: max relative difference median {np.median(a[:, 0]):.3f} "
                  f"[{a[:, 0].min():.3f}, {a[:, 0].max():.3f}]; suppressed share "
                  f"{a[:, 1].mean():.4f}; runs where an original young female PhD is still "
                  f"found as herself: {int((a[:, 2] > 0).sum())}")
            out[key]["repeats"] = {"n": 20, "max_rel_diff_median": float(np.median(a[:, 0])),
                                   "max_rel_diff_min": float(a[:, 0].min()),
                                   "max_rel_diff_max": float(a[:, 0].max()),
                                   "suppressed_share_mean": float(a[:, 1].mean()),
                                   "runs_original_found": int((a[:, 2] > 0).sum())}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
