"""The two files the utility measures compare, as frames (shared by the utility modules)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..errors import InputError


def frame_of(data: Any, what: str) -> pd.DataFrame:
    """The records of a DataFrame or a Microdata (``what``: "original" or "synthetic", for the
    error)."""
    if isinstance(data, pd.DataFrame):
        return data
    frame = getattr(data, "frame", None)
    if isinstance(frame, pd.DataFrame):
        return frame
    raise InputError(f"utility: the {what} data must be a DataFrame or a Microdata; got {type(data).__name__}.")


def is_numeric(s: pd.Series) -> bool:
    """Numeric and not boolean (synthpop treats logical columns as factors)."""
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


__all__ = ["frame_of", "is_numeric"]
