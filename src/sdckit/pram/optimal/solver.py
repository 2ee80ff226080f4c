"""The optimiser of optimal PRAM: SQP with HiGHS QP subproblems and Frank-Wolfe LPs over the
full support, Newton-SQP over the restricted support, and the entry point
:func:`optimal_matrix` (see :mod:`sdckit.pram.optimal` for the method).

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
TU Delft (DIAM) and Universite Pierre et Marie Curie; sections 2-4.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ..._validation import check_choice, check_int
from ...errors import InputError, SolverError
from ..recognition import (
    Combination,
    combination_counts,
    problem_combinations,
)
from .constraints import (
    MAX_FULL_ELEMENTS,
    OWNER,
    SAFETY,
    OptimalPRAMResult,
    elastic_report,
    finish_result,
    full_constraints,
    projection_codes_of,
    validate_inputs,
)
from .highs import QP_TIME_LIMIT, solve_highs  # noqa: F401
from .l2 import l2_dense, l2_gradient, restricted_terms
from .targets import target_cover

#: restricted support: above this many free entries Frank-Wolfe replaces the QP steps
QP_MAX_VARIABLES = 3000


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
        status, z, _ = solve_highs(g - H @ x, A, row_lo, row_hi, col_lo, col_hi, hessian=H,
                              time_limit=time_limit)
        if status != "optimal":
            # HiGHS's QP solver can stop on numerical trouble: take a trust-region LP step
            # (simplex, robust) instead; from the infeasible start, the plain LP vertex
            fallbacks += 1
            lo, hi = col_lo, col_hi
            if not (it == 1 and first_step_whole):
                lo, hi = np.maximum(col_lo, x - radius), np.minimum(col_hi, x + radius)
            st2, z, _ = solve_highs(g, A, row_lo, row_hi, lo, hi, time_limit=time_limit)
            if st2 != "optimal" and lo is not col_lo:   # then the plain Frank-Wolfe vertex
                st2, z, _ = solve_highs(g, A, row_lo, row_hi, col_lo, col_hi, time_limit=time_limit)
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
                status, z, _ = solve_highs(g - stiff * (H @ x), A, row_lo, row_hi, col_lo, col_hi,
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

    from ..._highs import new_highs

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
        t = minimize_scalar(lambda t, x=x, d=d: fun(x + t * d, False)[0], bounds=(0.0, 1.0), method="bounded",
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
    A, row_lo, row_hi, col_lo, col_hi, triples, pairs, first_c1, frozen = full_constraints(
        counts, shape, combos, alpha_s, gamma)
    n_x, n_y = N * N, len(pairs)

    def label(i):
        m, p, k = triples[i]
        return f"C1 for element {m} on combination {combos[p]} at k0 index {k}"

    def fail(status, it):
        why = elastic_report(A, row_lo, row_hi, col_lo, col_hi, first_c1, label)
        raise SolverError(f"{OWNER}: HiGHS ended '{status}' (full support, iteration {it}); "
                          f"binding constraints: {why}")

    def fw_lp(P):  # Frank-Wolfe LP over every entry: min g^T z on the feasible set
        f, G = l2_gradient(P, counts)
        status, z, _ = solve_highs(np.concatenate([G.ravel() * n**2, np.zeros(n_y)]), A, row_lo,
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
    for rounds in range(1, 21):  # noqa: B007  (the count is read after the loop)
        # every entry into a column the LP moved records into (the optimum spreads the moves
        # over many rows but into few columns), plus the LP's own support
        zz = (z.reshape(N, N) > 1e-12) & offdiag
        active.reshape(N, N)[:, np.unique(np.flatnonzero(zz) % N)] = True
        active |= zz.ravel()
        active[diag_idx] = False
        active[frozen.ravel()] = False
        P, it, fb = _working_set_step(P, active, counts, (c1x, c1y, aux, C_eye), cap, first=first, fail=fail,
                                      max_iter=max_iter, tol=tol, time_limit=time_limit)
        first = False
        iters += it
        fallbacks += fb
        f, gap, z = fw_lp(P)
        if gap <= gap_tol * max(f, 1e-300) or not (z[:n_x] > 1e-12)[~active & offdiag.ravel()].any():
            break
    P = np.clip(P, 0.0, None)
    P /= P.sum(axis=1, keepdims=True)
    f = l2_dense(P, counts)[0]
    if not np.isfinite(f):
        raise SolverError(f"{OWNER}: the optimiser ended at a singular matrix (infinite L2 loss); "
                          "set gamma (e.g. 0.5 makes every P invertible) or use support='restricted'")
    details = {"iterations": iters, "lp_fallback_steps": fallbacks, "working_set_rounds": rounds, "working_set_size": int(active.sum()),
               "n_constraints_c1": len(triples), "n_pairs": n_y, "frank_wolfe_gap": gap, "_loss": f,
               "solver": "SQP with HiGHS QP subproblems over a working set grown by Frank-Wolfe LPs"}
    return P, "optimal", details


def _working_set_step(P, active, counts, c1, cap, *, first, fail, max_iter, tol, time_limit):
    """One SQP solve of :func:`_solve_full` over the working set ``active`` (free off-diagonal
    entries of P, rows kept summing to 1): returns (P, SQP iterations, LP fallback steps).

    ``c1`` holds the C1 rows in terms of x = vec(P) alone, ``(c1x, c1y, aux, C vec(I))``."""
    c1x, c1y, aux, C_eye = c1
    N = counts.size
    n = counts.sum()
    n_x = N * N
    diag_idx = np.arange(N) * (N + 1)
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
        out = l2_dense(to_P(v), counts, grad)
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
    return to_P(np.clip(v, 0.0, None)), it, fb


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
    pairs, member, rhs, labels = _watched_pairs(counts, shape, combos, sources, targets, cap, alpha, alpha_s)
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
        out = restricted_terms(x.reshape(S, T), u_src, n, order=1 if grad else 0)
        return (out[0] * n**2,) if not grad else (out[0] * n**2, out[1].ravel() * n**2)

    def hess(x):
        return sp.block_diag(restricted_terms(x.reshape(S, T), u_src, n, order=2)[2],
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
        why = elastic_report(A, row_lo, row_hi, col_lo, col_hi, 0, label) if rows else ""
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
    f, g, _ = restricted_terms(M, u_src, n, order=1)
    M_src = M[group]                                          # each source gets its group's row
    details.update(iterations=iters, lp_fallback_steps=fallbacks, n_constraints_c1=len(rows), _loss=f,
                   solver=solver)
    st, z, _ = solve_highs(g.ravel() * n**2, A, row_lo, row_hi, col_lo, col_hi, time_limit=time_limit)
    if st == "optimal":  # convex: the Frank-Wolfe gap bounds l2(P) - restricted optimum
        details["frank_wolfe_gap"] = float(g.ravel() @ (M.ravel() - z))
    return _restricted_matrix(N, sources, targets, M_src), "optimal", details


def _watched_pairs(counts, shape, combos, sources, targets, cap, alpha, alpha_s):
    """The C1 rows of the restricted support: the pairs (pi, m_pi) of rare m whose D_pi can fall
    below 1/alpha, each as (target membership, source membership, right-hand side, label)."""
    u_src = counts[sources]
    rare = np.flatnonzero((counts > 0) & (counts * alpha < 1))
    pairs, member, rhs, labels = [], [], [], []
    for pi in combos:
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
    return pairs, member, rhs, labels


def _restricted_matrix(N, sources, targets, M_src):
    """Sparse P: the identity, source rows 1 - r_f on the diagonal and M_ft towards the targets."""
    nz = M_src > 0
    fi, ti = np.nonzero(nz)
    diag = np.ones(N)
    diag[sources] = 1.0 - M_src.sum(axis=1)
    return sp.csr_matrix((np.concatenate([diag, M_src[nz]]),
                          (np.concatenate([np.arange(N), sources[fi]]),
                           np.concatenate([np.arange(N), targets[ti]]))), shape=(N, N))


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
    counts, shape, combos, alpha, gamma = validate_inputs(counts, shape, combinations, alpha, gamma)
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
    return finish_result(P, counts, shape, combos, alpha, support, status, t0, details)
