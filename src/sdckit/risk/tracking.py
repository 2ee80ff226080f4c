"""Operational risk check: track rare records into the release (Matloff & Tendick, 5.1 (b)).

The steward names representative rare records, by a query ("sex == 2 and phd == 1 and
age < 31") or by row ids, and follows each into the released data: do records of that
description still exist there, is any of them the original person, where did the original
person's record go and what does it now say, and how far from the original values is the
nearest released record? Records keep their row in a release (a masking step never reorders),
so "where it went" is the same row id. :func:`track_records` also lists the records that are
unique on the key variables and were left unchanged: the ones the release did not touch at all.

The distance is the neighbourhood method's metric (standardised on the original data,
categorical variables as standardised dummies, optional weights): see
:class:`sdckit.risk.metric.MixedMetric`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from .._validation import close_names
from ..errors import InputError
from ..result import ResultDisplay, jsonable
from .metric import MixedMetric, values_equal


def _frame_and_keys(data: Any) -> tuple[pd.DataFrame, tuple[str, ...]]:
    if isinstance(data, pd.DataFrame):
        return data, ()
    frame = getattr(data, "frame", None)
    if isinstance(frame, pd.DataFrame):
        return frame, tuple(getattr(data, "key_vars", ()))
    raise InputError(f"tracking needs a pandas DataFrame or a Microdata; got {type(data).__name__}.")


@dataclass(frozen=True)
class TrackedRecord:
    """One original record followed into the release.

    ``status`` is "suppressed" (every tracked variable missing), "unchanged" or "changed";
    ``changed`` lists the variables whose value differs; ``original`` and ``now`` are the
    record's values before and after (``original`` is confidential: internal use only);
    ``still_matches`` says whether the released row still fits the query;
    ``nearest_distance`` is the distance from the original values to the closest released
    record and ``nearest_row`` that record's id (``nearest_is_self``: it is the same row).
    """

    row: Any
    status: str
    changed: tuple[str, ...]
    original: Mapping[str, Any]
    now: Mapping[str, Any]
    still_matches: bool | None
    nearest_distance: float
    nearest_row: Any
    nearest_is_self: bool

    def to_dict(self, *, confidential: bool = True) -> dict:
        d = {"row": self.row, "status": self.status, "changed": list(self.changed),
             "now": dict(self.now), "still_matches": self.still_matches,
             "nearest_distance": self.nearest_distance, "nearest_row": self.nearest_row,
             "nearest_is_self": self.nearest_is_self}
        if confidential:
            d["original"] = dict(self.original)
        return jsonable(d)


@dataclass(frozen=True)
class TrackingTarget:
    """A query (or a list of row ids) and what became of the records it names."""

    description: str
    query: str | None
    original_rows: tuple
    released_rows: tuple
    records: tuple[TrackedRecord, ...]

    @property
    def still_exist(self) -> bool:
        """Records of this description are in the release (query targets only)."""
        return len(self.released_rows) > 0

    @property
    def original_among_released(self) -> tuple:
        """Original people among the released records of this description."""
        return tuple(r for r in self.original_rows if r in set(self.released_rows))

    def to_dict(self, *, confidential: bool = True) -> dict:
        return jsonable({"description": self.description, "query": self.query,
                         "n_original": len(self.original_rows), "n_released": len(self.released_rows),
                         "original_rows": list(self.original_rows), "released_rows": list(self.released_rows),
                         "original_among_released": list(self.original_among_released),
                         "records": [r.to_dict(confidential=confidential) for r in self.records]})


@dataclass(frozen=True)
class TrackingReport(ResultDisplay):
    """Every target followed into the release, and the key-unique records left unchanged."""

    targets: tuple[TrackingTarget, ...]
    keys: tuple[str, ...] = ()
    n_key_unique: int = 0
    unique_unchanged_rows: tuple = ()
    unique_keys_unchanged_rows: tuple = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self, *, confidential: bool = True) -> dict:
        return jsonable({"targets": [t.to_dict(confidential=confidential) for t in self.targets],
                         "keys": list(self.keys), "n_key_unique": self.n_key_unique,
                         "unique_unchanged": len(self.unique_unchanged_rows),
                         "unique_unchanged_rows": list(self.unique_unchanged_rows[:100]),
                         "unique_keys_unchanged": len(self.unique_keys_unchanged_rows),
                         "notes": list(self.notes)})

    def summary(self) -> dict:
        """Small public figures: per target, whether it is hidden."""
        out = {}
        for t in self.targets:
            among = t.original_among_released
            out[t.description] = {"n_original": len(t.original_rows), "n_released": len(t.released_rows),
                                  "original_among_released": len(among),
                                  "statuses": sorted({r.status for r in t.records})}
        if self.keys:
            out["key_unique_unchanged"] = len(self.unique_unchanged_rows)
        return out

    def report_html(self) -> str:
        """The tracking table without the original values (they are confidential)."""
        rows = []
        for t in self.targets:
            for r in t.records:
                now = ", ".join(f"{k}={_fmt(v)}" for k, v in r.now.items())
                rows.append(
                    f"<tr><td>{html.escape(t.description)}</td><td>{len(t.original_rows)}</td>"
                    f"<td>{len(t.released_rows)}</td><td>{html.escape(str(r.row))}</td>"
                    f"<td>{'-' if r.still_matches is None else ('yes' if r.still_matches else 'no')}</td>"
                    f"<td>{html.escape(r.status)}</td><td>{html.escape(', '.join(r.changed))}</td>"
                    f"<td>{html.escape(now)}</td><td>{r.nearest_distance:.3g}"
                    f"{' (own row)' if r.nearest_is_self else ''}</td></tr>")
        table = ("<table class='tracking'><tr><th>target</th><th>original matches</th>"
                 "<th>released matches</th><th>record</th><th>still matches as itself</th>"
                 "<th>status</th><th>variables changed</th><th>released record now says</th>"
                 "<th>nearest released record (distance)</th></tr>" + "".join(rows) + "</table>")
        uniq = ""
        if self.keys:
            uniq = (f"<p>Records unique on {html.escape(', '.join(self.keys))}: {self.n_key_unique}; "
                    f"left completely unchanged: {len(self.unique_unchanged_rows)}; with their key "
                    f"values unchanged: {len(self.unique_keys_unchanged_rows)}.</p>")
        return table + uniq


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "NA" if math.isnan(v) else f"{v:.6g}"
    return "NA" if v is None or v is pd.NA else str(v)


def _query(frame: pd.DataFrame, query: str, where: str) -> pd.Index:
    try:
        hit = frame.query(query, engine="python")
    except Exception as exc:
        raise InputError(f"{where}: the query {query!r} cannot be evaluated on the data ({exc}); "
                         f"write it in pandas query syntax over the columns "
                         f"{', '.join(map(str, frame.columns[:12]))}, e.g. \"sex == 2 and age < 31\".") from None
    return hit.index


def track_records(original: Any, released: Any, *, queries: Sequence[str] = (),
                  rows: Sequence[Any] = (), variables: Sequence[str] | None = None,
                  categorical: Sequence[str] | None = None,
                  weights: Mapping[str, float] | None = None,
                  keys: Sequence[str] | None = None) -> TrackingReport:
    """Follow rare records from the original data into the release.

    Parameters
    ----------
    original, released : pandas.DataFrame or Microdata
        The same records in the same order (same index); released values may be missing.
    queries : list of str
        Descriptions of rare records in pandas query syntax, e.g.
        ``"sex == 'female' and phd == 1 and age < 31"``.
    rows : list
        Row ids (index labels) of records to follow, besides the query matches.
    variables : list of str
        Variables compared and used in the distance (default: the columns both data share).
    categorical : list of str
        Variables taken as categories in the distance (default: non-numeric columns and the
        key variables of a Microdata).
    weights : mapping
        Per-variable distance weights (as the neighbourhood method's ``weights``).
    keys : list of str
        Key variables for the list of unique records left unchanged (default: a Microdata's
        key variables; none for a DataFrame).

    Returns
    -------
    TrackingReport

    References
    ----------
    Matloff, N. and Tendick, P. (2018), section 5.1 (b) and the worked example of section 6
    (the young female PhD who "became a man").
    """
    orig, okeys = _frame_and_keys(original)
    rel, _ = _frame_and_keys(released)
    if len(orig) != len(rel) or not orig.index.equals(rel.index):
        raise InputError(f"tracking: the released data must hold the same records in the same "
                         f"order as the original ({len(orig)} records); got {len(rel)} records"
                         + (" with another index" if len(orig) == len(rel) else "") + ".")
    variables = tuple(variables) if variables is not None else tuple(c for c in orig.columns if c in rel.columns)
    for v in variables:
        for name, f in (("original", orig), ("released", rel)):
            if v not in f.columns:
                raise InputError(f"tracking: variable {v!r} is not in the {name} data; "
                                 f"{close_names(v, [str(c) for c in f.columns])}")
    if categorical is None:
        categorical = tuple(v for v in variables if v in okeys or not pd.api.types.is_numeric_dtype(orig[v])
                            or pd.api.types.is_bool_dtype(orig[v]))
    cont = tuple(v for v in variables if v not in categorical)
    metric = MixedMetric.fit(orig, cont, tuple(categorical), weights, where="tracking")
    notes = tuple(f"{v!r} takes no part in the distance: {why}" for v, why in metric.excluded.items())
    if queries or len(rows):
        xo = metric.transform(orig)
        xr = metric.transform(rel)
        present = np.flatnonzero(np.isfinite(xr).all(axis=1))  # suppressed records are not there
        tree = cKDTree(xr[present]) if present.size else None

    equal = np.column_stack([values_equal(orig[v], rel[v]) for v in variables]) if variables \
        else np.ones((len(orig), 0), dtype=bool)
    missing_all = np.column_stack([rel[v].isna().to_numpy() for v in variables]).all(axis=1) \
        if variables else np.zeros(len(orig), dtype=bool)
    pos_of = pd.Series(np.arange(len(orig)), index=orig.index)

    def follow(label: Any, matches_now: set | None) -> TrackedRecord:
        i = int(pos_of[label])
        changed = tuple(v for j, v in enumerate(variables) if not equal[i, j])
        status = "unchanged" if not changed else ("suppressed" if missing_all[i] else "changed")
        if tree is not None:
            d, j = tree.query(xo[i])
            near = present[int(j)]
            dist, near_row, near_self = float(d), orig.index[near], bool(near == i)
        else:
            dist, near_row, near_self = float("nan"), None, False
        return TrackedRecord(label, status, changed,
                             {v: orig[v].iloc[i] for v in variables}, {v: rel[v].iloc[i] for v in variables},
                             None if matches_now is None else label in matches_now,
                             dist, near_row, near_self)

    targets = []
    for q in queries:
        o = _query(orig, q, "tracking")
        r = _query(rel, q, "tracking")
        now = set(r)
        targets.append(TrackingTarget(q, q, tuple(o), tuple(r), tuple(follow(x, now) for x in o)))
    if len(rows):
        for x in rows:
            if x not in pos_of.index:
                raise InputError(f"tracking: row id {x!r} is not in the data (ids run from "
                                 f"{orig.index[0]!r} to {orig.index[-1]!r}).")
        targets.append(TrackingTarget("rows " + ", ".join(map(str, rows)), None, tuple(rows), (),
                                      tuple(follow(x, None) for x in rows)))

    keys = tuple(keys) if keys is not None else okeys
    unique_rows, unchanged_rows, keys_unchanged_rows = 0, (), ()
    if keys:
        for k in keys:
            if k not in orig.columns:
                raise InputError(f"tracking: key {k!r} does not exist; {close_names(k, [str(c) for c in orig.columns])}")
        size = orig.groupby(list(keys), dropna=False, sort=False)[list(keys)[0]].transform("size")
        unique = (size.to_numpy() == 1)
        unique_rows = int(unique.sum())
        all_same = equal.all(axis=1) & np.column_stack(
            [values_equal(orig[c], rel[c]) for c in orig.columns if c in rel.columns]).all(axis=1)
        key_same = np.column_stack([values_equal(orig[k], rel[k]) for k in keys]).all(axis=1)
        unchanged_rows = tuple(orig.index[unique & all_same])
        keys_unchanged_rows = tuple(orig.index[unique & key_same])
    return TrackingReport(tuple(targets), keys, unique_rows, unchanged_rows, keys_unchanged_rows, notes)
