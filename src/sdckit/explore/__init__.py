"""Parameter sweeps, the R-U confidentiality map, and the search for the best release."""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
_EXPORTS = {
    "entropy_utility": "measures", "linkage_risk": "measures", "ExploreRun": "run",
    "run_explore_spec": "run", "ScoreResult": "scores", "score": "scores",
    "score_primed": "scores", "Proposal": "search", "choose": "search", "Candidate": "sweep",
    "Sweep": "sweep", "SweepResult": "sweep", "pareto_front": "sweep",
}

__all__ = [
    "Candidate", "ExploreRun", "Proposal", "Sweep", "SweepResult", "choose", "entropy_utility",
    "linkage_risk", "pareto_front", "run_explore_spec", "ScoreResult", "score", "score_primed",
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
