"""SUDA2: minimal sample uniques, SUDA scores and DIS-SUDA scores.

A *minimal sample unique* (MSU) of a record is a set S of key variables on which the record
is unique in the sample (f_S = 1) while it is unique on no proper subset of S. A record
with MSUs of small size is a *special unique*: few of its values single it out. SUDA scores
a record by its MSUs, and DIS-SUDA turns the scores into a per-record probability that a
match of a sample unique to the population is correct.

A record has an MSU on S when it is unique on S and on none of the subsets S minus one
variable (uniqueness is inherited by supersets, so this tests every proper subset). This
finds exactly the MSUs of the recursive SUDA2 algorithm (Manning, Haglin & Keane 2008).
Two searches give the same MSUs: the default depth-first search over the variable subsets
in prefix order, which splits only the distinct key combinations still sharing their
projection with another one and records uniqueness as bit sets (see the comment above
``_split``), and the level-wise reference (``search="levelwise"``: one ``bincount`` per
subset over every distinct combination).

Scores (sdcMicro ``suda2``, Elliot et al. 2002):

* ``weights="elliot"`` (default, sdcMicro >= 5.0.3): an MSU of size s adds (M - s)! to the
  record's score, M the number of key variables;
* ``weights="ihsn"`` (the older IHSN implementation, sdcMicro ``original_scores=FALSE``):
  it adds (2^(M-s) - 1) / C(M, s).

Per-variable contribution of a record: the sum of the weights of its MSUs that contain the
variable, divided by the record's score (sdcMicro's ``contributionPercent``). DIS-SUDA
(sdcMicro's C++ code): with U the number of sample uniques, P the number of records in
pairs (f_k = 2) and pi the sampling fraction,

    DIS = U pi / (U pi + P (1 - pi)),
    Q = 1 + (8 - M) / 20,  A = sum_{i: score_i > 0} score_i^(-Q),
    dis_i = 1 / (1 + (U / DIS - U) / (score_i^Q A))   (0 when score_i = 0).

References
----------
Elliot, M. J., Manning, A. M. and Ford, R. W. (2002). A computational algorithm for handling
the special uniques problem. International Journal of Uncertainty, Fuzziness and
Knowledge-Based Systems 10(5), 493-509.

Elliot, M. J., Skinner, C. J. and Dale, A. (1998). Special uniques, random uniques and sticky
populations. International Statistical Review 66(3), 291-307.

Manning, A. M., Haglin, D. J. and Keane, J. A. (2008). A recursive search algorithm for
statistical disclosure assessment. Data Mining and Knowledge Discovery 16, 165-196.

Skinner, C. J. and Elliot, M. J. (2002). A measure of disclosure risk for microdata. JRSS B
64(4), 855-867.

Notes
-----
Where this differs from sdcMicro: (1) the maximum MSU size is honoured (sdcMicro's C++ code
resets it to the number of variables), while the score weights keep M = the number of key
variables; (2) with fewer than three key variables sdcMicro pads the data with constant
dummy columns, which changes M in the weights; here M is the true number of keys; (3) U in
DIS is the number of sample uniques (sdcMicro's C++ counts only uniques alone in their hash
bucket, an undercount). A missing key value is never part of an MSU of its record (as in
sdcMicro), and counts as its own value in the frequencies of the other records.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit

from .._validation import check_choice, check_float, check_int
from ..errors import InputError, ParameterError
from ..result import ResultDisplay
from .frequencies import DENSE_LIMIT, frequencies_from_codes

SCORE_WEIGHTS = ("elliot", "ihsn")


def msu_weights(n_keys: int, scheme: str = "elliot") -> np.ndarray:
    """Score weight of an MSU of size s = 1..M (index s-1)."""
    check_choice("suda2", "weights", scheme, SCORE_WEIGHTS)
    M = n_keys
    if scheme == "elliot":
        return np.array([float(math.factorial(M - s)) for s in range(1, M + 1)])
    return np.array([(2.0 ** (M - s) - 1.0) / math.comb(M, s) for s in range(1, M + 1)])


def dis_suda_scores(score: np.ndarray, n_uniques: int, n_pairs: int, dis_fraction: float,
                    n_keys: int) -> tuple[np.ndarray, float]:
    """DIS-SUDA score of each record and the file-level DIS probability (see module doc)."""
    score = np.asarray(score, dtype=np.float64)
    out = np.zeros_like(score)
    pos = score > 0
    if n_uniques == 0 or not pos.any():
        return out, 0.0 if n_uniques == 0 else 1.0
    U, P, pi = float(n_uniques), float(n_pairs), float(dis_fraction)
    dis = U * pi / (U * pi + P * (1.0 - pi))           # DIS
    Q = 1.0 + (8.0 - n_keys) / 20.0                    # Q
    sq = score[pos] ** Q
    adj = np.sum(1.0 / sq)                             # A
    out[pos] = 1.0 / (1.0 + (U / dis - U) / (sq * adj))
    return out, dis


@dataclass(frozen=True)
class SudaResult(ResultDisplay):
    """MSUs, SUDA and DIS-SUDA scores of each record.

    Attributes
    ----------
    score : ndarray (n,)
        SUDA score (0 for a record without MSU).
    dis_score : ndarray (n,)
        DIS-SUDA score.
    msu_counts : ndarray (n, max_size)
        Number of MSUs of each size (column s-1 for size s).
    contributions : ndarray (n, M)
        Share of each variable in the record's score (sum of the weights of the MSUs holding
        the variable / score); 0 for records without MSU.
    variables : tuple of str
    max_size : int
    weights : ndarray (M,)
        Weight of an MSU of size s at index s-1.
    dis : float
        File-level DIS probability.
    dis_fraction : float
    """

    score: np.ndarray
    dis_score: np.ndarray
    msu_counts: np.ndarray
    contributions: np.ndarray
    variables: tuple
    max_size: int
    weights: np.ndarray
    dis: float
    dis_fraction: float
    weight_scheme: str = "elliot"
    extra: dict = field(default_factory=dict)

    @property
    def n_msu_by_size(self) -> dict[str, int]:
        return {str(s + 1): int(self.msu_counts[:, s].sum()) for s in range(self.max_size)}

    def attribute_contributions(self) -> dict[str, float]:
        """Percent of the total SUDA score contributed by each variable (sdcMicro's table)."""
        total = float(self.score.sum())
        if total == 0:
            return {v: 0.0 for v in self.variables}
        raw = (self.contributions * self.score[:, None]).sum(axis=0)
        return {v: float(100.0 * raw[j] / total) for j, v in enumerate(self.variables)}

    def summary(self) -> dict:
        return {"n_scored": int((self.score > 0).sum()), "sum_scores": float(self.score.sum()),
                "max_score": float(self.score.max()) if self.score.size else 0.0,
                "sum_dis": float(self.dis_score.sum()),
                "n_msu": int(self.msu_counts.sum()), "n_msu_by_size": self.n_msu_by_size,
                "max_size": self.max_size, "weights": self.weight_scheme,
                "dis_fraction": self.dis_fraction, "dis": self.dis,
                "attribute_contributions": self.attribute_contributions()}


def _densify(code: np.ndarray, product: int) -> tuple[np.ndarray, int]:
    if product <= max(DENSE_LIMIT >> 2, 4 * code.shape[0]):
        present = np.bincount(code, minlength=product) > 0
        remap = np.cumsum(present, dtype=np.int64) - 1
        return remap[code], int(present.sum())
    ids, uniq = pd.factorize(code, sort=False)
    return ids.astype(np.int64, copy=False), len(uniq)


def _msus_levelwise(gc, radix, gcount, cand, K, w):
    """MSU counts and contributions of the candidates by the level-wise search (reference).

    Every subset S of size s is counted on all groups (one ``bincount``); the flags of the
    subsets of size s - 1 are kept for the test "unique on no S - {v}".
    """
    M = len(gc)
    nc = cand.size
    observed = [c > 0 for c in gc]
    c_msu = np.zeros((nc, K), dtype=np.int64)
    c_contrib = np.zeros((nc, M), dtype=np.float64)
    c_observed = [o[cand] for o in observed]
    if nc:
        prev_dense: dict[tuple, tuple[np.ndarray, int]] = {}
        prev_unique: dict[tuple, np.ndarray] = {}
        for s in range(1, K + 1):
            cur_dense: dict[tuple, tuple[np.ndarray, int]] = {}
            cur_unique: dict[tuple, np.ndarray] = {}
            for S in itertools.combinations(range(M), s):
                last = S[-1]
                if s == 1:
                    dense, ng = gc[last], radix[last]
                else:
                    pd_, png = prev_dense[S[:-1]]
                    # mixed radix on the parent's dense ids keeps the code space small
                    dense, ng = _densify(pd_ * radix[last] + gc[last], png * radix[last])
                cnt = np.bincount(dense, weights=gcount, minlength=ng)
                uniq = cnt[dense[cand]] == 1                # f_S = 1
                for v in S:  # a missing value is never part of the record's own MSU
                    uniq &= c_observed[v]
                if s < K:
                    cur_dense[S] = (dense, ng)
                cur_unique[S] = uniq
                if not uniq.any():
                    continue
                msu = uniq.copy()
                if s > 1:   # unique on no subset S - {v} (hence on no proper subset)
                    for drop in range(s):
                        msu &= ~prev_unique[S[:drop] + S[drop + 1:]]
                if msu.any():
                    c_msu[msu, s - 1] += 1                 # one MSU of size s
                    c_contrib[np.ix_(msu, list(S))] += w[s - 1]
            prev_dense, prev_unique = cur_dense, cur_unique
    return c_msu, c_contrib


# -- the search: prefix depth-first over variable subsets, pruned to the non-unique groups ---
#
# Uniqueness on S is inherited by every superset, so a group unique on S can be dropped from
# the counts of S's descendants (it collides with no other group there). Going depth-first,
# S + {v} only recounts the groups still sharing their S-projection ("active"). Pass 1
# records, for each subset S, the candidate groups that become unique at S (N_S, bits);
# a group unique on S is unique on its prefix P = S minus its last variable or becomes
# unique at S, so U_S = U_P | N_S. Pass 2 reads the MSUs off the bits, word by word:
#     MSU_S = U_S & Obs_S & ~OR_{d in S} U_{S - d}
# (Obs_S: observed on every variable of S; a record observed on S is observed on S - d, so
# the test on S - d needs only the count), which is exactly the level-wise test above.
#
# The active groups of a subset are kept as rows (the group's codes of every variable and
# its kind, copied along), in blocks of equal S-projection: a split reads its parent's rows
# in order instead of gathering codes at random group ids.

@njit(cache=True)
def _split(R, R64, starts, nb, v, radix, Rc, R64c, stc, N, child, kind_col, write):  # pragma: no cover
    """Split the blocks of active rows on S by column v into the rows of S + {v}.

    A row (``R``, codes typed; ``R64``, the same bytes as uint64 words) holds a group's codes
    of every variable (0 = missing), in column ``kind_col`` 1 for a candidate (a group of
    one record) or 2 (a group of two or more), and the group id in the top 32 bits of its
    last word. ``starts[:nb + 1]`` are the block offsets. Within a block the rows are
    bucketed by their code of v (a counting sort over the codes present, stable): the
    buckets are the blocks of S + {v}. A bucket holding a single candidate and nothing else
    is unique on S + {v} (bit set in ``N[:, child]``); a bucket without a candidate can no
    longer make one non-unique and is dropped. Writes the rows and block offsets of S + {v}
    into ``Rc`` / ``R64c`` and ``stc``; returns (number of rows, number of blocks).

    Two shortcuts, neither changing a bit of ``N``: without ``write`` (S + {v} is not searched
    further) only the bits are set; and a bucket of two rows that agree on every variable
    after v is dropped: the subtree of S + {v} adds only those variables, so neither row
    can ever be told apart from the other there (no bit to set).
    """
    M = kind_col
    Ww = R64.shape[1]
    lo32 = np.int64(0xFFFFFFFF)
    acc = np.zeros(radix, dtype=np.int64)       # rows + (candidates << 32) per code
    pos = np.empty(radix, dtype=np.int64)
    seen = np.empty(radix, dtype=np.int64)
    first = np.empty(radix, dtype=np.int64)     # first and last row of each bucket
    last = np.empty(radix, dtype=np.int64)
    one = np.uint64(1)
    o = 0
    nbo = 0
    for b in range(nb):
        lo = starts[b]
        hi = starts[b + 1]
        nd = 0
        for t in range(lo, hi):
            c = R[t, v]
            if acc[c] == 0:
                seen[nd] = c
                nd += 1
                first[c] = t
            last[c] = t
            acc[c] += 1 + (np.int64(2 - R[t, kind_col]) << 32)
        n_unique = 0
        for j in range(nd):
            c = seen[j]
            a = acc[c]
            size = a & lo32
            ncand = a >> 32
            if ncand > 0 and 2 * size - ncand >= 2:  # a candidate sharing its bucket: kept
                pos[c] = -1
                if write:
                    if size == 2:
                        same = True
                        x, y = first[c], last[c]
                        for u in range(v + 1, M):
                            if R[x, u] != R[y, u]:
                                same = False
                                break
                        if same:
                            continue
                    pos[c] = o
                    stc[nbo] = o
                    nbo += 1
                    o += size
            elif size == 1 and ncand == 1:           # the bucket's one record: unique on S + {v}
                pos[c] = -2
                n_unique += 1
            else:
                pos[c] = -1
        if write or n_unique > 0:
            for t in range(lo, hi):
                c = R[t, v]
                q = pos[c]
                if q >= 0:
                    for j in range(Ww):
                        R64c[q, j] = R64[t, j]
                    pos[c] = q + 1
                elif q == -2:
                    g = R64[t, Ww - 1] >> np.uint64(32)
                    N[g >> np.uint64(6), child] |= one << (g & np.uint64(63))
        for j in range(nd):
            acc[seen[j]] = 0
    stc[nbo] = o
    return o, nbo


@njit(cache=True)
def _search(Rb, R64b, Sb, n0, radix, K, N):  # pragma: no cover - compiled
    """Pass 1: the prefix depth-first search over the subsets of up to K variables.

    ``Rb`` / ``R64b`` (depth, rows, ...): row buffers of the node at each depth (two views of
    the same bytes, see :func:`_split`), depth 0 holding the ``n0`` groups in one block;
    ``Sb`` (depth, rows + 1) the block offsets. M = ``radix.size`` variables. ``N`` (words,
    2^M) receives the bits of the groups becoming unique at each subset.
    """
    M = radix.shape[0]
    kind_col = M
    nrow = np.zeros(K + 1, dtype=np.int64)
    nblk = np.zeros(K + 1, dtype=np.int64)
    mask = np.zeros(K + 1, dtype=np.int64)    # the subset at each depth
    nxt = np.zeros(K + 1, dtype=np.int64)     # the next variable to add at each depth
    Sb[0, 0] = 0
    Sb[0, 1] = n0
    nrow[0] = n0
    nblk[0] = 1
    d = 0
    while d >= 0:
        v = nxt[d]
        if v >= M or nrow[d] == 0:
            d -= 1
            continue
        nxt[d] = v + 1
        child = mask[d] | (1 << v)
        deeper = d + 1 < K and v + 1 < M            # S + {v} has subsets to search below it
        o, nbo = _split(Rb[d], R64b[d], Sb[d], nblk[d], v, radix[v], Rb[d + 1], R64b[d + 1], Sb[d + 1],
                        N, child, kind_col, deeper)
        if deeper and o > 0:
            d += 1
            mask[d] = child
            nxt[d] = v + 1
            nrow[d] = o
            nblk[d] = nbo


@njit(cache=True, inline="always")
def _lowest_bit(x):  # pragma: no cover - compiled
    """Index of the lowest set bit of a non-zero uint64 (binary search over its halves)."""
    n = 0
    if (x & np.uint64(0xFFFFFFFF)) == np.uint64(0):
        n += 32
        x >>= np.uint64(32)
    if (x & np.uint64(0xFFFF)) == np.uint64(0):
        n += 16
        x >>= np.uint64(16)
    if (x & np.uint64(0xFF)) == np.uint64(0):
        n += 8
        x >>= np.uint64(8)
    if (x & np.uint64(0xF)) == np.uint64(0):
        n += 4
        x >>= np.uint64(4)
    if (x & np.uint64(0x3)) == np.uint64(0):
        n += 2
        x >>= np.uint64(2)
    if (x & np.uint64(0x1)) == np.uint64(0):
        n += 1
    return n


@njit(cache=True)
def _read_msus(N, K, obs_bits, w, g_msu, g_contrib):  # pragma: no cover - compiled
    """Pass 2, word by word (64 groups): U_S = U_(S minus its last variable) | N_S for every
    subset, then the MSU bits of each subset of up to K variables -> MSU counts by size and
    weighted contributions of the word's groups."""
    nwords, P = N.shape
    M = obs_bits.shape[0]
    G = g_msu.shape[0]
    hib = np.zeros(P, dtype=np.int64)          # the last (highest) variable of each subset
    pc = np.zeros(P, dtype=np.int64)           # its size
    for S in range(1, P):
        h = 0
        while (S >> (h + 1)) != 0:
            h += 1
        hib[S] = h
        pc[S] = pc[S ^ (1 << h)] + 1
    U = np.zeros(P, dtype=np.uint64)
    O = np.zeros(P, dtype=np.uint64)
    one = np.uint64(1)
    allbits = ~np.uint64(0)
    cntl = np.zeros((64, K), dtype=np.int64)
    accl = np.zeros((64, M))
    for wd in range(nwords):
        O[0] = allbits
        any_new = np.uint64(0)
        for S in range(1, P):
            h = hib[S]
            U[S] = U[S ^ (1 << h)] | N[wd, S]
            O[S] = O[S ^ (1 << h)] & obs_bits[h, wd]
            any_new |= N[wd, S]
        if any_new == 0:
            continue
        touched = False
        for S in range(1, P):
            s = pc[S]
            if s > K:
                continue
            x = U[S] & O[S]
            if x == 0:
                continue
            if s > 1:
                for v in range(M):
                    if (S >> v) & 1:
                        x &= ~U[S ^ (1 << v)]
                if x == 0:
                    continue
            touched = True
            ws = w[s - 1]
            while x != np.uint64(0):
                b = _lowest_bit(x)
                x &= x - one
                cntl[b, s - 1] += 1
                for v in range(M):
                    if (S >> v) & 1:
                        accl[b, v] += ws
        if touched:
            for b in range(64):
                g = wd * 64 + b
                if g >= G:
                    break
                for s in range(K):
                    g_msu[g, s] = cntl[b, s]
                    cntl[b, s] = 0
                for v in range(M):
                    g_contrib[g, v] = accl[b, v]
                    accl[b, v] = 0.0


def _msus_depth_first(gc, radix, gcount, cand, K, w):
    """MSU counts (G, K) and contributions (G, M) of every group (zero for non-candidates).

    The variables are searched in decreasing number of categories (the MSUs do not depend on
    the order): splitting on the widest variables first makes the blocks small early, so the
    large subtrees of the prefix search work on few groups.
    """
    M = len(gc)
    G = gcount.shape[0]
    order = sorted(range(M), key=lambda j: -radix[j])
    ctype = np.uint8 if max(radix) <= 255 else (np.uint16 if max(radix) <= 65535 else np.uint32)
    isz = np.dtype(ctype).itemsize
    words = -(-((M + 1) * isz + 4) // 8)               # codes, kind, then the id in the top 4 bytes
    # row buffers of the depths 0..K (np.empty: only the pages a depth uses are touched)
    R64b = np.empty((K + 1, max(G, 1), words), dtype=np.uint64)
    Rb = R64b.view(ctype)
    Sb = np.empty((K + 1, max(G, 1) + 1), dtype=np.int64)
    R0 = Rb[0, :G]
    for i, j in enumerate(order):
        R0[:, i] = gc[j]
    R0[:, M] = np.where(gcount == 1, 1, 2)
    R0[:, M + 1:] = 0
    R64b[0, :G, words - 1] |= np.arange(G, dtype=np.uint64) << np.uint64(32)
    nwords = (G + 63) // 64
    N = np.zeros((nwords, 1 << M), dtype=np.uint64)    # bits by word of groups, then subset
    _search(Rb, R64b, Sb, G, np.array([radix[j] for j in order], dtype=np.int64), K, N)
    del R64b, Rb, Sb, R0
    obs_bits = np.zeros((M, nwords), dtype=np.uint64)
    is_cand = np.zeros(nwords * 64, dtype=bool)
    is_cand[cand] = True
    for i, j in enumerate(order):
        o = np.zeros(nwords * 64, dtype=bool)
        o[:G] = gc[j] > 0
        obs_bits[i] = np.packbits(o & is_cand, bitorder="little").view("<u8").astype(np.uint64)
    g_msu = np.zeros((G, K), dtype=np.int64)
    g_contrib = np.zeros((G, M), dtype=np.float64)
    _read_msus(N, K, obs_bits, np.asarray(w, dtype=np.float64), g_msu, g_contrib)
    out = np.empty_like(g_contrib)
    out[:, order] = g_contrib
    return g_msu, out


def suda2(codes: Sequence[np.ndarray], n_categories: Sequence[int], *,
          max_size: int | None = None, weights: str = "elliot", dis_fraction: float = 0.01,
          names: Sequence[str] | None = None, search: str = "auto") -> SudaResult:
    """SUDA2 on integer key codes: every MSU up to ``max_size``, SUDA and DIS-SUDA scores.

    Parameters
    ----------
    codes : list of int arrays
        One array per key variable (``-1`` = missing).
    n_categories : list of int
    max_size : int, optional
        Largest MSU size searched (default: the number of keys).
    weights : {"elliot", "ihsn"}
        Score weights (see module doc).
    dis_fraction : float in (0, 1)
        Sampling fraction for DIS-SUDA (sdcMicro's ``DisFraction``, default 0.01).
    search : {"auto", "depth_first", "levelwise"}
        ``"depth_first"``: the pruned depth-first search with bit sets (fast; needs
        2^M x G/8 bytes for the bits, G the distinct key combinations, and up to
        (max_size + 1) x G rows of about 24 bytes for the search);
        ``"levelwise"``: one ``bincount`` per subset on every group (the earlier search, kept
        as a reference). Both give the same MSUs. ``"auto"``: depth-first when its tables fit
        in about 2 GB.
    """
    M = len(codes)
    names = tuple(names) if names is not None else tuple(f"key {i}" for i in range(M))
    if max_size is None:
        max_size = M
    K = check_int("suda2", "max_size", max_size, min_value=1)
    if K > M:
        raise ParameterError(
            f"The 'max_size' parameter of suda2 must be an int <= {M} (the number of key "
            f"variables {', '.join(names)}). Got {K}.", param="max_size",
            rule=f"an int in [1, {M}]", value=K)
    check_choice("suda2", "weights", weights, SCORE_WEIGHTS)
    check_choice("suda2", "search", search, ("auto", "depth_first", "levelwise"))
    dis_fraction = check_float("suda2", "dis_fraction", dis_fraction, low=0, high=1,
                               low_open=True, high_open=True)
    w = msu_weights(M, weights)

    base = frequencies_from_codes(codes, n_categories, None, names=list(names))
    n = base.n_records
    G = base.n_combinations
    gcount = base.counts
    rep = np.empty(G, dtype=np.int64)
    rep[base.group] = np.arange(n, dtype=np.int64)
    gc = [np.asarray(c)[rep].astype(np.int64) + 1 for c in codes]  # 0 = missing
    radix = [int(k) + 1 for k in n_categories]

    # only records unique on all keys can have an MSU: flags are kept for them alone
    cand = np.flatnonzero(gcount == 1)
    nc = cand.size
    # depth-first search with bit sets when its tables fit, else the level-wise search
    rowbytes = 8 * -(-((M + 1) * (1 if max(radix) <= 255 else 4) + 4) // 8) + 8
    fits = (1 << M) * ((G + 63) // 64) * 8 + (K + 1) * G * rowbytes <= (2 << 30)
    if search == "depth_first" or (search == "auto" and fits):
        g_msu, g_contrib = _msus_depth_first(gc, radix, gcount, cand, K, w)
    else:
        levels_kept = max(math.comb(M, s) for s in range(1, K + 1))
        need = levels_kept * (G * 8 + nc) * 2
        if need > (6 << 30):
            raise InputError(
                f"suda2 on {M} key variables with MSUs up to size {K} needs about "
                f"{need / 2**30:.0f} GB; give a smaller max_size (e.g. --suda-max-size 4).")
        c_msu, c_contrib = _msus_levelwise(gc, radix, gcount, cand, K, w)
        g_msu = np.zeros((G, K), dtype=np.int64)
        g_contrib = np.zeros((G, M), dtype=np.float64)
        g_msu[cand] = c_msu
        g_contrib[cand] = c_contrib

    g_score = g_msu[:, :K] @ w[:K]
    with np.errstate(invalid="ignore", divide="ignore"):
        g_share = np.where(g_score[:, None] > 0, g_contrib / g_score[:, None], 0.0)
    score = g_score[base.group]
    n_uniques = int((base.fk == 1).sum())
    n_pairs = int((base.fk == 2).sum())
    dis_score, dis = dis_suda_scores(score, n_uniques, n_pairs, dis_fraction, M)
    return SudaResult(score=score, dis_score=dis_score, msu_counts=g_msu[base.group],
                      contributions=g_share[base.group], variables=names, max_size=K,
                      weights=w, dis=float(dis), dis_fraction=dis_fraction, weight_scheme=weights)


def microdata_suda2(microdata, keys: Sequence[str] | None = None, **kwargs) -> SudaResult:
    """:func:`suda2` on the key variables of a :class:`~sdckit.Microdata`."""
    keys = list(microdata.key_vars if keys is None else keys)
    return suda2([microdata.codes(k) for k in keys], [microdata.n_categories(k) for k in keys],
                 names=keys, **kwargs)
