"""Row-wise steps on partitioned microdata: ``remove`` and ``recode``, partition by partition.

Both are functions of one record at a time, so the engine runs them on every partition with
no exchange between partitions and releases the same values as the in-memory steps:

* ``remove`` drops columns (the same checks as the in-memory step: the column exists and
  holds no role);
* ``recode`` (a global recoding: every record with a given value gets the same new value,
  Hundepool et al. 2012, sec. 3.4.2-3.4.3) is *fitted* by running the in-memory step itself on
  the column's distinct values (the agreed categories of a key or stratum, else one
  distributed pass of distinct values), which gives the map value -> released value and runs
  the step's own validation and guarantee checks; each partition is then mapped with it. Bins
  (``breaks``) and top/bottom coding of a column without agreed categories are elementwise
  and run the in-memory step on each partition directly. A recoded key or stratum gets new
  agreed categories (the sorted released values), so later steps and the gate's risk count
  the recoded categories.

References
----------
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, Wiley, sections 3.2 (direct
identifiers), 3.4.2 (global recoding) and 3.4.3 (top and bottom coding).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import close_names
from ..errors import InputError
from ..microdata import Microdata
from .frame import PartitionedMicrodata

#: the scope sentences of the row-wise steps in the report
SCOPE = {"remove": "partition by partition: the same columns are dropped as in memory",
         "recode": "row by row on every partition: the released values are those of the in-memory "
                   "step (a value's recoding does not depend on the other records)"}


@dataclass(frozen=True)
class RowwiseStep:
    """An in-memory ``remove`` or ``recode`` step to run partition by partition."""

    step: Any
    method: str

    @property
    def variables(self) -> tuple[str, ...]:
        """The columns the step reads and writes (remove: the columns dropped)."""
        if self.method == "remove":
            return tuple(self.step.variables)
        return (self.step.variable,)

    @property
    def needs_values(self) -> bool:
        """A recoding whose map must be fitted on the column's distinct values."""
        return self.method == "recode" and (self.step.mapping is not None
                                            or self.step.hierarchy_file is not None)


@dataclass(frozen=True)
class RowwisePlan:
    """A fitted row-wise step: the map value -> released value (recode of a column with
    agreed categories or a mapping / hierarchy), the released column's dtype and the new
    agreed categories of a recoded key or stratum."""

    settings: RowwiseStep
    lookup: dict | None = None
    dtype: Any = None
    categories: pd.Index | None = None
    summary: dict = field(default_factory=dict)

    @property
    def method(self) -> str:
        return self.settings.method


def distinct_values(pmd: PartitionedMicrodata, s: RowwiseStep):
    """The lazy distinct non-missing values of the recoded column, when its map must be fitted
    and it has no agreed categories; else None."""
    if not s.needs_values or s.step.variable in pmd.categories:
        return None
    _check_columns(pmd, s)
    import dask

    # each partition's distinct values, merged in one task (no shuffle)
    parts = [dask.delayed(_distinct)(p) for p in pmd.frame[s.step.variable].to_delayed()]
    return dask.delayed(_merge_distinct)(parts)


def _distinct(col: pd.Series) -> pd.Series:
    col = col.astype(object) if isinstance(col.dtype, pd.CategoricalDtype) else col
    return pd.Series(pd.unique(col.dropna()))


def _merge_distinct(parts: list) -> pd.Series:
    return pd.Series(pd.unique(pd.concat(parts, ignore_index=True))) if parts else pd.Series([], dtype=object)


def _check_columns(pmd: PartitionedMicrodata, s: RowwiseStep) -> None:
    names = [str(c) for c in pmd.frame.columns]
    for var in s.variables:
        if var not in names:
            raise InputError(f"{s.method}: column {var!r} does not exist; {close_names(var, names)}")


def fit_rowwise(pmd: PartitionedMicrodata, s: RowwiseStep, values: Any = None) -> RowwisePlan:
    """Check the step against the data and fit a recoding's map (see the module notes)."""
    _check_columns(pmd, s)
    if s.method == "remove":
        for var in s.variables:
            for role, value in pmd.roles.items():
                if var == value or (isinstance(value, tuple) and var in value):
                    raise InputError(f"remove: column {var!r} holds the {role} role; "
                                     "take it out of [roles] to remove it.")
        return RowwisePlan(s, summary={"method": "remove", "removed": list(s.variables),
                                       "columns_left": len(pmd.frame.columns) - len(s.variables),
                                       "scope": SCOPE["remove"]})
    var = s.step.variable
    if var in pmd.categories:
        values = pd.Series(pmd.categories[var], name=var)
    elif values is not None:
        values = pd.Series(values, name=var).reset_index(drop=True)
    if values is None:  # bins or top/bottom coding of a column without agreed categories
        numeric = s.step.breaks is None
        dtype = np.dtype("float64") if numeric else _text_dtype(pmd.frame._meta[var].dtype)
        return RowwisePlan(s, None, dtype, None,
                           {"method": "recode", "variable": var,
                            "mode": "breaks" if s.step.breaks is not None else "top_bottom",
                            "scope": SCOPE["recode"]})
    # the in-memory step on one record per distinct value: its validation, its map, its checks
    res = s.step.apply(Microdata(pd.DataFrame({var: values})))
    failed = [g for g in res.guarantees if not g.holds]
    if failed:
        raise InputError(f"recode of {var!r}: the recoding's check {failed[0].name!r} fails on the "
                         f"column's values ({failed[0].statement}).")
    released = res.microdata.frame[var]
    lookup = dict(zip(values.tolist(), released.tolist()))
    new = pd.Series(list(lookup.values())).dropna()
    numeric = pd.api.types.is_numeric_dtype(new.infer_objects())
    dtype = np.dtype("float64") if numeric else _text_dtype(pmd.frame._meta[var].dtype)
    cats = None
    if var in pmd.categories:
        cats = pd.Index(pd.factorize(pd.Index(new.to_numpy()), sort=True)[1])
    return RowwisePlan(s, lookup, dtype, cats,
                       {"method": "recode", "variable": var, "mode": res.summary.get("mode"),
                        "distinct_before": len(lookup), "distinct_after": int(new.nunique()),
                        "scope": SCOPE["recode"]})


def _text_dtype(current: Any) -> Any:
    """The dtype of released labels: the column's own dtype when it holds text already, else
    pyarrow strings (a text column Dask can describe to Parquet without looking at values)."""
    if isinstance(current, pd.StringDtype) or current == np.dtype(object):
        return current
    return pd.StringDtype("pyarrow")


def rowwise_partition(pdf: pd.DataFrame, plan: RowwisePlan) -> pd.DataFrame:
    """One partition after the step (a pure function of the partition and the plan)."""
    s = plan.settings
    if s.method == "remove":
        return pdf.drop(columns=list(s.variables))
    var = s.step.variable
    out = pdf.copy(deep=False)
    if plan.lookup is not None:
        col = pdf[var].astype(object) if isinstance(pdf[var].dtype, pd.CategoricalDtype) else pdf[var]
        new = col.map(plan.lookup)  # missing stays missing
        unknown = new.isna() & col.notna()
        if unknown.any():
            raise InputError(f"recode: {var!r} has the value {col[unknown].iloc[0]!r}, which the "
                             "fitted recoding does not know (the input changed while running).")
    elif len(pdf):
        new = s.step.apply(Microdata(pdf[[var]].reset_index(drop=True))).microdata.frame[var]
        new.index = pdf.index
    else:
        new = pdf[var]
    out[var] = new.astype(plan.dtype)
    return out


def _meta_after(meta: pd.DataFrame, plan: RowwisePlan) -> pd.DataFrame:
    s = plan.settings
    if s.method == "remove":
        return meta.drop(columns=list(s.variables))
    out = meta.copy()
    out[s.step.variable] = out[s.step.variable].astype(plan.dtype)
    return out


def rowwise_partitioned(pmd: PartitionedMicrodata, plan: RowwisePlan) -> PartitionedMicrodata:
    """Apply a fitted row-wise step to every partition (lazy); a recoded key or stratum gets
    its new agreed categories."""
    frame = pmd.frame.map_partitions(rowwise_partition, plan, meta=_meta_after(pmd.frame._meta, plan),
                                     align_dataframes=False)
    out = pmd.with_frame(frame)
    if plan.categories is not None:
        out = dataclasses.replace(out, categories={**pmd.categories, plan.settings.step.variable: plan.categories})
    return out
