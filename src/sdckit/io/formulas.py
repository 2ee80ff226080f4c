"""Spreadsheet formulas in CSV outputs ("CSV injection"): find them, neutralise or refuse them.

A spreadsheet that opens a CSV file reads a cell beginning with ``=``, ``+``, ``-`` or ``@``
(and, in some programs, a tab or a carriage return) as a formula: a released category label
such as ``=cmd|' /C calc'!A0`` or ``@SUM(A1:A9)`` would run when an analyst opens the file.
The cells that begin so and are not a plain number are *formula-like*. The OWASP rule
neutralises one by prefixing a single quote (``'``), which the spreadsheet shows as text.

``[output] csv_formula_guard`` chooses what a release does with them:

* ``"warn"`` (default): written as they are, with a warning and a line in the public report;
* ``"quote"``: each formula-like cell is written with a leading ``'`` (in CSV outputs only;
  the same cells in the published matrix CSVs get the same prefix, so labels still match);
* ``"refuse"``: the CSV output is refused (nothing of the release is written).

Column names are never changed (the certificate lists them): a formula-like column name is
reported, and refused with ``"refuse"``.

References
----------
OWASP Foundation (2024). *CSV Injection*. https://owasp.org/www-community/attacks/CSV_Injection
(the prefix rule: cells beginning with ``=``, ``+``, ``-``, ``@``, tab or carriage return).
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_choice
from ..errors import InputError, InputWarning

__all__ = ["FORMULA_GUARDS", "is_formula_like", "formula_cells", "neutralise_formulas",
           "guard_frame", "guard_csv_text", "csv_text_findings", "describe_findings"]

#: the values of ``[output] csv_formula_guard``
FORMULA_GUARDS = ("warn", "quote", "refuse")
#: first characters a spreadsheet reads as the start of a formula (OWASP)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: a plain number ("-2", "+3.5", "-1e-05") is not a formula
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: longest example shown in a message or the report
_EXAMPLE_CHARS = 40


def is_formula_like(text: Any) -> bool:
    """True when ``text`` is a string a spreadsheet would read as a formula (see the module)."""
    return (isinstance(text, str) and text[:1] in FORMULA_START
            and _PLAIN_NUMBER.fullmatch(text) is None)


def _example(text: str) -> str:
    return text if len(text) <= _EXAMPLE_CHARS else text[:_EXAMPLE_CHARS - 1] + "…"


def _flagged_values(values: np.ndarray) -> np.ndarray:
    """The distinct values among ``values`` that are formula-like (strings only)."""
    uniq = pd.unique(values)
    return np.array([v for v in uniq if is_formula_like(v)], dtype=object)


def formula_cells(frame: pd.DataFrame) -> list[dict]:
    """Formula-like cells of ``frame``: one ``{"column", "count", "example"}`` per column
    holding any (in column order), then one ``{"column", "count": 1, "example", "header":
    True}`` per formula-like column name.

    Numeric columns cannot hold one (a negative number is written as a plain number); text and
    categorical columns are checked on their distinct values, then counted.
    """
    out = []
    for col in frame.columns:
        s = frame[col]
        if isinstance(s.dtype, pd.CategoricalDtype):
            cats = [c for c in s.cat.categories if is_formula_like(c)]
            if not cats:
                continue
            hit = s.isin(cats).to_numpy()
        elif s.dtype == object or pd.api.types.is_string_dtype(s.dtype):
            values = s.to_numpy(dtype=object)
            flagged = _flagged_values(values)
            if flagged.size == 0:
                continue
            hit = pd.Series(values).isin(flagged).to_numpy()
        else:
            continue
        first = s.to_numpy(dtype=object)[np.flatnonzero(hit)[0]]
        out.append({"column": str(col), "count": int(hit.sum()), "example": _example(str(first))})
    for col in frame.columns:
        if is_formula_like(str(col)):
            out.append({"column": str(col), "count": 1, "example": _example(str(col)), "header": True})
    return out


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose formula-like cells begin with ``'`` (OWASP); column names and
    every other cell unchanged. ``frame`` itself is not modified."""
    out = None
    for col in frame.columns:
        s = frame[col]
        if isinstance(s.dtype, pd.CategoricalDtype):
            cats = list(s.cat.categories)
            if not any(is_formula_like(c) for c in cats):
                continue
            new = s.cat.rename_categories(["'" + c if is_formula_like(c) else c for c in cats])
        elif s.dtype == object or pd.api.types.is_string_dtype(s.dtype):
            values = s.to_numpy(dtype=object)
            flagged = _flagged_values(values)
            if flagged.size == 0:
                continue
            hit = s.isin(flagged).to_numpy()
            new = s.copy()
            new[hit] = "'" + s[hit].astype(str)  # only formula-like strings: no other cell changes
        else:
            continue
        if out is None:
            out = frame.copy(deep=False)
        out[col] = new
    return frame if out is None else out


def describe_findings(findings: list[dict], *, limit: int = 3) -> str:
    """One phrase for a message: ``3 cells of 'name' (e.g. '=cmd|...'), the column name '@x'``."""
    parts = []
    for f in findings[:limit]:
        if f.get("header"):
            parts.append(f"the column name {f['example']!r}")
        else:
            parts.append(f"{f['count']:,} cell{'s' if f['count'] != 1 else ''} of {f['column']!r} "
                         f"(e.g. {f['example']!r})")
    if len(findings) > limit:
        parts.append(f"and {len(findings) - limit} more column{'s' if len(findings) - limit != 1 else ''}")
    return ", ".join(parts)


def _act(findings: list[dict], mode: str, name: str) -> None:
    if not findings:
        return
    what = describe_findings(findings)
    if mode == "refuse":
        raise InputError(f"{name}: formula-like cells that a spreadsheet would run: {what}; "
                         "[output] csv_formula_guard = \"refuse\" refuses them: recode these values, or set "
                         "csv_formula_guard = \"quote\" to write them with a leading '.")
    headers = [f for f in findings if f.get("header")]
    if mode == "warn" or headers:
        done = ("written as they are" if mode == "warn"
                else "the cells are written with a leading ', the column names as they are")
        warnings.warn(f"{name}: formula-like cells that a spreadsheet would run: {what}; {done} "
                      "(set [output] csv_formula_guard = \"quote\" or \"refuse\").", InputWarning, stacklevel=3)


def guard_frame(frame: pd.DataFrame, mode: str = "warn", *, name: str = "the CSV file") -> tuple[pd.DataFrame, list[dict]]:
    """Apply ``mode`` (one of :data:`FORMULA_GUARDS`) to the data about to be written as CSV.

    Returns the frame to write (quoted with ``"quote"``, else ``frame``) and the findings of
    :func:`formula_cells`. ``"refuse"`` raises :class:`~sdckit.errors.InputError` naming the
    columns; ``"warn"`` warns (:class:`~sdckit.errors.InputWarning`).
    """
    check_choice("write_data", "formula_guard", mode, FORMULA_GUARDS)
    findings = formula_cells(frame)
    _act(findings, mode, name)
    if findings and mode == "quote":
        frame = neutralise_formulas(frame)
    return frame, findings


def _csv_cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def csv_text_findings(text: str) -> dict | None:
    """The formula-like cells of a CSV text (e.g. a published matrix, whose header and first
    column are category labels): ``{"count", "example"}``, or None when there are none."""
    hits = [c for r in _csv_cells(text) for c in r if is_formula_like(c)]
    return {"count": len(hits), "example": _example(hits[0])} if hits else None


def guard_csv_text(text: str, mode: str = "warn", *, name: str = "the CSV file") -> str:
    """Apply ``mode`` to a CSV text about to be published (a PRAM matrix): ``"quote"`` prefixes
    ``'`` to every formula-like cell (header cells included: there they are category labels),
    ``"refuse"`` raises, ``"warn"`` warns. The text is returned unchanged when nothing is
    formula-like."""
    check_choice("write_data", "formula_guard", mode, FORMULA_GUARDS)
    found = csv_text_findings(text)
    if found is None:
        return text
    what = f"{found['count']:,} formula-like cell{'s' if found['count'] != 1 else ''} (e.g. {found['example']!r})"
    if mode == "refuse":
        raise InputError(f"{name}: {what} that a spreadsheet would run; [output] csv_formula_guard = "
                         "\"refuse\" refuses them: recode these values, or set csv_formula_guard = \"quote\" "
                         "to write them with a leading '.")
    if mode == "warn":
        warnings.warn(f"{name}: {what} that a spreadsheet would run; written as they are (set [output] "
                      "csv_formula_guard = \"quote\" or \"refuse\").", InputWarning, stacklevel=2)
        return text
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n")
    for r in _csv_cells(text):
        writer.writerow(["'" + c if is_formula_like(c) else c for c in r])
    return buf.getvalue()
