"""Registers the continuous masking steps: microaggregation, rank_swap, noise, shuffle."""

from .microaggregation import Microaggregation  # noqa: F401  (registration happens on import)
from .noise import Noise  # noqa: F401
from .rank_swap import RankSwap  # noqa: F401
from .shuffle import Shuffle  # noqa: F401
