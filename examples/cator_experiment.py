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

The paper's data are not published, so ``--draws N`` (default 100; 5 with ``--quick``) repeats
the optimisation on N draws of the data (seeds 0..N-1) and reports the distribution of
(smallest diagonal, expected changes, L2 loss), the paper's triple's percentile in it, and the
ratio n^2 l_2 / E[changes] (about 2 for a matrix near the identity: a change costs once in the
variance of its source element and once in that of its destination), which the paper's
(4 changes, 6.4e-7) breaks: 6.4e-7 x 2500^2 = 4.0, a ratio of 1.

Everything is written to ``--out DIR`` (default: a new temporary folder), never into the
checkout.

    python examples/cator_experiment.py [--quick] [--seed 0] [--out DIR] [--draws 100] [--census]
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
    normalize_combinations,
    problem_combinations,
    recognition_check,
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


PAPER_TRIPLE = {"min_diagonal": 0.9971, "expected_changes": 4.0, "l2_loss": 6.4e-7}


def data_draws(draws: int, n: int, n_binary: int, alpha: float, out_dir: Path) -> dict:
    """Optimal matrix on ``draws`` data sets (seeds 0..draws-1): the distribution of the
    paper's three figures and the percentile of the paper's values in it."""
    rows = []
    t0 = time.perf_counter()
    for seed in range(draws):
        counts, shape = paper_data(n, n_binary, seed)
        combos = normalize_combinations(3, [f"x{j + 1}" for j in range(len(shape))])
        opt = optimal_matrix(counts, shape, combos, alpha)
        rows.append({"seed": seed, "min_diagonal": opt.min_diagonal,
                     "expected_changes": opt.expected_changes, "l2_loss": opt.loss,
                     "n_rare": int(((counts > 0) & (counts * alpha < 1)).sum()),
                     "n_problem_combinations": len(problem_combinations(counts, shape, combos, alpha)),
                     "ratio_n2_loss_per_change": opt.loss * n * n / opt.expected_changes
                     if opt.expected_changes > 0 else float("nan")})
    df = pd.DataFrame(rows)
    df.to_csv(out_dir / "cator_draws.csv", index=False)
    summary: dict = {"n": draws, "seconds": time.perf_counter() - t0}
    print(f"\n{draws} draws of the data (n = {n}, seeds 0..{draws - 1}); paper's value and its percentile:")
    print(f"{'figure':<28}{'q05':>11}{'median':>11}{'q95':>11}{'paper':>11}{'percentile':>12}")
    for key, pv in PAPER_TRIPLE.items():
        v = df[key].to_numpy()
        q = np.quantile(v, [0.05, 0.5, 0.95])
        pct = float((v < pv).mean() + 0.5 * (v == pv).mean())
        summary[key] = {"q05": float(q[0]), "median": float(q[1]), "q95": float(q[2]),
                        "min": float(v.min()), "max": float(v.max()), "paper": pv, "paper_percentile": pct}
        print(f"{key:<28}{q[0]:>11.4g}{q[1]:>11.4g}{q[2]:>11.4g}{pv:>11.4g}{100 * pct:>11.0f}%")
    near = ((df["min_diagonal"] - 0.9971).abs() <= 0.001) & ((df["expected_changes"] - 4).abs() <= 0.5)
    both = near & ((df["l2_loss"] - 6.4e-7).abs() <= 0.1 * 6.4e-7)
    r = df["ratio_n2_loss_per_change"].dropna()
    summary.update({"draws_near_paper_diag_and_changes": int(near.sum()),
                    "draws_near_paper_triple": int(both.sum()),
                    "seeds_near_paper_diag_and_changes": df.loc[near, "seed"].tolist(),
                    "ratio_n2_loss_per_change": {"min": float(r.min()), "median": float(r.median()),
                                                 "max": float(r.max())},
                    "paper_ratio_n2_loss_per_change": 6.4e-7 * 2500 ** 2 / 4.0})
    print(f"draws with min diagonal within 0.001 of 0.9971 and 3.5-4.5 changes: {int(near.sum())} "
          f"(seeds {df.loc[near, 'seed'].tolist()}); also L2 within 10% of 6.4e-7: {int(both.sum())}")
    print(f"n^2 l_2 / E[changes] over the draws: median {r.median():.3f} [{r.min():.3f}, {r.max():.3f}];"
          f" the paper's figures give 6.4e-7 x 2500^2 / 4 = {6.4e-7 * 2500 ** 2 / 4:.3f}")
    return summary


def reproduction_table(line: dict) -> list[dict]:
    """Paper's value, sdckit's (seed of --seed and median over the draws), difference, cause."""
    rows = []
    d = line["draws"]
    for key, pv in PAPER_TRIPLE.items():
        v = float(line[key])
        rel = (v - pv) / abs(pv)
        cause = ""
        if abs(rel) > 0.10:
            cause = (f"the paper's data are not published; over {d['n']} draws the paper's value is at "
                     f"percentile {100 * d[key]['paper_percentile']:.0f}")
            if key == "l2_loss":
                cause += ("; and 6.4e-7 x 2500^2 / 4 changes = 1.0, half the ratio ~2 every near-identity"
                          " optimum has, so the paper's loss and its 4 changes cannot both hold")
        rows.append({"quantity": key, "paper": pv, "sdckit": v, "difference": v - pv,
                     "rel_difference": rel, "sdckit_median_over_draws": d[key]["median"],
                     "cause": cause})
    print("\nReproduction (paper vs sdckit, data seed of --seed):")
    print(pd.DataFrame(rows).drop(columns="cause").to_string(index=False))
    return rows


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="X = {0,1}^3 x {0,1,2}, n = 800")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--out", type=Path, default=None,
                    help="folder for Figure 1 and the draws (default: a new temporary folder)")
    ap.add_argument("--draws", type=int, default=None,
                    help="data draws for the distribution (default 100; 5 with --quick)")
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
    # Figure 1 and the draws go to --out or a new temporary folder, never into the checkout
    import tempfile
    out_dir = args.out or Path(tempfile.mkdtemp(prefix="cator_experiment_"))
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / "cator_figure1.png"
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
    draws = args.draws if args.draws is not None else (5 if args.quick else 100)
    if draws:
        line["draws"] = data_draws(draws, n, n_binary, args.alpha, out_dir)
        line["reproduction"] = reproduction_table(line)
    print(json.dumps(line))
    return line


if __name__ == "__main__":
    main()
