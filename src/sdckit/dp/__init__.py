"""Differential privacy for tables: exact discrete mechanisms, the accountant, consistent
post-processing and intervals.

* :mod:`.sampling` -- exact discrete Laplace and discrete Gaussian samplers on random bits
  (Canonne, Kamath & Steinke 2020, Algorithms 1-3).
* :mod:`.accountant` -- pure DP, zCDP and approximate DP losses, composition, rho -> (epsilon,
  delta) conversion, budgets.
* :mod:`.mechanisms` -- the table methods (:class:`DiscreteGaussianCounts`,
  :class:`DiscreteLaplaceCounts`, :class:`DiscreteGaussianSums`, :class:`DiscreteLaplaceSums`),
  the sensitivity of a table, clipped tabulation, :class:`DPTableResult`.
* :mod:`.postprocess` -- top-down consistent, non-negative integer tables (TopDown, Abowd et al.
  2022).
* :mod:`.accuracy` -- exact intervals of the noise, simulated intervals of post-processed cells.
* :mod:`.run` -- ``method = "dp"`` in a table spec.

Importing this package loads the modules on first use (numba compiles the samplers then).
"""

from __future__ import annotations

__all__ = ["DiscreteGaussianCounts", "DiscreteLaplaceCounts", "DiscreteGaussianSums", "DiscreteLaplaceSums",
           "DPTableResult", "clipped_table", "table_sensitivity", "Accountant", "Charge", "PureDP", "ZCDP",
           "ApproxDP", "MaxRho", "MaxEpsilon", "zcdp_to_epsilon", "zcdp_to_delta", "topdown", "TopDownLayout",
           "check_consistency"]

_WHERE = {
    "DiscreteGaussianCounts": "mechanisms", "DiscreteLaplaceCounts": "mechanisms",
    "DiscreteGaussianSums": "mechanisms", "DiscreteLaplaceSums": "mechanisms", "DPTableResult": "mechanisms",
    "clipped_table": "mechanisms", "table_sensitivity": "mechanisms",
    "Accountant": "accountant", "Charge": "accountant", "PureDP": "accountant", "ZCDP": "accountant",
    "ApproxDP": "accountant", "MaxRho": "accountant", "MaxEpsilon": "accountant",
    "zcdp_to_epsilon": "accountant", "zcdp_to_delta": "accountant",
    "topdown": "postprocess", "TopDownLayout": "postprocess", "check_consistency": "postprocess",
}


def __getattr__(name: str):
    if name in _WHERE:
        import importlib

        mod = importlib.import_module(f"{__name__}.{_WHERE[name]}")
        return getattr(mod, name)
    raise AttributeError(f"module 'sdckit.dp' has no attribute {name!r}")
