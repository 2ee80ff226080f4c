"""Helpers shared by the continuous masking methods (microaggregation, rank swapping, noise):
input checks with clear errors, standardisation, strata, moments before/after and the
report section they share.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import close_names
from ..errors import InputError
from ..microdata import Microdata
from ..result import StepResult


def numeric_names(names: Sequence[str] | None, p: int) -> list[str]:
    return list(names) if names is not None else [f"column {j}" for j in range(p)]


def _where_text(mask: np.ndarray, names: list[str], row_labels: Sequence | None = None) -> str:
    """'x': 3 (rows 4, 9, 17), 'y': 1 (row 2): count per column and the first rows."""
    parts = []
    for j in np.flatnonzero(mask.any(axis=0)):
        rows = np.flatnonzero(mask[:, j])
        shown = [str(row_labels[r]) if row_labels is not None else str(r) for r in rows[:3]]
        more = ", ..." if rows.size > 3 else ""
        parts.append(f"{names[j]!r}: {rows.size} (row{'s' if rows.size > 1 else ''} {', '.join(shown)}{more})")
    return "; ".join(parts)


def check_numeric(X, names: Sequence[str] | None, *, where: str, allow_nan: bool = False,
                  row_labels: Sequence | None = None) -> np.ndarray:
    """A float64 (n, p) array of ``X``; infinite values (and NaN unless ``allow_nan``) are
    refused with their count per column and the first rows where they are."""
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{where}: the values are not all numbers; give numeric columns only.") from None
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise InputError(f"{where}: expected a 2-d array of records x variables; got shape {X.shape}.")
    if np.isfinite(X).all():                        # the usual case: one pass, no messages to build
        return X
    names = numeric_names(names, X.shape[1])
    inf = np.isinf(X)
    if inf.any():
        raise InputError(f"{where}: {int(inf.sum())} infinite values ({_where_text(inf, names, row_labels)}); "
                         "replace them (e.g. by missing) before masking.")
    nan = np.isnan(X)
    if nan.any() and not allow_nan:
        raise InputError(f"{where}: {int(nan.sum())} missing values ({_where_text(nan, names, row_labels)}); "
                         "this method needs complete records: impute them, or use missing = \"separate\" "
                         "where the method offers it.")
    return X


def standardise(X: np.ndarray, names: Sequence[str] | None, *, where: str
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X - mean) / sd per column (sd with ddof = 1, NaN ignored); a constant column is an
    error that names it, since it cannot be standardised."""
    names = numeric_names(names, X.shape[1])
    count = (~np.isnan(X)).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, np.nansum(X, axis=0) / np.maximum(count, 1), np.nan)
        sd = np.sqrt(np.nansum((X - mean) ** 2, axis=0) / np.maximum(count - 1, 1))
    const = np.flatnonzero(~(sd > 0))
    if const.size:
        j = const[0]
        what = "has no values" if count[j] == 0 else f"is constant ({mean[j]:g})"
        raise InputError(f"{where}: variable {names[j]!r} {what}; it cannot be standardised: "
                         "leave it out of the variables (a value shared by all records needs no masking).")
    return (X - mean) / sd, mean, sd


def strata_codes(md: Microdata) -> np.ndarray | None:
    """Dense int64 code of each record's stratum (missing is a stratum of its own), or None."""
    if not md.strata:
        return None
    return md.frame.groupby(list(md.strata), dropna=False, sort=True).ngroup().to_numpy(dtype=np.int64)


def strata_rows(codes: np.ndarray) -> list[np.ndarray]:
    """Row indices of each stratum, in code order (one stable argsort, no per-row loop)."""
    codes = np.asarray(codes)
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return np.split(order, bounds)


def select_numeric(md: Microdata, variables: Sequence[str] | None, *, where: str,
                   allow_nan: bool) -> tuple[list[str], np.ndarray, np.ndarray | None]:
    """The named numeric columns of ``md`` (default: its numeric_vars role) as a float64
    array, checked, and the strata codes."""
    names = list(variables or md.numeric_vars)
    if not names:
        raise InputError(f"{where}: no numeric variables: name them in `variables` or give them the "
                         "numeric_vars role.")
    for v in names:
        if v not in md.columns:
            raise InputError(f"{where}: column {v!r} does not exist; {close_names(v, md.columns)}")
        if v in md.key_vars or v in md.strata:
            raise InputError(f"{where}: column {v!r} is a key or strata variable; only continuous "
                             "variables can be masked here.")
        col = md.frame[v]
        if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            bad = pd.to_numeric(col, errors="coerce").isna() & col.notna()
            example = f"{col[bad].iloc[0]!r} in row {col.index[bad][0]}" if bad.any() else f"dtype {col.dtype}"
            raise InputError(f"{where}: column {v!r} holds non-numeric values (e.g. {example}); "
                             "only numeric columns can be masked by this method.")
    X = check_numeric(md.numeric_array(names), names, where=where, allow_nan=allow_nan,
                      row_labels=md.frame.index)
    return names, X, strata_codes(md)


def moments_summary(before: np.ndarray, after: np.ndarray, names: Sequence[str]) -> dict:
    """The effect on each variable: values changed, mean and sd before/after, and the largest
    change of a correlation (NaN ignored)."""
    changed = ~((before == after) | (np.isnan(before) & np.isnan(after)))

    def corr(X):
        ok = ~np.isnan(X).any(axis=1)
        if ok.sum() < 3 or X.shape[1] < 2:
            return np.eye(X.shape[1])
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.corrcoef(X[ok], rowvar=False)

    dc = np.abs(corr(after) - corr(before))
    return {
        "values_changed": int(changed.sum()),
        "values_changed_share": float(changed.mean()) if changed.size else 0.0,
        "moments": {v: {"mean_before": float(np.nanmean(before[:, j])), "mean_after": float(np.nanmean(after[:, j])),
                        "sd_before": float(np.nanstd(before[:, j], ddof=1)),
                        "sd_after": float(np.nanstd(after[:, j], ddof=1))}
                    for j, v in enumerate(names)},
        "max_correlation_change": float(np.nanmax(dc)) if dc.size else 0.0,
    }


@dataclass(frozen=True)
class ContinuousResult(StepResult):
    """A continuous masking step's result: the report adds a table of moments before/after."""

    def report_html(self) -> str:
        moments = self.summary.get("moments")
        if not moments:
            return super().report_html()
        rest = {k: v for k, v in self.summary.items() if k != "moments"}
        base = StepResult.report_html(dataclasses.replace(self, summary=rest))
        rows = "".join(
            f"<tr><th>{html.escape(v)}</th><td>{m['mean_before']:.6g}</td><td>{m['mean_after']:.6g}</td>"
            f"<td>{m['sd_before']:.6g}</td><td>{m['sd_after']:.6g}</td></tr>" for v, m in moments.items())
        return (base + "<table class='moments'><tr><th>variable</th><th>mean before</th><th>mean after</th>"
                "<th>sd before</th><th>sd after</th></tr>" + rows + "</table>")
