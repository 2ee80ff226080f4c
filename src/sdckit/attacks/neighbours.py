"""Nearest released records of target records under the mixed distance, ties broken at random."""

from __future__ import annotations

import numpy as np

from .encode import EncodedFrames, discriminating_order
from .kernels import nearest


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
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
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
        Breaks ties: the released rows are searched in a random order, and among records at
        the same distance the first one met is kept.

    Returns
    -------
    (indices, distances)
        Rows of ``enc.released``, shape (n_targets, k), nearest first.
    """
    rel = enc.released
    n = rel.shape[0]
    k = max(1, min(int(k), n))
    order = discriminating_order(rel, columns, enc.is_numeric, enc.inv_range, rng)
    perm = rng.permutation(n)
    dtype = code_dtype(enc)
    c_cat, c_num = split_kinds(rel[perm], order, enc.is_numeric, enc.inv_range, dtype)
    q_cat, q_num = split_kinds(targets, order, enc.is_numeric, enc.inv_range, dtype)
    idx, dist = nearest(q_cat, q_num, c_cat, c_num, k)
    return perm[idx], dist
