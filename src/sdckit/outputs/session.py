"""A researcher's session: tables, models, histograms and survival curves computed with pandas and
statsmodels, each recorded with its disclosure checks for an output checker (after ACRO).

Each call returns what pandas or statsmodels returns and records the output with ACRO's checks
(:mod:`sdckit.outputs.checks`) plus sdckit's audits (:mod:`sdckit.outputs.audit`): a failing
cell that the margins give back, and small cells that outputs of the session give away
together (differencing). :meth:`Session.finalise` writes the outputs and a ``results.json``
in ACRO's layout (so SACRO-Viewer and ACRO's own loader read it) for the checker. The record of
one output is :class:`~sdckit.outputs.record.OutputRecord` (re-exported here); which outputs the
session's audit stacks together is :mod:`sdckit.outputs.linking`.

References
----------
Green, E., Ritchie, F., Smith, J., Tilbrook, A. et al. (2023). ACRO: Automatic Checking of
Research Outputs. SACRO project (GitHub AI-SDC/ACRO): results format ``acro/record.py``.
Griffiths, E. et al. (2019). *Handbook on Statistical Disclosure Control for Outputs*, sections 3-5
(threshold, dominance, degrees of freedom, survival tables). Safe Data Access Professionals.
"""

from __future__ import annotations

import datetime as _dt
import linecache
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from .audit import TableLayout, audit_linked
from .checks import STATBARN, Check, cell_evidence, table_checks
from .linking import MAX_LINKED, linked_components, linked_groups  # noqa: F401 - MAX_LINKED re-exported
from .record import OutputRecord
from .rules import OutputRules

__all__ = ["Session", "OutputRecord", "RESULTS_FILE", "ACRO_FORMAT_VERSION"]

RESULTS_FILE = "results.json"
#: the version of ACRO whose results.json layout the file follows (ACRO's loader compares it)
ACRO_FORMAT_VERSION = "1.0.2"
#: ACRO's blocked extensions for custom outputs (default.yaml)
BLOCKED_EXTENSIONS = (".svg", ".gph")

_AGG_NAMES = {"count": "count", "size": "count", "len": "count", "mean": "mean", "average": "mean", "sum": "sum",
              "std": "std", "median": "median", "min": "min", "max": "max", "mode": "mode"}


def _caller_line(depth: int = 2) -> str:
    """The source line that called the session (ACRO records it as the output's command)."""
    try:
        frame = sys._getframe(depth)
    except ValueError:  # pragma: no cover
        return ""
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return line


def _as_series_list(axis: Any, prefix: str) -> list[pd.Series]:
    if isinstance(axis, pd.Series):
        return [axis]
    if isinstance(axis, pd.DataFrame):
        return [axis[c] for c in axis.columns]
    if isinstance(axis, (list, tuple)):
        out = []
        for k, a in enumerate(axis):
            s = a if isinstance(a, pd.Series) else pd.Series(np.asarray(a), name=f"{prefix}_{k}")
            out.append(s)
        return out
    return [pd.Series(np.asarray(axis), name=f"{prefix}_0")]


def _codes(series: list[pd.Series]) -> tuple[np.ndarray, list]:
    """Each record's cell along one axis (mixed radix over the axis' variables, sorted levels;
    -1 when a key is missing) and the axis' labels."""
    if not series:
        n = 0
        return np.zeros(n, np.int64), [None]
    code = np.zeros(len(series[0]), np.int64)
    levels = []
    missing = np.zeros(len(series[0]), bool)
    for s in series:
        if isinstance(s.dtype, np.dtype) and s.dtype.kind in "iub":  # numpy integers: no missing value, levels sorted
            u, c = np.unique(s.to_numpy(), return_inverse=True)
            c, u = c.ravel(), u.tolist()
        else:
            c, u = pd.factorize(s, sort=True)
        missing |= c < 0
        code = code * max(len(u), 1) + np.maximum(c, 0)
        levels.append(list(u))
    code[missing] = -1
    if len(levels) == 1:
        labels = levels[0]
    else:
        labels = list(pd.MultiIndex.from_product(levels))
    return code, labels


class Session:
    """A researcher's output session (ACRO's ``ACRO`` object).

    Parameters
    ----------
    rules : OutputRules or path-like, optional
        The environment's rules (default: ACRO's, :class:`OutputRules`); a path reads a rules TOML.
    suppress : bool
        Return tables with the failing cells blanked (NaN), as ACRO's ``suppress=True`` does;
        the checks and the audits are the same either way.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdckit.outputs import Session
    >>> df = pd.DataFrame({"sex": list("mfmfmfmfmf") * 3, "grade": list("aabbccaabb") * 3})
    >>> s = Session()
    >>> t = s.crosstab(df.sex, df.grade)
    >>> s.outputs["output_0"].status
    'fail'
    """

    def __init__(self, rules: OutputRules | str | Path | None = None, *, suppress: bool = False) -> None:
        from .rules import load_rules

        if rules is None:
            rules = OutputRules()
        elif not isinstance(rules, OutputRules):
            rules = load_rules(rules)
        self.rules = rules
        self.suppress = bool(suppress)
        self.outputs: dict[str, OutputRecord] = {}
        self._next = 0
        self._audited = False
        self._sets: list[dict] = []
        #: linear-programming systems the last :meth:`audit` built (one per linked set, or per group of a large set)
        self.n_linked_systems = 0
        #: the size of those systems and the work done (atoms, equations, components, targets, LPs)
        self.linked_stats: dict = {}

    # ------------------------------------------------------------------ bookkeeping
    def _add(self, rec: OutputRecord) -> OutputRecord:
        rec.uid = f"output_{self._next}"
        self._next += 1
        rec.timestamp = _dt.datetime.now().isoformat()
        self.outputs[rec.uid] = rec
        self._audited = False
        return rec

    def _get(self, uid: str) -> OutputRecord:
        if uid not in self.outputs:
            raise InputError(f"{uid!r}: no such output in this session; the outputs are "
                             f"{', '.join(self.outputs) or 'none yet'}")
        return self.outputs[uid]

    def add_exception(self, uid: str, reason: str) -> None:
        """The researcher's request that a failing output be released anyway, with the reason."""
        if not isinstance(reason, str) or not reason.strip():
            raise InputError(f"{uid}: an exception request needs a reason; say why the output is safe or needed")
        self._get(uid).exception = reason.strip()

    def add_comments(self, uid: str, comment: str) -> None:
        self._get(uid).comments.append(str(comment))

    def remove_output(self, uid: str) -> None:
        self._get(uid)
        del self.outputs[uid]
        self._audited = False

    # ------------------------------------------------------------------ tables
    def crosstab(self, index: Any, columns: Any, values: Any = None, rownames: Any = None, colnames: Any = None,
                 aggfunc: Any = None, margins: bool = False, margins_name: str = "All",
                 normalize: bool | str = False) -> pd.DataFrame:
        """A cross tabulation (``pandas.crosstab``), recorded with its checks."""
        if aggfunc is not None and (values is None or isinstance(values, list)):
            raise InputError("crosstab: an aggregation function needs one values column (values=...)")
        rows = _as_series_list(index, "row")
        cols = _as_series_list(columns, "col")
        table = pd.crosstab(rows if len(rows) > 1 else rows[0], cols if len(cols) > 1 else cols[0], values=values,
                            rownames=rownames, colnames=colnames, aggfunc=_pandas_agg(aggfunc), margins=margins,
                            margins_name=margins_name, dropna=False, normalize=normalize)
        vals = None if values is None else (values if isinstance(values, pd.Series) else pd.Series(np.asarray(values)))
        return self._record_table("crosstab", _caller_line(), table, rows, cols, vals, aggfunc, margins, margins_name)

    def pivot_table(self, data: pd.DataFrame, values: Any = None, index: Any = None, columns: Any = None,
                    aggfunc: Any = "mean", margins: bool = False, margins_name: str = "All") -> pd.DataFrame:
        """A pivot table (``pandas.pivot_table``), recorded with its checks."""
        if not isinstance(data, pd.DataFrame):
            raise InputError("pivot_table: data must be a pandas DataFrame")
        names = lambda v: [] if v is None else [v] if isinstance(v, str) else list(v)  # noqa: E731
        for n in names(index) + names(columns) + names(values):
            if n not in data.columns:
                raise InputError(f"pivot_table: column {n!r} is not in the data; the columns are "
                                 f"{', '.join(map(str, data.columns[:12]))}")
        if values is not None and len(names(values)) != 1:
            raise InputError("pivot_table: give one values column (values='income')")
        table = pd.pivot_table(data, values=values, index=index, columns=columns, aggfunc=_pandas_agg(aggfunc),
                               margins=margins,
                               margins_name=margins_name, dropna=False, observed=False)
        rows = [data[n] for n in names(index)]
        cols = [data[n] for n in names(columns)]
        vals = data[names(values)[0]] if values is not None else None
        return self._record_table("pivot_table", _caller_line(), table, rows, cols, vals, aggfunc, margins,
                                  margins_name)

    def _record_table(self, method, command, table, rows, cols, values, aggfunc, margins, margins_name):
        aggs = aggfunc if isinstance(aggfunc, (list, tuple)) else [aggfunc]
        stats = []
        for a in aggs:
            key = "count" if a is None else a if isinstance(a, str) else getattr(a, "__name__", "custom")
            stats.append(_AGG_NAMES.get(str(key).lower(), str(key)))
        stats = tuple(stats)
        rcode, rlabels = _codes(rows)
        ccode, clabels = _codes(cols)
        if not cols:
            ccode = np.where(rcode >= 0, 0, -1)
        n_r, n_c = len(rlabels), len(clabels)
        cell = np.where((rcode >= 0) & (ccode >= 0), rcode * n_c + ccode, -1)
        v = None if values is None else pd.to_numeric(values, errors="coerce").to_numpy(float)
        ev = cell_evidence(cell, v, (n_r, n_c), margins=bool(margins), nk_n=self.rules.nk_n)
        dims = [str(s.name) for s in rows + cols]
        link_dims = frozenset(str(x.name) for x in rows + cols if x.nunique(dropna=True) > 1)
        checks = table_checks(ev, stats, self.rules, dims)
        r_lab = list(rlabels) + ([margins_name] if margins else [])
        c_lab = list(clabels) + ([margins_name] if margins else [])
        outcome = _outcome(checks, r_lab, c_lab)
        rec = OutputRecord(uid="", output_type="table", properties={"method": method, "mitigation":
                           "suppress" if self.suppress else "none"}, command=command, statistics=stats, dims=dims,
                           outcome=outcome)
        rec.checks = checks
        rec.evidence = ev
        rec.link_dims = link_dims
        linear = all(s in ("count", "sum") for s in stats) and len(set(stats)) == 1
        recompute = self.suppress and bool(margins) and linear
        # the audit's view: counts and sums are linear in the records (means, medians... are not)
        if linear:
            measure = "count" if stats[0] == "count" else f"sum:{getattr(values, 'name', 'values')}"
            ids = rows[0].index.to_numpy() if rows else np.arange(len(cell))
            weight = np.ones(cell.size) if measure == "count" else np.nan_to_num(v)
            failed = rec.failed_mask()
            rec.layout = TableLayout(uid="", shape=(n_r, n_c), margins=bool(margins), record_ids=ids, cell=cell,
                                     weight=weight, failed=failed if failed is not None else np.zeros(ev.count.shape,
                                                                                                       bool),
                                     measure=measure, labels=_namer(r_lab, c_lab, dims))
            rec.layout.unique_ids = bool(pd.Index(ids).is_unique)
            if recompute:  # the margins published are sums of the published cells only: no equation of their own
                eq = np.ones(ev.count.shape, bool)
                eq[-1, :] = False
                eq[:, -1] = False
                rec.layout.equations = eq
        self._add(rec)
        if rec.layout is not None:
            rec.layout.uid = rec.uid
            self._audit_margins(rec)
        shown = table
        if self.suppress:
            shown = _blank(table, rec.failed_mask(), r_lab, c_lab, recompute=recompute)
        rec.frames = [shown]
        return shown

    def _audit_margins(self, rec: OutputRecord) -> None:
        if not self.rules.audit or rec.layout is None or not rec.layout.margins:
            return
        found, status = audit_linked([rec.layout], threshold=self.rules.threshold, p=self.rules.p_ratio)
        mask = np.zeros(rec.layout.failed.shape, bool)
        for f in found:
            mask[f.position[1], f.position[2]] = True
        details = [dict(f.to_dict(), sentence=f.sentence()) for f in found]
        k = len(found)
        st = "fail" if k else "pass"
        summary = (f"{st} - {k} suppressed cells can be recovered from the margins." if k else
                   "pass - no suppressed cell can be recovered from the margins (LP audit, "
                   f"{int(rec.layout.failed.sum())} suppressed cells).")
        if status != "exact":
            st, summary = "review", f"review - the audit did not finish ({status})"
        rec.checks.append(Check("MarginAuditCheck", st, summary, mask, details=details))
        rec.audit["margins"] = {"status": status, "recovered": details}

    # ------------------------------------------------------------------ models
    def _model(self, name: str, command: str, model: Any, results: Any) -> Any:
        dof = float(results.df_resid)
        ok = dof >= self.rules.dof_threshold
        check = Check("MinimumDoFCheck", "pass" if ok else "fail",
                      f"{'pass' if ok else 'fail'} dof={dof:g} {'>=' if ok else '<'} {self.rules.dof_threshold}",
                      value=dof)
        rec = OutputRecord(uid="", output_type="regression", properties={"method": name, "dof": dof},
                           command=command, checks=[check], statistics=())
        rec.frames = [_simple_table(t) for t in results.summary().tables]
        rec.dims = [str(model.endog_names)] + [str(x) for x in model.exog_names if x not in ("const", "Intercept")]
        self._add(rec)
        return results

    def ols(self, endog: Any, exog: Any = None, missing: str = "none", hasconst: Any = None) -> Any:
        """Ordinary least squares (``statsmodels.api.OLS(...).fit()``), checked for residual degrees of freedom."""
        import statsmodels.api as sm

        model = sm.OLS(endog, exog, missing=missing, hasconst=hasconst)
        return self._model("ols", _caller_line(), model, model.fit())

    def olsr(self, formula: str, data: pd.DataFrame, missing: str = "none") -> Any:
        import statsmodels.formula.api as smf

        model = smf.ols(formula=formula, data=data, missing=missing)
        return self._model("olsr", _caller_line(), model, model.fit())

    def logit(self, endog: Any, exog: Any = None, missing: str | None = None) -> Any:
        """Logistic regression (``statsmodels.api.Logit``)."""
        import statsmodels.api as sm

        model = sm.Logit(endog, exog, missing=missing or "none")
        return self._model("logit", _caller_line(), model, model.fit(disp=0))

    def logitr(self, formula: str, data: pd.DataFrame) -> Any:
        import statsmodels.formula.api as smf

        model = smf.logit(formula=formula, data=data)
        return self._model("logitr", _caller_line(), model, model.fit(disp=0))

    def probit(self, endog: Any, exog: Any = None, missing: str | None = None) -> Any:
        """Probit regression (``statsmodels.api.Probit``)."""
        import statsmodels.api as sm

        model = sm.Probit(endog, exog, missing=missing or "none")
        return self._model("probit", _caller_line(), model, model.fit(disp=0))

    def probitr(self, formula: str, data: pd.DataFrame) -> Any:
        import statsmodels.formula.api as smf

        model = smf.probit(formula=formula, data=data)
        return self._model("probitr", _caller_line(), model, model.fit(disp=0))

    # ------------------------------------------------------------------ histograms, survival
    def hist(self, data: pd.DataFrame, column: str, bins: int | Any = 10, filename: str = "histogram.png") -> pd.DataFrame:
        """A histogram of one column: returns the bins (edges and counts); the picture is drawn at
        :meth:`finalise`. Every bin needs ``threshold`` records (zeros: ``zeros_are_disclosive``)."""
        if column not in data.columns:
            raise InputError(f"hist: column {column!r} is not in the data")
        if Path(filename).suffix.lower() in BLOCKED_EXTENSIONS:
            raise InputError(f"hist: {filename}: the extension {Path(filename).suffix} is blocked; use .png")
        x = pd.to_numeric(data[column], errors="coerce").dropna().to_numpy(float)
        counts, edges = np.histogram(x, bins)
        frame = pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": counts})
        c = counts.astype(float)[:, None]
        small = c < self.rules.threshold
        if not self.rules.zeros_are_disclosive:
            small &= c > 0
        checks = [Check("MinimumThresholdCheck", "fail" if small.any() else "pass",
                        f"{'fail' if small.any() else 'pass'} - {int(small.sum())} cells may need suppressing. Review "
                        "Notes: Please check extreme bin edges are not disclosive.", small)]
        # an empty bin is flagged by the threshold check above (as ACRO); no separate zero check for a histogram
        checks.append(Check("PresenceOfZeroCheck", "pass", "pass - empty bins are counted by the threshold check.",
                            np.zeros_like(small)))
        rec = OutputRecord(uid="", output_type="histogram", properties={"method": "histogram", "bins": int(counts.size)},
                           command=_caller_line(), checks=checks, statistics=("count",), dims=[column],
                           figure=("hist", (counts, edges, column)))
        rec.frames = []
        rec.properties["filename"] = Path(filename).name
        self._add(rec)
        return frame

    def survival(self, time: Any, status: Any, output: str = "table", filename: str = "kaplan-meier.png") -> Any:
        """Kaplan-Meier survival (``statsmodels.api.SurvfuncRight``): the table of steps (time, number
        at risk, events, survival). Each step needs ``survival_threshold`` records at risk; the
        curve needs ``dof_threshold`` residual degrees of freedom (records minus distinct times)."""
        import statsmodels.api as sm

        if output not in ("table", "plot"):
            raise InputError(f"survival: output must be 'table' or 'plot'. Got {output!r}.")
        sf = sm.SurvfuncRight(np.asarray(time, float), np.asarray(status, float))
        table = sf.summary()
        at_risk = table["num at risk"].to_numpy(float)[:, None]
        small = at_risk < self.rules.survival_threshold
        n_unique = len(pd.unique(np.asarray(time)))
        dof = float(len(np.asarray(status)) - n_unique)
        checks = [
            Check("StatbarnDataCheck", "review", "review: a manual check may be needed if related plots have been "
                  "produced", np.zeros_like(small)),
            Check("MinimumDoFCheck", "fail" if dof < self.rules.dof_threshold else "pass",
                  f"{'fail' if dof < self.rules.dof_threshold else 'pass'} dof={dof:g} "
                  f"{'<' if dof < self.rules.dof_threshold else '>='} {self.rules.dof_threshold}", value=dof),
            Check("SurvivalThresholdCheck", "fail" if small.any() else "pass",
                  f"{'fail' if small.any() else 'pass'} - {int(small.sum())} steps have fewer than "
                  f"{self.rules.survival_threshold} records at risk.", small),
        ]
        kind = "table" if output == "table" else "survival plot"
        rec = OutputRecord(uid="", output_type=kind, properties={"method": "surv_func"}, command=_caller_line(),
                           checks=checks, statistics=("survival",), dims=["time", "status"])
        if output == "table":
            rec.frames = [table]
        else:
            rec.figure = ("survival", sf)
            rec.properties["filename"] = Path(filename).name
        self._add(rec)
        return table if output == "table" else sf

    def custom_output(self, filename: str | Path, comment: str | None = None) -> str:
        """Any other output (a file): recorded for a checker's review."""
        p = Path(filename)
        if p.suffix.lower() in BLOCKED_EXTENSIONS:
            raise InputError(f"{p.name}: the extension {p.suffix} is blocked by the environment's rules; "
                             "export it as PNG or PDF")
        if not p.is_file():
            raise InputError(f"{p.name}: no such file; give the path of the output to check")
        rec = OutputRecord(uid="", output_type="custom", properties={"method": "custom"}, command="custom",
                           checks=[Check("ManualReviewCheck", "review", "review: an output sdckit cannot check")],
                           custom_file=p)
        if comment:
            rec.comments.append(str(comment))
        return self._add(rec).uid

    # ------------------------------------------------------------------ the session's audit
    def audit(self) -> list[dict]:
        """Audit the session's tables together (differencing): tables of the same measure that share
        records and nest in their variables are stacked into one system; what they give away
        together, and no single one gives alone, is recorded on each as ``LinkedOutputsCheck`` and
        returned as sets: one per witness set (the outputs whose published cells the intruder needs,
        from the LP's dual), not the whole linked set.

        A linked set of more than ``MAX_LINKED`` outputs is split into groups, one per largest set of
        variables among its outputs: a group holds every output whose variables are among them
        (every linked pair nests, so each lies in one group). A suppressed cell recovered by one
        system (or by its table's own margin audit) is not solved again by the next."""
        for rec in self.outputs.values():
            rec.checks = [c for c in rec.checks if c.name != "LinkedOutputsCheck"]
            rec.audit.pop("linked", None)
        sets: dict[tuple, dict] = {}
        self.n_linked_systems = 0
        self.linked_stats = dict.fromkeys(("n_atoms", "n_equations", "n_components", "n_targets", "n_fixed",
                                           "n_witnessed", "n_lps"), 0)
        if not self.rules.audit:
            self._audited = True
            self._sets = []
            return []
        recs = [r for r in self.outputs.values() if r.layout is not None and getattr(r.layout, "unique_ids", False)]
        known = {tuple(d["position"]) for r in recs for d in r.audit.get("margins", {}).get("recovered", [])
                 if d["position"]}
        checks: dict[str, Check] = {}
        for comp in linked_components(recs):
            if len(comp) < 2:
                continue
            groups, mode = linked_groups(comp)
            self.n_linked_systems += len(groups)
            for group in groups:
                stats: dict = {}
                found, status = audit_linked([r.layout for r in group], threshold=self.rules.threshold,
                                             p=self.rules.p_ratio, pairs=True, skip=known, stats=stats)
                for k, v in stats.items():
                    self.linked_stats[k] = self.linked_stats.get(k, 0) + v
                known.update(tuple(f.position) for f in found if f.position is not None)
                mine: dict[str, list] = {}
                for f in found:
                    d = dict(f.to_dict(), sentence=f.sentence())
                    entry = sets.setdefault(f.outputs, {"set": len(sets), "outputs": list(f.outputs), "mode": mode,
                                                        "recovered": []})
                    entry["recovered"].append(d)
                    for uid in f.outputs:  # the proof's outputs: the finding in full
                        mine.setdefault(uid, []).append((f, d))
                    # the outputs that publish a cell holding its records: a pointer to the set (the file
                    # would otherwise repeat each finding on every output that holds its records)
                    held = {"what": f.what, "cell": f.cell, "set": entry["set"],
                            "sentence": f"this output publishes the records of {f.what} {f.cell}, which linked set "
                                        f"{entry['set']} ({len(f.outputs)} outputs) gives away"}
                    for uid in set(f.involved) - set(f.outputs):
                        mine.setdefault(uid, []).append((f, held))
                for r in group:
                    self._linked_check(r, mine.get(r.uid, []), status, mode, len(group) - 1, checks)
        self._audited = True
        self._sets = list(sets.values())
        return self._sets

    def _linked_check(self, r: OutputRecord, mine: list, status: str, mode: str, n_with: int,
                      checks: dict) -> None:
        """Record one system's findings on one of its outputs (one ``LinkedOutputsCheck`` per output)."""
        mask = np.zeros(r.layout.failed.shape, bool)
        for f, _ in mine:
            if f.position is not None and f.position[0] == r.uid:
                mask[f.position[1], f.position[2]] = True
        details = [d for _, d in mine]
        old = checks.get(r.uid)
        if old is None:
            old = checks[r.uid] = Check("LinkedOutputsCheck", "pass", f"pass - audited with {n_with} linked outputs "
                                        f"({mode}).", mask, details=[])
            r.checks.append(old)
        if mine:
            old.status = "fail"
            old.mask = old.mask | mask
            old.details = (old.details or []) + details
            partners = sorted(set().union(*(f.involved or f.outputs for f, _ in mine)) - {r.uid},
                              key=lambda u: (len(u), u))
            n = len(old.details)
            old.summary = (f"fail - {n} cells are given away by this output with {', '.join(partners)}."
                           if partners else f"fail - {n} cells are given away by this output.")
        if status != "exact" and old.status == "pass":
            old.status, old.summary = "review", f"review - the linked audit did not finish ({status})"
        r.audit.setdefault("linked", []).append({"n_with": n_with, "mode": mode, "status": status,
                                                 "recovered": details})

    # ------------------------------------------------------------------ the results file
    def results_dict(self, file_names: dict[str, list[str]] | None = None) -> dict:
        """The session as ACRO's ``results.json`` (version, tool, results by output id), with
        sdckit's checks in words, audits and the decision slot in each record's ``sdckit`` field."""
        from .._version import __version__

        if not self._audited:
            self.audit()
        results: dict[str, Any] = {}
        for uid, rec in self.outputs.items():
            names = (file_names or {}).get(uid, [])
            sdc = _sdc(rec)
            results[uid] = {
                "uid": uid, "status": rec.status, "type": rec.output_type, "properties": _plain(rec.properties),
                "files": [{"name": n, "sdc": sdc} for n in names],
                "outcome": {} if rec.outcome is None else _plain(rec.outcome.to_dict()),
                "command": rec.command, "summary": rec.summary(), "timestamp": rec.timestamp,
                "comments": list(rec.comments), "exception": rec.exception,
                "fair": {"context": "https://w3id.org/statbarnsdc#",
                         "statbarn": "+".join(STATBARN.get(s, s) for s in rec.statistics) or rec.output_type,
                         "check_status": {c.name: c.status for c in rec.checks}, "independent": rec.dims},
                "sdckit": {"checks": [{"name": c.name, "status": c.status, "summary": c.summary.strip(),
                                       "n_cells": c.n_cells, "value": c.value, "recovered": c.details or []}
                                      for c in rec.checks],
                           "words": rec.sentences(), "decision": None},
            }
        return {"version": ACRO_FORMAT_VERSION,
                "tool": {"@type": "SoftwareApplication", "name": "sdckit", "version": __version__},
                "rules": self.rules.acro_config() | {"audit": self.rules.audit},
                "linked_sets": self._sets,
                "results": results}

    def finalise(self, folder: str | Path, *, overwrite: bool = False) -> Path:
        """Write every output (CSV tables, PNG figures, custom files) and ``results.json`` into a new
        folder, atomically (the folder appears whole or not at all). Returns the folder."""
        import json
        import shutil

        from ..io.atomic import staged_folder

        if not self._audited:
            self.audit()
        target = Path(folder)
        with staged_folder(target, overwrite=overwrite) as stage:
            names: dict[str, list[str]] = {}
            for uid, rec in self.outputs.items():
                files = []
                for k, frame in enumerate(rec.frames):
                    name = f"{uid}_{k}.csv"
                    frame.to_csv(stage / name)
                    files.append(name)
                if rec.figure is not None:
                    name = f"{uid}_{rec.properties.get('filename', 'figure.png')}"
                    _draw(rec.figure, stage / name)
                    files.append(name)
                if rec.custom_file is not None:
                    name = f"{uid}_{rec.custom_file.name}"
                    shutil.copyfile(rec.custom_file, stage / name)
                    files.append(name)
                names[uid] = files
            doc = self.results_dict(names)
            (stage / RESULTS_FILE).write_text(json.dumps(doc, default=_json_default) + "\n", encoding="utf-8")
            (stage / "config.json").write_text(json.dumps(self.rules.acro_config(), indent=4) + "\n", encoding="utf-8")
        return target


def _mode(values: pd.Series) -> Any:
    """The most frequent value (the smallest of several; ACRO picks one of them at random)."""
    m = values.mode()
    return m.iloc[0] if len(m) else np.nan


def _pandas_agg(aggfunc: Any) -> Any:
    if isinstance(aggfunc, str) and aggfunc == "mode":
        return _mode
    if isinstance(aggfunc, (list, tuple)):
        return [_mode if a == "mode" else a for a in aggfunc]
    return aggfunc


def _simple_table(t: Any) -> pd.DataFrame:
    """A statsmodels summary table as a frame (its text cells; the first row a header when it has one)."""
    rows = [[str(c).strip() for c in row] for row in t.data]
    if rows and rows[0] and rows[0][0] == "" and len(rows) > 1:
        return pd.DataFrame([r[1:] for r in rows[1:]], index=[r[0] for r in rows[1:]], columns=rows[0][1:])
    return pd.DataFrame(rows)


def _namer(r_lab: list, c_lab: list, dims: list):
    def name(i: int, j: int) -> str:
        r = r_lab[i] if i < len(r_lab) else i
        c = c_lab[j] if j < len(c_lab) else j
        return f"[{r}, {c}]" if c is not None else f"[{r}]"
    return name


def _outcome(checks: list[Check], r_lab: list, c_lab: list) -> pd.DataFrame:
    """ACRO's outcome table: per cell the failing checks' names ("MinimumThresholdCheck; ") or "ok"."""
    shape = (len(r_lab), len(c_lab))
    words = np.full(shape, "", dtype=object)
    for c in checks:
        if c.mask is not None and c.mask.shape == shape and c.mask.any():
            words[c.mask] = words[c.mask] + f"{c.name}; "
    words[words == ""] = "ok"
    cols = [str(x) if not isinstance(x, tuple) else " ".join(map(str, x)) for x in c_lab]
    rows = [str(x) if not isinstance(x, tuple) else " ".join(map(str, x)) for x in r_lab]
    return pd.DataFrame(words, index=rows, columns=cols, dtype=object)  # object: no string-dtype inference


def _blank(table: pd.DataFrame, failed: np.ndarray | None, r_lab: list, c_lab: list, *,
           recompute: bool = False) -> pd.DataFrame:
    """The table with its failing cells blanked (NaN). With ``recompute`` (counts or totals with
    margins) the margins are the sums of the published cells, as ACRO publishes them: margins
    computed before suppression would give the blank cells back (ACRO issue #198)."""
    if failed is None:
        return table
    values = table.to_numpy(dtype=float, copy=True)
    if values.shape == failed.shape:
        values[failed] = np.nan
        if recompute:
            inner = np.nan_to_num(values[:-1, :-1])
            values[:-1, -1] = inner.sum(axis=1)
            values[-1, :-1] = inner.sum(axis=0)
            values[-1, -1] = inner.sum()
    elif values.shape[0] == failed.shape[0] and values.shape[1] % failed.shape[1] == 0:  # statistics side by side
        values[np.tile(failed, (1, values.shape[1] // failed.shape[1]))] = np.nan
    else:
        return table
    return pd.DataFrame(values, index=table.index, columns=table.columns)


def _sdc(rec: OutputRecord) -> dict:
    if rec.output_type == "regression" or not any(c.mask is not None for c in rec.checks):
        return {}
    return {"summary": {c.name: c.n_cells for c in rec.checks},
            "cells": {c.name: c.cells() for c in rec.checks}}


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    return obj


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    return str(obj)


def _draw(figure: tuple, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    kind, data = figure
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    if kind == "hist":
        counts, edges, column = data
        ax.stairs(counts, edges, fill=True)
        ax.set_xlabel(str(column))
        ax.set_ylabel("records")
    else:
        data.plot(ax=ax)
        ax.set_xlabel("time")
        ax.set_ylabel("survival")
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
