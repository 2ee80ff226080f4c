"""Linked tables: several tables from the same spanning variables, protected jointly.

Tables built from the same microdata with different cross-classifications (``region x
activity`` and ``region x size``) or different hierarchies of one variable share cells: the
``region`` margin of both, a subtotal of one hierarchy that is a code of another. Protecting
them one by one lets an attacker combine them. Here they are protected as one system:

1. every cell of every table is described by the set of leaf codes it covers in each spanning
   variable (the total covers all); cells with the same description are the same cell, held
   once in the joint system (and the tables must agree on its value: that is checked);
2. the joint system has the union of the cells and of every table's relations (each total =
   sum of its parts), as a sparse matrix;
3. the primary cells of every table (its rules) are the primary cells of the joint system,
   with the largest protection levels;
4. the existing optimal (or heuristic) suppression runs on the joint system, and its audit --
   one LP per suppressed cell and direction over all relations of all tables -- is the audit
   of the linked system;
5. the pattern is mapped back: a common cell is suppressed in every table or in none.

For the cell key method the consistency is built in: a cell's key depends only on its records,
so a common cell gets the same noise in every table; :func:`linked_ckm` checks it.

References
----------
de Wolf, P.-P. & Giessing, S. (2009). Adjusting the tau-Argus modular approach to deal with
linked tables. *Data & Knowledge Engineering* 68(11), 1160-1174.
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, section 4.4.4 (linked tables). Wiley.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import InputError
from ..result import ResultDisplay
from .audit import audit
from .rules import Primary, primary_cells
from .suppression import HeuristicSuppression, OptimalSuppression
from .table import Hierarchy, Table

__all__ = ["LinkedSystem", "LinkedResult", "link_tables", "protect_linked", "linked_ckm"]


def _leafsets(h: Hierarchy) -> list:
    """For each node: the frozenset of leaf codes below it (None for the root = everything)."""
    out: list = [None] * len(h)
    for i in range(len(h) - 1, -1, -1):
        out[i] = frozenset([h.codes[i]]) if h.is_leaf[i] else frozenset().union(*(out[c] for c in h.children[i]))
    out[0] = None
    return out


class LinkedSystem(Table):
    """The joint system of linked tables, usable wherever a :class:`Table` is (suppression, audit).

    Attributes
    ----------
    tables : list of Table
    maps : list of ndarray
        ``maps[t][c]`` is the joint index of cell ``c`` of table ``t``.
    labels : list of str
        A readable name of each joint cell (its codes in the first table that has it).
    """

    def __init__(self, tables: Sequence[Table], names: Sequence[str] | None = None, tol: float = 1e-6) -> None:
        if len(tables) < 2:
            raise InputError("linked tables: give at least two tables")
        kinds = {t.kind for t in tables}
        if len(kinds) > 1:
            raise InputError(f"linked tables: all tables must be of one kind; got {sorted(kinds)}")
        self.tables = list(tables)
        self.names = list(names) if names is not None else [f"T{k + 1}" for k in range(len(tables))]
        index: dict = {}
        maps, labels, vals, freqs, tops, origin = [], [], [], [], [], []
        for k, t in enumerate(tables):
            sets = [_leafsets(h) for h in t.hierarchies]
            idx = np.unravel_index(np.arange(t.n_cells), t.shape)
            m = np.empty(t.n_cells, dtype=np.int64)
            for c in range(t.n_cells):
                sig = tuple(sorted((d, s[i[c]]) for d, s, i in zip(t.dims, sets, idx) if s[i[c]] is not None))
                j = index.get(sig)
                if j is None:
                    j = index[sig] = len(labels)
                    labels.append(f"{self.names[k]}: " + " x ".join(t.cell_codes(c)))
                    vals.append(t.value[c])
                    freqs.append(t.freq[c])
                    tops.append(None if t.top is None else t.top[c])
                    origin.append((k, c))
                else:
                    a = vals[j]
                    if abs(a - t.value[c]) > tol * (1 + abs(a)):
                        k0, c0 = origin[j]
                        raise InputError(f"linked tables disagree on a common cell: {self.names[k0]} "
                                         f"{t_codes(tables[k0], c0)} = {a:g} but {self.names[k]} "
                                         f"{t_codes(t, c)} = {t.value[c]:g}; build the tables from the same data")
                m[c] = j
            maps.append(m)
        self.maps = maps
        self.labels = labels
        n = len(labels)
        self.dims = ("linked cell",)
        self.hierarchies = ()
        self.shape = (n,)
        self.n_cells = n
        self.value = np.asarray(vals, dtype=float)
        self.freq = np.asarray(freqs, dtype=np.int64)
        if any(x is None for x in tops):
            self.top = None
        else:  # tables may keep different numbers of top contributions: pad with zeros
            w = max(x.size for x in tops)
            self.top = np.vstack([np.pad(x, (0, w - x.size)) for x in tops])
        self.kind = tables[0].kind
        self.response = tables[0].response
        rels = []
        for t, m in zip(tables, maps):
            r = t.relations.tocoo()
            if r.shape[0]:
                rels.append(sp.csr_matrix((r.data, (r.row, m[r.col])), shape=(r.shape[0], n)))
        rel = sp.vstack(rels).tocsr() if rels else sp.csr_matrix((0, n))
        # a one-child subtotal is the same cell as its child: its relation cancels to 0 = 0; drop
        # those and the relations that repeat (a margin relation shared by two tables)
        rel.sum_duplicates()
        rel.eliminate_zeros()
        keys = pd.Series([tuple(zip(rel.indices[rel.indptr[r]:rel.indptr[r + 1]].tolist(),
                                    rel.data[rel.indptr[r]:rel.indptr[r + 1]].tolist()))
                          for r in range(rel.shape[0])], dtype=object)
        keep = (~keys.duplicated().to_numpy()) & (np.diff(rel.indptr) > 0)
        self._relations = rel[np.flatnonzero(keep)]
        self.value.setflags(write=False)
        self.freq.setflags(write=False)

    def cell_codes(self, cell: int) -> tuple:
        return (self.labels[cell],)

    @property
    def is_inner(self) -> np.ndarray:
        out = np.zeros(self.n_cells, bool)
        for t, m in zip(self.tables, self.maps):
            out[m[t.is_inner]] = True
        return out

    def to_frame(self) -> pd.DataFrame:
        f = pd.DataFrame({"linked cell": self.labels, "value": self.value, "freq": self.freq})
        return f

    def describe(self) -> str:
        shared = self.n_shared
        return (f"linked system of {len(self.tables)} {self.kind} tables: {sum(t.n_cells for t in self.tables)} cells, "
                f"{self.n_cells} distinct ({shared} shared by more than one table), {self.relations.shape[0]} relations")

    @property
    def n_shared(self) -> int:
        cnt = np.zeros(self.n_cells, dtype=np.int64)
        for m in self.maps:
            cnt[np.unique(m)] += 1
        return int((cnt > 1).sum())

    def joint_primary(self, primaries: Sequence[Primary]) -> Primary:
        """Primary cells of the joint system: sensitive in any table; the largest levels."""
        n = self.n_cells
        sens, up, lo, sl = np.zeros(n, bool), np.zeros(n), np.zeros(n), np.zeros(n)
        reason = np.full(n, "", dtype=object)
        for p, m in zip(primaries, self.maps):
            np.logical_or.at(sens, m, p.sensitive)
            np.maximum.at(up, m, p.upper)
            np.maximum.at(lo, m, p.lower)
            np.maximum.at(sl, m, p.sliding)
            r = np.asarray(p.reason, dtype=object)
            new = (reason[m] == "") & (r != "")
            reason[m[new]] = r[new]
        return Primary(sens, up, lo, sl, reason)


def t_codes(t: Table, c: int) -> str:
    return "(" + ", ".join(f"{d}={x}" for d, x in zip(t.dims, t.cell_codes(c))) + ")"


def link_tables(tables: Sequence[Table], names: Sequence[str] | None = None) -> LinkedSystem:
    """The joint system of the given tables (see the module docstring)."""
    return LinkedSystem(tables, names)


@dataclass(frozen=True)
class LinkedResult(ResultDisplay):
    """Joint suppression of linked tables: the joint result and each table's pattern."""

    system: LinkedSystem
    result: object  # SuppressionResult on the joint system (its audit is the joint audit)
    suppressed: list  # per table: boolean pattern over its cells
    primary: list  # per table: its own Primary

    @property
    def audit_ok(self) -> bool:
        return bool(self.result.audit.ok)

    def table_audits(self) -> list:
        """Each table audited alone with its own pattern (weaker than the joint audit)."""
        return [audit(t, s, primary=p) for t, s, p in zip(self.system.tables, self.suppressed, self.primary)]

    def consistent(self) -> bool:
        """A common cell has the same status in every table."""
        joint = np.zeros(self.system.n_cells, dtype=np.int64)
        seen = np.zeros(self.system.n_cells, dtype=np.int64)
        for s, m in zip(self.suppressed, self.system.maps):
            np.add.at(joint, m, s.astype(np.int64))
            np.add.at(seen, m, 1)
        return bool(np.all((joint == 0) | (joint == seen)))

    def to_dict(self) -> dict:
        r = self.result
        return {"n_tables": len(self.system.tables), "n_cells": self.system.n_cells, "n_shared": self.system.n_shared,
                "n_primary": int(r.primary.n_primary), "n_secondary": int(r.n_secondary),
                "audit_ok": self.audit_ok, "consistent": self.consistent(), "status": r.status,
                "per_table_suppressed": [int(s.sum()) for s in self.suppressed]}

    def describe(self) -> str:
        d = self.to_dict()
        return (f"{self.system.describe()}; {d['n_primary']} primary, {d['n_secondary']} secondary; "
                f"joint audit {'passed' if d['audit_ok'] else 'FAILED'}; "
                f"common cells {'consistent' if d['consistent'] else 'INCONSISTENT'}")


def protect_linked(tables: Sequence[Table], rules, *, method: str = "optimal", names=None,
                   zero_unsafe: bool = False, manual: Sequence | None = None, primaries: Sequence | None = None,
                   **options) -> LinkedResult:
    """Protect linked tables jointly with one suppression pattern.

    Parameters
    ----------
    tables : sequence of Table
        Tables from the same microdata (same spanning variables, any cross-classification or
        hierarchy).
    rules : rule or list of rules
        Applied to every table (:func:`~sdckit.tables.rules.primary_cells`).
    method : {"optimal", "heuristic"}
        The suppression run on the joint system.
    manual : sequence of bool arrays, optional
        Extra sensitive cells per table (e.g. tau-Argus status ``U``).
    primaries : sequence of Primary, optional
        The primary cells of each table, already computed (then ``rules`` and ``manual`` are not used).
    """
    system = LinkedSystem(tables, names)
    if primaries is not None:
        prims = list(primaries)
    else:
        prims = [primary_cells(t, rules, zero_unsafe=zero_unsafe, manual=None if manual is None else manual[k])
                 for k, t in enumerate(tables)]
    joint = system.joint_primary(prims)
    cls = {"optimal": OptimalSuppression, "heuristic": HeuristicSuppression}.get(method)
    if cls is None:
        raise InputError(f"linked tables: method must be 'optimal' or 'heuristic'; got {method!r}")
    res = cls(**options).apply(system, joint)
    per = [np.asarray(res.suppressed, bool)[m] for m in system.maps]
    return LinkedResult(system, res, per, prims)


def linked_ckm(frame: pd.DataFrame, specs: Sequence[dict], *, key: str = "Key", ptable=None) -> tuple[list, dict]:
    """Perturb several frequency tables of the same microdata with the cell key method and check
    that every common cell has the same perturbed value in every table.

    ``specs``: one dict per table with ``dims`` and optional ``hierarchies``. Returns the
    :class:`~sdckit.tables.ckm.CKMResult` of each table and a check
    ``{"n_shared": .., "consistent": bool}``.
    """
    from .ckm import ckm_frequency, load_ptable

    pt = load_ptable(ptable, kind="counts")
    res = [ckm_frequency(frame, s["dims"], key=key, ptable=pt, hierarchies=s.get("hierarchies")) for s in specs]
    system = LinkedSystem([r.table for r in res])
    pert = np.full(system.n_cells, np.nan)
    ok = True
    for r, m in zip(res, system.maps):
        prev = pert[m]
        ok &= bool(np.all(np.isnan(prev) | (prev == r.perturbed)))
        pert[m] = r.perturbed
    return res, {"n_shared": system.n_shared, "consistent": ok}
