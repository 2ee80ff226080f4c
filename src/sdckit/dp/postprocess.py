"""Consistent post-processing of a noisy hierarchical table, top-down as the Census TopDown
algorithm does: non-negative integers that add up across every hierarchy and match the
invariants the steward fixes.

The table has one geography dimension (a hierarchy: nation > states > counties ...) and any
number of other dimensions (each a hierarchy of its own, often total + categories). Every
cell of the table was measured with noise. For every geographic unit ``g`` the unknown is its
*detailed histogram* ``x_g``: the counts of the inner cells of the other dimensions (``J``
cells); every published cell of ``g`` is a sum of them, ``A x_g`` with
``A = A_1 (x) A_2 (x) ...`` (Kronecker product of each dimension's aggregation matrix). The
method (Abowd et al. 2022, sec. 5; the steps below are numbered as there):

1. *Weighted least squares per unit* (closed form). Every cell has the same noise variance,
   so the estimate of ``x_g`` from all of ``g``'s noisy cells ``y_g`` is
   ``z_g = (A'A)^-1 A' y_g``, applied one dimension at a time,
   ``(A'A)^-1 A' = (x)_d (A_d'A_d)^-1 A_d'``.
2. *Top-down, level by level* (Abowd et al. 2022, sec. 5.1). The root's histogram is fitted
   first; then for every parent, whose integer histogram ``h`` is already fixed, its
   children's histograms solve the L2 fit with non-negativity

       minimise sum_i ||x_i - z_i||^2  subject to  sum_i x_i = h,  x_i >= 0

   (every child's ``z_i`` has the same covariance, so the fit is unweighted). The problem
   separates by detailed cell: for each ``j`` it is the Euclidean projection of
   ``(z_1j, ..., z_kj)`` onto the simplex ``{x >= 0, sum x = h_j}``, solved exactly by sorting
   (Held, Wolfe & Crowder 1974; Duchi et al. 2008, Fig. 1).
3. *Integer rounding keeping the parent totals* (Abowd et al. 2022, sec. 5.2): the
   L1-closest integers with ``sum_i x_ij = h_j``: floors, then one more to the
   ``h_j - sum floors`` children with the largest fractional parts (largest remainders, which
   minimise the L1 distance for each ``j``).

Invariants: the total population of every geographic unit down to ``invariant_depth`` (0:
the nation only) is published exactly. A parent whose children's totals are invariant gets
one more constraint, ``sum_j x_ij = T_i``: the L2 fit is then the projection onto a
transportation polytope (solved on its dual by exact block coordinate ascent, each block a
simplex projection), and the rounding the L1-closest integer table with both margins fixed,
a transportation problem solved as an LP by HiGHS (its matrix is totally unimodular, so the
simplex method's vertex solution is integral; it is checked).

Abowd et al. fit all queries of a parent's children jointly (one weighted non-negative least
squares problem over every marginal); here the weighted fit is made per unit first (step 1,
closed form) and the non-negativity and the parent constraint in the fit of step 2. Every
subproblem is then solved exactly in closed form (or by one LP), so 10^6 cells take seconds.

References
----------
Abowd, J. M. et al. (2022). The 2020 Census Disclosure Avoidance System TopDown Algorithm.
*Harvard Data Science Review*, Special Issue 2; arXiv:2204.08986, sec. 5.
Duchi, J., Shalev-Shwartz, S., Singer, Y. & Chandra, T. (2008). Efficient projections onto the
l1-ball for learning in high dimensions. *ICML 2008*, Fig. 1.
Held, M., Wolfe, P. & Crowder, H. P. (1974). Validation of subgradient optimization.
*Mathematical Programming* 6, 62-88.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._highs import INF, new_highs, pass_lp, raise_for_status
from ..errors import InputError, SolverError

__all__ = ["TopDownLayout", "topdown", "aggregation_matrix", "check_consistency", "project_simplex", "round_keep_sum",
           "transport_fit", "transport_round"]


def aggregation_matrix(h) -> np.ndarray:
    """``A_d``: (nodes x leaves) 0/1 matrix, node ``i`` sums the leaves below it (or itself)."""
    leaves = np.flatnonzero(h.is_leaf)
    pos = {int(l): c for c, l in enumerate(leaves)}
    A = np.zeros((len(h), leaves.size))
    for l in leaves:
        for a in h.ancestors(int(l)):
            A[a, pos[int(l)]] = 1.0
    return A


@dataclass(frozen=True)
class TopDownLayout:
    """The structure the post-processing needs, derived once from the table's hierarchies.

    ``geo`` is the axis of the geography; ``A`` the other dimensions' aggregation matrices
    (in axis order without ``geo``); ``P`` their least-squares maps ``(A'A)^-1 A'``; ``depths``
    every dimension's node depths.
    """

    shape: tuple
    geo: int
    geo_parent: np.ndarray
    geo_depth: np.ndarray
    A: tuple
    P: tuple
    depths: tuple

    @classmethod
    def from_hierarchies(cls, hierarchies, geo: int) -> TopDownLayout:
        hs = tuple(hierarchies)
        if not 0 <= geo < len(hs):
            raise InputError(f"geography axis {geo} is not an axis of a {len(hs)}-dimensional table")
        A, P = [], []
        for d, h in enumerate(hs):
            if d == geo:
                continue
            a = aggregation_matrix(h)
            A.append(a)
            P.append(np.linalg.solve(a.T @ a, a.T))  # (A_d'A_d)^-1 A_d' (A_d has full column rank)
        g = hs[geo]
        return cls(tuple(len(h) for h in hs), geo, np.asarray(g.parent), np.asarray(g.depth), tuple(A), tuple(P),
                   tuple(np.asarray(h.depth) for h in hs))

    @property
    def n_detail(self) -> int:
        return int(np.prod([a.shape[1] for a in self.A])) if self.A else 1

    def to_geo_first(self, flat: np.ndarray) -> np.ndarray:
        """Cells (flat, table order) -> array (G, n_1, ..., n_m) with the geography first."""
        return np.moveaxis(np.asarray(flat).reshape(self.shape), self.geo, 0)

    def from_geo_first(self, arr: np.ndarray) -> np.ndarray:
        return np.moveaxis(arr, 0, self.geo).reshape(-1)

    def fit(self, noisy_flat: np.ndarray) -> np.ndarray:
        """Step 1: ``z_g = (A'A)^-1 A' y_g`` for every unit, shape (G, J)."""
        y = self.to_geo_first(np.asarray(noisy_flat, dtype=float))
        for d, p in enumerate(self.P):
            y = np.moveaxis(np.tensordot(p, y, axes=([1], [d + 1])), 0, d + 1)
        return y.reshape(y.shape[0], -1)

    def cells(self, detail: np.ndarray) -> np.ndarray:
        """Every cell of the table (flat, table order) from the detailed histograms (G, J)."""
        G = detail.shape[0]
        x = np.asarray(detail, dtype=float).reshape((G,) + tuple(a.shape[1] for a in self.A))
        for d, a in enumerate(self.A):
            x = np.moveaxis(np.tensordot(a, x, axes=([1], [d + 1])), 0, d + 1)
        return np.rint(self.from_geo_first(x)).astype(np.int64)

    def unit_totals_index(self) -> np.ndarray:
        """Flat index of every geographic unit's total cell (the other dimensions at their roots)."""
        G = self.shape[self.geo]
        idx = [np.zeros(G, np.int64)] * len(self.shape)
        idx = list(idx)
        idx[self.geo] = np.arange(G)
        return np.ravel_multi_index(idx, self.shape)


# ----------------------------------------------------------------------------- closed-form kernels

@njit(cache=True, error_model="numpy")
def project_simplex(v, h, out):
    """Euclidean projection of v onto {x >= 0, sum x = h} (h >= 0), into out (Duchi et al. 2008)."""
    k = v.size
    if h <= 0:
        for i in range(k):
            out[i] = 0.0
        return
    u = np.sort(v)[::-1]
    cs = 0.0
    tau = u[0] - h
    for r in range(k):
        cs += u[r]
        t = (cs - h) / (r + 1)
        if u[r] - t > 0:
            tau = t
    for i in range(k):
        x = v[i] - tau
        out[i] = x if x > 0 else 0.0


@njit(cache=True, error_model="numpy")
def round_keep_sum(x, h, out):
    """L1-closest integers to x summing to h (largest remainders); ties go to the lower index."""
    k = x.size
    fl = np.floor(x)
    total = 0
    for i in range(k):
        out[i] = np.int64(fl[i])
        total += out[i]
    rem = h - total
    if rem == 0:
        return
    frac = x - fl
    if rem > 0:
        order = np.argsort(-frac, kind="mergesort")
        i = 0
        while rem > 0:
            out[order[i % k]] += 1
            rem -= 1
            i += 1
    else:
        order = np.argsort(frac, kind="mergesort")
        i = 0
        while rem < 0:  # only after float error: take from the smallest remainders, never below 0
            c = order[i % k]
            if out[c] > 0 or h < 0:
                out[c] -= 1
                rem += 1
            i += 1


@njit(cache=True, error_model="numpy")
def _split_children(Z, X, parents, child_ptr, child_idx, nonneg):
    """Steps 2-3 for every (parent, detailed cell): fit the children to the parent's integer
    count h (simplex projection when non-negative, equal shift otherwise), then round."""
    J = Z.shape[1]
    for pi in range(parents.size):
        p = parents[pi]
        c0 = child_ptr[pi]
        k = child_ptr[pi + 1] - c0
        v = np.empty(k)
        x = np.empty(k)
        xi = np.empty(k, np.int64)
        for j in range(J):
            h = X[p, j]
            s = 0.0
            for i in range(k):
                v[i] = Z[child_idx[c0 + i], j]
                s += v[i]
            if nonneg:
                project_simplex(v, float(h), x)
            else:
                shift = (h - s) / k
                for i in range(k):
                    x[i] = v[i] + shift
            round_keep_sum(x, h, xi)
            for i in range(k):
                X[child_idx[c0 + i], j] = xi[i]


# ----------------------------------------------------------------------------- invariant children

def _row_thresholds(W: np.ndarray, T: np.ndarray) -> np.ndarray:
    """tau_i with sum_j max(W_ij - tau_i, 0) = T_i for every row (T_i >= 0)."""
    u = -np.sort(-W, axis=1)
    cs = np.cumsum(u, axis=1)
    r = np.arange(1, W.shape[1] + 1)
    t = (cs - T[:, None]) / r
    ok = u - t > 0
    last = W.shape[1] - 1 - np.argmax(ok[:, ::-1], axis=1)
    tau = t[np.arange(W.shape[0]), last]
    return np.where(ok.any(axis=1), tau, u[:, 0])


def transport_fit(Z: np.ndarray, T: np.ndarray, h: np.ndarray, nonneg: bool, *, tol: float = 1e-9,
                   max_iter: int = 20000) -> np.ndarray:
    """argmin ||X - Z||^2 with row sums T, column sums h (and X >= 0 when ``nonneg``)."""
    k, J = Z.shape
    if not nonneg:  # affine projection, closed form
        r = T - Z.sum(axis=1)
        c = h - Z.sum(axis=0)
        return Z + r[:, None] / J + c[None, :] / k - r.sum() / (k * J)
    # dual block coordinate ascent: X = max(Z - u_i - v_j, 0); each block solves its sums exactly
    v = np.zeros(J)
    scale = 1.0 + float(max(np.abs(T).max(initial=0), np.abs(h).max(initial=0)))
    for _ in range(max_iter):
        u = _row_thresholds(Z - v[None, :], T.astype(float))
        v = _row_thresholds((Z - u[:, None]).T, h.astype(float))
        X = np.maximum(Z - u[:, None] - v[None, :], 0.0)
        if np.abs(X.sum(axis=1) - T).max() <= tol * scale:
            break
    return X


def transport_round(X: np.ndarray, T: np.ndarray, h: np.ndarray, nonneg: bool) -> np.ndarray:
    """L1-closest integer table with row sums T and column sums h (an LP on a totally unimodular
    matrix: HiGHS' vertex solution is integral). Each cell is floor(x) + p - m with
    p = p1 + p2, p1 in [0, 1] at cost 1 - 2 frac(x) (moving up to ceil), p2 >= 0 and m >= 0
    at cost 1 (each further unit away); the piecewise-linear |.| is convex, so the cheapest
    segments fill first."""
    k, J = X.shape
    fl = np.floor(X)
    frac = (X - fl).reshape(-1)
    n = k * J
    rows = np.repeat(np.arange(k), J)
    cols = k + np.tile(np.arange(J), k)
    inc = sp.csc_matrix((np.ones(2 * n), (np.r_[rows, cols], np.r_[np.arange(n), np.arange(n)])), shape=(k + J, n))
    M = sp.hstack([inc, inc, -inc], format="csc")
    cost = np.r_[1.0 - 2.0 * frac, np.ones(n), np.ones(n)]
    lower = np.zeros(3 * n)
    m_upper = fl.reshape(-1) if nonneg else np.full(n, INF)
    upper = np.r_[np.ones(n), np.full(n, INF), m_upper]
    rhs = np.r_[T - fl.sum(axis=1), h - fl.sum(axis=0)].astype(float)
    hg = new_highs(options={"solver": "simplex"})
    pass_lp(hg, M, cost=cost, col_lower=lower, col_upper=upper, row_lower=rhs, row_upper=rhs)
    hg.run()
    raise_for_status(hg, step="dp consistency", what="rounding with invariant totals")
    sol = np.asarray(hg.getSolution().col_value)
    delta = sol[:n] + sol[n:2 * n] - sol[2 * n:]
    out = fl.reshape(-1) + delta
    r = np.rint(out)
    if np.abs(out - r).max() > 1e-6:
        raise SolverError("dp consistency (rounding with invariant totals): HiGHS returned a fractional "
                          "vertex; please report this input")
    out = r.astype(np.int64).reshape(k, J)
    if (out.sum(axis=1) != T).any() or (out.sum(axis=0) != h).any() or (nonneg and (out < 0).any()):
        raise SolverError("dp consistency (rounding with invariant totals): the rounded table breaks a "
                          "constraint; please report this input")
    return out


# ----------------------------------------------------------------------------- the driver

def topdown(layout: TopDownLayout, noisy: np.ndarray, *, invariant_totals: dict[int, int] | None = None,
            nonnegative: bool = True) -> tuple[np.ndarray, np.ndarray, dict]:
    """Consistent integer cells from noisy ones (steps 1-3 of the module text).

    Parameters
    ----------
    layout : TopDownLayout
    noisy : ndarray (n_cells,)
        The noisy cells (flat, table order).
    invariant_totals : dict, optional
        ``{geo node: exact total}`` for the units whose total is an invariant; the root must be
        among them when any is, and a unit's siblings must be too (whole levels from the top).
    nonnegative : bool
        Keep every cell >= 0 (counts, and sums of non-negative contributions).

    Returns
    -------
    cells : ndarray of int64 (n_cells,)
        The consistent table (flat, table order).
    detail : ndarray (G, J)
        Every unit's detailed histogram.
    info : dict
        ``n_lp`` (parents solved with the transportation LP), ``n_closed_form`` (parents solved in
        closed form), ``max_transport_iterations``.
    """
    inv = {int(k): int(v) for k, v in (invariant_totals or {}).items()}
    Z = layout.fit(noisy)
    G, J = Z.shape
    X = np.zeros((G, J), dtype=np.int64)
    parent, depth = layout.geo_parent, layout.geo_depth
    # the root (step 2 at the top): fit to the invariant total, or clip at zero
    z0 = Z[0]
    x0 = np.empty(J)
    xi = np.empty(J, np.int64)
    if 0 in inv:
        if nonnegative:
            project_simplex(z0.copy(), float(inv[0]), x0)
        else:
            x0[:] = z0 + (inv[0] - z0.sum()) / J
        round_keep_sum(x0, inv[0], xi)
        X[0] = xi
    else:
        X[0] = np.rint(np.maximum(z0, 0.0) if nonnegative else z0).astype(np.int64)
    children: dict[int, list[int]] = {}
    for g in range(1, G):
        children.setdefault(int(parent[g]), []).append(g)
    info = {"n_lp": 0, "n_closed_form": 0}
    for d in range(int(depth.max()) if G > 1 else 0):
        ps = [p for p in np.flatnonzero(depth == d) if int(p) in children]
        closed = []
        for p in ps:
            kids = children[int(p)]
            fixed = [c in inv for c in kids]
            if all(fixed) and J == 1:
                X[kids, 0] = [inv[c] for c in kids]
                if X[kids, 0].sum() != X[p, 0]:
                    raise InputError(f"the invariant totals of the children of geographic unit {int(p)} do not "
                                     "add up to its total; fix the invariants")
            elif all(fixed):
                T = np.array([inv[c] for c in kids], dtype=np.int64)
                if T.sum() != X[p].sum():
                    raise InputError(f"the invariant totals of the children of geographic unit {int(p)} add up to "
                                     f"{int(T.sum())}, not to its total {int(X[p].sum())}; fix the invariants")
                fit = transport_fit(Z[kids], T, X[p], nonnegative)
                X[kids] = transport_round(fit, T, X[p], nonnegative)
                info["n_lp"] += 1
            elif any(fixed) and not all(fixed):
                raise InputError("invariant totals must cover whole levels of the geography from the top")
            else:
                closed.append(int(p))
        if closed:
            ptr = np.zeros(len(closed) + 1, np.int64)
            idx = []
            for i, p in enumerate(closed):
                idx.extend(children[p])
                ptr[i + 1] = len(idx)
            _split_children(Z, X, np.asarray(closed, np.int64), ptr, np.asarray(idx, np.int64), bool(nonnegative))
            info["n_closed_form"] += len(closed)
    return layout.cells(X), X, info


def check_consistency(table, cells: np.ndarray, *, invariant_cells: dict[int, int] | None = None,
                      nonnegative: bool = True) -> dict:
    """Independent check of a consistent table: every total equals the sum of its parts (the
    table's relation matrix, in integers), no negative cell, every invariant cell as fixed.

    Returns ``{"relations": n, "broken": n, "negative": n, "invariants": n, "invariants_broken": n,
    "ok": bool}``.
    """
    c = np.asarray(cells, dtype=np.int64)
    M = table.relations.tocsr().astype(np.int64)
    res = M @ c
    broken = int(np.count_nonzero(res))
    negative = int((c < 0).sum()) if nonnegative else 0
    inv = invariant_cells or {}
    bad_inv = sum(int(c[i] != v) for i, v in inv.items())
    return {"relations": int(M.shape[0]), "broken": broken, "negative": negative, "invariants": len(inv),
            "invariants_broken": bad_inv, "ok": broken == 0 and negative == 0 and bad_inv == 0}
