"""Reading and writing data files (CSV, Parquet, SPSS, Stata, SAS) with atomic writes."""

from .atomic import atomic_write_bytes, atomic_write_text, refuse_overwrite
from .files import read_data, read_microdata, write_data

__all__ = ["atomic_write_bytes", "atomic_write_text", "read_data", "read_microdata",
           "refuse_overwrite", "write_data"]
