"""Key frequencies with missing values as wildcards (sdcMicro's ``freqCalc`` rule).

A missing key value stands for any category of its variable, so a record with a missing
value may be any of the records that agree with it on its observed values. With the weight
``alpha`` in [0, 1] (sdcMicro's ``alpha``):

* a complete key's f_k = its own count + alpha * the counts of the keys with missing values
  that match it;
* a key with missing values (not all) counts every complete key it matches with weight 1,
  its own records with weight 1 and every other key with missing values that matches it
  (agrees wherever both are observed) with weight alpha;
* a record with all its keys missing matches every record: f_k = n, F_k = sum of weights.

F_k is the same sum over weights. Two keys match when they agree on every variable observed in
both.

The computation works on the distinct combinations, one missing-value pattern at a time:
for a pattern P (the set of missing variables) the keys with pattern P are compared with the
complete keys through their codes projected on the observed variables, a ``bincount`` per
pair of patterns. No per-record Python loop; the cost grows with the number of distinct
missing-value patterns, not with the number of records holding them (sdcMicro loops over the
keys with missing values).

References
----------
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for micro-data
using the R package sdcMicro. Journal of Statistical Software 67(4). (``freqCalc``.)

Notes
-----
Where this differs from sdcMicro (version 5.7): sdcMicro, with two or more key variables,
does not add the records whose keys are all missing to the counts of the complete keys
(its ``addAllNAtoKeys`` is off), though it does so with one key variable; here an all-missing
record matches every record in both cases, as the wildcard rule says
(``all_missing_match_complete=False`` gives sdcMicro's figures). Everything else follows
``freqCalc``.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Sequence

import numpy as np

from .._validation import check_float
from ..errors import InputError
from .frequencies import KeyFrequencies, frequencies_from_codes


def _project(gcodes: np.ndarray, rows: np.ndarray, variables: Sequence[int],
             radices: Sequence[int]) -> np.ndarray:
    """Mixed-radix int64 code of ``rows`` of the group-code matrix on ``variables``."""
    out = np.zeros(rows.shape[0], dtype=np.int64)
    for v in variables:
        out *= radices[v]
        out += gcodes[rows, v]
    return out


def _match_sum(target_keys: np.ndarray, source_keys: np.ndarray,
               source_values: np.ndarray) -> np.ndarray:
    """For each target key, the sum of ``source_values`` over the sources with the same key."""
    if target_keys.size == 0:
        return np.zeros(0, dtype=np.float64)
    if source_keys.size == 0:
        return np.zeros(target_keys.shape[0], dtype=np.float64)
    allk = np.concatenate([target_keys, source_keys])
    _, inv = np.unique(allk, return_inverse=True)
    inv = inv.reshape(-1)
    nt = target_keys.shape[0]
    sums = np.bincount(inv[nt:], weights=source_values, minlength=int(inv.max()) + 1)
    return sums[inv[:nt]]


def wildcard_frequencies(codes: Sequence[np.ndarray], n_categories: Sequence[int],
                         weights: np.ndarray | None = None, *, alpha: float = 1.0,
                         names: Sequence[str] | None = None,
                         all_missing_match_complete: bool = True) -> KeyFrequencies:
    """f_k and F_k with missing key values (code ``-1``) matching every category.

    Parameters
    ----------
    codes : list of int arrays
        One array of codes per key; ``-1`` = missing.
    n_categories : list of int
        Category count of each key.
    weights : float array, optional
        Sampling weights (F_k = weighted count); without them F_k = f_k.
    alpha : float in [0, 1]
        Weight of a match between a key and another key with missing values (sdcMicro's
        ``alpha``): 1 counts every wildcard match, 0 ignores keys with missing values in the
        counts of other keys.
    all_missing_match_complete : bool
        Whether records with every key missing add alpha to the counts of the complete keys
        (the wildcard rule, default). ``False`` reproduces sdcMicro's ``freqCalc`` with two or
        more keys, which leaves them out of the complete keys' counts.

    Returns
    -------
    KeyFrequencies
        ``group`` is the exact combination (missing as its own value); ``counts`` and
        ``weighted_counts`` hold the wildcard f_k and F_k of each combination, so
        ``fk = counts[group]``. ``fk`` is int64 when ``alpha`` is 1 or nothing is missing,
        float64 otherwise.

    Raises
    ------
    InputError
        When every record has all its keys missing.
    """
    alpha = check_float("wildcard_frequencies", "alpha", alpha, low=0.0, high=1.0)
    names = list(names) if names is not None else [f"key {i}" for i in range(len(codes))]
    base = frequencies_from_codes(codes, n_categories, weights, names=names)
    m = len(codes)
    n = base.n_records
    if all(np.asarray(c).size == 0 or np.asarray(c).min() >= 0 for c in codes):
        return base                      # nothing missing (a min per key, no mask)
    any_missing = np.zeros(n, dtype=bool)
    for c in codes:
        any_missing |= c < 0
    if not any_missing.any():
        return base
    G = base.n_combinations
    # group-level code matrix (one representative record per group; last one wins)
    rep = np.empty(G, dtype=np.int64)
    rep[base.group] = np.arange(n, dtype=np.int64)
    gcodes = np.stack([np.asarray(c)[rep] for c in codes], axis=1).astype(np.int64)
    radices = [int(k) + 1 for k in n_categories]
    miss = gcodes < 0
    pattern = (miss * (1 << np.arange(m, dtype=np.int64))).sum(axis=1)  # bitmask of missing vars
    full = (1 << m) - 1
    cnt = base.counts.astype(np.float64)
    wcnt = base.weighted_counts.astype(np.float64)
    add_f = np.zeros(G, dtype=np.float64)
    add_F = np.zeros(G, dtype=np.float64)

    complete = np.flatnonzero(pattern == 0)
    all_missing = np.flatnonzero(pattern == full)
    if all_missing.size and all_missing.size == G:
        raise InputError(f"every record has all its key variables ({', '.join(names)}) missing; "
                         "there is nothing to measure: check the missing-value codes (--na-values).")
    n_all_missing = float(cnt[all_missing].sum())
    w_all_missing = float(wcnt[all_missing].sum())
    patterns = [int(p) for p in np.unique(pattern) if p != 0 and p != full]
    rows_of = {p: np.flatnonzero(pattern == p) for p in patterns}
    observed = {p: [v for v in range(m) if not (p >> v) & 1] for p in patterns}

    for p in patterns:
        rows_p = rows_of[p]
        obs = observed[p]
        # complete keys <-> keys with pattern p, compared on the observed variables of p
        kp = _project(gcodes, rows_p, obs, radices)
        kc = _project(gcodes, complete, obs, radices)
        add_f[complete] += alpha * _match_sum(kc, kp, cnt[rows_p])
        add_F[complete] += alpha * _match_sum(kc, kp, wcnt[rows_p])
        add_f[rows_p] += _match_sum(kp, kc, cnt[complete])       # complete matches: weight 1
        add_F[rows_p] += _match_sum(kp, kc, wcnt[complete])
        # other keys with missing values: agree where both are observed -> weight alpha
        for q in patterns:
            if q == p:
                continue  # same pattern, other values: they differ on an observed variable
            rows_q = rows_of[q]
            common = [v for v in obs if not (q >> v) & 1]
            if common:
                a = _project(gcodes, rows_p, common, radices)
                b = _project(gcodes, rows_q, common, radices)
                add_f[rows_p] += alpha * _match_sum(a, b, cnt[rows_q])
                add_F[rows_p] += alpha * _match_sum(a, b, wcnt[rows_q])
            else:
                add_f[rows_p] += alpha * cnt[rows_q].sum()
                add_F[rows_p] += alpha * wcnt[rows_q].sum()
        # all-missing keys match every key
        add_f[rows_p] += alpha * n_all_missing
        add_F[rows_p] += alpha * w_all_missing
    if all_missing.size and all_missing_match_complete:
        add_f[complete] += alpha * n_all_missing
        add_F[complete] += alpha * w_all_missing

    f_group = cnt + add_f
    F_group = wcnt + add_F
    if all_missing.size:  # an all-missing record may be anyone: f_k = n, F_k = sum of weights
        f_group[all_missing] = n
        F_group[all_missing] = float(wcnt.sum())
    if alpha == 1.0:
        f_group = np.rint(f_group).astype(np.int64)
    if weights is None:
        F_group = f_group.astype(np.float64)
    return KeyFrequencies(base.group, f_group[base.group], F_group[base.group], f_group, F_group)


#: the frequencies of live Microdata (frame id -> (weak reference to the frame, {question: (its key
#: codes, frequencies)})): the gate and the report's risk section count the same release once
_FREQUENCIES: dict[int, tuple[weakref.ref, dict]] = {}


def microdata_frequencies(microdata, keys: Sequence[str] | None = None, *, alpha: float = 1.0,
                          use_weights: bool = True) -> KeyFrequencies:
    """Wildcard f_k and F_k of a :class:`~sdckit.Microdata` on its key variables.

    Computed once per (data, keys, alpha, weights) while the data live: a Microdata's frame
    and key codes are read-only, and the arrays returned are read-only too."""
    keys = list(microdata.key_vars if keys is None else keys)
    codes = [microdata.codes(k) for k in keys]
    frame = getattr(microdata, "frame", None)
    weight = getattr(microdata, "weight", None) if use_weights else None
    question = (tuple(keys), float(alpha), weight)
    entry = _FREQUENCIES.get(id(frame)) if frame is not None else None
    if entry is not None and entry[0]() is frame:
        found = entry[1].get(question)
        if found is not None and all(a is b for a, b in zip(found[0], codes)):
            return found[1]
    ncat = [microdata.n_categories(k) for k in keys]
    w = microdata.weights() if use_weights else None
    freq = wildcard_frequencies(codes, ncat, w, alpha=alpha, names=keys)
    if frame is None or not all(isinstance(c, np.ndarray) and not c.flags.writeable for c in codes):
        return freq
    if entry is None or entry[0]() is not frame:
        key = id(frame)
        try:
            ref = weakref.ref(frame, lambda _ref, key=key: _FREQUENCIES.pop(key, None))
        except TypeError:
            return freq
        entry = _FREQUENCIES[key] = (ref, {})
    for f in dataclasses.fields(freq):
        value = getattr(freq, f.name)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    entry[1][question] = (tuple(codes), freq)
    return freq
