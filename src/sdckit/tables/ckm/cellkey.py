"""Record keys and cell keys of the cell key method, and the perturbation of frequency tables.

Every record carries a key ``r`` uniform in [0, 1). A cell's key is the fractional part of the
sum of the keys of its records (Thompson, Broadfoot & Elazar 2013, eq. 1). The same set of
records always gives the same key, so a cell that appears in several tables (or as a margin of
one and an inner cell of another) always gets the same noise: the tables stay consistent.

Sums are exact: keys are turned into integers in units of 1e-12 and the cell sums are taken
modulo 1e12 in int64 (two float ``bincount``\\ s of six-digit halves, each exact below 2^53).

References
----------
Thompson, G., Broadfoot, S. & Elazar, D. (2013). Methodology for the automatic
confidentialisation of statistical outputs from remote servers at the Australian Bureau of
Statistics. UNECE/Eurostat Work Session on Statistical Data Confidentiality, Ottawa.
Enderle, T., Giessing, S. & Tent, R. (2018). Designing confidentiality on the fly. *PSD 2018*,
LNCS 11126, 189-207. Springer.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..._random import seed_sequence
from ...errors import InputError, InputWarning
from ...result import ResultDisplay
from ..table import Hierarchy, Table, aggregate_totals
from .ptable import KEY_DIGITS, KEY_SCALE, PTable, load_ptable

__all__ = ["add_record_keys", "record_keys", "cell_keys", "CKMResult", "ckm_frequency", "perturb_frequencies"]

_HALF = 10 ** (KEY_DIGITS // 2)


def add_record_keys(frame: pd.DataFrame, key: str = "Key", *, rng=None) -> pd.DataFrame:
    """A copy of ``frame`` with a column ``key`` of record keys drawn uniformly from [0, 1).

    The keys are a secret (whoever has them can undo the noise): keep the seed and the keys
    internal. The seed used (OS entropy when ``rng`` is None) is recorded in
    ``out.attrs["record_key_seed"]`` (a :class:`~sdckit._random.SeedRecord`, for the internal
    report only). Keys are rounded down to 12 decimals so cell keys are computed exactly.
    """
    ss, record = seed_sequence(rng)
    gen = np.random.default_rng(ss)
    out = frame.copy()
    out[key] = np.floor(gen.random(len(frame)) * KEY_SCALE) / KEY_SCALE
    out.attrs["record_key_seed"] = record
    return out


def record_keys(frame: pd.DataFrame, key: str = "Key", *, where: str = "microdata") -> np.ndarray:
    """The record keys as integers in units of 1e-12, after checking they are all in [0, 1)."""
    if key not in frame.columns:
        raise InputError(f"{where}: record key column {key!r} is missing; add record keys "
                         "(sdckit.tables.ckm.add_record_keys) or name the key column")
    col = pd.to_numeric(frame[key], errors="coerce")
    bad_txt = col.isna() & frame[key].notna()
    if bad_txt.any():
        r = int(np.flatnonzero(bad_txt.to_numpy())[0])
        raise InputError(f"{where}: record key {key!r} in row {r + 1} is {frame[key].iloc[r]!r}, not a number; "
                         "record keys must be numbers in [0, 1)")
    x = col.to_numpy(dtype=float)
    if np.isnan(x).any():
        r = int(np.flatnonzero(np.isnan(x))[0])
        raise InputError(f"{where}: record key {key!r} is missing in row {r + 1} "
                         f"({int(np.isnan(x).sum())} rows in all); every record needs a key in [0, 1)")
    out = (x < 0) | (x >= 1)
    if out.any():
        r = int(np.flatnonzero(out)[0])
        raise InputError(f"{where}: record key {key!r} in row {r + 1} is {float(x[r])!r}, outside [0, 1) "
                         f"({int(out.sum())} rows in all); record keys must be uniform numbers in [0, 1)")
    k = np.rint(x * KEY_SCALE).astype(np.int64)
    return np.minimum(k, KEY_SCALE - 1)


def _sum_mod(cells: np.ndarray, keys: np.ndarray, n_cells: int) -> np.ndarray:
    """sum of integer keys per cell, modulo KEY_SCALE, exactly."""
    hi = np.bincount(cells, weights=(keys // _HALF).astype(float), minlength=n_cells)
    lo = np.bincount(cells, weights=(keys % _HALF).astype(float), minlength=n_cells)
    hi = np.rint(hi).astype(np.int64) % _HALF
    return (hi * _HALF + np.rint(lo).astype(np.int64)) % KEY_SCALE


def _aggregate_mod(hs: Sequence[Hierarchy], shape: tuple, inner: np.ndarray) -> np.ndarray:
    """Fill every total with the sum of its parts (mod KEY_SCALE), bottom-up per dimension."""
    arr = np.array(inner, dtype=np.int64).reshape(shape)
    for d, h in enumerate(hs):
        arr = np.moveaxis(arr, d, 0)
        for i in range(len(h) - 1, -1, -1):
            if h.children[i]:
                arr[i] = arr[h.children[i]].sum(axis=0) % KEY_SCALE
        arr = np.moveaxis(arr, 0, d)
    return arr.reshape(-1)


def _codes(frame: pd.DataFrame, d: str) -> tuple[np.ndarray, np.ndarray]:
    """Distinct stripped codes of column ``d`` and each record's position among them."""
    cat = pd.Categorical(frame[d].astype(str))
    cats = np.asarray(cat.categories, dtype=object)
    stripped = np.array([str(c).strip() for c in cats], dtype=object)
    return stripped, cat.codes.astype(np.int64)


def inner_cells(table: Table, frame: pd.DataFrame) -> np.ndarray:
    """Flat index of each record's inner cell in ``table`` (records carry leaf codes)."""
    idx = []
    for d, h in zip(table.dims, table.hierarchies):
        cats, rec = _codes(frame, d)
        pos_c = pd.Index(h.codes).get_indexer(cats)
        bad = pos_c < 0
        if bad.any():
            raise InputError(f"dimension {d!r}: codes not in its hierarchy: {sorted(cats[bad])[:10]}; "
                             "add them to the hierarchy file")
        nonleaf = ~h.is_leaf[pos_c]
        if nonleaf.any():
            raise InputError(f"dimension {d!r}: the data uses codes that are totals in the hierarchy: "
                             f"{sorted(cats[nonleaf])[:10]}; records must carry the lowest-level code")
        idx.append(pos_c[rec])
    return np.ravel_multi_index(idx, table.shape)


def frequency_table(frame: pd.DataFrame, dims: Sequence[str], hierarchies=None, total: str = "Total") -> Table:
    """The frequency table of ``dims`` (totals included) from the inner counts, summed up the
    hierarchies: the same cells and values as :meth:`Table.from_microdata`, without expanding
    every record into all its cells."""
    from ..table import natural_order

    hierarchies = dict(hierarchies or {})
    hs = []
    for d in dims:
        if d not in frame.columns:
            raise InputError(f"table: column {d!r} is not in the data; columns are {list(frame.columns)[:20]}")
        h = hierarchies.get(d)
        if h is None:
            cats, _ = _codes(frame, d)
            h = Hierarchy.flat(sorted(set(cats), key=natural_order), total)
        hs.append(h)
    shape = tuple(len(h) for h in hs)
    n_cells = int(np.prod(shape))
    proto = Table(dims, hs, np.zeros(n_cells), np.zeros(n_cells, dtype=np.int64))
    cells = inner_cells(proto, frame)
    for d, h in zip(dims, hs):
        if d in hierarchies:
            absent = sorted(set(h.leaves) - set(_codes(frame, d)[0]))
            if absent:
                warnings.warn(f"dimension {d!r}: {len(absent)} hierarchy codes have no records and give "
                              f"empty cells: {absent[:10]}", InputWarning, stacklevel=3)
    inner = np.bincount(cells, minlength=n_cells)
    totals = aggregate_totals(hs, shape, inner)      # totals filled bottom-up, as Table does (exact: counts)
    return Table(dims, hs, totals, totals.astype(np.int64), kind="frequency")


def cell_keys(table: Table, frame: pd.DataFrame, keys: np.ndarray, mask: np.ndarray | None = None,
              cells: np.ndarray | None = None) -> np.ndarray:
    """Cell keys of every cell of ``table`` (totals included) as integers in units of 1e-12.

    ``keys`` are integer record keys (:func:`record_keys`); ``mask`` selects the records that
    count (e.g. those with a non-zero magnitude)."""
    cells = inner_cells(table, frame) if cells is None else cells
    if mask is not None:
        cells, keys = cells[mask], keys[mask]
    inner = _sum_mod(cells, keys, table.n_cells)
    return _aggregate_mod(table.hierarchies, table.shape, inner)


@dataclass(frozen=True)
class CKMResult(ResultDisplay):
    """A table perturbed with the cell key method.

    Attributes
    ----------
    table : Table
        The original table (all cells, totals included).
    cell_key : ndarray
        Cell keys in [0, 1) (0 for empty cells).
    perturbed : ndarray
        Perturbed value of every cell; margins are perturbed as cells, not summed.
    ptable : PTable
    kind : {"frequency", "magnitude"}
    """

    table: Table
    cell_key: np.ndarray
    perturbed: np.ndarray
    ptable: PTable
    kind: str = "frequency"
    details: dict = field(default_factory=dict)

    @property
    def original(self) -> np.ndarray:
        return self.table.value

    @property
    def perturbation(self) -> np.ndarray:
        return self.perturbed - self.table.value

    @property
    def n_cells(self) -> int:
        return self.table.n_cells

    @property
    def n_perturbed(self) -> int:
        return int((np.abs(self.perturbation) > 1e-9).sum())

    @property
    def max_abs_perturbation(self) -> float:
        return float(np.abs(self.perturbation).max()) if self.n_cells else 0.0

    def additivity(self) -> dict:
        """The lost additivity: how many total = sum(parts) relations fail after perturbation,
        and the largest and mean absolute discrepancy."""
        m = self.table.relations
        if m.shape[0] == 0:
            return {"n_relations": 0, "n_broken": 0, "max_abs_discrepancy": 0.0, "mean_abs_discrepancy": 0.0}
        r = np.abs(m @ self.perturbed)
        return {"n_relations": int(m.shape[0]), "n_broken": int((r > 1e-9).sum()),
                "max_abs_discrepancy": float(r.max()), "mean_abs_discrepancy": float(r.mean())}

    def frame(self, *, totals: bool = True, empty: bool = False) -> pd.DataFrame:
        """One row per cell: the codes, ``original``, ``perturbed``, ``cell_key``."""
        t = self.table
        f = t.to_frame()[list(t.dims)]
        f["original"] = t.value
        f["perturbed"] = self.perturbed
        f["cell_key"] = self.cell_key
        keep = np.ones(t.n_cells, bool)
        if not totals:
            keep &= t.is_inner
        if not empty:
            keep &= t.freq > 0
        return f[keep].reset_index(drop=True)

    def to_dict(self) -> dict:
        return {"n_cells": self.n_cells, "n_nonempty": int((self.table.freq > 0).sum()),
                "n_perturbed": self.n_perturbed, "max_abs_perturbation": self.max_abs_perturbation,
                "ptable": self.ptable.source, "kind": self.kind, "additivity": self.additivity()}

    def describe(self) -> str:
        a = self.additivity()
        return (f"cell key method on a {self.kind} table: {self.n_perturbed} of {self.n_cells} cells changed, "
                f"largest change {self.max_abs_perturbation:g} ({self.ptable.describe()}); margins perturbed as "
                f"cells: {a['n_broken']} of {a['n_relations']} additivity relations broken "
                f"(largest discrepancy {a['max_abs_discrepancy']:g})")




def ckm_frequency(frame: pd.DataFrame, dims: Sequence[str], *, key: str = "Key", ptable=None,
                  hierarchies: Mapping[str, Hierarchy] | None = None, total: str = "Total",
                  table: Table | None = None) -> CKMResult:
    """Perturb every cell of the frequency table ``dims`` (totals included) with the p-table.

    Parameters
    ----------
    frame : DataFrame
        Microdata with the ``dims`` columns and the record key column ``key``.
    ptable : PTable, path or dict
        A p-table, a p-table file, or generation parameters ``{"D": 5, "V": 3, "js": 2}``.
    hierarchies : mapping, optional
        :class:`~sdckit.tables.table.Hierarchy` per dimension (flat with a total otherwise).
    """
    if ptable is None:
        raise InputError("ckm: give a p-table (a file path, a PTable, or parameters {'D': .., 'V': .., 'js': ..})")
    pt = load_ptable(ptable, kind="counts")
    if pt.kind != "counts":
        raise InputError(f"{pt.source}: a magnitude p-table (fractional j or a type column) cannot perturb counts; "
                         "give a counts p-table")
    dims = [dims] if isinstance(dims, str) else list(dims)
    keys = record_keys(frame, key)
    t = table if table is not None else frequency_table(frame, dims, hierarchies, total)
    ck = cell_keys(t, frame, keys)
    counts = np.rint(t.value).astype(np.int64)
    v = pt.lookup(counts, ck)
    return CKMResult(t, ck / KEY_SCALE, t.value + v, pt, "frequency")


def restore_codes(out: pd.DataFrame, frame: pd.DataFrame, dims: Sequence[str]) -> pd.DataFrame:
    """Give the code columns the data's own values and dtype (e.g. integers), so the result merges
    with a groupby of the data; total rows keep the total code (the column is then object)."""
    for d in dims:
        vals = frame[d].drop_duplicates()
        back = dict(zip(vals.astype(str).str.strip(), vals))
        col = out[d].map(lambda c, back=back: back.get(c, c))
        if out[d].isin(list(back)).all():
            col = col.astype(frame[d].dtype)
        out[d] = col
    return out


def perturb_frequencies(frame: pd.DataFrame, dims: Sequence[str], key: str = "Key", ptable=None, *,
                        hierarchies: Mapping[str, Hierarchy] | None = None, totals: bool = False,
                        total: str = "Total") -> pd.DataFrame:
    """Cell key perturbation of the frequency table of ``dims``.

    Returns one row per non-empty cell: the ``dims`` columns, then ``original`` (the count)
    and ``perturbed``. By default (``totals=False``) only the inner cells (one per combination of codes in the
    data) are returned; with ``totals=True`` the margins and subtotals are
    rows too (and hierarchy subtotals), with the total code ``total`` (e.g. ``"Total"``) in their dimension columns, each
    perturbed as a cell of its own from its own cell key (not summed).

    Lookup (as tau-Argus): cell key = fractional part of the sum of the record keys; a count
    above the p-table's largest ``i`` uses that row; the perturbation is ``v`` of the first row
    (in order of ``p_int_ub``) whose ``p_int_ub`` exceeds the cell key; zero cells stay 0.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdckit.tables.ckm import PTable, perturb_frequencies
    >>> df = pd.DataFrame({"sex": ["m", "f", "f"], "Key": [0.5, 0.25, 0.5]})
    >>> pt = PTable.generate(D=2, V=1.0)
    >>> perturb_frequencies(df, ["sex"], ptable=pt).columns.tolist()
    ['sex', 'original', 'perturbed']
    """
    res = ckm_frequency(frame, dims, key=key, ptable=ptable, hierarchies=hierarchies, total=total)
    f = res.frame(totals=totals, empty=False)
    dims = [dims] if isinstance(dims, str) else list(dims)
    out = restore_codes(f[dims + ["original", "perturbed"]].copy(), frame, dims)
    out["original"] = np.rint(out["original"]).astype(np.int64)
    out["perturbed"] = np.rint(out["perturbed"]).astype(np.int64)
    return out
