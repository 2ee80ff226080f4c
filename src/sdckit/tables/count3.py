"""Three-way tables with fixed two-way margins: count them where feasible, else sample them.

An intruder who sees the three 2-way margins ``n_ij+``, ``n_i+k``, ``n_+jk`` of an
I x J x K table knows the table lies in the fibre of the no-three-way-interaction model.
:func:`analyse_3way` first tries the exact count
(:func:`sdckit.tables.count.count_tables_3way`, a dynamic programme over slices, under a
time limit); when it does not finish it samples the fibre uniformly with the
Metropolis-Hastings walk on the 4ti2 Markov basis (:class:`sdckit.tables.sampler.FibreSampler`)
from several chains started at the published table and reports the diagnostics that say
whether the samples can be trusted: the acceptance rate, the effective sample size of each
cell (Geyer's initial positive sequence) and the split potential scale reduction factor
``R-hat`` of each cell across chains (Gelman et al. 2013, section 11.4; values near 1 mean
the chains agree, above 1.01 they have not mixed).

References
----------
Diaconis, P. and Sturmfels, B. (1998). Algebraic algorithms for sampling from conditional
distributions. *Annals of Statistics* 26, 363-397.
Dobra, A. (2003). Markov bases for decomposable graphical models. *Bernoulli* 9, 1093-1108.
Gelman, A., Carlin, J. B., Stern, H. S., Dunson, D. B., Vehtari, A. and Rubin, D. B. (2013).
*Bayesian Data Analysis*, 3rd ed., section 11.4 (split R-hat).
Roehrig, S. F. (2002), slide "3-D sensitive table, two 2-D margins given".
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .._random import spawn
from .._validation import check_int
from ..result import ResultDisplay, jsonable
from .count import CountTimeout, as_count_array, count_tables_3way

__all__ = ["ThreeWayResult", "analyse_3way", "split_rhat"]


def split_rhat(chains: np.ndarray) -> np.ndarray:
    """Split potential scale reduction factor of each column.

    Parameters
    ----------
    chains : ndarray (m, n, p)
        ``m`` chains of ``n`` draws of ``p`` quantities.

    Returns
    -------
    ndarray (p,)
        ``sqrt(var_plus / W)`` with each chain split in halves (Gelman et al. 2013, eq. 11.4);
        1.0 for a quantity constant in every chain.
    """
    x = np.asarray(chains, dtype=float)
    m, n, p = x.shape
    h = n // 2
    halves = np.concatenate([x[:, :h], x[:, h:2 * h]], axis=0)  # (2m, h, p)
    means = halves.mean(axis=1)
    W = halves.var(axis=1, ddof=1).mean(axis=0)
    B = h * means.var(axis=0, ddof=1)
    var_plus = (h - 1) / h * W + B / h
    out = np.ones(p)
    live = W > 0
    out[live] = np.sqrt(var_plus[live] / W[live])
    # a quantity constant within each half but different between them has not mixed at all
    out[(~live) & (B > 0)] = np.inf
    return out


@dataclass(frozen=True)
class ThreeWayResult(ResultDisplay):
    """The fibre of a 3-way table given its 2-way margins: exact count or samples with diagnostics."""

    method: str  # "exact" or "mcmc"
    count: int | None
    seconds: float
    shape: tuple
    samples: np.ndarray | None = None
    acceptance_rate: float | None = None
    ess: np.ndarray | None = None
    rhat: np.ndarray | None = None
    n_moves: int | None = None
    params: dict = field(default_factory=dict)

    def cell_distribution(self, cell) -> np.ndarray:
        """Share of sampled tables with each value of ``cell`` (``mcmc`` only)."""
        if self.samples is None:
            raise ValueError("no samples: the fibre was counted exactly")
        return np.bincount(self.samples[(slice(None),) + tuple(cell)]) / len(self.samples)

    @property
    def cell_ranges(self) -> np.ndarray | None:
        """Smallest and largest sampled value of each cell, shape ``(2, I, J, K)``."""
        if self.samples is None:
            return None
        return np.stack([self.samples.min(axis=0), self.samples.max(axis=0)])

    def to_dict(self) -> dict:
        d = {"method": self.method, "shape": list(self.shape), "seconds": round(self.seconds, 4),
             "count": None if self.count is None else (self.count if self.count <= 2 ** 53 else str(self.count)),
             "params": self.params}
        if self.method == "mcmc":
            d.update({"n_samples": int(len(self.samples)), "n_moves": self.n_moves,
                      "acceptance_rate": round(self.acceptance_rate, 4), "ess_min": round(float(self.ess.min()), 1),
                      "rhat_max": round(float(self.rhat.max()), 4), "mixed": bool(self.rhat.max() < 1.01)})
        return jsonable(d)

    def describe(self) -> str:
        if self.method == "exact":
            return f"{self.count:,} tables of shape {self.shape} share these 2-way margins (exact, {self.seconds:.2f} s)"
        d = self.to_dict()
        return (f"{d['n_samples']} sampled tables of shape {self.shape} ({d['n_moves']} moves): acceptance "
                f"{d['acceptance_rate']}, minimum ESS {d['ess_min']}, maximum split R-hat {d['rhat_max']}"
                + ("" if d["mixed"] else " (chains have not mixed: sample longer)"))


def analyse_3way(table, *, time_limit: float = 10.0, n_chains: int = 4, n_samples: int = 2_000,
                 thin: int = 20, burn_in: int = 2_000, moves: np.ndarray | None = None,
                 rng=None) -> ThreeWayResult:
    """Count the I x J x K tables sharing the 2-way margins of ``table``, or sample them.

    Parameters
    ----------
    table : (I, J, K) array of int
        The table (its margins are what is published; it is also the chains' start).
    time_limit : float
        Seconds for the exact count before falling back to sampling.
    n_chains, n_samples, thin, burn_in : int
        Chains, tables kept per chain, steps between kept tables, steps discarded first.
    moves : ndarray, optional
        A Markov basis; default the 4ti2 basis of the no-three-way-interaction model.
    rng : seed or Generator
        One child stream per chain.

    Returns
    -------
    ThreeWayResult
    """
    from .markov import markov_basis, no_three_way_margins
    from .sampler import FibreSampler

    T = as_count_array(table, "the 3-way table", ndim=3)
    check_int("analyse_3way", "n_chains", n_chains, min_value=2)
    t0 = time.perf_counter()
    try:
        n = count_tables_3way(T.sum(2), T.sum(1), T.sum(0), time_limit=time_limit)
        return ThreeWayResult("exact", int(n), time.perf_counter() - t0, T.shape,
                              params={"time_limit": time_limit})
    except CountTimeout:
        pass
    if moves is None:
        moves = markov_basis(T.shape, no_three_way_margins(3))
    sampler = FibreSampler(target="uniform", n_samples=n_samples, thin=thin, burn_in=burn_in,
                           margins=no_three_way_margins(3))
    runs = [sampler.sample(T, moves, rng=g) for g in spawn(rng, n_chains)]
    chains = np.stack([r.samples.reshape(n_samples, -1) for r in runs])
    samples = chains.reshape((-1,) + T.shape)
    ess = np.sum([r.ess for r in runs], axis=0)
    rhat = split_rhat(chains)
    acc = float(np.mean([r.acceptance_rate for r in runs]))
    return ThreeWayResult("mcmc", None, time.perf_counter() - t0, T.shape, samples, acc, ess.reshape(T.shape),
                          rhat.reshape(T.shape), int(len(moves)),
                          {"time_limit": time_limit, "n_chains": n_chains, "n_samples": n_samples, "thin": thin,
                           "burn_in": burn_in, "note": f"exact count did not finish in {time_limit} s"})
