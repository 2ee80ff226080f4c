"""The target set of the restricted support: elements that cover every problem combination
(pi, k0) with 0 < U_pi(k0) < 1/alpha (a set cover: HiGHS MILP over every element of small
spaces, greedy merging of compatible combinations for large ones; end of section 4).

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
TU Delft (DIAM) and Universite Pierre et Marie Curie; sections 2-4.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ...errors import SolverError
from ..recognition import Combination
from .constraints import OWNER
from .highs import solve_highs


def target_cover(counts: np.ndarray, shape: Sequence[int], combos: Sequence[Combination],
                 problems: Sequence[tuple[int, int]], *, method: str = "milp",
                 max_candidates: int = 50_000) -> tuple[np.ndarray, str]:
    """Elements t that together cover every problem (pi, k0): for each, some t has t_pi = k0.

    ``method="milp"``: the minimum cover by a HiGHS MILP over every element of the joint space
    (when it has at most ``max_candidates`` elements; else over the greedy-merge candidates).
    ``method="greedy"``: repeatedly take an uncovered problem, merge in every compatible
    uncovered problem (same values on shared variables), fill the free variables with their
    most frequent category. Returns the targets (flat indices) and a description of the rule used.
    """
    shape = tuple(shape)
    if not problems:
        return np.zeros(0, dtype=np.int64), "none needed"
    V = len(shape)
    req = np.full((len(problems), V), -1, dtype=np.int64)  # the partial assignment of each problem
    for i, (p, k) in enumerate(problems):
        pi = combos[p]
        req[i, list(pi)] = np.unravel_index(k, [shape[j] for j in pi])
    t = np.asarray(counts, dtype=float).reshape(shape)
    modes = [int(np.argmax(t.sum(axis=tuple(a for a in range(V) if a != j)))) for j in range(V)]

    def covered_by(elem_codes):  # (E, V) full assignments -> (E, problems) coverage
        return np.all((req[None] == -1) | (req[None] == elem_codes[:, None, :]), axis=2)

    N = int(np.prod(shape))
    if method == "milp" and N <= max_candidates:
        cand = np.stack(np.unravel_index(np.arange(N), shape), axis=1)
        rule = f"HiGHS MILP (minimum set cover over all {N} elements)"
    else:
        cand = _greedy_merge(req, modes)
        if method == "greedy":
            idx = np.ravel_multi_index(tuple(cand.T), shape)
            return np.unique(idx), "greedy merge of compatible problem combinations"
        rule = f"HiGHS MILP (minimum set cover over {len(cand)} greedy-merge candidates)"
    cover = covered_by(cand)  # (E, problems)
    keep = cover.any(axis=1)
    cand, cover = cand[keep], cover[keep]
    E = len(cand)
    # tie-break towards elements covering more problems
    cost = 1.0 - 1e-3 * cover.sum(axis=1) / cover.shape[1]
    status, z, _ = solve_highs(cost, sp.csc_matrix(cover.T.astype(float)), np.ones(cover.shape[1]),
                          np.full(cover.shape[1], np.inf), np.zeros(E), np.ones(E),
                          integrality=np.ones(E, dtype=bool), time_limit=60)
    if status != "optimal":
        raise SolverError(f"{OWNER}: the set-cover MILP ended '{status}'")
    chosen = cand[z > 0.5]
    return np.unique(np.ravel_multi_index(tuple(chosen.T), shape)), rule


def _greedy_merge(req: np.ndarray, modes: list[int]) -> np.ndarray:
    uncovered = np.ones(len(req), dtype=bool)
    out = []
    while uncovered.any():
        a = req[np.flatnonzero(uncovered)[0]].copy()
        while True:
            compat = np.all((req == -1) | (a == -1) | (req == a), axis=1)
            within = np.all((req == -1) | (req == a), axis=1)  # already covered by a
            grow = np.flatnonzero(compat & ~within & uncovered)
            if grow.size == 0:
                break
            a = np.where(a == -1, req[grow[0]], a)
        a = np.where(a == -1, modes, a)
        uncovered &= ~np.all((req == -1) | (req == a), axis=1)
        out.append(a)
    return np.array(out, dtype=np.int64)
