"""Release: run the steps of a spec in order, apply the gate, write data and reports.

A release that fails its gate is not written: :meth:`ReleaseRun.write` raises
:class:`~sdckit.GateError` naming each failed threshold and by how much. The public report
never holds a seed; the internal report holds the seeds and every step's parameters.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._random import RunSeeds, seed_sequence
from .errors import GateError, InputError, SDCError
from .gate import run_gate
from .io.atomic import atomic_write_text
from .io.files import read_microdata, write_data
from .microdata import Microdata
from .progress import start as progress_task
from .registry import GateOutcome
from .result import StepResult, jsonable
from .spec import OutputSpec, ReleaseSpec, load_spec


#: the row-order stream: the child of the run's root seed that no step uses (the Dask engine
#: shuffles partition i by its child (ROW_ORDER_KEY, i))
ROW_ORDER_KEY = 2**31 - 1


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
            "disclosure": self.disclosure(),
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

    def disclosure(self) -> dict:
        """Checks beyond the declared keys, for the reports (no seed, no path).

        ``identifiers``: released columns that look like direct identifiers (with the gate's
        allowed list); ``linkage_all_columns``: sample uniques and expected correct exact-match
        links for an intruder who knows every released column, before and after the steps;
        ``undeclared_scan``: the ten non-key columns that add most uniques to the keys.
        """
        return self._disclosure

    @functools.cached_property
    def _disclosure(self) -> dict:
        # computed once per run: the public dict, the report and the certificate all read it
        from .risk.identifiers import identifier_check, linkage_all_columns, undeclared_scan

        allow = ()
        for o in self.gate:
            if o.name == "allow_identifiers":
                allow = tuple(o.threshold or ())
        return jsonable({
            "identifiers": identifier_check(self.original, self.released, allow=allow),
            "linkage_all_columns": {
                # before: the same columns as released, in the original data
                "before": linkage_all_columns(self.original, self.original,
                                              [c for c in self.released.columns if c in self.original.columns]),
                "after": linkage_all_columns(self.original, self.released,
                                             recodes=[s for s in self.steps if getattr(s, "global_recode", False)])},
            "undeclared_scan": undeclared_scan(self.released, top=10),
        })

    def row_order(self, keep_order: bool = False) -> np.ndarray:
        """The permutation applied to the released rows (released row i is input row perm[i]).

        Shuffled by default, from its own child stream of the run's seed, so that nobody who has
        seen the input file's order can link records back by position; ``keep_order`` keeps it.
        """
        n = self.released.n_records
        if keep_order:
            return np.arange(n)
        ent = self.seeds.root.entropy
        # the row-order stream: a child of the run's root that no step uses
        ss = np.random.SeedSequence(ent, spawn_key=(ROW_ORDER_KEY,)) if ent is not None else np.random.SeedSequence()
        return np.random.default_rng(ss).permutation(n)

    def write(self, output: OutputSpec | str | os.PathLike, *, data_name: str | None = None,
              extra_sections: list[tuple[str, str]] | None = None, overwrite: bool | None = None,
              keep_order: bool | None = None,
              internal_trees: dict[str, Path] | None = None) -> dict[str, Path]:
        """Write the release: public folder (data, published matrices, public report,
        certificate) and internal folder (internal reports, seeds, row order), each switched in
        whole.

        Both folders are written into staging folders beside their targets and switched in with
        one rename each (internal first, then public), so a kill at any moment leaves whole
        folders of one run. An existing release is replaced only with ``overwrite``.
        ``extra_sections`` are (title, HTML) pairs appended to the public report;
        ``internal_trees`` ({name: folder}) are copied into the internal folder (e.g. the
        sweep behind the release, whose runs table holds seeds), without their caches.

        Raises
        ------
        GateError
            If any gate threshold failed; then nothing is written.
        InputError
            If a target is an input file, the folder is not writable, or a release is already
            there without ``overwrite``.
        """
        from .io.atomic import guard_target, staged_folder

        if not self.passed:
            lines = "; ".join(f"{o.name} = {o.threshold}: {o.detail}" for o in self.failures())
            raise GateError(f"the release failed its gate, nothing was written: {lines}")
        if not isinstance(output, OutputSpec):
            output = OutputSpec(Path(output), data=data_name or "released.csv")
        overwrite = output.overwrite if overwrite is None else overwrite
        keep_order = output.keep_order if keep_order is None else keep_order
        out_dir, int_dir = release_folders(output)
        inputs = tuple(p for p in (self.original.meta.source,) if p)
        if self.released.n_records != self.original.n_records:
            raise SDCError(f"row count changed from {self.original.n_records} to "
                           f"{self.released.n_records}; nothing was written.")
        artifacts = {name: text for r in self.results for name, text in r.artifacts.items()}
        names = {output.data, output.report, "certificate.json", *artifacts}
        if len(names) != 3 + len(artifacts):
            raise InputError(f"output: the file names {sorted(names)} collide; rename the data or report file.")
        final = {"data": out_dir / output.data, "report": out_dir / output.report,
                 "internal_report": int_dir / output.internal_report,
                 "internal_json": int_dir / (Path(output.internal_report).stem + ".json")}
        for name in artifacts:
            final[f"artifact:{name}"] = out_dir / name
        for path in final.values():
            guard_target(path, inputs)
        refuse_inputs_inside(inputs, out_dir, int_dir)
        perm = self.row_order(keep_order)
        # the released records in their published order (a plain frame: nothing to re-encode)
        released = self.released.frame.iloc[perm].reset_index(drop=True)
        from .report.certificate import write_certificates
        from .report.release import internal_report_html, public_report_html

        internal = self.internal_dict()
        internal["row_order"] = {"shuffled": not keep_order,
                                 "file": None if keep_order else "row_order.csv",
                                 "rule": "released row i is input row row_order[i] (0-based)"}
        internal["output"] = {"public_folder": out_dir.name, "internal_folder": int_dir.name,
                              "data_file": output.data}
        with staged_folder(out_dir, overwrite=overwrite) as pub, \
                staged_folder(int_dir, overwrite=overwrite) as intl:
            # SPSS/Stata delivery: value labels only where the categories are still the original
            # ones; names the format refuses are legalised and the mapping published
            from .io.labels import delivery_meta, write_column_names
            data_path = write_data(released, pub / output.data, inputs=inputs,
                                   meta=delivery_meta(self.original, self.released, self.results))
            write_column_names([str(c) for c in released.columns], data_path)
            for name, text in artifacts.items():
                atomic_write_text(pub / name, text)
            atomic_write_text(pub / output.report,
                              public_report_html(self, data_file=output.data, artifacts=sorted(artifacts),
                                                 extra_sections=extra_sections))
            certs = write_certificates(self, pub, data_file=output.data, report_file=output.report)
            if "internal_certificate" in certs:
                moved = intl / Path(certs["internal_certificate"]).name
                os.replace(certs["internal_certificate"], moved)
            atomic_write_text(intl / output.internal_report, internal_report_html(self, data_file=output.data))
            atomic_write_text(intl / final["internal_json"].name, json.dumps(internal, indent=2))
            for name, tree in (internal_trees or {}).items():
                import shutil

                shutil.copytree(tree, intl / name, ignore=shutil.ignore_patterns("cache", "cache_internal"))
            if not keep_order:
                atomic_write_text(intl / "row_order.csv",
                                  "released_row,input_row\n" + "".join(f"{i},{j}\n" for i, j in enumerate(perm)))
        targets = dict(final)
        for key, path in certs.items():
            targets[key] = (int_dir if key == "internal_certificate" else out_dir) / Path(path).name
        targets["internal_directory"] = int_dir
        return targets


def release_folders(output: OutputSpec) -> tuple[Path, Path]:
    """The public folder of a release and its internal sibling (``<name>-internal`` unless
    ``output.internal_directory`` names one), refused when the internal folder is the public
    one or inside it (the seeds would be published). Both engines write through it."""
    out_dir = Path(output.directory)
    if not out_dir.name:  # "." or "/": name the folder itself (the internal one is its sibling)
        out_dir = out_dir.resolve()
    int_dir = Path(output.internal_directory) if output.internal_directory else \
        out_dir.with_name(out_dir.name + "-internal")
    if int_dir.resolve() == out_dir.resolve() or out_dir.resolve() in int_dir.resolve().parents:
        raise InputError(f"output.internal_directory: {int_dir} must not be the public folder "
                         f"{out_dir} or inside it (seeds would be published); choose a sibling.")
    return out_dir, int_dir


def refuse_inputs_inside(inputs, *folders: Path) -> None:
    """Refuse output folders that hold an input (file or folder of parts): a release replaces
    its folders whole."""
    for src in inputs:
        s = Path(src).resolve()
        for d in folders:
            if d.resolve() == s or d.resolve() in s.parents:
                raise InputError(f"{d}: the input {Path(src).name} is inside this output folder, "
                                 "which a release replaces whole; choose another output folder.")


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
        bar = progress_task("release steps", total=len(self.steps))  # a bar on a terminal, events for listeners
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
            bar.advance()
        bar.close()
        outcomes = run_gate(self.gate, self.microdata, current, results)
        return ReleaseRun(self.microdata, current, tuple(results), tuple(outcomes), seeds,
                          time.perf_counter() - t0, self.spec, tuple(timings), self.steps)


def _child_record(root, child: np.random.SeedSequence):
    from ._random import SeedRecord

    return SeedRecord(root.entropy, tuple(child.spawn_key), root.source)


def protect(spec_path: str | os.PathLike, *, overwrite: bool | None = None) -> tuple[ReleaseRun, dict[str, Path]]:
    """Run a release spec end to end: read, mask, gate, write. Returns the run and paths.

    ``overwrite`` (default: the spec's ``[output] overwrite``) replaces an earlier release.
    The output folders are checked before any work, so a run that cannot be written stops at
    once.
    """
    from .io.atomic import check_writable_folder

    spec = load_spec(spec_path)
    check_writable_folder(spec.output.directory)
    run = Release.from_spec(spec).run()
    paths = run.write(spec.output, overwrite=overwrite)
    return run, paths
