"""The count tables behind the disclosure measures, in pieces that merge exactly.

Every measure of :func:`sdckit.synth.disclosure.disclosure_measures` is a function of the
two-way table of (key combination, target level) counts in the original (``f_d``) and the
synthetic file (``f_s``): identity and attribute figures are integer counts of records or key
combinations, and the CAP figures are sums of per-combination and per-cell terms. The table
is built here in pieces that any engine can make and merge:

1. :func:`raw_cells`: the distinct rows (keys and target) of one piece of one file with their
   counts, as the piece's dtypes hold them;
2. :func:`column_forms`: how each column's values become levels over both files (the dtype of
   the two columns stacked, as ``disclosure()`` stacks them; a floating column's level is its
   text with 15 significant digits, R's ``as.character``);
3. :func:`level_cells`: a piece's cells at those levels, cut into hash buckets of the key
   combination (:func:`split_cells`), so every cell of one combination lands in one bucket;
4. :func:`merge_cells`: the pieces of a bucket added; :func:`cell_stats`: a complete bucket's
   integer counts and the exact (dyadic) sums of its CAP terms; :func:`combine_stats`: buckets
   added (integers, exactly);
5. :func:`measures_from_stats`: the figures, as percentages.

Because step 4 adds integers and exact binary fractions only (:func:`dyadic_sum`), the figures
do not depend on how the records were cut into pieces or buckets: the in-memory engine (one
piece per file, one bucket) and the Dask engine (partitions, buckets merged as a tree on the
workers) give the same numbers, bit for bit.

References
----------
Raab, G. M., Nowok, B. and Dibben, C. (2024). Practical privacy metrics for synthetic data,
sections 3-4 (the measures). Shewchuk, J. R. (1997). Adaptive precision floating-point
arithmetic and fast robust geometric predicates (exact sums of floating-point numbers; here by
the simpler route of integer mantissas at a common scale).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

#: count columns of a cell table: original and synthetic records
FD, FS = "__f_d", "__f_s"
#: binary scale of the exact sums: every finite double is an integer multiple of 2**-SCALE
SCALE = 1126


@dataclass(frozen=True)
class DisclosureOptions:
    """``disclosure()``'s options that restrict the records counted (see
    :func:`sdckit.synth.disclosure.disclosure_measures`)."""

    not_targetlev: tuple = ()
    usetargetNA: bool = True
    use_key_na: tuple = ()
    exclude_ov_denom_lim: bool = False
    denom_lim: int = 5


@dataclass(frozen=True)
class DisclosureStats:
    """Sufficient statistics of the measures: integer counts (``counts``), exact sums of the CAP
    terms as integers at scale ``2**-SCALE`` (``sums``), the original's records per target
    level (``target_totals``, a Series by level) and the records of each file."""

    counts: dict = field(default_factory=dict)
    sums: dict = field(default_factory=dict)
    target_totals: Any = None
    max_denom: int = 0


# ----------------------------------------------------------------------------- exact sums
def dyadic_sum(values: Any) -> int:
    """The exact sum of finite doubles as an integer ``N`` (the sum is ``N * 2**-SCALE``).

    Each double is ``M * 2**(e - 53)`` with an integer mantissa ``M < 2**53`` (``frexp``); the
    mantissas of one exponent are added as two 26/27-bit halves in int64 (no overflow below
    2**36 terms) and the groups shifted to the common scale with Python integers.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[v != 0.0]
    if not v.size:
        return 0
    m, e = np.frexp(v)
    mant = (m * 2.0 ** 53).astype(np.int64)          # exact: |m| in [0.5, 1)
    shift = e.astype(np.int64) - 53 + SCALE           # >= 0 for every double
    order = np.argsort(shift, kind="stable")
    shift, mant = shift[order], mant[order]
    edges = np.flatnonzero(np.diff(shift)) + 1
    starts = np.concatenate([[0], edges])
    hi = np.add.reduceat(mant >> 26, starts)
    lo = np.add.reduceat(mant & ((1 << 26) - 1), starts)
    total = 0
    for s, h, low in zip(shift[starts].tolist(), hi.tolist(), lo.tolist()):
        total += ((h << 26) + low) << s
    return total


def dyadic_float(total: int) -> float:
    """The double nearest ``total * 2**-SCALE`` (Python's int division rounds correctly)."""
    return float(Fraction(total, 1 << SCALE))


# ----------------------------------------------------------------------------- levels
def column_forms(dtypes: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> dict:
    """How each column becomes levels: ``"float"`` (15-digit text), ``"object"`` (its values
    as objects) or a dtype to cast every piece to: the dtype of the pieces' columns stacked,
    as ``disclosure()`` stacks the original and the synthetic column."""
    out = {}
    for c in columns:
        stacked = pd.concat([pd.Series([], dtype=d[c]) for d in dtypes if c in d], ignore_index=True).dtype
        if isinstance(stacked, pd.CategoricalDtype) or pd.api.types.is_object_dtype(stacked):
            out[c] = "object"
        elif pd.api.types.is_float_dtype(stacked):
            out[c] = "float"
        else:
            out[c] = stacked
    return out


def raw_cells(frame: pd.DataFrame, keys: Sequence[str], target: str) -> tuple[pd.DataFrame, dict]:
    """The distinct (keys, target) rows of ``frame`` with their record count (column ``"n"``),
    in the frame's own dtypes, and those dtypes."""
    cols = [*keys, target]
    sub = frame[cols]
    dtypes = {c: sub[c].dtype for c in cols}
    if not len(sub):
        return pd.DataFrame({**{c: sub[c] for c in cols}, "n": np.zeros(0, np.int64)}), dtypes
    counts = sub.groupby(cols, dropna=False, sort=False, observed=True).size()
    cells = counts.reset_index(name="n")
    return cells, dtypes


def _as_levels(col: pd.Series, form: Any) -> pd.Series:
    """A column's values as levels (missing: None in object columns, NA otherwise)."""
    if form == "float":
        v = col.to_numpy(dtype=np.float64, na_value=np.nan)
        text = np.full(v.shape[0], None, dtype=object)
        ok = ~np.isnan(v)
        text[ok] = [f"{x:.15g}" for x in v[ok]]
        return pd.Series(text, index=col.index, dtype=object)
    if form == "object":
        s = col.astype(object)
        return s.where(s.notna(), None)
    return col.astype(form)


def level_cells(cells: pd.DataFrame, forms: Mapping[str, Any], keys: Sequence[str], target: str,
                synthetic: bool) -> pd.DataFrame:
    """A piece's cells at the levels of ``forms`` (cells that become one level added), with the
    counts in :data:`FD` (original) or :data:`FS` (synthetic)."""
    cols = [*keys, target]
    out = pd.DataFrame({c: _as_levels(cells[c], forms[c]) for c in cols})
    n = cells["n"].to_numpy(dtype=np.int64)
    out[FD] = np.zeros(len(out), np.int64) if synthetic else n
    out[FS] = n if synthetic else np.zeros(len(out), np.int64)
    return _add(out, cols)


def _add(table: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    if not len(table):
        return table.reset_index(drop=True)
    return table.groupby(list(cols), dropna=False, sort=False)[[FD, FS]].sum().reset_index()


def merge_cells(pieces: Sequence[pd.DataFrame], cols: Sequence[str]) -> pd.DataFrame:
    """Cell tables (each with one row per cell) added: one row per distinct (keys, target),
    counts summed."""
    pieces = [p for p in pieces if len(p)]
    if not pieces:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in [*cols, FD, FS]})
    if len(pieces) == 1:
        return pieces[0]
    return _add(pd.concat(pieces, ignore_index=True), cols)


def split_cells(cells: pd.DataFrame, keys: Sequence[str], n_buckets: int) -> tuple:
    """A cell table as ``n_buckets`` pieces by a hash of the key combination (pandas' fixed-key
    hash, the same in every process): every cell of a combination lands in one piece."""
    if n_buckets == 1:
        return (cells,)
    if not len(cells):
        return tuple(cells for _ in range(n_buckets))
    h = pd.util.hash_pandas_object(cells[list(keys)], index=False).to_numpy()
    b = (h % np.uint64(n_buckets)).astype(np.intp)
    return tuple(cells[b == i] for i in range(n_buckets))


# ----------------------------------------------------------------------------- statistics
def cell_stats(cells: pd.DataFrame, keys: Sequence[str], target: str, opts: DisclosureOptions) -> DisclosureStats:
    """The statistics of a table holding every cell of its key combinations (a bucket).

    The per-cell and per-combination rules are those of synthpop 1.9's ``disclosure()`` (see
    :mod:`sdckit.synth.disclosure`); ``p_d(t | k) = 1`` is tested as ``f_d(t, k) = f_d(k) > 0``.
    """
    keys = list(keys)
    if not len(cells):
        return DisclosureStats({}, {}, pd.Series(dtype=np.int64), 0)
    k = cells.groupby(keys, dropna=False, sort=False).ngroup().to_numpy()
    nk = int(k.max()) + 1
    fd = cells[FD].to_numpy(dtype=np.int64)
    fs = cells[FS].to_numpy(dtype=np.int64)
    tcol = cells[target]
    t_na = tcol.isna().to_numpy()

    def per_key(w: np.ndarray) -> np.ndarray:
        return np.bincount(k, weights=w, minlength=nk).astype(np.int64)  # exact below 2**53

    kd_tot, ks_tot = per_key(fd), per_key(fs)
    pd1 = (kd_tot[k] > 0) & (fd == kd_tot[k])          # p_d(t | k) = 1
    ps1 = (ks_tot[k] > 0) & (fs == ks_tot[k])          # p_s(t | k) = 1
    in_syn_key = ks_tot > 0
    did = np.where(pd1, fd, 0)
    dis = np.where(ps1, fs, 0)
    t_iS = np.where(in_syn_key[k], fd, 0)
    any_dis = np.zeros(nk, dtype=bool)
    any_dis[k[ps1]] = True
    t_DiS = np.where(any_dis[k], fd, 0)
    t_DiSCO = np.where(ps1, t_iS, 0)
    t_DiSDiO = np.where(pd1, t_DiSCO, 0)
    # exclusions (the same rule on every table)
    drop = np.zeros(len(cells), dtype=bool)
    if opts.not_targetlev:
        bad = {str(v) for v in opts.not_targetlev}
        labels = np.array(["Missing" if na else str(v) for v, na in zip(tcol.tolist(), t_na)], dtype=object)
        drop |= np.isin(labels, list(bad))
    if not opts.usetargetNA:
        drop |= t_na
    for c, use in zip(keys, opts.use_key_na):
        if not use:
            drop |= cells[c].isna().to_numpy()

    def ex(t: np.ndarray) -> np.ndarray:
        t = np.where(drop, 0, t)
        if opts.exclude_ov_denom_lim:
            t = np.where(t > opts.denom_lim, 0, t)
        return t

    fd_x, fs_x = ex(fd), ex(fs)
    did, dis, t_iS, t_DiS, t_DiSCO, t_DiSDiO = (ex(t) for t in (did, dis, t_iS, t_DiS, t_DiSCO, t_DiSDiO))
    kd_x, ks_x = per_key(fd_x), per_key(fs_x)
    both_unique = (ks_x == 1) & (kd_x == 1)
    pos = t_DiSCO[t_DiSCO > 0]
    counts = {"UiS": int(np.sum(ks_x == 1)), "UiO": int(np.sum(kd_x == 1)),
              "UiOiS": int(np.sum((kd_x == 1) & in_syn_key)), "repU": int(kd_x[both_unique].sum()),
              "Dorig": int(did.sum()), "Dsyn": int(dis.sum()), "iS": int(t_iS.sum()), "DiS": int(t_DiS.sum()),
              "DiSCO": int(t_DiSCO.sum()), "DiSDiO": int(t_DiSDiO.sum()), "pos_sum": int(pos.sum()),
              "pos_count": int(pos.size), "tcap_denom": int(kd_x[ks_x > 0].sum()),
              "n_original": int(fd.sum()), "n_synthetic": int(fs.sum())}
    # CAP terms: sum_k f(k) sum_t p(t | k)^2 = sum_k (sum_t f(t, k)^2) / f(k); DCAP per cell
    sq_d, sq_s = per_key(fd_x * fd_x), per_key(fs_x * fs_x)
    with np.errstate(invalid="ignore", divide="ignore"):
        capd = np.where(kd_x > 0, sq_d / kd_x, 0.0)
        caps = np.where(ks_x > 0, sq_s / ks_x, 0.0)
        psx = np.where(ks_x[k] > 0, fs_x / ks_x[k], 0.0)
    sums = {"CAPd": dyadic_sum(capd), "CAPs": dyadic_sum(caps), "DCAP": dyadic_sum(psx * fd_x)}
    totals = pd.Series(fd, index=pd.Index(tcol.to_numpy(), dtype=object)).groupby(level=0, dropna=False).sum()
    return DisclosureStats(counts, sums, totals, int(t_DiSCO.max()))


def combine_stats(parts: Sequence[DisclosureStats]) -> DisclosureStats:
    """Statistics of disjoint buckets added (exactly)."""
    parts = [p for p in parts if p.counts]
    if not parts:
        return DisclosureStats({}, {}, pd.Series(dtype=np.int64), 0)
    if len(parts) == 1:
        return parts[0]
    counts = {c: sum(p.counts[c] for p in parts) for c in parts[0].counts}
    sums = {c: sum(p.sums[c] for p in parts) for c in parts[0].sums}
    totals = pd.concat([p.target_totals for p in parts]).groupby(level=0, dropna=False).sum()
    return DisclosureStats(counts, sums, totals, max(p.max_denom for p in parts))


def measures_from_stats(st: DisclosureStats) -> tuple[dict, dict, dict]:
    """(identity, attribute, cap) figures in percent, from the merged statistics."""
    c = st.counts
    nd, ns = c.get("n_original", 0), c.get("n_synthetic", 0)

    def pct(x: int, n: int) -> float:
        return float(x) / n * 100 if n else float("nan")

    identity = {"UiO": pct(c.get("UiO", 0), nd), "UiS": pct(c.get("UiS", 0), ns),
                "UiOiS": pct(c.get("UiOiS", 0), nd), "repU": pct(c.get("repU", 0), nd)}
    attribute = {"Dorig": pct(c.get("Dorig", 0), nd), "Dsyn": pct(c.get("Dsyn", 0), ns),
                 "iS": pct(c.get("iS", 0), nd), "DiS": pct(c.get("DiS", 0), nd),
                 "DiSCO": pct(c.get("DiSCO", 0), nd), "DiSDiO": pct(c.get("DiSDiO", 0), nd),
                 "max_denom": float(st.max_denom),
                 "mean_denom": float(c["pos_sum"]) / c["pos_count"] if c.get("pos_count") else float("nan")}
    td = st.target_totals.to_numpy(dtype=np.float64) if st.target_totals is not None else np.zeros(0)
    base = dyadic_float(dyadic_sum((td / nd) ** 2)) if nd else float("nan")
    s = st.sums
    cap = {"baseCAPd": base * 100, "CAPd": dyadic_float(s.get("CAPd", 0)) / nd * 100 if nd else float("nan"),
           "CAPs": dyadic_float(s.get("CAPs", 0)) / ns * 100 if ns else float("nan"),
           "DCAP": dyadic_float(s.get("DCAP", 0)) / nd * 100 if nd else float("nan"),
           "TCAP": pct(c["DiSCO"], c["tcap_denom"]) if c.get("tcap_denom") else float("nan")}
    return identity, attribute, cap


__all__ = ["DisclosureOptions", "DisclosureStats", "FD", "FS", "SCALE", "dyadic_sum", "dyadic_float",
           "column_forms", "raw_cells", "level_cells", "merge_cells", "split_cells", "cell_stats",
           "combine_stats", "measures_from_stats"]
