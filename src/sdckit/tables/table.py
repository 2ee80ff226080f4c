"""Hierarchical frequency and magnitude tables with their linear relations.

A :class:`Table` holds every cell of the cross product of its dimensions' hierarchies (inner
cells, subtotals and totals) as flat arrays in C order, plus, for magnitude tables, the
contributions the sensitivity rules need (number of contributors, the largest ones). The
linear relations (every total equals the sum of its parts) are derived once as a sparse
matrix ``M`` with ``M @ value == 0``.

References
----------
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, ch. 4 (tabular data). Wiley.
de Wolf, P.-P. et al. (2014). *tau-Argus user's manual*, version 4.1 (hierarchy files ``.hrc``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import InputError, InputWarning

__all__ = ["Hierarchy", "Table"]


class Hierarchy:
    """A code hierarchy of one dimension: a tree whose root is the total.

    Nodes are stored in pre-order (root first). ``parent[i]`` is the index of the parent of node
    ``i`` (-1 for the root); leaves are the codes found in the data.

    Parameters
    ----------
    codes : sequence of str
        Node codes in pre-order, root first.
    parent : sequence of int
        Parent index of each node (-1 for the root).
    """

    def __init__(self, codes: Sequence[str], parent: Sequence[int]) -> None:
        self.codes = tuple(str(c) for c in codes)
        self.parent = np.asarray(parent, dtype=np.int64)
        if len(set(self.codes)) != len(self.codes):
            dup = sorted({c for c in self.codes if self.codes.count(c) > 1})
            raise InputError(f"hierarchy codes must be unique; repeated: {dup[:10]}")
        if len(self.codes) == 0 or self.parent[0] != -1 or (self.parent[1:] < 0).any():
            raise InputError("a hierarchy needs exactly one root (the total) as its first node")
        self.index = {c: i for i, c in enumerate(self.codes)}
        self.children: list[list[int]] = [[] for _ in self.codes]
        for i, p in enumerate(self.parent[1:], start=1):
            self.children[p].append(i)
        depth = np.zeros(len(self.codes), dtype=np.int64)
        for i in range(1, len(self.codes)):
            depth[i] = depth[self.parent[i]] + 1
        self.depth = depth
        self.is_leaf = np.array([not c for c in self.children])

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def n_levels(self) -> int:
        """Number of levels below the total."""
        return int(self.depth.max())

    @property
    def leaves(self) -> tuple[str, ...]:
        return tuple(c for c, leaf in zip(self.codes, self.is_leaf) if leaf)

    def ancestors(self, i: int) -> list[int]:
        """Node ``i`` and all its ancestors up to the root."""
        out = [i]
        while self.parent[out[-1]] >= 0:
            out.append(int(self.parent[out[-1]]))
        return out

    @classmethod
    def flat(cls, codes: Iterable, total: str = "Total") -> Hierarchy:
        """One level: the total and the given codes."""
        codes = [str(c) for c in codes]
        if total in codes:
            raise InputError(f"the total code {total!r} is also a category; choose another total code")
        return cls([total] + codes, [-1] + [0] * len(codes))

    @classmethod
    def from_hrc(cls, source: str | Path, total: str = "Total", marker: str = "@") -> Hierarchy:
        """Read a tau-Argus ``.hrc`` file (or its text): one code per line, one ``@`` per level."""
        text = Path(source).read_text() if isinstance(source, Path) or (
            isinstance(source, str) and "\n" not in source and Path(source).exists()) else str(source)
        codes, parent, stack = [total], [-1], [0]  # stack[d] = index of the open node at depth d
        for lineno, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            level = len(raw) - len(raw.lstrip(marker))
            code = raw[level:].strip()
            if level + 1 > len(stack):
                raise InputError(f"hierarchy line {lineno} ({raw!r}) is {level} levels deep but the "
                                 f"line before is only {len(stack) - 1} deep; add the missing parent")
            del stack[level + 1:]
            codes.append(code)
            parent.append(stack[level])
            stack.append(len(codes) - 1)
        return cls(codes, parent)

    @classmethod
    def from_parent_child(cls, frame: pd.DataFrame | str | Path, total: str = "Total",
                          parent_col: str = "parent", child_col: str = "child") -> Hierarchy:
        """Read a parent/child table (CSV or DataFrame); parents absent as children hang under the total."""
        df = pd.read_csv(frame, dtype=str) if not isinstance(frame, pd.DataFrame) else frame.astype(str)
        for c in (parent_col, child_col):
            if c not in df.columns:
                raise InputError(f"parent/child hierarchy: column {c!r} is missing; columns are {list(df.columns)}")
        kids: dict[str, list[str]] = {}
        for p, c in zip(df[parent_col].str.strip(), df[child_col].str.strip()):
            kids.setdefault(p, []).append(c)
        all_children = set(df[child_col].str.strip())
        tops = [p for p in kids if p not in all_children and p != total]
        kids.setdefault(total, [])
        kids[total] = kids[total] + [t for t in tops if t not in kids[total]]
        codes, parent = [], []

        def visit(code: str, par: int, seen: set) -> None:
            if code in seen:
                raise InputError(f"parent/child hierarchy has a cycle through {code!r}")
            codes.append(code)
            parent.append(par)
            me = len(codes) - 1
            for k in kids.get(code, []):
                visit(k, me, seen | {code})

        visit(total, -1, set())
        return cls(codes, parent)


def _stat(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=float)


class Table:
    """A frequency or magnitude table with hierarchical dimensions, totals and contributions.

    Build one with :meth:`from_microdata` or :meth:`from_cells`. All arrays are flat over the
    cells in C order of ``shape`` (one axis per dimension, indexed by hierarchy node).

    Attributes
    ----------
    dims : tuple of str
    hierarchies : tuple of Hierarchy
    value : ndarray (n_cells,)
        Cell value: count (frequency table) or (weighted) sum of the response.
    freq : ndarray (n_cells,)
        Number of contributors (unweighted records or holdings).
    top : ndarray (n_cells, n_top)
        Largest contributions in decreasing order (0 where fewer contributors); magnitude only.
    kind : {"frequency", "magnitude"}

    References
    ----------
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*, sections 4.2-4.3. Wiley.
    """

    def __init__(self, dims: Sequence[str], hierarchies: Sequence[Hierarchy], value: np.ndarray,
                 freq: np.ndarray, *, top: np.ndarray | None = None, kind: str = "frequency",
                 response: str | None = None) -> None:
        self.dims = tuple(dims)
        self.hierarchies = tuple(hierarchies)
        self.shape = tuple(len(h) for h in self.hierarchies)
        self.n_cells = int(np.prod(self.shape))
        self.value = _stat(value).reshape(-1)
        self.freq = np.asarray(freq, dtype=np.int64).reshape(-1)
        if self.value.size != self.n_cells or self.freq.size != self.n_cells:
            raise InputError(f"table arrays have {self.value.size} cells; the hierarchies give {self.n_cells}")
        self.top = None if top is None else np.asarray(top, dtype=float).reshape(self.n_cells, -1)
        self.kind = kind
        self.response = response
        self._relations: sp.csr_matrix | None = None
        for a in (self.value, self.freq):
            a.setflags(write=False)

    # ------------------------------------------------------------------ structure
    @property
    def relations(self) -> sp.csr_matrix:
        """Sparse matrix ``M`` (n_relations x n_cells): row r says total - sum(parts) = 0."""
        if self._relations is None:
            self._relations = _relations(self.shape, self.hierarchies)
        return self._relations

    def cell_codes(self, cell: int) -> tuple[str, ...]:
        idx = np.unravel_index(cell, self.shape)
        return tuple(h.codes[i] for h, i in zip(self.hierarchies, idx))

    def cell_index(self, *codes: str) -> int:
        """Flat index of the cell with the given codes, one per dimension."""
        if len(codes) != len(self.dims):
            raise InputError(f"give one code per dimension {self.dims}; got {codes}")
        idx = []
        for d, h, c in zip(self.dims, self.hierarchies, codes):
            if str(c) not in h.index:
                raise InputError(f"{c!r} is not a code of dimension {d!r}")
            idx.append(h.index[str(c)])
        return int(np.ravel_multi_index(idx, self.shape))

    @property
    def is_inner(self) -> np.ndarray:
        """True for cells that are leaves in every dimension."""
        grids = np.meshgrid(*[h.is_leaf for h in self.hierarchies], indexing="ij")
        return np.logical_and.reduce([g.reshape(-1) for g in grids])

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: the codes, value, freq (and top contributions)."""
        idx = np.unravel_index(np.arange(self.n_cells), self.shape)
        out = {d: np.asarray(h.codes, dtype=object)[i] for d, h, i in zip(self.dims, self.hierarchies, idx)}
        out["value"] = self.value
        out["freq"] = self.freq
        if self.top is not None:
            for k in range(self.top.shape[1]):
                out[f"top{k + 1}"] = self.top[:, k]
        return pd.DataFrame(out)

    def describe(self) -> str:
        dims = " x ".join(f"{d} ({len(h)} codes, {h.n_levels} levels)" for d, h in zip(self.dims, self.hierarchies))
        return f"{self.kind} table {dims}: {self.n_cells} cells, {self.relations.shape[0]} relations"

    def non_additive(self, tol: float = 1e-6) -> list[str]:
        """Totals that do not equal the sum of their parts, as readable text."""
        res = self.relations @ self.value
        bad = np.flatnonzero(np.abs(res) > tol * (1 + np.abs(self.relations).dot(np.abs(self.value))))
        out = []
        m = self.relations
        for r in bad[:20]:
            row = m.indices[m.indptr[r]:m.indptr[r + 1]]
            vals = m.data[m.indptr[r]:m.indptr[r + 1]]
            tot = row[vals > 0][0]
            out.append(f"{self.cell_codes(tot)} = {self.value[tot]:g} but its parts sum to "
                       f"{self.value[tot] - res[r]:g}")
        return out

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_microdata(cls, data, dims: Sequence[str], *, response: str | None = None,
                       weight: str | None = None, holding: str | None = None,
                       hierarchies: Mapping[str, Hierarchy] | None = None, total: str = "Total",
                       n_top: int = 3) -> Table:
        """Tabulate microdata: counts (``response=None``) or sums of ``response``.

        ``weight`` multiplies each record's contribution to the value (contributors are still
        counted unweighted, and the rules use the unweighted contributions). ``holding`` groups
        records of one enterprise group: its records count as one contributor.
        """
        frame = data.data if hasattr(data, "data") and not isinstance(data, pd.DataFrame) else data
        if not isinstance(frame, pd.DataFrame):
            raise InputError("from_microdata needs a pandas DataFrame or a Microdata")
        dims = [dims] if isinstance(dims, str) else list(dims)
        for c in list(dims) + [x for x in (response, weight, holding) if x]:
            if c not in frame.columns:
                raise InputError(f"table: column {c!r} is not in the data; columns are {list(frame.columns)[:20]}")
        hierarchies = dict(hierarchies or {})
        hs, leaf_idx = [], []
        for d in dims:
            col = frame[d].astype(str).str.strip()
            h = hierarchies.get(d) or Hierarchy.flat(sorted(col.unique(), key=natural_order), total)
            codes = pd.Index(h.codes)
            pos = codes.get_indexer(col)
            missing = sorted(set(col[pos < 0]))
            if missing:
                raise InputError(f"dimension {d!r}: {len(missing)} codes of the data are not in its hierarchy: "
                                 f"{missing[:10]}; add them to the hierarchy file")
            nonleaf = sorted(set(col[~h.is_leaf[pos]]))
            if nonleaf:
                raise InputError(f"dimension {d!r}: the data uses codes that are totals in the hierarchy: "
                                 f"{nonleaf[:10]}; records must carry the lowest-level code")
            absent = sorted(set(h.leaves) - set(col))
            if absent:
                warnings.warn(f"dimension {d!r}: {len(absent)} hierarchy codes have no records and give "
                              f"empty cells: {absent[:10]}", InputWarning, stacklevel=2)
            hs.append(h)
            leaf_idx.append(pos)
        shape = tuple(len(h) for h in hs)
        n_cells = int(np.prod(shape))
        n = len(frame)
        if response is None:
            contrib = np.ones(n)
            kind = "frequency"
        else:
            contrib = pd.to_numeric(frame[response], errors="raise").to_numpy(dtype=float)
            if np.isnan(contrib).any():
                raise InputError(f"response {response!r} has {int(np.isnan(contrib).sum())} missing values; "
                                 "impute or drop them before tabulating")
            kind = "magnitude"
        w = np.ones(n) if weight is None else frame[weight].to_numpy(dtype=float)
        # every record contributes to the product of its ancestor chains (one per dimension)
        rec = np.arange(n)
        cells = np.zeros(n, dtype=np.int64)
        recs = rec
        strides = np.array([int(np.prod(shape[k + 1:])) for k in range(len(shape))], dtype=np.int64)
        for d, (h, pos) in enumerate(zip(hs, leaf_idx)):
            chains = [h.ancestors(i) for i in range(len(h))]
            lens = np.array([len(c) for c in chains])
            flat = np.concatenate(chains)
            start = np.concatenate([[0], np.cumsum(lens)[:-1]])
            node = pos[recs]
            reps = lens[node]
            offs = np.repeat(start[node], reps) + (np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps))
            cells = np.repeat(cells, reps) + flat[offs] * strides[d]
            recs = np.repeat(recs, reps)
        value = np.bincount(cells, weights=contrib[recs] * w[recs], minlength=n_cells)
        top = None
        if holding is None:
            unit_cell, unit_val = cells, contrib[recs]
            freq = np.bincount(cells, minlength=n_cells)
        else:
            g = pd.DataFrame({"c": cells, "h": frame[holding].to_numpy()[recs], "v": contrib[recs]})
            agg = g.groupby(["c", "h"], sort=False)["v"].sum()
            unit_cell = agg.index.get_level_values(0).to_numpy(dtype=np.int64)
            unit_val = agg.to_numpy(dtype=float)
            freq = np.bincount(unit_cell, minlength=n_cells)
        if kind == "magnitude":
            if (unit_val < 0).any():
                warnings.warn(f"response {response!r} has {int((unit_val < 0).sum())} negative contributions; "
                              "the dominance and p% rules are applied to absolute contributions",
                              InputWarning, stacklevel=2)
            mag = np.abs(unit_val)
            order = np.lexsort((-mag, unit_cell))
            sc, sv = unit_cell[order], mag[order]
            first = np.searchsorted(sc, sc, side="left")
            rank = np.arange(sc.size) - first
            keep = rank < n_top
            top = np.zeros((n_cells, n_top))
            top[sc[keep], rank[keep]] = sv[keep]
        return cls(dims, hs, value, freq, top=top, kind=kind, response=response)

    @classmethod
    def from_cells(cls, frame: pd.DataFrame, dims: Sequence[str], value: str, *, freq: str | None = None,
                   top: Sequence[str] = (), hierarchies: Mapping[str, Hierarchy] | None = None,
                   total: str = "Total", kind: str | None = None, tol: float = 1e-6) -> Table:
        """A table read from a cell list (one row per cell, codes in ``dims``).

        If the list holds only inner cells, totals are computed. If it holds totals too, every
        total must equal the sum of its parts; the error names the totals that do not add up.
        """
        dims = list(dims)
        for c in dims + [value] + ([freq] if freq else []) + list(top):
            if c not in frame.columns:
                raise InputError(f"table file: column {c!r} is missing; columns are {list(frame.columns)}")
        hierarchies = dict(hierarchies or {})
        df = frame.copy()
        for d in dims:
            df[d] = df[d].astype(str).str.strip()
        hs = []
        for d in dims:
            if d in hierarchies:
                hs.append(hierarchies[d])
            else:
                codes = [c for c in df[d].unique() if c != total]  # order of first appearance
                hs.append(Hierarchy.flat(codes, total))
        shape = tuple(len(h) for h in hs)
        idx = []
        for d, h in zip(dims, hs):
            pos = pd.Index(h.codes).get_indexer(df[d])
            if (pos < 0).any():
                raise InputError(f"table file: dimension {d!r} has codes not in its hierarchy: "
                                 f"{sorted(set(df[d][pos < 0]))[:10]}")
            idx.append(pos)
        flat = np.ravel_multi_index(idx, shape)
        if len(np.unique(flat)) != len(flat):
            raise InputError("table file: some cells appear more than once")
        n_cells = int(np.prod(shape))
        has = np.zeros(n_cells, bool)
        has[flat] = True
        kind = kind or ("frequency" if top == () and freq is None else "magnitude")
        for col in [value] + ([freq] if freq else []) + list(top):
            _check_cell_numbers(df, col, dims, frequency=(kind == "frequency" and col == value) or col == freq)
        t_inner = np.logical_and.reduce([g.reshape(-1) for g in np.meshgrid(*[h.is_leaf for h in hs], indexing="ij")])
        vals = np.zeros(n_cells)
        vals[flat] = df[value].to_numpy(dtype=float)
        fr = np.zeros(n_cells, dtype=np.int64)
        if freq:
            fr[flat] = df[freq].to_numpy(dtype=np.int64)
        else:
            fr[flat] = np.rint(vals[flat]).astype(np.int64) if kind == "frequency" else 1
        tp = None
        if top:
            tp = np.zeros((n_cells, len(top)))
            tp[flat] = df[list(top)].to_numpy(dtype=float)
        if not has[~t_inner].any():  # only inner cells: aggregate
            if tp is not None:
                raise InputError("table file: with top contributions, give the totals' rows too "
                                 "(their largest contributions cannot be derived from the inner cells)")
            vals, fr = aggregate_totals(hs, shape, vals), aggregate_totals(hs, shape, fr.astype(float)).astype(np.int64)
            return cls(dims, hs, vals, fr, kind=kind, response=value)
        if not has.all():
            miss = np.flatnonzero(~has)[:5]
            t = cls(dims, hs, vals, fr, kind=kind)
            raise InputError(f"table file: {int((~has).sum())} cells are missing, e.g. "
                             f"{[t.cell_codes(i) for i in miss]}; give every cell or only the inner cells")
        t = cls(dims, hs, vals, fr, top=tp, kind=kind, response=value)
        bad = t.non_additive(tol)
        if bad:
            raise InputError("table file is not additive; these totals do not equal the sum of their parts: "
                             + "; ".join(bad) + ". Correct the table or give only the inner cells")
        return t


def grid_html(table: Table, cell, *, max_rows: int = 5000) -> str:
    """HTML of a table: a row x column grid when it has two dimensions, otherwise one row a
    cell (its codes, then the cell) for the first ``max_rows`` cells. ``cell(i)`` gives the
    ``<td>`` of cell ``i``."""
    import html

    if len(table.dims) == 2:
        h0, h1 = table.hierarchies
        head = "".join(f"<th>{html.escape(x)}</th>" for x in h1.codes)
        body = "".join(f"<tr><th>{html.escape(r)}</th>" + "".join(cell(i * len(h1) + j) for j in range(len(h1)))
                       + "</tr>" for i, r in enumerate(h0.codes))
        return (f"<table class='sdc-table'><tr><th>{html.escape(table.dims[0])} \\ "
                f"{html.escape(table.dims[1])}</th>{head}</tr>{body}</table>")
    head = "".join(f"<th>{html.escape(d)}</th>" for d in table.dims) + "<th>value</th>"
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in table.cell_codes(i)) + cell(i) + "</tr>"
                   for i in range(min(table.n_cells, max_rows)))
    return f"<table class='sdc-table'><tr>{head}</tr>{rows}</table>"


def natural_order(s: str) -> tuple:
    """A sort key for category labels: whole numbers first in numeric order, then text.

    Parameters
    ----------
    s : object
        A label (its text is compared).

    Returns
    -------
    tuple
        ``(0, int, text)`` for a whole number, ``(1, 0, text)`` for anything else.
    """
    s = str(s)
    return (0, int(s), s) if s.lstrip("-").isdigit() else (1, 0, s)


def aggregate_totals(hs: Sequence[Hierarchy], shape: tuple, inner: np.ndarray) -> np.ndarray:
    """Fill a table's totals bottom-up from its inner cells.

    Parameters
    ----------
    hs : sequence of Hierarchy
        One hierarchy per dimension (children listed after their parents, in pre-order).
    shape : tuple of int
        The table's shape (one entry per dimension, every level counted).
    inner : array_like
        The cells in C order; entries of total cells are overwritten.

    Returns
    -------
    ndarray of float, shape (prod(shape),)
        The cells with every total the sum of its children.
    """
    arr = np.array(inner, dtype=float).reshape(shape)
    for d, h in enumerate(hs):
        arr = np.moveaxis(arr, d, 0)
        for i in range(len(h) - 1, -1, -1):
            if h.children[i]:
                arr[i] = arr[h.children[i]].sum(axis=0)
        arr = np.moveaxis(arr, 0, d)
    return arr.reshape(-1)


def _relations(shape: tuple, hs: Sequence[Hierarchy]) -> sp.csr_matrix:
    n_cells = int(np.prod(shape))
    grid = np.arange(n_cells).reshape(shape)
    rows, cols, vals = [], [], []
    r0 = 0
    for d, h in enumerate(hs):
        stride = int(np.prod(shape[d + 1:]))
        base = np.take(grid, 0, axis=d).reshape(-1)  # cells with node 0 along d
        m = base.size
        for p, kids in enumerate(h.children):
            if not kids:
                continue
            r = r0 + np.arange(m)
            rows.append(r)
            cols.append(base + p * stride)
            vals.append(np.ones(m))
            for c in kids:
                rows.append(r)
                cols.append(base + c * stride)
                vals.append(-np.ones(m))
            r0 += m
    if not rows:
        return sp.csr_matrix((0, n_cells))
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(r0, n_cells))


def _check_cell_numbers(df: pd.DataFrame, col: str, dims: Sequence[str], *, frequency: bool) -> None:
    """Refuse text, missing, infinite and (for counts) negative or fractional cell values,
    naming the first offending cell and its value."""
    raw = df[col]
    num = pd.to_numeric(raw, errors="coerce") if not pd.api.types.is_bool_dtype(raw) else raw.astype(float) * np.nan
    vals = num.to_numpy(dtype=float, na_value=np.nan)
    checks = [(np.isnan(vals), "is not a number (text or missing)", "give a number in every cell"),
              (np.isinf(vals), "is infinite", "give a finite number")]
    if frequency:
        checks += [(vals < 0, "is negative", "a count cannot be negative: correct the cell"),
                   (np.isfinite(vals) & (vals != np.round(vals)), "is not a whole number",
                    "a count must be a whole number")]
    for bad, what, todo in checks:
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            cell = ", ".join(f"{d}={df[d].iloc[i]}" for d in dims)
            v = raw.iloc[i]
            v = v.item() if hasattr(v, "item") else v
            raise InputError(f"table file: column {col!r}, cell ({cell}): value {v!r} {what}; "
                             f"{todo} ({int(bad.sum())} such cells)")
