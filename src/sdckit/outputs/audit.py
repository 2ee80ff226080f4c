"""What an intruder can recover from a session's tables: the LP audit of suppressed cells, for one
table with its margins and for tables linked through shared records (differencing).

The unknowns are the counts (or value totals) of the *atoms*: the groups of records that fall in
the same cell of every output of a linked set. Each cell an output publishes, interior or margin,
is the sum of its atoms; a cell that fails a rule counts as suppressed (it must be, before
release) and gives no equation. For each suppressed cell, and for each atom that is a small
cell of its own (between 1 and ``threshold - 1`` records), two linear programmes give the
intruder's interval ``[lo, hi]`` (Fischetti and Salazar-Gonzalez 2001, section 2: the attacker
subproblems, min and max of the cell subject to the published cells and the bounds). The
quantity is *recovered* when the interval is narrower than its protection: for a count ``a``,
``hi >= a + 1`` and ``lo <= a - 1`` (``lo <= 0`` when ``a = 0``): the count is not known exactly;
for a total ``a``, ``hi >= (1 + p) a`` and ``lo <= (1 - p) a`` with the p-ratio's ``p``
(Hundepool et al. 2012, section 4.2.2).

Assumption (conservative): the intruder knows which combinations of the outputs' cells occur
in the data (the atoms), and that counts, and totals of non-negative values, are >= 0. For one
table this is the full grid of its cells, the standard audit.

References
----------
Fischetti, M. and Salazar-Gonzalez, J. J. (2001). Solving the cell suppression problem on
tabular data with linear constraints. *Management Science* 47(7), 1008-1027.
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, sections 4.2 and 4.3. Wiley.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .intervals import IntruderSystem

__all__ = ["TableLayout", "Recovered", "audit_linked"]


@dataclass
class TableLayout:
    """One table output as the audit sees it.

    Attributes
    ----------
    uid : str
        The output's id.
    shape : tuple of int
        The interior grid (rows, columns); a one-way table has one column.
    margins : bool
        Whether row and column totals (and the grand total) are published.
    record_ids : ndarray
        The id of each record behind the table (its label in the researcher's frame).
    cell : ndarray of int
        Each record's interior cell (flat index, row-major); -1 for a record outside the table.
    weight : ndarray of float
        What each record adds to its cell: 1 for a count, the value for a total.
    failed : ndarray of bool, shape (rows + margins, columns + margins)
        The cells that fail a rule (suppressed), margins in the last row and column.
    measure : str
        "count" or the name of the summed variable: only outputs of the same measure link.
    labels : callable, optional
        ``labels(r, c)`` -> the cell's name in words.
    """

    uid: str
    shape: tuple[int, int]
    margins: bool
    record_ids: np.ndarray
    cell: np.ndarray
    weight: np.ndarray
    failed: np.ndarray
    measure: str = "count"
    labels: object = None
    equations: np.ndarray | None = None  # published cells that are true sums (default: every cell)
    unique_ids: bool = True

    def published_cells(self) -> list[tuple[int, int]]:
        r, c = self.shape
        rr = r + 1 if self.margins else r
        cc = c + 1 if self.margins else c
        return [(i, j) for i in range(rr) for j in range(cc)]

    def members(self, i: int, j: int) -> np.ndarray:
        """The interior cells (flat) that make up published cell (i, j) (a margin holds a row,
        a column or all of them)."""
        r, c = self.shape
        rows = np.arange(r) if i == r else np.array([i])
        cols = np.arange(c) if j == c else np.array([j])
        return (rows[:, None] * c + cols[None, :]).ravel()

    def name(self, i: int, j: int) -> str:
        if callable(self.labels):
            return str(self.labels(i, j))
        return f"({i}, {j})"


@dataclass
class Recovered:
    """One quantity an intruder can narrow below its protection."""

    what: str                  # "suppressed cell" or "derived cell"
    outputs: tuple[str, ...]   # the outputs whose published cells give it away (a set)
    cell: str                  # the cell (or the atom) in words
    position: tuple | None     # (output, row, column) of a suppressed cell; None for an atom
    value: float               # the true value
    lo: float                  # the intruder's interval
    hi: float
    exact: bool = field(default=False)
    # the outputs that publish a cell holding the quantity's records, with ``outputs``: each takes part
    # in giving it away (another proof may use them); empty means ``outputs``
    involved: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"what": self.what, "outputs": list(self.outputs), "cell": self.cell,
                "position": None if self.position is None else list(self.position),
                "value": float(self.value), "interval": [float(self.lo), float(self.hi)], "exact": bool(self.exact)}

    def sentence(self) -> str:
        lo = f"{self.lo:g}" if np.isfinite(self.lo) else "-inf"
        hi = f"{self.hi:g}" if np.isfinite(self.hi) else "inf"
        how = "exactly" if self.exact else f"to within [{lo}, {hi}]"
        src = (self.outputs[0] + "'s margins" if len(self.outputs) == 1
               else "the linked outputs " + ", ".join(self.outputs) + " together")
        return f"{self.what} {self.cell} (value {self.value:g}) is recovered {how} from {src}"


def _protected(a: float, lo: float, hi: float, *, count: bool, p: float) -> bool:
    tol = 1e-6 * max(1.0, abs(a))
    if count:
        up, down = 1.0, min(1.0, max(a, 0.0))
        return hi >= a + up - tol and lo <= a - down + tol if a > 0 else hi >= a + up - tol
    span = p * abs(a)
    if span == 0:
        return hi - lo > tol
    return hi >= a + span - tol and lo <= a - span + tol


def _atoms(tables: list[TableLayout]) -> tuple[np.ndarray, np.ndarray]:
    """The atoms of a linked set: each atom's interior cell in every table (-1 outside), shape
    (atoms, tables), and its value (records for a count, the sum for a total).

    Atoms are ordered by their cells, table by table (lexicographic). A record's key is built
    table by table in mixed radix and re-ranked whenever the next digit could overflow an int64,
    so any number of tables can be linked.
    """
    count = tables[0].measure == "count"
    all_ids = np.concatenate([t.record_ids for t in tables])
    dense = (all_ids.dtype.kind in "iu" and all_ids.size and all_ids.min() >= 0
             and all_ids.max() < 4 * all_ids.size + 1024)
    if dense:  # integer labels of one frame: positions without a sort
        n_ids = int(all_ids.max()) + 1
        positions = [t.record_ids.astype(np.int64) for t in tables]
    else:
        ids = np.unique(all_ids)
        n_ids = ids.size
        positions = [np.searchsorted(ids, t.record_ids) for t in tables]
    key = np.zeros(n_ids, dtype=np.int64)
    bound = 1  # key < bound
    present = np.zeros(n_ids, bool)
    vals = np.zeros(n_ids)
    cells = []
    for t, pos in zip(tables, positions, strict=True):
        radix = t.shape[0] * t.shape[1] + 1
        if bound * radix >= 2 ** 62:  # re-rank: the order of the keys (lexicographic) is kept
            _, key = np.unique(key, return_inverse=True)
            key = key.ravel().astype(np.int64)
            bound = int(key.max()) + 1
        ck = np.full(n_ids, -1, np.int64)
        ck[pos] = t.cell
        cells.append(ck)
        key = key * radix + (ck + 1)
        bound *= radix
        inside = t.cell >= 0
        present[pos[inside]] = True
        vals[pos[inside]] = t.weight[inside]  # same measure: the same value wherever it is counted
    idx = np.flatnonzero(present)
    _, first, inverse = np.unique(key[idx], return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    rep = idx[first]
    sig = np.stack([ck[rep] for ck in cells], axis=1) if cells else np.zeros((0, 0), np.int64)
    if count:
        atom_value = np.bincount(inverse, minlength=rep.size).astype(float)
    else:
        atom_value = np.bincount(inverse, weights=vals[idx], minlength=rep.size)
    # each table's empty interior cells become atoms of their own (the intruder does not know they are empty)
    extra = []
    for k, t in enumerate(tables):
        used = np.zeros(t.shape[0] * t.shape[1], bool)
        used[sig[:, k][sig[:, k] >= 0]] = True
        empty = np.flatnonzero(~used)
        if empty.size:
            rows = np.full((empty.size, len(tables)), -1, dtype=np.int64)
            rows[:, k] = empty
            extra.append(rows)
    if extra:
        sig = np.vstack([sig, *extra])
        atom_value = np.concatenate([atom_value, np.zeros(sig.shape[0] - atom_value.size)])
    return sig, atom_value


def _published(tables: list[TableLayout], sig: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Every published cell of every table (rows, table after table, each grid row-major) as a sum
    of atoms; returns the 0/1 matrix, each row's table and each row's offset in its table."""
    n_atoms = sig.shape[0]
    rows, cols, owner, offsets = [], [], [], []
    off = 0
    for k, t in enumerate(tables):
        r, c = t.shape
        rr, cc = t.failed.shape
        code = sig[:, k]
        inside = np.flatnonzero(code >= 0)
        i, j = np.divmod(code[inside], c)
        rows.append(off + i * cc + j)
        cols.append(inside)
        if t.margins:
            rows += [off + i * cc + c, off + r * cc + j, np.full(inside.size, off + r * cc + c)]
            cols += [inside] * 3
        owner.append(np.full(rr * cc, k))
        offsets.append(np.arange(rr * cc))
        off += rr * cc
    rows_a, cols_a = np.concatenate(rows), np.concatenate(cols)
    a_full = sp.csr_matrix((np.ones(rows_a.size), (rows_a, cols_a)), shape=(off, n_atoms))
    a_full.sort_indices()
    return a_full, np.concatenate(owner), np.concatenate(offsets)


def audit_linked(tables: list[TableLayout], *, threshold: int, p: float, derived: bool = True,
                 pairs: bool = False, skip: set | None = None, stats: dict | None = None) -> tuple[list[Recovered], str]:
    """Audit tables of one measure linked through shared records (one table: its margins).

    The intruder's system (atoms, and every published cell that passes the rules as an equation)
    falls apart into connected components: atoms that share no published cell, directly or
    through other atoms, vary independently, so the interval of a target (a sum of atoms) is the
    sum of its parts' intervals, each from the part's component alone (one small HiGHS model per
    component, built once; only the objective changes between solves). An atom in no equation
    is its own component: its maximum is unbounded and its minimum is its a-priori bound, without
    an LP. Before any LP a target is tested against the feasible points already seen (the true
    values and earlier LP optima, combined across components): when they already span its
    protection, it is protected and needs no LP (a witness, not an estimate). Identical targets
    (the same atoms: a table published twice) are solved once. A target whose interval is
    narrower than its protection is solved exactly, both bounds.

    The outputs reported for a recovered quantity are those whose published cells carry a
    non-zero multiplier in the dual of one of its LPs (with the target's own output): the
    equations of the other outputs can be dropped without changing either bound (LP duality).

    Parameters
    ----------
    tables : list of TableLayout
        The linked tables, of one measure.
    threshold : int
        The threshold rule: an atom of 1 to ``threshold - 1`` records is a small cell.
    p : float
        The p-ratio's ``p``: the protection of a total.
    derived : bool
        Audit the atoms that are small cells of their own (differencing), besides the suppressed cells.
    skip : set, optional
        Positions ``(uid, row, column)`` of suppressed cells already known to be recovered (by the
        single-table audits): their programmes are not solved again.
    stats : dict, optional
        Filled with the system's size and the work done: ``n_atoms``, ``n_equations``,
        ``n_components``, ``n_targets``, ``n_witnessed`` (settled by feasible points), ``n_lps``.

    Returns
    -------
    recovered : list of Recovered
        The quantities recovered below their protection.
    status : str
        "exact" (every LP solved to optimality) or "failed: ...".
    """
    if stats is not None:
        stats.update(n_atoms=0, n_equations=0, n_components=0, n_targets=0, n_fixed=0, n_witnessed=0, n_lps=0)
    if not tables:
        return [], "exact"
    count = tables[0].measure == "count"
    sig, atom_value = _atoms(tables)
    n_atoms = sig.shape[0]
    nonneg = count or bool((np.concatenate([t.weight for t in tables]) >= 0).all())
    a_full, owner, offset = _published(tables, sig)
    values = a_full @ atom_value
    failed = np.concatenate([t.failed.ravel() for t in tables])
    usable = ~failed & np.concatenate([np.ones(t.failed.size, bool) if t.equations is None else t.equations.ravel()
                                       for t in tables])
    # targets: (atoms, value, what, table, position, words) -- words of derived cells are built when reported
    targets: list[tuple] = []
    for row in np.flatnonzero(failed):
        k = int(owner[row])
        t = tables[k]
        i, j = divmod(int(offset[row]), t.failed.shape[1])
        position = (t.uid, i, j)
        if skip and position in skip:
            continue
        atoms = a_full.indices[a_full.indptr[row]:a_full.indptr[row + 1]]
        targets.append((atoms, float(values[row]), "suppressed cell", k, position, None))
    if derived and count and len(tables) > 1:
        small = (atom_value >= 1) & (atom_value < threshold)
        # an atom that is a whole cell of one output is that cell: its own rules (threshold) and the
        # suppressed-cell targets cover it; only the cells that no output publishes are derived
        for k in range(len(tables)):
            code = sig[:, k]
            inside = code >= 0
            cell_total = np.bincount(code[inside], weights=atom_value[inside],
                                     minlength=tables[k].shape[0] * tables[k].shape[1])
            whole = np.zeros(n_atoms, bool)
            whole[inside] = np.isclose(cell_total[code[inside]], atom_value[inside])
            small &= ~whole
        for a in np.flatnonzero(small):
            targets.append((np.array([a]), float(atom_value[a]), "derived cell", None, None, int(a)))
    if pairs and derived and count and len(tables) > 1:
        targets += _pair_targets(tables, sig, atom_value, a_full, threshold,
                                 {t[0].astype(np.int64).tobytes() for t in targets})
    if stats is not None:
        stats.update(n_atoms=n_atoms, n_targets=len(targets))
    if not targets:
        return [], "exact"
    eq_rows = np.flatnonzero(usable)
    # a cell published twice (the same table again, or the same cell in two outputs) is one equation;
    # every output that publishes it is named where it is used
    seen_rows: dict[bytes, int] = {}
    publishers: dict[int, set] = {}
    for r in eq_rows.tolist():
        first = seen_rows.setdefault(a_full.indices[a_full.indptr[r]:a_full.indptr[r + 1]].tobytes(), r)
        publishers.setdefault(first, set()).add(int(owner[r]))
    eq_rows = np.array(sorted(seen_rows.values()), dtype=np.int64)

    def involved(atoms: np.ndarray, used: set) -> tuple[str, ...]:
        """The proof's outputs and those that publish a cell holding the quantity's records."""
        holders = set(np.flatnonzero((sig[atoms] >= 0).any(axis=0)).tolist()) if atoms.size else set()
        return tuple(tables[kk].uid for kk in sorted(used | holders))

    def named(rows) -> set:
        """The outputs that publish the equations ``rows``."""
        return set().union(*(publishers[int(eq_rows[r])] for r in rows)) if len(rows) else set()
    a_eq = a_full[eq_rows]
    b = values[eq_rows]
    # elimination first (values the equations fix), then one LP model per connected component
    system = IntruderSystem(a_eq, b, nonneg, x_true=atom_value)
    out: list[Recovered] = []
    n_witnessed = n_fixed = 0
    for atoms, value, what, k, position, atom in targets:
        if atom is None:
            words = lambda k=k, position=position: tables[k].name(*position[1:])  # noqa: E731
        elif isinstance(atom, tuple):  # a cell of the difference of two outputs
            words = lambda atom=atom: _derived_words([tables[atom[0]], tables[atom[1]]],  # noqa: E731
                                                     np.array([atom[2:]]), 0)
        else:
            words = lambda atom=atom: _derived_words(tables, sig, atom)  # noqa: E731
        settled = system.elim.settle(atoms) if atoms.size else None
        if settled is not None:  # determined by the equations: exact
            lo = hi = settled[0]
            if not _protected(value, lo, hi, count=count, p=p):
                used = ({k} if k is not None else set()) | named(settled[1])
                out.append(Recovered(what, tuple(tables[kk].uid for kk in sorted(used)), words(), position, value,
                                     lo, hi, exact=True, involved=involved(atoms, used)))
            n_fixed += 1
            continue
        const, known, parts = system.split(atoms)
        # the witnesses: feasible points already seen, combined component by component
        lo_w, hi_w = system.witness(parts)
        lo_w, hi_w = const + lo_w, const + hi_w
        if _protected(value, lo_w, hi_w, count=count, p=p):
            n_witnessed += 1
            continue
        lo_ok = _protected(value, lo_w, np.inf, count=count, p=p)
        hi_ok = _protected(value, -np.inf, hi_w, count=count, p=p)
        lo = lo_w if lo_ok else const + system.bound(parts, False, words)
        hi = hi_w if hi_ok else const + system.bound(parts, True, words)
        if _protected(value, lo, hi, count=count, p=p):
            continue
        lo = const + system.bound(parts, False, words)
        hi = const + system.bound(parts, True, words)
        if _protected(value, lo, hi, count=count, p=p):  # pragma: no cover - the exact bounds are wider
            continue
        # the witness set: outputs with a non-zero multiplier in a dual (and the cell's own output)
        proof = system.proof(known, parts, words)
        used = ({k} if k is not None else set()) | named(sorted(proof))
        outputs = tuple(tables[kk].uid for kk in sorted(used))
        out.append(Recovered(what, outputs, words(), position, value, lo, hi,
                             exact=bool(np.isfinite(lo) and np.isfinite(hi) and hi - lo <= 1e-6 * max(1, abs(value))),
                             involved=involved(atoms, used)))
    if stats is not None:
        stats.update(n_equations=int(eq_rows.size), n_components=system.n_components, n_witnessed=n_witnessed,
                     n_lps=system.n_lps, n_fixed=n_fixed)
    status = system.status
    return out, status


def _pair_targets(tables: list[TableLayout], sig: np.ndarray, atom_value: np.ndarray, a_full: sp.csr_matrix,
                  threshold: int, known: set) -> list[tuple]:
    """The small cells of the difference of two outputs: for each two tables that share records,
    the records in a cell of one and in a cell (or outside) of the other, a union of atoms. Those
    with 1 to ``threshold - 1`` records are targets, unless they are one atom (the atom's own
    target), a whole interior cell of an output (that cell's own rules and target cover it) or a
    target already listed (``known``: the atoms' indices as bytes). A pair audited alone has
    these as its atoms; here the other outputs' equations only narrow their intervals."""
    out: list[tuple] = []
    inside = sig >= 0
    shared = inside.T.astype(np.int64) @ inside.astype(np.int64)
    seen = set(known)
    offsets = np.concatenate([[0], np.cumsum([t.failed.size for t in tables])])
    for k, t in enumerate(tables):  # the interior cells' atoms
        r, c = t.shape
        cc = t.failed.shape[1]
        for row in (offsets[k] + (np.arange(r)[:, None] * cc + np.arange(c)[None, :])).ravel():
            seen.add(a_full.indices[a_full.indptr[row]:a_full.indptr[row + 1]].astype(np.int64).tobytes())
    for k in range(len(tables)):
        for m in range(k + 1, len(tables)):
            if shared[k, m] == 0:
                continue
            code = (sig[:, k] + 1) * (tables[m].shape[0] * tables[m].shape[1] + 1) + (sig[:, m] + 1)
            idx = np.flatnonzero(code > 0)
            ukey, inv = np.unique(code[idx], return_inverse=True)
            inv = inv.ravel()
            total = np.bincount(inv, weights=atom_value[idx], minlength=ukey.size)
            size = np.bincount(inv, minlength=ukey.size)
            pick = np.flatnonzero((total >= 1) & (total < threshold) & (size > 1))
            if pick.size == 0:
                continue
            order = np.argsort(inv, kind="stable")
            split = np.concatenate([[0], np.cumsum(size)])
            for g in pick:
                atoms = idx[order[split[g]:split[g + 1]]].astype(np.int64)
                key = atoms.tobytes()
                if key in seen:
                    continue
                seen.add(key)
                a0 = atoms[0]
                out.append((atoms, float(total[g]), "derived cell", None, None,
                            (k, m, int(sig[a0, k]), int(sig[a0, m]))))
    return out


def _derived_words(tables: list[TableLayout], sig: np.ndarray, a: int) -> str:
    """An atom in words: the cells of the outputs that hold its records, and the outputs that do not."""
    inside = [k for k in range(len(tables)) if sig[a, k] >= 0]
    outside = [tables[k].uid for k in range(len(tables)) if sig[a, k] < 0]
    words = " and ".join(f"{tables[k].uid}{tables[k].name(*divmod(int(sig[a, k]), tables[k].shape[1]))}"
                         for k in inside)
    if outside:
        return f"the records in {words} but in none of {', '.join(outside)}"
    return f"the records in {words}"


def audit_published(values: np.ndarray, suppressed: np.ndarray) -> list[tuple[int, int, float, float]]:
    """The intruder's interval of each suppressed cell of a published two-way frequency table with
    margins (last row and column), from the published numbers alone.

    ``values`` holds the published grid (NaN where blank); ``suppressed`` marks the cells treated
    as unknown (blank or failing). Unknowns are the interior cells (>= 0); every published cell
    not suppressed is an equation. Returns ``(row, column, lo, hi)`` per suppressed cell.
    Elimination settles the cells the equations fix; the others get two LPs on their connected
    component (:class:`~sdckit.outputs.intervals.IntruderSystem`).
    """
    rr, cc = values.shape
    r, c = rr - 1, cc - 1
    n = r * c
    i, j = np.divmod(np.arange(n), c)
    rows = np.concatenate([i * cc + j, i * cc + c, r * cc + j, np.full(n, r * cc + c)])
    a_full = sp.csr_matrix((np.ones(rows.size), (rows, np.tile(np.arange(n), 4))), shape=(rr * cc, n))
    a_full.sort_indices()
    flat = np.asarray(values, float).ravel()
    eq = np.flatnonzero(~np.asarray(suppressed, bool).ravel() & ~np.isnan(flat))
    system = IntruderSystem(a_full[eq], flat[eq], nonneg=True)
    out = []
    for ci, cj in np.argwhere(suppressed):
        cell = int(ci) * cc + int(cj)
        atoms = a_full.indices[a_full.indptr[cell]:a_full.indptr[cell + 1]].astype(np.int64)
        settled = system.elim.settle(atoms) if atoms.size else None
        if settled is not None:
            out.append((int(ci), int(cj), settled[0], settled[0]))
            continue
        const, _, parts = system.split(atoms)
        words = lambda ci=ci, cj=cj: f"cell ({ci}, {cj})"  # noqa: E731
        lo = const + system.bound(parts, False, words)
        hi = const + system.bound(parts, True, words)
        out.append((int(ci), int(cj), lo, hi))
    return out
