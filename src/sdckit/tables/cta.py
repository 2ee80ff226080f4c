"""Controlled tabular adjustment (CTA): the closest additive table in which every sensitive cell
lies outside its protection interval.

Given a table ``a`` with relations ``M a = 0`` (every total the sum of its parts), CTA publishes
``x = a + z+ - z-`` with ``M x = 0`` and ``lb <= x <= ub`` that minimises the weighted L1
distance ``sum_i w_i (z+_i + z-_i)``, where every sensitive cell s is moved out of
``(a_s - lpl_s, a_s + upl_s)``: either up by at least ``upl_s`` or down by at least ``lpl_s``
(Dandekar & Cox 2002; Castro 2006, sec. 2, model (1)-(5)). The direction is a binary ``y_s``:

    upl_s y_s <= z+_s <= U+_s y_s,    lpl_s (1 - y_s) <= z-_s <= U-_s (1 - y_s)

with ``U+ = ub - a`` and ``U- = a - lb`` (the room within the bounds; where a bound is infinite,
the table's total absolute value, a move no optimal table needs). ``method = "milp"`` solves this
mixed-integer model with HiGHS to the relative gap ``mip_gap``. ``method = "lp"`` is the
heuristic tau-Argus also offers: the directions are fixed first (here from the LP relaxation,
rounded; where that is infeasible, every cell up where its bound allows, else down) and one LP
gives the adjustment (Castro 2006, sec. 3; Hundepool et al. 2012, sec. 4.5).

Empty cells (no contributor, value 0) stay 0: a structural zero is never published as a count.

**The audit** (:func:`cta_audit`) checks the published table independently of the solver: the
relations hold (largest ``|M x|`` within a tolerance), every cell is within its bounds, and every
sensitive cell's published value lies outside its protection interval (at its edge counts as
outside, as in the model). It is exact: every cell is checked.

References
----------
Dandekar, R.A. and Cox, L.H. (2002). Synthetic tabular data: an alternative to complementary
cell suppression. Energy Information Administration, US Department of Energy (manuscript).
Castro, J. (2006). Minimum-distance controlled perturbation methods for large-scale tabular data
protection. *European Journal of Operational Research* 171, 39-52.
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, section 4.5 (CTA). Wiley.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._validation import check_bool, check_choice, check_float
from ..errors import InputError, SolverError
from ..result import Guarantee, ResultDisplay
from ._highs import INF, new_highs, pass_lp, status
from .audit import a_priori_bounds
from .rules import Primary
from .table import Table

__all__ = ["ControlledAdjustment", "CTAResult", "CTAAudit", "cta_audit", "cta_weights"]

WEIGHTS = ("relative", "unity")
METHODS = ("milp", "lp")


def cta_weights(table: Table, weights: str) -> np.ndarray:
    """Cost per unit of change: ``relative`` = 1 / max(|a_i|, 1) (Castro 2006, sec. 2: the
    change relative to the cell), ``unity`` = 1 (the total absolute change)."""
    if weights == "unity":
        return np.ones(table.n_cells)
    return 1.0 / np.maximum(np.abs(table.value), 1.0)


@dataclass(frozen=True)
class CTAAudit:
    """The exact check of a CTA table: additivity, bounds, every sensitive cell outside its interval."""

    max_residual: float
    tolerance: float
    n_sensitive: int
    n_inside: int
    n_out_of_bounds: int
    n_empty_moved: int

    @property
    def ok(self) -> bool:
        return (self.max_residual <= self.tolerance and self.n_inside == 0 and self.n_out_of_bounds == 0
                and self.n_empty_moved == 0)

    @property
    def status(self) -> str:
        return "exact" if self.ok else "failed"

    @property
    def rule(self) -> str:
        return "every relation, every cell's bounds and every sensitive cell's interval checked"

    def statement(self) -> str:
        if self.ok:
            return (f"Checked every cell exactly: the totals add up (largest residual {self.max_residual:.3g}) and "
                    f"all {self.n_sensitive:,} sensitive cells are published outside their protection intervals")
        parts = []
        if self.max_residual > self.tolerance:
            parts.append(f"the totals do NOT add up (residual {self.max_residual:.3g})")
        if self.n_inside:
            parts.append(f"{self.n_inside:,} sensitive cells are NOT moved out of their protection intervals")
        if self.n_out_of_bounds:
            parts.append(f"{self.n_out_of_bounds:,} cells are outside their bounds")
        if self.n_empty_moved:
            parts.append(f"{self.n_empty_moved:,} empty cells moved")
        return "Checked every cell exactly: " + "; ".join(parts) + ": the table is NOT safe"

    def to_dict(self) -> dict:
        return {"status": self.status, "ok": self.ok, "max_residual": float(self.max_residual),
                "n_sensitive": self.n_sensitive, "n_inside": self.n_inside,
                "n_out_of_bounds": self.n_out_of_bounds, "n_empty_moved": self.n_empty_moved,
                "statement": self.statement()}


def cta_audit(table: Table, published: np.ndarray, primary: Primary, *, lower_bound=None, upper_bound=None,
              tol: float = 1e-6) -> CTAAudit:
    """Check a published table against the CTA promises (module docstring); independent of the solver."""
    x = np.asarray(published, float)
    a = table.value
    lb, ub = a_priori_bounds(table, lower_bound, upper_bound)
    scale = 1.0 + float(np.abs(a).max(initial=0.0))
    res = table.relations @ x
    max_res = float(np.abs(res).max(initial=0.0))
    t = tol * (1 + np.abs(a))
    s = primary.sensitive
    outside = (x >= a + primary.upper - t) | (x <= a - primary.lower + t)
    # a sensitive cell without levels is out of its (empty) interval only if it moved
    n_inside = int(np.sum(s & ~outside))
    oob = int(np.sum((x < lb - t) | (x > ub + t)))
    empty = (table.freq == 0) & (a == 0)
    moved = int(np.sum(empty & (np.abs(x) > t)))
    return CTAAudit(max_res, tol * scale, int(s.sum()), n_inside, oob, moved)


@dataclass(frozen=True)
class CTAResult(ResultDisplay):
    """An adjusted table with its evidence.

    Attributes
    ----------
    adjusted : ndarray
        The published value of every cell.
    direction : ndarray of int8
        +1 (moved up), -1 (moved down) per sensitive cell, 0 elsewhere.
    objective : float
        Weighted L1 distance of the adjustment (the model's objective).
    proven_optimal : bool
        The MILP was solved to its gap (``gap`` is HiGHS's relative gap); False for the LP heuristic.
    audit : CTAAudit
    """

    table: Table
    primary: Primary
    adjusted: np.ndarray
    direction: np.ndarray
    objective: float
    proven_optimal: bool
    gap: float
    status: str
    method: str
    seconds: float
    audit: CTAAudit
    params: dict = field(default_factory=dict)

    @property
    def guarantees(self) -> list:
        a = self.audit
        return [Guarantee("additive", "every total equals the sum of its parts", a.max_residual,
                          a.max_residual <= a.tolerance),
                Guarantee("outside_protection_interval",
                          "every sensitive cell is published outside its protection interval", a.n_inside,
                          a.n_inside == 0),
                Guarantee("within_bounds", "every cell is within its a-priori bounds", a.n_out_of_bounds,
                          a.n_out_of_bounds == 0)]

    @property
    def l1_change(self) -> float:
        return float(np.abs(self.adjusted - self.table.value).sum())

    def to_dict(self) -> dict:
        return {"method": self.method, "status": self.status, "objective": self.objective,
                "proven_optimal": self.proven_optimal, "gap": self.gap, "l1_change": self.l1_change,
                "n_cells": int(self.table.n_cells), "n_changed": int(np.sum(self.adjusted != self.table.value)),
                "n_up": int(np.sum(self.direction > 0)), "n_down": int(np.sum(self.direction < 0)),
                "seconds": round(self.seconds, 4), "params": self.params, "audit": self.audit.to_dict()}

    def report_html(self) -> str:
        """Internal report section: the audit's verdict and every changed cell (original and published)."""
        a = self.table.value
        changed = np.flatnonzero(np.abs(self.adjusted - a) > 1e-9)
        rows = "".join(
            f"<tr><td>{html.escape(' / '.join(self.table.cell_codes(int(c))))}</td><td>{a[c]:g}</td>"
            f"<td>{self.adjusted[c]:g}</td><td>{'sensitive' if self.primary.sensitive[c] else ''}</td></tr>"
            for c in changed[:5000])
        return (f"<p class='{'audit' if self.audit.ok else 'audit not-proven'}'><strong>Audit: {self.audit.status}."
                f"</strong> {html.escape(self.audit.statement())}.</p>"
                f"<p>{html.escape(self.describe())}</p>"
                "<table class='audit'><tr><th>cell</th><th>original</th><th>published</th><th></th></tr>"
                f"{rows}</table>")

    def describe(self) -> str:
        d = self.to_dict()
        return (f"controlled tabular adjustment ({self.method}): {d['n_changed']:,} of {d['n_cells']:,} cells "
                f"changed, weighted distance {self.objective:.6g}{' (optimal)' if self.proven_optimal else ''}; "
                f"{self.audit.statement()}")


@dataclass(frozen=True)
class ControlledAdjustment:
    """Controlled tabular adjustment with HiGHS (module docstring).

    Parameters
    ----------
    weights : {"relative", "unity"}
        Cost per unit of change (:func:`cta_weights`).
    method : {"milp", "lp"}
        ``milp``: the binary directions solved with the adjustment (optimal to ``mip_gap``);
        ``lp``: directions fixed first, one LP (tau-Argus's faster variant).
    integer : bool
        Integer adjustments (for counts): the changes are integer variables.
    time_limit : float
        Seconds for HiGHS; a MILP stopped by it keeps its best table, not proven optimal.
    mip_gap : float
        Relative gap at which the MILP counts as solved.
    lower_bound, upper_bound : float, optional
        Bounds on the published cells (default ``[0, inf)`` for non-negative tables).

    References
    ----------
    Dandekar & Cox (2002); Castro (2006), sec. 2-3; see the module docstring.
    """

    weights: str = "relative"
    method: str = "milp"
    integer: bool = False
    time_limit: float = 300.0
    mip_gap: float = 1e-4
    lower_bound: float | None = None
    upper_bound: float | None = None

    def __post_init__(self) -> None:
        check_choice("ControlledAdjustment", "weights", self.weights, WEIGHTS)
        check_choice("ControlledAdjustment", "method", self.method, METHODS)
        check_bool("ControlledAdjustment", "integer", self.integer)
        check_float("ControlledAdjustment", "time_limit", self.time_limit, low=0, low_open=True)
        check_float("ControlledAdjustment", "mip_gap", self.mip_gap, low=0, high=1)

    def apply(self, table: Table, primary: Primary, *, weights: np.ndarray | None = None) -> CTAResult:
        t0 = time.perf_counter()
        if primary.sensitive.size != table.n_cells:
            raise InputError(f"the sensitive cells cover {primary.sensitive.size} cells; the table has "
                             f"{table.n_cells}: compute them on this table")
        w = cta_weights(table, self.weights) if weights is None else np.asarray(weights, float)
        lb, ub = a_priori_bounds(table, self.lower_bound, self.upper_bound)
        model = _Model(table, primary, w, lb, ub, self.integer)
        if self.method == "milp":
            x, dirs, obj, proven, gap, st = model.solve(None, self.time_limit, self.mip_gap)
        else:
            x, dirs, obj, proven, gap, st = model.solve_fixed(self.time_limit)
        aud = cta_audit(table, x, primary, lower_bound=lb, upper_bound=ub)
        return CTAResult(table, primary, x, dirs, obj, proven, gap, st, self.method, time.perf_counter() - t0, aud,
                         params={"weights": self.weights, "method": self.method, "integer": self.integer,
                                 "mip_gap": self.mip_gap})


class _Model:
    """The CTA model of Castro (2006), eq. (1)-(5): columns z+ (n), z- (n), y (one per sensitive cell)."""

    def __init__(self, table: Table, primary: Primary, w, lb, ub, integer: bool) -> None:
        a = table.value
        n = table.n_cells
        self.table, self.n, self.w = table, n, np.asarray(w, float)
        big = 2.0 * float(np.abs(a).sum()) + 1.0
        cap_up = np.where(np.isfinite(ub), ub - a, big)
        cap_dn = np.where(np.isfinite(lb), a - lb, big)
        empty = (table.freq == 0) & (a == 0)
        cap_up[empty] = cap_dn[empty] = 0.0
        self.sens = np.flatnonzero(primary.sensitive)
        k = self.sens.size
        upl, lpl = primary.upper[self.sens], primary.lower[self.sens]
        # a sensitive cell with no levels still has to move (by the smallest unit): tau-Argus's default
        unit = 1.0
        upl = np.where((upl <= 0) & (lpl <= 0), unit, upl)
        lpl = np.where((primary.upper[self.sens] <= 0) & (lpl <= 0), unit, lpl)
        self.upl, self.lpl = upl, lpl
        cu, cd = cap_up[self.sens], cap_dn[self.sens]
        self.can_up, self.can_dn = cu >= upl - 1e-9, cd >= lpl - 1e-9
        bad = ~self.can_up & ~self.can_dn
        if bad.any():
            c = int(self.sens[np.flatnonzero(bad)[0]])
            raise InputError(f"controlled tabular adjustment: sensitive cell {' / '.join(table.cell_codes(c))} "
                             f"(value {a[c]:g}) cannot leave its protection interval within the bounds "
                             f"[{lb[c]:g}, {ub[c]:g}]; widen the bounds or lower its protection levels")
        m = sp.csr_matrix(table.relations)
        r = m.shape[0]
        # rows: M z+ - M z- = 0 ; per sensitive s (4 rows): z+ - upl y >= 0, z+ - U+ y <= 0,
        # z- + lpl y >= lpl, z- + U- y <= U-
        eye = sp.identity(n, format="csr")[self.sens]
        z0 = sp.csr_matrix((k, n))
        blocks = [[m, -m, sp.csr_matrix((r, k))],
                  [eye, z0, -sp.diags(upl)],
                  [eye, z0, -sp.diags(cu)],
                  [z0, eye, sp.diags(lpl)],
                  [z0, eye, sp.diags(cd)]]
        self.A = sp.bmat(blocks, format="csc")
        zr = np.zeros(r)
        self.row_lo = np.concatenate([zr, np.zeros(k), np.full(k, -INF), lpl, np.full(k, -INF)])
        self.row_hi = np.concatenate([zr, np.full(k, INF), np.zeros(k), np.full(k, INF), cd])
        self.col_lo = np.zeros(2 * n + k)
        self.col_hi = np.concatenate([cap_up, cap_dn, np.ones(k)])
        self.cost = np.concatenate([self.w, self.w, np.zeros(k)])
        self.integer = integer

    def _run(self, y_lo, y_hi, relax: bool, time_limit: float, mip_gap: float):
        n, k = self.n, self.sens.size
        col_lo, col_hi = self.col_lo.copy(), self.col_hi.copy()
        col_lo[2 * n:], col_hi[2 * n:] = y_lo, y_hi
        integ = None
        if not relax:
            integ = np.concatenate([np.full(2 * n, self.integer), np.ones(k, bool)])
        h = new_highs(time_limit=time_limit, options={"mip_rel_gap": float(mip_gap)})
        pass_lp(h, self.A, cost=self.cost, col_lower=col_lo, col_upper=col_hi, row_lower=self.row_lo,
                row_upper=self.row_hi, integrality=integ)
        h.run()
        st = status(h)
        if st not in ("optimal", "time limit reached") or h.getInfo().primal_solution_status != 2:
            return None, st, h
        return np.asarray(h.getSolution().col_value), st, h

    def _result(self, sol, st, h, proven_ok: bool):
        n = self.n
        zp, zm = sol[:n], sol[n:2 * n]
        # solver noise below 1e-9 is dropped (a level met to 1e-15 is published as met)
        zp, zm = (np.round(zp), np.round(zm)) if self.integer else (np.round(zp, 9), np.round(zm, 9))
        x = self.table.value + zp - zm
        dirs = np.zeros(n, np.int8)
        y = sol[2 * n:]
        dirs[self.sens] = np.where(y > 0.5, 1, -1)
        obj = float(self.w @ (zp + zm))
        info = h.getInfo()
        gap = float(info.mip_gap) if proven_ok else float("nan")
        proven = proven_ok and st == "optimal"
        return x, dirs, obj, proven, gap, st

    def solve(self, fixed_y, time_limit: float, mip_gap: float):
        k = self.sens.size
        y_lo = np.where(self.can_dn, 0.0, 1.0)  # a cell that cannot go down must go up, and v.v.
        y_hi = np.where(self.can_up, 1.0, 0.0)
        if fixed_y is not None:
            y_lo = y_hi = np.asarray(fixed_y, float)
        sol, st, h = self._run(y_lo, y_hi, False, time_limit, mip_gap if k else 0.0)
        if sol is None:
            raise SolverError(f"controlled tabular adjustment: HiGHS ended {st!r} "
                              + ("with no table; raise time_limit" if "time" in st else
                                 "; the bounds and protection levels admit no additive table: widen the bounds"))
        return self._result(sol, st, h, fixed_y is None)

    def solve_fixed(self, time_limit: float):
        """The LP heuristic: directions from the rounded LP relaxation, then one LP."""
        y_lo = np.where(self.can_dn, 0.0, 1.0)
        y_hi = np.where(self.can_up, 1.0, 0.0)
        tries = []
        sol, st, _ = self._run(y_lo, y_hi, True, time_limit, 0.0)
        if sol is not None:
            tries.append(np.clip(np.where(sol[2 * self.n:] >= 0.5, 1.0, 0.0), y_lo, y_hi))
        tries.append(np.where(self.can_up, 1.0, 0.0))
        tries.append(np.where(self.can_dn, 0.0, 1.0))
        for y in tries:
            n, k = self.n, self.sens.size
            col_lo, col_hi = self.col_lo.copy(), self.col_hi.copy()
            col_lo[2 * n:] = col_hi[2 * n:] = y
            integ = np.concatenate([np.full(2 * n, self.integer), np.zeros(k, bool)]) if self.integer else None
            h = new_highs(time_limit=time_limit)
            pass_lp(h, self.A, cost=self.cost, col_lower=col_lo, col_upper=col_hi, row_lower=self.row_lo,
                    row_upper=self.row_hi, integrality=integ)
            h.run()
            st = status(h)
            if st == "optimal":
                x, dirs, obj, _, _, _ = self._result(np.asarray(h.getSolution().col_value), st, h, False)
                return x, dirs, obj, False, float("nan"), "lp heuristic (directions fixed)"
        raise SolverError("controlled tabular adjustment (lp): no fixed set of directions tried gives an additive "
                          "table; use method = \"milp\"")
