"""Privacy models checked per node: k-anonymity, l-diversity, t-closeness, delta-presence, risk.

A *class-based* model says for each equivalence class whether it satisfies the model; the
classes that fail are suppressed, and the node satisfies when at most the suppression limit
of records is suppressed. A *global* model (average risk) is checked on the records that
are kept.

Monotonicity (a node above a satisfying node satisfies) is what lets the search prune:

* with suppression, a class-based model is monotone when its per-class property is kept by
  *any* union of a satisfying class with other classes (k-anonymity, distinct l-diversity,
  maximum risk): then the set of suppressed records can only shrink as classes merge;
* without suppression, it is enough that a union of satisfying classes satisfies (entropy and
  recursive-(c,l) diversity, Machanavajjhala et al. 2007; t-closeness, Li et al. 2007, since
  the EMD to a fixed distribution is convex; average risk, since merging lowers the number
  of classes);
* delta-presence is not monotone (Nergiz et al. 2007).

References
----------
Samarati, P. (2001). Protecting respondents' identities in microdata release. *IEEE TKDE* 13(6).
Machanavajjhala, A., Kifer, D., Gehrke, J., Venkitasubramaniam, M. (2007). l-diversity:
privacy beyond k-anonymity. *ACM TKDD* 1(1).
Li, N., Li, T., Venkatasubramanian, S. (2007). t-closeness: privacy beyond k-anonymity and
l-diversity. *ICDE 2007*, 106-115.
Nergiz, M. E., Atzori, M., Clifton, C. (2007). Hiding the presence of individuals from shared
databases. *SIGMOD 2007*, 665-676.
El Emam, K., Dankar, F. K. (2008). Protecting privacy using k-anonymity. *JAMIA* 15(5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from .problem import Problem, Table

_EPS = 1e-12


@dataclass
class NodeView:
    """A node's table with the per-class figures models and metrics share (computed once)."""

    problem: Problem
    levels: np.ndarray
    table: Table
    _memo: dict = field(default_factory=dict)

    def distinct(self) -> np.ndarray:
        if "distinct" not in self._memo:
            self._memo["distinct"] = np.bincount(self.table.cls, minlength=self.table.n_classes)
        return self._memo["distinct"]

    def entropy(self) -> np.ndarray:
        """Entropy (natural log) of the sensitive values in each class."""
        if "entropy" not in self._memo:
            t = self.table
            p = t.cnt / t.class_size[t.cls]
            self._memo["entropy"] = np.bincount(t.cls, weights=-p * np.log(p), minlength=t.n_classes)
        return self._memo["entropy"]

    def distribution(self) -> np.ndarray:
        """(n_classes x n_sens) share of each sensitive value in each class."""
        if "dist" not in self._memo:
            t, ns = self.table, self.problem.n_sens
            flat = np.bincount(t.cls.astype(np.int64) * ns + self.problem.sens[t.rep], weights=t.cnt,
                               minlength=t.n_classes * ns)
            self._memo["dist"] = flat.reshape(t.n_classes, ns) / t.class_size[:, None]
        return self._memo["dist"]


class Model:
    """Base class: a privacy model."""

    name = "model"
    class_based = True
    needs_sensitive = False
    needs_population = False

    def monotone(self, with_suppression: bool) -> bool:
        raise NotImplementedError

    def min_class_size(self) -> int:
        """Smallest size a class satisfying the model can have."""
        return 1

    def class_ok(self, view: NodeView) -> np.ndarray:
        raise NotImplementedError

    def global_ok(self, view: NodeView, kept: np.ndarray) -> tuple[bool, float]:
        raise NotImplementedError

    def describe(self) -> str:
        return self.name


@dataclass(frozen=True)
class KAnonymity(Model):
    """Every kept class has at least ``k`` records (Samarati 2001)."""

    k: int
    name = "k-anonymity"

    def monotone(self, with_suppression: bool) -> bool:
        return True

    def min_class_size(self) -> int:
        return int(self.k)

    def class_ok(self, view):
        return view.table.class_size >= self.k

    def describe(self):
        return f"{self.k}-anonymity"


@dataclass(frozen=True)
class DistinctLDiversity(Model):
    """Every kept class holds at least ``l`` distinct sensitive values."""

    l: int
    name = "distinct-l-diversity"
    needs_sensitive = True

    def monotone(self, with_suppression):
        return True

    def min_class_size(self):
        return int(self.l)

    def class_ok(self, view):
        return view.distinct() >= self.l

    def describe(self):
        return f"distinct-{self.l}-diversity"


@dataclass(frozen=True)
class EntropyLDiversity(Model):
    """Entropy of the sensitive values in every kept class is at least log(l)."""

    l: float
    name = "entropy-l-diversity"
    needs_sensitive = True

    def monotone(self, with_suppression):
        return not with_suppression

    def min_class_size(self):
        return int(math.ceil(self.l - 1e-9))

    def class_ok(self, view):
        return view.entropy() >= math.log(self.l) - 1e-9

    def describe(self):
        return f"entropy-{self.l:g}-diversity"


@dataclass(frozen=True)
class RecursiveCLDiversity(Model):
    """r_1 < c (r_l + ... + r_m) for the sorted counts r_1 >= r_2 >= ... of every kept class."""

    c: float
    l: int
    name = "recursive-(c,l)-diversity"
    needs_sensitive = True

    def monotone(self, with_suppression):
        return not with_suppression

    def min_class_size(self):
        return int(self.l)

    def class_ok(self, view):
        t = view.table
        order = np.lexsort((-t.cnt, t.cls))
        cls, cnt = t.cls[order], t.cnt[order]
        start = np.searchsorted(cls, np.arange(t.n_classes))
        rank = np.arange(cls.size) - start[cls]
        r1 = cnt[start]
        tail = np.bincount(cls, weights=np.where(rank >= self.l - 1, cnt, 0), minlength=t.n_classes)
        return r1 < self.c * tail

    def describe(self):
        return f"recursive-({self.c:g},{self.l})-diversity"


def sensitive_order(problem: Problem) -> np.ndarray:
    """The sensitive attribute's value codes in their order: numeric when every label is a
    number (ARX's integer and decimal types), else the labels' string order."""
    labels = [str(v) for v in problem.sens_labels]
    try:
        num = np.array([float(v) for v in labels])
    except ValueError:
        return np.argsort(np.array(labels, dtype=object), kind="stable")
    return np.argsort(num, kind="stable")


@dataclass(frozen=True)
class TCloseness(Model):
    """The earth mover's distance between each kept class's sensitive distribution and the
    whole data's is at most ``t`` (equal, hierarchical or ordered ground distance, Li et al. 2007)."""

    t: float
    distance: str = "equal"
    name = "t-closeness"
    needs_sensitive = True

    def monotone(self, with_suppression):
        return not with_suppression

    def emd(self, view: NodeView) -> np.ndarray:
        p = view.distribution()
        d = p - view.problem.sens_overall[None, :]
        if self.distance == "equal":
            # equal ground distance: EMD = 1/2 sum_i |p_i - q_i|
            return 0.5 * np.abs(d).sum(axis=1)
        if self.distance == "ordered":
            # ordered distance (Li et al. 2007, sec. 4.2): EMD = 1/(m-1) sum_i |sum_{j<=i} (p_j - q_j)|
            # over the m values in their order (numeric when every label is a number)
            m = d.shape[1]
            if m <= 1:
                return np.zeros(d.shape[0])
            cum = np.cumsum(d[:, sensitive_order(view.problem)], axis=1)
            return np.abs(cum).sum(axis=1) / (m - 1)
        col = view.problem.sens_col
        if col is None:
            raise InputError("hierarchical t-closeness needs a hierarchy for the sensitive attribute.")
        # Li et al. (2007), eq. for hierarchical distance: extra(N) = sum of the leaves' p - q
        # below N; cost(N) = height(N)/H * min(pos_extra(N), neg_extra(N)) over the inner nodes
        cmap = col.code_map
        H = cmap.shape[0] - 1
        top_single = col.n_codes[-1] == 1
        if not top_single:
            H += 1
        total = np.zeros(p.shape[0])
        child = d  # extras of the level below, one column per label
        child_codes = np.arange(cmap.shape[1])
        for lvl in range(1, H + 1):
            parent_codes = cmap[lvl] if lvl < cmap.shape[0] else np.zeros(cmap.shape[1], dtype=np.int64)
            n_parent = int(parent_codes.max()) + 1
            # parent of each child label (children at lvl-1 are labels of cmap[lvl-1])
            par = np.zeros(child.shape[1], dtype=np.int64)
            par[child_codes] = parent_codes
            A = np.zeros((child.shape[1], n_parent))
            A[np.arange(child.shape[1]), par] = 1.0
            pos = np.maximum(child, 0) @ A
            neg = np.maximum(-child, 0) @ A
            total += (lvl / H) * np.minimum(pos, neg).sum(axis=1)
            child = child @ A
            child_codes = parent_codes
        return total

    def class_ok(self, view):
        return self.emd(view) <= self.t + 1e-12

    def describe(self):
        return f"{self.t:g}-closeness ({self.distance} distance)"


@dataclass(frozen=True)
class DeltaPresence(Model):
    """delta_min <= (data records / population records) <= delta_max in every kept class."""

    delta_min: float
    delta_max: float
    name = "delta-presence"
    needs_population = True

    def monotone(self, with_suppression):
        return False

    def class_ok(self, view):
        pop = view.problem.population_counts(view.table, view.levels)
        delta = view.table.class_size / pop
        return (delta >= self.delta_min - _EPS) & (delta <= self.delta_max + _EPS)

    def describe(self):
        return f"({self.delta_min:g},{self.delta_max:g})-presence"


@dataclass(frozen=True)
class MaxRisk(Model):
    """Prosecutor re-identification risk 1/|E| of every kept record is at most ``threshold``."""

    threshold: float
    name = "maximum risk"

    def monotone(self, with_suppression):
        return True

    def min_class_size(self):
        return int(math.ceil(1.0 / self.threshold - 1e-9))

    def class_ok(self, view):
        return 1.0 / view.table.class_size <= self.threshold + _EPS

    def describe(self):
        return f"maximum risk <= {self.threshold:g}"


@dataclass(frozen=True)
class AverageRisk(Model):
    """Average prosecutor risk of the kept records, (kept classes)/(kept records), is at most
    ``threshold`` (El Emam & Dankar 2008)."""

    threshold: float
    name = "average risk"
    class_based = False

    def monotone(self, with_suppression):
        return not with_suppression

    def global_ok(self, view, kept):
        n_kept = float(view.table.class_size[kept].sum())
        risk = float(kept.sum()) / n_kept if n_kept else 0.0
        return risk <= self.threshold + _EPS, risk

    def describe(self):
        return f"average risk <= {self.threshold:g}"


def make_models(*, k: int | None = None, l: float | None = None, l_variant: str = "distinct",
                c: float | None = None, t: float | None = None, t_distance: str = "equal",
                delta_min: float | None = None, delta_max: float | None = None,
                average_risk: float | None = None, max_risk: float | None = None) -> list[Model]:
    """The models named by the settings that are set (ARX's further models:
    :func:`.models_arx.make_models`, which the release step and the CLI call)."""
    out: list[Model] = []
    if k is not None:
        out.append(KAnonymity(int(k)))
    if l is not None:
        if l_variant == "distinct":
            out.append(DistinctLDiversity(int(round(l))))
        elif l_variant == "entropy":
            out.append(EntropyLDiversity(float(l)))
        elif l_variant == "recursive":
            if c is None:
                raise InputError("recursive-(c,l)-diversity needs c (--c).")
            out.append(RecursiveCLDiversity(float(c), int(round(l))))
        else:
            raise InputError(f"l-diversity variant {l_variant!r} is not known; use distinct, entropy or recursive.")
    if t is not None:
        if t_distance not in ("equal", "hierarchical", "ordered"):
            raise InputError(f"t-closeness distance {t_distance!r} is not known; use equal, hierarchical or "
                             "ordered.")
        out.append(TCloseness(float(t), t_distance))
    if delta_min is not None or delta_max is not None:
        out.append(DeltaPresence(float(delta_min or 0.0), float(1.0 if delta_max is None else delta_max)))
    if max_risk is not None:
        out.append(MaxRisk(float(max_risk)))
    if average_risk is not None:
        out.append(AverageRisk(float(average_risk)))
    return out
