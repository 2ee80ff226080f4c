"""Risk and utility measures that apply to every categorical masking method, for R-U maps.

Risk — :func:`sdckit.risk.intruder.linkage_risk`: an intruder knows each person's key values
and looks them up in the release. The intruder recodes what they know the way the release was
recoded (global recodings are published), then links to a released record whose keys agree (a
suppressed value agrees with anything); the measure is the expected share of correct
re-identifications. With no protection it is n_combinations / n.

Risk — :func:`global_risk`: the global risk ER / n of sdcMicro's individual risk, the measure
of the ``max_global_risk`` gate threshold.

Utility — :func:`sdckit.utility.categorical.entropy_utility`: one minus the normalised conditional entropy of the
original keys given the released keys, ``1 - sum_v H(X_v | Y_v) / sum_v H(X_v)`` (the
non-uniform entropy of de Waal & Willenborg, used by ARX). 1 = nothing lost, 0 = nothing
left. It applies to recoding, suppression (a missing value is one more released category),
PRAM and swapping alike.

References
----------
de Waal, A. G. and Willenborg, L. C. R. J. (1999). Information loss through global
recoding and local suppression. *Netherlands Official Statistics* 14, 17-20.
Duncan, G. T., Keller-McNulty, S. A. and Stokes, S. L. (2001). Disclosure risk vs. data
utility: the R-U confidentiality map. Technical report 121, NISS.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ..errors import InputError
from ..microdata import Microdata
from ..risk.intruder import linkage_risk
from ..utility.categorical import entropy_utility

Measure = Callable[[Microdata, Microdata, pd.DataFrame], float]

#: risk measures: (original, released, intruder view of the original keys) -> lower is safer
RISK_MEASURES: dict[str, Measure] = {
    "linkage": lambda original, released, view: linkage_risk(released, view),
    "global_risk": lambda original, released, view: global_risk(released),
}

#: the gate threshold that checks each risk measure on a release (same measure, same number)
GATE_FOR_RISK: dict[str, str] = {"global_risk": "max_global_risk", "linkage": "max_linkage_risk"}


def global_risk(released: Microdata) -> float:
    """Global risk ER / n of the released keys: the measure of the ``max_global_risk`` gate
    (computed by that gate's own check, so an R-U map and the gate agree)."""
    from ..risk.steps import check_max_global_risk

    return float(check_max_global_risk(released, released, (), 1.0).value["global_risk"])
#: utility measures: (original, released, intruder view) -> higher is better, 1 = original
UTILITY_MEASURES: dict[str, Measure] = {
    "entropy": lambda original, released, view: entropy_utility(original, released),
}


def get_measure(kind: str, name: str) -> Measure:
    table = RISK_MEASURES if kind == "risk" else UTILITY_MEASURES
    if name not in table:
        raise InputError(f"unknown {kind} measure {name!r}; the known ones are {', '.join(sorted(table))}.")
    return table[name]
