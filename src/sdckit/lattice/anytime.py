"""Anytime search of the generalisation lattice: the best node found within a CPU-time or
node budget, improving while the budget lasts, with progress events (best, bound, gap).

The search is a best-first local search around the best nodes found, in the spirit of ARX's
Lightning (Prasser et al. 2016), which orders the nodes it visits by their information loss
and descends from good solutions:

1. the top node is checked (with monotone models a failing top means no node satisfies);
2. a priority queue holds *candidate* nodes keyed by the metric of the satisfying node that
   proposed them: its predecessors (one level lower in one QI) first, then its sideways
   moves (one level lower in one QI and one higher in another). The candidate with the least
   key is checked next; a satisfying candidate proposes its own neighbours. Starting from the
   top, the first steps are a steepest descent towards the frontier of the satisfying region;
   later ones search around the best nodes found;
3. a node known to fail is never checked: failing nodes from projections
   (:meth:`.Problem.projection_suppressed_bound`) and, with monotone models, the down-set of
   every failing node checked; nor is a node in the up-set of a checked node whose bound
   (:mod:`.metrics`) is not below the best metric found;
4. when the queue runs dry the search restarts from the lowest satisfying node of a random
   bottom-to-top path (binary search, as the exact search's first dive), seeded so that runs
   repeat; after eight restarts that bring nothing new it checks the open nodes lowest in the
   lattice first, so that with budget to spare it ends with every node checked, known to fail
   or pruned (then the best found is the proven optimum);
5. the last ``bound_share`` of the budget (CPU seconds, or checked nodes when only a node
   budget is given) goes to the bound: first projections on larger groups of
   quasi-identifiers (sub-lattices of up to :data:`BOUND_PROJECTION_NODES` nodes, group by
   group while the budget lasts) raise the records every node must suppress and so tag more
   nodes failing; then the open nodes whose bound is least (those that set the global bound)
   are resolved as Flash resolves a node: the path of open nodes upwards from it is binary
   searched, a failing check tagging its down-set failing, a satisfying one its up-set
   satisfying with its inherited bound (and pruned when that bound reaches the best). The
   global bound rises as the least-bound nodes are resolved.

It stops when the budget is spent or when every node is checked, known to fail or pruned.
The bound is :func:`.search.open_region_bound` over the nodes still open (the largest bound
inherited from a checked node below and, for discernibility, the class-count bound), so
``optimal`` is true when the best found reaches it. The events report the gap both as
``gap`` = best / bound and as ``relative_gap`` = (best - bound) / best. Budgets are CPU seconds of the process
(``time.process_time``), so a loaded machine does not change how many nodes are checked per
second of budget less than wall time would.

References
----------
Prasser, F., Bild, R., Eicher, J., Spengler, H., Kuhn, K. A. (2016). Lightning:
utility-driven anonymization of high-dimensional data. *Transactions on Data Privacy* 9(2),
161-185. Kohlmayer, F., et al. (2012). Flash: efficient, stable and optimal k-anonymity.
*PASSAT/SocialCom 2012*, 708-717.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable

import numpy as np

from .._validation import param_error
from ..errors import InputError
from . import _kernels as K
from .search import (
    MAX_EXACT_NODES,
    Evaluator,
    NodeEval,
    SearchResult,
    node_heights,
    open_bounds,
    open_region_bound,
)

#: seconds of CPU time between two progress events (besides one at every new best node)
PROGRESS_EVERY = 10.0
#: largest sub-lattice of the projections the bound phase adds (step 5 of the module notes)
BOUND_PROJECTION_NODES = 4096
#: least-bound open nodes resolved between two computations of the bound in the bound phase
BORDER_BATCH = 64


def _event(ev: Evaluator, t0: float, best: NodeEval | None, bound: float, kind: str) -> dict:
    value = None if best is None else float(best.metric)
    gap = relative = None
    if value is not None and bound > 0 and np.isfinite(bound):
        gap = value / bound
        relative = (value - bound) / value
    return {"event": kind, "cpu_seconds": round(time.process_time() - t0, 3), "nodes_checked": ev.nodes_checked,
            "best": value, "bound": float(bound) if np.isfinite(bound) else None, "gap": gap,
            "relative_gap": relative, "levels": None if best is None else list(best.levels)}


def anytime(ev: Evaluator, *, time_limit: float | None = 60.0, max_nodes: int | None = None,
            progress: Callable[[dict], None] | None = None, seed: int = 0,
            bound_every: float = 30.0, bound_share: float = 0.5) -> SearchResult:
    """Best node found within ``time_limit`` CPU seconds and ``max_nodes`` checked nodes.

    Parameters
    ----------
    ev : Evaluator
        The problem, models, suppression limit and metric.
    time_limit : float, optional
        CPU seconds of the process for the search (None: no limit).
    max_nodes : int, optional
        Largest number of nodes to check (None: no limit).
    progress : callable, optional
        Called with a dict (``event``, ``cpu_seconds``, ``nodes_checked``, ``best``, ``bound``,
        ``gap`` = best / bound, ``relative_gap`` = (best - bound) / best, ``levels``; the bound
        and gaps are None before the first bound) at every new best node, every
        :data:`PROGRESS_EVERY` CPU seconds, when the bound phase starts (``"bound_phase"``) and
        at the end.
    seed : int
        Seed of the restarts' random paths (the search is deterministic for a seed; it
        protects nothing, so it is no secret).
    bound_every : float
        CPU seconds between two computations of the global bound (a pass over the lattice).
    bound_share : float
        Share of the budget (of ``time_limit``, else of ``max_nodes``) spent last on raising
        the bound (step 5 of the module notes); 0 spends none.

    Returns
    -------
    SearchResult
        ``method`` "anytime"; ``bound`` a lower bound of the optimum; ``optimal`` when the
        best found reaches it; ``events`` the progress events.
    """
    t0 = time.process_time()
    p = ev.problem
    if p.n_nodes > MAX_EXACT_NODES:
        raise InputError(f"the lattice has {p.n_nodes} nodes (more than {MAX_EXACT_NODES}); the anytime search "
                         "keeps a status byte per node: use the heuristic search.")
    if not 0.0 <= bound_share <= 1.0:
        raise param_error("the anytime search", "bound_share", "a number in [0, 1]", bound_share)
    deadline = t0 + time_limit if time_limit else np.inf
    # where the bound phase starts: the last bound_share of the CPU budget, or of the node budget
    border_cpu = t0 + (1.0 - bound_share) * time_limit if time_limit else np.inf
    border_nodes = None if max_nodes is None else max_nodes - int(round(bound_share * max_nodes))
    rng = np.random.default_rng(seed)
    strides, radix, heights = p.strides, p.radix, p.heights
    q = len(p.qis)
    status = np.zeros(p.n_nodes, dtype=np.int8)    # 1 satisfies, 2 fails (tagged)
    pruned = np.zeros(p.n_nodes, dtype=np.int8)    # 1: no node here can improve on the best
    if ev.projection_nodes and ev.k_min > 1:
        ev.suppressed_bound = p.projection_suppressed_bound(ev.k_min, ev.projection_nodes)
        status[ev.suppressed_bound > ev.max_suppressed] = 2
    events: list[dict] = []
    bound = -np.inf

    def emit(kind: str) -> None:
        e = _event(ev, t0, best, bound, kind)
        events.append(e)
        if progress is not None:
            progress(e)

    def out_of_budget() -> bool:
        return time.process_time() > deadline or (max_nodes is not None and ev.nodes_checked >= max_nodes)

    def bound_time() -> bool:
        return bound_share > 0 and (time.process_time() >= border_cpu
                                    or (border_nodes is not None and ev.nodes_checked >= border_nodes))

    best: NodeEval | None = None
    heap: list[tuple[float, int, int, int]] = []   # (key, kind, tie, node)
    tie = 0

    def check(node: int) -> NodeEval:
        nonlocal best
        e = ev.evaluate(node)
        if ev.monotone:
            K.tag(status, node, strides, radix, np.int8(1 if e.satisfied else 2), e.satisfied)
        if e.satisfied and (best is None or (e.metric, e.node) < (best.metric, best.node)):
            improved = best is None or e.metric < best.metric
            best = e
            if improved:
                for c in ev.evals.values():
                    if c.bound >= best.metric and not pruned[c.node]:
                        K.tag(pruned, c.node, strides, radix, np.int8(1), True)
                emit("best")
        if best is not None and e.bound >= best.metric:
            K.tag(pruned, node, strides, radix, np.int8(1), True)
        return e

    expanded: set[int] = set()

    def propose(e: NodeEval) -> bool:
        """Queue the neighbours of a satisfying node; False when it was expanded before."""
        nonlocal tie
        if e.node in expanded:
            return False
        expanded.add(e.node)
        lv = np.asarray(e.levels, dtype=np.int64)
        key = float(e.metric)
        for i in range(q):
            if lv[i] == 0:
                continue
            down = e.node - int(strides[i])
            tie += 1
            heapq.heappush(heap, (key, 0, tie, down))
            for j in range(q):
                if j != i and lv[j] < heights[j]:
                    tie += 1
                    heapq.heappush(heap, (key, 1, tie, down + int(strides[j])))
        return True

    def open_node(node: int) -> bool:
        return node not in ev.evals and status[node] != 2 and not pruned[node]

    def restart() -> NodeEval | None:
        """The lowest satisfying node of a random bottom-to-top path (binary search)."""
        order = rng.permutation(np.repeat(np.arange(q), heights))
        path = [0]
        node = 0
        for j in order:
            node += int(strides[j])
            path.append(node)
        lo, hi, found = 0, len(path) - 1, None
        while lo <= hi and not out_of_budget():
            mid = (lo + hi) // 2
            nd = path[mid]
            if status[nd] == 2:
                lo = mid + 1
                continue
            e = ev.evals.get(nd) or check(nd)
            if e.satisfied:
                found, hi = e, mid - 1
            else:
                lo = mid + 1
        return found

    def more_projections() -> None:
        """Step 5a: projections on larger groups, group by group while the budget lasts."""
        if not ev.projection_nodes or (ev.k_min <= 1 and ev.metric != "discernibility"):
            return
        for dims in p.projection_groups(BOUND_PROJECTION_NODES):
            if out_of_budget():
                break
            ev.add_projection(dims)
        if ev.suppressed_bound is not None:
            status[(ev.suppressed_bound > ev.max_suppressed) & (status == 0)] = 2

    def resolve(node: int) -> None:
        """Step 5b: check ``node`` (non-monotone models, or a node tagged satisfying) or binary
        search the path of open nodes upwards from it (monotone models)."""
        if not ev.monotone or status[node] == 1:
            check(node)
            return
        path = K.flash_path(node, status, pruned, strides, radix, rel)
        lo, hi = 0, len(path) - 1
        while lo <= hi and not out_of_budget():
            mid = (lo + hi) // 2
            nd = int(path[mid])
            if status[nd] == 2:
                lo = mid + 1
            elif pruned[nd]:
                hi = mid - 1          # the path above is pruned too
            elif (ev.evals.get(nd) or check(nd)).satisfied:
                hi = mid - 1
            else:
                lo = mid + 1

    def bound_phase() -> None:
        """Step 5 of the module notes, until the budget is spent or nothing is left open."""
        nonlocal bound, last_event
        more_projections()
        first = True
        while not out_of_budget():
            ids, nb = open_bounds(ev, status, pruned)
            least = float(nb.min()) if nb.size else np.inf
            bound = min(least, best.metric) if best is not None else least
            if first:
                emit("bound_phase")
                first = False
                last_event = time.process_time()
            elif time.process_time() - last_event > PROGRESS_EVERY:
                emit("progress")
                last_event = time.process_time()
            if ids.size == 0 or (best is not None and least >= best.metric):
                return
            targets = ids[np.argsort(nb, kind="stable")[:BORDER_BATCH]]
            del ids, nb
            for node in targets:
                if out_of_budget():
                    return
                if open_node(int(node)):
                    resolve(int(node))

    rel = 1.0 / np.maximum(heights, 1)
    top = check(p.node_id(p.top))
    if not top.satisfied and ev.monotone:
        from .search import exact  # noqa: PLC0415 (the exact search's message names the binding model)

        exact(ev)   # raises the one-line "no node satisfies ..." error
    if top.satisfied:
        propose(top)
    last_event = last_bound = time.process_time()
    futile = 0
    node_height = None
    while not out_of_budget():
        if bound_time():
            bound_phase()
            break
        if not heap:
            if futile < 8:
                start = restart()
                if start is not None and propose(start):
                    futile = 0
                else:
                    futile += 1
                continue
            # the restarts bring nothing new: queue the lowest open nodes (not checked, not known
            # to fail, not pruned); each is checked or becomes pruned, so the search ends
            if node_height is None:
                node_height = node_heights(p)
            still = (status != 2) & (pruned == 0)
            still[np.fromiter(ev.evals.keys(), dtype=np.int64, count=len(ev.evals))] = False
            ids = np.flatnonzero(still)
            if ids.size == 0:
                break
            for node in ids[np.argsort(node_height[ids], kind="stable")[:256]]:
                tie += 1
                heapq.heappush(heap, (-np.inf, 2, tie, int(node)))
            continue
        key, _, _, node = heapq.heappop(heap)
        if best is not None and pruned[node]:
            continue
        if not open_node(node):
            continue
        e = check(node)
        if e.satisfied:
            propose(e)
        now = time.process_time()
        if now - last_bound > bound_every:
            bound = open_region_bound(ev, status, pruned, best)
            last_bound = now
        if now - last_event > PROGRESS_EVERY:
            emit("progress")
            last_event = now
    # the bound over what is still open (checks the bottom node, whose bound holds everywhere)
    bound = open_region_bound(ev, status, pruned, best)
    e0 = ev.evals.get(0)
    if e0 is not None and e0.satisfied and (best is None or (e0.metric, e0.node) < (best.metric, best.node)):
        best = e0
    if best is None:
        raise InputError("the anytime search found no satisfying node within its budget; raise the time "
                         "limit or the node budget.")
    optimal = bool(bound >= best.metric - 1e-9 * max(1.0, abs(best.metric)))
    emit("end")
    return SearchResult(tuple(p.qis), best.levels, best.node, ev.metric, float(best.metric), best.n_suppressed,
                        best.n_classes, ev.nodes_checked, p.n_nodes, optimal, float(min(bound, best.metric)),
                        "anytime", time.process_time() - t0, p.m, tuple(events))
