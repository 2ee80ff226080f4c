"""What the open data file says about its variables, as the workbench's Data and Roles pages show it.

The single user-missing codes an SPSS or Stata file declares (:func:`declared_missing_by_column`,
:func:`declared_missing_codes`), whether a column reads as a sampling weight
(:func:`weight_problem`), the label of a value (:func:`value_label`) and a code as the pages
show it (:func:`whole_number`, :func:`json_value`).

These read a column or the file's metadata and hold no state, so they sit apart from the
session (:mod:`sdckit.app.session`, which re-exports the first three under their old home).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["declared_missing_by_column", "declared_missing_codes", "weight_problem", "value_label",
           "whole_number", "json_value"]


def declared_missing_by_column(meta) -> dict[str, list]:
    """The single user-missing codes an SPSS/Stata file declares, per column (``{"Health": [-9]}``)."""
    out: dict[str, list] = {}
    for col, rs in (getattr(meta, "missing_ranges", None) or {}).items():
        codes = sorted({int(lo) if float(lo).is_integer() else float(lo)
                        for r in rs or [] for lo, hi in [(r.get("lo"), r.get("hi"))]
                        if lo is not None and lo == hi and isinstance(lo, (int, float))})
        if codes:
            out[str(col)] = codes
    return out


def declared_missing_codes(meta) -> list:
    """The single user-missing codes an SPSS file declares (``{"lo": -9, "hi": -9}``), sorted."""
    ranges = getattr(meta, "missing_ranges", None) or {}
    codes = set()
    for rs in ranges.values():
        for r in rs or []:
            lo, hi = r.get("lo"), r.get("hi")
            if lo is not None and lo == hi and isinstance(lo, (int, float)):
                codes.add(int(lo) if float(lo).is_integer() else float(lo))
    return sorted(codes)


def weight_problem(s: pd.Series) -> str | None:
    """Why ``s`` is not a plausible sampling weight (values below 1, missing values, or a few
    small whole numbers such as 1-3, which read as a category code), or None."""
    if not pd.api.types.is_numeric_dtype(s):
        return "it is not numeric"
    v = pd.to_numeric(s, errors="coerce")
    if v.isna().any():
        return f"{int(v.isna().sum()):,} records have no weight"
    below = int((v < 1).sum())
    if below:
        return f"{below:,} records have a weight below 1 (smallest {v.min():g})"
    distinct = np.unique(v.to_numpy())
    if len(distinct) <= 5 and np.all(distinct == np.round(distinct)) and distinct.max() <= 10:
        return ("it takes only the whole values " + ", ".join(f"{x:g}" for x in distinct)
                + ", which reads as a category code")
    return None


def value_label(labels: dict, value) -> str | None:
    """The label of ``value`` in a column's value labels, or None.

    The value is looked up as it is, as :func:`json_value` shows it, then by number (a code
    read as ``1.0`` finds the label of ``1``).

    Parameters
    ----------
    labels : dict
        The column's value labels (code -> label), as the file's metadata holds them.
    value : object
        A value of the column.

    Returns
    -------
    str or None
        The label, or None when the value has none.
    """
    if not labels:
        return None
    for key in (value, json_value(value)):
        try:
            if key in labels:
                return str(labels[key])
        except TypeError:
            continue
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    for k, lab in labels.items():
        try:
            if float(k) == f:
                return str(lab)
        except (TypeError, ValueError):
            continue
    return None


def whole_number(v: Any) -> Any:
    """A float code that is a whole number as an int (1.0 -> 1), anything else unchanged."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v)
    return v


def json_value(v: Any) -> Any:
    """A value as JSON can hold it: a number or bool as it is; NaN, infinities and anything else as text.

    Parameters
    ----------
    v : Any
        A value of a column (numpy scalars are unwrapped first).

    Returns
    -------
    int, float, bool or str
        The value, JSON-safe.
    """
    if isinstance(v, (np.generic,)):
        v = v.item()
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return str(v)
    return v if isinstance(v, (int, float, bool)) else str(v)
