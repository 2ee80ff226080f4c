"""Nearest released records of target records under the mixed distance.

Ties between equally near released records are broken at random (``tie_break="random"``, the
default) or by the lowest row of the released file (``"first"``, deterministic: the answer
depends only on the files and their row order). Anonymeter (``anonymeter/neighbors/
mixed_types_kneighbors.py``, ``_nearest_neighbors``) keeps ``dist_ix.argsort()[:n_neighbors]``,
numba's default (quicksort, not stable) sort of the distances: its choice among tied records is
neither the lowest row nor a seeded draw, so neither rule reproduces it record by record.
"""

from __future__ import annotations

import numpy as np

from .encode import EncodedFrames, discriminating_order
from .kernels import nearest

#: how ties between equally near released records are broken
TIE_BREAKS = ("random", "first")


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
    tie_break : {"random", "first"}
        ``"random"``: the released rows are searched in a random order and among records at
        the same distance the first one met is kept; ``"first"``: the lowest released row is
        kept.

    Returns
    -------
    (indices, distances)
        Rows of ``enc.released``, shape (n_targets, k), nearest first.
    """
    rel = enc.released
    n = rel.shape[0]
    k = max(1, min(int(k), n))
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
