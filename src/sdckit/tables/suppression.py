"""Secondary cell suppression: the optimal Benders model on HiGHS and a fast heuristic.

Both methods take a :class:`~sdckit.tables.table.Table`, the primary cells with their
protection levels (:func:`~sdckit.tables.rules.primary_cells`) and a cost per cell, and
return a pattern that is audited (:func:`~sdckit.tables.audit.audit`) before it is returned.

Optimal model (Fischetti & Salazar-González 1999): binary ``x_i`` (1 = suppress) with cost
``w_i``; for every primary cell p and direction the attacker LP
``max / min y_p  s.t.  M y = 0,  a_i - LB_i x_i <= y_i <= a_i + UB_i x_i`` must move ``y_p``
by at least the protection level. The LP dual at the master's solution gives a capacity
(Benders) cut ``sum_i (d_i^+ LB_i + d_i^- UB_i) x_i >= UPL_p`` (their eq. (11)); the master
MILP starts with the single-relation capacity cuts and adds the bridgeless cuts
``x_i <= sum_{j in r, j != i} x_j`` lazily. Master and separation iterate until no cut is
violated (optimal) or the time limit (best audited pattern, marked not proven optimal).

The separation solves the attacker LPs of a component on one HiGHS model (primal simplex:
only the objective changes), and every optimal attacker table is kept as a proof for the
other primaries of the component: a level that one of them already reaches needs no LP.

References
----------
Fischetti, M. and Salazar-González, J.J. (1999). Models and algorithms for the 2-dimensional
cell suppression problem in statistical disclosure control. *Math. Programming* 84, 283-312.
Fischetti, M. and Salazar-González, J.J. (2001). Solving the cell suppression problem on
tabular data with linear constraints. *Management Science* 47(7), 1008-1027.
Kelly, J.P., Golden, B.L. and Assad, A.A. (1992). Cell suppression: disclosure protection for
sensitive tabular data. *Networks* 22, 397-417 (the LP-per-primary heuristic).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import highspy
import numpy as np
import scipy.sparse as sp

from .._validation import check_bool, check_choice, check_float, check_int
from ..errors import InputError, SolverError
from ..result import Guarantee, ResultDisplay, jsonable
from ._highs import INF, new_highs, pass_lp, status
from .audit import AuditResult, a_priori_bounds, attacker_model, audit, suppressed_components
from .rules import Primary
from .table import Table, grid_html

__all__ = ["cell_costs", "SuppressionResult", "OptimalSuppression", "HeuristicSuppression"]

COSTS = ("value", "freq", "log", "unity", "tauargus")

#: tau-Argus scales cell costs so that the largest cell (the grand total) costs this much
TAUARGUS_COST_SCALE = 20_000


def cell_costs(table: Table, cost: str = "value") -> np.ndarray:
    """Cost of suppressing each cell: its value, its count, log(1 + value) or 1 (tau-Argus' options).

    ``"tauargus"`` is the value as tau-Argus' optimal method uses it: scaled so that the
    largest cell costs 20,000 and rounded half up to a whole number, at least 1. Every cell
    below 1/13,333 of the largest then costs 1, so a large table's optimum minimises the
    number of secondary suppressions. The rule was read off the cost column of the solver
    input that pytauargus 0.6.0 writes, and equals it cell for cell on the benchmark tables
    (benchmarks/compare_tauargus.py, ``tauargus_cost_option_equals_jj``).
    """
    check_choice("cell_costs", "cost", cost, COSTS)
    a = np.abs(table.value)
    if cost == "tauargus":
        top = float(a.max()) if a.size else 0.0
        return np.maximum(np.floor(a * (TAUARGUS_COST_SCALE / top) + 0.5), 1.0) if top > 0 else np.ones_like(a)
    w = {"value": a, "freq": table.freq.astype(float), "log": np.log1p(a), "unity": np.ones_like(a)}[cost]
    return np.maximum(w, 1e-3)


@dataclass(frozen=True)
class SuppressionResult(ResultDisplay):
    """A suppression pattern with its evidence: solver status, gap, cost and the audit.

    ``suppressed`` holds primary and secondary cells; ``secondary`` the ones the method added.
    """

    table: Table
    primary: Primary
    suppressed: np.ndarray
    method: str
    cost: float
    status: str
    proven_optimal: bool
    gap: float
    audit: AuditResult
    seconds: float
    n_iterations: int = 0
    n_cuts: int = 0
    params: dict = field(default_factory=dict)

    @property
    def secondary(self) -> np.ndarray:
        return self.suppressed & ~self.primary.sensitive

    @property
    def n_primary(self) -> int:
        return int(self.primary.sensitive.sum())

    @property
    def n_secondary(self) -> int:
        return int(self.secondary.sum())

    @property
    def guarantees(self) -> tuple[Guarantee, ...]:
        return (Guarantee("protection_intervals", "every primary cell's audit interval meets its protection levels",
                          self.audit.n_unprotected, self.audit.ok),)

    def to_dict(self) -> dict:
        return {"method": self.method, "params": jsonable(self.params), "n_cells": self.table.n_cells,
                "n_primary": self.n_primary, "n_secondary": self.n_secondary, "cost": round(float(self.cost), 6),
                "status": self.status, "proven_optimal": self.proven_optimal, "gap": jsonable(self.gap),
                "audit_ok": self.audit.ok, "seconds": round(self.seconds, 4), "n_iterations": self.n_iterations,
                "n_cuts": self.n_cuts, "guarantees": [g.to_dict() for g in self.guarantees]}

    def describe(self) -> str:
        return (f"{self.method} suppression: {self.n_primary} primary + {self.n_secondary} secondary cells of "
                f"{self.table.n_cells}, cost {self.cost:g}, {self.status}"
                + (f" (gap {self.gap:.3g})" if self.gap == self.gap and self.gap > 0 else "") + f", {self.seconds:.2f} s\n"
                + self.audit.describe())

    def report_html(self) -> str:
        return table_html(self.table, self.primary.sensitive, self.secondary) + self.audit.report_html()


def table_html(table: Table, primary: np.ndarray, secondary: np.ndarray) -> str:
    """The table (2-D layout when it has two dimensions) with primary cells as 'p', secondary 's'."""
    def cell(i: int) -> str:
        if primary[i]:
            return "<td class='primary'>p</td>"
        if secondary[i]:
            return "<td class='secondary'>s</td>"
        return f"<td>{table.value[i]:g}</td>"

    return grid_html(table, cell, max_rows=2000)


# --------------------------------------------------------------------------- helpers
def check_inputs(table: Table, primary: Primary) -> None:
    if primary.sensitive.shape != (table.n_cells,):
        raise InputError("the primary cells do not belong to this table (different number of cells)")


def capacities(table: Table, lb: np.ndarray, ub: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """UB_i = ub_i - a_i (room upwards), LB_i = a_i - lb_i (room downwards)."""
    return ub - table.value, table.value - lb


def _protected_primaries(table: Table, suppressed: np.ndarray, primary: Primary, lb, ub,
                         tol: float = 1e-6) -> bool:
    """True if every primary cell among ``suppressed`` meets its levels (early exit; used by the clean-up).

    ``suppressed`` may be one group of cells that shares no relation with the other suppressed
    cells: the attacker's problem on it is then exact.
    """
    h, cells, _ = attacker_model(table, suppressed, lb, ub)
    prim = np.flatnonzero(primary.sensitive[cells])
    zero, idx = np.zeros(cells.size), np.arange(cells.size, dtype=np.int32)
    for k in prim:
        c = cells[k]
        a = table.value[c]
        h.changeColsCost(cells.size, idx, zero)
        h.changeColCost(int(k), 1.0)
        for sense, need in ((highspy.ObjSense.kMaximize, a + primary.upper[c]),
                            (highspy.ObjSense.kMinimize, a - primary.lower[c])):
            h.changeObjectiveSense(sense)
            h.run()
            st = status(h)
            if "unbounded" in st:
                continue
            if st != "optimal":
                return False
            v = h.getInfo().objective_function_value
            t = tol * (1 + abs(a))
            if (sense == highspy.ObjSense.kMaximize and v < need - t) or (
                    sense == highspy.ObjSense.kMinimize and v > need + t):
                return False
    return True


def _cleanup(table, suppressed, primary, w, lb, ub, max_cells: int) -> np.ndarray:
    """Drop secondary cells, most expensive first, while every primary stays protected.

    Removing cell c can only affect the primaries of c's connected component of suppressed
    cells, so only that component is re-checked (components only shrink as cells go).
    """
    sup = suppressed.copy()
    sec = np.flatnonzero(sup & ~primary.sensitive)
    comp_of = np.full(table.n_cells, -1)
    comps = suppressed_components(table, sup)
    for k, comp in enumerate(comps):
        comp_of[comp] = k
    budget = sum(int(primary.sensitive[comps[comp_of[c]]].sum()) for c in sec)
    if budget > max_cells:  # budget of attacker LP rounds
        return sup
    members = [np.zeros(table.n_cells, bool) for _ in comps]
    for k, comp in enumerate(comps):
        members[k][comp] = True
    for c in sec[np.argsort(-w[sec], kind="stable")]:
        group = members[comp_of[c]]
        group[c] = False
        if not _protected_primaries(table, group, primary, lb, ub):
            group[c] = True
        else:
            sup[c] = False
    return sup


def validate_common(owner: str, s) -> None:
    check_choice(owner, "cost", s.cost, COSTS)
    check_float(owner, "time_limit", s.time_limit, low=0, low_open=True)


# --------------------------------------------------------------------------- heuristic
@dataclass(frozen=True)
class HeuristicSuppression:
    """Fast secondary suppression: one LP per primary cell and direction, then clean-up.

    For primary p (upper direction) the LP finds the cheapest additive perturbation ``y`` of
    the table with ``y_p = UPL_p`` (deviation ``y = y^+ - y^-``, ``M y = 0``, within the
    a-priori bounds), cells already suppressed costing nothing and others ``w_i`` per unit. Every cell the perturbation moves is suppressed, so the attacker can reach
    ``a_p + UPL_p``. The same for the lower level. One HiGHS model serves all primaries (only
    bounds and costs change). A clean-up then drops redundant secondary cells (most expensive
    first) while the audit still passes; the final pattern is audited.

    Parameters
    ----------
    cost : {"value", "freq", "log", "unity"}
    cleanup : bool
        Try to remove redundant secondaries (skipped when secondaries x primaries exceeds
        ``cleanup_max``, the budget of attacker rounds).
    time_limit : float
        Seconds per LP.

    References
    ----------
    Kelly, Golden & Assad (1992), *Networks* 22, 397-417; Fischetti & Salazar-González (2001).
    """

    cost: str = "value"
    cleanup: bool = True
    cleanup_max: int = 3000
    time_limit: float = 600.0
    lower_bound: float | None = None
    upper_bound: float | None = None

    def __post_init__(self) -> None:
        validate_common("HeuristicSuppression", self)
        check_bool("HeuristicSuppression", "cleanup", self.cleanup)

    def apply(self, table: Table, primary: Primary, *, weights: np.ndarray | None = None) -> SuppressionResult:
        t0 = time.perf_counter()
        check_inputs(table, primary)
        w = cell_costs(table, self.cost) if weights is None else np.asarray(weights, float)
        lb, ub = a_priori_bounds(table, self.lower_bound, self.upper_bound)
        sup = heuristic_pattern(table, primary, w, lb, ub, self.time_limit)
        if self.cleanup:
            sup = _cleanup(table, sup, primary, w, lb, ub, self.cleanup_max)
        aud = audit(table, sup, primary=primary, lower_bound=lb, upper_bound=ub)
        cost = float(w[sup & ~primary.sensitive].sum())
        return SuppressionResult(table, primary, sup, "heuristic", cost, "heuristic (feasible, not optimal)",
                                 False, float("nan"), aud, time.perf_counter() - t0,
                                 params={"cost": self.cost, "cleanup": self.cleanup})


def suppressible(table: Table, primary: Primary) -> np.ndarray:
    """Empty cells are never used as secondary suppressions (tau-Argus' default)."""
    return (table.freq > 0) | primary.sensitive


def heuristic_pattern(table, primary, w, lb, ub, time_limit, start: np.ndarray | None = None) -> np.ndarray:
    """Union of the cells moved by the cheapest perturbation reaching each protection level.

    ``start`` is a pattern to extend (its cells cost nothing); a perturbation ``y`` with
    ``M y = 0`` inside the a-priori bounds whose support is suppressed is a table the attacker
    cannot exclude, so each level that is reached stays reached when more cells are added.
    """
    n = table.n_cells
    m = table.relations
    UB, LB = capacities(table, lb, ub)
    can = suppressible(table, primary)
    sup = primary.sensitive.copy() if start is None else (np.asarray(start, bool) | primary.sensitive)
    unit = np.asarray(w, float)  # w_i per unit moved: cheap cells are preferred
    up_cap = np.where(can, np.minimum(UB, INF), 0.0)
    dn_cap = np.where(can, LB, 0.0)
    a = sp.hstack([m, -m]).tocsc()
    h = new_highs(time_limit=time_limit, presolve=False)
    cost = np.concatenate([np.where(sup, 0.0, unit)] * 2)
    pass_lp(h, a, cost=cost, col_lower=np.zeros(2 * n), col_upper=np.concatenate([up_cap, dn_cap]),
            row_lower=np.zeros(m.shape[0]), row_upper=np.zeros(m.shape[0]))
    prim = np.flatnonzero(primary.sensitive)
    # reach[0][q] / reach[1][q]: how far up / down q is already shown to move by an earlier
    # perturbation (its support is suppressed, so it stays a table the attacker cannot exclude)
    reach = (np.zeros(n), np.zeros(n))
    for p in prim:
        for direction, level in ((0, primary.upper[p]), (1, primary.lower[p])):
            if level <= 0:
                continue
            col, other = (p, n + p) if direction == 0 else (n + p, p)
            cap = up_cap[p] if direction == 0 else dn_cap[p]
            need = min(level, cap)
            if reach[direction][p] >= need - 1e-9 * (1 + need):
                continue
            h.changeColBounds(int(col), float(need), float(cap))
            h.changeColBounds(int(other), 0.0, 0.0)
            h.run()
            st = status(h)
            if st == "optimal":
                y = np.asarray(h.getSolution().col_value)
                net = y[:n] - y[n:]
                np.maximum(reach[0], net, out=reach[0])
                np.maximum(reach[1], -net, out=reach[1])
                moved = (y[:n] + y[n:]) > 1e-7 * (1 + np.abs(table.value))
                new = moved & ~sup
                if new.any():
                    sup |= new
                    idx = np.flatnonzero(new).astype(np.int32)
                    h.changeColsCost(idx.size, idx, np.zeros(idx.size))
                    h.changeColsCost(idx.size, idx + n, np.zeros(idx.size))
            elif "infeasible" not in st:
                raise SolverError(f"heuristic suppression: HiGHS stopped with status {st!r}")
            h.changeColBounds(int(p), 0.0, float(up_cap[p]))
            h.changeColBounds(int(n + p), 0.0, float(dn_cap[p]))
    return sup


# --------------------------------------------------------------------------- optimal
@dataclass(frozen=True)
class OptimalSuppression:
    """Optimal secondary suppression (Fischetti & Salazar-González) by Benders cuts on HiGHS.

    Parameters
    ----------
    cost : {"value", "freq", "log", "unity"}
        Cost of a suppressed cell.
    time_limit : float
        Seconds for the master/separation loop; when reached the best audited pattern found so
        far is returned and marked not proven optimal (if no master solution has passed the
        separation yet, the cleaned heuristic pattern, which is built then and not bounded by
        the time limit).
    mip_gap : float
        Relative gap at which a master MILP counts as solved.
    lower_bound, upper_bound : float, optional
        A-priori bounds known to the attacker (default ``[0, inf)`` for non-negative tables).
    max_iterations : int
        Master/separation rounds before giving up (the result is then not proven optimal).

    References
    ----------
    Fischetti & Salazar-González (1999, 2001), see the module docstring.
    """

    cost: str = "value"
    time_limit: float = 300.0
    mip_gap: float = 1e-6
    lower_bound: float | None = None
    upper_bound: float | None = None
    max_iterations: int = 500

    def __post_init__(self) -> None:
        validate_common("OptimalSuppression", self)
        check_float("OptimalSuppression", "mip_gap", self.mip_gap, low=0, high=1)
        check_int("OptimalSuppression", "max_iterations", self.max_iterations, min_value=1)

    def apply(self, table: Table, primary: Primary, *, weights: np.ndarray | None = None) -> SuppressionResult:
        t0 = time.perf_counter()
        check_inputs(table, primary)
        w = cell_costs(table, self.cost) if weights is None else np.asarray(weights, float)
        lb, ub = a_priori_bounds(table, self.lower_bound, self.upper_bound)
        best, best_cost, proven, gap, state, it, n_cuts = optimal_pattern(
            table, primary, w, lb, ub, time_limit=self.time_limit, mip_gap=self.mip_gap,
            max_iterations=self.max_iterations)
        aud = audit(table, best, primary=primary, lower_bound=lb, upper_bound=ub)
        if not aud.ok:
            raise SolverError("optimal suppression produced a pattern that fails the audit; please report this table")
        return SuppressionResult(table, primary, best, "optimal", best_cost, state, proven, gap, aud,
                                 time.perf_counter() - t0, n_iterations=it, n_cuts=n_cuts,
                                 params={"cost": self.cost, "time_limit": self.time_limit, "mip_gap": self.mip_gap})


def optimal_pattern(table, primary, w, lb, ub, *, time_limit, mip_gap, max_iterations,
                     cleanup_max: int = 3000):
    """Benders loop: master MILP over x, attacker LPs give capacity cuts, until none is violated.

    Returns ``(pattern, cost, proven, gap, status, n_iterations, n_cuts)``. The heuristic
    pattern (audited feasible) is the incumbent and the master's MIP start; the master's dual
    bound (a relaxation of the true problem) gives the gap when time runs out.
    """
    n = table.n_cells
    UB, LB = capacities(table, lb, ub)
    can = suppressible(table, primary)
    prim = np.flatnonzero(primary.sensitive)
    m = table.relations.tocsr()
    mt = m.T.tocsr()
    # No start pattern: the master with the single-relation cuts is usually feasible for the
    # attacker already, and the LP-per-primary heuristic costs more than the search on large
    # tables. The heuristic pattern (feasible by construction, not bounded by the time limit)
    # is built only if the search stops before any master solution passes the separation.
    t0 = time.perf_counter()
    if prim.size == 0:
        return primary.sensitive.copy(), 0.0, True, 0.0, "optimal (no primary cells)", 0, 0
    inc, inc_cost = None, np.inf
    master = new_highs(time_limit=time_limit)
    master.setOptionValue("mip_rel_gap", mip_gap)
    pass_lp(master, sp.csr_matrix((0, n)), cost=np.where(primary.sensitive, 0.0, w),
            col_lower=primary.sensitive.astype(float), col_upper=can.astype(float),
            row_lower=np.zeros(0), row_upper=np.zeros(0), integrality=np.ones(n, bool))
    n_cuts = 0

    def add_cut(idx: np.ndarray, coef: np.ndarray, rhs: float) -> None:
        nonlocal n_cuts
        keep = coef > 1e-9 * max(rhs, 1.0)
        idx, coef = idx[keep].astype(np.int32), np.minimum(coef[keep], rhs)  # capped coefficients stay valid
        master.addRow(float(rhs), INF, int(idx.size), idx, coef.astype(float))
        n_cuts += 1

    # start cuts (single-relation capacity cuts): every relation through a primary p must let
    # y_p move by its level; parts on p's side move the other way (capacity LB), others with it (UB)
    for p in prim:
        for r in mt.indices[mt.indptr[p]:mt.indptr[p + 1]]:
            cols = m.indices[m.indptr[r]:m.indptr[r + 1]]
            sgn = m.data[m.indptr[r]:m.indptr[r + 1]]
            sp_ = sgn[cols == p][0]
            others = cols != p
            oc, os_ = cols[others], sgn[others]
            for level, same_cap, opp_cap in ((primary.upper[p], LB, UB), (primary.lower[p], UB, LB)):
                if level <= 0:
                    continue
                coef = np.where(os_ == sp_, same_cap[oc], opp_cap[oc])
                coef = np.where(can[oc], np.where(np.isinf(coef), level, coef), 0.0)
                add_cut(oc, coef, level)
    best, best_cost, proven, gap, it, bound = inc, inc_cost, False, float("nan"), 0, 0.0
    state = "time limit reached: best audited pattern, not proven optimal"
    while True:
        if it >= max_iterations:
            state = f"iteration limit ({max_iterations}) reached: best audited pattern, not proven optimal"
            break
        left = time_limit - (time.perf_counter() - t0)
        if left <= 0:
            break
        it += 1
        master.setOptionValue("time_limit", float(left))
        if best is not None:
            start = highspy.HighsSolution()
            start.col_value = best.astype(float).tolist()
            master.setSolution(start)  # MIP start: the best pattern known (feasible for every cut)
        master.run()
        st = status(master)
        info = master.getInfo()
        if st != "optimal":
            if "infeasible" in st:
                raise SolverError("optimal suppression: no pattern can protect the primary cells (some primary "
                                  "cell cannot reach its protection level even with every cell suppressed)")
            bound = max(bound, float(info.mip_dual_bound)) if np.isfinite(info.mip_dual_bound) else bound
            break
        bound = max(bound, float(info.mip_dual_bound))
        x = np.asarray(master.getSolution().col_value) > 0.5
        cuts = _separate(table, x, primary, lb, ub, UB, LB, can, m)
        if not cuts:
            cost = float(w[x & ~primary.sensitive].sum())
            if cost <= best_cost + 1e-9 * max(1.0, best_cost):
                best, best_cost = x, cost
            gap = max(0.0, (best_cost - bound) / max(abs(best_cost), 1e-9))
            proven = gap <= max(mip_gap, 1e-6) + 1e-9
            state = "optimal" if proven else "optimal within the MILP gap"
            return best, best_cost, proven, gap, state, it, n_cuts
        for idx, coef, rhs in cuts:
            add_cut(idx, coef, rhs)
        for idx, coef, rhs in _bridgeless_cuts(x, x & ~primary.sensitive, m, mt):
            master.addRow(rhs, INF, int(idx.size), idx.astype(np.int32), coef)
            n_cuts += 1
    if best is None:  # no audited pattern yet: the heuristic one, cleaned up
        best = heuristic_pattern(table, primary, w, lb, ub, None)
        best = _cleanup(table, best, primary, w, lb, ub, cleanup_max)
        best_cost = float(w[best & ~primary.sensitive].sum())
    gap = max(0.0, (best_cost - bound) / max(abs(best_cost), 1e-9))
    return best, best_cost, False, gap, state, it, n_cuts


def _separate(table, x, primary, lb, ub, UB, LB, can, m, tol: float = 1e-6) -> list:
    """Attacker LPs for every primary at pattern ``x``; a capacity cut per violated level.

    One model per connected component of ``x`` holding a primary (components share no
    relation, so each attacker problem only involves its own component)."""
    cuts = []
    for comp in suppressed_components(table, x):
        if primary.sensitive[comp].any():
            mask = np.zeros(table.n_cells, bool)
            mask[comp] = True
            cuts += _separate_component(table, mask, x, primary, lb, ub, UB, LB, can, m, tol)
    return cuts


def _separate_component(table, mask, x, primary, lb, ub, UB, LB, can, m, tol) -> list:
    h, cells, rows = attacker_model(table, mask, lb, ub)
    cuts = []
    pos = {int(c): k for k, c in enumerate(cells)}
    mr = m[rows]
    zero = np.zeros(cells.size)
    all_idx = np.arange(cells.size, dtype=np.int32)
    # every optimal attacker table y is a proof for the other primaries of the component too:
    # a level that some y already reaches needs no LP (and gives no cut)
    prim = cells[primary.sensitive[cells]]
    ppos = np.array([pos[int(q)] for q in prim], dtype=np.int64)
    a_p = table.value[prim]
    reach_up, reach_dn = np.zeros(prim.size), np.zeros(prim.size)
    tl = tol * (1 + np.abs(a_p))
    for j, p in enumerate(prim):
        k = pos[int(p)]
        a = table.value[p]
        h.changeColsCost(cells.size, all_idx, zero)
        for sign, level in ((-1.0, primary.upper[p]), (1.0, primary.lower[p])):
            if level <= 0 or (reach_up if sign < 0 else reach_dn)[j] >= level - tl[j]:
                continue
            # minimise sign * y_p: sign=-1 gives max y_p, sign=+1 gives min y_p
            h.changeColCost(k, sign)
            h.changeObjectiveSense(highspy.ObjSense.kMinimize)
            h.run()
            st = status(h)
            if "unbounded" in st:
                continue
            if st != "optimal":
                raise SolverError(f"attacker LP stopped with status {st!r}")
            obj = h.getInfo().objective_function_value
            reach = -obj - a if sign < 0 else a - obj  # how far y_p can move
            ya = np.asarray(h.getSolution().col_value)[ppos] - a_p
            np.maximum(reach_up, ya, out=reach_up)
            np.maximum(reach_dn, -ya, out=reach_dn)
            if reach >= level - tol * (1 + abs(a)):
                h.changeColCost(k, 0.0)
                continue
            gamma = np.asarray(h.getSolution().row_dual)
            c = np.zeros(table.n_cells)
            c[p] = sign
            d = c - mr.T @ gamma  # reduced costs over the whole table (rows outside the model: dual 0)
            dp, dm = np.maximum(d, 0.0), np.maximum(-d, 0.0)
            with np.errstate(invalid="ignore"):
                coef = np.where(dp > 1e-9, dp * LB, 0.0) + np.where(dm > 1e-9, dm * UB, 0.0)
            coef = np.where(np.isnan(coef) | np.isinf(coef), level, coef) * can
            coef[x] = np.minimum(coef[x], level)
            lhs = float(np.minimum(coef, level)[x].sum())
            if lhs >= level - 1e-7 * (1 + level):  # dual sign convention check: cut must cut off x
                raise SolverError("attacker LP duals do not give a violated cut; numerical trouble")
            idx = np.flatnonzero(coef > 0)
            cuts.append((idx, coef[idx], float(level)))
            h.changeColCost(k, 0.0)
        h.changeColCost(k, 0.0)
    return cuts


def _bridgeless_cuts(x: np.ndarray, sec: np.ndarray, m, mt) -> list:
    """Cuts ``x_i <= sum_{j in r, j != i} x_j`` for secondary cells alone in a relation r
    (such a cell is exactly disclosed, so publishing it changes nothing: valid for minimal patterns)."""
    cuts = []
    counts = abs(m) @ x.astype(float)  # suppressed cells per relation
    for i in np.flatnonzero(sec):
        for r in mt.indices[mt.indptr[i]:mt.indptr[i + 1]]:
            if counts[r] < 1.5:
                cols = m.indices[m.indptr[r]:m.indptr[r + 1]]
                idx = np.concatenate([[i], cols[cols != i]])
                coef = np.concatenate([[-1.0], np.ones(idx.size - 1)])
                cuts.append((idx, coef, 0.0))
    return cuts
