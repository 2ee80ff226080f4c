"""sdckit: statistical disclosure control for microdata and tables.

Measure disclosure risk, mask microdata (PRAM, microaggregation, swapping, noise, recoding),
protect tables, check every stated guarantee, and write releases with their reports.

The public names load on first use (module ``__getattr__``, PEP 562): ``import sdckit`` and
``sdckit --version`` do not import numpy or pandas.
"""

from .errors import GateError, InputError, ParameterError, SDCError, SolverError, SpecError

__all__ = [
    "DatasetMeta", "GateError", "Guarantee", "InputError", "Microdata", "ParameterError",
    "SDCError", "SolverError", "SpecError", "StepResult", "__version__",
]


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sdckit")
    except PackageNotFoundError:  # running from a source tree
        return "0.1.0"


def __getattr__(name: str):
    if name in ("Microdata", "DatasetMeta"):
        from . import microdata

        return getattr(microdata, name)
    if name in ("Guarantee", "StepResult"):
        from . import result

        return getattr(result, name)
    if name == "__version__":
        value = _package_version()
        globals()["__version__"] = value  # computed once
        return value
    raise AttributeError(f"module 'sdckit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
