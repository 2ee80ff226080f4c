"""Posterior distributions of the cells of a published table (what an intruder with a prior learns).

Interval bounds say what a cell *can* be; these posteriors say how likely each value is.

* :func:`perturbation_posterior` — a table published by cyclic perturbation with its cycles,
  alpha and beta (:mod:`sdckit.tables.cyclic`): every original table ``T_k`` that could have
  produced the published ``T_P`` is enumerated with ``Pr(T_P | T_k)`` (the mechanism's exact
  likelihood, skipped moves included), Bayes' theorem gives ``Pr(T_k | T_P)`` and each cell's
  distribution is ``Pr(t(i,j) = q) = sum_{k: t_k(i,j) = q} Pr(T_k | T_P)`` (Roehrig 2002,
  "Distributions of Cell Values").
* :func:`rounding_posterior` — a published controlled-rounded table and the rounding
  algorithm (a deterministic function or a likelihood): the consistent tables are enumerated
  (where feasible) and weighted the same way.
* :func:`margins_posterior` — only the margins are published: the fibre is enumerated when it
  is small enough, otherwise sampled with the Markov-chain sampler (and the result says so).

The seed's theorem — with a uniform prior the mode of each cell's posterior is its published
value — is checked by :meth:`Posterior.mode_violations`; it can fail at the boundary (cells
near zero, where moves are skipped) and when alpha != beta.

References
----------
Roehrig, S. F. (2002). *Disclosure Limitation in Large Statistical Databases* (CMU/Pitt seminar):
"Analysis of Cell Probabilities", "Distributions of Cell Values", "Results for the Example",
"Properties", "What Might Priors Be?", "Rounding Redux".
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_choice, check_float, check_int
from ..errors import InputError
from ..result import jsonable
from .count import (
    FibreTooLarge,
    as_count_array,
    check_margins,
    count_tables,
    enumerate_bounded,
    enumerate_tables,
)
from .cyclic import PERTURBATION_MODELS, check_cycles

__all__ = ["Posterior", "perturbation_likelihood", "perturbation_posterior", "rounding_posterior",
           "margins_posterior", "prior_at_least", "prior_from_table", "uniform_prior"]

Prior = Callable[[np.ndarray], np.ndarray]


def uniform_prior(tables: np.ndarray) -> np.ndarray:
    """Every candidate original table equally likely."""
    return np.ones(len(tables))


def prior_at_least(cell: tuple[int, ...], value: int = 1) -> Prior:
    """An insider's prior: cell ``cell`` is at least ``value`` ("I am in the survey"), else flat."""
    def prior(tables: np.ndarray) -> np.ndarray:
        return (tables[(slice(None),) + tuple(cell)] >= value).astype(float)
    return prior


def prior_from_table(historical, weight: float = 1.0) -> Prior:
    """A prior from a historical table: multinomial with its cell shares, ``prod p_ij^t_ij / t_ij!``,
    raised to ``weight`` (0 = flat, 1 = as strong as one table of the same total)."""
    h = np.asarray(historical, dtype=float)
    p = (h + 0.5) / (h + 0.5).sum()  # +0.5: a zero cell of the history does not rule a value out

    def prior(tables: np.ndarray) -> np.ndarray:
        t = tables.reshape(len(tables), -1).astype(float)
        from scipy.special import gammaln
        logw = (t * np.log(p.ravel())).sum(1) - gammaln(t + 1).sum(1)
        return np.exp(weight * (logw - logw.max()))
    return prior


@dataclass(frozen=True)
class Posterior:
    """Candidate original tables with their posterior probabilities.

    Attributes
    ----------
    tables : ndarray (n, *shape)
        Every table that could be the original (with positive likelihood).
    probabilities : ndarray (n,)
        ``Pr(T_k | published)``, summing to 1.
    likelihood : ndarray (n,)
        ``Pr(published | T_k)``.
    published : ndarray
        The published table (for the mode check; the rounded cells for rounding).
    method : str
        ``"cyclic"``, ``"rounding"``, ``"margins-enumeration"`` or ``"margins-mcmc"``.
    """

    tables: np.ndarray
    probabilities: np.ndarray
    likelihood: np.ndarray
    published: np.ndarray
    method: str
    seconds: float
    params: dict = field(default_factory=dict)
    n_fibre: int | None = None

    @property
    def n_candidates(self) -> int:
        return int(len(self.tables))

    def cell(self, cell: tuple[int, ...]) -> np.ndarray:
        """``Pr(t(cell) = q)`` for ``q = 0, 1, ..., max`` (an array indexed by q)."""
        vals = self.tables[(slice(None),) + tuple(cell)]
        return np.bincount(vals, weights=self.probabilities)

    def distributions(self) -> dict:
        """``{cell: {q: probability}}`` for every cell (values with positive probability)."""
        out = {}
        for cell in np.ndindex(*self.tables.shape[1:]):
            pr = self.cell(cell)
            out[cell] = {int(q): float(p) for q, p in enumerate(pr) if p > 0}
        return out

    def mode(self) -> np.ndarray:
        """The most probable value of each cell (smallest on a tie)."""
        out = np.zeros(self.tables.shape[1:], np.int64)
        for cell in np.ndindex(*out.shape):
            out[cell] = int(np.argmax(self.cell(cell)))
        return out

    def mean(self) -> np.ndarray:
        return np.tensordot(self.probabilities, self.tables, axes=1)

    def mode_violations(self, tol: float = 1e-12) -> list[dict]:
        """Cells whose published value is not a mode of the posterior (the seed's theorem)."""
        out = []
        for cell in np.ndindex(*self.tables.shape[1:]):
            pr = self.cell(cell)
            q = int(self.published[cell])
            p_pub = pr[q] if q < pr.size else 0.0
            if p_pub < pr.max() - tol:
                out.append({"cell": cell, "published": q, "p_published": float(p_pub),
                            "mode": int(np.argmax(pr)), "p_mode": float(pr.max())})
        return out

    def to_dict(self, cells=None) -> dict:
        cells = list(np.ndindex(*self.tables.shape[1:])) if cells is None else [tuple(c) for c in cells]
        return jsonable({"method": self.method, "n_candidates": self.n_candidates, "n_fibre": self.n_fibre,
                         "seconds": round(self.seconds, 4), "params": self.params,
                         "cells": {",".join(map(str, c)): [round(float(p), 6) for p in self.cell(c)]
                                   for c in cells},
                         "mode_violations": len(self.mode_violations())})

    def describe(self, cells=None) -> str:
        cells = list(np.ndindex(*self.tables.shape[1:])) if cells is None else [tuple(c) for c in cells]
        width = max(int(self.tables.max()) + 1, 1)
        head = "cell        " + " ".join(f"{q:>5d}" for q in range(width))
        lines = [f"posterior ({self.method}): {self.n_candidates} candidate tables", head]
        for c in cells:
            pr = np.zeros(width)
            x = self.cell(c)
            pr[:x.size] = x
            lines.append(f"{str(c):<12}" + " ".join(f"{p:5.2f}" for p in pr))
        return "\n".join(lines)

    def report_html(self, cells=None, max_bars: int = 30) -> str:
        """Each cell's posterior as a small bar chart (inline SVG), published value marked."""
        cells = list(np.ndindex(*self.tables.shape[1:])) if cells is None else [tuple(c) for c in cells]
        parts = [f"<p>Posterior cell distributions ({html.escape(self.method)}, {self.n_candidates} "
                 "candidate tables; the published value is the dark bar).</p><div class='posterior-bars'>"]
        for c in cells:
            pr = self.cell(c)
            lo = int(np.flatnonzero(pr > 1e-4)[0]) if (pr > 1e-4).any() else 0
            pr_show = pr[lo:lo + max_bars]
            w, h = 12 * len(pr_show) + 4, 44
            top = pr_show.max() if pr_show.size and pr_show.max() > 0 else 1.0
            bars = "".join(
                f"<rect x='{2 + 12 * k}' y='{40 - 36 * p / top:.1f}' width='10' height='{36 * p / top:.1f}' "
                f"fill='{'#1f3b73' if lo + k == int(self.published[c]) else '#8fa8d8'}'>"
                f"<title>q={lo + k}: {p:.3f}</title></rect>" for k, p in enumerate(pr_show))
            parts.append(f"<figure style='display:inline-block;margin:4px'><svg width='{w}' height='{h}' "
                         f"role='img'>{bars}</svg><figcaption>cell {html.escape(str(c))}, q from {lo}"
                         "</figcaption></figure>")
        parts.append("</div>")
        return "".join(parts)


def _finish(tables, likelihood, prior, published, method, t0, params, n_fibre=None) -> Posterior:
    prior = uniform_prior if prior is None else prior
    w = np.asarray(prior(tables), dtype=float)
    if w.shape != (len(tables),) or not np.all(np.isfinite(w)) or (w < 0).any():
        raise InputError(f"the prior must return one finite weight >= 0 per candidate table ({len(tables)}); "
                         f"got shape {w.shape}")
    post = w * likelihood
    total = post.sum()
    if not total > 0:
        raise InputError("the prior gives zero weight to every table that could have produced the published one; "
                         "widen the prior")
    keep = post > 0
    return Posterior(tables[keep], post[keep] / total, likelihood[keep], np.asarray(published), method,
                     time.perf_counter() - t0, params, n_fibre)


# ----------------------------------------------------------------------------- cyclic perturbation

def perturbation_likelihood(published, cycles, alpha: float, beta: float, *,
                            max_states: int = 2_000_000, model: str = "no-change") -> tuple[np.ndarray, np.ndarray]:
    """Every table ``T_k`` that can produce ``published`` and ``Pr(published | T_k)``.

    ``model`` is the rule near zero (:data:`sdckit.tables.cyclic.PERTURBATION_MODELS`):

    * ``"no-change"`` (default) — a move that would make a cell negative becomes no change,
      so the cycle stays with probability ``gamma`` plus the probability of each blocked
      move (a proper probability model: the likelihoods over all published tables sum to 1);
    * ``"skip-cycle"`` — a cycle with a blocked move ("unless there is a zero in the cycle",
      Roehrig 2002) is skipped with probability 1, while the move in the other direction, when
      possible, keeps its probability alpha or beta. The per-cycle weights then sum to
      ``1 + alpha`` or ``1 + beta`` at the boundary, so this is not a probability model; it
      is the reading under which the seed's published posterior table follows (all 24
      entries to 2 decimals with alpha = beta = 1/4).

    Backward dynamic programme over the cycles: ``V_K(S) = [S = T_P]`` and, for cycle ``m``
    (0-based) applied to the state ``S`` before it,
    ``V_m(S) = alpha V_{m+1}(S + C_m or S if S + C_m < 0) + beta V_{m+1}(S - C_m or S if S - C_m < 0)
    + (1 - alpha - beta) V_{m+1}(S)``; the states before cycle ``m`` are those reaching
    ``T_P``: ``T_P - sum_{l >= m} e_l C_l`` with ``e_l`` in ``{-1, 0, 1}``, non-negative.

    Returns ``(tables, likelihood)`` with ``likelihood > 0``.
    """
    P = np.asarray(published, dtype=np.int64)
    cyc = np.asarray(cycles, dtype=np.int64)
    gamma = 1.0 - alpha - beta
    shape = P.shape
    level = P.reshape(1, -1)
    values = np.ones(1)
    for m in range(len(cyc) - 1, -1, -1):
        C = cyc[m].ravel()
        lookup = {row.tobytes(): v for row, v in zip(level, values)}
        cand = np.concatenate([level - C, level, level + C])
        cand = np.unique(cand[(cand >= 0).all(1)], axis=0)
        if len(cand) > max_states:
            raise FibreTooLarge(f"{len(cand):,} intermediate tables before cycle {m + 1} of {len(cyc)}; more than "
                                f"the {max_states:,} allowed: use fewer cycles or a larger max_states")
        plus, minus = cand + C, cand - C
        ok_p, ok_m = (plus >= 0).all(1), (minus >= 0).all(1)
        stay = np.array([lookup.get(r.tobytes(), 0.0) for r in cand])
        vp = np.array([lookup.get(r.tobytes(), 0.0) for r in plus])
        vm = np.array([lookup.get(r.tobytes(), 0.0) for r in minus])
        if model == "skip-cycle":
            blocked = ~(ok_p & ok_m)
            v = np.where(blocked, stay + alpha * np.where(ok_p, vp, 0.0) + beta * np.where(ok_m, vm, 0.0),
                         alpha * vp + beta * vm + gamma * stay)
        else:
            v = alpha * np.where(ok_p, vp, stay) + beta * np.where(ok_m, vm, stay) + gamma * stay
        live = v > 0
        level, values = cand[live], v[live]
    return level.reshape((-1,) + shape), values


def perturbation_posterior(published, cycles, alpha: float, beta: float, *, prior: Prior | None = None,
                           max_states: int = 2_000_000, model: str = "no-change") -> Posterior:
    """Posterior of every cell of a cyclically perturbed table (Roehrig 2002, the Bayesian analysis).

    Parameters
    ----------
    published : array of int
        The published (perturbed) table ``T_P``.
    cycles : array (n_cycles, *shape)
        The published cycles, in the order they were applied.
    alpha, beta : float
        The published probabilities of adding and subtracting a cycle.
    prior : callable, optional
        ``prior(tables) -> weights`` on an ``(n, *shape)`` array; default uniform.
        See :func:`prior_at_least` and :func:`prior_from_table`.
    model : {"no-change", "skip-cycle"}
        The rule near zero assumed for the likelihood (see :func:`perturbation_likelihood`):
        ``"no-change"`` is the mechanism :class:`~sdckit.tables.cyclic.CyclicPerturbation`
        runs and a proper probability model; ``"skip-cycle"`` reproduces the seed's
        published posterior table but is not a probability model.

    Returns
    -------
    Posterior
    """
    t0 = time.perf_counter()
    P = as_count_array(published, "the published table")
    cyc = check_cycles(cycles, P.shape)
    a = check_float("perturbation_posterior", "alpha", alpha, low=0, high=1)
    b = check_float("perturbation_posterior", "beta", beta, low=0, high=1)
    check_float("perturbation_posterior", "alpha + beta", a + b, low=0, high=1)
    check_choice("perturbation_posterior", "model", model, PERTURBATION_MODELS)
    tables, lik = perturbation_likelihood(P, cyc, a, b, max_states=max_states, model=model)
    return _finish(tables, lik, prior, P, "cyclic", t0, {"alpha": a, "beta": b, "n_cycles": len(cyc),
                                                        "model": model})


# ----------------------------------------------------------------------------- controlled rounding

def rounding_posterior(rounded, base: int, *, rounder: Callable[[np.ndarray], np.ndarray] | None = None,
                       likelihood: Callable[[np.ndarray], np.ndarray] | None = None,
                       prior: Prior | None = None, total_known: bool = False,
                       max_tables: int = 2_000_000) -> Posterior:
    """Posterior of every cell of a published controlled-rounded table.

    Parameters
    ----------
    rounded : (R + 1, C + 1) array of int
        The published table with margins in the last row and column.
    base : int
        Rounding base ``b``.
    rounder : callable, optional
        The published deterministic rounding algorithm, ``rounder(table (R, C)) -> (R+1, C+1)``;
        ``Pr(rounded | T) = 1`` if it reproduces ``rounded``, else 0.
    likelihood : callable, optional
        ``likelihood(tables (n, R, C)) -> Pr(rounded | T)`` for a random rounding. Without
        ``rounder`` or ``likelihood`` every table within ``b - 1`` is taken as able to produce
        the published one (likelihood 1).
    prior : callable, optional
        As in :func:`perturbation_posterior`.
    total_known : bool
        The total is published unrounded.

    Notes
    -----
    Candidates are the tables with every cell and margin within ``b - 1`` of its rounded
    value (:func:`sdckit.tables.count.count_rounded` counts them: 1,025,908,683 for the seed's
    base-3 example, too many to enumerate — then :class:`FibreTooLarge` says so).
    """
    from .count import count_rounded

    t0 = time.perf_counter()
    b = check_int("rounding_posterior", "base", base, min_value=2)
    T = as_count_array(rounded, "the rounded table", ndim=2)
    n = count_rounded(T, b, total_known=total_known)
    if n > max_tables:
        raise FibreTooLarge(f"{n:,} tables are consistent with the rounded table, more than the {max_tables:,} "
                            "allowed for enumeration", count=n)
    w = b - 1
    inner = T[:-1, :-1]
    total = int(T[-1, -1])
    tables = enumerate_bounded(np.maximum(inner - w, 0), inner + w,
                               (np.maximum(T[:-1, -1] - w, 0), T[:-1, -1] + w),
                               (np.maximum(T[-1, :-1] - w, 0), T[-1, :-1] + w),
                               (total, total) if total_known else (max(total - w, 0), total + w),
                               max_tables=max_tables)
    if likelihood is not None:
        lik = np.asarray(likelihood(tables), dtype=float)
    elif rounder is not None:
        lik = np.array([np.array_equal(np.asarray(rounder(t)), T) for t in tables], dtype=float)
    else:
        lik = np.ones(len(tables))
    return _finish(tables, lik, prior, inner, "rounding", t0, {"base": b, "total_known": total_known}, n)


# ----------------------------------------------------------------------------- margins only

def margins_posterior(rows, cols, *, target: str = "uniform", max_tables: int = 1_000_000,
                      n_samples: int = 20_000, thin: int = 20, burn_in: int = 2_000, rng=None) -> Posterior:
    """Cell distributions given only the margins: exact when the fibre has at most
    ``max_tables`` tables, otherwise sampled (``method == "margins-mcmc"``, with the exact
    count in ``n_fibre``).

    ``target`` is ``"uniform"`` or ``"hypergeometric"`` (independence given the margins).
    """
    from .sampler import FibreSampler

    t0 = time.perf_counter()
    r, c = check_margins(rows, cols)
    n = count_tables(r, c)
    pub = np.zeros((len(r), len(c)), np.int64)
    if n <= max_tables:
        tables = enumerate_tables(r, c, max_tables=max_tables)
        if target == "hypergeometric":
            from scipy.special import gammaln
            logw = -gammaln(tables.reshape(len(tables), -1) + 1.0).sum(1)
            lik = np.exp(logw - logw.max())
        else:
            lik = np.ones(len(tables))
        return _finish(tables, lik, None, pub, "margins-enumeration", t0, {"target": target}, n)
    start = _northwest(r, c)
    res = FibreSampler(target=target, n_samples=n_samples, thin=thin, burn_in=burn_in).sample(start, rng=rng)
    flat = res.samples.reshape(n_samples, -1)
    uniq, counts = np.unique(flat, axis=0, return_counts=True)
    tables = uniq.reshape((-1, len(r), len(c)))
    return Posterior(tables, counts / counts.sum(), np.ones(len(tables)), pub, "margins-mcmc",
                     time.perf_counter() - t0, {"target": target, "n_samples": n_samples, "thin": thin,
                                                "ess_min": round(res.ess_min, 1),
                                                "note": f"{n:,} tables have these margins, more than {max_tables:,}: "
                                                        "sampled with the Markov-chain sampler"}, n)


def _northwest(r, c) -> np.ndarray:
    """The north-west corner table with the given margins (a start point for the sampler)."""
    r, c = list(r), list(c)
    t = np.zeros((len(r), len(c)), np.int64)
    i = j = 0
    while i < len(r) and j < len(c):
        x = min(r[i], c[j])
        t[i, j] = x
        r[i] -= x
        c[j] -= x
        if r[i] == 0:
            i += 1
        else:
            j += 1
    return t


