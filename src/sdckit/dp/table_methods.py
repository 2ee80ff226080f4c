"""The four differentially private table settings, registered as table methods.

``dp_gaussian_counts``, ``dp_laplace_counts``, ``dp_gaussian_sums`` and ``dp_laplace_sums`` are
the settings of :mod:`sdckit.dp.mechanisms` (declared there with :func:`sdckit.params.param`)
with the table methods' one entry point ``apply(table, primary=None, *, rng=None,
microdata=None)`` returning a :class:`~sdckit.tables.registry.TableResult`. Sums are clipped
per record to ``[lower, upper]`` (:func:`sdckit.dp.mechanisms.clipped_table`) when the
microdata are given; without them the table's cells must already be clipped sums.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..tables.registry import AuditVerdict, TableMethod, TableResult, register_table_method
from .mechanisms import (
    DiscreteGaussianCounts,
    DiscreteGaussianSums,
    DiscreteLaplaceCounts,
    DiscreteLaplaceSums,
    clipped_table,
)

__all__ = ["DPGaussianCounts", "DPLaplaceCounts", "DPGaussianSums", "DPLaplaceSums", "dp_verdict"]


def dp_verdict(result: Any) -> AuditVerdict:
    """Every cell checked for the consistency promises (additive, non-negative, invariants)."""
    failed = [g for g in result.guarantees if not g.holds]
    n = int(result.table.n_cells)
    if failed:
        return AuditVerdict("failed", "every cell checked: " + ", ".join(g.statement for g in failed)
                            + " does NOT hold", n, 0, "every cell checked")
    return AuditVerdict("exact", f"every cell checked: {result.charge.loss.describe()}; "
                        + ("the published cells add up, none is negative and the invariants are exact"
                           if result.check is not None else "raw noisy cells (no consistency promised)"),
                        n, 0, "every cell checked")


class _DPMethod(TableMethod):
    """The shared ``apply`` of the four DP settings (``dp_class`` is the settings' class)."""

    dp_class: ClassVar[type] = object

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None,
              name: str = "table") -> TableResult:
        """Noise every cell (``name``: the table's name in the accountant's record)."""
        if microdata is not None and self.kind == "magnitude":
            frame = microdata.data if hasattr(microdata, "data") and not hasattr(microdata, "columns") else microdata
            hier = dict(zip(table.dims, table.hierarchies))
            table, _ = clipped_table(frame, list(table.dims), response=table.response, person=None,
                                     max_contributions=self.max_contributions, lower=self.lower, upper=self.upper,
                                     hierarchies=hier, total=table.hierarchies[0].codes[0])
        res = self.dp_class.apply(self, table, rng=rng, name=name)
        status = np.where(np.asarray(res.status) == "invariant", "safe", "perturbed").astype(object)
        return TableResult(self.method_name, res.table, np.asarray(res.published, float), status, dp_verdict(res),
                           list(res.guarantees), res, self.public_params(),
                           extra={"lower": np.asarray(res.lower), "upper": np.asarray(res.upper)}, seed=res.seed)


@register_table_method("dp_gaussian_counts", label="differential privacy: Gaussian noise on counts",
                       kinds=("frequency",),
                       help="discrete Gaussian noise on every count (rho-zCDP), made consistent top-down")
@dataclass(frozen=True, kw_only=True)
class DPGaussianCounts(_DPMethod, DiscreteGaussianCounts):
    """Canonne, Kamath & Steinke (2020), Algorithm 3; Abowd et al. (2022) top-down."""

    dp_class: ClassVar[type] = DiscreteGaussianCounts


@register_table_method("dp_laplace_counts", label="differential privacy: Laplace noise on counts",
                       kinds=("frequency",),
                       help="discrete Laplace noise on every count (pure epsilon-DP), made consistent top-down")
@dataclass(frozen=True, kw_only=True)
class DPLaplaceCounts(_DPMethod, DiscreteLaplaceCounts):
    """Inusah & Kozubowski (2006) discrete Laplace; Ghosh, Roughgarden & Sundararajan (2012)."""

    dp_class: ClassVar[type] = DiscreteLaplaceCounts


@register_table_method("dp_gaussian_sums", label="differential privacy: Gaussian noise on sums",
                       kinds=("magnitude",),
                       help="discrete Gaussian noise on clipped sums (rho-zCDP), made consistent top-down")
@dataclass(frozen=True, kw_only=True)
class DPGaussianSums(_DPMethod, DiscreteGaussianSums):
    """Canonne, Kamath & Steinke (2020), Algorithm 3, on contributions clipped to [L, U]."""

    dp_class: ClassVar[type] = DiscreteGaussianSums


@register_table_method("dp_laplace_sums", label="differential privacy: Laplace noise on sums",
                       kinds=("magnitude",),
                       help="discrete Laplace noise on clipped sums (pure epsilon-DP), made consistent top-down")
@dataclass(frozen=True, kw_only=True)
class DPLaplaceSums(_DPMethod, DiscreteLaplaceSums):
    """Discrete Laplace on contributions clipped to [L, U] (Ghosh et al. 2012)."""

    dp_class: ClassVar[type] = DiscreteLaplaceSums
