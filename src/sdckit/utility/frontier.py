"""The risk-utility frontier: the settings no other setting beats on both axes of an R-U map
(Duncan, Keller-McNulty & Stokes 2001, sec. 2).

References
----------
Duncan, G. T., Keller-McNulty, S. A. and Stokes, S. L. (2001). Disclosure risk vs. data
utility: the R-U confidentiality map. Technical report 121, NISS.
"""

from __future__ import annotations

import numpy as np


def pareto_front(risk: np.ndarray, utility: np.ndarray) -> np.ndarray:
    """Boolean mask of the points no other point beats.

    A point is beaten by one with lower or equal risk and higher or equal utility, one of the
    two strictly.

    Parameters
    ----------
    risk, utility : array_like, shape (n,)
        The points (lower risk and higher utility are better).

    Returns
    -------
    ndarray of bool, shape (n,)
        True for the points on the front.
    """
    risk = np.asarray(risk, dtype=float)
    utility = np.asarray(utility, dtype=float)
    n = risk.size
    mask = np.ones(n, dtype=bool)
    for i in range(n):
        dominated = (risk <= risk[i]) & (utility >= utility[i]) & ((risk < risk[i]) | (utility > utility[i]))
        mask[i] = not dominated.any()
    return mask
