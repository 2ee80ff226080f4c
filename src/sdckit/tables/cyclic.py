"""Cyclic perturbation of contingency tables (Roehrig 2002, slides "Cyclic perturbation").

Choose a set of *cycles* — integer patterns of +1/-1 whose fixed margins are zero — that
covers every cell equally (each cell lies in exactly ``c`` cycles). For each cycle in turn
flip a three-sided coin: with probability alpha add the cycle, with probability beta subtract
it, otherwise do nothing; a move that would make a cell negative is skipped. Publish the
perturbed table, the cycles, alpha and beta. The margins are unchanged by construction, each
cell moves by at most ``c``, and because the mechanism is public an analyst (or intruder) can
compute the exact posterior of every cell (:mod:`sdckit.tables.posterior`).

Designs
-------
* :func:`shift_cycles` — R x C tables (any R, C >= 2): with ``R <= C`` (else transposed) the
  C cycles ``k = 0..C-1`` put +1 at ``(i, i + k)`` and -1 at ``(i, i + k + 1)`` for rows
  ``i < R - 1`` and close the cycle in the last row with +1 at ``(R-1, R-1+k)`` and -1 at
  ``(R-1, k)`` (columns mod C). Every cell lies in exactly 2 cycles; for a 4 x 4 table these
  are the seed's four cycles.
* :func:`basic_cycles` — all 2 x 2 moves (each cell in ``(R-1)(C-1)`` cycles).
* :func:`shift_cycles_3way` — I x J x K tables with all three 2-way margins fixed: the
  products ``A (x) v`` of a 2-way shift cycle ``A`` of the first two axes with a zero-sum
  vector ``v = e_l - e_(l+1)`` of the third (every cell in exactly 4 cycles).

References
----------
Roehrig, S. F. (2002). *Disclosure Limitation in Large Statistical Databases* (CMU/Pitt seminar),
"A New Method for Disclosure Limitation: Cyclic Perturbation" and "Cyclic Perturbation:
Details".
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field

import numpy as np

from .._random import seed_sequence
from .._validation import check_choice, check_float
from ..errors import InputError
from ..result import Guarantee, ResultDisplay, jsonable
from .count import as_count_array

__all__ = ["PERTURBATION_MODELS", "shift_cycles", "basic_cycles", "shift_cycles_3way", "cycle_design", "coverage",
           "check_cycles", "perturb_once", "CyclicPerturbation", "CyclicResult", "check_cyclic"]

_DESIGNS = ("shift", "basic")

#: Rules near zero for the likelihood of a published table (:mod:`sdckit.tables.posterior`).
#: ``"no-change"`` is what :func:`perturb_once` does (a move that would make a cell negative
#: is skipped, the coin's probability going to "no change"; a proper probability model).
#: ``"skip-cycle"`` reads the seed's "unless there is a zero in the cycle" as: a cycle with a
#: blocked move is skipped with probability 1 while the possible move keeps its alpha or beta
#: (weights sum to more than 1, so it cannot be simulated; it reproduces the seed's
#: published posterior table).
PERTURBATION_MODELS = ("no-change", "skip-cycle")


def shift_cycles(n_rows: int, n_cols: int) -> np.ndarray:
    """The shift design: ``max(R, C)`` cycles of an R x C table, each cell in exactly 2.

    Returns an int64 array ``(n_cycles, R, C)``.
    """
    if n_rows < 2 or n_cols < 2:
        raise InputError(f"cycles need a table of at least 2 x 2; got {n_rows} x {n_cols}")
    if n_rows > n_cols:
        return shift_cycles(n_cols, n_rows).transpose(0, 2, 1).copy()
    R, C = n_rows, n_cols
    cyc = np.zeros((C, R, C), np.int64)
    i = np.arange(R - 1)
    for k in range(C):
        cyc[k, i, (i + k) % C] += 1          # + at (i, i+k)
        cyc[k, i, (i + k + 1) % C] -= 1      # - at (i, i+k+1)
        cyc[k, R - 1, (R - 1 + k) % C] += 1  # the last row closes the cycle
        cyc[k, R - 1, k % C] -= 1
    return cyc


def basic_cycles(n_rows: int, n_cols: int) -> np.ndarray:
    """All 2 x 2 cycles (the basic moves), each cell in ``(R-1)(C-1)`` of them."""
    from .markov import basic_moves

    return basic_moves(n_rows, n_cols)


def shift_cycles_3way(shape) -> np.ndarray:
    """Cycles of an I x J x K table keeping every 2-way margin: ``A (x) (e_l - e_(l+1))``.

    ``A`` runs over :func:`shift_cycles` of the first two axes, ``l`` over ``0..K-1`` (mod K);
    sums along each axis vanish, so ``n_ij+``, ``n_i+k`` and ``n_+jk`` are kept. Every cell lies in
    exactly 4 cycles.
    """
    I, J, K = (int(s) for s in shape)
    if K < 2:
        raise InputError(f"3-way cycles need at least 2 levels on the third axis; got shape {tuple(shape)}")
    A = shift_cycles(I, J)
    v = np.zeros((K, K), np.int64)
    v[np.arange(K), np.arange(K)] += 1
    v[np.arange(K), (np.arange(K) + 1) % K] -= 1
    return np.einsum("aij,bk->abijk", A, v).reshape(len(A) * K, I, J, K)


def cycle_design(shape, design: str = "shift") -> np.ndarray:
    """Cycles for a table of ``shape``: ``"shift"`` (2-way or 3-way) or ``"basic"`` (2-way)."""
    check_choice("cycle_design", "design", design, _DESIGNS)
    shape = tuple(int(s) for s in shape)
    if len(shape) == 2:
        return shift_cycles(*shape) if design == "shift" else basic_cycles(*shape)
    if len(shape) == 3 and design == "shift":
        return shift_cycles_3way(shape)
    raise InputError(f"no {design!r} cycle design for a table of shape {shape}; 2-way and 3-way (shift) are built in")


def coverage(cycles: np.ndarray) -> np.ndarray:
    """How many cycles touch each cell."""
    return (np.asarray(cycles) != 0).sum(axis=0)


def check_cycles(cycles, shape, margins=None) -> np.ndarray:
    """Validate published cycles: integer, right shape, zero fixed margins. Returns int64 array."""
    from .markov import is_move, no_three_way_margins

    cyc = np.asarray(cycles)
    if cyc.ndim != len(shape) + 1 or cyc.shape[1:] != tuple(shape):
        raise InputError(f"the cycles must have shape (n, {', '.join(map(str, shape))}); got {cyc.shape}")
    if not np.issubdtype(cyc.dtype, np.integer):
        if not np.all(np.equal(np.mod(cyc, 1), 0)):
            raise InputError("the cycles must hold integers (+1, -1 and 0)")
    cyc = cyc.astype(np.int64)
    if margins is None:
        margins = ((0,), (1,)) if len(shape) == 2 else no_three_way_margins(len(shape))
    bad = np.flatnonzero(~is_move(cyc, shape, margins))
    if bad.size:
        raise InputError(f"cycles {bad.tolist()[:5]} change a fixed margin; every cycle must have zero row "
                         "and column sums (and zero 2-way sums for 3-way tables)")
    return cyc


def perturb_once(table: np.ndarray, cycles: np.ndarray, alpha: float, beta: float,
                 gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One run of the mechanism: returns the perturbed table and the applied signs (+1/-1/0).

    For cycle ``k`` draw ``u ~ U(0, 1)``: ``u < alpha`` -> add it, ``alpha <= u < alpha + beta`` ->
    subtract it, else nothing; a move that would make a cell negative is skipped (sign 0).
    """
    t = table.astype(np.int64).copy()
    u = gen.random(len(cycles))
    want = np.where(u < alpha, 1, np.where(u < alpha + beta, -1, 0))
    applied = np.zeros(len(cycles), np.int64)
    for k in np.flatnonzero(want):  # sequential by definition: a move depends on the ones before
        nxt = t + want[k] * cycles[k]
        if (nxt >= 0).all():
            t = nxt
            applied[k] = want[k]
    return t, applied


def check_cyclic(original: np.ndarray, published: np.ndarray, cycles: np.ndarray, applied: np.ndarray) -> dict:
    """Independent check of a perturbation: margins kept, no negative cell, change within coverage,
    and the published table equals the original plus the applied cycles."""
    o, p = np.asarray(original), np.asarray(published)
    margins_kept = all(np.array_equal(o.sum(axis=a), p.sum(axis=a)) for a in range(o.ndim))
    if o.ndim == 3:
        margins_kept = margins_kept and all(np.array_equal(o.sum(axis=a), p.sum(axis=a)) for a in range(3))
    change = np.abs(p - o)
    return {"margins_kept": bool(margins_kept), "non_negative": bool((p >= 0).all()),
            "max_change": int(change.max()), "within_coverage": bool((change <= coverage(cycles)).all()),
            "consistent": bool(np.array_equal(p, o + np.tensordot(applied, cycles, axes=1)))}


@dataclass(frozen=True)
class CyclicResult(ResultDisplay):
    """A cyclically perturbed table with what is published (cycles, alpha, beta) and the evidence."""

    original: np.ndarray
    perturbed: np.ndarray
    cycles: np.ndarray
    alpha: float
    beta: float
    applied: np.ndarray
    seconds: float
    seed: object = None
    params: dict = field(default_factory=dict)

    @property
    def checks(self) -> dict:
        return check_cyclic(self.original, self.perturbed, self.cycles, self.applied)

    @property
    def guarantees(self) -> tuple[Guarantee, ...]:
        c = self.checks
        return (Guarantee("margins_kept", "every fixed margin of the perturbed table equals the original's",
                          c["margins_kept"], c["margins_kept"]),
                Guarantee("non_negative", "no perturbed cell is negative", c["non_negative"], c["non_negative"]),
                Guarantee("bounded_change", "each cell moves by at most the number of cycles covering it",
                          c["max_change"], c["within_coverage"] and c["consistent"]))

    def published(self) -> dict:
        """What is released: the perturbed table, the cycles, alpha and beta (never the original)."""
        return {"table": self.perturbed.tolist(), "cycles": self.cycles.tolist(), "alpha": self.alpha,
                "beta": self.beta}

    def to_dict(self) -> dict:
        cov = coverage(self.cycles)
        return jsonable({"method": "cyclic_perturbation", "alpha": self.alpha, "beta": self.beta,
                         "n_cycles": len(self.cycles), "coverage": int(cov.max()) if cov.min() == cov.max() else cov,
                         "n_added": int((self.applied == 1).sum()), "n_subtracted": int((self.applied == -1).sum()),
                         "n_cells_changed": int((self.perturbed != self.original).sum()),
                         "perturbed": self.perturbed, "seconds": round(self.seconds, 4),
                         "guarantees": [g.to_dict() for g in self.guarantees], "params": self.params})

    def describe(self) -> str:
        d = self.to_dict()
        lines = [f"cyclic perturbation (alpha={self.alpha}, beta={self.beta}, {d['n_cycles']} cycles): "
                 f"{d['n_added']} added, {d['n_subtracted']} subtracted, {d['n_cells_changed']} cells changed"]
        lines += [f"  [{'ok' if g.holds else 'FAILED'}] {g.statement}" for g in self.guarantees]
        if self.perturbed.ndim == 2:
            lines += ["  " + " ".join(f"{v:>6d}" for v in row) for row in self.perturbed]
        return "\n".join(lines)

    def report_html(self) -> str:
        if self.perturbed.ndim != 2:
            return f"<pre>{html.escape(self.describe())}</pre>"
        body = "".join("<tr>" + "".join(f"<td>{v}</td>" for v in row) + "</tr>" for row in self.perturbed)
        return (f"<p>Cyclic perturbation, alpha = {self.alpha}, beta = {self.beta}, {len(self.cycles)} cycles "
                f"(published).</p><table class='sdc-table'>{body}</table>")


@dataclass(frozen=True)
class CyclicPerturbation:
    """Cyclic perturbation with published cycles and probabilities.

    Parameters
    ----------
    alpha : float
        Probability of adding each cycle (outcome A).
    beta : float
        Probability of subtracting it (outcome B); ``alpha + beta <= 1`` (outcome C, nothing,
        has the rest).
    design : {"shift", "basic"}
        Cycle design when no cycles are given to :meth:`apply`.
    """

    alpha: float = 0.25
    beta: float = 0.25
    design: str = "shift"

    def __post_init__(self) -> None:
        check_float("CyclicPerturbation", "alpha", self.alpha, low=0, high=1)
        check_float("CyclicPerturbation", "beta", self.beta, low=0, high=1)
        check_float("CyclicPerturbation", "alpha + beta", self.alpha + self.beta, low=0, high=1)
        check_choice("CyclicPerturbation", "design", self.design, _DESIGNS)

    def apply(self, table, *, cycles=None, rng=None) -> CyclicResult:
        """Perturb ``table`` (an integer array; not modified)."""
        t0 = time.perf_counter()
        T = as_count_array(table, "the table")
        cyc = cycle_design(T.shape, self.design) if cycles is None else check_cycles(cycles, T.shape)
        ss, record = seed_sequence(rng)
        perturbed, applied = perturb_once(T, cyc, self.alpha, self.beta, np.random.default_rng(ss))
        return CyclicResult(T, perturbed, cyc, self.alpha, self.beta, applied, time.perf_counter() - t0,
                            record, {"alpha": self.alpha, "beta": self.beta, "design": self.design})
