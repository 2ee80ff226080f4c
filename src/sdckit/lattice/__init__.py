"""Optimal generalisation by search over the lattice of hierarchy levels (ARX's core).

A node gives one generalisation level per quasi-identifier. :class:`Problem` encodes the data
for fast per-node class counting; :mod:`.models` holds the privacy models, :mod:`.metrics` the
utility metrics and their bounds; :func:`exact` returns the proven optimum, :func:`heuristic`
the best found and a bound for lattices too large, :func:`pareto` the (utility, risk) front.
"""

from .hierarchies import (check_hierarchy, date_hierarchy, find_hierarchies, grouping_hierarchy,
                          interval_hierarchy, masking_hierarchy, order_hierarchy, read_hierarchy)
from .metrics import METRICS
from .models import (AverageRisk, DeltaPresence, DistinctLDiversity, EntropyLDiversity, KAnonymity,
                     MaxRisk, RecursiveCLDiversity, TCloseness)
from .problem import Problem
from .search import Evaluator, SearchResult, exact, exhaustive, heuristic, pareto, search
from .transform import generalise_frame

__all__ = ["Problem", "Evaluator", "SearchResult", "exact", "exhaustive", "heuristic", "pareto", "search",
           "generalise_frame", "METRICS", "KAnonymity", "DistinctLDiversity", "EntropyLDiversity",
           "RecursiveCLDiversity", "TCloseness", "DeltaPresence", "MaxRisk", "AverageRisk",
           "read_hierarchy", "find_hierarchies", "check_hierarchy", "interval_hierarchy",
           "masking_hierarchy", "order_hierarchy", "grouping_hierarchy", "date_hierarchy"]
