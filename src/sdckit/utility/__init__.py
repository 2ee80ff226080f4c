"""Utility of a release: information loss of continuous variables (IL1..IL5, IL', eigenvalues)
and the operational check that runs the steward's analyses on original and released data."""

from .analyses import (AnalysisComparison, LinearRegression, LogisticRegression, PrincipalComponents,
                       UserAnalysis, analysis_from_dict, compare_analyses)
from .numeric import (InformationLoss, eigen_loss, il1, il1_primed, il1s, il2, il3, il4, il5,
                      information_loss, nearest_original)

__all__ = ["AnalysisComparison", "InformationLoss", "LinearRegression", "LogisticRegression",
           "PrincipalComponents", "UserAnalysis", "analysis_from_dict", "compare_analyses", "eigen_loss",
           "il1", "il1_primed", "il1s", "il2", "il3", "il4", "il5", "information_loss", "nearest_original"]
