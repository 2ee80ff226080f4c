"""Modular (HiTaS-style) secondary suppression for hierarchical tables.

A hierarchical table is cut into non-hierarchical subtables: one per combination of a
non-leaf node in every dimension, holding that node and its children (so each subtable is a
flat table with its own totals). Subtables are protected top-down (by the summed depth of
their nodes) with the optimal model; a cell suppressed in one subtable is carried into every
other subtable that contains it as a sensitive cell (with a carried protection level), and a
subtable already processed is processed again when a later one suppresses one of its cells
(back-tracking). Cells a processed subtable left published cost more to suppress later, so
higher levels keep their pattern where possible.

Each subtable only knows its own relations; the whole table has more. The pattern is
therefore audited on the whole table and, where a primary falls short, extended by the
heuristic's perturbation LPs (which use every relation) before the final audit.

References
----------
de Wolf, P.-P. (2002). HiTaS: a heuristic approach to cell suppression in hierarchical
tables. In *Inference Control in Statistical Databases*, LNCS 2316, 74-82. Springer.
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, section 4.4.3. Wiley.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from .._validation import check_float
from ..errors import SolverError
from .audit import a_priori_bounds, audit
from .rules import Primary
from .suppression import (
    SuppressionResult,
    cell_costs,
    check_inputs,
    heuristic_pattern,
    optimal_pattern,
    validate_common,
)
from .table import Hierarchy, Table

__all__ = ["ModularSuppression", "subtables"]


def subtables(table: Table) -> list[tuple[tuple[int, ...], np.ndarray, tuple[Hierarchy, ...]]]:
    """The non-hierarchical subtables, top-down.

    Returns ``(nodes, cells, hierarchies)`` per subtable: the non-leaf node chosen in every
    dimension, the flat indices of its cells in the subtable's C order, and the subtable's
    one-level hierarchies (the node as total, its children as categories).
    """
    per_dim = []
    for h in table.hierarchies:
        per_dim.append([(u, [u] + list(h.children[u])) for u in range(len(h)) if h.children[u]])
    out = []
    for combo in np.ndindex(*[len(x) for x in per_dim]):
        nodes = tuple(per_dim[d][k][0] for d, k in enumerate(combo))
        members = [per_dim[d][k][1] for d, k in enumerate(combo)]
        grids = np.meshgrid(*members, indexing="ij")
        cells = np.ravel_multi_index([g.reshape(-1) for g in grids], table.shape)
        hs = tuple(Hierarchy([h.codes[i] for i in mem], [-1] + [0] * (len(mem) - 1))
                   for h, mem in zip(table.hierarchies, members))
        out.append((nodes, cells, hs))
    depth = [sum(int(h.depth[u]) for h, u in zip(table.hierarchies, nodes)) for nodes, _, _ in out]
    order = np.argsort(depth, kind="stable")
    return [out[k] for k in order]


@dataclass(frozen=True)
class ModularSuppression:
    """HiTaS-style suppression: optimal model on each non-hierarchical subtable, top-down.

    Parameters
    ----------
    cost : {"value", "freq", "log", "unity"}
    time_limit : float
        Seconds for the whole run; subtables left when it is spent are protected by the
        heuristic, and the result is marked not proven optimal (it never is: the modular
        approach is itself a heuristic for the whole table).
    carry_percent : float
        Protection level (percent of the value; at least 1 for frequency tables) given to a
        secondary cell carried into another subtable.
    published_penalty : float
        Cost factor for suppressing a cell that an already-processed subtable published.
    mip_gap, lower_bound, upper_bound
        As for :class:`~sdckit.tables.suppression.OptimalSuppression`.

    References
    ----------
    de Wolf (2002), HiTaS; see the module docstring.
    """

    cost: str = "value"
    time_limit: float = 300.0
    carry_percent: float = 10.0
    published_penalty: float = 100.0
    mip_gap: float = 1e-6
    lower_bound: float | None = None
    upper_bound: float | None = None

    def __post_init__(self) -> None:
        validate_common("ModularSuppression", self)
        check_float("ModularSuppression", "carry_percent", self.carry_percent, low=0, low_open=True)
        check_float("ModularSuppression", "published_penalty", self.published_penalty, low=1)
        check_float("ModularSuppression", "mip_gap", self.mip_gap, low=0, high=1)

    def apply(self, table: Table, primary: Primary, *, weights: np.ndarray | None = None) -> SuppressionResult:
        t0 = time.perf_counter()
        check_inputs(table, primary)
        w = cell_costs(table, self.cost) if weights is None else np.asarray(weights, float)
        lb, ub = a_priori_bounds(table, self.lower_bound, self.upper_bound)
        subs = subtables(table)
        member: dict[int, list[int]] = {}
        for k, (_, cells, _) in enumerate(subs):
            for c in cells.tolist():
                member.setdefault(c, []).append(k)
        sup = primary.sensitive.copy()
        published_seen = np.zeros(table.n_cells, bool)
        # carried level: carry_percent of the value, >= 1 for counts, never below zero
        a = np.abs(table.value)
        carry = self.carry_percent / 100.0 * a
        if table.kind == "frequency":
            carry = np.maximum(carry, 1.0)
        queue, queued, processed = deque(range(len(subs))), set(range(len(subs))), set()
        n_solved, n_heuristic, timed_out = 0, 0, False
        while queue:
            k = queue.popleft()
            queued.discard(k)
            nodes, cells, hs = subs[k]
            sens = sup[cells]
            processed.add(k)
            if not sens.any():
                published_seen[cells] = True
                continue
            sub = Table(table.dims, hs, table.value[cells], table.freq[cells],
                        top=None if table.top is None else table.top[cells], kind=table.kind,
                        response=table.response)
            is_prim = primary.sensitive[cells]
            up = np.where(is_prim, primary.upper[cells], np.where(sens, carry[cells], 0.0))
            lo = np.where(is_prim, primary.lower[cells], np.where(sens, carry[cells], 0.0))
            lo = np.where(sub.value >= 0, np.minimum(lo, sub.value), lo)
            sprim = Primary(sens, up, lo, np.zeros(cells.size), np.where(sens, "carried", ""))
            ws = w[cells] * np.where(published_seen[cells] & ~sens, self.published_penalty, 1.0)
            left = self.time_limit - (time.perf_counter() - t0)
            if left > 0:
                pattern, *_ = optimal_pattern(sub, sprim, ws, lb[cells], ub[cells], time_limit=left,
                                               mip_gap=self.mip_gap, max_iterations=500)
                n_solved += 1
            else:
                timed_out = True
                pattern = heuristic_pattern(sub, sprim, ws, lb[cells], ub[cells], None)
                n_heuristic += 1
            new = cells[pattern & ~sens]
            sup[new] = True
            published_seen[cells[~pattern]] = True
            for c in new.tolist():  # back-tracking: processed subtables holding a new suppression
                for j in member[c]:
                    if j != k and j in processed and j not in queued:
                        queue.append(j)
                        queued.add(j)
        aud = audit(table, sup, primary=primary, lower_bound=lb, upper_bound=ub)
        repaired = False
        if not aud.ok:  # relations across subtables narrowed some interval: extend with the heuristic
            sup = heuristic_pattern(table, primary, w, lb, ub, None, start=sup)
            aud = audit(table, sup, primary=primary, lower_bound=lb, upper_bound=ub)
            repaired = True
            if not aud.ok:
                raise SolverError("modular suppression: the repaired pattern fails the audit; please report this table")
        state = (f"modular: {len(subs)} subtables, {n_solved} solved optimally"
                 + (f", {n_heuristic} by the heuristic after the time limit" if timed_out else "")
                 + ("; extended on the whole table after the audit" if repaired else ""))
        cost = float(w[sup & ~primary.sensitive].sum())
        return SuppressionResult(table, primary, sup, "modular", cost, state, False, float("nan"), aud,
                                 time.perf_counter() - t0, n_iterations=n_solved,
                                 params={"cost": self.cost, "time_limit": self.time_limit,
                                         "carry_percent": self.carry_percent, "n_subtables": len(subs)})
