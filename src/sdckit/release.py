"""Release: run the steps of a spec in order, apply the gate, write data and reports.

A release that fails its gate is not written: :meth:`ReleaseRun.write` raises
:class:`~sdckit.GateError` naming each failed threshold and by how much. The public report
never holds a seed; the internal report holds the seeds and every step's parameters.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._random import RunSeeds
from .errors import GateError, InputError, SDCError, SpecError
from .io.atomic import atomic_write_text
from .io.files import read_microdata, write_data
from .microdata import Microdata
from .progress import start as progress_task
from .registry import GateOutcome
from .result import ResultDisplay, StepResult, jsonable
from .spec import OutputSpec, ReleaseSpec, load_spec

#: the row-order stream: the child of the run's root seed that no step uses (the Dask engine
#: shuffles partition i by its child (ROW_ORDER_KEY, i))
ROW_ORDER_KEY = 2**31 - 1


@dataclass(frozen=True)
class ReleaseRun(ResultDisplay):
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
    #: the stated reason when the release has no risk threshold on purpose ([gate] none)
    not_checked: str | None = None

    _headline = ("verdict", "n_records", "n_steps", "n_checks", "n_failed", "seconds")

    @property
    def n_records(self) -> int:
        """Records released."""
        return self.released.n_records

    @property
    def n_steps(self) -> int:
        return len(self.results)

    @property
    def n_checks(self) -> int:
        """Gate checks run."""
        return len(self.gate)

    @property
    def n_failed(self) -> int:
        """Gate checks that failed."""
        return len(self.failures())

    def describe(self) -> dict:
        """The headline figures (verdict, records, steps, gate checks run and failed, seconds)."""
        return {**super().describe(), "verdict_text": self.verdict_text}

    def to_dict(self) -> dict:
        """The public description (:meth:`public_dict`: no seed, no path)."""
        return self.public_dict()

    def _short_table(self) -> str:
        """The gate's checks, in the report's words."""
        import html

        rows = "".join(f"<tr><td>{html.escape(o.name)}</td><td>{'passed' if o.passed else 'FAILED'}</td>"
                       f"<td>{html.escape(o.detail)}</td></tr>" for o in self.gate)
        return (f"<p>{html.escape(self.verdict_text)}</p>"
                + (f"<table class='freq'><tr><th>check</th><th>result</th><th>detail</th></tr>{rows}</table>"
                   if rows else ""))

    @property
    def passed(self) -> bool:
        """No check of the gate failed, so the release may be written. This is not a pass
        of a risk threshold: read :attr:`verdict` ("not checked" when the gate has none)."""
        return all(o.passed for o in self.gate)

    @property
    def verdict(self) -> str:
        """``"failed"`` when a check failed, ``"not checked"`` when the release has no risk
        threshold on purpose (:attr:`not_checked` says why), else ``"passed"``."""
        if not self.passed:
            return "failed"
        return "not checked" if self.not_checked is not None else "passed"

    @property
    def verdict_text(self) -> str:
        """The verdict in words: "Passed: ...", "FAILED: ..." or "NOT CHECKED: <reason>"."""
        if self.verdict == "failed":
            return "FAILED: the release did not meet its gate"
        if self.verdict == "not checked":
            return f"NOT CHECKED: {self.not_checked}"
        return "Passed: the release met every gate threshold"

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
            "passed": self.verdict == "passed", "verdict": self.verdict_text,
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
                                             recodes=[s for s in self.steps if getattr(s, "global_recode", False)],
                                             record_for_record=self.released.n_records == self.original.n_records)},
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
              internal_trees: dict[str, Path] | None = None,
              signing_key: Any = None) -> dict[str, Path]:
        """Write the release: public folder (data, published matrices, public report,
        certificate) and internal folder (internal reports, seeds, row order), switched in
        together.

        Both folders are written into staging folders beside their targets and switched in as
        one unit under a journal (:func:`sdckit.io.atomic.staged_release`), so after a kill at
        any moment the next run or ``sdckit verify`` sees the previous pair or the new one, never
        a mix; both name the run by a random run id. An existing release is replaced only with
        ``overwrite``. ``extra_sections`` are (title, HTML) pairs appended to the public report;
        ``internal_trees`` ({name: folder}) are copied into the internal folder (e.g. the
        sweep behind the release, whose runs table holds seeds), without their caches.
        ``signing_key`` (the steward's Ed25519 private key, or its file; default the spec's
        ``[output] signing_key``) signs both certificates (:mod:`sdckit.report.signing`); a key
        file inside the output folders is refused.

        Raises
        ------
        GateError
            If any gate threshold failed; then nothing is written.
        InputError
            If a target is an input file, the folder is not writable, or a release is already
            there without ``overwrite``.
        """
        from .io.atomic import guard_target, staged_release

        if not self.passed:
            lines = "; ".join(f"{o.name} = {o.threshold}: {o.detail}" for o in self.failures())
            raise GateError(f"the release failed its gate, nothing was written: {lines}")
        if not isinstance(output, OutputSpec):
            output = OutputSpec(Path(output), data=data_name or "released.csv")
        overwrite = output.overwrite if overwrite is None else overwrite
        keep_order = output.keep_order if keep_order is None else keep_order
        out_dir, int_dir = release_folders(output)
        inputs = tuple(p for p in (self.original.meta.source,) if p)
        if self.released.n_records != self.original.n_records and not any(getattr(r, "resized", False)
                                                                           for r in self.results):
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
        key = signing_key_for(output, signing_key, out_dir, int_dir)
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
        with staged_release(out_dir, int_dir, overwrite=overwrite) as stage:
            pub, intl = stage.public, stage.internal
            internal["run_id"] = stage.run_id
            # SPSS/Stata delivery: value labels only where the categories are still the original
            # ones; names the format refuses are legalised and the mapping published
            from .io.formulas import guard_csv_text
            from .io.labels import delivery_meta, write_column_names
            data_path = write_data(released, pub / output.data, inputs=inputs,
                                   meta=delivery_meta(self.original, self.released, self.results),
                                   formula_guard=output.csv_formula_guard)
            write_column_names([str(c) for c in released.columns], data_path)
            for name, text in artifacts.items():
                atomic_write_text(pub / name, guard_csv_text(text, output.csv_formula_guard, name=name)
                                  if name.endswith(".csv") else text)
            atomic_write_text(pub / output.report,
                              public_report_html(self, data_file=output.data, artifacts=sorted(artifacts),
                                                 extra_sections=extra_sections,
                                                 formula_guard=output.csv_formula_guard))
            from .report.catalogue_files import write_catalogue  # DDI, data package, SATRE record

            write_catalogue(self, pub, data_file=output.data, artifacts=sorted(artifacts),
                            formats=getattr(output, "catalogue", ()), report_file=output.report,
                            run_id=stage.run_id)
            certs = write_certificates(self, pub, data_file=output.data, report_file=output.report,
                                       run_id=stage.run_id, signing_key=key)
            if "internal_certificate" in certs:
                moved = intl / Path(certs["internal_certificate"]).name
                os.replace(certs["internal_certificate"], moved)
            atomic_write_text(intl / output.internal_report, internal_report_html(self, data_file=output.data))
            atomic_write_text(intl / final["internal_json"].name, json.dumps(internal, indent=2))
            for name, tree in (internal_trees or {}).items():
                import shutil

                shutil.copytree(tree, intl / name, ignore=shutil.ignore_patterns("cache", "cache_internal"))
            if not keep_order:
                # one vectorised format of the (released row, input row) pairs: no per-row loop
                pairs = np.column_stack([np.arange(len(perm)), perm])
                body = io.StringIO()
                np.savetxt(body, pairs, fmt="%d", delimiter=",", header="released_row,input_row", comments="")
                atomic_write_text(intl / "row_order.csv", body.getvalue())
        targets = dict(final)
        for key, path in certs.items():
            targets[key] = (int_dir if key == "internal_certificate" else out_dir) / Path(path).name
        targets["internal_directory"] = int_dir
        return targets


def signing_key_for(output: OutputSpec, signing_key: Any, *folders: Path) -> Any:
    """The steward's private key for a release: ``signing_key`` (a key object or a file), else
    the spec's ``[output] signing_key``, else None. A key file inside an output folder is refused
    (it would be published or replaced with the folder); a file is loaded now, before any work."""
    key = signing_key if signing_key is not None else getattr(output, "signing_key", None)
    from .report.signing import load_key_outside

    return load_key_outside(key, *folders)


def release_folders(output: OutputSpec) -> tuple[Path, Path]:
    """The public folder of a release and its internal sibling (``<name>-internal`` unless
    ``output.internal_directory`` names one). Refused, before any work and with nothing
    written: a folder a release must never replace (the root, the home folder, the current
    folder or one holding them, :func:`sdckit.io.atomic.check_output_folder`), and an
    internal folder that is the public one, inside it (the seeds would be published) or holds
    it. Both engines write through it."""
    from .io.atomic import check_output_folder

    out_dir = Path(output.directory)
    check_output_folder(out_dir, "output.directory")
    if not out_dir.name:  # "." or "..": name the folder itself (the internal one is its sibling)
        out_dir = out_dir.resolve()
    int_dir = Path(output.internal_directory) if output.internal_directory else \
        out_dir.with_name(out_dir.name + "-internal")
    check_output_folder(int_dir, "output.internal_directory")
    pub_real, int_real = out_dir.resolve(), int_dir.resolve()
    if int_real == pub_real or pub_real in int_real.parents:
        raise InputError(f"output.internal_directory: {int_dir} must not be the public folder "
                         f"{out_dir} or inside it (seeds would be published); choose a sibling.")
    if int_real in pub_real.parents:
        raise InputError(f"output.directory: the public folder {out_dir} must not be inside the internal folder "
                         f"{int_dir} (a release replaces each folder whole); choose sibling folders.")
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
    gate : dict, list of gate checks, Gate or NoThreshold
        The thresholds, e.g. ``{"k_anonymity": 3}`` or ``[KAnonymity(k=3)]``: at least one
        risk threshold, or ``{"none": "why"}`` / ``NoThreshold("why")`` to release without
        one (the verdict then says NOT CHECKED). Validated here, before any step runs.
    rng : int, SeedSequence or None
        Root of the run's randomness; each step gets its own child stream.

    Raises
    ------
    ParameterError, SpecError
        A bad threshold (the one template), an unknown threshold name, or no risk threshold.
    """

    def __init__(self, microdata: Microdata, steps: Sequence[Any] = (), gate: Any = None,
                 *, rng: Any = None, spec: ReleaseSpec | None = None) -> None:
        from ._validation import param_error
        from .gate import as_gate

        if not isinstance(microdata, Microdata):
            raise param_error("Release", "microdata", "a Microdata (sdckit.io.read_microdata or "
                              "sdckit.Microdata(frame, key_vars=...))", type(microdata).__name__)
        if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence):
            raise param_error("Release", "steps", "a list of steps (e.g. [Pram(['region'])])", steps)
        for i, step in enumerate(steps):
            if not callable(getattr(step, "apply", None)):
                raise param_error("Release", "steps", f"a list of steps; item {i} has no apply method",
                                  step)
        self.microdata = microdata
        self.steps = tuple(steps)
        self.gate = as_gate(gate)
        self.gate.require_threshold()
        self.rng = rng
        self.spec = spec

    @classmethod
    def from_spec(cls, spec: ReleaseSpec | str | os.PathLike) -> Release:
        """Read the spec's input with its roles and build the release."""
        if not isinstance(spec, ReleaseSpec):
            spec = load_spec(spec)
        spec.gate.require_threshold()  # before the data are read
        ddi = getattr(spec, "ddi", None)
        if ddi is None:
            md = read_microdata(spec.input_path, file_format=spec.input_format,
                                na_values=list(spec.na_values) or None, delimiter=spec.delimiter, **spec.roles)
        else:  # a DDI codebook: its labels and missing codes, its roles where [roles] names none
            from .catalogue.ddi import read_ddi
            from .io.files import read_data

            codebook = read_ddi(ddi)
            na = list(spec.na_values) + [v for v in codebook.na_values() if v not in spec.na_values]
            df, meta = read_data(spec.input_path, file_format=spec.input_format, na_values=na or None,
                                 delimiter=spec.delimiter)
            md = Microdata(df, meta=codebook.merged_meta(meta), **{**codebook.roles(), **spec.roles})
        return cls(md, spec.steps, spec.gate, rng=spec.seed, spec=spec)

    def check(self) -> None:
        """Check the plan against the data before any step runs.

        * every threshold's required roles are held (``l_diversity`` needs a sensitive
          variable, ``max_dld`` numeric variables, ``max_tau1`` a weight) and it has something
          to check (``min_diagonal`` needs a PRAM step);
        * every column a step names (its ``column``/``columns`` parameters) is in the data
          and holds the role its declaration requires ("`occupation` is not a key variable");
        * no variable is perturbed twice with a published matrix (two PRAM steps on one
          variable: the second matrix would replace the first one's file) and no global
          recoding follows PRAM of the variable it recodes (the published matrix would no
          longer describe the released categories).

        Raises a one-line :class:`~sdckit.errors.SDCError` naming the step (``steps[i]``,
        counted from 0), the parameter and the column.
        """
        from .params import check_columns

        md = self.microdata
        self.gate.check_roles(md)
        self.gate.check_plan(self.steps)
        columns, roles = list(md.columns), md.roles
        described: dict[str, str] = {}  # variable -> the step whose published matrix describes it
        for i, step in enumerate(self.steps):
            where = f"steps[{i}] ({_step_name(step)})"
            if dataclasses.is_dataclass(step):
                check_columns(step, columns, roles, where=where)
            recoded = _recoded_variables(step)
            for v in recoded:
                if v in described:
                    raise SpecError(f"{where}: recodes `{v}`, which {described[v]} perturbed with a "
                                    f"published matrix that would then no longer describe the released "
                                    f"categories; recode `{v}` before the PRAM step")
            for v in _matrix_variables(step):
                if v in described:
                    raise SpecError(f"{where}: `{v}` is already perturbed by {described[v]}, whose "
                                    "published matrix this step's would replace; PRAM each variable "
                                    "once (one step with the matrix you want)")
                described[v] = where

    def run(self) -> ReleaseRun:
        """Check the plan (:meth:`check`), apply every step in order through the one step
        runner (:func:`sdckit.runner.run_steps`: step i draws from child i of the run's seed),
        check row counts after each and that no step changes a variable an earlier step
        published a matrix for, then check the gate."""
        from .runner import run_steps

        t0 = time.perf_counter()
        self.check()
        published: dict[str, str] = {}  # published file -> the step that publishes it
        described: dict[str, str] = {}  # variable -> the step whose published matrix describes it
        bar = progress_task("release steps", total=len(self.steps))  # a bar on a terminal, events for listeners
        current = [self.microdata]  # the data before the step being checked

        def after_step(i: int, step: Any, result: StepResult, seconds: float) -> None:
            before = current[0]
            if result.microdata.n_records != before.n_records and not getattr(result, "resized", False):
                raise SDCError(f"step {i} ({result.method}) changed the number of records from "
                               f"{before.n_records} to {result.microdata.n_records}.")
            where = f"steps[{i}] ({result.method})"
            _check_described(before, result.microdata, described, where)
            for name in result.artifacts:
                if name in published:
                    raise SDCError(f"{where}: publishes {name}, which {published[name]} publishes "
                                   "too; one file would replace the other, so the release is refused")
                published[name] = where
            for group, _ in (getattr(result, "matrices", None) or {}):
                for v in group:
                    described[v] = where
            current[0] = result.microdata
            bar.advance()

        done = run_steps(self.microdata, self.steps, self.rng, on_step=after_step)
        bar.close()
        outcomes = self.gate.run(self.microdata, done.released, done.results)
        return ReleaseRun(self.microdata, done.released, done.results, tuple(outcomes), done.seeds,
                          time.perf_counter() - t0, self.spec, done.timings, self.steps,
                          self.gate.not_checked)


def _step_name(step: Any) -> str:
    return getattr(type(step), "step_name", type(step).__name__)


def _matrix_variables(step: Any) -> tuple[str, ...]:
    """The variables whose released values a step's published matrices will describe (a
    step says so with ``published_matrix_variables()``, e.g. PRAM)."""
    fn = getattr(step, "published_matrix_variables", None)
    return tuple(fn()) if callable(fn) else ()


def _recoded_variables(step: Any) -> tuple[str, ...]:
    """The columns a global recoding step names in its declared column parameters."""
    if not getattr(type(step), "global_recode", False) or not dataclasses.is_dataclass(step):
        return ()
    from .params import step_params

    out: list[str] = []
    for p in step_params(type(step)):
        value = getattr(step, p.name, None) if p.kind in ("column", "columns") else None
        if value is not None:
            out += [value] if isinstance(value, str) else list(value)
    return tuple(out)


def _check_described(before: Microdata, after: Microdata, described: dict[str, str], where: str) -> None:
    """Refuse a step that changed a value (other than to missing) of a variable an earlier
    step published a matrix for: the matrix would no longer describe the released values.
    A removed variable leaves the release, and the rule with it."""
    for v, by in list(described.items()):
        if v not in after.columns:
            del described[v]
            continue
        a, b = before.frame[v], after.frame[v]
        if a is b:
            continue
        if (v in before.key_vars and v in after.key_vars
                and before.categories(v).equals(after.categories(v))):
            x, y = before.codes(v), after.codes(v)
            changed = int(((x != y) & (y >= 0)).sum())
        else:
            x, y = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
            changed = int(((x != y) & b.notna().to_numpy()).sum())
        if changed:
            raise SDCError(f"{where}: changed {changed} value(s) of `{v}`, which {by} perturbed with "
                           "a published matrix that would then no longer describe the released "
                           f"values; run this step before {by}")


def protect(spec_path: str | os.PathLike, *, overwrite: bool | None = None,
            signing_key: Any = None) -> tuple[ReleaseRun, dict[str, Path]]:
    """Run a release spec end to end: read, mask, gate, write. Returns the run and paths.

    ``overwrite`` (default: the spec's ``[output] overwrite``) replaces an earlier release.
    ``signing_key`` (default: the spec's ``[output] signing_key``) signs the certificates. The
    output folders and the key are checked before any work, so a run that cannot be written
    stops at once.
    """
    from .io.atomic import check_writable_folder, guard_target

    spec = load_spec(spec_path)
    guard_target(Path(spec.output.directory) / spec.output.data, (spec.input_path,))
    out_dir, int_dir = release_folders(spec.output)
    for folder in (out_dir, int_dir):
        check_writable_folder(folder)
    key = signing_key_for(spec.output, signing_key, out_dir, int_dir)
    run = Release.from_spec(spec).run()
    paths = run.write(spec.output, overwrite=overwrite, signing_key=key)
    return run, paths
