"""Disclosure risk measures for microdata: frequencies (with missing values as wildcards),
k-anonymity, individual / global / household risk, SUDA2, l-diversity, t-closeness and
uniqueness by combination of key variables; for continuous data, distance-based and
probabilistic record linkage and interval disclosure; the tracking of rare records."""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
from .._lazy import attach

_EXPORTS = {
    "KeyFrequencies": "frequencies", "combination_codes": "frequencies",
    "frequencies_from_codes": "frequencies", "key_frequencies": "frequencies",
    "global_risk_threshold": "individual", "household_risk": "individual",
    "individual_risk": "individual", "IntervalDisclosure": "interval",
    "interval_disclosure": "interval", "interval_disclosure_sd": "interval",
    "intruder_view": "intruder", "linkage_risk": "intruder",
    "LDiversityResult": "ldiversity", "TClosenessResult": "ldiversity",
    "l_diversity": "ldiversity", "t_closeness": "ldiversity", "LinkageRisk": "linkage",
    "distance_linkage": "linkage", "probabilistic_linkage": "linkage",
    "microdata_frequencies": "missing", "wildcard_frequencies": "missing",
    "RiskComparison": "report", "RiskReport": "report", "compare_risk": "report",
    "measure_risk": "report", "SudaResult": "suda", "microdata_suda2": "suda", "suda2": "suda",
    "TrackedRecord": "tracking", "TrackingReport": "tracking", "TrackingTarget": "tracking",
    "track_records": "tracking", "uniqueness_by_combination": "uniqueness",
}

__all__ = [
    "IntervalDisclosure", "KeyFrequencies", "LDiversityResult", "LinkageRisk", "TrackedRecord",
    "TrackingReport", "TrackingTarget", "distance_linkage", "interval_disclosure",
    "interval_disclosure_sd", "intruder_view", "linkage_risk", "probabilistic_linkage", "track_records", "RiskComparison",
    "RiskReport", "SudaResult", "TClosenessResult", "combination_codes", "compare_risk",
    "frequencies_from_codes", "global_risk_threshold", "household_risk", "individual_risk",
    "key_frequencies", "l_diversity", "measure_risk", "microdata_frequencies", "microdata_suda2",
    "suda2", "t_closeness", "uniqueness_by_combination", "wildcard_frequencies",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__, globals())
