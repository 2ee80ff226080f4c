"""Optimal PRAM against spontaneous recognition (Cator, Hensbergen & Rozenholc).

The steward states the security level alpha and the set Pi of variable combinations an
intruder may look at; this module finds the transition matrix P with the least L2 loss

    l2(P) = (1/n^2) sum_i sum_{k,l} (P^{-1}_{lk})^2 P_{xi(i) l} - 1/n                 (sec. 3)
          = (1/n^2) sum_l c_l s_l - 1/n,   c = U_0^T P,  s_l = ||row l of P^{-1}||^2

subject to condition C1 (eq. (1), linear in P once the denominator is an auxiliary
variable), rows summing to 1, P >= 0 and optionally diag(P) >= gamma, and certifies it with
the independent checker of :mod:`sdckit.pram.recognition`. No matrix leaves this module
unchecked: a failed or infeasible solve raises :class:`~sdckit.errors.SolverError` naming the
constraints that cannot be met.

Two supports:

- ``"full"``: every entry of P is free (the paper's 48 x 48 experiment). Solver: sequential
  quadratic programming from the identity. Each step minimises the exact gradient plus a
  diagonal quadratic model (2 U_0(m) / n^2 per entry of row m, the exact second-order term of
  the loss at I) under the exact linear constraints with the HiGHS QP solver, followed by an
  Armijo backtracking on the true loss (the feasible set is convex, so every point on the
  step is feasible). A final HiGHS LP gives the Frank-Wolfe gap g^T (P - P_lp), an upper
  bound on the distance to the optimum for a convex loss.
- ``"restricted"`` (end of section 4, for large identifying spaces): records only move from
  frequent elements (U_0 >= 1/alpha; at most ``max_sources``, the most frequent) into a small
  target set that covers every problem combination (pi, k0) with 0 < U_pi(k0) < 1/alpha,
  chosen by a set cover (HiGHS MILP over every element of small spaces, greedy merging of
  compatible combinations for large ones). With sources and targets disjoint, P is block
  triangular and the loss separates over source rows f with moved mass M_f (r_f = sum M_f):

      l2 = (1/n^2) sum_f U_0(f) [ (1 + ||M_f||^2) / (1 - r_f) + r_f - 1 ],

  a convex function (quadratic-over-linear), so Newton-SQP with the exact Hessian converges to
  the restricted optimum. C1 reduces to D_pi(k0) >= 1/alpha for the combinations of rare
  elements (their rows stay the identity), and sources satisfy it by ineq. (2). P is sparse.

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
TU Delft (DIAM) and Universite Pierre et Marie Curie; sections 2-4.
Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. and de Wolf, P.-P. (1998). Post
randomisation for statistical disclosure control. *Journal of Official Statistics* 14(4).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._validation import check_choice, check_float, check_int
from ..errors import InputError, SolverError
from .._highs import build_lp
from .recognition import (
    Combination, RecognitionCheck, combination_counts, problem_combinations, projection_codes,
    recognition_check, reduced_check_set,
)

OWNER = "OptimalPRAM"
#: the optimiser aims at alpha * (1 - SAFETY) so that solver tolerances never push a ratio
#: over alpha; the certificate is the exact check at alpha itself
SAFETY = 1e-4
MAX_FULL_ELEMENTS = 200
#: restricted support: above this many free entries Frank-Wolfe replaces the QP steps
QP_MAX_VARIABLES = 3000
#: seconds one HiGHS QP subproblem may take before an LP step replaces it
QP_TIME_LIMIT = 5.0


# --------------------------------------------------------------------------- the L2 loss
def l2_loss_value(P, counts: np.ndarray) -> float:
    """l2(P) of section 3 (the PRAM engine's ``l2_loss`` when present, else this formula)."""
    try:
        from .loss import l2_loss  # the PRAM engine's implementation
    except ImportError:
        return _l2_dense(np.asarray(P.toarray() if sp.issparse(P) else P, dtype=float), counts)[0]
    return float(l2_loss(P, counts))


def _l2_dense(P: np.ndarray, counts: np.ndarray, grad: bool = False):
    """l2(P) and optionally its gradient d l2 / d P.

    With W = P^{-1}, c = U_0^T P and s_l = sum_k W_lk^2: l2 = c.s / n^2 - 1/n, and since
    dW = -W dP W,  d l2 / dP = [U_0 s^T - 2 W^T diag(c) W W^T] / n^2.
    """
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    try:
        W = np.linalg.inv(P)
    except np.linalg.LinAlgError:
        return (np.inf, None) if grad else (np.inf,)
    s = (W * W).sum(axis=1)
    c = counts @ P
    val = float(c @ s) / n**2 - 1.0 / n
    if not np.isfinite(val) or val < -1e-12 or s.max() > 1e16:
        # numerically singular P (l2 is a variance: >= 0 for any invertible P)
        return (np.inf, None) if grad else (np.inf,)
    if not grad:
        return (val,)
    G = (np.outer(counts, s) - 2.0 * (W.T @ (c[:, None] * W)) @ W.T) / n**2
    return val, G


def l2_gradient(P: np.ndarray, counts: np.ndarray) -> tuple[float, np.ndarray]:
    """l2(P) and the analytic gradient (needs only P^{-1} and its row norms)."""
    return _l2_dense(np.asarray(P, dtype=float), counts, grad=True)


def _restricted_terms(M: np.ndarray, u_src: np.ndarray, n: float, order: int = 0):
    """Loss of the restricted support, its gradient and Hessian blocks (see module notes).

    h(x) = (1 + |x|^2)/(1 - 1.x) + 1.x - 1 per source row; grad = 2x/v + q/v^2 + 1,
    Hessian = 2I/v + 2(x 1^T + 1 x^T)/v^2 + 2q/v^3 11^T with v = 1 - 1.x, q = 1 + |x|^2.
    """
    r = M.sum(axis=1)
    v = 1.0 - r
    if np.any(v <= 0):
        return (np.inf, None, None)
    q = 1.0 + (M * M).sum(axis=1)
    val = float(u_src @ (q / v + r - 1.0)) / n**2
    if order == 0:
        return (val, None, None)
    g = (u_src[:, None] * (2 * M / v[:, None] + (q / v**2)[:, None] + 1.0)) / n**2
    if order == 1:
        return (val, g, None)
    T = M.shape[1]
    blocks = []
    one = np.ones(T)
    for f in range(M.shape[0]):
        x = M[f]
        Hf = (2 * np.eye(T) / v[f] + 2 * (np.outer(x, one) + np.outer(one, x)) / v[f] ** 2
              + 2 * q[f] / v[f] ** 3 * np.ones((T, T)))
        blocks.append(u_src[f] * Hf / n**2)
    return (val, g, blocks)


# --------------------------------------------------------------------------- HiGHS
def _highs(cost, A, row_lo, row_hi, col_lo, col_hi, *, hessian=None, integrality=None,
           time_limit: float | None = None):
    """Solve an LP / convex QP / MILP with HiGHS; returns (status, x, row duals)."""
    import highspy

    from .._highs import new_highs

    A = sp.csc_matrix(A)
    A.sort_indices()
    h = new_highs(time_limit=time_limit)
    if hessian is not None:
        # HiGHS's QP solver reports residuals near 1e-5 on these problems; the optimiser's
        # margin (SAFETY) absorbs them and the exact checker certifies the final matrix
        h.setOptionValue("primal_feasibility_tolerance", 1e-5)
        # and can cycle on degenerate steps: cap each QP (the caller falls back to an LP step)
        h.setOptionValue("qp_iteration_limit", 20_000)
        h.setOptionValue("time_limit", min(QP_TIME_LIMIT, float(time_limit or QP_TIME_LIMIT)))
    model = highspy.HighsModel()
    model.lp_ = build_lp(A, cost=cost, col_lower=col_lo, col_upper=col_hi, row_lower=row_lo, row_upper=row_hi,
                         integrality=integrality)
    if hessian is not None:  # lower triangle, column-wise
        H = sp.csc_matrix(sp.tril(hessian))
        H.sort_indices()
        model.hessian_.dim_ = A.shape[1]
        model.hessian_.format_ = highspy.HessianFormat.kTriangular
        model.hessian_.start_ = H.indptr.astype(np.int32)
        model.hessian_.index_ = H.indices.astype(np.int32)
        model.hessian_.value_ = H.data.astype(float)
    h.passModel(model)
    h.run()
    status = h.modelStatusToString(h.getModelStatus()).lower()
    sol = h.getSolution()
    return status, np.array(sol.col_value), np.array(sol.row_dual)


# --------------------------------------------------------------------------- result
@dataclass(frozen=True)
class OptimalPRAMResult:
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


# --------------------------------------------------------------------------- validation
def _validate(counts, shape, combinations, alpha, gamma):
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


def _finish(P, counts, shape, combos, alpha, support, status, t0, details) -> OptimalPRAMResult:
    """Certify with the independent checker; never return an unchecked matrix."""
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


# --------------------------------------------------------------------------- full support
def _full_constraints(counts, shape, combos, alpha_s, gamma):
    """Rows of the full problem over x = vec(P) (row-major) and y (one D_pi(k0) per watched pair).

    - sum_k P_mk = 1                                             (rows sum to 1)
    - y_j - alpha sum_l U_0(l) sum_{k: k_pi = k0} P_lk = 0   (alpha times the denominator of (1);
      scaled so the QP's rows are of comparable size)
    - sum_{k: k_pi = k0} P_mk - y_j <= 0 for (m, pi, k0) in the reduced set     (C1)
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
    rows.append(np.repeat(np.arange(N), N)); cols.append(np.arange(n_x)); vals.append(np.ones(n_x))
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


def _elastic_report(A, row_lo, row_hi, col_lo, col_hi, first_c1: int, labels) -> str:
    """LP with a slack on every C1 row, minimising total slack: the rows that keep a slack are
    the constraints no feasible matrix meets (named in the error)."""
    n_c1 = A.shape[0] - first_c1
    S = sp.vstack([sp.csc_matrix((first_c1, n_c1)), sp.identity(n_c1, format="csc")])
    A2 = sp.hstack([A, S, -S]).tocsc()                      # A x + s+ - s- within the bounds
    cost = np.concatenate([np.zeros(A.shape[1]), np.ones(2 * n_c1)])
    status, x, _ = _highs(cost, A2, row_lo, row_hi, np.concatenate([col_lo, np.zeros(2 * n_c1)]),
                          np.concatenate([col_hi, np.full(2 * n_c1, np.inf)]))
    if status != "optimal":
        return f"(the elastic LP also ended {status})"
    slack = x[A.shape[1]:A.shape[1] + n_c1] + x[A.shape[1] + n_c1:]
    bad = np.flatnonzero(slack > 1e-9)[np.argsort(-slack[slack > 1e-9])][:10]
    if bad.size == 0:
        return ("none: an elastic LP meets every constraint, so the problem is feasible and the "
                "failure is numerical (try gamma, or support='restricted')")
    return "; ".join(f"{labels(i)} short by {slack[i]:.3g}" for i in bad)


def _sqp(x0, fun, hess, A, row_lo, row_hi, col_lo, col_hi, *, max_iter, tol, time_limit,
         on_fail, first_step_whole):
    """Sequential QP: minimise fun over {row_lo <= A x <= row_hi, col_lo <= x <= col_hi}.

    Each step solves min g^T (z - x) + (z - x)^T H (z - x) / 2 on the exact constraints with
    HiGHS, then backtracks along z - x until the Armijo condition holds on the true loss
    (every point of the segment is feasible: the set is convex). ``first_step_whole`` takes
    the first step completely (the start, the identity, is not feasible). ``fun(x, grad)``
    returns the loss (and gradient); ``hess(x)`` a sparse PSD model Hessian. Returns
    (x, loss, iterations, number of LP fallback steps).
    """
    x = x0.copy()
    f = fun(x, False)[0]
    it = 0
    radius = 0.05 * float(np.max(col_hi - col_lo)) if x.size else 0.0
    fallbacks = 0
    for it in range(1, max_iter + 1):
        f, g = fun(x, True)
        H = hess(x)
        status, z, _ = _highs(g - H @ x, A, row_lo, row_hi, col_lo, col_hi, hessian=H,
                              time_limit=time_limit)
        if status != "optimal":
            # HiGHS's QP solver can stop on numerical trouble: take a trust-region LP step
            # (simplex, robust) instead; from the infeasible start, the plain LP vertex
            fallbacks += 1
            lo, hi = col_lo, col_hi
            if not (it == 1 and first_step_whole):
                lo, hi = np.maximum(col_lo, x - radius), np.minimum(col_hi, x + radius)
            st2, z, _ = _highs(g, A, row_lo, row_hi, lo, hi, time_limit=time_limit)
            if st2 != "optimal" and lo is not col_lo:   # then the plain Frank-Wolfe vertex
                st2, z, _ = _highs(g, A, row_lo, row_hi, col_lo, col_hi, time_limit=time_limit)
            if st2 != "optimal":
                if it == 1:
                    on_fail(status, it)
                break  # keep the last iterate; the caller certifies it
        if it == 1 and first_step_whole:
            # the first QP point must have a finite loss (an invertible P): if not, pull it
            # towards the start with a stiffer proximal term (it stays feasible)
            for stiff in (10.0, 100.0, 1e3, 1e4, 1e5):
                if np.isfinite(fun(z, False)[0]):
                    break
                status, z, _ = _highs(g - stiff * (H @ x), A, row_lo, row_hi, col_lo, col_hi,
                                      hessian=stiff * H, time_limit=time_limit)
                if status != "optimal":
                    on_fail(status, it)
            if not np.isfinite(fun(z, False)[0]):
                raise SolverError(f"{OWNER}: every first step found leads to a singular matrix; "
                                  "set gamma (0.5 or more keeps P invertible)")
            radius = max(float(np.abs(z - x).max()), 1e-9) if x.size else 0.0
            x = z
            continue
        d = z - x
        if d.size:
            radius = max(float(np.abs(d).max()), 1e-9)
        slope = float(g @ d)
        if slope >= 0 or np.abs(d).max() < 1e-13:
            break
        t = 1.0
        while True:
            f_new = fun(x + t * d, False)[0]
            if f_new <= f + 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        x = x + t * d
        done = f - f_new <= tol * max(abs(f), 1e-300)
        f = f_new
        if done:
            break
    return x, fun(x, False)[0], it, fallbacks


def _frank_wolfe(fun, A, row_lo, row_hi, col_lo, col_hi, *, max_iter, gap_tol, time_limit,
                 on_fail):
    """Frank-Wolfe for a convex loss over a polytope, with a persistent HiGHS LP.

    Starts at the LP vertex of the gradient at 0, then repeats: LP vertex z of the current
    gradient (only the costs change, so HiGHS re-solves from the previous basis), exact line
    search on [x, z] (the loss is convex on the segment), until the gap g^T (x - z), an upper
    bound on loss(x) - min loss, is below ``gap_tol`` times the loss. Used for restricted
    problems too large for the QP solver. Returns (x, loss, iterations, gap).
    """
    import highspy
    from scipy.optimize import minimize_scalar

    from .._highs import new_highs

    n_var = A.shape[1]
    h = new_highs(time_limit=time_limit)
    Ac = sp.csc_matrix(A)
    Ac.sort_indices()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n_var, Ac.shape[0]
    lp.col_cost_ = np.zeros(n_var)
    lp.col_lower_, lp.col_upper_ = np.asarray(col_lo, float), np.asarray(col_hi, float)
    lp.row_lower_, lp.row_upper_ = np.asarray(row_lo, float), np.asarray(row_hi, float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = Ac.indptr.astype(np.int32)
    lp.a_matrix_.index_ = Ac.indices.astype(np.int32)
    lp.a_matrix_.value_ = Ac.data.astype(float)
    h.passModel(lp)
    idx = np.arange(n_var, dtype=np.int32)

    def vertex(g, it):
        h.changeColsCost(n_var, idx, np.asarray(g, dtype=float))
        h.run()
        status = h.modelStatusToString(h.getModelStatus()).lower()
        if status != "optimal":
            on_fail(status, it)
        return np.array(h.getSolution().col_value)

    x = vertex(fun(np.zeros(n_var), True)[1], 0)
    f, gap, it = fun(x, False)[0], np.inf, 0
    for it in range(1, max_iter + 1):
        f, g = fun(x, True)
        z = vertex(g, it)
        gap = float(g @ (x - z))
        if gap <= gap_tol * max(f, 1e-300):
            break
        d = z - x
        t = minimize_scalar(lambda t: fun(x + t * d, False)[0], bounds=(0.0, 1.0), method="bounded",
                            options={"xatol": 1e-10}).x
        x = x + t * d
    return x, fun(x, False)[0], it, gap


def _solve_full(counts, shape, combos, alpha, gamma, *, max_iter, tol, time_limit, gap_tol):
    """Full support: SQP over a working set of entries of P, grown by Frank-Wolfe LPs.

    Only a few entries of the optimum are off the diagonal, so the QPs run over a working set
    W (the diagonal, then the support of each Frank-Wolfe LP solution over all N^2 entries);
    the loop ends when the LP over every entry finds no descent direction outside W, or when
    the Frank-Wolfe gap g^T (P - P_lp) (an upper bound on l2(P) - min l2 for a convex loss)
    is below ``gap_tol`` times the loss. The gap is reported.
    """
    N = counts.size
    n = counts.sum()
    alpha_s = alpha * (1 - SAFETY)
    A, row_lo, row_hi, col_lo, col_hi, triples, pairs, first_c1, frozen = _full_constraints(
        counts, shape, combos, alpha_s, gamma)
    n_x, n_y = N * N, len(pairs)

    def label(i):
        m, p, k = triples[i]
        return f"C1 for element {m} on combination {combos[p]} at k0 index {k}"

    def fail(status, it):
        why = _elastic_report(A, row_lo, row_hi, col_lo, col_hi, first_c1, label)
        raise SolverError(f"{OWNER}: HiGHS ended '{status}' (full support, iteration {it}); "
                          f"binding constraints: {why}")

    def fw_lp(P):  # Frank-Wolfe LP over every entry: min g^T z on the feasible set
        f, G = l2_gradient(P, counts)
        status, z, _ = _highs(np.concatenate([G.ravel() * n**2, np.zeros(n_y)]), A, row_lo,
                              row_hi, col_lo, col_hi, time_limit=time_limit)
        if status != "optimal":
            fail(status, 0)
        return f, float(G.ravel() @ (P.ravel() - z[:n_x])), z[:n_x]

    # C1 rows in terms of x = vec(P) alone: C x <= 0 with C = A_c1,x - S A_aux,x (y eliminated),
    # formed only on the columns in use (the full C is dense-ish)
    Ac = sp.csc_matrix(A)
    aux = Ac[N:first_c1, :n_x]                               # y_j = -aux_j x (alpha-scaled D)
    c1x, c1y = Ac[first_c1:, :n_x], sp.csr_matrix(Ac[first_c1:, n_x:])
    P = np.eye(N)
    diag_idx = np.arange(N) * (N + 1)
    C_eye = np.asarray(c1x[:, diag_idx].sum(axis=1)).ravel() \
        - c1y @ np.asarray(aux[:, diag_idx].sum(axis=1)).ravel()   # C vec(I)

    def C_full_dot(Q):  # C vec(Q): the C1 rows' left-hand sides
        q = Q.ravel()
        return c1x @ q - c1y @ (aux @ q)
    offdiag = np.ones((N, N), dtype=bool)
    np.fill_diagonal(offdiag, False)
    active = np.zeros(n_x, dtype=bool)
    first = True
    # warm start: the restricted-support optimum is feasible here and invertible (sources
    # and targets disjoint: P is block triangular with a positive diagonal)
    try:
        Pr = _solve_restricted(counts, shape, combos, alpha, gamma, cover="milp", max_sources=N,
                               max_iter=max_iter, tol=tol, time_limit=time_limit)[0].toarray()
        if np.all(C_full_dot(Pr) <= 1e-9) and not (Pr[frozen] > 0).any():
            P, first = Pr, False
            active |= ((Pr > 0) & offdiag).ravel()
    except SolverError:
        pass
    f, gap, z = fw_lp(P)
    iters, rounds, fallbacks = 0, 0, 0
    cap = 1.0 - (gamma or 0.0)
    for rounds in range(1, 21):
        # every entry into a column the LP moved records into (the optimum spreads the moves
        # over many rows but into few columns), plus the LP's own support
        zz = (z.reshape(N, N) > 1e-12) & offdiag
        active.reshape(N, N)[:, np.unique(np.flatnonzero(zz) % N)] = True
        active |= zz.ravel()
        active[diag_idx] = False
        active[frozen.ravel()] = False
        xa = np.flatnonzero(active)                          # free off-diagonal entries
        rows_of = xa // N
        # x = vec(I) + Z v: +1 at the entry, -1 on its row's diagonal (rows keep summing to 1)
        Z = sp.csc_matrix((np.concatenate([np.ones(xa.size), -np.ones(xa.size)]),
                           (np.concatenate([xa, diag_idx[rows_of]]),
                            np.concatenate([np.arange(xa.size)] * 2))), shape=(n_x, xa.size))
        used = np.unique(np.concatenate([xa, diag_idx[rows_of]]))
        Zu = Z[used]
        CZ = (c1x[:, used] @ Zu - c1y @ (aux[:, used] @ Zu)).tocsr()
        # drop rows no v in [0, cap] can violate (largest left-hand side <= 0)
        worst = C_eye + cap * np.asarray(CZ.maximum(0).sum(axis=1)).ravel()
        live = worst > -1e-12
        CZ = CZ[live]
        R = sp.csr_matrix((np.ones(xa.size), (rows_of, np.arange(xa.size))), shape=(N, xa.size))
        Aq = sp.vstack([CZ, R]).tocsc()
        q_lo = np.full(Aq.shape[0], -np.inf)
        q_hi = np.concatenate([-C_eye[live], np.full(N, cap)])  # C1; sum of moves <= 1 - gamma

        def to_P(v, xa=xa, rows_of=rows_of):
            Q = np.eye(N)
            Q.ravel()[xa] = v
            Q[np.arange(N), np.arange(N)] = 1.0 - np.bincount(rows_of, weights=v, minlength=N)
            return Q

        def fun(v, grad, xa=xa, rows_of=rows_of, to_P=to_P):
            out = _l2_dense(to_P(v), counts, grad)
            if not grad:
                return (out[0] * n**2,)
            G = out[1]
            # d/dv of P(v): G[m, k] - G[m, m]
            return out[0] * n**2, (G.ravel()[xa] - G.ravel()[diag_idx[rows_of]]) * n**2

        same_row = (rows_of[:, None] == rows_of[None, :])

        def hess(v, rows_of=rows_of, to_P=to_P, same_row=same_row):
            # second-order term of l2 at I per row m: U_0(m) ||P_m - e_m||^2 / n^2, i.e.
            # U_0(m) (|v_m|^2 + (sum v_m)^2) in the free entries v_m of row m (scaled by n^2)
            c = counts @ to_P(v)
            w = np.maximum(np.maximum(counts, c), 1.0)[rows_of]
            return sp.csc_matrix(2.0 * np.sqrt(w[:, None] * w[None, :]) * same_row
                                 * (1.0 + np.eye(rows_of.size)))

        v0 = P.ravel()[xa]
        v, _, it, fb = _sqp(v0, fun, hess, Aq, q_lo, q_hi, np.zeros(xa.size), np.full(xa.size, cap),
                        max_iter=max_iter, tol=tol, time_limit=time_limit, on_fail=fail,
                        first_step_whole=first)
        first = False
        iters += it
        fallbacks += fb
        P = to_P(np.clip(v, 0.0, None))
        f, gap, z = fw_lp(P)
        if gap <= gap_tol * max(f, 1e-300) or not (z[:n_x] > 1e-12)[~active & offdiag.ravel()].any():
            break
    P = np.clip(P, 0.0, None)
    P /= P.sum(axis=1, keepdims=True)
    f = _l2_dense(P, counts)[0]
    if not np.isfinite(f):
        raise SolverError(f"{OWNER}: the optimiser ended at a singular matrix (infinite L2 loss); "
                          "set gamma (e.g. 0.5 makes every P invertible) or use support='restricted'")
    details = {"iterations": iters, "lp_fallback_steps": fallbacks, "working_set_rounds": rounds, "working_set_size": int(active.sum()),
               "n_constraints_c1": len(triples), "n_pairs": n_y, "frank_wolfe_gap": gap, "_loss": f,
               "solver": "SQP with HiGHS QP subproblems over a working set grown by Frank-Wolfe LPs"}
    return P, "optimal", details


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


# --------------------------------------------------------------------------- set cover
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
    status, z, _ = _highs(cost, sp.csc_matrix(cover.T.astype(float)), np.ones(cover.shape[1]),
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


# --------------------------------------------------------------------------- restricted support
def _solve_restricted(counts, shape, combos, alpha, gamma, *, cover, max_sources, max_iter, tol,
                      time_limit, gap_tol=1e-3):
    n = counts.sum()
    alpha_s = alpha * (1 - SAFETY)
    problems = problem_combinations(counts, shape, combos, alpha)
    targets, rule = target_cover(counts, shape, combos, problems, method=cover)
    frequent = np.flatnonzero(counts * alpha >= 1)
    # an element alone in a combination with exactly 1/alpha records (on C1's boundary) keeps
    # its records: then the full support's boundary rule holds for this matrix too
    on_boundary = np.zeros(frequent.size, dtype=bool)
    for pi in combos:
        u = combination_counts(counts, shape, pi)[projection_codes_of(shape, pi, frequent)]
        on_boundary |= (u * alpha >= 1) & (u * alpha_s < 1)
    frequent = frequent[~on_boundary]
    sources = frequent[np.argsort(-counts[frequent], kind="stable")][:max_sources]
    S, T = sources.size, targets.size
    details = {"n_problems": len(problems), "targets": targets.tolist(), "cover_rule": rule,
               "n_sources": int(S), "n_targets": int(T)}
    N = counts.size
    if not problems:
        return sp.identity(N, format="csr"), "optimal", {**details, "iterations": 0, "_loss": 0.0}
    if S == 0:
        raise SolverError(f"{OWNER}: restricted support needs frequent elements (U_0 >= 1/alpha = "
                          f"{1 / alpha:g}) to move records from, and there are none")
    cap = 1.0 - (gamma if gamma else 1e-3)
    u_src = counts[sources]
    rare = np.flatnonzero((counts > 0) & (counts * alpha < 1))
    # watched pairs: (pi, m_pi) of rare m whose D_pi can fall below 1/alpha
    pairs, member, rhs, labels = [], [], [], []
    for p, pi in enumerate(combos):
        U = combination_counts(counts, shape, pi)
        own = np.unique(projection_codes_of(shape, pi, rare))
        src_code = projection_codes_of(shape, pi, sources)
        tgt_code = projection_codes_of(shape, pi, targets)
        lost = np.bincount(src_code, weights=u_src * cap, minlength=U.size)
        # a pair with U_pi(k0) >= 1/alpha and no source matching it keeps D >= U_pi(k0): C1
        # holds there whatever M is, so it gets no row (the margin would make it infeasible)
        need = ((U[own] - lost[own]) * alpha_s < 1) & ((U[own] * alpha < 1) | (lost[own] > 0))
        for k in own[need]:
            pairs.append(tgt_code == k)
            member.append(src_code == k)
            rhs.append(1.0 / alpha_s - U[k])
            labels.append((pi, int(k), float(U[k])))
    # Sources with the same membership in the watched pairs enter every row with coefficients
    # proportional to U_0(f), and the loss is sum_f U_0(f) h(M_f) with h convex: by Jensen an
    # optimum gives them the same row M_f. So each group is solved as one source of weight
    # sum U_0(f) (exact; the QP shrinks from S x T to groups x T variables).
    B = np.array(member).T if member else np.zeros((S, 0), dtype=bool)
    _, group = np.unique(B, axis=0, return_inverse=True)
    group = group.ravel()
    n_grp = int(group.max()) + 1
    u_grp = np.bincount(group, weights=u_src, minlength=n_grp)
    B_grp = np.zeros((n_grp, B.shape[1]), dtype=bool)
    B_grp[group] = B
    rows, r_i, r_j, r_v = [], [], [], []
    for j, tgt in enumerate(pairs):
        # D = U_pi(k0) - sum_{f: f_pi = k0} U_0(f) r_f + sum_f U_0(f) sum_{t: t_pi = k0} M_ft
        coef = (u_grp[:, None] * (tgt[None, :].astype(float) - B_grp[:, j][:, None])).ravel()
        nz = np.flatnonzero(coef)
        r_i.append(np.full(nz.size, j))
        r_j.append(nz)
        r_v.append(coef[nz])
        rows.append(j)
    details["n_source_groups"] = n_grp
    S, u_src = n_grp, u_grp
    n_var = S * T
    C1 = (sp.csr_matrix((np.concatenate(r_v), (np.concatenate(r_i), np.concatenate(r_j))),
                        shape=(len(rows), n_var)) if rows else sp.csr_matrix((0, n_var)))
    R = sp.kron(sp.identity(S), np.ones((1, T)), format="csr")  # r_f = sum_t M_ft <= cap
    A = sp.vstack([C1, R]).tocsc()
    row_lo = np.concatenate([rhs, np.full(S, -np.inf)])
    row_hi = np.concatenate([np.full(len(rhs), np.inf), np.full(S, cap)])
    col_lo, col_hi = np.zeros(n_var), np.full(n_var, cap)

    def fun(x, grad):
        out = _restricted_terms(x.reshape(S, T), u_src, n, order=1 if grad else 0)
        return (out[0] * n**2,) if not grad else (out[0] * n**2, out[1].ravel() * n**2)

    def hess(x):
        return sp.block_diag(_restricted_terms(x.reshape(S, T), u_src, n, order=2)[2],
                             format="csc") * n**2

    def fail(status, it):
        def label(i):
            if i >= len(labels):
                members = sources[group == i - len(labels)]
                return (f"the moves out of source elements {members[:5].tolist()} (at most "
                        f"1 - gamma = {cap:g})")
            pi, k, u = labels[i]
            return (f"C1 on combination {pi} at k0 index {k} (U_pi(k0) = {u:g}, needs an expected "
                    f"count >= {1 / alpha:g})")
        why = _elastic_report(A, row_lo, row_hi, col_lo, col_hi, 0, label) if rows else ""
        raise SolverError(f"{OWNER}: HiGHS ended '{status}' (restricted support, {details['n_sources']} sources in {S} groups x {T} "
                          f"targets, iteration {it}); binding constraints: {why}")

    if n_var <= QP_MAX_VARIABLES:
        x, _, iters, fallbacks = _sqp(np.zeros(n_var), fun, hess, A, row_lo, row_hi, col_lo,
                                      col_hi, max_iter=max_iter, tol=tol, time_limit=time_limit,
                                      on_fail=fail, first_step_whole=True)
        solver = "Newton-SQP (HiGHS QP subproblems, exact Hessian, Armijo line search)"
    else:  # HiGHS's active-set QP slows down with many free variables; the loss is convex
        x, _, iters, _ = _frank_wolfe(fun, A, row_lo, row_hi, col_lo, col_hi, max_iter=200,
                                      gap_tol=gap_tol, time_limit=time_limit, on_fail=fail)
        fallbacks = 0
        solver = "Frank-Wolfe (HiGHS LPs re-solved from the previous basis, exact line search)"
    M = np.clip(x.reshape(S, T), 0.0, None)
    f, g, _ = _restricted_terms(M, u_src, n, order=1)
    M_src = M[group]                                          # each source gets its group's row
    details.update(iterations=iters, lp_fallback_steps=fallbacks, n_constraints_c1=len(rows), _loss=f,
                   solver=solver)
    st, z, _ = _highs(g.ravel() * n**2, A, row_lo, row_hi, col_lo, col_hi, time_limit=time_limit)
    if st == "optimal":  # convex: the Frank-Wolfe gap bounds l2(P) - restricted optimum
        details["frank_wolfe_gap"] = float(g.ravel() @ (M.ravel() - z))
    status = "optimal"
    # sparse P: identity, source rows 1 - r_f on the diagonal and M_ft towards the targets
    nz = M_src > 0
    fi, ti = np.nonzero(nz)
    diag = np.ones(N)
    diag[sources] = 1.0 - M_src.sum(axis=1)
    P = sp.csr_matrix((np.concatenate([diag, M_src[nz]]),
                       (np.concatenate([np.arange(N), sources[fi]]),
                        np.concatenate([np.arange(N), targets[ti]]))), shape=(N, N))
    return P, status, details


def projection_codes_of(shape: Sequence[int], pi: Combination, elements: np.ndarray) -> np.ndarray:
    """Index of k_pi in X_pi for the given flat elements k (no full-space arrays)."""
    multi = np.unravel_index(np.asarray(elements, dtype=np.int64), tuple(shape))
    return np.ravel_multi_index(tuple(multi[j] for j in pi), tuple(shape[j] for j in pi))


# --------------------------------------------------------------------------- entry point
def optimal_matrix(counts: np.ndarray, shape: Sequence[int], combinations: Sequence[Combination],
                   alpha: float, *, gamma: float | None = None, support: str = "full",
                   cover: str = "milp", max_sources: int = 100_000, max_iter: int = 60,
                   tol: float = 1e-6, time_limit: float | None = 300.0,
                   gap_tol: float = 1e-3) -> OptimalPRAMResult:
    """The PRAM matrix of least L2 loss meeting C1 at level alpha, certified by the checker.

    Parameters
    ----------
    counts : ndarray, shape (N,)
        U_0 over the joint space of the identifying variables (C order).
    shape : sequence of int
        Category counts of the identifying variables.
    combinations : sequence of tuple of int
        The set Pi (variable indices); see :func:`~sdckit.pram.recognition.normalize_combinations`.
    alpha : float in (0, 1)
        Security level of C1.
    gamma : float in [0, 1), optional
        Lower bound on every diagonal entry (also enables the reductions of section 4).
    support : {"full", "restricted"}
        Every entry free (small spaces), or moves only from frequent elements into a
        set-cover target set (large spaces; sparse P).
    cover : {"milp", "greedy"}
        How the restricted support's target set is chosen.
    max_sources : int
        Restricted support: the most frequent elements that may give records.

    Returns
    -------
    OptimalPRAMResult
        P, its loss, smallest diagonal, expected changed records, solver status and the
        independent C1 check (which holds: otherwise SolverError is raised).

    Raises
    ------
    InputError
        alpha outside (0, 1), n < 1/alpha, a joint space too large for the full support.
    SolverError
        The problem is infeasible (for instance gamma too high) or the solver failed; the
        message names the constraints that cannot be met.
    """
    t0 = time.perf_counter()
    counts, shape, combos, alpha, gamma = _validate(counts, shape, combinations, alpha, gamma)
    support = check_choice(OWNER, "support", support, ("full", "restricted"))
    cover = check_choice(OWNER, "cover", cover, ("milp", "greedy"))
    max_sources = check_int(OWNER, "max_sources", max_sources, min_value=1)
    N = counts.size
    if support == "full":
        if N > MAX_FULL_ELEMENTS:
            raise InputError(
                f"{OWNER}: the joint space of the key variables has {N} elements (shape {shape}); "
                f"support='full' optimises all {N}x{N} entries and is limited to "
                f"{MAX_FULL_ELEMENTS} elements: use support='restricted'")
        if not problem_combinations(counts, shape, combos, alpha):
            P, status, details = np.eye(N), "optimal", {"iterations": 0, "_loss": 0.0}
        else:
            P, status, details = _solve_full(counts, shape, combos, alpha, gamma, max_iter=max_iter,
                                             tol=tol, time_limit=time_limit, gap_tol=gap_tol)
    else:
        P, status, details = _solve_restricted(counts, shape, combos, alpha, gamma, cover=cover,
                                               max_sources=max_sources, max_iter=max_iter, tol=tol,
                                               time_limit=time_limit, gap_tol=gap_tol)
    return _finish(P, counts, shape, combos, alpha, support, status, t0, details)


# --------------------------------------------------------------------------- the usual matrices
def kron_recognition_max(mats: Sequence[np.ndarray], counts: np.ndarray, shape: Sequence[int],
                         combinations: Sequence[Combination]) -> float:
    """Largest C1 ratio of the per-variable PRAM P = kron(P_1, ..., P_m), exactly.

    The rows of the variables outside pi sum to 1, so A_pi[m, k0] = prod_{j in pi} P_j[m_j, k0_j]
    depends on m through m_pi only and D_pi = U_pi^T kron_{j in pi} P_j: the check runs on the
    tables U_pi (small) instead of the joint space. Tested equal to :func:`recognition_check`.
    """
    best = 0.0
    for pi in combinations:
        K = np.ones((1, 1))
        for j in pi:
            K = np.kron(K, mats[j])
        u = combination_counts(counts, shape, pi)
        D = u @ K
        occ = u > 0
        Ko = K[occ]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(Ko > 0, Ko / np.where(D > 0, D, 1.0)[None, :], 0.0)
        best = max(best, float(ratio.max()))
    return best


def kron_loss(mats: Sequence[np.ndarray], counts: np.ndarray, shape: Sequence[int]) -> tuple[float, float]:
    """l2 and expected changes of P = kron(P_j) without forming it.

    P^{-1} = kron(P_j^{-1}) so s_l = prod_j ||row l_j of P_j^{-1}||^2; c = U_0^T P is U_0 with
    each P_j applied along its axis.
    """
    t = np.asarray(counts, dtype=float).reshape(tuple(shape))
    n = t.sum()
    c = t
    s = np.ones(())
    keep = np.ones(())
    for j, Pj in enumerate(mats):
        c = np.moveaxis(np.tensordot(c, Pj, axes=([j], [0])), -1, j)
        try:
            W = np.linalg.inv(Pj)
        except np.linalg.LinAlgError:
            return np.inf, np.nan
        s = np.multiply.outer(s, (W * W).sum(axis=1))
        keep = np.multiply.outer(keep, np.diag(Pj))
    return float((c * s).sum() / n**2 - 1.0 / n), float((t * (1.0 - keep)).sum())


def usual_family(kind: str, counts: np.ndarray, shape: Sequence[int], theta: float) -> list[np.ndarray]:
    """Per-variable matrices of strength theta in [0, 1] (0: identity, 1: no information).

    ``"invariant"``: sdcMicro's invariant PRAM R = P Q (Q the Bayes inverse for the variable's
    frequencies) with base diagonal pd_j = 1 - theta (1 - 1/L_j) and the rest spread evenly;
    ``"max_entropy"``: keep with d_j = 1 - theta (1 - 1/L_j), else move evenly.
    """
    from .builders import invariant_array, max_entropy_array

    t = np.asarray(counts, dtype=float).reshape(tuple(shape))
    mats = []
    for j, L in enumerate(shape):
        d = 1.0 - theta * (1.0 - 1.0 / L)
        base = max_entropy_array(L, d)
        if kind == "max_entropy":
            mats.append(base)
        else:
            p = t.sum(axis=tuple(a for a in range(len(shape)) if a != j))
            mats.append(np.asarray(invariant_array(base, p / p.sum(), 1.0)))
    return mats


def weakest_usual(kind: str, counts: np.ndarray, shape: Sequence[int],
                  combinations: Sequence[Combination], alpha: float, *, steps: int = 40) -> dict:
    """The weakest member (smallest theta) of :func:`usual_family` that meets C1 at alpha.

    Bisection on theta (C1 holds at theta = 1, where every row is the same); the answer is
    the feasible end of the final bracket, certified by :func:`kron_recognition_max` and, when
    the joint space is small, by the general checker on the Kronecker product.
    """
    check_choice(OWNER, "kind", kind, ("invariant", "max_entropy"))
    counts = np.asarray(counts, dtype=float)

    def ok(theta):
        return kron_recognition_max(usual_family(kind, counts, shape, theta), counts, shape,
                                    combinations) <= alpha
    lo, hi = 0.0, 1.0
    if ok(lo):
        hi = 0.0
    else:
        for _ in range(steps):
            mid = 0.5 * (lo + hi)
            if ok(mid):
                hi = mid
            else:
                lo = mid
    mats = usual_family(kind, counts, shape, hi)
    ratio = kron_recognition_max(mats, counts, shape, combinations)
    if counts.size <= 3000:
        P = mats[0]
        for M in mats[1:]:
            P = np.kron(P, M)
        ratio = recognition_check(P, counts, shape, combinations).max_ratio
    loss, changes = kron_loss(mats, counts, shape)
    diag = np.ones(())
    for M in mats:
        diag = np.multiply.outer(diag, np.diag(M))
    return {"kind": kind, "theta": hi, "max_ratio": ratio, "holds": ratio <= alpha,
            "l2_loss": loss, "expected_changes": changes,
            "min_diagonal": float(diag.ravel()[counts > 0].min()), "matrices": mats}


# --------------------------------------------------------------------------- evidence and figure 1
def change_evidence(P, counts: np.ndarray, labels: Sequence | None = None, top: int = 10) -> dict:
    """Public evidence of where P moves records (no record-level data, only expectations).

    ``figure1``: for every occurring element its frequency U_0(m), the probability 1 - P_mm
    that one of its records changes and the probability 1 - P_mm^U_0(m) that at least one does
    (the paper's Figure 1); ``destinations``: the elements receiving the expected changed
    records, largest first, with their share; ``from_top3``: the share of the expected changes
    that come from the three most frequent elements (88 % in the paper).
    """
    counts = np.asarray(counts, dtype=float)
    diag = np.asarray(P.diagonal() if sp.issparse(P) else np.diag(P), dtype=float)
    occ = np.flatnonzero(counts > 0)
    change = np.clip(1.0 - diag[occ], 0.0, 1.0)
    out_flow = counts[occ] * change
    total = float(out_flow.sum())
    Pm = sp.csr_matrix(P) if sp.issparse(P) else P
    inflow = np.asarray(counts @ Pm).ravel() - counts * diag      # expected records moved in
    inflow = np.clip(inflow, 0.0, None)
    order = np.argsort(-inflow, kind="stable")[:top]
    name = (lambda k: labels[k]) if labels is not None else (lambda k: int(k))
    top3 = occ[np.argsort(-counts[occ], kind="stable")[:3]]
    return {
        "figure1": {"element": [name(k) for k in occ], "frequency": counts[occ].tolist(),
                    "p_change_record": change.tolist(),
                    "p_change_element": (1.0 - (1.0 - change) ** counts[occ]).tolist()},
        "destinations": [{"element": name(k), "expected_records_in": float(inflow[k]),
                          "share": float(inflow[k] / total) if total > 0 else 0.0}
                         for k in order if inflow[k] > 0],
        "from_top3": float((counts[top3] * (1.0 - diag[top3])).sum() / total) if total > 0 else 0.0,
    }


def figure1(fig1: dict, title: str = "Probability of change against frequency"):
    """The paper's Figure 1 from :func:`change_evidence`'s ``figure1``: a figure with two panels
    (at least one record of the element changes; one record changes)."""
    from ..report.plots import new_figure

    fig, ax = new_figure(9.0, 3.6)
    fig.delaxes(ax)
    a1, a2 = fig.subplots(1, 2)
    f = np.asarray(fig1["frequency"])
    a1.scatter(f, fig1["p_change_element"], s=14)
    a1.set_xlabel("frequency U_0(m)")
    a1.set_ylabel("P(some record of m changes)")
    a1.set_title(title, fontsize=9)
    a2.scatter(f, fig1["p_change_record"], s=14, color="tab:orange")
    a2.set_xlabel("frequency U_0(m)")
    a2.set_ylabel("1 - P_mm (one record)")
    fig.tight_layout()
    return fig


def report_section(evidence: dict) -> str:
    """HTML for the release report: recognition risk before/after, Figure 1, destinations."""
    import html as _html

    from ..report.plots import figure_to_html

    parts = [f"<p>Spontaneous recognition (C1, alpha = {evidence.get('alpha')}, combinations "
             f"{_html.escape(str(evidence.get('combinations')))}): largest ratio "
             f"{evidence.get('max_ratio_before', float('nan')):.4g} before, "
             f"{evidence.get('max_ratio_after', float('nan')):.4g} after (independent check). "
             f"Expected changed records {evidence.get('expected_changes', 0):.3g}; L2 loss "
             f"{evidence.get('l2_loss', 0):.3g}; solver {evidence.get('solver_status')}.</p>"]
    if evidence.get("figure1"):
        parts.append(figure_to_html(figure1(evidence["figure1"]), "probability of change against frequency"))
    dest = evidence.get("destinations") or []
    if dest:
        rows = "".join(f"<tr><td>{_html.escape(str(d['element']))}</td><td>{d['expected_records_in']:.3g}</td>"
                       f"<td>{d['share']:.3f}</td></tr>" for d in dest)
        parts.append("<table class='freq'><tr><th>changed records go to</th><th>expected records</th>"
                     f"<th>share</th></tr>{rows}</table>")
    return "".join(parts)


# --------------------------------------------------------------------------- pram step and gate
def _combo_names(combos, variables):
    return [[variables[j] for j in pi] for pi in combos]


def _register_engine() -> None:
    """``matrix = "optimal"`` in the pram step and the ``max_recognition_ratio`` gate."""
    try:
        from .builders import register_matrix_method
    except ImportError:  # pragma: no cover - the PRAM engine is part of the package
        return
    from .._validation import check_float as _cf
    from ..registry import GateOutcome, register_gate_check
    from .matrix import TransitionMatrix
    from .recognition import normalize_combinations

    @register_matrix_method("optimal")
    def _build_optimal(step, context):
        variables = tuple(context.variables)
        owner = "pram (matrix = 'optimal')"
        if len(step.variables) > 1 and len(variables) == 1:
            raise InputError(f"{owner}: condition C1 is about combinations of the variables "
                             f"{list(step.variables)}, so the matrix must be over their joint space: "
                             "set joint = true")
        if step.alpha is None:
            raise InputError(f"{owner}: set alpha, the security level of C1 (e.g. alpha = 0.1)")
        combos = normalize_combinations(step.combinations if step.combinations is not None
                                        else min(3, len(variables)), variables, owner=owner)
        support = step.support
        if support is None:
            support = "full" if context.n_categories <= MAX_FULL_ELEMENTS else "restricted"
        res = optimal_matrix(context.counts, context.shape, combos, step.alpha, gamma=step.gamma,
                             support=support)
        labels = context.categories
        m = TransitionMatrix(labels, res.P, variables, "optimal")
        ev = {"min_diagonal": float(np.asarray(res.P.diagonal()).min()),
              "alpha": float(step.alpha), "combinations": _combo_names(combos, variables),
              "support": res.support, "l2_loss": res.loss, "expected_changes": res.expected_changes,
              "min_diagonal_occurring": res.min_diagonal, "solver_status": res.status,
              "max_ratio_before": res.check_before.max_ratio, "max_ratio_after": res.check.max_ratio,
              "violations_before": len(res.check_before.violations), "c1_holds": res.check.holds,
              **{k: v for k, v in res.details.items() if k in ("frank_wolfe_gap", "cover_rule",
                                                                "iterations", "n_targets", "n_sources")},
              **change_evidence(res.P, context.counts, labels)}
        return m, ev

    def _validate_alpha(value):
        return _cf("the gate", "max_recognition_ratio", value, low=0.0, high=1.0, low_open=True,
                   high_open=True)

    @register_gate_check("max_recognition_ratio", _validate_alpha,
                         "condition C1 (Cator et al.): every spontaneous-recognition ratio <= alpha")
    def check_max_recognition_ratio(original, released, results, threshold):
        """The largest C1 ratio of the release, recomputed by the exact checker.

        For every PRAM matrix: eq. (1) over its variables' joint space with the combinations
        its step declared (else all of size min(3, number of variables)), U_0 counted from the
        original data (per stratum: the step's before-frequencies); per-variable matrices of one
        step are combined as their Kronecker product. Without PRAM, P = I on the key variables:
        the largest 1 / U_pi(k0) over every combination of 3 key variables.
        """
        from .steps import PramResult

        worst = (0.0, "no combination")
        checked = 0
        for r in results:
            if not isinstance(r, PramResult):
                continue
            singles = {}
            for (g, s), m in r.matrices.items():
                if len(g) == 1 and s == "all" and len(r.matrices) > 1:
                    singles[g[0]] = m
                    continue
                ev = r.evidence.get((g, s), {})
                shape = tuple(original.n_categories(v) for v in g)
                if s == "all":
                    from .builders import joint_codes
                    jc = joint_codes([original.codes(v) for v in g], shape)
                    counts = np.bincount(jc[jc >= 0], minlength=int(np.prod(shape))).astype(float)
                else:
                    counts = np.asarray(r.before[(g, s)], dtype=float)
                combos = normalize_combinations(ev.get("combinations") or min(3, len(g)), g)
                chk = recognition_check(m.P, counts, shape, combos, threshold)
                checked += 1
                if chk.max_ratio > worst[0]:
                    worst = (chk.max_ratio, f"{' x '.join(g)}" + ("" if s == "all" else f" | {s}"))
            if len(singles) > 1:
                g = tuple(singles)
                shape = tuple(original.n_categories(v) for v in g)
                from .builders import joint_codes
                jc = joint_codes([original.codes(v) for v in g], shape)
                counts = np.bincount(jc[jc >= 0], minlength=int(np.prod(shape))).astype(float)
                combos = normalize_combinations(min(3, len(g)), g)
                ratio = kron_recognition_max([singles[v].to_dense() for v in g], counts, shape, combos)
                checked += 1
                if ratio > worst[0]:
                    worst = (ratio, " x ".join(g) + " (per-variable matrices)")
        if checked == 0:
            keys = list(original.key_vars)
            import itertools
            for pi in itertools.combinations(keys, min(3, len(keys))):
                shape = tuple(released.n_categories(v) for v in pi)
                from .builders import joint_codes
                jc = joint_codes([released.codes(v) for v in pi], shape)
                u = np.bincount(jc[jc >= 0], minlength=int(np.prod(shape)))
                if (u > 0).any():
                    ratio = 1.0 / u[u > 0].min()  # P = I: 1 / U_pi(k0)
                    if ratio > worst[0]:
                        worst = (ratio, " x ".join(pi) + " (not PRAMmed)")
        ok = worst[0] <= threshold
        detail = (f"largest spontaneous-recognition ratio {worst[0]:.6g} <= alpha = {threshold} "
                  f"({worst[1]})" if ok else
                  f"the ratio reaches {worst[0]:.6g} > alpha = {threshold} on {worst[1]}; use "
                  "matrix = 'optimal' with this alpha on those variables (joint = true)")
        return GateOutcome("max_recognition_ratio", threshold, {"max_ratio": worst[0], "where": worst[1]},
                           ok, detail)


_register_engine()
