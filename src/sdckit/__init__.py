"""sdckit: statistical disclosure control for microdata and tables.

Measure disclosure risk, mask microdata (PRAM, microaggregation, swapping, noise, recoding),
protect tables, check every stated guarantee, and write releases with their reports.

The public names load on first use (module ``__getattr__``, PEP 562): ``import sdckit`` and
``sdckit --version`` do not import numpy or pandas. The flat namespace::

    md = sdckit.read_microdata("persons.csv", key_vars=[...])
    sdckit.measure_risk(md)
    sdckit.Release(md, [sdckit.steps.Pram(["occupation"])], {"k_anonymity": 3}).run()
    sdckit.protect("release.toml")

``sdckit.steps.<Step>`` is every registered step class, ``sdckit.gate.<Check>`` every gate
check class, ``sdckit.tables.<Method>`` every registered table method class.
"""

from ._version import __version__  # written once, in _version.py (pyproject.toml reads it too)
from .errors import GateError, InputError, ParameterError, SDCError, SolverError, SpecError

__all__ = [
    "DatasetMeta", "GateError", "Guarantee", "InputError", "Microdata", "ParameterError", "Release",
    "ReleaseRun", "RiskReport", "SDCError", "SolverError", "SpecError", "StepResult", "__version__",
    "gate", "load_spec", "measure_risk", "protect", "read_microdata", "steps",
]

#: public name -> the module that defines it (imported on first use)
_EXPORTS = {
    "Microdata": "microdata", "DatasetMeta": "microdata",
    "Guarantee": "result", "StepResult": "result",
    "read_microdata": "io.files",
    "measure_risk": "risk.report", "RiskReport": "risk.report",
    "Release": "release", "ReleaseRun": "release", "protect": "release",
    "load_spec": "spec",
}


def _attach():
    from ._lazy import attach

    return attach(__name__, _EXPORTS, __all__, globals())


# a public name or a submodule (sdckit.steps, sdckit.gate, sdckit.tables, ...) on first use
__getattr__, __dir__ = _attach()
