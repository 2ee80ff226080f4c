"""tau-Argus files: metadata (``.rda``), hierarchies (``.hrc``), code lists (``.cdl``), data
files, batch files (``.arb``) run with sdckit, and tau-Argus's output formats."""

from .batch import parse_arb, run_arb
from .meta import ArgusMetadata, ArgusVariable, read_argus_data, read_cdl, read_hrc, read_rda
from .write import parse_write_options, table_status, write_argus_table

__all__ = ["ArgusMetadata", "ArgusVariable", "read_rda", "read_cdl", "read_hrc", "read_argus_data", "parse_arb",
           "run_arb", "write_argus_table", "table_status", "parse_write_options"]
