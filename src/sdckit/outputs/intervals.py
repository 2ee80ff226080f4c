"""The intruder's system of linear equalities over non-negative unknowns, solved for intervals with
as few linear programmes as possible: elimination first (values the equations fix outright, with
the rows that prove them), then one small HiGHS model per connected component of what is left
(built once; between solves only the objective changes, so each solve starts from the last
basis), with the feasible points already seen as witnesses that settle a protection question
without an LP.

Used by the output audits (:mod:`sdckit.outputs.audit`): for one table with its margins, for
outputs linked through shared records, and for a published table read back from its file.

References
----------
Fischetti, M. and Salazar-Gonzalez, J. J. (2001). Solving the cell suppression problem on
tabular data with linear constraints. *Management Science* 47(7), 1008-1027 (the attacker's
subproblems: min and max of a cell subject to the published cells).
Chvatal, V. (1983). *Linear Programming*, chapter 5 (duality: the rows with a zero multiplier can
be dropped without changing the optimum).
"""

from __future__ import annotations

from collections.abc import Callable

import highspy
import numpy as np
import scipy.sparse as sp

from .._highs import INF, new_highs, pass_lp, run
from ..tables.audit import component_labels

__all__ = ["Elimination", "Component", "IntruderSystem"]


class Elimination:
    """The atoms whose value the equations fix, found by elimination (no LP): a row with one unknown
    atom left fixes it (its right-hand side less the fixed atoms); two rows whose unknown atoms
    nest and differ by one fix that one (their difference: differencing); with non-negative
    atoms, a row whose remaining sum is 0 fixes all its unknown atoms at 0. Rounds repeat until
    no row fixes more. Each fixed atom keeps the row that fixed it, so a proof (the rows whose combination gives
    a value: the equations the intruder needs) can be read back.

    Attributes
    ----------
    fixed : ndarray
        The fixed values (NaN for the unknown atoms).
    unknown : ndarray of bool
        The atoms not fixed.
    resid : ndarray
        Each row's right-hand side less its fixed atoms.
    live : ndarray of bool
        The rows that still hold an unknown atom.
    """

    def __init__(self, a_eq: sp.csr_matrix, b: np.ndarray, nonneg: bool) -> None:
        n_rows, n_atoms = a_eq.shape
        self.a_eq = a_eq
        self.fixed = np.full(n_atoms, np.nan)
        self.reason = np.full(n_atoms, -1, np.int64)
        self.reason2 = np.full(n_atoms, -1, np.int64)   # the smaller row of a difference (-1: one row)
        self.round = np.full(n_atoms, -1, np.int64)
        self.unknown = np.ones(n_atoms, bool)
        self.resid = np.asarray(b, float).copy()
        left = np.diff(a_eq.indptr).astype(np.int64)          # unknown atoms per row
        done = np.zeros(n_rows, bool)
        a_csc = a_eq.tocsc()
        scale = 1e-9 * (1.0 + np.abs(self.resid))
        for step in range(n_atoms + 1):
            ones = np.flatnonzero(~done & (left == 1))
            zeros = (np.flatnonzero(~done & (left > 1) & (np.abs(self.resid) <= scale)) if nonneg
                     else np.zeros(0, np.int64))
            # differences: in the first round (two published outputs that differ by one atom give the
            # shortest proof), then only when no single row fixes anything (each pass lists overlaps)
            stalled = ones.size == 0 and zeros.size == 0
            p_big, p_small, p_atom = (self._differences(a_eq, done, left) if step == 0 or stalled
                                      else (np.zeros(0, np.int64),) * 3)
            if stalled and p_atom.size == 0:
                break
            rows = np.concatenate([ones, zeros])
            sub = a_eq[rows].tocoo()
            keep = self.unknown[sub.col]
            r_of, atom = rows[sub.row[keep]], sub.col[keep]
            val = np.where(np.isin(r_of, zeros), 0.0, self.resid[r_of])
            r2 = np.full(r_of.size, -1, np.int64)
            # a row holding another row's unknowns and one more: the difference fixes that one
            r_of, r2 = np.concatenate([r_of, p_big]), np.concatenate([r2, p_small])
            val = np.concatenate([val, self.resid[p_big] - self.resid[p_small]])
            atom = np.concatenate([atom, p_atom])
            atom, first = np.unique(atom, return_index=True)   # an atom fixed twice: the first (one row first)
            self.fixed[atom], self.reason[atom], self.round[atom] = val[first], r_of[first], step
            self.reason2[atom] = r2[first]
            self.unknown[atom] = False
            done[rows] = True
            cols = a_csc[:, atom]
            self.resid -= cols @ self.fixed[atom]
            left -= np.diff(cols.tocsr().indptr)
        self.live = ~done & (left > 0)
        self._memo: dict[int, frozenset] = {}
        # the rows' remaining unknown atoms: a target that is exactly such a set is fixed by the row
        nnz_row = np.repeat(np.arange(n_rows), np.diff(a_eq.indptr))
        self._by_set: dict[bytes, int] = {}
        for r in np.unique(nnz_row[self.unknown[a_eq.indices] & self.live[nnz_row]]).tolist():
            seg = a_eq.indices[a_eq.indptr[r]:a_eq.indptr[r + 1]]
            self._by_set.setdefault(seg[self.unknown[seg]].astype(np.int64).tobytes(), r)

    MAX_PAIRS_WORK = 2_000_000  # the difference rule's row-overlap products (sum of squared column counts)

    def _differences(self, a_eq: sp.csr_matrix, done: np.ndarray, left: np.ndarray):
        """Pairs of live rows whose unknowns nest and differ by one atom: (larger row, smaller row,
        the atom). Skipped (none) when the rows' overlaps would be too many to list."""
        none = (np.zeros(0, np.int64),) * 3
        live = np.flatnonzero(~done & (left >= 1))
        if live.size < 2:
            return none
        u = (a_eq[live] @ sp.diags(self.unknown.astype(float))).tocsr()
        u.eliminate_zeros()
        per_col = np.bincount(u.indices, minlength=u.shape[1])
        if float((per_col.astype(float) ** 2).sum()) > self.MAX_PAIRS_WORK:
            return none
        overlap = (u @ u.T).tocoo()
        size = left[live]
        sel = (overlap.data == size[overlap.row]) & (size[overlap.col] == size[overlap.row] + 1)
        if not sel.any():
            return none
        small, big = overlap.row[sel], overlap.col[sel]
        diff = (u[big] - u[small]).tocoo()
        keep = diff.data > 0
        return live[big[diff.row[keep]]], live[small[diff.row[keep]]], diff.col[keep].astype(np.int64)

    def _rows_of_atom(self, a: int) -> frozenset:
        if a not in self._memo:
            out: set = set()
            for r in (int(self.reason[a]), int(self.reason2[a])):
                if r < 0:
                    continue
                out.add(r)
                for o in self.a_eq.indices[self.a_eq.indptr[r]:self.a_eq.indptr[r + 1]]:
                    if self.round[o] < self.round[a] and not self.unknown[o]:  # fixed before: part of the proof
                        out |= self._rows_of_atom(int(o))
            self._memo[a] = frozenset(out)
        return self._memo[a]

    def rows_of(self, atoms) -> set:
        """The rows that prove the values of fixed atoms."""
        out: set = set()
        for a in np.asarray(atoms, dtype=np.int64).tolist():
            out |= self._rows_of_atom(a)
        return out

    def with_fixed(self, rows) -> set:
        """Rows and the proofs of the fixed atoms they hold (moved into their right-hand sides)."""
        out = set(np.asarray(rows).tolist())
        for r in list(out):
            seg = self.a_eq.indices[self.a_eq.indptr[r]:self.a_eq.indptr[r + 1]]
            out |= self.rows_of(seg[~self.unknown[seg]])
        return out

    def settle(self, atoms: np.ndarray):
        """``(value, proof rows)`` of a sum of atoms that elimination fixes (its atoms all fixed, or
        its unknown atoms exactly those left in one row); None otherwise."""
        atoms = np.asarray(atoms, dtype=np.int64)
        open_atoms = atoms[self.unknown[atoms]]
        value = float(self.fixed[atoms[~self.unknown[atoms]]].sum())
        if open_atoms.size:
            r = self._by_set.get(np.sort(open_atoms).tobytes())
            if r is None:
                return None
            value += float(self.resid[r])
            proof = self.with_fixed([r]) | self.rows_of(atoms[~self.unknown[atoms]])
        else:
            proof = self.rows_of(atoms)
        return value, np.array(sorted(proof), dtype=np.int64)


class Component:
    """One connected component of the intruder's system: atoms that share no published cell with
    the rest. Its model is built once, on first need; between solves only the objective changes
    (primal simplex from the last basis)."""

    BANK = 32  # feasible points kept as witnesses

    def __init__(self, atoms: np.ndarray, rows: np.ndarray, a_eq: sp.csr_matrix, b: np.ndarray,
                 x_true: np.ndarray | None, nonneg: bool) -> None:
        self.atoms, self.rows = atoms, rows
        self.a_eq, self.b, self.nonneg = a_eq, b, nonneg
        self.h = None
        self.prev = np.zeros(0, np.int32)
        # feasible points seen: the true values (when known) and the LP optima
        self.bank = x_true[None, :].copy() if x_true is not None else np.zeros((0, atoms.size))
        self.n_seen = self.bank.shape[0]

    def model(self):
        if self.h is None:
            n = self.atoms.size
            self.h = new_highs(presolve=False, options={"simplex_strategy": 4})
            pass_lp(self.h, self.a_eq, cost=np.zeros(n), col_lower=np.zeros(n) if self.nonneg else np.full(n, -INF),
                    col_upper=np.full(n, INF), row_lower=self.b, row_upper=self.b)
        return self.h

    def witness(self, local: np.ndarray) -> tuple[float, float]:
        """Smallest and largest value of the atoms ``local`` among the feasible points seen
        (``(inf, -inf)`` before any)."""
        s = self.bank[:, local].sum(axis=1)
        return (float(s.min()), float(s.max())) if s.size else (np.inf, -np.inf)

    def solve(self, local: np.ndarray, maximize: bool) -> tuple[str, float, np.ndarray, bool]:
        """``min`` or ``max`` of the sum of atoms ``local``: (status, value, rows with a non-zero dual,
        whether every reduced cost is 0: then the objective is a combination of the rows, constant
        on the feasible set, and the other bound is the same)."""
        h = self.model()
        if self.prev.size:
            h.changeColsCost(self.prev.size, self.prev, np.zeros(self.prev.size))
        self.prev = local.astype(np.int32)
        h.changeColsCost(self.prev.size, self.prev, np.ones(self.prev.size))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize if maximize else highspy.ObjSense.kMinimize)
        st = run(h)
        if st != "optimal":
            return st, (np.inf if maximize else -np.inf), np.zeros(0, np.int64), False
        sol = h.getSolution()
        y = np.asarray(sol.col_value)
        if self.bank.shape[0] < self.BANK:
            self.bank = np.vstack([self.bank, y])
        else:  # the oldest LP optimum makes way (the first point stays)
            self.bank[1 + (self.n_seen - 1) % (self.BANK - 1)] = y
        self.n_seen += 1
        dual = np.asarray(sol.row_dual)
        flat = bool(np.abs(np.asarray(sol.col_dual)).max(initial=0.0) <= 1e-9)
        return st, float(h.getInfo().objective_function_value), self.rows[np.abs(dual) > 1e-9], flat


class IntruderSystem:
    """``a_eq @ x = b`` over unknowns ``x`` (>= 0 when ``nonneg``): the bounds of sums of unknowns.

    Parameters
    ----------
    a_eq : scipy.sparse.csr_matrix
        The equations (0/1 rows: each a published cell as a sum of unknowns).
    b : ndarray
        Their right-hand sides (the published values).
    nonneg : bool
        The unknowns are >= 0 (counts, totals of non-negative values).
    x_true : ndarray, optional
        A feasible point (the true values), the first witness.
    """

    def __init__(self, a_eq: sp.csr_matrix, b: np.ndarray, nonneg: bool, x_true: np.ndarray | None = None) -> None:
        n_atoms = a_eq.shape[1]
        self.nonneg = nonneg
        self.x_true = x_true
        self.elim = Elimination(a_eq, b, nonneg)
        unk = np.flatnonzero(self.elim.unknown)
        live = np.flatnonzero(self.elim.live)
        red = a_eq[live][:, unk].tocsr() if unk.size else sp.csr_matrix((live.size, 0))
        # connected components of the unknowns, linked through the rows (each row a star of edges)
        row_of_nnz = np.repeat(np.arange(live.size), np.diff(red.indptr))
        first = red.indices[np.minimum(red.indptr[:-1], max(red.nnz - 1, 0))] if red.nnz else np.zeros(0, np.int64)
        _, comp_of = np.unique(component_labels(unk.size, first[row_of_nnz], red.indices), return_inverse=True)
        comp_of = comp_of.ravel()
        self.n_components = int(comp_of.max()) + 1 if unk.size else 0
        self.atom_comp = np.full(n_atoms, -1, np.int64)
        self.atom_comp[unk] = comp_of
        row_comp = comp_of[first] if live.size else np.zeros(0, np.int64)
        self._a_order = np.argsort(comp_of, kind="stable")
        self._a_split = np.searchsorted(comp_of[self._a_order], np.arange(self.n_components + 1))
        self._r_order = np.argsort(row_comp, kind="stable")
        self._r_split = np.searchsorted(row_comp[self._r_order], np.arange(self.n_components + 1))
        self.local = np.full(n_atoms, -1, np.int64)
        for c in range(self.n_components):
            self.local[unk[self._a_order[self._a_split[c]:self._a_split[c + 1]]]] = np.arange(
                self._a_split[c + 1] - self._a_split[c])
        self._unk, self._live, self._red, self._red_csc = unk, live, red, None
        self._comps: dict[int, Component | None] = {}
        self._cache: dict[tuple, tuple[float, np.ndarray]] = {}
        self.n_lps = 0
        self.status = "exact"

    def component(self, c: int) -> Component | None:
        """Component ``c``'s model data (None for an unknown in no equation)."""
        if c not in self._comps:
            rows = self._r_order[self._r_split[c]:self._r_split[c + 1]]
            if rows.size == 0:
                self._comps[c] = None
            else:
                if self._red_csc is None:
                    self._red_csc = self._red.tocsc()
                cols = self._a_order[self._a_split[c]:self._a_split[c + 1]]
                atoms = self._unk[cols]
                self._comps[c] = Component(atoms, self._live[rows], self._red_csc[:, cols].tocsr()[rows],
                                           self.elim.resid[self._live[rows]],
                                           None if self.x_true is None else self.x_true[atoms], self.nonneg)
        return self._comps[c]

    def split(self, atoms: np.ndarray) -> tuple[float, np.ndarray, list[tuple[int, np.ndarray]]]:
        """A sum of unknowns as (its fixed part's value, the fixed unknowns, its parts per component:
        ``(component, local indices)``)."""
        unknown = self.elim.unknown[atoms]
        known = atoms[~unknown]
        open_atoms = atoms[unknown]
        cs = self.atom_comp[open_atoms]
        if cs.size > 1 and (cs != cs[0]).any():
            parts = [(int(c), np.sort(self.local[open_atoms[cs == c]])) for c in np.unique(cs)]
        else:
            parts = [(int(cs[0]), np.sort(self.local[open_atoms]))] if cs.size else []
        return float(self.elim.fixed[known].sum()), known, parts

    def witness(self, parts: list[tuple[int, np.ndarray]]) -> tuple[float, float]:
        """The smallest and largest value of the parts among feasible points seen, combined
        component by component (components vary independently). An unknown in no equation
        is unbounded above."""
        lo = hi = 0.0
        for c, loc in parts:
            comp = self.component(c)
            if comp is None:
                hi = np.inf
                lo += float(self.x_true[self._unk[self._a_order[self._a_split[c]:self._a_split[c + 1]]]][loc].sum()
                            if self.x_true is not None else (0.0 if self.nonneg else -np.inf))
            else:
                w_lo, w_hi = comp.witness(loc)
                lo += w_lo
                hi += w_hi
        return lo, hi

    def bound(self, parts: list[tuple[int, np.ndarray]], maximize: bool, words: Callable[[], str]) -> float:
        """The exact minimum or maximum of the parts' sum (one LP per part, cached)."""
        return sum(self._exact(c, loc, maximize, words)[0] for c, loc in parts)

    def proof(self, known: np.ndarray, parts: list[tuple[int, np.ndarray]], words: Callable[[], str]) -> set:
        """The rows whose combination gives both bounds: those that fix the fixed part, and those
        with a non-zero multiplier in either LP's dual (with the proofs of the fixed unknowns they hold)."""
        out = set(self.elim.rows_of(known))
        for c, loc in parts:
            for maximize in (False, True):
                out |= self.elim.with_fixed(self._exact(c, loc, maximize, words)[1])
        return out

    def _exact(self, c: int, loc: np.ndarray, maximize: bool, words: Callable[[], str]) -> tuple[float, np.ndarray]:
        key = (c, loc.tobytes(), maximize)
        if key not in self._cache:
            comp = self.component(c)
            if comp is None:  # an unknown no equation holds: unbounded above, its a-priori bound below
                self._cache[key] = (np.inf if maximize else (0.0 if self.nonneg else -np.inf), np.zeros(0, np.int64))
            else:
                st, val, rows, flat = comp.solve(loc, maximize)
                self.n_lps += 1
                if st == "unbounded":
                    val = np.inf if maximize else -np.inf
                elif st != "optimal" and self.status == "exact":
                    self.status = f"failed: HiGHS ended {st!r} on {words()}"
                self._cache[key] = (val, rows)
                if flat:  # constant on the feasible set: the other bound needs no LP
                    self._cache[(c, loc.tobytes(), not maximize)] = (val, rows)
        return self._cache[key]
