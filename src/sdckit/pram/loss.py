"""Information loss of a PRAM matrix (Cator, Hensbergen and Rozenholc, section 3) and distances between tables.

- :func:`l2_loss`: the closed form of the expected L2 loss of the unbiased estimate (4),
  l2(P) = (1/n^2) sum_i sum_{k,l} (P^{-1}_{lk})^2 P_{xi(i) l} - 1/n, which does not depend on
  the unperturbed variables y;
- :func:`l2_loss_monte_carlo`, :func:`kl_loss_monte_carlo`: the same expectations by
  simulation (the KL loss has no closed form);
- :func:`hellinger`, :func:`total_variation`: distances between an original and a released
  frequency table.

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM
(section 3: l_KL(P), l_2(P) and its closed form).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._random import as_generator
from ..errors import InputError
from .estimate import InverseSolver, ml_estimate
from .matrix import TransitionMatrix, as_matrix


def _counts(counts: Sequence[float], L: int) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    if c.shape[0] != L:
        raise InputError(f"counts has {c.shape[0]} categories but P has {L}; give U_0(x) for every category.")
    if (c < 0).any() or c.sum() <= 0:
        raise InputError("counts must be >= 0 and not all 0 (U_0(x) = records with value x).")
    return c


def l2_loss(P: TransitionMatrix | Any, counts: Sequence[float]) -> float:
    """Closed-form expected L2 loss l2(P) of Cator, Hensbergen and Rozenholc, section 3.

    l2(P) = (1/n^2) sum_i sum_{k,l} (P^{-1}_{lk})^2 P_{xi(i) l} - 1/n
          = (1/n^2) sum_x U_0(x) sum_l P_{x l} s_l - 1/n,   s_l = sum_k (P^{-1}_{lk})^2,

    with ``counts[x]`` = U_0(x), the number of records with original value x (n = sum).
    Summing over the unperturbed y as well gives the same value (the y-terms cancel).
    ``counts`` may also be (L, G) per group of y; it is summed over groups.
    """
    solver = InverseSolver(P, what="the L2 loss (it needs P^{-1})")
    Pm = solver.matrix.P
    L = solver.matrix.n_categories
    c = _counts(counts, L)
    c = c.sum(axis=1) if c.ndim == 2 else c
    n = c.sum()
    if solver.matrix.is_sparse:
        # s_l = sum_k (P^{-1}_{lk})^2 = squared norm of row l of P^{-1} = column l of P^{-T}
        s = np.array([np.square(solver.right(np.eye(1, L, l).ravel())).sum() for l in range(L)])
    else:
        s = np.square(solver.dense_inverse).sum(axis=1)
    return float(c @ np.asarray(Pm @ s).ravel() / n**2 - 1.0 / n)


def _released_draw(P: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One PRAM draw of the released table: row x of ``counts`` (L, G) goes multinomially by P_x."""
    L, G = counts.shape
    out = np.zeros((L, G))
    for g in range(G):  # loop over groups of y (few), vectorised over categories
        out[:, g] = rng.multinomial(counts[:, g].astype(np.int64), P).sum(axis=0)
    return out


@dataclass(frozen=True)
class MonteCarloLoss:
    """A Monte-Carlo loss: the mean over draws and its standard error."""

    value: float
    std_error: float
    n_draws: int
    n_infinite: int = 0


def _prep(P, counts):
    m = P if isinstance(P, TransitionMatrix) else TransitionMatrix(tuple(range(as_matrix(P).shape[0])), P)
    c = _counts(counts, m.n_categories)
    c = c[:, None] if c.ndim == 1 else c
    if not np.allclose(c, np.round(c)):
        raise InputError("Monte-Carlo losses simulate records: counts must be whole numbers.")
    return m, np.round(c), m.to_dense()


def l2_loss_monte_carlo(P: TransitionMatrix | Any, counts: Sequence[float], *, n_draws: int = 2000,
                        rng=None) -> MonteCarloLoss:
    """E_P sum_{(k; y)} (mu_hat(k; y) - mu(k; y))^2 by simulation (estimate (4) each draw).

    ``counts`` is U_0(x) (L,) or U_0(x; y) (L, G).
    """
    m, c, Pd = _prep(P, counts)
    gen = as_generator(rng)
    solver = InverseSolver(m)
    n = c.sum()
    mu = c / n
    vals = np.empty(n_draws)
    for d in range(n_draws):
        mu_hat = solver.right(_released_draw(Pd, c, gen)) / n   # (4): (1/n) sum_l P^{-1}_{lk} U(l; y)
        vals[d] = np.square(mu_hat - mu).sum()
    return MonteCarloLoss(float(vals.mean()), float(vals.std(ddof=1) / np.sqrt(n_draws)), n_draws)


def kl_loss_monte_carlo(P: TransitionMatrix | Any, counts: Sequence[float], *, n_draws: int = 200,
                        rng=None, estimator: str = "ml") -> MonteCarloLoss:
    """l_KL(P) = E_P sum_{(k; y)} -log(mu_hat(k; y) / mu(k; y)) mu(k; y), by simulation.

    ``estimator = "ml"`` uses the EM maximum-likelihood estimate (Cator et al.'s choice, section 3; it
    stays positive), ``"moment"`` the estimate (4), whose draws with mu_hat <= 0 where mu > 0
    give an infinite loss: they are counted in ``n_infinite`` and left out of the mean.
    """
    if estimator not in ("ml", "moment"):
        raise InputError(f"kl_loss_monte_carlo: estimator must be 'ml' or 'moment'; got {estimator!r}.")
    m, c, Pd = _prep(P, counts)
    gen = as_generator(rng)
    n = c.sum()
    mu = c / n
    pos = mu > 0
    solver = InverseSolver(m) if estimator == "moment" else None
    vals, n_inf = [], 0
    for _ in range(n_draws):
        U = _released_draw(Pd, c, gen)
        if estimator == "ml":
            mu_hat = ml_estimate(U, m, tol=1e-9).shares * (U.sum(axis=0) / n)
        else:
            mu_hat = solver.right(U) / n
        if (mu_hat[pos] <= 0).any():
            n_inf += 1
            continue
        vals.append(float(-(np.log(mu_hat[pos] / mu[pos]) * mu[pos]).sum()))
    v = np.asarray(vals)
    se = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")
    return MonteCarloLoss(float(v.mean()) if v.size else float("inf"), se, n_draws, n_inf)


def _shares(table: Sequence[float], name: str) -> np.ndarray:
    t = np.asarray(table, dtype=np.float64).ravel()
    if (t < 0).any() or t.sum() <= 0 or not np.isfinite(t).all():
        raise InputError(f"{name}: a frequency table must be finite, >= 0 and not all 0.")
    return t / t.sum()


def hellinger(original: Sequence[float], released: Sequence[float]) -> float:
    """Hellinger distance sqrt(1/2 sum (sqrt(a_k) - sqrt(b_k))^2) between two tables (normalised)."""
    a, b = _shares(original, "original"), _shares(released, "released")
    if a.size != b.size:
        raise InputError(f"hellinger: tables of {a.size} and {b.size} cells; give the same cells.")
    return float(np.sqrt(0.5 * np.square(np.sqrt(a) - np.sqrt(b)).sum()))


def total_variation(original: Sequence[float], released: Sequence[float]) -> float:
    """Total variation distance 1/2 sum |a_k - b_k| between two tables (normalised)."""
    a, b = _shares(original, "original"), _shares(released, "released")
    if a.size != b.size:
        raise InputError(f"total_variation: tables of {a.size} and {b.size} cells; give the same cells.")
    return float(0.5 * np.abs(a - b).sum())
