"""Disclosure risk measures for microdata."""

from .frequencies import KeyFrequencies, combination_codes, frequencies_from_codes, key_frequencies

__all__ = ["KeyFrequencies", "combination_codes", "frequencies_from_codes", "key_frequencies"]
