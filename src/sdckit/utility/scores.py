"""Score and Score': one figure that weighs information loss against disclosure risk for
continuous masking (lower is better).

- Score  = 0.5 IL + 0.125 DLD + 0.125 PLD + 0.25 ID   (Domingo-Ferrer & Torra 2001)
- Score' = 0.5 IL' + 0.25 DLD' + 0.25 ID'              (seed eq. 5.1; PLD dropped for
  computational reasons, the primed measures need no record correspondence)

Every component is in percent (IL = 100 mean(IL1..IL5)). With n' != n only Score' is defined:
:func:`score` then computes Score' and says so in ``note``.

References
----------
Domingo-Ferrer, J. and Torra, V. (2001). A quantitative comparison of disclosure control
methods for microdata. In *Confidentiality, Disclosure and Data Access*, North-Holland, 111-133.
Dandekar, R. A., Domingo-Ferrer, J. and Sebé, F. (2002). LHS-based hybrid microdata vs rank
swapping and microaggregation for numeric microdata protection. *Inference Control in
Statistical Databases*, LNCS 2316, 153-162 (Score').
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..result import ResultDisplay
from ..risk.interval import interval_disclosure
from ..risk.linkage import distance_linkage, probabilistic_linkage
from .numeric import as_pair, information_loss, nearest_original

#: weights of eq. 5.1 (Score') and of the original Score
PRIMED_WEIGHTS = {"il": 0.5, "dld": 0.25, "id": 0.25}
WEIGHTS = {"il": 0.5, "dld": 0.125, "pld": 0.125, "id": 0.25}


@dataclass(frozen=True)
class ScoreResult(ResultDisplay):
    """Score (or Score') with its components (all in percent) and the detailed measures."""

    score: float
    il: float
    dld: float
    id: float
    pld: float | None
    primed: bool
    details: dict = field(default_factory=dict)
    note: str = ""

    def to_dict(self) -> dict:
        out = {"score": self.score, "il": self.il, "dld": self.dld, "id": self.id, "primed": self.primed}
        if self.pld is not None:
            out["pld"] = self.pld
        out["details"] = self.details
        out["note"] = self.note
        return out

    def describe(self) -> str:
        p = "'" if self.primed else ""
        parts = f"IL{p} {self.il:.2f}, DLD{p} {self.dld:.2f}, " + (
            f"PLD {self.pld:.2f}, " if self.pld is not None else "") + f"ID{p} {self.id:.2f}"
        return f"Score{p} {self.score:.2f} ({parts})" + (f"; {self.note}" if self.note else "")


def score_primed(X, Xm, *, subsets: Sequence[Sequence] | None = None, names: Sequence[str] | None = None,
                 zero: str = "skip") -> ScoreResult:
    """Score' = 0.5 IL' + 0.25 DLD' + 0.25 ID' (seed eq. 5.1).

    c(i), the nearest original record of each masked record, is computed once (KD-tree) and
    shared by IL'1, DLD' and ID'.
    """
    X, Xm, names = as_pair(X, Xm, where="Score'", names=names)
    c = nearest_original(X, Xm)
    il = information_loss(X, Xm, primed=True, c=c, zero=zero)
    dld = distance_linkage(X, Xm, primed=True, subsets=subsets, names=names, c=c)
    idr = interval_disclosure(X, Xm, primed=True, names=names, c=c)
    w = PRIMED_WEIGHTS
    value = w["il"] * il.il + w["dld"] * dld.value + w["id"] * idr.value
    return ScoreResult(float(value), il.il, dld.value, idr.value, None, True,
                       {"information_loss": il.to_dict(), "dld_per_subset": dld.per_subset,
                        "id_per_width": idr.per_width,
                        "c_distinct": int(np.unique(c).size)})


def score(X, Xm, *, subsets: Sequence[Sequence] | None = None, names: Sequence[str] | None = None,
          zero: str = "skip", agree_within: float = 0.1) -> ScoreResult:
    """Score = 0.5 IL + 0.125 DLD + 0.125 PLD + 0.25 ID (one-to-one files).

    With n' != n there is no record correspondence: Score' is returned and ``note`` says so.
    """
    X, Xm, names = as_pair(X, Xm, where="Score", names=names)
    if X.shape[0] != Xm.shape[0]:
        r = score_primed(X, Xm, subsets=subsets, names=names, zero=zero)
        return ScoreResult(r.score, r.il, r.dld, r.id, None, True, r.details,
                           f"the masked file has {Xm.shape[0]} records and the original {X.shape[0]}: "
                           "Score' (eq. 5.1, primed measures) is computed instead of Score")
    il = information_loss(X, Xm, primed=False, zero=zero)
    dld = distance_linkage(X, Xm, primed=False, subsets=subsets, names=names)
    pld = probabilistic_linkage(X, Xm, primed=False, subsets=subsets, names=names, agree_within=agree_within)
    idr = interval_disclosure(X, Xm, primed=False, names=names)
    w = WEIGHTS
    value = w["il"] * il.il + w["dld"] * dld.value + w["pld"] * pld.value + w["id"] * idr.value
    return ScoreResult(float(value), il.il, dld.value, idr.value, pld.value, False,
                       {"information_loss": il.to_dict(), "dld_per_subset": dld.per_subset,
                        "pld_per_subset": pld.per_subset, "id_per_width": idr.per_width})


__all__ = ["PRIMED_WEIGHTS", "ScoreResult", "WEIGHTS", "score", "score_primed"]
