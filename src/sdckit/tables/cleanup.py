"""Clean-up of a suppression pattern: drop secondary cells while the exact audit still holds.

A pattern made by a heuristic (hypercubes, sub-tables) often holds secondaries that no primary
needs. The clean-up tries them one at a time, most expensive first, and publishes a cell only
when every primary of its group of suppressed cells still reaches its protection levels on the
whole table (the attacker LPs of the audit, Fischetti & Salazar-González 1999, sec. 2).

Exactness at low cost: for every primary and direction the clean-up keeps a *witness*, a table
the attacker cannot exclude that reaches the level (the optimal solution of that attacker LP).
Publishing cell s fixes ``y_s = a_s``; a witness with ``y_s = a_s`` stays feasible, so its
primary stays protected with no LP. Only primaries whose witness moves s are solved again, on
one HiGHS model per group whose column bounds change (the last basis is the warm start).

The clean-up never makes a pattern unsafe: each removal is proven before it is made. It stops
at a budget of CPU seconds (:func:`time.process_time`) or LPs and then says how many candidates
it did not try (``complete`` is False); the pattern it returns is still proven.

References
----------
Fischetti, M. and Salazar-González, J.J. (1999). Models and algorithms for optimizing cell
suppression in tabular data with linear constraints. *JASA* 95, 916-928.
Kelly, J.P., Golden, B.L. and Assad, A.A. (1992). Cell suppression: disclosure protection for
sensitive tabular data. *Networks* 22, 397-417 (the clean-up of redundant suppressions, sec. 4).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import highspy
import numpy as np

from ..errors import SolverError
from ..result import ResultDisplay
from .audit import attacker_model, suppressed_components
from .rules import Primary
from .table import Table

__all__ = ["CleanupResult", "prune_secondaries"]

_MAX, _MIN = highspy.ObjSense.kMaximize, highspy.ObjSense.kMinimize


@dataclass(frozen=True)
class CleanupResult(ResultDisplay):
    """What the clean-up did.

    Attributes
    ----------
    suppressed : ndarray of bool
        The pattern after the clean-up (primaries and the secondaries still needed).
    n_removed, n_tried, n_candidates : int
        Secondaries published, secondaries tried, secondaries there were.
    complete : bool
        Every candidate was tried (False: the budget ran out; the pattern is still proven).
    n_lps : int
        Attacker LPs solved.
    cpu_seconds : float
    proofs : dict
        ``{key: (cells, d)}``: the last attacker table of every primary and direction the
        clean-up solved, as a direction an audit can verify (``M d = 0``, support suppressed,
        bounds) instead of solving that LP again.
    """

    suppressed: np.ndarray
    n_removed: int
    n_tried: int
    n_candidates: int
    complete: bool
    n_lps: int
    cpu_seconds: float
    proofs: dict = field(default_factory=dict, repr=False)

    def statement(self) -> str:
        head = f"clean-up published {self.n_removed} of {self.n_candidates} secondary cells"
        if self.complete:
            return head + " (every secondary tried; each removal proven by the attacker LPs)"
        return head + (f" (partial: the budget ran out after {self.n_tried} of {self.n_candidates} tried; "
                       "each removal proven)")

    def to_dict(self) -> dict:
        return {"n_removed": self.n_removed, "n_tried": self.n_tried, "n_candidates": self.n_candidates,
                "complete": self.complete, "n_lps": self.n_lps, "cpu_seconds": round(self.cpu_seconds, 4),
                "statement": self.statement()}


class _Group:
    """One group of suppressed cells that shares relations, with its model and witnesses."""

    def __init__(self, table: Table, comp: np.ndarray, primary: Primary, lb, ub, tol: float) -> None:
        mask = np.zeros(table.n_cells, bool)
        mask[comp] = True
        self.h, self.cells, _ = attacker_model(table, mask, lb, ub)
        self.col = {int(c): k for k, c in enumerate(self.cells)}
        self.lb, self.ub = lb[self.cells], ub[self.cells]
        self.a = table.value[self.cells]
        self.prim = np.flatnonzero(primary.sensitive[self.cells])
        self.up = primary.upper[self.cells]
        self.dn = primary.lower[self.cells]
        self.sl = primary.sliding[self.cells]
        self.tol = tol * (1 + np.abs(self.a))
        self.witness: dict = {}  # (column, sense) -> attacker table (column values) reaching the level
        self.reach: dict = {}
        self.prev = None
        self.n_lps = 0

    def directions(self, k: int) -> list:
        out = []
        if self.up[k] > 0 or self.sl[k] > 0:
            out.append(_MAX)
        if self.dn[k] > 0 or self.sl[k] > 0:
            out.append(_MIN)
        return out

    def solve(self, k: int, sense) -> tuple[float, np.ndarray | None]:
        """The attacker's optimum of column k (reach beyond its value) and the optimal table."""
        h = self.h
        if self.prev != k:
            if self.prev is not None:
                h.changeColCost(self.prev, 0.0)
            h.changeColCost(k, 1.0)
            self.prev = k
        h.changeObjectiveSense(sense)
        h.run()
        self.n_lps += 1
        st = h.modelStatusToString(h.getModelStatus()).lower()
        if "unbounded" in st:
            return np.inf, None
        if st != "optimal":
            raise SolverError(f"suppression clean-up: HiGHS stopped with status {st!r}; rerun without the clean-up")
        v = h.getInfo().objective_function_value
        y = np.asarray(h.getSolution().col_value)
        return (v - self.a[k]) if sense == _MAX else (self.a[k] - v), y

    def protected(self, k: int) -> bool:
        r_up = self.reach.get((k, _MAX), np.inf)
        r_dn = self.reach.get((k, _MIN), np.inf)
        t = self.tol[k]
        return bool(r_up >= self.up[k] - t and r_dn >= self.dn[k] - t and r_up + r_dn >= self.sl[k] - t)

    def initial(self, over) -> bool | None:
        """Solve every primary's attacker LPs once: True if all are protected, None if ``over()``
        said the budget ran out first."""
        for k in self.prim:
            if over():
                return None
            for sense in self.directions(int(k)):
                r, y = self.solve(int(k), sense)
                self.reach[(int(k), sense)] = r
                self.witness[(int(k), sense)] = y
            if not self.protected(int(k)):
                return False
        return True

    def proofs(self) -> dict:
        """Each witness as a perturbation direction ``d = y - a`` over the suppressed cells it
        moves (``M d = 0``): a proof an audit can check itself (Fischetti & Salazar-González 1999:
        a feasible attacker table)."""
        out = {}
        for (k, sense), y in self.witness.items():
            if y is None:
                continue
            d = y - self.a
            nz = np.abs(d) > 1e-12 * (1 + np.abs(self.a))
            if nz.any():
                out[("witness", int(self.cells[k]), int(sense))] = (self.cells[nz], d[nz])
        return out

    def try_publish(self, c: int) -> bool:
        """Fix cell c at its value; keep the fix and return True if every primary stays protected."""
        k = self.col[c]
        a = self.a[k]
        moved = [key for key, y in self.witness.items()
                 if y is not None and abs(y[k] - a) > 1e-9 * (1 + abs(a))]
        moved += [key for key, y in self.witness.items() if y is None]  # unbounded: no finite witness
        self.h.changeColBounds(k, a, a)
        if not moved:
            return True
        new = {}
        saved = {key: self.reach[key] for key in moved}
        ok = True
        for key in sorted(moved, key=lambda x: x[0]):
            r, y = self.solve(key[0], key[1])
            new[key] = y
            self.reach[key] = r
            if not self.protected(key[0]):
                ok = False
                break
        if not ok:
            self.reach.update(saved)
            self.h.changeColBounds(k, self.lb[k], self.ub[k])
            return False
        self.witness.update(new)
        return True


def prune_secondaries(table: Table, suppressed: np.ndarray, primary: Primary, weights: np.ndarray,
                      lb: np.ndarray, ub: np.ndarray, *, cpu_budget: float | None = 60.0,
                      max_lps: int | None = None, tol: float = 1e-6) -> CleanupResult:
    """Publish secondary cells, most expensive first, while every primary stays protected.

    Parameters
    ----------
    table : Table
    suppressed : array of bool
        A pattern that protects every primary (the audit passes).
    primary : Primary
    weights : array
        Cost of each cell (the order of the candidates: the dearest first).
    lb, ub : array
        A-priori bounds the attacker knows.
    cpu_budget : float or None
        CPU seconds of this process (:func:`time.process_time`); None: no limit.
    max_lps : int or None
        Attacker LPs the clean-up may solve; None: no limit.

    Returns
    -------
    CleanupResult
        Never less protected than the input: a cell is published only after its removal is
        proven. Raises :class:`~sdckit.errors.SolverError` if the input pattern is not protected.
    """
    c0 = time.process_time()
    sup = np.asarray(suppressed, bool).copy()
    sec_all = np.flatnonzero(sup & ~primary.sensitive)
    w = np.asarray(weights, float)
    order = sec_all[np.argsort(-w[sec_all], kind="stable")]
    comp_of = np.full(table.n_cells, -1)
    comps = suppressed_components(table, sup)
    for k, comp in enumerate(comps):
        comp_of[comp] = k
    groups: dict = {}  # built when the first candidate of the group is tried

    def out_of_budget() -> bool:
        n_lps = sum(g.n_lps for g in groups.values())
        return (cpu_budget is not None and time.process_time() - c0 > cpu_budget) or (
            max_lps is not None and n_lps >= max_lps)

    n_tried = n_removed = 0
    complete = True
    for c in order.tolist():
        if out_of_budget():
            complete = False
            break
        k = int(comp_of[c])
        comp = comps[k]
        if not primary.sensitive[comp].any():  # no primary shares a relation with it: not needed
            n_tried += 1
            sup[c] = False
            n_removed += 1
            continue
        g = groups.get(k)
        if g is None:
            g = groups[k] = _Group(table, comp, primary, lb, ub, tol)
            ok = g.initial(out_of_budget)
            if ok is False:
                raise SolverError("suppression clean-up: the pattern does not protect every primary; "
                                  "run the audit on it first")
            if ok is None or out_of_budget():
                complete = False
                break
        n_tried += 1
        if g.try_publish(c):
            sup[c] = False
            n_removed += 1
    proofs: dict = {}
    for g in groups.values():
        proofs.update(g.proofs())
    return CleanupResult(sup, n_removed, n_tried, int(sec_all.size), complete,
                         sum(g.n_lps for g in groups.values()), time.process_time() - c0, proofs)
