"""Read and write microdata files: CSV, Parquet, SPSS ``.sav``, Stata ``.dta``, SAS ``.sas7bdat``.

SPSS and Stata variable labels and value labels are kept in :class:`~sdckit.DatasetMeta`
and written back, so a round trip keeps them. Parquet keeps them in its schema metadata.
Every write is atomic and refuses to overwrite a file the data were read from.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import param_error
from ..errors import InputError
from ..microdata import DatasetMeta, Microdata
from .atomic import atomic_write_with, refuse_overwrite, register_input
from .formats import READ_FORMATS, SUFFIX, WRITE_FORMATS, infer_format  # noqa: F401

_META_KEY = b"sdckit.meta"


def read_data(path: str | os.PathLike, *, file_format: str | None = None,
              na_values: list[Any] | Mapping[str, list] | None = None,
              columns: list[str] | None = None, delimiter: str | None = None,
              source: str | os.PathLike | None = None) -> tuple[pd.DataFrame, DatasetMeta]:
    """Read a data file into a DataFrame and its labels.

    Parameters
    ----------
    path : path-like
        The file. Never modified.
    file_format : {"csv", "parquet", "sav", "dta", "sas7bdat"}, optional
        Default: from the suffix.
    na_values : list or mapping, optional
        Extra values meaning "missing": a list (e.g. ``[-9]``) applies to every column, a
        mapping ``{column: [codes]}`` (e.g. ``{"Health": [-9]}``) to those columns only
        (:func:`split_na_values`).
    columns : list of str, optional
        Read only these columns.
    delimiter : str, optional
        The field delimiter of a CSV file: one character, or ``"tab"``. Default ``","``; a
        file whose first line holds no ``,`` but ``;``, tabs or ``|`` is then refused with a
        message naming the delimiter it saw.
    source : path-like, optional
        The name the file is known by, in messages and ``meta.source``, when ``path`` is a
        descriptor path of a file opened and checked by the caller (``/proc/self/fd/N``, as
        the workbench does). Default: ``path``.

    Returns
    -------
    (DataFrame, DatasetMeta)
        SPSS/Stata codes are kept as values (not replaced by labels); the labels are in
        ``meta.value_labels``.
    """
    if isinstance(path, (pd.DataFrame, Microdata)) or not isinstance(path, (str, os.PathLike)):
        raise InputError(f"read_data: give the path of a data file, got {type(path).__name__}"
                         + ("; a DataFrame is already read: pass it to read_microdata or Microdata"
                            if isinstance(path, pd.DataFrame) else "") + ".")
    path = Path(path)
    shown = Path(source) if source is not None else path
    fmt = infer_format(shown, file_format)
    sep = check_delimiter(delimiter)
    if sep is not None and fmt != "csv":
        raise InputError(f"{shown}: a delimiter applies to CSV files only; this one is read as {fmt}.")
    if not path.exists():
        raise InputError(f"{shown}: no such file; check the path (relative paths are taken from "
                         f"{Path.cwd()}).")
    if path.is_dir():
        raise InputError(f"{shown}: is a folder, not a data file.")
    if not os.access(path, os.R_OK):
        raise InputError(f"{shown}: cannot be read (permission denied).")
    if path.stat().st_size == 0:
        raise InputError(f"{shown}: the file is empty; it must hold a header row and records.")
    register_input(path)
    if fmt == "csv":
        _check_csv_header(path, sep, shown)
    column_labels: dict[str, str] = {}
    value_labels: dict[str, dict] = {}
    missing_ranges: dict[str, list] = {}
    try:
        if fmt == "csv":
            df = pd.read_csv(path, usecols=columns, low_memory=False, sep=sep or ",")
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
                catalog = _sas_catalog(shown)
                df, m = pyreadstat.read_sas7bdat(str(path), usecols=columns,
                                                 catalog_file=None if catalog is None else str(catalog))
            elif fmt == "sav":
                # user-missing codes (e.g. -9 "refused") stay values; their declarations are kept
                df, m = pyreadstat.read_sav(str(path), apply_value_formats=False, usecols=columns,
                                            user_missing=True)
                missing_ranges = {k: [dict(r) for r in v] for k, v in (m.missing_ranges or {}).items() if v}
            else:  # Stata's extended missing values (.a-.z) are read as missing
                df, m = pyreadstat.read_dta(str(path), apply_value_formats=False, usecols=columns)
            column_labels = {k: v for k, v in (m.column_names_to_labels or {}).items() if v}
            value_labels = {k: dict(v) for k, v in (m.variable_value_labels or {}).items()}
    except pd.errors.EmptyDataError:
        raise InputError(f"{shown}: the file is empty; it must hold a header row and records.") from None
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{shown}: cannot be read as {fmt}: {first}") from None
    except Exception as exc:  # pyreadstat raises its own error types
        if type(exc).__module__.startswith(("pyreadstat", "pyarrow")):
            raise InputError(f"{shown}: cannot be read as {fmt}: {exc}") from None
        raise
    if df.shape[0] == 0:
        raise InputError(f"{shown}: has a header but no records.")
    dup = pd.Index(df.columns)[pd.Index(df.columns).duplicated()]
    if len(dup):
        raise InputError(f"{shown}: the column name {str(dup[0])!r} appears more than once; column "
                         "names must be unique: rename the repeated column.")
    df = _apply_na(df, na_values)
    meta = DatasetMeta(source=str(shown), column_labels=column_labels, value_labels=value_labels,
                       file_format=fmt, missing_ranges=missing_ranges)
    return df, meta


def split_na_values(na_values: Any) -> tuple[list[Any], dict[str, list[Any]]]:
    """``na_values`` as (codes missing in every column, codes missing per column).

    ``na_values`` is a list of codes (every column), a mapping ``{column: [codes]}`` (those
    columns only: SPSS/Stata user-missing codes are declared per column), or a list mixing
    codes with ``(column, [codes])`` pairs (how :class:`sdckit.spec.ReleaseSpec` holds the
    spec's table form ``na_values = { Health = [-9] }``).
    """
    if not na_values:
        return [], {}
    items = list(na_values.items()) if isinstance(na_values, Mapping) else None
    every: list[Any] = []
    if items is None:
        items = []
        for v in na_values:
            if isinstance(v, (tuple, list)) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], (tuple, list)):
                items.append((v[0], v[1]))
            else:
                every.append(v)
    per: dict[str, list[Any]] = {}
    for col, codes in items:
        if isinstance(codes, (str, bytes)) or not isinstance(codes, (tuple, list)):
            codes = [codes]
        per.setdefault(str(col), []).extend(codes)
    return every, per


def _apply_na(df: pd.DataFrame, na_values: Any) -> pd.DataFrame:
    """``df`` with the ``na_values`` codes as missing (a new frame; ``df`` is not modified):
    a list applies to every column, a mapping ``{column: [codes]}`` (or ``(column, codes)``
    pairs in the list) to its own column only (see :func:`split_na_values`)."""
    every, per = split_na_values(na_values)
    if every:
        df = df.replace({v: np.nan for v in every if not _is_nan(v)})
        # "-9" in a CSV may have been read as int -9 or str "-9": replace both spellings
        df = df.replace({str(v): np.nan for v in every if not _is_nan(v)})
    if per:
        unknown = [c for c in per if c not in df.columns]
        if unknown:
            raise InputError(f"na_values: column {unknown[0]!r} is not in the data; name one of its columns "
                             f"({', '.join(map(str, list(df.columns)[:8]))}{', ...' if df.shape[1] > 8 else ''}).")
        df = df.copy() if not every else df
        for col, codes in per.items():
            codes = [v for v in codes if not _is_nan(v)]
            df[col] = df[col].replace({v: np.nan for v in codes}).replace({str(v): np.nan for v in codes})
    return df


#: delimiters a CSV file's first line is sniffed for when it holds no comma
_OTHER_DELIMITERS = (";", "\t", "|")


def check_delimiter(value: str | None) -> str | None:
    """The delimiter character of the ``delimiter`` option ("tab" and a backslash-t mean a tab)."""
    if value is None:
        return None
    if value in ("tab", "\\t"):
        return "\t"
    if not isinstance(value, str) or len(value) != 1 or value in "\"\r\n" or value.isalnum():
        raise param_error("read_data", "delimiter", 'one character other than a letter, digit, quote or '
                          'newline (e.g. ";", "|" or "tab")', value)
    return value


def _show_delimiter(d: str) -> str:
    return "tab" if d == "\t" else repr(d)


def _sas_catalog(path: Path) -> Path | None:
    """The SAS format catalog beside a ``.sas7bdat`` (same stem, ``.sas7bcat``), or
    ``formats.sas7bcat`` in the same folder; None if there is none."""
    for cand in (path.with_suffix(".sas7bcat"), path.with_name("formats.sas7bcat")):
        if cand.is_file():
            register_input(cand)
            return cand
    return None


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


def _check_csv_header(path: Path, sep: str | None = None, shown: Path | None = None) -> None:
    """Refuse repeated column names (pandas would silently rename the second 'sex' to 'sex.1'),
    and, with no delimiter given, a first line that holds no comma but another delimiter (the
    message names the one it saw and how to pass it)."""
    import csv

    shown = shown or path
    try:
        with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
            first = fh.readline(1_000_000)
    except OSError:
        return  # the reader below reports unreadable files
    if sep is None and "," not in first:
        counts = {d: first.count(d) for d in _OTHER_DELIMITERS}
        seen = max(counts, key=counts.get)
        if counts[seen]:
            name = _show_delimiter(seen)
            option = "tab" if seen == "\t" else seen
            toml = "\\t" if seen == "\t" else seen
            raise InputError(f"{shown}: looks {name}-delimited (found {counts[seen]} {name} and no ',' in its "
                             f"first line); pass --delimiter '{option}' or [input] delimiter = \"{toml}\".")
    try:
        header = next(csv.reader([first], delimiter=sep or ","), [])
    except csv.Error:
        return
    seen_at: dict[str, int] = {}
    for i, name in enumerate(header, start=1):
        name = name.strip()
        if name in seen_at:
            raise InputError(f"{shown}: the column name {name!r} appears twice in the header (columns "
                             f"{seen_at[name]} and {i}); column names must be unique: rename one.")
        seen_at[name] = i


def integral_floats_as_ints(frame: pd.DataFrame) -> pd.DataFrame:
    """Float columns whose values are all whole numbers (missing values aside) as nullable ints,
    so that codes read as 3 are written as 3, not 3.0 (a column with missing values is read as
    float)."""
    out = None
    for col in frame.columns:
        s = frame[col]
        if pd.api.types.is_float_dtype(s.dtype):
            v = s.to_numpy(dtype=float, na_value=np.nan)
            fin = v[~np.isnan(v)]
            if fin.size and np.all(np.isfinite(fin)) and np.all(fin == np.round(fin)) and np.abs(fin).max() < 2**53:
                if out is None:
                    out = frame.copy(deep=False)
                out[col] = s.astype("Int64")
    return frame if out is None else out


def _numeric_csv_columns(frame: pd.DataFrame) -> bool:
    """Whether every column is a NumPy integer or float, or a nullable integer (the columns
    whose CSV text :func:`write_csv` writes through Arrow), with at least two columns (pandas
    writes a lone missing cell as ``""``)."""
    if frame.shape[1] < 2:
        return False
    nullable = (pd.Int8Dtype, pd.Int16Dtype, pd.Int32Dtype, pd.Int64Dtype,
                pd.UInt8Dtype, pd.UInt16Dtype, pd.UInt32Dtype, pd.UInt64Dtype)
    return all(dtype.kind in "iuf" if isinstance(dtype, np.dtype) else isinstance(dtype, nullable)
               for dtype in frame.dtypes)


def write_csv(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """``frame.to_csv(path, index=False)``, byte for byte, in C for numeric frames.

    A frame of integer and float columns is written by Arrow's CSV writer: the header line is
    pandas' own, integers are their decimal digits, and each float is ``ndarray.astype(str)``
    of the column, which is what pandas writes for a float cell (``get_values_for_csv`` with no
    ``float_format``), a missing value an empty cell. Other frames go through ``to_csv``.
    """
    if not _numeric_csv_columns(frame):
        frame.to_csv(path, index=False)
        return
    import pyarrow as pa
    import pyarrow.csv as pacsv

    header = frame.iloc[:0].to_csv(index=False, lineterminator=os.linesep)
    columns = []
    for name in frame.columns:
        col = frame[name]
        if isinstance(col.dtype, np.dtype) and col.dtype.kind == "f":
            v = col.to_numpy()
            columns.append(pa.array(v.astype(str), type=pa.string(), mask=np.isnan(v)))
        else:
            columns.append(pa.array(col, from_pandas=True))
    table = pa.Table.from_arrays(columns, names=[f"c{i}" for i in range(len(columns))])
    with open(path, "wb") as fh:
        fh.write(header.encode("utf-8"))
        pacsv.write_csv(table, fh, write_options=pacsv.WriteOptions(
            include_header=False, quoting_style="none", eol=os.linesep))


def read_microdata(path: str | os.PathLike | pd.DataFrame, *, file_format: str | None = None,
                   na_values: list[Any] | Mapping[str, list] | None = None, delimiter: str | None = None,
                   **roles: Any) -> Microdata:
    """Read a file straight into a :class:`~sdckit.Microdata` with the given roles.

    ``path`` may also be a DataFrame already in memory: the Microdata is then built from it
    (with ``na_values`` applied to a copy; the frame itself is not modified), as
    ``Microdata(frame, **roles)`` would.
    """
    if isinstance(path, pd.DataFrame):
        if file_format is not None or delimiter is not None:
            raise InputError("read_microdata: file_format and delimiter apply to files; a DataFrame is "
                             "already read: leave them out.")
        return Microdata(_apply_na(path, na_values), **roles)
    if isinstance(path, Microdata):
        raise InputError("read_microdata: got a Microdata, which is already read; use it as it is "
                         "(md.with_data(...) makes a changed copy).")
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"read_microdata: give the path of a data file or a pandas DataFrame, got "
                         f"{type(path).__name__}.")
    df, meta = read_data(path, file_format=file_format, na_values=na_values, delimiter=delimiter)
    return Microdata(df, meta=meta, **roles)


def write_data(data: pd.DataFrame | Microdata, path: str | os.PathLike, *,
               meta: DatasetMeta | None = None, file_format: str | None = None,
               inputs: tuple[str | os.PathLike | None, ...] = (),
               formula_guard: str = "warn") -> Path:
    """Write a DataFrame (or a Microdata's records) atomically, with labels where the format has them.

    The file is written to a temporary name beside ``path``, its record count is read back
    and checked, and only then is it renamed to ``path``. Writing over ``meta.source`` or any
    of ``inputs`` is refused.

    ``formula_guard`` ("warn", "quote" or "refuse") is what a CSV file does with cells a
    spreadsheet would run as formulas (see :mod:`sdckit.io.formulas`): warn and write them,
    write them with a leading ``'``, or refuse (nothing is written). Other formats are written
    as they are.
    """
    from .._validation import check_choice
    from .formulas import FORMULA_GUARDS

    check_choice("write_data", "formula_guard", formula_guard, FORMULA_GUARDS)
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

    if fmt == "csv":
        from .formulas import guard_frame

        frame, _ = guard_frame(frame, formula_guard, name=str(path.name))

    def writer(tmp: Path) -> None:
        if fmt == "csv":
            write_csv(integral_floats_as_ints(frame), tmp)
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
            _write_labelled(frame, tmp, fmt, meta, col_labels, val_labels, path)
        n_written = count_records(tmp, fmt)
        if n_written != frame.shape[0]:
            raise InputError(f"{path}: wrote {n_written} records but the data hold {frame.shape[0]}; "
                             "nothing was written.")

    return atomic_write_with(path, writer)


def _write_labelled(frame: pd.DataFrame, tmp: Path, fmt: str, meta: DatasetMeta,
                    col_labels: dict, val_labels: dict, path: Path) -> None:
    """Write SPSS ``.sav`` or Stata ``.dta`` with legal names, labels and missing-value codes.

    Names the format refuses are legalised (:func:`sdckit.io.labels.legal_names`) and the
    original name becomes the variable label where the file gave none; whole-number float
    columns are written as integers; value labels whose codes do not fit the column's type
    are left out (Stata labels integers only); SPSS user-missing declarations are written back.
    """
    import pyreadstat

    from .labels import legal_names

    names = legal_names(frame.columns, fmt)
    out = integral_floats_as_ints(frame).rename(columns=names)
    max_label = 80 if fmt == "dta" else 256  # Stata's and SPSS's variable-label limits
    labels = {names[c]: str(col_labels.get(c) or c)[:max_label] for c in names
              if col_labels.get(c) or names[c] != c}
    values: dict[str, dict] = {}
    for c, d in val_labels.items():
        col = out[names[c]]
        numeric = pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype)
        if numeric:
            keep = {k: str(v) for k, v in d.items()
                    if isinstance(k, (int, float, np.integer, np.floating)) and not _is_nan(float(k))
                    and (fmt == "sav" or float(k).is_integer())}
            keep = {(int(k) if float(k).is_integer() else float(k)): v for k, v in keep.items()}
        else:
            keep = {k: str(v) for k, v in d.items() if isinstance(k, str)} if fmt == "sav" else {}
        if keep:
            values[names[c]] = keep
    formats: dict[str, str] = {}
    for c in out.columns:  # pyreadstat writes bool as text: write 0/1 integers instead
        if pd.api.types.is_bool_dtype(out[c].dtype):
            out[c] = out[c].astype("Int64")
        if pd.api.types.is_integer_dtype(out[c].dtype):
            # whole-number codes stay integers: SPSS format F<w>.0, Stata long (int32)
            v = out[c].dropna()
            lo, hi = (int(v.min()), int(v.max())) if len(v) else (0, 0)
            if fmt == "sav":
                formats[c] = f"F{min(40, max(len(str(lo)), len(str(hi)), 1))}.0"
            elif -2_147_483_647 <= lo and hi <= 2_147_483_620:  # Stata long's range
                out[c] = out[c].astype("Int32" if out[c].isna().any() else "int32")
        elif out[c].dtype == object:
            s = out[c]
            kinds = {type(v) for v in s.dropna()}
            if len(kinds) > 1 or (kinds and not kinds <= {str}):
                out[c] = s.map(lambda v: v if v is None or (isinstance(v, float) and v != v) else str(v))
    try:
        if fmt == "sav":
            ranges = {}
            for c, rs in (meta.missing_ranges or {}).items():
                if c in names and pd.api.types.is_numeric_dtype(out[names[c]].dtype):
                    spec = [r["lo"] if r.get("lo") == r.get("hi") else {"lo": r["lo"], "hi": r["hi"]} for r in rs]
                    ranges[names[c]] = spec
            pyreadstat.write_sav(out, str(tmp), column_labels=labels or None,
                                 variable_value_labels=values or None, missing_ranges=ranges or None,
                                 variable_format=formats or None)
        else:
            pyreadstat.write_dta(out, str(tmp), column_labels=labels or None,
                                 variable_value_labels=values or None)
    except Exception as exc:
        if type(exc).__module__.startswith("pyreadstat") or isinstance(exc, (ValueError, TypeError, OverflowError)):
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"{path}: cannot be written as {fmt}: {first}; write CSV or Parquet "
                             "instead, or fix the column named in the message.") from None
        raise


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
