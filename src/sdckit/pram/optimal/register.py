"""``Optimal`` (``matrix = { type = "optimal", ... }``) in the ``pram`` step and the ``max_recognition_ratio`` gate threshold
(registered on import of :mod:`sdckit.pram.optimal`).

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
TU Delft (DIAM) and Universite Pierre et Marie Curie; sections 2-4.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InputError
from ...params import check_params, param
from ...registry import GateCheck, GateOutcome, register_gate_check
from ..builders import joint_codes, register_matrix_type
from ..matrix import TransitionMatrix
from ..recognition import normalize_combinations, recognition_check
from .constraints import MAX_FULL_ELEMENTS
from .evidence import change_evidence, kron_recognition_max
from .solver import optimal_matrix


def _combo_names(combos, variables):
    return [[variables[j] for j in pi] for pi in combos]


@register_matrix_type("optimal")
@dataclass(frozen=True)
class Optimal:
    """Optimal PRAM against spontaneous recognition (Cator et al., sec. 3): the least L2 loss
    matrix meeting condition C1 (eq. (1)) at security level alpha."""

    alpha: float = param(kind="float", low=0.0, high=1.0, low_open=True, symbol="alpha", unit="ratio",
                         help="security level of condition (C1), eq. (1)")
    combinations: Any = param(None, kind="any", nullable=True, symbol="Pi",
                              help="the variable combinations Pi (an int size, or lists of variables; "
                                   "default all of size min(3, number of variables))")
    gamma: float | None = param(None, kind="float", low=0.0, high=1.0, nullable=True, symbol="gamma",
                                help="lower bound on every diagonal entry of P in the optimisation")
    support: str | None = param(None, kind="choice", choices=("full", "restricted"), nullable=True,
                                help="the allowed moves: every entry (full) or frequent to rare "
                                     "elements (restricted; default by size)")

    def __post_init__(self) -> None:
        check_params(self)

    def build(self, context) -> tuple[TransitionMatrix, dict]:
        """The optimal matrix of the context (its counts U_0 over the joint space), with its
        evidence for the report."""
        variables = tuple(context.variables)
        owner = "pram (matrix = 'optimal')"
        step_variables = tuple(context.step_variables) or variables
        if len(step_variables) > 1 and len(variables) == 1:
            raise InputError(f"{owner}: condition C1 is about combinations of the variables "
                             f"{list(step_variables)}, so the matrix must be over their joint space: "
                             "set joint = true")
        combos = normalize_combinations(self.combinations if self.combinations is not None
                                        else min(3, len(variables)), variables, owner=owner)
        support = self.support
        if support is None:
            support = "full" if context.n_categories <= MAX_FULL_ELEMENTS else "restricted"
        res = optimal_matrix(context.counts, context.shape, combos, self.alpha, gamma=self.gamma,
                             support=support)
        labels = context.categories
        m = TransitionMatrix(labels, res.P, variables, "optimal")
        ev = {"min_diagonal": float(np.asarray(res.P.diagonal()).min()),
              "alpha": float(self.alpha), "combinations": _combo_names(combos, variables),
              "support": res.support, "l2_loss": res.loss, "expected_changes": res.expected_changes,
              "min_diagonal_occurring": res.min_diagonal, "solver_status": res.status,
              "max_ratio_before": res.check_before.max_ratio, "max_ratio_after": res.check.max_ratio,
              "violations_before": len(res.check_before.violations), "c1_holds": res.check.holds,
              **{k: v for k, v in res.details.items() if k in ("frank_wolfe_gap", "cover_rule",
                                                                "iterations", "n_targets", "n_sources")},
              **change_evidence(res.P, context.counts, labels)}
        return m, ev


@register_gate_check("max_recognition_ratio")
@dataclass(frozen=True)
class MaxRecognitionRatio(GateCheck):
    """Condition C1 (Cator et al.): every spontaneous-recognition ratio <= alpha.

    References
    ----------
    Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM,
    eq. (1) (condition C1).
    """

    alpha: float = param(kind="float", low=0.0, high=1.0, low_open=True, high_open=True,
                         symbol="alpha", unit="ratio", label="largest recognition ratio",
                         help="every spontaneous-recognition ratio of eq. (1) must be at most alpha")

    measured_labels = {"max_ratio": ("largest spontaneous-recognition ratio", None), "where": ("where", None)}

    def check(self, original, released, results) -> GateOutcome:
        return check_max_recognition_ratio(original, released, results, self.alpha)


def check_max_recognition_ratio(original, released, results, threshold):
    """The largest C1 ratio of the release, recomputed by the exact checker.

    For every PRAM matrix: eq. (1) over its variables' joint space with the combinations
    its step declared (else all of size min(3, number of variables)), U_0 counted from the
    original data (per stratum: the step's before-frequencies); per-variable matrices of one
    step are combined as their Kronecker product. Without PRAM, P = I on the key variables:
    the largest 1 / U_pi(k0) over every combination of 3 key variables.
    """
    worst = (0.0, "no combination")
    checked = 0
    for r in results:
        # a sdckit.pram.steps.PramResult (by its fields: pram.steps imports this module)
        if r.method != "pram" or not hasattr(r, "matrices"):
            continue
        singles = {}
        for (g, s), m in r.matrices.items():
            if len(g) == 1 and s == "all" and len(r.matrices) > 1:
                singles[g[0]] = m
                continue
            ev = r.evidence.get((g, s), {})
            shape = tuple(original.n_categories(v) for v in g)
            if s == "all":
                jc = joint_codes([original.codes(v) for v in g], shape)
                counts = np.bincount(jc[jc >= 0], minlength=int(np.prod(shape))).astype(float)
            else:
                counts = np.asarray(r.before[(g, s)], dtype=float)
            combos = normalize_combinations(ev.get("combinations") or min(3, len(g)), g)
            chk = recognition_check(m.P, counts, shape, combos, threshold)
            checked += 1
            if chk.max_ratio > worst[0]:
                worst = (chk.max_ratio, f"{' x '.join(g)}" + ("" if s == "all" else f" | {s}"))
        if len(singles) > 1:
            g = tuple(singles)
            shape = tuple(original.n_categories(v) for v in g)
            jc = joint_codes([original.codes(v) for v in g], shape)
            counts = np.bincount(jc[jc >= 0], minlength=int(np.prod(shape))).astype(float)
            combos = normalize_combinations(min(3, len(g)), g)
            ratio = kron_recognition_max([singles[v].to_dense() for v in g], counts, shape, combos)
            checked += 1
            if ratio > worst[0]:
                worst = (ratio, " x ".join(g) + " (per-variable matrices)")
    if checked == 0:
        keys = list(original.key_vars)
        for pi in itertools.combinations(keys, min(3, len(keys))):
            shape = tuple(released.n_categories(v) for v in pi)
            jc = joint_codes([released.codes(v) for v in pi], shape)
            u = np.bincount(jc[jc >= 0], minlength=int(np.prod(shape)))
            if (u > 0).any():
                ratio = 1.0 / u[u > 0].min()  # P = I: 1 / U_pi(k0)
                if ratio > worst[0]:
                    worst = (ratio, " x ".join(pi) + " (not PRAMmed)")
    ok = worst[0] <= threshold
    detail = (f"largest spontaneous-recognition ratio {worst[0]:.6g} <= alpha = {threshold} "
              f"({worst[1]})" if ok else
              f"the ratio reaches {worst[0]:.6g} > alpha = {threshold} on {worst[1]}; use "
              "matrix = { type = 'optimal', alpha = ... } with this alpha on those variables (joint = true)")
    return GateOutcome("max_recognition_ratio", threshold, {"max_ratio": worst[0], "where": worst[1]},
                       ok, detail)
