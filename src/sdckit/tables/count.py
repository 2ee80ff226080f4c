"""Exact counting of contingency tables with given margins (and with published cell bounds).

What an intruder who sees only the margins of a table can learn starts with how many tables
share them: the margins of Roehrig's (2002) delinquent-children table (rows 20, 55, 25, 35; columns
50, 35, 30, 20) are shared by exactly 18,272,363,056 tables.

* :func:`count_tables` / :func:`count_tables_exact` — 2-way tables with fixed row and column
  sums by the fastest exact method for the margins (:mod:`sdckit.tables.count_dp`: the RSK
  identity with Pieri's rule, or :mod:`sdckit.tables.count_ie`: inclusion-exclusion meet in
  the middle for at most four columns; compiled, modulo primes, rebuilt by CRT); the result says which method ran.
* :func:`row_dp_count` — the reference method: dynamic programming over
  rows with exact Python integers, memoised on the *sorted* remaining column sums (the number
  of completions depends only on the multiset of what is left in the columns); the last two
  rows are counted in closed form (bounded compositions).
* :func:`count_tables_3way` — 3-way tables with fixed 2-way margins ``n_ij+``, ``n_i+k``,
  ``n_+jk`` (the no-three-way-interaction fibre): dynamic programming over the slices
  ``n_i..``, memoised on the remaining ``n_+jk`` matrix, each slice enumerated as a 2-way
  table with its own margins. Exponential; runs under a time limit.
* :func:`count_bounded` — tables with every cell in ``[lower, upper]`` and every row sum,
  column sum and the total in a range: a dense numpy dynamic programme over the column
  partial sums. Tables consistent with a published controlled rounding
  (:func:`count_rounded`) or a published suppression pattern (:func:`count_suppressed`) are
  special cases.
* :func:`enumerate_tables`, :func:`enumerate_bounded` — the tables themselves, as one
  ``(n, R, C)`` array, for exact posterior and sampler checks on small fibres.

References
----------
Roehrig, S. F. (2002). *Disclosure Limitation in Large Statistical Databases* (talk, CMU/Pitt;
Roehrig 2002): "Release only the margins", "Controlled rounding (base 3)", "Suppress sensitive
cells".
Diaconis, P. and Gangolli, A. (1995). Rectangular arrays with fixed margins. In *Discrete
Probability and Algorithms*, IMA Vol. 72, 15-41.
De Loera, J. A. and Sturmfels, B. (2003). Algebraic unimodular counting. *Mathematical
Programming* 96, 183-203.
"""

from __future__ import annotations

import itertools
import math
import numbers
import time
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, SDCError
from ..result import ResultDisplay
from ._compositions import bounded_compositions

__all__ = ["CountTimeout", "FibreTooLarge", "CountResult", "count_tables", "count_tables_exact", "row_dp_count",
           "predict_count_cost", "row_dp_work", "row_dp_seconds", "count_tables_3way", "count_bounded",
           "count_rounded", "count_suppressed", "enumerate_tables", "enumerate_bounded",
           "bounded_compositions", "check_margins", "as_count_array"]


class CountTimeout(SDCError):
    """An exact count or enumeration did not finish within its time limit."""

    exit_code = 4


class FibreTooLarge(SDCError):
    """A set of tables is too large to enumerate; the message gives its size and what to do."""

    def __init__(self, message: str, *, count: int | None = None) -> None:
        super().__init__(message)
        self.count = count


# ----------------------------------------------------------------------------- validation

def as_count_array(values, name: str, *, ndim: int | None = None) -> np.ndarray:
    """A copy of ``values`` as an int64 array of non-negative integers, or a clear InputError."""
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if arr.size == 0:
        raise InputError(f"{name} is empty; give at least one count")
    if ndim is not None and arr.ndim != ndim:
        raise InputError(f"{name} must be a {ndim}-dimensional array of counts; got shape {arr.shape}")
    flat = arr.ravel().tolist()
    for pos, v in enumerate(flat):
        ok = isinstance(v, numbers.Integral) and not isinstance(v, bool)
        if not ok and isinstance(v, numbers.Real) and math.isfinite(v) and float(v).is_integer():
            ok = True
        if not ok:
            where = np.unravel_index(pos, arr.shape)
            raise InputError(f"{name} holds a non-integer count {v!r} at position {tuple(int(i) for i in where)}; "
                             "counts must be whole numbers >= 0")
        if v < 0:
            where = np.unravel_index(pos, arr.shape)
            raise InputError(f"{name} holds a negative count {v!r} at position {tuple(int(i) for i in where)}; "
                             "counts must be whole numbers >= 0")
    return np.array([int(v) for v in flat], dtype=np.int64).reshape(arr.shape)


def check_margins(rows, cols) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Validate row and column sums: non-negative integers with equal totals."""
    r = as_count_array(rows, "the row sums", ndim=1)
    c = as_count_array(cols, "the column sums", ndim=1)
    if int(r.sum()) != int(c.sum()):
        raise InputError(f"the row sums total {int(r.sum())} but the column sums total {int(c.sum())}; "
                         "margins of one table must have the same grand total")
    return tuple(int(v) for v in r), tuple(int(v) for v in c)


# ----------------------------------------------------------------------------- 2-way, fixed margins

def _three_rows(r1: int, r2: int, cols: tuple[int, ...]) -> int:
    """Number of 3-row tables with row sums ``r1, r2`` (the third implied) and column sums ``cols``.

    ``sum_x B(r2; c - x)`` over fillings ``x`` of the first row, as one coefficient:
    ``[w^r1 z^r2] (1 - z)^-C prod_j sum_{x=0}^{c_j} w^x (1 - z^(c_j - x + 1))`` (each factor
    ``(1 - z^(c_j - x_j + 1)) / (1 - z)`` counts the second-row entry ``0..c_j - x_j``).
    """
    C = len(cols)
    bound = math.prod(2 * (c + 1) for c in cols) * math.comb(r2 + C, C)
    F = np.zeros((r1 + 1, r2 + 1), dtype=np.int64 if bound < 2**62 else object)
    F[0, 0] = 1
    for c in cols:
        G = np.zeros_like(F)
        for x in range(min(c, r1) + 1):
            G[x:, :] += F[:r1 + 1 - x, :]
            s = c - x + 1
            if s <= r2:
                G[x:, s:] -= F[:r1 + 1 - x, :r2 + 1 - s]
        F = G
    col = F[r1, :]
    for _ in range(C):  # times (1 - z)^-1, C times: running sums along z
        col = np.cumsum(col) if col.dtype != object else np.array(list(itertools.accumulate(col)), dtype=object)
    return int(col[r2])


def _row_fills(r: int, cols: tuple[int, ...], deadline: float | None = None) -> dict[tuple[int, ...], int]:
    """Sorted remaining column sums after placing a row of sum ``r``, with multiplicities.

    Column by column, the partial states are (left to place, sorted tuple of new remaining
    values); permutations of equal outcomes merge as soon as they appear.
    """
    states: dict[tuple[int, tuple[int, ...]], int] = {(r, ()): 1}
    rest = sum(cols)
    for c in cols:
        if deadline is not None and time.process_time() > deadline:
            raise CountTimeout("counting tables did not finish within its time limit; raise the limit or sample")
        rest -= c
        nxt: dict[tuple[int, tuple[int, ...]], int] = {}
        for (left, part), mult in states.items():
            for x in range(max(0, left - rest), min(c, left) + 1):
                key = (left - x, tuple(sorted(part + (c - x,))))
                nxt[key] = nxt.get(key, 0) + mult
        states = nxt
    return {part: mult for (left, part), mult in states.items()}


def row_dp_count(rows, cols, *, time_limit: float | None = None) -> int:
    """Exact number of non-negative integer tables with the given row and column sums.

    Parameters
    ----------
    rows, cols : sequence of int
        Row and column sums (non-negative integers with the same total).
    time_limit : float, optional
        CPU seconds (:func:`time.process_time`); :class:`CountTimeout` is raised when exceeded.

    Returns
    -------
    int
        The exact count (a Python integer, no overflow).

    Notes
    -----
    ``N(r_1..r_R; c) = sum_x N(r_2..r_R; sort(c - x))`` over the fillings ``x`` of row 1,
    memoised on ``(row index, sorted remaining column sums)``; with two rows left the count is
    the number of bounded compositions of ``r_{R-1}`` (:func:`bounded_compositions`). The
    shorter dimension is taken as the columns and rows are processed smallest first, so the
    two largest rows go to the closed form.

    References
    ----------
    Roehrig (2002), slide "Release only the margins": "18,272,363,056 tables have our margins".

    Examples
    --------
    >>> row_dp_count([20, 55, 25, 35], [50, 35, 30, 20])
    18272363056
    """
    r, c = check_margins(rows, cols)
    if len(c) > len(r):
        r, c = c, r
    r = tuple(sorted(r))
    deadline = None if time_limit is None else time.process_time() + time_limit
    memo: dict[tuple[int, tuple[int, ...]], int] = {}

    def f(i: int, state: tuple[int, ...]) -> int:
        left = len(r) - i
        if left == 1:
            return 1
        key = (i, state)
        hit = memo.get(key)
        if hit is not None:
            return hit
        if left == 2:
            memo[key] = total = bounded_compositions(r[i], state)
            return total
        if left == 3:
            memo[key] = total = _three_rows(r[i], r[i + 1], state)
            return total
        if deadline is not None and time.process_time() > deadline:
            raise CountTimeout(f"counting tables with margins rows={list(r)}, cols={list(c)} "
                               f"did not finish within {time_limit} CPU s ({len(memo)} states done); "
                               "raise the time limit or sample the tables instead")
        total = sum(mult * f(i + 1, nxt) for nxt, mult in _row_fills(r[i], state, deadline).items())
        memo[key] = total
        return total

    return f(0, tuple(sorted(c)))


_METHODS = ("auto", "kostka", "ie-mitm", "row-dp")

#: default limits of :func:`count_tables_exact` (and ``sdckit table count``)
DEFAULT_TIME_LIMIT = 600.0
DEFAULT_MAX_MEMORY_GB = 2.0

# Work units of row_dp_work per CPU second (fitted on bench_exact.py's ``count_prediction``
# cases; see docs/methods/table_counting.md).
ROW_DP_RATE = 4.0e6
# bytes per memoised state of the row DP: the key tuple, the dict slot and the Python integer
_ROW_DP_STATE_BYTES = 240


def _bounded_partitions(n: int, k: int, b: int) -> np.ndarray:
    """``p[s]``, s = 0..n: partitions of ``s`` into at most ``k`` parts each at most ``b``
    (the coefficients of the Gaussian binomial ``[k + b choose k]_q``, as floats: an estimate).

    ``prod_{i=1..k} (1 - q^(b+i)) / (1 - q^i)`` truncated at degree ``n`` (Andrews 1976, Thm 3.1).
    """
    p = np.zeros(n + 1)
    p[0] = 1.0
    for i in range(1, k + 1):
        m = b + i
        if m <= n:  # times (1 - q^(b+i))
            p[m:] = p[m:] - p[:n + 1 - m].copy()
        for s in range(i, n + 1):  # divided by (1 - q^i): running sums with step i
            p[s] += p[s - i]
    return np.maximum(p, 0.0)


def row_dp_work(rows, cols) -> tuple[float, float]:
    """Predicted ``(work, states)`` of :func:`row_dp_count`: the memoised states are bounded by
    the partitions of each level's remaining total into at most ``C`` parts no larger than the
    largest column sum; each state's row fillings cost at most the compositions of the row sum
    into ``C`` parts and at most the states of the next level, times ``C`` columns. An upper
    bound rather than a fit (sorted states merge sooner than it assumes)."""
    r, c = check_margins(rows, cols)
    if len(c) > len(r):
        r, c = c, r
    r = sorted(x for x in r)
    C, n, b = len(c), sum(r), max(c) if c else 0
    if len(r) <= 3 or C <= 1:
        return float(C * (n + 1)), 0.0
    p = _bounded_partitions(n, C, b)
    left = n
    levels = []
    for i in range(len(r) - 2):  # states with 3 or more rows left
        levels.append(float(p[left]))
        left -= r[i]
    work = states = 0.0
    for i in range(len(levels) - 1):
        fills = min(float(math.comb(r[i] + C - 1, C - 1)), levels[i + 1])
        work += levels[i] * fills * C
        states += levels[i]
    return float(work), float(states)


def row_dp_seconds(rows, cols) -> float:
    """Predicted CPU seconds of :func:`row_dp_count` (:func:`row_dp_work` / ``ROW_DP_RATE``)."""
    return row_dp_work(rows, cols)[0] / ROW_DP_RATE


def predict_count_cost(rows, cols, method: str = "auto") -> dict:
    """Predicted CPU seconds and memory (GB) of each exact method for these margins.

    Returns ``{method: (seconds, gigabytes)}`` for ``"kostka"``, ``"ie-mitm"`` (``inf`` when
    neither side has at most four entries) and ``"row-dp"``, or for ``method`` alone.
    The predictions are work models calibrated on CPU time (see ``bench_exact.py``,
    ``count_prediction``, for their accuracy); they run in well under a second.
    """
    from . import count_light

    r, c = check_margins(rows, cols)
    rn = [x for x in r if x]
    cn = [x for x in c if x]
    out = {}
    if method in ("auto", "kostka"):
        from . import count_dp  # its memory model sizes the compiled rank tables

        out["kostka"] = (count_light.kostka_seconds(rn, cn), count_dp.kostka_memory(rn, cn) / 1e9)
    if method in ("auto", "ie-mitm"):
        sec = count_light.ie_mitm_seconds(rn, cn)
        k = count_light.n_primes_for(rn, cn) if rn and cn else 1
        out["ie-mitm"] = (sec, 0.0 if not math.isfinite(sec) else 16.0 * (sum(rn) + 1) * k / 1e9)
    if method in ("auto", "row-dp"):
        work, states = row_dp_work(rn, cn)
        out["row-dp"] = (work / ROW_DP_RATE, states * (_ROW_DP_STATE_BYTES + 8 * len(cn)) / 1e9)
    return out


@dataclass(frozen=True)
class CountResult(ResultDisplay):
    """An exact count of tables with given margins and how it was obtained.

    Attributes
    ----------
    count : int
        The exact number of tables (a Python integer).
    method : str
        ``"kostka"`` (RSK and Pieri's rule, compiled, modulo primes with CRT; two rows or
        columns in closed form),
        ``"ie-mitm"`` (meet in the middle with inclusion-exclusion, at most 4 columns or rows),
        ``"row-dp"`` (dynamic programme over rows with exact Python integers) or
        ``"trivial"`` (one row or column, or a zero total).
    seconds : float
        Wall time of the count.
    cpu_seconds : float
        CPU time of the count (:func:`time.process_time`).
    predicted_seconds, predicted_gb : float
        The prediction the limits were checked against before the count started.
    """

    count: int
    method: str
    seconds: float
    cpu_seconds: float = float("nan")
    predicted_seconds: float = float("nan")
    predicted_gb: float = float("nan")

    def to_dict(self) -> dict:
        """``count`` as a JSON number up to ``2**53`` and as a decimal string above (exact)."""
        c = self.count if self.count <= 2 ** 53 else str(self.count)
        def num(x):
            return None if x != x else round(float(x), 6)
        return {"count": c, "method": self.method, "seconds": round(self.seconds, 6),
                "cpu_seconds": num(self.cpu_seconds), "predicted_cpu_seconds": num(self.predicted_seconds),
                "predicted_memory_gb": num(self.predicted_gb)}


def count_tables_exact(rows, cols, *, method: str = "auto", time_limit: float | None = DEFAULT_TIME_LIMIT,
                       max_memory_gb: float | None = DEFAULT_MAX_MEMORY_GB) -> CountResult:
    """Exact number of tables with the given margins, with the method that ran.

    Parameters
    ----------
    rows, cols : sequence of int
        Row and column sums (non-negative integers with the same total).
    method : {"auto", "kostka", "ie-mitm", "row-dp"}
        ``"auto"`` picks the compiled method with the smaller predicted time among those that
        fit both limits (:func:`predict_count_cost`: work models calibrated on CPU time).
        Where that is ``"ie-mitm"`` on small margins (work at most
        :data:`sdckit.tables.count_light.SMALL_IE_WORK`), the same count runs in numpy
        (:func:`sdckit.tables.count_light.ie_mitm_small`) without loading numba.
    time_limit : float or None
        CPU seconds (default 600). **Before** the count starts, the chosen method's predicted
        CPU time (:func:`predict_count_cost`) is checked against it, for every method: a count
        predicted to take longer is refused at once with :class:`CountTimeout`, whose one-line
        message gives the prediction and the estimate alternative. ``"row-dp"`` also checks
        the CPU time while it runs (the compiled methods cannot be interrupted). None: no
        limit.
    max_memory_gb : float or None
        Gigabytes (default 2). The predicted peak memory of the method is checked before the
        count starts; a count that would need more is refused with :class:`FibreTooLarge`.
        The ``"kostka"`` method runs its primes side by side as far as this allows, in several
        passes otherwise. None: no limit.

    Returns
    -------
    CountResult

    References
    ----------
    See :mod:`sdckit.tables.count_dp` (RSK identity ``N(r, c) = sum_nu K_{nu r} K_{nu c}``,
    Pieri's rule) and :mod:`sdckit.tables.count_ie` (inclusion-exclusion meet in the middle).

    Examples
    --------
    >>> count_tables_exact([108, 286, 71, 127], [220, 215, 93, 64]).count
    1225914276768514
    """
    from .._validation import check_choice, check_float
    from . import count_light

    check_choice("count_tables_exact", "method", method, _METHODS)
    if time_limit is not None:
        time_limit = check_float("count_tables_exact", "time_limit", time_limit, low=0, low_open=True)
    if max_memory_gb is not None:
        max_memory_gb = check_float("count_tables_exact", "max_memory_gb", max_memory_gb, low=0, low_open=True)
    r, c = check_margins(rows, cols)
    t0, c0 = time.perf_counter(), time.process_time()
    rn = [x for x in r if x]
    cn = [x for x in c if x]
    if len(rn) <= 1 or len(cn) <= 1:
        return CountResult(1, "trivial", time.perf_counter() - t0, time.process_time() - c0, 0.0, 0.0)
    if method == "ie-mitm" and min(len(rn), len(cn)) > 4:
        raise InputError(f"method 'ie-mitm' needs at most 4 non-zero rows or columns; the margins have "
                         f"{len(rn)} and {len(cn)}: use method='kostka' or 'auto'")
    t_lim = math.inf if time_limit is None else time_limit
    m_lim = math.inf if max_memory_gb is None else max_memory_gb
    if method in ("auto", "ie-mitm") and count_light.ie_mitm_work(rn, cn) <= count_light.SMALL_IE_WORK:
        # Small margins: the ie-mitm count in numpy (count_light.ie_mitm_small), where it is the
        # method the rule below picks (quicker than kostka, ties to kostka, and within both
        # limits): the same count, method and prediction, without loading numba (0.5-0.8 s CPU
        # in a fresh process, more than such a count).
        ie_sec = count_light.ie_mitm_seconds(rn, cn)
        ie_gb = 16.0 * (sum(rn) + 1) * count_light.n_primes_for(rn, cn) / 1e9
        if (ie_sec <= t_lim and ie_gb <= m_lim
                and (method == "ie-mitm" or ie_sec < count_light.kostka_seconds(rn, cn))):
            n = count_light.ie_mitm_small(rn, cn)
            if n is not None:
                return CountResult(n, "ie-mitm", time.perf_counter() - t0, time.process_time() - c0, ie_sec, ie_gb)
    from . import count_dp, count_ie

    cost = predict_count_cost(rn, cn, "auto" if method == "auto" else method)
    if method == "auto":
        cost.pop("row-dp", None)  # the reference method: only when asked for
    cost = {k: v for k, v in cost.items() if math.isfinite(v[0])}  # ie-mitm: inf beyond four columns
    time_ok = {k: v for k, v in cost.items() if v[0] <= t_lim}
    fits = {k: v for k, v in time_ok.items() if v[1] <= m_lim}
    what = f"counting the tables with margins rows={list(r)}, cols={list(c)} exactly"
    alternative = ("estimate the count instead (sdckit table count --estimate, or sdckit.tables.sis.sis_count)")
    if not time_ok:
        quick = min(cost, key=lambda k: cost[k][0])
        sec, gb = cost[quick]
        raise CountTimeout(f"{what} is predicted to take about {sec:,.0f} CPU seconds ({quick} method, "
                           f"{gb:.2g} GB), more than the time limit of {time_limit:g} s; nothing was counted: "
                           f"raise the limit (--time-limit, time_limit) or {alternative}")
    if not fits:
        small = min(time_ok, key=lambda k: time_ok[k][1])
        sec, gb = time_ok[small]
        raise FibreTooLarge(f"{what} needs about {gb:,.1f} GB ({small} method, predicted {sec:,.0f} CPU seconds), "
                            f"more than the memory limit of {max_memory_gb:g} GB; nothing was counted: raise the "
                            f"limit (--max-memory, max_memory_gb) or {alternative}")
    method = min(fits, key=lambda k: fits[k][0])
    pred_s, pred_gb = fits[method]
    if method == "kostka":
        n = count_dp.kostka_count(rn, cn, max_memory_gb=m_lim if math.isfinite(m_lim) else 1e6)
    elif method == "ie-mitm":
        n = count_ie.ie_mitm_count(rn, cn)
    else:
        n = row_dp_count(rn, cn, time_limit=time_limit)
    return CountResult(int(n), method, time.perf_counter() - t0, time.process_time() - c0, pred_s, pred_gb)


def count_tables(rows, cols, *, time_limit: float | None = DEFAULT_TIME_LIMIT) -> int:
    """Exact number of non-negative integer tables with the given row and column sums.

    The fastest exact method for the margins (:func:`count_tables_exact` with
    ``method="auto"``); a Python integer, no overflow. ``time_limit`` (CPU seconds, default
    600; None for none) is checked by the prediction before the count starts.

    Examples
    --------
    >>> count_tables([20, 55, 25, 35], [50, 35, 30, 20])
    18272363056
    """
    return count_tables_exact(rows, cols, time_limit=time_limit).count


def enumerate_tables(rows, cols, *, max_tables: int = 1_000_000) -> np.ndarray:
    """Every table with the given row and column sums, as an int64 array ``(n, R, C)``.

    Raises :class:`FibreTooLarge` (with the exact count) when there are more than
    ``max_tables`` tables.
    """
    r, c = check_margins(rows, cols)
    n = count_tables(r, c)
    if n > max_tables:
        raise FibreTooLarge(f"{n:,} tables have margins rows={list(r)}, cols={list(c)}, more than the "
                            f"{max_tables:,} allowed for enumeration; sample them with "
                            "sdckit.tables.sampler instead", count=n)
    R, C = len(r), len(c)
    upper = np.minimum.outer(np.array(r), np.array(c))
    return enumerate_bounded(np.zeros((R, C), np.int64), upper, (r, r), (c, c), max_tables=max_tables)


# ----------------------------------------------------------------------------- bounded tables

def _ranges(spec, n: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    if spec is None:
        return np.zeros(n, np.int64), np.full(n, np.iinfo(np.int64).max // 4, np.int64)
    lo, hi = (np.broadcast_to(np.asarray(s, dtype=np.int64), (n,)).copy() for s in spec)
    if (lo > hi).any():
        raise InputError(f"the {name} ranges have a lower end above the upper end at {np.flatnonzero(lo > hi).tolist()}")
    return lo, hi


def _bounded_setup(lower, upper, row_range, col_range):
    L = as_count_array(lower, "the lower cell bounds", ndim=2)
    U = as_count_array(upper, "the upper cell bounds", ndim=2)
    if L.shape != U.shape:
        raise InputError(f"the lower bounds have shape {L.shape} but the upper bounds {U.shape}")
    if (L > U).any():
        i, j = np.argwhere(L > U)[0]
        raise InputError(f"cell ({i}, {j}) has lower bound {L[i, j]} above its upper bound {U[i, j]}")
    R, C = L.shape
    rlo, rhi = _ranges(row_range, R, "row sum")
    clo, chi = _ranges(col_range, C, "column sum")
    # tighten cell upper bounds by the row and column maxima (keeps the DP boxes small)
    U = np.minimum(U, np.minimum(rhi[:, None] - (L.sum(1)[:, None] - L), chi[None, :] - (L.sum(0)[None, :] - L)))
    U = np.maximum(U, L - 1)  # an empty range stays empty
    return L, U, rlo, rhi, clo, chi


def count_bounded(lower, upper, row_range=None, col_range=None, total_range=None) -> int:
    """Number of integer tables ``T`` with ``lower <= T <= upper`` cellwise and sums in ranges.

    Parameters
    ----------
    lower, upper : (R, C) array of int
        Cell bounds (``lower >= 0``).
    row_range, col_range : (lo, hi), optional
        Row-sum and column-sum bounds (scalars or one per row/column, inclusive); ``None``
        leaves them free.
    total_range : (lo, hi), optional
        Bounds on the grand total.

    Returns
    -------
    int
        The exact count.

    Notes
    -----
    Rows are processed one cell at a time over a dense array indexed by the column partial
    sums (offset by the partial sums of the lower bounds); a row whose sum is fixed (and all
    previous rows fixed) is enforced on the hyperplane of the state's coordinate sum, a row
    with a range of sums through an extra axis for the running row sum. int64 is used when
    the product of the cell-range sizes fits, exact Python integers otherwise.
    """
    L, U, rlo, rhi, clo, chi = _bounded_setup(lower, upper, row_range, col_range)
    if (U < L).any():
        return 0
    R, C = L.shape
    W = U - L
    width = np.minimum(W.sum(0), np.maximum(chi - L.sum(0), 0))  # column deviation box
    bound = math.prod(int(w) + 1 for w in W.ravel())
    dtype = np.int64 if bound < 2**62 else object
    shape = tuple(int(w) + 1 for w in width)
    state = np.zeros(shape, dtype=dtype)
    state[(0,) * C] = 1
    grids = np.indices(shape, sparse=True)
    coord_sum = sum(grids)  # sum of column deviations of each state
    base = 0  # sum of lower bounds of the rows done
    fixed_so_far = True
    done = 0  # sum of row sums when all rows so far are fixed
    for i in range(R):
        row_fixed = rlo[i] == rhi[i]
        base_i = int(L[i].sum())
        if row_fixed and fixed_so_far:
            for j in range(C):
                state = _shift_add(state, j, int(W[i, j]))
            done += int(rlo[i])
            target = done - (base + base_i)
            state = np.where(coord_sum == target, state, 0)
        else:
            # extra last axis: row deviation from the row's lower-bound sum
            wr = int(W[i].sum())
            ext = np.zeros(shape + (wr + 1,), dtype=dtype)
            ext[..., 0] = state
            for j in range(C):
                ext = _shift_add(ext, j, int(W[i, j]), extra=C)
            lo = max(0, int(rlo[i]) - base_i)
            hi = min(wr, int(rhi[i]) - base_i)
            state = ext[..., lo:hi + 1].sum(axis=-1) if hi >= lo else np.zeros(shape, dtype=dtype)
            fixed_so_far = False
        base += base_i
        if not np.any(state):
            return 0
    # column ranges, then the total
    Lc = L.sum(0)
    mask = np.ones(shape, bool)
    for j in range(C):
        dev = np.arange(shape[j])
        ok = (Lc[j] + dev >= clo[j]) & (Lc[j] + dev <= chi[j])
        mask &= ok.reshape([-1 if k == j else 1 for k in range(C)])
    if total_range is not None:
        tot = int(Lc.sum()) + coord_sum
        mask &= (tot >= total_range[0]) & (tot <= total_range[1])
    return int(state[mask].sum())


def _shift_add(arr: np.ndarray, axis: int, width: int, extra: int | None = None) -> np.ndarray:
    """``out[..., s + v, ...] += arr[..., s, ...]`` for ``v in 0..width`` along ``axis``
    (and along ``extra`` as well when given); entries shifted past the box are dropped."""
    if width == 0:
        return arr
    out = arr.copy()
    n = arr.shape[axis]
    ne = arr.shape[extra] if extra is not None else None
    for v in range(1, width + 1):
        if v >= n or (ne is not None and v >= ne):
            break
        src = [slice(None)] * arr.ndim
        dst = [slice(None)] * arr.ndim
        src[axis], dst[axis] = slice(0, n - v), slice(v, n)
        if extra is not None:
            src[extra], dst[extra] = slice(0, ne - v), slice(v, ne)
        out[tuple(dst)] += arr[tuple(src)]
    return out


def count_rounded(rounded, base: int, *, total_known: bool = False) -> int:
    """Number of non-negative tables consistent with a published controlled-rounded table.

    Parameters
    ----------
    rounded : (R + 1, C + 1) array of int
        The published additive table with its margins: the last row holds the column sums,
        the last column the row sums, the corner the total.
    base : int
        Rounding base ``b``; every original cell and margin lies within ``b - 1`` of its
        rounded value.
    total_known : bool
        Fix the total at its published value (as when the total is published unrounded).

    References
    ----------
    Roehrig (2002), slide "Controlled Rounding (Base 3)": uniform feasibility interval
    ``R +- (b - 1)``.
    """
    from .._validation import check_int

    b = check_int("count_rounded", "base", base, min_value=2)
    T = as_count_array(rounded, "the rounded table", ndim=2)
    if T.shape[0] < 2 or T.shape[1] < 2:
        raise InputError(f"the rounded table needs its margins (last row and column); got shape {T.shape}")
    inner = T[:-1, :-1]
    if (inner.sum(1) != T[:-1, -1]).any() or (inner.sum(0) != T[-1, :-1]).any() or inner.sum() != T[-1, -1]:
        raise InputError("the rounded table is not additive: each margin must equal the sum of its cells "
                         "(give the inner cells plus margins, margins in the last row and column)")
    if (T % b != 0).any():
        raise InputError(f"the rounded table holds values that are not multiples of the base {b}")
    w = b - 1
    lower = np.maximum(inner - w, 0)
    upper = inner + w
    total = int(T[-1, -1])
    tr = (total, total) if total_known else (max(total - w, 0), total + w)
    return count_bounded(lower, upper, (np.maximum(T[:-1, -1] - w, 0), T[:-1, -1] + w),
                         (np.maximum(T[-1, :-1] - w, 0), T[-1, :-1] + w), tr)


def count_suppressed(published, suppressed, rows, cols) -> int:
    """Number of non-negative tables agreeing with a published table with suppressed cells.

    Parameters
    ----------
    published : (R, C) array of int
        Cell values; entries under ``suppressed`` are ignored.
    suppressed : (R, C) array of bool
        The suppression pattern (primary and secondary).
    rows, cols : sequence of int
        The published (exact) margins.
    """
    r, c = check_margins(rows, cols)
    mask = np.asarray(suppressed, dtype=bool)
    P = np.asarray(published)
    if mask.shape != (len(r), len(c)) or P.shape != mask.shape:
        raise InputError(f"the table {P.shape} and pattern {mask.shape} must have shape ({len(r)}, {len(c)})")
    vals = as_count_array(np.where(mask, 0, P), "the published cells", ndim=2)
    upper = np.where(mask, np.minimum.outer(np.array(r), np.array(c)), vals)
    return count_bounded(vals, upper, (r, r), (c, c))


def enumerate_bounded(lower, upper, row_range=None, col_range=None, total_range=None, *,
                      max_tables: int = 1_000_000) -> np.ndarray:
    """Every table counted by :func:`count_bounded`, as an int64 array ``(n, R, C)``.

    Row by row: the feasible row vectors are built column by column, then crossed with the
    partial tables, pruning partial column sums that can no longer reach their range.
    Raises :class:`FibreTooLarge` when a partial set exceeds ``max_tables``.
    """
    L, U, rlo, rhi, clo, chi = _bounded_setup(lower, upper, row_range, col_range)
    R, C = L.shape
    if (U < L).any():
        return np.zeros((0, R, C), np.int64)
    rest_lo = np.cumsum(L[::-1], axis=0)[::-1]  # sum of lower bounds of rows i..R-1
    rest_hi = np.cumsum(U[::-1], axis=0)[::-1]
    tables = np.zeros((1, 0, C), np.int64)
    colsum = np.zeros((1, C), np.int64)
    for i in range(R):
        vecs = _row_vectors(L[i], U[i], int(rlo[i]), int(rhi[i]))
        after_lo = rest_lo[i + 1] if i + 1 < R else np.zeros(C, np.int64)
        after_hi = rest_hi[i + 1] if i + 1 < R else np.zeros(C, np.int64)
        new_sum = colsum[:, None, :] + vecs[None, :, :]
        ok = ((new_sum + after_lo <= chi) & (new_sum + after_hi >= clo)).all(-1)
        a, b = np.nonzero(ok)
        if a.size > max_tables:
            raise FibreTooLarge(f"more than {max_tables:,} partial tables after row {i + 1}; count them with "
                                "count_bounded and sample instead of enumerating")
        tables = np.concatenate([tables[a], vecs[b][:, None, :]], axis=1)
        colsum = new_sum[a, b]
    if total_range is not None:
        tot = colsum.sum(1)
        keep = (tot >= total_range[0]) & (tot <= total_range[1])
        tables = tables[keep]
    return tables


def _row_vectors(lo: np.ndarray, hi: np.ndarray, slo: int, shi: int) -> np.ndarray:
    """All integer vectors ``lo <= x <= hi`` with ``slo <= sum(x) <= shi``, shape (m, C)."""
    C = lo.size
    rest_lo = np.concatenate([np.cumsum(lo[::-1])[::-1], [0]])
    rest_hi = np.concatenate([np.cumsum(hi[::-1])[::-1], [0]])
    part = np.zeros((1, 0), np.int64)
    s = np.zeros(1, np.int64)
    for j in range(C):
        vals = np.arange(lo[j], hi[j] + 1, dtype=np.int64)
        ns = s[:, None] + vals[None, :]
        ok = (ns + rest_lo[j + 1] <= shi) & (ns + rest_hi[j + 1] >= slo)
        a, b = np.nonzero(ok)
        part = np.concatenate([part[a], vals[b][:, None]], axis=1)
        s = ns[a, b]
    return part


# ----------------------------------------------------------------------------- 3-way, 2-way margins

def check_margins_3way(n_ij, n_ik, n_jk) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate the three 2-way margins of an I x J x K table (consistent 1-way sums)."""
    a = as_count_array(n_ij, "the margin n_ij+", ndim=2)
    b = as_count_array(n_ik, "the margin n_i+k", ndim=2)
    c = as_count_array(n_jk, "the margin n_+jk", ndim=2)
    I, J = a.shape
    if b.shape[0] != I or c.shape[0] != J or b.shape[1] != c.shape[1]:
        raise InputError(f"margin shapes {a.shape}, {b.shape}, {c.shape} do not fit one I x J x K table "
                         "(n_ij+ is I x J, n_i+k is I x K, n_+jk is J x K)")
    for name, x, y in (("n_i++", a.sum(1), b.sum(1)), ("n_+j+", a.sum(0), c.sum(1)), ("n_++k", b.sum(0), c.sum(0))):
        if (x != y).any():
            raise InputError(f"the 2-way margins disagree on {name}: {x.tolist()} vs {y.tolist()}; "
                             "they must come from one table")
    return a, b, c


def count_tables_3way(n_ij, n_ik, n_jk, *, time_limit: float | None = 60.0) -> int:
    """Exact number of I x J x K tables with the given 2-way margins.

    Each slice ``t[i]`` is a J x K table with row sums ``n_ij+[i]`` and column sums
    ``n_i+k[i]``; the slices must add up to ``n_+jk``. Dynamic programming over ``i`` with
    the remaining ``n_+jk`` as state (memoised); the last slice is the remainder. Exponential
    in the size of the slices: :class:`CountTimeout` after ``time_limit`` CPU seconds
    (:func:`time.process_time`).
    """
    a, b, c = check_margins_3way(n_ij, n_ik, n_jk)
    I = a.shape[0]
    deadline = None if time_limit is None else time.process_time() + time_limit
    memo: dict[tuple[int, bytes], int] = {}
    slice_cache: dict[int, np.ndarray] = {}

    def slices(i: int) -> np.ndarray:
        if i not in slice_cache:
            upper = np.minimum.outer(a[i], b[i])
            slice_cache[i] = enumerate_bounded(np.zeros_like(upper), upper, (a[i], a[i]), (b[i], b[i]),
                                               max_tables=50_000_000)
        return slice_cache[i]

    def f(i: int, rem: np.ndarray) -> int:
        if i == I - 1:
            return 1
        key = (i, rem.tobytes())
        if key in memo:
            return memo[key]
        if deadline is not None and time.process_time() > deadline:
            raise CountTimeout(f"counting {a.shape[0]}x{a.shape[1]}x{b.shape[1]} tables with the given 2-way "
                               f"margins did not finish within {time_limit} CPU s; raise the time limit or sample")
        S = slices(i)
        fits = (S <= rem).all(axis=(1, 2))
        if i == I - 2:
            total = int(fits.sum())
        else:
            total = sum(f(i + 1, rem - s) for s in S[fits])
        memo[key] = total
        return total

    return f(0, c.copy())
