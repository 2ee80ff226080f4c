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

The engine is a protocol on steps and gate checks, not a list: a step registered with
``engines=("memory", "dask")`` declares its partitioned plan on itself (``dask_plan(roles)``,
a :class:`sdckit.registry.DaskPlan`: the kernel of :mod:`sdckit.engine.kernels` that runs it
and the columns it reads and writes), and a gate check so registered declares the merged
summary it reads (``dask_summary``) and its ``finish(summary)``. Steps run through the one
step runner's partitioned form (:func:`sdckit.runner.run_partitioned`: step i draws from child
i of the run's seed, as in memory). A step that changes scope here says so in its section of
the report (``scope``). Every other registered step is refused with the reason its
registration gives (``dask_note``). The public report is the in-memory engine's template
(:func:`sdckit.report.release.outcome_report_html`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import GateError, SDCError, SpecError
from ..result import jsonable
from ..spec import ReleaseSpec, read_spec_file, spec_from_dict
from .frame import read_partitioned
from .kernels import GATE_SUMMARIES, EngineStep, Fitted, gate_protocol_problems, step_protocol_problems
from .output import write_release
from .risk import PartitionedRisk, frequency_table, risk_from_table


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
    #: each step's public summary (its report section), in order
    summaries: tuple = ()
    #: the released columns
    columns: tuple = ()

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

    @property
    def verdict_text(self) -> str:
        """The verdict in words: "Passed: ...", "FAILED: ..." or "NOT CHECKED: <reason>"."""
        from ..report.narrative import verdict_words
        return verdict_words(self)[1]

    def public_dict(self) -> dict:
        """Everything the public report says, as data (no seed)."""
        from ..report.narrative import verdict_words
        return jsonable({"verdict": verdict_words(self)[0], "verdict_text": verdict_words(self)[1],
            "engine": "dask", "n_records": self.n_records, "n_partitions": self.n_partitions,
            "n_workers": self.n_workers,
            "risk_before": self.risk_before.summary,
            "risk_after": None if self.risk_after is None else self.risk_after.summary,
            "steps": list(self.summaries),
            "gate": list(self.gate), "passed": self.passed,
        })

    def summary_dict(self) -> dict:
        """What ``sdckit protect --engine dask --json`` prints: stable keys, no seed."""
        r = self.risk_before.summary
        return jsonable({"engine": "dask", "n_records": self.n_records, "n_partitions": self.n_partitions,
                         "n_workers": self.n_workers, "passed": self.verdict == "passed",
                         "verdict": self.public_dict()["verdict_text"],
                         "steps": [d["method"] for d in self.summaries],
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
        for d in self.summaries:
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


# --------------------------------------------------------------------------- spec
def load_engine_spec(spec_path: str | os.PathLike) -> tuple[ReleaseSpec, list[EngineStep]]:
    """Read a release spec for the Dask engine: sections checked by the spec module, steps by
    their own declarations (a step runs here when it claims the engine and declares its
    partitioned plan, :meth:`dask_plan`)."""
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
    if spec.ddi is not None:
        raise SpecError(f"{path}: input.ddi: the Dask engine does not read a DDI-Codebook (its labels, "
                        "missing codes and roles); run this spec with the in-memory engine, or give "
                        "the roles in [roles] and the missing codes in [input] na_values")
    # the gate was built by the checks' own constructors (spec_from_dict); here only which
    # of them this engine runs (and, after the steps, the rule that a release needs a risk
    # threshold)
    for check in spec.gate.checks:
        if "dask" not in type(check).engines or gate_protocol_problems(type(check)):
            raise SpecError(f"{path}: gate.{check.gate_name}: not checked by the Dask engine; it checks "
                            f"{', '.join(engine_gates())}. Run this spec with the in-memory engine.")
    from ..registry import build_step, discover, step_class

    discover()
    roles = dict(spec.roles)
    out, steps = [], []
    for i, step in enumerate(steps_raw):
        where = f"{path}: steps[{i}]"
        if not isinstance(step, dict) or "method" not in step:
            raise SpecError(f"{where}.method: is required (the step's method name)")
        method = step["method"]
        # the in-memory step's own names, defaults and validation
        cls = step_class(str(method), where=f"{where}.method")
        if "dask" not in cls.engines or step_protocol_problems(cls):
            why = cls.dask_note or "it declares no Dask implementation"
            raise SpecError(f"{where}.method: {method!r} does not run on the Dask engine: {why}. "
                            f"The Dask engine runs {', '.join(dask_steps())}. Run this spec with the "
                            "in-memory engine, or split the release.")
        params = {k: v for k, v in step.items() if k != "method"}
        for key, value in list(params.items()):
            if key.endswith("file") and isinstance(value, str):
                params[key] = str((path.parent / value).resolve())
        built = build_step(method, params, where=where)
        try:
            plan = built.dask_plan(roles)  # the step's own partitioned plan
            from .kernels import KERNELS

            out.append(EngineStep(built, plan, KERNELS[plan.kernel].settings(built, plan, roles)))
        except SpecError as exc:
            msg = str(exc)
            if "memory engine" not in msg:        # every refusal says where the step does run
                msg = f"{msg.rstrip('.')}; or run this {method} step with the in-memory engine."
            raise SpecError(f"{where}.{msg}") from None
        steps.append(built)
    try:
        spec.gate.require_threshold()
        spec.gate.check_plan(steps)
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None
    return spec, out


def dask_gates() -> list[str]:
    """The registered gate checks that declare they run on the Dask engine."""
    from ..registry import gate_check_class, known_gate_checks

    return [name for name in known_gate_checks() if "dask" in gate_check_class(name).engines]


def dask_steps() -> list[str]:
    """The registered steps that declare they run on the Dask engine."""
    from ..registry import known_steps, step_class

    return [name for name in known_steps() if "dask" in step_class(name).engines]


def engine_gates() -> list[str]:
    """The gate checks that claim the engine and implement its protocol."""
    from ..registry import gate_check_class

    return [n for n in dask_gates() if not gate_protocol_problems(gate_check_class(n))]


def engine_steps() -> list[str]:
    """The steps that claim the engine and implement its protocol."""
    from ..registry import step_class

    return [n for n in dask_steps() if not step_protocol_problems(step_class(n))]


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
    spec, engine_steps_ = load_engine_spec(spec_path)
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

        # one pass: risk before + the statistics of the steps whose inputs (their declared
        # reads) no earlier step writes
        t = time.perf_counter()
        written: set[str] = set()
        independent = []
        for es in engine_steps_:
            independent.append(not (set(es.plan.reads) & written))
            written |= set(es.plan.writes)
        stats_delayed = [frequency_table(pmd)]
        stats_delayed += [es.kernel.stats(pmd, es.settings) for es, ind in zip(engine_steps_, independent) if ind]
        stats = list(_compute(client, *stats_delayed, progress=progress, what="frequencies and step statistics"))
        risk_before = risk_from_table(stats.pop(0))
        first_pass = {i: stats.pop(0) for i, ind in enumerate(independent) if ind}

        def execute(i: int, es: EngineStep, current: Any, stream: Any) -> tuple[Fitted, Any]:
            st = first_pass[i] if i in first_pass else _compute(
                client, es.kernel.stats(current, es.settings), progress=progress, what=f"statistics of step {i}")[0]
            fitted = es.kernel.fit(current, es.settings, st, stream)
            return Fitted(fitted, es.kernel.summary(fitted)), es.kernel.apply(current, fitted, stream)

        # the one runner's partitioned form: step i draws from child i of the run's seed
        from ..runner import run_partitioned

        done = run_partitioned(pmd, engine_steps_, spec.seed, execute=execute)
        current = done.data
        plans = [f.plan for f in done.plans]
        seconds["statistics_and_fit"] = time.perf_counter() - t

        risk_after = None
        gate = []
        if spec.gate:
            t = time.perf_counter()
            table_after = _compute(client, frequency_table(current, max_global_risk=float(spec.gate.get("max_global_risk", 0.01))), progress=progress,
                                   what="risk of the released data")[0]
            risk_after = risk_from_table(table_after, max_global_risk=float(spec.gate.get("max_global_risk", 0.01)))
            # each check's partitioned form: finish(the merged summary it declares)
            gate = [c.finish(GATE_SUMMARIES[type(c).dask_summary](risk_after, plans)).to_dict()
                    for c in spec.gate.checks]
            seconds["gate"] = time.perf_counter() - t
            failed = [g for g in gate if not g["passed"]]
            if failed:
                raise GateError("the release failed its gate, nothing was written: "
                                + "; ".join(f"{g['name']} = {g['threshold']}: {g['detail']}" for g in failed))

        t = time.perf_counter()
        record = done.seeds.root
        run = DaskRelease(spec, risk_before, risk_after, tuple(plans), tuple(gate), {}, seconds,
                          pmd.n_records, pmd.npartitions, n_workers_used,
                          {"root": record.to_dict(), "steps": [list(s.spawn_key) for s in done.streams]},
                          dict(pmd.categories), tuple(f.summary for f in done.plans),
                          tuple(str(c) for c in current.frame.columns))
        paths = write_release(run, current,
                              lambda lazy, what: _compute(client, lazy, progress=progress, what=what),
                              entropy=done.root.entropy, signing_key=signing_key,
                              overwrite=spec.output.overwrite if overwrite is None else overwrite)
        seconds["write"] = time.perf_counter() - t
        seconds["total"] = time.perf_counter() - t_all
        run.paths.update(paths)
        return run
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
