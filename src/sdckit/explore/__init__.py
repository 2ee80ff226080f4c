"""Parameter sweeps, the R-U confidentiality map, and the search for the best release."""

from .measures import entropy_utility, linkage_risk
from .run import ExploreRun, run_explore_spec
from .scores import ScoreResult, score, score_primed
from .search import Proposal, choose
from .sweep import Candidate, Sweep, SweepResult, pareto_front

__all__ = ["Candidate", "ExploreRun", "Proposal", "Sweep", "SweepResult", "choose", "entropy_utility",
           "linkage_risk", "pareto_front", "run_explore_spec", "ScoreResult", "score", "score_primed"]
