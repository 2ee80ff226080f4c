"""The engine's partitioned kernels: how a step's declared plan runs on partitioned data.

A step that runs on the Dask engine declares its plan on itself (``dask_plan(roles) ->``
:class:`sdckit.registry.DaskPlan`: the kernel, the columns it reads and writes). Each kernel
here turns that plan into the engine's settings, the statistics it needs from one pass over
the partitions (merged exactly), the fit on the client, the lazy transform of the partitions
with the step's child stream, and the step's public summary. A gate check that runs here
declares the merged summary it reads (``dask_summary``); :data:`GATE_SUMMARIES` builds them.

No step is named here: a new step that fits a kernel ("groups": its own ``apply`` within areas,
"rows": row by row) runs on the engine by declaring its plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..registry import DaskPlan
from .blockwise import (
    BlockMicroaggregation,
    BlockRankSwap,
    GroupedStep,
    fit_microaggregation,
    fit_rank_swap,
    grouped_partitioned,
    microaggregate_partitioned,
    rank_swap_partitioned,
)
from .frame import PartitionedMicrodata
from .masking import (
    NoiseSettings,
    PramPlan,
    PramSettings,
    fit_noise,
    fit_pram,
    noise_moments,
    pram_counts,
    transform,
)
from .rowwise import RowwiseStep, distinct_values, fit_rowwise, rowwise_partitioned
from .synthesis import (
    SynthesisSettings,
    fit_synthesis,
    synthesis_disclosure,
    synthesis_partitioned,
    synthesis_summary,
)


@dataclass(frozen=True)
class Kernel:
    """One partitioned form: ``settings(step, plan, roles)``, ``stats(pmd, settings)`` (lazy),
    ``fit(pmd, settings, stats, stream)``, ``apply(pmd, fitted, stream)`` (lazy) and
    ``summary(fitted)`` (the step's public section)."""

    settings: Callable[[Any, DaskPlan, Mapping], Any]
    stats: Callable[[PartitionedMicrodata, Any], Any]
    fit: Callable[[PartitionedMicrodata, Any, Any, np.random.SeedSequence], Any]
    apply: Callable[[PartitionedMicrodata, Any, np.random.SeedSequence], PartitionedMicrodata]
    summary: Callable[[Any], dict]


def _nothing(pmd: PartitionedMicrodata, settings: Any):
    import dask

    return dask.delayed(None)


def _rows_stats(pmd: PartitionedMicrodata, s: RowwiseStep):
    import dask

    values = distinct_values(pmd, s)
    return dask.delayed(None) if values is None else values


def _pram_summary(plan: PramPlan) -> dict:
    out = {"method": "pram", "variables": list(plan.variables), "strata": plan.strata, "matrices": {}}
    for v in plan.variables:
        ms = plan.matrices[v]
        out["matrices"][v] = {"min_diagonal": float(min(m.min_diagonal for m in ms)),
                              "n_strata": len(ms), "evidence": plan.evidence[v]}
    return out


def _noise_summary(plan) -> dict:
    s = plan.settings
    return {"method": "noise", "variables": list(s.variables), "kind": s.method, "level": s.level,
            "restore": s.restore, "sd": plan.sd, "n_values": plan.n_values}


def _rank_swap_summary(plan) -> dict:
    return {"method": "rank_swap", "variables": list(plan.settings.variables), "p": plan.settings.p,
            "window_ranks": plan.window, "n_values": plan.n_values,
            "n_blocks": {v: len(e) + 1 for v, e in plan.edges.items()},
            "guarantee": "no value moves more than window_ranks ranks; no swap crosses a block border",
            "scope": "within blocks of consecutive ranks: a value is swapped only with values of "
                     "its own block (in memory the whole ranked column is one block)"}


def _microaggregation_summary(plan) -> dict:
    return {"method": "microaggregation", "variables": list(plan.settings.variables), "k": plan.settings.k,
            "n_blocks": len(plan.edges) + 1, "guarantee": "every group has k..2k-1 records",
            "scope": "within blocks of the data: MDAV groups records of one block only (in "
                     "memory it groups across the whole file)"}


def _groups_summary(gs: GroupedStep) -> dict:
    method = type(gs.step).step_name
    return {"method": method, "within_groups_of": gs.group_by, "columns": list(gs.columns),
            "scope": f"within each group of {gs.group_by!r}: {method} ran on each group's records "
                     "alone (in memory it runs on the whole file), so its guarantee holds within "
                     "every group and therefore on the whole release"}


KERNELS: dict[str, Kernel] = {
    "pram": Kernel(lambda step, plan, roles: PramSettings.from_step(step),
                   lambda pmd, s: pram_counts(pmd, s.variables, s.strata),
                   lambda pmd, s, st, ss: fit_pram(pmd, s, ss, counts=st),
                   lambda pmd, fitted, ss: transform(pmd, [fitted], [ss]), _pram_summary),
    "noise": Kernel(lambda step, plan, roles: NoiseSettings.from_step(step, tuple(roles.get("numeric_vars", ()))),
                    lambda pmd, s: noise_moments(pmd, s.variables, s.method == "correlated"),
                    lambda pmd, s, st, ss: fit_noise(pmd, s, moments=st),
                    lambda pmd, fitted, ss: transform(pmd, [fitted], [ss]), _noise_summary),
    "rank_swap": Kernel(lambda step, plan, roles: BlockRankSwap(plan.writes, float(step.p)),
                        lambda pmd, s: noise_moments(pmd, s.variables, False),
                        lambda pmd, s, st, ss: fit_rank_swap(pmd, s, moments=st),
                        rank_swap_partitioned, _rank_swap_summary),
    "microaggregation": Kernel(lambda step, plan, roles: BlockMicroaggregation(plan.writes, int(step.k),
                                                                               cell=int(step.cell_size)),
                               lambda pmd, s: noise_moments(pmd, s.variables, False),
                               lambda pmd, s, st, ss: fit_microaggregation(pmd, s, moments=st),
                               lambda pmd, fitted, ss: microaggregate_partitioned(pmd, fitted),
                               _microaggregation_summary),
    "groups": Kernel(lambda step, plan, roles: GroupedStep(step, plan.group_by, plan.writes, dict(roles)),
                     _nothing, lambda pmd, s, st, ss: s, grouped_partitioned, _groups_summary),
    "rows": Kernel(lambda step, plan, roles: RowwiseStep(step, type(step).step_name), _rows_stats,
                   lambda pmd, s, st, ss: fit_rowwise(pmd, s, st),
                   lambda pmd, fitted, ss: rowwise_partitioned(pmd, fitted), lambda plan: dict(plan.summary)),
    "synthesis": Kernel(lambda step, plan, roles: SynthesisSettings(step, dict(roles)), _nothing, fit_synthesis,
                        synthesis_partitioned, synthesis_summary),
}


@dataclass(frozen=True)
class EngineStep:
    """A step of a spec as the engine runs it: the in-memory step, its declared plan, the
    kernel's settings."""

    step: Any
    plan: DaskPlan
    settings: Any

    @property
    def kernel(self) -> Kernel:
        return KERNELS[self.plan.kernel]


@dataclass(frozen=True)
class Fitted:
    """A step fitted on partitioned data: the kernel's fitted plan and the step's summary."""

    plan: Any
    summary: dict


def pram_diagonals(plans: Sequence[Any]) -> list[tuple[str, float]]:
    """(matrix name, smallest diagonal entry) of every fitted PRAM matrix of every variable and
    stratum, read from P."""
    diags = []
    for plan in plans:
        if not isinstance(plan, PramPlan):
            continue
        for var, per_stratum in plan.matrices.items():
            for s, m in enumerate(per_stratum):
                P = m.P if hasattr(m, "P") else np.asarray(m)
                diags.append((var + ("" if len(per_stratum) == 1 else f" | stratum {s}"),
                              float(np.asarray(P.diagonal()).min())))
    return diags


#: the merged summaries a gate check's ``finish`` reads, from the released data's risk and the
#: fitted plans
GATE_SUMMARIES: dict[str, Callable[[Any, Sequence[Any]], Any]] = {
    "frequencies": lambda risk, plans: {"summary": risk.summary, "fk": risk.fk, "counts": risk.table.counts},
    "pram_matrices": lambda risk, plans: pram_diagonals(plans),
    # the synthesise step's input and output, measured on the workers when a check asks
    "synthesis_disclosure": synthesis_disclosure,
}


def step_protocol_problems(cls: type) -> list[str]:
    """Why a step class claiming the Dask engine does not implement its protocol (empty when
    it does): a ``dask_plan(roles)`` method is required."""
    if "dask" not in getattr(cls, "engines", ()):
        return []
    if not callable(getattr(cls, "dask_plan", None)):
        return [f"step {getattr(cls, 'step_name', cls.__name__)!r} claims the Dask engine but has no "
                "dask_plan(roles) method returning a sdckit.registry.DaskPlan"]
    return []


def plan_problems(plan: Any, columns: Sequence[str]) -> list[str]:
    """Why a declared plan cannot run (empty when it can): a DaskPlan of a known kernel whose
    columns exist."""
    if not isinstance(plan, DaskPlan):
        return [f"dask_plan returned {type(plan).__name__}, not a DaskPlan"]
    out = []
    if plan.kernel not in KERNELS:
        out.append(f"unknown kernel {plan.kernel!r} (the engine has {', '.join(sorted(KERNELS))})")
    missing = [c for c in (*plan.reads, *plan.writes, *([plan.group_by] if plan.group_by else []))
               if c not in columns]
    if missing:
        out.append(f"columns {missing} are not in the data")
    if plan.kernel == "groups" and not plan.group_by:
        out.append("a groups plan needs group_by")
    return out


def gate_protocol_problems(cls: type) -> list[str]:
    """Why a gate check class claiming the Dask engine does not implement its protocol."""
    if "dask" not in getattr(cls, "engines", ()):
        return []
    name = getattr(cls, "gate_name", cls.__name__)
    summary = getattr(cls, "dask_summary", None)
    if summary not in GATE_SUMMARIES:
        return [f"gate check {name!r} claims the Dask engine but declares no dask_summary the engine "
                f"builds ({', '.join(sorted(GATE_SUMMARIES))})"]
    from ..registry import GateCheck

    if getattr(cls, "finish", None) is getattr(GateCheck, "finish", None):
        return [f"gate check {name!r} claims the Dask engine but does not implement finish(summary)"]
    return []
