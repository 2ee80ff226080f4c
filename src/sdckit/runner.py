"""The one step runner: steps applied in order, each with its own child random stream.

Every client that runs release steps goes through this module: :meth:`sdckit.release.Release.run`,
the workbench's preview (:meth:`sdckit.app.session.Session.preview`), the explore sweep
(:mod:`sdckit.explore.sweep`) and the Dask engine (:func:`run_partitioned`, through the
steps' partitioned plans). It owns

* the **seed-per-step rule**: the run's root ``SeedSequence`` comes from ``rng``
  (:func:`sdckit._random.seed_sequence`: an int, a SeedSequence, or None for OS entropy, which
  is recorded) and step i draws from its child i, ``root.spawn(n)[i]`` (NumPy's
  ``SeedSequence.spawn``: independent streams whatever the other steps draw). The same seed
  therefore gives the same rows in memory and on the Dask engine;
* the **secret seed record** (:class:`sdckit._random.RunSeeds`: the root entropy and each
  step's spawn key; it belongs in internal outputs only);
* the per-step results, the data after each step and each step's seconds;
* the **cache of step prefixes** (:class:`StepCache`): a step already run on the same input
  object, with the same root seed, at the same position and after the same earlier steps, is
  not run again (the workbench's preview re-runs only from the first changed step);
* progress callbacks (``on_step``).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ._random import RunSeeds, SeedRecord, seed_sequence
from .microdata import Microdata
from .result import StepResult

__all__ = ["PartitionedRun", "ReleaseOutcome", "StepCache", "StepsRun", "child_record",
           "run_partitioned", "run_steps", "step_seeds"]


def step_seeds(rng: Any, n_steps: int) -> tuple[np.random.SeedSequence, SeedRecord,
                                                 list[np.random.SeedSequence]]:
    """The seed-per-step rule: the run's root, its secret record and step i's stream (child i)."""
    root, record = seed_sequence(rng)
    return root, record, (root.spawn(n_steps) if n_steps else [])


def child_record(root: SeedRecord, child: np.random.SeedSequence) -> SeedRecord:
    """The secret record of one step's stream: the root's entropy and the child's spawn key."""
    return SeedRecord(root.entropy, tuple(child.spawn_key), root.source)


class StepCache:
    """Results of step prefixes, least recently used first out (thread-safe).

    A key is (the input Microdata's identity, the step's stream: its entropy and spawn key,
    the ``repr`` of every step up to it); an entry also holds the input object itself, so a
    recycled ``id`` can never return another input's result.
    """

    def __init__(self, maxsize: int = 64) -> None:
        self.maxsize = int(maxsize)
        self._items: OrderedDict[tuple, tuple[Microdata, StepResult]] = OrderedDict()
        self._lock = threading.RLock()

    def get(self, key: tuple, microdata: Microdata) -> StepResult | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is None or hit[0] is not microdata:
                return None
            self._items.move_to_end(key)
            return hit[1]

    def put(self, key: tuple, microdata: Microdata, result: StepResult) -> None:
        with self._lock:
            self._items[key] = (microdata, result)
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def discard_longer_than(self, n_steps: int) -> None:
        """Drop the results of prefixes of more than ``n_steps`` steps (keep the first
        ``n_steps`` steps' results, as they stand before a step is added after them)."""
        with self._lock:
            for key in [k for k in self._items if len(k[-1]) > n_steps]:
                del self._items[key]

    def __len__(self) -> int:
        return len(self._items)


@dataclass(frozen=True)
class StepsRun:
    """What :func:`run_steps` did: each step's result, the data before step 0 and after each
    step, each step's seconds, whether it came from the cache, and the secret seed record."""

    results: tuple[StepResult, ...]
    datas: tuple[Microdata, ...]
    seeds: RunSeeds
    timings: tuple[float, ...]
    cached: tuple[bool, ...]

    @property
    def released(self) -> Microdata:
        """The data after the last step (the input when there is none)."""
        return self.datas[-1]


def _step_key(step: Any) -> str:
    return f"{type(step).__module__}.{type(step).__qualname__}:{step!r}"


def run_steps(microdata: Microdata, steps: Sequence[Any], rng: Any, *, cache: StepCache | None = None,
              on_step: Callable[[int, Any, StepResult, float], None] | None = None) -> StepsRun:
    """Apply ``steps`` in order to ``microdata``; step i gets child i of the run's root seed.

    Parameters
    ----------
    microdata : Microdata
        The input (never modified).
    steps : sequence of steps
        Each has ``apply(microdata, *, rng) -> StepResult``.
    rng : int, SeedSequence or None
        The run's root seed (None: OS entropy, recorded in the returned seed record).
    cache : StepCache, optional
        Reuse the results of unchanged step prefixes on the same input object and root seed.
    on_step : callable, optional
        ``on_step(i, step, result, seconds)`` after each step (a cached step reports 0.0 s);
        an exception it raises stops the run (a client's own rule about a step's result).

    Returns
    -------
    StepsRun
        A step's own exception propagates; ``on_step`` has then seen every step before it.
    """
    steps = tuple(steps)
    root, record, children = step_seeds(rng, len(steps))
    seeds = RunSeeds(record)
    results: list[StepResult] = []
    datas: list[Microdata] = [microdata]
    timings: list[float] = []
    cached: list[bool] = []
    current = microdata
    prefix: list[str] = []
    for i, (step, child) in enumerate(zip(steps, children)):
        prefix.append(_step_key(step))
        # the child's entropy and spawn key name the stream exactly (root, position, earlier spawns)
        key = (id(microdata), repr(child.entropy), tuple(child.spawn_key), tuple(prefix)) \
            if cache is not None else None
        result = cache.get(key, microdata) if cache is not None else None
        hit = result is not None
        t0 = time.perf_counter()
        if result is None:
            result = step.apply(current, rng=child)
        seconds = 0.0 if hit else time.perf_counter() - t0
        if cache is not None and not hit:
            cache.put(key, microdata, result)
        seeds.steps.append(child_record(record, child))
        timings.append(seconds)
        cached.append(hit)
        if on_step is not None:
            on_step(i, step, result, seconds)
        results.append(result)
        current = result.microdata
        datas.append(current)
    return StepsRun(tuple(results), tuple(datas), seeds, tuple(timings), tuple(cached))


@dataclass(frozen=True)
class PartitionedRun:
    """What :func:`run_partitioned` did: each step's fitted plan, the (lazy) data after the
    last step, the secret seed record, each step's seconds and each step's stream."""

    plans: tuple
    data: Any
    seeds: RunSeeds
    timings: tuple[float, ...]
    streams: tuple[np.random.SeedSequence, ...]
    root: np.random.SeedSequence


def run_partitioned(data: Any, steps: Sequence[Any], rng: Any, *,
                    execute: Callable[[int, Any, Any, np.random.SeedSequence], tuple[Any, Any]],
                    on_step: Callable[[int, Any, Any, float], None] | None = None) -> PartitionedRun:
    """The partitioned form of :func:`run_steps`, with the same seed-per-step rule.

    ``execute(i, step, data, stream) -> (plan, data after)`` runs step i on partitioned data
    with its stream (child i of the root): the Dask engine fits the step's partitioned plan
    and applies it lazily. ``on_step(i, step, plan, seconds)`` follows each step.
    """
    steps = tuple(steps)
    root, record, children = step_seeds(rng, len(steps))
    seeds = RunSeeds(record)
    plans, timings = [], []
    current = data
    for i, (step, child) in enumerate(zip(steps, children)):
        t0 = time.perf_counter()
        plan, current = execute(i, step, current, child)
        seconds = time.perf_counter() - t0
        seeds.steps.append(child_record(record, child))
        plans.append(plan)
        timings.append(seconds)
        if on_step is not None:
            on_step(i, step, plan, seconds)
    return PartitionedRun(tuple(plans), current, seeds, tuple(timings), tuple(children), root)


@runtime_checkable
class ReleaseOutcome(Protocol):
    """What every run of a release gives, in memory (:class:`sdckit.release.ReleaseRun`) or on
    the Dask engine (:class:`sdckit.engine.run.DaskRelease`): the gate's outcomes, the verdict
    in words, the public and internal data, and the report's context for the one public-report
    template (:func:`sdckit.report.release.outcome_report_html`)."""

    gate: tuple
    not_checked: str | None

    @property
    def passed(self) -> bool: ...

    @property
    def verdict(self) -> str: ...

    @property
    def verdict_text(self) -> str: ...

    def public_dict(self) -> dict: ...

    def internal_dict(self) -> dict: ...
