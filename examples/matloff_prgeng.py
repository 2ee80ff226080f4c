"""Reproduce section 6 of Matloff & Tendick: neighbourhood resampling of an employee database.

Data: ``../shared/data/prgeng.csv`` (2000 US Census 5% PUMS, Silicon Valley programmers and
engineers, from the R package regtools; GPL packaging, so it is read from ../shared/data and
not copied).

The paper's own set-up, as its LaTeX source (github.com/matloff/statdb, ``Outline.tex``,
commented lines beside the example) and ``Neighbors.R`` state it:

- data: computer occupations only (``occ`` 100..109: 16,411 records), columns
  ``c(1,7,9,12,13,8)`` = age, sex, wkswrkd, ms, phd, wageinc, then ``set.seed(99999);
  p1 <- pecs1[sample(1:nrow(pecs1),5000),]``. R's Mersenne-Twister and its (pre-3.6)
  sampler are replayed here, which gives the paper's sample exactly: the original regression
  coefficients are the paper's to the printed digit and prgeng row 7997 is record 3236, as in
  the paper;
- ``nbrs``: every column standardised with R's ``scale`` (sd with n - 1); ``wts = c(2, 4, 5,
  rep(0.2, 3))`` is read by ``Neighbors.R`` as *(columns, factors)*: columns 2, 4, 5 (sex, ms,
  phd) multiplied by 0.2; the continuous columns keep weight 1; neighbours are the other
  records with Euclidean distance < eps; a record without one becomes NA (all columns);
  q = 1 (every record, in the order ``sample(1:n, n)``);
- release seed: ``set.seed(999999)`` before each ``nbrs`` call.

Configurations (one table each): the call printed in the paper (eps = 0.3, 0.2), the call in
the source's comment (eps = 0.6, 0.2), which reproduces the paper's first released table
exactly, the second call (eps = 0.6, 0.3), and a positional reading of ``wts`` as six weights
(age 2, sex 4, wkswrkd 5, ms, phd, wageinc 0.2) that the code does not use.

For each configuration: sdckit's ``neighbours`` step (release seed 20180822; without
``--quick`` also 20 seeds) and a replay of the R random stream through the same neighbourhoods
(certified by sdckit's independent checker ``check_neighbours``). The last line is one JSON
object: the keys "0.3" and "0.6" (the two calls as printed), "configurations", the
"reproduction" table and "paper_configuration" = {eps, weights, suppressed_share,
max_rel_diff}.

    python examples/matloff_prgeng.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sdckit import Microdata  # noqa: E402
from sdckit.masking.neighbours import Radius, check_neighbours  # noqa: E402
from sdckit.masking.steps_neighbours import NeighboursStep  # noqa: E402
from sdckit.utility.analyses import LinearRegression, compare_analyses  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "prgeng.csv"
COLUMNS = ["age", "sex", "wkswrkd", "ms", "phd", "wageinc"]     # pecs1[, c(1,7,9,12,13,8)]
CATEGORICAL = ["sex", "ms", "phd"]
REGRESSORS = ["age", "sex", "wkswrkd", "ms", "phd"]
QUERY = "sex == 2 and phd == 1 and age < 31"
PAPER = {  # section 6: coefficients of the original 5,000 and the two releases, original SEs
    "original": [447.2, -9591.7, 1286.4, 17333.0, 21291.3],
    "first": [466.1, -8423.2, 1270.7, 18593.9, 22161.4],
    "second": [506.3, -9323.1, 1289.8, 17684.1, 22019.3],
    "se": [52.8, 1301.9, 38.6, 1453.7, 3627.7],
}
# name -> (eps, weights by column, R's wts argument, the paper's table it should reproduce)
CONFIGS = {
    "printed_call": (0.3, {"sex": 0.2, "ms": 0.2, "phd": 0.2}, "c(2,4,5,rep(0.2,3)), eps=0.3", "first"),
    "paper_configuration": (0.6, {"sex": 0.2, "ms": 0.2, "phd": 0.2},
                            "c(2,4,5,rep(0.2,3)), eps=0.6", "first"),
    "second_call": (0.6, {"sex": 0.3, "ms": 0.3, "phd": 0.3}, "c(2,4,5,rep(0.3,3)), eps=0.6", "second"),
    "positional_reading": (0.3, {"age": 2.0, "sex": 4.0, "wkswrkd": 5.0, "ms": 0.2, "phd": 0.2,
                                 "wageinc": 0.2}, "six weights (not what nbrs does)", "first"),
}


# ---- R's random stream (Mersenne-Twister, set.seed scrambling, R < 3.6 "Rounding" sampler) ----
class RStream:
    """``unif_rand()`` of R after ``set.seed(seed)`` with the default Mersenne-Twister.

    set.seed scrambles the seed 50 times with s <- 69069 s + 1 (mod 2^32), fills the 625-word
    state (mti, mt[0..623]) with 625 more steps and sets mti = 624; numbers are the tempered
    32-bit outputs times 2^-32 (R's ``MT_genrand``), never exactly 0 (``fixup``).
    """

    def __init__(self, seed: int) -> None:
        s = seed & 0xFFFFFFFF
        for _ in range(50):
            s = (69069 * s + 1) & 0xFFFFFFFF
        words = []
        for _ in range(625):
            s = (69069 * s + 1) & 0xFFFFFFFF
            words.append(s)
        self._bg = np.random.MT19937()
        self._bg.state = {"bit_generator": "MT19937",
                          "state": {"key": np.array(words[1:], dtype=np.uint32), "pos": 624}}

    def unif(self, k: int) -> np.ndarray:
        u = self._bg.random_raw(k).astype(np.float64) * 2.3283064365386963e-10
        u[u <= 0.0] = 0.5 * 2.328306437080797e-10
        return u

    def sample(self, n: int, k: int) -> np.ndarray:
        """0-based ``sample(1:n, k)`` without replacement: j = floor(n' u), x[j] <- x[n'-1]."""
        x = np.arange(n)
        out = np.empty(k, dtype=np.int64)
        for i, u in enumerate(self.unif(k)):
            j = int((n - i) * u)
            out[i] = x[j]
            x[j] = x[n - i - 1]
        return out


def paper_sample() -> pd.DataFrame:
    """The paper's p1: 5,000 computer-occupation records, R row names as the index."""
    full = pd.read_csv(DATA)
    full.index = np.arange(1, len(full) + 1)          # R's row names of prgeng
    pecs = full[(full["occ"] >= 100) & (full["occ"] <= 109)][COLUMNS]
    return pecs.iloc[RStream(99999).sample(len(pecs), 5000)]


def scaled(p1: pd.DataFrame, weights: dict[str, float]) -> np.ndarray:
    z = p1.to_numpy(float)
    z = (z - z.mean(0)) / z.std(0, ddof=1)             # scale(z)
    return z * np.array([weights.get(c, 1.0) for c in COLUMNS])


def r_stream_replay(p1: pd.DataFrame, eps: float, weights: dict[str, float], seed: int = 999999):
    """The paper's ``nbrs`` random stream on the same neighbourhoods: visit order
    ``sample(1:n, n)``, then one uniform per column for each record with a neighbour."""
    z = scaled(p1, weights)
    raw = p1.to_numpy(float)
    n, p = z.shape
    r = RStream(seed)
    source = np.tile(np.arange(n)[:, None], (1, p))
    suppressed = np.zeros(n, dtype=bool)
    for i in r.sample(n, n):
        d = np.sqrt(((z - z[i]) ** 2).sum(1))
        nb = np.flatnonzero(d < eps)
        nb = nb[nb != i]
        if nb.size == 0:
            suppressed[i] = True
            continue
        source[i] = nb[(nb.size * r.unif(p)).astype(np.int64)]
    out = raw[source, np.arange(p)]
    out[suppressed] = np.nan
    released = pd.DataFrame(out, index=p1.index, columns=COLUMNS)
    return released, source, suppressed


def coef_table(original: pd.DataFrame, released: pd.DataFrame) -> pd.DataFrame:
    cmp = compare_analyses(original, released, [LinearRegression("wageinc", REGRESSORS, name="wageinc")])
    t = cmp.to_frame().set_index("quantity")
    return t.loc[REGRESSORS, ["original", "released", "rel_diff", "original_se", "diff_in_se"]]


def step(eps: float, weights: dict[str, float]) -> NeighboursStep:
    return NeighboursStep(Radius(eps=eps), variables=COLUMNS, categorical=CATEGORICAL, weights=weights,
                          analyses=[LinearRegression("wageinc", REGRESSORS, name="wageinc")],
                          track=[QUERY])


def suppressed_profile(p1: pd.DataFrame, suppressed: np.ndarray) -> dict:
    """Who is suppressed, and what dropping them alone (no resampling) does to the fit."""
    s = p1[suppressed]
    kept = LinearRegression("wageinc", REGRESSORS).run(p1[~suppressed])["estimates"]
    orig = LinearRegression("wageinc", REGRESSORS).run(p1)["estimates"]
    return {"n": int(suppressed.sum()),
            "share_female": float((s["sex"] == 2).mean()) if len(s) else float("nan"),
            "share_female_all": float((p1["sex"] == 2).mean()),
            "share_phd": float((s["phd"] == 1).mean()) if len(s) else float("nan"),
            "share_phd_all": float((p1["phd"] == 1).mean()),
            "share_ms": float((s["ms"] == 1).mean()) if len(s) else float("nan"),
            "share_ms_all": float((p1["ms"] == 1).mean()),
            "drop_only_rel_change": {q: float(kept[q] / orig[q] - 1) for q in REGRESSORS}}


def run_config(name: str, p1: pd.DataFrame, md: Microdata, repeats: int) -> dict:
    eps, weights, call, target = CONFIGS[name]
    print(f"\n=== {name}: eps = {eps}, weights {weights} (R: {call}) ===")
    # sdckit's step with its own random stream
    r = step(eps, weights).apply(md, rng=20180822)
    t = coef_table(p1, r.microdata.frame)
    # the paper's random stream through the same neighbourhoods, certified independently
    rel, source, supp = r_stream_replay(p1, eps, weights)
    radius = np.full(len(p1), eps)
    checks = check_neighbours(p1, rel, COLUMNS, CATEGORICAL, weights, source,
                              np.ones(len(p1), dtype=bool), supp, radius,
                              np.zeros(len(p1), dtype=bool), knn=False, k=1)
    tr = coef_table(p1, rel)
    paper = dict(zip(REGRESSORS, PAPER[target]))
    show = pd.DataFrame({
        "original": t["original"], "paper": pd.Series(paper),
        "sdckit": t["released"], "sdckit_rel": t["rel_diff"],
        "r_stream": tr["released"], "r_stream_rel": tr["rel_diff"],
        "sdckit_vs_paper": (t["released"] - pd.Series(paper)) / pd.Series(paper).abs(),
        "r_stream_vs_paper": (tr["released"] - pd.Series(paper)) / pd.Series(paper).abs()})
    print(f"suppressed: sdckit {r.summary['records_suppressed']} ({r.summary['suppressed_share']:.2%}),"
          f" R stream {int(supp.sum())}; same records: {bool((r.suppressed == supp).all())}; "
          f"neighbours per record mean {r.summary['neighbours_mean']:.1f}")
    print(show.to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"R-stream replay certified by check_neighbours: {[(g.name, g.holds) for g in checks]}")
    pc = rel.dropna()
    young = pc.query(QUERY)
    print(f"R stream: row 7997 now {rel.loc[7997].to_dict()}; released records matching "
          f"{QUERY!r}: {young.round(4).to_dict('index')}")
    prof = suppressed_profile(p1, supp)
    print("suppressed records: female {share_female:.1%} (all {share_female_all:.1%}), phd "
          "{share_phd:.1%} (all {share_phd_all:.1%}), ms {share_ms:.1%} (all {share_ms_all:.1%})"
          .format(**prof) + "; dropping them alone moves the coefficients by "
          + ", ".join(f"{q} {v:+.1%}" for q, v in prof["drop_only_rel_change"].items()))
    out = {"eps": eps, "weights": {c: weights.get(c, 1.0) for c in COLUMNS}, "r_call": call,
           "paper_table": target,
           "suppressed_share": float(r.summary["suppressed_share"]),
           "r_stream_suppressed_share": float(supp.mean()),
           "same_suppressed_records": bool((r.suppressed == supp).all()),
           "coef_original": {q: float(t.loc[q, "original"]) for q in REGRESSORS},
           "coef_released": {q: float(t.loc[q, "released"]) for q in REGRESSORS},
           "max_rel_diff": float(t["rel_diff"].max()),
           "max_abs_diff_in_se": float(t["diff_in_se"].abs().max()),
           "r_stream_coef_released": {q: round(float(tr.loc[q, "released"]), 1) for q in REGRESSORS},
           "r_stream_max_rel_diff": float(tr["rel_diff"].max()),
           "r_stream_certified": all(g.holds for g in checks),
           "r_stream_row_7997": {k: (None if pd.isna(v) else float(v)) for k, v in rel.loc[7997].items()},
           "suppressed_profile": prof,
           "tracked_original_among_released": len(r.tracking.targets[0].original_among_released),
           "tracked_released_matches": len(r.tracking.targets[0].released_rows)}
    if repeats:
        reps = []
        for seed in range(repeats):
            rr = step(eps, weights).apply(md, rng=seed)
            tt = coef_table(p1, rr.microdata.frame)
            reps.append(tt["released"].to_numpy())
        a = np.array(reps)
        rel_max = (np.abs(a - t["original"].to_numpy()) / np.abs(t["original"].to_numpy())).max(1)
        pct = {q: float((a[:, j] <= paper[q]).mean()) for j, q in enumerate(REGRESSORS)}
        print(f"{repeats} sdckit seeds: largest relative difference median {np.median(rel_max):.3f} "
              f"[{rel_max.min():.3f}, {rel_max.max():.3f}]; share of seeds at or below the paper's "
              f"coefficient: {pct}")
        out["repeats"] = {"n": repeats, "max_rel_diff_median": float(np.median(rel_max)),
                          "max_rel_diff_min": float(rel_max.min()),
                          "max_rel_diff_max": float(rel_max.max()),
                          "coef_mean": {q: float(a[:, j].mean()) for j, q in enumerate(REGRESSORS)},
                          "coef_sd": {q: float(a[:, j].std(ddof=1)) for j, q in enumerate(REGRESSORS)},
                          "paper_percentile": pct}
    return out


def reproduction(p1: pd.DataFrame, res: dict) -> list[dict]:
    """Paper's value, sdckit's value (R-stream replay and own stream), difference, cause."""
    rows = []
    orig = LinearRegression("wageinc", REGRESSORS).run(p1)["estimates"]
    for q, pv in zip(REGRESSORS, PAPER["original"]):
        rows.append({"quantity": f"original coefficient {q}", "paper": pv, "sdckit": round(float(orig[q]), 1),
                     "difference": round(float(orig[q]) - pv, 2), "cause": ""})
    for name, target in (("paper_configuration", "first"), ("second_call", "second")):
        if name not in res:
            continue
        r = res[name]
        for q, pv in zip(REGRESSORS, PAPER[target]):
            v = r["r_stream_coef_released"][q]
            rows.append({"quantity": f"{name} released {q} (R stream)", "paper": pv, "sdckit": v,
                         "difference": round(v - pv, 2), "cause": ""})
        for q, pv in zip(REGRESSORS, PAPER[target]):
            v = r["coef_released"][q]
            d = (v - pv) / abs(pv)
            cause = ("another random stream: the spread over sdckit seeds covers it (see repeats)"
                     if abs(d) > 0.10 else "")
            rows.append({"quantity": f"{name} released {q} (sdckit seed 20180822)", "paper": pv,
                         "sdckit": round(v, 1), "difference": round(v - pv, 2),
                         "rel_difference": round(d, 4), "cause": cause})
    if "printed_call" in res:
        r = res["printed_call"]
        rows.append({"quantity": "printed call (eps 0.3): largest relative change", "paper": 0.122,
                     "sdckit": round(r["r_stream_max_rel_diff"], 4),
                     "difference": round(r["r_stream_max_rel_diff"] - 0.122, 4),
                     "cause": "the paper's first table was made with eps = 0.6 (source comment); "
                              "eps = 0.3 suppresses %.1f%% of records, mostly women and PhDs"
                              % (100 * r["r_stream_suppressed_share"])})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="no repeated seeds")
    ap.add_argument("--out", type=Path, default=None,
                    help="folder for the tables (CSV); default: a new temporary folder")
    args = ap.parse_args()
    if not DATA.exists():
        print(json.dumps({"skipped": f"{DATA.name} is absent (../shared/data beside the checkout)"}))
        return
    out_dir = args.out or Path(tempfile.mkdtemp(prefix="matloff_prgeng_"))
    out_dir.mkdir(parents=True, exist_ok=True)
    p1 = paper_sample()
    md = Microdata(p1)
    orig = LinearRegression("wageinc", REGRESSORS).run(p1)["estimates"]
    pos = int(np.flatnonzero(p1.index == 7997)[0]) + 1
    print(f"paper's sample: {len(p1)} records (R set.seed(99999), occ 100..109); prgeng row 7997 is "
          f"record {pos} (paper: 3236); original coefficients "
          + ", ".join(f"{q} {orig[q]:.1f} (paper {v})" for q, v in zip(REGRESSORS, PAPER["original"])))
    pd.set_option("display.width", 160)
    repeats = 0 if args.quick else 20
    res = {name: run_config(name, p1, md, repeats) for name in CONFIGS}
    table = reproduction(p1, res)
    pd.DataFrame(table).to_csv(out_dir / "matloff_reproduction.csv", index=False)
    print("\nReproduction (paper vs sdckit):")
    print(pd.DataFrame(table).to_string(index=False))
    print(f"tables written to {out_dir}")
    pc = res["paper_configuration"]
    line = {
        "0.3": res["printed_call"], "0.6": res["second_call"],
        "configurations": res,
        "sample": {"record_of_row_7997": pos, "coef_original": {q: float(orig[q]) for q in REGRESSORS}},
        "paper_configuration": {"eps": pc["eps"], "weights": pc["weights"],
                                "suppressed_share": pc["suppressed_share"],
                                "max_rel_diff": pc["max_rel_diff"],
                                "r_stream_max_rel_diff": pc["r_stream_max_rel_diff"],
                                "r_stream_coef_released": pc["r_stream_coef_released"],
                                "printed_call_eps": CONFIGS["printed_call"][0]},
        "reproduction": table,
    }
    print(json.dumps(line))


if __name__ == "__main__":
    main()
