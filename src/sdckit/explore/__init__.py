"""Parameter sweeps, the R-U confidentiality map, and the search for the best release."""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
from .._lazy import attach

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


__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__, globals())
