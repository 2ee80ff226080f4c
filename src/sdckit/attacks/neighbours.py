"""Nearest released records of target records under the mixed distance.

Three rules decide which of several equally near released records is kept (``tie_break``):

``"random"`` (the default)
    one at random, seeded by the attack's ``rng``: the released rows are searched in a random
    order and the first met among equally near ones is kept.
``"first"``
    the lowest row of the released file (deterministic: the answer depends only on the files
    and their row order).
``"quicksort"``
    the order in which numba's default sort (an unstable quicksort, deterministic for a given
    row of distances) leaves the tied records: what Anonymeter keeps (``anonymeter/neighbors/
    mixed_types_kneighbors.py``, ``_nearest_neighbors``: ``dist_ix.argsort()[:n_neighbors]``
    inside a numba function). An unstable sort's choice among ties depends on every value of
    the row, so this rule computes the distance of every released record bit for bit as
    Anonymeter does and sorts the whole row with the same sort: each numeric column divided by
    its range over the released records and the targets of the call (``x / range``, a range
    of 0 taken as 1), ``|a - b|`` added column by column in the order of the columns' names,
    then 1 per differing category; two missing numbers add 1 and one missing number makes the
    distance NaN (sorted last). The neighbours are then identical to Anonymeter's on the same
    files when both treat the same columns as numeric and the same values as one category
    (sdckit merges values that print alike, such as ``1`` and ``"1"``; Anonymeter does not).
    It costs one full distance row and one sort (n log n) per target, where the other rules
    abandon far records early.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from .encode import EncodedFrames, discriminating_order
from .kernels import nearest, nearest_quicksort

#: how ties between equally near released records are broken
TIE_BREAKS = ("random", "first", "quicksort")


def code_dtype(enc: EncodedFrames) -> type:
    """int16 when every category code fits, else int32."""
    most = max((len(v) for v in enc.categories.values()), default=0)
    return np.int16 if most < np.iinfo(np.int16).max else np.int32


def split_kinds(data: np.ndarray, columns: np.ndarray, is_num: np.ndarray, inv_range: np.ndarray,
                dtype: type = np.int32) -> tuple[np.ndarray, np.ndarray]:
    """The records' categorical columns as integer codes of ``dtype`` (missing: -1) and
    numeric columns divided by their range (NaN for missing), in ``columns`` order within
    each kind: what :func:`~sdckit.attacks.kernels.nearest` reads."""
    cat = columns[~is_num[columns]]
    num = columns[is_num[columns]]
    block = data[:, cat]
    codes = np.where(np.isnan(block), -1, block).astype(dtype)
    return np.ascontiguousarray(codes), np.ascontiguousarray(data[:, num] * inv_range[num])


def nearest_released(enc: EncodedFrames, targets: np.ndarray, columns: np.ndarray, k: int,
                     rng: np.random.Generator, tie_break: str = "random") -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` released records nearest to each row of ``targets`` on ``columns``.

    Parameters
    ----------
    enc : EncodedFrames
        The encoded files; the candidates are ``enc.released``.
    targets : ndarray
        Encoded target records (rows of ``enc.original`` or ``enc.control``), all columns.
    columns : ndarray of int
        Positions of the columns the intruder knows.
    k : int
        Neighbours per target (at most the number of released records).
    rng : Generator
        Orders the columns for the search (speed only) and, with ``tie_break="random"``,
        breaks ties.
    tie_break : {"random", "first", "quicksort"}
        ``"random"``: the released rows are searched in a random order and among records at
        the same distance the first one met is kept; ``"first"``: the lowest released row is
        kept; ``"quicksort"``: Anonymeter's distance and sort (see the module docstring; the
        numeric ranges then cover the released records and ``targets``).

    Returns
    -------
    (indices, distances)
        Rows of ``enc.released``, shape (n_targets, k), nearest first.
    """
    rel = enc.released
    n = rel.shape[0]
    k = max(1, min(int(k), n))
    if tie_break == "quicksort":
        q_num, q_cat, c_num, c_cat = anonymeter_arrays(enc, targets, columns)
        return nearest_quicksort(q_num, q_cat, c_num, c_cat, k)
    order = discriminating_order(rel, columns, enc.is_numeric, enc.inv_range, rng)
    dtype = code_dtype(enc)
    q_cat, q_num = split_kinds(targets, order, enc.is_numeric, enc.inv_range, dtype)
    if tie_break == "first":   # the kernel keeps the lowest row among equally near ones
        c_cat, c_num = split_kinds(rel, order, enc.is_numeric, enc.inv_range, dtype)
        return nearest(q_cat, q_num, c_cat, c_num, k)
    perm = rng.permutation(n)
    c_cat, c_num = split_kinds(rel[perm], order, enc.is_numeric, enc.inv_range, dtype)
    idx, dist = nearest(q_cat, q_num, c_cat, c_num, k)
    return perm[idx], dist


def anonymeter_arrays(enc: EncodedFrames, targets: np.ndarray,
                      columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Targets and released records on ``columns`` as Anonymeter's neighbour search reads them.

    Numeric columns in the order of their names, each divided by its range over the released
    records and ``targets`` (``anonymeter/preprocessing/transformations.py``,
    ``_scale_numerical``: the smaller minimum and the larger maximum of the two files, a
    comparison with a missing minimum or maximum keeping the second file's; a range of 0 is
    taken as 1); categorical columns as integer codes, missing coded -1.

    Returns
    -------
    (q_num, q_cat, c_num, c_cat)
        What :func:`~sdckit.attacks.kernels.nearest_quicksort` reads.
    """
    columns = np.asarray(columns, dtype=np.int64)
    rel = enc.released
    names = [enc.columns[c] for c in columns]
    num = np.array([c for _, c in sorted((names[i], columns[i]) for i in range(len(columns))
                                         if enc.is_numeric[columns[i]])], dtype=np.int64)
    cat = columns[~enc.is_numeric[columns]]
    q_num = np.empty((targets.shape[0], num.size))
    c_num = np.empty((rel.shape[0], num.size))
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # an all-missing column: its range is NaN
        for p, c in enumerate(num):
            r_min, r_max = np.nanmin(rel[:, c]), np.nanmax(rel[:, c])
            t_min, t_max = np.nanmin(targets[:, c]), np.nanmax(targets[:, c])
            lo = r_min if r_min < t_min else t_min
            hi = r_max if r_max > t_max else t_max
            span = hi - lo
            if span == 0:
                span = 1.0
            q_num[:, p] = targets[:, c] / span
            c_num[:, p] = rel[:, c] / span
    q_cat = np.where(np.isnan(targets[:, cat]), -1, targets[:, cat]).astype(np.int64)
    c_cat = np.where(np.isnan(rel[:, cat]), -1, rel[:, cat]).astype(np.int64)
    return q_num, np.ascontiguousarray(q_cat), c_num, np.ascontiguousarray(c_cat)


def nearest_released_groups(enc: EncodedFrames, groups: Sequence[np.ndarray], columns: np.ndarray, k: int,
                            rng: np.random.Generator, tie_break: str = "random") -> tuple[np.ndarray, np.ndarray]:
    """:func:`nearest_released` for several groups of targets (the original and the control
    targets), stacked in the groups' order.

    With ``tie_break="quicksort"`` each group is searched on its own, as Anonymeter searches
    the original and the control targets in two calls (the numeric ranges cover the released
    records and the group); otherwise all groups are searched in one call.
    """
    if tie_break == "quicksort":
        parts = [nearest_released(enc, g, columns, k, rng, tie_break) for g in groups]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    return nearest_released(enc, np.concatenate(list(groups)), columns, k, rng, tie_break)
