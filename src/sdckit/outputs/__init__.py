"""Checking researchers' outputs (tables, models, histograms, survival curves) before they leave a
trusted research environment: ACRO's rules, sdckit's LP audit of margins and of linked outputs,
a results file in ACRO's layout and the checker's decisions.

The signed release of approved outputs is :func:`sdckit.report.outputs_release.release_outputs`
(the report layer, which holds the certificate and the signing).
"""

from __future__ import annotations

from .checks import CHECK_WORDS, Check
from .review import Review, check_results
from .rules import OutputRules, load_rules
from .session import RESULTS_FILE, OutputRecord, Session

__all__ = ["Session", "OutputRecord", "OutputRules", "load_rules", "Review", "check_results", "Check",
           "CHECK_WORDS", "RESULTS_FILE"]
