"""Bounded compositions: the number of integer vectors with a given sum and entry bounds
(used by the table counters of :mod:`sdckit.tables.count` and :mod:`sdckit.tables.count_dp`)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence


def bounded_compositions(total: int, bounds: Sequence[int]) -> int:
    """Number of integer vectors ``x`` with ``sum(x) == total`` and ``0 <= x_j <= bounds[j]``.

    The coefficient of ``z**total`` in ``prod_j (1 + z + ... + z**bounds[j])``, by a running
    prefix-sum convolution (exact integers).
    """
    if total < 0 or total > sum(bounds):
        return 0
    poly = [1] + [0] * total
    for b in bounds:
        prefix = list(itertools.accumulate(poly))
        poly = [prefix[s] - (prefix[s - b - 1] if s - b - 1 >= 0 else 0) for s in range(total + 1)]
    return poly[total]
