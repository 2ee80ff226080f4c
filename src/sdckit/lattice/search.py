"""Search the generalisation lattice: exact (proven optimum), exhaustive, bounded heuristic, Pareto.

The exact search has two phases.

A. **The satisfying region** (only when every model is monotone for the suppression setting,
   see :mod:`.models`). Satisfying nodes form an up-set, failing nodes a down-set. As in Flash
   (Kohlmayer et al. 2012), nodes are visited by height; from each untagged node a path of
   untagged nodes is built upwards and binary-searched for its lowest satisfying node; a
   satisfying node tags its whole up-set, a failing node its whole down-set (predictive
   tagging, :func:`._kernels.tag`). Every minimal satisfying node is checked (it cannot be
   tagged from another node). Nodes whose projections on groups of quasi-identifiers
   already force more suppression than allowed are tagged failing before the walk
   (:meth:`.Problem.projection_failing`).

B. **The optimum over the satisfying region** by best-first branch and bound. The metric
   need not be monotone (discernibility with suppression is not); it needs a lower bound
   ``LB(N)`` valid for every node above ``N`` (:mod:`.metrics`). Starting from the minimal
   satisfying nodes (every satisfying node lies above one), nodes are popped in order of the
   bound inherited from the node below; the search stops when the smallest bound left is not
   below the best metric found: every unchecked satisfying node lies above a node whose bound
   is at least that metric, so the best found is the proven optimum.

With a non-monotone model, phase B runs from the bottom node over the whole lattice, checking
the models at every node it visits (the bound still prunes). The heuristic is the same
branch and bound with a node and time budget and a greedy first solution; when the budget
runs out it reports the best node found and the smallest bound left in the queue, a lower
bound of the optimum.

References
----------
Kohlmayer, F., Prasser, F., Eckert, C., Kemper, A., Kuhn, K. A. (2012). Flash: efficient,
stable and optimal k-anonymity. *PASSAT/SocialCom 2012*, 708-717.
El Emam, K., Dankar, F. K., Issa, R., et al. (2009). A globally optimal k-anonymity method
for the de-identification of health data. *JAMIA* 16(5), 670-682 (OLA).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, ParameterError
from . import _kernels as K
from .metrics import (
    METRICS,
    PAYOUT_METRICS,
    class_count_bound,
    has_bound,
    lower_bound,
    metric_value,
    partition_bound,
)
from .metrics_arx import NEEDS_SENSITIVE
from .models import Model, NodeView
from .problem import Problem

#: largest lattice the exact search keeps a status array for
MAX_EXACT_NODES = 50_000_000


def _min_size(model: Model, problem: Problem) -> int:
    """The smallest size a kept class may have under ``model`` on this problem's data."""
    fn = getattr(model, "min_class_size_for", None)
    return int(fn(problem)) if fn is not None else int(model.min_class_size())


@dataclass(frozen=True)
class NodeEval:
    """One checked node: does it satisfy the models, what it suppresses, its metric and bound."""

    node: int
    levels: tuple
    satisfied: bool
    n_suppressed: int
    n_classes: int
    metric: float | None
    bound: float
    average_risk: float
    max_risk: float
    failing: dict = field(default_factory=dict)
    n_all_classes: int = -1


class Evaluator:
    """Checks nodes of a problem against models, a suppression limit and a metric."""

    def __init__(self, problem: Problem, models: Sequence[Model], suppression: float, metric: str, *,
                 cost_benefit=None) -> None:
        if metric not in METRICS:
            raise ParameterError(f"metric {metric!r} is not known; use one of {', '.join(METRICS)}.",
                                 param="metric", rule="one of " + ", ".join(METRICS), value=metric)
        if not models:
            raise ParameterError("give at least one privacy model (for example k-anonymity, --k 5).")
        if not 0.0 <= suppression <= 1.0:
            raise ParameterError(f"the suppression limit must be a share of n in [0, 1]; got {suppression}.",
                                 param="suppression", rule="a number in [0, 1]", value=suppression)
        for m in models:
            if m.needs_sensitive and problem.sensitive is None:
                raise InputError(f"{m.describe()} needs a sensitive attribute; name it (--sensitive).")
            if m.needs_population and problem.population is None:
                raise InputError(f"{m.describe()} needs a population table.")
        if metric in NEEDS_SENSITIVE and problem.sensitive is None:
            raise InputError(f"the {metric} metric needs a response variable: name the sensitive attribute "
                             "(--sensitive).")
        self.problem, self.models, self.metric = problem, list(models), metric
        #: the amounts of the publisher payout metric: a profitability model's, else ``cost_benefit``
        self.cost_benefit = cost_benefit
        if metric in PAYOUT_METRICS:
            from .profitability import cost_benefit_of  # noqa: PLC0415

            self.cost_benefit = cost_benefit_of(self.models, cost_benefit)
        self.suppression = float(suppression)
        # records that may be suppressed: floor(share * n)
        self.max_suppressed = int(math.floor(self.suppression * problem.n + 1e-9))
        self.k_min = max([_min_size(m, problem) for m in models if m.class_based] or [1])
        self.monotone = all(m.monotone(self.max_suppressed > 0) for m in models)
        self._names = [m.describe() for m in models]
        self.evals: dict[int, NodeEval] = {}
        self.nodes_checked = 0
        #: largest sub-lattice of the projections that pre-tag failing nodes (0: none)
        self.projection_nodes = 128
        #: per node, a lower bound of the records it suppresses (from projections), or None
        self.suppressed_bound: np.ndarray | None = None
        #: projections added by :meth:`add_projection`: sorted QI group -> (the group in its
        #: order, suppressed, classes, sum of squared class sizes, largest class) per sub-node
        self.projection_stats: dict[tuple, tuple] = {}

    def add_projection(self, dims: Sequence[int]) -> bool:
        """Count the projection on the quasi-identifiers ``dims``
        (:meth:`.Problem.projection_stats`): raise ``suppressed_bound`` by the records in its
        classes of fewer than ``k_min`` records and keep its class statistics for the
        partition bound of :func:`open_bounds`. False when its keys would not fit one int64."""
        p = self.problem
        dims = [int(d) for d in dims]
        if float(np.log2(p.ncodes.max(axis=1).astype(float))[dims].sum()) >= 61.0:
            return False
        stats = p.projection_stats(dims, self.k_min)
        if self.k_min > 1:
            if self.suppressed_bound is None:
                self.suppressed_bound = np.zeros(p.n_nodes, dtype=np.int64)
            p.fold_projection(self.suppressed_bound, dims, stats[0])
        self.projection_stats[tuple(sorted(dims))] = (dims, *stats)
        return True

    def evaluate(self, node: int) -> NodeEval:
        e = self.evals.get(node)
        if e is not None:
            return e
        p = self.problem
        levels = p.levels_of(node)
        view = NodeView(p, levels, p.table(levels))
        size = view.table.class_size
        ok = None
        failing = {}
        fail_masks = []
        for m, name in zip(self.models, self._names):
            if m.class_based:
                okm = m.class_ok(view)
                fail_masks.append((name, okm))
                failing[name] = 0  # (the records it suppresses, set below; keeps the models' order)
                ok = okm if ok is None else ok & okm
        if ok is None:
            ok = np.ones(size.size, dtype=bool)
        # DM = sum over kept classes |E|^2 + n x suppressed, and its bound, in one pass
        n_sup, n_kept_classes, min_kept, dm, dm_bound = K.class_stats(size, ok, p.n, self.k_min)
        if len(fail_masks) == 1:  # one class-based model: it suppresses what the node suppresses
            failing[fail_masks[0][0]] = int(n_sup)
        else:
            for name, okm in fail_masks:
                failing[name] = int(size[~okm].sum())
        sat = n_sup <= self.max_suppressed
        for m, name in zip(self.models, self._names):
            if not m.class_based:
                good, _ = m.global_ok(view, ok)
                failing[name] = 0 if good else -1
                sat = sat and good
        n_kept = p.n - n_sup
        avg_risk = n_kept_classes / n_kept if n_kept else 0.0
        max_risk = 1.0 / float(min_kept) if n_kept_classes else 0.0
        if self.metric == "discernibility":
            value, bound = (float(dm) if sat else None), float(dm_bound)
        else:
            value = metric_value(self.metric, view, ok, self.cost_benefit) if sat else None
            bound = lower_bound(self.metric, view, self.k_min, self.cost_benefit)
        e = NodeEval(node, tuple(int(v) for v in levels), bool(sat), n_sup, n_kept_classes, value, bound,
                     avg_risk, max_risk, failing, int(size.size))
        self.evals[node] = e
        self.nodes_checked += 1
        return e

    def binding_message(self, e: NodeEval) -> str:
        """Which model binds at a failing node (used for the top node)."""
        parts = []
        for name, n_fail in e.failing.items():
            if n_fail == -1:
                parts.append(f"{name} fails on the kept records")
            elif n_fail > self.max_suppressed:
                parts.append(f"{name} would suppress {n_fail} records")
        if not parts:
            parts.append(f"together the models suppress {e.n_suppressed} records")
        return "; ".join(parts)

    def successors(self, node: int) -> list[int]:
        p = self.problem
        lv = p.levels_of(node)
        return [node + int(p.strides[j]) for j in range(len(lv)) if lv[j] < p.heights[j]]

    def predecessors(self, node: int) -> list[int]:
        p = self.problem
        lv = p.levels_of(node)
        return [node - int(p.strides[j]) for j in range(len(lv)) if lv[j] > 0]


@dataclass(frozen=True)
class SearchResult:
    """The node chosen by a search and the evidence of how it was found."""

    qis: tuple
    levels: tuple
    node: int
    metric: str
    value: float
    n_suppressed: int
    n_classes: int
    nodes_checked: int
    n_nodes: int
    optimal: bool
    bound: float
    method: str
    seconds: float
    n_patterns: int
    #: progress events of the anytime search (best, bound, gap at points of the run)
    events: tuple = ()

    def level_map(self) -> dict[str, int]:
        return dict(zip(self.qis, self.levels))

    def to_dict(self) -> dict:
        return {"levels": self.level_map(), "node": self.node, "metric": self.metric, "value": self.value,
                "n_suppressed": self.n_suppressed, "n_classes": self.n_classes,
                "nodes_checked": self.nodes_checked, "n_nodes": self.n_nodes, "optimal": self.optimal,
                "bound": self.bound, "method": self.method, "seconds": self.seconds,
                "n_patterns": self.n_patterns, **({"events": list(self.events)} if self.events else {})}


def _result(ev: Evaluator, best: NodeEval, optimal: bool, bound: float, method: str, t0: float) -> SearchResult:
    return SearchResult(tuple(ev.problem.qis), best.levels, best.node, ev.metric, float(best.metric),
                        best.n_suppressed, best.n_classes, ev.nodes_checked, ev.problem.n_nodes,
                        bool(optimal), float(bound), method, time.perf_counter() - t0, ev.problem.m)


def _no_solution(ev: Evaluator) -> InputError:
    top = ev.evaluate(ev.problem.node_id(ev.problem.top))
    return InputError(f"no node satisfies {', '.join(m.describe() for m in ev.models)} within the "
                      f"suppression limit of {ev.max_suppressed} records ({ev.suppression:g} of n): at the "
                      f"top node {ev.binding_message(top)}; raise the suppression limit or relax the model.")


def _better(e: NodeEval, best: NodeEval | None) -> bool:
    if best is None:
        return True
    return (e.metric, e.node) < (best.metric, best.node)


def exhaustive(ev: Evaluator) -> SearchResult:
    """Check every node (the reference the other searches are tested against)."""
    t0 = time.perf_counter()
    p = ev.problem
    if p.n_nodes > MAX_EXACT_NODES:
        raise InputError(f"the lattice has {p.n_nodes} nodes, too many to check each; use the exact or heuristic search.")
    best = None
    for node in range(p.n_nodes):
        e = ev.evaluate(node)
        if e.satisfied and _better(e, best):
            best = e
    if best is None:
        raise _no_solution(ev)
    return _result(ev, best, True, best.metric, "exhaustive", t0)


def _heights(p: Problem) -> np.ndarray:
    ids = np.arange(p.n_nodes, dtype=np.int64)
    h = np.zeros(p.n_nodes, dtype=np.int64)
    for j in range(len(p.qis)):
        h += (ids // p.strides[j]) % p.radix[j]
    return h


def node_heights(p: Problem) -> np.ndarray:
    """The height (sum of levels) of every node id."""
    return _heights(p)


def _satisfying_region(ev: Evaluator, deadline: float, best: NodeEval | None,
                       failing: np.ndarray | None = None) -> tuple[np.ndarray, NodeEval | None]:
    """Phase A: tag every node satisfying (1) or failing (2), except where the bound prunes.

    ``pruned`` marks the up-set of every checked node whose bound is not below the best
    metric found: no node there can improve on it, so its status is not needed. ``failing``
    marks nodes known to fail beforehand (a down-set, :meth:`.Problem.projection_failing`).
    """
    p = ev.problem
    status = np.zeros(p.n_nodes, dtype=np.int8)
    if failing is not None:
        status[failing] = 2
    pruned = np.zeros(p.n_nodes, dtype=np.int8)
    strides, radix = p.strides, p.radix
    rel = 1.0 / np.maximum(p.heights, 1)
    for e in list(ev.evals.values()):  # nodes checked before (top, first dive)
        K.tag(status, e.node, strides, radix, np.int8(1 if e.satisfied else 2), e.satisfied)
    for e in list(ev.evals.values()):
        if best is not None and e.bound >= best.metric:
            K.tag(pruned, e.node, strides, radix, np.int8(1), True)
    order = np.argsort(_heights(p), kind="stable")
    pos = 0
    while True:
        pos = K.next_open(order, pos, status, pruned)
        if pos < 0:
            break
        start = int(order[pos])
        pos += 1
        if time.perf_counter() > deadline:
            raise _Interrupted(status, pruned, best)
        path = K.flash_path(start, status, pruned, strides, radix, rel).tolist()
        lo, hi = 0, len(path) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            node = path[mid]
            if pruned[node]:
                hi = mid - 1      # the path above is pruned too
                continue
            st = status[node]
            if st == 0:
                e = ev.evaluate(node)
                sat = e.satisfied
                K.tag(status, node, strides, radix, np.int8(1 if sat else 2), sat)
                if sat and _better(e, best):
                    improved = best is None or e.metric < best.metric
                    best = e
                    if improved:
                        # a better incumbent: every checked node whose bound reaches it now
                        # prunes its up-set too
                        for c in ev.evals.values():
                            if c.bound >= best.metric and not pruned[c.node]:
                                K.tag(pruned, c.node, strides, radix, np.int8(1), True)
                if best is not None and e.bound >= best.metric:
                    K.tag(pruned, node, strides, radix, np.int8(1), True)
            else:
                sat = st == 1
            if sat:
                hi = mid - 1
            else:
                lo = mid + 1
    status[pruned.astype(bool) & (status == 0)] = 3
    return status, best


class _Interrupted(Exception):
    """Phase A ran out of time: the tags so far and the best node found."""

    def __init__(self, status: np.ndarray, pruned: np.ndarray, best: NodeEval | None) -> None:
        super().__init__("time limit")
        self.status, self.pruned, self.best = status, pruned, best


def open_bounds(ev: Evaluator, status: np.ndarray, pruned: np.ndarray,
                chunk: int = 1 << 18) -> tuple[np.ndarray, np.ndarray]:
    """The nodes still open when a search stops early and a lower bound of the metric at each.

    A node is open when it is not checked, not known to fail (``status`` 2) and not pruned
    (``pruned`` 1: no node there can improve on the best found). Its metric, if it satisfies,
    is at least the largest bound of any checked node below it
    (:func:`._kernels.inherited_bounds`) and, for discernibility, at least the class-count
    bound (:func:`.metrics.class_count_bound`) with ``C`` the fewest of its label combinations
    and the classes of any checked node below it (:func:`._kernels.inherited_min`), and with
    the records it must suppress by its projections (``ev.suppressed_bound``) and, when every
    model is class-based and monotone with suppression, by the most any checked node above it
    suppresses, costing ``n`` each; and at least the partition bound
    (:func:`.metrics.partition_bound`) of every two complementary projections among
    ``ev.projection_stats``, each way round. Returns the open node ids (ascending) and these
    bounds.
    Lattice-sized work is done in ``chunk``-sized pieces: besides the inherited arrays (8
    bytes a node each) it allocates only per open node.
    """
    p = ev.problem
    checked = np.fromiter(ev.evals.keys(), dtype=np.int64, count=len(ev.evals))
    is_open = (status != 2) & (pruned == 0)
    is_open[checked] = False
    ids = np.flatnonzero(is_open)
    del is_open
    if ids.size == 0:
        return ids, np.empty(0)
    evals = list(ev.evals.values())
    arr = np.full(p.n_nodes, -np.inf)
    arr[checked] = [e.bound for e in evals]
    bounds = K.inherited_bounds(arr, p.strides, p.radix)[ids]
    if ev.metric != "discernibility":
        return ids, bounds
    arr.fill(np.inf)
    arr[checked] = [e.n_all_classes for e in evals]
    cls_below = K.inherited_min(arr, p.strides, p.radix)[ids]
    sup_above = None
    if all(m.class_based and m.monotone(True) for m in ev.models):
        # with models monotone under suppression a record suppressed at a node is suppressed
        # at every node below it (its class there is a subset of a failing class, and a
        # satisfying class keeps satisfying when merged): the records a checked node
        # suppresses bound those of every node below. The dual lattice (levels h - l, node
        # id n_nodes - 1 - id) turns "the most of any checked node above" into the kernel's
        # "the most of any checked node below".
        arr.fill(-np.inf)
        arr[p.n_nodes - 1 - checked] = [e.n_suppressed for e in evals]
        sup_above = K.inherited_bounds(arr, p.strides, p.radix)[p.n_nodes - 1 - ids]
    del arr
    all_qis = tuple(range(len(p.qis)))
    pairs = [(ev.projection_stats[g1], ev.projection_stats[g2]) for g1 in ev.projection_stats
             for g2 in ev.projection_stats if tuple(sorted(g1 + g2)) == all_qis]
    for a in range(0, ids.size, chunk):
        part = ids[a:a + chunk]
        combos = np.ones(part.size)
        for j in range(len(p.qis)):
            combos *= p.ncodes[j][(part // p.strides[j]) % p.radix[j]]
        c_max = np.minimum(combos, cls_below[a:a + chunk])
        s_lo = (np.zeros(part.size) if ev.suppressed_bound is None
                else ev.suppressed_bound[part].astype(float))
        if sup_above is not None:
            above = sup_above[a:a + chunk]
            s_lo = np.maximum(s_lo, np.where(np.isfinite(above), above, 0.0))
        np.maximum(bounds[a:a + chunk], class_count_bound(p.n, ev.k_min, ev.max_suppressed, c_max, s_lo),
                   out=bounds[a:a + chunk])
        for (dims1, _, _, sq1, big1), (dims2, _, cls2, _, _) in pairs:
            sub1, sub2 = p.sub_ids(part, dims1), p.sub_ids(part, dims2)
            np.maximum(bounds[a:a + chunk], partition_bound(p.n, ev.max_suppressed, sq1[sub1], big1[sub1],
                                                             cls2[sub2], s_lo), out=bounds[a:a + chunk])
    return ids, bounds


def _interrupted_bound(ev: Evaluator, stop: _Interrupted) -> float:
    """A lower bound of the optimum when phase A stops early: the least of
    :func:`open_bounds` over the open nodes, or the best found (the bottom node is checked
    first: its bound holds for every node)."""
    e0 = ev.evaluate(0)  # the bottom node's bound holds for every node
    if e0.satisfied and _better(e0, stop.best):
        stop.best = e0
    best = stop.best.metric if stop.best is not None else np.inf
    _, bounds = open_bounds(ev, stop.status, stop.pruned)
    if bounds.size == 0:
        return float(best)
    return float(min(best, bounds.min()))


def open_region_bound(ev: Evaluator, status: np.ndarray, pruned: np.ndarray,
                      best: NodeEval | None) -> float:
    """A lower bound of the optimum when a search stops early with ``status`` (2: known to
    fail) and ``pruned`` (1: no node there can improve on ``best``) over the node ids: the
    least, over the nodes still open, of the bounds :func:`open_bounds` describes, or
    the best found."""
    return _interrupted_bound(ev, _Interrupted(status, pruned, best))


def _dive(ev: Evaluator, best: NodeEval | None, deadline: float, max_nodes: int | None) -> NodeEval | None:
    """A first satisfying node (monotone models): binary search on one bottom-top path that
    raises the QI with the lowest relative level first, then local moves while they improve."""
    p = ev.problem
    path, lv = [0], np.zeros(len(p.qis), dtype=np.int64)
    rel = 1.0 / np.maximum(p.heights, 1)
    while np.any(lv < p.heights):
        j = int(np.argmin(np.where(lv < p.heights, lv * rel, np.inf)))
        lv[j] += 1
        path.append(p.node_id(lv))
    lo, hi, found = 0, len(path) - 1, len(path) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if ev.evaluate(path[mid]).satisfied:
            found, hi = mid, mid - 1
        else:
            lo = mid + 1
    cur = ev.evaluate(path[found])
    if not cur.satisfied:
        return best
    if _better(cur, best):
        best = cur
    improved = ev.max_suppressed > 0  # without suppression the bound prunes well from the start
    while improved and time.perf_counter() < deadline and (max_nodes is None or ev.nodes_checked < max_nodes):
        improved = False
        for q in ev.predecessors(cur.node):
            e = ev.evaluate(q)
            if e.satisfied and _better(e, cur):
                cur, improved = e, True
                break
        if _better(cur, best):
            best = cur
    return best


def _branch_and_bound(ev: Evaluator, starts: list[tuple[float, int]], best: NodeEval | None,
                      expand_any: bool, deadline: float, max_nodes: int | None,
                      failing: np.ndarray | None = None) -> tuple[NodeEval | None, bool, float]:
    """Phase B: best-first branch and bound from ``starts``; returns (best, proven, bound).

    ``failing`` marks nodes known to fail (from projections): they are passed through
    without a check, their successors inheriting the bound they were reached with (valid for
    every node above the node that set it).
    """
    heap = list(starts)
    heapq.heapify(heap)
    done: set[int] = set()
    while heap:
        prio, node = heap[0]
        if best is not None and prio >= best.metric:
            return best, True, best.metric
        if time.perf_counter() > deadline or (max_nodes is not None and ev.nodes_checked >= max_nodes):
            bound = min(prio, best.metric) if best is not None else prio
            return best, False, bound
        heapq.heappop(heap)
        if node in done:
            continue
        done.add(node)
        if best is not None and node not in ev.evals:
            # a bound inherited from any checked node below prunes without checking
            if any((q in ev.evals and ev.evals[q].bound >= best.metric) for q in ev.predecessors(node)):
                continue
        if failing is not None and failing[node] and node not in ev.evals:
            for s in ev.successors(node):
                if s not in done:
                    heapq.heappush(heap, (prio, s))
            continue
        e = ev.evaluate(node)
        if e.satisfied and _better(e, best):
            best = e
        if best is None or e.bound < best.metric:
            for s in ev.successors(node):
                if s not in done:
                    heapq.heappush(heap, (e.bound, s))
        if not expand_any and not e.satisfied:  # pragma: no cover - a monotonicity violation
            raise RuntimeError(f"node {e.levels} is tagged satisfying but fails the models")
    return best, True, best.metric if best is not None else np.inf


def exact(ev: Evaluator, *, time_limit: float | None = None) -> SearchResult:
    """The proven optimum (see the module notes); refuses metrics without a lower bound."""
    t0 = time.perf_counter()
    p = ev.problem
    if not has_bound(ev.metric):
        raise ParameterError(f"metric {ev.metric!r} is not monotone and has no lower bound, so the exact "
                             "search cannot prune with it; use search='exhaustive' or 'heuristic'.",
                             param="metric", rule="a monotone metric for exact search", value=ev.metric)
    if p.n_nodes > MAX_EXACT_NODES:
        raise InputError(f"the lattice has {p.n_nodes} nodes (more than {MAX_EXACT_NODES}); use the "
                         "heuristic search, which reports the best node found and a bound.")
    deadline = t0 + time_limit if time_limit else np.inf
    top = ev.evaluate(p.node_id(p.top))
    if ev.monotone:
        if not top.satisfied:
            raise _no_solution(ev)
        best = _dive(ev, top, deadline, None)
        # nodes that fail on a projection need no check (the class-size part of the models)
        failing = None
        if ev.projection_nodes and ev.k_min > 1:
            ev.suppressed_bound = p.projection_suppressed_bound(ev.k_min, ev.projection_nodes)
            failing = ev.suppressed_bound > ev.max_suppressed
        try:
            status, best = _satisfying_region(ev, deadline, best, failing)
        except _Interrupted as stop:
            bound = _interrupted_bound(ev, stop)
            if stop.best is None:
                raise InputError(f"the time limit of {time_limit} s ran out before a satisfying node was "
                                 "found; raise --time-limit or use the heuristic search.") from None
            return _result(ev, stop.best, False, bound, "exact (time limit)", t0)
        starts = []
        for node, e in ev.evals.items():
            if e.satisfied:
                if _better(e, best):
                    best = e
                if status[node] == 1 and all(status[q] == 2 for q in ev.predecessors(node)):
                    starts.append((e.bound, node))
        best, proven, bound = _branch_and_bound(ev, starts, best, False, deadline, None)
    else:
        bottom = 0
        best = top if top.satisfied else None
        # the class-size part of the models still fails nodes by projection (a down-set), which
        # the branch and bound passes through unchecked
        failing = None
        if ev.projection_nodes and ev.k_min > 1:
            ev.suppressed_bound = p.projection_suppressed_bound(ev.k_min, ev.projection_nodes)
            failing = ev.suppressed_bound > ev.max_suppressed
        best, proven, bound = _branch_and_bound(ev, [(-np.inf, bottom)], best, True, deadline, None, failing)
    if best is None:
        raise _no_solution(ev)
    return _result(ev, best, proven, bound, "exact" if proven else "exact (time limit)", t0)


def heuristic(ev: Evaluator, *, max_nodes: int = 2000, time_limit: float | None = 60.0) -> SearchResult:
    """Bounded search for huge lattices: greedy first solution, then branch and bound with a budget.

    Returns the best node found, ``optimal`` True only if the search finished within the
    budget, and ``bound``: a lower bound of the optimum (the smallest bound left in the queue).
    """
    t0 = time.perf_counter()
    p = ev.problem
    if ev.monotone and has_bound(ev.metric) and p.n_nodes <= MAX_EXACT_NODES and max_nodes >= p.n_nodes:
        # the lattice fits a status array and the node budget does not bind: the exact search
        # with the time limit is the better heuristic (it reports its best and a bound on time-out)
        res = exact(ev, time_limit=time_limit)
        return SearchResult(**{**res.__dict__, "method": "heuristic (exact search)"})
    deadline = t0 + time_limit if time_limit else np.inf
    top = ev.evaluate(p.node_id(p.top))
    best = top if top.satisfied else None
    if ev.monotone and best is None:
        raise _no_solution(ev)
    if ev.monotone:
        best = _dive(ev, best, deadline, max_nodes)
    if has_bound(ev.metric):
        best, proven, bound = _branch_and_bound(ev, [(-np.inf, 0)], best, True, deadline, max_nodes)
    else:
        proven, bound = False, -np.inf
    if best is None:
        raise _no_solution(ev)
    return _result(ev, best, proven, bound, "heuristic", t0)


def search(ev: Evaluator, method: str = "exact", *, max_nodes: int | None = None,
           time_limit: float | None = None) -> SearchResult:
    """Run ``exact``, ``exhaustive`` or ``heuristic`` search (node budget ``max_nodes``, default
    2000); :func:`.searches.search` adds the anytime search."""
    if method == "exact":
        return exact(ev, time_limit=time_limit)
    if method == "exhaustive":
        return exhaustive(ev)
    if method == "heuristic":
        return heuristic(ev, max_nodes=max_nodes or 2000, time_limit=time_limit or 60.0)
    raise ParameterError(f"search {method!r} is not known; use exact, exhaustive or heuristic.",
                         param="search", rule="one of 'exact', 'exhaustive', 'heuristic'", value=method)


def pareto(ev: Evaluator, risk: str = "average", nodes: Sequence[int] | None = None) -> list[NodeEval]:
    """The satisfying nodes not dominated in (metric, risk), both minimised, sorted by metric.

    ``risk`` is the ``average`` or ``max`` prosecutor re-identification risk of the kept
    records; ``nodes`` defaults to every node of the lattice.
    """
    if risk not in ("average", "max"):
        raise ParameterError(f"risk {risk!r} is not known; use 'average' or 'max'.")
    if nodes is None:
        if ev.problem.n_nodes > MAX_EXACT_NODES:
            raise InputError("the lattice is too large to evaluate every node; pass the nodes to compare.")
        nodes = range(ev.problem.n_nodes)
    sat = [e for e in (ev.evaluate(n) for n in nodes) if e.satisfied]
    key = (lambda e: e.average_risk) if risk == "average" else (lambda e: e.max_risk)
    sat.sort(key=lambda e: (e.metric, key(e), e.node))
    front, best_risk = [], np.inf
    for e in sat:
        if key(e) < best_risk:
            front.append(e)
            best_risk = key(e)
    return front
