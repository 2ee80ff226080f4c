"""SafePub: (epsilon, delta)-differential privacy by sampling, a private search and k-suppression.

Bild, Kuhn and Prasser (2018, sec. 4, Algorithm 1), as ARX implements it
(``DataDependentEDDPAlgorithm``, ``EDDifferentialPrivacy``):

1. each record is drawn with probability ``beta`` (:mod:`.dp_params`), independently;
2. the budget ``epsilon`` is split into ``epsilon_search`` (the search) and
   ``epsilon_anon = epsilon - epsilon_search``, which gives ``beta`` and ``k``;
3. the search starts at the top node (every QI at its top level) and takes ``steps`` steps; in
   each it adds the predecessors of the current node (one QI one level lower) to the set of
   candidates, removes the current node, and draws the next node from the candidates with the
   exponential mechanism of budget ``epsilon_search / steps``: probability proportional to
   ``exp(epsilon_step * score / 2)``, each score divided by its sensitivity beforehand (sec. 5);
4. the release is the sample at the best node among those the search went through (the highest
   score; on a tie the lower node), with every class of fewer than ``k`` sampled records removed.

The score functions (sec. 5; ARX's ``getScore`` of each metric) are computed on the sample,
records not drawn counting as suppressed, and are bounded in sensitivity:

* ``discernibility``: ``-(sum_kept |E|^2 + n * suppressed) / (n (k^2 / (k - 1) + 1))``;
* ``aecs``: the number of kept classes, plus one when any record is suppressed (sensitivity 1);
* ``precision``: ``-sum_j (kept * level_j / height_j + suppressed) / (q (k - 1))``;
* ``loss``: ``-(q * suppressed + sum_j sum_kept |E| share_j(E)) / (q (k - 1))``, ``share_j`` the
  share of the hierarchy's values the class's label covers;
* ``non_uniform_entropy``: ``-(sum_j sum_v c_jv^2 + n * (records whose value j is suppressed or
  at the root)) / (n q (k^2 / (k - 1) + 1))``, ``c_jv`` the kept sampled records with label ``v``.

``n`` is the number of input records, ``q`` the number of QIs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from .dp_params import dp_parameters
from .problem import Problem

#: the metrics with a score function of bounded sensitivity (ARX's ``isScoreFunctionSupported``)
SCORE_METRICS = ("discernibility", "aecs", "precision", "loss", "non_uniform_entropy")


def selection_probabilities(scores: np.ndarray, epsilon: float) -> np.ndarray:
    """The exponential mechanism's probabilities ``exp(epsilon * s / 2) / sum`` (McSherry and
    Talwar 2007) of scores already divided by their sensitivity."""
    e = 0.5 * epsilon * np.asarray(scores, dtype=float)
    w = np.exp(e - e.max())
    return w / w.sum()


def exponential_choice(scores: np.ndarray, epsilon: float, rng: np.random.Generator) -> int:
    """Draw an index with the exponential mechanism (one uniform from ``rng``)."""
    p = selection_probabilities(scores, epsilon)
    i = int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"))
    return min(i, p.size - 1)


def _sensitivity_divisor(k: int) -> float:
    """``k^2 / (k - 1) + 1`` (5 when ``k = 1``): the sensitivity of the n-normalised DM score."""
    return 5.0 if k == 1 else k * k / (k - 1) + 1.0


def node_score(metric: str, problem: Problem, levels: np.ndarray, k: int, n_total: int) -> float:
    """The score (higher is better) of a node on the sample ``problem`` (module notes)."""
    tab = problem.table(levels)
    size = tab.class_size.astype(float)
    kept = size >= k
    n_kept = float(size[kept].sum())
    sup = float(n_total) - n_kept   # records not drawn count as suppressed
    q = len(problem.qis)
    if metric == "aecs":
        return float(kept.sum()) + (1.0 if sup > 0 else 0.0)
    if metric == "discernibility":
        return -(float((size[kept] ** 2).sum()) + n_total * sup) / (n_total * _sensitivity_divisor(k))
    div = float(k - 1) if k > 1 else 1.0
    if metric == "precision":
        total = sum(n_kept * (int(levels[j]) / col.height if col.height else 0.0) + sup
                    for j, col in enumerate(problem.columns))
        return -total / q / div
    gen = problem.generalised_codes(tab, levels)
    if metric == "loss":
        total = q * sup
        for j, col in enumerate(problem.columns):
            share = col.leaves[int(levels[j])][gen[kept, j]] / col.n_domain
            total += float((size[kept] * share).sum())
        return -total / q / div
    if metric == "non_uniform_entropy":
        total = 0.0
        for j, col in enumerate(problem.columns):
            lvl = int(levels[j])
            at_root = lvl == col.height and int(col.n_codes[lvl]) == 1
            if at_root:
                total += float(n_total) * n_total   # every record's value is suppressed or at the root
                continue
            counts = np.bincount(gen[kept, j], weights=size[kept])
            total += float((counts ** 2).sum()) + float(n_total) * sup
        return -total / (float(n_total) * q) / _sensitivity_divisor(k)
    raise InputError(f"SafePub has no score function for metric {metric!r}; use one of {', '.join(SCORE_METRICS)}.")


@dataclass
class SafePubResult:
    """The outcome of :func:`safepub` (it holds no seed and no record of the input)."""

    levels: np.ndarray
    level_map: dict
    score: float
    k: int
    beta: float
    epsilon_anon: float
    epsilon_step: float
    n_sampled: int
    n_released: int
    steps_taken: int
    nodes_scored: int
    path: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The public summary: levels, parameters and the released count. The chosen node's score
        and the number of records drawn are left out: the guarantee covers the release, not them."""
        return {"levels": self.level_map, "k": self.k, "beta": self.beta, "epsilon_anon": self.epsilon_anon,
                "epsilon_step": self.epsilon_step, "n_released": self.n_released, "steps_taken": self.steps_taken,
                "nodes_scored": self.nodes_scored}


def safepub_search(problem: Problem, metric: str, k: int, n_total: int, steps: int, epsilon_search: float,
                   rng: np.random.Generator) -> tuple[np.ndarray, float, int, int, list]:
    """Steps 3-4 of the module notes on the sample ``problem``: the chosen levels, their score,
    the steps taken, the nodes scored and the path of selected nodes."""
    eps_step = epsilon_search / steps
    top = tuple(int(h) for h in problem.top)
    scores: dict[tuple, float] = {top: node_score(metric, problem, np.asarray(top), k, n_total)}
    cand: dict[tuple, float] = dict(scores)
    pivot, path = top, [top]
    best, best_score = top, scores[top]
    taken = 0
    for _ in range(steps):
        for j in range(len(pivot)):
            if pivot[j] == 0:
                continue
            pred = pivot[:j] + (pivot[j] - 1,) + pivot[j + 1:]
            if pred in cand:
                continue
            if pred not in scores:
                scores[pred] = node_score(metric, problem, np.asarray(pred), k, n_total)
            cand[pred] = scores[pred]
        cand.pop(pivot, None)
        if not cand:
            break
        keys = list(cand)
        pivot = keys[exponential_choice(np.array([cand[c] for c in keys]), eps_step, rng)]
        taken += 1
        path.append(pivot)
        s = scores[pivot]
        if s > best_score or (s == best_score and sum(pivot) < sum(best)):
            best, best_score = pivot, s
    return np.asarray(best, dtype=np.int64), best_score, taken, len(scores), path


def release_at(sample: pd.DataFrame, problem: Problem, levels: np.ndarray, k: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The records of ``sample`` (the frame ``problem`` encodes) in classes of at least ``k``
    at ``levels``, each QI replaced by its label at its level; and the mask of those kept."""
    tab = problem.table(levels)
    keep = (tab.class_size >= k)[problem.record_classes(levels)]
    out = sample.loc[keep].copy()
    for j, col in enumerate(problem.columns):
        lv = int(levels[j])
        lab = col.labels[lv][col.code_map[lv][col.raw]].astype(object)
        out[problem.qis[j]] = pd.Series(lab[keep], index=out.index, dtype=object)
    return out, keep


def safepub(data: pd.DataFrame, qis: list[str], hierarchies: Mapping, *, epsilon: float, delta: float,
            steps: int, epsilon_search: float, metric: str, rng: np.random.Generator,
            min_k: int | None = None) -> tuple[pd.DataFrame, SafePubResult]:
    """Run SafePub on ``data``; returns the released frame (the sampled records in classes of at
    least ``k``, QIs generalised) and the result.

    Parameters
    ----------
    data : DataFrame
        The records; every column is a quasi-identifier (the guarantee covers whole records).
    qis : list of str
        The quasi-identifiers.
    hierarchies : mapping
        QI -> hierarchy.
    epsilon, delta : float
        The (epsilon, delta) of the whole release.
    steps : int
        Steps of the search.
    epsilon_search : float
        The share of ``epsilon`` the search spends (``0 < epsilon_search < epsilon``).
    metric : str
        One of :data:`SCORE_METRICS`.
    rng : numpy.random.Generator
        The source of randomness (sampling and every selection).
    min_k : int, optional
        A larger class size to enforce (k-anonymity beside); the larger of the two applies.
    """
    if metric not in SCORE_METRICS:
        raise InputError(f"generalise: differential privacy (SafePub) has no score function for metric "
                         f"{metric!r}; set metric to one of {', '.join(SCORE_METRICS)}.")
    if not 0 < epsilon_search < epsilon:
        raise InputError(f"generalise: the search budget of SafePub must lie in (0, epsilon = {epsilon:g}); "
                         f"got {epsilon_search:g}: lower search_budget or raise epsilon.")
    eps_anon = epsilon - epsilon_search
    beta, k = dp_parameters(eps_anon, delta)
    if min_k is not None:
        k = max(k, int(min_k))
    n_total = len(data)
    drawn = rng.random(n_total) < beta
    sample = data.loc[drawn]
    if len(sample) == 0:   # nothing drawn: the empty release, no node chosen
        res = SafePubResult(np.zeros(0, dtype=np.int64), {}, float("nan"), k, beta, eps_anon,
                            epsilon_search / steps, 0, 0, 0, 0)
        return data.iloc[:0].copy(), res
    problem = Problem(sample, qis, hierarchies)
    levels, score, taken, scored, path = safepub_search(problem, metric, k, n_total, steps, epsilon_search, rng)
    out, keep = release_at(sample, problem, levels, k)
    tops = {q: int(levels[j]) for j, q in enumerate(qis)}
    res = SafePubResult(levels, tops, float(score), k, beta, eps_anon, epsilon_search / steps,
                        int(drawn.sum()), int(keep.sum()), taken, scored,
                        [dict(zip(qis, p, strict=True)) for p in path])
    return out, res
