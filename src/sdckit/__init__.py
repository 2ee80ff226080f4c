"""sdckit: statistical disclosure control for microdata and tables.

Measure disclosure risk, mask microdata (PRAM, microaggregation, swapping, noise, recoding),
protect tables, check every stated guarantee, and write releases with their reports.
"""

from importlib.metadata import PackageNotFoundError, version

from .errors import GateError, InputError, ParameterError, SDCError, SolverError, SpecError
from .microdata import DatasetMeta, Microdata
from .result import Guarantee, StepResult

try:
    __version__ = version("sdckit")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.1.0"

__all__ = [
    "DatasetMeta", "GateError", "Guarantee", "InputError", "Microdata", "ParameterError",
    "SDCError", "SolverError", "SpecError", "StepResult", "__version__",
]
