"""Choose the release: the highest utility whose risk is under the threshold, refined by bisection
on a numeric parameter, and written back as a release spec that ``sdckit protect`` runs."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..params import step_params
from ..registry import step_class
from .sweep import Candidate, Sweep, SweepResult


@dataclass(frozen=True)
class Proposal:
    """The proposed candidate and its figures (means over seeds)."""

    method: str
    params: dict
    risk: float
    utility: float
    risk_sd: float
    utility_sd: float

    def to_dict(self) -> dict:
        return {"method": self.method, "params": self.params, "risk": self.risk, "utility": self.utility,
                "risk_sd": self.risk_sd, "utility_sd": self.utility_sd}


#: the share of the threshold kept free below a proposal's risk (see :func:`choose`)
PROPOSAL_MARGIN = 0.02


def qualifies(summary: pd.DataFrame, threshold: float, margin: float = PROPOSAL_MARGIN) -> pd.Series:
    """Settings safely under the threshold: mean risk + one sd over seeds <= threshold (1 - margin)."""
    sd = summary["risk_sd"].fillna(0.0) if "risk_sd" in summary else 0.0
    return summary["risk"] + sd <= threshold * (1.0 - margin)


def choose(summary: pd.DataFrame, threshold: float, *, margin: float = PROPOSAL_MARGIN) -> Proposal | None:
    """The setting with the highest mean utility among those safely under the threshold.

    A proposed release is re-run by ``sdckit protect`` with other random numbers than the
    sweep's, and its spec is gated on the same threshold: a setting whose mean risk sits just
    under the threshold would fail that gate about half the time. So a setting qualifies only
    when its mean risk plus one standard deviation over the seeds stays below
    ``threshold * (1 - margin)``.
    """
    ok = summary[qualifies(summary, threshold, margin)]
    if ok.empty:
        return None
    best = ok.sort_values(["utility", "risk"], ascending=[False, True]).iloc[0]
    return Proposal(best["method"], json.loads(best["params"]), float(best["risk"]), float(best["utility"]),
                    float(best["risk_sd"]), float(best["utility_sd"]))


def _midpoint(a: Any, b: Any, kind: str | None = None) -> Any:
    """Midpoint of two grid values, of the declared kind (``"int"`` or ``"float"``; default:
    a's type); None when no value lies strictly between."""
    if kind == "int" or (kind is None and isinstance(a, int)):
        a = int(a)
        b = int(round(float(b)))
        mid = (a + b) // 2
        return None if mid in (a, b) else mid
    mid = (float(a) + float(b)) / 2
    return None if math.isclose(mid, a) or math.isclose(mid, float(b)) else mid


def refine(sweep: Sweep, result: SweepResult, candidates: list[Candidate], threshold: float,
           steps: int = 4) -> SweepResult:
    """Bisect each method's one numeric grid parameter at its feasibility boundary.

    For a method with a single numeric grid parameter: between its best setting that qualifies
    (:func:`qualifies`, the rule of :func:`choose`) and the nearest setting with more utility
    that does not, the
    midpoint is run with every seed; repeated ``steps`` times (assumes risk and utility move
    together along the parameter). The new runs are appended to the result.
    """
    runs = result.runs
    for cand in candidates:
        if len(cand.grid) != 1:
            continue
        name = next(iter(cand.grid))
        decl = {p.name: p for p in step_params(step_class(cand.method))}.get(name)
        if decl is not None and decl.kind not in ("int", "float"):
            continue  # bisection needs a declared number
        kind = decl.kind if decl is not None else None
        for _ in range(steps):
            summary = SweepResult(runs, result.original_risk, result.risk_measure, result.utility_measure,
                                  0, 0).summary()
            rows = summary[summary["method"] == cand.method]
            values = [json.loads(p).get(name) for p in rows["params"]]
            if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                break
            rows = rows.assign(value=values)
            ok = qualifies(rows, threshold)  # the same rule as choose()
            feasible = rows[ok]
            if feasible.empty:
                break
            best = feasible.sort_values("utility", ascending=False).iloc[0]
            v = json.loads(best["params"])[name]
            better = rows[~ok & (rows["utility"] > best["utility"])]
            if better.empty:
                break
            target = better.assign(dist=(better["value"] - v).abs()).sort_values("dist").iloc[0]["value"]
            mid = _midpoint(v, target, kind)
            if mid is None:
                break
            params = {**json.loads(best["params"]), name: mid}
            new = sweep.run([(cand.method, params, s) for s in sweep.seeds])
            runs = pd.concat([runs, new.runs], ignore_index=True)
    cached = runs["cached"].astype(bool)
    return SweepResult(runs, result.original_risk, result.risk_measure, result.utility_measure,
                       int((~cached).sum()), int(cached.sum()))
