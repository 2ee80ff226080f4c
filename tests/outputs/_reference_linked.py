"""The linked audit as it was before its solve was split by connected components (one HiGHS model
for the whole linked set, two LPs per target, every target solved): kept as the reference that the
component-wise audit must reproduce interval for interval (``test_linked_components.py``).

Its atoms' keys are a mixed-radix product over the tables, so only small sets (whose product of
cell counts fits an int64) may be given to it.
"""

from __future__ import annotations

import highspy
import numpy as np
import scipy.sparse as sp

from sdckit._highs import INF, new_highs, pass_lp, run
from sdckit.outputs.audit import Recovered, TableLayout

__all__ = ["reference_audit_linked"]


def _membership(t: TableLayout) -> sp.csr_matrix:
    """Which interior cells make up each published cell (rows: the published grid, row-major)."""
    r, c = t.shape
    rr, cc = (r + 1, c + 1) if t.margins else (r, c)
    rows, cols = [], []
    i, j = np.divmod(np.arange(r * c), c)
    interior = i * cc + j
    rows.append(interior)
    cols.append(np.arange(r * c))
    if t.margins:
        rows += [i * cc + c, r * cc + j, np.full(r * c, r * cc + c)]
        cols += [np.arange(r * c)] * 3
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(rr * cc, r * c))


def _protected(a: float, lo: float, hi: float, *, count: bool, p: float) -> bool:
    tol = 1e-6 * max(1.0, abs(a))
    if count:
        up, down = 1.0, min(1.0, max(a, 0.0))
        return hi >= a + up - tol and lo <= a - down + tol if a > 0 else hi >= a + up - tol
    span = p * abs(a)
    if span == 0:
        return hi - lo > tol
    return hi >= a + span - tol and lo <= a - span + tol


def reference_audit_linked(tables: list[TableLayout], *, threshold: int, p: float, derived: bool = True,
                 skip: set | None = None) -> tuple[list[Recovered], str]:
    """Audit tables of one measure linked through shared records (one table: its margins).

    ``skip`` holds positions ``(uid, row, column)`` of suppressed cells already known to be
    recovered (by the single-table audits): their programmes are not solved again.

    Returns the recovered quantities and the audit status ("exact": every LP solved to
    optimality; "failed: ..." otherwise).
    """
    if not tables:
        return [], "exact"
    count = tables[0].measure == "count"
    # atoms: records with the same interior cell in every table (-1 outside a table)
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
    # each record's atom key: its interior cell in every table, mixed radix (cell + 1; 0 = outside)
    radix = [t.shape[0] * t.shape[1] + 1 for t in tables]
    key = np.zeros(n_ids, dtype=np.int64)
    present = np.zeros(n_ids, bool)
    vals = np.zeros(n_ids)
    for k, (t, pos) in enumerate(zip(tables, positions, strict=True)):
        key *= radix[k]
        cell_k = np.zeros(n_ids, np.int64)
        cell_k[pos] = t.cell + 1
        key += cell_k
        inside = t.cell >= 0
        present[pos[inside]] = True
        vals[pos[inside]] = t.weight[inside]  # same measure: the same value wherever it is counted
    key, vals = key[present], vals[present]
    ukeys, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.ravel()
    sig = np.empty((ukeys.size, len(tables)), dtype=np.int64)
    rest = ukeys.copy()
    for k in range(len(tables) - 1, -1, -1):
        rest, digit = np.divmod(rest, radix[k])
        sig[:, k] = digit - 1
    atom_value = np.bincount(inverse, weights=vals if not count else None, minlength=sig.shape[0])
    if count:
        atom_value = np.bincount(inverse, minlength=sig.shape[0]).astype(float)
    # each table's empty interior cells become atoms of their own (the intruder does not know they are empty)
    extra_sig = []
    for k, t in enumerate(tables):
        n_cells = t.shape[0] * t.shape[1]
        used = np.zeros(n_cells, bool)
        used[sig[:, k][sig[:, k] >= 0]] = True
        for cell in np.flatnonzero(~used):
            row = np.full(len(tables), -1, dtype=np.int64)
            row[k] = cell
            extra_sig.append(row)
    if extra_sig:
        sig = np.vstack([sig, np.array(extra_sig)])
        atom_value = np.concatenate([atom_value, np.zeros(len(extra_sig))])
    n_atoms = sig.shape[0]
    nonneg = count or bool((np.concatenate([t.weight for t in tables]) >= 0).all())
    # published cells -> rows of equations; suppressed cells -> targets (sparse products, no loop over cells)
    blocks, rhs_parts = [], []
    targets: list[tuple[np.ndarray, float, str, tuple, tuple, str]] = []
    for k, t in enumerate(tables):
        membership = _membership(t)                       # published cells x interior cells
        code = sig[:, k]
        inside = np.flatnonzero(code >= 0)
        n_cells = t.shape[0] * t.shape[1]
        incidence = sp.csr_matrix((np.ones(inside.size), (code[inside], inside)), shape=(n_cells, n_atoms))
        a_k = (membership @ incidence).tocsr()           # published cells x atoms
        values = a_k @ atom_value
        failed = t.failed.ravel()
        usable = ~failed if t.equations is None else (~failed & t.equations.ravel())
        blocks.append(a_k[np.flatnonzero(usable)])
        rhs_parts.append(values[usable])
        cc = t.failed.shape[1]
        for p_idx in np.flatnonzero(failed):
            i, j = divmod(int(p_idx), cc)
            row = a_k.getrow(p_idx)
            atoms = row.indices.copy()
            # the outputs that hold any of the cell's records (the others cannot help recover it)
            involved = tuple(u.uid for kk, u in enumerate(tables) if kk == k or (sig[atoms, kk] >= 0).any())
            targets.append((atoms, float(values[p_idx]), "suppressed cell", involved, (t.uid, i, j), t.name(i, j)))
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
            inside = [tables[k].uid for k in range(len(tables)) if sig[a, k] >= 0]
            outside = [tables[k].uid for k in range(len(tables)) if sig[a, k] < 0]
            words = " and ".join(f"{tables[k].uid}{tables[k].name(*divmod(int(sig[a, k]), tables[k].shape[1]))}"
                                 for k in range(len(tables)) if sig[a, k] >= 0)
            if outside:
                words = f"the records in {words} but in none of {', '.join(outside)}"
            else:
                words = f"the records in {words}"
            targets.append((np.array([a]), float(atom_value[a]), "derived cell", tuple(inside), None, words))
    if not targets:
        return [], "exact"
    a_mat = sp.vstack(blocks).tocsr() if blocks else sp.csr_matrix((0, n_atoms))
    b = np.concatenate(rhs_parts) if rhs_parts else np.zeros(0)
    h = new_highs()
    pass_lp(h, a_mat, cost=np.zeros(n_atoms), col_lower=np.zeros(n_atoms) if nonneg else np.full(n_atoms, -INF),
            col_upper=np.full(n_atoms, INF), row_lower=b, row_upper=b)
    out: list[Recovered] = []
    status = "exact"
    all_uids = tuple(t.uid for t in tables)
    free = np.diff(a_mat.tocsc().indptr) == 0  # atoms in no equation: each can grow without bound
    prev = np.zeros(0, np.int32)
    for atoms, value, what, src, position, words in targets:
        if position is not None and skip and position in skip:
            continue
        bounds = []
        if prev.size:  # only the previous target's columns change back
            h.changeColsCost(prev.size, prev, np.zeros(prev.size))
        prev = np.asarray(atoms, np.int32)
        if prev.size:
            h.changeColsCost(prev.size, prev, np.ones(prev.size))
        for sense in (highspy.ObjSense.kMinimize, highspy.ObjSense.kMaximize):
            if sense == highspy.ObjSense.kMaximize and free[atoms].any():
                bounds.append(np.inf)  # an atom no published cell holds: the maximum is unbounded
                continue
            h.changeObjectiveSense(sense)
            st = run(h)
            if st == "optimal":
                bounds.append(float(h.getInfo().objective_function_value))
            elif st == "unbounded":
                bounds.append(-np.inf if sense == highspy.ObjSense.kMinimize else np.inf)
            else:
                status = f"failed: HiGHS ended {st!r} on {words}"
                bounds.append(-np.inf if sense == highspy.ObjSense.kMinimize else np.inf)
        lo, hi = bounds
        if not _protected(value, lo, hi, count=count, p=p):
            outputs = src if (len(tables) == 1 or what == "suppressed cell") else all_uids
            out.append(Recovered(what, outputs, words, position, value, lo, hi,
                                 exact=bool(np.isfinite(lo) and np.isfinite(hi) and hi - lo <= 1e-6 * max(1, abs(value)))))
    return out, status
