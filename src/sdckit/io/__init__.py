"""Reading and writing data files (CSV, Parquet, SPSS, Stata, SAS) with atomic writes."""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
_EXPORTS = {
    "atomic_write_bytes": "atomic", "atomic_write_text": "atomic", "refuse_overwrite": "atomic",
    "read_data": "files", "read_microdata": "files", "write_data": "files",
}

__all__ = [
    "atomic_write_bytes", "atomic_write_text", "read_data", "read_microdata", "refuse_overwrite",
    "write_data",
]


def __getattr__(name: str):
    from importlib import import_module
    from importlib.util import find_spec

    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(import_module(f"{__name__}.{module}"), name)
        globals()[name] = value  # resolved once
        return value
    if not name.startswith("__") and find_spec(f"{__name__}.{name}") is not None:
        return import_module(f"{__name__}.{name}")  # a submodule, as after an eager import
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
