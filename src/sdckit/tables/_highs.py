"""Thin helpers around highspy (HiGHS) shared by the audit, suppression, rounding and optimal PRAM."""

from __future__ import annotations

import highspy
import numpy as np
import scipy.sparse as sp

INF = highspy.kHighsInf


def new_highs(*, time_limit: float | None = None, presolve: bool = True) -> highspy.Highs:
    """A silent HiGHS instance, single-threaded (results do not depend on scheduling)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    if not presolve:
        h.setOptionValue("presolve", "off")
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    return h


def pass_lp(h: highspy.Highs, matrix: sp.spmatrix, *, cost: np.ndarray, col_lower: np.ndarray,
            col_upper: np.ndarray, row_lower: np.ndarray, row_upper: np.ndarray,
            integrality: np.ndarray | None = None, maximize: bool = False) -> None:
    """Load ``row_lower <= matrix @ x <= row_upper``, ``col_lower <= x <= col_upper`` into ``h``."""
    h.passModel(build_lp(matrix, cost=cost, col_lower=col_lower, col_upper=col_upper, row_lower=row_lower,
                         row_upper=row_upper, integrality=integrality, maximize=maximize))


def build_lp(matrix: sp.spmatrix, *, cost: np.ndarray, col_lower: np.ndarray, col_upper: np.ndarray,
             row_lower: np.ndarray, row_upper: np.ndarray, integrality: np.ndarray | None = None,
             maximize: bool = False) -> highspy.HighsLp:
    """The HighsLp of ``row_lower <= matrix @ x <= row_upper``, ``col_lower <= x <= col_upper``
    (column-wise sparse matrix; integer columns where ``integrality`` is true)."""
    a = sp.csc_matrix(matrix)
    a.sort_indices()
    lp = highspy.HighsLp()
    lp.num_col_ = a.shape[1]
    lp.num_row_ = a.shape[0]
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_ = np.asarray(col_lower, dtype=float)
    lp.col_upper_ = np.asarray(col_upper, dtype=float)
    lp.row_lower_ = np.asarray(row_lower, dtype=float)
    lp.row_upper_ = np.asarray(row_upper, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = a.indptr.astype(np.int32)
    lp.a_matrix_.index_ = a.indices.astype(np.int32)
    lp.a_matrix_.value_ = a.data.astype(float)
    if maximize:
        lp.sense_ = highspy.ObjSense.kMaximize
    if integrality is not None:
        lp.integrality_ = [highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous
                           for v in integrality]
    return lp


def status(h: highspy.Highs) -> str:
    """Model status as lower-case text ("optimal", "infeasible", "unbounded", "time limit reached")."""
    return h.modelStatusToString(h.getModelStatus()).lower()
