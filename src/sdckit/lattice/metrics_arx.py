"""ARX's utility metrics beyond discernibility: loss, DM*, height, ambiguity, normalised
non-uniform entropy and the classification metric, each with a lower bound for pruning.

Every function takes a node's :class:`.NodeView` and the mask of its kept classes (the
others are suppressed) and returns a number, lower is better. The definitions follow ARX
3.9.2's quality models with its defaults (generalisation/suppression factor 0.5, attribute
weights equal); the notes below say where ARX's definition differs from the paper's.

``share_j(c)`` is the share of the values of quasi-identifier ``j``'s hierarchy that its label
``c`` covers (hierarchy rows under ``c`` divided by the hierarchy's rows ``D_j``); a raw value
covers ``1 / D_j``.

* **loss** (Iyengar 2002, sec. 3.1, the "loss metric" LM; ARX's ``MetricMDNMLoss``): per QI,
  ``L_j = (sum_records cost - n / D_j) / (n - n / D_j)`` with ``cost = share_j`` for a kept
  record and 1 for a suppressed one, i.e. the mean over records of ``(leaves - 1) / (D_j - 1)``
  (1 when suppressed); the QIs are aggregated by ARX's default, the *geometric* mean
  ``prod_j (1 + L_j)^(1/q) - 1``. ``loss_mean`` is the arithmetic mean ``(1/q) sum_j L_j``
  (sdckit's earlier ``loss``). Both grow with each ``L_j``, and ``L_j`` with nothing
  suppressed is a lower bound for every node above (a record's share grows with the level, and
  a suppressed record costs the most).
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
  costs 1 when its value is not its class's majority value, every record of a class without a
  unique majority costs 1, a suppressed record costs 1/2 (ARX's default factor); the sum is
  divided by n. Bound: ``sum_E min(|E| / 2, |E| - top1(E)) / n`` over the classes at the node:
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

from ..errors import InputError
from .models import NodeView

#: the metrics of this module
ARX_METRICS = ("loss", "loss_mean", "dm_star", "height", "ambiguity", "normalised_entropy", "classification")
#: metrics that need the sensitive attribute (as the response variable)
NEEDS_SENSITIVE = ("classification",)


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


def per_qi_loss(view: NodeView, kept: np.ndarray) -> np.ndarray:
    """``L_j`` of every QI (module notes): mean over records of ``(leaves - 1) / (D_j - 1)``,
    1 for a suppressed record; 0 for a column whose hierarchy has one value."""
    p = view.problem
    size = view.table.class_size.astype(float)
    n_sup = float(size[~kept].sum())
    out = np.zeros(len(p.columns))
    for j, (col, share) in enumerate(zip(p.columns, _shares(view))):
        d = float(col.n_domain)
        if d <= 1:
            continue
        lo = p.n / d   # every record at its raw value (ARX: the minimum of the column's loss)
        total = float((size * share)[kept].sum()) + n_sup
        out[j] = max((total - lo) / (p.n - lo), 0.0)
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
        top1, unique = _top_counts(view)
        kept_cost = np.where(unique, size - top1, size)
        return float((kept_cost[kept].sum() + 0.5 * size[~kept].sum()) / p.n)
    raise ValueError(name)


def bound(name: str, view: NodeView) -> float:
    """``LB(N) <= value(N')`` for every node ``N' >= N`` (module notes)."""
    p, t = view.problem, view.table
    all_kept = np.ones(t.n_classes, dtype=bool)
    if name in ("loss", "loss_mean", "dm_star", "height", "ambiguity"):
        return value(name, view, all_kept)
    if name == "normalised_entropy":
        gpart, upper = _nue_parts(view)
        ok = upper > 0
        return float((gpart[ok] / upper[ok]).sum())
    if name == "classification":
        size = t.class_size.astype(float)
        top1, _ = _top_counts(view)
        return float(np.minimum(0.5 * size, size - top1).sum() / p.n)
    raise ValueError(name)
