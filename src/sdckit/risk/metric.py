"""A distance on mixed data: standardised continuous variables and categorical ones as scaled
dummies (Matloff & Tendick's metric M), and position-wise equality of two columns.

Used by neighbourhood resampling (:mod:`sdckit.masking.neighbours`) and by the tracking of rare
records (:mod:`sdckit.risk.tracking`); it sits with the measures so that both can import it.

References
----------
Matloff, N. and Tendick, P. (2018). A new method for avoiding data disclosure while
automatically preserving multivariate relations. arXiv:1510.04406, section 4.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError

__all__ = ["MixedMetric", "values_equal"]


@dataclass(frozen=True)
class MixedMetric:
    """Standardised, weighted coordinates of mixed data (section 4's metric M).

    Built from a reference frame with :meth:`fit`; :meth:`transform` maps any frame with the
    same columns to coordinates on the reference's scale (NaN rows where a continuous value
    is missing). Euclidean distance between coordinate rows is the method's distance.

    Attributes
    ----------
    continuous, categorical : tuple of str
        Variables used in the distance, by kind (constant or zero-weight ones left out).
    excluded : dict
        Variable -> reason it takes no part in the distance (constant, weight 0).
    """

    continuous: tuple[str, ...]
    categorical: tuple[str, ...]
    weights: Mapping[str, float]
    centre: Mapping[str, float]
    scale: Mapping[str, float]
    levels: Mapping[str, tuple]
    level_mean: Mapping[str, np.ndarray]
    level_sd: Mapping[str, np.ndarray]
    excluded: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def fit(cls, frame: pd.DataFrame, continuous: Sequence[str], categorical: Sequence[str],
            weights: Mapping[str, float] | None = None, *, where: str = "neighbours") -> MixedMetric:
        weights = dict(weights or {})
        n = len(frame)
        cont, cat, excluded = [], [], {}
        centre, scale, levels, lmean, lsd = {}, {}, {}, {}, {}
        for v in continuous:
            x = pd.to_numeric(frame[v], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            bad = np.flatnonzero(~np.isfinite(x))
            if bad.size:
                raise InputError(f"{where}: continuous variable {v!r} is missing or not finite in "
                                 f"{bad.size} records (first row {frame.index[bad[0]]!r}); distances "
                                 "need every value: impute or drop those records, or declare "
                                 f"{v!r} categorical.")
            sd = float(np.std(x, ddof=1)) if n > 1 else 0.0
            if weights.get(v, 1.0) == 0.0:
                excluded[v] = "weight 0"
            elif not sd > 1e-12 * max(1.0, abs(float(np.mean(x)))):
                excluded[v] = "constant (cannot be standardised)"
            else:
                cont.append(v)
                centre[v], scale[v] = float(np.mean(x)), sd
        for v in categorical:
            codes, uniq = pd.factorize(frame[v], sort=True, use_na_sentinel=False)
            c = len(uniq)
            if weights.get(v, 1.0) == 0.0:
                excluded[v] = "weight 0"
                continue
            if c < 2 or n < 2:
                excluded[v] = "constant (a single category)"
                continue
            p = np.bincount(codes, minlength=c) / n
            sd = np.sqrt(p * (1 - p) * n / (n - 1))  # sd of each dummy, n - 1 as R's scale()
            cat.append(v)
            levels[v] = tuple(uniq)
            lmean[v], lsd[v] = p, sd
        return cls(tuple(cont), tuple(cat), {v: float(weights.get(v, 1.0)) for v in (*cont, *cat)},
                   centre, scale, levels, lmean, lsd, excluded)

    @property
    def variables(self) -> tuple[str, ...]:
        return self.continuous + self.categorical

    @property
    def n_continuous(self) -> int:
        """Continuous coordinates come first in :meth:`transform`'s columns."""
        return len(self.continuous)

    @property
    def n_dims(self) -> int:
        return len(self.continuous) + sum(1 if len(self.levels[v]) == 2 else len(self.levels[v])
                                          for v in self.categorical)

    def codes(self, frame: pd.DataFrame, v: str) -> np.ndarray:
        """Index of each record's category of ``v`` in the reference's levels; missing values
        are a category of their own when the reference had them, else -1 (as unknown values)."""
        lv = self.levels[v]
        codes = pd.Index(lv).get_indexer(pd.Index(frame[v]))
        miss = pd.isna(frame[v]).to_numpy()
        nan_code = next((i for i, x in enumerate(lv) if pd.isna(x)), -1)
        return np.where(miss, nan_code, codes).astype(np.int64)

    def combinations(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Dense id of each record's combination of categorical values (in the distance), and
        the first record of each combination."""
        ids = np.zeros(len(frame), dtype=np.int64)
        for v in self.categorical:
            code = ids * (len(self.levels[v]) + 1) + (self.codes(frame, v) + 1)
            _, ids = np.unique(code, return_inverse=True)
        _, first, ids = np.unique(ids, return_index=True, return_inverse=True)
        return ids.astype(np.int64).ravel(), first

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Coordinates (n, n_dims) float64: w * (x - mean) / sd per continuous variable, and the
        weighted standardised dummies of each categorical variable (1/sqrt(2) for c > 2)."""
        n = len(frame)
        out = np.empty((n, self.n_dims), dtype=np.float64)
        col = 0
        for v in self.continuous:
            x = pd.to_numeric(frame[v], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            out[:, col] = self.weights[v] * (x - self.centre[v]) / self.scale[v]
            col += 1
        for v in self.categorical:
            lv = self.levels[v]
            codes = self.codes(frame, v)  # -1: unknown or missing -> NaN coordinates
            w, p, sd = self.weights[v], self.level_mean[v], self.level_sd[v]
            use = [1] if len(lv) == 2 else range(len(lv))
            factor = w if len(lv) == 2 else w / math.sqrt(2.0)
            for c in use:
                out[:, col] = factor * ((codes == c) - p[c]) / sd[c]
                out[codes < 0, col] = np.nan
                col += 1
        return out


def values_equal(a: pd.Series, b: pd.Series) -> np.ndarray:
    """Element-wise equality of two aligned columns (by position), missing == missing."""
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    if isinstance(a.dtype, pd.CategoricalDtype) or isinstance(b.dtype, pd.CategoricalDtype):
        a, b = a.astype(object), b.astype(object)
    both = (a.isna() & b.isna()).to_numpy(dtype=bool)
    eq = (a == b).to_numpy(dtype=bool, na_value=False)
    return eq | both
