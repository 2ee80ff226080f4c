"""Evolved invariant PRAM matrices against the usual ones, on the census sample and on
mu-Argus' demo data (Marés & Shlomo 2014, reproduced on other data).

Census: PRAM of Occupation (10 categories) with the other keys Region, Age, Sex, Marital
Status. mu-Argus demo data (when ../shared/data is present): PRAM of EDUC1 (8 education levels) with
SEX, AGE, MARSTAT. Diagonal bounds [0.7, 0.95], risk_weight 0.5. Baselines: the best of 20
random sdcMicro-style invariant matrices with the same bounds, and maximum-entropy PRAM with
d = 0.7. Writes evolve_<data>.png (risk against utility loss) to the folder given with --out
(default: a new temporary folder; the checkout is never written) and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

from sdckit.pram.evolve import EvolvePRAM, Problem, max_entropy_matrix, random_sdcmicro_baselines

ROOT = Path(__file__).resolve().parents[1]
CENSUS = ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv"
DEMODATA = ROOT.parent / "shared" / "data" / "muargus_demodata.csv"


def problem(frame: pd.DataFrame, variable: str, others: list[str]) -> tuple[Problem, int]:
    v, cats = pd.factorize(frame[variable], sort=True)
    codes = [pd.factorize(frame[k], sort=True)[0] for k in others]
    return Problem.from_codes(v, codes, len(cats)), len(cats)


def run_case(name: str, prob: Problem, L: int, ea: EvolvePRAM, seed: int, plot_dir: Path | None) -> dict:
    t0 = time.perf_counter()
    res = ea.run(prob, rng=seed)
    seconds = time.perf_counter() - t0
    base = [ea.fitness_of(prob, X) for X in random_sdcmicro_baselines(prob, ea.d_min, ea.d_max, 20, rng=seed + 1)]
    best_base = min(base, key=lambda f: f.fitness)
    maxent = ea.fitness_of(prob, max_entropy_matrix(L, ea.d_min))
    front = EvolvePRAM(**{**ea.__dict__, "pareto": True}).run(prob, rng=seed).pareto
    if plot_dir is not None:
        from sdckit.report.plots import figure_png, new_figure

        fig, ax = new_figure(6, 4)
        ax.plot([f.utility_loss for f in base], [f.risk for f in base], "o", color="#999", label="sdcMicro-style invariant (20 random)")
        ax.plot([maxent.utility_loss], [maxent.risk], "s", color="#d62728", label="maximum entropy, d = d_min")
        ax.plot([r[1] for r in front], [r[0] for r in front], "-", color="#1f77b4", label="evolved Pareto front")
        ax.plot([res.fitness.utility_loss], [res.fitness.risk], "*", ms=14, color="#1f77b4", label="evolved (risk_weight 0.5)")
        ax.set_xlabel("utility loss U (Hellinger / reference)")
        ax.set_ylabel("risk R (expected matches / sample uniques)")
        ax.set_title(f"Invariant PRAM, {name}")
        ax.legend(fontsize=7)
        plot_dir.mkdir(parents=True, exist_ok=True)
        (plot_dir / f"evolve_{name}.png").write_bytes(figure_png(fig))
    return {"evolved_fitness": res.fitness.fitness, "evolved_risk": res.fitness.risk,
            "evolved_utility_loss": res.fitness.utility_loss, "best_baseline_fitness": best_base.fitness,
            "best_baseline_risk": best_base.risk, "best_baseline_utility_loss": best_base.utility_loss,
            "max_entropy_fitness": maxent.fitness, "max_entropy_risk": maxent.risk,
            "max_entropy_utility_loss": maxent.utility_loss, "max_invariance_error": res.max_invariance_error,
            "min_diagonal_seen": res.min_diagonal_seen, "max_diagonal_seen": res.max_diagonal_seen,
            "generations": res.generations, "pareto_points": len(front), "seconds": seconds}


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer generations")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--out", type=Path, default=None,
                    help="folder for the plots (default: a new temporary folder; the checkout "
                         "is never written)")
    args = ap.parse_args()
    ea = EvolvePRAM(d_min=0.7, d_max=0.95, risk_weight=0.5,
                    generations=40 if args.quick else 200, population=20 if args.quick else 50)
    # plots go to --out or a new temporary folder, never into the checkout
    import tempfile
    plot_dir = None if args.no_plot else (args.out or Path(tempfile.mkdtemp(prefix="evolve_census_")))
    cases = {}
    census = pd.read_csv(CENSUS)
    prob, L = problem(census, "Occupation", ["Region", "Age", "Sex", "Marital Status"])
    cases["census"] = run_case("census", prob, L, ea, args.seed, plot_dir)
    if DEMODATA.exists():
        demo = pd.read_csv(DEMODATA)
        prob, L = problem(demo, "EDUC1", ["SEX", "AGE", "MARSTAT"])
        cases["muargus_demodata"] = run_case("muargus_demodata", prob, L, ea, args.seed, plot_dir)
    for name, c in cases.items():
        print(f"{name}: evolved {c['evolved_fitness']:.4f}, best of 20 sdcMicro-style {c['best_baseline_fitness']:.4f}, "
              f"max-entropy {c['max_entropy_fitness']:.4f}")
    headline = {
        "evolved_fitness": cases["census"]["evolved_fitness"],
        "best_baseline_fitness": cases["census"]["best_baseline_fitness"],
        "max_entropy_fitness": cases["census"]["max_entropy_fitness"],
        "max_invariance_error": max(c["max_invariance_error"] for c in cases.values()),
        "min_diagonal_seen": min(c["min_diagonal_seen"] for c in cases.values()),
        "seconds": sum(c["seconds"] for c in cases.values()),
        "cases": cases,
    }
    if plot_dir is not None:
        print(f"plots written to {plot_dir}")
        headline["plot_dir"] = str(plot_dir)
    print(json.dumps(headline))
    return headline


if __name__ == "__main__":
    main()
