"""Encoding of the records for sequential synthesis: columns as codes or values (with the
status of missing values and special codes, synthpop's ``cont.na``), the predictor slots of the
trees and the matrix of tree bins of a set of records (original or synthetic).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from .models import Predictors, decimal_places
from .tree import MAX_BINS, cut_points

#: the status category of an observed value of a numeric variable
OBSERVED = 0


@dataclass
class Column:
    """One column of the original data, encoded once.

    A categorical column has ``codes`` (0..L-1, the missing value as one more code when
    present) and ``categories`` (labels, ``None`` for missing). A numeric one has ``values``
    (floats, 0 where not observed), and when it has missing values or special codes a
    ``status`` (0 = observed, then one code per status in ``status_labels``: ``None`` for
    missing, else the special value).
    """

    name: str
    categorical: bool
    codes: np.ndarray | None = None
    categories: np.ndarray | None = None
    values: np.ndarray | None = None
    status: np.ndarray | None = None
    status_labels: list = field(default_factory=list)
    dtype: Any = None
    cuts: np.ndarray | None = None   # numeric: bin cut points for the trees
    decimals: int = 0
    key_codes: bool = False          # categories are those of a Microdata key (missing = -1 there)

    @property
    def n_levels(self) -> int:
        return int(self.categories.shape[0]) if self.categorical else 0

    def bins(self, values: np.ndarray) -> np.ndarray:
        """Tree bins of values of this column (codes for a categorical one)."""
        if self.categorical:
            codes = np.asarray(values, dtype=np.int64)
            if self.n_levels > MAX_BINS:   # ordered groups of the sorted categories
                return (codes * MAX_BINS // self.n_levels).astype(np.uint8)
            return codes.astype(np.uint8)
        return np.searchsorted(self.cuts, np.asarray(values, dtype=np.float64), side="left").astype(np.uint8)

    def decode(self, codes: np.ndarray | None = None, values: np.ndarray | None = None,
               status: np.ndarray | None = None) -> np.ndarray:
        """Values for expressions and output: labels (object, None = missing) or floats (NaN =
        missing, special codes restored)."""
        if self.categorical:
            return self.categories[np.asarray(codes, dtype=np.int64)]
        out = np.asarray(values, dtype=np.float64).copy()
        if status is not None and self.status_labels:
            for s, lab in enumerate(self.status_labels, start=1):
                out[status == s] = np.nan if lab is None else float(lab)
        return out


def encode_column(name: str, series: pd.Series, *, categorical: bool,
                  missing_codes: Sequence[float] = (), key: tuple[np.ndarray, pd.Index] | None = None) -> Column:
    """Encode one column (see :class:`Column`)."""
    if categorical:
        if key is not None:
            codes, cats = key
            codes = np.asarray(codes, dtype=np.int64).copy()
            labels = list(cats)
        else:
            codes, uniques = pd.factorize(series, sort=True, use_na_sentinel=True)
            codes = codes.astype(np.int64)
            labels = list(uniques)
        if (codes < 0).any():
            codes[codes < 0] = len(labels)
            labels.append(None)
        cat = np.empty(len(labels), dtype=object)
        cat[:] = labels
        return Column(name, True, codes=codes, categories=cat, dtype=series.dtype, key_codes=key is not None)
    v = series.to_numpy(dtype=np.float64, na_value=np.nan)
    status = np.zeros(v.shape[0], dtype=np.int64)
    labels: list = []
    if np.isnan(v).any():
        labels.append(None)
        status[np.isnan(v)] = len(labels)
    for c in missing_codes:
        hit = v == float(c)
        if hit.any():
            labels.append(float(c))
            status[hit] = len(labels)
    values = np.where(status == OBSERVED, v, 0.0)
    observed = values[status == OBSERVED]
    return Column(name, False, values=values, status=status if labels else None, status_labels=labels,
                  dtype=series.dtype, cuts=cut_points(values if observed.size else np.zeros(1)),
                  decimals=decimal_places(observed))


class Slots:
    """Predictor slots: a categorical column is one slot; a numeric column is its value slot
    (``name``) and, with a status, a categorical status slot (``name#status``). Every slot is
    one column of a frame's matrix of tree bins."""

    def __init__(self, enc: Mapping[str, Column]) -> None:
        self.enc = enc
        self.names: list[str] = []
        for c in enc:
            self.names.extend(self.slots(c))
        self.index = {s: j for j, s in enumerate(self.names)}

    def slots(self, col: str) -> list[str]:
        c = self.enc[col]
        return [col] if c.categorical or c.status is None else [col, col + "#status"]

    def is_cat(self, slot: str) -> bool:
        if slot.endswith("#status"):
            return True
        c = self.enc[slot]
        return c.categorical and c.n_levels <= MAX_BINS

    def n_levels(self, slot: str) -> int:
        if slot.endswith("#status"):
            return len(self.enc[slot[:-7]].status_labels) + 1
        return self.enc[slot].n_levels


@dataclass
class Records:
    """Encoded records (original or synthetic): per column codes, or values (+ status), and
    the matrix of tree bins (records x slots)."""

    n: int
    binned: np.ndarray
    codes: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    status: dict = field(default_factory=dict)

    @classmethod
    def empty(cls, n: int, sl: Slots) -> Records:
        return cls(n, np.zeros((n, len(sl.names)), dtype=np.uint8))

    def raw(self, slot: str) -> np.ndarray:
        if slot.endswith("#status"):
            return self.status[slot[:-7]]
        return self.codes[slot] if slot in self.codes else self.values[slot]

    def take(self, rows: np.ndarray) -> Records:
        return Records(int(rows.shape[0]), self.binned[rows],
                      {k: v[rows] for k, v in self.codes.items()},
                      {k: v[rows] for k, v in self.values.items()},
                      {k: v[rows] for k, v in self.status.items()})


def predictors_of(frame: Records, slots: Sequence[str], sl: Slots, rows: np.ndarray) -> Predictors:
    return Predictors(frame.binned, np.array([sl.index[s] for s in slots], dtype=np.int64),
                      np.asarray(rows, dtype=np.int64),
                      np.array([sl.is_cat(s) for s in slots], dtype=bool),
                      np.array([sl.n_levels(s) for s in slots], dtype=np.int64),
                      [frame.raw(s) for s in slots])


def decoded(enc: Mapping[str, Column], frame: Records, names: Sequence[str],
             rows: np.ndarray | None = None) -> dict:
    out = {}
    for c in names:
        col = enc[c]
        if col.categorical:
            codes = frame.codes[c]
            out[c] = col.decode(codes=codes if rows is None else codes[rows])
        else:
            v, st = frame.values[c], frame.status.get(c)
            if rows is not None:
                v = v[rows]
                st = None if st is None else st[rows]
            out[c] = col.decode(values=v, status=st)
    return out


def set_bins(enc: Mapping[str, Column], sl: Slots, frame: Records, col: str,
              rows: np.ndarray | None = None) -> None:
    """Bin column ``col`` (all records, or ``rows`` only) into the frame's matrix."""
    c = enc[col]
    j = sl.index[col]
    if c.categorical:
        src = frame.codes[col]
    else:
        src = frame.values[col]
    if rows is None:
        frame.binned[:, j] = c.bins(src)
    else:
        frame.binned[rows, j] = c.bins(src[rows])
    if not c.categorical and c.status is not None:
        js = sl.index[col + "#status"]
        st = frame.status[col]
        if rows is None:
            frame.binned[:, js] = st.astype(np.uint8)
        else:
            frame.binned[rows, js] = st[rows].astype(np.uint8)


def encode_value(col: Column, value: Any) -> tuple[str, Any]:
    """A rule's constant as this column's code, or (for numeric) value and status."""
    if col.categorical:
        labels = list(col.categories)
        for i, lab in enumerate(labels):
            if lab == value or (lab is not None and not isinstance(lab, str) and isinstance(value, (int, float))
                                and not isinstance(value, bool) and float(lab) == float(value)):
                return "code", i
        raise InputError(f"rules: {value!r} is not a category of {col.name!r}; the categories are "
                         f"{', '.join(repr(x) for x in labels[:10])}{' ...' if len(labels) > 10 else ''}.")
    v = float(value)
    if col.status_labels and v in [x for x in col.status_labels if x is not None]:
        return "status", list(col.status_labels).index(v) + 1
    return "value", v


def n_different(a: np.ndarray, b: np.ndarray) -> int:
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype.kind in "fiub" and b.dtype.kind in "fiub":
        a, b = a.astype(float), b.astype(float)
        both_nan = np.isnan(a) & np.isnan(b)
        close = np.isclose(a, b, rtol=1e-9, atol=1e-8)
        return int((~(close | both_nan)).sum())
    return int(sum(1 for x, y in zip(a, b) if not (x == y or (isnull(x) and isnull(y)))))


def isnull(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


__all__ = ["OBSERVED", "Column", "encode_column", "Slots", "Records", "predictors_of", "decoded", "set_bins",
           "encode_value", "n_different", "isnull"]
