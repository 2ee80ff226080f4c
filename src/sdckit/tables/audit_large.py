"""A protection audit that scales: one attacker LP per primary, proofs shared, sampled if needed.

The full audit (:func:`sdckit.tables.audit.audit`) solves two LPs for every suppressed cell,
which is too slow for tables of 10^6 cells with 10^4 suppressions. What the protection
guarantee needs is less: for every primary cell p a table ``y`` that the attacker cannot exclude
(``M y = 0``, published cells fixed, a-priori bounds ``lb <= y <= ub``) with
``y_p >= a_p + UPL_p`` and another with ``y_p <= a_p - LPL_p``. Any such ``y`` is a proof, and
one ``y`` can prove many primaries at once. Per connected component
of the suppressed cells (components share no relation, so the attacker's feasible set is their
product), the attacker problem of Fischetti & Salazar-González is solved for one primary and
direction at a time (``max y_p`` or ``min y_p`` on one HiGHS model whose objective alone
changes, so each solve starts from the last basis), and every optimal ``y`` is also kept as a
proof for the *other* primaries of the component: a primary q whose level that ``y`` already
reaches (``y_q >= a_q + UPL_q``) needs no LP of its own in that direction. The LPs run in a
seeded random order within a budget of solves (``max_lps``) and of CPU seconds
(``cpu_budget``, :func:`time.process_time`: never wall time, so a loaded machine cannot turn an
exact audit into a sample). When the budget runs out the remaining primaries are *not audited*
and the result says ``status = "sampled"``, with how many were audited, how many were left out
and the sampling rule (the audited ones are then a uniform random sample plus those proven on
the way). A sampled audit never reads as passed: ``ok`` is True only for ``status == "exact"``
with every primary protected; ``status = "failed"`` when an audited primary is not protected.

**Proofs given in advance.** A caller may hand the audit perturbation directions ``d`` (such
as the hypercube method's certificates: a support of suppressed cells and integer signs). The
audit does not trust them: it checks each one itself, ``M d = 0`` on the table's relations
(computed dimension by dimension, :func:`relation_residuals`, so the relation matrix of a table of
tens of millions of cells is never built) and every cell of the support suppressed; a verified ``d`` gives the
attacker tables ``a + t d`` for ``-t_dn <= t <= t_up`` (the largest steps within the a-priori
bounds), which prove moves of every primary in its support. A primary proven both ways needs
no LP; a rejected direction is ignored (counted in ``n_proofs_rejected``) and the LPs decide.
When the proofs decide every primary, no component and no LP model is built.

The verdict of every audited primary is exact (an LP optimum or a verified feasible table),
not an estimate.

References
----------
Fischetti, M. and Salazar-González, J.J. (1999). Models and algorithms for optimizing cell
suppression in tabular data with linear constraints. *JASA* 95, 916-928 (attacker problem).
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, section 4.3 (audit). Wiley.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._random import as_generator
from ..errors import SolverError
from ._highs import status
from .audit import a_priori_bounds, attacker_model, suppressed_components
from .table import Table

__all__ = ["ProofSet", "ProtectionAudit", "protection_audit", "relation_residuals"]


@dataclass(frozen=True)
class ProtectionAudit:
    """Which primary cells are proven protected, how, and how many were audited exactly.

    Attributes
    ----------
    cells : ndarray of int
        The suppressed primary cells (flat indices).
    up_reach, dn_reach : ndarray
        Proven moves of each primary upwards / downwards (exact where an LP per primary ran).
    protected : ndarray of bool
        True when both levels are proven reached; False when proven not reached or not audited.
    audited : ndarray of bool
        Whether the primary was audited (both directions decided).
    mode : {"exact", "sampled"}
        ``"exact"`` when every primary was audited; ``"sampled"`` when the budget ran out and a
        random sample of the primaries was audited.
    max_lps, cpu_budget : int, float
        The budget the audit ran under (LP solves, CPU seconds).
    stopped_by : {"", "lps", "cpu"}
        What ended a sampled audit (empty when it ran to the end).
    """

    cells: np.ndarray
    value: np.ndarray
    up_reach: np.ndarray
    dn_reach: np.ndarray
    required_upper: np.ndarray
    required_lower: np.ndarray
    protected: np.ndarray
    audited: np.ndarray
    mode: str
    n_components: int
    n_lps: int
    n_shared_proofs: int
    seconds: float
    integer: bool = False
    labels: tuple = field(default=(), repr=False)
    max_lps: int | None = None
    cpu_budget: float | None = None
    stopped_by: str = ""
    cpu_seconds: float = 0.0
    n_proofs_given: int = 0
    n_proofs_rejected: int = 0
    n_proven_by_given: int = 0

    @property
    def ok(self) -> bool:
        """Every primary audited (``mode == "exact"``) and protected: the pattern is proven safe.

        A sampled audit is never ok, whatever its sample shows (see :attr:`status`).
        """
        return self.mode == "exact" and bool(self.protected.all())

    @property
    def status(self) -> str:
        """``"failed"`` (an audited primary is not protected), else ``"exact"`` or ``"sampled"``."""
        return "failed" if self.n_unprotected else self.mode

    @property
    def rule(self) -> str:
        """How the audited primaries were chosen, in words."""
        if self.mode == "exact":
            return ("every sensitive cell audited (one attacker LP per cell and direction, or a verified attacker "
                    "table proving it)")
        budget = {"lps": f"the budget of {self.max_lps:,} LP solves",
                  "cpu": f"the budget of {self.cpu_budget:g} CPU seconds"}.get(self.stopped_by, "the budget")
        return ("a random sample: sensitive cells taken in a seeded random order until "
                f"{budget} ran out, plus those proven on the way by another cell's attacker table")

    def statement(self) -> str:
        """The verdict in words: what was audited and whether the pattern is proven safe."""
        n = int(self.cells.size)
        if self.status == "failed":
            scope = (f"all {n:,}" if self.mode == "exact" else f"{self.n_audited:,} of {n:,}")
            return (f"Audited {scope} sensitive cells: {self.n_unprotected:,} NOT protected; "
                    "the pattern is NOT safe")
        if self.mode == "sampled":
            return (f"Audited {self.n_audited:,} of {n:,} sensitive cells (a random sample; "
                    f"{self.n_not_audited:,} not audited): the pattern is NOT proven safe")
        return f"Audited all {n:,} sensitive cells exactly: every one is protected"

    @property
    def n_unprotected(self) -> int:
        return int((self.audited & ~self.protected).sum())

    @property
    def n_audited(self) -> int:
        return int(self.audited.sum())

    @property
    def n_not_audited(self) -> int:
        return int((~self.audited).sum())

    def detail_frame(self) -> pd.DataFrame:
        df = pd.DataFrame({"cell": self.cells, "reach_up": self.up_reach, "reach_down": self.dn_reach,
                           "required_upper": self.required_upper, "required_lower": self.required_lower,
                           "audited": self.audited, "protected": self.protected})
        if self.labels:
            df.insert(1, "codes", [" / ".join(x) for x in self.labels])
        return df

    def frame(self) -> pd.DataFrame:
        """Audited primaries: the proven moves (not full intervals) and the verdict."""
        return self.detail_frame()[lambda d: d["audited"]].reset_index(drop=True)

    def to_dict(self) -> dict:
        return {"kind": "protection audit", "status": self.status, "mode": self.mode, "ok": self.ok,
                "n_primary": int(self.cells.size), "n_audited": self.n_audited, "n_not_audited": self.n_not_audited,
                "rule": self.rule, "statement": self.statement(),
                "n_unprotected": self.n_unprotected, "n_shared_proofs": self.n_shared_proofs,
                "n_components": self.n_components, "n_lps": self.n_lps, "max_lps": self.max_lps,
                "n_proofs_given": self.n_proofs_given, "n_proofs_rejected": self.n_proofs_rejected,
                "n_proven_by_given": self.n_proven_by_given,
                "cpu_budget": self.cpu_budget, "stopped_by": self.stopped_by or None,
                "cpu_seconds": round(self.cpu_seconds, 4), "seconds": round(self.seconds, 4)}

    def describe(self) -> str:
        return (f"protection audit ({self.n_components} components, {self.n_lps} LPs, {self.cpu_seconds:.2f} CPU s; "
                f"{self.status}): {self.statement()}"
                + ("" if self.mode == "exact" else f"\n  sampling rule: {self.rule}"))

    def report_html(self) -> str:
        cls = "audit" if self.ok else "audit not-proven"
        return (f"<p class='{cls}'><strong>Audit: {html.escape(self.status)}.</strong> "
                f"{html.escape(self.statement())}.</p>"
                + ("" if self.mode == "exact" else f"<p class='audit-rule'>Sampling rule: {html.escape(self.rule)}.</p>")
                + f"<p class='audit-detail'>{html.escape(self.describe().splitlines()[0])}</p>")


@dataclass(frozen=True)
class ProofSet:
    """Perturbation directions in compressed form: direction ``i`` is ``cells[indptr[i]:indptr[i+1]]``
    with ``signs`` on the same slice (``owner[i]``: the primary it was built for, or -1).

    The compact alternative to a dict of ``(cells, signs)`` pairs when there are millions of
    them (no Python object per direction); :func:`protection_audit` accepts either.
    """

    cells: np.ndarray
    signs: np.ndarray
    indptr: np.ndarray
    owner: np.ndarray | None = None

    @property
    def n_moves(self) -> int:
        return int(self.indptr.size - 1)

    def __len__(self) -> int:
        return self.n_moves

    def move(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Cells and signs of direction ``i``."""
        a, b = int(self.indptr[i]), int(self.indptr[i + 1])
        return self.cells[a:b], self.signs[a:b]


def _as_flat(proofs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, signs, sizes)`` of the given directions, concatenated."""
    if isinstance(proofs, ProofSet):
        return (np.asarray(proofs.cells, np.int64), np.asarray(proofs.signs, float),
                np.diff(np.asarray(proofs.indptr, np.int64)))
    items = list(proofs.values())
    if not items:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64)
    sizes = np.array([len(c) for c, _ in items], np.int64)
    rows = np.concatenate([np.asarray(c, np.int64) for c, _ in items])
    sg = np.concatenate([np.asarray(g, float) for _, g in items])
    return rows, sg, sizes


_ONE_KEY_LIMIT = 2**62  # above it, relation_residuals sorts (direction, cell) pairs with lexsort


def relation_residuals(table: Table, rows: np.ndarray, sg: np.ndarray, col: np.ndarray, n_items: int) -> np.ndarray:
    """``max |M d_i|`` of each direction ``d_i`` (entries ``sg`` at cells ``rows``, direction ``col``),
    computed dimension by dimension without building ``M``.

    A relation of ``M`` (:attr:`Table.relations`) runs along one dimension k: parent node u and
    the other coordinates fixed, ``y(u, rest) - sum_c y(c, rest) = 0`` over u's children. A cell
    with a non-leaf node in dimension k enters its own relation with +1; a cell whose node has a
    parent enters the parent's relation with -1, keyed by the parent's cell. Summing the entries
    per (direction, key) gives exactly the non-zero entries of ``M d_i`` for dimension k.
    """
    resid = np.zeros(n_items)
    if rows.size == 0:
        return resid
    shape = table.shape
    n = table.n_cells
    wide = n_items * n < _ONE_KEY_LIMIT  # (direction, cell) fits one int64 key
    for k, h in enumerate(table.hierarchies):
        stride = int(np.prod(shape[k + 1:]))
        node = (rows // stride) % shape[k]
        par = h.parent[node]
        tot = ~h.is_leaf[node]
        part = par >= 0
        keys = np.concatenate([rows[tot], rows[part] + (par[part] - node[part]) * stride])
        vals = np.concatenate([sg[tot], -sg[part]])
        who = np.concatenate([col[tot], col[part]])
        if keys.size == 0:
            continue
        if wide:
            _, inv = np.unique(who * n + keys, return_inverse=True)
            first = np.zeros(int(inv.max()) + 1, np.int64)
            first[inv] = who
        else:
            o = np.lexsort((keys, who))
            ks, ws = keys[o], who[o]
            new = np.r_[True, (ks[1:] != ks[:-1]) | (ws[1:] != ws[:-1])]
            inv = np.empty(o.size, np.int64)
            inv[o] = np.cumsum(new) - 1
            first = ws[new]
        s = np.bincount(inv, weights=vals)
        np.maximum.at(resid, first, np.abs(s))
    return resid


def _given_proofs(table: Table, suppressed: np.ndarray, proofs, cells_all: np.ndarray, lb, ub):
    """Check each given direction ``d`` (``M d = 0``, support suppressed, no repeated cell) and
    return ``(g, up, dn, n_rejected)``: for every primary ``cells_all[g]`` in a verified support,
    the move up and down that ``d`` proves (arrays, one entry per primary and direction)."""
    rows, sg, sizes = _as_flat(proofs)
    n_items = sizes.size
    if n_items == 0:
        return np.zeros(0, int), np.zeros(0), np.zeros(0), 0
    col = np.repeat(np.arange(n_items), sizes)
    ok = relation_residuals(table, rows, sg, col, n_items) <= 1e-9
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    nonempty = sizes > 0
    sup_all = np.ones(n_items, bool)
    sup_all[nonempty] = np.logical_and.reduceat(suppressed[rows], starts[nonempty])
    ok &= sup_all & nonempty
    # a repeated cell within a direction would have been summed: reject the direction
    o = np.lexsort((rows, col))
    dup = (rows[o][1:] == rows[o][:-1]) & (col[o][1:] == col[o][:-1])
    ok[col[o][1:][dup]] = False
    a = table.value[rows]
    # largest steps t >= 0 along +d and -d within the a-priori bounds (per direction)
    asg = np.abs(sg)
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero entry limits no step
        room_pos = np.where(asg > 0, np.where(sg > 0, ub[rows] - a, a - lb[rows]) / asg, np.inf)
        room_neg = np.where(asg > 0, np.where(sg > 0, a - lb[rows], ub[rows] - a) / asg, np.inf)
    t_pos = np.full(n_items, np.inf)
    t_neg = np.full(n_items, np.inf)
    t_pos[nonempty] = np.minimum.reduceat(room_pos, starts[nonempty])
    t_neg[nonempty] = np.minimum.reduceat(room_neg, starts[nonempty])
    keep = ok[col] & np.isin(rows, cells_all)
    g = np.searchsorted(cells_all, rows[keep])
    dq, tp, tn = sg[keep], t_pos[col[keep]], t_neg[col[keep]]
    up = np.where(dq > 0, tp * dq, tn * -dq)
    dn = np.where(dq > 0, tn * dq, tp * -dq)
    return g, up, dn, int((~ok).sum())


def protection_audit(table: Table, suppressed, primary, *, lower_bound=None, upper_bound=None,
                     max_lps: int | None = 20_000, cpu_budget: float | None = 120.0, rng=0,
                     proofs: dict | None = None, tol: float = 1e-6) -> ProtectionAudit:
    """Audit the protection levels of the suppressed primaries (module docstring).

    Parameters
    ----------
    table : Table
    suppressed : array of bool
        Cells not published (primaries included).
    primary : Primary
        Protection levels (sliding levels are checked as ``reach_up + reach_down``).
    max_lps : int or None
        Budget of per-primary LP solves (None: no limit). Deterministic: the same table, pattern
        and ``rng`` give the same verdict on any machine.
    cpu_budget : float or None
        Budget in CPU seconds of this process (:func:`time.process_time`, never wall time, so
        that a loaded machine cannot change the verdict); None: no limit.
    rng : seed
        Order of the per-primary LPs (the sample when the budget runs out).
    proofs : dict or ProofSet, optional
        Perturbation directions to check and use before any LP: ``{key: (cells, signs)}``
        (e.g. the hypercube certificates) or a :class:`ProofSet`; each is verified here (module
        docstring).

    Returns
    -------
    ProtectionAudit
        ``status`` is ``"exact"``, ``"sampled"`` (budget ran out; ``ok`` is then False) or
        ``"failed"``.
    """
    t0 = time.perf_counter()
    c0 = time.process_time()
    suppressed = np.asarray(suppressed, bool)
    lb, ub = a_priori_bounds(table, lower_bound, upper_bound)
    cells_all = np.flatnonzero(suppressed & primary.sensitive)
    n = cells_all.size
    a_all = table.value[cells_all]
    up_req, dn_req = primary.upper[cells_all], primary.lower[cells_all]
    tl = tol * (1 + np.abs(a_all))
    up_reach, dn_reach = np.zeros(n), np.zeros(n)
    up_done, dn_done = up_req <= tl, dn_req <= tl  # direction decided (by an LP or a shared proof)
    up_exact, dn_exact = np.zeros(n, bool), np.zeros(n, bool)  # decided by its own LP optimum
    n_given = n_rejected = n_by_given = 0
    if proofs:
        g, up, dn, n_rejected = _given_proofs(table, suppressed, proofs, cells_all, lb, ub)
        n_given = len(proofs)
        np.maximum.at(up_reach, g, up)
        np.maximum.at(dn_reach, g, dn)
        new_up = ~up_done & (up_reach >= up_req - tl)
        new_dn = ~dn_done & (dn_reach >= dn_req - tl)
        up_done |= new_up
        dn_done |= new_dn
        n_by_given = int((up_done & dn_done).sum())
    models, jobs = [], []
    n_comp = 0
    # components (and the relation matrix they need) only when a primary is left to an LP
    comps = [] if (up_done & dn_done).all() else suppressed_components(table, suppressed)
    for comp in comps:
        prim = comp[primary.sensitive[comp]]
        if prim.size == 0:
            continue
        n_comp += 1
        mask = np.zeros(table.n_cells, bool)
        mask[comp] = True
        models.append(None)
        jobs += [(len(models) - 1, int(g), d) for g in np.searchsorted(cells_all, prim) for d in (0, 1)]
        models[-1] = (mask, prim)
    gen = as_generator(rng)
    order = gen.permutation(len(jobs)) if jobs else np.zeros(0, int)
    built: dict = {}
    n_lps = n_shared = 0
    stopped_by = ""
    for o in order:
        k, g, d = jobs[o]
        if (up_done if d == 0 else dn_done)[g]:
            continue
        # the budget: LP solves and CPU seconds of this process, never wall time
        if max_lps is not None and n_lps >= max_lps:
            stopped_by = "lps"
            break
        if cpu_budget is not None and time.process_time() - c0 > cpu_budget:
            stopped_by = "cpu"
            break
        if k not in built:
            mask, prim = models[k]
            h, ccells, _ = attacker_model(table, mask, lb, ub)
            built[k] = [h, ccells, np.searchsorted(ccells, prim), np.searchsorted(cells_all, prim), None]
        h, ccells, ppos, pg, prev = built[k]
        col = int(np.searchsorted(ccells, cells_all[g]))
        if prev is not None:
            h.changeColCost(prev, 0.0)
        h.changeColCost(col, -1.0 if d == 0 else 1.0)  # minimise -y_p (max) or y_p (min)
        built[k][4] = col
        h.run()
        n_lps += 1
        st = status(h)
        a = a_all[g]
        if "unbounded" in st:
            reach = np.inf
        elif st == "optimal":
            v = h.getInfo().objective_function_value
            reach = -v - a if d == 0 else a - v
            (up_done if d == 0 else dn_done)[g] = True  # decided by its own LP (set below)
            # the optimal table y is a proof for the other primaries of the component too
            y = np.asarray(h.getSolution().col_value)[ppos]
            ya = y - a_all[pg]
            np.maximum.at(up_reach, pg, ya)
            np.maximum.at(dn_reach, pg, -ya)
            new_up = ~up_done[pg] & (up_reach[pg] >= up_req[pg] - tl[pg])
            new_dn = ~dn_done[pg] & (dn_reach[pg] >= dn_req[pg] - tl[pg])
            up_done[pg[new_up]] = True
            dn_done[pg[new_dn]] = True
            n_shared += int(new_up.sum() + new_dn.sum())
        else:
            raise SolverError(f"protection audit: attacker LP stopped with status {st!r}")
        if d == 0:
            up_reach[g], up_done[g], up_exact[g] = max(up_reach[g], reach), True, True
        else:
            dn_reach[g], dn_done[g], dn_exact[g] = max(dn_reach[g], reach), True, True
    up_ok = up_reach >= up_req - tl
    dn_ok = dn_reach >= dn_req - tl
    protected = up_ok & dn_ok & (up_reach + dn_reach >= primary.sliding[cells_all] - tl)
    # audited: both directions decided, or one decided by its own LP and failing (the cell fails)
    audited = (up_done & dn_done) | (up_exact & ~up_ok) | (dn_exact & ~dn_ok)
    labels = tuple(table.cell_codes(c) for c in cells_all) if n <= 5000 else ()
    mode = "exact" if audited.all() else "sampled"
    return ProtectionAudit(cells_all, a_all, up_reach, dn_reach, up_req, dn_req, protected, audited,
                           mode, n_comp, n_lps, n_shared, time.perf_counter() - t0, False, labels,
                           max_lps=max_lps, cpu_budget=cpu_budget, stopped_by="" if mode == "exact" else stopped_by,
                           cpu_seconds=time.process_time() - c0, n_proofs_given=n_given,
                           n_proofs_rejected=n_rejected, n_proven_by_given=n_by_given)
