"""Microdata: an immutable data frame with the roles of its columns.

Categorical key variables are encoded once to integer codes (``-1`` for missing) with their
category lists kept, so every method works on arrays and a release decodes back to the
original labels and dtype.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._validation import close_names
from .errors import InputError, InputWarning

ROLE_NAMES = ("key_vars", "numeric_vars", "weight", "household", "strata", "sensitive", "pram_vars")


@dataclass(frozen=True)
class DatasetMeta:
    """What a file said about its columns beyond the values: kept through a round trip.

    ``column_labels`` maps column -> descriptive label (SPSS/Stata variable labels);
    ``value_labels`` maps column -> {code: label}; ``source`` is the file read, if any.
    ``missing_ranges`` maps column -> SPSS user-missing declarations, each ``{"lo": a, "hi": b}``
    (a single code has ``lo == hi``); the codes stay in the data as values and the
    declarations are written back to ``.sav``.
    """

    source: str | None = None
    column_labels: Mapping[str, str] = field(default_factory=dict)
    value_labels: Mapping[str, Mapping[Any, str]] = field(default_factory=dict)
    file_format: str | None = None
    missing_ranges: Mapping[str, list] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"source": self.source, "file_format": self.file_format,
                "column_labels": dict(self.column_labels),
                "value_labels": {k: {str(a): b for a, b in v.items()} for k, v in self.value_labels.items()},
                "missing_ranges": {k: [dict(r) for r in v] for k, v in self.missing_ranges.items()}}


def _as_tuple(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


#: Widest range of integer values encoded by counting (a table of this many int32 entries);
#: wider ranges (identifiers, amounts) go through pandas' hash table.
_COUNT_SPAN = 1 << 24

#: records counted to see whether every value of a narrow integer range occurs
_SAMPLE = 1 << 16

#: pandas >= 3 copies on write: a shallow copy of the caller's frame is then as safe as a deep
#: one (a later change to either frame copies the changed block first) and costs nothing.
_COPY_ON_WRITE = int(pd.__version__.split(".")[0]) >= 3


def _encode_integers(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Codes and sorted distinct values of an integer array by counting, with no hash table
    and no sort: the range [lo, hi] is counted once (``bincount``) and a code is the rank of
    the value among the values present; for a narrow range whose every value shows up in a
    sample of 65,536 records, no count is needed (the code is the value minus lo). None when
    the range is too wide for a count table. The same result as
    ``pd.factorize(values, sort=True)``, at the cost of a min, a max and one pass."""
    n = values.shape[0]
    if n == 0 or values.dtype == np.uint64:
        return None
    lo, hi = int(values.min()), int(values.max())
    span = hi - lo + 1
    if span > _COUNT_SPAN or span > 4 * n + 1024:
        return None
    codes = np.empty(n, dtype=np.int32)
    if n > 4 * _SAMPLE and span <= _SAMPLE // 8:
        # every value of [lo, hi] seen in a sample of the records occurs in the data: then
        # the codes are the values minus lo and the whole column is not counted
        step = n // _SAMPLE
        seen = np.bincount(np.subtract(values[::step], lo, dtype=np.intp), minlength=span)
        if seen.all():
            np.subtract(values, lo, out=codes, dtype=np.int64, casting="unsafe")
            return codes, np.arange(lo, hi + 1).astype(values.dtype, copy=False)
    if values.dtype == np.intp and lo >= 0 and hi < 2 * span + 1024:
        counts = np.bincount(values, minlength=hi + 1)[lo:]      # the values index the table
        index, base = values, 0
    else:
        index, base = np.subtract(values, lo, dtype=np.intp), lo  # one pass, no overflow
        counts = np.bincount(index, minlength=span)
    if counts.all():                                              # every value of the range occurs
        np.subtract(index, lo - base, out=codes, dtype=np.int64, casting="unsafe")
        return codes, np.arange(lo, hi + 1).astype(values.dtype, copy=False)
    present = counts > 0
    rank = np.cumsum(present, dtype=np.int32) - 1                 # code of each value present
    table = np.empty(span + (lo - base), dtype=np.int32)
    table[lo - base:] = rank
    np.take(table, index, out=codes)
    return codes, (np.flatnonzero(present) + lo).astype(values.dtype, copy=False)


def encode_column(series: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes (int32, -1 = missing) and the category list of one column.

    A categorical column keeps its codes and categories (an Arrow dictionary column read from
    Parquet arrives as one); integers are counted (:func:`_encode_integers`); anything else
    goes through ``pd.factorize`` (sorted categories). No Python work per value.

    Parameters
    ----------
    series : Series
        One column of a frame.

    Returns
    -------
    codes : ndarray of int32
        ``codes[i]`` is the position of record i's value in ``categories``; -1 = missing.
    categories : Index
        The distinct non-missing values, sorted (a categorical column keeps its own order).
    """
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cat = series.array
        return np.asarray(cat.codes, dtype=np.int32), pd.Index(cat.categories)
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        fast = _encode_integers(series.to_numpy())
        if fast is not None:
            return fast[0], pd.Index(fast[1])
    codes, uniques = pd.factorize(series, sort=True, use_na_sentinel=True)
    return codes.astype(np.int32, copy=False), pd.Index(uniques)


def value_codes(values: pd.Series) -> tuple[np.ndarray, int]:
    """Codes of a column's values, equal where the values are equal (``-1`` = missing), and the
    number of distinct non-missing values: what record comparisons need (not the sorted
    categories of a key). Integers are counted (no hash table); other values go through one
    unsorted ``pd.factorize``."""
    dtype = values.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        fast = _encode_integers(values.to_numpy())
        if fast is not None:
            return fast[0], int(fast[1].shape[0])
    codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=True)
    return codes, len(uniques)


def decode_arrow_strings(dtype: Any, cats: pd.Index, codes: np.ndarray):
    """Codes -> a pyarrow-backed string array of ``dtype`` without a Python object per value.

    Parameters
    ----------
    dtype : dtype
        The dtype of the column to rebuild (only ``pd.StringDtype("pyarrow")`` is decoded here).
    cats : Index
        The categories the codes point into.
    codes : ndarray of int
        Positions in ``cats``; -1 = missing.

    Returns
    -------
    ExtensionArray or None
        The decoded column (a dictionary array decoded by Arrow), or None when ``dtype`` is not
        such a string dtype or the categories are not all strings (the general path then
        decodes).
    """
    if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        return None
    try:
        import pyarrow as pa
    except ImportError:
        return None
    try:
        values = cats.to_numpy(dtype=object)
        if not all(isinstance(v, str) for v in values):
            return None
        codes = np.asarray(codes)
        # the labels taken by the codes (a null where the code is -1; no mask without one)
        indices = pa.array(codes, mask=codes < 0) if codes.size and codes.min() < 0 else pa.array(codes)
        return dtype.__from_arrow__(pa.array(values, type=pa.large_string()).take(indices))
    except (TypeError, ValueError, pa.ArrowException):
        return None


class Microdata:
    """An immutable pair of a pandas DataFrame and the roles of its columns.

    Parameters
    ----------
    data : pandas.DataFrame
        The records. It is copied: later changes to the caller's frame do not reach it (with
        pandas' copy-on-write the copy is shallow, and a block is copied only when either
        frame changes it).
    key_vars : list of str
        Categorical quasi-identifiers (encoded once to integer codes).
    numeric_vars : list of str
        Continuous variables (masked by noise, swapping, microaggregation).
    weight : str, optional
        Sampling weight column: numeric, > 0, no missing values.
    household : str, optional
        Household (cluster) identifier.
    strata : str or list of str, optional
        Stratification variables (methods that work per stratum use them).
    sensitive : list of str
        Sensitive variables (l-diversity, t-closeness).
    pram_vars : list of str
        Categorical variables that are not keys but may be PRAMmed (sdcMicro's ``pramVars``):
        encoded to codes like keys, not part of the key combinations the risk measures read.
    meta : DatasetMeta, optional
        Labels and source file kept from reading, written back on output.

    Notes
    -----
    A column may hold only one role. Keys have their categories fixed at creation: the
    categories of a pandas ``category`` column in its declared order, otherwise the sorted
    distinct non-missing values. ``with_codes`` keeps those category lists, so a masked release
    decodes to the same labels and dtype as the input.
    """

    __slots__ = ("_data", "_roles", "_codes", "_categories", "_meta")

    def __init__(self, data: pd.DataFrame, *, key_vars: Iterable[str] = (),
                 numeric_vars: Iterable[str] = (), weight: str | None = None,
                 household: str | None = None, strata: str | Iterable[str] | None = None,
                 sensitive: Iterable[str] = (), pram_vars: Iterable[str] = (),
                 meta: DatasetMeta | None = None,
                 _codes: Mapping[str, np.ndarray] | None = None,
                 _categories: Mapping[str, pd.Index] | None = None, _copy: bool = True) -> None:
        if not isinstance(data, pd.DataFrame):
            raise InputError(f"Microdata needs a pandas DataFrame; got {type(data).__name__}.")
        meta = meta or DatasetMeta()
        where = meta.source or "the data"
        if data.shape[0] == 0:
            raise InputError(f"{where}: has no records; nothing to protect.")
        if data.shape[1] == 0:
            raise InputError(f"{where}: has no columns.")
        if not data.columns.is_unique:
            dup = data.columns[data.columns.duplicated()].unique().tolist()
            raise InputError(f"{where}: column names repeat: {dup}; rename them so each is unique.")
        roles = {
            "key_vars": _as_tuple(key_vars), "numeric_vars": _as_tuple(numeric_vars),
            "weight": weight, "household": household, "strata": _as_tuple(strata),
            "sensitive": _as_tuple(sensitive), "pram_vars": _as_tuple(pram_vars),
        }
        self._check_roles(data, roles, where)
        frame = data.copy(deep=not _COPY_ON_WRITE) if _copy else data
        object.__setattr__(self, "_data", frame)
        object.__setattr__(self, "_roles", roles)
        object.__setattr__(self, "_meta", meta)
        if _codes is None:
            codes, cats = {}, {}
            for var in roles["key_vars"]:
                c, k = encode_column(frame[var])
                codes[var], cats[var] = c, k
                self._check_key(var, k, len(frame), where)
            for var in roles["pram_vars"]:        # encoded as keys are, without the key warnings
                codes[var], cats[var] = encode_column(frame[var])
        else:
            codes, cats = dict(_codes), dict(_categories or {})
        for arr in codes.values():
            arr.setflags(write=False)
        object.__setattr__(self, "_codes", codes)
        object.__setattr__(self, "_categories", cats)
        if weight is not None:
            self._check_weight(frame[weight], weight, where)

    # ------------------------------------------------------------------ validation
    @staticmethod
    def _check_roles(data: pd.DataFrame, roles: dict, where: str) -> None:
        columns = data.columns
        seen: dict[str, str] = {}
        for role, value in roles.items():
            names = _as_tuple(value)
            for name in names:
                if name not in columns:
                    cols = [str(c) for c in columns]
                    raise InputError(
                        f"{where}: the {role} column {name!r} does not exist; {close_names(name, cols)}")
                if name in seen and seen[name] != role:
                    raise InputError(
                        f"{where}: column {name!r} is given two roles ({seen[name]} and {role}); "
                        "a column may hold one role only.")
                if names.count(name) > 1:
                    raise InputError(f"{where}: column {name!r} is listed twice in {role}.")
                seen[name] = role
        for name in roles["numeric_vars"]:
            dtype = data[name].dtype
            if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
                bad = pd.to_numeric(data[name], errors="coerce").isna() & data[name].notna()
                example = data[name][bad].iloc[0] if bad.any() else data[name].dtype
                raise InputError(
                    f"{where}: numeric column {name!r} holds non-numeric values (e.g. {example!r}); "
                    "clean the column or give it the key_vars role.")

    @staticmethod
    def _check_key(var: str, categories: pd.Index, n: int, where: str) -> None:
        if len(categories) == 0:
            raise InputError(f"{where}: key column {var!r} is missing in every record.")
        if len(categories) == 1:
            warnings.warn(f"{where}: key column {var!r} has a single category "
                          f"({categories[0]!r}); it identifies nobody and can be dropped from key_vars.",
                          InputWarning, stacklevel=4)
        elif len(categories) >= n and n > 1:
            warnings.warn(f"{where}: key column {var!r} has {len(categories)} categories for {n} records; "
                          "it looks like an identifier: recode it or drop it from the release.",
                          InputWarning, stacklevel=4)

    @staticmethod
    def _check_weight(col: pd.Series, name: str, where: str) -> None:
        if pd.api.types.is_bool_dtype(col) or (col.dtype == object and col.map(type).eq(bool).any()):
            first = col[col.map(lambda v: isinstance(v, (bool, np.bool_)))]
            raise InputError(f"{where}: weight column {name!r} holds true/false values (e.g. "
                             f"{bool(first.iloc[0])} in row {first.index[0]}); weights must be numbers > 0: "
                             "name the sampling-weight column.")
        if not pd.api.types.is_numeric_dtype(col):
            num = pd.to_numeric(col, errors="coerce")
            bad = col[num.isna() & col.notna()]
            if bad.empty:  # numbers stored as text: usable once converted
                bad = col[num.isna()]
            if bad.empty:
                return
            raise InputError(f"{where}: weight column {name!r} holds non-numeric values "
                             f"(e.g. {bad.iloc[0]!r} in row {bad.index[0]}); weights must be numbers > 0.")
        values = col.to_numpy(dtype=float, na_value=np.nan)
        if values.size and values.min() > 0 and values.max() < np.inf:
            return                          # all finite and > 0 (a NaN fails both tests)
        miss = np.flatnonzero(np.isnan(values))
        if miss.size:
            raise InputError(f"{where}: weight column {name!r} is missing in {miss.size} records "
                             f"(first row {col.index[miss[0]]}); every record needs a weight > 0.")
        bad = np.flatnonzero(~np.isfinite(values) | (values <= 0))
        if bad.size:
            raise InputError(f"{where}: weight column {name!r} has {bad.size} values <= 0 or infinite "
                             f"(e.g. {values[bad[0]]!r} in row {col.index[bad[0]]}); weights must be > 0.")

    # ------------------------------------------------------------------ access
    def __setattr__(self, name: str, value: Any) -> None:  # immutability
        raise AttributeError("Microdata is immutable; use with_data() or with_codes().")

    @property
    def data(self) -> pd.DataFrame:
        """A copy of the records (the Microdata itself never changes)."""
        return self._data.copy()

    @property
    def frame(self) -> pd.DataFrame:
        """The records without copying: read only, do not modify."""
        return self._data

    @property
    def n_records(self) -> int:
        return int(self._data.shape[0])

    def __len__(self) -> int:
        return self.n_records

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self._data.columns]

    @property
    def roles(self) -> dict[str, Any]:
        return dict(self._roles)

    @property
    def key_vars(self) -> tuple[str, ...]:
        return self._roles["key_vars"]

    @property
    def numeric_vars(self) -> tuple[str, ...]:
        return self._roles["numeric_vars"]

    @property
    def weight(self) -> str | None:
        return self._roles["weight"]

    @property
    def household(self) -> str | None:
        return self._roles["household"]

    @property
    def strata(self) -> tuple[str, ...]:
        return self._roles["strata"]

    @property
    def sensitive(self) -> tuple[str, ...]:
        return self._roles["sensitive"]

    @property
    def pram_vars(self) -> tuple[str, ...]:
        """Categorical variables that may be PRAMmed without being keys (encoded to codes)."""
        return self._roles.get("pram_vars", ())

    @property
    def meta(self) -> DatasetMeta:
        return self._meta

    def codes(self, var: str) -> np.ndarray:
        """Read-only int32 codes of key ``var`` (``-1`` = missing)."""
        try:
            return self._codes[var]
        except KeyError:
            raise InputError(f"{var!r} is not a key variable; the keys are {list(self.key_vars)}.") from None

    def categories(self, var: str) -> pd.Index:
        """The category list of key ``var``: code ``i`` means ``categories(var)[i]``."""
        self.codes(var)
        return self._categories[var]

    def n_categories(self, var: str) -> int:
        return len(self.categories(var))

    def key_codes(self) -> list[np.ndarray]:
        return [self._codes[v] for v in self.key_vars]

    def weights(self) -> np.ndarray | None:
        """Weights as float64, or None without a weight role."""
        if self.weight is None:
            return None
        return self._data[self.weight].to_numpy(dtype=np.float64)

    def numeric_array(self, variables: Iterable[str] | None = None) -> np.ndarray:
        """Numeric variables as an (n, p) float64 array (NaN for missing)."""
        variables = self.numeric_vars if variables is None else tuple(variables)
        return self._data.loc[:, list(variables)].to_numpy(dtype=np.float64, na_value=np.nan)

    def decode(self, var: str, codes: np.ndarray) -> pd.Series:
        """Turn codes of key ``var`` back into a column with the original labels and dtype."""
        cats = self.categories(var)
        codes = np.asarray(codes)
        if codes.shape != (self.n_records,):
            raise InputError(f"codes for {var!r} must have one entry per record ({self.n_records}); "
                             f"got shape {codes.shape}.")
        if codes.size and (codes.max() >= len(cats) or codes.min() < -1):
            raise InputError(f"codes for {var!r} must lie in [-1, {len(cats) - 1}].")
        original = self._data[var]
        fast = decode_arrow_strings(original.dtype, cats, codes)
        if fast is not None:
            return pd.Series(fast, index=self._data.index, name=var)
        cat = pd.Categorical.from_codes(codes, categories=cats)
        if isinstance(original.dtype, pd.CategoricalDtype):
            values = pd.Series(cat, index=self._data.index, name=var)
            return values.astype(original.dtype)
        values = pd.Series(cat, index=self._data.index, name=var).astype(cats.dtype if (codes >= 0).all() else object)
        try:
            return values.astype(original.dtype)
        except (TypeError, ValueError):
            return values

    # ------------------------------------------------------------------ new objects
    def with_data(self, data: pd.DataFrame, **roles: Any) -> Microdata:
        """A new Microdata on ``data`` with the same roles (overridden by ``roles``) and meta."""
        kw = dict(self._roles)
        kw.update(roles)
        return Microdata(data, meta=self._meta, **kw)

    def with_codes(self, new_codes: Mapping[str, np.ndarray]) -> Microdata:
        """A new Microdata whose key columns in ``new_codes`` take those codes.

        Category lists are kept, so codes keep their meaning and the output decodes to the
        input's labels and dtype. Other columns are shared unchanged.
        """
        frame = self._data.copy(deep=False)
        codes = dict(self._codes)
        for var, arr in new_codes.items():
            arr = np.ascontiguousarray(arr, dtype=np.int32)
            frame[var] = self.decode(var, arr)
            codes[var] = arr
        return Microdata(frame, meta=self._meta, _codes=codes, _categories=self._categories,
                         _copy=False, **self._roles)

    def with_columns(self, columns: Mapping[str, Any], *,
                     encoded: Mapping[str, tuple[np.ndarray, pd.Index]] | None = None) -> Microdata:
        """A new Microdata with some columns replaced; untouched keys keep their codes.

        The frame is shared (no copy of the untouched columns). Non-key columns take the new
        values as they are. A key column given here needs its encoding in ``encoded``
        (``var -> (codes, categories)``, exactly what encoding the new column would give:
        int32 codes with ``-1`` for missing and the sorted distinct values, as a global
        recode computes them from its category table); without it the column is refused
        (change keys by codes with :meth:`with_codes`). Only the replaced columns are checked
        again (numeric role, weights, the key warnings).
        """
        encoded = dict(encoded or {})
        frame = self._data.copy(deep=False)
        codes, cats = dict(self._codes), dict(self._categories)
        for var, values in columns.items():
            if var not in frame.columns:
                raise InputError(f"{var!r} is not a column of the data; {close_names(var, self.columns)}")
            if var in self._codes:
                if var not in encoded:
                    raise InputError(f"{var!r} is a key variable; change it with with_codes().")
                c, k = encoded[var]
                c = np.ascontiguousarray(c, dtype=np.int32)
                if c.shape != (len(frame),):
                    raise InputError(f"codes for {var!r} must have one entry per record ({len(frame)}); "
                                     f"got shape {c.shape}.")
                codes[var], cats[var] = c, pd.Index(k)
            frame[var] = values
        where = self._meta.source or "the data"
        changed = {str(v) for v in columns}
        sub = {role: (tuple(v for v in _as_tuple(val) if v in changed) if isinstance(val, tuple)
                      else (val if val in changed else None)) for role, val in self._roles.items()}
        self._check_roles(frame, sub, where)
        for var in self.key_vars:
            if var in changed:
                self._check_key(var, cats[var], len(frame), where)
        if self.weight is not None and self.weight in changed:
            self._check_weight(frame[self.weight], self.weight, where)
        return self._derived(frame, codes, cats)

    def without_columns(self, names: Iterable[str]) -> Microdata:
        """A new Microdata without the columns ``names`` (none may hold a role); keys keep
        their codes and categories, the other columns are shared."""
        names = list(names)
        for var in names:
            if var not in self._data.columns:
                raise InputError(f"{var!r} is not a column of the data; {close_names(var, self.columns)}")
            for role, value in self._roles.items():
                if var == value or var in _as_tuple(value):
                    raise InputError(f"{var!r} holds the {role} role; take it out of the roles to drop it.")
        if len(names) >= self._data.shape[1]:
            raise InputError(f"{self._meta.source or 'the data'}: has no columns.")
        return self._derived(self._data.drop(columns=names), dict(self._codes), dict(self._categories))

    def _derived(self, frame: pd.DataFrame, codes: dict, cats: dict) -> Microdata:
        """A Microdata on ``frame`` with these encodings and this object's roles and meta,
        without the checks the caller has done for what changed (nothing else changed)."""
        out = object.__new__(Microdata)
        for arr in codes.values():
            arr.setflags(write=False)
        object.__setattr__(out, "_data", frame)
        object.__setattr__(out, "_roles", self._roles)
        object.__setattr__(out, "_meta", self._meta)
        object.__setattr__(out, "_codes", codes)
        object.__setattr__(out, "_categories", cats)
        return out

    # ------------------------------------------------------------------ reporting
    def describe(self) -> str:
        """A readable summary: size, roles, categories per key, missing values."""
        lines = [f"Microdata: {self.n_records:,} records x {self._data.shape[1]} columns"
                 + (f" from {self._meta.source}" if self._meta.source else "")]
        for role in ROLE_NAMES:
            value = _as_tuple(self._roles[role])
            if value:
                lines.append(f"  {role:13s} {', '.join(value)}")
        for var in self.key_vars:
            codes = self._codes[var]
            n_miss = int((codes < 0).sum())
            lines.append(f"  key {var!r}: {len(self._categories[var])} categories"
                         + (f", {n_miss} missing" if n_miss else ""))
        if self.weight:
            w = self.weights()
            lines.append(f"  weights: sum {w.sum():,.1f}, min {w.min():g}, max {w.max():g}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"n_records": self.n_records, "n_columns": int(self._data.shape[1]),
                "roles": {k: (list(v) if isinstance(v, tuple) else v) for k, v in self._roles.items()},
                "n_categories": {v: len(self._categories[v]) for v in self.key_vars},
                "source": self._meta.source}

    def __repr__(self) -> str:
        return f"<Microdata {self.n_records} records, keys={list(self.key_vars)}>"
