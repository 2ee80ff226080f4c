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
from typing import ClassVar

import numpy as np
import pandas as pd

from ..errors import InputError, InputWarning
from ..microdata import Microdata
from ..params import check_params, param
from ..registry import register_step
from ..result import Guarantee, StepResult
from .hierarchies import check_hierarchy, find_hierarchies, read_hierarchy
from .metrics import METRICS, metric_value
from .models import NodeView, make_models
from .problem import Problem
from .search import Evaluator, search
from .transform import SUPPRESSED, generalise_frame


@register_step("generalise", engines=("memory",),
               dask_note="the lattice search reads every record's pattern into memory; run it on the "
                         "distinct patterns, which fit in memory for any data the search can handle")
@dataclass(frozen=True)
class Generalise:
    """Optimal global generalisation by lattice search over hierarchies (ARX's method).

    Parameters are declared below; at least one privacy model must be set. The evidence
    holds the chosen node, the metric value, the nodes checked and whether the optimum is
    proven.

    References
    ----------
    Kohlmayer, F., Prasser, F., Eckert, C., Kemper, A., Kuhn, K. A. (2012). Flash: efficient,
    stable and optimal k-anonymity. *PASSAT/SocialCom 2012*, 708-717.
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
    l_variant: str = param("distinct", kind="choice", choices=("distinct", "entropy", "recursive"),
                           help="l-diversity variant", advanced=True)
    c: float | None = param(None, kind="float", low=0, low_open=True, nullable=True,
                            help="c of recursive-(c,l)-diversity", symbol="c", advanced=True)
    t: float | None = param(None, kind="float", low=0, high=1, nullable=True,
                            help="t of t-closeness on the sensitive attribute", symbol="t")
    t_distance: str = param("equal", kind="choice", choices=("equal", "hierarchical"),
                            help="ground distance of t-closeness", advanced=True)
    sensitive: str | None = param(None, kind="column", nullable=True,
                                  help="sensitive attribute (default: the first sensitive variable)")
    sensitive_hierarchy: str | None = param(None, kind="path", nullable=True, advanced=True,
                                            help="hierarchy of the sensitive attribute (hierarchical t-closeness)")
    average_risk: float | None = param(None, kind="float", low=0, high=1, low_open=True, nullable=True,
                                       help="largest average re-identification risk of the kept records")
    max_risk: float | None = param(None, kind="float", low=0, high=1, low_open=True, nullable=True,
                                   help="largest re-identification risk of any kept record")
    suppression: float = param(0.0, kind="float", low=0, high=1, unit="share of n",
                               help="largest share of records that may be suppressed", grid=(0.0, 0.01, 0.02))
    metric: str = param("discernibility", kind="choice", choices=METRICS, help="utility metric to minimise")
    search: str = param("exact", kind="choice", choices=("exact", "exhaustive", "heuristic"),
                        help="exact (proven optimum), exhaustive (every node) or heuristic (bounded)")
    max_nodes: int = param(2000, kind="int", low=1, advanced=True, help="node budget of the heuristic")
    time_limit: float | None = param(None, kind="float", low=0, low_open=True, nullable=True, unit="seconds",
                                     advanced=True, help="time budget of the search")

    global_recode: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_params(self)
        if self.hierarchy_dir is None and not self.hierarchy_files:
            raise InputError("Generalise needs hierarchies: set hierarchy_dir (files *_<qi>.csv) or hierarchy_files.")
        if not self.models():
            raise InputError("Generalise needs a privacy model: set k, l, t, average_risk or max_risk.")

    def models(self):
        return make_models(k=self.k, l=self.l, l_variant=self.l_variant, c=self.c, t=self.t,
                           t_distance=self.t_distance, average_risk=self.average_risk, max_risk=self.max_risk)

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
        qis = list(self.qis or md.key_vars)
        if not qis:
            raise InputError("Generalise: no quasi-identifiers; set qis or give the data key variables.")
        models = self.models()
        sens = self.sensitive or (md.sensitive[0] if any(m.needs_sensitive for m in models) and md.sensitive else None)
        sh = read_hierarchy(self.sensitive_hierarchy) if self.sensitive_hierarchy else None
        frame = md.frame
        problem = Problem(frame, qis, self._hierarchies(qis), sensitive=sens, sensitive_hierarchy=sh)
        ev = Evaluator(problem, models, self.suppression, self.metric)
        res = search(ev, self.search, max_nodes=self.max_nodes, time_limit=self.time_limit)
        out, suppressed = generalise_frame(frame, ev, res.levels)
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
        guarantees = check_release(out, qis, suppressed, models_settings=self, sensitive=sens,
                                   max_suppressed=ev.max_suppressed)
        with warnings.catch_warnings():
            # a QI generalised to its top level has one category: expected here, not a warning
            warnings.simplefilter("ignore", InputWarning)
            new = md.with_data(out)
        params = {f: getattr(self, f) for f in ("qis", "k", "l", "l_variant", "c", "t", "t_distance",
                                                  "sensitive", "average_risk", "max_risk", "suppression",
                                                  "metric", "search")}
        return StepResult("generalise", new, params=params, summary=summary, guarantees=tuple(guarantees))


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
            if s.l_variant == "distinct":
                d = counts.groupby(level=list(range(len(qis)))).size()
                g.append(Guarantee("l_diversity", f"every released class has >= {int(round(s.l))} distinct "
                                   f"values of {sensitive}", int(d.min()), int(d.min()) >= int(round(s.l))))
            elif s.l_variant == "entropy":
                tot = counts.groupby(level=list(range(len(qis)))).transform("sum")
                p = counts / tot
                ent = (-p * np.log(p)).groupby(level=list(range(len(qis)))).sum()
                g.append(Guarantee("entropy_l_diversity", f"every released class has entropy >= log({s.l:g})",
                                   float(np.exp(ent.min())), float(ent.min()) >= math.log(s.l) - 1e-9))
            else:
                ok = True
                for _, c in counts.groupby(level=list(range(len(qis)))):
                    r = np.sort(c.to_numpy())[::-1]
                    ok &= bool(r[0] < s.c * r[int(round(s.l)) - 1:].sum())
                g.append(Guarantee("recursive_cl_diversity", f"every released class is recursive-({s.c:g},"
                                   f"{int(round(s.l))})-diverse", ok, ok))
        if s.t is not None and s.t_distance == "equal":
            overall = out[sensitive].astype(str).value_counts(normalize=True)
            tab = pd.crosstab([keys[c] for c in qis], sv, normalize="index")
            tab = tab.reindex(columns=overall.index, fill_value=0.0)
            emd = 0.5 * (tab - overall.to_numpy()[None, :]).abs().sum(axis=1)
            g.append(Guarantee("t_closeness", f"every released class is within EMD {s.t:g} of the overall "
                               f"distribution of {sensitive}", float(emd.max()), float(emd.max()) <= s.t + 1e-9))
    return g
