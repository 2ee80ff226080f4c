"""TOML table spec: input, dimensions, hierarchies, rules, method, output -> :class:`TableRun`.

Example::

    [input]
    microdata = "firms.csv"           # or: table = "cells.csv" with value = "n" (freq, top optional)

    [table]
    dimensions = ["region", "activity"]
    # response = "turnover"; weight = "w"; holding = "group"; total = "Total"; n_top = 3

    [hierarchies.region]
    hrc = "region.hrc"                # or: parent_child = "region.csv" (parent = ..., child = ...)

    [[rules]]
    type = "threshold"                # threshold | p% | pq | dominance
    n = 3

    [protection]
    method = "optimal"                # any registered table method (optimal | modular | heuristic | hypercube |
                                      # gauss | margins | cta | rounding | ckm) or dp; the other keys are the
                                      # chosen method's declared parameters (protection_keys(method)): a key
                                      # the method does not take is refused, naming the keys it takes
    # hypercube (large tables): max_siblings = 4; audit_lps = 20000; audit_seconds = 120 (CPU seconds);
    #   audit_certificates = true (the audit verifies the hypercubes and uses them as proofs)
    # audit = "exact"                 # refuse (exit 3, nothing written) unless every sensitive cell is
                                      # audited and protected; default "sampled" accepts a sampled audit,
                                      # stated as such (never as passed)
    cost = "value"                    # value | freq | log | unity | tauargus (tau-Argus scaling)
    time_limit = 60
    # zero_unsafe = false; lower_bound = 0; upper_bound = ...; mip_gap = 1e-6
    # rounding: base = 3; rounding = "optimal" | "unbiased"; seed = 12345 (kept out of outputs)
    # dp (differential privacy, sdckit.dp.run): mechanism = "gaussian"; rho = 0.5; [budget] max_rho = 0.5

    [output]
    table = "published.csv"           # defaults: <spec>_published.csv and <spec>_report.html
    audit = "audit.csv"               # internal: its protection levels tell the sensitive cells apart
    report = "report.html"            # internal: marks primary and secondary cells
    public_report = "public.html"     # to publish: suppressed cells as x with their intervals
                                      # (default <report stem without _report>_public.html)
    public_table = "public.csv"       # to publish: value (number or code) and status per cell
    suppression_code = "x"            # what a suppressed cell shows (default x)
    # folder = "release"              # a release instead of loose files: the public folder (table CSV with
                                      # status marks, report.html, certificate.json) and <folder>-internal,
                                      # switched in together, checked by `sdckit verify`; then table is the CSV's
                                      # name and public_report the page's; internal_folder, signing_key and
                                      # overwrite = true as for a microdata release; catalogue =
                                      # ["sdmx", "frictionless", "satre"] (the default), licence, description
    # [table] missing = "refuse"      # or "category" / "drop", or per dimension: missing = {region = "drop"};
                                      # missing_label = "Missing"; [hierarchies.<dim>] arx = "h.csv" (ARX-style)

Relative paths are relative to the spec file. Outputs are written atomically.
"""

from __future__ import annotations

import html
import importlib
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import close_names
from ..errors import GateError, InputError, ParameterError, SpecError
from ..io.atomic import atomic_write_text
from ..params import Param, step_params
from ..result import ResultDisplay, jsonable
from .dimensions import (
    DEFAULT_MISSING_LABEL,
    MISSING_CHOICES,
    apply_missing,
    hierarchy_from_file,
    missing_choices,
    with_missing_code,
)
from .public import DEFAULT_CODE, check_code, public_frame, public_page
from .registry import build_table_method, build_table_rule, known_table_methods, table_method_class
from .rules import primary_cells
from .suppression import table_html
from .table import Table

__all__ = ["TableRun", "run_table_spec", "load_table_spec", "published_frame", "spec_methods", "MISSING_CHOICES",
           "protection_keys", "check_protection_keys", "PROTECTION_COMMON"]


def spec_methods() -> tuple[str, ...]:
    """The spec's ``protection.method`` values: every registered table method, with the four DP
    settings as one ``"dp"`` (the mechanism and the table's kind choose among them)."""
    names = [n for n in known_table_methods() if not n.startswith("dp_")]
    return tuple(names) + ("dp",)

#: ``[protection] audit``: "exact" refuses a run whose audit is not exact and passing
AUDIT_REQUIREMENTS = ("exact", "sampled")
_SUPPRESSION = ("optimal", "modular", "heuristic", "hypercube", "gauss")

#: the ``[protection]`` keys of the section itself, taken with every method (declared here once;
#: the methods' own keys are their registered declarations, see :func:`protection_keys`)
PROTECTION_COMMON = (
    Param("method", "choice", "optimal", choices=spec_methods, label="protection method",
          help="the registered table method (or dp: the differential-privacy settings, chosen by mechanism)"),
    Param("audit", "choice", "sampled", choices=AUDIT_REQUIREMENTS, label="audit required",
          help="exact: refuse (nothing written) unless every sensitive cell is audited and protected"),
    Param("zero_unsafe", "bool", False, label="empty cells sensitive",
          help="count empty cells as sensitive for the rules"),
    Param("seed", "int", None, nullable=True, advanced=True, label="seed",
          help="the seed of a random method (a secret: never written out)"),
)

#: spec methods read by their own module, which declares the keys it reads as ``PROTECTION_KEYS``:
#: the cell key method (its p-table keys; it also takes the registered "ckm" declaration) and the
#: four DP settings as one ``"dp"``. Every other method is read from its registered declaration.
_SPEC_READERS = {"ckm": "sdckit.tables.ckm.run", "dp": "sdckit.dp.run"}


def _method_keys(method: str) -> list[str]:
    """The keys ``method`` declares (see :func:`protection_keys`), without the common ones."""
    keys: list[str] = []
    if method in _SPEC_READERS:
        keys += importlib.import_module(_SPEC_READERS[method]).PROTECTION_KEYS
    if method != "dp":  # "dp" is four registered settings, read by sdckit.dp.run under its own keys
        keys += [p.name for p in step_params(table_method_class(method)) if p.name not in keys]
    return keys


def protection_keys(method: str | None = None) -> tuple[str, ...]:
    """The ``[protection]`` keys a spec may give: the section's own (:data:`PROTECTION_COMMON`)
    and the declared parameters of ``method``; with no method, of every method.

    Derived from the table-method registry, so a newly registered method's parameters are
    accepted without an edit here.

    Parameters
    ----------
    method : str, optional
        A ``protection.method`` value (:func:`spec_methods`); None for the union over all.

    Returns
    -------
    tuple of str
        The keys, the common ones first, each once.
    """
    out = [p.name for p in PROTECTION_COMMON]
    for m in spec_methods() if method is None else (method,):
        out += [k for k in _method_keys(m) if k not in out]
    return tuple(out)


_SECTIONS = {
    "input": {"microdata", "table", "value", "freq", "top"},
    "table": {"dimensions", "response", "weight", "holding", "total", "n_top", "missing", "missing_label"},
    "budget": {"max_rho", "max_epsilon", "delta", "conversion"},  # method "dp" (sdckit.dp.run.BUDGET_KEYS)
    "output": {"table", "audit", "report", "public_report", "public_table", "suppression_code",
               "folder", "internal_folder", "signing_key", "overwrite",
               "catalogue", "licence", "description"},  # a release's catalogue files (report.catalogue_files)
}


@dataclass(frozen=True)
class TableRun(ResultDisplay):
    """Outcome of one table spec: the table, the primary cells, the protection result, the files."""

    spec_path: str
    table: Table
    method: str
    result: object
    primary: object
    seconds: float
    outputs: dict = field(default_factory=dict)
    #: the registry's :class:`~sdckit.tables.registry.TableResult` (values, statuses, verdict)
    table_result: object = None
    #: per dimension with missing values: the choice made and the counts (see ``[table] missing``)
    missing: dict = field(default_factory=dict)

    @property
    def n_primary(self) -> int:
        return 0 if self.primary is None else self.primary.n_primary

    def audit_summary(self) -> dict:
        """What the audit proved: ``audit_status`` (``"exact"``, ``"sampled"`` or ``"failed"``),
        ``audit_ok`` (True only when exact and passing), ``n_audited`` / ``n_not_audited``
        (sensitive cells), ``audit_rule`` (how the audited cells were chosen) and
        ``audit_statement`` (the verdict in words)."""
        r = self.result
        if self.method == "rounding":
            failed = [g for g in r.guarantees if not g.holds]
            status = "failed" if failed else "exact"
            statement = ("Every cell's rounding checked: the guarantees hold" if not failed else
                         f"Every cell's rounding checked: {len(failed)} guarantee(s) do NOT hold")
            return {"audit_status": status, "audit_ok": status == "exact", "n_audited": self.table.n_cells,
                    "n_not_audited": 0, "audit_rule": "every cell checked", "audit_statement": statement}
        aud = r.audit
        status = aud.status
        if self.method == "margins" and not r.ok:
            status = "failed"  # a sensitive cell is published as a margin, or an interval is too narrow
        if hasattr(aud, "mode"):  # protection audit: counts of sensitive cells audited
            n_aud, n_not = aud.n_audited, aud.n_not_audited
        else:  # full interval audit: every suppressed cell, so every sensitive one
            n_aud, n_not = self.n_primary, 0
        statement = aud.statement()
        if self.method == "margins" and r.n_sensitive_published:
            statement += f"; {r.n_sensitive_published:,} sensitive cells are published as margins: NOT safe"
        return {"audit_status": status, "audit_ok": status == "exact", "n_audited": int(n_aud),
                "n_not_audited": int(n_not), "audit_rule": aud.rule, "audit_statement": statement}

    def to_dict(self) -> dict:
        """The stable summary: n_cells, n_primary, n_secondary, cost, audit_ok, audit_status,
        n_audited, n_not_audited, audit_rule, audit_statement, seconds (+ method, status, outputs).

        ``audit_ok`` is True only when the audit is exact and passes: a sampled audit is never ok."""
        r = self.result
        d = r.to_dict()
        if self.method in _SUPPRESSION:
            n_sec, cost, st = r.n_secondary, r.cost, r.status
        elif self.method == "rounding":
            n_sec, cost, st = 0, d["sum_abs_deviation"], r.status
        elif self.method == "cta":  # cost: the adjustment's weighted distance
            n_sec, cost, st = 0, r.objective, r.status
        else:
            withheld = ~r.published
            prim = np.zeros_like(withheld) if self.primary is None else self.primary.sensitive
            n_sec, cost = int((withheld & ~prim).sum()), 0.0
            st = "margins released"
        aud = self.audit_summary()
        out = {"n_cells": self.table.n_cells, "n_primary": self.n_primary, "n_secondary": int(n_sec),
               "cost": float(cost), "audit_ok": aud["audit_ok"], "audit_status": aud["audit_status"],
               "n_audited": aud["n_audited"], "n_not_audited": aud["n_not_audited"],
               "audit_rule": aud["audit_rule"], "audit_statement": aud["audit_statement"],
               "seconds": round(self.seconds, 4), "method": self.method, "status": st, "outputs": dict(self.outputs)}
        if self.method in _SUPPRESSION:
            out["proven_optimal"] = bool(r.proven_optimal)
            if hasattr(r.audit, "mode"):  # protection audit (hypercube): exact or sampled
                out["audit_mode"] = r.audit.mode
        return jsonable(out)

    def describe(self) -> str:
        a = self.audit_summary()
        return (f"{self.table.describe()}\n{self.result.describe()}\n"
                f"Audit {a['audit_status']}: {a['audit_statement']}.")

    def report_html(self) -> str:
        """Report section: summary, the table (suppressed cells marked) and the audit intervals."""
        d = self.to_dict()
        kv = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                     for k, v in d.items() if k != "outputs")
        if self.method == "margins":
            body = (table_html(self.table, np.zeros(self.table.n_cells, bool), ~self.result.published)
                    + self.result.audit.report_html())
        else:
            body = self.result.report_html()
        legend = ("<p>p = primary (sensitive) cell, s = secondary suppression; the audit gives the interval "
                  "[min, max] an attacker can derive for every suppressed cell.</p>"
                  if self.method not in ("rounding", "cta") else "")
        a = self.audit_summary()
        verdict = (f"<p class='audit-status {'audit-ok' if a['audit_ok'] else 'audit-not-proven'}'><strong>Audit: "
                   f"{html.escape(a['audit_status'])}.</strong> {html.escape(a['audit_statement'])}."
                   + ("" if a["audit_status"] != "sampled" else f" Sampling rule: {html.escape(a['audit_rule'])}.")
                   + "</p>")
        return (f"<section class='table-protection'><h2>Table protection ({html.escape(self.method)})</h2>"
                f"<p>{html.escape(self.table.describe())}</p>{verdict}<table class='kv'>{kv}</table>{legend}{body}"
                "</section>")


def _get(d: dict, key: str, where: str, kind=None, default=...):
    if key not in d:
        if default is ...:
            raise SpecError(f"{where}.{key}: missing; add it to the spec")
        return default
    v = d[key]
    if kind is not None and not isinstance(v, kind):
        raise SpecError(f"{where}.{key}: must be {getattr(kind, '__name__', kind)}, got {v!r}")
    return v


def check_protection_keys(part: dict) -> None:
    """Refuse a ``[protection]`` key the chosen method does not take (:func:`protection_keys`).

    Parameters
    ----------
    part : dict
        The ``[protection]`` table of a spec.

    Raises
    ------
    SpecError
        One line naming the key, the method and the keys it takes (with the closest name, or
        the methods the key belongs to).
    """
    method = part.get("method", "optimal")
    if not isinstance(method, str) or method not in spec_methods():
        allowed = protection_keys()  # the unknown method is refused by run_table_spec, naming the methods
        for k in part:
            if k not in allowed:
                raise SpecError(f"protection.{k}: unknown key; {close_names(k, sorted(allowed))}"
                                .replace("the columns are", "the keys are"))
        return
    allowed = protection_keys(method)
    for k in part:
        if k in allowed:
            continue
        owners = [m for m in spec_methods() if k in _method_keys(m)]
        close = close_names(k, allowed)
        close = f"{close} " if close.startswith("did you mean") else ""
        takes = f"the method {method!r} takes {', '.join(allowed)}"
        if not owners:
            raise SpecError(f"protection.{k}: unknown key; {close}({takes})")
        raise SpecError(f"protection.{k}: the method {method!r} does not take this key (it is a key of "
                        f"{', '.join(map(repr, owners))}); {close}{takes}; remove it or change the method")


def _check_keys(spec: dict) -> None:
    extra = set(spec) - set(_SECTIONS) - {"hierarchies", "rules", "protection"}
    if extra:
        bad = sorted(extra)[0]
        names = sorted([*_SECTIONS, "protection"]) + ["hierarchies", "rules"]
        raise SpecError(f"{bad}: unknown section; {close_names(bad, names)}"
                        .replace("the columns are", "the sections are"))
    if "protection" in spec:
        if not isinstance(spec["protection"], dict):
            raise SpecError("protection: must be a table ([protection])")
        method = spec["protection"].get("method", "optimal")
        if "budget" in spec and method != "dp":  # the whole section first: it says more than its keys
            raise SpecError(f"budget: a privacy budget goes with method = 'dp', not {method!r}; remove [budget]")
        check_protection_keys(spec["protection"])
    for sec, allowed in _SECTIONS.items():
        part = spec.get(sec, {})
        if not isinstance(part, dict):
            raise SpecError(f"{sec}: must be a table ([{sec}])")
        for k in part:
            if k not in allowed:
                raise SpecError(f"{sec}.{k}: unknown key; {close_names(k, sorted(allowed))}"
                                .replace("the columns are", "the keys are"))


def load_table_spec(path: str | Path) -> dict:
    """Parse the TOML file; a missing file or bad TOML raises with the path."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"table spec {str(p)!r} does not exist; give the path of a TOML table spec")
    from ..io.atomic import register_input

    register_input(p)  # no output of this run may be written over its spec
    try:
        spec = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{p}: not valid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise SpecError(f"{p}: is not a UTF-8 text file (byte {e.start}); a table spec is TOML text") from None
    _check_keys(spec)
    return spec


def _read_csv(path: Path, where: str, dims) -> pd.DataFrame:
    from ..io.atomic import register_input

    if not path.is_file():
        raise SpecError(f"{where}: file {str(path)!r} does not exist")
    register_input(path)  # no output of this process may be written over it
    try:
        df = pd.read_csv(path, dtype={d: str for d in dims})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path.name}: {where}: cannot be read as CSV: {first}") from None
    dup = [c for c in df.columns if "." in str(c) and str(c).rsplit(".", 1)[0] in df.columns
           and str(c).rsplit(".", 1)[1].isdigit()]
    if dup:
        raise InputError(f"{path.name}: {where}: the column name {dup[0].rsplit('.', 1)[0]!r} appears "
                         "more than once; column names must be unique: rename one.")
    if df.shape[0] == 0:
        raise InputError(f"{path.name}: {where}: has a header but no records; give at least one row.")
    return df


def _missing_settings(spec: dict, dims: list) -> tuple[dict, str]:
    tab = spec.get("table", {})
    label = _get(tab, "missing_label", "table", str, DEFAULT_MISSING_LABEL)
    return missing_choices(tab.get("missing"), dims), label


def _missing_reader(spec: dict, dims):
    """The microdata reader of the CKM and DP runs: the same missing-value choices as the table."""
    choices, label = _missing_settings(spec, list(dims))

    def read(f: Path) -> pd.DataFrame:
        frame = _read_csv(f, "input.microdata", dims)
        return apply_missing(frame, list(dims), choices, source=f.name, label=label)[0]

    return read


def _with_missing(run, missing: dict):
    from dataclasses import replace

    return replace(run, missing=missing) if missing else run


def _build_table(spec: dict, base: Path, *, with_missing: bool = False):
    """The table of the spec (and, with ``with_missing``, the missing-value report per dimension)."""
    inp = _get(spec, "input", "spec", dict)
    tab = _get(spec, "table", "spec", dict)
    dims = _get(tab, "dimensions", "table", list)
    if not dims or not all(isinstance(d, str) for d in dims):
        raise SpecError("table.dimensions: give a list of column names, e.g. [\"region\", \"activity\"]")
    total = _get(tab, "total", "table", str, "Total")
    choices, label = _missing_settings(spec, dims)
    hier = {}
    for name, h in _get(spec, "hierarchies", "spec", dict, {}).items():
        where = f"hierarchies.{name}"
        if name not in dims:
            raise SpecError(f"{where}: {name!r} is not one of the dimensions {dims}")
        hier[name] = hierarchy_from_file(h, base, total=total, where=where)
    if "microdata" in inp:
        f = base / inp["microdata"]
        df = _read_csv(f, "input.microdata", dims)
    elif "table" in inp:
        f = base / inp["table"]
        df = _read_csv(f, "input.table", dims)
    else:
        raise SpecError("input: give microdata = 'file.csv' or table = 'cells.csv' (with value = 'column')")
    df, missing = apply_missing(df, dims, choices, source=f.name, label=label)
    for d, r in missing.items():
        if r["choice"] == "category" and d in hier:
            hier[d] = with_missing_code(hier[d], label)
    if "microdata" in inp:
        table = Table.from_microdata(df, dims, response=tab.get("response"), weight=tab.get("weight"),
                                     holding=tab.get("holding"), hierarchies=hier, total=total,
                                     n_top=int(tab.get("n_top", 3)))
    else:
        try:
            table = Table.from_cells(df, dims, _get(inp, "value", "input", str), freq=inp.get("freq"),
                                     top=tuple(inp.get("top", ())), hierarchies=hier, total=total)
        except InputError as exc:  # name the file the cells came from
            msg = str(exc)
            name = Path(inp["table"]).name
            raise InputError(msg.replace("table file:", f"{name}:", 1) if msg.startswith("table file:")
                             else f"{name}: {msg}") from None
    return (table, missing) if with_missing else table


def rules_from_spec(rules_spec: list) -> list:
    """The rule objects of ``[[rules]]`` (declared in the registry; errors at ``rules[k]``)."""
    if not isinstance(rules_spec, list) or not all(isinstance(r, dict) for r in rules_spec):
        raise SpecError("rules: give [[rules]] tables, e.g. type = 'threshold' and n = 3")
    return [build_table_rule(r, where=f"rules[{k}]") for k, r in enumerate(rules_spec)]


def method_from_spec(method: str, prot: dict, where: str = "protection"):
    """The registered table method ``method`` built from the ``[protection]`` keys it declares."""
    cls = table_method_class(method, where=f"{where}.method")
    names = {p.name for p in step_params(cls)}
    return build_table_method(method, {k: v for k, v in prot.items() if k in names}, where=where)


def _ckm_spec(spec: dict, kind: str) -> dict:
    """The spec with the registered "ckm" method's declared p-table settings (D, V, js or
    ptable_file, validated and defaulted by its declaration) given to the CKM reader as ``ptable``."""
    from .ckm.run import PROTECTION_KEYS

    prot = spec.get("protection", {})
    own = [p.name for p in step_params(table_method_class("ckm")) if p.name not in PROTECTION_KEYS]
    given = {k: prot[k] for k in own if k in prot}
    if not given:
        return spec
    if "ptable" in prot:
        raise SpecError(f"protection.{next(iter(given))}: give the p-table either as ptable or as "
                        f"{', '.join(own)}, not both; remove one")
    if "ptable_file" in given and len(given) > 1:
        raise SpecError(f"protection.ptable_file: replaces {', '.join(k for k in own if k != 'ptable_file')}; "
                        "give the file or the parameters, not both")
    m = method_from_spec("ckm", given)
    ptable = m.ptable_file or ({"D": m.D, "V": float(m.V)} | ({"js": m.js} if kind == "frequency" else {}))
    rest = {k: v for k, v in prot.items() if k not in given}
    return {**spec, "protection": {**rest, "ptable": ptable}}


def run_table_spec(path: str | Path, *, write: bool = True) -> TableRun:
    """Read the spec, build the table, apply the rules and the method, audit, write outputs.

    With ``write=False`` nothing is written (the run's ``outputs`` is empty): a release
    (``[output] folder``) is written by :func:`sdckit.report.table_release.release_table_spec`.
    """
    t0 = time.perf_counter()
    spec = load_table_spec(path)
    base = Path(path).resolve().parent
    table, missing = _build_table(spec, base, with_missing=True)
    prot = _get(spec, "protection", "spec", dict, {})
    method = prot.get("method", "optimal")
    if method not in spec_methods():
        raise SpecError(f"protection.method: must be one of {', '.join(spec_methods())}; got {method!r}")
    if "budget" in spec and method != "dp":
        raise SpecError(f"budget: a privacy budget goes with method = 'dp', not {method!r}; remove [budget]")
    required = prot.get("audit", "sampled")
    if required not in AUDIT_REQUIREMENTS:
        raise SpecError(f"protection.audit: must be one of {', '.join(map(repr, AUDIT_REQUIREMENTS))}; got {required!r}")
    if "audit" in prot and method in ("ckm", "dp"):
        raise SpecError(f"protection.audit: method {method!r} has no suppression audit; remove the key")
    reader = _missing_reader(spec, table.dims)
    if method == "ckm":  # cell key method (registered as "ckm"): the spec's p-table keys, see sdckit.tables.ckm.run
        from .ckm.run import run_ckm
        return _with_missing(run_ckm(_ckm_spec(spec, table.kind), path, table, reader, write=write), missing)
    if method == "dp":  # the four registered DP settings, chosen by mechanism and kind: see sdckit.dp.run
        from ..dp.run import run_dp
        return _with_missing(run_dp(spec, path, table, reader, write=write), missing)
    rules = [r.build() for r in rules_from_spec(_get(spec, "rules", "spec", list, []))]
    m = method_from_spec(method, prot)
    if m.needs_rules and not rules:
        raise SpecError("rules: suppression needs at least one [[rules]] entry (e.g. type = 'threshold', n = 3)")
    primary = primary_cells(table, rules, zero_unsafe=bool(prot.get("zero_unsafe", False))) if rules else None
    try:
        tres = m.apply(table, primary, rng=prot.get("seed"))
    except ParameterError as e:
        raise SpecError(f"protection.{e.param or 'seed'}: {e}") from None
    result = tres.detail
    if required == "exact":  # before anything is written
        verdict = TableRun(str(path), table, method, result, primary, 0.0, {}).audit_summary()
        if not verdict["audit_ok"]:
            raise GateError(f"{Path(path).name}: protection.audit = \"exact\" but the audit is {verdict['audit_status']}: "
                            f"{verdict['audit_statement']}; nothing was written. Raise audit_lps and audit_seconds "
                            "(or change the pattern) until every sensitive cell is audited and protected")
    if not write:
        return TableRun(str(path), table, method, result, primary, time.perf_counter() - t0, {}, tres, missing)
    out = _get(spec, "output", "spec", dict, {})
    for key in ("catalogue", "licence", "description"):
        if key in out:
            raise SpecError(f"output.{key}: catalogue files are written with a release; add folder = \"release\" "
                            "to [output] (or remove the key)")
    stem = Path(path).stem
    targets = {"table": out.get("table", f"{stem}_published.csv"), "report": out.get("report", f"{stem}_report.html")}
    if "audit" in out:
        targets["audit"] = out["audit"]
    from ..io.atomic import guard_target

    for target in targets.values():  # before anything is written: never over an input
        guard_target(base / target)
    run = TableRun(str(path), table, method, result, primary, time.perf_counter() - t0, {})
    outputs = {}
    outputs["table"] = str(atomic_write_text(base / targets["table"], published_frame(run).to_csv(index=False)))
    aud = getattr(result, "audit", None) or getattr(result, "intervals", None)
    if "audit" in targets and aud is not None:
        outputs["audit"] = str(atomic_write_text(base / targets["audit"], aud.frame().to_csv(index=False)))
    run = TableRun(str(path), table, method, result, primary, time.perf_counter() - t0, outputs)
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>sdckit table protection (internal)</title>"
            "<style>body{font-family:sans-serif}table{border-collapse:collapse;margin:1em 0}"
            "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
            "td.primary{background:#f99}td.secondary{background:#fd9}</style></head><body>"
            + "<p><strong>Internal report</strong>: it marks which suppressed cells are sensitive; "
            "publish the table file and the public page (*_public.html), not this page.</p>" + run.report_html() + "</body></html>")
    outputs["report"] = str(atomic_write_text(base / targets["report"], page))
    code = check_code(out.get("suppression_code", DEFAULT_CODE))
    public = public_report_html(run, code=code)
    if public is not None:
        rep = Path(targets["report"])
        stem_public = rep.stem.removesuffix('_report')
        name = out.get("public_report", str(rep.with_name(f"{stem_public}_public.html")))
        outputs["public_report"] = str(atomic_write_text(base / name, public))
        values, status = public_cells(run)
        csv_name = out.get("public_table", str(rep.with_name(f"{stem_public}_public.csv")))
        outputs["public_table"] = str(atomic_write_text(
            base / csv_name, public_frame(run.table, values, status, code=code).to_csv(index=False)))
    return TableRun(str(path), table, method, result, primary, time.perf_counter() - t0, outputs, tres, missing)


def public_cells(run: TableRun) -> tuple[np.ndarray, np.ndarray]:
    """Published value and public status (:data:`sdckit.tables.public.STATUSES`) of every cell."""
    t = run.table
    if run.method == "rounding":
        return np.asarray(run.result.rounded, dtype=float), np.full(t.n_cells, "rounded", dtype=object)
    if run.method == "cta":
        return np.asarray(run.result.adjusted, dtype=float), np.full(t.n_cells, "perturbed", dtype=object)
    if run.method == "margins":
        suppressed = ~np.asarray(run.result.published, dtype=bool)
    else:
        suppressed = np.asarray(run.result.primary.sensitive, dtype=bool) | np.asarray(run.result.secondary, dtype=bool)
    return np.asarray(t.value, dtype=float), np.where(suppressed, "suppressed", "safe").astype(object)


def public_report_html(run: TableRun, *, code: str = DEFAULT_CODE) -> str | None:
    """The page to publish with a protected table: every suppressed cell shown as the
    suppression code (``x`` by default), primary and secondary alike, with the interval
    [min, max] that anyone can derive for it from the published cells (the audit, without the
    protection levels, which would tell the sensitive cells apart); rounded cells marked
    with a superscript r (see :mod:`sdckit.tables.public`)."""
    values, status = public_cells(run)
    # the hypercube's protection audit proves levels, not [min, max]: no intervals to show then
    aud = getattr(run.result, "audit", None) if run.method not in ("rounding", "cta") else None
    note = ""
    if run.method == "rounding":
        note = (f"<p>Every cell is rounded to a multiple of {run.result.base:g}; rows and columns still add up "
                "(controlled rounding).</p>")
    if run.method == "cta":
        note = ("<p>Every cell is published as adjusted: the closest table in which every total still adds up "
                "and every sensitive cell lies outside its protection interval (controlled tabular adjustment)."
                "</p>")
    a = run.audit_summary()
    note += (f"<p class='audit-status'><strong>Protection audit: {html.escape(a['audit_status'])}.</strong> "
             f"{html.escape(a['audit_statement'])}.</p>")
    return public_page(run.table, values, status, code=code, title="Published table",
                       intervals=aud.frame() if aud is not None and hasattr(aud, "lower") else None, note=note)


def published_frame(run: TableRun) -> pd.DataFrame:
    """The table to publish: codes, published value (empty when suppressed) and status."""
    t = run.table
    df = t.to_frame()[list(t.dims)]
    r = run.result
    if run.method in _SUPPRESSION:
        # primary and secondary cells look the same: telling them apart would show which are sensitive
        df["value"] = np.where(r.suppressed, np.nan, t.value)
        df["status"] = np.where(r.suppressed, "suppressed", "published")
    elif run.method == "rounding":
        df["value"] = r.rounded
        df["status"] = f"rounded to base {r.base}"
    elif run.method == "cta":  # every cell as adjusted: no mark says which cells moved
        df["value"] = r.adjusted
        df["status"] = "adjusted (controlled tabular adjustment)"
    else:
        df["value"] = np.where(r.published, t.value, np.nan)
        df["status"] = np.where(r.published, "margin", "withheld")
    if np.all(np.isnan(df["value"]) | (df["value"] == np.round(df["value"]))):
        df["value"] = df["value"].round().astype("Int64")  # counts print as integers
    return df
