"""Sequential importance sampling of 2-way tables with fixed margins (Chen, Diaconis, Holmes & Liu 2005).

For margins too large to count exactly, the number of tables and the distribution of each
cell (under the uniform distribution on the tables) are estimated by importance sampling:

1. Fill the table one column at a time. Any column vector ``x`` with ``0 <= x <= r`` (the
   remaining row sums) and ``sum x = c_j`` can be completed, because non-negative margins with
   equal totals always admit a table (the north-west corner rule), so the sampler never
   reaches a dead end (CDHL 2005, section 6: the column-wise decomposition).
2. Draw column ``j`` among its fillings ``0 <= x <= r, sum x = c_j`` with probability
   ``q_j(x) = prod_i g_i(x_i) / Z_j``: uniformly (``g = 1``, ``Z_j`` is the number of
   fillings) or, by default, with ``g_i(x) = binom(r_i - x + C' - 1, C' - 1)`` where ``C'``
   columns remain (how many ways row ``i`` can spread what it has left: the row factor of
   the independence approximation to the number of completions, which makes the proposal
   close to the exact conditional distribution). ``Z_j`` and the sequential draw
   ``P(x_i = v | x_<i) = g_i(v) Z(rows > i; t - v) / Z(rows >= i; t)`` come from a
   dynamic programme over rows. The proposal probability of the whole table is
   ``q(T) = prod_j q_j(x^(j))``; the last column is forced.
3. The importance weight is ``w(T) = 1 / q(T)`` and the count is its mean:
   ``|Sigma| = E_q[1 / q(T)]`` (CDHL 2005, eq. (2)), estimated by
   ``hat N = (1/n) sum_k w_k`` with standard error ``sd(w) / sqrt(n)`` and effective
   sample size ``ESS = (sum w)^2 / sum w^2`` (CDHL 2005, section 3, cv^2 = n / ESS - 1).
4. Cell distributions under the uniform distribution: self-normalised weights,
   ``Pr(t_ij = q) ~ sum_k w_k [t_ij^(k) = q] / sum_k w_k``.

Weights are kept as logarithms (a 20 x 20 table at total 2,000 has about 10^400 tables,
beyond float range); the estimate is reported as ``log10`` and as a decimal string.

References
----------
Chen, Y., Diaconis, P., Holmes, S. P. and Liu, J. S. (2005). Sequential Monte Carlo methods
for statistical analysis of tables. *Journal of the American Statistical Association* 100,
109-120.
Kong, A., Liu, J. S. and Wong, W. H. (1994). Sequential imputations and Bayesian missing data
problems. *JASA* 89, 278-288 (the effective sample size).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from .._random import as_generator
from .._validation import check_choice, check_int
from ..result import ResultDisplay, jsonable
from .count import check_margins

__all__ = ["SISResult", "sis_count", "format_big"]


@njit(cache=True)
def _sis(rows, cols, u, keep, out, product):
    """Draw ``u.shape[0]`` tables; ``u`` holds the uniforms (one per cell). Returns the log
    importance weights ``log w = -log q(T)``.

    Column ``j`` is drawn with probability ``q_j(x) = prod_i g_i(x_i) / Z_j`` over the
    fillings ``0 <= x <= rem``, ``sum x = c_j``: ``g = 1`` (uniform) or, with ``product``,
    ``g_i(x) = binom(rem_i - x + C' - 1, C' - 1)`` (``C'`` columns left after this one: the
    number of ways row ``i`` can spread what remains, the row factor of the independence
    approximation to the count of the remaining table). ``Z_j`` and the sequential draw come
    from ``cnt[i, t] = sum_x g_i(x) cnt[i + 1, t - x]``.
    """
    n = u.shape[0]
    R = rows.size
    C = cols.size
    cmax = 0
    for j in range(C):
        cmax = max(cmax, cols[j])
    logw = np.zeros(n)
    cnt = np.zeros((R + 1, cmax + 1))
    lg = np.zeros((R, cmax + 1))
    eg = np.ones((R, cmax + 1))
    rem = np.zeros(R, np.int64)
    for k in range(n):
        for i in range(R):
            rem[i] = rows[i]
        lw = 0.0
        for j in range(C):
            c = cols[j]
            cp = C - j - 1
            if cp == 0:  # the last column is forced
                for i in range(R):
                    if keep:
                        out[k, i, j] = rem[i]
                    rem[i] = 0
                continue
            use_g = product and cp >= 1
            for i in range(R):
                top = min(rem[i], c)
                if use_g:
                    base = math.lgamma(rem[i] + cp) - math.lgamma(rem[i] + 1.0)
                    for x in range(top + 1):
                        lg[i, x] = math.lgamma(rem[i] - x + cp) - math.lgamma(rem[i] - x + 1.0) - base
                        eg[i, x] = math.exp(lg[i, x])
                else:
                    for x in range(top + 1):
                        lg[i, x] = 0.0
                        eg[i, x] = 1.0
            for t in range(c + 1):
                cnt[R, t] = 0.0
            cnt[R, 0] = 1.0
            for i in range(R - 1, -1, -1):
                b = min(rem[i], c)
                if use_g:
                    for t in range(c + 1):
                        acc = 0.0
                        for x in range(min(b, t) + 1):
                            acc += eg[i, x] * cnt[i + 1, t - x]
                        cnt[i, t] = acc
                else:
                    run = 0.0
                    for t in range(c + 1):
                        run += cnt[i + 1, t]
                        if t - b - 1 >= 0:
                            run -= cnt[i + 1, t - b - 1]
                        cnt[i, t] = run
            lw += math.log(cnt[0, c])
            t = c
            for i in range(R):
                if i == R - 1:
                    x = t
                else:
                    target = u[k, j * R + i] * cnt[i, t]
                    acc = 0.0
                    x = 0
                    top = min(rem[i], t)
                    while x < top:
                        acc += eg[i, x] * cnt[i + 1, t - x]
                        if acc > target:
                            break
                        x += 1
                lw -= lg[i, x]
                rem[i] -= x
                t -= x
                if keep:
                    out[k, i, j] = x
        logw[k] = lw
    return logw


def format_big(log10_value: float, digits: int = 6) -> str:
    """A positive number given by its log10 as a decimal string (``"1.23456e+420"``)."""
    if not math.isfinite(log10_value):
        return "0"
    e = math.floor(log10_value)
    m = 10 ** (log10_value - e)
    if m >= 10:  # rounding
        m, e = m / 10, e + 1
    return f"{m:.{digits - 1}f}e+{e}" if e >= 0 else f"{m:.{digits - 1}f}e{e}"


@dataclass(frozen=True)
class SISResult(ResultDisplay):
    """An importance-sampling estimate of the number of tables with given margins.

    Attributes
    ----------
    log10_estimate, log10_std_error : float
        ``log10`` of the estimate ``hat N`` and of its standard error.
    ess : float
        Effective sample size ``(sum w)^2 / sum w^2``.
    n_samples : int
    log_weights : ndarray
        Natural-log importance weights, one per sampled table.
    tables : ndarray (n, R, C) or None
        The sampled tables when kept (for cell distributions).
    """

    log10_estimate: float
    log10_std_error: float
    ess: float
    n_samples: int
    seconds: float
    log_weights: np.ndarray
    tables: np.ndarray | None
    rows: tuple
    cols: tuple

    @property
    def estimate(self) -> float:
        """The estimate as a float (``inf`` beyond float range: use :attr:`log10_estimate`)."""
        return 10.0 ** self.log10_estimate if self.log10_estimate < 308 else math.inf

    @property
    def std_error(self) -> float:
        return 10.0 ** self.log10_std_error if self.log10_std_error < 308 else math.inf

    @property
    def cv2(self) -> float:
        """Squared coefficient of variation of the weights (CDHL 2005, section 3)."""
        return self.n_samples / self.ess - 1.0

    def covers(self, exact: int, n_se: float = 3.0) -> bool:
        """Whether ``exact`` lies within ``n_se`` standard errors of the estimate (in log space)."""
        lx = math.log10(exact) if exact > 0 else -math.inf
        # |N - hat N| <= n_se * se, with everything scaled by 10**(-log10_estimate)
        return abs(10 ** (lx - self.log10_estimate) - 1.0) <= n_se * 10 ** (self.log10_std_error - self.log10_estimate)

    def cell_distribution(self, i: int, j: int) -> np.ndarray:
        """``Pr(t_ij = q)`` under the uniform distribution on the tables (self-normalised weights)."""
        if self.tables is None:
            raise ValueError("the sampled tables were not kept; call sis_count(..., keep_tables=True)")
        w = np.exp(self.log_weights - self.log_weights.max())
        return np.bincount(self.tables[:, i, j], weights=w) / w.sum()

    def to_dict(self) -> dict:
        est = self.estimate
        se = self.std_error
        return jsonable({"method": "sis", "estimate": est if est < 1e300 else format_big(self.log10_estimate),
                         "std_error": se if se < 1e300 else format_big(self.log10_std_error),
                         "log10_estimate": round(self.log10_estimate, 6),
                         "log10_std_error": round(self.log10_std_error, 6), "ess": round(self.ess, 2),
                         "cv2": round(self.cv2, 4), "n_samples": self.n_samples, "seconds": round(self.seconds, 4)})

    def describe(self) -> str:
        return (f"SIS estimate {format_big(self.log10_estimate)} tables (standard error "
                f"{format_big(self.log10_std_error)}, ESS {self.ess:.0f} of {self.n_samples})")


def sis_count(rows, cols, *, n_samples: int = 10_000, proposal: str = "product", keep_tables: bool = False,
              rng=None) -> SISResult:
    """Estimate the number of tables with the given margins by sequential importance sampling.

    Parameters
    ----------
    rows, cols : sequence of int
        Row and column sums (same total).
    n_samples : int
        Number of tables drawn.
    proposal : {"product", "uniform"}
        How a column is drawn among its fillings: ``"uniform"``, or ``"product"`` (default),
        in proportion to ``prod_i binom(rem_i - x_i + C' - 1, C' - 1)``, the number of ways
        each row can spread what it has left over the ``C'`` columns still to come (the row
        factor of the independence approximation to the remaining count). Either gives an
        unbiased estimate; ``"product"`` has far smaller variance on large tables.
    keep_tables : bool
        Keep the sampled tables (``n_samples * R * C`` integers) for cell distributions.
    rng : int, Generator or None
        Random source (fixed seeds give fixed estimates).

    Returns
    -------
    SISResult

    Notes
    -----
    Columns are filled in decreasing order of their sums (CDHL 2005 recommend it: the
    largest columns carry the most uncertainty and fix the most).

    References
    ----------
    Chen, Diaconis, Holmes and Liu (2005), JASA 100, 109-120.
    """
    n = check_int("sis_count", "n_samples", n_samples, min_value=2)
    check_choice("sis_count", "proposal", proposal, ("product", "uniform"))
    r, c = check_margins(rows, cols)
    gen = as_generator(rng)
    t0 = time.perf_counter()
    order = np.argsort(-np.array(c), kind="stable")
    R, C = len(r), len(c)
    u = gen.random((n, R * C))
    out = np.zeros((n, R, C) if keep_tables else (1, 1, 1), np.int64)
    logw = _sis(np.array(r, np.int64), np.array(c, np.int64)[order], u, keep_tables, out, proposal == "product")
    tables = None
    if keep_tables:
        tables = np.empty_like(out)
        tables[:, :, order] = out
    mx = float(logw.max())
    w = np.exp(logw - mx)
    mean = w.mean()
    sd = w.std(ddof=1)
    ess = float(w.sum() ** 2 / (w ** 2).sum())
    ln10 = math.log(10)
    log10_est = (mx + math.log(mean)) / ln10
    log10_se = (mx + math.log(sd / math.sqrt(n))) / ln10 if sd > 0 else -math.inf
    return SISResult(log10_est, log10_se, ess, n, time.perf_counter() - t0, logw, tables, r, c)
