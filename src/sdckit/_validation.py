"""Parameter checks with one message template.

The template is: "The 'k' parameter of Microaggregation must be an int >= 2. Got 1."
Every method validates its settings on creation with these helpers, so the messages read
the same everywhere.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

from .errors import InputError, ParameterError


def param_error(owner: str, name: str, rule: str, value: Any) -> ParameterError:
    """Build the one parameter-error message: ``The 'name' parameter of owner must be rule. Got value.``"""
    return ParameterError(f"The {name!r} parameter of {owner} must be {rule}. Got {value!r}.",
                          param=name, rule=rule, value=value)


def check_int(owner: str, name: str, value: Any, *, min_value: int | None = None,
              max_value: int | None = None) -> int:
    """Check an integer parameter (bool is refused) within optional bounds and return it."""
    rule = "an int"
    if min_value is not None and max_value is not None:
        rule = f"an int in [{min_value}, {max_value}]"
    elif min_value is not None:
        rule = f"an int >= {min_value}"
    elif max_value is not None:
        rule = f"an int <= {max_value}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise param_error(owner, name, rule, value)
    iv = int(value)  # exact for any Integral
    if (min_value is not None and iv < min_value) or (max_value is not None and iv > max_value):
        raise param_error(owner, name, rule, value)
    return iv


def check_float(owner: str, name: str, value: Any, *, low: float | None = None,
                high: float | None = None, low_open: bool = False,
                high_open: bool = False) -> float:
    """Check a finite real parameter within an interval; open ends with ``*_open``."""
    lo = "" if low is None else ("(" if low_open else "[") + f"{low:g}"
    hi = "" if high is None else f"{high:g}" + (")" if high_open else "]")
    if low is not None and high is not None:
        rule = f"a number in {lo}, {hi}"
    elif low is not None:
        rule = f"a number {'>' if low_open else '>='} {low:g}"
    elif high is not None:
        rule = f"a number {'<' if high_open else '<='} {high:g}"
    else:
        rule = "a finite number"
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise param_error(owner, name, rule, value)
    v = float(value)
    if low is not None and (v < low or (low_open and v == low)):
        raise param_error(owner, name, rule, value)
    if high is not None and (v > high or (high_open and v == high)):
        raise param_error(owner, name, rule, value)
    return v


def check_choice(owner: str, name: str, value: Any, choices: Sequence[str]) -> str:
    """Check that a string option is one of ``choices``."""
    if value not in choices:
        rule = "one of " + ", ".join(repr(c) for c in choices)
        raise param_error(owner, name, rule, value)
    return value


def check_bool(owner: str, name: str, value: Any) -> bool:
    """Check a boolean flag."""
    if not isinstance(value, bool):
        raise param_error(owner, name, "true or false", value)
    return value


def check_names(owner: str, name: str, value: Any, *, allow_empty: bool = False) -> tuple[str, ...]:
    """Normalise a column name or list of column names to a tuple of str."""
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, Iterable) or not all(isinstance(v, str) for v in value):
        raise param_error(owner, name, "a column name or a list of column names", value)
    out = tuple(value)
    if not out and not allow_empty:
        raise param_error(owner, name, "a non-empty list of column names", value)
    if len(set(out)) != len(out):
        raise param_error(owner, name, "a list without repeated names", value)
    return out


def close_names(name: str, candidates: Iterable[str], n: int = 3) -> str:
    """Text listing the candidates closest to ``name`` ("did you mean ...?"), or the first few."""
    candidates = [str(c) for c in candidates]
    close = difflib.get_close_matches(name, candidates, n=n, cutoff=0.5)
    if not close:
        low = name.lower()
        close = [c for c in candidates if low in c.lower() or c.lower() in low][:n]
    if close:
        return "did you mean " + ", ".join(repr(c) for c in close) + "?"
    shown = ", ".join(repr(c) for c in candidates[:10])
    more = f" and {len(candidates) - 10} more" if len(candidates) > 10 else ""
    return f"the columns are {shown}{more}"


def check_columns_exist(columns: Iterable[str], available: Sequence[str], *, where: str,
                        role: str) -> None:
    """Raise if a named column is missing, listing the close names."""
    for col in columns:
        if col not in available:
            raise InputError(
                f"{where}: the {role} column {col!r} does not exist; {close_names(col, available)}")
