"""tau-Argus files: metadata (``.rda``), hierarchies (``.hrc``), code lists (``.cdl``), data
files, batch files (``.arb``) run with sdckit, and tau-Argus's output formats."""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
_EXPORTS = {
    "parse_arb": "batch", "run_arb": "batch", "ArgusMetadata": "meta", "ArgusVariable": "meta",
    "read_argus_data": "meta", "read_cdl": "meta", "read_hrc": "meta", "read_rda": "meta",
    "parse_write_options": "write", "table_status": "write", "write_argus_table": "write",
}

__all__ = [
    "ArgusMetadata", "ArgusVariable", "read_rda", "read_cdl", "read_hrc", "read_argus_data",
    "parse_arb", "run_arb", "write_argus_table", "table_status", "parse_write_options",
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
