"""Record-linkage disclosure risk of continuous microdata: DLD (distance-based), PLD
(probabilistic, Fellegi-Sunter weights estimated by EM) and the primed DLD' for masked files
without a one-to-one record correspondence.

An intruder knows the values of some variables of the original records (a subset S of the
d variables) and links each masked record to an original record. The risk is the percentage
of masked records linked to their "correct" original record, averaged over several subsets
S (Domingo-Ferrer & Torra 2001):

- DLD: the link is the original record nearest to the masked record (Euclidean distance on
  S, both files standardised with the original's means and sds); correct = the same record.
  When several originals are equally near, the intruder picks one at random: the record
  counts 1/(number of tied records) if the correct one is among them.
- DLD' (seed section 5.1): as DLD, but the correct record is c(i), the original record nearest
  to masked record i on all d variables (no record correspondence is assumed).
- PLD: a pair (masked i, original k) agrees on variable j when |z'_ij - z_kj| <= ``agree_within``
  standard deviations; the agreement pattern of every pair is scored with Fellegi-Sunter
  weights log(P(pattern | match) / P(pattern | non-match)) whose m- and u-probabilities are
  estimated by EM (Jaro 1989) from all n' n pairs; each masked record is linked to the
  original of largest weight (ties shared as for DLD).

The default subsets S: for s = 1 .. min(7, d), the d cyclic windows of s consecutive
variables (each variable equally often), plus all d variables. Distances use a KD-tree
(scipy.spatial.cKDTree): O(n log n) per subset, so 1,000,000 records work.

References
----------
Domingo-Ferrer, J. and Torra, V. (2001). A quantitative comparison of disclosure control
methods for microdata. In *Confidentiality, Disclosure and Data Access*, North-Holland, 111-133.
Domingo-Ferrer, J. (2008). A survey of inference control methods for privacy-preserving data
mining. In *Privacy-Preserving Data Mining*, Springer, 53-80.
Jaro, M. A. (1989). Advances in record-linkage methodology as applied to matching the 1985
Census of Tampa, Florida. *JASA* 84, 414-420.
Fellegi, I. P. and Sunter, A. B. (1969). A theory for record linkage. *JASA* 64, 1183-1210.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numba
import numpy as np
from scipy.spatial import cKDTree

from .._validation import check_float, check_int
from ..errors import InputError
from ..utility.numeric import as_pair, correspondence, standardiser

#: relative tolerance under which two distances count as tied
TIE_RTOL = 1e-9


def intruder_subsets(d: int, max_size: int = 7) -> list[tuple[int, ...]]:
    """Default intruder knowledge: cyclic windows of s consecutive variables, s = 1..min(max_size, d),
    plus all d variables; duplicates removed, order kept."""
    check_int("intruder_subsets", "max_size", max_size, min_value=1)
    out, seen = [], set()
    for s in range(1, min(max_size, d) + 1):
        for start in range(d):
            sub = tuple(sorted((start + t) % d for t in range(s)))
            if sub not in seen:
                seen.add(sub)
                out.append(sub)
    full = tuple(range(d))
    if full not in seen:
        out.append(full)
    return out


def _subsets(d: int, subsets, names) -> list[tuple[int, ...]]:
    if subsets is None:
        return intruder_subsets(d)
    out = []
    for sub in subsets:
        idx = []
        for v in sub:
            if isinstance(v, str):
                if v not in names:
                    raise InputError(f"linkage: intruder variable {v!r} is not a column; the columns are {names}.")
                idx.append(names.index(v))
            elif isinstance(v, (int, np.integer)) and 0 <= v < d:
                idx.append(int(v))
            else:
                raise InputError(f"linkage: intruder variable {v!r} is neither a column name nor an index in [0, {d}).")
        if not idx:
            raise InputError("linkage: an intruder subset is empty.")
        out.append(tuple(sorted(set(idx))))
    if not out:
        raise InputError("linkage: no intruder subsets given.")
    return out


def nearest_link_credit(Zo: np.ndarray, Zm: np.ndarray, true: np.ndarray) -> np.ndarray:
    """Per masked record, the chance that nearest-neighbour linkage picks ``true[i]``:
    1/(number of originals at the minimal distance) if ``true[i]`` is at that distance, else 0."""
    tree = cKDTree(Zo)
    dmin, _ = tree.query(Zm, k=1)
    dtrue = np.sqrt(((Zm - Zo[true]) ** 2).sum(axis=1))
    tol = TIE_RTOL * np.maximum(dmin, 1.0)
    cand = np.flatnonzero(dtrue <= dmin + tol)
    credit = np.zeros(Zm.shape[0])
    if cand.size:
        ties = tree.query_ball_point(Zm[cand], r=dmin[cand] + tol[cand], return_length=True)
        credit[cand] = 1.0 / np.maximum(np.asarray(ties), 1)
    return credit


@dataclass(frozen=True)
class LinkageRisk:
    """Percentage of correctly linked masked records (0..100), averaged over intruder subsets.

    ``per_subset`` maps a subset (variable names joined by '+') to its percentage."""

    measure: str
    value: float
    primed: bool
    per_subset: dict = field(default_factory=dict)
    note: str = ""
    params: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"measure": self.measure + ("'" if self.primed else ""), "value": self.value,
                "primed": self.primed, "per_subset": dict(self.per_subset), "note": self.note,
                "params": dict(self.params)}


def distance_linkage(X, Xm, *, primed: bool | None = None, subsets: Sequence[Sequence] | None = None,
                     names: Sequence[str] | None = None, c: np.ndarray | None = None) -> LinkageRisk:
    """DLD (or DLD'): distance-based record linkage risk in percent.

    Parameters
    ----------
    X, Xm : array (n, d), (n', d) or DataFrames with the same columns
        Original and masked files.
    primed : bool, optional
        DLD' (correct link = nearest original c(i) on all variables). ``None``: DLD' when n' != n.
    subsets : list of lists of column names or indices, optional
        The intruder's variable sets (default :func:`intruder_subsets`).
    c : array of int, optional
        Precomputed c(i) for the primed measure.
    """
    X, Xm, names = as_pair(X, Xm, where="DLD", names=names)
    true, primed, note = correspondence(X, Xm, primed, c, "DLD")
    mean, sd = standardiser(X)
    Zo, Zm = (X - mean) / sd, (Xm - mean) / sd
    per = {}
    for sub in _subsets(X.shape[1], subsets, names):
        cols = list(sub)
        per["+".join(names[j] for j in sub)] = 100.0 * float(
            nearest_link_credit(np.ascontiguousarray(Zo[:, cols]), np.ascontiguousarray(Zm[:, cols]), true).mean())
    return LinkageRisk("DLD", float(np.mean(list(per.values()))), bool(primed), per, note)


# --------------------------------------------------------------------------- PLD
@numba.njit(cache=True)
def _pattern_counts(Zo, Zm, tol):  # pragma: no cover - compiled
    s = Zo.shape[1]
    counts = np.zeros(1 << s, dtype=np.int64)
    for i in range(Zm.shape[0]):
        for k in range(Zo.shape[0]):
            code = 0
            for j in range(s):
                if abs(Zm[i, j] - Zo[k, j]) <= tol:
                    code |= 1 << j
            counts[code] += 1
    return counts


@numba.njit(cache=True)
def _link_credit(Zo, Zm, tol, weight, true):  # pragma: no cover - compiled
    s = Zo.shape[1]
    credit = np.zeros(Zm.shape[0])
    for i in range(Zm.shape[0]):
        best = -np.inf
        n_best = 0
        for k in range(Zo.shape[0]):
            code = 0
            for j in range(s):
                if abs(Zm[i, j] - Zo[k, j]) <= tol:
                    code |= 1 << j
            w = weight[code]
            if w > best + 1e-12:
                best = w
                n_best = 1
            elif w >= best - 1e-12:
                n_best += 1
        t = true[i]
        code = 0
        for j in range(s):
            if abs(Zm[i, j] - Zo[t, j]) <= tol:
                code |= 1 << j
        if weight[code] >= best - 1e-12:
            credit[i] = 1.0 / n_best
    return credit


def fellegi_sunter_em(counts: np.ndarray, s: int, *, n_iter: int = 500,
                      prior_match: float = 0.01) -> tuple[np.ndarray, np.ndarray, float]:
    """EM estimate of m_j = P(agree on j | match), u_j = P(agree on j | non-match) and the match
    share from the counts of the 2^s agreement patterns (conditional independence, Jaro 1989)."""
    gamma = ((np.arange(1 << s)[:, None] >> np.arange(s)) & 1).astype(float)  # pattern bits
    f = counts.astype(float)
    total = f.sum()
    agree = (gamma * f[:, None]).sum(0) / total
    m, u, p = np.full(s, 0.9), np.clip(agree, 1e-6, 1 - 1e-6), prior_match
    for _ in range(n_iter):
        lm = gamma @ np.log(m) + (1 - gamma) @ np.log1p(-m)
        lu = gamma @ np.log(u) + (1 - gamma) @ np.log1p(-u)
        a = np.log(p) + lm
        b = np.log1p(-p) + lu
        g = 1.0 / (1.0 + np.exp(np.clip(b - a, -700, 700)))  # P(match | pattern)
        fg, fu = f * g, f * (1 - g)
        p_new = np.clip(fg.sum() / total, 1e-9, 1 - 1e-9)
        m_new = np.clip((gamma * fg[:, None]).sum(0) / max(fg.sum(), 1e-300), 1e-6, 1 - 1e-6)
        u_new = np.clip((gamma * fu[:, None]).sum(0) / max(fu.sum(), 1e-300), 1e-6, 1 - 1e-6)
        done = abs(p_new - p) < 1e-12 and np.abs(m_new - m).max() < 1e-10 and np.abs(u_new - u).max() < 1e-10
        m, u, p = m_new, u_new, p_new
        if done:
            break
    return m, u, float(p)


def probabilistic_linkage(X, Xm, *, primed: bool | None = None, subsets: Sequence[Sequence] | None = None,
                          agree_within: float = 0.1, names: Sequence[str] | None = None,
                          max_pairs: int = 200_000_000, c: np.ndarray | None = None) -> LinkageRisk:
    """PLD: probabilistic (Fellegi-Sunter, EM-estimated) record linkage risk in percent.

    Every masked record is compared with every original record, so the work is O(n' n |S|)
    per subset; ``max_pairs`` bounds n' n (use DLD for large files: the seed's Score' drops
    PLD for the same reason).
    """
    agree_within = check_float("probabilistic_linkage", "agree_within", agree_within, low=0.0, low_open=True)
    X, Xm, names = as_pair(X, Xm, where="PLD", names=names)
    if X.shape[0] * Xm.shape[0] > max_pairs:
        raise InputError(f"PLD: {X.shape[0]} x {Xm.shape[0]} record pairs exceed max_pairs={max_pairs}; "
                         "use DLD (distance_linkage) for files this large or raise max_pairs.")
    true, primed, note = correspondence(X, Xm, primed, c, "PLD")
    mean, sd = standardiser(X)
    Zo, Zm = (X - mean) / sd, (Xm - mean) / sd
    per = {}
    for sub in _subsets(X.shape[1], subsets, names):
        if len(sub) > 20:
            raise InputError(f"PLD: an intruder subset has {len(sub)} variables; at most 20 are supported.")
        cols = list(sub)
        zo, zm = np.ascontiguousarray(Zo[:, cols]), np.ascontiguousarray(Zm[:, cols])
        counts = _pattern_counts(zo, zm, agree_within)
        m, u, _ = fellegi_sunter_em(counts, len(sub))
        gamma = ((np.arange(1 << len(sub))[:, None] >> np.arange(len(sub))) & 1).astype(float)
        weight = gamma @ np.log(m / u) + (1 - gamma) @ np.log((1 - m) / (1 - u))
        credit = _link_credit(zo, zm, agree_within, weight, true)
        per["+".join(names[j] for j in sub)] = 100.0 * float(credit.mean())
    return LinkageRisk("PLD", float(np.mean(list(per.values()))), bool(primed), per, note,
                       {"agree_within": agree_within})


__all__ = ["LinkageRisk", "distance_linkage", "fellegi_sunter_em", "intruder_subsets", "nearest_link_credit",
           "probabilistic_linkage"]
