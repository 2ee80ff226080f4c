"""A synthetic file drawn from a fitted synthesis: its records as a DataFrame with the
original's columns and dtypes (labels from codes, numeric values with their missing values and
special codes restored).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._random import SeedRecord
from .encoding import Column


@dataclass
class SynthesisDraw:
    """A synthetic file drawn from a :class:`FittedSynthesis`, with its checks."""

    fitted: Any    # the FittedSynthesis drawn from
    k: int
    parts: list
    checks: list
    seed: SeedRecord
    #: synthetic record i stands where record i of the original (or of the frame drawn for) stood
    aligned: bool = False

    def frame(self, template: pd.DataFrame) -> pd.DataFrame:
        """The synthetic records as a DataFrame with ``template``'s columns and dtypes
        (row-aligned to it when the file has the original size)."""
        fit = self.fitted
        enc = fit.encoded
        cols = list(fit.plan.columns)
        if self.aligned:
            index = template.index
        else:
            index = pd.RangeIndex(self.k)
        data = {}
        for c in cols:
            col = enc[c]
            if col.categorical and not isinstance(template[c].dtype, pd.CategoricalDtype):
                data[c] = self._categorical(c, template[c], index)
            else:
                data[c] = _restore_dtype(pd.Series(self.column(c), index=index, name=c), template[c], col)
        return pd.DataFrame(data, index=index)

    def _categorical(self, c: str, original: pd.Series, index: pd.Index) -> pd.Series:
        """A categorical column from its codes (no Python object per record): a categorical
        array cast to the original dtype."""
        col = self.fitted.encoded[c]
        codes = self.codes(c)
        cats = list(col.categories)
        if cats and cats[-1] is None:
            cats = cats[:-1]
            codes = np.where(codes == len(cats), -1, codes)
        try:
            cat = pd.Categorical.from_codes(codes, categories=pd.Index(cats))
            ser = pd.Series(cat, index=index, name=c)
            dt = original.dtype
            plain_int = pd.api.types.is_integer_dtype(dt) and not isinstance(dt, pd.api.extensions.ExtensionDtype)
            if (codes < 0).any() and plain_int:
                return ser.astype(float)
            return ser.astype(dt)
        except (TypeError, ValueError):
            return _restore_dtype(pd.Series(self.column(c), index=index, name=c), original, col)

    def column(self, c: str) -> np.ndarray:
        """Decoded values of column ``c`` over the whole file (labels or floats)."""
        fit = self.fitted
        enc = fit.encoded[c]
        out = np.empty(self.k, dtype=object if enc.categorical else np.float64)
        pos = 0
        for lab, rows, syn in self.parts:
            if c in syn.codes or c in syn.values:
                vals = (enc.decode(codes=syn.codes[c]) if enc.categorical else
                        enc.decode(values=syn.values[c], status=syn.status.get(c)))
            else:   # a stratum column of a resized file
                vals = np.full(syn.n, lab[fit.plan.strata.index(c)], dtype=object)
            if rows is None:
                out[pos:pos + syn.n] = vals
            else:
                out[rows] = vals
            pos += syn.n
        return out

    def codes(self, c: str) -> np.ndarray:
        """Internal codes of a categorical column over the whole file."""
        out = np.empty(self.k, dtype=np.int64)
        pos = 0
        for _lab, rows, syn in self.parts:
            vals = syn.codes[c]
            if rows is None:
                out[pos:pos + syn.n] = vals
            else:
                out[rows] = vals
            pos += syn.n
        return out

    def stratum_of_rows(self) -> list:
        """(stratum labels, rows of the file) of every part."""
        out = []
        pos = 0
        for lab, rows, syn in self.parts:
            out.append((lab, np.arange(pos, pos + syn.n) if rows is None else rows))
            pos += syn.n
        return out


def _restore_dtype(values: pd.Series, original: pd.Series, col: Column) -> pd.Series:
    dt = original.dtype
    if col.categorical:
        if isinstance(dt, pd.CategoricalDtype):
            return values.astype(dt)
        try:
            plain_int = pd.api.types.is_integer_dtype(dt) and not isinstance(dt, pd.api.extensions.ExtensionDtype)
            if values.isna().any() and plain_int:
                return values.astype(float)
            return values.astype(dt)
        except (TypeError, ValueError):
            return values
    if pd.api.types.is_integer_dtype(dt):
        v = values.to_numpy(dtype=float)
        if not np.isnan(v).any() and np.all(v == np.round(v)):
            try:
                return values.astype(dt)
            except (TypeError, ValueError):
                return values
        if isinstance(dt, pd.api.extensions.ExtensionDtype) and np.all(np.isnan(v) | (v == np.round(v))):
            return values.astype(dt)
        return values
    try:
        return values.astype(dt)
    except (TypeError, ValueError):
        return values




__all__ = ["SynthesisDraw"]
