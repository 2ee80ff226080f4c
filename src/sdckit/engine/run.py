"""Run a release spec on a Dask cluster: read, measure, fit, mask, gate, write.

:func:`protect_with_dask` is what ``sdckit protect SPEC --engine dask`` calls. It starts a
``LocalCluster`` (one worker process per core, one thread each, loopback only) or connects
to a running scheduler, then makes these passes over the data:

1. scan: row counts per partition, categories of keys and strata, weight checks;
2. statistics, in one pass: key frequencies of the input (risk before) and the statistics
   every step fits on (category counts for PRAM, moments for noise) whose input columns no
   earlier step changes; a step that reads a column an earlier step wrote gets its own pass
   over the masked data (recomputed, with identical draws);
3. the gate's risk on the released data (only when the spec has a risk threshold);
4. write: every partition masked by the fitted plans and written as a part file.

Steps the engine runs: ``pram`` (independent variables, optional ``strata``; matrices from
the PRAM engine's builders), ``noise``, ``rank_swap`` (within blocks of ranks),
``microaggregation`` (scalable MDAV within blocks), ``local_suppression`` (within the areas of
the first ``strata`` column), ``record_swap`` (within the areas of the top hierarchy
level), and ``remove`` and ``recode`` row by row (:mod:`sdckit.engine.rowwise`). A step
that changes scope here says so in its section of the report (``scope``). Every other
registered step is refused with the reason its registration gives (``dask_note``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._random import seed_sequence
from ..errors import GateError, SDCError, SpecError
from ..result import jsonable
from ..spec import ReleaseSpec, read_spec_file, spec_from_dict
from .frame import PartitionedMicrodata, read_partitioned
from .output import write_release
from .blockwise import (BlockMicroaggregation, BlockRankSwap, GroupedStep, MicroaggregationPlan,
                        RankSwapPlan, fit_microaggregation, fit_rank_swap, grouped_partitioned,
                        microaggregate_partitioned, rank_swap_partitioned)
from .masking import (NoisePlan, NoiseSettings, PramPlan, PramSettings, fit_noise, fit_pram,
                      noise_moments, pram_counts, transform)
from .risk import PartitionedRisk, frequency_table, risk_from_table
from .rowwise import RowwisePlan, RowwiseStep, distinct_values, fit_rowwise, rowwise_partitioned

#: steps the Dask engine runs (each declares ``engines=("memory", "dask")`` where it is
#: registered; every other step declares in ``dask_note`` why it does not run here)
ENGINE_STEPS = ("pram", "noise", "rank_swap", "microaggregation", "local_suppression", "record_swap",
                "remove", "recode")
#: gate thresholds the Dask engine checks on the released data (each declares
#: ``engines=("memory", "dask")`` where it is registered; :func:`dask_gates` reads them)
ENGINE_GATES = ("k_anonymity", "max_global_risk", "max_individual_risk", "min_diagonal")


class EngineError(SDCError):
    """A worker failed; the message names the partition (when known) and the cause."""


@dataclass(frozen=True)
class DaskRelease:
    """What a Dask run did: summaries (public), seeds (internal), paths, timings."""

    spec: ReleaseSpec
    risk_before: PartitionedRisk
    risk_after: PartitionedRisk | None
    plans: tuple
    gate: tuple[dict, ...]
    paths: dict[str, Path]
    seconds: dict[str, float]
    n_records: int
    n_partitions: int
    n_workers: int
    seed_record: dict = field(default_factory=dict, repr=False)
    categories: dict = field(default_factory=dict, repr=False)

    @property
    def passed(self) -> bool:
        """No check of the gate failed (read :attr:`verdict`: "not checked" without a risk threshold)."""
        return all(g["passed"] for g in self.gate)

    @property
    def not_checked(self) -> str | None:
        """The stated reason when the release has no risk threshold on purpose ([gate] none)."""
        return getattr(self.spec.gate, "not_checked", None)

    @property
    def verdict(self) -> str:
        """``"passed"``, ``"failed"`` or ``"not checked"``, as the in-memory engine's run says."""
        from ..report.narrative import verdict_words
        return verdict_words(self)[0]

    def public_dict(self) -> dict:
        """Everything the public report says, as data (no seed)."""
        from ..report.narrative import verdict_words
        return jsonable({"verdict": verdict_words(self)[0], "verdict_text": verdict_words(self)[1],
            "engine": "dask", "n_records": self.n_records, "n_partitions": self.n_partitions,
            "n_workers": self.n_workers,
            "risk_before": self.risk_before.summary,
            "risk_after": None if self.risk_after is None else self.risk_after.summary,
            "steps": [_plan_summary(p) for p in self.plans],
            "gate": list(self.gate), "passed": self.passed,
        })

    def summary_dict(self) -> dict:
        """What ``sdckit protect --engine dask --json`` prints: stable keys, no seed."""
        r = self.risk_before.summary
        return jsonable({"engine": "dask", "n_records": self.n_records, "n_partitions": self.n_partitions,
                         "n_workers": self.n_workers, "passed": self.verdict == "passed",
                         "verdict": self.public_dict()["verdict_text"],
                         "steps": [_plan_summary(p)["method"] for p in self.plans],
                         "global_risk_before": r["global_risk"], "k_reached_before": r["k_reached"],
                         "global_risk_after": None if self.risk_after is None else self.risk_after.summary["global_risk"],
                         "gate": list(self.gate), "seconds": self.seconds.get("total"),
                         "paths": {k: str(v) for k, v in self.paths.items()}})

    def describe(self) -> str:
        r = self.risk_before.summary
        lines = [f"Dask engine: {self.n_records:,} records in {self.n_partitions} partitions on "
                 f"{self.n_workers} workers, {self.seconds.get('total', 0.0):.1f} s",
                 f"  risk before: {r['n_combinations']:,} key combinations, k reached {r['k_reached']}, "
                 f"global risk {r['global_risk']:.6f}"]
        for p in self.plans:
            d = _plan_summary(p)
            lines.append(f"  step {d['method']}: " + ", ".join(f"{k}={v}" for k, v in d.items()
                                                               if k in ("variables", "level", "p", "k", "within_groups_of")))
        for g in self.gate:
            lines.append(f"  gate {g['name']} = {g['threshold']}: {'passed' if g['passed'] else 'FAILED'} ({g['detail']})")
        lines.append(f"  {self.public_dict()['verdict_text']}")
        lines.append(f"  data:            {self.paths['data']}")
        lines.append(f"  public report:   {self.paths['report']}")
        lines.append(f"  internal report: {self.paths['internal_json']} (holds the seeds: do not publish)")
        return "\n".join(lines)

    def internal_dict(self) -> dict:
        d = self.public_dict()
        d["input"] = str(self.spec.input_path)
        d["seeds"] = self.seed_record
        d["step_parameters"] = list(self.spec.step_params)
        d["seconds"] = dict(self.seconds)
        return jsonable(d)


def _plan_summary(plan: Any) -> dict:
    if isinstance(plan, PramPlan):
        out = {"method": "pram", "variables": list(plan.variables), "strata": plan.strata, "matrices": {}}
        for v in plan.variables:
            ms = plan.matrices[v]
            out["matrices"][v] = {"min_diagonal": float(min(m.min_diagonal for m in ms)),
                                  "n_strata": len(ms), "evidence": plan.evidence[v]}
        return out
    if isinstance(plan, NoisePlan):
        s = plan.settings
        return {"method": "noise", "variables": list(s.variables), "kind": s.method, "level": s.level,
                "restore": s.restore, "sd": plan.sd, "n_values": plan.n_values}
    if isinstance(plan, RankSwapPlan):
        return {"method": "rank_swap", "variables": list(plan.settings.variables), "p": plan.settings.p,
                "window_ranks": plan.window, "n_values": plan.n_values,
                "n_blocks": {v: len(e) + 1 for v, e in plan.edges.items()},
                "guarantee": "no value moves more than window_ranks ranks; no swap crosses a block border",
                "scope": "within blocks of consecutive ranks: a value is swapped only with values of "
                         "its own block (in memory the whole ranked column is one block)"}
    if isinstance(plan, MicroaggregationPlan):
        return {"method": "microaggregation", "variables": list(plan.settings.variables), "k": plan.settings.k,
                "n_blocks": len(plan.edges) + 1, "guarantee": "every group has k..2k-1 records",
                "scope": "within blocks of the data: MDAV groups records of one block only (in "
                         "memory it groups across the whole file)"}
    if isinstance(plan, RowwisePlan):
        return dict(plan.summary)
    method = type(plan.step).step_name if hasattr(type(plan.step), "step_name") else str(plan.step)
    return {"method": method, "within_groups_of": plan.group_by, "columns": list(plan.columns),
            "scope": f"within each group of {plan.group_by!r}: {method} ran on each group's records "
                     "alone (in memory it runs on the whole file), so its guarantee holds within "
                     "every group and therefore on the whole release"}


# --------------------------------------------------------------------------- spec
def load_engine_spec(spec_path: str | os.PathLike) -> tuple[ReleaseSpec, list]:
    """Read a release spec for the Dask engine: sections checked by the spec module, steps by
    the engine (only the methods in :data:`ENGINE_STEPS`, with their settings' names)."""
    path = Path(spec_path)
    raw = read_spec_file(path)
    steps_raw = raw.get("steps", [])
    if not isinstance(steps_raw, list):
        raise SpecError(f"{path}: steps: must be an array of [[steps]] tables")
    try:
        spec = spec_from_dict({k: v for k, v in raw.items() if k != "steps"}, base_dir=path.parent,
                              source=str(path))
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None
    # the gate was built by the checks' own constructors (spec_from_dict); here only which
    # of them this engine runs (and, after the steps, the rule that a release needs a risk
    # threshold)
    for check in spec.gate.checks:
        if "dask" not in type(check).engines:
            raise SpecError(f"{path}: gate.{check.gate_name}: not checked by the Dask engine; it checks "
                            f"{', '.join(dask_gates())}. Run this spec with the in-memory engine.")
    settings, steps = [], []
    for i, step in enumerate(steps_raw):
        where = f"{path}: steps[{i}]"
        if not isinstance(step, dict) or "method" not in step:
            raise SpecError(f"{where}.method: is required (the step's method name)")
        method = step["method"]
        # the in-memory step's own names, defaults and validation
        from ..registry import build_step, discover, step_class

        discover()
        cls = step_class(str(method), where=f"{where}.method")
        if "dask" not in cls.engines or method not in ENGINE_STEPS:
            why = cls.dask_note or "it declares no Dask implementation"
            raise SpecError(f"{where}.method: {method!r} does not run on the Dask engine: {why}. "
                            f"The Dask engine runs {', '.join(dask_steps())}. Run this spec with the "
                            "in-memory engine, or split the release.")
        params = {k: v for k, v in step.items() if k != "method"}
        for key, value in list(params.items()):
            if key.endswith("file") and isinstance(value, str):
                params[key] = str((path.parent / value).resolve())
        built = build_step(method, params, where=where)
        steps.append(built)
        settings.append(_engine_settings(method, built, params, spec, where))
    try:
        spec.gate.require_threshold()
        spec.gate.check_plan(steps)
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None
    return spec, settings


def dask_gates() -> list[str]:
    """The registered gate checks that declare they run on the Dask engine."""
    from ..registry import gate_check_class, known_gate_checks

    return [name for name in known_gate_checks() if "dask" in gate_check_class(name).engines]


def dask_steps() -> list[str]:
    """The registered steps that declare they run on the Dask engine."""
    from ..registry import known_steps, step_class

    return [name for name in known_steps() if "dask" in step_class(name).engines]


def _refuse(where: str, method: str, given: dict, allowed: set[str]) -> None:
    for key in given:
        if key not in allowed:
            raise SpecError(f"{where}.{key}: {method} on the Dask engine does not take {key!r} (it takes "
                            f"{', '.join(sorted(allowed))}); run this step with the in-memory engine.")


def _engine_settings(method: str, step: Any, params: dict, spec: ReleaseSpec, where: str) -> Any:
    roles = dict(spec.roles)
    numeric = tuple(roles.get("numeric_vars", ()))
    if method in ("remove", "recode"):
        return RowwiseStep(step, method)
    if method == "pram":
        return PramSettings.from_step(step)
    if method == "noise":
        if step.restore not in ("none", "kim"):
            raise SpecError(f"{where}.restore: {step.restore!r} needs a second pass over the output and runs "
                            "in memory only; use \"none\" or \"kim\" on the Dask engine.")
        return NoiseSettings.from_step(step, numeric)
    if method == "rank_swap":
        _refuse(where, method, params, {"variables", "p"})
        return BlockRankSwap(tuple(step.variables or numeric), float(step.p))
    if method == "microaggregation":
        _refuse(where, method, params, {"variables", "k", "method", "block"})
        if step.algorithm not in ("mdav", "mdav_partitioned"):
            raise SpecError(f"{where}.algorithm: the Dask engine runs the scalable MDAV variant only; "
                            f"got {step.algorithm!r}.")
        return BlockMicroaggregation(tuple(step.variables or numeric), int(step.k), cell=int(step.block))
    if method == "local_suppression":
        # area by area: the first strata column, else the first key (put the geography first)
        keys = tuple(roles.get("key_vars", ()))
        strata = tuple(roles.get("strata", ()))
        area = strata[0] if strata else keys[0]
        return GroupedStep(step, area, tuple(k for k in keys if k != area), roles)
    hierarchy = tuple(step.hierarchy)
    carry = tuple(getattr(step, "carry_along", ()) or ())
    return GroupedStep(step, hierarchy[0], tuple(dict.fromkeys(hierarchy + carry)), roles)


def _columns_read(s: Any) -> set[str]:
    if isinstance(s, RowwiseStep):
        return set(s.variables)
    if isinstance(s, GroupedStep):
        return set(s.columns) | {s.group_by} | _role_columns(s.roles)
    return set(s.variables) | set(getattr(s, "strata", ()))


def _columns_written(s: Any) -> set[str]:
    return set(s.columns) if isinstance(s, GroupedStep) else set(s.variables)


def _role_columns(roles: dict) -> set[str]:
    out: set[str] = set()
    for v in roles.values():
        out.update([v] if isinstance(v, str) else list(v or ()))
    return out


# --------------------------------------------------------------------------- cluster
def start_client(scheduler: str | None = None, *, n_workers: int | None = None,
                 memory_limit: str | int | None = None, processes: bool = True):
    """A ``distributed.Client``: to ``scheduler`` if given, else to a new LocalCluster on
    127.0.0.1 with ``n_workers`` (default: the cores) single-threaded workers.

    Returns ``(client, cluster)``; ``cluster`` is None when connecting to a scheduler (it is
    not ours to close).
    """
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            return Client(scheduler, timeout="20s"), None
        except (OSError, TimeoutError) as exc:
            raise EngineError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}; "
                              "check the address (tcp://host:port) and that the scheduler runs.") from None
    n = n_workers or os.cpu_count() or 1
    kw: dict[str, Any] = {"n_workers": n, "threads_per_worker": 1, "processes": processes,
                          "dashboard_address": None, "memory_limit": memory_limit or "auto"}
    if processes:
        kw["host"] = "127.0.0.1"
    cluster = LocalCluster(**kw)
    return Client(cluster), cluster


def _compute(client, *collections, progress: bool = False, what: str = ""):
    """Compute on the cluster; a worker's failure comes back as an SDCError with its cause."""
    import dask

    try:
        if progress and client is not None:
            from distributed import progress as show

            futures = client.compute(list(collections))
            print(f"{what}:", flush=True)
            show(futures)
            print(flush=True)
            return tuple(f.result() for f in futures)
        return dask.compute(*collections)
    except SDCError:
        raise
    except Exception as exc:  # noqa: BLE001 - every worker failure is reported the same way
        raise EngineError(f"{what or 'a task'} failed on a worker: {type(exc).__name__}: {exc}") from exc


# --------------------------------------------------------------------------- the run
def protect_with_dask(spec_path: str | os.PathLike, *, scheduler: str | None = None,
                      n_workers: int | None = None, memory_limit: str | int | None = None,
                      categories: Mapping[str, list] | None = None, blocksize: Any = "64MB",
                      progress: bool = True, processes: bool = True,
                      overwrite: bool | None = None, signing_key: Any = None) -> DaskRelease:
    """Run a release spec on a Dask cluster and write the release (a folder of parts).

    Parameters
    ----------
    spec_path : path-like
        The TOML release spec (steps: ``pram``, ``noise``).
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:port``); default a LocalCluster.
    n_workers : int, optional
        Workers of the LocalCluster (default: the cores).
    memory_limit : str or int, optional
        Per-worker memory limit of the LocalCluster (e.g. ``"4GB"``; default: the machine's
        memory shared between the workers).
    categories : dict, optional
        Fixed category lists of key / stratum columns (otherwise collected in one pass).
    progress : bool
        Show a progress bar of each pass's tasks.
    overwrite : bool, optional
        Replace an earlier release in the output folders (default: the spec's
        ``[output] overwrite``).
    signing_key : path-like or private key, optional
        The steward's key that signs the certificates (default: the spec's ``[output]
        signing_key``); see :mod:`sdckit.report.signing`.

    Returns
    -------
    DaskRelease

    Raises
    ------
    SpecError, InputError
        Bad spec or data (before anything runs on the data when possible).
    GateError
        The released data fail the gate: nothing is written.
    EngineError
        A worker failed: the message names the partition and the cause.
    """
    t_all = time.perf_counter()
    spec, step_settings = load_engine_spec(spec_path)
    root, record = seed_sequence(spec.seed)
    step_seeds = root.spawn(len(step_settings)) if step_settings else []
    client, cluster = start_client(scheduler, n_workers=n_workers, memory_limit=memory_limit,
                                   processes=processes)
    seconds: dict[str, float] = {}
    try:
        n_workers_used = len(client.scheduler_info().get("workers", {}))
        t = time.perf_counter()
        roles = {k: v for k, v in spec.roles.items()}
        pmd = read_partitioned(spec.input_path, file_format=spec.input_format,
                               na_values=list(spec.na_values) or None, categories=categories,
                               blocksize=blocksize, **roles,
                               runner=lambda *d: _compute(client, *d, progress=progress, what="scanning the input"))
        seconds["scan"] = time.perf_counter() - t

        # one pass: risk before + the fits whose inputs no earlier step changes
        t = time.perf_counter()
        written: set[str] = set()
        independent = []
        for s in step_settings:
            independent.append(not (_columns_read(s) & written))
            written |= _columns_written(s)
        stats_delayed = [frequency_table(pmd)]
        for s, ind in zip(step_settings, independent):
            if ind:
                stats_delayed.append(_stats(pmd, s))
        stats = list(_compute(client, *stats_delayed, progress=progress, what="frequencies and step statistics"))
        risk_before = risk_from_table(stats.pop(0))
        plans: list = []
        current = pmd
        for i, (s, ind) in enumerate(zip(step_settings, independent)):
            st = stats.pop(0) if ind else _compute(client, _stats(current, s), progress=progress,
                                                   what=f"statistics of step {i}")[0]
            plan = _fit(current, s, st, step_seeds[i])
            plans.append(plan)
            current = _apply(current, plan, step_seeds[i])
        seconds["statistics_and_fit"] = time.perf_counter() - t

        risk_after = None
        gate = []
        if spec.gate:
            t = time.perf_counter()
            table_after = _compute(client, frequency_table(current), progress=progress,
                                   what="risk of the released data")[0]
            risk_after = risk_from_table(table_after, max_global_risk=float(spec.gate.get("max_global_risk", 0.01)))
            gate = [_min_diagonal_gate(value, plans) if name == "min_diagonal" else _gate(name, value, risk_after)
                    for name, value in spec.gate.items()]
            seconds["gate"] = time.perf_counter() - t
            failed = [g for g in gate if not g["passed"]]
            if failed:
                raise GateError("the release failed its gate, nothing was written: "
                                + "; ".join(f"{g['name']} = {g['threshold']}: {g['detail']}" for g in failed))

        t = time.perf_counter()
        run = DaskRelease(spec, risk_before, risk_after, tuple(plans), tuple(gate), {}, seconds,
                          pmd.n_records, pmd.npartitions, n_workers_used,
                          {"root": record.to_dict(), "steps": [list(s.spawn_key) for s in step_seeds]},
                          dict(pmd.categories))
        paths = write_release(run, current,
                              lambda lazy, what: _compute(client, lazy, progress=progress, what=what),
                              entropy=root.entropy, signing_key=signing_key,
                              overwrite=spec.output.overwrite if overwrite is None else overwrite)
        seconds["write"] = time.perf_counter() - t
        seconds["total"] = time.perf_counter() - t_all
        run.paths.update(paths)
        return run
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _stats(pmd: PartitionedMicrodata, s: Any):
    import dask

    if isinstance(s, PramSettings):
        return pram_counts(pmd, s.variables, s.strata)
    if isinstance(s, RowwiseStep):
        values = distinct_values(pmd, s)
        return dask.delayed(None) if values is None else values
    if isinstance(s, GroupedStep):
        return dask.delayed(None)
    return noise_moments(pmd, s.variables, isinstance(s, NoiseSettings) and s.method == "correlated")


def _fit(pmd: PartitionedMicrodata, s: Any, stats: Any, ss: np.random.SeedSequence):
    if isinstance(s, PramSettings):
        return fit_pram(pmd, s, ss, counts=stats)
    if isinstance(s, NoiseSettings):
        return fit_noise(pmd, s, moments=stats)
    if isinstance(s, BlockRankSwap):
        return fit_rank_swap(pmd, s, moments=stats)
    if isinstance(s, BlockMicroaggregation):
        return fit_microaggregation(pmd, s, moments=stats)
    if isinstance(s, RowwiseStep):
        return fit_rowwise(pmd, s, stats)
    return s  # a grouped step needs no fit


def _apply(pmd: PartitionedMicrodata, plan: Any, ss: np.random.SeedSequence) -> PartitionedMicrodata:
    if isinstance(plan, (PramPlan, NoisePlan)):
        return transform(pmd, [plan], [ss])
    if isinstance(plan, RankSwapPlan):
        return rank_swap_partitioned(pmd, plan, ss)
    if isinstance(plan, MicroaggregationPlan):
        return microaggregate_partitioned(pmd, plan)
    if isinstance(plan, RowwisePlan):
        return rowwise_partitioned(pmd, plan)
    return grouped_partitioned(pmd, plan, ss)


def _min_diagonal_gate(threshold: float, plans: Sequence[Any]) -> dict:
    """The in-memory ``min_diagonal`` gate on the fitted PRAM plans: the smallest diagonal
    entry over every matrix of every variable and stratum, read from P."""
    diags = []
    for plan in plans:
        if not isinstance(plan, PramPlan):
            continue
        for var, per_stratum in plan.matrices.items():
            for s, m in enumerate(per_stratum):
                P = m.P if hasattr(m, "P") else np.asarray(m)
                diags.append((var + ("" if len(per_stratum) == 1 else f" | stratum {s}"),
                              float(np.asarray(P.diagonal()).min())))
    from ..pram.steps import min_diagonal_verdict

    value, passed, detail = min_diagonal_verdict(diags, threshold)
    return {"name": "min_diagonal", "threshold": threshold, "value": value, "passed": bool(passed),
            "detail": detail}


def _gate(name: str, threshold: Any, risk: PartitionedRisk) -> dict:
    s = risk.summary
    if name == "k_anonymity":
        value = s["k_reached"]
        passed = value >= threshold
        detail = f"smallest f_k is {value}" + ("" if passed else f"; {int(risk.table.counts[risk.fk < threshold].sum())} records have f_k < {threshold}")
    elif name == "max_global_risk":
        value = s["global_risk"]
        passed = value <= threshold
        detail = f"global risk {value:.6g}"
    else:
        value = s["max_individual_risk"]
        passed = value <= threshold
        detail = f"largest individual risk {value:.6g}"
    return {"name": name, "threshold": threshold, "value": value, "passed": bool(passed), "detail": detail}
