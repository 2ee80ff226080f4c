"""Grouped sums whose result does not depend on the partitioning: see :mod:`sdckit._sums`
(the kernels live in the core, where the in-memory methods use them too)."""

from .._sums import dd_bincount, dd_merge, dd_moments, dd_total, mean_sd, merge_moments  # noqa: F401

__all__ = ["dd_bincount", "dd_merge", "dd_moments", "dd_total", "mean_sd", "merge_moments"]
