"""Invariant PRAM matrices found by an evolutionary algorithm (Marés & Shlomo 2014).

Search space: for a categorical variable with relative frequencies p (L categories), the
row-stochastic matrices X with p X = p (invariance) and d_min <= X_ii <= d_max. Candidates
are kept as flow matrices F = diag(p) X, whose row and column sums are both p: invariance is
a property of the margins, kept exactly by

- cycle moves: +delta at (i, j) and (l, k), -delta at (i, k) and (l, j) (row and column sums
  unchanged), with delta drawn from the whole interval that keeps F >= 0 and the diagonal
  within bounds (small steps and large jumps alike);
- crossover: lambda F_a + (1 - lambda) F_b, a convex combination (the set is convex);
- repair: the convex combination with a feasible anchor (found by an LP on HiGHS) nearest to
  the candidate that meets the diagonal bounds.

Never a penalty: every matrix the algorithm holds is invariant and within the bounds; the
run records the largest invariance error and the extreme diagonals it ever saw.

Fitness, from expectations (no sampling): the PRAMmed variable V and the other keys O form
the table f[v, o]; the expected released table is E = X^T f.

- risk R = sum over sample-unique cells (f[v, o] = 1) of X_vv / E[v, o], the expected
  number of correct matches, divided by its value at X = I (the number of sample uniques);
- utility loss U = Hellinger distance between f / n and E / n, divided by that of the
  reference matrix X_ref (all diagonals as low as the bounds allow);
- also reported: the change of Cramér's V between V and each other key, and the variance
  inflation trace(Cov(t*) X^-1 ...) / trace(multinomial covariance of t).

fitness = risk_weight * R + (1 - risk_weight) * U (lower is better).

References
----------
Marés, J. and Shlomo, N. (2014). Data privacy using an evolutionary algorithm for invariant
PRAM matrices. *Computational Statistics and Data Analysis* 79, 1-13.
Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. and de Wolf, P.-P. (1998). Post
randomisation for statistical disclosure control. *Journal of Official Statistics* 14(4).
Shlomo, N. and Skinner, C. (2010). Assessing the protection provided by misclassification-based
disclosure limitation methods for survey microdata. *Annals of Applied Statistics* 4(3).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_bool, check_float, check_int, param_error
from ..errors import InputError, SolverError
from ..result import ResultDisplay


# --------------------------------------------------------------------------- feasibility
def feasible_anchor(p: np.ndarray, d_min: float, d_max: float, *, push: str = "low") -> np.ndarray:
    """A flow matrix F >= 0 with row and column sums p and d_min p_i <= F_ii <= d_max p_i (HiGHS LP).

    ``push = "low"`` minimises the diagonal (the most perturbing feasible matrix), ``"high"``
    maximises it. Raises InputError when no invariant matrix meets the bounds.
    """
    import highspy

    from .._highs import new_highs

    L = p.size
    h = new_highs()
    inf = highspy.kHighsInf
    lower = np.zeros(L * L)
    upper = np.full(L * L, inf)
    diag = np.arange(L) * (L + 1)
    lower[diag] = d_min * p
    upper[diag] = d_max * p
    cost = np.zeros(L * L)
    cost[diag] = 1.0 if push == "low" else -1.0
    h.addVars(L * L, lower, upper)
    h.changeColsCost(L * L, np.arange(L * L, dtype=np.int32), cost)
    for i in range(L):  # row sums
        h.addRow(p[i], p[i], L, np.arange(i * L, (i + 1) * L, dtype=np.int32), np.ones(L))
    for j in range(L):  # column sums
        h.addRow(p[j], p[j], L, np.arange(j, L * L, L, dtype=np.int32), np.ones(L))
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    if status != "Optimal":
        raise InputError(f"no invariant PRAM matrix has every diagonal in [{d_min}, {d_max}] for these "
                         f"frequencies (largest share {p.max():.3f}); lower d_min or raise d_max "
                         f"(HiGHS: {status}).")
    return np.asarray(h.getSolution().col_value).reshape(L, L).clip(min=0.0)


def invariance_error(F: np.ndarray, p: np.ndarray) -> float:
    """max |p X - p| and max |X 1 - 1| of the matrix X = F / p (relative frequencies)."""
    X = F / p[:, None]
    return float(max(np.abs(p @ X - p).max(), np.abs(X.sum(axis=1) - 1.0).max()))


def sdcmicro_invariant(p: np.ndarray, pd: float) -> np.ndarray:
    """sdcMicro-style invariant matrix: base P (diagonal pd, the rest spread evenly), its Bayes
    inverse Q[k, j] = P[j, k] p_j / sum_l p_l P[l, k], and R = P Q (p R = p)."""
    L = p.size
    P = np.full((L, L), (1 - pd) / (L - 1))
    np.fill_diagonal(P, pd)
    col = p @ P
    Q = (P * p[:, None]).T / col[:, None]
    return P @ Q


def _repair(F: np.ndarray, anchor: np.ndarray, p: np.ndarray, d_min: float, d_max: float) -> np.ndarray:
    """The convex combination (1 - lam) F + lam anchor with the least lam meeting the bounds."""
    lo, hi = d_min * p, d_max * p
    d, a = np.diag(F), np.diag(anchor)
    lam = 0.0
    for di, ai, l_, h_ in zip(d, a, lo, hi):
        if di < l_ - 1e-15:
            lam = max(lam, (l_ - di) / (ai - di))
        elif di > h_ + 1e-15:
            lam = max(lam, (di - h_) / (di - ai))
    lam = min(1.0, lam * (1 + 1e-9) + 1e-15 if lam > 0 else 0.0)
    out = (1 - lam) * F + lam * anchor
    return np.maximum(out, 0.0)


# --------------------------------------------------------------------------- fitness
@dataclass(frozen=True)
class Problem:
    """The data the fitness needs: the joint table f[v, o] of the PRAMmed variable and the other keys."""

    f: np.ndarray              # (L, O) counts
    p: np.ndarray              # (L,) relative frequencies of V
    unique_v: np.ndarray       # v index of each sample-unique cell
    unique_o: np.ndarray       # o index of each sample-unique cell
    other_codes: tuple         # per other key: (O,) code of that key for each o
    n: int

    @classmethod
    def from_codes(cls, v: np.ndarray, others: Sequence[np.ndarray], n_categories: int) -> Problem:
        v = np.asarray(v, dtype=np.int64)
        if (v < 0).any():
            raise InputError("evolved PRAM: the PRAMmed variable has missing values; they are never "
                             "changed, so leave them out of the frequencies (drop or recode them first).")
        if others:
            stack = np.stack([np.asarray(o, dtype=np.int64) + 1 for o in others], axis=1)
            combos, o_idx = np.unique(stack, axis=0, return_inverse=True)
            o_idx = o_idx.reshape(-1)
            other_codes = tuple(combos[:, j] for j in range(combos.shape[1]))
        else:
            o_idx = np.zeros(v.size, dtype=np.int64)
            other_codes = ()
        O = int(o_idx.max()) + 1
        f = np.zeros((n_categories, O))
        np.add.at(f, (v, o_idx), 1.0)
        counts = f.sum(axis=1)
        if (counts == 0).any():
            empty = np.flatnonzero(counts == 0).tolist()
            raise InputError(f"evolved PRAM: categories {empty} have zero frequency; exclude them "
                             "(no invariant matrix can move records into an empty category).")
        uv, uo = np.nonzero(f == 1)
        return cls(f, counts / counts.sum(), uv, uo, other_codes, int(v.size))

    def expected(self, X: np.ndarray) -> np.ndarray:
        """E = X^T f (a contiguous copy of X^T: numpy's matmul is much slower on the view)."""
        return np.ascontiguousarray(X.T) @ self.f

    def risk(self, X: np.ndarray, E: np.ndarray | None = None) -> float:
        """Expected number of correct matches among sample uniques: sum X_vv / E[v, o]."""
        if self.unique_v.size == 0:
            return 0.0
        E = self.expected(X) if E is None else E
        return float((X[self.unique_v, self.unique_v] / E[self.unique_v, self.unique_o]).sum())

    def hellinger(self, X: np.ndarray, E: np.ndarray | None = None) -> float:
        E = self.expected(X) if E is None else E
        return float(np.sqrt(0.5 * ((np.sqrt(self.f / self.n) - np.sqrt(np.maximum(E, 0) / self.n)) ** 2).sum()))

    def cramers_v_change(self, X: np.ndarray) -> list[float]:
        """|V(original) - V(expected released)| between the variable and each other key."""
        E = self.expected(X)
        out = []
        for codes in self.other_codes:
            out.append(abs(_cramers_v(_collapse(self.f, codes)) - _cramers_v(_collapse(E, codes))))
        return out

    def variance_inflation(self, X: np.ndarray) -> float:
        """trace Cov(t* X^-1) / trace of the multinomial covariance n (diag p - p p^T)."""
        t = self.p * self.n
        V = np.zeros_like(X)
        for i in range(X.shape[0]):  # Var(t*) = sum_i t_i (diag(X_i) - X_i^T X_i)
            V += t[i] * (np.diag(X[i]) - np.outer(X[i], X[i]))
        Xi = np.linalg.inv(X)
        cov = Xi.T @ V @ Xi
        base = self.n * (np.diag(self.p) - np.outer(self.p, self.p))
        return float(np.trace(cov) / np.trace(base))


def _collapse(table: np.ndarray, codes: np.ndarray) -> np.ndarray:
    m = int(codes.max()) + 1
    out = np.zeros((table.shape[0], m))
    for c in range(m):
        out[:, c] = table[:, codes == c].sum(axis=1)
    return out[:, out.sum(axis=0) > 0]


def _cramers_v(table: np.ndarray) -> float:
    n = table.sum()
    if n == 0 or min(table.shape) < 2:
        return 0.0
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = np.nansum((table - expected) ** 2 / np.where(expected > 0, expected, np.nan))
    return float(np.sqrt(chi2 / n / (min(table.shape) - 1)))


# --------------------------------------------------------------------------- the algorithm
@dataclass(frozen=True)
class Fitness:
    """The fitness of a matrix and its terms (see the module docstring)."""

    fitness: float
    risk: float            # R: expected correct matches / number of sample uniques
    utility_loss: float    # U: Hellinger / Hellinger of the reference matrix
    expected_matches: float
    hellinger: float

    def to_dict(self) -> dict:
        return {"fitness": self.fitness, "risk": self.risk, "utility_loss": self.utility_loss,
                "expected_matches": self.expected_matches, "hellinger": self.hellinger}


@dataclass(frozen=True)
class EvolveResult(ResultDisplay):
    """The evolved matrix, its fitness terms, the run's history and its invariance evidence."""

    matrix: np.ndarray
    fitness: Fitness
    history: np.ndarray                  # best fitness per generation
    pareto: tuple                        # ((risk, utility_loss, matrix), ...) when pareto=True
    max_invariance_error: float          # over every matrix ever produced
    min_diagonal_seen: float
    max_diagonal_seen: float
    generations: int
    seconds: float
    cramers_v_change: tuple = field(default_factory=tuple)
    variance_inflation: float = float("nan")

    def to_dict(self) -> dict:
        return {"fitness": self.fitness.to_dict(), "generations": self.generations,
                "max_invariance_error": self.max_invariance_error, "min_diagonal_seen": self.min_diagonal_seen,
                "max_diagonal_seen": self.max_diagonal_seen, "seconds": self.seconds,
                "cramers_v_change": list(self.cramers_v_change), "variance_inflation": self.variance_inflation,
                "pareto_size": len(self.pareto)}


@dataclass(frozen=True)
class EvolvePRAM:
    """Search invariant PRAM matrices within diagonal bounds with an evolutionary algorithm.

    Parameters
    ----------
    d_min, d_max : float
        Diagonal bounds, 0.5 < d_min <= d_max <= 1 (a dominant diagonal keeps X invertible).
    risk_weight : float in [0, 1]
        Weight of the risk term in the fitness (the rest goes to utility loss).
    generations, population : int
        Size of the run. ``patience`` stops early after that many generations without improvement;
        ``time_limit`` (seconds) stops at the first generation past it.
    tournament, elite : int
        Tournament size of the selection; individuals copied unchanged to the next generation.
    crossover_rate : float
        Share of children made by crossover (the others are mutated copies).
    max_moves : int
        Largest number of cycle moves in one mutation.
    pareto : bool
        Also keep the non-dominated (risk, utility loss) matrices seen during the run.
    """

    d_min: float = 0.8
    d_max: float = 0.99
    risk_weight: float = 0.5
    generations: int = 200
    population: int = 50
    patience: int = 60
    time_limit: float = 300.0
    tournament: int = 3
    elite: int = 2
    crossover_rate: float = 0.6
    max_moves: int = 8
    pareto: bool = False

    def __post_init__(self) -> None:
        o = "EvolvePRAM"
        check_float(o, "d_min", self.d_min, low=0.5, high=1.0, low_open=True)
        check_float(o, "d_max", self.d_max, low=0.5, high=1.0, low_open=True)
        if self.d_min > self.d_max:
            raise param_error(o, "d_min", f"<= d_max ({self.d_max})", self.d_min)
        check_float(o, "risk_weight", self.risk_weight, low=0.0, high=1.0)
        check_int(o, "generations", self.generations, min_value=1)
        check_int(o, "population", self.population, min_value=4)
        check_int(o, "patience", self.patience, min_value=1)
        check_float(o, "time_limit", self.time_limit, low=0.0, low_open=True)
        check_int(o, "tournament", self.tournament, min_value=2)
        check_int(o, "elite", self.elite, min_value=0)
        check_float(o, "crossover_rate", self.crossover_rate, low=0.0, high=1.0)
        check_int(o, "max_moves", self.max_moves, min_value=1)
        check_bool(o, "pareto", self.pareto)

    # -- operators on flow matrices ------------------------------------------------
    def _bounds(self, p: np.ndarray, i: int, j: int) -> tuple[float, float]:
        return (self.d_min * p[i], self.d_max * p[i]) if i == j else (0.0, np.inf)

    def _cycle(self, F: np.ndarray, p: np.ndarray, rng: np.random.Generator) -> None:
        """One random cycle move in place, delta uniform over its whole feasible interval."""
        L = p.size
        i, l = rng.choice(L, 2, replace=False)
        j, k = rng.choice(L, 2, replace=False)
        cells = ((i, j, 1.0), (l, k, 1.0), (i, k, -1.0), (l, j, -1.0))
        lo, hi = -np.inf, np.inf
        for a, b, s in cells:
            blo, bhi = self._bounds(p, a, b)
            # blo <= F[a, b] + s * delta <= bhi
            x0, x1 = (blo - F[a, b]) * s, (bhi - F[a, b]) * s
            lo, hi = max(lo, min(x0, x1)), min(hi, max(x0, x1))
        if not lo < hi:
            return
        delta = rng.uniform(lo, hi)
        for a, b, s in cells:
            F[a, b] += s * delta
        # clip round-off below zero / outside the diagonal bounds (at most an ulp)
        for a, b, _ in cells:
            blo, bhi = self._bounds(p, a, b)
            F[a, b] = min(max(F[a, b], blo), bhi)

    def _mutate(self, F: np.ndarray, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        G = F.copy()
        for _ in range(int(rng.integers(1, self.max_moves + 1))):
            self._cycle(G, p, rng)
        return G

    def run(self, problem: Problem, *, rng=None, initial: Sequence[np.ndarray] = ()) -> EvolveResult:
        """Evolve matrices for ``problem``; ``initial`` adds flow matrices to the first population."""
        from .._random import as_generator

        gen = as_generator(rng)
        t0 = time.perf_counter()
        p = problem.p
        L = p.size
        if L < 2:
            raise InputError("evolved PRAM needs a variable with at least 2 categories.")
        anchor_low = feasible_anchor(p, self.d_min, self.d_max, push="low")
        anchor_high = feasible_anchor(p, self.d_min, self.d_max, push="high")
        ref = anchor_low / p[:, None]
        hd_ref = max(problem.hellinger(ref), 1e-15)
        r_ref = max(problem.risk(np.eye(L)), 1e-15)

        def score(F: np.ndarray) -> Fitness:
            X = F / p[:, None]
            E = problem.expected(X)
            em = problem.risk(X, E)
            hd = problem.hellinger(X, E)
            r, u = em / r_ref, hd / hd_ref
            return Fitness(self.risk_weight * r + (1 - self.risk_weight) * u, r, u, em, hd)

        stats = {"err": 0.0, "dmin": np.inf, "dmax": -np.inf}

        def audit(F: np.ndarray) -> None:
            stats["err"] = max(stats["err"], invariance_error(F, p))
            d = np.diag(F) / p
            stats["dmin"] = min(stats["dmin"], float(d.min()))
            stats["dmax"] = max(stats["dmax"], float(d.max()))

        # initial population: sdcMicro-style invariant matrices with random diagonals, repaired
        # into the bounds, plus random walks from the two LP anchors
        pop = [np.asarray(F, dtype=float) for F in initial]
        while len(pop) < self.population:
            kind = len(pop) % 3
            if kind == 0:
                R = sdcmicro_invariant(p, gen.uniform(self.d_min, self.d_max))
                F = _repair(R * p[:, None], anchor_low, p, self.d_min, self.d_max)
            else:
                base = anchor_low if kind == 1 else anchor_high
                F = self._mutate(base, p, gen)
            pop.append(F)
        for F in pop:
            audit(F)
        fits = [score(F) for F in pop]
        history, best_f, stale = [], np.inf, 0
        front: list[tuple[float, float, np.ndarray]] = []
        g = 0
        for g in range(1, self.generations + 1):  # noqa: B007 (the count is read after the loop)
            if self.pareto:
                # multi-objective mode: a fresh random weight per generation scalarises the
                # selection, and elites come from the non-dominated archive, so the whole
                # front is explored (random-weight scalarisation)
                w = gen.random()
                keys = [w * f.risk + (1 - w) * f.utility_loss for f in fits]
            else:
                keys = [f.fitness for f in fits]
            order = np.argsort(keys)
            children = [pop[i].copy() for i in order[: self.elite]]
            if self.pareto and front:
                for j in gen.choice(len(front), min(self.elite, len(front)), replace=False):
                    children.append(front[j][2] * p[:, None])
            while len(children) < self.population:
                a = self._select(keys, gen)
                if gen.random() < self.crossover_rate:
                    b = self._select(keys, gen)
                    lam = gen.random()
                    child = lam * pop[a] + (1 - lam) * pop[b]
                    child = self._mutate(child, p, gen) if gen.random() < 0.5 else child
                else:
                    child = self._mutate(pop[a], p, gen)
                children.append(child)
            pop = children
            for F in pop:
                audit(F)
            fits = [score(F) for F in pop]
            if self.pareto:
                front = _update_front(front, [(f.risk, f.utility_loss, F / p[:, None]) for f, F in zip(fits, pop)])
            best = min(f.fitness for f in fits)
            history.append(best)
            if best < best_f - 1e-12:
                best_f, stale = best, 0
            elif not self.pareto:
                stale += 1
            if stale >= self.patience or time.perf_counter() - t0 > self.time_limit:
                break
        if self.pareto and front:  # the archive member with the best weighted fitness
            cand = [(self.risk_weight * r + (1 - self.risk_weight) * u, X) for r, u, X in front]
            best_front = min(cand, key=lambda t: t[0])
            pop.append(best_front[1] * p[:, None])
            fits.append(score(pop[-1]))
        i = int(np.argmin([f.fitness for f in fits]))
        X = pop[i] / p[:, None]
        if not (invariance_error(pop[i], p) < 1e-10):
            raise SolverError("evolved PRAM: the best matrix lost invariance; this is a bug, please report it.")
        return EvolveResult(X, fits[i], np.array(history), tuple(front), stats["err"], stats["dmin"], stats["dmax"],
                            g, time.perf_counter() - t0, tuple(problem.cramers_v_change(X)),
                            problem.variance_inflation(X))

    def _select(self, keys: list[float], rng: np.random.Generator) -> int:
        idx = rng.choice(len(keys), self.tournament, replace=False)
        return int(min(idx, key=lambda i: keys[i]))

    def fitness_of(self, problem: Problem, X: np.ndarray) -> Fitness:
        """The fitness of any matrix (e.g. a baseline) on the same scale as the run's."""
        p = problem.p
        L = p.size
        anchor_low = feasible_anchor(p, self.d_min, self.d_max, push="low")
        hd_ref = max(problem.hellinger(anchor_low / p[:, None]), 1e-15)
        r_ref = max(problem.risk(np.eye(L)), 1e-15)
        em, hd = problem.risk(X), problem.hellinger(X)
        r, u = em / r_ref, hd / hd_ref
        return Fitness(self.risk_weight * r + (1 - self.risk_weight) * u, r, u, em, hd)


def _update_front(front, points):
    allp = front + points
    keep = []
    for i, (r, u, X) in enumerate(allp):
        dominated = any((r2 <= r and u2 <= u and (r2 < r or u2 < u)) for j, (r2, u2, _) in enumerate(allp) if j != i)
        if not dominated and not any(abs(r - k[0]) < 1e-12 and abs(u - k[1]) < 1e-12 for k in keep):
            keep.append((r, u, X))
    return sorted(keep, key=lambda t: t[0])


def random_sdcmicro_baselines(problem: Problem, d_min: float, d_max: float, n: int, rng) -> list[np.ndarray]:
    """``n`` sdcMicro-style invariant matrices with random diagonals, repaired into the bounds."""
    from .._random import as_generator

    gen = as_generator(rng)
    p = problem.p
    anchor = feasible_anchor(p, d_min, d_max, push="low")
    out = []
    for _ in range(n):
        R = sdcmicro_invariant(p, gen.uniform(d_min, d_max))
        out.append(_repair(R * p[:, None], anchor, p, d_min, d_max) / p[:, None])
    return out


def max_entropy_matrix(L: int, d: float) -> np.ndarray:
    """Keep with probability d, move to each other category with (1 - d) / (L - 1)."""
    X = np.full((L, L), (1 - d) / (L - 1))
    np.fill_diagonal(X, d)
    return X
