"""Risk of spontaneous recognition after PRAM: condition C1 of Cator, Hensbergen & Rozenholc.

A user who sees the released value ``x_pi(i) = k0`` on a combination ``pi`` of identifying
variables takes record ``i`` for an individual with ``xi = m`` with posterior probability

    sum_{k: k_pi = k0} P_{mk} / sum_l U_0(l) sum_{k: k_pi = k0} P_{lk}            (1)

and C1 requires this to be at most alpha for every occurring m (U_0(m) > 0), every pi in
Pi and every k0 in X_pi, including combinations k0 that do not occur in the data but into
which P can move records. For P = I the ratio is 1 / U_pi(k0).

This module is the independent checker (used by the release gate as
``max_recognition_ratio``) and the reductions of section 4 of the paper:

- ineq. (2): the ratio is at most 1 / U_0(m), so only m with U_0(m) < 1/alpha can violate;
- with every diagonal entry P_kk >= gamma: for k0 with U_pi(k0) >= 1 the ratio is at most
  1 / (gamma U_pi(k0)), so only k0 with U_pi(k0) < 1/(gamma alpha) need checking;
- ineq. (5): for m_pi != k0 (and U_pi(k0) >= 1) the ratio is at most (1 - gamma) /
  (gamma U_pi(k0)), so when (1 - gamma)/gamma < alpha only k0 = m_pi needs checking.

Combinations absent from the data (U_pi(k0) = 0) get no bound from the diagonal (the
denominator holds no diagonal term), so the reductions always keep them for rare m: this is
where a PRAM matrix can create a new, recognisable combination.

Everything works on plain arrays: ``counts`` over the joint space of the identifying
variables in C order (``np.ravel_multi_index`` over the variables' codes), ``shape`` the
category counts, ``P`` a dense array or scipy sparse matrix over the same space.

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
TU Delft (DIAM) and Universite Pierre et Marie Curie; sections 2 (C1, eqs. (1), (2)) and 4
(the reductions and ineq. (5)).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import check_float, param_error
from ..errors import InputError

Combination = tuple[int, ...]

__all__ = [
    "RecognitionCheck", "normalize_combinations", "projection_codes", "combination_counts",
    "recognition_check", "brute_force_ratios", "reduced_check_set", "reduced_max_ratio",
    "problem_combinations",
]


# --------------------------------------------------------------------------- combinations
def normalize_combinations(combinations, variables: Sequence[str], *,
                           owner: str = "the recognition check") -> tuple[Combination, ...]:
    """The set Pi as sorted tuples of variable indices.

    ``combinations`` is an int (every combination of that many variables; 3 is the Statistics
    Netherlands rule) or a list of lists of variable names or indices.
    """
    m = len(variables)
    if isinstance(combinations, (int, np.integer)) and not isinstance(combinations, bool):
        size = int(combinations)
        if not 1 <= size <= m:
            raise param_error(owner, "combinations", f"an int in [1, {m}] (the number of key "
                              "variables) or a list of lists of variable names", combinations)
        return tuple(itertools.combinations(range(m), size))
    if isinstance(combinations, (str, bytes)) or not isinstance(combinations, Sequence) \
            or not combinations:
        raise param_error(owner, "combinations", "an int or a non-empty list of lists of "
                          "variable names", combinations)
    out: list[Combination] = []
    for combo in combinations:
        if isinstance(combo, (str, bytes)) or not isinstance(combo, Sequence) or not combo:
            raise param_error(owner, "combinations", "a list of non-empty lists of variable names",
                              combinations)
        idx = []
        for v in combo:
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= v < m:
                idx.append(int(v))
            elif isinstance(v, str) and v in variables:
                idx.append(list(variables).index(v))
            else:
                from .._validation import close_names
                raise InputError(f"{owner}: the combination {list(combo)!r} names {v!r}, which is "
                                 f"not one of the key variables {list(variables)!r} "
                                 f"({close_names(str(v), variables)})")
        t = tuple(sorted(set(idx)))
        if t not in out:
            out.append(t)
    return tuple(out)


def projection_codes(shape: Sequence[int], pi: Combination) -> np.ndarray:
    """For every element k of the joint space (C order), the index of k_pi in X_pi (C order)."""
    shape = tuple(int(s) for s in shape)
    grids = np.indices(shape).reshape(len(shape), -1)
    return np.ravel_multi_index(tuple(grids[j] for j in pi), tuple(shape[j] for j in pi))


def combination_counts(counts: np.ndarray, shape: Sequence[int], pi: Combination) -> np.ndarray:
    """U_pi(k0) for every k0 in X_pi (C order): the counts summed over the other variables."""
    t = np.asarray(counts, dtype=float).reshape(tuple(shape))
    other = tuple(j for j in range(len(shape)) if j not in pi)
    return t.sum(axis=other).ravel()


def problem_combinations(counts: np.ndarray, shape: Sequence[int],
                         combinations: Sequence[Combination], alpha: float) -> list[tuple[int, int]]:
    """The pairs (pi index, k0) with 0 < U_pi(k0) < 1/alpha: where P = I fails C1."""
    out = []
    for p, pi in enumerate(combinations):
        u = combination_counts(counts, shape, pi)
        out.extend((p, int(k)) for k in np.flatnonzero((u > 0) & (u * alpha < 1)))
    return out


# --------------------------------------------------------------------------- exact checker
@dataclass(frozen=True)
class RecognitionCheck:
    """Outcome of the exact C1 check.

    ``max_ratio`` is the largest left-hand side of (1) over every occurring m, every pi and
    every k0 (0 when no record can reach any combination, which does not happen for a
    stochastic P); ``element``, ``combination`` and ``k0`` locate it. ``violations`` lists
    every (m, pi, k0) with ratio > alpha, largest first, as dicts with the element index m,
    the combination (variable indices), k0 (codes on those variables) and the ratio.
    """

    alpha: float | None
    max_ratio: float
    element: int
    combination: Combination
    k0: tuple[int, ...]
    violations: tuple[dict, ...]
    n_checked: int

    @property
    def holds(self) -> bool:
        return self.alpha is not None and not self.violations

    def to_dict(self, variables: Sequence[str] | None = None, max_violations: int = 20) -> dict:
        def name(combo):
            return [variables[j] for j in combo] if variables is not None else list(combo)
        return {"alpha": self.alpha, "max_ratio": self.max_ratio, "holds": self.holds,
                "worst": {"element": self.element, "combination": name(self.combination),
                          "k0": list(self.k0)},
                "n_violations": len(self.violations), "n_checked": self.n_checked,
                "violations": [{**v, "combination": name(v["combination"])}
                               for v in self.violations[:max_violations]]}


def _aggregate(P, pi_codes: np.ndarray, n_pi: int, rows: np.ndarray):
    """A_pi[m, k0] = sum_{k: k_pi = k0} P_{mk} for the rows m in ``rows`` (sparse if P is)."""
    if sp.issparse(P):
        E = sp.csr_matrix((np.ones(pi_codes.size), (np.arange(pi_codes.size), pi_codes)),
                          shape=(pi_codes.size, n_pi))
        return sp.csr_matrix(sp.csr_matrix(P)[rows] @ E)
    A = np.zeros((rows.size, n_pi))
    np.add.at(A.T, pi_codes, np.asarray(P, dtype=float)[rows].T)
    return A


def recognition_check(P, counts: np.ndarray, shape: Sequence[int],
                      combinations: Sequence[Combination], alpha: float | None = None,
                      *, max_violations: int | None = None) -> RecognitionCheck:
    """The exact left-hand side of C1 (eq. (1)) for every occurring m, pi in Pi and k0 in X_pi.

    Parameters
    ----------
    P : ndarray or scipy sparse matrix, shape (N, N)
        Transition matrix over the joint space (rows: original, columns: released).
    counts : ndarray, shape (N,)
        U_0 over the joint space, C order.
    shape : sequence of int
        Category counts of the identifying variables (prod(shape) == N).
    combinations : sequence of tuple of int
        The set Pi, as variable indices.
    alpha : float, optional
        Security level: the violations are the ratios > alpha.

    Returns
    -------
    RecognitionCheck
        The largest ratio, where it is, and every violation (largest first).

    Notes
    -----
    For each pi the ratio of (m, k0) is A_pi[m, k0] / D_pi[k0] with A_pi = P E_pi (E_pi the
    indicator of k_pi = k0) and D_pi = U_0^T A_pi (the expected released count of k0). Where
    A_pi[m, k0] = 0 the ratio is 0, so only the nonzeros of A_pi are evaluated: every
    combination any occurring record can be moved into, absent from the data or not.
    """
    counts = np.asarray(counts, dtype=float)
    N = int(np.prod(shape))
    if counts.shape != (N,) or P.shape != (N, N):
        raise InputError(f"recognition check: counts has shape {counts.shape} and P {P.shape}, "
                         f"but the joint space of shape {tuple(shape)} has {N} elements")
    if alpha is not None:
        alpha = check_float("the recognition check", "alpha", alpha, low=0, high=1,
                            low_open=True, high_open=True)
    occ = np.flatnonzero(counts > 0)
    u = counts[occ]
    best = (0.0, -1, (), ())
    viol: list[tuple[float, int, Combination, int]] = []
    n_checked = 0
    for pi in combinations:
        codes = projection_codes(shape, pi)
        n_pi = int(np.prod([shape[j] for j in pi]))
        A = _aggregate(P, codes, n_pi, occ)
        if sp.issparse(A):
            D = np.asarray(A.T @ u).ravel()                  # D_pi(k0) = sum_l U_0(l) A_pi[l, k0]
            A = A.tocoo()
            r, c, a = A.row, A.col, A.data
        else:
            D = u @ A
            r, c = np.nonzero(A)
            a = A[r, c]
        keep = a > 0
        r, c, a = r[keep], c[keep], a[keep]
        ratio = a / D[c]                                     # eq. (1)
        n_checked += occ.size * n_pi
        if ratio.size:
            j = int(np.argmax(ratio))
            if ratio[j] > best[0]:
                best = (float(ratio[j]), int(occ[r[j]]), tuple(pi), int(c[j]))
            if alpha is not None:
                bad = np.flatnonzero(ratio > alpha)
                viol.extend((float(ratio[b]), int(occ[r[b]]), tuple(pi), int(c[b])) for b in bad)
    viol.sort(key=lambda v: -v[0])
    if max_violations is not None:
        viol = viol[:max_violations]

    def k0_codes(pi, k):
        return tuple(int(x) for x in np.unravel_index(k, tuple(shape[j] for j in pi))) if pi else ()

    return RecognitionCheck(
        alpha=alpha, max_ratio=best[0], element=best[1], combination=best[2],
        k0=k0_codes(best[2], best[3]) if best[2] else (),
        violations=tuple({"element": m, "combination": pi, "k0": k0_codes(pi, k), "ratio": q}
                         for q, m, pi, k in viol),
        n_checked=n_checked)


def brute_force_ratios(P, counts: np.ndarray, shape: Sequence[int],
                       combinations: Sequence[Combination]) -> dict[tuple[int, Combination, tuple], float]:
    """Eq. (1) by plain loops over m, pi, k0 and k (reference for tests; tiny spaces only)."""
    P = P.toarray() if sp.issparse(P) else np.asarray(P, dtype=float)
    counts = np.asarray(counts, dtype=float)
    shape = tuple(int(s) for s in shape)
    elements = list(itertools.product(*[range(s) for s in shape]))  # C order
    out = {}
    for m, _xm in enumerate(elements):
        if counts[m] <= 0:
            continue
        for pi in combinations:
            for k0 in itertools.product(*[range(shape[j]) for j in pi]):
                match = [k for k, xk in enumerate(elements) if tuple(xk[j] for j in pi) == k0]
                num = sum(P[m, k] for k in match)
                den = sum(counts[l] * sum(P[l, k] for k in match) for l in range(len(elements)))
                out[(m, tuple(pi), tuple(k0))] = num / den if num > 0 else 0.0
    return out


# --------------------------------------------------------------------------- reductions
def reduced_check_set(counts: np.ndarray, shape: Sequence[int],
                      combinations: Sequence[Combination], alpha: float,
                      gamma: float | None = None) -> list[tuple[int, int, int]]:
    """The (m, pi index, k0) that can violate C1 under the reductions of section 4.

    - ineq. (2): only m with 0 < U_0(m) < 1/alpha;
    - with diag(P) >= gamma: only k0 with U_pi(k0) < 1/(gamma alpha) (absent k0 included);
    - ineq. (5): if (1 - gamma)/gamma < alpha, for k0 with U_pi(k0) >= 1 only k0 = m_pi.

    Valid for every row-stochastic P with P_kk >= gamma for all k (gamma = None: no diagonal
    bound, only (2) applies).
    """
    counts = np.asarray(counts, dtype=float)
    rare = np.flatnonzero((counts > 0) & (counts * alpha < 1))              # ineq. (2)
    out = []
    for p, pi in enumerate(combinations):
        u_pi = combination_counts(counts, shape, pi)
        codes = projection_codes(shape, pi)
        if gamma is None or gamma <= 0:
            cand = np.arange(u_pi.size)
        else:
            cand = np.flatnonzero(u_pi * gamma * alpha < 1)                 # U_pi(k0) < 1/(gamma alpha)
        absent = cand[u_pi[cand] == 0]
        present = cand[u_pi[cand] > 0]
        only_own = gamma is not None and gamma > 0 and (1 - gamma) / gamma < alpha  # ineq. (5)
        for m in rare:
            own = codes[m]
            if only_own:
                ks = np.concatenate([absent, present[present == own]])
            else:
                ks = cand
            out.extend((int(m), p, int(k)) for k in ks)
    return out


def reduced_max_ratio(P, counts: np.ndarray, shape: Sequence[int],
                      combinations: Sequence[Combination], alpha: float,
                      gamma: float | None = None) -> tuple[float, list[tuple[int, int, int, float]]]:
    """Eq. (1) evaluated only on :func:`reduced_check_set`: the largest ratio and the violations.

    With diag(P) >= gamma this reaches the same verdict and the same violations as the full
    check (the reductions only drop triples whose ratio is provably <= alpha).
    """
    counts = np.asarray(counts, dtype=float)
    Pd = P.toarray() if sp.issparse(P) else np.asarray(P, dtype=float)
    triples = reduced_check_set(counts, shape, combinations, alpha, gamma)
    if not triples:
        return 0.0, []
    t = np.array(triples)
    best, viol = 0.0, []
    for p, pi in enumerate(combinations):
        sel = t[t[:, 1] == p]
        if sel.size == 0:
            continue
        codes = projection_codes(shape, pi)
        n_pi = int(np.prod([shape[j] for j in pi]))
        E = np.zeros((codes.size, n_pi))
        E[np.arange(codes.size), codes] = 1.0
        A = Pd @ E
        D = counts @ A
        num = A[sel[:, 0], sel[:, 2]]
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(num > 0, num / np.where(D[sel[:, 2]] > 0, D[sel[:, 2]], 1.0), 0.0)
        best = max(best, float(ratio.max()))
        viol.extend((int(m), p, int(k), float(r)) for (m, _, k), r in zip(sel, ratio) if r > alpha)
    return best, viol
