"""Sampling tables with fixed margins: a Metropolis-Hastings walk on the fibre with a Markov basis.

When the fibre is too large to enumerate (the seed's margins are shared by 18 billion
tables), the distribution of each cell given the margins is estimated by a random walk:
from the current table ``t`` pick a move ``m`` of a Markov basis uniformly and a sign
``s = +-1``; propose ``t' = t + s m``; reject if a cell goes negative, otherwise accept with
probability ``min(1, pi(t') / pi(t))`` (the proposal is symmetric). Targets:

* ``"uniform"`` — every table with the margins equally likely (an intruder with a flat prior);
* ``"hypergeometric"`` — ``pi(t) proportional to 1 / prod t_ij!``, the distribution of the
  table given its margins under independence (Diaconis and Sturmfels 1998, section 2).

The walk keeps every ``thin``-th table after ``burn_in`` steps; effective sample sizes are
estimated per cell from the autocorrelations (Geyer's initial positive sequence).

References
----------
Diaconis, P. and Sturmfels, B. (1998). Algebraic algorithms for sampling from conditional
distributions. *Annals of Statistics* 26, 363-397.
Geyer, C. J. (1992). Practical Markov chain Monte Carlo. *Statistical Science* 7, 473-483.
Roehrig, S. F. (2002), slide "Use the Groebner basis to enumerate or sample".
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .._random import as_generator
from .._validation import check_choice, check_int
from ..errors import InputError
from ..result import ResultDisplay, jsonable
from .count import as_count_array
from .markov import basic_moves, markov_basis

__all__ = ["FibreSampler", "SampleResult", "effective_sample_size", "cell_distributions"]

_TARGETS = ("uniform", "hypergeometric")


@njit(cache=True)
def _walk(state, idx, val, lens, move_pick, sign_pick, accept_u, thin, burn_in, step0, n_kept, out, hyper):
    """Run ``len(move_pick)`` steps from ``state`` (modified in place); store kept states in ``out``.

    Global step ``g = step0 + s`` keeps the state when ``g >= burn_in`` and
    ``(g - burn_in + 1) % thin == 0``, at row ``n_kept`` onwards. Returns (accepted, n_kept).
    """
    accepted = 0
    for s in range(move_pick.size):
        m = move_pick[s]
        sg = sign_pick[s]
        ok = True
        for q in range(lens[m]):
            if state[idx[m, q]] + sg * val[m, q] < 0:
                ok = False
                break
        if ok and hyper:
            # log pi(t') - log pi(t) with pi(t) ~ 1 / prod t!
            lr = 0.0
            for q in range(lens[m]):
                a = state[idx[m, q]]
                b = a + sg * val[m, q]
                lr += math.lgamma(a + 1.0) - math.lgamma(b + 1.0)
            if lr < 0.0 and accept_u[s] >= math.exp(lr):
                ok = False
        if ok:
            accepted += 1
            for q in range(lens[m]):
                state[idx[m, q]] += sg * val[m, q]
        g = step0 + s
        if g >= burn_in and (g - burn_in + 1) % thin == 0 and n_kept < out.shape[0]:
            out[n_kept, :] = state
            n_kept += 1
    return accepted, n_kept


def _sparse_moves(moves: np.ndarray):
    M = moves.reshape(len(moves), -1)
    lens = (M != 0).sum(axis=1).astype(np.int64)
    width = int(lens.max())
    idx = np.zeros((len(M), width), np.int64)
    val = np.zeros((len(M), width), np.int64)
    for k in range(len(M)):  # once per basis, not per step
        nz = np.flatnonzero(M[k])
        idx[k, :nz.size] = nz
        val[k, :nz.size] = M[k, nz]
    return idx, val, lens


def effective_sample_size(x: np.ndarray) -> np.ndarray:
    """Effective sample size of each column of ``x`` (draws in rows).

    Geyer's initial positive sequence: ``ESS = n / (-1 + 2 sum_k Gamma_k)`` where ``Gamma_k``
    are sums of consecutive autocorrelation pairs, truncated at the first non-positive pair.
    Constant columns get ``n`` (no uncertainty).
    """
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    n = x.shape[0]
    xc = x - x.mean(axis=0)
    var = (xc ** 2).mean(axis=0)
    f = np.fft.rfft(xc, n=2 * n, axis=0)
    acov = np.fft.irfft(f * np.conj(f), axis=0)[:n] / n
    out = np.full(x.shape[1], float(n))
    live = var > 0
    rho = acov[:, live] / var[live]
    m = (n - 1) // 2
    pairs = rho[0:2 * m:2] + rho[1:2 * m:2]
    positive = np.cumprod(pairs > 0, axis=0).astype(bool)
    tau = -1.0 + 2.0 * np.where(positive, pairs, 0.0).sum(axis=0)
    out[live] = n / np.maximum(tau, 1e-12)
    return np.minimum(out, n * np.log10(max(n, 10)))  # guard against antithetic over-estimates


def cell_distributions(tables: np.ndarray, weights: np.ndarray | None = None) -> dict:
    """Distribution of every cell over a set of tables: ``{cell: {value: probability}}``.

    ``tables`` has shape ``(n, *shape)``; ``weights`` (summing to 1) default to equal.
    Cells are index tuples.
    """
    tables = np.asarray(tables)
    n = tables.shape[0]
    w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, float)
    flat = tables.reshape(n, -1)
    out = {}
    for c, cell in enumerate(np.ndindex(*tables.shape[1:])):
        probs = np.bincount(flat[:, c], weights=w)
        out[cell] = {int(v): float(p) for v, p in enumerate(probs) if p > 0}
    return out


@dataclass(frozen=True)
class SampleResult(ResultDisplay):
    """Tables drawn from a fibre with the walk's diagnostics."""

    samples: np.ndarray
    target: str
    n_moves: int
    acceptance_rate: float
    ess: np.ndarray
    seconds: float
    params: dict = field(default_factory=dict)

    @property
    def ess_min(self) -> float:
        return float(self.ess.min())

    def cell_distributions(self) -> dict:
        """``{cell: {value: share of kept tables}}``."""
        return cell_distributions(self.samples)

    def to_dict(self) -> dict:
        return jsonable({"target": self.target, "n_samples": int(self.samples.shape[0]),
                         "n_moves": self.n_moves, "acceptance_rate": round(self.acceptance_rate, 4),
                         "ess_min": round(self.ess_min, 1), "ess_median": round(float(np.median(self.ess)), 1),
                         "ess_per_second": round(self.ess_min / max(self.seconds, 1e-9), 1),
                         "seconds": round(self.seconds, 4), "params": self.params})

    def describe(self) -> str:
        d = self.to_dict()
        return (f"{d['n_samples']} tables ({d['target']} target, {d['n_moves']} moves): acceptance "
                f"{d['acceptance_rate']:.3f}, minimum ESS {d['ess_min']}, {d['ess_per_second']} ESS/s")


@dataclass(frozen=True)
class FibreSampler:
    """Metropolis-Hastings sampler of tables with the margins of a start table.

    Parameters
    ----------
    target : {"uniform", "hypergeometric"}
        Stationary distribution on the fibre.
    n_samples : int
        Tables kept.
    burn_in : int
        Steps discarded first.
    thin : int
        Steps between kept tables.
    margins : tuple of tuples of axes, optional
        Fixed margins for K-way tables (default: all (K-1)-way margins); 2-way tables use the
        basic moves with row and column sums fixed.
    """

    target: str = "uniform"
    n_samples: int = 10_000
    burn_in: int = 1_000
    thin: int = 10
    margins: tuple | None = None

    def __post_init__(self) -> None:
        check_choice("FibreSampler", "target", self.target, _TARGETS)
        check_int("FibreSampler", "n_samples", self.n_samples, min_value=1)
        check_int("FibreSampler", "burn_in", self.burn_in, min_value=0)
        check_int("FibreSampler", "thin", self.thin, min_value=1)

    def sample(self, start, moves: np.ndarray | None = None, *, rng=None) -> SampleResult:
        """Walk from ``start`` (any table of the fibre; not modified).

        ``moves`` default to the basic moves (2-way) or the 4ti2 Markov basis (K-way).
        """
        t0 = time.perf_counter()
        start = as_count_array(start, "the start table")
        if moves is None:
            moves = (basic_moves(*start.shape) if start.ndim == 2 and self.margins is None
                     else markov_basis(start.shape, self.margins))
        moves = np.asarray(moves, dtype=np.int64)
        if moves.shape[1:] != start.shape:
            raise InputError(f"the moves have shape {moves.shape[1:]} but the table {start.shape}")
        gen = as_generator(rng)
        idx, val, lens = _sparse_moves(moves)
        state = start.ravel().copy()
        out = np.empty((self.n_samples, state.size), np.int64)
        total_steps = self.burn_in + self.n_samples * self.thin
        accepted, done, kept = 0, 0, 0
        chunk = 1 << 20
        while done < total_steps:
            n = min(chunk, total_steps - done)
            mp = gen.integers(0, len(moves), n)
            sp = np.where(gen.random(n) < 0.5, -1, 1).astype(np.int64)
            au = gen.random(n)
            acc, kept = _walk(state, idx, val, lens, mp, sp, au, self.thin, self.burn_in, done, kept, out,
                              self.target == "hypergeometric")
            accepted += acc
            done += n
        samples = out.reshape((self.n_samples,) + start.shape)
        seconds = time.perf_counter() - t0
        ess = effective_sample_size(out)
        return SampleResult(samples, self.target, int(len(moves)), accepted / total_steps, ess, seconds,
                            {"target": self.target, "n_samples": self.n_samples, "burn_in": self.burn_in,
                             "thin": self.thin})
