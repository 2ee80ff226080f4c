"""The data file formats sdckit reads and writes, told from a file's suffix."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError

READ_FORMATS = ("csv", "parquet", "sav", "dta", "sas7bdat")
WRITE_FORMATS = ("csv", "parquet", "sav", "dta")
SUFFIX = {".csv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet", ".sav": "sav",
           ".zsav": "sav", ".dta": "dta", ".sas7bdat": "sas7bdat"}


def infer_format(path: str | os.PathLike, file_format: str | None = None, *,
                 allowed: tuple[str, ...] = READ_FORMATS) -> str:
    """The file format: ``file_format`` if given, else from the suffix."""
    if file_format is None:
        file_format = SUFFIX.get(Path(path).suffix.lower())
        if file_format is None:
            raise InputError(f"{path}: cannot tell the file format from the suffix "
                             f"{Path(path).suffix!r}; use one of {', '.join(sorted(SUFFIX))} "
                             "or name the format.")
    file_format = file_format.lower()
    if file_format not in allowed:
        raise InputError(f"{path}: format {file_format!r} is not supported here; "
                         f"the supported ones are {', '.join(allowed)}.")
    return file_format
