"""The risk of an intruder who knows each person's original key values and looks them up in a
release of categorical keys: the measure of R-U maps and of the ``max_linkage_risk`` gate.

:func:`intruder_view`: the intruder recodes what they know the way the release was recoded
(global recodings are published). :func:`linkage_risk`: the intruder links to a released record
whose keys agree (a suppressed value agrees with anything). Record i is re-identified with
probability ``[z_i compatible with c_i] / M(c_i)``, where ``c_i`` is record i's released key,
``z_i`` the intruder's view of the same person and ``M(c_i)`` the number of people whose view is
compatible with ``c_i``. The measure is the mean over records: the expected share of correct
re-identifications. With no protection it is n_combinations / n.

References
----------
Duncan, G. T., Keller-McNulty, S. A. and Stokes, S. L. (2001). Disclosure risk vs. data
utility: the R-U confidentiality map. Technical report 121, NISS.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..microdata import Microdata
from ..utility.categorical import joint_codes


def intruder_view(original: Microdata, steps: Sequence[Any]) -> pd.DataFrame:
    """The original keys recoded by the pipeline's published global recodings.

    Parameters
    ----------
    original : Microdata
        The original data.
    steps : sequence of steps
        The release's steps; those with a true ``global_recode`` attribute are published and
        applied to the original (the others are not known to the intruder).

    Returns
    -------
    DataFrame
        The key variables of ``original`` as the intruder sees them, one row per record.
    """
    view = original
    for step in steps:
        if getattr(step, "global_recode", False):
            view = step.apply(view).microdata
    return view.frame[list(original.key_vars)]


def linkage_risk(released: Microdata, intruder_view: pd.DataFrame) -> float:
    """Expected share of correct re-identifications (see the module docstring).

    Parameters
    ----------
    released : Microdata
        The release (its key variables are what the intruder matches on).
    intruder_view : DataFrame
        The original key values, recoded by the release's published global recodings, one
        row per released record in the same order (:func:`intruder_view`).

    Returns
    -------
    float
        The mean over records of ``[z_i compatible with c_i] / M(c_i)``, in [0, 1].

    Raises
    ------
    InputError
        When the data have no key variables.
    """
    keys = list(released.key_vars)
    if not keys:
        raise InputError("linkage_risk: the data have no key variables.")
    n = released.n_records
    c_cols, z_cols, radix = [], [], []
    for v in keys:
        c, z, m = joint_codes(released.frame[v].reset_index(drop=True), intruder_view[v].reset_index(drop=True))
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
        zc = _project(Z, obs, radix)                       # every person's view on the observed variables
        cc = _project(C[rows], obs, radix)
        allk, inv = np.unique(np.concatenate([zc, cc]), return_inverse=True)
        counts = np.bincount(inv[:n], minlength=allk.size)  # M(c): compatible views
        m_c = counts[inv[n:]]
        compatible = zc[rows] == cc
        prob[rows] = np.where(compatible & (m_c > 0), 1.0 / np.maximum(m_c, 1), 0.0)
    return float(prob.mean())


def _project(M: np.ndarray, obs: list[int], radix: list[int]) -> np.ndarray:
    """One mixed-radix code per row of the observed columns ``obs`` of ``M`` (-1 -> 0)."""
    out = np.zeros(M.shape[0], dtype=np.int64)
    for v in obs:
        out = out * radix[v] + (M[:, v] + 1)
    return out
