"""Generalisation hierarchies for the lattice search: reading, building, checking, encoding.

A hierarchy is ARX's table (:class:`sdckit.masking.hierarchy.Hierarchy`): raw values in
column 0 and the label at level ``i`` in column ``i``. Files are read with
:func:`sdckit.masking.hierarchy.read_hierarchy`; this module adds

* builders for the usual shapes: intervals of numbers (:func:`interval_hierarchy`), masking of
  strings (:func:`masking_hierarchy`), ordering and grouping of categories
  (:func:`order_hierarchy`, :func:`grouping_hierarchy`), dates (:func:`date_hierarchy`) and
  priorities (:func:`priority_hierarchy`, ARX's priority-based builder);
* :func:`check_hierarchy`: every raw value has exactly one path to the top and every level is
  a coarsening of the level below (each label has one parent);
* :func:`encode`: a column of data against its hierarchy as integer codes: the records' raw
  codes and the ``(levels x n_raw)`` code map whose row ``l`` gives each raw value's label code
  at level ``l``. A node's class key is then a mixed-radix sum of gathers from these maps.

References
----------
Prasser, F., Kohlmayer, F. (2015). Putting statistical disclosure control into practice: the
ARX data anonymization tool. In *Medical Data Privacy Handbook*, Springer, 111-148.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..masking.hierarchy import Hierarchy, read_hierarchy

__all__ = ["Hierarchy", "read_hierarchy", "find_hierarchies", "check_hierarchy", "as_text",
           "interval_hierarchy", "masking_hierarchy", "order_hierarchy", "grouping_hierarchy",
           "date_hierarchy", "priority_hierarchy", "PRIORITY_DIRECTIONS", "EncodedColumn", "encode"]

#: the orders :func:`priority_hierarchy` takes (ARX's ``HierarchyBuilderPriorityBased.Priority``)
PRIORITY_DIRECTIONS = ("highest_to_lowest", "lowest_to_highest")


def _name(h: Hierarchy) -> str:
    return h.source or "hierarchy"


def check_hierarchy(h: Hierarchy) -> Hierarchy:
    """Check that each raw value has one path and each level coarsens the one below.

    Raises :class:`~sdckit.errors.InputError` naming the file, the level and the label that
    has two parents (a level is a coarsening of the one below exactly when every label of the
    lower level maps to one label of the upper level).
    """
    t = h.table
    if t.shape[1] < 1 or t.shape[0] < 1:
        raise InputError(f"{_name(h)}: the hierarchy has no rows; list every raw value with its labels.")
    raw = t.iloc[:, 0]
    dup = raw[raw.duplicated()]
    if len(dup):
        raise InputError(f"{_name(h)}: raw value {dup.iloc[0]!r} is listed twice; every value needs "
                         "exactly one path to the top.")
    for lvl in range(1, t.shape[1] - 1):
        lower, upper = t.iloc[:, lvl], t.iloc[:, lvl + 1]
        pairs = pd.DataFrame({"lo": lower.to_numpy(), "up": upper.to_numpy()}).drop_duplicates()
        bad = pairs["lo"][pairs["lo"].duplicated()]
        if len(bad):
            label = bad.iloc[0]
            parents = sorted(pairs["up"][pairs["lo"] == label].tolist())
            raise InputError(f"{_name(h)}: level {lvl + 1} is not a coarsening of level {lvl}: "
                             f"label {label!r} maps to {parents[0]!r} and {parents[1]!r}; give every "
                             "label one parent.")
    return h


def find_hierarchies(directory: str | os.PathLike, qis: Sequence[str]) -> dict[str, Hierarchy]:
    """Read ``DIR/*_<qi>.csv`` for each quasi-identifier (ARX naming, ``adult_hierarchy_age.csv``)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: no such hierarchy directory; pass the folder holding the "
                         "*_<qi>.csv files.")
    out = {}
    for qi in qis:
        hits = sorted(glob.glob(os.path.join(glob.escape(str(directory)), f"*_{glob.escape(qi)}.csv")))
        if not hits and (directory / f"{qi}.csv").exists():
            hits = [str(directory / f"{qi}.csv")]
        if not hits:
            raise InputError(f"{directory}: no hierarchy file for quasi-identifier {qi!r}; expected a "
                             f"file named *_{qi}.csv.")
        if len(hits) > 1:
            raise InputError(f"{directory}: several hierarchy files match quasi-identifier {qi!r}: "
                             f"{[os.path.basename(x) for x in hits]}; keep one.")
        out[qi] = check_hierarchy(read_hierarchy(hits[0]))
    return out


def as_text(values: pd.Series | Sequence) -> pd.Series:
    """Data values as hierarchy files write them (39.0 -> "39"; missing -> "")."""
    s = pd.Series(values)
    if pd.api.types.is_bool_dtype(s):
        return s.astype(str)
    if pd.api.types.is_numeric_dtype(s):
        x = s.to_numpy(dtype=float, na_value=np.nan)
        fin = np.isfinite(x)
        if fin.all() and np.all(x == np.round(x)):
            return pd.Series(x.astype(np.int64).astype(str), index=s.index)
        return s.astype(str)
    return s.astype("string").fillna("").astype(str)


def _with_top(levels: list[list[str]]) -> list[list[str]]:
    if len(set(levels[-1])) > 1:
        levels.append(["*"] * len(levels[-1]))
    return levels


def _frame(levels: list[list[str]], source: str) -> Hierarchy:
    table = pd.DataFrame({i: col for i, col in enumerate(levels)}, dtype=str)
    return check_hierarchy(Hierarchy(table, source))


def _distinct_text(values: Sequence) -> list[str]:
    return list(pd.unique(as_text(pd.Series(values)).to_numpy()))


def interval_hierarchy(values: Sequence[float], widths: Sequence[float], *, start: float | None = None,
                       name: str = "interval hierarchy") -> Hierarchy:
    """Intervals of numbers: level ``i`` groups values into bins of width ``widths[i-1]``.

    Bins start at ``start`` (default: the smallest value rounded down to the first width).
    Integer data get ARX-style inclusive labels (``35-39``), other data half-open ``[a, b)``.
    Each width must be a multiple of the one before, so each level coarsens the one below;
    a top level ``*`` is added.
    """
    x = np.asarray(pd.to_numeric(pd.Series(values).dropna().unique(), errors="raise"), dtype=float)
    if x.size == 0:
        raise InputError(f"{name}: no values to build intervals from.")
    widths = [float(w) for w in widths]
    if not widths or any(w <= 0 for w in widths):
        raise InputError(f"{name}: widths must be positive numbers, got {list(widths)}.")
    for a, b in zip(widths, widths[1:]):
        if abs(b / a - round(b / a)) > 1e-9:
            raise InputError(f"{name}: width {b:g} is not a multiple of {a:g}; each level must be a "
                             "coarsening of the level below.")
    integer = bool(np.all(x == np.round(x)))
    lo = float(np.floor(x.min() / widths[0]) * widths[0]) if start is None else float(start)
    if x.min() < lo:
        raise InputError(f"{name}: start {lo:g} is above the smallest value {x.min():g}.")
    x = np.sort(x)
    raw = [str(int(v)) if integer else repr(float(v)) for v in x]
    levels = [raw]
    for w in widths:
        a = lo + np.floor((x - lo) / w) * w
        if integer:
            levels.append([f"{int(u)}-{int(u + w - 1)}" for u in a])
        else:
            levels.append([f"[{u:g}, {u + w:g})" for u in a])
    return _frame(_with_top(levels), name)


def masking_hierarchy(values: Sequence[str], n_levels: int | None = None, *, char: str = "*",
                      name: str = "masking hierarchy") -> Hierarchy:
    """Masking of strings (postcodes): level ``i`` replaces the last ``i`` characters by ``char``."""
    raw = _distinct_text(values)
    longest = max(len(v) for v in raw)
    n_levels = longest if n_levels is None else int(n_levels)
    if n_levels < 1:
        raise InputError(f"{name}: n_levels must be >= 1, got {n_levels}.")
    levels = [raw]
    for i in range(1, n_levels + 1):
        levels.append([v[:max(len(v) - i, 0)] + char * min(i, len(v)) for v in raw])
    return _frame(_with_top(levels), name)


def order_hierarchy(values: Sequence, sizes: Sequence[int], *, order: Sequence | None = None,
                    name: str = "order hierarchy") -> Hierarchy:
    """Ordering and grouping: sort the categories (or take ``order``) and group runs of them.

    Level ``i`` groups ``sizes[i-1]`` consecutive categories, labelled ``[first..last]``; each
    size must be a multiple of the one before.
    """
    raw = _distinct_text(order if order is not None else sorted(pd.Series(values).dropna().unique()))
    if order is not None:
        missing = set(_distinct_text(values)) - set(raw)
        if missing:
            raise InputError(f"{name}: values {sorted(missing)[:5]} are not in the given order.")
    sizes = [int(s) for s in sizes]
    if not sizes or any(s < 1 for s in sizes):
        raise InputError(f"{name}: group sizes must be ints >= 1, got {sizes}.")
    for a, b in zip(sizes, sizes[1:]):
        if b % a:
            raise InputError(f"{name}: group size {b} is not a multiple of {a}; each level must be "
                             "a coarsening of the level below.")
    levels = [raw]
    for s in sizes:
        labels = []
        for i in range(len(raw)):
            g = i // s
            labels.append(f"[{raw[g * s]}..{raw[min(g * s + s, len(raw)) - 1]}]")
        levels.append(labels)
    return _frame(_with_top(levels), name)


def grouping_hierarchy(values: Sequence, groups: Sequence[Mapping[str, str]], *,
                       name: str = "grouping hierarchy") -> Hierarchy:
    """Explicit groups: ``groups[i]`` maps each label of level ``i`` to its label at level ``i+1``."""
    raw = _distinct_text(values)
    levels = [raw]
    for i, g in enumerate(groups):
        prev = levels[-1]
        missing = sorted({v for v in prev if v not in g})
        if missing:
            raise InputError(f"{name}: level {i + 1} gives no group for {missing[:5]}; map every "
                             f"label of level {i}.")
        levels.append([str(g[v]) for v in prev])
    return _frame(_with_top(levels), name)


def date_hierarchy(values: Sequence, levels: Sequence[str] = ("month", "year", "decade"), *,
                   format: str | None = None, name: str = "date hierarchy") -> Hierarchy:
    """Dates: raw value -> ``week``/``month``/``quarter``/``year``/``decade`` labels, in that order."""
    known = ("week", "month", "quarter", "year", "decade")
    order = [known.index(lv) if lv in known else -1 for lv in levels]
    if -1 in order or order != sorted(order) or len(set(order)) != len(order):
        raise InputError(f"{name}: levels must be distinct, increasing items of {known}; got {list(levels)}.")
    if "week" in levels and len(levels) > 1:
        raise InputError(f"{name}: weeks do not nest in months; use week alone or month and above.")
    raw = _distinct_text(values)
    d = pd.to_datetime(pd.Series(raw), format=format, errors="coerce")
    if d.isna().any():
        bad = [r for r, ok in zip(raw, d.notna()) if not ok][0]
        raise InputError(f"{name}: {bad!r} is not a date{f' in format {format!r}' if format else ''}.")
    cols = [raw]
    for lv in levels:
        if lv == "week":
            iso = d.dt.isocalendar()
            cols.append([f"{y}-W{w:02d}" for y, w in zip(iso["year"], iso["week"])])
        elif lv == "month":
            cols.append(d.dt.strftime("%Y-%m").tolist())
        elif lv == "quarter":
            cols.append([f"{y}-Q{q}" for y, q in zip(d.dt.year, d.dt.quarter)])
        elif lv == "year":
            cols.append(d.dt.year.astype(str).tolist())
        else:
            cols.append([f"{y // 10 * 10}s" for y in d.dt.year])
    return _frame(_with_top(cols), name)


def priority_hierarchy(values: Sequence, *, priorities: Mapping[str, int] | None = None,
                       direction: str = "highest_to_lowest", max_levels: int = 10,
                       name: str = "priority hierarchy") -> Hierarchy:
    """Priority-based hierarchy (ARX 3.9.2's ``HierarchyBuilderPriorityBased``): the values in
    order of priority, the first kept longest, each level replacing a further share of them by ``*``.

    The distinct values (in the order they first occur) are ordered by ``priorities`` (value ->
    integer; a value without one has priority 0; ties keep their order: a stable sort, as
    Java's), or, without ``priorities``, by their own order (numbers as numbers when every value
    is one, else text). ``direction`` ``highest_to_lowest`` puts the largest first,
    ``lowest_to_highest`` the smallest. With ``m`` values, ``L = min(m, max_levels)`` levels
    above the raw values and ``offset = m / L``, the value at position ``i`` (from 0) keeps its
    label up to level ``L - floor(i / offset) - 1`` and is ``*`` from level
    ``L - floor(i / offset)`` on (ARX's ``prepareResult``); level ``L`` is ``*`` for all.

    Parameters
    ----------
    values : sequence
        The column's values (missing values left out).
    priorities : mapping, optional
        Value -> priority (an integer); default: the values' own order.
    direction : {"highest_to_lowest", "lowest_to_highest"}
        Which end of the order is kept longest.
    max_levels : int >= 1
        The most levels above the raw values (ARX's default 10).
    name : str
        Named in errors.

    Returns
    -------
    Hierarchy
        One row per value in priority order, ``L + 1`` columns.
    """
    if direction not in PRIORITY_DIRECTIONS:
        raise InputError(f"{name}: direction must be one of {', '.join(PRIORITY_DIRECTIONS)}; got {direction!r}.")
    if isinstance(max_levels, bool) or int(max_levels) != max_levels or max_levels < 1:
        raise InputError(f"{name}: max_levels must be a whole number >= 1; got {max_levels!r}.")
    raw = _distinct_text(pd.Series(values).dropna())
    if not raw:
        raise InputError(f"{name}: no values to build a hierarchy from.")
    descending = direction == "highest_to_lowest"
    if priorities is not None:
        prio = {str(k): v for k, v in priorities.items()}
        bad = [k for k, v in prio.items() if isinstance(v, bool) or not float(v).is_integer()]
        if bad:
            raise InputError(f"{name}: the priority of {bad[0]!r} must be a whole number; got {prio[bad[0]]!r}.")
        key = [int(prio.get(v, 0)) for v in raw]
    else:
        num = pd.to_numeric(pd.Series(raw), errors="coerce")
        key = num.tolist() if num.notna().all() else raw
    # a stable sort (Python's reverse=True keeps ties in order, as ARX's negated comparator does)
    order = sorted(range(len(raw)), key=lambda i: key[i], reverse=descending)
    ordered = [raw[i] for i in order]
    m = len(ordered)
    n_levels = min(m, int(max_levels))
    offset = m / n_levels
    value_level = [n_levels - int(np.floor(i / offset)) for i in range(m)]
    levels = [[v if value_level[i] > lvl else "*" for i, v in enumerate(ordered)] for lvl in range(n_levels + 1)]
    return _frame(levels, name)


@dataclass(frozen=True)
class EncodedColumn:
    """One quasi-identifier encoded against its hierarchy.

    Attributes
    ----------
    raw : ndarray of int32, shape (n,)
        Each record's raw-value code (0..n_raw-1, over the raw values used by the records).
    code_map : ndarray of int32, shape (height + 1, n_raw)
        ``code_map[l, r]``: code of raw value ``r``'s label at level ``l`` (row 0 is ``r``).
    n_codes : ndarray of int64, shape (height + 1,)
        Number of label codes at each level (the radix of the column in a class key).
    labels : list of ndarray
        ``labels[l][c]``: the text of code ``c`` at level ``l``.
    leaves : list of ndarray
        ``leaves[l][c]``: number of raw values of the whole hierarchy under label ``c``.
    n_domain : int
        Number of raw values in the hierarchy.
    """

    name: str
    raw: np.ndarray
    code_map: np.ndarray
    n_codes: np.ndarray
    labels: list
    leaves: list
    n_domain: int

    @property
    def height(self) -> int:
        return int(self.code_map.shape[0] - 1)


def encode(name: str, values: pd.Series, h: Hierarchy, *, also: Sequence[pd.Series] = ()) -> tuple[EncodedColumn, list]:
    """Encode column ``name`` against hierarchy ``h``.

    ``also`` are further columns (a population table) encoded with the same codes; their raw
    codes are returned in the list. A value missing from the hierarchy raises
    :class:`~sdckit.errors.InputError` naming the value and the file.
    """
    table = h.table
    index = pd.Index(table.iloc[:, 0].to_numpy())
    series = [as_text(values), *[as_text(a) for a in also]]
    positions = []
    for s in series:
        pos = index.get_indexer(s.to_numpy())
        if (pos < 0).any():
            bad = s.to_numpy()[pos < 0]
            n_bad = len(pd.unique(bad))
            raise InputError(f"{_name(h)}: value {bad[0]!r} of column {name!r} is not in the hierarchy"
                             + (f" ({n_bad} values missing)" if n_bad > 1 else "")
                             + "; add a row for it to the hierarchy file.")
        positions.append(pos)
    used = np.unique(np.concatenate(positions))
    n_raw = used.size
    lookup = np.full(len(index), -1, dtype=np.int64)
    lookup[used] = np.arange(n_raw)
    raws = [lookup[p].astype(np.int32) for p in positions]
    height = table.shape[1] - 1
    code_map = np.empty((height + 1, n_raw), dtype=np.int32)
    n_codes = np.empty(height + 1, dtype=np.int64)
    labels, leaves = [], []
    for lvl in range(height + 1):
        col = table.iloc[:, lvl].to_numpy()
        codes, uniq = pd.factorize(col[used])
        code_map[lvl] = codes
        n_codes[lvl] = len(uniq)
        labels.append(np.asarray(uniq, dtype=object))
        full = pd.Series(col).value_counts()
        leaves.append(full.reindex(uniq).to_numpy(dtype=np.int64))
    return EncodedColumn(name, raws[0], code_map, n_codes, labels, leaves, len(index)), raws[1:]
