"""Optimal generalisation by search over the lattice of hierarchy levels (ARX's core).

A node gives one generalisation level per quasi-identifier. :class:`Problem` encodes the data
for fast per-node class counting; :mod:`.models` holds the privacy models, :mod:`.metrics` the
utility metrics and their bounds; :func:`exact` returns the proven optimum, :func:`heuristic`
the best found and a bound for lattices too large, :func:`pareto` the (utility, risk) front.
``sdckit.lattice.search`` is the submodule (a lazy package cannot also bind the function of
that name): call :func:`sdckit.lattice.search.search`, or :func:`exact` and its siblings.
"""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
from .._lazy import attach

_EXPORTS = {
    "check_hierarchy": "hierarchies", "date_hierarchy": "hierarchies",
    "find_hierarchies": "hierarchies", "grouping_hierarchy": "hierarchies",
    "interval_hierarchy": "hierarchies", "masking_hierarchy": "hierarchies",
    "order_hierarchy": "hierarchies", "priority_hierarchy": "hierarchies", "read_hierarchy": "hierarchies",
    "METRICS": "metrics",
    "AverageRisk": "models", "DeltaPresence": "models", "DistinctLDiversity": "models",
    "EntropyLDiversity": "models", "KAnonymity": "models", "MaxRisk": "models",
    "RecursiveCLDiversity": "models", "TCloseness": "models", "Problem": "problem",
    "Evaluator": "search", "SearchResult": "search", "exact": "search", "exhaustive": "search",
    "heuristic": "search", "pareto": "search", "generalise_frame": "transform",
}

__all__ = [
    "Problem", "Evaluator", "SearchResult", "exact", "exhaustive", "heuristic", "pareto",
    "generalise_frame", "METRICS", "KAnonymity", "DistinctLDiversity", "EntropyLDiversity",
    "RecursiveCLDiversity", "TCloseness", "DeltaPresence", "MaxRisk", "AverageRisk",
    "read_hierarchy", "find_hierarchies", "check_hierarchy", "interval_hierarchy",
    "masking_hierarchy", "order_hierarchy", "grouping_hierarchy", "date_hierarchy", "priority_hierarchy",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__, globals())
