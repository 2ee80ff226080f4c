"""Reading and writing data files (CSV, Parquet, SPSS, Stata, SAS) with atomic writes."""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
from .._lazy import attach

_EXPORTS = {
    "atomic_write_bytes": "atomic", "atomic_write_text": "atomic", "refuse_overwrite": "atomic",
    "read_data": "files", "read_microdata": "files", "write_data": "files",
}

__all__ = [
    "atomic_write_bytes", "atomic_write_text", "read_data", "read_microdata", "refuse_overwrite",
    "write_data",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__, globals())
