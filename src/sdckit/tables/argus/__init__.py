"""tau-Argus files: metadata (``.rda``), hierarchies (``.hrc``), code lists (``.cdl``), data
files, batch files (``.arb``) run with sdckit, and tau-Argus's output formats."""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
from ..._lazy import attach

_EXPORTS = {
    "parse_arb": "batch", "run_arb": "batch", "ArgusMetadata": "meta", "ArgusVariable": "meta",
    "read_argus_data": "meta", "read_cdl": "meta", "read_hrc": "meta", "read_rda": "meta",
    "parse_write_options": "write", "table_status": "write", "write_argus_table": "write",
}

__all__ = [
    "ArgusMetadata", "ArgusVariable", "read_rda", "read_cdl", "read_hrc", "read_argus_data",
    "parse_arb", "run_arb", "write_argus_table", "table_status", "parse_write_options",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__, globals())
