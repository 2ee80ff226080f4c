"""Utility of a release: information loss of continuous variables (IL1..IL5, IL', eigenvalues)
and the operational check that runs the steward's analyses on original and released data."""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
from .._lazy import attach

_EXPORTS = {
    "AnalysisComparison": "analyses", "Classification": "analyses", "LinearRegression": "analyses",
    "ClassificationAccuracy": "classification", "classification_accuracy": "classification",
    "cross_validated_accuracy": "classification",
    "LogisticRegression": "analyses", "PrincipalComponents": "analyses",
    "UserAnalysis": "analyses", "analysis_from_dict": "analyses", "compare_analyses": "analyses",
    "entropy_utility": "categorical", "pareto_front": "frontier",
    "InformationLoss": "numeric", "eigen_loss": "numeric", "il1": "numeric",
    "il1_primed": "numeric", "il1s": "numeric", "il2": "numeric", "il3": "numeric",
    "il4": "numeric", "il5": "numeric", "information_loss": "numeric",
    "nearest_original": "numeric",
}

__all__ = [
    "AnalysisComparison", "Classification", "ClassificationAccuracy", "InformationLoss", "LinearRegression",
    "LogisticRegression", "PrincipalComponents", "UserAnalysis", "analysis_from_dict", "classification_accuracy", "compare_analyses",
    "cross_validated_accuracy", "eigen_loss", "entropy_utility",
    "il1", "il1_primed", "il1s", "il2", "il3", "il4", "il5", "information_loss",
    "nearest_original", "pareto_front",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__, globals())
