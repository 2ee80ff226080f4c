"""Risk and utility measures that apply to every categorical masking method, for R-U maps.

Risk — :func:`linkage_risk`: an intruder knows each person's key values and looks them up in
the release. The intruder recodes what they know the way the release was recoded (global
recodings are published), then links to a released record whose keys agree (a suppressed
value agrees with anything). Record i is re-identified with probability
``[z_i compatible with c_i] / M(c_i)``, where ``c_i`` is record i's released key, ``z_i``
the intruder's view of the same person and ``M(c_i)`` the number of people whose view is
compatible with ``c_i``. The measure is the mean over records: the expected share of
correct re-identifications. With no protection it is n_combinations / n.

Risk — :func:`global_risk`: the global risk ER / n of sdcMicro's individual risk, the measure
of the ``max_global_risk`` gate threshold.

Utility — :func:`entropy_utility`: one minus the normalised conditional entropy of the
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

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..microdata import Microdata


def _label(v) -> str:
    """Canonical text of a label: 1, 1.0 and "1" are the same category."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _joint_codes(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes of two columns in one common coding of their labels (-1 = missing)."""
    both = pd.concat([a.astype("object"), b.astype("object")], ignore_index=True)
    both = both.where(both.isna(), both.map(_label))
    codes, uniques = pd.factorize(both, sort=False)
    n = len(a)
    return codes[:n].astype(np.int64), codes[n:].astype(np.int64), len(uniques)


def linkage_risk(released: Microdata, intruder_view: pd.DataFrame) -> float:
    """Expected share of correct re-identifications (see the module docstring).

    Parameters
    ----------
    released : Microdata
        The release (its key variables are what the intruder matches on).
    intruder_view : DataFrame
        The original key values, recoded by the release's published global recodings, one
        row per released record in the same order.
    """
    keys = list(released.key_vars)
    if not keys:
        raise InputError("linkage_risk: the data have no key variables.")
    n = released.n_records
    c_cols, z_cols, radix = [], [], []
    for v in keys:
        c, z, m = _joint_codes(released.frame[v].reset_index(drop=True), intruder_view[v].reset_index(drop=True))
        c_cols.append(c)
        z_cols.append(z)
        radix.append(m + 1)
    C = np.stack(c_cols, axis=1)
    Z = np.stack(z_cols, axis=1)
    miss = C < 0
    pattern = (miss * (1 << np.arange(len(keys)))).sum(axis=1)
    prob = np.zeros(n)
    for p in np.unique(pattern):
        rows = np.flatnonzero(pattern == p)
        obs = [v for v in range(len(keys)) if not (p >> v) & 1]
        if not obs:  # everything suppressed: compatible with everyone
            prob[rows] = 1.0 / n
            continue
        def project(M: np.ndarray) -> np.ndarray:
            out = np.zeros(M.shape[0], dtype=np.int64)
            for v in obs:
                out = out * radix[v] + (M[:, v] + 1)
            return out
        zc = project(Z)                       # every person's view on the observed variables
        cc = project(C[rows])
        allk, inv = np.unique(np.concatenate([zc, cc]), return_inverse=True)
        counts = np.bincount(inv[:n], minlength=allk.size)  # M(c): compatible views
        m_c = counts[inv[n:]]
        compatible = zc[rows] == cc
        prob[rows] = np.where(compatible & (m_c > 0), 1.0 / np.maximum(m_c, 1), 0.0)
    return float(prob.mean())


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log2(p)).sum())


def entropy_utility(original: Microdata, released: Microdata, variables: Sequence[str] | None = None) -> float:
    """``1 - sum_v H(X_v | Y_v) / sum_v H(X_v)`` over the key variables (see module docstring)."""
    variables = list(variables or original.key_vars)
    h_x = h_xy = 0.0
    for v in variables:
        x, y, m = _joint_codes(original.frame[v].reset_index(drop=True), released.frame[v].reset_index(drop=True))
        x = x + 1
        y = y + 1  # missing -> 0, its own category
        joint = np.bincount(x * (m + 1) + y, minlength=(m + 1) ** 2).reshape(m + 1, m + 1)
        h_x += _entropy(joint.sum(axis=1))
        # H(X|Y) = H(X,Y) - H(Y)
        h_xy += _entropy(joint.ravel()) - _entropy(joint.sum(axis=0))
    if h_x == 0:
        return 1.0
    return float(1.0 - h_xy / h_x)


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
