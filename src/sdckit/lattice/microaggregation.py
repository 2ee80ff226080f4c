"""Microaggregation of attributes inside the lattice search, and the quality settings of the step.

An attribute given a *microaggregation function* (ARX 3.9.2's ``MicroAggregationFunction``,
``DataDefinition.setMicroAggregationFunction`` without clustering) is a quasi-identifier that
is not generalised: it is not a dimension of the lattice and does not split the classes. In
the release, within each equivalence class of the released generalised quasi-identifiers its
values are replaced by the class's aggregate; suppressed records stay suppressed (``*``).
The functions (ARX's ``DistributionAggregateFunction``; missing values are ignored, as ARX's
default ``ignoreMissingData``):

* ``arithmetic_mean``: the mean of the class's values;
* ``geometric_mean``: ``exp(mean(log(x + 1))) - 1`` (ARX's offset of 1; values must be > -1);
* ``median``: the middle value, the mean of the two middle values for an even count;
* ``mode``: the most frequent value; of tied values the smallest (ARX takes the first in its
  hash table's order, which is unspecified);
* ``interval``: ``[min, max]`` of the class's values (numbers compared as numbers, text as text).

The first three need numbers. The released column holds text, as the generalised columns do:
a number is written in its shortest exact form (``repr``), so it reads back exactly.

ARX counts a microaggregated attribute in its loss metric (one more dimension,
:mod:`.metrics_arx`), and in precision and the profitability metrics (which sdckit's do not
count: refused); metrics of the classes alone (discernibility, DM*, AECS, height) do not
depend on it. Other metrics are refused with a microaggregated attribute
(:func:`check_quality_settings`).

References
----------
Prasser, F., Kohlmayer, F. (2015). Putting statistical disclosure control into practice: the
ARX data anonymization tool. In *Medical Data Privacy Handbook*, Springer, 111-148.
Domingo-Ferrer, J., Mateo-Sanz, J. M. (2002). Practical data-oriented microaggregation for
statistical disclosure control. *IEEE TKDE* 14(1), 189-201.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..result import Guarantee
from .metrics_arx import (
    DEFAULT_GS_FACTOR,
    GS_FACTOR_METRICS,
    GS_FACTOR_METRICS_ELSEWHERE,
    MICROAGGREGATION_METRICS,
    configure,
)
from .transform import SUPPRESSED

#: the microaggregation functions
FUNCTIONS = ("arithmetic_mean", "geometric_mean", "median", "mode", "interval")
#: those that need numbers
NUMERIC_FUNCTIONS = ("arithmetic_mean", "geometric_mean", "median")

__all__ = ["FUNCTIONS", "NUMERIC_FUNCTIONS", "check_quality_settings", "prepare_problem", "lattice_qis",
           "aggregate", "microaggregate_frame", "microaggregation_guarantees"]


def check_quality_settings(metric: str, gs_factor: float, microaggregate: Mapping[str, str] | None, *,
                           local_recoding: int = 0, dp: bool = False) -> None:
    """Refuse, in one line, a factor or a microaggregated attribute the metric does not take."""
    if gs_factor != DEFAULT_GS_FACTOR and metric not in GS_FACTOR_METRICS:
        where = ("ARX weighs its own non-uniform entropy, whose suppressed records cost the entropy of their labels; sdckit's counts them at the hierarchies' tops, so ARX's weights do not fit it" if metric in GS_FACTOR_METRICS_ELSEWHERE
                 else "ARX 3.9.2 does not apply it to this metric")
        raise InputError(f"gs_factor = {gs_factor:g} does not change the {metric} metric ({where}); it applies to "
                         f"{', '.join(GS_FACTOR_METRICS)}: use one of them or leave gs_factor at 0.5.")
    if dp and gs_factor != DEFAULT_GS_FACTOR:
        raise InputError("gs_factor does not apply to SafePub's differential privacy (its private search scores "
                         "nodes its own way): leave gs_factor at 0.5 or remove dp.")
    if not microaggregate:
        return
    bad = {c: f for c, f in microaggregate.items() if f not in FUNCTIONS}
    if bad:
        c, f = next(iter(bad.items()))
        raise InputError(f"microaggregate: column {c!r} has function {f!r}; use one of {', '.join(FUNCTIONS)}.")
    if metric not in MICROAGGREGATION_METRICS:
        raise InputError(f"microaggregate: the {metric} metric has no contribution for a microaggregated "
                         f"attribute; use one of {', '.join(MICROAGGREGATION_METRICS)}.")
    if local_recoding:
        raise InputError("microaggregate does not take local recoding (each pass would aggregate its own "
                         "classes): set local_recoding = 0.")
    if dp:
        raise InputError("microaggregate does not take SafePub's differential privacy (its release holds the "
                         "generalised quasi-identifiers only): remove microaggregate or dp.")


def lattice_qis(qis: Sequence[str], microaggregate: Mapping[str, str] | None, *, explicit: bool) -> list[str]:
    """The lattice's dimensions: the quasi-identifiers less the microaggregated columns (which
    ``explicit`` quasi-identifiers must not name)."""
    micro = set(microaggregate or {})
    both = [q for q in qis if q in micro]
    if both and explicit:
        raise InputError(f"column {both[0]!r} is both a quasi-identifier to generalise and microaggregated: "
                         "remove it from qis (a microaggregated attribute is not a lattice dimension).")
    return [q for q in qis if q not in micro]


def _numbers(frame: pd.DataFrame, column: str, function: str) -> pd.Series:
    values = frame[column]
    num = pd.to_numeric(values, errors="coerce")
    bad = num.isna() & values.notna() & (values.astype("string").str.strip() != "")
    if bad.any():
        raise InputError(f"microaggregate: {function} needs numbers, but column {column!r} holds "
                         f"{values[bad].iloc[0]!r}; use mode or interval, or recode the column.")
    if function == "geometric_mean" and (num <= -1).any():
        raise InputError(f"microaggregate: geometric_mean of column {column!r} needs values > -1 (ARX's "
                         f"log(x + 1)); it holds {num[num <= -1].iloc[0]!r}.")
    return num.astype(float)


def prepare_problem(problem, frame: pd.DataFrame, *, gs_factor: float = DEFAULT_GS_FACTOR,
                    microaggregate: Mapping[str, str] | None = None):
    """Set the factor and the microaggregated columns on a search problem (:func:`.metrics_arx.configure`)
    after checking the columns; returns the problem."""
    micro = {}
    for column, function in (microaggregate or {}).items():
        if column not in frame.columns:
            raise InputError(f"microaggregate: column {column!r} is not in the data; the columns are "
                             f"{list(frame.columns)}.")
        if function in NUMERIC_FUNCTIONS:
            _numbers(frame, column, function)
        micro[column] = frame[column].to_numpy()
    configure(problem, gs_factor=gs_factor, microaggregated=micro)
    return problem


def _text(v) -> str:
    return repr(float(v)) if isinstance(v, (float, np.floating)) else str(v)


def aggregate(values: pd.Series, function: str):
    """The aggregate of one class's values (module notes); None when every value is missing."""
    v = values.dropna()
    if function in NUMERIC_FUNCTIONS:
        x = pd.to_numeric(v, errors="coerce").dropna().to_numpy(dtype=float)
        if x.size == 0:
            return None
        if function == "arithmetic_mean":
            return float(x.mean())
        if function == "geometric_mean":
            return float(np.exp(np.log(x + 1.0).mean()) - 1.0)
        return float(np.median(x))
    if v.size == 0:
        return None
    num = pd.to_numeric(v, errors="coerce")
    key = num if num.notna().all() else v.astype(str)
    if function == "mode":
        counts = pd.Series(v.to_numpy()).groupby(key.to_numpy()).agg(["size", "first"])
        top = counts["size"].max()
        return counts.loc[counts["size"] == top, "first"].iloc[0]   # groups sorted: the smallest tie
    order = np.argsort(key.to_numpy(), kind="stable")
    return f"[{_text(v.iloc[order[0]])}, {_text(v.iloc[order[-1]])}]"


def microaggregate_frame(original: pd.DataFrame, released: pd.DataFrame, suppressed: np.ndarray,
                         qis: Sequence[str], microaggregate: Mapping[str, str]) -> pd.DataFrame:
    """The release with each microaggregated column replaced, in every released class of the
    generalised ``qis``, by the aggregate of the class's original values; suppressed records
    ``*`` (module notes). ``original`` is not modified."""
    out = released.copy()
    kept = ~np.asarray(suppressed, dtype=bool)
    keys = released.loc[kept, list(qis)].astype(str)
    cls = keys.groupby(list(qis), sort=False, dropna=False).ngroup().to_numpy() if len(qis) else \
        np.zeros(int(kept.sum()), dtype=np.int64)
    for column, function in microaggregate.items():
        col = np.full(len(out), SUPPRESSED, dtype=object)
        vals = original.loc[kept, column]
        if function in NUMERIC_FUNCTIONS:
            vals = _numbers(original.loc[kept], column, function)
        per_class = {}
        for g, idx in pd.Series(np.arange(len(vals))).groupby(cls).groups.items():
            a = aggregate(vals.iloc[np.asarray(idx)], function)
            per_class[g] = "" if a is None else _text(a)
        col[np.flatnonzero(kept)] = [per_class[g] for g in cls]
        out[column] = pd.Series(col, index=out.index, dtype=object)
    return out


def microaggregation_guarantees(released: pd.DataFrame, suppressed: np.ndarray, qis: Sequence[str],
                                microaggregate: Mapping[str, str]) -> list[Guarantee]:
    """Checked on the release with pandas: every released class holds one value of each
    microaggregated column, and suppressed records hold ``*``."""
    out = []
    sup = np.asarray(suppressed, dtype=bool)
    kept = released.loc[~sup]
    for column, function in microaggregate.items():
        if len(kept):
            most = int(kept.astype({q: str for q in qis}).groupby(list(qis), sort=False, dropna=False)[column]
                       .nunique(dropna=False).max()) if len(qis) else int(kept[column].nunique(dropna=False))
        else:
            most = 1
        hidden = bool((released.loc[sup, column] == SUPPRESSED).all())
        out.append(Guarantee(f"microaggregated_{column}", f"every released class holds one {function} of "
                             f"{column}; suppressed records hold {SUPPRESSED}", most, most <= 1 and hidden))
    return out
