"""The tables page: build a table from the open microdata (or a loaded cell list), apply the
sensitivity rules, protect it with a method of the table-method registry
(:mod:`sdckit.tables.registry`), lay out the pattern, the audit intervals or the perturbation as
a grid, and release it. Everything is done by :mod:`sdckit.tables` and
:mod:`sdckit.report.table_release`; this module only arranges the result for the browser.

The tables API (:func:`TABLE_ROUTES`, mounted by the tables router):

* ``GET /api/tables/methods``: every registered method and rule with its declared parameters
  (label, help, unit, symbol, kind, default, choices, range): what the form is generated from;
* ``POST /api/tables/protect``: ``dims``, ``response``, ``rules``, ``method``, ``params``,
  ``missing`` (a choice per dimension), ``hierarchies`` (an uploaded ``.hrc`` or ARX-style CSV
  per dimension) -> the grid, the summary, ``audit`` (``status``, ``sentence``) and the
  statuses in words; suppression and rounding run as a job (the answer is the job), the
  others at once;
* ``POST /api/tables/release``: the same plus ``folder`` and ``overwrite`` -> the release's
  files, ``public`` and ``internal`` apart, and the verdict sentence (a job).

They replace ``POST /api/table`` (kept, answering as before, until the front end moves).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..result import jsonable


def _method_names() -> list[str]:
    from ..tables.registry import known_table_methods

    return known_table_methods()


def build_table(frame: pd.DataFrame, dims: list[str], *, response: str | None = None,
                cells: bool = False, value: str | None = None, missing: dict | None = None,
                hierarchies: dict | None = None, source: str = "the data"):
    """The table of the form: ``missing`` holds a choice per dimension (``"category"``,
    ``"drop"``, ``"refuse"``: the default), ``hierarchies`` a :class:`~sdckit.tables.table.Hierarchy`
    per dimension. Returns the table; its missing-value report is ``table_missing(...)``."""
    return _build(frame, dims, response=response, cells=cells, value=value, missing=missing,
                  hierarchies=hierarchies, source=source)[0]


def _build(frame, dims, *, response=None, cells=False, value=None, missing=None, hierarchies=None,
           source="the data"):
    from ..tables.dimensions import DEFAULT_MISSING_LABEL, apply_missing, missing_choices, with_missing_code
    from ..tables.table import Table

    if not dims or len(dims) > 2:
        raise InputError("a table on this page has 1 or 2 dimensions; pick them in the form.")
    try:
        choices = missing_choices(missing or {}, dims, where="missing")
    except Exception as exc:  # a SpecError names the key; the page speaks of the form
        raise InputError(str(exc)) from None
    frame, report = apply_missing(frame, dims, choices, source=source)
    hier = dict(hierarchies or {})
    for d, r in report.items():
        if r["choice"] == "category" and d in hier:
            hier[d] = with_missing_code(hier[d], DEFAULT_MISSING_LABEL)
    if cells:
        if not value:
            raise InputError("a loaded cell list needs the name of its value column")
        f = frame.copy()
        for d in dims:
            f[d] = f[d].astype(str)
        return Table.from_cells(f, dims, value, hierarchies=hier or None), report, frame
    return Table.from_microdata(frame, dims, response=response or None, hierarchies=hier or None), report, frame


def check_table_request(rules: list[dict], method: str) -> None:
    """The checks :func:`protect_table` makes before any solving, for an answer at once (the
    solving itself runs as a job in the workbench)."""
    from ..tables.registry import table_method_class

    if method == "ckm":
        return
    if method not in _method_names():
        raise InputError(f"protection method must be one of {', '.join(_method_names())}; got {method!r}")
    parsed = _rules(rules)
    if table_method_class(method).needs_rules and not parsed:
        raise InputError("suppression needs at least one sensitivity rule (e.g. threshold n = 3)")


def _rules(rules: list) -> list:
    """The rule objects of the form's rules, declared in the registry (errors name rules[k])."""
    from ..tables.registry import build_table_rule

    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise InputError("rules must be a list of objects such as {\"type\": \"threshold\", \"n\": 3}")
    return [build_table_rule(r, where=f"rules[{k}]").build() for k, r in enumerate(rules)]


def _method(method: str, params: dict):
    """The registered method built from the form's values (only the parameters it declares)."""
    from ..params import step_params
    from ..tables.registry import build_table_method, table_method_class

    names = {p.name for p in step_params(table_method_class(method, where="method"))}
    return build_table_method(method, {k: v for k, v in (params or {}).items() if k in names}, where="params")


def protect_table(table, rules: list[dict], method: str, options: dict, *, seed: int | None = None,
                  frame: pd.DataFrame | None = None, ptable_file: str | None = None) -> dict:
    """Apply the rules and the registered protection method; return the grid, the summary and the audit.

    ``method="ckm"`` (the cell key method) needs the microdata ``frame`` the table was built
    from, and a p-table: ``ptable_file`` (tau-Argus format) or ``options`` ``D``, ``V``, ``js``.
    """
    if method == "ckm":
        return protect_ckm(table, frame, options, seed=seed, ptable_file=ptable_file)
    from ..tables.rules import primary_cells

    if method not in _method_names():
        raise InputError(f"protection method must be one of {', '.join(_method_names())}; got {method!r}")
    primary = None
    parsed = _rules(rules)
    if parsed:
        primary = primary_cells(table, parsed)
    params = {"time_limit": float(options.get("time_limit", 30)), **{k: v for k, v in options.items()
                                                                       if k != "time_limit"}}
    tres = _method(method, params).apply(table, primary, rng=seed, microdata=frame)
    return _result_payload(tres, primary)


def _result_payload(tres, primary) -> dict:
    """The page's answer for a registry result: grid, summary, audit rows, verdict, words."""
    from ..tables.registry import STATUS_WORDS

    res, table = tres.detail, tres.table
    status = np.array([""] * table.n_cells, dtype=object)
    shown = np.asarray(tres.values, dtype=float).copy()
    audit_rows: list[dict] = []
    summary: dict[str, Any] = {"method": tres.method, "n_cells": table.n_cells}
    if tres.method == "rounding":
        status[:] = "rounded"
        if res.intervals is not None:
            audit_rows = _audit_rows(table, res.intervals)
        summary.update({"base": res.base, "status": res.status})
    elif hasattr(res, "secondary"):  # suppression: the steward's page tells primary from secondary
        status[res.secondary] = "secondary"
        status[primary.sensitive] = "primary"
        audit_rows = _audit_rows(table, res.audit)
        summary.update({"n_primary": res.n_primary, "n_secondary": res.n_secondary,
                        "cost": res.cost, "status": res.status, "proven_optimal": res.proven_optimal,
                        "audit_ok": res.audit.ok})
    else:  # margins, cell key, differential privacy: the public statuses
        status[:] = tres.status
        summary["audit_ok"] = tres.audit.ok
    summary["audit_status"] = tres.audit.status
    if primary is not None:
        summary["n_sensitive"] = primary.n_primary
    words = dict(STATUS_WORDS, primary="sensitive (primary suppression)", secondary="secondary suppression")
    return jsonable({"grid": _grid(table, shown, status), "summary": summary, "audit": audit_rows,
                     "guarantees": [g.to_dict() for g in tres.guarantees], "dims": list(table.dims),
                     "kind": table.kind, "verdict": tres.audit.to_dict(),
                     "status_words": {s: words.get(s, s) for s in sorted({str(x) for x in status}) if s}})


def protect_ckm(table, frame: pd.DataFrame | None, options: dict, *, seed: int | None = None,
                ptable_file: str | None = None) -> dict:
    """The cell key method on ``table`` (see :mod:`sdckit.tables.ckm`).

    Record keys come from ``options["key"]`` (default ``Key``) when the microdata have that
    column, otherwise they are drawn from ``seed`` (the session's run seed, kept internal).
    Every cell, totals included, is perturbed from its own cell key; the grid marks the cells
    whose value changed (this page is the steward's: the public table marks every non-empty
    cell, see :func:`sdckit.tables.ckm.run.ckm_public_cells`).
    """
    from ..tables.ckm import FlexParams, add_record_keys, ckm_frequency, ckm_magnitude

    if frame is None:
        raise InputError("the cell key method needs microdata with record keys: build the table from the open "
                         "microdata, not from a cell list")
    key = str(options.get("key") or "Key")
    drawn = key not in frame.columns
    if drawn:
        if seed is None:
            raise InputError(f"the microdata have no record key column {key!r} and the session has no seed to draw "
                             "keys from; name the key column")
        frame = add_record_keys(frame, key, rng=seed)
    if ptable_file:
        pt: Any = ptable_file
    else:
        try:
            pt = {"D": int(options.get("D", 5)), "V": float(options.get("V", 3.0))}
            if table.kind == "frequency":
                pt["js"] = int(options.get("js", 0))
        except (TypeError, ValueError):
            raise InputError("p-table parameters D, V and js must be numbers (e.g. D = 5, V = 3, js = 2)") from None
    dims = list(table.dims)
    if table.kind == "frequency":
        res = ckm_frequency(frame, dims, key=key, ptable=pt, table=table)
    else:
        res = ckm_magnitude(frame, dims, table.response, key=key, ptable=pt, flex=FlexParams())
    t = res.table
    changed = np.abs(res.perturbation) > 1e-9
    status = np.where(changed, "perturbed", "").astype(object)
    shown = np.rint(res.perturbed) if res.kind == "frequency" else np.round(res.perturbed, 6)
    a = res.additivity()
    summary: dict[str, Any] = {"method": "ckm", "n_cells": res.n_cells, "n_perturbed": res.n_perturbed,
                               "max_abs_perturbation": res.max_abs_perturbation,
                               "ptable": res.ptable.describe(),
                               "additivity_relations": a["n_relations"], "additivity_broken": a["n_broken"],
                               "additivity_max_discrepancy": a["max_abs_discrepancy"],
                               "record_keys": f"drawn from the session seed (column {key} absent)" if drawn
                               else f"column {key}"}
    return jsonable({"grid": _grid(t, shown, status, original=np.asarray(t.value, dtype=float)),
                     "summary": summary, "audit": [], "guarantees": [], "dims": dims, "kind": t.kind,
                     "additivity": a, "describe": res.describe()})


def _audit_rows(table, aud) -> list[dict]:
    out = []
    for k, cell in enumerate(aud.cells):
        out.append({"cell": int(cell), "codes": " / ".join(table.cell_codes(int(cell))),
                    "lower": float(aud.lower[k]), "upper": float(aud.upper[k]),
                    "protected": bool(aud.protected[k])})
    return out


def _grid(table, shown: np.ndarray, status: np.ndarray, original: np.ndarray | None = None) -> dict:
    """Rows x columns of cells (a 1-D table is one column); ``original`` values when shown ones differ."""
    hs = table.hierarchies
    if len(hs) == 1:
        rows = list(hs[0].codes)
        cols = [table.response or "value"]
        idx = np.arange(len(rows)).reshape(-1, 1)
    else:
        rows, cols = list(hs[0].codes), list(hs[1].codes)
        idx = np.arange(table.n_cells).reshape(len(rows), len(cols))
    cells = [[{"cell": int(i), "value": float(shown[i]), "freq": int(table.freq[i]),
               "status": str(status[i])} | ({} if original is None else {"original": float(original[i])})
              for i in r] for r in idx]
    return {"rows": [str(r) for r in rows], "cols": [str(c) for c in cols], "cells": cells}


# ---------------------------------------------------------------------------- the tables API

def methods_payload() -> dict:
    """``GET /api/tables/methods``: the registry's declarations (no hand-written form lists)."""
    from ..tables.registry import declarations

    return declarations()


def _request_table(session, body: dict, uploaded) -> tuple:
    """The table, its missing-value report, the frame and the hierarchies of a protect/release request."""
    from ..tables.dimensions import hierarchy_from_arx
    from ..tables.table import Hierarchy

    dims = [str(d) for d in body.get("dims", []) or []]
    hier = {}
    for d, name in (body.get("hierarchies") or {}).items():
        if d not in dims:
            raise InputError(f"hierarchies: {d!r} is not one of the dimensions {dims}")
        # a file of the hierarchy editor ({"saved": name}) or an upload (its name)
        path = (session.hierarchy_file(name["saved"]) if isinstance(name, dict) and "saved" in name
                else uploaded(name, "hierarchy"))
        hier[d] = Hierarchy.from_hrc(path) if str(path).lower().endswith(".hrc") else hierarchy_from_arx(path)
    if not session.has_data:
        raise InputError("no data is open: open a data file first (Data page).")
    source = session.state.get("input", {}).get("path") or "the data"
    from pathlib import Path

    table, report, frame = _build(session.frame, dims, response=body.get("response") or None,
                                  missing=body.get("missing") or {}, hierarchies=hier, source=Path(source).name)
    return table, report, frame


def protect_request(session, body: dict, uploaded) -> tuple:
    """Validate a protect request now (one-line errors) and return ``(work, runs_as_job)``:
    ``work()`` computes the answer."""
    from ..tables.registry import table_method_class

    method = str(body.get("method", "optimal"))
    cls = table_method_class(method, where="method")
    rules = _rules(body.get("rules", []) or [])
    if cls.needs_rules and not rules:
        raise InputError("suppression needs at least one sensitivity rule (e.g. threshold n = 3)")
    m = _method(method, body.get("params") or {})
    table, report, frame = _request_table(session, body, uploaded)
    seed = session.state.get("run", {}).get("seed")

    def work() -> dict:
        from ..tables.rules import primary_cells

        primary = primary_cells(table, rules) if rules else None
        tres = m.apply(table, primary, rng=seed, microdata=frame)
        out = _result_payload(tres, primary)
        out["audit_rows"] = out["audit"]
        out["audit"] = {"status": tres.audit.status, "sentence": tres.audit.sentence}
        out["missing"] = report
        return out

    return work, cls.needs_rules or method == "rounding"


def release_request(session, body: dict, uploaded, *, folder, signing_key=None) -> Any:
    """Validate a release request now; return ``work()`` writing the release to ``folder``."""
    from ..report.table_release import TableContent, write_table_release
    from ..tables.registry import table_method_class

    method = str(body.get("method", "optimal"))
    cls = table_method_class(method, where="method")
    rules = _rules(body.get("rules", []) or [])
    from ..tables.registry import build_table_rule

    decl_rules = [build_table_rule(r, where=f"rules[{k}]") for k, r in enumerate(body.get("rules", []) or [])]
    if cls.needs_rules and not rules:
        raise InputError("suppression needs at least one sensitivity rule (e.g. threshold n = 3)")
    overwrite = body.get("overwrite", False)
    if not isinstance(overwrite, bool):
        raise InputError("overwrite must be true or false")
    m = _method(method, body.get("params") or {})
    table, report, frame = _request_table(session, body, uploaded)
    seed = session.state.get("run", {}).get("seed")
    name = str(body.get("name") or "table")

    def work() -> dict:
        primary = None
        if rules:
            from ..tables.rules import primary_cells

            primary = primary_cells(table, rules)
        tres = m.apply(table, primary, rng=seed, microdata=frame)
        internal = {}
        aud = getattr(tres.detail, "audit", None) or getattr(tres.detail, "intervals", None)
        if aud is not None and hasattr(aud, "frame"):
            internal["audit.csv"] = aud.frame().to_csv(index=False)
        content = TableContent(tres.table, method, cls.label, tres.params, tres.values, tres.status,
                               tres.audit.to_dict(), measured_rules(decl_rules, primary), list(tres.guarantees),
                               extra=dict(tres.extra), missing=report,
                               internal_html=f"<p>{tres.describe()}</p>", internal_files=internal)
        spec = {"table": {"dimensions": list(table.dims), **({"response": table.response} if table.response else {}),
                          **({"missing": body["missing"]} if body.get("missing") else {})},
                "rules": body.get("rules", []) or [], "protection": {"method": method, **tres.params}}
        rel = write_table_release(content, folder, spec=spec, name=name, overwrite=overwrite,
                                  signing_key=signing_key)
        return {"public": rel["public"], "internal": rel["internal"], "folders": rel["folders"],
                "verdict": rel["verdict"], "passed": rel["passed"], "audit_status": rel["audit_status"],
                "spec": spec}

    return work


def measured_rules(rules: list, primary) -> list:
    """The rules with their thresholds and measured values (cells each flagged)."""
    from ..report.table_release import rules_measured

    return rules_measured(rules, primary)


def TABLE_ROUTES(ctx) -> list:  # noqa: N802 - the name the tables router mounts
    """The tables API's routes (see the module docstring), for the tables router."""
    from starlette.routing import Route

    from .routes.common import api

    session = ctx.session

    def uploaded(name, what: str):
        return session.uploaded_file(name, what)

    def get_methods(request, body):
        return methods_payload()

    def post_protect(request, body):
        work, as_job = protect_request(session, body, uploaded)
        if not as_job:
            return work()

        def job_work(job) -> dict:
            job.progress(0, 1, f"protecting the {' x '.join(map(str, body.get('dims', [])))} table")
            out = work()
            job.progress(1, 1, "protected")
            return out

        return ctx.jobs.submit("table", job_work).to_dict()

    def post_release(request, body):
        folder = body.get("folder")
        if not isinstance(folder, str) or not folder.strip():
            raise InputError("give the folder to write the table release to")
        target = session.files.check_write(folder, base=session.workdir, what="the output folder")
        work = release_request(session, body, uploaded, folder=target, signing_key=ctx.signing_key)

        def job_work(job) -> dict:
            job.progress(0, 1, "releasing the table")
            out = work()
            job.progress(1, 1, "released")
            return out

        return ctx.jobs.submit("table_release", job_work).to_dict()

    return [Route("/api/tables/methods", api(get_methods), methods=["GET"]),
            Route("/api/tables/protect", api(post_protect), methods=["POST"]),
            Route("/api/tables/release", api(post_release), methods=["POST"])]
