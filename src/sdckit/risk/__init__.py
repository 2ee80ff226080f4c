"""Disclosure risk measures for microdata: frequencies (with missing values as wildcards),
k-anonymity, individual / global / household risk, SUDA2, l-diversity, t-closeness and
uniqueness by combination of key variables; for continuous data, distance-based and
probabilistic record linkage and interval disclosure; the tracking of rare records."""

from .frequencies import KeyFrequencies, combination_codes, frequencies_from_codes, key_frequencies
from .individual import global_risk_threshold, household_risk, individual_risk
from .interval import IntervalDisclosure, interval_disclosure, interval_disclosure_sd
from .ldiversity import LDiversityResult, TClosenessResult, l_diversity, t_closeness
from .linkage import LinkageRisk, distance_linkage, probabilistic_linkage
from .missing import microdata_frequencies, wildcard_frequencies
from .report import RiskComparison, RiskReport, compare_risk, measure_risk
from .suda import SudaResult, microdata_suda2, suda2
from .tracking import TrackedRecord, TrackingReport, TrackingTarget, track_records
from .uniqueness import uniqueness_by_combination

__all__ = ["IntervalDisclosure", "KeyFrequencies", "LDiversityResult", "LinkageRisk", "TrackedRecord",
           "TrackingReport", "TrackingTarget", "distance_linkage", "interval_disclosure",
           "interval_disclosure_sd", "probabilistic_linkage", "track_records", "RiskComparison", "RiskReport", "SudaResult",
           "TClosenessResult", "combination_codes", "compare_risk", "frequencies_from_codes",
           "global_risk_threshold", "household_risk", "individual_risk", "key_frequencies",
           "l_diversity", "measure_risk", "microdata_frequencies", "microdata_suda2", "suda2",
           "t_closeness", "uniqueness_by_combination", "wildcard_frequencies"]
