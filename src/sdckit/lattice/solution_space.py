"""The solution space of a lattice search, as ARX shows it: what the search knows about each node.

After a search, :func:`describe_space` reads the evaluator's checked nodes
(:attr:`.search.Evaluator.evals`) and describes, read-only:

* the counts of the lattice's nodes: all of them, those the search checked (satisfying the
  privacy models or failing them), those it knows without a check and those it never reached.
  A node is known without a check when the models are monotone (Kohlmayer et al. 2012, sec.
  III; :attr:`.search.Evaluator.monotone`): a node above a checked satisfying node satisfies and
  a node below a checked failing node fails (Flash's predictive tagging). A node is also known
  to fail when its projections force more suppression than allowed
  (:meth:`.problem.Problem.projection_suppressed_bound`). A node the search left because of
  the lower bound of the metric is *pruned*: it lies above a checked node whose bound
  (:mod:`.metrics`) is not below the chosen node's metric, so it cannot do better;
* the checked nodes with their figures (satisfied, records suppressed, classes, the metric),
  at most ``limit`` of them (those nearest the chosen node), saying when capped;
* the chosen node and its neighbours: the nodes one level up or down in one quasi-identifier,
  each checked here if the search did not (a handful of node checks), with what changes.

Each quasi-identifier's levels are named in words from its hierarchy ("level 1 of 3: 4 groups
such as '0-24', '25-44'"). The description holds only levels and counts, never a record.

References
----------
Kohlmayer, F., Prasser, F., Eckert, C., Kemper, A., Kuhn, K. A. (2012). Flash: efficient,
stable and optimal k-anonymity. *PASSAT/SocialCom 2012*, 708-717.
Prasser, F., Kohlmayer, F. (2015). Putting statistical disclosure control into practice: the ARX
data anonymization tool. In *Medical Data Privacy Handbook*, Springer, 111-148 (the solution
space view, sec. 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .metrics import has_bound
from .search import Evaluator, NodeEval, SearchResult

#: checked nodes described by default (the nearest the chosen node first)
DEFAULT_LIMIT = 400
#: largest lattice whose nodes known without a check are counted (a few arrays of one byte a node)
MAX_COUNTED_NODES = 20_000_000

#: what the search knows about a node, in the order of the legend
STATUSES = ("chosen", "satisfies", "fails", "satisfies (inferred)", "fails (inferred)", "pruned", "not reached")


def _above(p, seeds: np.ndarray) -> np.ndarray:
    """Nodes at or above any node where ``seeds`` is true (the up-sets of the seeds).

    Node ids are mixed radix with the first quasi-identifier's stride 1, so the flat array
    reshaped to the radices in reverse order is the lattice as a box, one axis per
    quasi-identifier; a node lies above a seed exactly when a seed lies in the box from the
    bottom to it, which prefix ORs along every axis find (one byte per node)."""
    out = np.array(seeds, dtype=bool)   # a copy: seeds are not changed
    box = out.reshape(tuple(int(r) for r in p.radix[::-1]))
    for axis in range(box.ndim):
        np.logical_or.accumulate(box, axis=axis, out=box)
    return out


def _below(p, seeds: np.ndarray) -> np.ndarray:
    """Nodes at or below any seed: the up-sets in the dual lattice (levels h - l, id n - 1 - id)."""
    return _above(p, seeds[::-1].copy())[::-1]


def level_words(column, level: int) -> str:
    """One level of a quasi-identifier's hierarchy in words: "original values (8 categories)",
    "4 groups such as '0-24', '25-44'" or "one group ('*')"."""
    n = int(column.n_codes[level])
    labels = [str(x) for x in column.labels[level][:2]]
    if level == 0:
        return f"original values ({n} categor{'y' if n == 1 else 'ies'})"
    if n == 1:
        return f"one group ('{labels[0]}')"
    return f"{n} groups such as " + ", ".join(f"'{x}'" for x in labels)


@dataclass(frozen=True)
class SpaceNode:
    """One node of the described space and its figures.

    ``status`` is what the search knew (one of :data:`STATUSES`); ``satisfied`` and the
    figures come from a check (the search's, or one made for the description: ``checked``
    says which).
    """

    levels: tuple
    height: int
    status: str
    checked: bool
    satisfied: bool
    n_suppressed: int
    n_classes: int
    metric: float | None
    bound: float
    why_fails: str = ""

    def to_dict(self) -> dict:
        return {"levels": list(self.levels), "height": self.height, "status": self.status, "checked": self.checked,
                "satisfied": self.satisfied, "n_suppressed": self.n_suppressed, "n_classes": self.n_classes,
                "metric": self.metric, "bound": self.bound if np.isfinite(self.bound) else None,
                **({"why_fails": self.why_fails} if self.why_fails else {})}


@dataclass(frozen=True)
class Neighbour:
    """A node one level up (``coarser``) or down (``finer``) in one quasi-identifier from the
    chosen node."""

    qi: str
    direction: str
    from_level: int
    to_level: int
    node: SpaceNode

    def to_dict(self) -> dict:
        return {"qi": self.qi, "direction": self.direction, "from_level": self.from_level,
                "to_level": self.to_level, "node": self.node.to_dict()}


@dataclass(frozen=True)
class SolutionSpace:
    """What a lattice search knows about the lattice: counts, checked nodes (capped), the chosen
    node and its neighbours (see the module notes).

    ``counts`` holds ``nodes`` (the lattice), ``checked``, ``checked_satisfying``,
    ``checked_failing`` and, where the lattice is at most :data:`MAX_COUNTED_NODES` nodes,
    ``inferred_satisfying``, ``inferred_failing``, ``pruned`` and ``not_reached`` (else None:
    not counted). ``nodes`` are the checked nodes shown (at most ``limit``, nearest the chosen
    node first) plus the chosen node and its neighbours; ``capped`` says whether checked nodes
    were left out.
    """

    qis: tuple
    heights: tuple
    levels_in_words: tuple
    metric: str
    search: str
    optimal: bool
    max_suppressed: int
    counts: dict
    chosen: SpaceNode
    neighbours: tuple
    nodes: tuple
    limit: int
    capped: bool
    n_shown_checked: int
    monotone: bool = True
    notes: tuple = field(default_factory=tuple)

    def level_text(self, levels) -> str:
        """A node's levels in words: "age: level 2 of 4, 9 groups such as ...; sex: level 0 of 1, ..."."""
        return "; ".join(f"{q}: level {lv} of {h}, {self.levels_in_words[j][lv]}"
                         for j, (q, lv, h) in enumerate(zip(self.qis, levels, self.heights)))

    def positions(self) -> list[float]:
        """Where each of :attr:`nodes` sits across its row in a picture drawn by height (0 to 1):
        the nodes of one height spread evenly, in the order of their levels."""
        rows: dict[int, list[int]] = {}
        for i, n in enumerate(self.nodes):
            rows.setdefault(n.height, []).append(i)
        x = [0.5] * len(self.nodes)
        for members in rows.values():
            members.sort(key=lambda i: self.nodes[i].levels)
            for r, i in enumerate(members):
                x[i] = (r + 1) / (len(members) + 1)
        return x

    def to_dict(self) -> dict:
        return {"qis": list(self.qis), "heights": list(self.heights),
                "levels_in_words": [list(x) for x in self.levels_in_words], "metric": self.metric,
                "search": self.search, "optimal": self.optimal, "max_suppressed": self.max_suppressed,
                "counts": dict(self.counts), "chosen": self.chosen.to_dict(),
                "neighbours": [n.to_dict() for n in self.neighbours], "nodes": [n.to_dict() for n in self.nodes],
                "limit": self.limit, "capped": self.capped, "n_shown_checked": self.n_shown_checked,
                "monotone": self.monotone, "notes": list(self.notes)}

    def describe(self) -> str:
        """The space in a few lines of words."""
        c = self.counts
        lines = [f"solution space: {c['nodes']:,} nodes; the search checked {c['checked']:,} "
                 f"({c['checked_satisfying']:,} satisfy the models, {c['checked_failing']:,} fail)"]
        if c.get("pruned") is not None:
            lines.append(f"  known without a check: {c['inferred_satisfying']:,} satisfy, {c['inferred_failing']:,} "
                         f"fail; {c['pruned']:,} pruned by the bound; {c['not_reached']:,} not reached")
        lines.append(f"  chosen node: {self.level_text(self.chosen.levels)}")
        for nb in self.neighbours:
            lines.append(f"  {nb.qi} one level {nb.direction} ({nb.from_level} to {nb.to_level}): "
                         + _node_words(nb.node, self.metric))
        return "\n".join(lines)


def _node_words(n: SpaceNode, metric: str) -> str:
    if not n.satisfied:
        return f"fails ({n.why_fails})" if n.why_fails else "fails"
    value = "-" if n.metric is None else f"{n.metric:,.6g}"
    return f"satisfies; {n.n_suppressed:,} records suppressed, {n.n_classes:,} classes, {metric} {value}"


def known_status(ev: Evaluator, best: float, checked: dict[int, NodeEval] | None = None) -> np.ndarray | None:
    """Per node id, the index in :data:`STATUSES` of what the search knows, from the nodes it
    ``checked`` (default: ``ev.evals``) and the best metric found ``best``; None where the
    lattice has more than :data:`MAX_COUNTED_NODES` nodes. Index 0 ("chosen") is not set here."""
    p = ev.problem
    checked = ev.evals if checked is None else checked
    if p.n_nodes > MAX_COUNTED_NODES:
        return None
    ids = np.fromiter(checked.keys(), dtype=np.int64, count=len(checked))
    sat = np.fromiter((e.satisfied for e in checked.values()), dtype=bool, count=len(checked))
    status = np.full(p.n_nodes, STATUSES.index("not reached"), dtype=np.int8)
    if has_bound(ev.metric) and np.isfinite(best):
        bounds = np.fromiter((e.bound for e in checked.values()), dtype=float, count=len(checked))
        seeds = np.zeros(p.n_nodes, dtype=bool)
        seeds[ids[bounds >= best]] = True
        if seeds.any():
            status[_above(p, seeds)] = STATUSES.index("pruned")
    if ev.monotone:
        seeds = np.zeros(p.n_nodes, dtype=bool)
        seeds[ids[sat]] = True
        status[_above(p, seeds)] = STATUSES.index("satisfies (inferred)")
        seeds[:] = False
        seeds[ids[~sat]] = True
        status[_below(p, seeds)] = STATUSES.index("fails (inferred)")
    if ev.suppressed_bound is not None:   # fails on a projection: known before any check
        status[ev.suppressed_bound > ev.max_suppressed] = STATUSES.index("fails (inferred)")
    status[ids[sat]] = STATUSES.index("satisfies")
    status[ids[~sat]] = STATUSES.index("fails")
    return status


def _space_node(ev: Evaluator, e: NodeEval, status: str, checked: bool) -> SpaceNode:
    return SpaceNode(tuple(int(v) for v in e.levels), int(sum(e.levels)), status, checked, bool(e.satisfied),
                     int(e.n_suppressed), int(e.n_classes), None if e.metric is None else float(e.metric),
                     float(e.bound), "" if e.satisfied else ev.binding_message(e))


def describe_space(ev: Evaluator, result: SearchResult, *, limit: int = DEFAULT_LIMIT) -> SolutionSpace:
    """Describe the solution space of the search that gave ``result`` on ``ev``.

    Parameters
    ----------
    ev : Evaluator
        The evaluator the search ran on (its :attr:`~.search.Evaluator.evals` are the checked nodes).
    result : SearchResult
        The search's result (the chosen node).
    limit : int, default 400
        Most checked nodes to describe one by one (those nearest the chosen node in levels; the
        chosen node and its neighbours are always described).

    Returns
    -------
    SolutionSpace
        Counts, nodes, the chosen node and its neighbours. The neighbours the search did not
        check are checked here (at most two per quasi-identifier), after the counts are taken,
        so the counts are the search's own.
    """
    if int(limit) < 1:
        from ..errors import ParameterError  # noqa: PLC0415

        raise ParameterError(f"The 'limit' parameter of describe_space must be an int >= 1. Got {limit!r}.",
                             param="limit", rule="an int >= 1", value=limit)
    p = ev.problem
    checked = dict(ev.evals)   # the search's checks, before any made here
    chosen_e = ev.evaluate(result.node)
    best = float(result.value)
    status = known_status(ev, best, checked)
    n_sat = sum(e.satisfied for e in checked.values())
    counts: dict = {"nodes": int(p.n_nodes), "checked": len(checked), "checked_satisfying": int(n_sat),
                    "checked_failing": len(checked) - int(n_sat)}
    for name in ("inferred_satisfying", "inferred_failing", "pruned", "not_reached"):
        key = name.replace("inferred_satisfying", "satisfies (inferred)").replace(
            "inferred_failing", "fails (inferred)").replace("not_reached", "not reached")
        counts[name] = None if status is None else int((status == STATUSES.index(key)).sum())

    def known(node: int) -> str:
        if node in checked:
            return "satisfies" if checked[node].satisfied else "fails"
        return "not reached" if status is None else STATUSES[int(status[node])]

    chosen = _space_node(ev, chosen_e, "chosen", result.node in checked)
    lv = np.asarray(chosen_e.levels, dtype=np.int64)
    neighbours = []
    for j, q in enumerate(p.qis):
        for step, direction in ((1, "coarser"), (-1, "finer")):
            to = int(lv[j]) + step
            if not 0 <= to <= int(p.heights[j]):
                continue
            node = result.node + step * int(p.strides[j])
            e = ev.evaluate(node)
            neighbours.append(Neighbour(q, direction, int(lv[j]), to, _space_node(ev, e, known(node), node in checked)))
    near = set([result.node] + [result.node + (1 if nb.direction == "coarser" else -1) * int(p.strides[p.qis.index(nb.qi)])
                                for nb in neighbours])
    others = [n for n in checked if n not in near]
    dist = {n: int(np.abs(np.asarray(checked[n].levels) - lv).sum()) for n in others}
    others.sort(key=lambda n: (dist[n], n))
    capped = len(others) > limit
    shown = others[:limit]
    nodes = [chosen] + [nb.node for nb in neighbours] + [_space_node(ev, checked[n], known(n), True) for n in shown]
    notes = []
    if not ev.monotone:
        notes.append("the privacy models are not monotone here, so no node's status is inferred from another's")
    if status is None:
        notes.append(f"the lattice has more than {MAX_COUNTED_NODES:,} nodes: the nodes known without a check "
                     "are not counted")
    words = tuple(tuple(level_words(c, lvl) for lvl in range(c.height + 1)) for c in p.columns)
    return SolutionSpace(tuple(p.qis), tuple(int(h) for h in p.heights), words, ev.metric, result.method,
                         bool(result.optimal), int(ev.max_suppressed), counts, chosen, tuple(neighbours),
                         tuple(nodes), int(limit), bool(capped),
                         len(shown) + sum(1 for n in near if n in checked), bool(ev.monotone), tuple(notes))
