"""Dimensions of a table: missing values and attached hierarchies.

Missing values
    A record whose dimension value is missing cannot be placed in a cell. Each dimension has
    one choice (``missing`` in the table spec's ``[table]``, or per dimension in the workbench):

    * ``"refuse"`` (the default): stop with one line naming the file, the column, the count
      and the three choices;
    * ``"category"``: count them in a category of their own (``"Missing"`` by default);
    * ``"drop"``: leave those records out; the count dropped is reported.

Hierarchies
    A hierarchy can be attached to a dimension as a tau-Argus ``.hrc`` file (one code per
    line, one ``@`` per level), a parent/child CSV, or an ARX-style CSV (one row per raw value,
    then its label at each coarser level; the values sdckit's hierarchy editor saves).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError, SpecError
from .table import Hierarchy

__all__ = ["MISSING_CHOICES", "DEFAULT_MISSING_LABEL", "missing_choices", "apply_missing", "hierarchy_from_file",
           "hierarchy_from_arx", "with_missing_code"]

MISSING_CHOICES = ("category", "drop", "refuse")
DEFAULT_MISSING_LABEL = "Missing"


def missing_choices(value: Any, dims: Sequence[str], *, where: str = "table.missing") -> dict[str, str]:
    """The choice per dimension from ``"drop"`` (every dimension) or ``{"region": "drop"}``
    (the others refuse)."""
    out = {d: "refuse" for d in dims}
    if value is None:
        return out
    if isinstance(value, str):
        items = {d: value for d in dims}
    elif isinstance(value, Mapping):
        items = dict(value)
    else:
        raise SpecError(f"{where}: give one of {', '.join(map(repr, MISSING_CHOICES))}, or a table of dimension = "
                        f"choice; got {value!r}")
    for d, choice in items.items():
        if d not in dims:
            raise SpecError(f"{where}.{d}: {d!r} is not one of the dimensions {list(dims)}")
        if choice not in MISSING_CHOICES:
            raise SpecError(f"{where}.{d}: must be one of {', '.join(map(repr, MISSING_CHOICES))}; got {choice!r}")
        out[d] = choice
    return out


def _is_missing(col: pd.Series) -> pd.Series:
    m = col.isna()
    if col.dtype == object:
        m |= col.astype(str).str.strip().eq("")
    return m


def apply_missing(frame: pd.DataFrame, dims: Sequence[str], choices: Mapping[str, str], *, source: str,
                  label: str = DEFAULT_MISSING_LABEL) -> tuple[pd.DataFrame, dict]:
    """Apply each dimension's choice to its missing values; return the frame (a new one when
    anything changed; the input is never modified) and, per dimension with missing values,
    ``{"choice", "n_missing", "n_dropped", "label"}``.

    Raises InputError (one line: the file, the column, the count and the three choices) for a
    dimension whose choice is ``"refuse"``.
    """
    report: dict[str, dict] = {}
    drop = pd.Series(False, index=frame.index)
    fill: dict[str, pd.Series] = {}
    for d in dims:
        if d not in frame.columns:
            continue  # the table builder names a missing column
        m = _is_missing(frame[d])
        n = int(m.sum())
        if n == 0:
            continue
        choice = choices.get(d, "refuse")
        if choice == "refuse":
            raise InputError(f"{source}: column `{d}` has {n:,} missing value{'s' if n != 1 else ''}; choose "
                             f"missing = \"category\" (count them as '{label}'), \"drop\" (leave those records out, "
                             "counted) or \"refuse\" (the default: fill them in the file first)")
        report[d] = {"choice": choice, "n_missing": n, "n_dropped": 0, "label": label if choice == "category" else None}
        if choice == "drop":
            drop |= m
        else:
            fill[d] = m
    if not report:
        return frame, report
    out = frame.copy()
    for d, m in fill.items():
        if label in set(out.loc[~m, d].astype(str)):
            raise InputError(f"{source}: column `{d}` already has a category {label!r}; choose another label for "
                             "its missing values (missing_label)")
        col = out[d].astype(object)
        col[m] = label
        out[d] = col
    if drop.any():
        for r in report.values():
            if r["choice"] == "drop":
                r["n_dropped"] = int(drop.sum())
        out = out.loc[~drop].reset_index(drop=True)
        if out.shape[0] == 0:
            raise InputError(f"{source}: every record has a missing dimension value; nothing is left to tabulate")
    return out, report


def with_missing_code(h: Hierarchy, label: str = DEFAULT_MISSING_LABEL) -> Hierarchy:
    """The hierarchy with ``label`` added under the total (when not already a code)."""
    if label in h.index:
        return h
    return Hierarchy(list(h.codes) + [label], list(h.parent) + [0])


def hierarchy_from_arx(source: str | Path, *, total: str = "Total") -> Hierarchy:
    """A table hierarchy from an ARX-style CSV: one row per raw value, then its label at each
    coarser level (``;`` or ``,`` separated, no header). A last column holding one value only
    (ARX's ``*``) is the total. A level that repeats the value below it adds no node."""
    p = Path(source)
    if not p.is_file():
        raise InputError(f"{p.name}: no such hierarchy file; give an ARX-style CSV (raw value, then one column "
                         "per level)")
    text = p.read_text(encoding="utf-8-sig")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise InputError(f"{p.name}: the hierarchy file is empty")
    sep = ";" if lines[0].count(";") >= lines[0].count(",") and ";" in lines[0] else ","
    rows = [[c.strip() for c in r] for r in csv.reader(lines, delimiter=sep)]
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise InputError(f"{p.name}: rows have different numbers of levels {sorted(widths)}; every raw value "
                         "needs a label at every level")
    width = widths.pop()
    if width > 1 and len({r[-1] for r in rows}) == 1:  # ARX's "*": the total
        rows = [r[:-1] for r in rows]
    pairs: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for r in rows:
        chain = [total] + list(reversed(r))  # coarsest first
        for parent, child in zip(chain, chain[1:]):
            if child == parent:
                continue
            if child in seen and seen[child] != parent:
                raise InputError(f"{p.name}: {child!r} has two parents ({seen[child]!r} and {parent!r}); a "
                                 "hierarchy is a tree")
            if child not in seen:
                seen[child] = parent
                pairs.append((parent, child))
    return Hierarchy.from_parent_child(pd.DataFrame(pairs, columns=["parent", "child"]), total=total)


def hierarchy_from_file(spec: Mapping[str, Any] | str, base: Path, *, total: str = "Total",
                        where: str = "hierarchies") -> Hierarchy:
    """A hierarchy from its spec: ``{hrc = "f.hrc"}``, ``{parent_child = "f.csv"}`` (with
    ``parent``/``child`` column names) or ``{arx = "f.csv"}``; a bare file name is read by its
    suffix (``.hrc``, else ARX-style CSV)."""
    if isinstance(spec, str):
        spec = {"hrc": spec} if spec.lower().endswith(".hrc") else {"arx": spec}
    if not isinstance(spec, Mapping):
        raise SpecError(f"{where}: give hrc = 'file.hrc', parent_child = 'file.csv' or arx = 'file.csv'")
    for key in ("hrc", "parent_child", "arx"):
        if key in spec:
            f = base / str(spec[key])
            if not f.is_file():
                raise SpecError(f"{where}.{key}: file {f.name!r} does not exist")
            if key == "hrc":
                return Hierarchy.from_hrc(f, total=total)
            if key == "arx":
                return hierarchy_from_arx(f, total=total)
            return Hierarchy.from_parent_child(f, total=total, parent_col=spec.get("parent", "parent"),
                                               child_col=spec.get("child", "child"))
    raise SpecError(f"{where}: give hrc = 'file.hrc', parent_child = 'file.csv' or arx = 'file.csv'")
