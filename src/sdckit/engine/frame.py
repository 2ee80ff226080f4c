"""Partitioned microdata: a Dask DataFrame, the roles of its columns, categories agreed
across partitions and the global row offset of every partition.

A key's integer codes must mean the same category in every partition, or frequencies summed
over partitions would add unlike things. :func:`read_partitioned` therefore makes one pass
over the data that collects, per partition, the distinct values of every categorical column
(keys and strata), the row count and the weight checks; the category list of a column is
the sorted union (the order :class:`~sdckit.Microdata` gives a non-categorical column), or
the list given in the spec. Codes are then computed per partition on demand, never stored.

The row offsets let every per-partition function know the global row numbers of its rows,
so random draws (:func:`sdckit._random.block_uniforms`) are the same for any partitioning.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..io.atomic import refuse_overwrite
from ..io.files import split_na_values
from ..microdata import Microdata

FORMATS = ("parquet", "csv")


def _as_tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


@dataclass(frozen=True)
class PartitionedMicrodata:
    """A Dask DataFrame with roles, agreed categories and partition offsets.

    Attributes
    ----------
    frame : dask.dataframe.DataFrame
        The records (original labels; codes are derived per partition).
    roles : dict
        ``key_vars``, ``numeric_vars``, ``weight``, ``household``, ``strata``, ``sensitive``,
        ``pram_vars``.
    categories : dict of str -> pandas.Index
        Category list of each key, PRAM and stratum column: code ``i`` means ``categories[v][i]``.
    offsets : ndarray of int64, shape (npartitions + 1,)
        Global index of the first row of each partition; ``offsets[-1]`` is the row count.
    source : str, optional
        The path read.
    """

    frame: Any
    roles: Mapping[str, Any]
    categories: Mapping[str, pd.Index]
    offsets: np.ndarray
    source: str | None = None
    file_format: str | None = None
    meta: dict = field(default_factory=dict)

    @property
    def n_records(self) -> int:
        return int(self.offsets[-1])

    @property
    def npartitions(self) -> int:
        return int(self.frame.npartitions)

    @property
    def key_vars(self) -> tuple[str, ...]:
        return _as_tuple(self.roles.get("key_vars"))

    @property
    def numeric_vars(self) -> tuple[str, ...]:
        return _as_tuple(self.roles.get("numeric_vars"))

    @property
    def pram_vars(self) -> tuple[str, ...]:
        """Categorical variables PRAM may change beside the keys (sdcMicro's ``pramVars``)."""
        return _as_tuple(self.roles.get("pram_vars"))

    @property
    def weight(self) -> str | None:
        return self.roles.get("weight")

    @property
    def strata(self) -> tuple[str, ...]:
        return _as_tuple(self.roles.get("strata"))

    def n_categories(self, var: str) -> int:
        return len(self.categories[var])

    def with_frame(self, frame: Any) -> PartitionedMicrodata:
        """The same roles, categories and offsets on a transformed frame (same partitions)."""
        if frame.npartitions != self.frame.npartitions:
            raise InputError("a per-partition transform changed the number of partitions.")
        return PartitionedMicrodata(frame, self.roles, self.categories, self.offsets,
                                    self.source, self.file_format, self.meta)

    def to_microdata(self) -> Microdata:
        """Collect every partition into one in-memory :class:`~sdckit.Microdata` (small data only)."""
        roles = {k: v for k, v in self.roles.items() if v}
        return Microdata(self.frame.compute().reset_index(drop=True), **roles)

    def describe(self) -> str:
        return (f"PartitionedMicrodata: {self.n_records:,} records in {self.npartitions} partitions"
                + (f" from {self.source}" if self.source else "") + "; keys "
                + ", ".join(f"{k} ({self.n_categories(k)})" for k in self.key_vars))


def encode(values: pd.Series, categories: pd.Index, *, var: str, partition: int | None = None) -> np.ndarray:
    """Int32 codes of one column against the agreed category list (``-1`` = missing).

    Raises
    ------
    InputError
        When a non-missing value is not in the category list (given in the spec).
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(object)
    # -1 for missing and for values outside the list (pd.Categorical with unknown values is
    # deprecated in pandas)
    codes = np.asarray(categories.get_indexer(values), dtype=np.int32)
    unknown = (codes < 0) & values.notna().to_numpy()
    if unknown.any():
        bad = pd.unique(values[unknown])[:5]
        where = "" if partition is None else f" (partition {partition})"
        raise InputError(f"{var!r} has values not in its category list{where}: "
                         f"{', '.join(repr(b) for b in bad)}; add them to the categories given "
                         "in the spec or leave the categories out so they are collected from the data.")
    return codes


def partition_codes(pdf: pd.DataFrame, variables: Iterable[str], categories: Mapping[str, pd.Index],
                    partition: int | None = None) -> list[np.ndarray]:
    """Codes of ``variables`` in one partition."""
    return [encode(pdf[v], categories[v], var=v, partition=partition) for v in variables]


def _scan_partition(pdf: pd.DataFrame, cat_vars: tuple[str, ...], weight: str | None) -> dict:
    """What the one pass collects from a partition: rows, distinct values, bad weights."""
    out: dict[str, Any] = {"n": int(pdf.shape[0]), "uniques": {}}
    for v in cat_vars:
        col = pdf[v]
        if isinstance(col.dtype, pd.CategoricalDtype):
            col = col.astype(object)
        out["uniques"][v] = pd.unique(col.dropna())
    if weight is not None:
        w = pd.to_numeric(pdf[weight], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(w) | (w <= 0)
        out["bad_weights"] = int(bad.sum())
        out["bad_example"] = None if not bad.any() else pdf[weight].iloc[int(np.argmax(bad))]
    return out


def _open(path: Path, fmt: str, columns: list[str] | None, blocksize: Any, na_values: list | None):
    import dask.dataframe as dd

    if fmt == "parquet":
        target = str(path)
        return dd.read_parquet(target, columns=columns)
    target = str(path / "*.csv") if path.is_dir() else str(path)
    kw = {"usecols": columns} if columns else {}
    if na_values:
        kw["na_values"] = na_values
    return dd.read_csv(target, blocksize=blocksize, **kw)


def _infer_format(path: Path, file_format: str | None) -> str:
    if file_format is not None:
        fmt = file_format.lower()
    elif path.is_dir():
        names = {p.suffix.lower() for p in path.iterdir() if p.is_file()}
        fmt = "parquet" if {".parquet", ".pq"} & names else "csv" if ".csv" in names else ""
    else:
        fmt = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".txt": "csv"}.get(path.suffix.lower(), "")
    if fmt not in FORMATS:
        raise InputError(f"{path}: the Dask engine reads Parquet or CSV files (a file or a folder of "
                         f"parts); cannot tell the format here. Name it with format = \"parquet\" or \"csv\".")
    return fmt


def read_partitioned(path: str | os.PathLike, *, file_format: str | None = None,
                     key_vars: Iterable[str] = (), numeric_vars: Iterable[str] = (),
                     weight: str | None = None, household: str | None = None,
                     strata: str | Iterable[str] | None = None, sensitive: Iterable[str] = (),
                     pram_vars: Iterable[str] = (), categories: Mapping[str, Iterable[Any]] | None = None,
                     na_values: list[Any] | None = None, blocksize: Any = "64MB",
                     columns: list[str] | None = None, runner: Any = None) -> PartitionedMicrodata:
    """Read a Parquet or CSV file, or a folder of parts, as partitioned microdata.

    One pass over the data collects the categories of the keys, PRAM variables and strata (sorted union over
    partitions, unless ``categories`` gives a list for a column), the row count of every
    partition and the weight checks (numeric, finite, > 0).

    Parameters
    ----------
    path : path-like
        A file, a folder of ``*.parquet`` / ``*.csv`` parts, or a glob pattern.
    categories : dict, optional
        Fixed category lists (column -> list of values), e.g. from the spec; values outside
        them are refused when codes are computed.
    blocksize : str or int
        CSV bytes per partition (Parquet partitions follow the files / row groups).
    runner : callable, optional
        ``runner(*delayed) -> results`` computes the scan (e.g. with a progress bar);
        default ``dask.compute``.

    Raises
    ------
    InputError
        Missing file or column, a key missing in every record, bad weights (naming the count
        and an example).
    """
    path = Path(path)
    if "*" not in str(path) and not path.exists():
        raise InputError(f"{path}: no such file or folder; check the path.")
    fmt = _infer_format(path, file_format) if "*" not in str(path) else (file_format or "parquet")
    # codes missing in every column, and codes missing in one column only ([input] na_values =
    # { Health = [-9] }: SPSS/Stata user-missing codes are declared per column)
    every, per_column = split_na_values(na_values)
    try:
        frame = _open(path, fmt, columns, blocksize, every or None)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path}: cannot be read as {fmt}: {first}") from None
    if fmt == "parquet" and every:
        frame = frame.replace({v: np.nan for v in every})
    unknown = sorted(set(per_column) - {str(c) for c in frame.columns})
    if unknown:
        raise InputError(f"{path}: input.na_values names column `{unknown[0]}`, which is not in the data; "
                         "name a column of the file.")
    if per_column:
        frame = frame.replace({col: {v: np.nan for v in codes} for col, codes in per_column.items()})
    roles = {"key_vars": _as_tuple(key_vars), "numeric_vars": _as_tuple(numeric_vars),
             "weight": weight, "household": household, "strata": _as_tuple(strata),
             "sensitive": _as_tuple(sensitive), "pram_vars": _as_tuple(pram_vars)}
    names = [str(c) for c in frame.columns]
    for role, value in roles.items():
        for name in _as_tuple(value):
            if name not in names:
                from .._validation import close_names
                raise InputError(f"{path}: the {role} column {name!r} does not exist; {close_names(name, names)}")
    cat_vars = tuple(dict.fromkeys(roles["key_vars"] + roles["pram_vars"] + roles["strata"]))
    given = {k: pd.Index(list(v)) for k, v in (categories or {}).items()}
    for name in given:
        if name not in cat_vars:
            raise InputError(f"categories are given for {name!r}, which is not a key, PRAM or stratum column.")
    import dask

    parts = frame[list(cat_vars) + ([weight] if weight else [])].to_delayed() if (cat_vars or weight) \
        else frame.to_delayed()
    scans = (runner or dask.compute)(*[dask.delayed(_scan_partition)(p, cat_vars, weight) for p in parts])
    offsets = np.zeros(len(scans) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([s["n"] for s in scans])
    if offsets[-1] == 0:
        raise InputError(f"{path}: has no records; nothing to protect.")
    cats: dict[str, pd.Index] = {}
    for v in cat_vars:
        if v in given:
            cats[v] = given[v]
            continue
        seen = [s["uniques"][v] for s in scans if len(s["uniques"][v])]
        if not seen:
            raise InputError(f"{path}: key column {v!r} is missing in every record.")
        # the same routine Microdata uses: factorize(sort=True) of the values
        cats[v] = pd.Index(pd.factorize(pd.Index(np.concatenate(seen)), sort=True)[1])
    if weight is not None:
        n_bad = sum(s["bad_weights"] for s in scans)
        if n_bad:
            example = next(s["bad_example"] for s in scans if s["bad_weights"])
            raise InputError(f"{path}: weight column {weight!r} has {n_bad} values that are missing, "
                             f"not numbers, <= 0 or infinite (e.g. {example!r}); every record needs a weight > 0.")
    return PartitionedMicrodata(frame, roles, cats, offsets, str(path), fmt)


def from_pandas(df: pd.DataFrame, *, npartitions: int, categories: Mapping[str, Iterable[Any]] | None = None,
                **roles: Any) -> PartitionedMicrodata:
    """Split an in-memory frame into ``npartitions`` partitions (row order kept), with the
    same category rule as :func:`read_partitioned` (for tests and for data that fit)."""
    import dask.dataframe as dd

    frame = dd.from_pandas(df.reset_index(drop=True), npartitions=npartitions, sort=True)
    sizes = frame.map_partitions(len).compute().to_numpy()
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    cat_vars = tuple(dict.fromkeys(_as_tuple(roles.get("key_vars")) + _as_tuple(roles.get("pram_vars"))
                                   + _as_tuple(roles.get("strata"))))
    given = {k: pd.Index(list(v)) for k, v in (categories or {}).items()}
    cats = {v: given[v] if v in given else pd.Index(pd.factorize(df[v].dropna(), sort=True)[1])
            for v in cat_vars}
    full = {"key_vars": (), "numeric_vars": (), "weight": None, "household": None, "strata": (),
            "sensitive": (), "pram_vars": ()}
    full.update({k: (_as_tuple(v) if k not in ("weight", "household") else v) for k, v in roles.items()})
    return PartitionedMicrodata(frame, full, cats, offsets, None, None)


def write_partitioned(frame: Any, directory: str | os.PathLike, *, file_format: str = "parquet",
                      inputs: Iterable[str | os.PathLike | None] = (),
                      n_records: int | None = None, runner: Any = None) -> Path:
    """Write a Dask DataFrame as a folder of parts, atomically.

    The parts go to a hidden folder beside ``directory``; their record count is read back and
    checked; then the folder is renamed to ``directory`` (a previous folder of that name is
    replaced only after the new one is complete). Writing over an input is refused.
    ``runner(lazy_write)`` computes the write (e.g. with a progress bar); default ``compute()``.
    """
    directory = Path(directory)
    fmt = file_format.lower()
    if fmt not in FORMATS:
        raise InputError(f"{directory}: the Dask engine writes parquet or csv; got {file_format!r}.")
    refuse_overwrite(directory, inputs)
    for src in inputs:
        if src is not None and Path(src).resolve().is_relative_to(directory.resolve()):
            raise InputError(f"{directory}: refusing to write over the folder holding the input {src}; "
                             "choose another output folder.")
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = directory.parent / f".{directory.name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        if fmt == "parquet":
            lazy = frame.to_parquet(str(tmp), write_index=False, compute=False)
        else:
            tmp.mkdir()
            lazy = frame.to_csv(str(tmp / "part-*.csv"), index=False, compute=False)
        if runner is None:
            import dask

            dask.compute(lazy)
        else:
            runner(lazy)
        n_written = count_partitioned(tmp, fmt)
        if n_records is not None and n_written != n_records:
            raise InputError(f"{directory}: wrote {n_written} records but the data hold {n_records}; "
                             "nothing was written.")
        old = None
        if directory.exists():
            old = directory.parent / f".{directory.name}.{uuid.uuid4().hex[:8]}.old"
            os.replace(directory, old)
        os.replace(tmp, directory)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


def count_partitioned(directory: str | os.PathLike, file_format: str) -> int:
    """Records in a folder of parts (Parquet from the footers; CSV by reading one column)."""
    directory = Path(directory)
    if file_format == "parquet":
        import pyarrow.parquet as pq

        return int(sum(pq.ParquetFile(p).metadata.num_rows for p in sorted(directory.glob("*.parquet"))))
    return int(sum(pd.read_csv(p, usecols=[0]).shape[0] for p in sorted(directory.glob("*.csv"))))


def same_values(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """True when two frames hold the same columns and the same values row by row: floats
    bit for bit (NaN equal to NaN), labels whatever string or nullable dtype holds them."""
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return False
    for col in a.columns:
        x, y = a[col], b[col]
        if pd.api.types.is_float_dtype(x) and pd.api.types.is_float_dtype(y):
            xv = x.to_numpy(dtype=np.float64, na_value=np.nan)
            yv = y.to_numpy(dtype=np.float64, na_value=np.nan)
            if not np.array_equal(xv.view(np.int64), yv.view(np.int64)):
                # bitwise, but every NaN alike
                if not np.array_equal(xv, yv, equal_nan=True):
                    return False
            continue
        xo = x.astype(object).where(x.notna(), None).to_numpy()
        yo = y.astype(object).where(y.notna(), None).to_numpy()
        if not np.array_equal(xo, yo):
            return False
    return True
