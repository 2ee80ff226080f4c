"""Modular (HiTaS-style) secondary suppression for hierarchical tables.

A hierarchical table is cut into non-hierarchical subtables: one per combination of a
non-leaf node in every dimension, holding that node and its children (so each subtable is a
flat table with its own totals). Subtables are protected top-down (by the summed depth of
their nodes) with the optimal model; a cell suppressed in one subtable is carried into every
other subtable that contains it as a sensitive cell (with a carried protection level), and a
subtable already processed is processed again when a later one suppresses one of its cells
(back-tracking). Cells a processed subtable left published cost more to suppress later, so
higher levels keep their pattern where possible.

**Single-child parents.** A parent with one child is the same cell as that child (its
relation says ``parent = child``), so, as in tau-Argus, such a pair is one cell: each chain of
single children is collapsed into its top node before the decomposition (the cell's cost is the
sum of its copies' costs, its protection the largest of theirs), and the pattern is copied back
to every copy. Without it a chain adds sub-tables in which a cell and its copy "protect" each
other and the back-tracking suppresses whole rows of secondaries.

Each subtable only knows its own relations; the whole table has more. The pattern is
therefore audited on the whole table and, where a primary falls short, extended by the
heuristic's perturbation LPs (which use every relation). A clean-up pass
(:func:`~sdckit.tables.cleanup.prune_secondaries`) then publishes the secondaries no primary
needs on the whole table, most expensive first, each removal proven by the attacker LPs;
the final pattern is audited exactly.

References
----------
de Wolf, P.-P. (2002). HiTaS: a heuristic approach to cell suppression in hierarchical
tables. In *Inference Control in Statistical Databases*, LNCS 2316, 74-82. Springer.
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, section 4.4.3. Wiley.
de Wolf, P.-P. and Hundepool, A. (2010). Three ways to deal with a set of linked SBS tables
using tau-Argus. *Privacy in Statistical Databases*, LNCS 6344, 66-73 (HiTaS in tau-Argus).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from .._validation import check_bool, check_float
from ..errors import SolverError
from .audit import a_priori_bounds, audit
from .cleanup import prune_secondaries
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

__all__ = ["ModularSuppression", "collapse_single_children", "subtables"]


def collapse_single_children(h: Hierarchy) -> tuple[Hierarchy, np.ndarray]:
    """The hierarchy with every chain of single children merged into its top node.

    Returns ``(reduced, node_map)``: ``node_map[i]`` is the reduced node that holds original
    node ``i`` (a node and its only child map to the same reduced node).
    """
    rep = np.arange(len(h))  # top node of the chain each node belongs to (pre-order: parents first)
    for i in range(1, len(h)):
        p = int(h.parent[i])
        if len(h.children[p]) == 1:
            rep[i] = rep[p]
    keep = np.flatnonzero(rep == np.arange(len(h)))
    new = np.full(len(h), -1)
    new[keep] = np.arange(keep.size)
    parents = [-1] + [int(new[rep[int(h.parent[i])]]) for i in keep[1:]]
    return Hierarchy([h.codes[i] for i in keep], parents), new[rep]


def _collapsed(table: Table):
    """The table with single-child chains merged (or None when it has none), and the cell map:
    ``cell_map[c]`` is the reduced cell holding original cell ``c``."""
    if not any(len(k) == 1 for h in table.hierarchies for k in h.children):
        return None, None
    red = [collapse_single_children(h) for h in table.hierarchies]
    hs = tuple(r[0] for r in red)
    shape = tuple(len(h) for h in hs)
    grids = np.meshgrid(*[r[1] for r in red], indexing="ij")
    cell_map = np.ravel_multi_index([g.reshape(-1) for g in grids], shape)
    # representative original cell of each reduced cell: the first (top) node of each chain
    keep = [np.unique(r[1], return_index=True)[1] for r in red]
    kg = np.meshgrid(*keep, indexing="ij")
    orig = np.ravel_multi_index([g.reshape(-1) for g in kg], table.shape)
    sub = Table(table.dims, hs, table.value[orig], table.freq[orig],
                top=None if table.top is None else table.top[orig], kind=table.kind, response=table.response)
    return sub, cell_map


def _merge_max(n: int, cell_map: np.ndarray, x: np.ndarray, fill: float = -np.inf) -> np.ndarray:
    out = np.full(n, fill)
    np.maximum.at(out, cell_map, x)
    return out


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
    cleanup : bool
        Publish the secondaries no primary needs on the whole table (most expensive first, each
        removal proven; :func:`~sdckit.tables.cleanup.prune_secondaries`).
    cleanup_seconds : float
        CPU seconds for the clean-up; when spent it stops and the state says "partial".
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
    cleanup: bool = True
    cleanup_seconds: float = 60.0

    def __post_init__(self) -> None:
        validate_common("ModularSuppression", self)
        check_bool("ModularSuppression", "cleanup", self.cleanup)
        check_float("ModularSuppression", "cleanup_seconds", self.cleanup_seconds, low=0)
        check_float("ModularSuppression", "carry_percent", self.carry_percent, low=0, low_open=True)
        check_float("ModularSuppression", "published_penalty", self.published_penalty, low=1)
        check_float("ModularSuppression", "mip_gap", self.mip_gap, low=0, high=1)

    def apply(self, table: Table, primary: Primary, *, weights: np.ndarray | None = None) -> SuppressionResult:
        t0 = time.perf_counter()
        check_inputs(table, primary)
        w = cell_costs(table, self.cost) if weights is None else np.asarray(weights, float)
        lb, ub = a_priori_bounds(table, self.lower_bound, self.upper_bound)
        red, cell_map = _collapsed(table)
        if red is None:
            sup, n_subs, n_solved, n_heuristic = self._decomposed(table, primary, w, lb, ub, t0)
            n_merged = 0
        else:  # single-child chains: one cell per chain (module docstring)
            n = red.n_cells
            sens = _merge_max(n, cell_map, primary.sensitive.astype(float), 0.0) > 0
            rp = Primary(sens, _merge_max(n, cell_map, primary.upper, 0.0), _merge_max(n, cell_map, primary.lower, 0.0),
                         _merge_max(n, cell_map, primary.sliding, 0.0),
                         np.where(sens, "merged", "").astype(object))
            rw = np.bincount(cell_map, weights=w, minlength=n)
            rlb = _merge_max(n, cell_map, lb)
            rub = -_merge_max(n, cell_map, -ub)
            rsup, n_subs, n_solved, n_heuristic = self._decomposed(red, rp, rw, rlb, rub, t0)
            sup = rsup[cell_map] | primary.sensitive
            n_merged = table.n_cells - n
        aud = audit(table, sup, primary=primary, lower_bound=lb, upper_bound=ub)
        repaired = False
        if not aud.ok:  # relations across subtables narrowed some interval: extend with the heuristic
            sup = heuristic_pattern(table, primary, w, lb, ub, None, start=sup)
            aud = audit(table, sup, primary=primary, lower_bound=lb, upper_bound=ub)
            repaired = True
            if not aud.ok:
                raise SolverError("modular suppression: the repaired pattern fails the audit; please report this table")
        clean = None
        if self.cleanup and (sup & ~primary.sensitive).any():
            clean = prune_secondaries(table, sup, primary, w, lb, ub, cpu_budget=self.cleanup_seconds)
            if clean.n_removed:
                sup = clean.suppressed
                aud = audit(table, sup, primary=primary, lower_bound=lb, upper_bound=ub)
                if not aud.ok:
                    raise SolverError("modular suppression: the cleaned pattern fails the audit; rerun with "
                                      "cleanup = false and please report this table")
        timed_out = n_heuristic > 0
        state = (f"modular: {n_subs} subtables, {n_solved} solved optimally"
                 + (f" ({n_merged} cells merged with their single-child copies)" if n_merged else "")
                 + (f", {n_heuristic} by the heuristic after the time limit" if timed_out else "")
                 + ("; extended on the whole table after the audit" if repaired else "")
                 + (f"; {clean.statement()}" if clean is not None else ""))
        cost = float(w[sup & ~primary.sensitive].sum())
        return SuppressionResult(table, primary, sup, "modular", cost, state, False, float("nan"), aud,
                                 time.perf_counter() - t0, n_iterations=n_solved,
                                 params={"cost": self.cost, "time_limit": self.time_limit,
                                         "carry_percent": self.carry_percent, "n_subtables": n_subs,
                                         "cleanup": self.cleanup,
                                         "n_cleaned": 0 if clean is None else clean.n_removed,
                                         "cleanup_complete": None if clean is None else clean.complete})

    def _decomposed(self, table: Table, primary: Primary, w, lb, ub, t0: float):
        """The sub-table pass: returns ``(pattern, n_subtables, n_solved, n_heuristic)``."""
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
        n_solved, n_heuristic = 0, 0
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
        return sup, len(subs), n_solved, n_heuristic
