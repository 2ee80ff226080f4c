"""Registers the ``postmask`` release step: a continuous masking followed by Algorithm 13.

A release step sees only the data it is given, while Algorithm 13 needs the original X and its
masking X'. The step therefore runs the masking itself (any registered step, given as a
table ``masking = {method = "rank_swap", p = 14}``) and then optimises its output against
the data the step received.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._random import seed_sequence
from .._validation import param_error
from ..errors import InputError
from ..microdata import Microdata
from ..params import check_params, param
from ..registry import build_step, register_step
from ..result import Guarantee, StepResult
from ..utility.numeric import il1_primed, standardiser
from .postmask import moment_targets, postmask_optimise

#: Score' is measured before and after up to this many records (DLD' over many subsets)
MAX_SCORE_RECORDS = 200_000


def objective_from_data(X: np.ndarray, Xpp: np.ndarray) -> float:
    """E of eq. 5.3 recomputed from scratch with numpy (the checker's own computation)."""
    mean, sd = standardiser(X)
    Zo, Z = (X - mean) / sd, (Xpp - mean) / sd
    T1, T2 = moment_targets(Zo)
    m1, m2 = Z.mean(axis=0), (Z.T @ Z) / Z.shape[0]
    iu = np.triu_indices(X.shape[1])
    return float(((m1 - T1) ** 2).sum() + ((m2 - T2)[iu] ** 2).sum())


def check_postmask(X: np.ndarray, Xm: np.ndarray, Xpp: np.ndarray, modified: np.ndarray, il1_target: float,
                   e_initial: float, e_reported: float) -> list[Guarantee]:
    """Independent checks of Algorithm 13's output: only records of M changed, E did not grow
    and equals the reported E, IL'1 (recomputed with scipy's KD-tree) is within [0.99, 1.01]
    TargetIL'1 (eq. 5.4)."""
    outside = np.ones(X.shape[0] if Xm.shape[0] == X.shape[0] else Xm.shape[0], dtype=bool)
    outside[modified] = False
    unchanged = bool(np.array_equal(Xm[outside], Xpp[outside]))
    e = objective_from_data(X, Xpp)
    il = il1_primed(X, Xpp, zero="scale")
    lo, hi = 0.99 * il1_target, 1.01 * il1_target
    return [
        Guarantee("outside_m_unchanged", "records outside M (the 100q% contributing most to IL'1) are "
                  "exactly as the masking left them", int((~outside).sum()), unchanged),
        Guarantee("e_not_increased", "E (eq. 5.3, recomputed from the output) is at most E of the masking "
                  "and equals the running-sum value", {"e": e, "e_initial": e_initial, "e_reported": e_reported},
                  e <= e_initial + 1e-9 and abs(e - e_reported) <= 1e-6 * max(1.0, e_initial)),
        Guarantee("il1_in_band", "IL'1 (eq. 5.2, recomputed) lies in [0.99, 1.01] x TargetIL'1 (eq. 5.4)",
                  {"il1": il, "band": [lo, hi]}, lo <= il <= hi),
    ]


@register_step("postmask", dask_note="the post-masking optimisation moves records against the "
               "information loss and linkage risk of the whole file, which a partition does not hold")
@dataclass(frozen=True)
class PostMask:
    """Mask numeric variables, then post-mask optimise (Algorithm 13 of Sebé et al. 2002).

    Parameters
    ----------
    masking : mapping
        The masking step: ``{"method": "rank_swap", "p": 14}`` (any registered step that
        changes numeric variables and keeps the records in place).
    p : float > 0
        TargetIL'1 = p IL'1 of the masking.
    q : float in (0, 1]
        Share of records that may change (those contributing most to IL'1).
    target_e : float >= 0
        Stop when E (eq. 5.3, standardised units) falls below it; 0 = run to the limits.
    max_steps, time_limit, step_size : int, float, float
        Step limit, seconds, sd of the random perturbation (in sds of the variable).
    variables : list of str, optional
        Numeric variables (default: the numeric_vars role).

    Notes
    -----
    Guarantees (checked independently): records outside M are unchanged; E did not increase;
    IL'1 lies in [0.99, 1.01] p IL'1 (this one fails honestly if a limit stopped the search
    before the band was reached).

    References
    ----------
    Sebé, F., Domingo-Ferrer, J., Mateo-Sanz, J. M. and Torra, V. (2002). Post-masking
    optimization of the tradeoff between information loss and disclosure risk in masked
    microdata sets. LNCS 2316, 163-171.
    """

    masking: Mapping = param(kind="mapping",
                             help="the masking step as a table, e.g. {method = \"rank_swap\", p = 14}")
    p: float = param(0.5, kind="float", low=0.0, low_open=True, symbol="p", grid=(0.25, 0.5, 0.75),
                     help="TargetIL'1 = p IL'1 of the masking (eq. 5.4)")
    q: float = param(0.1, kind="float", low=0.0, high=1.0, low_open=True, symbol="q",
                     unit="share of records",
                     help="share of records that may change (those contributing most to IL'1)")
    target_e: float = param(0.0, kind="float", low=0.0, symbol="E", advanced=True,
                            help="stop when E (eq. 5.3, standardised units) falls below it; 0 = "
                                 "run to the limits")
    max_steps: int = param(1_000_000, kind="int", low=1, advanced=True, help="step limit")
    time_limit: float = param(60.0, kind="float", low=0.0, low_open=True, unit="seconds",
                              advanced=True, help="time limit of the optimisation")
    step_size: float = param(0.1, kind="float", low=0.0, low_open=True, unit="sd", advanced=True,
                             help="sd of the random perturbation, in sds of the variable")
    variables: Sequence[str] | None = param(None, kind="columns", nullable=True,
                                            help="numeric variables (default: the numeric_vars role)")

    def __post_init__(self) -> None:
        check_params(self)
        o = "PostMask"
        if "method" not in self.masking:
            raise param_error(o, "masking", "a table with a 'method' key (e.g. {method = \"rank_swap\", p = 14})",
                              self.masking)
        if self.masking["method"] == "postmask":
            raise param_error(o, "masking", "a masking method other than 'postmask'", self.masking)
        object.__setattr__(self, "masking", dict(self.masking))
        params = {k: v for k, v in self.masking.items() if k != "method"}
        object.__setattr__(self, "_inner", build_step(self.masking["method"], params, where="postmask.masking"))

    def apply(self, microdata: Microdata, *, rng=None) -> StepResult:
        names = list(self.variables or microdata.numeric_vars)
        if not names:
            raise InputError("postmask: the data have no numeric variables; give the numeric_vars role "
                             "or the step's 'variables'.")
        for v in names:
            if v not in microdata.numeric_vars:
                raise InputError(f"postmask: {v!r} is not a numeric variable; the numeric variables are "
                                 f"{list(microdata.numeric_vars)}.")
        ss, record = seed_sequence(rng)
        inner_ss, own_ss = ss.spawn(2)
        inner = self._inner.apply(microdata, rng=inner_ss)
        X = microdata.numeric_array(names)
        Xm = inner.microdata.numeric_array(names)
        out = postmask_optimise(X, Xm, p=self.p, q=self.q, target_e=self.target_e, max_steps=self.max_steps,
                                time_limit=self.time_limit, step_size=self.step_size,
                                rng=np.random.default_rng(own_ss))
        released = inner.microdata.with_columns({v: out.data[:, j] for j, v in enumerate(names)})
        summary = {"masking": inner.summary, **out.summary(),
                   "trace": {"step": out.trace_step[:: max(1, out.trace_step.size // 200)].tolist(),
                             "e": out.trace_e[:: max(1, out.trace_e.size // 200)].tolist(),
                             "il1": out.trace_il1[:: max(1, out.trace_il1.size // 200)].tolist()}}
        if X.shape[0] <= MAX_SCORE_RECORDS:
            from ..utility.scores import score_primed
            before, after = score_primed(X, Xm, names=names), score_primed(X, out.data, names=names)
            summary["score_prime_before"] = {k: getattr(before, k) for k in ("score", "il", "dld", "id")}
            summary["score_prime_after"] = {k: getattr(after, k) for k in ("score", "il", "dld", "id")}
        guarantees = tuple(Guarantee(f"masking.{g.name}", g.statement, g.value, g.holds) for g in inner.guarantees)
        guarantees += tuple(check_postmask(X, Xm, out.data, out.modified_records, out.il1_target,
                                           out.e_initial, out.e_final))
        params = {"masking": dict(self.masking), "p": self.p, "q": self.q, "target_e": self.target_e,
                  "max_steps": self.max_steps, "time_limit": self.time_limit, "step_size": self.step_size,
                  "variables": names}
        return StepResult("postmask", released, params, summary, guarantees, record, dict(inner.artifacts))
