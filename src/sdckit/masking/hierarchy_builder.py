"""Build a generalisation hierarchy from the data, as ARX's hierarchy wizard does, and write it
as an ARX-compatible CSV: one row per raw value, one column per level, ``;`` separated, no
header (the file :func:`sdckit.masking.hierarchy.read_hierarchy` reads for ``recode``'s
``hierarchy_file``, :func:`sdckit.lattice.hierarchies.find_hierarchies` for ``generalise`` and
:func:`sdckit.tables.dimensions.hierarchy_from_arx` for a table dimension).

Four kinds (Prasser & Kohlmayer 2015, sec. 4.2, the wizard's hierarchy types):

* ``intervals``: numbers in ranges; level ``i`` has ranges of width ``widths[i-1]`` (each a
  multiple of the one before, so every range lies inside one range of the next level);
* ``grouping``: the ordered values (sorted, or in a given ``order``) grouped in runs of
  ``sizes[i-1]`` values at level ``i`` (each a multiple of the one before);
* ``masking``: text masked from the right, one more character per level (postcodes);
* ``dates``: a day becomes its week, or its month, quarter, year, decade (coarser levels);
* ``priority``: the values in order of priority, each level replacing a further share of them
  by ``*``, the first kept longest (ARX's priority-based builder).

Each kind's builder is in :mod:`sdckit.lattice.hierarchies`; this module is the one entry point
(:func:`build_hierarchy`) with the settings checked, the levels as a table
(:func:`hierarchy_levels`) and the file (:func:`hierarchy_csv`, :func:`write_hierarchy`).
Every hierarchy returned has passed :func:`sdckit.lattice.hierarchies.check_hierarchy` (one
parent per label at every level) and is topped by ``*`` (everything), as ARX writes it.

References
----------
Prasser, F. and Kohlmayer, F. (2015). Putting statistical disclosure control into practice:
the ARX data anonymization tool. In *Medical Data Privacy Handbook*, Springer, 111-148.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .._validation import param_error
from ..errors import InputError
from ..lattice.hierarchies import (
    date_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    order_hierarchy,
    priority_hierarchy,
)
from .hierarchy import Hierarchy

__all__ = ["HIERARCHY_KINDS", "DATE_LEVELS", "build_hierarchy", "hierarchy_levels", "hierarchy_csv",
           "write_hierarchy"]

#: the kinds :func:`build_hierarchy` makes, with the settings each takes (required first)
HIERARCHY_KINDS: dict[str, tuple[str, ...]] = {
    "intervals": ("widths", "start"),
    "grouping": ("sizes", "order"),
    "masking": ("n_levels", "char"),
    "dates": ("levels", "format"),
    "priority": ("direction", "priorities", "max_levels"),
}
#: the coarser levels a date can have, finest first
DATE_LEVELS = ("week", "month", "quarter", "year", "decade")

_OWNER = "build_hierarchy"


def _numbers(name: str, value: Any, *, whole: bool) -> list:
    if isinstance(value, str):
        value = [v for v in value.replace(";", ",").split(",") if v.strip()]
    if not isinstance(value, Sequence) or not value:
        raise param_error(_OWNER, name, "a non-empty list of positive numbers, one per level", value)
    out = []
    for v in value:
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise param_error(_OWNER, name, "a list of positive numbers, one per level", value) from None
        if not x > 0 or (whole and x != int(x)):
            raise param_error(_OWNER, name, f"a list of positive {'whole numbers' if whole else 'numbers'}, "
                              "one per level", value)
        out.append(int(x) if whole else x)
    return out


def _whole(name: str, value: Any, default: int) -> int:
    if value in (None, ""):
        return default
    if isinstance(value, bool) or not str(value).strip().isdigit() or int(str(value).strip()) < 1:
        raise param_error(_OWNER, name, "a whole number >= 1", value)
    return int(str(value).strip())


def _priorities(value: Any) -> dict[str, int] | None:
    """``value=priority`` pairs (text, comma-separated, or a mapping); None when empty."""
    if value in (None, "") or (isinstance(value, Mapping) and not value):
        return None
    if isinstance(value, str):
        pairs = {}
        for item in value.split(","):
            if item.strip():
                v, sep, p = item.rpartition("=")
                if not sep or not v.strip():
                    raise param_error(_OWNER, "priorities", "value=priority pairs, comma-separated", value)
                pairs[v.strip()] = p.strip()
        value = pairs
    if not isinstance(value, Mapping):
        raise param_error(_OWNER, "priorities", "value=priority pairs, comma-separated", value)
    out = {}
    for v, p in value.items():
        try:
            out[str(v)] = int(str(p).strip())
        except ValueError:
            raise param_error(_OWNER, "priorities", "whole-number priorities", value) from None
    return out


def build_hierarchy(values: Sequence | pd.Series, kind: str, settings: Mapping[str, Any] | None = None, *,
                    name: str = "hierarchy") -> Hierarchy:
    """Build a hierarchy of ``kind`` over the distinct observed ``values`` (missing values left out).

    Parameters
    ----------
    values : sequence or Series
        The column the hierarchy is for (every distinct non-missing value gets one row).
    kind : {"intervals", "grouping", "masking", "dates"}
    settings : mapping
        ``intervals``: ``widths`` (one range width per level, each a multiple of the one
        before), ``start`` (the lower bound of the first range; default: the smallest value
        rounded down to the first width). ``grouping``: ``sizes`` (values per group at each
        level, each a multiple of the one before), ``order`` (the values in their order;
        default sorted). ``masking``: ``n_levels`` (default: the longest value's length),
        ``char`` (default ``*``). ``dates``: ``levels`` (a subset of ``week``, ``month``,
        ``quarter``, ``year``, ``decade`` in that order; default month, year), ``format`` (a
        ``strftime`` format; default: inferred). ``priority``: ``direction``
        (``highest_to_lowest``, the default, or ``lowest_to_highest``: which end is kept
        longest), ``priorities`` (value -> whole number, or text ``value=priority, ...``;
        default: the values' own order), ``max_levels`` (default 10).
    name : str
        Named in errors (the column).

    Returns
    -------
    Hierarchy
        Raw values in column 0, level ``i`` in column ``i``, ``*`` on top.
    """
    settings = dict(settings or {})
    if kind not in HIERARCHY_KINDS:
        raise param_error(_OWNER, "kind", f"one of {', '.join(HIERARCHY_KINDS)}", kind)
    unknown = sorted(set(settings) - set(HIERARCHY_KINDS[kind]))
    if unknown:
        raise param_error(_OWNER, unknown[0], f"a setting of {kind} hierarchies "
                          f"({', '.join(HIERARCHY_KINDS[kind])})", settings[unknown[0]])
    s = pd.Series(values).dropna()
    if s.empty:
        raise InputError(f"{name}: the column has no values to build a hierarchy from; choose another column.")
    where = f"{kind} hierarchy of {name}"
    if kind == "intervals":
        x = pd.to_numeric(s, errors="coerce")
        if x.isna().any():
            raise InputError(f"{name}: value {s[x.isna()].iloc[0]!r} is not a number; an interval hierarchy "
                             "needs numbers (use grouping or masking for categories).")
        start = settings.get("start")
        widths = _numbers("widths", settings.get("widths"), whole=False)
        if (x == x.round()).all() and any(w != int(w) for w in widths):
            # whole numbers get inclusive ranges "35-39", which a fractional width cannot have
            raise param_error(_OWNER, "widths", f"whole numbers for the whole-number values of {name}", widths)
        return interval_hierarchy(x, widths,
                                  start=None if start in (None, "") else float(start), name=where)
    if kind == "grouping":
        order = settings.get("order")
        if isinstance(order, str):
            order = [v.strip() for v in order.split(",") if v.strip()]
        return order_hierarchy(s, _numbers("sizes", settings.get("sizes"), whole=True),
                               order=order or None, name=where)
    if kind == "masking":
        n = settings.get("n_levels")
        if n not in (None, "") and (isinstance(n, bool) or not str(n).isdigit() or int(n) < 1):
            raise param_error(_OWNER, "n_levels", "a whole number >= 1", n)
        char = str(settings.get("char") or "*")
        if len(char) != 1:
            raise param_error(_OWNER, "char", "one character", char)
        return masking_hierarchy(s, None if n in (None, "") else int(n), char=char, name=where)
    if kind == "priority":
        return priority_hierarchy(s, priorities=_priorities(settings.get("priorities")),
                                  direction=str(settings.get("direction") or "highest_to_lowest"),
                                  max_levels=_whole("max_levels", settings.get("max_levels"), 10), name=where)
    levels = settings.get("levels") or ("month", "year")
    if isinstance(levels, str):
        levels = [v.strip() for v in levels.split(",") if v.strip()]
    return date_hierarchy(s, tuple(levels), format=settings.get("format") or None, name=where)


def hierarchy_levels(h: Hierarchy, *, limit: int | None = None) -> dict:
    """The levels as a table: column names (``value``, ``level 1``, ...), the rows (first
    ``limit``), the number of rows and the distinct labels per level."""
    t = h.table
    columns = ["value"] + [f"level {i}" for i in range(1, t.shape[1])]
    rows = t.to_numpy(dtype=object).tolist()
    return {"columns": columns, "rows": rows if limit is None else rows[:limit], "n_rows": len(rows),
            "distinct": [int(t.iloc[:, i].nunique()) for i in range(t.shape[1])]}


def hierarchy_csv(h: Hierarchy) -> str:
    """The ARX-compatible text: one row per raw value, ``;`` separated, no header."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=";", lineterminator="\n")
    for row in h.table.to_numpy(dtype=object).tolist():
        w.writerow([str(v) for v in row])
    return buf.getvalue()


def write_hierarchy(h: Hierarchy, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write :func:`hierarchy_csv` to ``path`` (refused when it exists, unless ``overwrite``)."""
    p = Path(path)
    if p.exists() and not overwrite:
        raise InputError(f"{p.name}: the file already exists; choose another name or allow overwriting.")
    if not p.parent.is_dir():
        raise InputError(f"{p.parent.name}: no such folder for the hierarchy file; create it first.")
    p.write_text(hierarchy_csv(h), encoding="utf-8")
    return p
