"""``method = "dp"`` in a TOML table spec: a differentially private table.

Spec keys::

    [protection]
    method = "dp"
    mechanism = "gaussian"        # gaussian (rho, zero-concentrated DP) | laplace (epsilon, pure DP)
    rho = 0.5                     # gaussian; laplace: epsilon = 1.0
    max_contributions = 1         # inner cells one person can count in
    person = "person_id"          # microdata: enforce the bound per person (else every record is a person)
    geography = "region"          # fitted top-down (default: the first dimension)
    invariant_depth = 0           # totals published exactly down to this level; "none" for none
    consistent = true             # non-negative integers that add up (false: the raw noisy cells)
    confidence = 0.9              # level of the published intervals
    n_simulations = 4             # runs that calibrate the intervals of post-processed cells
    seed = 12345                  # a secret: never written out
    # sums (table.response): clip_lower = 0, clip_upper = 100 (each person's contribution per cell)

    [budget]                      # required: checked before any noise is drawn
    max_rho = 0.5                 # or: max_epsilon = 2.0 with delta = 1e-6 (conversion = "cks" | "bun-steinke")

A release over budget is refused (exit code 3) and nothing is written. The outputs:
``output.table`` (``<stem>_published.csv``: codes, value, lower, upper, status ``dp`` or
``invariant``), ``output.report`` (``<stem>_report.html``, the report section as a page) and
``output.public_report`` (``<stem>_public.html``: the table with its intervals and the
statement of what is guaranteed). Nothing written holds the seed or a path.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import GateError, ParameterError, SpecError
from ..io.atomic import atomic_write_text, guard_target
from ..result import ResultDisplay, jsonable
from ..tables.registry import table_method_class
from ..tables.table import Table, grid_html
from .accountant import Accountant, MaxEpsilon, MaxRho
from .mechanisms import DPTableResult, clipped_table

__all__ = ["DPRun", "run_dp", "budget_from_spec", "settings_from_spec", "dp_public_page", "PROTECTION_KEYS",
           "BUDGET_KEYS"]

#: the [protection] keys of method "dp" (besides method and seed)
PROTECTION_KEYS = ("mechanism", "rho", "epsilon", "max_contributions", "person", "geography", "invariant_depth",
                   "consistent", "confidence", "n_simulations", "clip_lower", "clip_upper")
BUDGET_KEYS = ("max_rho", "max_epsilon", "delta", "conversion")


@dataclass(frozen=True)
class DPRun(ResultDisplay):
    """Outcome of a ``method = "dp"`` table spec."""

    spec_path: str
    table: Table
    result: DPTableResult
    budget: object
    budget_check: object
    tabulation: dict
    seconds: float
    outputs: dict = field(default_factory=dict)
    method: str = "dp"
    #: per dimension with missing values: the choice made and the counts
    missing: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = self.result.to_dict()
        d.update({"method": "dp", "status": "dp table released",
                  "budget": {"declared": self.budget.describe(), **self.budget_check.to_dict(),
                             "spent_per_table": Accountant((self.result.charge,)).per_table()},
                  "audit_ok": bool(self.result.ok), "seconds": round(self.seconds, 4),
                  "outputs": dict(self.outputs)})
        if self.tabulation:
            d["tabulation"] = dict(self.tabulation)
        return jsonable(d)

    def describe(self) -> str:
        return f"{self.table.describe()}\n{self.result.describe()}\n{self.budget_check.statement}"

    def report_html(self) -> str:
        tab = ""
        if self.tabulation:
            t = self.tabulation
            tab = (f"<p>Tabulation: {t['n_records']:,} records; {t['n_dropped']:,} dropped to keep each person within "
                   f"the contribution bound; {t['n_clipped']:,} contributions clipped.</p>")
        return (self.result.report_html().replace("</section>", "")
                + f"<p>Budget: {html.escape(self.budget_check.statement)}</p>{tab}</section>")


def budget_from_spec(spec: dict):
    """The budget of ``[budget]`` (required for a DP table)."""
    b = spec.get("budget")
    if not isinstance(b, dict) or not b:
        raise SpecError("budget: a DP table needs a privacy budget: add [budget] with max_rho = ... (zCDP) or "
                        "max_epsilon = ... and delta = ...")
    try:
        if "max_rho" in b:
            extra = sorted(set(b) - {"max_rho"})
            if extra:
                raise SpecError(f"budget.{extra[0]}: does not go with max_rho; give max_rho alone, or max_epsilon "
                                "with delta")
            return MaxRho(b["max_rho"])
        if "max_epsilon" in b:
            return MaxEpsilon(b["max_epsilon"], b.get("delta", 0.0), b.get("conversion", "cks"))
    except ParameterError as e:
        key = {"rho": "max_rho", "epsilon": "max_epsilon"}.get(e.param, e.param)
        raise SpecError(f"budget.{key}: {e}") from None
    raise SpecError("budget: give max_rho = ... (zCDP) or max_epsilon = ... (with delta = ... unless pure DP)")


def settings_from_spec(prot: dict, *, sums: bool):
    """The DP settings object of ``[protection]``."""
    mech = prot.get("mechanism", "gaussian")
    if mech not in ("gaussian", "laplace"):
        raise SpecError(f"protection.mechanism: must be 'gaussian' or 'laplace'; got {mech!r}")
    # the four DP settings are registered table methods (sdckit.dp.table_methods)
    cls = table_method_class(f"dp_{mech}_{'sums' if sums else 'counts'}").dp_class
    kw = {}
    for k in ("max_contributions", "geography", "consistent", "confidence", "n_simulations"):
        if k in prot:
            kw[k] = prot[k]
    if "invariant_depth" in prot:
        v = prot["invariant_depth"]
        kw["invariant_depth"] = None if v == "none" else v
    if mech == "gaussian":
        if "rho" not in prot:
            raise SpecError("protection.rho: missing; the gaussian mechanism needs rho (zCDP), e.g. rho = 0.5")
        if "epsilon" in prot:
            raise SpecError("protection.epsilon: the gaussian mechanism takes rho; use mechanism = 'laplace' "
                            "for epsilon")
        kw["rho"] = prot["rho"]
    else:
        if "epsilon" not in prot:
            raise SpecError("protection.epsilon: missing; the laplace mechanism needs epsilon, e.g. epsilon = 1.0")
        if "rho" in prot:
            raise SpecError("protection.rho: the laplace mechanism takes epsilon; use mechanism = 'gaussian' for rho")
        kw["epsilon"] = prot["epsilon"]
    if sums:
        for k, name in (("clip_lower", "lower"), ("clip_upper", "upper")):
            if k not in prot:
                raise SpecError(f"protection.{k}: missing; sums need each person's contribution clipped to "
                                "[clip_lower, clip_upper]")
            kw[name] = prot[k]
    elif "clip_lower" in prot or "clip_upper" in prot:
        raise SpecError("protection.clip_lower: clipping is for sums (table.response); counts need none")
    try:
        return cls(**kw)
    except ParameterError as e:
        key = {"lower": "clip_lower", "upper": "clip_upper"}.get(e.param, e.param)
        raise SpecError(f"protection.{key}: {e}") from None


def run_dp(spec: dict, spec_path: str | Path, table: Table, frame_reader, *, write: bool = True) -> DPRun:
    """Run the DP part of a table spec on ``table`` (built by the spec reader); with
    ``write=False`` nothing is written (a release writes the outputs)."""
    t0 = time.perf_counter()
    inp = spec.get("input", {})
    prot = spec.get("protection", {})
    tab = spec.get("table", {})
    base = Path(spec_path).resolve().parent
    for k in ("weight", "holding"):
        if k in tab:
            raise SpecError(f"table.{k}: a DP table counts persons (or sums their clipped contributions); "
                            f"remove {k} (use protection.person for people with several records)")
    if spec.get("rules"):
        raise SpecError("rules: a DP table protects every cell with noise; sensitivity rules do not apply; "
                        "remove the [[rules]]")
    sums = table.kind == "magnitude"
    settings = settings_from_spec(prot, sums=sums)
    budget = budget_from_spec(spec)
    tabulation: dict = {}
    if "microdata" in inp and (sums or "person" in prot):
        frame = frame_reader(base / inp["microdata"])
        hier = {d: h for d, h in zip(table.dims, table.hierarchies)}
        table, tabulation = clipped_table(frame, list(table.dims), response=tab.get("response"),
                                          person=prot.get("person"), max_contributions=settings.max_contributions,
                                          lower=prot.get("clip_lower"), upper=prot.get("clip_upper"),
                                          hierarchies=hier, total=tab.get("total", "Total"))
    elif sums:
        raise SpecError("input.table: DP sums need the microdata (input.microdata) to clip each contribution")
    elif "person" in prot:
        raise SpecError("protection.person: a person column needs microdata (input.microdata)")
    name = Path(spec_path).stem
    # the budget is checked before any noise is drawn: over budget, nothing is drawn or written
    check = Accountant().spend(settings.charge(table, name)).check(budget)
    if not check.passed:
        raise GateError(f"budget: {check.statement} Lower protection.{'rho' if 'rho' in prot else 'epsilon'} or "
                        "raise the budget; nothing was written.")
    if not write:
        try:
            result = settings.apply(table, rng=prot.get("seed"), name=name)
        except ParameterError as e:
            raise SpecError(f"protection.{e.param or 'seed'}: {e}") from None
        return DPRun(str(spec_path), table, result, budget, check, tabulation, time.perf_counter() - t0, {})
    out = spec.get("output", {})
    stem = Path(spec_path).stem
    targets = {"table": out.get("table", f"{stem}_published.csv"), "report": out.get("report", f"{stem}_report.html")}
    rep = Path(targets["report"])
    targets["public_report"] = out.get("public_report", str(rep.with_name(f"{rep.stem.removesuffix('_report')}_public.html")))
    if "public_table" in out:
        targets["public_table"] = out["public_table"]
    for target in targets.values():  # before anything is drawn or written: never over an input
        guard_target(base / target)
    try:
        result = settings.apply(table, rng=prot.get("seed"), name=name)
    except ParameterError as e:
        raise SpecError(f"protection.{e.param or 'seed'}: {e}") from None
    run = DPRun(str(spec_path), table, result, budget, check, tabulation, time.perf_counter() - t0, {})
    outputs = {}
    csv_text = result.frame().to_csv(index=False)
    outputs["table"] = str(atomic_write_text(base / targets["table"], csv_text))
    if "public_table" in targets:
        outputs["public_table"] = str(atomic_write_text(base / targets["public_table"], csv_text))
    page = ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>sdckit differentially private table"
            "</title></head><body>" + run.report_html() + "</body></html>")
    outputs["report"] = str(atomic_write_text(base / targets["report"], page))
    outputs["public_report"] = str(atomic_write_text(base / targets["public_report"], dp_public_page(run)))
    return DPRun(str(spec_path), table, result, budget, check, tabulation, time.perf_counter() - t0, outputs)


def dp_public_page(run: DPRun, *, max_rows: int = 5000) -> str:
    """The page to publish with a DP table: every cell as ``value [lower, upper]``, the
    invariant cells marked, and the statements of privacy loss and accuracy, in words."""
    r = run.result
    e = html.escape

    def cell(i: int) -> str:
        mark = "<sup>i</sup>" if r.status[i] == "invariant" else ""
        return (f"<td class='{r.status[i]}'>{int(r.published[i])}{mark}"
                f"<br><small>[{int(r.lower[i])}, {int(r.upper[i])}]</small></td>")

    shown = "" if r.table.n_cells <= max_rows or len(r.table.dims) == 2 else (
        f"<p>The first {max_rows:,} of {r.table.n_cells:,} cells are shown; the CSV holds them all.</p>")
    pct = f"{100 * r.settings.confidence:g}%"
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Published table (differential privacy)"
            "</title><style>body{font-family:system-ui,'Liberation Sans',sans-serif;max-width:1040px;margin:1.5em auto;"
            "padding:0 1em;color:#1d2430}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #cbd2d9;"
            "padding:3px 8px;text-align:right;font-variant-numeric:tabular-nums}th{background:#f0f4f8}"
            "td small{color:#4a5568}h1{border-bottom:3px solid #2b6cb0}</style></head><body>"
            "<h1>Published table (differential privacy)</h1>"
            f"<p>{e(r.table.describe())}.</p>"
            f"<p>Every cell was published with noise ({e(r.charge.note)}): the table is {e(r.charge.loss.describe())} "
            f"for any person who counts in at most {r.settings.max_contributions} inner cell(s). "
            f"{e(run.budget_check.statement)}</p>"
            f"<p>Each cell shows its published value and, below it, an interval that holds the true value with "
            f"about {pct} probability. {e(r.interval_statement())}</p>"
            "<ul class='legend'><li><sup>i</sup> = invariant: published exactly, without noise (not covered by the "
            "privacy guarantee)</li></ul>"
            f"{shown}{grid_html(r.table, cell, max_rows=max_rows)}</body></html>")
