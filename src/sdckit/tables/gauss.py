"""Secondary suppression by Gaussian elimination (Langsrud 2024), with interval protection.

Model (Langsrud 2024, sec. 2): ``X`` is the inner cells x published cells matrix, every cell's
value the sum of its inner cells (``y_publish = X^T y_inner``). A primary cell p is *linearly
disclosed* when its column ``x_p`` lies in the span of the published cells' columns. The method
takes the secondary suppression candidates one by one in priority order (the cells one would
rather publish first) and reduces them by Gaussian elimination against the cells already
published; a candidate whose elimination step would wipe out a primary column (make it a
multiple of the candidate, so that the published cells determine it) is not published but made
a secondary suppression (sec. 3). At the end no primary depends linearly on the published cells.

Sparse model. The span test does not change under an injective linear map applied to every
column. Leaves are numbered in pre-order (the leaves under a node are then one run
``[lo, hi)``), and the difference map ``(T x)_j = x_j - x_{j-1}`` turns a run's indicator into
``e_lo - e_hi``. Its tensor product over the K dimensions maps every cell (a product of runs)
to a vector with exactly ``2^K`` entries ``+-1`` on the grid of run ends: a grand total is as
sparse as an inner cell, so the elimination stays sparse (the dense total columns of ``X``
would fill every column they touch).

Zeros (sec. 4): an empty cell is known to be 0, so empty cells are published before any
candidate and never become secondaries (as tau-Argus and the hypercube method here).
Singletons (sec. 4, the ``subSum`` method): a contributor of a single-contributor cell s knows
s, so a published group c holding s and other primary inner cells would give away the sum of
the others. For every candidate cell c whose inner cells include two or more primaries, one of
them a singleton, the sum of those primaries becomes a *virtual primary*: the elimination keeps
it undetermined too.
Singletons across groups (the ``anySum`` method, Statistics Norway's default: "the aim is to
handle all possible sums, also across groups"): a group need not hold both cells for the
contributor of a singleton s to learn another primary p. Here the check is exact for single
cells: a candidate is not published when the published cells together with the value of any one
singleton primary s would determine another primary or subSum cell p, i.e. ``x_p`` in the span
of the published columns and ``x_s``, a sum or difference of s and p derivable through any chain
of published cells (the classic 2 x 2 pattern of a singleton and a primary in opposite corners is
one). In the elimination this is: no reduced primary column is parallel to a reduced singleton
column. The subSum cells are kept too, so ``anysum`` protects at least what ``subsum`` does.
Pairs whose columns are equal from the start (a total with one child) are one number and are
not checked.

Arithmetic: floating point, entries below ``1e-9`` are zero (the columns hold ``+-1`` and
the multipliers stay small); the pattern is then checked by the exact LP audit, which does
not trust the elimination.

Interval protection (Statistics Norway's GaussSuppression, 2025: interval limits checked after
the elimination and extra suppressions until each primary's interval is wide enough): linear
independence leaves every primary undetermined but its interval may still be narrower than the
rule's protection levels (a-priori bounds: no cell below 0). The exact audit
(:func:`sdckit.tables.audit_large.protection_audit`) computes each primary's reach; for the
primaries that fall short, the LP heuristic (:func:`sdckit.tables.suppression.heuristic_pattern`,
Kelly, Golden & Assad 1992) suppresses the cells of the cheapest table perturbation reaching
the level, a perturbation that is itself the proof; audit and repair repeat (at most
``interval_rounds`` times) until the audit passes.

References
----------
Langsrud, Ø. (2024). Secondary cell suppression by Gaussian elimination: an algorithm suitable
for handling issues with zeros and singletons. In *Privacy in Statistical Databases* 2024,
LNCS 14915, 83-98. Springer (sec. 2 model, sec. 3 algorithm, sec. 4 zeros and singletons).
Kelly, J.P., Golden, B.L. and Assad, A.A. (1992). Cell suppression: disclosure protection for
sensitive tabular data. *Networks* 22, 397-417.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np

from .._validation import check_bool, check_choice, check_float, check_int
from .audit import a_priori_bounds
from .audit_large import protection_audit
from .rules import Primary
from .suppression import SuppressionResult, cell_costs, check_inputs, heuristic_pattern, validate_common
from .table import Table

__all__ = ["GaussSuppression", "GaussResult", "gauss_pattern", "model_columns", "candidate_order",
           "ORDERS", "SINGLETON_METHODS"]

#: how candidates are ordered (the first ones are published first)
ORDERS = ("frequency", "value", "cost")
#: how singletons are handled
SINGLETON_METHODS = ("subsum", "anysum", "none")
_TOL = 1e-9


def _leaf_runs(h) -> tuple[np.ndarray, np.ndarray, int]:
    """Per node the run ``[lo, hi)`` of its leaves in a depth-first numbering, and the leaf count."""
    n = len(h)
    lo, hi = np.zeros(n, np.int64), np.zeros(n, np.int64)
    k = 0
    stack = [(0, False)]
    while stack:  # iterative DFS: pre-order on entry, the run closes on exit
        u, done = stack.pop()
        if done:
            hi[u] = k
            continue
        lo[u] = k
        if not h.children[u]:
            k += 1
            hi[u] = k
            continue
        stack.append((u, True))
        stack.extend((c, False) for c in reversed(h.children[u]))
    return lo, hi, k


def model_columns(table: Table) -> tuple[np.ndarray, np.ndarray, int]:
    """Every cell's column of ``X`` in the difference basis (module docstring).

    Returns
    -------
    rows : ndarray of int64, shape (n_cells, 2**K)
        Row (grid point of run ends) of each of the cell's ``2^K`` entries.
    signs : ndarray of float, shape (2**K,)
        The entries' signs (the same for every cell): ``(-1)^(number of run ends taken)``.
    n_rows : int
        Number of grid points, ``prod(L_k + 1)``.
    """
    K = len(table.shape)
    runs = [_leaf_runs(h) for h in table.hierarchies]
    grid = tuple(int(r[2]) + 1 for r in runs)
    idx = np.unravel_index(np.arange(table.n_cells, dtype=np.int64), table.shape)
    rows = np.empty((table.n_cells, 2 ** K), np.int64)
    signs = np.empty(2 ** K)
    for b in range(2 ** K):
        coords, s = [], 1.0
        for k in range(K):
            take_hi = (b >> k) & 1
            coords.append((runs[k][1] if take_hi else runs[k][0])[idx[k]])
            s = -s if take_hi else s
        rows[:, b] = np.ravel_multi_index(coords, grid)
        signs[b] = s
    return rows, signs, int(np.prod(grid))


def _ancestor_sums(table: Table, w: np.ndarray) -> np.ndarray:
    """``X X^T``-style spread: per cell, the sum of ``w`` over every cell containing it
    (top-down along each dimension)."""
    arr = np.array(w, float).reshape(table.shape)
    for d, h in enumerate(table.hierarchies):
        arr = np.moveaxis(arr, d, 0)
        for i in range(1, len(h)):  # pre-order: a parent is final before its children
            arr[i] += arr[h.parent[i]]
        arr = np.moveaxis(arr, 0, d)
    return arr.reshape(-1)


def candidate_order(table: Table, order: str = "frequency", cost: str = "value") -> np.ndarray:
    """Cells in the order they are offered for publication (largest priority first).

    ``"frequency"``: ``freq + 1`` with the tie-break of Langsrud's default candidates (a cell
    whose inner cells lie in many large cells goes first: ``0.99 * |X^T X (freq+1)|``
    scaled to at most 0.99); ``"value"``: the absolute value; ``"cost"``: the cost of
    suppressing the cell (:func:`sdckit.tables.suppression.cell_costs`), dearest first.
    """
    check_choice("candidate_order", "order", order, ORDERS)
    base = {"frequency": table.freq.astype(float) + 1.0, "value": np.abs(table.value),
            "cost": cell_costs(table, cost) if order == "cost" else None}[order]
    spread = _ancestor_sums(table, base)
    inner = np.where(table.is_inner, spread, 0.0)
    from .table import aggregate_totals

    tie = np.abs(aggregate_totals(table.hierarchies, table.shape, inner))
    tie = tie / tie.max() if tie.size and tie.max() > 0 else tie
    if order == "frequency":
        return np.argsort(-(base + 0.99 * tie), kind="stable")
    return np.lexsort((-tie, -base))


def _virtual_primaries(table: Table, primary: Primary) -> list[np.ndarray]:
    """Langsrud's subSum cells: per candidate cell holding >= 2 primary inner cells, one a
    singleton, the set of those inner cells (deduplicated)."""
    inner_prim = np.flatnonzero(primary.sensitive & table.is_inner & (table.freq > 0))
    if inner_prim.size < 2:
        return []
    hs = table.hierarchies
    idx = np.unravel_index(inner_prim, table.shape)
    groups: dict[int, list[int]] = {}
    for j, c in enumerate(inner_prim):
        chains = [hs[k].ancestors(int(idx[k][j])) for k in range(len(hs))]
        grids = np.meshgrid(*chains, indexing="ij")
        for anc in np.ravel_multi_index([g.reshape(-1) for g in grids], table.shape):
            groups.setdefault(int(anc), []).append(int(c))
    out, seen = [], set()
    single = table.freq == 1
    for cell, members in groups.items():
        if len(members) < 2 or primary.sensitive[cell] or not single[members].any():
            continue
        key = tuple(sorted(members))
        if key not in seen:
            seen.add(key)
            out.append(np.array(key, np.int64))
    return out


def _direction(v: dict) -> tuple | None:
    """A hashable key equal for parallel sparse columns (scaled so the entry at the smallest row
    is 1, rounded far below the elimination's tolerance steps); None for the zero column."""
    if not v:
        return None
    rows = sorted(v)
    a = v[rows[0]]
    return tuple((r, round(v[r] / a, 7)) for r in rows)


class _Eliminator:
    """Sparse Gaussian elimination of candidate columns against the published ones, keeping the
    primaries' columns reduced (Langsrud 2024, sec. 3). ``singletons``: the indices of the
    primaries that are singletons, for the anySum check (module docstring); None: no check."""

    def __init__(self, primaries: list[dict], singletons: set[int] | None = None) -> None:
        self.piv: dict[int, dict] = {}      # pivot row -> reduced column (zero at earlier pivot rows)
        self.when: dict[int, int] = {}      # pivot row -> creation index
        self.prim = primaries
        self.where: dict[int, set] = {}     # row -> primaries with an entry there
        for k, p in enumerate(primaries):
            for r in p:
                self.where.setdefault(r, set()).add(k)
        self.single = singletons
        if singletons is not None:  # anySum: each primary's direction, and the pairs equal from the start
            self.dirs = [_direction(p) for p in primaries]
            self.by_dir: dict[tuple, set] = {}
            for k, d in enumerate(self.dirs):
                if d is not None:
                    self.by_dir.setdefault(d, set()).add(k)
            self.freeze_aliases()

    def freeze_aliases(self) -> None:
        """anySum: the primaries parallel now are not checked against each other (equal columns from
        the start, or made parallel by the empty cells, which are known to be 0 anyway)."""
        if self.single is not None:
            self.alias = {k: frozenset(self.by_dir.get(d, ())) if d is not None else frozenset()
                          for k, d in enumerate(self.dirs)}

    def reduce(self, v: dict) -> dict:
        """``v`` minus its projection on the published columns (in creation order of the pivots)."""
        heap = [(self.when[r], r) for r in v if r in self.when]
        heapq.heapify(heap)
        queued = {r for _, r in heap}
        while heap:
            _, r = heapq.heappop(heap)
            queued.discard(r)
            a = v.get(r, 0.0)
            if abs(a) <= _TOL:
                v.pop(r, None)
                continue
            col = self.piv[r]
            f = a / col[r]
            for rr, x in col.items():
                nv = v.get(rr, 0.0) - f * x
                if abs(nv) <= _TOL or rr == r:
                    v.pop(rr, None)
                else:
                    if rr not in v and rr in self.when and rr not in queued:
                        heapq.heappush(heap, (self.when[rr], rr))
                        queued.add(rr)
                    v[rr] = nv
        return v

    def offer(self, v: dict, *, force: bool = False) -> bool:
        """Publish the (reduced) column ``v`` unless that would determine a primary (``force``:
        publish it anyway); True if published."""
        if not v:
            return True  # already a combination of published cells: no new information
        # pivot: the last grid point among the entries of at least a tenth of the largest
        # (threshold pivoting). A fixed order of pivot rows keeps the fill-in low: on a 4-D table
        # of 6,561 cells 0.6 CPU s against 80 s for the largest entry (same pattern: whether a
        # primary is a multiple of v does not depend on the pivot)
        big = 0.1 * max(abs(x) for x in v.values())
        r = max(q for q, x in v.items() if abs(x) >= big)
        hit = self.where.get(r, set())
        if self.single is not None:
            return self._offer_any_sum(v, r, hit, force)
        f_of = {}
        for k in hit:
            p = self.prim[k]
            f = p[r] / v[r]
            f_of[k] = f
            if not force and len(p) == len(v) and all(q in p and abs(p[q] - f * x) <= _TOL * (1 + abs(p[q])) for q, x in v.items()):
                return False  # p is a multiple of v: publishing v discloses p
        for k in list(hit):
            p, f = self.prim[k], f_of[k]
            for q, x in v.items():
                nv = p.get(q, 0.0) - f * x
                if abs(nv) <= _TOL or q == r:
                    if q in p:
                        del p[q]
                        self.where[q].discard(k)
                else:
                    if q not in p:
                        self.where.setdefault(q, set()).add(k)
                    p[q] = nv
        self.piv[r] = v
        self.when[r] = len(self.when)
        return True

    def _offer_any_sum(self, v: dict, r: int, hit: set, force: bool) -> bool:
        """:meth:`offer` with the anySum check: the primaries' new columns are computed first;
        ``v`` is refused when one vanishes or when a primary's becomes parallel to a singleton's."""
        new: dict[int, dict] = {}
        for k in hit:
            p = self.prim[k]
            f = p[r] / v[r]
            q = dict(p)
            for rr, x in v.items():
                nv = q.get(rr, 0.0) - f * x
                if abs(nv) <= _TOL or rr == r:
                    q.pop(rr, None)
                else:
                    q[rr] = nv
            new[k] = q
        dirs = {k: _direction(q) for k, q in new.items()}
        if not force:
            for k, d in dirs.items():
                if d is None:
                    return False  # p lies in the span of the published cells and v
                same = {j for j in self.by_dir.get(d, ()) if j not in new}
                same |= {j for j, dj in dirs.items() if dj == d and j != k}
                same -= self.alias[k]
                if same and (k in self.single or any(j in self.single for j in same)):
                    return False  # a singleton's contributor and the published cells would determine p
        for k, q in new.items():
            old = self.prim[k]
            for rr in set(old) - set(q):
                self.where[rr].discard(k)
            for rr in set(q) - set(old):
                self.where.setdefault(rr, set()).add(k)
            self.prim[k] = q
            if self.dirs[k] is not None:
                self.by_dir[self.dirs[k]].discard(k)
            self.dirs[k] = dirs[k]
            if dirs[k] is not None:
                self.by_dir.setdefault(dirs[k], set()).add(k)
        self.piv[r] = v
        self.when[r] = len(self.when)
        return True


def gauss_pattern(table: Table, primary: Primary, *, order: str = "frequency", cost: str = "value",
                  singletons: str = "subsum") -> tuple[np.ndarray, dict]:
    """The Gaussian-elimination pattern (module docstring): primaries plus secondaries.

    Returns
    -------
    suppressed : ndarray of bool
    info : dict
        ``n_virtual_primaries``, ``n_forced`` (empty cells published first), ``n_pivots``,
        ``n_candidates``, ``n_unsafe`` (primaries found dependent on the forced cells: 0 unless
        an empty cell is primary).
    """
    check_choice("gauss_pattern", "singletons", singletons, SINGLETON_METHODS)
    rows, signs, _ = model_columns(table)
    sens = np.asarray(primary.sensitive, bool)

    def col(c: int) -> dict:
        return dict(zip(rows[c].tolist(), signs.tolist()))

    prim_cells = np.flatnonzero(sens)
    prims = [col(int(c)) for c in prim_cells]
    virtual = _virtual_primaries(table, primary) if singletons in ("subsum", "anysum") else []
    for members in virtual:
        v: dict = {}
        for c in members:
            for r, s in zip(rows[c].tolist(), signs.tolist()):
                v[r] = v.get(r, 0.0) + s
        prims.append({r: x for r, x in v.items() if abs(x) > _TOL})
    single = None
    if singletons == "anysum":  # the singleton primaries (inner cells of one contributor)
        single = set(np.flatnonzero(table.is_inner[prim_cells] & (table.freq[prim_cells] == 1)).tolist())
    el = _Eliminator(prims, single)
    empty = (table.freq == 0) & ~sens
    forced = np.flatnonzero(empty)
    forced = forced[np.argsort(~table.is_inner[forced], kind="stable")]  # inner zeros first
    for c in forced:  # known to be 0: published whatever they reveal (never secondaries)
        el.offer(el.reduce(col(int(c))), force=True)
    el.freeze_aliases()
    sup = sens.copy()
    cand = candidate_order(table, order, cost)
    cand = cand[~sens[cand] & ~empty[cand]]
    for c in cand:
        if not el.offer(el.reduce(col(int(c)))):
            sup[c] = True
    n_unsafe = sum(1 for p in el.prim[:prim_cells.size] if not p)
    return sup, {"n_virtual_primaries": len(virtual), "n_forced": int(forced.size), "n_pivots": len(el.piv),
                 "n_candidates": int(cand.size), "n_unsafe": int(n_unsafe)}


@dataclass(frozen=True)
class GaussResult(SuppressionResult):
    """A :class:`SuppressionResult` with the elimination's and the interval repair's counts."""

    n_virtual_primaries: int = 0
    n_gauss_secondary: int = 0
    n_interval_added: int = 0
    n_interval_rounds: int = 0
    n_unsafe: int = 0
    cpu_seconds: float = 0.0

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.update({"n_virtual_primaries": self.n_virtual_primaries, "n_gauss_secondary": self.n_gauss_secondary,
                  "n_interval_added": self.n_interval_added, "n_interval_rounds": self.n_interval_rounds,
                  "n_unsafe": self.n_unsafe, "cpu_seconds": round(self.cpu_seconds, 4),
                  "audit": self.audit.to_dict()})
        return d


@dataclass(frozen=True)
class GaussSuppression:
    """Secondary suppression by Gaussian elimination (module docstring).

    Parameters
    ----------
    cost : {"value", "freq", "log", "unity", "tauargus"}
        Cost of a suppressed cell (reported; also the candidate order with ``order="cost"``).
    order : {"frequency", "value", "cost"}
        Candidate priority: cells first in it are published first (:func:`candidate_order`).
    singletons : {"subsum", "anysum", "none"}
        Singleton handling (Langsrud 2024, sec. 4): ``"subsum"`` adds the virtual primaries;
        ``"anysum"`` also refuses a candidate whose publication would let a singleton's
        contributor determine another primary through any chain of cells, across groups.
    interval_protection : bool
        Audit the primaries' intervals against the rule's protection levels and suppress more
        until every one is met (module docstring); False: the linear pattern only (the audit
        still runs and says which primaries fall short).
    interval_rounds : int
        Rounds of audit and repair at most.
    time_limit : float
        Seconds per LP of the interval repair.
    audit_lps, audit_seconds : int, float
        Budget of the audit: LP solves and **CPU** seconds; beyond it the audit is a sample, says
        so, and the result is not ``audit.ok``.
    lower_bound, upper_bound : float, optional
        A-priori bounds the attacker knows (default 0 and none for non-negative tables).

    References
    ----------
    Langsrud (2024), sec. 3-4; see the module docstring.
    """

    cost: str = "value"
    order: str = "frequency"
    singletons: str = "subsum"
    interval_protection: bool = True
    interval_rounds: int = 5
    time_limit: float = 600.0
    audit_lps: int = 20_000
    audit_seconds: float = 120.0
    seed: int = 0
    lower_bound: float | None = None
    upper_bound: float | None = None

    def __post_init__(self) -> None:
        validate_common("GaussSuppression", self)
        check_choice("GaussSuppression", "order", self.order, ORDERS)
        check_choice("GaussSuppression", "singletons", self.singletons, SINGLETON_METHODS)
        check_bool("GaussSuppression", "interval_protection", self.interval_protection)
        check_int("GaussSuppression", "interval_rounds", self.interval_rounds, min_value=1)
        check_int("GaussSuppression", "audit_lps", self.audit_lps, min_value=0)
        check_float("GaussSuppression", "audit_seconds", self.audit_seconds, low=0)

    def apply(self, table: Table, primary: Primary, *, weights: np.ndarray | None = None) -> GaussResult:
        """Protect ``primary`` in ``table``; the pattern is audited exactly within the budget."""
        t0, c0 = time.perf_counter(), time.process_time()
        check_inputs(table, primary)
        w = cell_costs(table, self.cost) if weights is None else np.asarray(weights, float)
        lb, ub = a_priori_bounds(table, self.lower_bound, self.upper_bound)
        sup, info = gauss_pattern(table, primary, order=self.order, cost=self.cost, singletons=self.singletons)
        n_gauss = int((sup & ~primary.sensitive).sum())

        def run_audit(s):
            return protection_audit(table, s, primary, lower_bound=lb, upper_bound=ub, max_lps=self.audit_lps,
                                    cpu_budget=self.audit_seconds, rng=self.seed)

        aud = run_audit(sup)
        rounds = 0
        while self.interval_protection and aud.status == "failed" and rounds < self.interval_rounds:
            rounds += 1
            short = np.zeros(table.n_cells, bool)
            short[aud.cells[aud.audited & ~aud.protected]] = True
            sub = Primary(short, np.where(short, primary.upper, 0.0), np.where(short, primary.lower, 0.0),
                          np.where(short, primary.sliding, 0.0), primary.reason)
            grown = heuristic_pattern(table, sub, w, lb, ub, self.time_limit, start=sup)
            if not (grown & ~sup).any():
                break  # the LP finds no perturbation reaching the levels: the audit says failed
            sup = grown
            aud = run_audit(sup)
        cost = float(w[sup & ~primary.sensitive].sum())
        state = (f"gauss: {n_gauss} secondaries by elimination, {int((sup & ~primary.sensitive).sum()) - n_gauss} "
                 f"added for intervals in {rounds} round(s)")
        return GaussResult(table, primary, sup, "gauss", cost, state, False, float("nan"), aud,
                           time.perf_counter() - t0,
                           params={"cost": self.cost, "order": self.order, "singletons": self.singletons,
                                   "interval_protection": self.interval_protection},
                           n_virtual_primaries=info["n_virtual_primaries"], n_gauss_secondary=n_gauss,
                           n_interval_added=int((sup & ~primary.sensitive).sum()) - n_gauss,
                           n_interval_rounds=rounds, n_unsafe=info["n_unsafe"],
                           cpu_seconds=time.process_time() - c0)
