"""The experiment of Cator, Hensbergen & Rozenholc (section 4), reproduced.

X = {0,1}^4 x {0,1,2} (48 elements), n = 2,500 records drawn with a fixed seed from
independent variables with P(1) = 0.85, 0.8, 0.8, 0.75 for the binary ones and (0.7, 0.2, 0.1)
for the ternary one (so the all-zero corner is rare, as in the paper, whose changes go into
(0,0,0,0,*)); alpha = 0.1; Pi = every combination of 3 variables (104 pairs (pi, k0)).

Solves for the optimal PRAM matrix (full support), certifies C1 with the independent checker,
compares with the weakest per-variable invariant and maximum-entropy matrices meeting C1 at the
same alpha, writes the paper's Figure 1 (probability of change against frequency) as PNG and
ends with one JSON line. ``--quick``: X = {0,1}^3 x {0,1,2}, n = 800 (a few seconds).
``--census``: the same comparison on the bundled census sample with 4 key variables (restricted
support: 480 elements are beyond the full support's size limit; its own
table and JSON line, printed before the experiment's).

    python examples/cator_experiment.py [--quick] [--seed 0] [--out PNG] [--census]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.pram.optimal import change_evidence, figure1, optimal_matrix, weakest_usual
from sdckit.pram.recognition import (
    normalize_combinations, problem_combinations, recognition_check,
)

ROOT = Path(__file__).resolve().parents[1]
CENSUS = ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"
CENSUS_KEYS = ["Sex", "Age", "Marital Status", "Health"]
P_ONE = [0.85, 0.8, 0.8, 0.75]
P_TERNARY = [0.7, 0.2, 0.1]


def paper_data(n: int, n_binary: int, seed: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """Counts U_0 over {0,1}^n_binary x {0,1,2} (C order) of n independent records."""
    shape = (2,) * n_binary + (3,)
    probs = np.ones(shape)
    for j, p in enumerate(P_ONE[:n_binary]):
        probs = probs * np.array([1 - p, p]).reshape([2 if a == j else 1 for a in range(len(shape))])
    probs = probs * np.array(P_TERNARY).reshape((1,) * n_binary + (3,))
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, probs.ravel() / probs.sum()).astype(float), shape


def compare(counts: np.ndarray, shape, combos, alpha: float, support: str = "full") -> dict:
    """Optimal (certified) against the weakest invariant and maximum-entropy matrices meeting C1."""
    t0 = time.perf_counter()
    opt = optimal_matrix(counts, shape, combos, alpha, support=support)
    seconds = time.perf_counter() - t0
    check = recognition_check(opt.P, counts, shape, combos, alpha)   # independent certificate
    inv = weakest_usual("invariant", counts, shape, combos, alpha)
    ment = weakest_usual("max_entropy", counts, shape, combos, alpha)
    return {"opt": opt, "check": check, "seconds": seconds, "invariant": inv, "max_entropy": ment}


def print_table(title: str, res: dict) -> None:
    opt, inv, ment = res["opt"], res["invariant"], res["max_entropy"]
    print(f"\n{title}")
    print(f"{'matrix':<34}{'max ratio':>11}{'L2 loss':>12}{'exp. changes':>14}{'min diag':>10}")
    print(f"{'optimal (' + opt.support + ')':<34}{res['check'].max_ratio:>11.5f}{opt.loss:>12.3e}"
          f"{opt.expected_changes:>14.2f}{opt.min_diagonal:>10.4f}")
    for name, r in (("weakest invariant (sdcMicro style)", inv), ("weakest maximum entropy", ment)):
        print(f"{name:<34}{r['max_ratio']:>11.5f}{r['l2_loss']:>12.3e}{r['expected_changes']:>14.2f}"
              f"{r['min_diagonal']:>10.4f}")


def census(alpha: float) -> dict:
    frame = pd.read_csv(CENSUS, usecols=CENSUS_KEYS)
    codes = [pd.factorize(frame[v], sort=True)[0] for v in CENSUS_KEYS]
    shape = tuple(int(c.max()) + 1 for c in codes)
    counts = np.bincount(np.ravel_multi_index(tuple(codes), shape),
                         minlength=int(np.prod(shape))).astype(float)
    combos = normalize_combinations(3, CENSUS_KEYS)
    res = compare(counts, shape, combos, alpha, support="restricted")
    print_table(f"census sample, keys {CENSUS_KEYS} ({int(np.prod(shape))} elements, "
                f"{int((counts > 0).sum())} occurring), alpha = {alpha}", res)
    opt = res["opt"]
    line = {"data": "census", "keys": CENSUS_KEYS, "alpha": alpha, "n": int(counts.sum()),
            "n_elements": int(counts.size), "n_rare": int(((counts > 0) & (counts * alpha < 1)).sum()),
            "max_ratio": res["check"].max_ratio, "min_diagonal": opt.min_diagonal,
            "expected_changes": opt.expected_changes, "l2_loss": opt.loss, "seconds": res["seconds"],
            "invariant_l2_loss": res["invariant"]["l2_loss"],
            "invariant_expected_changes": res["invariant"]["expected_changes"],
            "max_entropy_l2_loss": res["max_entropy"]["l2_loss"],
            "max_entropy_expected_changes": res["max_entropy"]["expected_changes"]}
    print(json.dumps(line))
    return line


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="X = {0,1}^3 x {0,1,2}, n = 800")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--out", type=Path, default=None, help="Figure 1 PNG (default docs/methods/img/)")
    ap.add_argument("--census", action="store_true", help="also compare on the census sample")
    args = ap.parse_args()
    if args.census:
        census(args.alpha)
    n, n_binary = (800, 3) if args.quick else (2500, 4)
    counts, shape = paper_data(n, n_binary, args.seed)
    variables = [f"x{j + 1}" for j in range(len(shape))]
    combos = normalize_combinations(3, variables)
    problems = problem_combinations(counts, shape, combos, args.alpha)
    res = compare(counts, shape, combos, args.alpha)
    opt, check = res["opt"], res["check"]
    labels = [tuple(int(v) for v in np.unravel_index(k, shape)) for k in range(counts.size)]
    ev = change_evidence(opt.P, counts, labels)
    n_pairs = sum(int(np.prod([shape[j] for j in pi])) for pi in combos)
    print(f"X = {' x '.join('{' + ','.join(map(str, range(s))) + '}' for s in shape)}: "
          f"{counts.size} elements, n = {n}, {n_pairs} pairs (pi, k0), "
          f"{int(((counts > 0) & (counts * args.alpha < 1)).sum())} rare elements, "
          f"{len(problems)} problem combinations, largest ratio before {opt.check_before.max_ratio:.4f}")
    print_table(f"alpha = {args.alpha}, solver {opt.status}, {opt.details.get('iterations')} SQP "
                f"iterations, Frank-Wolfe gap {opt.details.get('frank_wolfe_gap', float('nan')):.2e}", res)
    top = ev["destinations"][:3]
    share3 = sum(d["share"] for d in top)
    print(f"changed records go to {[d['element'] for d in top]} (share {share3:.5f}); "
          f"share of changes from the 3 most frequent elements {ev['from_top3']:.3f}")
    # the full run refreshes the docs' figure; a quick run never overwrites it
    import tempfile
    out = args.out or (Path(tempfile.gettempdir()) / "cator_figure1_quick.png" if args.quick
                       else ROOT / "docs" / "methods" / "img" / "cator_figure1.png")
    out.parent.mkdir(parents=True, exist_ok=True)
    from sdckit.report.plots import figure_png
    out.write_bytes(figure_png(figure1(ev["figure1"], f"alpha = {args.alpha}, n = {n}")))
    print(f"Figure 1 written to {out}")
    line = {"alpha": args.alpha, "n": n, "n_elements": int(counts.size),
            "n_rare": int(((counts > 0) & (counts * args.alpha < 1)).sum()),
            "max_ratio": check.max_ratio, "c1_holds": check.holds, "min_diagonal": opt.min_diagonal,
            "expected_changes": opt.expected_changes, "l2_loss": opt.loss, "seconds": res["seconds"],
            "invariant_l2_loss": res["invariant"]["l2_loss"],
            "max_entropy_l2_loss": res["max_entropy"]["l2_loss"],
            "invariant_expected_changes": res["invariant"]["expected_changes"],
            "max_entropy_expected_changes": res["max_entropy"]["expected_changes"],
            "n_problem_combinations": len(problems), "top3_destination_share": share3,
            "changes_from_top3_frequent": ev["from_top3"]}
    print(json.dumps(line))
    return line


if __name__ == "__main__":
    main()
