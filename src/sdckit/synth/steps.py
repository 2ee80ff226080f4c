"""The ``synthesise`` release step and the synthesis gate thresholds.

The step replaces the released columns by a synthetic file of the same size, drawn by
sequential synthesis (:mod:`sdckit.synth.synthesis`), and measures what it made::

    [[steps]]
    method = "synthesise"
    default_method = "cart"                       # every variable (the first is sampled)
    methods = { "Hours worked per week" = "sample" }
    rules = ["Age == 1 -> `Marital Status` == 1"] # children are single
    strata = ["Region"]                           # synthesis within regions
    disclosure_targets = ["Health"]

    [gate]
    max_disco = 5          # at most 5% of the records' targets disclosed correctly by the keys
    max_repU = 1           # at most 1% of records unique on the keys in both files

Gate thresholds (percent, as synthpop's ``disclosure()`` reports them; the keys default to
the data's key variables and the targets to its sensitive variables):

``max_repU``  replicated uniques (identity disclosure);
``max_disco`` DiSCO, records whose target the synthetic file discloses correctly, the largest
over the targets;
``max_tcap``  TCAP, the same among the records whose keys occur in the synthetic file.

Each check recomputes its measure from the original and the released data with
:func:`sdckit.synth.disclosure.disclosure_measures`.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._random import seed_sequence
from .._validation import param_error
from ..errors import InputError, SpecError
from ..microdata import Microdata
from ..params import check_params, param
from ..registry import DaskPlan, GateCheck, GateOutcome, register_gate_check, register_step, role_columns
from ..result import Guarantee, StepResult
from .disclosure import DisclosureMeasures, DisclosureSource, default_keys_targets, disclosure_measures
from .expr import parse_rule
from .models import METHODS
from .sized import resized_microdata, step_utility, utility_rows
from .synthesis import DRAW_BLOCK, FittedSynthesis, SynthesisDraw, Synthesiser, child_stream
from .utility import table_utility

#: the methods a variable may be given in ``methods`` (``passive`` needs a formula)
STEP_METHODS = METHODS


@dataclass(frozen=True)
class SynthesisResult(StepResult):
    """A synthesis step's result: the synthetic data and what was measured on it.

    Besides :class:`~sdckit.result.StepResult`'s fields: ``methods`` (variable -> method, in
    the visit sequence), ``kept`` (columns that kept their values), ``utility`` (propensity
    and table measures), ``disclosure`` (one :class:`DisclosureMeasures` per target) and
    ``notes``.
    """

    methods: dict = field(default_factory=dict)
    kept: tuple = ()
    strata: tuple = ()
    rules: tuple = ()
    utility: dict = field(default_factory=dict)
    tables: tuple = ()
    disclosure: tuple = ()
    notes: tuple = ()

    @property
    def resized(self) -> bool:
        """Whether the synthetic file has another size than the original (``n_records``): the
        release then accepts the change of record count."""
        return self.summary.get("records", self.microdata.n_records) != self.summary.get(
            "records_original", self.microdata.n_records)

    def report_section(self) -> str:
        """The public report's section on the synthesis: words and small tables."""
        n = self.microdata.n_records
        n_orig = self.summary.get("records_original", n)
        size = "" if n_orig == n else f" (the original has {n_orig:,}: the size was asked for)"
        seq = list(self.methods)
        parts = [
            "<h4>Synthetic data</h4>",
            f"<p>The {len(seq)} released column{'s' if len(seq) != 1 else ''} "
            f"{html.escape(_words_list(seq))} {'are' if len(seq) != 1 else 'is'} synthetic: {n:,} records{size} "
            "drawn one variable at a time from models fitted on the original records, each variable "
            "given the ones before it (sequential synthesis). <b>The synthetic file is not the original:</b> "
            "no released record is a respondent's record, although by chance some may equal one "
            f"({_pct(self.summary.get('share_identical_to_an_original_record'))} here), and analyses of it "
            "reproduce only the relationships the models captured.</p>",
        ]
        if self.kept:
            parts.append(f"<p>Kept as they are (they condition the synthesis): "
                         f"{html.escape(_words_list(self.kept))}.</p>")
        if self.strata:
            parts.append(f"<p>Each stratum of {html.escape(_words_list(self.strata))} was synthesised on its "
                         "own, from its own records: strata never mix.</p>")
        rows = "".join(f"<tr><td>{i + 1}</td><td>{html.escape(v)}</td>"
                       f"<td>{html.escape(_METHOD_WORDS.get(m, m))}</td></tr>"
                       for i, (v, m) in enumerate(self.methods.items()))
        parts.append("<table class='synthesis-methods'><tr><th>order</th><th>variable</th><th>how it was drawn</th>"
                     f"</tr>{rows}</table>")
        if self.rules:
            items = "".join(f"<li><code>{html.escape(r)}</code></li>" for r in self.rules)
            parts.append(f"<p>Rules that hold in every synthetic record:</p><ul>{items}</ul>")
        u = self.utility
        if u:
            model = "classification tree" if u["method"] == "cart" else "logistic regression"
            parts.append(
                f"<p><b>Utility.</b> A {model} told the synthetic records from the "
                f"original ones with a mean squared propensity error pMSE = {u['pMSE']:.3g}; standardised by "
                f"its expected value for two samples of one population, S_pMSE = {u['S_pMSE']:.3g} (about 1: "
                "hard to tell apart; large: easy)"
                + (f", from a seeded sample of {u['sample_original']:,} original and {u['sample_synthetic']:,} "
                   "synthetic records (sampled)" if u.get("sampled") else "") + ".</p>")
        if self.tables:
            worst = sorted(self.tables, key=lambda t: -t["S_pMSE"])[:10]
            trs = "".join(f"<tr><td>{html.escape(' x '.join(t['variables']))}</td><td>{t['S_pMSE']:.3g}</td>"
                          f"<td>{t['df']}</td></tr>" for t in worst)
            parts.append("<p>Tables of the original and synthetic counts (standardised pMSE, about 1 for "
                         "a good match; the ten largest):</p><table class='synthesis-tables'><tr><th>table</th>"
                         f"<th>S_pMSE</th><th>degrees of freedom</th></tr>{trs}</table>")
        if self.disclosure:
            trs = "".join(
                f"<tr><td>{html.escape(d['target'])}</td><td>{d['identity']['UiO']:.2f}%</td>"
                f"<td>{d['identity']['repU']:.2f}%</td><td>{d['attribute']['Dorig']:.2f}%</td>"
                f"<td>{d['attribute']['DiSCO']:.2f}%</td><td>{_pct_value(d['cap']['TCAP'])}</td></tr>"
                for d in self.disclosure)
            keys = self.disclosure[0]["keys"]
            parts.append(
                f"<p><b>Disclosure.</b> An intruder who knows {html.escape(_words_list(keys))} of a person "
                "looks them up in the synthetic file. Unique in the original: records whose keys no one "
                "else shares; replicated uniques (repU): unique in both files; target certain in the "
                "original (Dorig): the keys determine the target there; disclosed correctly (DiSCO): the "
                "keys occur in the synthetic file, which gives the person's own target with certainty; "
                "TCAP: the same among the records whose keys occur in the synthetic file.</p>"
                "<table class='synthesis-disclosure'><tr><th>target</th><th>unique in the original</th>"
                "<th>replicated uniques</th><th>target certain in the original</th><th>disclosed correctly</th>"
                f"<th>TCAP</th></tr>{trs}</table>")
        if self.notes:
            parts.append("<ul>" + "".join(f"<li>{html.escape(x)}</li>" for x in self.notes) + "</ul>")
        return "".join(parts)

    def report_html(self) -> str:
        return super().report_html() + self.report_section()

    def describe(self) -> str:
        lines = [super().describe(), "  (the synthetic file is not the original)"]
        for d in self.disclosure:
            lines.append(f"  disclosure, target {d['target']}: repU {d['identity']['repU']:.2f}%, "
                         f"DiSCO {d['attribute']['DiSCO']:.2f}%")
        return "\n".join(lines)


_METHOD_WORDS = {
    "sample": "sampled from its original values",
    "cart": "from a classification or regression tree: the value of a record in the same leaf",
    "norm": "from a linear regression with normal errors",
    "normrank": "from a linear regression of its normal scores",
    "pmm": "from the closest of three records by predicted value",
    "logreg": "from a logistic regression",
    "polyreg": "from a multinomial logistic regression",
    "passive": "computed from its formula",
    "constant": "its single value",
    "rule": "set by a rule",
}


def _words_list(items: Sequence[str]) -> str:
    items = [str(x) for x in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _pct(v: Any) -> str:
    return "—" if v is None else f"{100 * float(v):.2f}%"


def _pct_value(v: Any) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.2f}%"


def _check_table_of(owner: str, name: str, value: Any, kind: str) -> dict:
    """A mapping column -> str (``kind = "str"``) or column -> list of numbers (``"numbers"``)."""
    rule = ("a table of column -> method" if kind == "method" else
            "a table of column -> formula" if kind == "str" else "a table of column -> list of numbers")
    if not isinstance(value, Mapping):
        raise param_error(owner, name, rule, value)
    out = {}
    for k, v in value.items():
        if not isinstance(k, str) or not k:
            raise param_error(owner, name, rule, dict(value))
        if kind == "method":
            if v not in STEP_METHODS:
                raise param_error(owner, name, "a table of column -> one of " + ", ".join(map(repr, STEP_METHODS)),
                                  dict(value))
        elif kind == "str":
            if not isinstance(v, str) or not v.strip():
                raise param_error(owner, name, rule, dict(value))
        else:
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                v = [v]
            if (isinstance(v, (str, bytes)) or not isinstance(v, Sequence)
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                               for x in v)):
                raise param_error(owner, name, rule, dict(value))
            v = tuple(v)
        out[k] = v
    return out


def fit_records(n_records: int, fit_sample: int, stream: np.random.SeedSequence) -> np.ndarray | None:
    """The records the models are fitted on: None for every record, else ``fit_sample`` of the
    ``n_records`` drawn without replacement from child 2 of the step's stream (children 0 and
    1 draw the file and the utility), in increasing order. The same on every engine."""
    if not fit_sample or n_records <= fit_sample:
        return None
    gen = np.random.default_rng(child_stream(stream, 2))
    return np.sort(gen.choice(n_records, size=int(fit_sample), replace=False))


def fit_for_release(step: Synthesise, data: Microdata, stream: np.random.SeedSequence,
                    synth: Synthesiser | None = None) -> FittedSynthesis:
    """Fit the step's models on ``data`` (every record, or its :func:`fit_records` sample)."""
    synth = step.synthesiser(data) if synth is None else synth
    rows = fit_records(data.n_records, step.fit_sample, stream)
    if rows is not None:
        data = Microdata(data.frame.iloc[rows].reset_index(drop=True), key_vars=data.key_vars)
    return synth.fit(data)


@register_step("synthesise", engines=("memory", "dask"))
@dataclass(frozen=True)
class Synthesise:
    """Replace the released columns by a synthetic file of the same size (sequential synthesis).

    Parameters
    ----------
    variables : list of str
        Columns to synthesise (default: every column but the weight and the household id, which
        keep their values). Columns not synthesised keep their values and condition the rest.
    visit_sequence : list of str
        The order of synthesis (listed variables first, the others after in ``visit_rule``'s
        order).
    visit_rule : "data" or "synthpop"
        ``data``: the data's column order; ``synthpop``: categorical variables with fewer
        categories first, numeric ones last.
    default_method : str
        Method of every variable (the first is sampled from its marginal).
    methods : table
        Methods per variable (``{income = "normrank"}``); ``passive`` needs a formula.
    passive : table
        Derived variables: ``{bmi = "weight / (height / 100) ** 2"}``.
    rules : list of str
        ``"condition -> consequent"``: enforced on every synthetic record.
    strata : list of str
        Synthesis within the strata these columns define.
    missing_codes : table
        Special codes of numeric variables synthesised as categories (synthpop's ``cont.na``).
    smoothing : list of str
        Numeric variables smoothed by a Gaussian kernel (synthpop's ``smoothing = "density"``).
    categorical : list of str
        Numeric columns to treat as categorical.
    min_leaf, cp : tree settings (synthpop's ``minbucket`` and ``cp``).
    utility : "cart", "logit" or "none"
        The propensity model of the utility figures (pMSE, S_pMSE).
    utility_permutations : int
        CART: permutations for the null expectation of pMSE.
    utility_tables : list of lists of str
        Tables compared (``utility.tab``) besides the one-way table of each variable.
    disclosure_keys, disclosure_targets : list of str
        Keys and targets of the disclosure figures (default: the key variables; the sensitive
        variables, or else every synthesised variable that is not a key).
    n_records : int
        Records in the released synthetic file (synthpop's ``k``; 0: as many as the original).
        A file of another size needs every column synthesised (strata excepted): its records
        come stratum after stratum, each stratum's share proportional to its size.
    utility_sample : int
        Fit the utility's propensity model on a seeded sample of this many records of the two
        files together (split in proportion to their sizes) when they hold more (0: every
        record); the figures then say ``sampled`` with the sample's sizes.
    fit_sample : int
        Fit the models on a seeded sample of this many records when the data have more (0:
        on every record); the file still has one synthetic record per original record (or
        ``n_records``).
    draw_block : int
        Records drawn from one random stream: block ``b`` of the file's rows draws from child
        ``b`` of the step's stream, so the file is the same on either engine and for any
        partitioning of the records.

    On the Dask engine the step fits on the client (every record, or the ``fit_sample``
    sample, collected from the partitions) and draws partition by partition with the same
    blocks and streams: the released file equals the in-memory one for the same seed. The
    disclosure figures (repU, DiSCO, TCAP) come from count tables built per partition and
    merged on the workers, equal to the in-memory figures; the propensity figures (pMSE,
    S_pMSE) come from the records of the two files collected on the client (every record, or
    the ``utility_sample`` sample), equal to the in-memory figures; the table S_pMSE figures
    are not computed there.

    References
    ----------
    Nowok, B., Raab, G. M. and Dibben, C. (2016). synthpop: Bespoke creation of synthetic data
    in R. Journal of Statistical Software 74(11).
    Raab, G. M., Nowok, B. and Dibben, C. (2024). Practical privacy metrics for synthetic data.
    Snoke, J., Raab, G. M., Nowok, B., Dibben, C. and Slavkovic, A. (2018). General and specific
    utility measures for synthetic data. JRSS A 181(3), 663-688.
    """

    n_records: int = param(0, kind="int", low=0, unit="records", symbol="k", label="records in the synthetic file",
                           help="records in the released synthetic file (0: as many as the original)")
    variables: tuple = param((), kind="columns", label="synthesised columns", help="columns to synthesise (default: all but weight and household)")
    visit_sequence: tuple = param((), kind="columns", label="visit sequence", help="order of synthesis (the rest follow visit_rule)")
    visit_rule: str = param("data", kind="choice", label="order of the other variables", choices=("data", "synthpop"),
                            help="order of the variables not listed in visit_sequence")
    default_method: str = param("cart", kind="choice", label="method", choices=tuple(m for m in METHODS if m != "passive"),
                                help="method of every variable (the first of the sequence is sampled)")
    methods: dict = param({}, kind="mapping", label="method per variable", value_kind="choice", value_choices=STEP_METHODS,
                          help="method of each variable, as synthpop names it (empty: the method above)")
    passive: dict = param({}, kind="mapping", label="derived variables (formulas)", value_kind="str",
                          help="derived variables: column -> formula over earlier columns")
    rules: tuple = param((), kind="str_list", label="rules every synthetic record meets", help="rules 'condition -> consequent' every synthetic record meets")
    strata: tuple = param((), kind="columns", label="strata", help="synthesis within the strata these columns define")
    missing_codes: dict = param({}, kind="mapping", label="special codes per variable", value_kind="float_list",
                                help="special codes of numeric variables kept as categories (such as -8 for income)")
    smoothing: tuple = param((), kind="columns", label="smoothed variables", help="numeric variables smoothed by a Gaussian kernel")
    categorical: tuple = param((), kind="columns", label="numeric columns treated as categorical", help="numeric columns to treat as categorical")
    min_leaf: int = param(5, kind="int", label="smallest leaf", low=1, symbol="minbucket", unit="records",
                          help="smallest leaf of a tree", advanced=True)
    cp: float = param(1e-8, kind="float", label="complexity parameter", low=0.0, high=1.0, symbol="cp", advanced=True,
                      help="complexity a tree's split must add, as a share of the root's risk")
    utility: str = param("cart", kind="choice", label="utility model", choices=("cart", "logit", "none"),
                         help="propensity model of the utility figures")
    utility_permutations: int = param(20, kind="int", label="permutations for the null pMSE", low=1, high=1000, advanced=True,
                                      help="label permutations for the null pMSE of a CART model")
    utility_sample: int = param(0, kind="int", low=0, unit="records", advanced=True,
                                label="records read by the utility model",
                                help="fit the utility's propensity model on a seeded sample of this many records "
                                     "of the two files together when they hold more (0: every record)")
    utility_tables: list = param([], kind="any", label="tables compared", advanced=True,
                                 help="tables (lists of columns) whose counts are compared")
    disclosure_keys: tuple = param((), kind="columns", label="intruder's keys", help="what an intruder knows (default: the key variables)")
    disclosure_targets: tuple = param((), kind="columns", label="intruder's targets",
                                      help="what an intruder wants to learn (default: the sensitive variables)")
    fit_sample: int = param(0, kind="int", low=0, unit="records", advanced=True, label="records fitted",
                            help="fit the models on a seeded sample of this many records when the data "
                                 "have more (0: every record)")
    draw_block: int = param(DRAW_BLOCK, kind="int", low=1, unit="records", advanced=True,
                            label="records per random stream",
                            help="records drawn from one random stream (the file is then the same on any "
                                 "partitioning of the data)")

    #: the conformance checks' settings: the engines' plan needs the synthesised columns named
    example_params: ClassVar[dict] = {"variables": ["sex", "age", "marital", "health", "hours"]}

    def __post_init__(self) -> None:
        check_params(self)
        o = type(self).__name__
        object.__setattr__(self, "methods", _check_table_of(o, "methods", self.methods, "method"))
        object.__setattr__(self, "passive", _check_table_of(o, "passive", self.passive, "str"))
        object.__setattr__(self, "missing_codes", _check_table_of(o, "missing_codes", self.missing_codes, "numbers"))
        tables = self.utility_tables
        if (isinstance(tables, (str, bytes)) or not isinstance(tables, Sequence)
                or not all(isinstance(t, Sequence) and not isinstance(t, (str, bytes)) and t
                           and all(isinstance(c, str) and c for c in t) for t in tables)):
            raise param_error(o, "utility_tables", "a list of lists of column names", tables)
        object.__setattr__(self, "utility_tables", [list(t) for t in tables])
        for r in self.rules:
            try:
                parse_rule(r, where="rules")
            except InputError:
                raise param_error(o, "rules", "a list of rules 'condition -> consequent'", list(self.rules)) from None
        for var, m in self.methods.items():
            if m == "passive" and var not in self.passive:
                raise param_error(o, "methods", "a table of column -> method, 'passive' only with a formula "
                                  "in passive", dict(self.methods))

    # ------------------------------------------------------------------
    def synthesiser(self, microdata: Microdata) -> Synthesiser:
        """The settings as a :class:`Synthesiser` for these data."""
        variables = self.variables
        if not variables:
            skip = {microdata.weight, microdata.household} - {None}
            variables = tuple(c for c in microdata.columns if c not in skip and c not in self.strata)
        visit: Any = self.visit_rule
        if self.visit_sequence:
            visit = tuple(self.visit_sequence)
        return Synthesiser(variables=variables, visit_sequence=visit, method=self.default_method,
                           methods=dict(self.methods), passive=dict(self.passive), rules=tuple(self.rules),
                           strata=tuple(self.strata), missing_codes=dict(self.missing_codes),
                           smoothing=tuple(self.smoothing), categorical=tuple(self.categorical),
                           min_leaf=self.min_leaf, cp=self.cp)

    def settings(self) -> dict:
        """The declared settings as plain values (the result's ``params``)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    # ---- the Dask engine's protocol (sdckit.registry.DaskPlan)
    def dask_plan(self, roles: Mapping[str, Any]) -> DaskPlan:
        """Fit on the client, draw partition by partition (kernel ``synthesis``): reads every
        column of the roles and the synthesised ones, writes the synthesised ones (named)."""
        if not self.variables:
            raise SpecError("variables: synthesise on the Dask engine needs the synthesised columns named "
                            "(the engine plans what each step writes before it reads the data); list them.")
        writes = tuple(self.variables)
        reads = tuple(dict.fromkeys((*writes, *self.strata, *role_columns(roles))))
        return DaskPlan("synthesis", reads, writes)

    def apply(self, microdata: Microdata, *, rng: Any = None) -> SynthesisResult:
        ss, record = seed_sequence(rng)
        # children 0 (the draw) and 1 (the utility) as ss.spawn(2) gives them; child 2 picks the
        # records fitted when fit_sample is set
        fit_stream, utility_stream = child_stream(ss, 0), child_stream(ss, 1)
        synth = self.synthesiser(microdata)
        fitted = fit_for_release(self, microdata, ss, synth)
        n, k = microdata.n_records, self.n_records or microdata.n_records
        if k == n:
            draw = fitted.draw(rng=fit_stream, frame=microdata.frame, block_rows=self.draw_block)
            out = _to_microdata(microdata, fitted, draw)
        else:
            # a file of k records: stratum after stratum, drawn in the same blocks on either engine
            fitted.check_resizable(k)
            parts, checks = fitted.draw_resized_rows(fit_stream, k, 0, k, block_rows=self.draw_block)
            draw = SynthesisDraw(fitted, k, parts, checks, None)
            out = resized_microdata(microdata, draw.frame(microdata.frame))
        plan = fitted.plan
        methods = {v: _final_method(fitted, v) for v in plan.sequence}
        guarantees = _guarantees(microdata, out, fitted, k)
        original, released = microdata.frame, out.frame
        utility: dict = {}
        if self.utility != "none":
            rows_o, rows_s = utility_rows(n, k, self.utility_sample, ss)
            utility = step_utility(original if rows_o is None else original.iloc[rows_o],
                                   released if rows_s is None else released.iloc[rows_s], method=self.utility,
                                   variables=list(plan.columns), cont_na=dict(plan.missing_codes),
                                   categorical=categorical_columns(microdata, plan),
                                   n_permutations=self.utility_permutations, rng=utility_stream,
                                   n_original=n, n_synthetic=k, sampled=rows_o is not None)
        tables = []
        cat = categorical_columns(microdata, plan)
        for t in [[v] for v in plan.sequence] + self.utility_tables:
            tu = table_utility(original, released, t, cont_na=dict(plan.missing_codes), categorical=cat)
            tables.append({"variables": list(t), "S_pMSE": tu.measures["S_pMSE"], "df": tu.df})
        disclosure = [d.to_dict() for d in _disclosure(microdata, out, self.disclosure_keys,
                                                        self.disclosure_targets, plan)]
        identical = _share_identical(original, released, list(plan.sequence))
        summary = {"records": out.n_records, "records_original": n, "synthesised_variables": len(plan.sequence),
                   "visit_sequence": list(plan.sequence), "methods": methods,
                   "kept_variables": list(plan.kept), "rules": len(plan.rules),
                   "share_identical_to_an_original_record": identical}
        if utility:
            summary["pMSE"] = utility["pMSE"]
            summary["S_pMSE"] = utility["S_pMSE"]
        if tables:
            worst = max(tables, key=lambda t: t["S_pMSE"] if not math.isnan(t["S_pMSE"]) else -1)
            summary["largest_table_S_pMSE"] = {"table": " x ".join(worst["variables"]), "S_pMSE": worst["S_pMSE"]}
        if disclosure:
            summary["repU_percent"] = max(d["identity"]["repU"] for d in disclosure)
            top = max(disclosure, key=lambda d: d["attribute"]["DiSCO"])
            summary["DiSCO_percent"] = {"target": top["target"], "DiSCO": top["attribute"]["DiSCO"]}
        redraws = {}
        for chk in draw.checks:
            for v, k in chk.get("redraws", {}).items():
                redraws[v] = redraws.get(v, 0) + k
        notes = list(fitted.notes)
        if redraws:
            notes.append("records drawn again to meet the rules: " + ", ".join(f"{v} {k}" for v, k in redraws.items()))
        return SynthesisResult(
            "synthesise", out, self.settings(), summary, tuple(guarantees), record, {},
            methods=methods, kept=tuple(plan.kept), strata=tuple(plan.strata),
            rules=tuple(r.source for r in plan.rules), utility=utility, tables=tuple(tables),
            disclosure=tuple(disclosure), notes=tuple(notes))


def _plain(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _final_method(fitted: FittedSynthesis, var: str) -> str:
    """What drew the variable: the planned method, or ``sample``/``constant`` when its model had
    no usable predictor or a single value (in every stratum)."""
    planned = fitted.plan.methods[var]
    seen = set()
    for chain in fitted.chains.values():
        vm = next(m for m in chain.models if m.name == var)
        if vm.method in ("passive", "rule"):
            seen.add(vm.method)
        elif vm.value is not None:
            seen.add(vm.value.method)
    if len(seen) == 1:
        return seen.pop()
    return planned


def categorical_columns(md: Microdata, plan) -> list[str]:
    """Numeric-typed columns the synthesis treated as categorical (keys and those listed): the
    utility model reads them as categories (either engine)."""
    return [c for c in plan.columns if plan.categorical.get(c) and pd.api.types.is_numeric_dtype(md.frame[c])]


def _to_microdata(md: Microdata, fitted: FittedSynthesis, draw: SynthesisDraw) -> Microdata:
    """The synthetic records as a Microdata with the input's roles: key variables by their codes
    (same categories), other synthesised columns by value."""
    frame = draw.frame(md.frame)
    plan = fitted.plan
    new_codes = {}
    for v in plan.sequence:
        if v in md.key_vars:
            # the fit's categories (those of the records fitted, missing last) as the key's codes
            labels = fitted.encoded[v].categories
            known = np.array([lab is not None for lab in labels])
            lut = np.full(labels.shape[0], -1, dtype=np.int64)
            lut[known] = md.categories(v).get_indexer(pd.Index(labels[known].tolist()))
            if (lut[known] < 0).any():
                raise InputError(f"synthesise: the passive key variable {v!r} produced values that are not "
                                 "categories of the original; keys keep their categories.")
            new_codes[v] = lut[draw.codes(v)].astype(np.int32)
    out = md.with_codes(new_codes) if new_codes else md
    others = {v: frame[v] for v in plan.sequence if v not in md.key_vars}
    if others:
        out = out.with_columns(others)
    return out


def _guarantees(md: Microdata, out: Microdata, fitted: FittedSynthesis, k: int) -> list[Guarantee]:
    """The step's promises, checked on the output frame (not on the synthesiser's codes)."""
    plan = fitted.plan
    n = md.n_records
    orig, syn = md.frame, out.frame
    resized = k != n
    gs = [Guarantee("record_count", f"the synthetic file has the {k:,} records asked" if resized else
                    "the synthetic file has as many records as the original", out.n_records, out.n_records == k)]
    if plan.rules:
        bad = 0
        data = {c: _values(syn[c]) for c in plan.columns}
        for r in plan.rules:
            bad += int((~r.holds(data, out.n_records)).sum())
        gs.append(Guarantee("rules_hold", f"every synthetic record meets the {len(plan.rules)} rule(s)",
                            {"violations": bad}, bad == 0))
    kept_changed = [] if resized else [c for c in plan.kept if not orig[c].equals(syn[c])]
    if plan.kept and not resized:
        gs.append(Guarantee("kept_unchanged", "columns not synthesised keep their values",
                            {"changed": kept_changed}, not kept_changed))
    if plan.strata:
        mixed = 0
        keys_o = orig[list(plan.strata)].astype(object).apply(tuple, axis=1)
        keys_s = syn[list(plan.strata)].astype(object).apply(tuple, axis=1)
        if resized:   # each stratum keeps its share of the k records (largest remainders)
            want = fitted.allocation(k)
            got = keys_s.value_counts()
            same_place = all(int(got.get(tuple(lab), 0)) == m for lab, m in want.items())
        else:
            same_place = bool((keys_o.to_numpy() == keys_s.to_numpy()).all())
        for c in plan.sequence:
            if not plan.categorical[c] or plan.methods[c] == "passive":
                continue
            for lab in pd.unique(keys_o):
                o_vals = set(_labels(orig[c][keys_o == lab]))
                s_vals = set(_labels(syn[c][keys_s == lab]))
                mixed += len(s_vals - o_vals)
        gs.append(Guarantee("strata_never_mix", "each stratum keeps its records and draws only values "
                            "observed within it", {"records_in_their_stratum": same_place,
                                                   "values_from_other_strata": mixed},
                            same_place and mixed == 0))
    foreign = 0
    for c in plan.sequence:
        if plan.categorical[c] and plan.methods[c] != "passive":
            foreign += len(set(_labels(syn[c])) - set(_labels(orig[c])))
    gs.append(Guarantee("original_categories", "every synthetic category of a categorical variable "
                        "occurs in the original", {"new_categories": foreign}, foreign == 0))
    return gs


def _values(s: pd.Series) -> np.ndarray:
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=np.float64, na_value=np.nan)
    return s.astype(object).where(s.notna(), None).to_numpy()


def _labels(s: pd.Series) -> list:
    return [None if (v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA) else v
            for v in s.astype(object)]


def _share_identical(orig: pd.DataFrame, syn: pd.DataFrame, cols: list[str]) -> float:
    """Share of synthetic records equal to some original record on every synthesised column."""
    if not cols:
        return 0.0
    a = pd.util.hash_pandas_object(orig[cols].astype(str), index=False).to_numpy()
    b = pd.util.hash_pandas_object(syn[cols].astype(str), index=False).to_numpy()
    return float(np.isin(b, a).mean())


def _disclosure(md: Microdata, out: Microdata, keys: Sequence[str], targets: Sequence[str],
                plan) -> list[DisclosureMeasures]:
    keys, targets = default_keys_targets(md.key_vars, md.sensitive, plan.sequence, keys, targets)
    return [disclosure_measures(md, out, keys, t) for t in targets]


# ----------------------------------------------------------------------------- gate checks
def _keys_targets(src: DisclosureSource, keys: Sequence[str], targets: Sequence[str],
                  gate: str, need_target: bool) -> tuple[list, list]:
    keys = list(keys) or list(src.key_vars)
    if not keys:
        raise InputError(f"gate.{gate}: the data have no key variables; give [roles] key_vars or the keys of "
                         f"the threshold ({gate} = {{ percent = 5, keys = [...] }}).")
    targets = list(targets) or list(src.sensitive)
    if need_target and not targets:
        targets = [c for c in src.released_columns if c not in keys]
    for c in keys + targets:
        for name, cols in (("original", src.original_columns), ("released", src.released_columns)):
            if c not in cols:
                raise InputError(f"gate.{gate}: {c!r} is not a column of the {name} data; the measure needs "
                                 "the keys and targets in both files.")
    return keys, [t for t in targets if t not in keys]


@register_gate_check("max_repU", engines=("memory", "dask"), description=(
    "replicated uniques: percent of original records unique on the keys in both the original and "
    "the released file, at most the threshold"))
@dataclass(frozen=True)
class MaxRepU(GateCheck):
    """Replicated uniques repU (synthpop's identity disclosure), in percent.

    References
    ----------
    Raab, G. M., Nowok, B. and Dibben, C. (2024). Practical privacy metrics for synthetic data,
    section 3 (identity disclosure: UiO, repU).
    """

    percent: float = param(kind="float", low=0.0, high=100.0, unit="percent of records", label="largest repU",
                           symbol="repU", help="percent of records unique on the keys in both files")
    keys: tuple = param((), kind="columns", label="intruder's keys", help="what an intruder knows (default: the key variables)")

    measured_labels = {"repU": ("replicated uniques (repU)", "percent"), "UiO": ("original records unique on the keys (UiO)", "percent")}

    dask_summary = "synthesis_disclosure"

    def check(self, original: Microdata, released: Microdata, results: Sequence[StepResult]) -> GateOutcome:
        return self.finish(DisclosureSource(original, released))

    def finish(self, summary: DisclosureSource) -> GateOutcome:
        """The outcome from a :class:`~sdckit.synth.disclosure.DisclosureSource` (either engine)."""
        src = summary
        keys, targets = _keys_targets(src, self.keys, (), "max_repU", False)
        # repU reads the keys only (with disclosure()'s default options the identity figures do
        # not depend on the target): a target already measured with these keys serves, else any
        # other column
        other = src.measured_target(keys) or next(
            (c for c in src.released_columns if c not in keys and c in src.original_columns), None)
        if other is None:
            raise InputError("gate.max_repU: the release has no column besides the keys.")
        d = src.measures(keys, [other])[0]
        v = d.identity["repU"]
        ok = v <= self.percent
        detail = (f"repU {v:.3f}% {'<=' if ok else '>'} {self.percent:g}% (unique on {', '.join(keys)} in both "
                  f"files; {d.identity['UiO']:.2f}% unique in the original)"
                  + ("" if ok else "; synthesise the keys more coarsely (larger min_leaf) or recode them")
                  + (f"; {src.scope}" if src.scope else ""))
        return GateOutcome("max_repU", self.percent, {"repU": v, "UiO": d.identity["UiO"]}, ok, detail)


def _attribute_check(name: str, measure: str, threshold: float, keys: Sequence[str], targets: Sequence[str],
                     src: DisclosureSource) -> GateOutcome:
    keys, targets = _keys_targets(src, keys, targets, name, True)
    if not targets:
        raise InputError(f"gate.{name}: no target variable; give [roles] sensitive or the targets of the threshold.")
    values = {}
    for t, d in zip(targets, src.measures(keys, targets)):
        values[t] = d.attribute["DiSCO"] if measure == "DiSCO" else d.cap["TCAP"]
    worst = max(values, key=lambda t: -1.0 if math.isnan(values[t]) else values[t])
    v = values[worst]
    ok = not (v > threshold)
    detail = (f"{measure} {v:.3f}% {'<=' if ok else '>'} {threshold:g}% (largest over {len(values)} target"
              f"{'s' if len(values) != 1 else ''}, for {worst}, keys {', '.join(keys)})"
              + ("" if ok else f"; synthesise {worst} with coarser models or fewer keys' detail")
              + (f"; {src.scope}" if src.scope else ""))
    return GateOutcome(name, threshold, {measure: v, "target": worst, "by_target": values}, ok, detail)


@register_gate_check("max_disco", engines=("memory", "dask"), description=(
    "DiSCO: percent of original records whose target the released file discloses correctly from "
    "the keys, at most the threshold (largest over the targets)"))
@dataclass(frozen=True)
class MaxDiSCO(GateCheck):
    """Attribute disclosure DiSCO (synthpop's "disclosive in synthetic, correct in original"),
    in percent, the largest over the targets.

    References
    ----------
    Raab, G. M., Nowok, B. and Dibben, C. (2024). Practical privacy metrics for synthetic data,
    section 4 (attribute disclosure: DiSCO).
    """

    percent: float = param(kind="float", low=0.0, high=100.0, unit="percent of records", label="largest DiSCO",
                           symbol="DiSCO", help="percent of records whose target the keys disclose correctly")
    keys: tuple = param((), kind="columns", label="intruder's keys", help="what an intruder knows (default: the key variables)")
    targets: tuple = param((), kind="columns", label="intruder's targets",
                           help="what an intruder wants to learn (default: the sensitive variables)")

    measured_labels = {"DiSCO": ("records whose target is disclosed (DiSCO, worst target)", "percent"),
                       "target": ("worst target", None), "by_target": ("per target", None)}

    dask_summary = "synthesis_disclosure"

    def check(self, original: Microdata, released: Microdata, results: Sequence[StepResult]) -> GateOutcome:
        return self.finish(DisclosureSource(original, released))

    def finish(self, summary: DisclosureSource) -> GateOutcome:
        """The outcome from a :class:`~sdckit.synth.disclosure.DisclosureSource` (either engine)."""
        return _attribute_check("max_disco", "DiSCO", self.percent, self.keys, self.targets, summary)


@register_gate_check("max_tcap", engines=("memory", "dask"), description=(
    "TCAP: percent of the original records whose keys occur in the released file that it "
    "discloses correctly, at most the threshold (largest over the targets)"))
@dataclass(frozen=True)
class MaxTCAP(GateCheck):
    """Targeted correct attribution probability TCAP as synthpop 1.9 computes it, in percent.

    References
    ----------
    Taub, J., Elliot, M., Pampaka, M. and Smith, D. (2018). Differential correct attribution
    probability for synthetic data: an exploration. PSD 2018, LNCS 11126.
    """

    percent: float = param(kind="float", low=0.0, high=100.0, unit="percent of records", label="largest TCAP",
                           symbol="TCAP", help="percent of matched records whose target is disclosed correctly")
    keys: tuple = param((), kind="columns", label="intruder's keys", help="what an intruder knows (default: the key variables)")
    targets: tuple = param((), kind="columns", label="intruder's targets",
                           help="what an intruder wants to learn (default: the sensitive variables)")

    measured_labels = {"TCAP": ("targeted correct attribution probability (TCAP, worst target)", "percent"),
                       "target": ("worst target", None), "by_target": ("per target", None)}

    dask_summary = "synthesis_disclosure"

    def check(self, original: Microdata, released: Microdata, results: Sequence[StepResult]) -> GateOutcome:
        return self.finish(DisclosureSource(original, released))

    def finish(self, summary: DisclosureSource) -> GateOutcome:
        """The outcome from a :class:`~sdckit.synth.disclosure.DisclosureSource` (either engine)."""
        return _attribute_check("max_tcap", "TCAP", self.percent, self.keys, self.targets, summary)


__all__ = ["Synthesise", "SynthesisResult", "MaxRepU", "MaxDiSCO", "MaxTCAP"]
