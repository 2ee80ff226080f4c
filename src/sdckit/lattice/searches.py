"""One entry to every search of the lattice: exact, exhaustive, heuristic (:mod:`.search`)
and anytime (:mod:`.anytime`); the release step and the command call it."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ParameterError
from .anytime import anytime
from .search import Evaluator, SearchResult
from .search import search as bounded_search

#: the searches by name
SEARCH_NAMES = ("exact", "exhaustive", "heuristic", "anytime")


def search(ev: Evaluator, method: str = "exact", *, max_nodes: int | None = None,
           time_limit: float | None = None, progress: Callable[[dict], None] | None = None) -> SearchResult:
    """Run the search ``method``: ``exact``, ``exhaustive``, ``heuristic`` (node budget
    ``max_nodes``, default 2000; ``time_limit`` wall seconds) or ``anytime`` (``time_limit``
    CPU seconds, default 60, an optional node budget, ``progress`` receiving its events)."""
    if method == "anytime":
        return anytime(ev, time_limit=time_limit or 60.0, max_nodes=max_nodes, progress=progress)
    if method not in SEARCH_NAMES:
        raise ParameterError(f"search {method!r} is not known; use {', '.join(SEARCH_NAMES)}.", param="search",
                             rule="one of " + ", ".join(repr(m) for m in SEARCH_NAMES), value=method)
    return bounded_search(ev, method, max_nodes=max_nodes, time_limit=time_limit)
