"""The L2 loss of a PRAM matrix (section 3), its gradient, and the separable loss of the
restricted support with its Hessian blocks (end of section 4).

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
TU Delft (DIAM) and Universite Pierre et Marie Curie; sections 2-4.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def l2_loss_value(P, counts: np.ndarray) -> float:
    """l2(P) of section 3 (the PRAM engine's ``l2_loss`` when present, else this formula)."""
    try:
        from ..loss import l2_loss  # the PRAM engine's implementation
    except ImportError:
        return l2_dense(np.asarray(P.toarray() if sp.issparse(P) else P, dtype=float), counts)[0]
    return float(l2_loss(P, counts))


def l2_dense(P: np.ndarray, counts: np.ndarray, grad: bool = False):
    """l2(P) of a dense matrix (Cator et al., section 3) and optionally its gradient d l2 / d P.

    With W = P^{-1}, c = U_0^T P and s_l = sum_k W_lk^2: l2 = c.s / n^2 - 1/n, and since
    dW = -W dP W,  d l2 / dP = [U_0 s^T - 2 W^T diag(c) W W^T] / n^2.

    Parameters
    ----------
    P : ndarray, shape (N, N)
        The transition matrix.
    counts : ndarray, shape (N,)
        U_0, the original counts.
    grad : bool
        Also return the gradient.

    Returns
    -------
    tuple
        ``(l2,)``, or ``(l2, G)`` with ``grad``; l2 is ``inf`` (and G None) for a numerically
        singular P.
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
    return l2_dense(np.asarray(P, dtype=float), counts, grad=True)


def restricted_terms(M: np.ndarray, u_src: np.ndarray, n: float, order: int = 0):
    """Loss of the restricted support, its gradient and Hessian blocks (Cator et al., end of
    section 4).

    h(x) = (1 + |x|^2)/(1 - 1.x) + 1.x - 1 per source row; grad = 2x/v + q/v^2 + 1,
    Hessian = 2I/v + 2(x 1^T + 1 x^T)/v^2 + 2q/v^3 11^T with v = 1 - 1.x, q = 1 + |x|^2.

    Parameters
    ----------
    M : ndarray, shape (S, T)
        The off-diagonal entries of the S source rows on their T targets.
    u_src : ndarray, shape (S,)
        The original counts of the source rows.
    n : float
        The number of records.
    order : int
        0: the loss; 1: and the gradient; 2: and the Hessian blocks (one T x T block per row).

    Returns
    -------
    tuple
        ``(loss, gradient or None, list of Hessian blocks or None)``; the loss is ``inf`` when a
        row's entries sum to 1 or more.
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
