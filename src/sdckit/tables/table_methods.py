"""The table methods and sensitivity rules of :mod:`sdckit.tables`, declared and registered.

Each class declares its settings with :func:`sdckit.params.param` and delegates the work to
the method's own module (:mod:`~sdckit.tables.suppression`, :mod:`~sdckit.tables.modular`,
:mod:`~sdckit.tables.hypercube`, :mod:`~sdckit.tables.gauss`, :mod:`~sdckit.tables.rounding`, :mod:`~sdckit.tables.margins`,
:mod:`~sdckit.tables.ckm`); ``apply`` turns that module's result into a
:class:`~sdckit.tables.registry.TableResult` with the audit's verdict. The differential-privacy
settings register themselves in :mod:`sdckit.dp.table_methods`.

Each default and each list of choices is declared once, in the kernel (the dataclass or
function that does the work, e.g. :class:`~sdckit.tables.hypercube.HypercubeSuppression`), and
read from there by :func:`~sdckit.tables.registry.kernel_defaults` (without importing the
kernel: registering the methods loads no solver); the declarations here add what a form, the
docs and the spec reader need (label, help, unit, range). ``apply`` passes the declared
settings to the kernel by name (:func:`~sdckit.tables.registry.kernel_settings`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import param_error
from ..errors import InputError
from ..params import param
from ..result import Guarantee
from .registry import (
    AuditVerdict,
    TableMethod,
    TableResult,
    TableRule,
    kernel_constant,
    kernel_defaults,
    kernel_settings,
    register_table_method,
    register_table_rule,
)

__all__ = ["Threshold", "PPercent", "PQ", "Dominance", "Optimal", "Modular", "Heuristic", "Hypercube", "Gauss",
           "ChainHypercube", "Rounding", "Margins", "CellKey", "CTA", "suppression_verdict", "ckm_guarantees"]



def _kernel(module: str, name: str) -> Any:
    return kernel_defaults(f"{__package__}.{module}", name)


# the kernels' declared defaults (read from their source; see the module docstring)
_OPTIMAL = _kernel("suppression", "OptimalSuppression")
_HEURISTIC = _kernel("suppression", "HeuristicSuppression")
_MODULAR = _kernel("modular", "ModularSuppression")
_HYPERCUBE = _kernel("hypercube", "HypercubeSuppression")
_GAUSS = _kernel("gauss", "GaussSuppression")
_CHAIN_CUBE = _kernel("chain_cube", "ChainCubeSuppression")
_MARGINS = _kernel("margins", "release_margins")
_CTA = _kernel("cta", "ControlledAdjustment")
_ROUNDING = _kernel("rounding", "ControlledRounding")
_COSTS = kernel_constant(f"{__package__}.suppression", "COSTS")
_THRESHOLD = _kernel("rules", "ThresholdRule")
_PPERCENT = _kernel("rules", "PPercentRule")
_PQ = _kernel("rules", "PQRule")
_DOMINANCE = _kernel("rules", "DominanceRule")
_CKM = _kernel("ckm.cellkey", "ckm_frequency")


# ----------------------------------------------------------------------------- rules

@register_table_rule("threshold", label="minimum frequency",
                     help="a cell with fewer than n contributors is sensitive")
@dataclass(frozen=True)
class Threshold(TableRule):
    """Minimum frequency rule (Hundepool et al. 2012, sec. 4.2.2)."""

    n: int = param(_THRESHOLD["n"], kind="int", low=1, label="minimum contributors", symbol="n", unit="contributors",
                   help="a cell with 0 < contributors < n is sensitive")
    range_percent: float = param(_THRESHOLD["range_percent"], kind="float", low=0, label="protection range", unit="% of the cell",
                                 help="how far an attacker's interval must reach around a sensitive cell")

    def build(self) -> Any:
        from .rules import ThresholdRule

        return ThresholdRule(n=self.n, range_percent=self.range_percent)


@register_table_rule("p%", label="p% rule",
                     help="the second largest contributor must not estimate the largest within p%")
@dataclass(frozen=True)
class PPercent(TableRule):
    """p% rule (Hundepool et al. 2012, sec. 4.2.2, eq. 4.2)."""

    p: float = param(_PPERCENT["p"], kind="float", low=0, low_open=True, high=100, label="precision", symbol="p",
                     unit="%", help="sensitive if X - x1 - x2 < p/100 x1")

    def build(self) -> Any:
        from .rules import PPercentRule

        return PPercentRule(p=self.p)


@register_table_rule("pq", label="pq rule", help="prior-posterior rule: p% with an attacker's prior knowledge q%")
@dataclass(frozen=True)
class PQ(TableRule):
    """pq rule (Hundepool et al. 2012, sec. 4.2.2, eq. 4.3)."""

    p: float = param(_PQ["p"], kind="float", low=0, low_open=True, high=100, label="precision", symbol="p",
                     unit="%", help="the precision an attacker must not reach")
    q: float = param(_PQ["q"], kind="float", low=0, low_open=True, high=100, label="prior knowledge", symbol="q",
                     unit="%", help="how precisely contributors know each other beforehand (q >= p)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.q < self.p:
            raise param_error("PQ", "q", f"a number in [p, 100] (p = {self.p:g})", self.q)

    def build(self) -> Any:
        from .rules import PQRule

        return PQRule(p=self.p, q=self.q)


@register_table_rule("nk", label="(n,k)-dominance",
                     help="the n largest contributions must not exceed k% of the cell")
@dataclass(frozen=True)
class Dominance(TableRule):
    """(n,k)-dominance rule (Hundepool et al. 2012, sec. 4.2.2, eq. 4.1)."""

    n: int = param(_DOMINANCE["n"], kind="int", low=1, label="largest contributors", symbol="n", unit="contributors",
                   help="how many of the largest contributions are summed")
    k: float = param(_DOMINANCE["k"], kind="float", low=0, low_open=True, high=100, label="dominance share", symbol="k",
                     unit="% of the cell", help="sensitive if the n largest exceed k% of the cell")

    def build(self) -> Any:
        from .rules import DominanceRule

        return DominanceRule(n=self.n, k=self.k)


# ----------------------------------------------------------------------------- suppression

def suppression_verdict(audit: Any, n_primary: int) -> AuditVerdict:
    """The verdict of a suppression audit: exact, sampled (with its counts) or failed."""
    if hasattr(audit, "mode"):  # the hypercube's protection audit counts what it audited
        n_aud, n_not = int(audit.n_audited), int(audit.n_not_audited)
    else:  # the full interval audit: every suppressed cell, so every sensitive one
        n_aud, n_not = int(n_primary), 0
    return AuditVerdict(audit.status, audit.statement(), n_aud, n_not, audit.rule)


def _suppressed_result(self: TableMethod, table: Any, primary: Any, res: Any) -> TableResult:
    status = np.where(np.asarray(res.suppressed, bool), "suppressed", "safe").astype(object)
    return TableResult(self.method_name, table, np.asarray(table.value, float), status,
                       suppression_verdict(res.audit, primary.n_primary), list(res.guarantees), res,
                       self.public_params())


def _need_primary(method: str, primary: Any) -> None:
    if primary is None:
        raise InputError(f"{method} suppression needs the sensitive cells: give at least one sensitivity rule "
                         "(e.g. type = \"threshold\", n = 3)")


def _cost_param(kernel: Any) -> Any:
    return param(kernel["cost"], kind="choice", choices=_COSTS, label="cost of a suppressed cell",
                 help="what secondary suppression minimises: cell value, frequency, log value, one per cell, "
                      "or tau-Argus's scaling")


def _bound(which: str, kernel: Any) -> Any:
    return param(kernel[f"{which}_bound"], kind="float", nullable=True, advanced=True, label=f"a-priori {which} bound",
                 unit="response units",
                 help=f"the {which} bound an attacker knows for every cell (default: "
                      f"{'0 for non-negative tables' if which == 'lower' else 'none'})")


@register_table_method("optimal", label="optimal secondary suppression", needs_rules=True,
                       help="the cheapest suppression pattern that protects every sensitive cell (MILP)")
@dataclass(frozen=True)
class Optimal(TableMethod):
    """Optimal secondary suppression (Fischetti & Salazar-Gonzalez 2001, sec. 3)."""

    cost: str = _cost_param(_OPTIMAL)
    time_limit: float = param(_OPTIMAL["time_limit"], kind="float", low=0, low_open=True, unit="seconds",
                              label="time limit",
                              help="time for the master/separation loop; then the best audited pattern is kept")
    mip_gap: float = param(_OPTIMAL["mip_gap"], kind="float", low=0, high=1, advanced=True, label="MIP gap",
                           help="relative gap at which a master problem counts as solved")
    lower_bound: float | None = _bound("lower", _OPTIMAL)
    upper_bound: float | None = _bound("upper", _OPTIMAL)

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None) -> TableResult:
        from .suppression import OptimalSuppression

        _need_primary("optimal", primary)
        res = OptimalSuppression(**kernel_settings(self)).apply(table, primary)
        return _suppressed_result(self, table, primary, res)


@register_table_method("modular", label="modular suppression (HiTaS)", needs_rules=True,
                       help="suppression sub-table by sub-table down the hierarchy, as tau-Argus's MOD")
@dataclass(frozen=True)
class Modular(TableMethod):
    """Modular (HiTaS) suppression (de Wolf 2002, sec. 2)."""

    cost: str = _cost_param(_MODULAR)
    time_limit: float = param(_MODULAR["time_limit"], kind="float", low=0, low_open=True, unit="seconds",
                              label="time limit", help="time per sub-table")
    carry_percent: float = param(_MODULAR["carry_percent"], kind="float", low=0, advanced=True, unit="% of the cell",
                                 label="carried protection",
                                 help="protection carried to the next level's sub-tables")
    mip_gap: float = param(_MODULAR["mip_gap"], kind="float", low=0, high=1, advanced=True, label="MIP gap",
                           help="relative gap at which a sub-table's problem counts as solved")
    cleanup: bool = param(_MODULAR["cleanup"], kind="bool", advanced=True, label="clean-up pass",
                          help="publish the secondaries no sensitive cell needs on the whole table, each removal proven")
    cleanup_seconds: float = param(_MODULAR["cleanup_seconds"], kind="float", low=0, advanced=True,
                                   unit="CPU seconds", label="clean-up budget (CPU)",
                                   help="CPU time the clean-up may use; beyond it it stops and says partial")
    lower_bound: float | None = _bound("lower", _MODULAR)
    upper_bound: float | None = _bound("upper", _MODULAR)

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None) -> TableResult:
        from .modular import ModularSuppression

        _need_primary("modular", primary)
        res = ModularSuppression(**kernel_settings(self)).apply(table, primary)
        return _suppressed_result(self, table, primary, res)


@register_table_method("heuristic", label="LP heuristic suppression", needs_rules=True,
                       help="one LP per sensitive cell, then a clean-up of unneeded suppressions")
@dataclass(frozen=True)
class Heuristic(TableMethod):
    """LP heuristic (Kelly, Golden & Assad 1992, sec. 3) with a clean-up pass."""

    cost: str = _cost_param(_HEURISTIC)
    time_limit: float = param(_HEURISTIC["time_limit"], kind="float", low=0, low_open=True, unit="seconds",
                              label="time limit", help="time per LP")
    lower_bound: float | None = _bound("lower", _HEURISTIC)
    upper_bound: float | None = _bound("upper", _HEURISTIC)

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None) -> TableResult:
        from .suppression import HeuristicSuppression

        _need_primary("heuristic", primary)
        res = HeuristicSuppression(**kernel_settings(self)).apply(table, primary)
        return _suppressed_result(self, table, primary, res)


@register_table_method("hypercube", label="hypercube suppression (GHMITER)", needs_rules=True,
                       help="a protecting hypercube per sensitive cell, for large tables (tau-Argus's GH)")
@dataclass(frozen=True)
class Hypercube(TableMethod):
    """Hypercube method (Repsilber 2002, sec. 2; Giessing & Repsilber 2002)."""

    cost: str = _cost_param(_HYPERCUBE)
    max_siblings: int = param(_HYPERCUBE["max_siblings"], kind="int", low=1, advanced=True, label="largest hypercube side",
                              unit="categories", help="how many sibling categories a hypercube may span")
    time_limit: float = param(_HYPERCUBE["time_limit"], kind="float", low=0, low_open=True, unit="seconds",
                              label="time limit", help="time for the pattern")
    audit_lps: int = param(_HYPERCUBE["audit_lps"], kind="int", low=0, advanced=True, unit="LPs", label="audit budget (LPs)",
                           help="LPs the audit may solve; beyond it the audit is sampled and says so")
    audit_seconds: float = param(_HYPERCUBE["audit_seconds"], kind="float", low=0, advanced=True,
                                 unit="CPU seconds", label="audit budget (CPU)",
                                 help="CPU time the audit may use; beyond it the audit is sampled and says so")
    avoid_singletons: bool = param(_HYPERCUBE["avoid_singletons"], kind="bool", advanced=True, label="avoid singletons",
                                   help="protect a sensitive cell that is alone in its row with a second one")
    audit_certificates: bool = param(_HYPERCUBE["audit_certificates"], kind="bool", advanced=True, label="hypercubes as proofs",
                                     help="verify each hypercube and use it as the proof of its cell's protection")
    cleanup: bool = param(_HYPERCUBE["cleanup"], kind="bool", advanced=True, label="clean-up pass",
                          help="publish the secondaries no sensitive cell needs, each removal proven by the audit's LPs")
    cleanup_seconds: float = param(_HYPERCUBE["cleanup_seconds"], kind="float", low=0, advanced=True,
                                   unit="CPU seconds", label="clean-up budget (CPU)",
                                   help="CPU time the clean-up may use; beyond it it stops and says partial")
    lower_bound: float | None = _bound("lower", _HYPERCUBE)
    upper_bound: float | None = _bound("upper", _HYPERCUBE)

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None) -> TableResult:
        from .hypercube import HypercubeSuppression

        _need_primary("hypercube", primary)
        res = HypercubeSuppression(**kernel_settings(self)).apply(table, primary)
        return _suppressed_result(self, table, primary, res)


@register_table_method("gauss", label="Gaussian-elimination suppression (GaussSuppression)", needs_rules=True,
                       help="candidates published in priority order unless a sensitive cell would become "
                            "derivable, then intervals repaired until the audit passes (Statistics Norway)")
@dataclass(frozen=True)
class Gauss(TableMethod):
    """Secondary suppression by Gaussian elimination (Langsrud 2024, sec. 3-4) with interval protection."""

    cost: str = _cost_param(_GAUSS)
    order: str = param(_GAUSS["order"], kind="choice", choices=kernel_constant(f"{__package__}.gauss", "ORDERS"),
                       label="candidate order",
                       help="which cells are published first: most contributors, largest value, or dearest "
                            "to suppress (the others become secondaries first)")
    singletons: str = param(_GAUSS["singletons"], kind="choice",
                            choices=kernel_constant(f"{__package__}.gauss", "SINGLETON_METHODS"),
                            label="singleton handling",
                            help="subsum: a single contributor cannot learn the other sensitive cells of a group "
                                 "it shares (Langsrud's subSum); anysum: nor any other sensitive cell, through "
                                 "any chain of cells across groups (anySum); none: no singleton handling")
    interval_protection: bool = param(_GAUSS["interval_protection"], kind="bool", label="interval protection",
                                      help="audit every sensitive cell's interval against the rule's protection "
                                           "levels and suppress more until each one is met")
    interval_rounds: int = param(_GAUSS["interval_rounds"], kind="int", low=1, advanced=True, unit="rounds", label="repair rounds",
                                 help="rounds of audit and repair at most")
    time_limit: float = param(_GAUSS["time_limit"], kind="float", low=0, low_open=True, unit="seconds",
                              label="time limit", help="time per LP of the interval repair")
    audit_lps: int = param(_GAUSS["audit_lps"], kind="int", low=0, advanced=True, unit="LPs",
                           label="audit budget (LPs)",
                           help="LPs the audit may solve; beyond it the audit is sampled and says so")
    audit_seconds: float = param(_GAUSS["audit_seconds"], kind="float", low=0, advanced=True, unit="CPU seconds",
                                 label="audit budget (CPU)",
                                 help="CPU time the audit may use; beyond it the audit is sampled and says so")
    lower_bound: float | None = _bound("lower", _GAUSS)
    upper_bound: float | None = _bound("upper", _GAUSS)

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None) -> TableResult:
        from .gauss import GaussSuppression

        _need_primary("gauss", primary)
        res = GaussSuppression(**kernel_settings(self)).apply(table, primary)
        return _suppressed_result(self, table, primary, res)


@register_table_method("chain_hypercube", label="hypercube suppression with chains, for large sparse tables",
                       needs_rules=True,
                       help="a proven move per sensitive cell through non-empty cells only (sibling pairs or "
                            "chains up to the total), verified by the audit without an LP")
@dataclass(frozen=True)
class ChainHypercube(TableMethod):
    """Hypercubes with chain factors (Repsilber 2002; Hundepool et al. 2012, sec. 4.4.4), for sparse tables."""

    cost: str = _cost_param(_CHAIN_CUBE)
    max_pairs: int = param(_CHAIN_CUBE["max_pairs"], kind="int", low=1, advanced=True, label="pairs per dimension",
                           unit="categories", help="sibling or cousin categories tried per dimension, cheapest first")
    max_pair_level: int = param(_CHAIN_CUBE["max_pair_level"], kind="int", low=1, advanced=True,
                                label="pair reach", unit="levels",
                                help="how far up the hierarchy a pair's common parent may be (1: siblings only)")
    max_descendants: int = param(_CHAIN_CUBE["max_descendants"], kind="int", low=1, advanced=True,
                                 label="inner cells tried", unit="cells",
                                 help="inner cells tried under a sensitive total (its move goes through one)")
    max_combos: int = param(_CHAIN_CUBE["max_combos"], kind="int", low=1, advanced=True, label="moves tried",
                            unit="moves", help="moves evaluated per sensitive cell at most")
    time_limit: float = param(_CHAIN_CUBE["time_limit"], kind="float", low=0, low_open=True, unit="seconds",
                              label="time limit", help="time per LP for a sensitive cell no move protects")
    audit_lps: int | None = param(_CHAIN_CUBE["audit_lps"], kind="int", low=0, nullable=True, advanced=True,
                                  unit="LPs", label="audit budget (LPs)",
                                  help="LPs the audit may solve (empty: no limit); beyond it the audit is sampled "
                                       "and says so")
    audit_seconds: float | None = param(_CHAIN_CUBE["audit_seconds"], kind="float", low=0, nullable=True,
                                        advanced=True, unit="CPU seconds", label="audit budget (CPU)",
                                        help="CPU time the audit may use (empty: no limit); beyond it the audit is "
                                             "sampled and says so")
    lower_bound: float | None = _bound("lower", _CHAIN_CUBE)
    upper_bound: float | None = _bound("upper", _CHAIN_CUBE)

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None) -> TableResult:
        from .chain_cube import ChainCubeSuppression

        _need_primary("chain_hypercube", primary)
        res = ChainCubeSuppression(**kernel_settings(self)).apply(table, primary)
        return _suppressed_result(self, table, primary, res)


@register_table_method("margins", label="publish the margins only", needs_rules=False,
                       help="every total published, every inner cell withheld, with the audit's intervals")
@dataclass(frozen=True)
class Margins(TableMethod):
    """Margins release with an interval audit of the withheld cells (Dobra & Fienberg 2000, sec. 2)."""

    lower_bound: float | None = _bound("lower", _MARGINS)
    upper_bound: float | None = _bound("upper", _MARGINS)

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None) -> TableResult:
        from .margins import release_margins

        res = release_margins(table, primary=primary, **kernel_settings(self))
        status = np.where(np.asarray(res.published, bool), "safe", "suppressed").astype(object)
        aud = res.audit
        st = aud.status if res.ok else "failed"
        sentence = aud.statement()
        if res.n_sensitive_published:
            sentence += f"; {res.n_sensitive_published:,} sensitive cells are published as margins: NOT safe"
        n_aud = 0 if primary is None else int(primary.n_primary)
        return TableResult(self.method_name, table, np.asarray(table.value, float), status,
                           AuditVerdict(st, sentence, n_aud, 0, aud.rule), list(res.guarantees), res,
                           self.public_params())


# ----------------------------------------------------------------------------- perturbation

@register_table_method("cta", label="controlled tabular adjustment", needs_rules=True,
                       help="the closest additive table with every sensitive cell moved out of its protection "
                            "interval (tau-Argus's CTA)")
@dataclass(frozen=True)
class CTA(TableMethod):
    """Controlled tabular adjustment (Dandekar & Cox 2002; Castro 2006, sec. 2-3) with HiGHS."""

    weights: str = param(_CTA["weights"], kind="choice", choices=kernel_constant(f"{__package__}.cta", "WEIGHTS"),
                         label="cost of a change",
                         help="relative: change over the cell's value (Castro 2006); unity: absolute change")
    solver: str = param(_CTA["method"], kind="choice", choices=kernel_constant(f"{__package__}.cta", "METHODS"),
                        label="solver",
                            help="milp: the best up/down direction of every sensitive cell (optimal); "
                                 "lp: directions fixed first, one LP (faster, tau-Argus's heuristic)")
    integer: bool = param(_CTA["integer"], kind="bool", label="integer changes",
                          help="every change is a whole number (for counts)")
    time_limit: float = param(_CTA["time_limit"], kind="float", low=0, low_open=True, unit="seconds",
                              label="time limit",
                              help="time for HiGHS; a MILP stopped by it keeps its best table, not proven optimal")
    mip_gap: float = param(_CTA["mip_gap"], kind="float", low=0, high=1, advanced=True, label="MIP gap",
                           help="relative gap at which the MILP counts as solved")
    lower_bound: float | None = _bound("lower", _CTA)
    upper_bound: float | None = _bound("upper", _CTA)

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None) -> TableResult:
        from .cta import ControlledAdjustment

        if primary is None:
            raise InputError("controlled tabular adjustment needs the sensitive cells: give at least one sensitivity "
                             "rule (e.g. type = \"p%\", p = 15)")
        res = ControlledAdjustment(**kernel_settings(self, {"solver": "method"})).apply(table, primary)
        aud = res.audit
        verdict = AuditVerdict(aud.status, aud.statement(), int(table.n_cells), 0, aud.rule)
        # every cell is published as adjusted (no mark tells which cells the adjustment left alone)
        status = np.full(table.n_cells, "perturbed", dtype=object)
        return TableResult(self.method_name, table, np.asarray(res.adjusted, float), status, verdict,
                           res.guarantees, res, self.public_params())


@register_table_method("rounding", label="controlled rounding",
                       help="every cell rounded to a multiple of the base; totals still add up")
@dataclass(frozen=True)
class Rounding(TableMethod):
    """Controlled rounding (Cox & Ernst 1982, sec. 2; Cox 1987 for the unbiased procedure)."""

    base: int = param(_ROUNDING["base"], kind="int", low=2, label="rounding base", symbol="b", unit="count",
                      help="every published cell is a multiple of b")
    rounding: str = param(_ROUNDING["method"], kind="choice", choices=("optimal", "unbiased"), label="procedure",
                          help="optimal: closest additive rounding; unbiased: Cox's random procedure, E[R] = a")
    zero_restricted: bool = param(_ROUNDING["zero_restricted"], kind="bool", label="keep multiples of the base",
                                  help="cells already multiples of the base stay unchanged")
    time_limit: float = param(_ROUNDING["time_limit"], kind="float", low=0, low_open=True, unit="seconds",
                              label="time limit", help="time for the rounding ILP")

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None) -> TableResult:
        from .rounding import ControlledRounding

        res = ControlledRounding(**kernel_settings(self, {"rounding": "method"})).apply(table, rng=rng)
        failed = [g for g in res.guarantees if not g.holds]
        verdict = AuditVerdict("failed" if failed else "exact",
                               "every cell's rounding checked: " + (
                                   "the guarantees hold" if not failed else
                                   f"{len(failed)} guarantee(s) do NOT hold ({', '.join(g.name for g in failed)})"),
                               int(table.n_cells), 0, "every cell checked")
        return TableResult(self.method_name, table, np.asarray(res.rounded, float),
                           np.full(table.n_cells, "rounded", dtype=object), verdict, list(res.guarantees), res,
                           self.public_params(), seed=res.seed)


@register_table_method("ckm", label="cell key method", needs_microdata=True,
                       help="every cell perturbed from its own cell key with a p-table (tau-Argus's CKM)")
@dataclass(frozen=True)
class CellKey(TableMethod):
    """Cell key method (Thompson, Broadfoot & Elazar 2013; Giessing 2016, sec. 2; p-tables as
    generated by the ptable package, Enderle et al. 2018)."""

    D: int = param(5, kind="int", low=1, label="maximum deviation", symbol="D", unit="count",
                   help="no cell moves by more than D")
    V: float = param(3.0, kind="float", low=0, low_open=True, label="noise variance", symbol="V",
                     help="variance of the perturbation")
    js: int = param(0, kind="int", low=0, label="smallest published count", symbol="js", unit="count",
                    help="counts 1..js are never published")
    key: str = param(_CKM["key"], kind="str", label="record key column",
                     help="the microdata's record key column; absent: keys are drawn from the rng (internal)")
    ptable_file: str | None = param(None, kind="path", nullable=True, advanced=True, label="p-table file",
                                    help="a tau-Argus p-table file (replaces D, V and js)")

    def apply(self, table: Any, primary: Any = None, *, rng: Any = None, microdata: Any = None) -> TableResult:
        from .ckm import FlexParams, add_record_keys, ckm_frequency, ckm_magnitude, load_ptable
        from .ckm.run import ckm_public_cells

        if microdata is None:
            raise InputError("the cell key method needs the microdata the table was tabulated from (its record "
                             "keys); build the table from microdata, not from a cell list")
        frame = microdata.data if hasattr(microdata, "data") and not hasattr(microdata, "columns") else microdata
        seed = None
        if self.key not in frame.columns:
            from .._random import seed_sequence

            ss, seed = seed_sequence(rng)
            frame = add_record_keys(frame, self.key, rng=np.random.default_rng(ss))
        if self.ptable_file:
            pt: Any = load_ptable(self.ptable_file, kind="counts" if table.kind == "frequency" else None)
        else:
            pt = {"D": self.D, "V": float(self.V)} | ({"js": self.js} if table.kind == "frequency" else {})
        dims = list(table.dims)
        hier = dict(zip(dims, table.hierarchies))
        total = table.hierarchies[0].codes[0]
        if table.kind == "frequency":
            res = ckm_frequency(frame, dims, key=self.key, ptable=pt, table=table, total=total)
        else:
            res = ckm_magnitude(frame, dims, table.response, key=self.key, ptable=pt, flex=FlexParams(),
                                hierarchies=hier, total=total)
        values, status = ckm_public_cells(res)
        guarantees = ckm_guarantees(res)
        failed = [g for g in guarantees if not g.holds]
        verdict = AuditVerdict("failed" if failed else "exact",
                               "every cell checked against the p-table: " + (
                                   "no cell moved beyond its maximum deviation and empty cells stay empty"
                                   if not failed else f"{', '.join(g.statement for g in failed)} does NOT hold"),
                               int(res.n_cells), 0, "every cell checked")
        return TableResult(self.method_name, res.table, values, status, verdict, guarantees, res,
                           self.public_params(), seed=seed)


def ckm_guarantees(res: Any) -> list:
    t = res.table
    empty = np.asarray(t.freq) == 0
    moved_empty = int(np.sum(np.abs(res.perturbation[empty]) > 1e-9))
    out = [Guarantee("empty_cells_stay_empty", "an empty cell is published as 0", moved_empty, moved_empty == 0)]
    if res.kind == "frequency":
        fr = res.ptable.frame
        d = float(np.abs(fr["v"][fr["p"] > 0]).max()) if len(fr) else 0.0
        worst = res.max_abs_perturbation
        out.append(Guarantee("max_deviation", f"no count moves by more than the p-table's {d:g}", worst,
                             worst <= d + 1e-9))
        neg = int(np.sum(res.perturbed < -1e-9))
        out.append(Guarantee("non_negative", "no published count is negative", neg, neg == 0))
    return out
