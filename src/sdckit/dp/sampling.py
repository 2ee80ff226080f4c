"""Exact samplers of the discrete Laplace and discrete Gaussian distributions.

Every draw is made from random *bits* with integer arithmetic, as Canonne, Kamath & Steinke
(2020) describe: no floating-point number is drawn, so the output follows the stated
distribution exactly (a float sampler's rounding can leak, Mironov 2012).

* Algorithm 1 (CKS 2020, sec. 5.1): ``Bernoulli(exp(-gamma))`` for a rational
  ``gamma = num / den >= 0``, from ``Bernoulli(gamma / K)`` draws, each one uniform integer
  below ``den * K`` compared with ``num``.
* Algorithm 2 (sec. 5.2): the discrete Laplace ``Lap_Z(t / s)``, ``P(x) ∝ exp(-|x| s / t)``.
* Algorithm 3 (sec. 5.3): the discrete Gaussian ``N_Z(0, sigma^2)`` for a rational
  ``sigma^2``, by rejection from ``Lap_Z(t)`` with ``t = floor(sigma) + 1``.

The bits are 64-bit words from a numpy ``Generator``'s bit generator (``random_raw``) or
from :mod:`secrets`, read most significant bit first. A uniform integer below ``n`` takes
``bit_length(n - 1)`` bits and is rejected when it is ``>= n``. A Bernoulli(``num / (den K)``)
whose denominator would pass ``2^62`` is drawn as Bernoulli(``num / den``) and then, if that
succeeded, Bernoulli(``1 / K``): the product has the same law.

Two implementations read the same bits the same way and so give the same numbers:

* a reference in pure Python integers (:func:`reference_discrete_gaussian`, ...), exact for any
  size of number;
* numba kernels on 64-bit integers for many draws (:func:`discrete_gaussian`,
  :func:`discrete_laplace`). A kernel that would need a number past ``2^62`` at a draw stops
  there and that one draw is made by the reference from the same bit position. This needs 64
  successes of Bernoulli(exp(-1)) in a row first (probability ``e^-64``, below ``2^-90``):
  a Laplace ``V`` past ``2^62 / t``, or a Gaussian proposal so far out that its acceptance
  test begins with at least 64 such draws, which the kernel makes itself. When the words run out
  mid-draw the kernel stops, more words are appended to the unread ones, and the draw starts
  again from its first bit: the result is the draw an endless bit stream would give.

References
----------
Canonne, C. L., Kamath, G. & Steinke, T. (2020). The discrete Gaussian for differential
privacy. *NeurIPS 2020*; arXiv:2004.00010, Algorithms 1-3 (sec. 5).
Mironov, I. (2012). On significance of the least significant bits for differential privacy.
*ACM CCS 2012*.
"""

from __future__ import annotations

import math
import secrets
from fractions import Fraction

import numpy as np
from numba import njit

__all__ = ["BitSource", "BitReader", "reference_bernoulli_exp", "reference_discrete_laplace",
           "reference_discrete_gaussian", "discrete_laplace", "discrete_gaussian", "gaussian_parameters",
           "laplace_parameters", "run_batch", "discrete_gaussian_pmf", "discrete_laplace_pmf", "symmetric_quantile",
           "WORD_LIMIT"]

#: the largest denominator an int64 kernel forms (``den * K`` and ``num`` stay below it)
WORD_LIMIT = 1 << 62
#: ``2 a b t^2`` (the denominator of the Gaussian's acceptance test) stays below this, so that
#: ``den * K`` stays below ``2^62`` for K up to 64 (K passes 64 with probability < 1 / 64!)
_GAUSS_DEN_LIMIT = 1 << 56
_Q_LIMIT = (1 << 31) - 1


# ----------------------------------------------------------------------------- bit sources

class BitSource:
    """64-bit words of random bits: from a numpy ``Generator`` (its bit generator's
    ``random_raw``, integer output only) or from :mod:`secrets` (``rng="secrets"``).

    Only :meth:`words` is used by the samplers: nothing here calls ``Generator.random``,
    ``normal`` or any other floating-point draw.
    """

    def __init__(self, rng) -> None:
        if isinstance(rng, str) and rng == "secrets":
            self._gen = None
        elif isinstance(rng, np.random.Generator):
            self._gen = rng
        else:
            from .._random import as_generator

            self._gen = as_generator(rng)

    def words(self, n: int) -> np.ndarray:
        """``n`` words of 64 random bits (uint64)."""
        n = int(n)
        if self._gen is None:
            return np.frombuffer(secrets.token_bytes(8 * n), dtype=np.uint64).copy()
        return np.asarray(self._gen.bit_generator.random_raw(n), dtype=np.uint64)


class BitReader:
    """Reads bits most significant first from a growing array of words (the reference path)."""

    def __init__(self, source: BitSource | None, words: np.ndarray | None = None, pos: int = 0,
                 chunk: int = 1024) -> None:
        self.source = source
        self.words = np.zeros(0, np.uint64) if words is None else words
        self.pos = int(pos)
        self.chunk = int(chunk)

    def bits(self, k: int) -> int:
        """The next ``k`` bits as a non-negative int (k >= 1)."""
        need = self.pos + k - 64 * self.words.size
        if need > 0:
            if self.source is None:
                raise EOFError("the bit stream ran out")
            more = max(self.chunk, (need + 63) // 64)
            self.words = np.concatenate([self.words, self.source.words(more)])
        v = 0
        got = 0
        pos = self.pos
        while got < k:
            w = int(self.words[pos >> 6])
            off = pos & 63
            take = min(64 - off, k - got)
            chunk = (w >> (64 - off - take)) & ((1 << take) - 1)
            v = (v << take) | chunk
            got += take
            pos += take
        self.pos = pos
        return v

    def below(self, n: int) -> int:
        """A uniform integer in [0, n) by rejection on ``bit_length(n - 1)`` bits."""
        if n <= 1:
            return 0
        k = (n - 1).bit_length()
        while True:
            v = self.bits(k)
            if v < n:
                return v


# ----------------------------------------------------------------------------- reference (Python ints)

def _ref_bernoulli_ratio(r: BitReader, num: int, den: int, K: int) -> bool:
    """Bernoulli(num / (den K)) for 0 <= num <= den (split when den K passes 2^62)."""
    if den * K <= WORD_LIMIT:
        return r.below(den * K) < num
    if r.below(den) >= num:
        return False
    return r.below(K) < 1


def _ref_bern_exp_le1(r: BitReader, num: int, den: int) -> int:
    # CKS 2020, Algorithm 1, gamma = num/den in [0, 1]: K <- 1; while Bernoulli(gamma/K): K += 1
    K = 1
    while _ref_bernoulli_ratio(r, num, den, K):
        K += 1
    return K & 1  # 1 when K is odd


def reference_bernoulli_exp(r: BitReader, num: int, den: int) -> int:
    """Bernoulli(exp(-num/den)) (CKS 2020, Algorithm 1), exact, on Python integers."""
    if num > den:  # gamma > 1: floor(gamma) draws of Bernoulli(exp(-1)), then the fraction
        q = num // den
        for _ in range(q):
            if not _ref_bern_exp_le1(r, 1, 1):
                return 0
        return _ref_bern_exp_le1(r, num - q * den, den)
    return _ref_bern_exp_le1(r, num, den)


def reference_discrete_laplace(r: BitReader, s: int, t: int) -> int:
    """One draw of Lap_Z(t/s), ``P(x) ∝ exp(-|x| s/t)`` (CKS 2020, Algorithm 2)."""
    while True:
        u = r.below(t)                              # U uniform on {0, ..., t-1}
        if not reference_bernoulli_exp(r, u, t):    # D ~ Bernoulli(exp(-U/t))
            continue
        v = 0
        while reference_bernoulli_exp(r, 1, 1):     # V ~ Geometric(1 - exp(-1))
            v += 1
        x = u + t * v                               # X = U + t V
        y = x // s                                  # Y = floor(X / s)
        b = r.bits(1)                               # B ~ Bernoulli(1/2)
        if b == 1 and y == 0:
            continue                                # reject -0
        return -y if b else y


def reference_discrete_gaussian(r: BitReader, a: int, b: int) -> int:
    """One draw of N_Z(0, a/b) (CKS 2020, Algorithm 3)."""
    t = math.isqrt(a // b) + 1                      # t = floor(sigma) + 1
    while True:
        y = reference_discrete_laplace(r, 1, t)     # Y ~ Lap_Z(t)
        q = abs(y) * b * t - a                      # (|Y| - sigma^2/t)^2 / (2 sigma^2) = q^2 / (2 a b t^2)
        if reference_bernoulli_exp(r, q * q, 2 * a * b * t * t):
            return y


# ----------------------------------------------------------------------------- numba kernels (int64)

@njit(cache=True, inline="always", error_model="numpy")
def _bits(words, st, k):
    """Next k bits (1 <= k <= 62) MSB first; st[0] = bit position, st[1] = 1 when out of words."""
    pos = st[0]
    if pos + k > words.size * 64:
        st[1] = 1
        return 0
    idx = pos >> 6
    off = pos & 63
    avail = 64 - off
    w = words[idx]
    if k <= avail:
        v = (w >> np.uint64(avail - k)) & ((np.uint64(1) << np.uint64(k)) - np.uint64(1))
    else:
        lo_n = k - avail
        hi = w & ((np.uint64(1) << np.uint64(avail)) - np.uint64(1))
        v = (hi << np.uint64(lo_n)) | (words[idx + 1] >> np.uint64(64 - lo_n))
    st[0] = pos + k
    return np.int64(v)


@njit(cache=True, inline="always", error_model="numpy")
def _bit_length(x):
    k = 0
    if x >= (1 << 32):
        x >>= 32
        k += 32
    if x >= (1 << 16):
        x >>= 16
        k += 16
    if x >= (1 << 8):
        x >>= 8
        k += 8
    while x > 0:
        k += 1
        x >>= 1
    return k


@njit(cache=True, error_model="numpy")
def _below(words, st, n):
    if n <= 1:
        return 0
    k = _bit_length(n - 1)
    while True:
        v = _bits(words, st, k)
        if st[1] != 0:
            return 0
        if v < n:
            return v


@njit(cache=True, error_model="numpy")
def _bernoulli_ratio(words, st, num, den, K):
    if (den < (1 << 31) and K < (1 << 31)) or den <= (1 << 62) // K:  # den K <= 2^62
        return _below(words, st, den * K) < num
    if _below(words, st, den) >= num:
        return False
    if st[1] != 0:
        return False
    return _below(words, st, K) < 1


@njit(cache=True, error_model="numpy")
def _bern_exp_le1(words, st, num, den):
    K = 1
    while True:
        a = _bernoulli_ratio(words, st, num, den, K)
        if st[1] != 0:
            return 0
        if not a:
            break
        K += 1
    return K & 1


@njit(cache=True, error_model="numpy")
def _bern_exp(words, st, num, den):
    if num > den:
        q = num // den
        for _ in range(q):
            if _bern_exp_le1(words, st, 1, 1) == 0:
                return 0
            if st[1] != 0:
                return 0
        return _bern_exp_le1(words, st, num - q * den, den)
    return _bern_exp_le1(words, st, num, den)


@njit(cache=True, error_model="numpy")
def _laplace(words, st, s, t):
    while True:
        u = _below(words, st, t)
        if st[1] != 0:
            return 0
        d = _bern_exp(words, st, u, t)
        if st[1] != 0:
            return 0
        if d == 0:
            continue
        v = 0
        while True:
            a = _bern_exp(words, st, 1, 1)
            if st[1] != 0:
                return 0
            if a == 0:
                break
            v += 1
        if v > ((1 << 62) - u) // t:
            st[1] = 2  # X = U + t V would pass 2^62: the reference makes this draw
            return 0
        x = u + t * v
        y = x // s
        b = _bits(words, st, 1)
        if st[1] != 0:
            return 0
        if b == 1 and y == 0:
            continue
        return -y if b == 1 else y


@njit(cache=True, error_model="numpy")
def _gaussian(words, st, a, b, t):
    den = 2 * a * b * t * t
    bt = b * t
    ymax = (_Q_LIMIT + a) // bt
    while True:
        y = _laplace(words, st, 1, t)
        if st[1] != 0:
            return 0
        ay = -y if y < 0 else y
        if ay > ymax:
            # q = |Y| b t - a passes 2^31, so gamma = q^2 / den >= 2^62 / 2^56 = 64 and Algorithm 1
            # begins with at least 64 draws of Bernoulli(exp(-1)), stopping at the first failure.
            # Make those 64 here; should all succeed (probability e^-64) the reference, which
            # reads the same bits, finishes the draw on Python integers.
            failed = False
            for _ in range(64):
                f = _bern_exp_le1(words, st, 1, 1)
                if st[1] != 0:
                    return 0
                if f == 0:
                    failed = True
                    break
            if not failed:
                st[1] = 2
                return 0
            continue
        q = ay * bt - a
        c = _bern_exp(words, st, q * q, den)
        if st[1] != 0:
            return 0
        if c == 1:
            return y


@njit(cache=True, error_model="numpy")
def _laplace_batch(words, pos, out, start, s, t):
    st = np.zeros(2, np.int64)
    st[0] = pos
    for i in range(start, out.size):
        p0 = st[0]
        y = _laplace(words, st, s, t)
        if st[1] != 0:
            return st[1], i, p0
        out[i] = y
    return 0, out.size, st[0]


@njit(cache=True, error_model="numpy")
def _gaussian_batch(words, pos, out, start, a, b, t):
    st = np.zeros(2, np.int64)
    st[0] = pos
    for i in range(start, out.size):
        p0 = st[0]
        y = _gaussian(words, st, a, b, t)
        if st[1] != 0:
            return st[1], i, p0
        out[i] = y
    return 0, out.size, st[0]


def run_batch(n: int, source: BitSource, kernel, args: tuple, reference, words_per_draw: float) -> np.ndarray:
    """Drive a batch kernel over ``n`` draws: refill words, hand overflowing draws to the reference.

    ``kernel(words, pos, out, start, *args)`` fills ``out[start:]`` from the bits of ``words``
    from bit ``pos`` and returns ``(status, i, p)``: 0 when done; 1 when the words ran out in draw
    ``i``, which began at bit ``p`` (more words are appended and draw ``i`` starts again from
    ``p``); 2 when draw ``i`` (from bit ``p``) needs numbers past int64, made by
    ``reference(BitReader)`` on Python integers. ``words_per_draw`` sizes the word chunks.
    """
    out = np.zeros(int(n), dtype=np.int64)
    if n == 0:
        return out
    chunk = int(min(n, 1 << 20) * words_per_draw) + 64
    words = source.words(chunk)
    pos, start = 0, 0
    while True:
        status, i, p = kernel(words, pos, out, start, *args)
        if status == 0:
            return out
        keep = words[p >> 6:]
        pos = p & 63
        if status == 1:  # out of words: keep the unread ones, append more, redo draw i
            more = int(min(n - i, 1 << 20) * words_per_draw) + 64
            words = np.concatenate([keep, source.words(more)])
            start = i
        else:  # overflow: draw i on Python integers from the same bit position
            r = BitReader(source, keep, pos, chunk=64)
            out[i] = reference(r)
            words, pos, start = r.words[r.pos >> 6:], r.pos & 63, i + 1
            if start >= n:
                return out


# ----------------------------------------------------------------------------- parameters

def laplace_parameters(epsilon: float, sensitivity: int, *, max_den: int = 1 << 32) -> tuple[int, int, Fraction]:
    """``(s, t, epsilon_spent)``: the discrete Laplace ``Lap_Z(t/s)`` with ``s/t <= epsilon /
    sensitivity`` (rounded down to a denominator ``max_den``), and the exact epsilon it spends,
    ``sensitivity * s / t`` (never more than ``epsilon``)."""
    ratio = Fraction(epsilon) / int(sensitivity)
    s = math.floor(ratio * max_den)
    if s <= 0:
        from ..errors import ParameterError

        raise ParameterError(f"epsilon = {epsilon!r} is too small for sensitivity {sensitivity}: the "
                             "noise scale passes 2^32; raise epsilon or lower the contribution bound")
    g = math.gcd(s, max_den)
    s, t = s // g, max_den // g
    return s, t, Fraction(int(sensitivity) * s, t)


def gaussian_parameters(rho: float, l2_sensitivity_sq: int, *, max_exp: int = 32) -> tuple[int, int, Fraction]:
    """``(a, b, rho_spent)``: the discrete Gaussian ``N_Z(0, a/b)`` with
    ``a/b >= Delta_2^2 / (2 rho)`` (CKS 2020, Theorem 14: ``rho = Delta_2^2 / (2 sigma^2)``),
    ``b`` a power of two as large as the int64 kernel allows (``2 a b t^2 <= 2^56``), and the
    exact rho it spends, ``Delta_2^2 b / (2 a)`` (never more than ``rho``)."""
    sigma2 = Fraction(int(l2_sensitivity_sq)) / (2 * Fraction(rho))
    best = None
    for e in range(max_exp + 1):
        b = 1 << e
        a = math.ceil(sigma2 * b)
        t = math.isqrt(a // b) + 1
        if 2 * a * b * t * t > _GAUSS_DEN_LIMIT and best is not None:
            break
        best = (a, b)
    a, b = best
    g = math.gcd(a, b)
    a, b = a // g, b // g
    return a, b, Fraction(int(l2_sensitivity_sq) * b, 2 * a)


# ----------------------------------------------------------------------------- public samplers

def discrete_laplace(s: int, t: int, size: int, rng) -> np.ndarray:
    """``size`` exact draws of Lap_Z(t/s) (``P(x) ∝ exp(-|x| s/t)``) from random bits.

    Parameters
    ----------
    s, t : int
        Positive integers: the scale is ``t / s`` (CKS 2020, Algorithm 2).
    size : int
    rng : int, numpy Generator, SeedSequence, None or "secrets"
        The bit source (only integer words are drawn).
    """
    s, t = int(s), int(t)
    source = rng if isinstance(rng, BitSource) else BitSource(rng)
    if t > (1 << 56) or s > (1 << 62):
        r = BitReader(source)
        return np.array([reference_discrete_laplace(r, s, t) for _ in range(int(size))], dtype=np.int64)
    per = 3.0 + 0.1 * _log2(t)
    return run_batch(size, source, _laplace_batch, (s, t), lambda r: reference_discrete_laplace(r, s, t), per)


def discrete_gaussian(a: int, b: int, size: int, rng) -> np.ndarray:
    """``size`` exact draws of N_Z(0, sigma^2), ``sigma^2 = a / b``, from random bits (CKS 2020,
    Algorithm 3). Parameters too large for the int64 kernel use the reference on Python ints."""
    a, b = int(a), int(b)
    source = rng if isinstance(rng, BitSource) else BitSource(rng)
    t = math.isqrt(a // b) + 1
    if 2 * a * b * t * t > _GAUSS_DEN_LIMIT:
        r = BitReader(source)
        return np.array([reference_discrete_gaussian(r, a, b) for _ in range(int(size))], dtype=np.int64)
    per = 6.0 + 0.2 * _log2(t)
    return run_batch(size, source, _gaussian_batch, (a, b, t), lambda r: reference_discrete_gaussian(r, a, b), per)


def _log2(x: int) -> float:
    return float(max(1, int(x).bit_length()))


# ----------------------------------------------------------------------------- exact distributions

def discrete_gaussian_pmf(x: np.ndarray, sigma2: float) -> np.ndarray:
    """P(X = x) of N_Z(0, sigma^2): ``exp(-x^2 / 2 sigma^2) / sum_y exp(-y^2 / 2 sigma^2)``
    (CKS 2020, Definition 1). The normalising sum runs over |y| <= 40 sigma + 10 (the rest is
    below 1e-300)."""
    sigma2 = float(sigma2)
    m = int(40 * math.sqrt(sigma2)) + 10
    y = np.arange(-m, m + 1, dtype=float)
    norm = math.fsum(np.exp(-y * y / (2 * sigma2)))
    x = np.asarray(x, dtype=float)
    return np.exp(-x * x / (2 * sigma2)) / norm


def discrete_laplace_pmf(x: np.ndarray, scale: float) -> np.ndarray:
    """P(X = x) of Lap_Z(scale): ``(1 - e^{-1/scale}) / (1 + e^{-1/scale}) e^{-|x|/scale}``
    (CKS 2020, Definition 3)."""
    q = math.exp(-1.0 / float(scale))
    x = np.asarray(x, dtype=float)
    return (1 - q) / (1 + q) * np.power(q, np.abs(x))


def symmetric_quantile(pmf, confidence: float, limit: int) -> tuple[int, float]:
    """The smallest integer ``q`` with ``P(|X| <= q) >= confidence`` for a symmetric integer
    distribution given by ``pmf(x)``, and that probability (exact up to float rounding)."""
    x = np.arange(0, int(limit) + 1)
    p = pmf(x)
    cum = p[0] + 2 * np.cumsum(np.r_[0.0, p[1:]])
    idx = int(np.searchsorted(cum, confidence - 1e-15))
    idx = min(idx, x.size - 1)
    return int(x[idx]), float(min(1.0, cum[idx]))
