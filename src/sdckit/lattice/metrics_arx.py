"""ARX's utility metrics beyond discernibility: loss, DM*, height, ambiguity, normalised
non-uniform entropy and the classification metric, each with a lower bound for pruning.

Every function takes a node's :class:`.NodeView` and the mask of its kept classes (the
others are suppressed) and returns a number, lower is better. The definitions follow ARX
3.9.2's quality models (attribute weights equal); the notes below say where ARX's definition
differs from the paper's.

**The generalisation/suppression factor** ``gs`` in [0, 1] (ARX's ``gsFactor``, default 0.5;
``Metric`` constructor of ARX 3.9.2) weighs the loss from generalising against the loss from
suppressing: the generalisation weight is ``gF = 1`` for ``gs <= 0.5``, else ``2 - 2 gs``; the
suppression weight is ``sF = 2 gs`` for ``gs < 0.5``, else 1 (``gs = 0``: only generalisation
counts; ``gs = 1``: only suppression). Of this module's metrics ARX applies it to ``loss``
(and so ``loss_mean``) and ``classification`` (below); its normalised entropy fixes it at 0.5.
It also weighs precision (``MetricMDNMPrecision``: per QI ``(gF n_kept level / height + sF
n_sup) / n``) and the average class size (``MetricSDAECS``: :func:`aecs`), computed here for
:mod:`.metrics`, and the profitability metrics (:mod:`.profitability`). Where ARX's lower bound
assumes ``sF >= gF`` (a suppressed record costing at least a kept one), which fails for
``gs < 0.5``, the bounds here take the smaller of the two costs, so they hold at every factor
and equal ARX's for ``gs >= 0.5``. It is set per problem with :func:`configure` (default 0.5).

**Microaggregated attributes** (ARX's ``MicroAggregationFunction`` on a quasi-identifier
that is not generalised): :func:`configure` takes, per such column, its values' codes per
record. ``loss`` and ``loss_mean`` give each one dimension besides the generalised QIs (ARX's
``MetricMDNMLoss``): a record costs ``gF * d(E) / V`` in its class ``E`` (``d(E)`` distinct
values of the column in ``E``, ``V`` its distinct values in the data: ARX's
``DistributionAggregateFunction.getInformationLoss``), a suppressed record ``c + sF (1 - c)``
with ``c = d(E) / V``; the dimension's loss is the mean over records (no minimum subtracted);
its bound is 0, as ARX's. :data:`MICROAGGREGATION_METRICS` lists the metrics that take
microaggregated attributes.

``share_j(c)`` is the share of the values of quasi-identifier ``j``'s hierarchy that its label
``c`` covers (hierarchy rows under ``c`` divided by the hierarchy's rows ``D_j``); a raw value
covers ``1 / D_j``.

* **loss** (Iyengar 2002, sec. 3.1, the "loss metric" LM; ARX's ``MetricMDNMLoss``): per QI,
  ``L_j = (sum_records cost - gF n / D_j) / (n - gF n / D_j)`` with ``cost = gF share_j`` for a
  kept record and ``share_j + sF (1 - share_j)`` for a suppressed one (at ``gs = 0.5``:
  ``share_j`` and 1, i.e. the mean over records of ``(leaves - 1) / (D_j - 1)``, 1 when
  suppressed; clipped at 0 as ARX does); the QIs are aggregated by ARX's default, the *geometric* mean
  ``prod_j (1 + L_j)^(1/q) - 1``. ``loss_mean`` is the arithmetic mean ``(1/q) sum_j L_j``
  (sdckit's earlier ``loss``). Both grow with each ``L_j``, and ``L_j`` with nothing
  suppressed is a lower bound for every node above (a record's share grows with the level, and
  a suppressed record costs at least ``gF share_j``).
* **dm_star** (ARX's monotonic discernibility DM*): ``sum_E |E|^2`` over *every* class,
  suppressed or not (no penalty for suppression). A coarser partition has a larger sum of
  squares, so DM* is monotone and its own bound.
* **height**: the sum of the node's levels (ARX's ``MetricMDHeight``, aggregate sum); its
  own bound.
* **ambiguity** (Nergiz & Clifton 2007, sec. 4.1, eq. 2; ARX's ``MetricSDNMAmbiguity``): the
  number of raw combinations each record could stand for, summed over records:
  ``sum_E |E| prod_j (share_j * D_j)``, a suppressed record counting ``prod_j D_j``. Bound: the
  value with nothing suppressed.
* **normalised_entropy** (ARX's ``MetricMDNUNMNormalizedEntropy``, after Gionis & Tassa 2009,
  sec. 3): per QI, ``G_j = sum_v a_v log2(b_g(v) / a_v)`` over the raw values ``v`` (``a_v``
  its records, ``b`` the records of its label at the node; *all* records, suppressed ones
  too), plus, when ``S > 0`` records are suppressed, ``-sum_g c_g log2(c_g / S)`` over the
  labels ``g`` at the node of the suppressed records; divided by the raw column's entropy
  ``-sum_v a_v log2(a_v / n)`` and summed over the QIs (a column with one value adds 0). Bound:
  ``sum_j G_j / upper_j`` (``G_j`` grows with the level; the suppression part is >= 0).
* **classification** (Iyengar 2002, sec. 3.2, the "classification metric" CM; ARX's
  ``MetricSDClassification``, response variable = the sensitive attribute): a kept record
  costs ``gF`` when its value is not its class's majority value, every record of a class
  without a unique majority costs ``sF``, a suppressed record costs ``gs`` (ARX's penalties);
  the sum is divided by ``max(gs, gF, sF) n`` (at ``gs = 0.5``: 1, 1, 1/2 and ``n``). Bound:
  ``sum_E min(gs |E|, min(gF, sF) (|E| - top1(E))) / (max(gs, gF, sF) n)`` over the classes
  at the node:
  a class of a node above is a union of them, and its non-majority records are at least the
  sum of theirs (``top1`` of a union is at most the sum of the parts' ``top1``).

ARX's publisher payout and entropy-based information loss (the profitability models'
metrics) are in :mod:`.profitability`.

References
----------
Iyengar, V. S. (2002). Transforming data to satisfy privacy constraints. *KDD 2002*, 279-288.
Nergiz, M. E., Clifton, C. (2007). Thoughts on k-anonymization. *Data & Knowledge
Engineering* 63(3), 622-645. Gionis, A., Tassa, T. (2009). k-anonymization with minimal loss
of information. *IEEE TKDE* 21(2), 206-219. Prasser, F., Kohlmayer, F. (2015). Putting
statistical disclosure control into practice: the ARX data anonymization tool. In *Medical
Data Privacy Handbook*, Springer, 111-148 (ARX's quality models).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from .models import NodeView

#: the metrics of this module
ARX_METRICS = ("loss", "loss_mean", "dm_star", "height", "ambiguity", "normalised_entropy", "classification")
#: metrics that need the sensitive attribute (as the response variable)
NEEDS_SENSITIVE = ("classification",)
#: the metrics ARX 3.9.2 applies the generalisation/suppression factor to (``isGSFactorSupported``
#: and a configurable factor) and sdckit weighs as ARX: this module's, precision and AECS (weighted
#: here for :mod:`.metrics`) and :mod:`.profitability`'s
GS_FACTOR_METRICS = ("loss", "loss_mean", "classification", "precision", "aecs", "publisher_payout",
                     "entropy_information_loss")
#: metrics ARX weighs but whose sdckit definition is not ARX's: sdckit's non-uniform entropy (Gionis &
#: Tassa's per-record form, a suppressed record costing as at the hierarchies' tops) is not ARX's
#: ``MetricMDNUNMEntropy`` (a suppressed record costing the entropy of the suppressed records' labels),
#: so ARX's weights would give neither; the factor is refused for it
GS_FACTOR_METRICS_ELSEWHERE = ("non_uniform_entropy",)
#: metrics that take microaggregated attributes: loss with ARX's contribution; the others depend
#: on the classes only (ARX's value ignores the attribute as well)
MICROAGGREGATION_METRICS = ("loss", "loss_mean", "discernibility", "dm_star", "aecs", "height")
#: ARX's default factor
DEFAULT_GS_FACTOR = 0.5
_SETTINGS = "_arx_quality"


def gs_weights(gs_factor: float) -> tuple[float, float]:
    """ARX's generalisation and suppression weights ``(gF, sF)`` of a factor (module notes;
    ARX 3.9.2, ``Metric``'s constructor)."""
    if not 0.0 <= gs_factor <= 1.0:
        raise InputError(f"the generalisation/suppression factor must lie in [0, 1]; got {gs_factor!r}.")
    s_factor = 2.0 * gs_factor if gs_factor < 0.5 else 1.0
    g_factor = 1.0 if gs_factor <= 0.5 else 1.0 - 2.0 * (gs_factor - 0.5)
    return g_factor, s_factor


def configure(problem, *, gs_factor: float = DEFAULT_GS_FACTOR,
              microaggregated: dict[str, np.ndarray] | None = None) -> None:
    """Set the quality settings this module's metrics read from ``problem``.

    Parameters
    ----------
    problem : Problem
        The search's problem (the settings are kept on it, beside its caches).
    gs_factor : float in [0, 1]
        ARX's generalisation/suppression factor (module notes).
    microaggregated : dict, optional
        Column -> its values per record (in the problem's record order; missing values are
        one more value, as in ARX's dictionary): the microaggregated attributes whose loss
        counts (module notes).
    """
    gs_weights(gs_factor)
    codes = {}
    for name, values in (microaggregated or {}).items():
        c, uniq = pd.factorize(pd.Series(np.asarray(values, dtype=object)).astype("string").fillna("\0"))
        if c.size != problem.n:
            raise InputError(f"microaggregated column {name!r} has {c.size} values; the data have {problem.n} "
                             "records.")
        # (record's pattern, value) pairs, once: a node's classes of the pairs are a gather
        first = np.unique(problem.record_pattern.astype(np.int64) * len(uniq) + c, return_index=True)[1]
        codes[name] = (c[first].astype(np.int64), first, len(uniq))
    problem.__dict__[_SETTINGS] = {"gs": float(gs_factor), "micro": codes}


def _settings(problem) -> dict:
    return problem.__dict__.get(_SETTINGS) or {"gs": DEFAULT_GS_FACTOR, "micro": {}}


def gs_factor_of(problem) -> float:
    """The generalisation/suppression factor set on ``problem`` by :func:`configure` (0.5 when none)."""
    return float(_settings(problem)["gs"])


def precision(view: NodeView, kept: np.ndarray) -> float:
    """ARX's precision (``MetricMDNMPrecision``, arithmetic mean over the QIs) with the factor:
    ``(gF P n_kept + sF n_sup) / n``, ``P`` the mean over the QIs of ``level / height`` (0 for a
    QI of height 0; module notes)."""
    g_f, s_f = gs_weights(gs_factor_of(view.problem))
    size = view.table.class_size.astype(float)
    return float((g_f * _precision_share(view) * size[kept].sum() + s_f * size[~kept].sum()) / view.problem.n)


def precision_bound(view: NodeView) -> float:
    """``min(gF P, sF)``: a record of a node above costs at least ``gF P`` kept (``P`` only grows
    with the levels) and ``sF`` suppressed. ARX's bound ``gF P`` is the same for ``gs >= 0.5``; for
    ``gs < 0.5`` (``sF < gF``) a node above that suppresses may cost less than it."""
    g_f, s_f = gs_weights(gs_factor_of(view.problem))
    return float(min(g_f * _precision_share(view), s_f))


def _precision_share(view: NodeView) -> float:
    cols = view.problem.columns
    return float(sum(int(lv) / c.height for lv, c in zip(view.levels, cols) if c.height > 0) / len(cols))


def aecs(view: NodeView, kept: np.ndarray) -> float:
    """ARX's average equivalence class size (``MetricSDAECS``) with the factor:
    ``n / (sF C_kept + gF [records suppressed])`` (ARX switches the weights on purpose: a kept
    class counts ``sF``, the class of the suppressed records ``gF``); infinite when the divisor
    is 0 (``gs = 0`` and nothing suppressed, ``gs = 1`` and everything suppressed), as ARX."""
    g_f, s_f = gs_weights(gs_factor_of(view.problem))
    size = view.table.class_size.astype(float)
    div = s_f * float(kept.sum()) + (g_f if size[~kept].sum() > 0 else 0.0)
    return float(view.problem.n / div) if div > 0 else float("inf")


def aecs_bound(view: NodeView) -> float:
    """``n / (max(gF, sF) C)`` with ``C`` the node's classes (``max(gF, sF) = 1``): a node above
    has at most ``C`` classes, the suppressed ones forming one. ARX's bound ``n / (sF C)`` is the
    same for ``gs >= 0.5``."""
    g_f, s_f = gs_weights(gs_factor_of(view.problem))
    return float(view.problem.n / (max(g_f, s_f) * view.table.n_classes))


def _gen(view: NodeView) -> np.ndarray:
    if "gen" not in view._memo:
        view._memo["gen"] = view.problem.generalised_codes(view.table, view.levels)
    return view._memo["gen"]


def _shares(view: NodeView) -> list[np.ndarray]:
    """Per QI, the share of the hierarchy's values each class's label covers (``share_j``)."""
    if "shares" not in view._memo:
        gen = _gen(view)
        out = []
        for j, col in enumerate(view.problem.columns):
            lvl = int(view.levels[j])
            out.append(col.leaves[lvl][gen[:, j]] / float(col.n_domain))
        view._memo["shares"] = out
    return view._memo["shares"]


def distinct_share(view: NodeView) -> list[np.ndarray]:
    """Per microaggregated attribute, ``d(E) / V`` of every class of the node (module notes)."""
    if "micro" not in view._memo:
        p = view.problem
        micro = _settings(p)["micro"]
        out = []
        if micro:
            rec_cls = p.record_classes(view.levels)
            for values, first, n_values in micro.values():
                cls = rec_cls[first].astype(np.int64)
                pairs = np.unique(cls * n_values + values)
                d = np.bincount(pairs // n_values, minlength=view.table.n_classes)
                out.append(d / float(n_values))
        view._memo["micro"] = out
    return view._memo["micro"]


def per_qi_loss(view: NodeView, kept: np.ndarray) -> np.ndarray:
    """``L_j`` of every QI, then of every microaggregated attribute (module notes): at the
    default factor the mean over records of ``(leaves - 1) / (D_j - 1)``, 1 for a suppressed
    record; 0 for a column whose hierarchy has one value."""
    p = view.problem
    g_f, s_f = gs_weights(_settings(p)["gs"])
    size = view.table.class_size.astype(float)
    n_sup = float(size[~kept].sum())

    def total(share: np.ndarray) -> float:
        part = size * share
        sup = n_sup if s_f == 1.0 else float((part + s_f * (size - part))[~kept].sum())
        return g_f * float(part[kept].sum()) + sup

    micro = distinct_share(view)
    out = np.zeros(len(p.columns) + len(micro))
    for j, (col, share) in enumerate(zip(p.columns, _shares(view))):
        d = float(col.n_domain)
        if d <= 1:
            continue
        lo = g_f * p.n / d   # every record at its raw value (ARX: the minimum of the column's loss)
        out[j] = max((total(share) - lo) / (p.n - lo), 0.0)
    for i, share in enumerate(micro):   # ARX's normalizeAggregated: divided by n
        out[len(p.columns) + i] = max(total(share) / p.n, 0.0)
    return out


def _loss_bound(view: NodeView) -> np.ndarray:
    """Per dimension, the loss with nothing suppressed (ARX's bound: 0 for the microaggregated
    attributes)."""
    p = view.problem
    g_f, _ = gs_weights(_settings(p)["gs"])
    size = view.table.class_size.astype(float)
    out = np.zeros(len(p.columns) + len(_settings(p)["micro"]))
    for j, (col, share) in enumerate(zip(p.columns, _shares(view))):
        d = float(col.n_domain)
        if d <= 1:
            continue
        lo = g_f * p.n / d
        out[j] = max((g_f * float((size * share).sum()) - lo) / (p.n - lo), 0.0)
    return out


def _geometric(values: np.ndarray) -> float:
    """ARX's geometric-mean aggregate ``prod_j (1 + v_j)^(1/q) - 1`` (weights 1)."""
    return float(np.exp(np.log1p(values).mean()) - 1.0)


def _nue_parts(view: NodeView) -> tuple[np.ndarray, np.ndarray]:
    """Per QI, ``G_j`` (the generalisation part) and the column's raw entropy ``upper_j`` (bits x n)."""
    p = view.problem
    cache = p.__dict__.setdefault("_nnue_cache", {})
    gpart = np.zeros(len(p.columns))
    upper = np.zeros(len(p.columns))
    for j, col in enumerate(p.columns):
        a = p.raw_freq[j]
        nz = a > 0
        key = ("upper", j)
        if key not in cache:
            cache[key] = float(-(a[nz] * np.log2(a[nz] / p.n)).sum())
        upper[j] = cache[key]
        lvl = int(view.levels[j])
        key = ("gen", j, lvl)
        if key not in cache:
            cm = col.code_map[min(lvl, col.code_map.shape[0] - 1)]
            b = np.bincount(cm, weights=a, minlength=int(cm.max()) + 1)
            cache[key] = float((a[nz] * np.log2(b[cm[nz]] / a[nz])).sum())
        gpart[j] = cache[key]
    return gpart, upper


def _top_counts(view: NodeView) -> tuple[np.ndarray, np.ndarray]:
    """Per class, the count of its most frequent sensitive value and whether it is unique."""
    t = view.table
    if view.problem.sens is None:
        raise InputError("the classification metric needs a response variable: name the sensitive "
                         "attribute (--sensitive), whose values the metric classifies.")
    top1 = np.zeros(t.n_classes)
    np.maximum.at(top1, t.cls, t.cnt.astype(float))
    n_top = np.bincount(t.cls, weights=(t.cnt == top1[t.cls]).astype(float), minlength=t.n_classes)
    return top1, n_top == 1


def value(name: str, view: NodeView, kept: np.ndarray) -> float:
    """The metric ``name`` of a node whose classes ``~kept`` are suppressed (module notes)."""
    p, t = view.problem, view.table
    size = t.class_size.astype(float)
    if name == "loss":
        return _geometric(per_qi_loss(view, kept))
    if name == "loss_mean":
        return float(per_qi_loss(view, kept).mean())
    if name == "dm_star":
        return float((size ** 2).sum())
    if name == "height":
        return float(np.sum(view.levels))
    if name == "ambiguity":
        prod = np.ones(t.n_classes)
        dom = 1.0
        for col, share in zip(p.columns, _shares(view)):
            prod *= share * col.n_domain
            dom *= float(col.n_domain)
        return float((size * prod)[kept].sum() + dom * size[~kept].sum())
    if name == "normalised_entropy":
        gpart, upper = _nue_parts(view)
        total = gpart.copy()
        s = float(size[~kept].sum())
        if s > 0:
            gen = _gen(view)
            for j in range(len(p.columns)):
                c = np.bincount(gen[~kept, j], weights=size[~kept])
                c = c[c > 0]
                total[j] += float(-(c * np.log2(c / s)).sum())
        ok = upper > 0
        return float((total[ok] / upper[ok]).sum())
    if name == "classification":
        gs = _settings(p)["gs"]
        g_f, s_f = gs_weights(gs)
        top1, unique = _top_counts(view)
        kept_cost = np.where(unique, g_f * (size - top1), s_f * size)
        return float((kept_cost[kept].sum() + gs * size[~kept].sum()) / (max(gs, g_f, s_f) * p.n))
    raise ValueError(name)


def bound(name: str, view: NodeView) -> float:
    """``LB(N) <= value(N')`` for every node ``N' >= N`` (module notes)."""
    p, t = view.problem, view.table
    all_kept = np.ones(t.n_classes, dtype=bool)
    if name == "loss":
        return _geometric(_loss_bound(view))
    if name == "loss_mean":
        return float(_loss_bound(view).mean())
    if name in ("dm_star", "height", "ambiguity"):
        return value(name, view, all_kept)
    if name == "normalised_entropy":
        gpart, upper = _nue_parts(view)
        ok = upper > 0
        return float((gpart[ok] / upper[ok]).sum())
    if name == "classification":
        size = t.class_size.astype(float)
        gs = _settings(p)["gs"]
        g_f, s_f = gs_weights(gs)
        top1, _ = _top_counts(view)
        return float(np.minimum(gs * size, min(g_f, s_f) * (size - top1)).sum() / (max(gs, g_f, s_f) * p.n))
    raise ValueError(name)
