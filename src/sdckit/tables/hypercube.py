"""Fast secondary suppression for large hierarchical tables: one certified hypercube per primary.

For a primary cell p at node ``i_k`` of dimension k's hierarchy (k = 1..K), a *hypercube* picks
in every dimension a sibling ``j_k`` of ``i_k`` (same parent) and suppresses the ``2^K`` cells
that combine ``i_k`` or ``j_k`` in every dimension (Repsilber's hypercube method, as in
tau-Argus' GHMiter). With signs ``+1`` on ``i_k`` and ``-1`` on ``j_k``, the tensor product

    d = (e_{i_1} - e_{j_1}) (x) ... (x) (e_{i_K} - e_{j_K})

satisfies every relation of the table (``M d = 0``) when the nodes are leaves: along dimension k
a relation sums the children of one parent, and ``i_k``, ``j_k`` enter it with +1 and -1. For a
node with children the vector continues down a *chain* (the node, one child, one grandchild,
... to a leaf, all with the same sign), which satisfies the node's own relation too; a
dimension where p is at the root has no sibling and takes the one-sided chain of the root.

Every table ``a + t d`` with the suppressed cells changed and the published ones kept is one the
attacker cannot exclude while it stays within the a-priori bounds. So p can move up by
``min(min_{d_q<0} (a_q - lb_q), min_{d_q>0} (ub_q - a_q))`` and down likewise with the signs
swapped. The method only accepts a hypercube whose reach meets p's protection levels: **the
hypercube is a proof of protection** (kept as a certificate and checked again at the end by an
exact sparse product and the bounds, no LP), whatever else is suppressed.

Among the candidate hypercubes (up to ``max_siblings`` siblings per dimension, those with the
largest marginal first) the cheapest is taken: the cost of its cells not yet suppressed. Empty
cells are never secondaries (tau-Argus' default). **Singletons**: a cell with a single
contributor is known exactly to that contributor, who could then remove it from a relation it
shares with p; hypercubes that hold another single-contributor cell are used only when no other
candidate exists, and the result counts them (``n_singleton_cubes``). A primary for which no
candidate reaches its levels is protected by the LP-per-primary heuristic on the whole table,
which extends the pattern (its perturbation is again a proof).

A **clean-up pass** (:func:`sdckit.tables.cleanup.prune_secondaries`) then publishes the
secondaries that no primary needs on the whole table, most expensive first: each removal is
proven by the attacker LPs (warm-started, a primary re-solved only when its last attacker table
moved the cell). It stops at a CPU budget and then says "partial". Certificates whose hypercube
lost a cell are dropped; the clean-up's last attacker tables (``y - a``, a direction with
``M d = 0``) are handed to the audit instead, which checks each one itself as it checks a
hypercube, and solves an LP where a check fails.

The pattern is audited with :func:`sdckit.tables.audit_large.protection_audit` (exact LP per
primary within a budget of LP solves and CPU seconds, stated as sampled beyond it: a sampled
audit is never reported as passed).

References
----------
Repsilber, D. (2002). Sicherung persönlicher Angaben in Tabellendaten. *Statistisches Landesamt
Nordrhein-Westfalen* (the hypercube method, GHMiter).
Giessing, S. and Repsilber, D. (2002). Tools and strategies to protect multiple tables with the
GHQUAR cell suppression engine. In *Inference Control in Statistical Databases*, LNCS 2316,
181-192. Springer.
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, section 4.4.4 (hypercube). Wiley.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np

from .._validation import check_bool, check_float, check_int
from ..errors import SolverError
from .audit import a_priori_bounds
from .audit_large import protection_audit
from .cleanup import prune_secondaries
from .rules import Primary
from .suppression import (
    SuppressionResult,
    capacities,
    cell_costs,
    check_inputs,
    heuristic_pattern,
    suppressible,
    validate_common,
)
from .table import Hierarchy, Table

__all__ = ["HypercubeSuppression", "HypercubeResult", "check_certificates"]


def _marginals(table: Table) -> list[np.ndarray]:
    """1-D marginal value of every node of every dimension (the cell with the total elsewhere)."""
    arr = table.value.reshape(table.shape)
    out = []
    for d in range(len(table.shape)):
        idx = [0] * len(table.shape)
        idx[d] = slice(None)
        out.append(np.asarray(arr[tuple(idx)], float))
    return out


def _chains(table: Table, marg: list[np.ndarray]) -> list[list[list[int]]]:
    """Per dimension and node: the node, then its child with the largest marginal, ... to a leaf."""
    out = []
    for h, m in zip(table.hierarchies, marg):
        ch = []
        for i in range(len(h)):
            c = [i]
            while h.children[c[-1]]:
                kids = h.children[c[-1]]
                c.append(kids[int(np.argmax(m[kids]))])
            ch.append(c)
        out.append(ch)
    return out


@numba.njit(cache=True)
def _best_cube(n_opt, opt_start, node_start, nodes, signs, strides, cap_up, cap_dn, need_up, need_dn,
               need_sl, w, sup, can, single, p):
    """Enumerate every combination of one option per dimension; return the cheapest valid one.

    Options are flattened: dimension k has ``n_opt[k]`` options starting at ``opt_start[k]``;
    option o holds ``nodes[node_start[o]:node_start[o+1]]`` with ``signs``. Returns
    ``(best combination as option offsets, cost, uses_singleton)``, cost = inf if none is valid.
    """
    K = n_opt.size
    combo = np.zeros(K, np.int64)
    best = np.full(K, -1, np.int64)
    best_cost, best_single = np.inf, False
    cells = np.empty(1, np.int64)
    sg = np.empty(1, np.int64)
    while True:
        # cells of this combination: product of the chosen options' nodes
        size = 1
        for k in range(K):
            o = opt_start[k] + combo[k]
            size *= node_start[o + 1] - node_start[o]
        if cells.size < size:
            cells = np.empty(size, np.int64)
            sg = np.empty(size, np.int64)
        cells[0] = 0
        sg[0] = 1
        cur = 1
        for k in range(K):
            o = opt_start[k] + combo[k]
            a, b = node_start[o], node_start[o + 1]
            n_k = b - a
            # expand in place, from the back
            for q in range(cur - 1, -1, -1):
                base_c, base_s = cells[q], sg[q]
                for r in range(n_k):
                    cells[q * n_k + r] = base_c + nodes[a + r] * strides[k]
                    sg[q * n_k + r] = base_s * signs[a + r]
            cur *= n_k
        up = np.inf
        dn = np.inf
        cost = 0.0
        ok = True
        has_single = False
        for q in range(cur):
            c = cells[q]
            if c != p:
                if not can[c]:
                    ok = False
                    break
                if not sup[c]:
                    cost += w[c]
                if single[c]:
                    has_single = True
            if sg[q] > 0:
                up = min(up, cap_up[c])
                dn = min(dn, cap_dn[c])
            else:
                up = min(up, cap_dn[c])
                dn = min(dn, cap_up[c])
        if ok:
            tol = 1e-9 * (1.0 + need_up + need_dn)
            if up >= need_up - tol and dn >= need_dn - tol and up + dn >= need_sl - tol:
                key = cost + (1e30 if has_single else 0.0)
                if key < best_cost:
                    best_cost = key
                    best_single = has_single
                    for k in range(K):
                        best[k] = combo[k]
        # next combination (mixed radix)
        k = K - 1
        while k >= 0:
            combo[k] += 1
            if combo[k] < n_opt[k]:
                break
            combo[k] = 0
            k -= 1
        if k < 0:
            break
    return best, best_cost, best_single


def _cube_cells(options, combo, strides) -> tuple[np.ndarray, np.ndarray]:
    cells, sg = np.zeros(1, np.int64), np.ones(1, np.int64)
    for k, o in enumerate(combo):
        nodes, signs = options[k][o]
        cells = (cells[:, None] + nodes[None, :] * strides[k]).reshape(-1)
        sg = (sg[:, None] * signs[None, :]).reshape(-1)
    return cells, sg


def _subtree(h, root: int) -> np.ndarray:
    """Nodes of the subtree under ``root`` in pre-order (root first)."""
    out, stack = [], [root]
    while stack:
        u = stack.pop()
        out.append(u)
        stack.extend(reversed(h.children[u]))
    return np.array(out, np.int64)


def _local_lp(table: Table, p: int, sup: np.ndarray, primary: Primary, w, lb, ub, time_limit: float,
              max_cells: int = 150_000) -> np.ndarray | None:
    """Protect primary ``p`` with the LP heuristic on the smallest neighbourhood that suffices.

    A neighbourhood is the product over dimensions of the subtree of p's ancestor ``up_k``
    levels higher in dimension k (the whole hierarchy at the root). Cells whose node is that
    ancestor in a dimension where it is not the root are fixed (their relations upwards leave the
    neighbourhood), so every perturbation found satisfies every relation of the whole table.
    Neighbourhoods are tried from ``up_k = 1`` everywhere, raising one dimension, then two, ...,
    smallest first, up to ``max_cells`` cells; the pattern is extended from the first one in which
    the audit of p passes. Returns None when none does (the caller then uses the whole table).
    """
    import itertools

    idx = np.unravel_index(p, table.shape)
    hs = table.hierarchies
    K = len(hs)

    def top(h, i, up):
        a = int(i)
        for _ in range(up):
            if h.parent[a] >= 0:
                a = int(h.parent[a])
        return a

    tried, plans = set(), []
    for n_raise in range(K + 1):
        for dims in itertools.combinations(range(K), n_raise):
            ups = [2 if k in dims else 1 for k in range(K)]
            tops = tuple(top(h, i, u) for h, i, u in zip(hs, idx, ups))
            if tops in tried:
                continue
            tried.add(tops)
            nodes = [_subtree(h, a) for h, a in zip(hs, tops)]
            size = int(np.prod([n.size for n in nodes]))
            if size <= max_cells:
                plans.append((n_raise, size, tops, nodes))
    plans.sort(key=lambda x: (x[0], x[1]))
    for _, _, tops, nodes in plans:
        grids = np.meshgrid(*nodes, indexing="ij")
        cells = np.ravel_multi_index([g.reshape(-1) for g in grids], table.shape)
        border = np.zeros(cells.size, bool)
        for g, h, a in zip(grids, hs, tops):
            if h.parent[a] >= 0:
                border |= g.reshape(-1) == a
        sub_hs = []
        for h, n in zip(hs, nodes):
            where = {int(u): k for k, u in enumerate(n)}
            sub_hs.append(Hierarchy([h.codes[u] for u in n], [-1] + [where[int(h.parent[u])] for u in n[1:]]))
        freq = np.where(border, 0, table.freq[cells])
        sub = Table(table.dims, sub_hs, table.value[cells], freq, kind=table.kind)
        mask = cells == p
        sp_ = Primary(mask, np.where(mask, primary.upper[cells], 0.0), np.where(mask, primary.lower[cells], 0.0),
                      np.where(mask, primary.sliding[cells], 0.0), np.full(cells.size, "", object))
        got = heuristic_pattern(sub, sp_, w[cells], lb[cells], ub[cells], time_limit, start=sup[cells] & ~border)
        got[border] = False
        # one primary: at most two LPs, audited without a budget (always exact)
        if protection_audit(sub, got | mask, sp_, lower_bound=lb[cells], upper_bound=ub[cells], max_lps=None,
                            cpu_budget=None).ok:
            out = sup.copy()
            out[cells[got]] = True
            return out
    return None


def check_certificates(table: Table, suppressed: np.ndarray, primary: Primary, certificates: dict,
                       lb: np.ndarray, ub: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Exact check of each primary's hypercube: ``M d = 0``, support suppressed, reach >= levels.

    Returns a boolean array over ``certificates``' keys (in insertion order).
    """
    mc = table.relations.tocsc()
    out = []
    for p, (cells, sg) in certificates.items():
        sgf = sg.astype(float)
        at_p = sgf[cells == p]
        ok = (np.unique(cells).size == cells.size and at_p.size == 1 and at_p[0] != 0
              and bool(np.abs(mc[:, cells] @ sgf).max(initial=0.0) <= tol) and bool(suppressed[cells].all()))
        a = table.value[cells]
        pos, neg = sgf > 0, sgf < 0
        up_cap = np.concatenate([(ub[cells] - a)[pos], (a - lb[cells])[neg]]).min(initial=np.inf)
        dn_cap = np.concatenate([(a - lb[cells])[pos], (ub[cells] - a)[neg]]).min(initial=np.inf)
        if ok and at_p[0] < 0:
            up_cap, dn_cap = dn_cap, up_cap
        t = 1e-9 * (1 + abs(table.value[p]))
        ok &= (up_cap >= primary.upper[p] - t) and (dn_cap >= primary.lower[p] - t) and (
            up_cap + dn_cap >= primary.sliding[p] - t)
        out.append(ok)
    return np.array(out, bool)


@dataclass(frozen=True)
class HypercubeResult(SuppressionResult):
    """A :class:`SuppressionResult` with the hypercube certificates and their exact check."""

    n_certified: int = 0
    n_certificates_ok: int = 0
    n_singleton_cubes: int = 0
    n_lp_fallback: int = 0
    certificates: dict = field(default_factory=dict, repr=False)
    cleanup: dict | None = None

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.update({"n_certified": self.n_certified, "n_certificates_ok": self.n_certificates_ok,
                  "n_singleton_cubes": self.n_singleton_cubes, "n_lp_fallback": self.n_lp_fallback,
                  "cleanup": self.cleanup, "audit": self.audit.to_dict()})
        return d


@dataclass(frozen=True)
class HypercubeSuppression:
    """Certified hypercube suppression for large hierarchical tables (module docstring).

    Parameters
    ----------
    cost : {"value", "freq", "log", "unity", "tauargus"}
        Cost of a suppressed cell; the cheapest valid hypercube is taken per primary.
    max_siblings : int
        Candidate siblings per dimension (largest marginal first); ``max_siblings ** K``
        hypercubes are tried per primary.
    time_limit : float
        Seconds for each LP of the fallback heuristic.
    audit_lps, audit_seconds : int, float
        Budget of the LP audit: per-primary LP solves and **CPU** seconds
        (:func:`time.process_time`, never wall time, so a loaded machine does not change the
        verdict); beyond it the audit is a sample, stated so, and the result is not ``audit_ok``.
    seed : int
        Order of the audit's LPs (the sample when the budget runs out).
    cleanup : bool
        Publish the secondaries no primary needs (module docstring); ``cleanup_seconds`` is its
        budget in CPU seconds (then it stops and says "partial"; the pattern stays proven).
    audit_certificates : bool
        Hand the certificates to the audit as proofs (it verifies each one itself: ``M d = 0``,
        support suppressed, bounds), so that only primaries without a verified certificate need
        an LP. False: one LP per primary and direction, independent of the certificates.

    References
    ----------
    Repsilber (2002); Giessing & Repsilber (2002); see the module docstring.
    """

    cost: str = "value"
    max_siblings: int = 4
    time_limit: float = 600.0
    audit_lps: int = 20_000
    audit_seconds: float = 120.0
    seed: int = 0
    avoid_singletons: bool = True
    audit_certificates: bool = True
    lower_bound: float | None = None
    upper_bound: float | None = None
    cleanup: bool = True
    cleanup_seconds: float = 30.0

    def __post_init__(self) -> None:
        validate_common("HypercubeSuppression", self)
        check_bool("HypercubeSuppression", "cleanup", self.cleanup)
        check_float("HypercubeSuppression", "cleanup_seconds", self.cleanup_seconds, low=0)
        check_int("HypercubeSuppression", "max_siblings", self.max_siblings, min_value=1)
        check_int("HypercubeSuppression", "audit_lps", self.audit_lps, min_value=0)
        check_float("HypercubeSuppression", "audit_seconds", self.audit_seconds, low=0)
        check_bool("HypercubeSuppression", "avoid_singletons", self.avoid_singletons)
        check_bool("HypercubeSuppression", "audit_certificates", self.audit_certificates)

    def apply(self, table: Table, primary: Primary, *, weights: np.ndarray | None = None) -> HypercubeResult:
        t0 = time.perf_counter()
        check_inputs(table, primary)
        w = cell_costs(table, self.cost) if weights is None else np.asarray(weights, float)
        lb, ub = a_priori_bounds(table, self.lower_bound, self.upper_bound)
        cap_up, cap_dn = capacities(table, lb, ub)  # UB_q = ub - a (room up), LB_q = a - lb (room down)
        can = suppressible(table, primary)
        single = (table.freq == 1) if self.avoid_singletons else np.zeros(table.n_cells, bool)
        sup = primary.sensitive.copy()
        marg = _marginals(table)
        chains = _chains(table, marg)
        hs = table.hierarchies
        strides = np.array([int(np.prod(table.shape[k + 1:])) for k in range(len(table.shape))], np.int64)
        prim = np.flatnonzero(primary.sensitive & ((primary.upper > 0) | (primary.lower > 0) | (primary.sliding > 0)))
        idx = np.array(np.unravel_index(prim, table.shape)).T if prim.size else np.zeros((0, len(hs)), int)

        def options_of(k: int, i: int, limit: int | None = self.max_siblings) -> list:
            h = hs[k]
            plus = np.array(chains[k][i], np.int64)
            if h.parent[i] < 0:
                return [(plus, np.ones(plus.size, np.int64))]
            sib = [j for j in h.children[h.parent[i]] if j != i]
            sib = sorted(sib, key=lambda j: -marg[k][j])[:limit]
            out = []
            for j in sib:
                minus = np.array(chains[k][j], np.int64)
                out.append((np.concatenate([plus, minus]),
                            np.concatenate([np.ones(plus.size, np.int64), -np.ones(minus.size, np.int64)])))
            return out

        # most constrained primaries first (fewest candidate hypercubes)
        n_cand = np.array([np.prod([max(1, len(options_of(k, int(i))) if hs[k].parent[i] >= 0 else 1)
                                    for k, i in enumerate(row)]) for row in idx]) if prim.size else np.zeros(0)
        def choose(r: int, sup_now: np.ndarray, limit: int | None = self.max_siblings):
            p = int(prim[r])
            opts = [options_of(k, int(i), limit) for k, i in enumerate(idx[r])]
            if any(len(o) == 0 for o in opts):  # an only child: no sibling to pair with
                return None
            n_opt = np.array([len(o) for o in opts], np.int64)
            flat = [x for o in opts for x in o]
            opt_start = np.concatenate([[0], np.cumsum(n_opt)[:-1]]).astype(np.int64)
            node_start = np.concatenate([[0], np.cumsum([x[0].size for x in flat])]).astype(np.int64)
            nodes = np.concatenate([x[0] for x in flat])
            signs = np.concatenate([x[1] for x in flat])
            best, cost, uses_single = _best_cube(n_opt, opt_start, node_start, nodes, signs, strides, cap_up, cap_dn,
                                                 float(primary.upper[p]), float(primary.lower[p]),
                                                 float(primary.sliding[p]), w, sup_now, can, single, p)
            if not np.isfinite(cost):
                return None
            cells, sg = _cube_cells(opts, best, strides)
            return cells, sg, bool(uses_single)

        # pass 1: most constrained primaries first (fewest candidate hypercubes); cells already
        # suppressed cost nothing. usage[q] = number of chosen hypercubes holding q.
        order = np.argsort(n_cand, kind="stable")
        usage = np.zeros(table.n_cells, np.int32)
        sup_now = primary.sensitive.copy()  # == primary | (usage > 0), kept up to date cell by cell
        chosen: dict = {}
        failed = []
        for r in order:
            got = choose(int(r), sup_now)
            if got is None:  # second try: every sibling
                got = choose(int(r), sup_now, None)
            if got is None:
                failed.append(int(prim[r]))
                continue
            chosen[int(r)] = got
            usage[got[0]] += 1
            sup_now[got[0]] = True
        # pass 2: each primary in turn gives its hypercube back and takes the cheapest one given
        # all the others (never dearer than its own: the total cost does not increase)
        for r in order:
            if int(r) not in chosen:
                continue
            old = chosen[int(r)][0]
            usage[old] -= 1
            sup_now[old] = primary.sensitive[old] | (usage[old] > 0)
            got = choose(int(r), sup_now)
            if got is None:
                got = choose(int(r), sup_now, None)
            chosen[int(r)] = got
            usage[got[0]] += 1
            sup_now[got[0]] = True
        sup = primary.sensitive | (usage > 0)
        certificates = {int(prim[r]): (c, g) for r, (c, g, _) in chosen.items()}
        n_single = sum(int(u) for _, _, u in chosen.values())
        n_fallback = len(failed)
        whole = []
        for p in failed:  # no certified hypercube: the LP heuristic on a growing neighbourhood
            got = _local_lp(table, p, sup, primary, w, lb, ub, self.time_limit)
            if got is None:
                whole.append(p)
            else:
                sup = got
        if whole:  # last resort: the LP heuristic on the whole table (one model for all of them)
            mask = np.zeros(table.n_cells, bool)
            mask[whole] = True
            sub = Primary(mask, np.where(mask, primary.upper, 0.0), np.where(mask, primary.lower, 0.0),
                          np.where(mask, primary.sliding, 0.0), primary.reason)
            sup = heuristic_pattern(table, sub, w, lb, ub, self.time_limit, start=sup)
        clean = None
        n_cert = len(certificates)
        n_before, cost_before = int((sup & ~primary.sensitive).sum()), float(w[sup & ~primary.sensitive].sum())
        if self.cleanup and n_before:
            clean = prune_secondaries(table, sup, primary, w, lb, ub, cpu_budget=self.cleanup_seconds)
            sup = clean.suppressed
            # a hypercube that lost a cell no longer proves its primary: the audit's LPs do
            certificates = {p: (c, g) for p, (c, g) in certificates.items() if sup[c].all()}
        cert_ok = check_certificates(table, sup, primary, certificates, lb, ub)
        if not cert_ok.all():
            raise SolverError("hypercube suppression: a certificate fails its exact check; please report this table")
        proofs = None
        if self.audit_certificates:  # the hypercubes and the clean-up's attacker tables, each checked by the audit
            proofs = dict(certificates)
            if clean is not None:
                proofs.update(clean.proofs)
        aud = protection_audit(table, sup, primary, lower_bound=lb, upper_bound=ub, max_lps=self.audit_lps,
                               cpu_budget=self.audit_seconds, rng=self.seed, proofs=proofs)
        cost = float(w[sup & ~primary.sensitive].sum())
        state = (f"hypercube: {n_cert} primaries certified by a hypercube"
                 + (f", {n_fallback} by the LP heuristic" if n_fallback else "")
                 + (f"; {clean.statement()}" if clean is not None else "")
                 + f"; audit {aud.status} ({aud.n_audited} of {aud.cells.size} primaries audited)")
        cinfo = None if clean is None else {**clean.to_dict(), "n_secondary_before": n_before,
                                            "cost_before": cost_before}
        return HypercubeResult(table, primary, sup, "hypercube", cost, state, False, float("nan"), aud,
                               time.perf_counter() - t0, params={"cost": self.cost, "max_siblings": self.max_siblings,
                                                                 "avoid_singletons": self.avoid_singletons,
                                                                 "cleanup": self.cleanup},
                               n_certified=n_cert, n_certificates_ok=int(cert_ok.sum()),
                               n_singleton_cubes=n_single, n_lp_fallback=n_fallback, certificates=certificates,
                               cleanup=cinfo)
