"""Utility of a release: information loss of continuous variables (IL1..IL5, IL', eigenvalues)
and the operational check that runs the steward's analyses on original and released data."""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
_EXPORTS = {
    "AnalysisComparison": "analyses", "LinearRegression": "analyses",
    "LogisticRegression": "analyses", "PrincipalComponents": "analyses",
    "UserAnalysis": "analyses", "analysis_from_dict": "analyses", "compare_analyses": "analyses",
    "InformationLoss": "numeric", "eigen_loss": "numeric", "il1": "numeric",
    "il1_primed": "numeric", "il1s": "numeric", "il2": "numeric", "il3": "numeric",
    "il4": "numeric", "il5": "numeric", "information_loss": "numeric",
    "nearest_original": "numeric",
}

__all__ = [
    "AnalysisComparison", "InformationLoss", "LinearRegression", "LogisticRegression",
    "PrincipalComponents", "UserAnalysis", "analysis_from_dict", "compare_analyses", "eigen_loss",
    "il1", "il1_primed", "il1s", "il2", "il3", "il4", "il5", "information_loss",
    "nearest_original",
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
