"""Remove variables from the release (direct identifiers, variables not to be published)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._validation import close_names
from ..errors import InputError
from ..microdata import Microdata
from ..params import check_params, param
from ..registry import register_step
from ..result import Guarantee, StepResult


@register_step("remove", engines=("memory", "dask"))
@dataclass(frozen=True)
class RemoveVariables:
    """Drop columns from the release, e.g. names, addresses or record ids.

    Parameters
    ----------
    variables : list of str
        Columns to drop. A column holding a role (key, weight, ...) cannot be dropped here:
        remove it from the roles first.

    Notes
    -----
    Guarantee: none of ``variables`` is in the released file.

    References
    ----------
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*, Wiley, section 3.2
    (direct identifiers are removed before any other protection).
    """

    variables: Sequence[str] = param(kind="columns", help="columns to drop (not columns holding a role)")

    def __post_init__(self) -> None:
        check_params(self)

    def apply(self, microdata: Microdata, *, rng=None) -> StepResult:  # noqa: ARG002 (deterministic)
        for var in self.variables:
            if var not in microdata.columns:
                raise InputError(f"remove: column {var!r} does not exist; "
                                 f"{close_names(var, microdata.columns)}")
            for role, value in microdata.roles.items():
                if var == value or (isinstance(value, tuple) and var in value):
                    raise InputError(f"remove: column {var!r} holds the {role} role; "
                                     "take it out of [roles] to remove it.")
        out = microdata.without_columns(self.variables)    # keys keep their codes
        gone = [v for v in self.variables if v not in out.columns]
        return StepResult("remove", out, {"variables": list(self.variables)},
                          {"removed": list(self.variables), "columns_left": len(out.columns)},
                          (Guarantee("removed", "the removed columns are absent from the release",
                                     gone, len(gone) == len(self.variables)),))

    # ---- the Dask engine's protocol (sdckit.registry.DaskPlan)
    def dask_plan(self, roles):
        """Partition by partition: the same columns dropped."""
        from ..registry import DaskPlan

        return DaskPlan("rows", tuple(self.variables), tuple(self.variables))
