"""Applying PRAM to integer codes: one variable, several independently, several jointly, by stratum.

Each record's category k is replaced by a draw from row k of P (Cator, Hensbergen and Rozenholc, section 1:
P(X(i) = l | xi(i) = k) = P_kl, independently over records). The draw uses Walker's alias
tables of each row's non-zero entries: one uniform u_i per record gives the entry (integer
part of u_i m) and the choice between it and its alias (fractional part), O(1) per record in
a numba loop over integer codes. Zero-probability transitions can never be drawn; missing
values (code -1) are copied unchanged.

Streams: every variable group gets its own child of the root SeedSequence (in the order of
the groups), and record i takes uniform i of it through :func:`sdckit._random.block_uniforms`
(blocks of rows, each from its own child stream). Variables never share random numbers, a run
is reproduced exactly from the same root, and the Dask engine, which draws the same blocks at
each partition's global row offset, releases bit for bit the same codes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from .._random import RngLike, as_generator, block_uniforms, seed_sequence
from ..errors import InputError
from .builders import joint_codes
from .matrix import TransitionMatrix


@dataclass(frozen=True)
class SamplingTable:
    """Walker's alias tables of P's non-zero entries, row by row (CSR layout).

    Row k with m non-zero entries: draw u, x = u m, j = floor(x), f = x - j; the released
    category is ``indices[e]`` if f < ``prob[e]`` else ``indices[alias[e]]`` (e = indptr[k] + j).
    Only non-zero entries are in the table, so a zero-probability move can never be drawn.
    """

    indptr: np.ndarray    # (L + 1,) int64
    indices: np.ndarray   # released category of each entry
    prob: np.ndarray      # probability of keeping entry e rather than its alias
    alias: np.ndarray     # position (into indices) of the alias of entry e

    @classmethod
    def from_matrix(cls, matrix: TransitionMatrix) -> SamplingTable:
        P = sp.csr_matrix(matrix.P if matrix.is_sparse else sp.csr_matrix(matrix.P), copy=True)
        P.sort_indices()
        P.eliminate_zeros()
        indptr = P.indptr.astype(np.int64)
        if (np.diff(indptr) == 0).any():  # impossible for a validated matrix (rows sum to 1)
            raise InputError(f"{matrix.name}: a row of P has no non-zero entry.")
        prob = np.empty(P.nnz)
        alias = np.empty(P.nnz, dtype=np.int64)
        _alias_build(indptr, P.data.astype(np.float64), prob, alias, int(np.diff(indptr).max()))
        return cls(indptr, P.indices.astype(np.int64), prob, alias)


@numba.njit(cache=True)
def _alias_build(indptr, data, prob, alias, max_row):  # pragma: no cover - compiled
    """Vose's alias method for every row (Walker 1977; Vose 1991), O(non-zeros)."""
    small = np.empty(max_row, dtype=np.int64)
    large = np.empty(max_row, dtype=np.int64)
    q = np.empty(max_row)
    for r in range(indptr.shape[0] - 1):
        lo = indptr[r]
        k = indptr[r + 1] - lo
        tot = 0.0
        for i in range(k):
            tot += data[lo + i]
        ns = 0
        nl = 0
        for i in range(k):
            q[i] = data[lo + i] * k / tot
            prob[lo + i] = 1.0
            alias[lo + i] = lo + i
            if q[i] < 1.0:
                small[ns] = i
                ns += 1
            else:
                large[nl] = i
                nl += 1
        while ns > 0 and nl > 0:
            ns -= 1
            s = small[ns]
            nl -= 1
            g = large[nl]
            prob[lo + s] = q[s]
            alias[lo + s] = lo + g
            q[g] = (q[g] + q[s]) - 1.0
            if q[g] < 1.0:
                small[ns] = g
                ns += 1
            else:
                large[nl] = g
                nl += 1
        # entries left on either stack keep probability 1 (their q is 1 up to round-off)


@numba.njit(cache=True, nogil=True)
def _draw(codes, u, indptr, indices, prob, alias, out):  # pragma: no cover - compiled
    """out[i] = an alias-table draw from row codes[i] with the uniform u[i]; -1 stays -1."""
    for i in range(codes.shape[0]):
        c = codes[i]
        if c < 0:
            out[i] = c
            continue
        lo = indptr[c]
        x = u[i] * (indptr[c + 1] - lo)
        j = int(x)
        e = lo + j
        out[i] = indices[e] if x - j < prob[e] else indices[alias[e]]


def pram_codes(codes: np.ndarray, matrix: TransitionMatrix | SamplingTable, rng: RngLike = None, *,
               table: SamplingTable | None = None, uniforms: np.ndarray | None = None) -> np.ndarray:
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
    uniforms : array of float, optional
        The uniforms to use instead (one per record; ``rng`` is then ignored): how
        :func:`pram_frame_codes` and the Dask engine make draws that do not depend on the
        partitioning (:func:`sdckit._random.block_uniforms`).

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
    u = as_generator(rng).random(codes.size) if uniforms is None else np.asarray(uniforms, dtype=np.float64)
    if u.size != codes.size:
        raise InputError(f"PRAM: {u.size} uniforms for {codes.size} records.")
    out = np.empty(codes.shape, dtype=codes.dtype if codes.dtype.kind == "i" else np.int64)
    _draw(codes.reshape(-1), u, table.indptr, table.indices, table.prob, table.alias, out.reshape(-1))
    return out


@numba.njit(cache=True, nogil=True)
def _pair_counts(before, after, L, out):  # pragma: no cover - compiled
    """out[k * L + l] += 1 for every record with before = k >= 0 and after = l (one pass);
    False (counts incomplete) at the first code outside 0..L-1."""
    for i in range(before.shape[0]):
        k = before[i]
        if k >= 0:
            a = after[i]
            if k >= L or a < 0 or a >= L:
                return False
            out[k * L + a] += 1
    return True


@numba.njit(cache=True, nogil=True)
def _code_counts(codes, L, out):  # pragma: no cover - compiled
    """out[k] += 1 for every record with code k >= 0 (missing -1 skipped; one pass); False
    at the first code >= L."""
    for i in range(codes.shape[0]):
        k = codes[i]
        if k >= 0:
            if k >= L:
                return False
            out[k] += 1
    return True


def code_counts(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """Records per code 0..L-1 (int64), missing values (-1) left out: ``np.bincount`` of the
    observed codes in one pass without a mask or a copy."""
    codes = np.asarray(codes)
    L = int(n_categories)
    out = np.zeros(L, dtype=np.int64)
    if codes.dtype.kind not in "iu":
        raise InputError(f"category codes must be integers; got dtype {codes.dtype}.")
    if codes.dtype.kind == "u":
        codes = codes.astype(np.int64)
    if not _code_counts(codes.reshape(-1), L, out):
        raise InputError(f"code {int(codes.max())} is outside the {L} categories.")
    return out


def transition_counts(before: np.ndarray, after: np.ndarray, n_categories: int):
    """Counts of (original, released) pairs over records with a value: dense (L, L) up to 4096
    categories (one pass over the codes), scipy.sparse COO beyond."""
    before, after = np.asarray(before), np.asarray(after)
    if (n_categories <= 4096 and before.ndim == 1 and before.shape == after.shape
            and before.dtype.kind == "i" and after.dtype.kind == "i"):
        L = int(n_categories)
        out = np.zeros(L * L, dtype=np.int64)
        if _pair_counts(before, after, L, out):
            return out.reshape(L, L)
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
    groups = [tuple(g) for g in joint] if joint else [(v,) for v in codes]
    n = len(next(iter(codes.values())))
    if strata is None:
        stratum_ids, strata = ["all"], np.zeros(n, dtype=np.int64)
    else:
        stratum_ids = list(range(int(strata.max()) + 1)) if n else []
    # one stream per variable group; record i takes uniform i of it (block_uniforms at its
    # global row), so the draws do not depend on strata order, partitions or workers
    ss, _ = seed_sequence(rng)
    root = np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size)
    group_ss = dict(zip(groups, root.spawn(len(groups))))
    out: dict[str, np.ndarray] = {}
    for g in groups:
        shape = tuple(shapes[v] for v in g)
        jc = joint_codes([np.asarray(codes[v]) for v in g], shape)
        u = block_uniforms(group_ss[g], 0, n)
        if stratum_ids == ["all"]:
            released = pram_codes(jc, matrices[(g, "all")], uniforms=u)
        else:
            released = np.empty_like(jc)
            for s_i, s in enumerate(stratum_ids):
                rows = np.flatnonzero(strata == s_i)
                released[rows] = pram_codes(jc[rows], matrices[(g, s)], uniforms=u[rows])
        if len(g) == 1:
            out[g[0]] = released.astype(np.asarray(codes[g[0]]).dtype, copy=False)
        else:
            miss = released < 0
            parts = np.unravel_index(np.where(miss, 0, released), shape)
            for v, part in zip(g, parts):
                c = np.asarray(codes[v])
                out[v] = np.where(miss, c, part).astype(c.dtype, copy=False)
    return out


