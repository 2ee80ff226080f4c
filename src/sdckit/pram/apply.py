"""Applying PRAM to integer codes: one variable, several independently, several jointly, by stratum.

Each record's category k is replaced by a draw from row k of P (seed 000 section 1:
P(X(i) = l | xi(i) = k) = P_kl, independently over records). The draw is an inverse CDF
on per-row cumulative tables: one uniform u_i per record, released category = the first l
with cumsum(P_k)[l] > u_i, found by binary search inside the row's non-zero entries (a
numba loop, O(log nnz_k) per record). Zero-probability transitions can never be drawn;
missing values (code -1) are copied unchanged.

Streams: every (variable group, stratum) gets its own child generator from
:func:`sdckit._random.spawn_keyed` (children of the root in the order of the groups, then the
strata), so variables and strata never share random numbers and a run is reproduced exactly
from the same root.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from .._random import RngLike, as_generator, seed_sequence, spawn_keyed
from ..errors import InputError
from .builders import joint_codes
from .matrix import TransitionMatrix


@dataclass(frozen=True)
class SamplingTable:
    """Per-row cumulative probabilities of P's non-zero entries (CSR layout)."""

    indptr: np.ndarray    # (L + 1,) int64
    indices: np.ndarray   # released category of each entry
    cumulative: np.ndarray  # running sum within the row; the row's last entry is exactly 1.0

    @classmethod
    def from_matrix(cls, matrix: TransitionMatrix) -> "SamplingTable":
        P = matrix.P if matrix.is_sparse else sp.csr_matrix(matrix.P)
        P = sp.csr_matrix(P)
        P.sort_indices()
        P.eliminate_zeros()
        indptr = P.indptr.astype(np.int64)
        cum = np.empty(P.data.size)
        for_rows = np.diff(indptr)
        if (for_rows == 0).any():  # impossible for a validated matrix (rows sum to 1)
            raise InputError(f"{matrix.name}: a row of P has no non-zero entry.")
        # cumulative sum per row: global cumsum minus the row's offset, computed stably
        row_of = np.repeat(np.arange(P.shape[0]), for_rows)
        cum[:] = P.data
        np.cumsum(cum, out=cum)
        start = np.concatenate(([0.0], cum[indptr[1:-1] - 1]))
        cum -= start[row_of]
        # renormalise each row so that its last entry is exactly 1 (rows sum to 1 within 1e-12)
        cum /= cum[indptr[1:] - 1][row_of]
        cum[indptr[1:] - 1] = 1.0
        return cls(indptr, P.indices.astype(np.int64), cum)


@numba.njit(cache=True, nogil=True)
def _draw(codes, u, indptr, indices, cumulative, out):  # pragma: no cover - compiled
    """out[i] = indices[first k in row codes[i] with cumulative[k] > u[i]]; -1 stays -1."""
    for i in range(codes.shape[0]):
        c = codes[i]
        if c < 0:
            out[i] = c
            continue
        lo = indptr[c]
        hi = indptr[c + 1] - 1
        x = u[i]
        while lo < hi:
            mid = (lo + hi) >> 1
            if cumulative[mid] > x:
                hi = mid
            else:
                lo = mid + 1
        out[i] = indices[lo]


def pram_codes(codes: np.ndarray, matrix: TransitionMatrix | SamplingTable, rng: RngLike = None, *,
               table: SamplingTable | None = None) -> np.ndarray:
    """PRAM one code array: each code k >= 0 becomes a draw from row k of P; -1 stays.

    Parameters
    ----------
    codes : array of int
        Category codes 0..L-1 (-1 = missing). Never modified.
    matrix : TransitionMatrix
        P over the same codes.
    rng : int, Generator, SeedSequence or None
        One uniform per record is drawn from it (n draws, missing included, so the stream
        does not depend on where the missing values are).

    Returns
    -------
    numpy.ndarray
        Released codes, same dtype as ``codes`` (int32 or int64).
    """
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu":
        raise InputError(f"PRAM works on integer category codes; got dtype {codes.dtype}.")
    if table is None:
        table = matrix if isinstance(matrix, SamplingTable) else SamplingTable.from_matrix(matrix)
    L = table.indptr.size - 1
    if codes.size and codes.max() >= L:
        raise InputError(f"PRAM: code {int(codes.max())} is outside the matrix's {L} categories.")
    gen = as_generator(rng)
    u = gen.random(codes.size)
    out = np.empty(codes.shape, dtype=codes.dtype if codes.dtype.kind == "i" else np.int64)
    _draw(codes.reshape(-1), u, table.indptr, table.indices, table.cumulative, out.reshape(-1))
    return out


def transition_counts(before: np.ndarray, after: np.ndarray, n_categories: int):
    """Counts of (original, released) pairs over records with a value: dense (L, L) up to 4096
    categories, scipy.sparse COO beyond."""
    keep = before >= 0
    b = before[keep].astype(np.int64)
    a = after[keep].astype(np.int64)
    if n_categories <= 4096:
        return np.bincount(b * n_categories + a, minlength=n_categories**2).reshape(n_categories, n_categories)
    pair, cnt = np.unique(b * n_categories + a, return_counts=True)
    return sp.coo_matrix((cnt, (pair // n_categories, pair % n_categories)), shape=(n_categories, n_categories))


def group_names(groups: Sequence[Sequence[str]], strata: Sequence[str] = ("all",)) -> list[str]:
    """Stream names: one per (variable group, stratum), e.g. ``"sex x age|stratum=3"``."""
    return [" x ".join(g) + (f"|stratum={s}" if s != "all" else "") for g in groups for s in strata]


def pram_frame_codes(codes: Mapping[str, np.ndarray], shapes: Mapping[str, int],
                     matrices: Mapping[tuple, TransitionMatrix], rng: RngLike = None, *,
                     joint: Sequence[Sequence[str]] | None = None,
                     strata: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """PRAM several variables: independently (one matrix each) or in joint groups, by stratum.

    Parameters
    ----------
    codes : {variable: int array}
        Codes of each variable (-1 missing); never modified.
    shapes : {variable: number of categories}
    matrices : {(group, stratum): TransitionMatrix}
        ``group`` is a tuple of variable names (one name when independent), ``stratum`` the
        stratum id (``"all"`` without strata). A joint matrix is over the C-order joint space.
    joint : list of groups, optional
        Variable groups PRAMmed jointly; default each variable alone.
    strata : int array, optional
        Stratum id (0..S-1) of every record.

    Returns
    -------
    dict
        Released codes per variable. A record with a missing value in a joint group keeps
        all of that group's values.
    """
    names = list(codes)
    groups = [tuple(g) for g in joint] if joint else [(v,) for v in names]
    n = len(next(iter(codes.values())))
    if strata is None:
        stratum_ids, strata = ["all"], np.zeros(n, dtype=np.int64)
    else:
        stratum_ids = list(range(int(strata.max()) + 1)) if n else []
    streams = _streams(rng, groups, stratum_ids)
    out = {v: np.array(codes[v], copy=True) for v in names}
    for g in groups:
        shape = tuple(shapes[v] for v in g)
        jc = joint_codes([np.asarray(codes[v]) for v in g], shape)
        released = jc.copy()
        for s_i, s in enumerate(stratum_ids):
            rows = slice(None) if s == "all" else np.flatnonzero(strata == s_i)
            m = matrices[(g, s)]
            released[rows] = pram_codes(jc[rows], m, streams[(g, s)])
        if len(g) == 1:
            out[g[0]] = released.astype(out[g[0]].dtype, copy=False)
        else:
            miss = released < 0
            parts = np.unravel_index(np.where(miss, 0, released), shape)
            for v, part in zip(g, parts):
                out[v] = np.where(miss, np.asarray(codes[v]), part).astype(out[v].dtype, copy=False)
    return out


def _streams(rng: RngLike, groups, stratum_ids) -> dict:
    """One child generator per (group, stratum) from a fresh copy of the root SeedSequence
    (spawning from a copy keeps the same rng giving the same streams on every call)."""
    ss, _ = seed_sequence(rng)
    root = np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size)
    keys = [(g, s) for g in groups for s in stratum_ids]
    named = spawn_keyed(root, group_names(groups, stratum_ids))
    return dict(zip(keys, named.values()))
