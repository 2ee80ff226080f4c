"""Key-combination codes and sample / weighted frequencies f_k and F_k.

Everything in the risk module derives from these: a record's key combination is one int64
(mixed radix over the key codes), f_k is how many records share it, F_k the sum of their
weights (the estimated population count). Built on ``bincount``: no string pasting, no
per-row Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError

INT64_MAX = np.iinfo(np.int64).max

#: Largest radix product counted with a dense ``bincount``; above it codes are first
#: factorised to dense ids (hash table, O(n)).
DENSE_LIMIT = 1 << 25


def combination_codes(codes: Sequence[np.ndarray], n_categories: Sequence[int], *,
                      names: Sequence[str] | None = None) -> tuple[np.ndarray, int]:
    """One int64 code per record for the combination of its key codes (mixed radix).

    Missing values (code ``-1``) count as one more category of their variable here (the
    wildcard rule of the risk module is separate). Returns the codes and the radix product.

    Raises
    ------
    InputError
        When the product of the category counts does not fit in int64.
    """
    if len(codes) == 0:
        raise InputError("no key variables given: name at least one key column.")
    names = list(names) if names is not None else [f"key {i}" for i in range(len(codes))]
    radices = [int(m) + 1 for m in n_categories]  # +1: the missing value
    product = 1
    for r in radices:
        if product > INT64_MAX // r:
            raise InputError(
                "the key combinations overflow int64: the product of the category counts of "
                f"{', '.join(names)} ({' x '.join(str(r - 1) for r in radices)}) is above 9.2e18; "
                "recode the keys to fewer categories or use fewer key variables.")
        product *= r
    # out = sum_k (c_k + 1) * prod_{j>k} r_j by Horner's rule on the raw codes, with the +1s
    # of every key added once at the end: two passes per key instead of three, in int32 while
    # the code space fits (half the memory traffic), widened to int64 by the last addition
    return _horner(codes, radices, 1), product


def _horner(codes: Sequence[np.ndarray], radices: Sequence[int], plus: int) -> np.ndarray:
    """int64 sum_k (c_k + plus) prod_{j>k} r_j; the caller has checked that the product of
    the radices fits in int64."""
    product = 1
    for r in radices:
        product *= int(r)
    small = product < 2**31 and all(np.asarray(c).dtype.kind in "iu" and np.asarray(c).dtype.itemsize <= 4
                                     for c in codes)
    out = np.asarray(codes[0]).astype(np.int32 if small else np.int64)
    shift = plus
    for c, r in zip(codes[1:], radices[1:]):
        out *= r
        out += c
        shift = shift * int(r) + plus
    if small:
        return np.add(out, shift, dtype=np.int64)
    out += shift
    return out


def _complete_codes(codes: Sequence[np.ndarray], n_categories: Sequence[int]) -> tuple[np.ndarray, int]:
    """Mixed-radix codes of key codes none of which is missing, radix = category count: the
    same order of combinations as :func:`combination_codes` (both are lexicographic)."""
    radices = [max(int(m), 1) for m in n_categories]
    product = 1
    for m in radices:
        product *= m
    return _horner(codes, radices, 0), product


@dataclass(frozen=True)
class KeyFrequencies:
    """Per-record frequencies of the key combination.

    Attributes
    ----------
    group : ndarray of int64
        Dense id (0..n_combinations-1) of each record's combination.
    fk : ndarray of int64
        Sample frequency of each record's combination.
    Fk : ndarray of float64
        Weighted frequency (sum of weights) of each record's combination; equals ``fk``
        without weights.
    counts : ndarray of int64
        Records per combination (indexed by ``group``).
    weighted_counts : ndarray of float64
        Sum of weights per combination.
    sizes : ndarray of int64, optional
        Records per combination (``counts`` without wildcard matches); see
        :attr:`group_sizes`.
    """

    group: np.ndarray
    fk: np.ndarray
    Fk: np.ndarray
    counts: np.ndarray
    weighted_counts: np.ndarray
    sizes: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def n_records(self) -> int:
        return int(self.fk.shape[0])

    @property
    def group_sizes(self) -> np.ndarray:
        """Records per combination (indexed by ``group``): ``counts`` without the wildcard
        matches of missing values; counted once from ``group`` when not given."""
        if self.sizes is None:
            object.__setattr__(self, "sizes", np.bincount(self.group, minlength=self.n_combinations))
        return self.sizes

    @property
    def n_combinations(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_sample_uniques(self) -> int:
        return int((self.fk == 1).sum())

    def k_violations(self, k: int) -> int:
        """Records whose combination occurs fewer than ``k`` times."""
        return int((self.fk < k).sum())

    def k_reached(self) -> int:
        """The largest k for which the data are k-anonymous (the smallest f_k)."""
        return int(self.fk.min())


def dense_groups(code: np.ndarray, product: int) -> tuple[np.ndarray, int]:
    """Dense group ids 0..G-1 of int64 codes (bincount when the code space is small)."""
    n = code.shape[0]
    if product <= max(DENSE_LIMIT, 4 * n):
        present = np.bincount(code, minlength=product) > 0
        remap = np.cumsum(present, dtype=np.int64) - 1
        return remap[code], int(present.sum())
    ids, uniques = pd.factorize(code, sort=False)
    return ids.astype(np.int64, copy=False), len(uniques)


def frequencies_from_codes(codes: Sequence[np.ndarray], n_categories: Sequence[int],
                           weights: np.ndarray | None = None, *,
                           names: Sequence[str] | None = None) -> KeyFrequencies:
    """f_k and F_k of each record from integer key codes.

    Parameters
    ----------
    codes : list of int arrays
        One array of codes per key (``-1`` = missing, counted as its own category).
    n_categories : list of int
        Category count of each key.
    weights : float array, optional
        Sampling weights; F_k is then the sum of weights of the combination.
    """
    code, product = combination_codes(codes, n_categories, names=names)
    n = code.shape[0]
    dense = product <= max(DENSE_LIMIT, 4 * n)      # decided on the codes with missing slots
    if dense and len(codes) > 1 and product > (1 << 16) and all(c.size == 0 or c.min() >= 0 for c in codes):
        # nothing missing: the codes without the missing slot of each key (radix = categories)
        # keep the order of the combinations and need a table up to 2^keys times smaller
        code, product = _complete_codes(codes, n_categories)
    if dense:
        # one count over the code space gives the groups, their sizes and f_k at once; the
        # weighted count adds the weights in row order per code, as it would per group
        full = np.bincount(code, minlength=product)
        present = full > 0
        counts = full[present]
        fk = full[code]
        if weights is None:
            wcounts = counts.astype(np.float64)
            Fk = fk.astype(np.float64)
        else:
            wfull = np.bincount(code, weights=weights, minlength=product)
            wcounts = wfull[present]
            Fk = wfull[code]
        # the group ids take the place of the codes they come from (an element is read before
        # it is written, so in place; a fresh array of this size costs more than the lookup)
        group = np.take(np.cumsum(present, dtype=np.int64) - 1, code, out=code, mode="clip")
        return KeyFrequencies(group, fk, Fk, counts, wcounts, counts)
    group, n_groups = dense_groups(code, product)
    counts = np.bincount(group, minlength=n_groups)
    fk = counts[group]
    if weights is None:
        wcounts = counts.astype(np.float64)
        Fk = fk.astype(np.float64)
    else:
        wcounts = np.bincount(group, weights=weights, minlength=n_groups)
        Fk = wcounts[group]
    return KeyFrequencies(group, fk, Fk, counts, wcounts, counts)


def key_frequencies(microdata, keys: Sequence[str] | None = None,
                    use_weights: bool = True) -> KeyFrequencies:
    """f_k and F_k of each record of a :class:`~sdckit.Microdata` on its key variables.

    Parameters
    ----------
    microdata : Microdata
    keys : list of str, optional
        A subset of the key variables (default: all of them).
    use_weights : bool
        Use the weight role for F_k (default True).
    """
    keys = list(microdata.key_vars if keys is None else keys)
    codes = [microdata.codes(k) for k in keys]
    ncat = [microdata.n_categories(k) for k in keys]
    w = microdata.weights() if use_weights else None
    return frequencies_from_codes(codes, ncat, w, names=keys)
