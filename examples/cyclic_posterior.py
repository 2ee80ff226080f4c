"""Seed 002's worked example of cyclic perturbation and the posterior of four cells.

The delinquent-children table (OMB Statistical Policy Working Paper 22) is perturbed with the
seed's four cycles of a 4 x 4 table; the seed publishes the perturbed table and the posterior
of cells (1,2), (1,4), (3,4), (4,4) but not alpha and beta. This script

1. reconstructs the cycles applied (signs in {-1, 0, 1} for the seed's four cycles that turn
   the original into the perturbed table),
2. takes alpha = beta = 1/4: cell (1,4) lies away from every zero, so its posterior is the
   distribution of e_4 - e_3 with e_k iid (alpha, 1 - alpha - beta, beta); the seed's
   0.06, 0.25, 0.38, 0.25, 0.06 forces alpha + beta = 1/2 (from P(+-1) = gamma (alpha + beta)
   = 0.25) and alpha beta ~ 0.06, i.e. alpha = beta = 1/4 (alpha = 0.3, beta = 0.2 rounds the same),
3. computes the exact posterior of every cell (uniform prior) under both rules near zero —
   ``"no-change"`` (the mechanism sdckit runs: an impossible move becomes no change; 13 of
   the 24 published probabilities) and ``"skip-cycle"`` (a cycle with a blocked move is
   skipped with weight 1, the open direction keeping alpha or beta; all 24) — prints both
   beside the seed's table and checks the seed's theorem (the mode of each cell is its
   published value).

Ends with one JSON line.
"""

from __future__ import annotations

import itertools
import json

import numpy as np

from sdckit.tables.count import count_tables
from sdckit.tables.cyclic import shift_cycles
from sdckit.tables.posterior import perturbation_posterior

ORIGINAL = np.array([[15, 1, 3, 1], [20, 10, 10, 15], [3, 10, 10, 2], [12, 14, 7, 2]])
PERTURBED = np.array([[16, 0, 2, 2], [21, 11, 9, 14], [2, 11, 11, 1], [11, 13, 8, 3]])
CELLS = [(1, 2), (1, 4), (3, 4), (4, 4)]  # 1-based, as in the seed
SEED_TABLE = {(1, 2): [0.71, 0.25, 0.04, 0.00, 0.00, 0.00],
              (1, 4): [0.06, 0.25, 0.38, 0.25, 0.06, 0.00],
              (3, 4): [0.00, 0.71, 0.25, 0.04, 0.00, 0.00],
              (4, 4): [0.00, 0.05, 0.29, 0.44, 0.21, 0.01]}


def reconstruct(cycles: np.ndarray) -> list[tuple[int, ...]]:
    """Every sign vector e in {-1, 0, 1}^K with ORIGINAL + sum e_k C_k == PERTURBED."""
    return [e for e in itertools.product((-1, 0, 1), repeat=len(cycles))
            if np.array_equal(ORIGINAL + np.tensordot(np.array(e), cycles, axes=1), PERTURBED)]


def table_for(post) -> dict:
    out = {}
    for i, j in CELLS:
        p = np.zeros(6)
        x = post.cell((i - 1, j - 1))
        p[:min(6, x.size)] = x[:6]
        out[(i, j)] = p
    return out


def n_matches(table: dict) -> int:
    """How many of the seed's 24 probabilities are reproduced to 2 decimals."""
    return sum(abs(round(float(v), 2) - r) < 1e-9 for c, ref in SEED_TABLE.items() for v, r in zip(table[c], ref))


def main(alpha: float = 0.25, beta: float = 0.25) -> dict:
    cycles = shift_cycles(4, 4)
    signs = reconstruct(cycles)
    posts = {m: perturbation_posterior(PERTURBED, cycles, alpha, beta, model=m) for m in ("no-change", "skip-cycle")}
    tables = {m: table_for(p) for m, p in posts.items()}
    print(f"alpha = {alpha}, beta = {beta}; cycles applied (signs): {signs}; "
          f"{posts['no-change'].n_candidates} candidate original tables")
    print(f"{'cell':<8}{'':>12}" + "".join(f"{q:>7d}" for q in range(6)))
    for i, j in CELLS:
        print(f"({i},{j})   {'seed':>12}" + "".join(f"{v:7.2f}" for v in SEED_TABLE[(i, j)]))
        for m in ("no-change", "skip-cycle"):
            print(f"{'':<8}{m:>12}" + "".join(f"{v:7.2f}" for v in tables[m][(i, j)]))
    diffs = {m: float(max(np.abs(t[c] - np.array(SEED_TABLE[c])).max() for c in CELLS)) for m, t in tables.items()}
    out = {"alpha": alpha, "beta": beta, "cycle_signs": [list(s) for s in signs],
           "n_candidates": posts["no-change"].n_candidates,
           "matches_no_change": n_matches(tables["no-change"]), "matches_skip_cycle": n_matches(tables["skip-cycle"]),
           "max_abs_diff_no_change": round(diffs["no-change"], 4),
           "max_abs_diff_skip_cycle": round(diffs["skip-cycle"], 4),
           "posterior_no_change": {f"{i},{j}": [round(float(v), 4) for v in tables["no-change"][(i, j)]] for i, j in CELLS},
           "posterior_skip_cycle": {f"{i},{j}": [round(float(v), 4) for v in tables["skip-cycle"][(i, j)]] for i, j in CELLS},
           "seed_posterior": {f"{i},{j}": v for (i, j), v in SEED_TABLE.items()},
           "mode_violations_no_change": len(posts["no-change"].mode_violations()),
           "mode_violations_skip_cycle": len(posts["skip-cycle"].mode_violations()),
           "margin_count": count_tables(PERTURBED.sum(1), PERTURBED.sum(0))}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
