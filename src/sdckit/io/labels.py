"""SPSS and Stata delivery: legal variable names, value labels that still fit, missing-value codes.

Column names in a CSV may hold spaces, hyphens, leading digits or reserved words; SPSS and
Stata refuse them. :func:`legal_names` turns every name into one the format accepts (unique,
the original kept as the variable label) and the release publishes the mapping as
``column_names.csv``. :func:`delivery_meta` drops value labels that no longer describe the
released values (after a recode the old labels would name the wrong categories) and keeps
them where the categories are the original ones (PRAM, suppression).

References
----------
IBM SPSS Statistics Command Syntax Reference, "Variable names" (letter first, letters, digits,
``_ . @ # $``, at most 64 bytes, reserved keywords ALL AND BY EQ GE GT LE LT NE NOT OR TO WITH).
Stata User's Guide [U] 11.3 "Naming conventions" (``[A-Za-z_][A-Za-z0-9_]{0,31}``, reserved
names such as ``_n``, ``_cons``, ``int``, ``if``).
"""

from __future__ import annotations

import csv
import io
import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..microdata import DatasetMeta, Microdata

#: SPSS reserved keywords: never a variable name (case-insensitive)
SPSS_RESERVED = frozenset({"ALL", "AND", "BY", "EQ", "GE", "GT", "LE", "LT", "NE", "NOT", "OR",
                           "TO", "WITH"})
#: Stata reserved names ([U] 11.3), compared exactly (Stata names are case-sensitive)
STATA_RESERVED = frozenset({"_all", "_b", "byte", "_coef", "_cons", "double", "float", "if", "in",
                            "int", "long", "_n", "_N", "_pi", "_pred", "_rc", "_skip", "strL",
                            "using", "with"} | {f"str{i}" for i in range(1, 2046)})
_SPSS_MAX_BYTES = 64
_STATA_MAX_CHARS = 32
#: step methods that give a column new categories (the old value labels would mislead)
RECODING_METHODS = frozenset({"recode", "generalise"})


def _ascii(name: str) -> str:
    """Accents dropped (é -> e); other non-ASCII characters become ``_``."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return text if text else "_" * len(name)


def _legal_one(name: str, fmt: str) -> str:
    text = _ascii(str(name)).strip()
    if fmt == "sav":
        text = re.sub(r"[^A-Za-z0-9_.@#$]+", "_", text)
        text = re.sub(r"_+", "_", text)
        if not text or not text[0].isalpha():
            text = "v" + text
        text = text[:_SPSS_MAX_BYTES].rstrip(".")
        if text.upper() in SPSS_RESERVED:
            text = text + "_"
        return text
    text = re.sub(r"[^A-Za-z0-9_]+", "_", text)
    text = re.sub(r"_+", "_", text)
    if not text or not (text[0].isalpha() or text[0] == "_"):
        text = "v" + text
    text = text[:_STATA_MAX_CHARS]
    if text in STATA_RESERVED:
        text = ("v_" + text)[:_STATA_MAX_CHARS]
    return text


def legal_names(columns: Iterable[Any], fmt: str) -> dict[str, str]:
    """Map every column name to a name the format accepts, unique in the file.

    Parameters
    ----------
    columns : iterable
        Column names in file order.
    fmt : {"sav", "dta", "csv", "parquet"}
        Target format; CSV and Parquet accept any name (identity mapping).

    Returns
    -------
    dict
        ``{original: delivered}`` for every column, in order; names that are already legal
        map to themselves. Uniqueness is case-insensitive for SPSS (its names are) and exact
        for Stata; a clash gets a suffix ``_2``, ``_3``, ... within the length limit.
    """
    cols = [str(c) for c in columns]
    if fmt not in ("sav", "dta"):
        return {c: c for c in cols}
    limit = _SPSS_MAX_BYTES if fmt == "sav" else _STATA_MAX_CHARS
    fold = (lambda s: s.upper()) if fmt == "sav" else (lambda s: s)
    out: dict[str, str] = {}
    # names already legal keep themselves first, so a legal name is never renamed for an illegal one
    legal_first = sorted(range(len(cols)), key=lambda i: _legal_one(cols[i], fmt) != cols[i])
    taken: set[str] = set()
    chosen: dict[int, str] = {}
    for i in legal_first:
        base = _legal_one(cols[i], fmt)
        name, n = base, 1
        while fold(name) in taken:
            n += 1
            suffix = f"_{n}"
            name = base[: limit - len(suffix)] + suffix
        taken.add(fold(name))
        chosen[i] = name
    for i, c in enumerate(cols):
        out[c] = chosen[i]
    return out


def column_names_csv(mapping: dict[str, str]) -> str | None:
    """The public ``column_names.csv`` text (original, delivered), or None if no name changed."""
    if all(k == v for k, v in mapping.items()):
        return None
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["original_name", "delivered_name"])
    for k, v in mapping.items():
        w.writerow([k, v])
    return buf.getvalue()


def write_column_names(columns: Sequence[Any], data_path: str | os.PathLike) -> Path | None:
    """Write ``column_names.csv`` beside ``data_path`` when its format renames any column.

    Returns the path written, or None when every name was kept (then nothing is written).
    """
    from .atomic import atomic_write_text
    from .formats import WRITE_FORMATS, infer_format

    data_path = Path(data_path)
    fmt = infer_format(data_path, allowed=WRITE_FORMATS)
    text = column_names_csv(legal_names(columns, fmt))
    if text is None:
        return None
    target = data_path.with_name("column_names.csv")
    atomic_write_text(target, text)
    return target


def _touched_by_recode(results: Iterable[Any]) -> set[str]:
    cols: set[str] = set()
    for r in results:
        if getattr(r, "method", None) in RECODING_METHODS:
            params = getattr(r, "params", {}) or {}
            for key in ("variable", "variables", "column", "columns"):
                v = params.get(key)
                if isinstance(v, str):
                    cols.add(v)
                elif isinstance(v, (list, tuple)):
                    cols.update(str(x) for x in v)
    return cols


def _values(s: pd.Series) -> set:
    """Distinct non-missing values, numbers as float so 3 and 3.0 compare equal."""
    out = set()
    for v in pd.unique(s.dropna()):
        if isinstance(v, (bool, np.bool_)):
            out.add(("b", bool(v)))
        elif isinstance(v, (int, float, np.integer, np.floating)):
            out.add(float(v))
        else:
            out.add(v)
    return out


def delivery_meta(original: Microdata, released: Microdata, results: Iterable[Any] = ()) -> DatasetMeta:
    """The labels to write with a release: value labels kept only where they still fit.

    A column's value labels are dropped when a recoding step changed its categories, or when
    its released values are not among the original values (they became text labels or new
    codes). Columns whose categories are the original ones (PRAM, swapping, suppression) keep
    their labels; so do variable labels and missing-value declarations.
    """
    meta = released.meta
    if not meta.value_labels:
        return meta
    recoded = _touched_by_recode(results)
    keep: dict[str, Any] = {}
    for col, labels in meta.value_labels.items():
        if col not in released.frame.columns or col in recoded:
            continue
        if col in original.frame.columns and not _values(released.frame[col]) <= _values(original.frame[col]):
            continue
        keep[col] = labels
    return replace(meta, value_labels=keep)
