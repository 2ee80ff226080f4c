"""Local suppression to k-anonymity: set the fewest key values to missing so that every
record's key combination, with missing values as wildcards, occurs at least k times.

Two solvers:

- :class:`LocalSuppression` (the release step): a greedy heuristic in the spirit of sdcMicro's
  ``localSuppression``. Violating key combinations are treated rarest first; for each, the
  value suppressed is that of the least important variable whose suppression lifts the
  combination's f_k to k, else the one that lifts f_k most. Every f_k is updated after each
  suppression with the wildcard rule (:func:`sdckit.risk.missing.wildcard_frequencies`,
  alpha = 1), so no batch of records is ever treated on stale counts.
- :func:`exact_local_suppression`: the exact minimum (weighted) number of suppressions by a
  MILP on HiGHS, for small data; it measures the heuristic's gap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numba import njit

from .._random import as_generator, seed_sequence
from .._validation import param_error
from ..errors import InputError, SolverError
from ..microdata import Microdata
from ..params import check_params, flat_form_problem, param, variant_value
from ..registry import register_step
from ..result import Guarantee, StepResult
from ..risk.frequencies import DENSE_LIMIT, combination_codes
from ..risk.missing import wildcard_frequencies


def _fk(codes: list[np.ndarray], ncat: list[int], weights: np.ndarray | None) -> np.ndarray:
    f = wildcard_frequencies(codes, ncat, weights, alpha=1.0)
    return f.Fk if weights is not None else f.fk


# -- incremental wildcard counts on the distinct combinations ---------------------------------
#
# The data are held as G rows: one per distinct combination (missing = -1), with the count
# (or weight sum) w_g of its records. Two rows match when they agree on every variable
# observed in both; the wildcard f_k of a row is sum_e w_e [e matches g]. Setting a value of
# row g to missing only adds matches (f_k never falls for anyone), giving it back only removes
# matches; both change f_k by +-w_g on the rows whose match with g changes, O(G m) per change
# instead of a recount of the whole data.

@njit(cache=True)
def _matches(E: np.ndarray, e: int, q: np.ndarray) -> bool:
    for j in range(q.shape[0]):
        a = E[e, j]
        b = q[j]
        if a != b and a >= 0 and b >= 0:
            return False
    return True


@njit(cache=True)
def _match_sum(E: np.ndarray, w: np.ndarray, q: np.ndarray) -> float:
    s = 0.0
    for e in range(E.shape[0]):
        if w[e] > 0 and _matches(E, e, q):
            s += w[e]
    return s


@njit(cache=True)
def _move(E: np.ndarray, w: np.ndarray, f: np.ndarray, g: int, new: np.ndarray) -> None:
    """Replace row g's combination by ``new``, updating every row's f_k by +-w_g."""
    old = E[g].copy()
    wg = w[g]
    for e in range(E.shape[0]):
        if e == g or w[e] <= 0:
            continue
        f[e] += wg * (np.float64(_matches(E, e, new)) - np.float64(_matches(E, e, old)))
    E[g, :] = new
    f[g] = _match_sum(E, w, new)


@njit(cache=True)
def _greedy_rows(E: np.ndarray, w: np.ndarray, f: np.ndarray, order: np.ndarray,
                 var_order: np.ndarray, k: float) -> int:
    """Sequential greedy: rows in ``order`` (rarest first); for each row below k, suppress the
    least important variable (first in ``var_order``) whose suppression lifts the row to k,
    else the one that lifts it most, until it reaches k. Returns the number of suppressions
    made at row level."""
    m = E.shape[1]
    moves = 0
    q = np.empty(m, dtype=E.dtype)
    for g in order:
        while f[g] < k:
            best_v = -1
            best_f = -1.0
            reach_v = -1
            for t in range(m):
                v = var_order[t]
                if E[g, v] < 0:
                    continue
                q[:] = E[g]
                q[v] = -1
                fq = _match_sum(E, w, q)
                if fq >= k:
                    reach_v = v
                    break
                if fq > best_f:
                    best_f = fq
                    best_v = v
            v = reach_v if reach_v >= 0 else best_v
            if v < 0:   # every value already missing: f_k is the total, nothing left to do
                break
            q[:] = E[g]
            q[v] = -1
            _move(E, w, f, g, q)
            moves += 1
    return moves


@njit(cache=True)
def _restore_rows(E: np.ndarray, O: np.ndarray, w: np.ndarray, f: np.ndarray,
                  cell_row: np.ndarray, cell_var: np.ndarray, k: float, max_checks: int,
                  block: int) -> tuple:
    """Group testing over suppressed cells (row, variable): restore a block, keep it when every
    row still has f_k >= k, else undo and split it in two. Returns (restored mask, checks)."""
    n_cells = cell_row.shape[0]
    kept = np.zeros(n_cells, dtype=np.bool_)
    m = E.shape[1]
    q = np.empty(m, dtype=E.dtype)
    # explicit stack of [lo, hi) ranges over the cell list, first block on top
    stack_lo = np.empty(2 * n_cells + 2, dtype=np.int64)
    stack_hi = np.empty(2 * n_cells + 2, dtype=np.int64)
    top = 0
    starts = np.arange(0, n_cells, block)
    for s in starts[::-1]:
        stack_lo[top] = s
        stack_hi[top] = min(s + block, n_cells)
        top += 1
    checks = 0
    while top > 0 and checks < max_checks:
        top -= 1
        lo = stack_lo[top]
        hi = stack_hi[top]
        for c in range(lo, hi):
            g = cell_row[c]
            q[:] = E[g]
            q[cell_var[c]] = O[g, cell_var[c]]
            _move(E, w, f, g, q)
        checks += 1
        ok = True
        for e in range(E.shape[0]):
            if w[e] > 0 and f[e] < k:
                ok = False
                break
        if ok:
            for c in range(lo, hi):
                kept[c] = True
            continue
        for c in range(hi - 1, lo - 1, -1):
            g = cell_row[c]
            q[:] = E[g]
            q[cell_var[c]] = -1
            _move(E, w, f, g, q)
        if hi - lo > 1:
            half = lo + (hi - lo) // 2
            stack_lo[top] = half
            stack_hi[top] = hi
            top += 1
            stack_lo[top] = lo
            stack_hi[top] = half
            top += 1
    return kept, checks


def _rows(columns: Sequence[np.ndarray], n_categories: Sequence[int], weights: np.ndarray | None):
    """Distinct rows of the columns: (row id per record, first record of each row, w).

    The row ids are those of :func:`~sdckit.risk.frequencies.frequencies_from_codes` (the
    order of the rows decides the tie order of both passes): ascending combination code where
    its dense table would be used, first appearance otherwise. They are found by sorting the
    n codes instead of counting over the whole code space, which for the restore pass (the
    keys twice over) is the product of 2m radices: 10,000 records on five census keys took
    0.5 s and 390 MB that way.
    """
    code, product = combination_codes(list(columns), list(n_categories))
    if product <= max(DENSE_LIMIT, 4 * code.shape[0]):
        inv = np.unique(code, return_inverse=True)[1].reshape(-1).astype(np.int64, copy=False)
    else:
        inv = pd.factorize(code, sort=False)[0].astype(np.int64, copy=False)
    G = int(inv.max()) + 1
    first = np.full(G, inv.size, dtype=np.int64)
    np.minimum.at(first, inv, np.arange(inv.size, dtype=np.int64))
    w = np.bincount(inv, weights=weights, minlength=G).astype(np.float64)
    return inv, first, w


def suppress_to_k(codes: Sequence[np.ndarray], n_categories: Sequence[int], k: float,
                  importance: Sequence[int], *, weights: np.ndarray | None = None,
                  batch_share: float = 0.1, rng: np.random.Generator | None = None,
                  max_rounds: int | None = None) -> tuple[list[np.ndarray], int]:
    """Greedy local suppression on integer codes (``-1`` = missing). Returns new codes and the
    number of suppression moves (one move sets one variable to missing in every record of one
    distinct combination).

    The distinct combinations are visited rarest first (random among equal f_k); one whose
    wildcard f_k (F_k with ``weights``) is below ``k`` gets the value of its least important
    variable suppressed whose suppression lifts it to ``k``, else the one that lifts it most,
    until it reaches ``k``. f_k of every combination is updated after each move (a suppression
    only adds matches, so a combination once at ``k`` stays there), so no recount of the data
    is needed.

    ``importance[v]`` ranks variable v: 1 = most important (suppressed last). ``batch_share``
    is kept for the signature of earlier versions, which recounted the data between batches;
    the counts are now exact after every move, which is the limit ``batch_share -> 0``.
    ``max_rounds``, when given, bounds the number of moves (the search always ends after at
    most G m moves, G the distinct combinations and m the keys, since every move adds one
    missing value to one combination). ``rng`` orders ties; ``None`` draws OS entropy.
    """
    rng = as_generator(rng)  # None: OS entropy (the step records its seed; a kernel has no record)
    codes = [np.asarray(c, dtype=np.int32) for c in codes]
    m = len(codes)
    f_rec = _fk(codes, list(n_categories), weights)
    inv, first, w = _rows(codes, n_categories, weights)
    E = np.stack([c[first] for c in codes], axis=1).astype(np.int64)
    f = f_rec[first].astype(np.float64)
    viol = np.flatnonzero(f < k)
    order = viol[np.lexsort((rng.random(viol.size), f[viol]))].astype(np.int64)
    var_order = np.argsort(-np.asarray(importance), kind="stable").astype(np.int64)  # least important first
    moves = _greedy_rows(E, w, f, order, var_order, float(k))
    if max_rounds is not None and moves > max_rounds:
        raise SolverError(f"local suppression needed {moves} moves to reach k = {k}, more than "
                          f"max_rounds = {max_rounds}.")
    return [E[inv, v].astype(np.int32) for v in range(m)], moves


def restore_suppressions(original: Sequence[np.ndarray], suppressed: Sequence[np.ndarray],
                         n_categories: Sequence[int], k: float, *, weights: np.ndarray | None = None,
                         rng: np.random.Generator | None = None, max_checks: int = 2_000) -> tuple[list[np.ndarray], int]:
    """Give back suppressed values whose return keeps every record at f_k >= k.

    Works on the distinct (original, suppressed) combinations: a cell is one variable of one
    such combination (all its records). Cells are tried in random order by group testing: a
    block of 64 cells is restored at once and kept if the data stay k-anonymous, otherwise
    undone and split in two, down to single cells. f_k is updated incrementally (+-w per
    changed match). Stops after ``max_checks`` tests. Returns the codes and the number of
    values (records x variables) given back. ``rng`` orders the cells; ``None`` draws OS entropy.
    """
    rng = as_generator(rng)  # None: OS entropy (the step records its seed; a kernel has no record)
    orig = [np.asarray(c, dtype=np.int32) for c in original]
    supp = [np.asarray(c, dtype=np.int32) for c in suppressed]
    m = len(supp)
    inv, first, w = _rows(orig + supp, list(n_categories) * 2, weights)
    O = np.stack([c[first] for c in orig], axis=1).astype(np.int64)
    E = np.stack([c[first] for c in supp], axis=1).astype(np.int64)
    rows, vars_ = np.nonzero((E < 0) & (O >= 0))
    if rows.size == 0 or max_checks <= 0:
        return [c.copy() for c in supp], 0
    perm = rng.permutation(rows.size)
    cell_row, cell_var = rows[perm].astype(np.int64), vars_[perm].astype(np.int64)
    f = _fk(supp, list(n_categories), weights)[first].astype(np.float64)
    kept, _ = _restore_rows(E, O, w, f, cell_row, cell_var, float(k), int(max_checks), 64)
    counts = np.bincount(inv, minlength=first.size)
    restored = int(counts[cell_row[kept]].sum())
    return [E[inv, v].astype(np.int32) for v in range(m)], restored


def exact_local_suppression(codes: Sequence[np.ndarray], k: int, *, costs: Sequence[float] | None = None,
                            time_limit: float = 60.0) -> tuple[list[np.ndarray], float, str]:
    """The minimum-cost suppression pattern making the data k-anonymous (wildcard rule), by MILP.

    Variables: s_iv = 1 if value v of record i is suppressed; m_ij = 1 if records i < j match.
    m_ij <= s_iv + s_jv for every variable v where they differ (matching needs agreement or a
    wildcard); for every i: 1 + sum_j m_ij >= k. Minimise sum_iv cost_v * s_iv. Only for small
    data: the model has n(n-1)/2 match variables.

    Returns the new codes, the objective and HiGHS' model status.
    """
    import highspy

    from .._highs import new_highs

    X = np.stack([np.asarray(c) for c in codes], axis=1)
    n, m = X.shape
    if n > 400:
        raise InputError(f"exact local suppression is for small data (n <= 400); got {n} records.")
    if (X < 0).any():
        raise InputError("exact local suppression expects complete keys (no missing values).")
    costs = np.ones(m) if costs is None else np.asarray(costs, dtype=float)
    h = new_highs(time_limit=time_limit)
    inf = highspy.kHighsInf
    # columns: s (n*m), then m_ij for i<j
    ns = n * m
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    ncol = ns + len(pairs)
    lower = np.zeros(ncol)
    upper = np.ones(ncol)
    cost = np.concatenate([np.tile(costs, n), np.zeros(len(pairs))])
    h.addVars(ncol, lower, upper)
    h.changeColsCost(ncol, np.arange(ncol, dtype=np.int32), cost)
    h.changeColsIntegrality(ncol, np.arange(ncol, dtype=np.int32),
                            np.full(ncol, highspy.HighsVarType.kInteger))
    # m_ij - s_iv - s_jv <= 0 where x_iv != x_jv
    for p, (i, j) in enumerate(pairs):
        for v in np.flatnonzero(X[i] != X[j]):
            h.addRow(-inf, 0.0, 3, np.array([ns + p, i * m + v, j * m + v], dtype=np.int32),
                     np.array([1.0, -1.0, -1.0]))
    # 1 + sum_j m_ij >= k
    incident = [[] for _ in range(n)]
    for p, (i, j) in enumerate(pairs):
        incident[i].append(ns + p)
        incident[j].append(ns + p)
    for i in range(n):
        idx = np.array(incident[i], dtype=np.int32)
        h.addRow(k - 1, inf, idx.size, idx, np.ones(idx.size))
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    sol = np.asarray(h.getSolution().col_value)
    if sol.size != ncol:
        raise SolverError(f"exact local suppression: HiGHS found no solution ({status}).")
    s = np.round(sol[:ns]).reshape(n, m).astype(bool)
    out = [np.where(s[:, v], -1, X[:, v]).astype(np.int32) for v in range(m)]
    return out, float(h.getInfo().objective_function_value), status


#: largest input of ``method = "exact"`` (the limit of :func:`exact_local_suppression`)
EXACT_MAX_RECORDS = 400


@dataclass(frozen=True)
class GreedySuppression:
    """The greedy heuristic (as sdcMicro's localSuppression; Templ et al. 2015): rarest violating
    combinations first, suppressing the least important variable that lifts f_k to k, then an
    optional restore pass.

    Parameters
    ----------
    batch_share : float in (0, 1]
        Kept for specs written for earlier versions, which recounted the frequencies only
        between batches of this share of the violating records. It no longer changes the
        result: the algorithm updates every f_k after each suppression (the limit
        ``batch_share -> 0``), whatever its value.
    restore : bool
        After the greedy pass, give back every suppressed value whose return keeps the data
        k-anonymous (group testing; default True).
    max_restore_checks : int
        Budget of frequency computations for the restore pass.
    """

    variant_name: ClassVar[str] = "greedy"

    batch_share: float = param(0.1, kind="float", low=0.0, high=1.0, low_open=True, advanced=True,
                               unit="share of violating records",
                               help="no longer changes the result (every f_k is updated after "
                                    "each suppression); kept for older specs")
    restore: bool = param(True, kind="bool", advanced=True,
                          help="give back every suppressed value whose return keeps k-anonymity")
    max_restore_checks: int = param(200, kind="int", low=0, advanced=True,
                                    help="budget of frequency computations for the restore pass")

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class ExactSuppression:
    """The exact minimum number of suppressed values by a MILP on HiGHS, for small data only.

    The MILP is :func:`exact_local_suppression`'s. At most ``EXACT_MAX_RECORDS`` records,
    complete keys, unweighted f_k; the step's ``importance`` then only breaks ties between
    patterns with the same number of suppressions.
    When HiGHS stops at ``time_limit`` without proving optimality, the default greedy pattern
    (:class:`GreedySuppression`) is computed too and the one with fewer suppressions is released.

    Parameters
    ----------
    time_limit : float > 0
        Seconds HiGHS may spend on the MILP.
    """

    variant_name: ClassVar[str] = "exact"

    time_limit: float = param(60.0, kind="float", low=0.0, low_open=True, unit="seconds",
                              advanced=True, help="time limit of the exact MILP")

    def __post_init__(self) -> None:
        check_params(self)


#: the algorithms ``LocalSuppression.algorithm`` takes (one declared type each)
SUPPRESSION_ALGORITHMS = (GreedySuppression, ExactSuppression)


@register_step("local_suppression", engines=("memory", "dask"))
@dataclass(frozen=True)
class LocalSuppression:
    """Suppress key values (set them to missing) until the data are k-anonymous.

    Parameters
    ----------
    k : int >= 2
        Every record's f_k (missing values as wildcards) must reach k.
    importance : list of int, optional
        One rank per key variable (1 = most important, suppressed last), as sdcMicro's
        ``importance``. Default: variables with more categories are suppressed first.
    use_weights : bool
        Require F_k >= k (weighted frequencies) instead of f_k >= k.
    algorithm : GreedySuppression or ExactSuppression
        The solver, with its own settings: ``GreedySuppression(batch_share=0.1, restore=True,
        max_restore_checks=200)`` (default), or ``ExactSuppression(time_limit=60.0)``: the
        minimum number of suppressed values by a MILP, for small data only; when it stops at
        the time limit without proving optimality the summary says ``optimal = false`` and
        which ``pattern`` was released. In a spec: ``algorithm = { type = "exact", time_limit =
        20 }``.

    Notes
    -----
    Guarantee (checked on the output by an independent wildcard count): every record's f_k
    (or F_k) >= k; only key values are changed, and only to missing.

    References
    ----------
    Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for
    micro-data using the R package sdcMicro. *Journal of Statistical Software* 67(4)
    (``localSuppression``).
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*, Wiley, section 3.4.5.
    """

    k: int = param(3, kind="int", low=2, unit="records", symbol="k", grid=(2, 3, 5, 10),
                   help="every record's f_k (missing values as wildcards) must reach k")
    importance: Sequence[int] | None = param(None, kind="int_list", low=1, nullable=True,
                                             help="one rank per key variable (1 = most important, "
                                                  "suppressed last)")
    use_weights: bool = param(False, kind="bool", help="require F_k >= k (weighted frequencies) "
                                                       "instead of f_k >= k")
    algorithm: Any = param(GreedySuppression(), kind="variant", variants=SUPPRESSION_ALGORITHMS,
                           label="algorithm",
                           help="greedy heuristic, or the exact minimum by MILP (small data only), with "
                                "that algorithm's own settings")

    #: keys of the flat form of earlier specs (the algorithm's settings beside the step's own)
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("batch_share", "restore", "max_restore_checks", "time_limit")

    def __post_init__(self) -> None:
        check_params(self)
        if isinstance(self.algorithm, ExactSuppression) and self.use_weights:
            raise param_error("LocalSuppression", "use_weights",
                              "false with algorithm 'exact' (the MILP counts records, f_k)", self.use_weights)

    @classmethod
    def spec_form_problem(cls, params: dict) -> str | None:
        """Why a spec table of this step is in the flat form of earlier specs (an algorithm name
        in ``algorithm`` and its settings beside it), with the table to write instead; None
        when it is not. The spec reader refuses such a table with this one line."""
        return flat_form_problem(params, "algorithm", cls.FLAT_KEYS, "greedy")

    def _exact(self, before: list[np.ndarray], importance: list[int]) -> tuple[list[np.ndarray], dict]:
        """Run the exact MILP: minimum count, ties broken by importance (cost 1 + delta * rank)."""
        n, m = before[0].size, len(before)
        if n > EXACT_MAX_RECORDS:
            raise InputError(f"local_suppression: algorithm 'exact' is for at most {EXACT_MAX_RECORDS} "
                             f"records (the MILP has n(n-1)/2 pair variables); the data have {n}. "
                             "Use the greedy algorithm (the default: algorithm = { type = \"greedy\" }).")
        if any((c < 0).any() for c in before):
            raise InputError("local_suppression: algorithm 'exact' needs complete key values; the input "
                             "already has missing keys. Use the greedy algorithm (the default: algorithm = { type = \"greedy\" }).")
        # cost_v = 1 + delta (m + 1 - r_v): the total tie-break term n m * delta * m < 1, so the
        # minimum number of suppressions comes first; among equal counts the less important
        # variables (larger rank r_v) are suppressed
        delta = 1.0 / (n * m * m + 1)
        costs = [1.0 + delta * (m + 1 - r) for r in importance]
        try:
            after, objective, status = exact_local_suppression(before, self.k, costs=costs,
                                                               time_limit=self.algorithm.time_limit)
        except SolverError as exc:  # no pattern within the time limit: the greedy one is used
            return None, {"solver_status": str(exc), "optimal": False}
        ncat = [int(max(c.max(initial=-1), -1)) + 1 for c in before]
        if not (_fk(list(after), ncat, None) >= self.k).all():
            # stopped at the limit without a feasible pattern (HiGHS returns what it has)
            return None, {"solver_status": status, "optimal": False}
        return after, {"solver_status": status, "objective": objective,
                       "optimal": status == "Optimal", "pattern": "milp"}

    def apply(self, microdata: Microdata, *, rng=None) -> StepResult:
        keys = list(microdata.key_vars)
        if not keys:
            raise InputError("local_suppression: the data have no key variables; set [roles] key_vars.")
        if self.k > microdata.n_records:
            raise InputError(f"local_suppression: k = {self.k} is larger than the number of records "
                             f"({microdata.n_records}); no suppression can reach it.")
        ncat = [microdata.n_categories(v) for v in keys]
        if self.importance is not None and len(self.importance) != len(keys):
            raise InputError(f"local_suppression: importance has {len(self.importance)} entries for "
                             f"{len(keys)} key variables ({', '.join(keys)}).")
        importance = list(self.importance) if self.importance is not None else \
            list(np.argsort(np.argsort(ncat, kind="stable"), kind="stable") + 1)
        weights = microdata.weights() if self.use_weights else None
        if weights is not None and weights.sum() < self.k:
            raise InputError(f"local_suppression: the weights sum to {weights.sum():g} < k = {self.k}.")
        ss, record = seed_sequence(rng)
        before = [microdata.codes(v) for v in keys]
        gen = np.random.default_rng(ss)
        exact_info: dict = {}
        after, rounds, n_restored = None, 0, 0
        exact = isinstance(self.algorithm, ExactSuppression)
        if exact:
            after, exact_info = self._exact(before, importance)
        if not exact_info.get("optimal", False):
            # the greedy pass; with algorithm "exact" only when the MILP proved nothing (time limit):
            # then the pattern with fewer suppressions (the default greedy settings) is released and
            # the summary says which
            g = self.algorithm if isinstance(self.algorithm, GreedySuppression) else GreedySuppression()
            greedy, rounds = suppress_to_k(before, ncat, self.k, importance, weights=weights,
                                           batch_share=g.batch_share, rng=gen)
            if g.restore:
                greedy, n_restored = restore_suppressions(before, greedy, ncat, self.k, weights=weights,
                                                          rng=gen, max_checks=g.max_restore_checks)
            n_sup = [int(sum(int((c < 0).sum()) for c in x)) if x is not None else None for x in (after, greedy)]
            if after is None or n_sup[1] < n_sup[0]:
                after = greedy
                if exact_info:
                    exact_info["pattern"] = "greedy"
            else:
                rounds, n_restored = 0, 0
        out = microdata.with_codes(dict(zip(keys, after)))
        per_var = {v: int(((a < 0) & (b >= 0)).sum()) for v, a, b in zip(keys, after, before)}
        check = check_k_anonymity_wildcard(after, ncat, self.k, weights)
        changed_ok = all(bool(((a == b) | (a < 0)).all()) for a, b in zip(after, before))
        summary = {"k": self.k, "suppressions": sum(per_var.values()), "suppressions_per_variable": per_var,
                   "records_with_suppression": int(np.any([(a < 0) & (b >= 0) for a, b in zip(after, before)], axis=0).sum()),
                   "importance": dict(zip(keys, map(int, importance))), "rounds": rounds,
                   "restored": n_restored,
                   "k_violations_after": check.value, "algorithm": self.algorithm.variant_name, **exact_info}
        guarantees = (check, Guarantee("only_suppressed", "key values are only ever set to missing",
                                       changed_ok, changed_ok))
        params = {"k": self.k, "importance": dict(zip(keys, map(int, importance))),
                  "use_weights": self.use_weights, "algorithm": variant_value(self.algorithm)}
        return StepResult("local_suppression", out, params, summary, guarantees, record)

    # ---- the Dask engine's protocol (sdckit.registry.DaskPlan)
    def dask_plan(self, roles):
        """Area by area: within the groups of the first strata column, else of the first key
        (put the geography first); it may read every role column and writes the other keys."""
        from ..registry import DaskPlan, role_columns

        keys = tuple(roles.get("key_vars", ()))
        strata = tuple(roles.get("strata", ()))
        area = strata[0] if strata else keys[0]
        writes = tuple(k for k in keys if k != area)
        return DaskPlan("groups", tuple(dict.fromkeys((*writes, area, *role_columns(roles)))), writes, area)


def check_k_anonymity_wildcard(codes: Sequence[np.ndarray], n_categories: Sequence[int], k: float,
                               weights: np.ndarray | None = None) -> Guarantee:
    """Independent check: records whose wildcard f_k (or F_k) is below k."""
    f = _fk(list(codes), list(n_categories), weights)
    bad = int((f < k).sum())
    return Guarantee("k_anonymity", f"every record's {'F_k' if weights is not None else 'f_k'} >= {k} "
                     "(missing values as wildcards)", bad, bad == 0)
