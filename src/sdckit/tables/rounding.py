"""Controlled rounding of tables to a base b: optimal (LP / ILP on HiGHS) and Cox's unbiased procedure.

Every cell, totals included, is rounded to a multiple of ``b`` adjacent to its value (down or
up; a cell already a multiple stays: zero-restricted) and the rounded table stays additive.
Write ``F_i = b floor(a_i / b)``, ``e_i = a_i - F_i`` and ``R_i = F_i + b z_i``; then
``M R = 0`` is ``M z = -M F / b`` (integer right-hand side) with ``0 <= z_i <= [e_i > 0]``,
and the linear cost ``sum |R_i - a_i| = sum e_i + sum z_i (b - 2 e_i)``.

For 2-D tables (and 2-D tables with one hierarchical dimension) this polytope is that of a
network flow (Cox & Ernst 1982: rows and columns as nodes, cells as arcs; a hierarchical
dimension adds a tree of subtotal nodes), so it is never empty (``z = e / b`` is a point) and
its vertices are integral: the simplex LP returns an optimal controlled rounding. For 3-D and
linked tables the same formulation is solved as an ILP with a time limit; when it has no
solution the report says so and, on request, the non-zero-restricted problem is solved.

Cox's (1987) unbiased procedure starts at ``z = e / b`` and moves along cycles of fractional
arcs of the flow network, each step a random choice between the two directions with
probabilities that keep ``E[z]`` unchanged, until every arc is integral: ``E[R_i] = a_i``.

References
----------
Cox, L.H. and Ernst, L.R. (1982). Controlled rounding. *INFOR* 20(4), 423-432.
Cox, L.H. (1987). A constructive procedure for unbiased controlled rounding. *JASA* 82, 520-524.
Karr, A.F. et al. (2006). Secure statistical analysis; Roehrig (2002), slide "Controlled Rounding (Base 3)": base-3 controlled rounding of
the delinquent-children table and its uniform feasibility interval.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import highspy
import numpy as np

from .._random import as_generator, seed_sequence
from .._validation import check_bool, check_choice, check_float, check_int
from ..errors import InputError, SolverError
from ..result import Guarantee, ResultDisplay, jsonable
from ._highs import new_highs, pass_lp, status
from .audit import AuditResult, audit
from .table import Table

__all__ = ["ControlledRounding", "RoundingResult", "check_rounding"]


def check_rounding(table: Table, rounded: np.ndarray, base: int, *, zero_restricted: bool = True,
                   tol: float = 1e-6) -> dict:
    """Independent check of a controlled rounding.

    ``multiples``: every cell is a multiple of ``base``; ``additive``: every total equals the
    sum of its parts; ``adjacent``: every cell moved by less than ``base`` (zero-restricted:
    cells that were multiples did not move) or, otherwise, by at most ``base``.
    """
    r = np.asarray(rounded, float)
    a = table.value
    mult = bool(np.all(np.abs(r / base - np.rint(r / base)) < tol))
    scale = 1.0 + np.abs(r).max(initial=0.0)
    additive = bool(np.all(np.abs(table.relations @ r) < tol * scale))
    d = np.abs(r - a)
    was_multiple = np.abs(a / base - np.rint(a / base)) < tol
    if zero_restricted:
        adjacent = bool(np.all(d < base - tol) and np.all(d[was_multiple] < tol))
    else:
        adjacent = bool(np.all(d[~was_multiple] < base - tol) and np.all(d[was_multiple] <= base + tol))
    return {"multiples": mult, "additive": additive, "adjacent": adjacent}


@dataclass(frozen=True)
class RoundingResult(ResultDisplay):
    """A rounded table with its evidence: method, status, deviations, cell intervals."""

    table: Table
    rounded: np.ndarray
    base: int
    method: str
    status: str
    zero_restricted: bool
    seconds: float
    intervals: AuditResult | None = None
    seed: object = None
    params: dict = field(default_factory=dict)

    @property
    def checks(self) -> dict:
        return check_rounding(self.table, self.rounded, self.base, zero_restricted=self.zero_restricted)

    @property
    def guarantees(self) -> tuple[Guarantee, ...]:
        c = self.checks
        return (Guarantee("additive", "the rounded table is additive (every total = sum of its parts)",
                          c["additive"], c["additive"]),
                Guarantee("adjacent", "every cell is rounded to an adjacent multiple of the base"
                          + (" (multiples unchanged)" if self.zero_restricted else ""),
                          c["adjacent"] and c["multiples"], c["adjacent"] and c["multiples"]))

    @property
    def uniform_interval(self) -> tuple[int, int]:
        """For integer data: the original lies in [R - (b - 1), R + (b - 1)] (Roehrig 2002's uniform interval)."""
        return -(self.base - 1), self.base - 1

    def to_dict(self) -> dict:
        d = self.rounded - self.table.value
        out = {"method": self.method, "base": self.base, "status": self.status,
               "zero_restricted": self.zero_restricted, "n_cells": self.table.n_cells,
               "n_changed": int((np.abs(d) > 1e-9).sum()), "sum_abs_deviation": float(np.abs(d).sum()),
               "max_abs_deviation": float(np.abs(d).max(initial=0)), "seconds": round(self.seconds, 4),
               "guarantees": [g.to_dict() for g in self.guarantees], "params": jsonable(self.params)}
        if self.intervals is not None:
            out["intervals"] = self.intervals.to_dict()["intervals"]
        return out

    def describe(self) -> str:
        d = self.to_dict()
        lines = [f"controlled rounding to base {self.base} ({self.method}, {self.status}): "
                 f"{d['n_changed']} of {d['n_cells']} cells changed, sum |R - a| = {d['sum_abs_deviation']:g}"]
        lines += [f"  [{'ok' if g.holds else 'FAILED'}] {g.statement}" for g in self.guarantees]
        if len(self.table.dims) == 2:
            r = self.rounded.reshape(self.table.shape)
            h0, h1 = self.table.hierarchies
            lines.append("  " + " ".join(f"{c:>8}" for c in ("",) + h1.codes))
            for i, code in enumerate(h0.codes):
                lines.append("  " + f"{code:>8} " + " ".join(f"{v:>8g}" for v in r[i]))
        return "\n".join(lines)

    def report_html(self) -> str:
        import html as _h
        t = self.table
        if len(t.dims) != 2:
            return f"<pre>{_h.escape(self.describe())}</pre>"
        h0, h1 = t.hierarchies
        r = self.rounded.reshape(t.shape)
        head = "".join(f"<th>{_h.escape(c)}</th>" for c in h1.codes)
        body = "".join(f"<tr><th>{_h.escape(c)}</th>" + "".join(f"<td>{v:g}</td>" for v in r[i]) + "</tr>"
                       for i, c in enumerate(h0.codes))
        iv = ("" if self.intervals is None else
              "<p>Interval of every cell given the rounded table:</p>" + self.intervals.report_html())
        return f"<table class='sdc-table'><tr><th></th>{head}</tr>{body}</table>{iv}"


@dataclass(frozen=True)
class ControlledRounding:
    """Controlled rounding to base ``base``.

    Parameters
    ----------
    base : int
        The rounding base b >= 2.
    method : {"optimal", "unbiased"}
        ``optimal``: closest rounding under the linear cost sum |R - a| (LP on the network
        polytope for 2-D tables, ILP otherwise). ``unbiased``: Cox's (1987) random procedure,
        ``E[R] = a`` (2-D tables, with at most one hierarchical dimension).
    zero_restricted : bool
        Cells already multiples of b stay unchanged. When no zero-restricted rounding exists
        (possible for 3-D tables) and ``allow_non_zero_restricted`` is true, multiples may move
        by one base.
    time_limit : float
        Seconds for the ILP.
    intervals : bool
        Compute the LP feasibility interval of every cell given the rounded table (tables up
        to ``max_interval_cells`` cells).

    References
    ----------
    Cox & Ernst (1982); Cox (1987); see the module docstring.
    """

    base: int = 3
    method: str = "optimal"
    zero_restricted: bool = True
    allow_non_zero_restricted: bool = True
    time_limit: float = 60.0
    intervals: bool = True
    max_interval_cells: int = 2000

    def __post_init__(self) -> None:
        check_int("ControlledRounding", "base", self.base, min_value=2)
        check_choice("ControlledRounding", "method", self.method, ("optimal", "unbiased"))
        check_bool("ControlledRounding", "zero_restricted", self.zero_restricted)
        check_bool("ControlledRounding", "allow_non_zero_restricted", self.allow_non_zero_restricted)
        check_float("ControlledRounding", "time_limit", self.time_limit, low=0, low_open=True)
        check_bool("ControlledRounding", "intervals", self.intervals)

    def apply(self, table: Table, *, rng=None) -> RoundingResult:
        t0 = time.perf_counter()
        b = self.base
        bad = table.non_additive()
        if bad:
            raise InputError("controlled rounding needs an additive table; " + "; ".join(bad))
        a = table.value
        F = b * np.floor(a / b + 1e-12)
        e = a - F
        e[np.abs(e) < 1e-9] = 0.0
        e[np.abs(e - b) < 1e-9] = 0.0
        F = np.where(e == 0, np.rint(a), F)
        seed = None
        if self.method == "unbiased":
            ss, seed = seed_sequence(rng)
            z = _cox_unbiased(table, e, b, as_generator(ss))
            rounded, st, zr = F + b * z, "unbiased random rounding", True
        else:
            rounded, st, zr = self._optimal(table, F, e)
        res = RoundingResult(table, rounded, b, self.method, st, zr, 0.0, seed=seed,
                             params={"base": b, "method": self.method, "zero_restricted": self.zero_restricted})
        c = res.checks
        if not (c["additive"] and c["multiples"] and c["adjacent"]):
            raise SolverError(f"controlled rounding failed its check {c}")
        iv = None
        if self.intervals and table.n_cells <= self.max_interval_cells:
            iv = rounded_intervals(table, rounded, b)
        return RoundingResult(table, rounded, b, self.method, st, zr, time.perf_counter() - t0, iv, seed,
                              res.params)

    def _optimal(self, table: Table, F: np.ndarray, e: np.ndarray):
        b = self.base
        m = table.relations
        rhs = -(m @ F) / b
        rhs = np.rint(rhs)
        n = table.n_cells
        cost = b - 2 * e
        ub = (e > 0).astype(float)
        h = new_highs(time_limit=self.time_limit)
        pass_lp(h, m, cost=cost, col_lower=np.zeros(n), col_upper=ub, row_lower=rhs, row_upper=rhs)
        h.run()
        st = status(h)
        if st == "optimal":
            z = np.asarray(h.getSolution().col_value)
            if np.all(np.abs(z - np.rint(z)) < 1e-7):
                return F + b * np.rint(z), "optimal (LP vertex integral: network polytope)", True
            h.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                                    np.array([highspy.HighsVarType.kInteger] * n))
            h.run()
            st = status(h)
            if st == "optimal":
                z = np.asarray(h.getSolution().col_value)
                return F + b * np.rint(z), "optimal (ILP)", True
        if "time limit" in st:
            sol = np.asarray(h.getSolution().col_value) if h.getInfo().primal_solution_status == 2 else None
            if sol is not None and len(sol) == n:
                return F + b * np.rint(sol), "time limit reached: feasible rounding, not proven optimal", True
        if not self.allow_non_zero_restricted:
            raise SolverError(f"no zero-restricted controlled rounding found ({st}); set "
                              "allow_non_zero_restricted = true to let multiples of the base move by one base")
        # non-zero-restricted: multiples may move one base up or down (two columns each)
        mult = np.flatnonzero(e == 0)
        from scipy import sparse as sp
        a2 = sp.hstack([m, m[:, mult], -m[:, mult]]).tocsc()
        k = mult.size
        h2 = new_highs(time_limit=self.time_limit)
        lo_dn = np.where(F[mult] >= b, 1.0, 0.0)  # never below zero for non-negative tables
        pass_lp(h2, a2, cost=np.concatenate([cost, np.full(k, b), np.full(k, b)]),
                col_lower=np.zeros(n + 2 * k), col_upper=np.concatenate([ub, np.ones(k), lo_dn]),
                row_lower=rhs, row_upper=rhs, integrality=np.ones(n + 2 * k, bool))
        h2.run()
        st2 = status(h2)
        if st2 != "optimal":
            raise SolverError(f"no controlled rounding found, even non-zero-restricted ({st2})")
        z = np.asarray(h2.getSolution().col_value)
        zz = np.rint(z[:n])
        zz[mult] += np.rint(z[n:n + k]) - np.rint(z[n + k:])
        return F + b * zz, "no zero-restricted rounding exists: non-zero-restricted optimal rounding", False


def rounded_intervals(table: Table, rounded: np.ndarray, base: int) -> AuditResult:
    """Feasibility interval of every cell of the original given the rounded table.

    For integer data the original is in ``[R - (b-1), R + (b-1)]`` (and >= 0); the LP over
    the table's relations tightens this uniform interval where the relations allow.
    """
    integer = bool(np.all(np.abs(table.value - np.rint(table.value)) < 1e-9))
    slack = base - 1 if integer else base
    lo = rounded - slack
    if (table.value >= 0).all():
        lo = np.maximum(lo, 0.0)
    rt = Table(table.dims, table.hierarchies, rounded, table.freq, kind=table.kind, response=table.response)
    rt._relations = table.relations
    return audit(rt, np.ones(table.n_cells, bool), lower_bound=lo, upper_bound=rounded + slack)


# --------------------------------------------------------------------------- Cox's unbiased procedure
def _flow_arcs(table: Table):
    """The 2-D table as a circulation: one arc (tail, head) per cell, plus a return arc.

    Dimension 0 may be hierarchical, dimension 1 flat (the table is transposed otherwise).
    Nodes: R_u for every node u of dimension 0; C_(u, j) for every non-leaf u and category j;
    a sink T and source S. Cell (u, Total) is the arc parent(u) -> u (S -> root for the grand
    total); cell (leaf, j) is R_leaf -> C_(parent(leaf), j); cell (u, j) of a non-leaf u is
    C_(u, j) -> C_(parent(u), j), or -> T for the root.
    """
    if len(table.dims) != 2:
        raise InputError("the unbiased (Cox) rounding is for 2-D tables; use method = 'optimal' for 3-D tables")
    h0, h1 = table.hierarchies
    transpose = False
    if h1.n_levels > 1:
        if h0.n_levels > 1:
            raise InputError("the unbiased rounding allows one hierarchical dimension; both are hierarchical")
        h0, h1, transpose = h1, h0, True
    n0, n1 = len(h0), len(h1)
    node_ids: dict = {}

    def node(key) -> int:
        return node_ids.setdefault(key, len(node_ids))

    tails, heads, cells = [], [], []
    for u in range(n0):
        for j in range(n1):
            cell = (u * n1 + j) if not transpose else (j * n0 + u)
            if j == 0:  # column total
                tail = node(("S",)) if u == 0 else node(("R", int(h0.parent[u])))
                head = node(("R", u))
            elif h0.is_leaf[u]:
                tail = node(("R", u))
                head = node(("C", int(h0.parent[u]), j))
            else:
                tail = node(("C", u, j))
                head = node(("T",)) if u == 0 else node(("C", int(h0.parent[u]), j))
            tails.append(tail)
            heads.append(head)
            cells.append(cell)
    tails.append(node(("T",)))
    heads.append(node(("S",)))
    cells.append(-1)
    return np.array(tails), np.array(heads), np.array(cells), len(node_ids)


def _cox_unbiased(table: Table, e: np.ndarray, base: int, gen: np.random.Generator) -> np.ndarray:
    """Random walk on cycles of fractional arcs keeping E[z] (Cox 1987, steps 1-3).

    Works in units of 1/b: arc k carries u_k = e_k in [0, b] (z = u / b). For integer tables
    the u are integers and every step is an integer, so the arithmetic is exact.
    """
    if table.hierarchies[1].n_levels > 1 and table.hierarchies[0].n_levels > 1:
        raise InputError("the unbiased rounding allows one hierarchical dimension")
    tails, heads, cells, n_nodes = _flow_arcs(table)
    u = np.empty(tails.size)
    u[:-1] = e[cells[:-1]]
    u[-1] = e[0]  # return arc T -> S carries the grand total
    if np.all(np.abs(u - np.rint(u)) < 1e-9):
        u = np.rint(u)
    eps = 1e-9 * base
    frac = (u > eps) & (u < base - eps)
    adj: list[set] = [set() for _ in range(n_nodes)]
    for k in np.flatnonzero(frac):
        adj[tails[k]].add(k)
        adj[heads[k]].add(k)

    def settle(k: int) -> None:
        u[k] = 0.0 if u[k] < base / 2 else float(base)
        frac[k] = False
        adj[tails[k]].discard(int(k))
        adj[heads[k]].discard(int(k))

    while True:
        live = np.flatnonzero(frac)
        if live.size == 0:
            break
        # walk along fractional arcs until a node repeats: that closes a cycle
        start_arc = int(live[0])
        v = int(tails[start_arc])
        path_nodes = [v]
        path_arcs: list[int] = []
        seen = {v: 0}
        prev = -1
        dead_end = False
        while True:
            nxt = next((k for k in adj[v] if k != prev), None)
            if nxt is None:  # only reachable through round-off of non-integer data: settle the arc
                settle(prev)
                dead_end = True
                break
            w = int(heads[nxt]) if tails[nxt] == v else int(tails[nxt])
            path_arcs.append(nxt)
            prev = nxt
            if w in seen:
                cyc_arcs = path_arcs[seen[w]:]
                cyc_nodes = path_nodes[seen[w]:] + [w]
                break
            seen[w] = len(path_nodes)
            path_nodes.append(w)
            v = w
        if dead_end:
            continue
        direction = np.array([1.0 if tails[k] == cyc_nodes[i] else -1.0 for i, k in enumerate(cyc_arcs)])
        ca = np.array(cyc_arcs)
        up = np.min(np.where(direction > 0, base - u[ca], u[ca]))    # largest step +delta
        down = np.min(np.where(direction > 0, u[ca], base - u[ca]))  # largest step -delta
        # P(+up) = down / (up + down): expected change 0 (Cox 1987)
        step = up if gen.random() < down / (up + down) else -down
        u[ca] += step * direction
        for k in ca:
            if u[k] <= eps or u[k] >= base - eps:
                settle(int(k))
    out = np.empty(table.n_cells)
    out[cells[:-1]] = np.rint(u[:-1] / base)
    return out
