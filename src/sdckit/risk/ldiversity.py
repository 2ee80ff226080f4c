"""l-diversity and t-closeness of sensitive variables within the key-variable classes.

An equivalence class is the set of records sharing a key combination (missing as its own
value, as in sdcMicro's ``ldiversity``). For a sensitive variable, within each class with
counts r_1 >= r_2 >= ... >= r_m of its m distinct values (n_c = sum r_i):

* distinct l-diversity: m;
* entropy l-diversity: exp(H), H = -sum (r_i/n_c) log(r_i/n_c) (the class is entropy
  l-diverse for every l <= exp(H));
* recursive (c, l)-diversity: the largest l with r_1 < c (r_l + r_{l+1} + ... + r_m)
  (0 when even l = 1 fails, which needs c <= 1).

Multi-attribute variants (Machanavajjhala et al. 2007, definition 4.3): with several
sensitive variables, variable S_j is measured within the classes of the keys plus the other
sensitive variables; the record's multi-attribute l is the minimum over j.

t-closeness (Li, Li & Venkatasubramanian 2007): the earth mover's distance between the
class distribution P and the whole data's distribution Q of the sensitive variable, with

* equal ground distance (nominal): EMD = 1/2 sum_i |p_i - q_i|;
* ordered distance (ordinal, m values in order): EMD = 1/(m-1) sum_i |sum_{j<=i} (p_j - q_j)|.

Missing sensitive values are left out of the distributions.

References
----------
Machanavajjhala, A., Kifer, D., Gehrke, J. and Venkitasubramaniam, M. (2007). l-Diversity:
privacy beyond k-anonymity. ACM TKDD 1(1), article 3.

Li, N., Li, T. and Venkatasubramanian, S. (2007). t-Closeness: privacy beyond k-anonymity and
l-diversity. Proc. IEEE ICDE, 106-115.

Notes
-----
sdcMicro's ``ldiversity`` reports distinct, entropy and recursive l per record and a
"multi" entropy/recursive variant; its C++ code is not documented in enough detail to be sure
its multi-attribute variant is Machanavajjhala's, so compare only the single-variable figures.
sdcMicro has no t-closeness; ARX's "ordered distance" and "equal distance" EMD are the two
ground distances here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import check_float, check_names
from ..errors import InputError
from ..result import ResultDisplay
from .frequencies import combination_codes, dense_groups


def _class_ids(microdata, keys: Sequence[str]) -> tuple[np.ndarray, int]:
    codes = [microdata.codes(k) for k in keys]
    code, product = combination_codes(codes, [microdata.n_categories(k) for k in keys], names=keys)
    return dense_groups(code, product)


def _sensitive_codes(microdata, var: str) -> tuple[np.ndarray, pd.Index]:
    col = microdata.frame[var]
    if isinstance(col.dtype, pd.CategoricalDtype):
        return np.asarray(col.array.codes, dtype=np.int64), pd.Index(col.array.categories)
    codes, uniq = pd.factorize(col, sort=True, use_na_sentinel=True)
    return codes.astype(np.int64), pd.Index(uniq)


def _class_value_counts(cls: np.ndarray, val: np.ndarray, n_values: int):
    """Distinct (class, value) pairs of observed values with their counts."""
    ok = val >= 0
    pair = cls[ok] * n_values + val[ok]
    uniq, cnt = np.unique(pair, return_counts=True)
    return uniq // n_values, uniq % n_values, cnt


def diversity_measures(cls: np.ndarray, n_classes: int, val: np.ndarray, n_values: int,
                       c: float = 2.0) -> dict[str, np.ndarray]:
    """Per-class distinct, entropy and recursive (c, l) diversity of integer values."""
    pc, _, cnt = _class_value_counts(cls, val, max(n_values, 1))
    n_c = np.bincount(pc, weights=cnt, minlength=n_classes)
    distinct = np.bincount(pc, minlength=n_classes).astype(np.int64)
    p = cnt / n_c[pc]
    H = np.bincount(pc, weights=-p * np.log(p), minlength=n_classes)  # entropy H
    entropy = np.where(distinct > 0, np.exp(H), 0.0)
    # recursive: counts sorted descending within class; r_1 < c * (n_c - sum_{i<l} r_i)
    order = np.lexsort((-cnt, pc))
    pcs, cs = pc[order], cnt[order].astype(np.float64)
    csum = np.cumsum(cs)
    start = np.searchsorted(pcs, pcs, side="left")
    before = csum - cs - np.where(start > 0, csum[start - 1], 0.0)   # sum_{i<l} r_i in class
    r1 = cs[start]
    cond = r1 < c * (n_c[pcs] - before)
    recursive = np.bincount(pcs, weights=cond, minlength=n_classes)
    # the condition weakens as l grows; count the leading run of successes
    first_fail = np.full(n_classes, np.iinfo(np.int64).max)
    rank = np.arange(pcs.size) - start
    fails = ~cond
    np.minimum.at(first_fail, pcs[fails], rank[fails])
    recursive = np.minimum(recursive, first_fail).astype(np.int64)
    return {"distinct": distinct, "entropy": entropy, "recursive": recursive}


@dataclass(frozen=True)
class LDiversityResult(ResultDisplay):
    """Per-record l-diversity of each sensitive variable.

    ``records`` has columns ``<var>_distinct``, ``<var>_entropy``, ``<var>_recursive`` (and
    ``multi_distinct``, ``multi_entropy``, ``multi_recursive`` with several sensitive
    variables); ``summary`` the smallest value of each (the l the data reach).
    """

    records: pd.DataFrame
    summary: dict
    sensitive: tuple
    recursive_c: float

    def to_dict(self) -> dict:
        return {"sensitive": list(self.sensitive), "recursive_c": self.recursive_c,
                **self.summary}

    def min_distinct(self) -> int:
        cols = [f"{v}_distinct" for v in self.sensitive]
        return int(self.records[cols].to_numpy().min())


def _check_sensitive(microdata, sensitive, keys, owner: str) -> tuple[tuple, tuple]:
    keys = tuple(microdata.key_vars if keys is None else check_names(owner, "keys", keys))
    if sensitive is None:
        sensitive = microdata.sensitive
    sensitive = check_names(owner, "sensitive", sensitive, allow_empty=True)
    if not sensitive:
        raise InputError(f"{owner}: no sensitive variable given; name one (the 'sensitive' role "
                         "or --sensitive).")
    if not keys:
        raise InputError(f"{owner}: no key variables given.")
    for v in sensitive:
        if v in keys:
            raise InputError(f"{owner}: the sensitive variable {v!r} is also a key variable; a "
                             "sensitive variable must not be a key: drop it from one of the lists.")
        if v not in microdata.columns:
            raise InputError(f"{owner}: the sensitive variable {v!r} does not exist.")
    return sensitive, keys


def l_diversity(microdata, sensitive: Sequence[str] | None = None, *, recursive_c: float = 2.0,
                keys: Sequence[str] | None = None) -> LDiversityResult:
    """Distinct, entropy and recursive (c, l) diversity of each sensitive variable.

    Parameters
    ----------
    microdata : Microdata
    sensitive : list of str, optional
        Sensitive variables (default: the Microdata's ``sensitive`` role).
    recursive_c : float > 0
        The constant c of recursive (c, l)-diversity (sdcMicro's ``l_recurs_c``, default 2).
    keys : list of str, optional
        Key variables (default: the key role).
    """
    c = check_float("l_diversity", "recursive_c", recursive_c, low=0, low_open=True)
    sensitive, keys = _check_sensitive(microdata, sensitive, keys, "l_diversity")
    cls, n_cls = _class_ids(microdata, list(keys))
    vals = {v: _sensitive_codes(microdata, v) for v in sensitive}
    out = {}
    for v in sensitive:
        code, cats = vals[v]
        m = diversity_measures(cls, n_cls, code, len(cats), c)
        for kind, arr in m.items():
            out[f"{v}_{kind}"] = arr[cls]
    if len(sensitive) > 1:
        multi = {kind: None for kind in ("distinct", "entropy", "recursive")}
        for v in sensitive:
            # classes of the keys plus the other sensitive variables (missing = own value)
            cl = cls.copy()
            ncl = n_cls
            for other in sensitive:
                if other == v:
                    continue
                oc, ocats = vals[other]
                cl, ncl = dense_groups(cl * (len(ocats) + 1) + (oc + 1), ncl * (len(ocats) + 1))
            code, cats = vals[v]
            m = diversity_measures(cl, ncl, code, len(cats), c)
            for kind, arr in m.items():
                per = arr[cl]
                multi[kind] = per if multi[kind] is None else np.minimum(multi[kind], per)
        for kind, arr in multi.items():
            out[f"multi_{kind}"] = arr
    records = pd.DataFrame(out, index=microdata.frame.index)
    summary = {}
    for col in records.columns:
        x = records[col].to_numpy()
        summary[col] = float(x.min()) if col.endswith("entropy") else int(x.min())
    return LDiversityResult(records, summary, tuple(sensitive), c)


@dataclass(frozen=True)
class TClosenessResult(ResultDisplay):
    """Per-record t (the EMD of the record's class) of each sensitive variable."""

    records: pd.DataFrame
    summary: dict
    ground_distance: dict

    def to_dict(self) -> dict:
        return {"t": dict(self.summary), "ground_distance": dict(self.ground_distance)}


def _is_ordinal(col: pd.Series) -> bool:
    # numeric codes are usually nominal in survey files (1 = married, 2 = single, ...):
    # only an ordered categorical is taken as ordinal without being named
    return isinstance(col.dtype, pd.CategoricalDtype) and bool(col.dtype.ordered)


def class_emd(cls: np.ndarray, n_classes: int, val: np.ndarray, n_values: int,
              ordered: bool, block: int = 4_000_000) -> np.ndarray:
    """EMD between each class's distribution of ``val`` and the overall one."""
    ok = val >= 0
    q = np.bincount(val[ok], minlength=n_values).astype(np.float64)
    q /= q.sum()
    pc, pv, cnt = _class_value_counts(cls, val, n_values)
    n_c = np.bincount(pc, weights=cnt, minlength=n_classes)
    out = np.zeros(n_classes)
    if not ordered:
        # 1/2 sum |p_i - q_i| = 1/2 (sum over present values |p_i - q_i| + sum over absent q_i)
        p = cnt / n_c[pc]
        present_q = np.bincount(pc, weights=q[pv], minlength=n_classes)
        diff = np.bincount(pc, weights=np.abs(p - q[pv]), minlength=n_classes)
        out = 0.5 * (diff + (1.0 - present_q))
        out[n_c == 0] = 0.0
        return out
    if n_values <= 1:
        return out
    rows_per_block = max(1, block // n_values)
    for lo in range(0, n_classes, rows_per_block):
        hi = min(n_classes, lo + rows_per_block)
        sel = (pc >= lo) & (pc < hi)
        P = np.zeros((hi - lo, n_values))
        np.add.at(P, (pc[sel] - lo, pv[sel]), cnt[sel])
        tot = P.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            P = np.where(tot > 0, P / tot, q)
        cum = np.cumsum(P - q, axis=1)[:, :-1]       # sum_{j<=i} (p_j - q_j)
        out[lo:hi] = np.abs(cum).sum(axis=1) / (n_values - 1)
    return out


def t_closeness(microdata, sensitive: Sequence[str] | None = None, *,
                ordinal: Sequence[str] | None = None, keys: Sequence[str] | None = None
                ) -> TClosenessResult:
    """t-closeness of each sensitive variable: per-record EMD of its class to the whole data.

    Parameters
    ----------
    sensitive : list of str, optional
        Default: the Microdata's sensitive role.
    ordinal : list of str, optional
        Variables measured with the ordered distance (values in their sorted or declared
        order). Default: ordered categoricals only; every other variable is nominal (equal
        ground distance), since numeric codes are often nominal.
    """
    sensitive, keys = _check_sensitive(microdata, sensitive, keys, "t_closeness")
    if ordinal is not None:
        ordinal = set(check_names("t_closeness", "ordinal", ordinal, allow_empty=True))
    cls, n_cls = _class_ids(microdata, list(keys))
    cols, summary, ground = {}, {}, {}
    for v in sensitive:
        code, cats = _sensitive_codes(microdata, v)
        ordered = (v in ordinal) if ordinal is not None else _is_ordinal(microdata.frame[v])
        emd = class_emd(cls, n_cls, code, len(cats), ordered)
        cols[f"{v}_t"] = emd[cls]
        summary[v] = float(emd[cls].max())
        ground[v] = "ordered" if ordered else "equal"
    return TClosenessResult(pd.DataFrame(cols, index=microdata.frame.index), summary, ground)
