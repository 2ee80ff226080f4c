"""Condition C1 as linear constraints, the validation of the inputs, and the certificate: no
matrix leaves optimal PRAM without the independent exact check of
:mod:`sdckit.pram.recognition` (:func:`finish_result`).

C1 (eq. (1)) is linear in P once the denominator D_pi(k0) = sum_l U_0(l) sum_{k: k_pi = k0} P_lk
is an auxiliary variable: sum_{k: k_pi = k0} P_mk <= alpha D_pi(k0).

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
TU Delft (DIAM) and Universite Pierre et Marie Curie; sections 2-4.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..._validation import check_float
from ...errors import InputError, SolverError
from ...result import ResultDisplay
from ..recognition import (
    Combination,
    RecognitionCheck,
    combination_counts,
    projection_codes,
    recognition_check,
    reduced_check_set,
)
from .highs import solve_highs
from .l2 import l2_loss_value

OWNER = "OptimalPRAM"
#: the optimiser aims at alpha * (1 - SAFETY) so that solver tolerances never push a ratio
#: over alpha; the certificate is the exact check at alpha itself
SAFETY = 1e-4
MAX_FULL_ELEMENTS = 200


@dataclass(frozen=True)
class OptimalPRAMResult(ResultDisplay):
    """The certified optimal matrix and its evidence.

    Attributes
    ----------
    P : ndarray (full support) or scipy CSR matrix (restricted support), shape (N, N)
    loss : float
        l2(P) of section 3.
    min_diagonal : float
        Smallest P_kk over the occurring elements.
    expected_changes : float
        sum_m U_0(m) (1 - P_mm): records expected to change.
    status : str
        Solver status (``"optimal"``; anything else raised an error instead).
    check : RecognitionCheck
        The independent exact C1 check of P at alpha (``check.holds`` is always True here).
    check_before : RecognitionCheck
        The same check on the identity (the data as they are).
    details : dict
        Iterations, Frank-Wolfe gap, target set and how it was chosen, constraint counts.
    """

    P: object
    loss: float
    min_diagonal: float
    expected_changes: float
    status: str
    check: RecognitionCheck
    check_before: RecognitionCheck
    support: str
    seconds: float
    details: dict = field(default_factory=dict)

    def summary(self) -> dict:
        return {"support": self.support, "l2_loss": self.loss, "min_diagonal": self.min_diagonal,
                "expected_changes": self.expected_changes, "solver_status": self.status,
                "max_ratio_before": self.check_before.max_ratio,
                "max_ratio_after": self.check.max_ratio, "seconds": self.seconds,
                **{k: v for k, v in self.details.items() if np.isscalar(v) or isinstance(v, str)}}


def validate_inputs(counts, shape, combinations, alpha, gamma):
    """The optimiser's inputs, checked and normalised (:func:`sdckit.pram.optimal.optimal_matrix`).

    Parameters
    ----------
    counts : array_like, shape (N,)
        U_0: non-negative whole numbers, N the product of ``shape``.
    shape : sequence of int
        The number of categories of each variable of the joint space.
    combinations : sequence of sequence of int
        The watched variable combinations (indices into ``shape``).
    alpha : float
        The C1 bound, in (0, 1); n * alpha must be at least 1.
    gamma : float or None
        The reduced check set's share, in [0, 1).

    Returns
    -------
    tuple
        ``(counts as float array, shape as tuple, combinations as tuples, alpha, gamma)``.

    Raises
    ------
    ParameterError, InputError
        On a value out of range or inconsistent inputs.
    """
    alpha = check_float(OWNER, "alpha", alpha, low=0, high=1, low_open=True, high_open=True)
    if gamma is not None:
        gamma = check_float(OWNER, "gamma", gamma, low=0, high=1, high_open=True)
    shape = tuple(int(s) for s in shape)
    counts = np.asarray(counts, dtype=float)
    if counts.shape != (int(np.prod(shape)),):
        raise InputError(f"{OWNER}: counts has {counts.size} entries but the joint space of "
                         f"shape {shape} has {int(np.prod(shape))} elements")
    if np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise InputError(f"{OWNER}: counts must be non-negative whole numbers (U_0)")
    n = counts.sum()
    if n * alpha < 1:
        raise InputError(
            f"{OWNER}: n = {n:g} records < 1/alpha = {1 / alpha:g}: even a constant matrix gives "
            f"every ratio 1/n = {1 / max(n, 1):.3g} > alpha, so no PRAM matrix meets C1; raise "
            "alpha or release more records")
    for pi in combinations:
        if not pi or max(pi) >= len(shape) or min(pi) < 0:
            raise InputError(f"{OWNER}: combination {pi!r} refers to variables outside 0..{len(shape) - 1}")
    return counts, shape, tuple(tuple(pi) for pi in combinations), alpha, gamma


def finish_result(P, counts, shape, combos, alpha, support, status, t0, details) -> OptimalPRAMResult:
    """The optimiser's result, certified by the independent checker (never an unchecked matrix).

    Parameters
    ----------
    P : ndarray or sparse matrix, shape (N, N)
        The solved matrix.
    counts, shape, combos, alpha
        As returned by :func:`validate_inputs`.
    support : str
        Which support the solver used (full or restricted).
    status : str
        The solver's status.
    t0 : float
        ``time.perf_counter()`` when the solve started.
    details : dict
        Solver details for the result (a ``"_loss"`` entry is taken as the loss).

    Returns
    -------
    OptimalPRAMResult

    Raises
    ------
    SolverError
        When the matrix fails C1 at ``alpha``.
    """
    check = recognition_check(P, counts, shape, combos, alpha, max_violations=50)
    if not check.holds:
        raise SolverError(
            f"{OWNER}: the solver ended ({status}) with a matrix that fails C1 at alpha = {alpha:g}: "
            f"{len(check.violations)} violations, largest ratio {check.max_ratio:.6g} at element "
            f"{check.element}, combination {check.combination}, k0 = {check.k0}; no matrix is returned")
    diag = P.diagonal() if sp.issparse(P) else np.diag(P)
    occ = counts > 0
    loss = (details.pop("_loss") if "_loss" in details else l2_loss_value(P, counts))
    before = recognition_check(sp.identity(counts.size, format="csr"), counts, shape, combos, alpha,
                               max_violations=50)
    return OptimalPRAMResult(
        P=P, loss=float(loss), min_diagonal=float(diag[occ].min()),
        expected_changes=float(counts @ (1.0 - diag)), status=status, check=check,
        check_before=before, support=support, seconds=time.perf_counter() - t0, details=details)


def full_constraints(counts, shape, combos, alpha_s, gamma):
    """Rows of the full problem over x = vec(P) (row-major) and y (one D_pi(k0) per watched pair).

    - sum_k P_mk = 1                                             (rows sum to 1)
    - y_j - alpha sum_l U_0(l) sum_{k: k_pi = k0} P_lk = 0   (alpha times the denominator of (1);
      scaled so the QP's rows are of comparable size)
    - sum_{k: k_pi = k0} P_mk - y_j <= 0 for (m, pi, k0) in the reduced set     (C1)

    Parameters
    ----------
    counts, shape, combos, gamma
        As returned by :func:`validate_inputs`.
    alpha_s : float
        The C1 bound with the optimiser's margin (:data:`SAFETY`).

    Returns
    -------
    tuple
        ``(A, row_lo, row_hi, col_lo, col_hi, triples, pairs, first_c1, frozen)``: the
        constraint matrix and bounds, the watched (m, pi, k0) triples and (pi, k0) pairs, the
        first C1 row, and the entries of P held at 0.
    """
    N = counts.size
    alpha = alpha_s / (1 - SAFETY)
    triples = reduced_check_set(counts, shape, combos, alpha_s, gamma)
    # pairs on the boundary, 1/alpha <= U_pi(k0) < 1/alpha_s (C1 holds at I with equality up to
    # the margin): instead of their rows, no record of the group G = {k: k_pi = k0} may leave
    # it. Then for m in G the ratio is 1/D <= 1/U_pi(k0) <= alpha, and for m outside G it is
    # P_mG / D <= P_mG / U_pi(k0) <= alpha: C1 holds exactly there with no margin needed.
    frozen = np.zeros((N, N), dtype=bool)
    u_of = {p: combination_counts(counts, shape, pi) for p, pi in enumerate(combos)}
    boundary = {(p, k) for _, p, k in triples if u_of[p][k] * alpha >= 1 > u_of[p][k] * alpha_s}
    for p, k in boundary:
        G = projection_codes(shape, combos[p]) == k
        frozen[np.ix_(G, ~G)] = True
    triples = [t for t in triples if (t[1], t[2]) not in boundary]
    occ = np.flatnonzero(counts > 0)
    pairs = sorted({(p, k) for _, p, k in triples})
    pair_index = {pk: j for j, pk in enumerate(pairs)}
    n_x, n_y = N * N, len(pairs)
    rows, cols, vals = [], [], []
    # row sums
    rows.append(np.repeat(np.arange(N), N))
    cols.append(np.arange(n_x))
    vals.append(np.ones(n_x))
    r0 = N
    members = {}
    for p, pi in enumerate(combos):
        codes = projection_codes(shape, pi)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(int(codes.max()) + 2))
        members[p] = (order, bounds)

    def group(p, k):
        order, bounds = members[p]
        return order[bounds[k]:bounds[k + 1]]

    for j, (p, k) in enumerate(pairs):
        g = group(p, k)
        ll, kk = np.meshgrid(occ, g, indexing="ij")
        rows.append(np.full(ll.size + 1, r0 + j))
        cols.append(np.concatenate([(ll * N + kk).ravel(), [n_x + j]]))
        vals.append(np.concatenate([-alpha_s * np.repeat(counts[occ], g.size), [1.0]]))
    r1 = r0 + n_y
    for i, (m, p, k) in enumerate(triples):
        g = group(p, k)
        rows.append(np.full(g.size + 1, r1 + i))
        cols.append(np.concatenate([m * N + g, [n_x + pair_index[(p, k)]]]))
        vals.append(np.concatenate([np.ones(g.size), [-1.0]]))
    n_rows = r1 + len(triples)
    A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n_rows, n_x + n_y))
    row_lo = np.concatenate([np.ones(N), np.zeros(n_y), np.full(len(triples), -np.inf)])
    row_hi = np.concatenate([np.ones(N), np.zeros(n_y), np.zeros(len(triples))])
    col_lo = np.zeros(n_x + n_y)
    col_hi = np.concatenate([np.ones(n_x), np.full(n_y, np.inf)])
    if gamma:
        col_lo[np.arange(N) * (N + 1)] = gamma
    col_hi[:n_x][frozen.ravel()] = 0.0
    return A, row_lo, row_hi, col_lo, col_hi, triples, pairs, r1, frozen


def elastic_report(A, row_lo, row_hi, col_lo, col_hi, first_c1: int, labels) -> str:
    """Why the problem is infeasible: an LP with a slack on every C1 row, minimising total slack.

    Parameters
    ----------
    A, row_lo, row_hi, col_lo, col_hi
        The problem's constraints (:func:`full_constraints`).
    first_c1 : int
        The first C1 row of ``A`` (the rows above it keep no slack).
    labels : callable
        Names a C1 row for the message.

    Returns
    -------
    str
        The rows that keep a slack (the constraints no feasible matrix meets), for the error.
    """
    n_c1 = A.shape[0] - first_c1
    S = sp.vstack([sp.csc_matrix((first_c1, n_c1)), sp.identity(n_c1, format="csc")])
    A2 = sp.hstack([A, S, -S]).tocsc()                      # A x + s+ - s- within the bounds
    cost = np.concatenate([np.zeros(A.shape[1]), np.ones(2 * n_c1)])
    status, x, _ = solve_highs(cost, A2, row_lo, row_hi, np.concatenate([col_lo, np.zeros(2 * n_c1)]),
                          np.concatenate([col_hi, np.full(2 * n_c1, np.inf)]))
    if status != "optimal":
        return f"(the elastic LP also ended {status})"
    slack = x[A.shape[1]:A.shape[1] + n_c1] + x[A.shape[1] + n_c1:]
    bad = np.flatnonzero(slack > 1e-9)[np.argsort(-slack[slack > 1e-9])][:10]
    if bad.size == 0:
        return ("none: an elastic LP meets every constraint, so the problem is feasible and the "
                "failure is numerical (try gamma, or support='restricted')")
    return "; ".join(f"{labels(i)} short by {slack[i]:.3g}" for i in bad)


def _denominators(P, counts, shape, combos, pairs):
    """D_pi(k0) = sum_l U_0(l) sum_{k: k_pi = k0} P_lk for the given (pi index, k0) pairs."""
    c = counts @ P
    out = np.empty(len(pairs))
    cache = {}
    for j, (p, k) in enumerate(pairs):
        if p not in cache:
            cache[p] = np.bincount(projection_codes(shape, combos[p]), weights=c)
        out[j] = cache[p][k]
    return out


def projection_codes_of(shape: Sequence[int], pi: Combination, elements: np.ndarray) -> np.ndarray:
    """Index of k_pi in X_pi for the given flat elements k (no full-space arrays)."""
    multi = np.unravel_index(np.asarray(elements, dtype=np.int64), tuple(shape))
    return np.ravel_multi_index(tuple(multi[j] for j in pi), tuple(shape[j] for j in pi))
