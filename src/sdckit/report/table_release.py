"""A protected table released as one unit: public and internal folder, certificate, verify.

A table release is written exactly as a microdata release is (:mod:`sdckit.release`): both
folders are staged and switched in together under sdckit's journal
(:func:`sdckit.io.atomic.staged_release`), and the certificates are sealed with the steward's
key (:func:`sdckit.report.certificate.seal`). The public folder holds

* the table as CSV (``<name>.csv``): the codes of every dimension, ``value`` (the published
  number, or the suppression code) and ``status`` (``safe``, ``suppressed``, ``rounded``,
  ``perturbed``), plus ``lower``/``upper`` for a differentially private table;
* the public report (``report.html``): the table with its status marks in words, the rules with
  their thresholds and measured values, the audit's verdict (exact, sampled or failed);
* the catalogue files (``[output] catalogue``, default all:
  :func:`sdckit.report.catalogue_files.write_table_catalogue`): ``sdmx_data.csv`` (SDMX-CSV 2.0,
  ``CONF_STATUS`` ``C`` on every suppressed cell, ``OBS_STATUS`` ``E`` on every rounded or
  perturbed one) with ``sdmx_structure.xml``, ``datapackage.json`` and ``satre_record.json``;
* ``certificate.json``: the SHA-256 of every file, the method and its settings (no seed), the
  rules with their thresholds and measured values, and the audit's status; ``sdckit verify``
  re-checks it (a changed cell changes the CSV's hash: verify fails naming the file).

The internal folder holds the internal report (which tells primary from secondary
suppressions), the audit's intervals with the protection levels, the internal certificate and,
for a suppressed table with ``sdmx`` among its catalogue formats, ``sdmx_data_internal.csv``, an
SDMX-CSV for exchange with a receiving organisation whose ``CONF_STATUS`` tells primary cells (coded by the rule
that made them sensitive: ``A``, ``O``, ``T``, ``G`` or ``C``) from secondary ones (``D``).
Neither folder holds a seed or a path.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, SpecError
from ..result import jsonable

__all__ = ["INTERNAL_SDMX", "TableContent", "table_content", "rules_measured", "write_table_release",
           "release_table_spec", "table_certificate", "public_table_page", "TABLE_DATA_KIND"]

#: ``data.kind`` of a table release's certificate
TABLE_DATA_KIND = "table"
#: the internal folder's SDMX-CSV (primary and secondary suppressions told apart)
INTERNAL_SDMX = "sdmx_data_internal.csv"
_WORDS = {"safe": "published as computed", "suppressed": "suppressed (withheld)", "rounded": "rounded to the base",
          "perturbed": "perturbed (noise added)"}


@dataclass(frozen=True)
class TableContent:
    """What a table release publishes, whatever the method: the cells, the rules and the verdict."""

    table: Any
    method: str
    method_label: str
    params: dict
    values: np.ndarray
    status: np.ndarray
    audit: dict
    rules: list
    guarantees: list
    extra: dict = field(default_factory=dict)
    missing: dict = field(default_factory=dict)
    internal_html: str = ""
    internal_files: dict = field(default_factory=dict)
    #: tau-Argus status letters per cell (U primary, M secondary, S safe, Z empty) where the
    #: method tells them apart, and the CL_CONF_STATUS code of each primary cell: internal only
    letters: Any = None
    primary_code: Any = None

    def frame(self, code: str = "x"):
        """The public CSV's frame: codes, value (or the code), status (+ DP intervals)."""
        from ..tables.public import public_frame

        df = public_frame(self.table, self.values, self.status, code=code)
        for k, v in self.extra.items():
            df[k] = np.asarray(v)
        return df

    def status_counts(self) -> dict:
        return {s: int(np.sum(self.status == s)) for s in _WORDS if np.any(self.status == s)}


def rules_measured(rules: list, primary: Any) -> list:
    """Every rule with its thresholds and what it measured on the table (cells it flagged)."""
    out = []
    reason = None if primary is None else np.asarray(primary.reason)
    for r in rules:
        entry = {"rule": r.rule_name, "label": r.label, "thresholds": jsonable(r.thresholds()),
                 "description": r.describe()}
        if reason is not None:
            name = r.build().name
            entry["measured"] = {"sensitive_cells": int(np.sum(reason == name))}
        out.append(entry)
    return out


def table_content(run: Any, spec: dict | None = None) -> TableContent:
    """The release content of a table spec's run (suppression, rounding, margins, CKM or DP)."""
    from ..tables.registry import build_table_rule, table_method_class

    spec = spec or {}
    rules = [build_table_rule(r, where=f"rules[{k}]") for k, r in enumerate(spec.get("rules", []) or [])]
    missing = dict(getattr(run, "missing", {}) or {})
    if run.method == "ckm":
        from ..tables.ckm.run import ckm_public_cells
        from ..tables.table_methods import ckm_guarantees

        res = run.result
        values, status = ckm_public_cells(res)
        gs = ckm_guarantees(res)
        failed = [g for g in gs if not g.holds]
        audit = {"status": "failed" if failed else "exact",
                 "sentence": "every cell checked against the p-table: " + (
                     "no cell moved beyond its maximum deviation and empty cells stay empty" if not failed
                     else ", ".join(g.statement for g in failed) + " does NOT hold"),
                 "n_audited": int(res.n_cells), "n_not_audited": 0, "rule": "every cell checked"}
        prot = spec.get("protection", {})
        params = {k: prot[k] for k in ("ptable", "key", "flex", "epsilon", "include_zeros") if k in prot}
        if isinstance(params.get("ptable"), str):
            params["ptable"] = Path(params["ptable"]).name
        if "ptable" not in prot:  # given as the registered declaration's D, V, js (or ptable_file): listed
            pt = res.ptable   # under those names, as the run's p-table holds them (defaults filled in)
            if pt.params:     # generated; js is a count p-table's (the spec reader gives none to sums)
                params.update({k: pt.params[k] for k in ("D", "V", "js") if k in pt.params
                               and (k != "js" or pt.kind == "counts")})
            else:             # a p-table file: its name only (public outputs hold no paths)
                params["ptable_file"] = Path(pt.source).name
        cls = table_method_class("ckm")
        return TableContent(res.table, "ckm", cls.label, jsonable(params), values, status, audit, [], gs,
                            missing=missing, internal_html=f"<p>{html.escape(run.describe())}</p>")
    if run.method == "dp":
        from ..dp.table_methods import dp_verdict

        res = run.result
        status = np.where(np.asarray(res.status) == "invariant", "safe", "perturbed").astype(object)
        v = dp_verdict(res)
        name = f"dp_{'gaussian' if 'Gaussian' in type(res.settings).__name__ else 'laplace'}_" \
               f"{'sums' if res.table.kind == 'magnitude' else 'counts'}"
        cls = table_method_class(name)
        from ..params import step_params

        params = {p.name: getattr(res.settings, p.name) for p in step_params(type(res.settings))}
        return TableContent(res.table, name, cls.label, jsonable(params), np.asarray(res.published, float), status,
                            v.to_dict(), [], list(res.guarantees),
                            extra={"lower": np.asarray(res.lower), "upper": np.asarray(res.upper)}, missing=missing,
                            internal_html=run.report_html())
    from ..tables.spec import public_cells

    values, status = public_cells(run)
    status = np.asarray(status, dtype=object)
    a = run.audit_summary()
    audit = {"status": a["audit_status"], "sentence": a["audit_statement"], "n_audited": a["n_audited"],
             "n_not_audited": a["n_not_audited"], "rule": a["audit_rule"]}
    tr = getattr(run, "table_result", None)
    params = dict(tr.params) if tr is not None else {}
    cls = table_method_class(run.method)
    internal = {}
    aud = getattr(run.result, "audit", None) or getattr(run.result, "intervals", None)
    if aud is not None and hasattr(aud, "frame"):
        internal["audit.csv"] = aud.frame().to_csv(index=False)
    letters = codes = None
    secondary = getattr(run.result, "secondary", None)
    if run.primary is not None and secondary is not None and run.method != "rounding":
        from ..catalogue.sdmx import primary_codes

        t = run.table
        letters = np.where((t.freq == 0) & (t.value == 0), "Z", "S").astype(object)
        letters[np.asarray(secondary, bool)] = "M"
        letters[np.asarray(run.primary.sensitive, bool)] = "U"
        built = [r.build() for r in rules]
        codes = primary_codes(run.primary.reason, [b.n for b in built if b.name == "dominance"])
    return TableContent(run.table, run.method, cls.label, jsonable(params), values, status, audit,
                        rules_measured(rules, run.primary), list(run.result.guarantees), missing=missing,
                        internal_html=run.report_html(), internal_files=internal, letters=letters,
                        primary_code=codes)


def _verdict_html(audit: dict) -> str:
    words = {"exact": "Exact: every cell the audit is about was checked and the promise holds.",
             "sampled": "Sampled: only some cells were checked; this table is NOT proven safe.",
             "failed": "Failed: a checked promise does NOT hold; do not publish this table."}
    st = audit["status"]
    extra = ""
    if st == "sampled":
        extra = (f" {audit['n_audited']:,} cells audited, {audit['n_not_audited']:,} not audited "
                 f"({html.escape(audit['rule'])}).")
    return (f"<section class='audit'><h2>Audit verdict: {html.escape(st)}</h2><p><strong>{html.escape(words[st])}"
            f"</strong> {html.escape(audit['sentence'])}.{extra}</p></section>")


def public_table_page(content: TableContent, *, code: str = "x", title: str = "Published table") -> str:
    """The public report of a table release: the table with status marks explained in words,
    the rules with thresholds and measured values, and the audit's verdict."""
    from ..tables.public import public_page

    counts = content.status_counts()
    words = "".join(f"<li>{n:,} cells {html.escape(_WORDS[s])}</li>" for s, n in counts.items())
    rules = ""
    if content.rules:
        rows = "".join(
            f"<tr><td>{html.escape(r['label'])}</td><td>{html.escape(r['description'])}</td>"
            f"<td>{'' if 'measured' not in r else str(r['measured']['sensitive_cells']) + ' sensitive cells'}</td></tr>"
            for r in content.rules)
        rules = ("<h2>Sensitivity rules</h2><table class='rules'><tr><th>rule</th><th>thresholds</th>"
                 f"<th>measured</th></tr>{rows}</table>")
    miss = ""
    if content.missing:
        items = "".join(
            f"<li>{html.escape(d)}: {r['n_missing']:,} missing values "
            + (f"counted as '{html.escape(str(r['label']))}'" if r["choice"] == "category"
               else f"dropped ({r['n_dropped']:,} records left out)") + "</li>" for d, r in content.missing.items())
        miss = f"<h2>Missing values</h2><ul>{items}</ul>"
    note = (f"<p>Protection: {html.escape(content.method_label)}.</p><ul class='status-words'>{words}</ul>"
            + _verdict_html(content.audit) + rules + miss)
    return public_page(content.table, content.values, content.status, code=code, title=title, note=note)


def table_certificate(content: TableContent, folder: Path, *, data_file: str, report_file: str, run_id: str,
                      spec: dict | None, public: bool = True, input_sha256: str | None = None) -> dict:
    """The certificate of a table release (the format of :mod:`sdckit.report.certificate`, with
    ``data.kind = "table"`` and a ``tables`` list that ``sdckit verify`` checks)."""
    from .. import __version__
    from .certificate import FORMAT, dependency_versions, file_entry, mark_entry

    files = [file_entry(folder, data_file, "table")]
    if (folder / report_file).is_file():
        files.append(file_entry(folder, report_file, "public_report"))
    from ..catalogue.names import TABLE_CATALOGUE_FILES  # SDMX, data package, SATRE record

    files += [file_entry(folder, n, "catalogue") for names in TABLE_CATALOGUE_FILES.values() for n in names
              if n not in (data_file, report_file) and (folder / n).is_file()]
    files += mark_entry(folder)
    df_cols = list(map(str, content.table.dims)) + ["value", "status"] + list(content.extra)
    passed = content.audit["status"] == "exact"
    verdict = (f"Passed: the table's audit is exact: {content.audit['sentence']}" if passed else
               f"NOT passed: the table's audit is {content.audit['status']}: {content.audit['sentence']}")
    cert: dict[str, Any] = {
        "format": FORMAT, "kind": "public" if public else "internal", "run_id": run_id,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "sdckit_version": __version__, "dependencies": dependency_versions(),
        "optional_dependencies": dependency_versions(extras=True),
        "passed": passed, "verdict": verdict, "not_checked": None,
        "data": {"file": data_file, "kind": TABLE_DATA_KIND, "n_records": int(content.table.n_cells),
                 "columns": df_cols, "roles": {}},
        "files": files, "gate": [], "steps": [],
        "guarantees_hold": all(g.holds for g in content.guarantees),
        "checks": {"matrices": []},
        "tables": [{"file": data_file, "method": content.method, "label": content.method_label,
                    "params": content.params, "dimensions": list(map(str, content.table.dims)),
                    "kind": content.table.kind, "n_cells": int(content.table.n_cells),
                    "statuses": content.status_counts(), "rules": content.rules,
                    "audit": {k: content.audit[k] for k in ("status", "sentence", "n_audited", "n_not_audited",
                                                           "rule")},
                    "guarantees": [g.to_dict() for g in content.guarantees],
                    "missing": content.missing}],
        "spec": _public_spec(spec),
    }
    if not public:
        cert["input"] = {"sha256": input_sha256}
    return jsonable(cert)


def _public_spec(spec: dict | None) -> dict | None:
    """The table spec without its seed and with file names instead of paths."""
    if spec is None:
        return None
    out = json.loads(json.dumps(spec, default=str))
    out.get("protection", {}).pop("seed", None)
    out.get("output", {}).pop("signing_key", None)
    for sec in ("input", "hierarchies", "output", "protection"):
        part = out.get(sec)
        if not isinstance(part, dict):
            continue
        for k, v in list(part.items()):
            if isinstance(v, str) and ("/" in v or "\\" in v):
                part[k] = Path(v).name
            elif isinstance(v, dict):
                part[k] = {kk: Path(vv).name if isinstance(vv, str) else vv for kk, vv in v.items()}
    return out


def _plain_name(name: str, where: str) -> str:
    if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
        raise SpecError(f"{where}: must be a plain file name inside the release folder, got {name!r}")
    return name



def write_table_release(content: TableContent, public: str | os.PathLike, internal: str | os.PathLike | None = None,
                        *, spec: dict | None = None, name: str = "table", code: str = "x",
                        report_file: str = "report.html", overwrite: bool = False, signing_key: Any = None,
                        inputs: tuple = (), input_sha256: str | None = None,
                        catalogue: tuple[str, ...] | None = None) -> dict:
    """Write the release of one protected table (see the module docstring).

    ``catalogue`` names the catalogue formats to write (``sdmx``, ``frictionless``, ``satre``);
    ``None`` reads the spec's ``[output] catalogue`` (default all), whose ``licence`` and
    ``description`` feed the data package.

    Returns ``{"public": [names], "internal": [names], "folders": {"public", "internal"},
    "verdict": sentence, "passed": bool, "run_id": id}``.
    """
    from ..io.atomic import atomic_write_text, check_output_folder, staged_release
    from .certificate import CERTIFICATE, INTERNAL_CERTIFICATE, seal

    pub_dir = check_output_folder(public, "output.folder")
    int_dir = check_output_folder(internal if internal is not None else
                                  pub_dir.with_name(pub_dir.name + "-internal"), "output.internal_folder")
    if int_dir == pub_dir or pub_dir in int_dir.parents or int_dir in pub_dir.parents:
        raise InputError(f"output.internal_folder: {int_dir.name} must be a folder beside the public folder "
                         f"{pub_dir.name}, not it, inside it or holding it")
    for src in inputs:  # a release replaces its folders whole: never one holding an input
        s = Path(src).resolve()
        for d in (pub_dir, int_dir):
            if d.resolve() == s or d.resolve() in s.parents:
                raise InputError(f"{d.name}: the output folder holds the input {s.name}; a release replaces its "
                                 "folder whole: choose another output folder")
    from .signing import load_key_outside

    key = load_key_outside(signing_key, pub_dir, int_dir)
    data_file = _plain_name(f"{name}.csv" if not name.endswith(".csv") else name, "output.table")
    report_file = _plain_name(report_file, "output.public_report")
    from ..catalogue.names import TABLE_CATALOGUE_FILES
    from .catalogue_files import check_table_catalogue, write_table_catalogue

    out_spec = (spec or {}).get("output", {}) or {}
    formats = check_table_catalogue(out_spec.get("catalogue") if catalogue is None else catalogue)
    taken = {n for names in TABLE_CATALOGUE_FILES.values() for n in names}
    for where, fname in (("output.table", data_file), ("output.public_report", report_file)):
        if fname in taken or fname in ("certificate.json", ".sdckit-release"):
            raise SpecError(f"{where}: {fname!r} is the name of a file the release writes itself; choose another name")
    for field_name in ("licence", "description"):
        if field_name in out_spec and not isinstance(out_spec[field_name], str):
            raise SpecError(f"output.{field_name}: must be a text (e.g. licence = \"CC-BY-4.0\"), "
                            f"got {out_spec[field_name]!r}")
    from ..io.formulas import guard_csv_text

    csv_text = guard_csv_text(content.frame(code).to_csv(index=False), "warn", name=data_file)
    with staged_release(pub_dir, int_dir, overwrite=overwrite) as stage:
        pub, intl = stage.public, stage.internal
        atomic_write_text(pub / data_file, csv_text)
        atomic_write_text(pub / report_file, public_table_page(content, code=code))
        write_table_catalogue(content, pub, data_file=data_file, formats=formats, code=code,
                              title=name[:-4] if name.endswith(".csv") else name,
                              description=out_spec.get("description"), licence=out_spec.get("licence"),
                              certificate=lambda: table_certificate(content, pub, data_file=data_file,
                                                                    report_file=report_file, run_id=stage.run_id,
                                                                    spec=spec))
        for fname, text in content.internal_files.items():
            atomic_write_text(intl / fname, text)
        if "sdmx" in formats and content.letters is not None and np.isin(content.letters, ["U", "M"]).any():
            # primary and secondary told apart: internal only (the public folder's structure
            # file describes it too; with nothing suppressed it would copy the public file)
            from ..catalogue.sdmx import sdmx_identifier, write_sdmx_csv

            write_sdmx_csv(content.table, content.letters, intl / INTERNAL_SDMX, values=content.values,
                           primary_code=content.primary_code,
                           structure_id=f"SDCKIT:{sdmx_identifier(data_file[:-4])}(1.0.0)")
        atomic_write_text(intl / "internal_report.html",
                          "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Table release "
                          "(internal)</title></head><body><p><strong>Internal report</strong>: it may tell sensitive "
                          "cells apart; publish the public folder only.</p>" + content.internal_html
                          + "</body></html>")
        cert = table_certificate(content, pub, data_file=data_file, report_file=report_file, run_id=stage.run_id,
                                 spec=spec)
        atomic_write_text(pub / CERTIFICATE, json.dumps(seal(cert, key), indent=2) + "\n")
        icert = table_certificate(content, pub, data_file=data_file, report_file=report_file, run_id=stage.run_id,
                                  spec=spec, public=False, input_sha256=input_sha256)
        atomic_write_text(intl / INTERNAL_CERTIFICATE, json.dumps(seal(icert, key), indent=2) + "\n")
        run_id = stage.run_id
    listing = {role: sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file())
               for role, d in (("public", pub_dir), ("internal", int_dir))}
    return {"public": listing["public"], "internal": listing["internal"],
            "folders": {"public": pub_dir.name, "internal": int_dir.name},
            "verdict": cert["verdict"], "passed": cert["passed"], "audit_status": content.audit["status"],
            "run_id": run_id}


def _input_hash(inputs: tuple) -> str | None:
    from .certificate import sha256_file

    files = [p for p in inputs if Path(p).is_file()]
    return sha256_file(files[0]) if files else None


def release_table_spec(spec_path: str | os.PathLike, *, overwrite: bool = False, signing_key: Any = None) -> tuple:
    """Run a table spec whose ``[output]`` names a ``folder`` and write its release.

    Returns ``(summary, run)``: the run's JSON summary with ``release`` (the files, public and
    internal apart, and the verdict) in place of the loose ``outputs``.
    """
    from ..tables.public import DEFAULT_CODE, check_code
    from ..tables.spec import load_table_spec, run_table_spec

    spec = load_table_spec(spec_path)
    out = spec.get("output", {})
    if "folder" not in out:
        raise SpecError("output.folder: a table release needs the public folder's name (folder = \"release\")")
    for k in ("report", "audit", "public_table"):
        if k in out:
            raise SpecError(f"output.{k}: a table release (output.folder) writes its own files; remove {k}")
    base = Path(spec_path).resolve().parent
    public = base / str(out["folder"])
    internal = base / str(out["internal_folder"]) if "internal_folder" in out else None
    code = check_code(out.get("suppression_code", DEFAULT_CODE))
    from .catalogue_files import check_table_catalogue

    check_table_catalogue(out.get("catalogue"))  # before the run: a wrong format is named at once
    run = run_table_spec(spec_path, write=False)
    if getattr(run, "table_result", None) is None and run.method not in ("ckm", "dp"):
        raise InputError(f"{Path(spec_path).name}: the run has no result to release")
    content = table_content(run, spec)
    inputs = tuple(base / v for v in spec.get("input", {}).values() if isinstance(v, str))
    rel = write_table_release(content, public, internal, spec=spec, input_sha256=_input_hash(inputs),
                              name=str(out.get("table", Path(spec_path).stem + ".csv")),
                              code=code, report_file=str(out.get("public_report", "report.html")),
                              overwrite=overwrite or out.get("overwrite") is True, signing_key=signing_key if signing_key is not None
                              else (base / out["signing_key"] if "signing_key" in out else None),
                              inputs=inputs)
    summary = run.to_dict()
    summary.pop("outputs", None)
    summary["release"] = rel
    summary["missing"] = jsonable(content.missing)
    return summary, run
