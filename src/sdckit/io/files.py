"""Read and write microdata files: CSV, Parquet, SPSS ``.sav``, Stata ``.dta``, SAS ``.sas7bdat``.

SPSS and Stata variable labels and value labels are kept in :class:`~sdckit.DatasetMeta`
and written back, so a round trip keeps them. Parquet keeps them in its schema metadata.
Every write is atomic and refuses to overwrite a file the data were read from.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..microdata import DatasetMeta, Microdata
from .atomic import atomic_write_with, refuse_overwrite

READ_FORMATS = ("csv", "parquet", "sav", "dta", "sas7bdat")
WRITE_FORMATS = ("csv", "parquet", "sav", "dta")
_SUFFIX = {".csv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet", ".sav": "sav",
           ".zsav": "sav", ".dta": "dta", ".sas7bdat": "sas7bdat"}
_META_KEY = b"sdckit.meta"


def infer_format(path: str | os.PathLike, file_format: str | None = None, *,
                 allowed: tuple[str, ...] = READ_FORMATS) -> str:
    """The file format: ``file_format`` if given, else from the suffix."""
    if file_format is None:
        file_format = _SUFFIX.get(Path(path).suffix.lower())
        if file_format is None:
            raise InputError(f"{path}: cannot tell the file format from the suffix "
                             f"{Path(path).suffix!r}; use one of {', '.join(sorted(_SUFFIX))} "
                             "or name the format.")
    file_format = file_format.lower()
    if file_format not in allowed:
        raise InputError(f"{path}: format {file_format!r} is not supported here; "
                         f"the supported ones are {', '.join(allowed)}.")
    return file_format


def read_data(path: str | os.PathLike, *, file_format: str | None = None,
              na_values: list[Any] | None = None,
              columns: list[str] | None = None) -> tuple[pd.DataFrame, DatasetMeta]:
    """Read a data file into a DataFrame and its labels.

    Parameters
    ----------
    path : path-like
        The file. Never modified.
    file_format : {"csv", "parquet", "sav", "dta", "sas7bdat"}, optional
        Default: from the suffix.
    na_values : list, optional
        Extra values meaning "missing" (e.g. ``[-9]``), applied to every column.
    columns : list of str, optional
        Read only these columns.

    Returns
    -------
    (DataFrame, DatasetMeta)
        SPSS/Stata codes are kept as values (not replaced by labels); the labels are in
        ``meta.value_labels``.
    """
    path = Path(path)
    fmt = infer_format(path, file_format)
    if not path.exists():
        raise InputError(f"{path}: no such file; check the path (relative paths are taken from "
                         f"{Path.cwd()}).")
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a data file.")
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: cannot be read (permission denied).")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty; it must hold a header row and records.")
    column_labels: dict[str, str] = {}
    value_labels: dict[str, dict] = {}
    try:
        if fmt == "csv":
            df = pd.read_csv(path, usecols=columns, low_memory=False)
        elif fmt == "parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path, columns=columns)
            df = table.to_pandas()
            raw = (table.schema.metadata or {}).get(_META_KEY)
            if raw:
                stored = json.loads(raw)
                column_labels = stored.get("column_labels", {})
                value_labels = {c: _restore_keys(v) for c, v in stored.get("value_labels", {}).items()}
        else:
            import pyreadstat

            if fmt == "sas7bdat":  # SAS keeps value formats in a separate catalog file
                df, m = pyreadstat.read_sas7bdat(str(path), usecols=columns)
            else:
                reader = pyreadstat.read_sav if fmt == "sav" else pyreadstat.read_dta
                df, m = reader(str(path), apply_value_formats=False, usecols=columns)
            column_labels = {k: v for k, v in (m.column_names_to_labels or {}).items() if v}
            value_labels = {k: dict(v) for k, v in (m.variable_value_labels or {}).items()}
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: the file is empty; it must hold a header row and records.") from None
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path}: cannot be read as {fmt}: {first}") from None
    except Exception as exc:  # pyreadstat raises its own error types
        if type(exc).__module__.startswith(("pyreadstat", "pyarrow")):
            raise InputError(f"{path}: cannot be read as {fmt}: {exc}") from None
        raise
    if df.shape[0] == 0:
        raise InputError(f"{path}: has a header but no records.")
    if na_values:
        df = df.replace({v: np.nan for v in na_values if not _is_nan(v)})
        # "-9" in a CSV may have been read as int -9 or str "-9": replace both spellings
        df = df.replace({str(v): np.nan for v in na_values if not _is_nan(v)})
    meta = DatasetMeta(source=str(path), column_labels=column_labels, value_labels=value_labels,
                       file_format=fmt)
    return df, meta


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and v != v


def _restore_keys(labels: dict) -> dict:
    """JSON turned numeric value-label keys into strings: turn them back."""
    out = {}
    for k, v in labels.items():
        try:
            num = float(k)
            out[int(num) if num.is_integer() else num] = v
        except ValueError:
            out[k] = v
    return out


def read_microdata(path: str | os.PathLike, *, file_format: str | None = None,
                   na_values: list[Any] | None = None, **roles: Any) -> Microdata:
    """Read a file straight into a :class:`~sdckit.Microdata` with the given roles."""
    df, meta = read_data(path, file_format=file_format, na_values=na_values)
    return Microdata(df, meta=meta, **roles)


def write_data(data: pd.DataFrame | Microdata, path: str | os.PathLike, *,
               meta: DatasetMeta | None = None, file_format: str | None = None,
               inputs: tuple[str | os.PathLike | None, ...] = ()) -> Path:
    """Write a DataFrame (or a Microdata's records) atomically, with labels where the format has them.

    The file is written to a temporary name beside ``path``, its record count is read back
    and checked, and only then is it renamed to ``path``. Writing over ``meta.source`` or any
    of ``inputs`` is refused.
    """
    if isinstance(data, Microdata):
        meta = meta or data.meta
        frame = data.frame
    else:
        frame = data
    meta = meta or DatasetMeta()
    path = Path(path)
    fmt = infer_format(path, file_format, allowed=WRITE_FORMATS)
    refuse_overwrite(path, (meta.source, *inputs))
    cols = [str(c) for c in frame.columns]
    col_labels = {c: meta.column_labels[c] for c in cols if c in meta.column_labels}
    val_labels = {c: dict(meta.value_labels[c]) for c in cols if c in meta.value_labels}

    def writer(tmp: Path) -> None:
        if fmt == "csv":
            frame.to_csv(tmp, index=False)
        elif fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(frame, preserve_index=False)
            stored = {"column_labels": col_labels,
                      "value_labels": {c: {str(k): v for k, v in d.items()} for c, d in val_labels.items()}}
            md = dict(table.schema.metadata or {})
            md[_META_KEY] = json.dumps(stored).encode()
            pq.write_table(table.replace_schema_metadata(md), tmp)
        else:
            import pyreadstat

            fn = pyreadstat.write_sav if fmt == "sav" else pyreadstat.write_dta
            fn(frame, str(tmp), column_labels=col_labels or None,
               variable_value_labels=val_labels or None)
        n_written = count_records(tmp, fmt)
        if n_written != frame.shape[0]:
            raise InputError(f"{path}: wrote {n_written} records but the data hold {frame.shape[0]}; "
                             "nothing was written.")

    return atomic_write_with(path, writer)


def count_records(path: str | os.PathLike, file_format: str) -> int:
    """Number of records in a written file (read back, for the row-count check)."""
    if file_format == "csv":
        return int(pd.read_csv(path, usecols=[0], low_memory=False).shape[0])
    if file_format == "parquet":
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    import pyreadstat

    reader = {"sav": pyreadstat.read_sav, "dta": pyreadstat.read_dta}[file_format]
    _, m = reader(str(path), metadataonly=True)
    return int(m.number_rows)
