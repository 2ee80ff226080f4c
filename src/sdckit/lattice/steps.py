"""Release step ``generalise``: the optimal node of the generalisation lattice, applied.

The step searches the lattice of hierarchy levels for the node with the least information
loss that satisfies the privacy models within the suppression limit, generalises every
quasi-identifier to its level and suppresses (sets to ``*``) the records of failing classes.
Its guarantees are re-checked on the released frame with plain pandas group-bys, apart from
the search's own counting.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..errors import InputError, InputWarning
from ..microdata import Microdata
from ..params import check_params, flat_form_problem, param, variant_value
from ..registry import register_step
from ..result import Guarantee, StepResult
from .checks_arx import arx_guarantees, profitability_guarantees
from .hierarchies import check_hierarchy, find_hierarchies, read_hierarchy
from .local_recoding import local_recode, refuse_unsupported
from .metrics import METRICS, PAYOUT_METRICS, metric_value
from .metrics_arx import NEEDS_SENSITIVE
from .microaggregation import FUNCTIONS as MICRO_FUNCTIONS
from .microaggregation import (
    check_quality_settings,
    lattice_qis,
    microaggregate_frame,
    microaggregation_guarantees,
    prepare_problem,
)
from .models import NodeView
from .models_arx import make_models
from .population_table import (
    JOURNALIST_VARIANTS,
    check_research_subset,
    population_guarantees,
    read_population,
)
from .problem import Problem
from .profitability import GAME_VARIANTS, NoGame, profitability_summary
from .safepub_step import DP_VARIANTS, NoDP, dp_release, refuse_conflicts
from .search import Evaluator
from .searches import search
from .solution_space import describe_space
from .space_report import GeneraliseResult
from .transform import SUPPRESSED, PublishedLevels, generalise_frame


# --------------------------------------------------------------------------- the searches
@dataclass(frozen=True)
class ExactSearch:
    """The proven optimum: Flash-style search with pruning by monotonicity and lower bounds
    (Kohlmayer et al. 2012)."""

    variant_name: ClassVar[str] = "exact"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class ExhaustiveSearch:
    """Every node of the lattice evaluated (the reference; small lattices only)."""

    variant_name: ClassVar[str] = "exhaustive"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class HeuristicSearch:
    """A bounded search: a greedy dive, then branch and bound until the node budget or the
    step's time limit is spent (the result says whether the optimum is proven).

    Parameters
    ----------
    max_nodes : int >= 1
        Node budget.
    """

    variant_name: ClassVar[str] = "heuristic"

    max_nodes: int = param(2000, kind="int", low=1, advanced=True, help="node budget of the heuristic")

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class AnytimeSearch:
    """The best node found within the step's time limit (CPU seconds, default 60) and an
    optional node budget: a best-first local search around the best nodes found, with the
    best, the bound and the gap reported (:mod:`sdckit.lattice.anytime`).

    Parameters
    ----------
    max_nodes : int >= 1, optional
        Node budget (none by default).
    """

    variant_name: ClassVar[str] = "anytime"

    max_nodes: int | None = param(None, kind="int", low=1, nullable=True, advanced=True,
                                  help="node budget of the anytime search")

    def __post_init__(self) -> None:
        check_params(self)


#: the searches ``Generalise.search`` takes
SEARCHES = (ExactSearch, ExhaustiveSearch, HeuristicSearch, AnytimeSearch)


# --------------------------------------------------------------------------- the l-diversity variants
@dataclass(frozen=True)
class DistinctDiversity:
    """Distinct l-diversity: every class holds at least l distinct sensitive values
    (Machanavajjhala et al. 2007, sec. 4.1)."""

    variant_name: ClassVar[str] = "distinct"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class EntropyDiversity:
    """Entropy l-diversity: the entropy of every class's sensitive values is at least log(l)
    (Machanavajjhala et al. 2007, sec. 4.1, Definition 4.1)."""

    variant_name: ClassVar[str] = "entropy"

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class RecursiveDiversity:
    """Recursive (c, l)-diversity: in every class the most frequent sensitive value is rarer than
    c times the sum of the frequencies from the l-th most frequent on (Machanavajjhala et al.
    2007, sec. 4.1, Definition 4.2).

    Parameters
    ----------
    c : float > 0
        The constant c.
    """

    variant_name: ClassVar[str] = "recursive"

    c: float = param(kind="float", low=0, low_open=True, symbol="c",
                     help="c of recursive-(c,l)-diversity")

    def __post_init__(self) -> None:
        check_params(self)


#: the l-diversity variants ``Generalise.l_variant`` takes
L_VARIANTS = (DistinctDiversity, EntropyDiversity, RecursiveDiversity)


@register_step("generalise", engines=("memory",),
               dask_note="the lattice search reads every record's pattern into memory; run it on the "
                         "distinct patterns, which fit in memory for any data the search can handle")
@dataclass(frozen=True)
class Generalise:
    """Optimal global generalisation by lattice search over hierarchies (ARX's method).

    Parameters are declared below; at least one privacy model must be set. The evidence
    holds the chosen node, the metric value, the nodes checked and whether the optimum is
    proven. Two settings are alternatives as types, each with its own settings:
    ``search`` (:class:`ExactSearch` (default), :class:`ExhaustiveSearch`,
    ``HeuristicSearch(max_nodes=2000)``, :class:`AnytimeSearch`: the best within ``time_limit``
    CPU seconds, with progress events) and ``l_variant`` (:class:`DistinctDiversity`
    (default), :class:`EntropyDiversity`, ``RecursiveDiversity(c=...)``); in a spec,
    ``search = { type = "heuristic", max_nodes = 500 }``.

    References
    ----------
    Kohlmayer, F., Prasser, F., Eckert, C., Kemper, A., Kuhn, K. A. (2012). Flash: efficient,
    stable and optimal k-anonymity. *PASSAT/SocialCom 2012*, 708-717.
    Machanavajjhala, A., Kifer, D., Gehrke, J. and Venkitasubramaniam, M. (2007). l-diversity:
    privacy beyond k-anonymity. *ACM TKDD* 1(1), article 3.
    """

    hierarchy_dir: str | None = param(None, kind="path", nullable=True,
                                      help="folder of ARX hierarchy files named *_<qi>.csv")
    hierarchy_files: dict | None = param(None, kind="mapping", nullable=True,
                                         help="qi -> hierarchy file (instead of hierarchy_dir)")
    qis: tuple | None = param(None, kind="columns", nullable=True,
                              help="quasi-identifiers (default: the key variables)")
    k: int | None = param(5, kind="int", low=2, nullable=True, help="smallest class size (k-anonymity)",
                          symbol="k", grid=(2, 3, 5, 10))
    l: float | None = param(None, kind="float", low=1, nullable=True,
                            help="l of l-diversity on the sensitive attribute", symbol="l")
    l_variant: Any = param(DistinctDiversity(), kind="variant", variants=L_VARIANTS, advanced=True,
                           label="l-diversity variant",
                           help="l-diversity variant, with its own settings (c of recursive-(c,l))")
    t: float | None = param(None, kind="float", low=0, high=1, nullable=True,
                            help="t of t-closeness on the sensitive attribute", symbol="t")
    t_distance: str = param("equal", kind="choice", choices=("equal", "hierarchical", "ordered"),
                            help="ground distance of t-closeness", advanced=True)
    sensitive: str | None = param(None, kind="column", nullable=True,
                                  help="sensitive attribute (default: the first sensitive variable)")
    sensitive_hierarchy: str | None = param(None, kind="path", nullable=True, advanced=True,
                                            help="hierarchy of the sensitive attribute (hierarchical t-closeness)")
    average_risk: float | None = param(None, kind="float", low=0, high=1, low_open=True, nullable=True,
                                       help="largest average re-identification risk of the kept records")
    max_risk: float | None = param(None, kind="float", low=0, high=1, low_open=True, nullable=True,
                                   help="largest re-identification risk of any kept record")
    k_map: int | None = param(None, kind="int", low=2, nullable=True, symbol="k",
                              help="k of k-map: each class matches >= k population records (counted in "
                                   "population_file, else estimated from population_size)")
    k_map_estimator: str = param("poisson", kind="choice", choices=("poisson", "zero_truncated_poisson"),
                                 advanced=True, help="ARX's estimator of the population class sizes for k-map")
    significance: float = param(0.01, kind="float", low=0, high=1, low_open=True, high_open=True, advanced=True,
                                help="significance level of the k-map estimate")
    population_size: float | None = param(None, kind="float", low=1, nullable=True, unit="records",
                                          help="size N of the population the data were drawn from (k-map, "
                                               "population uniqueness)")
    population_file: str | None = param(None, kind="path", nullable=True, advanced=True,
                                        help="population table (CSV or Parquet) holding the quasi-identifiers, "
                                             "the data being a subset of its records: k-map counts it, the "
                                             "journalist profitability models need it")
    beta: float | None = param(None, kind="float", low=0, low_open=True, nullable=True, symbol="beta",
                               help="beta of beta-likeness on the sensitive attribute")
    beta_variant: str = param("basic", kind="choice", choices=("basic", "enhanced"), advanced=True,
                              help="beta-likeness variant (enhanced bounds by min(beta, -ln q))")
    delta_disclosure: float | None = param(None, kind="float", low=0, low_open=True, nullable=True,
                                           symbol="delta", help="delta of delta-disclosure privacy on the "
                                                                "sensitive attribute")
    population_uniqueness: float | None = param(None, kind="float", low=0, high=1, nullable=True,
                                                help="largest estimated share of population uniques "
                                                     "(needs population_size)")
    uniqueness_model: str = param("dankar", kind="choice", choices=("zayatz", "pitman", "snb", "dankar"),
                                  advanced=True, help="estimator of the population uniques")
    profitability: Any = param(NoGame(), kind="variant", variants=GAME_VARIANTS + JOURNALIST_VARIANTS,
                               advanced=True, label="profitability (game-theoretic) model",
                               help="ARX's profitability model (Wan et al. 2015): none, prosecutor (keep a class "
                                    "when publishing it pays) or prosecutor_no_attack (no attack pays), or "
                                    "journalist / journalist_no_attack (the same against the population table: "
                                    "needs population_file), with the amounts of the game, which the "
                                    "publisher_payout metric uses too")
    suppression: float = param(0.0, kind="float", low=0, high=1, unit="share of n",
                               help="largest share of records that may be suppressed", grid=(0.0, 0.01, 0.02))
    metric: str = param("discernibility", kind="choice", choices=METRICS, help="utility metric to minimise")
    gs_factor: float = param(0.5, kind="float", low=0, high=1, advanced=True, symbol="gs",
                             label="generalisation/suppression factor",
                             help="ARX's gsFactor: weighs information lost by generalising (0) against "
                                  "suppressing (1) in the loss, classification, precision, AECS, payout and entropy-loss "
                                  "metrics; 0.5 weighs both fully")
    microaggregate: dict = param({}, kind="mapping", value_kind="choice", value_choices=MICRO_FUNCTIONS,
                                 advanced=True, label="microaggregated attributes",
                                 help="column -> arithmetic_mean, geometric_mean, median, mode or interval: a "
                                      "quasi-identifier replaced, in each released class, by the aggregate of "
                                      "its values instead of generalised (ARX's microaggregation)")
    search: Any = param(ExactSearch(), kind="variant", variants=SEARCHES, label="search",
                        help="exact (proven optimum), exhaustive (every node) or heuristic (bounded), "
                             "with its own settings")
    time_limit: float | None = param(None, kind="float", low=0, low_open=True, nullable=True, unit="seconds",
                                     advanced=True, help="time budget of the search")
    local_recoding: int = param(0, kind="int", low=0, advanced=True, label="passes of local recoding",
                                unit="passes",
                                help="passes of local recoding: the search repeated on the records the "
                                     "previous pass suppressed, released at their own levels (ARX's local "
                                     "recoding); 0: global recoding only")
    dp: Any = param(NoDP(), kind="variant", variants=DP_VARIANTS, advanced=True,
                    label="differential privacy (SafePub)",
                    help="(epsilon, delta)-differential privacy by SafePub (Bild et al. 2018): records drawn "
                         "with probability beta, a private search (safepub) or the levels you give "
                         "(safepub_fixed), classes below k removed; none by default")

    global_recode: ClassVar[bool] = True
    #: the flat form of earlier specs: (variant parameter, its settings beside the step's own, default type)
    FLAT_FORMS: ClassVar[tuple[tuple[str, tuple[str, ...], str], ...]] = (
        ("search", ("max_nodes",), "exact"), ("l_variant", ("c",), "distinct"))

    def __post_init__(self) -> None:
        check_params(self)
        if self.hierarchy_dir is None and not self.hierarchy_files:
            raise InputError("Generalise needs hierarchies: set hierarchy_dir (files *_<qi>.csv) or hierarchy_files.")
        if self.dp.variant_name != "none":
            refuse_conflicts(self)
        elif not self.models():
            raise InputError("Generalise needs a privacy model: set k, l, t, average_risk, max_risk, k_map, "
                             "beta, delta_disclosure, population_uniqueness or profitability.")
        check_quality_settings(self.metric, self.gs_factor, self.microaggregate,
                               local_recoding=self.local_recoding, dp=self.dp.variant_name != "none")
        if self.local_recoding:
            refuse_unsupported(self)
            if self.profitability.variant_name != "none" or self.metric in PAYOUT_METRICS:
                raise InputError("generalise: local_recoding does not take the profitability model or the "
                                 f"{self.metric if self.metric in PAYOUT_METRICS else 'publisher_payout'} metric "
                                 "(their figures depend on each pass's levels): set local_recoding = 0.")
        self._check_population_settings()

    def _check_population_settings(self) -> None:
        """The journalist models need the population table; a table nothing uses is refused."""
        journalist = self.profitability.variant_name.startswith("journalist")
        if journalist and self.population_file is None:
            raise InputError(f"generalise: profitability {self.profitability.variant_name!r} needs the population "
                             "table: set population_file (the data must be a subset of its records).")
        if self.population_file is not None and self.k_map is None and not journalist:
            raise InputError("generalise: population_file is used by k_map and the journalist profitability "
                             "models; set one of them or remove population_file.")

    @classmethod
    def spec_form_problem(cls, params: dict) -> str | None:
        """Why a spec table of this step is in the flat form of earlier specs (a search or
        l-diversity variant by name, its settings beside the step's own), with the table to
        write instead; None when it is not. The spec reader refuses such a table with this line."""
        for name, keys, default in cls.FLAT_FORMS:
            problem = flat_form_problem(params, name, keys, default)
            if problem:
                return problem
        return None

    def models(self):
        variant = self.l_variant
        return make_models(k=self.k, l=self.l, l_variant=variant.variant_name, c=getattr(variant, "c", None),
                           t=self.t, t_distance=self.t_distance, average_risk=self.average_risk,
                           k_map=self.k_map, population_size=self.population_size,
                           k_map_estimator=None if self.k_map is None or self.population_file is not None
                           else self.k_map_estimator,
                           significance=self.significance, beta=self.beta, beta_variant=self.beta_variant,
                           delta_disclosure=self.delta_disclosure, population_uniqueness=self.population_uniqueness,
                           uniqueness_model=self.uniqueness_model,
                           profitability=self.profitability.variant_name,
                           cost_benefit=self.profitability.cost_benefit(),
                           max_risk=self.max_risk)

    def _hierarchies(self, qis: list[str]) -> dict:
        if self.hierarchy_files:
            out = {}
            for q in qis:
                if q not in self.hierarchy_files:
                    raise InputError(f"hierarchy_files has no file for quasi-identifier {q!r}.")
                out[q] = check_hierarchy(read_hierarchy(self.hierarchy_files[q]))
            return out
        return find_hierarchies(self.hierarchy_dir, qis)

    def apply(self, md: Microdata, *, rng=None) -> StepResult:
        qis = lattice_qis(list(self.qis or md.key_vars), self.microaggregate, explicit=self.qis is not None)
        if not qis:
            raise InputError("Generalise: no quasi-identifiers; set qis or give the data key variables.")
        if self.dp.variant_name != "none":   # SafePub: sampling, a private search, k-suppression
            return dp_release(self, md, qis, self._hierarchies(qis), rng)
        models = self.models()
        wants_sens = any(m.needs_sensitive for m in models) or self.metric in NEEDS_SENSITIVE
        sens = self.sensitive or (md.sensitive[0] if wants_sens and md.sensitive else None)
        sh = read_hierarchy(self.sensitive_hierarchy) if self.sensitive_hierarchy else None
        frame = md.frame
        hierarchies = self._hierarchies(qis)
        population = None
        if self.population_file is not None:   # a research subset of a population table (ARX's DataSubset)
            population = read_population(self.population_file, qis)
            check_research_subset(frame, population, qis, Path(self.population_file).name)
        problem = Problem(frame, qis, hierarchies, sensitive=sens, sensitive_hierarchy=sh, population=population)
        prepare_problem(problem, frame, gs_factor=self.gs_factor, microaggregate=self.microaggregate)
        ev = Evaluator(problem, models, self.suppression, self.metric,
                       cost_benefit=self.profitability.cost_benefit())
        # max_nodes is the heuristic's own setting (the other searches ignore the budget)
        budget = getattr(self.search, "max_nodes", HeuristicSearch().max_nodes)
        res = search(ev, self.search.variant_name, max_nodes=budget, time_limit=self.time_limit)
        out, suppressed = generalise_frame(frame, ev, res.levels)
        passes = []
        if self.local_recoding and suppressed.any():
            def holds(released: pd.DataFrame, sup: np.ndarray) -> bool:
                return all(g.holds for g in check_release(released, qis, sup, models_settings=self, sensitive=sens,
                                                          max_suppressed=ev.max_suppressed))

            out, suppressed, passes = local_recode(
                frame, out, suppressed, qis=qis,
                make_problem=lambda sub: prepare_problem(Problem(sub, qis, hierarchies, sensitive=sens,
                                                                 sensitive_hierarchy=sh), sub, gs_factor=self.gs_factor),
                models=models, suppression=self.suppression, metric=self.metric,
                run_search=lambda e: search(e, self.search.variant_name, max_nodes=budget,
                                            time_limit=self.time_limit),
                generalise=generalise_frame, passes=self.local_recoding, still_holds=holds)
        if self.microaggregate:   # each released class's aggregate (no local recoding: refused)
            out = microaggregate_frame(frame, out, suppressed, qis, self.microaggregate)
        lv = np.asarray(res.levels)
        view = NodeView(problem, lv, problem.table(lv))
        kept = ~np.zeros(view.table.n_classes, dtype=bool)
        for m in models:
            if m.class_based:
                kept &= m.class_ok(view)
        dm = metric_value("discernibility", view, kept)
        summary = {"levels": res.level_map(), "metric": self.metric, "metric_value": res.value,
                   "discernibility": dm, "n_suppressed": res.n_suppressed, "n_classes": res.n_classes,
                   "nodes_checked": res.nodes_checked, "n_nodes": res.n_nodes, "optimal": res.optimal,
                   "bound": res.bound, "search": res.method, "n_patterns": res.n_patterns,
                   "seconds": round(res.seconds, 4)}
        if res.events:   # the anytime search's progress: best, bound and gap along the run
            summary["events"] = list(res.events)
        summary["gs_factor"] = self.gs_factor
        if self.microaggregate:
            summary["microaggregated"] = dict(self.microaggregate)
        if self.metric in PAYOUT_METRICS or self.profitability.variant_name != "none":
            summary.update(profitability_summary(view, kept, self.profitability.cost_benefit()))
        if population is not None:
            summary["population_records"] = len(population)
        if self.local_recoding:
            summary["n_suppressed_global"] = res.n_suppressed
            summary["n_suppressed"] = int(suppressed.sum())
            summary["local_recoding"] = [p.to_dict() for p in passes]
        guarantees = check_release(out, qis, suppressed, models_settings=self if population is None
                                   else _CountedKMap(self), sensitive=sens, max_suppressed=ev.max_suppressed)
        if self.microaggregate:
            guarantees.extend(microaggregation_guarantees(out, suppressed, qis, self.microaggregate))
        if population is not None:   # k-map and the journalist models counted in the population table
            game = self.profitability.variant_name
            guarantees.extend(population_guarantees(out, suppressed, qis, population, hierarchies, res.level_map(),
                                                    k_map=self.k_map, game=game if game.startswith("journalist")
                                                    else None, cost_benefit=self.profitability.cost_benefit()))
        if self.profitability.variant_name in ("prosecutor", "prosecutor_no_attack"):
            guarantees.extend(profitability_guarantees(out, suppressed, qis, hierarchies, res.level_map(),
                                                       self.profitability.variant_name,
                                                       self.profitability.cost_benefit()))
        with warnings.catch_warnings():
            # a QI generalised to its top level has one category: expected here, not a warning
            warnings.simplefilter("ignore", InputWarning)
            new = md.with_data(out)
        params = {f: variant_value(getattr(self, f)) for f in ("qis", "k", "l", "l_variant", "t", "t_distance",
                                                                "sensitive", "average_risk", "max_risk",
                                                                "k_map", "population_size", "beta",
                                                                "delta_disclosure", "population_uniqueness",
                                                                "profitability", "suppression", "metric", "search",
                                                                "local_recoding", "gs_factor", "microaggregate")}
        # what the (global) search knows about the lattice, for the workbench's and the report's view
        space = describe_space(ev, res)
        return GeneraliseResult("generalise", new, params=params, summary=summary, guarantees=tuple(guarantees),
                                solution_space=space, published_recoding=PublishedLevels.from_node(ev, res.levels))


class _CountedKMap:
    """The step's settings as :func:`check_release` reads them when k-map is counted in the
    population table (checked by :func:`.population_table.population_guarantees` instead of by
    the estimate)."""

    k_map = None

    def __init__(self, settings: Generalise) -> None:
        self._settings = settings

    def __getattr__(self, name: str):
        return getattr(self._settings, name)


def check_release(out: pd.DataFrame, qis: list[str], suppressed: np.ndarray, *, models_settings,
                  sensitive: str | None, max_suppressed: int) -> list[Guarantee]:
    """Check the models on the released frame with pandas group-bys (independent of the search)."""
    s = models_settings
    is_sup = (out[qis].astype(str) == SUPPRESSED).all(axis=1).to_numpy() & suppressed
    g = []
    n_sup = int(is_sup.sum())
    g.append(Guarantee("suppressed_within_limit", f"at most {max_suppressed} records suppressed", n_sup,
                       n_sup <= max_suppressed))
    kept = out.loc[~is_sup]
    if len(kept) == 0:
        return g
    keys = kept[qis].astype(str)
    grp = keys.groupby(qis, sort=False, dropna=False)
    sizes = grp.size()
    if s.k is not None:
        g.append(Guarantee("k_anonymity", f"every released class has >= {s.k} records", int(sizes.min()),
                           int(sizes.min()) >= s.k))
    if s.max_risk is not None:
        r = 1.0 / float(sizes.min())
        g.append(Guarantee("max_risk", f"every kept record's risk 1/|E| <= {s.max_risk:g}", r, r <= s.max_risk + 1e-12))
    if s.average_risk is not None:
        r = len(sizes) / len(kept)
        g.append(Guarantee("average_risk", f"average risk of kept records <= {s.average_risk:g}", r,
                           r <= s.average_risk + 1e-12))
    if sensitive is not None and (s.l is not None or s.t is not None):
        sv = kept[sensitive].astype(str)
        frame = keys.assign(_s=sv.to_numpy())
        counts = frame.groupby(qis + ["_s"], sort=False, dropna=False).size()
        if s.l is not None:
            variant = s.l_variant.variant_name
            if variant == "distinct":
                d = counts.groupby(level=list(range(len(qis)))).size()
                g.append(Guarantee("l_diversity", f"every released class has >= {int(round(s.l))} distinct "
                                   f"values of {sensitive}", int(d.min()), int(d.min()) >= int(round(s.l))))
            elif variant == "entropy":
                tot = counts.groupby(level=list(range(len(qis)))).transform("sum")
                p = counts / tot
                ent = (-p * np.log(p)).groupby(level=list(range(len(qis)))).sum()
                g.append(Guarantee("entropy_l_diversity", f"every released class has entropy >= log({s.l:g})",
                                   float(np.exp(ent.min())), float(ent.min()) >= math.log(s.l) - 1e-9))
            else:
                ok = True
                for _, c in counts.groupby(level=list(range(len(qis)))):
                    r = np.sort(c.to_numpy())[::-1]
                    ok &= bool(r[0] < s.l_variant.c * r[int(round(s.l)) - 1:].sum())
                g.append(Guarantee("recursive_cl_diversity", f"every released class is recursive-({s.l_variant.c:g},"
                                   f"{int(round(s.l))})-diverse", ok, ok))
        if s.t is not None and s.t_distance == "equal":
            overall = out[sensitive].astype(str).value_counts(normalize=True)
            tab = pd.crosstab([keys[c] for c in qis], sv, normalize="index")
            tab = tab.reindex(columns=overall.index, fill_value=0.0)
            emd = 0.5 * (tab - overall.to_numpy()[None, :]).abs().sum(axis=1)
            g.append(Guarantee("t_closeness", f"every released class is within EMD {s.t:g} of the overall "
                               f"distribution of {sensitive}", float(emd.max()), float(emd.max()) <= s.t + 1e-9))
    g.extend(arx_guarantees(out, kept, qis, s, sensitive))
    return g
