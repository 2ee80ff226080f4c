"""Utility of categorical variables from codes and counts: frequencies before and after,
entropy-based information kept, share of records changed.

The figures compare labels, not codes: ``1``, ``1.0`` and ``"1"`` are one category (a release
may write a code as text), so each variable's category table is mapped to canonical label
texts once (one entry per category) and every per-record figure is a ``bincount`` or a
comparison of integer label ids; nothing is done per record in Python.

The entropy measure is ``1 - H(X | Y) / H(X)`` (summed over variables), X the original and Y
the released label of a record: the share of the information in the original labels that
the release keeps (de Waal & Willenborg 1999, sec. 3; Domingo-Ferrer & Torra 2001, sec. 4.3,
entropy-based information loss).

References
----------
de Waal, A. G. and Willenborg, L. C. R. J. (1999). Information loss through global recoding
and local suppression. *Netherlands Official Statistics* 14, 17-20.

Domingo-Ferrer, J. and Torra, V. (2001). Disclosure protection methods and information loss
for microdata. In *Confidentiality, Disclosure and Data Access*, North-Holland, 91-110.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..microdata import Microdata

#: the text of a missing value in frequency tables (it sorts last)
MISSING = "(missing)"


def canonical_label(value) -> str:
    """Canonical text of a label: 1, 1.0 and "1" are the same category."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


#: object columns whose distinct values ``pd.factorize`` keeps apart exactly when their canonical
#: labels differ (strings never equal a non-string; 1 and 1.0 share a label); other object
#: columns (True beside 1, Decimal("1") beside Decimal("1.0")) are labelled value by value
FACTORIZE_SAFE = frozenset({"string", "integer", "floating", "mixed-integer-float", "boolean", "empty"})


def _label_texts(s: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Codes of a column (-1 = missing) and the canonical label of each code: one
    :func:`canonical_label` per distinct value, not per record."""
    if s.dtype == object and pd.api.types.infer_dtype(s, skipna=True) not in FACTORIZE_SAFE:
        # values the hash table would merge although their labels differ: label each value
        s = s.where(s.isna(), s.map(canonical_label))
    codes, uniques = pd.factorize(s, sort=False, use_na_sentinel=True)
    # the distinct values boxed as the column's own astype(object) boxes them
    values = pd.Series(uniques, dtype=s.dtype).astype("object").tolist()
    return codes, [canonical_label(v) for v in values]


def joint_codes(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes of two columns in one common coding of their canonical labels.

    Each column is factorised once and its distinct values labelled, so the work per record is
    a hash-table pass and a ``take``, never a Python call.

    Parameters
    ----------
    a, b : Series
        Two columns (e.g. a variable before and after a step), compared by
        :func:`canonical_label`.

    Returns
    -------
    codes_a, codes_b : ndarray of int64
        Positions in the common list of labels (first appearance order, ``a`` then ``b``);
        -1 = missing.
    n_labels : int
        The number of distinct labels of both columns.
    """
    ca, ta = _label_texts(a)
    cb, tb = _label_texts(b)
    # one id per label text, numbered in first appearance order over a's values then b's
    # (the order of the uniques of a factorisation is that of first appearance)
    ids, uniques = pd.factorize(pd.Index(ta + tb, dtype=object), sort=False)
    ids = ids.astype(np.int64)
    table_a = np.append(ids[:len(ta)], -1)             # code -1 (missing) -> -1
    table_b = np.append(ids[len(ta):], -1)
    return table_a[ca], table_b[cb], len(uniques)


def entropy_utility(original: Microdata, released: Microdata, variables: Sequence[str] | None = None) -> float:
    """One minus the normalised conditional entropy of the original labels given the released.

    ``1 - sum_v H(X_v | Y_v) / sum_v H(X_v)`` (the non-uniform entropy of de Waal & Willenborg
    1999, sec. 3, used by ARX): 1 = nothing lost, 0 = nothing left. A missing value is one more
    released category, so it applies to recoding, suppression, PRAM and swapping alike.

    Parameters
    ----------
    original, released : Microdata
        The data before and after protection, record by record.
    variables : sequence of str, optional
        The variables compared (default: the original's key variables).

    Returns
    -------
    float
        The share of the original labels' information the release keeps (1 when every
        variable is constant).
    """
    variables = list(variables or original.key_vars)
    h_x = h_xy = 0.0
    for v in variables:
        x, y, m = joint_codes(original.frame[v].reset_index(drop=True), released.frame[v].reset_index(drop=True))
        x = x + 1
        y = y + 1  # missing -> 0, its own category
        joint = np.bincount(x * (m + 1) + y, minlength=(m + 1) ** 2).reshape(m + 1, m + 1)
        h_x += entropy(joint.sum(axis=1))
        # H(X|Y) = H(X,Y) - H(Y)
        h_xy += entropy(joint.ravel()) - entropy(joint.sum(axis=0))
    if h_x == 0:
        return 1.0
    return float(1.0 - h_xy / h_x)


@dataclass(frozen=True)
class LabelCodes:
    """One variable's records as ids into a table of label texts.

    ``ids[i]`` is the position of record i's canonical label in ``texts`` (-1 = missing);
    every text of the table is distinct. ``counts`` are the records per text.
    """

    ids: np.ndarray
    texts: tuple[str, ...]
    counts: np.ndarray
    n_missing: int

    @property
    def n_records(self) -> int:
        return int(self.ids.shape[0])


#: label codes of live key codes (id of the read-only codes array -> (weak reference to it, its
#: categories, the LabelCodes)): the report's utility figures, tables and charts label each
#: key once
_KEY_LABELS: dict[int, tuple[weakref.ref, pd.Index, LabelCodes]] = {}


def label_codes(microdata: Microdata, var: str) -> LabelCodes:
    """The label ids of ``var``: from the key codes when ``var`` is a key (no pass over the
    values, and computed once while those codes live), else from one ``pd.factorize`` of the
    column."""
    if var in microdata.key_vars:
        codes, cats = microdata.codes(var), microdata.categories(var)
        key = id(codes)
        found = _KEY_LABELS.get(key)
        if found is not None and found[0]() is codes and found[1] is cats:
            return found[2]
        result = _label_codes(codes, cats)
        if not codes.flags.writeable:      # a Microdata's codes: read-only, so the labels stay valid
            result.ids.flags.writeable = False
            result.counts.flags.writeable = False
            try:
                ref = weakref.ref(codes, lambda _ref, key=key: _KEY_LABELS.pop(key, None))
            except TypeError:
                return result
            _KEY_LABELS[key] = (ref, cats, result)
        return result
    codes, cats = pd.factorize(microdata.frame[var], sort=False, use_na_sentinel=True)
    return _label_codes(codes, pd.Index(cats))


def _label_codes(codes: np.ndarray, cats: pd.Index) -> LabelCodes:
    """:class:`LabelCodes` of codes into the category list ``cats`` (-1 = missing)."""
    texts = [canonical_label(v) for v in cats.to_numpy(dtype=object)]
    text_ids, uniques = pd.factorize(pd.Index(texts, dtype=object), sort=False)
    table = np.append(text_ids.astype(np.int64), -1)          # code -1 (missing) -> -1
    ids = table[codes]
    k = len(uniques)
    full = np.bincount(ids + 1, minlength=k + 1)
    return LabelCodes(ids, tuple(str(t) for t in uniques), full[1:], int(full[0]))


def first_rows(ids: np.ndarray, k: int, n_present: int | None = None) -> np.ndarray:
    """The first record of each id 0..k-1 (``len(ids)`` for an id that does not occur;
    ``n_present``, the number of ids that occur, when known).

    Blocks of doubling length are scanned from the start until every id present is found, so
    the cost is that of the prefix holding every category (usually a few thousand records)."""
    n = ids.shape[0]
    first = np.full(k, n, dtype=np.int64)
    if n_present is None:
        n_present = int((np.bincount(ids[ids >= 0], minlength=k) > 0).sum()) if k else 0
    found, start, step = 0, 0, 4096
    while found < n_present and start < n:
        block = ids[start:start + step]
        u, pos = np.unique(block, return_index=True)
        keep = u >= 0
        u, pos = u[keep], pos[keep]
        new = first[u] == n
        first[u[new]] = pos[new] + start
        found += int(new.sum())
        start += step
        step *= 2
    return first


def appearance_order(c: LabelCodes) -> np.ndarray:
    """The label ids that occur, in the order of their first record (as ``pd.unique``)."""
    k = len(c.texts)
    first = first_rows(c.ids, k, int((c.counts > 0).sum()))
    present = np.flatnonzero(first < c.n_records)
    return present[np.argsort(first[present], kind="stable")]


def entropy(counts: np.ndarray) -> float:
    """Shannon entropy (bits) of a table of counts."""
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log2(p)).sum())


def _common_ids(a: LabelCodes, b: LabelCodes) -> tuple[np.ndarray, np.ndarray, int]:
    """Both variables' records in one coding of their label texts, numbered in order of first
    appearance over the records of ``a`` then those of ``b`` (what ``pd.factorize`` gives on
    the two columns one after the other): ids 0..m-1, -1 = missing."""
    order_a = [a.texts[i] for i in appearance_order(a)]
    order_b = [b.texts[i] for i in appearance_order(b)]
    number = {t: j for j, t in enumerate(dict.fromkeys(order_a + order_b))}
    map_a = np.array([number.get(t, -1) for t in a.texts] + [-1], dtype=np.int64)
    map_b = np.array([number.get(t, -1) for t in b.texts] + [-1], dtype=np.int64)
    return map_a[a.ids], map_b[b.ids], len(number)


def joint_table(a: LabelCodes, b: LabelCodes) -> np.ndarray:
    """(m + 1) x (m + 1) counts of (original label, released label) pairs, row and column 0
    for a missing value, the labels numbered as :func:`_common_ids` numbers them."""
    x, y, m = _common_ids(a, b)
    key = x + 1
    key *= m + 1
    key += y + 1
    return np.bincount(key, minlength=(m + 1) ** 2).reshape(m + 1, m + 1)


def entropy_terms(a: LabelCodes, b: LabelCodes) -> tuple[float, float]:
    """H(X) and H(X | Y) = H(X, Y) - H(Y) of the original (``a``) and released (``b``) labels.

    A variable the steps left alone (``b is a``: the same label codes) has a diagonal joint
    table: H(X) from its counts (missing first, then the labels by first record) and
    H(X | Y) = 0 exactly, as the table would give (the same entropy twice)."""
    if a is b:
        counts = np.concatenate([[a.n_missing], a.counts[appearance_order(a)]])
        return entropy(counts), 0.0
    joint = joint_table(a, b)
    return entropy(joint.sum(axis=1)), entropy(joint.ravel()) - entropy(joint.sum(axis=0))


def entropy_kept(pairs: Sequence[tuple[LabelCodes, LabelCodes]]) -> float:
    """``1 - sum_v H(X_v | Y_v) / sum_v H(X_v)`` over (original, released) label codes."""
    h_x = h_xy = 0.0
    for a, b in pairs:
        hx, hxy = entropy_terms(a, b)
        h_x += hx
        h_xy += hxy
    if h_x == 0:
        return 1.0
    return float(1.0 - h_xy / h_x)


_BAND = re.compile(r"^\s*(<=?|>=?|under|below|less than|over|above|more than)?\s*(-?\d+(?:\.\d+)?)",
                   re.IGNORECASE)
_BELOW = ("<", "<=", "under", "below", "less than")


def order_key(text: str) -> tuple:
    """The sort key of a category label: numbers by value, and bands by their first number,
    so "<25" sorts before "25-44" and "65+" after "45-64" (a band below a number before it,
    an open upper band after); other texts after the numbers, alphabetically."""
    x = str(text)
    try:   # equal numbers ("1", "01") keep their order (a stable sort)
        return (0, float(x), 0, "")
    except ValueError:
        pass
    m = _BAND.match(x)
    if m is None:
        return (1, 0.0, 0, x)
    word = (m.group(1) or "").lower()
    rank = -1 if word in _BELOW else (1 if word or x.rstrip().endswith("+") else 0)
    return (0, float(m.group(2)), rank, x)


def _natural(x: str):
    return order_key(x)


def _text_counts(c: LabelCodes) -> dict[str, int]:
    """Records per label text, a missing value labelled :data:`MISSING` (merged with a value
    of that text), the texts in the order of their first record (as ``pd.unique`` of the
    labelled column)."""
    k = len(c.texts)
    firsts = first_rows(c.ids, k, int((c.counts > 0).sum()))
    entries = [(int(firsts[i]), t, int(c.counts[i])) for i, t in enumerate(c.texts) if c.counts[i] > 0]
    if c.n_missing:
        entries.append((int(np.argmax(c.ids < 0)), MISSING, c.n_missing))
    counts: dict[str, int] = {}
    for _, t, m in sorted(entries, key=lambda e: e[0]):
        counts[t] = counts.get(t, 0) + m
    return counts


def shares(a: LabelCodes, b: LabelCodes) -> tuple[pd.Series, pd.Series]:
    """The share of records per label before (``a``) and after (``b``), on one list of labels:
    those of ``a`` then those only in ``b``, each sorted numbers first (by value) then text,
    the missing label last. The same Series as ``value_counts(normalize=True)`` of the label
    columns, reindexed."""
    ca, cb = _text_counts(a), _text_counts(b)
    cats = list(dict.fromkeys([*sorted(ca, key=_natural), *sorted(cb, key=_natural)]))
    if MISSING in cats:
        cats.remove(MISSING)
        cats.append(MISSING)
    na, nb = a.n_records, b.n_records
    pa = pd.Series([ca.get(t, 0) / na if t in ca else 0.0 for t in cats], index=cats, dtype=np.float64)
    pb = pd.Series([cb.get(t, 0) / nb if t in cb else 0.0 for t in cats], index=cats, dtype=np.float64)
    return pa, pb


def changed_share(a: LabelCodes, b: LabelCodes) -> float:
    """Share of records whose label differs between ``a`` and ``b`` (record by record; a
    missing value equals a missing value)."""
    n = a.n_records
    if a is b:                      # the same label codes: nothing changed
        return 0.0 if n else float("nan")
    number = {t: j for j, t in enumerate(dict.fromkeys([*a.texts, *b.texts]))}
    map_a = np.array([number[t] for t in a.texts] + [-1], dtype=np.int64)
    map_b = np.array([number[t] for t in b.texts] + [-1], dtype=np.int64)
    return float(np.count_nonzero(map_a[a.ids] != map_b[b.ids]) / n) if n else float("nan")


def value_labels_of(microdata: Microdata, var: str) -> dict[str, str]:
    """The value labels of ``var`` (SPSS/Stata labels, a labels file) keyed by the canonical
    text of the code (:func:`canonical_label`): ``{"1": "Male", "2": "Female"}``; {} without."""
    meta = getattr(microdata, "meta", None)
    labels = (getattr(meta, "value_labels", None) or {}).get(var) or {}
    return {canonical_label(k): str(v) for k, v in labels.items()}


def labelled_counts(microdata: Microdata, var: str) -> tuple[list[str], np.ndarray, int]:
    """Records per category of ``var`` shown by its label, in the category order: an ordered
    categorical column in its declared order, coded values by code, else labels by
    :func:`order_key` ("<25" before "65+"). Returns (labels, counts, missing count); two codes
    with one label are one category."""
    col = microdata.frame[var]
    lookup = value_labels_of(microdata, var)
    c = label_codes(microdata, var)
    texts = list(c.texts)
    counts = np.asarray(c.counts, dtype=np.int64)
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype) and dtype.ordered:
        rank = {canonical_label(v): i for i, v in enumerate(dtype.categories)}
        order = sorted(range(len(texts)), key=lambda i: (rank.get(texts[i], len(rank)), order_key(texts[i])))
    else:
        order = sorted(range(len(texts)), key=lambda i: order_key(texts[i]))
    merged: dict[str, int] = {}
    for i in order:
        if counts[i] == 0:
            continue
        shown = lookup.get(texts[i], texts[i])
        merged[shown] = merged.get(shown, 0) + int(counts[i])
    return list(merged), np.array(list(merged.values()), dtype=np.int64), int(c.n_missing)
