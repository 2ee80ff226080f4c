"""Local recoding after a global generalisation: the search repeated on the suppressed records.

ARX's local recoding (Prasser, Eicher, Spengler, Bild & Kuhn 2020, *Software: Practice and
Experience* 50(7), section 3.3; ARX 3.9 ``ARXResult.optimize``): the optimal global
transformation leaves some records suppressed; the search is run again on those records only,
with the same privacy models and suppression limit (a share of the records searched), and the
records the new transformation keeps are released at its levels; the ones it suppresses go on
to the next pass. The released file then mixes generalisation levels between record groups,
and fewer records are suppressed.

Which models allow it: a pass checks its models on its own records. A class of the released
file may be the union of classes from several passes (the same labels at different levels, or
``*``); k-anonymity, the l-diversity variants and the risk thresholds are checked on each
pass's records alone. Models measured against the whole file's distribution of the sensitive
attribute (t-closeness, beta-likeness, delta-disclosure) or against a population (k-map,
population uniqueness) would see only the pass's records: sdckit refuses them with local
recoding (ARX keeps the whole file's distribution in its passes). Every pass is accepted only
if the file released so far still meets every guarantee of the step when checked anew on the
released values (the step's own check, independent of the search); a pass that would break one
is not taken and its records stay suppressed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InputError
from .problem import Problem
from .search import Evaluator

#: the generalise step's privacy-model parameters local recoding works with
LOCAL_RECODING_MODELS = ("k", "l", "average_risk", "max_risk")
#: the ones it refuses, with the reason in words
REFUSED = {"t": "t-closeness", "beta": "beta-likeness", "delta_disclosure": "delta-disclosure privacy",
           "k_map": "k-map", "population_uniqueness": "population uniqueness"}


@dataclass(frozen=True)
class RecodingPass:
    """One pass of local recoding: its levels and how many records it released and left suppressed."""

    number: int
    levels: dict
    n_records: int
    n_released: int
    n_suppressed: int
    accepted: bool

    def to_dict(self) -> dict:
        return {"pass": self.number, "levels": dict(self.levels), "records": self.n_records,
                "released": self.n_released, "still_suppressed": self.n_suppressed, "accepted": self.accepted}


def refuse_unsupported(settings) -> None:
    """Refuse, in one line, models that local recoding cannot check pass by pass."""
    used = [words for name, words in REFUSED.items() if getattr(settings, name, None) is not None]
    if used:
        raise InputError(f"generalise: local_recoding works with k-anonymity, l-diversity and the risk "
                         f"thresholds; {used[0]} is measured against the whole file (or a population), "
                         "which a pass over the suppressed records does not see: set local_recoding = 0 "
                         "or drop that model.")


def local_recode(frame: pd.DataFrame, out: pd.DataFrame, suppressed: np.ndarray, *, qis: Sequence[str],
                 make_problem: Callable[[pd.DataFrame], Problem], models, suppression: float, metric: str,
                 run_search: Callable[[Evaluator], object], generalise: Callable, passes: int,
                 still_holds: Callable[[pd.DataFrame, np.ndarray], bool],
                 ) -> tuple[pd.DataFrame, np.ndarray, list[RecodingPass]]:
    """Repeat the search on the suppressed records, ``passes`` times at most.

    Parameters
    ----------
    frame : DataFrame
        The step's input.
    out, suppressed : DataFrame, bool array
        The global transformation's released frame and suppressed records.
    make_problem : callable
        Builds the lattice problem of a subset of ``frame`` (same QIs, hierarchies, sensitive).
    run_search, generalise : callable
        The step's search on an evaluator, and :func:`~sdckit.lattice.transform.generalise_frame`.
    still_holds : callable
        ``(released frame, suppressed mask) -> bool``: every guarantee of the step on the file
        released so far (a pass that would break one is not taken).

    Returns
    -------
    out, suppressed, passes
    """
    out = out.copy()
    suppressed = suppressed.copy()
    done: list[RecodingPass] = []
    for number in range(1, passes + 1):
        rows = np.flatnonzero(suppressed)
        if len(rows) == 0:
            break
        sub = frame.iloc[rows]
        problem = make_problem(sub)
        ev = Evaluator(problem, models, suppression, metric)
        if len(rows) < ev.k_min:
            break
        try:
            res = run_search(ev)
        except InputError:   # no node meets the models on these records: they stay suppressed
            break
        sub_out, sub_sup = generalise(sub, ev, res.levels)
        released_now = ~sub_sup
        if not released_now.any():
            done.append(RecodingPass(number, res.level_map(), len(rows), 0, len(rows), False))
            break
        trial = out.copy()
        trial_sup = suppressed.copy()
        take = rows[released_now]
        for q in qis:
            col = trial[q].astype(object)
            col.iloc[take] = sub_out[q].to_numpy(dtype=object)[released_now]
            trial[q] = col
        trial_sup[take] = False
        accepted = bool(still_holds(trial, trial_sup))
        done.append(RecodingPass(number, res.level_map(), len(rows), int(released_now.sum()),
                                 int((~released_now).sum()), accepted))
        if not accepted:
            break
        out, suppressed = trial, trial_sup
    return out, suppressed, done
