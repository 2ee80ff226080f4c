"""Release: run the steps of a spec in order, apply the gate, write data and reports.

A release that fails its gate is not written: :meth:`ReleaseRun.write` raises
:class:`~sdckit.GateError` naming each failed threshold and by how much. The public report
never holds a seed; the internal report holds the seeds and every step's parameters.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._random import RunSeeds, seed_sequence
from .errors import GateError, SDCError
from .gate import run_gate
from .io.atomic import atomic_write_text, refuse_overwrite
from .io.files import read_microdata, write_data
from .microdata import Microdata
from .registry import GateOutcome
from .result import StepResult, jsonable
from .spec import OutputSpec, ReleaseSpec, load_spec


@dataclass(frozen=True)
class ReleaseRun:
    """The outcome of running a release: every step's result and the gate's verdict."""

    original: Microdata
    released: Microdata
    results: tuple[StepResult, ...]
    gate: tuple[GateOutcome, ...]
    seeds: RunSeeds
    seconds: float
    spec: ReleaseSpec | None = None
    timings: tuple[float, ...] = field(default_factory=tuple)
    steps: tuple = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.gate)

    def failures(self) -> list[GateOutcome]:
        return [o for o in self.gate if not o.passed]

    def public_dict(self) -> dict:
        """Everything the public report says, as data (no seed)."""
        return jsonable({
            "data": {"n_records": self.released.n_records,
                     "n_columns": len(self.released.columns),
                     "roles": self.released.to_dict()["roles"]},
            "steps": [r.to_dict() for r in self.results],
            "gate": [o.to_dict() for o in self.gate],
            "passed": self.passed,
        })

    def internal_dict(self) -> dict:
        """The internal report's data: the public part plus input, parameters and seeds."""
        d = self.public_dict()
        d["input"] = self.original.meta.source
        d["seeds"] = self.seeds.to_dict()
        d["step_parameters"] = [r.params for r in self.results]
        d["step_seconds"] = list(self.timings)
        if self.spec is not None:
            d["spec_file"] = self.spec.source
        return jsonable(d)

    def write(self, output: OutputSpec | str | os.PathLike, *, data_name: str | None = None,
              extra_sections: list[tuple[str, str]] | None = None) -> dict[str, Path]:
        """Write the released data, the published artifacts and both reports.

        ``extra_sections`` are (title, HTML) pairs appended to the public report (e.g. the R-U
        map of the sweep that chose this release).

        Raises
        ------
        GateError
            If any gate threshold failed; then nothing is written.
        """
        if not self.passed:
            lines = "; ".join(f"{o.name} = {o.threshold}: {o.detail}" for o in self.failures())
            raise GateError(f"the release failed its gate, nothing was written: {lines}")
        if not isinstance(output, OutputSpec):
            output = OutputSpec(Path(output), data=data_name or "released.csv")
        out_dir = Path(output.directory)
        inputs = (self.original.meta.source,)
        targets = {"data": out_dir / output.data, "report": out_dir / output.report,
                   "internal_report": out_dir / output.internal_report,
                   "internal_json": out_dir / (Path(output.internal_report).stem + ".json")}
        artifacts = {name: text for r in self.results for name, text in r.artifacts.items()}
        for name in artifacts:
            targets[f"artifact:{name}"] = out_dir / name
        for path in targets.values():
            refuse_overwrite(path, inputs)
        if self.released.n_records != self.original.n_records:
            raise SDCError(f"row count changed from {self.original.n_records} to "
                           f"{self.released.n_records}; nothing was written.")
        out_dir.mkdir(parents=True, exist_ok=True)
        write_data(self.released, targets["data"], inputs=inputs)
        for name, text in artifacts.items():
            atomic_write_text(targets[f"artifact:{name}"], text)
        from .report.release import internal_report_html, public_report_html

        atomic_write_text(targets["report"], public_report_html(self, data_file=output.data,
                                                                artifacts=sorted(artifacts),
                                                                extra_sections=extra_sections))
        atomic_write_text(targets["internal_report"], internal_report_html(self))
        atomic_write_text(targets["internal_json"], json.dumps(self.internal_dict(), indent=2))
        return targets


class Release:
    """A release plan: the original Microdata, the steps to apply in order, the gate.

    Parameters
    ----------
    microdata : Microdata
        The original data (never modified).
    steps : sequence of step objects
        Each has ``apply(microdata, *, rng=None) -> StepResult``.
    gate : dict, optional
        ``{threshold name: value}``, e.g. ``{"k_anonymity": 3}``.
    rng : int, SeedSequence or None
        Root of the run's randomness; each step gets its own child stream.
    """

    def __init__(self, microdata: Microdata, steps: Sequence[Any] = (), gate: dict | None = None,
                 *, rng: Any = None, spec: ReleaseSpec | None = None) -> None:
        self.microdata = microdata
        self.steps = tuple(steps)
        self.gate = dict(gate or {})
        self.rng = rng
        self.spec = spec

    @classmethod
    def from_spec(cls, spec: ReleaseSpec | str | os.PathLike) -> "Release":
        """Read the spec's input with its roles and build the release."""
        if not isinstance(spec, ReleaseSpec):
            spec = load_spec(spec)
        md = read_microdata(spec.input_path, file_format=spec.input_format,
                            na_values=list(spec.na_values) or None, **spec.roles)
        return cls(md, spec.steps, spec.gate, rng=spec.seed, spec=spec)

    def run(self) -> ReleaseRun:
        """Apply every step in order, check row counts after each, then check the gate."""
        t0 = time.perf_counter()
        root, record = seed_sequence(self.rng)
        children = root.spawn(len(self.steps)) if self.steps else []
        seeds = RunSeeds(record)
        results: list[StepResult] = []
        timings: list[float] = []
        current = self.microdata
        for i, (step, child) in enumerate(zip(self.steps, children)):
            ts = time.perf_counter()
            result = step.apply(current, rng=child)
            timings.append(time.perf_counter() - ts)
            seeds.steps.append(_child_record(record, child))
            if result.microdata.n_records != current.n_records:
                raise SDCError(f"step {i} ({result.method}) changed the number of records from "
                               f"{current.n_records} to {result.microdata.n_records}.")
            results.append(result)
            current = result.microdata
        outcomes = run_gate(self.gate, self.microdata, current, results)
        return ReleaseRun(self.microdata, current, tuple(results), tuple(outcomes), seeds,
                          time.perf_counter() - t0, self.spec, tuple(timings), self.steps)


def _child_record(root, child: np.random.SeedSequence):
    from ._random import SeedRecord

    return SeedRecord(root.entropy, tuple(child.spawn_key), root.source)


def protect(spec_path: str | os.PathLike) -> tuple[ReleaseRun, dict[str, Path]]:
    """Run a release spec end to end: read, mask, gate, write. Returns the run and paths."""
    spec = load_spec(spec_path)
    run = Release.from_spec(spec).run()
    paths = run.write(spec.output)
    return run, paths
