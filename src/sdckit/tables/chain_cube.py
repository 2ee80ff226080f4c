"""Hypercubes with chain factors: certified suppression for large, sparse hierarchical tables.

The hypercube method (:mod:`sdckit.tables.hypercube`) protects a primary cell with a tensor
product of sibling differences ``(e_i - e_j)``, one per dimension; all ``2^K`` corners must be
suppressible. In a sparse table (most inner cells empty, and empty cells are published as
known zeros) a K-dimensional hypercube whose corners are all non-empty rarely exists. This
method widens the choice per dimension. The relations of one hierarchical dimension
("parent = sum of its children") have, besides sibling differences, these kernel vectors:

* a **chain** ``e_l + e_parent(l) + ... + e_root`` from a leaf ``l`` to the total (for a flat
  dimension ``e_l + e_Total``): every relation on the path sees +1 on the parent and +1 on
  exactly one child;
* a **pair** ``path(l -> u) - path(l' -> u)`` of two leaves whose lowest common ancestor is
  ``u`` (``u`` excluded): with ``u`` the parent of ``l`` and ``l'`` this is the sibling
  difference; with ``u`` the grandparent it links two "cousins" through their parents.

Any tensor product ``d = v_1 (x) ... (x) v_K`` of per-dimension kernel vectors satisfies every
relation of the table, ``M d = 0`` (a relation runs along one dimension k and ``v_k`` is in
that dimension's kernel; Hundepool et al. 2012, sec. 4.4.4 for the sibling case). A primary p
lies in the support of ``d`` when, in every dimension, its node is on the ``l``-side path; its
sign is then +1. Every cell of the support is a combination of the chosen nodes, each an
ancestor (or itself) of an *inner corner* ``(l_1 or l'_1, ..., l_K or l'_K)``, so the support
is non-empty as soon as its ``2^s`` inner corners are (``s`` = number of pair factors): with
chains only, one inner cell under p suffices, which exists for every non-empty p. So **every
non-empty primary has a move**, and the method searches for the cheapest one.

If every cell of the support is suppressed, every table ``a + t d`` with
``-t_dn <= t <= t_up`` (the largest steps within the a-priori bounds) agrees with what is
published, so the attacker cannot pin p within ``[a_p - t_dn, a_p + t_up]``: **the move is a
proof of protection**. Each proof is handed to
:func:`sdckit.tables.audit_large.protection_audit`, which verifies it itself (``M d = 0``
dimension by dimension, support suppressed, steps within the bounds) and needs an LP only for
primaries no verified proof covers.

The search, per primary not yet covered by an accepted move (greedy, inner cells first):
for up to ``max_descendants`` non-empty inner cells ``q`` under p (p itself when inner) and per
dimension the chain through ``q`` or a pair with a leaf ``l'`` whose new inner corners are all
non-empty (the ``max_pairs`` cheapest per dimension, ``l'`` within ``max_pair_level`` levels of
p's node), the move whose cells not yet suppressed cost least is taken, provided its steps meet
p's protection levels. The primaries whose levels a taken move meets are covered by it; at the
end a move is dropped (dearest first) when every primary it covers has another covering move. A
primary for which no move meets its levels (possible with large levels or a-priori bounds) is
protected by the LP heuristic on the whole table (:func:`sdckit.tables.suppression.heuristic_pattern`)
and audited by LPs.

Only non-empty cells and primaries are ever suppressed (tau-Argus' default); the table's
relation matrix is never built unless a fallback primary needs it, so tables of tens of
millions of cells fit in memory.

References
----------
Repsilber, D. (2002). Sicherung persönlicher Angaben in Tabellendaten. *Statistisches Landesamt
Nordrhein-Westfalen* (the hypercube method).
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, sections 4.3 (audit) and 4.4.4
(hypercube). Wiley.
Fischetti, M. and Salazar-González, J.J. (1999). Models and algorithms for optimizing cell
suppression in tabular data with linear constraints. *JASA* 95, 916-928 (attacker problem).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np

from .._validation import check_float, check_int
from .audit import a_priori_bounds
from .audit_large import ProofSet, protection_audit
from .rules import Primary
from .suppression import (
    SuppressionResult,
    cell_costs,
    check_inputs,
    heuristic_pattern,
    suppressible,
    validate_common,
)
from .table import Table

__all__ = ["ChainCubeSuppression", "ChainCubeResult", "chain_moves"]


def _hierarchy_arrays(table: Table):
    """Concatenated per-dimension arrays for the kernel: parents, children (CSR) and leaves.

    Node u of dimension k is entry ``node_off[k] + u``; its children are
    ``cidx[cptr[.]:cend[.]]``; its subtree's leaves are ``leaves[leaf_off[k] + lo[.] :
    leaf_off[k] + hi[.]]`` (pre-order keeps a subtree contiguous).
    """
    hs = table.hierarchies
    node_off = np.zeros(len(hs) + 1, np.int64)
    leaf_off = np.zeros(len(hs) + 1, np.int64)
    parent, cptr, cend, cidx, leaves, lo, hi = [], [], [], [], [], [], []
    c_base = 0
    for k, h in enumerate(hs):
        n = len(h)
        node_off[k + 1] = node_off[k] + n
        parent.append(h.parent)
        sizes = np.array([len(c) for c in h.children], np.int64)
        start = c_base + np.concatenate([[0], np.cumsum(sizes)[:-1]])
        cptr.append(start)
        cend.append(start + sizes)
        cidx.append(np.array([c for kids in h.children for c in kids], np.int64))
        c_base += int(sizes.sum())
        lf = np.flatnonzero(h.is_leaf).astype(np.int64)
        leaf_off[k + 1] = leaf_off[k] + lf.size
        leaves.append(lf)
        size = np.ones(n, np.int64)  # subtree of u = nodes [u, u + size_u) in pre-order
        for u in range(n - 1, 0, -1):
            size[h.parent[u]] += size[u]
        lo.append(np.searchsorted(lf, np.arange(n)))
        hi.append(np.searchsorted(lf, np.arange(n) + size))

    def cat(x):
        return np.concatenate(x).astype(np.int64)

    return (node_off, cat(parent), cat(cptr), cat(cend), cat(cidx), leaf_off, cat(leaves), cat(lo), cat(hi))


@numba.njit(cache=True)
def _coords(cell, shape, strides, out):
    for k in range(shape.size):
        out[k] = (cell // strides[k]) % shape[k]


@numba.njit(cache=True)
def _descendants(p, shape, strides, node_off, cptr, cend, cidx, can, max_desc, out):
    """Up to ``max_desc`` suppressible inner cells under cell p (depth-first); returns how many."""
    K = shape.size
    total = 0
    for k in range(K):
        total += shape[k]
    stack = np.empty(total * 8 + 16, np.int64)
    c = np.empty(K, np.int64)
    top = 0
    stack[top] = p
    top += 1
    n = 0
    while top > 0 and n < max_desc:
        top -= 1
        cell = stack[top]
        _coords(cell, shape, strides, c)
        kk = -1
        for k in range(K):
            if cend[node_off[k] + c[k]] > cptr[node_off[k] + c[k]]:
                kk = k
                break
        if kk < 0:
            out[n] = cell
            n += 1
            continue
        g = node_off[kk] + c[kk]
        for j in range(cend[g] - 1, cptr[g] - 1, -1):
            child = cell + (cidx[j] - c[kk]) * strides[kk]
            if can[child]:
                if top >= stack.size:
                    bigger = np.empty(stack.size * 2, np.int64)
                    bigger[:top] = stack[:top]
                    stack = bigger
                stack[top] = child
                top += 1
    return n


@numba.njit(cache=True)
def _path(k, leaf, stop, node_off, parent, out):
    """Nodes from ``leaf`` up to ``stop`` (excluded; -1: up to the root included); returns the count."""
    n = 0
    u = leaf
    while u != stop and u >= 0:
        out[n] = u
        n += 1
        u = parent[node_off[k] + u]
    return n


@numba.njit(cache=True)
def _greedy(order, shape, strides, node_off, parent, cptr, cend, cidx, leaf_off, leaves, leaf_lo, leaf_hi,
            can, sup, covered, w, val, lb, ub, up_lvl, dn_lvl, sl_lvl, sens, max_desc, max_pairs, max_level,
            max_combos):
    """The greedy of the module docstring. Returns (move cells, signs, indptr, primary of each move, failed)."""
    K = shape.size
    maxd = 1
    for k in range(K):
        maxd = max(maxd, shape[k])
    # moves, growing
    m_cells = np.empty(1 << 16, np.int64)
    m_signs = np.empty(1 << 16, np.int8)
    m_ptr = np.zeros(1024, np.int64)
    m_prim = np.empty(1024, np.int64)
    n_moves = 0
    n_ent = 0
    failed = np.empty(order.size, np.int64)
    n_failed = 0
    desc = np.empty(max_desc, np.int64)
    pc = np.empty(K, np.int64)
    qc = np.empty(K, np.int64)
    # per depth: options (leaf l' or -1 for the chain, and the stop node u)
    opt_leaf = np.empty((K, max_pairs + 1), np.int64)
    opt_stop = np.empty((K, max_pairs + 1), np.int64)
    n_opt = np.zeros(K, np.int64)
    cur = np.zeros(K, np.int64)
    # inner corners per depth: corners[k] holds the partial flat ids over dims < k
    max_corners = 1 << K
    corners = np.empty((K + 1, max_corners), np.int64)
    n_corn = np.zeros(K + 1, np.int64)
    tail = np.empty(K + 1, np.int64)
    cand_cost = np.empty(max_pairs, np.float64)
    # support evaluation buffers
    nodes = np.empty((K, 2 * maxd + 2), np.int64)
    nsig = np.empty((K, 2 * maxd + 2), np.int64)
    n_nodes = np.zeros(K, np.int64)
    tmp = np.empty(maxd + 2, np.int64)
    best_cells = np.empty(1, np.int64)
    best_sg = np.empty(1, np.int64)
    cells = np.empty(1, np.int64)
    sg = np.empty(1, np.int64)
    for r in range(order.size):
        p = order[r]
        if covered[p]:
            continue
        _coords(p, shape, strides, pc)
        nd = _descendants(p, shape, strides, node_off, cptr, cend, cidx, can, max_desc, desc)
        best_cost = np.inf
        best_n = 0
        best_up = 0.0
        best_dn = 0.0
        for di in range(nd):
            q = desc[di]
            _coords(q, shape, strides, qc)
            tail[K] = 0
            for k in range(K - 1, -1, -1):
                tail[k] = tail[k + 1] + qc[k] * strides[k]
            # depth-first over dimensions; corners[0] = {0}
            corners[0, 0] = 0
            n_corn[0] = 1
            depth = 0
            combos = 0
            need_opts = True
            while depth >= 0:
                if need_opts:
                    k = depth
                    # option 0: the chain through q (always valid for the inner corners)
                    opt_leaf[k, 0] = -1
                    opt_stop[k, 0] = -1
                    no = 1
                    # pairs: l' under ancestor u of p's node (1..max_level levels up), outside the
                    # child of u that holds p's node; the cheapest max_pairs by new inner corners
                    a = pc[k]
                    for _ in range(max_level):
                        u = parent[node_off[k] + a]
                        if u < 0:
                            break
                        gu = node_off[k] + u
                        ga = node_off[k] + a
                        for li in range(leaf_lo[gu], leaf_hi[gu]):
                            if li >= leaf_lo[ga] and li < leaf_hi[ga]:
                                continue
                            lp = leaves[leaf_off[k] + li]
                            ok = True
                            c_new = 0.0
                            for ci in range(n_corn[k]):
                                cell = corners[k, ci] + lp * strides[k] + tail[k + 1]
                                if not can[cell]:
                                    ok = False
                                    break
                                if not sup[cell]:
                                    c_new += w[cell]
                            if not ok:
                                continue
                            # keep the max_pairs cheapest (insertion into a short sorted list)
                            npair = no - 1
                            if npair < max_pairs:
                                pos = npair
                                no += 1
                            elif c_new < cand_cost[max_pairs - 1]:
                                pos = max_pairs - 1
                            else:
                                continue
                            while pos > 0 and cand_cost[pos - 1] > c_new:
                                cand_cost[pos] = cand_cost[pos - 1]
                                opt_leaf[k, pos + 1] = opt_leaf[k, pos]
                                opt_stop[k, pos + 1] = opt_stop[k, pos]
                                pos -= 1
                            cand_cost[pos] = c_new
                            opt_leaf[k, pos + 1] = lp
                            opt_stop[k, pos + 1] = u
                        a = u
                    n_opt[k] = no
                    cur[k] = 0
                    need_opts = False
                k = depth
                if cur[k] >= n_opt[k] or combos >= max_combos:
                    depth -= 1
                    if depth >= 0:
                        cur[depth] += 1
                    continue
                # corners after choosing option cur[k] in dimension k
                lp = opt_leaf[k, cur[k]]
                nc = 0
                for ci in range(n_corn[k]):
                    corners[k + 1, nc] = corners[k, ci] + qc[k] * strides[k]
                    nc += 1
                if lp >= 0:
                    for ci in range(n_corn[k]):
                        corners[k + 1, nc] = corners[k, ci] + lp * strides[k]
                        nc += 1
                n_corn[k + 1] = nc
                if depth < K - 1:
                    depth += 1
                    need_opts = True
                    continue
                # a full move: its support, validity, cost and steps
                combos += 1
                size = 1
                for kk in range(K):
                    l2 = opt_leaf[kk, cur[kk]]
                    n1 = _path(kk, qc[kk], opt_stop[kk, cur[kk]], node_off, parent, tmp)
                    for t in range(n1):
                        nodes[kk, t] = tmp[t]
                        nsig[kk, t] = 1
                    n2 = 0
                    if l2 >= 0:
                        n2 = _path(kk, l2, opt_stop[kk, cur[kk]], node_off, parent, tmp)
                        for t in range(n2):
                            nodes[kk, n1 + t] = tmp[t]
                            nsig[kk, n1 + t] = -1
                    n_nodes[kk] = n1 + n2
                    size *= n1 + n2
                if cells.size < size:
                    cells = np.empty(size, np.int64)
                    sg = np.empty(size, np.int64)
                cells[0] = 0
                sg[0] = 1
                cnt = 1
                for kk in range(K):
                    nk = n_nodes[kk]
                    for qq in range(cnt - 1, -1, -1):
                        bc, bs = cells[qq], sg[qq]
                        for t in range(nk):
                            cells[qq * nk + t] = bc + nodes[kk, t] * strides[kk]
                            sg[qq * nk + t] = bs * nsig[kk, t]
                    cnt *= nk
                ok = True
                cost = 0.0
                t_up = np.inf
                t_dn = np.inf
                for t in range(cnt):
                    c = cells[t]
                    if not can[c]:
                        ok = False
                        break
                    if not sup[c]:
                        cost += w[c]
                    if sg[t] > 0:
                        t_up = min(t_up, ub[c] - val[c])
                        t_dn = min(t_dn, val[c] - lb[c])
                    else:
                        t_up = min(t_up, val[c] - lb[c])
                        t_dn = min(t_dn, ub[c] - val[c])
                if ok:
                    tol = 1e-9 * (1.0 + abs(val[p]))
                    if t_up >= up_lvl[p] - tol and t_dn >= dn_lvl[p] - tol and t_up + t_dn >= sl_lvl[p] - tol:
                        if cost < best_cost or (cost == best_cost and cnt < best_n):
                            best_cost = cost
                            best_n = cnt
                            best_up = t_up
                            best_dn = t_dn
                            if best_cells.size < cnt:
                                best_cells = np.empty(cnt, np.int64)
                                best_sg = np.empty(cnt, np.int64)
                            best_cells[:cnt] = cells[:cnt]
                            best_sg[:cnt] = sg[:cnt]
                cur[k] += 1
        if best_n == 0:
            failed[n_failed] = p
            n_failed += 1
            continue
        # accept: suppress the support, record the move, cover the primaries whose levels it meets
        if n_ent + best_n > m_cells.size:
            grow = max(2 * m_cells.size, n_ent + best_n)
            c2 = np.empty(grow, np.int64)
            c2[:n_ent] = m_cells[:n_ent]
            m_cells = c2
            s2 = np.empty(grow, np.int8)
            s2[:n_ent] = m_signs[:n_ent]
            m_signs = s2
        if n_moves + 2 > m_ptr.size:
            p2 = np.zeros(2 * m_ptr.size, np.int64)
            p2[: n_moves + 1] = m_ptr[: n_moves + 1]
            m_ptr = p2
            q2 = np.empty(2 * m_prim.size, np.int64)
            q2[:n_moves] = m_prim[:n_moves]
            m_prim = q2
        for t in range(best_n):
            c = best_cells[t]
            m_cells[n_ent + t] = c
            m_signs[n_ent + t] = best_sg[t]
            sup[c] = True
            if sens[c] and not covered[c]:
                ru = best_up if best_sg[t] > 0 else best_dn
                rd = best_dn if best_sg[t] > 0 else best_up
                tol = 1e-9 * (1.0 + abs(val[c]))
                if ru >= up_lvl[c] - tol and rd >= dn_lvl[c] - tol and ru + rd >= sl_lvl[c] - tol:
                    covered[c] = True
        m_prim[n_moves] = p
        n_ent += best_n
        n_moves += 1
        m_ptr[n_moves] = n_ent
    return m_cells[:n_ent], m_signs[:n_ent], m_ptr[: n_moves + 1], m_prim[:n_moves], failed[:n_failed]


@numba.njit(cache=True)
def _prune(cells, signs, ptr, sup, sens, w, val, lb, ub, up_lvl, dn_lvl, sl_lvl, n_cells):
    """Drop moves every primary of which another kept move also covers, dearest first.

    A move covers a primary of its support when its steps meet that primary's levels (the
    greedy's rule). A move is dropped when each primary it covers keeps another covering move;
    its cells that no kept move holds and that are not primary are published again (``sup`` is
    updated). Returns the mask of kept moves.
    """
    n_moves = ptr.size - 1
    usage = np.zeros(n_cells, np.int32)
    cover = np.zeros(n_cells, np.int32)
    t_up = np.empty(n_moves)
    t_dn = np.empty(n_moves)
    for i in range(n_moves):
        up = np.inf
        dn = np.inf
        for e in range(ptr[i], ptr[i + 1]):
            c = cells[e]
            usage[c] += 1
            if signs[e] > 0:
                up = min(up, ub[c] - val[c])
                dn = min(dn, val[c] - lb[c])
            else:
                up = min(up, val[c] - lb[c])
                dn = min(dn, ub[c] - val[c])
        t_up[i] = up
        t_dn[i] = dn
    covers = np.zeros(cells.size, np.bool_)
    for i in range(n_moves):
        for e in range(ptr[i], ptr[i + 1]):
            c = cells[e]
            if sens[c]:
                ru = t_up[i] if signs[e] > 0 else t_dn[i]
                rd = t_dn[i] if signs[e] > 0 else t_up[i]
                tol = 1e-9 * (1.0 + abs(val[c]))
                if ru >= up_lvl[c] - tol and rd >= dn_lvl[c] - tol and ru + rd >= sl_lvl[c] - tol:
                    covers[e] = True
                    cover[c] += 1
    own = np.zeros(n_moves)
    for i in range(n_moves):
        for e in range(ptr[i], ptr[i + 1]):
            c = cells[e]
            if usage[c] == 1 and not sens[c]:
                own[i] += w[c]
    keep = np.ones(n_moves, np.bool_)
    for i in np.argsort(-own, kind="mergesort"):
        if own[i] <= 0.0:
            break
        ok = True
        for e in range(ptr[i], ptr[i + 1]):
            if covers[e] and cover[cells[e]] < 2:
                ok = False
                break
        if not ok:
            continue
        keep[i] = False
        for e in range(ptr[i], ptr[i + 1]):
            c = cells[e]
            if covers[e]:
                cover[c] -= 1
            usage[c] -= 1
            if usage[c] == 0 and not sens[c]:
                sup[c] = False
    return keep


def chain_moves(table: Table, primary: Primary, w: np.ndarray, lb: np.ndarray, ub: np.ndarray, *,
                max_descendants: int = 4, max_pairs: int = 3, max_pair_level: int = 2, max_combos: int = 4096,
                prune: bool = True):
    """The greedy search of the module docstring.

    Returns ``(suppressed, proofs, failed)``: the pattern (primaries and the moves' cells), the
    accepted moves as a :class:`~sdckit.tables.audit_large.ProofSet` (one per primary that
    needed its own) and the primaries for which no move meets the levels. ``prune``: drop the
    moves whose primaries other moves cover too (:func:`_prune`). The inputs are not modified.
    """
    n = table.n_cells
    shape = np.array(table.shape, np.int64)
    strides = np.array([int(np.prod(table.shape[k + 1:])) for k in range(len(table.shape))], np.int64)
    node_off, parent, cptr, cend, cidx, leaf_off, leaves, lo, hi = _hierarchy_arrays(table)
    can = suppressible(table, primary)
    sens = np.asarray(primary.sensitive, bool)
    levels = (primary.upper > 0) | (primary.lower > 0) | (primary.sliding > 0)
    prim = np.flatnonzero(sens & levels)
    sup = sens.copy()
    covered = ~(sens & levels)  # cells with nothing to prove count as covered
    # inner cells first, then by how aggregated the cell is (fewest total levels first)
    depth = np.zeros(prim.size, np.int64)
    idx = np.unravel_index(prim, table.shape)
    for k, h in enumerate(table.hierarchies):
        depth += h.n_levels - h.depth[idx[k]]
    order = prim[np.argsort(depth, kind="stable")].astype(np.int64)
    cells, signs, ptr, owner, failed = _greedy(
        order, shape, strides, node_off, parent, cptr, cend, cidx, leaf_off, leaves, lo, hi,
        np.ascontiguousarray(can), sup, covered, np.ascontiguousarray(w, float), np.ascontiguousarray(table.value),
        np.ascontiguousarray(lb, float), np.ascontiguousarray(ub, float), np.ascontiguousarray(primary.upper, float),
        np.ascontiguousarray(primary.lower, float), np.ascontiguousarray(primary.sliding, float), sens,
        int(max_descendants), int(max_pairs), int(max_pair_level), int(max_combos))
    if prune and owner.size:
        keep = _prune(cells, signs, ptr, sup, sens, np.ascontiguousarray(w, float), np.ascontiguousarray(table.value),
                      np.ascontiguousarray(lb, float), np.ascontiguousarray(ub, float),
                      np.ascontiguousarray(primary.upper, float), np.ascontiguousarray(primary.lower, float),
                      np.ascontiguousarray(primary.sliding, float), n)
        sizes = np.diff(ptr)[keep]
        entry = np.repeat(keep, np.diff(ptr))
        cells, signs, owner = cells[entry], signs[entry], owner[keep]
        ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return sup, ProofSet(cells, signs.astype(np.int8), ptr, owner), failed


@dataclass(frozen=True)
class ChainCubeResult(SuppressionResult):
    """A :class:`SuppressionResult` with the moves (proofs) and how many primaries needed an LP."""

    n_moves: int = 0
    n_lp_fallback: int = 0
    proofs: ProofSet | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.update({"n_moves": self.n_moves, "n_lp_fallback": self.n_lp_fallback, "audit": self.audit.to_dict()})
        return d


@dataclass(frozen=True)
class ChainCubeSuppression:
    """Hypercubes with chain factors for large sparse hierarchical tables (module docstring).

    Parameters
    ----------
    cost : {"value", "freq", "log", "unity", "tauargus"}
        Cost of a suppressed cell; per primary the cheapest move is taken.
    max_pairs : int
        Pair factors (sibling or cousin leaves) tried per dimension, the cheapest first.
    max_pair_level : int
        How many levels above a primary's node the pair's common ancestor may be (1: siblings).
    max_descendants : int
        Inner cells tried under an aggregated primary (the moves go through one of them).
    max_combos : int
        Moves evaluated per primary and inner cell at most (bounds the work on dense tables).
    time_limit : float
        Seconds per LP of the fallback heuristic (primaries without a move that meets their levels).
    audit_lps, audit_seconds : int or None, float or None
        Budget of the audit's LPs (solves, **CPU** seconds); None: no limit. The moves are verified
        by the audit and need no LP.
    lower_bound, upper_bound : float, optional
        A-priori bounds of every cell (default ``[0, inf)`` for non-negative tables).

    References
    ----------
    Repsilber (2002); Hundepool et al. (2012), sec. 4.4.4; see the module docstring.
    """

    cost: str = "value"
    max_pairs: int = 3
    max_pair_level: int = 2
    max_descendants: int = 4
    max_combos: int = 4096
    time_limit: float = 600.0
    audit_lps: int | None = 20_000
    audit_seconds: float | None = 120.0
    lower_bound: float | None = None
    upper_bound: float | None = None

    def __post_init__(self) -> None:
        validate_common("ChainCubeSuppression", self)
        for name in ("max_pairs", "max_pair_level", "max_descendants", "max_combos"):
            check_int("ChainCubeSuppression", name, getattr(self, name), min_value=1)
        if self.audit_lps is not None:
            check_int("ChainCubeSuppression", "audit_lps", self.audit_lps, min_value=0)
        if self.audit_seconds is not None:
            check_float("ChainCubeSuppression", "audit_seconds", self.audit_seconds, low=0)

    def apply(self, table: Table, primary: Primary, *, weights: np.ndarray | None = None) -> ChainCubeResult:
        """Protect ``primary`` on ``table``; the result carries the moves and the audit."""
        t0 = time.perf_counter()
        check_inputs(table, primary)
        w = cell_costs(table, self.cost) if weights is None else np.asarray(weights, float)
        lb, ub = a_priori_bounds(table, self.lower_bound, self.upper_bound)
        sup, proofs, failed = chain_moves(table, primary, w, lb, ub, max_descendants=self.max_descendants,
                                          max_pairs=self.max_pairs, max_pair_level=self.max_pair_level,
                                          max_combos=self.max_combos)
        if failed.size:  # no move meets these levels: the LP heuristic extends the pattern
            mask = np.zeros(table.n_cells, bool)
            mask[failed] = True
            sub = Primary(mask, np.where(mask, primary.upper, 0.0), np.where(mask, primary.lower, 0.0),
                          np.where(mask, primary.sliding, 0.0), primary.reason)
            sup = heuristic_pattern(table, sub, w, lb, ub, self.time_limit, start=sup)
        aud = protection_audit(table, sup, primary, lower_bound=lb, upper_bound=ub, max_lps=self.audit_lps,
                               cpu_budget=self.audit_seconds, proofs=proofs)
        cost = float(w[sup & ~primary.sensitive].sum())
        state = (f"chain hypercubes: {proofs.n_moves} moves"
                 + (f", {failed.size} primaries by the LP heuristic" if failed.size else "")
                 + f"; audit {aud.status} ({aud.n_audited} of {aud.cells.size} primaries audited)")
        return ChainCubeResult(table, primary, sup, "chain_hypercube", cost, state, False, float("nan"), aud,
                               time.perf_counter() - t0,
                               params={"cost": self.cost, "max_pairs": self.max_pairs,
                                       "max_pair_level": self.max_pair_level,
                                       "max_descendants": self.max_descendants},
                               n_moves=proofs.n_moves, n_lp_fallback=int(failed.size), proofs=proofs)
