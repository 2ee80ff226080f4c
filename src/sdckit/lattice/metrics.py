"""Utility metrics of a node (lower is better) and their lower bounds for pruning.

Suppressed records count as fully generalised (ARX's convention). For the exact search a
metric needs a *lower bound* ``LB(N)`` that holds for every node above ``N``:
``metric(N') >= LB(N)`` for all ``N' >= N``. Each metric here whose per-record cost can only
grow with generalisation, and whose suppressed records cost at least as much as any kept one,
has the bound "the metric of ``N`` with nothing suppressed":

* discernibility: a record's cost at ``N'`` is its class size there (which contains its class
  at ``N``, and is at least the smallest size a kept class may have, ``k``) or ``n`` when
  suppressed, so ``DM(N') >= sum_E |E| min(max(|E|, k), n)`` (the classes ``E`` of ``N``);
* precision, non-uniform entropy: per-record per-QI costs grow with the level (precision and
  AECS weighted by ARX's generalisation/suppression factor, with their bounds: :mod:`.metrics_arx`);
* ARX's loss (``loss``, geometric mean over the QIs as ARX aggregates it; ``loss_mean`` the
  arithmetic mean), DM*, height, ambiguity, normalised non-uniform entropy and the
  classification metric: :mod:`.metrics_arx`, with their bounds;
* ARX's publisher payout and entropy-based information loss (Wan et al. 2015):
  :mod:`.profitability`, with ARX's bounds;
* average class size: the classes of ``N'`` with the suppressed records as one class form a
  partition coarser than ``N``'s, so ``AECS(N') >= n / (classes of N)``.

The KL divergence has no such bound (it is not monotone), so the exact search refuses it.

For nodes that were never checked (the part of a huge lattice a time limit leaves open) the
discernibility has a bound from the *number of classes* alone (:func:`class_count_bound`):
if a satisfying node has at most ``C`` classes and suppresses ``s <= S`` records, its kept
records ``n - s`` fall in at most ``C`` classes of at least ``k`` records each, so by
Cauchy-Schwarz ``sum |E|^2 >= (n - s)^2 / C`` and ``sum |E|^2 >= k (n - s)``, and
``DM >= max((n - s)^2 / C, k (n - s)) + n s``, minimised over ``s`` in ``[0, S]``. ``C`` is
at most the number of label combinations of the node (the product over QIs of the codes at
its levels) and at most the classes of any node below it (a finer partition). When a lower
bound ``s_lo`` of the records the node must suppress is known (from projections,
:meth:`.Problem.projection_suppressed_bound`), ``s`` ranges over ``[s_lo, S]``: each
suppressed record costs ``n``.

A second bound for unchecked nodes comes from two projections on complementary groups of
quasi-identifiers ``G1`` and ``G2`` (:func:`partition_bound`): each class ``E`` of a node lies
in one class ``F`` of its projection on ``G1`` and is fixed within ``F`` by its codes on
``G2``, so ``F`` holds at most ``C2`` classes (the classes of the projection on ``G2``), and
by Cauchy-Schwarz within each ``F`` the kept records cost at least
``sum_F (|F| - s_F)^2 / C2 >= (Q1 - 2 M1 s) / C2`` with ``Q1 = sum_F |F|^2``, ``M1`` the
largest ``|F|`` and ``s_F`` the records suppressed in ``F`` (``s`` in all). Hence
``DM >= Q1 / C2 + s (n - 2 M1 / C2)``, linear in ``s``, minimised at ``s_lo`` or ``S``.
Where the data are dense in each group but sparse in all quasi-identifiers together (many
label combinations, few records each) this exceeds the class-count bound, whose ``C`` can
only be the number of label combinations there.

References
----------
Bayardo, R. J., Agrawal, R. (2005). Data privacy through optimal k-anonymization. *ICDE 2005*
(discernibility). Iyengar, V. S. (2002). Transforming data to satisfy privacy constraints.
*KDD 2002* (loss). Gionis, A., Tassa, T. (2009). k-anonymization with minimal loss of
information. *IEEE TKDE* 21(2) (non-uniform entropy). Sweeney, L. (2002). Achieving
k-anonymity privacy protection using generalization and suppression. *IJUFKS* 10(5)
(precision). LeFevre, K., DeWitt, D., Ramakrishnan, R. (2006). Mondrian multidimensional
k-anonymity. *ICDE 2006* (average class size). Kifer, D., Gehrke, J. (2006). Injecting
utility into anonymized datasets. *SIGMOD 2006* (KL divergence).
"""

from __future__ import annotations

import numpy as np

from . import metrics_arx
from .models import NodeView

#: the metrics of :mod:`.profitability` (loaded when one is asked for)
PAYOUT_METRICS = ("publisher_payout", "entropy_information_loss")

METRICS = ("discernibility", "loss", "precision", "non_uniform_entropy", "aecs", "kl_divergence",
           "loss_mean", "dm_star", "height", "ambiguity", "normalised_entropy", "classification",
           "publisher_payout", "entropy_information_loss")


def _gen(view: NodeView) -> np.ndarray:
    if "gen" not in view._memo:
        view._memo["gen"] = view.problem.generalised_codes(view.table, view.levels)
    return view._memo["gen"]


def _per_class_qi_cost(view: NodeView, kind: str) -> np.ndarray:
    """Sum over QIs of one record's cost in each class."""
    p, gen = view.problem, _gen(view)
    out = np.zeros(view.table.n_classes)
    for j, col in enumerate(p.columns):
        lvl = int(view.levels[j])
        if kind == "nue":
            key = ("genfreq", j, lvl)
            f = p.__dict__.setdefault("_genfreq", {}).get(key)
            if f is None:
                f = np.bincount(col.code_map[lvl], weights=p.raw_freq[j], minlength=int(col.n_codes[lvl]))
                p._genfreq[key] = f
            out += np.log2(f[gen[:, j]])
        elif kind == "kl":
            out += np.log(col.leaves[lvl][gen[:, j]])
    return out


def metric_value(name: str, view: NodeView, kept: np.ndarray, cost_benefit=None) -> float:
    """The metric of a node whose classes ``~kept`` are suppressed (``cost_benefit``: the
    amounts of :mod:`.profitability`'s metrics, ARX's defaults when None)."""
    if name in PAYOUT_METRICS:
        from . import profitability  # noqa: PLC0415

        return profitability.value(name, view, kept, cost_benefit)
    p, t = view.problem, view.table
    n, q = p.n, len(p.qis)
    size = t.class_size.astype(float)
    n_sup = float(size[~kept].sum())
    if name == "discernibility":
        # DM = sum over kept classes |E|^2 + n for each suppressed record (Bayardo & Agrawal 2005)
        return float((size[kept] ** 2).sum() + n * n_sup)
    if name in metrics_arx.ARX_METRICS:
        return metrics_arx.value(name, view, kept)
    if name == "precision":   # with ARX's generalisation/suppression factor (0.5: both weights 1)
        return metrics_arx.precision(view, kept)
    if name == "non_uniform_entropy":
        # sum over records and QIs of -log2 P(raw | generalised) = log2 f(gen) - log2 f(raw)
        c = _per_class_qi_cost(view, "nue")
        kept_part = (size * c - t.class_wsum)[kept].sum()
        sup_part = (size * q * np.log2(n) - t.class_wsum)[~kept].sum()
        return float(kept_part + sup_part)
    if name == "aecs":   # n / (kept classes + 1 if any record is suppressed) at the default factor
        return metrics_arx.aecs(view, kept)
    if name == "kl_divergence":
        # KL(P || Q): Q spreads each class evenly over the raw cells its labels cover;
        # (1/n)[sum_cells f log f + sum_E |E| (sum_j log leaves_j - log |E|)], suppressed
        # records as one class at the top
        c = _per_class_qi_cost(view, "kl")
        const = p.__dict__.get("_flogf")
        if const is None:
            gid = p._dense_keys(p.raw2d, np.arange(p.m, dtype=np.int32), np.zeros(q, dtype=np.int64), p.base.cnt)
            f = np.bincount(gid, weights=p.base.cnt)
            const = float((f * np.log(f)).sum())
            p._flogf = const
        kept_part = (size * (c - np.log(size)))[kept].sum()
        sup_part = 0.0
        if n_sup > 0:
            sup_part = n_sup * (sum(np.log(col.n_domain) for col in p.columns) - np.log(n_sup))
        return float((const + kept_part + sup_part) / n)
    raise ValueError(name)


def has_bound(name: str) -> bool:
    """True when the metric has a lower bound valid for every node above (exact search)."""
    return name != "kl_divergence"


def lower_bound(name: str, view: NodeView, k_min: int, cost_benefit=None) -> float:
    """``LB(N) <= metric(N')`` for every node ``N' >= N`` (see the module notes)."""
    if name in PAYOUT_METRICS:
        from . import profitability  # noqa: PLC0415

        return profitability.bound(name, view, cost_benefit)
    p, t = view.problem, view.table
    if name == "discernibility":
        size = t.class_size.astype(float)
        return float((size * np.minimum(np.maximum(size, k_min), p.n)).sum())
    if name == "aecs":
        return metrics_arx.aecs_bound(view)
    if name == "precision":
        return metrics_arx.precision_bound(view)
    if name == "kl_divergence":
        return -np.inf
    if name in metrics_arx.ARX_METRICS:
        return metrics_arx.bound(name, view)
    return metric_value(name, view, np.ones(t.n_classes, dtype=bool))


def class_count_bound(n: int, k: int, max_suppressed: int, n_classes: np.ndarray,
                      min_suppressed: np.ndarray | int = 0) -> np.ndarray:
    """Lower bound of DM for a satisfying node with at most ``n_classes`` classes that
    suppresses at least ``min_suppressed`` records (module notes).

    ``f(s) = max((n - s)^2 / C, k (n - s)) + n s`` is convex in ``s``, so its least value on
    ``[s_lo, S]`` is at an end, at the stationary point ``n - n C / 2`` of the first piece, or
    where the pieces cross, ``s = n - k C`` (each clipped to the interval). A node with
    ``s_lo > S`` cannot satisfy: its bound is infinite.
    """
    c = np.maximum(np.asarray(n_classes, dtype=float), 1.0)
    n, k, S = float(n), float(max(k, 1)), float(max_suppressed)
    lo = np.broadcast_to(np.asarray(min_suppressed, dtype=float), c.shape)
    hi = np.maximum(lo, S)

    def f(sv):
        return np.maximum((n - sv) ** 2 / c, k * (n - sv)) + n * sv

    cands = [lo, hi, np.clip(n - n * c / 2.0, lo, hi), np.clip(n - k * c, lo, hi)]
    out = np.min([f(sv) for sv in cands], axis=0)
    return np.where(lo > S, np.inf, out)


def partition_bound(n: int, max_suppressed: int, sum_sq1: np.ndarray, largest1: np.ndarray,
                    n_classes2: np.ndarray, min_suppressed: np.ndarray | int = 0) -> np.ndarray:
    """Lower bound of DM for a satisfying node from its projections on complementary groups of
    quasi-identifiers (module notes): ``Q1 / C2 + s (n - 2 M1 / C2)`` at the ``s`` in
    ``[s_lo, S]`` that makes it least.

    Parameters
    ----------
    n, max_suppressed : int
        Records, and the most a satisfying node may suppress (``S``).
    sum_sq1, largest1 : ndarray
        Per node: the sum of the squared class sizes (``Q1``) and the largest class size
        (``M1``) of its projection on the first group.
    n_classes2 : ndarray
        Per node: the classes of its projection on the second group (``C2``).
    min_suppressed : ndarray or int
        Per node, a lower bound of the records it suppresses (``s_lo``); where it exceeds
        ``S`` the node cannot satisfy and the bound is infinite.
    """
    c2 = np.maximum(np.asarray(n_classes2, dtype=float), 1.0)
    base = np.asarray(sum_sq1, dtype=float) / c2
    slope = float(n) - 2.0 * np.asarray(largest1, dtype=float) / c2
    lo = np.broadcast_to(np.asarray(min_suppressed, dtype=float), base.shape)
    s_at = np.where(slope >= 0, lo, np.maximum(lo, float(max_suppressed)))
    return np.where(lo > max_suppressed, np.inf, base + slope * s_at)
