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
from ..utility.categorical import FACTORIZE_SAFE, canonical_label, joint_codes
from .frequencies import DENSE_LIMIT


def intruder_microdata(original: Microdata, steps: Sequence[Any]) -> Microdata:
    """The original data recoded by the pipeline's published global recodings (the intruder's
    view as a :class:`~sdckit.Microdata`, whose key codes :func:`linkage_risk` uses as they are).

    Parameters
    ----------
    original : Microdata
        The original data.
    steps : sequence of steps
        The release's steps; those with a true ``global_recode`` attribute are published and
        applied to the original (the others are not known to the intruder).

    Returns
    -------
    Microdata
        ``original`` after the published recodings, one record per original record.
    """
    view = original
    for step in steps:
        if getattr(step, "global_recode", False):
            view = step.apply(view).microdata
    return view


def intruder_view(original: Microdata, steps: Sequence[Any]) -> pd.DataFrame:
    """The key variables of :func:`intruder_microdata`'s view, one row per original record."""
    return intruder_microdata(original, steps).frame[list(original.key_vars)]


def _factorize_safe(md: Microdata, v: str) -> bool:
    """Whether ``v``'s key codes separate exactly the records whose canonical labels differ
    (not so for an object category list mixing, e.g., True and 1, which hash alike)."""
    if v not in md.key_vars:
        return False
    cats = md.categories(v)
    return cats.dtype != object or pd.api.types.infer_dtype(cats, skipna=True) in FACTORIZE_SAFE


def _key_pair_codes(released: Microdata, view: pd.DataFrame | Microdata, v: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Record codes of key ``v`` in the release and in the intruder's view, in one coding of
    their canonical labels (-1 = missing), and the number of labels: from the key codes and
    one label per category when both sides are Microdata (no pass over the values), else
    :func:`~sdckit.utility.categorical.joint_codes` of the two columns."""
    if isinstance(view, Microdata) and _factorize_safe(released, v) and _factorize_safe(view, v):
        if released.codes(v) is view.codes(v) and released.categories(v) is view.categories(v):
            # the same codes (a key the steps left alone, or the original against itself)
            c = released.codes(v).astype(np.int64)
            return c, c, released.n_categories(v)
        # one label text per category of each side, numbered together: one take per side
        ta = [canonical_label(x) for x in released.categories(v).to_numpy(dtype=object)]
        tb = [canonical_label(x) for x in view.categories(v).to_numpy(dtype=object)]
        number = {t: j for j, t in enumerate(dict.fromkeys(ta + tb))}
        map_a = np.array([number[t] for t in ta] + [-1], dtype=np.int64)   # code -1 (missing) -> -1
        map_b = np.array([number[t] for t in tb] + [-1], dtype=np.int64)
        return map_a[released.codes(v)], map_b[view.codes(v)], len(number)
    z = view.frame[v] if isinstance(view, Microdata) else view[v]
    return joint_codes(released.frame[v].reset_index(drop=True), z.reset_index(drop=True))


def linkage_risk(released: Microdata, intruder_view: pd.DataFrame | Microdata) -> float:
    """Expected share of correct re-identifications (see the module docstring).

    Parameters
    ----------
    released : Microdata
        The release (its key variables are what the intruder matches on).
    intruder_view : DataFrame or Microdata
        The original key values, recoded by the release's published global recodings, one
        row per released record in the same order (:func:`intruder_view`, or
        :func:`intruder_microdata`, whose key codes are then used as they are).

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
    C, Z, radix = [], [], []
    for v in keys:
        c, z, m = _key_pair_codes(released, intruder_view, v)
        C.append(c)
        Z.append(z)
        radix.append(m + 1)
    pattern = np.zeros(n, dtype=np.int64)
    for v, c in enumerate(C):                      # bit v set: key v suppressed in the release
        pattern |= (c < 0).astype(np.int64) << v
    patterns = np.unique(pattern) if n else pattern
    prob = np.zeros(n)
    for p in patterns:
        rows = slice(None) if patterns.size == 1 else np.flatnonzero(pattern == p)
        obs = [v for v in range(len(keys)) if not (p >> v) & 1]
        if not obs:  # everything suppressed: compatible with everyone
            prob[rows] = 1.0 / n
            continue
        # every person's view and the records' released keys on the observed variables, coded
        # together; M(c): the views equal to c, counted densely when the codes' range is
        # small, else over dense ids of a hash factorisation (the same counts)
        zc, cc, bound = _project(Z, C, obs, radix, rows)
        if bound <= max(DENSE_LIMIT, 4 * n):
            m_c = np.bincount(zc, minlength=bound)[cc]
        else:
            ids, uniques = pd.factorize(np.concatenate([zc, cc]), sort=False)
            m_c = np.bincount(ids[:n], minlength=len(uniques))[ids[n:]]
        compatible = zc[rows] == cc
        prob[rows] = np.where(compatible & (m_c > 0), 1.0 / np.maximum(m_c, 1), 0.0)
    return float(prob.mean())


def _project(Z: list[np.ndarray], C: list[np.ndarray], obs: list[int], radix: list[int],
             rows) -> tuple[np.ndarray, np.ndarray, int]:
    """One mixed-radix code per person (every row of ``Z``) and per record (``rows`` of ``C``)
    over the observed columns ``obs`` (-1 -> 0), and the bound of the codes; when the next digit
    could overflow int64, both are first renumbered to dense ids together. Every record with
    the same codes on both sides (the original against itself) is coded once."""
    n = Z[0].shape[0]
    shared = isinstance(rows, slice) and all(Z[v] is C[v] for v in obs)
    out, bound = None, 1
    for v in obs:
        if shared:
            digit = Z[v].astype(np.int64)
        else:
            digit = np.concatenate([Z[v], C[v][rows]], dtype=np.int64)
        digit += 1
        if out is None:
            out, bound = digit, radix[v]
            continue
        if bound > np.iinfo(np.int64).max // radix[v]:
            ids, uniques = pd.factorize(out, sort=False)
            out, bound = ids.astype(np.int64), max(len(uniques), 1)
        out *= radix[v]
        out += digit
        bound *= radix[v]
    if shared:
        return out, out, bound
    return out[:n], out[n:], bound
