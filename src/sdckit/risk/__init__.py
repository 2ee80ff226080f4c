"""Disclosure risk measures for microdata."""

from .frequencies import KeyFrequencies, combination_codes, frequencies_from_codes, key_frequencies
from .report import RiskReport, measure_risk

__all__ = ["KeyFrequencies", "RiskReport", "combination_codes", "frequencies_from_codes",
           "key_frequencies", "measure_risk"]
