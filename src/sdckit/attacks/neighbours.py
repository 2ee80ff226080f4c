"""Nearest released records of target records under the mixed distance, ties broken at random."""

from __future__ import annotations

import numpy as np

from .encode import EncodedFrames, discriminating_order, missing_as_code
from .kernels import nearest


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
    is_num = enc.is_numeric[order]
    candidates = missing_as_code(rel[np.ix_(perm, order)], is_num, copy=False)  # a fresh array already
    queries = missing_as_code(targets[:, order], is_num, copy=False)
    idx, dist = nearest(queries, candidates, is_num, enc.inv_range[order], k)
    return perm[idx], dist
