"""HiGHS calls of optimal PRAM: one LP / convex QP / MILP per call, from the project's factory.

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
TU Delft (DIAM) and Universite Pierre et Marie Curie; sections 2-4.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._highs import build_lp

#: seconds one HiGHS QP subproblem may take before an LP step replaces it
QP_TIME_LIMIT = 5.0


def solve_highs(cost, A, row_lo, row_hi, col_lo, col_hi, *, hessian=None, integrality=None,
           time_limit: float | None = None):
    """Solve an LP / convex QP / MILP with HiGHS (the instance from :func:`sdckit._highs.new_highs`).

    Minimises ``cost @ x (+ x^T H x / 2)`` subject to ``row_lo <= A x <= row_hi`` and
    ``col_lo <= x <= col_hi``.

    Parameters
    ----------
    cost : ndarray, shape (m,)
    A : sparse matrix, shape (r, m)
    row_lo, row_hi : ndarray, shape (r,)
    col_lo, col_hi : ndarray, shape (m,)
    hessian : sparse matrix, shape (m, m), optional
        The QP's Hessian (its lower triangle is passed); a QP is capped at
        :data:`QP_TIME_LIMIT` seconds and 20,000 iterations.
    integrality : ndarray, optional
        HiGHS variable types (a MILP).
    time_limit : float, optional
        CPU seconds for the solver.

    Returns
    -------
    status : str
        HiGHS's model status, lower case (``"optimal"``, ``"infeasible"``, ...).
    x : ndarray, shape (m,)
    row_duals : ndarray, shape (r,)
    """
    import highspy

    from ..._highs import new_highs

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
