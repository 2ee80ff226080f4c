"""Table utility of a synthetic file: synthpop's ``utility.tab`` measures.

Raab, Nowok & Dibben (2021): for a table of chosen variables (numeric ones grouped into
``ngroups`` quantile groups), with ``o`` and ``s`` the original and synthetic counts of the
non-empty cells and ``c = sum(s) / N``: ``VW`` (Voas-Williamson), ``FT`` (Freeman-Tukey),
``JSD``, ``SPECKS``, ``U``, ``G``, ``pMSE = VW c (1-c)^2 / N``, ``PO50``, ``MabsDD``,
``WMabsDD``, ``dBhatt`` and ``S_x = x / df`` (see :mod:`sdckit.synth.utility` for the formulas).

References
----------
Raab, G. M., Nowok, B. and Dibben, C. (2021). Assessing, visualizing and improving the utility
of synthetic data. arXiv:2109.12717.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import close_names
from ..errors import InputError
from ..result import jsonable
from .frames import frame_of as _frame
from .frames import is_numeric as _is_numeric


# ----------------------------------------------------------------------------- tables
@dataclass(frozen=True)
class TableUtility:
    """synthpop's ``utility.tab`` measures for the table of ``variables``, over its
    ``n_cells`` non-empty cells (``df = n_cells - 1``)."""

    variables: tuple[str, ...]
    measures: dict
    df: int
    n_cells: int

    def to_dict(self) -> dict:
        return jsonable({"variables": list(self.variables), "measures": self.measures, "df": self.df,
                         "n_cells": self.n_cells})

    def describe(self) -> str:
        m = self.measures
        return (f"table of {' x '.join(self.variables)}: S_pMSE {m['S_pMSE']:.4g}, VW {m['VW']:.4g}, "
                f"FT {m['FT']:.4g}, JSD {m['JSD']:.4g}, SPECKS {m['SPECKS']:.4g} ({self.df} df)")


def _quantile_breaks(x: np.ndarray, n: int) -> np.ndarray:
    """Quantile breaks (R's type 7), distinct."""
    return np.unique(np.quantile(x, np.linspace(0.0, 1.0, n + 1)))


def _group(x1: np.ndarray, x2: np.ndarray, n: int, cont_na: Sequence[float], style: str) -> tuple:
    """Numeric values to ``n`` groups with breaks from both files' observed values (intervals
    closed on the left, the last one closed on both sides), missing and special codes kept as
    their own groups."""
    special = list(cont_na)
    m1 = ~np.isnan(x1) & ~np.isin(x1, special)
    m2 = ~np.isnan(x2) & ~np.isin(x2, special)
    pool = np.concatenate([x1[m1], x2[m2]])
    if pool.size == 0:
        raise InputError("utility: a numeric variable has only missing values.")
    if style == "quantile":
        br = _quantile_breaks(pool, n)
    else:
        br = np.unique(np.linspace(pool.min(), pool.max(), n + 1))

    def cut(x: np.ndarray, m: np.ndarray) -> np.ndarray:
        out = np.full(x.shape[0], -1, dtype=np.int64)
        if br.size < 2:
            out[m] = 0
        else:
            g = np.searchsorted(br, x[m], side="right") - 1
            out[m] = np.clip(g, 0, br.size - 2)
        for j, code in enumerate(special):
            out[x == code] = max(br.size - 1, 1) + j
        return out       # -1 = missing

    return cut(x1, m1), cut(x2, m2), (br.size - 1) + len(special)


def table_utility(original: Any, synthetic: Any, variables: Sequence[str], *, ngroups: int = 5,
                  use_na: bool = True, cont_na: Mapping[str, Sequence[float]] | None = None,
                  categorical: Sequence[str] = ()) -> TableUtility:
    """Utility of the table of ``variables`` (synthpop's ``utility.tab``; module docstring)."""
    d, s = _frame(original, "original"), _frame(synthetic, "synthetic")
    cont_na = dict(cont_na or {})
    variables = list(dict.fromkeys(variables))
    if not variables:
        raise InputError("table_utility: name the variables of the table.")
    for c in variables:
        for name, fr in (("original", d), ("synthetic", s)):
            if c not in fr.columns:
                raise InputError(f"table_utility: the {name} data have no column {c!r}; "
                                 f"{close_names(c, [str(x) for x in fr.columns])}")
    cell_o = np.zeros(len(d), dtype=np.int64)
    cell_s = np.zeros(len(s), dtype=np.int64)
    keep_o = np.ones(len(d), dtype=bool)
    keep_s = np.ones(len(s), dtype=bool)
    for c in variables:
        if _is_numeric(d[c]) and c not in categorical:
            x1 = d[c].to_numpy(dtype=np.float64, na_value=np.nan)
            x2 = pd.to_numeric(s[c], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            g1, g2, n_groups = _group(x1, x2, ngroups, cont_na.get(c, ()), "quantile")
            if n_groups < 3:   # synthpop then tries equal-width groups
                g1, g2, n_groups = _group(x1, x2, ngroups, cont_na.get(c, ()), "equal")
            levels = int(max(g1.max(initial=0), g2.max(initial=0))) + 1
            a, b = g1, g2
        else:
            lo = d[c].astype(object).where(d[c].notna(), None)
            ls = s[c].astype(object).where(s[c].notna(), None)
            lo = pd.Series([None if v is None else str(v) for v in lo], dtype=object)
            ls = pd.Series([None if v is None else str(v) for v in ls], dtype=object)
            codes, uniq = pd.factorize(lo, sort=True, use_na_sentinel=True)
            cat = pd.Categorical(ls, categories=uniq)
            a, b = codes.astype(np.int64), np.asarray(cat.codes, dtype=np.int64)
            levels = len(uniq)
        has_na = (a < 0).any() and use_na
        if has_na:
            a = np.where(a < 0, levels, a)
            b = np.where(b < 0, levels, b)
            levels += 1
        else:
            keep_o &= a >= 0
            keep_s &= b >= 0
        cell_o = cell_o * (levels + 1) + np.where(a < 0, 0, a)
        cell_s = cell_s * (levels + 1) + np.where(b < 0, 0, b)
    cells, inv = np.unique(np.concatenate([cell_o[keep_o], cell_s[keep_s]]), return_inverse=True)
    no = int(keep_o.sum())
    td = np.bincount(inv[:no], minlength=cells.shape[0]).astype(np.float64)
    ts = np.bincount(inv[no:], minlength=cells.shape[0]).astype(np.float64)
    return _table_measures(variables, td, ts)


def _table_measures(variables: Sequence[str], td: np.ndarray, ts: np.ndarray) -> TableUtility:
    totcells = td.shape[0]
    df = totcells - 1
    N = float(np.sum(ts + td))
    cc = float(np.sum(ts)) / N
    expect = (ts + td) * cc
    diff = ts - td * cc / (1 - cc)
    VW = float(np.sum(diff ** 2 / expect))
    FT = 4 * float(np.sum((np.sqrt(ts) - np.sqrt(cc / (1 - cc) * td)) ** 2))
    pmse = VW * cc * (1 - cc) ** 2 / N
    ptd = td / td.sum()
    pts = ts / ts.sum()
    half = (ptd + pts) * 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        jsd = float(np.sum(np.where(ptd > 0, ptd * np.log2(ptd / half), 0.0))) / 2 + \
            float(np.sum(np.where(pts > 0, pts * np.log2(pts / half), 0.0))) / 2
        both = (ts > 1e-8) & (td > 1e-8)
        sok, dok = ts[both], td[both]
        G = 2 * float(np.sum(sok * np.log(sok / sok.sum() / dok * dok.sum())))
    dfG = int(both.sum()) - 1
    score = ts / (ts + td)
    specks = _weighted_ks(score, ts, td)
    u = _weighted_w(score, ts, td)
    predsyn = pts > ptd
    po50 = (float(ts[predsyn].sum()) + float(td[~predsyn].sum())) / (float(ts.sum()) + float(td.sum())) * 100 - 50
    mabsdd = float(np.sum(np.abs(diff))) / float(ts.sum())
    wmabsdd = float(np.sum(np.abs(diff) / np.sqrt(expect))) / math.sqrt(2 / math.pi)
    dbhatt = math.sqrt(max(0.0, 1 - float(np.sum(np.sqrt(ptd * pts)))))
    measures = {"VW": VW, "FT": FT, "JSD": jsd, "SPECKS": specks, "WMabsDD": wmabsdd, "U": u, "G": G,
                "pMSE": pmse, "PO50": po50, "MabsDD": mabsdd, "dBhatt": dbhatt,
                "S_VW": VW / df if df > 0 else float("nan"), "S_FT": FT / df if df > 0 else float("nan"),
                "S_JSD": jsd * 2 * N / df / math.log(2) if df > 0 else float("nan"),
                "S_WMabsDD": wmabsdd / df if df > 0 else float("nan"),
                "S_G": G / dfG if dfG > 0 else float("nan"),
                "S_pMSE": VW / df if df > 0 else float("nan"), "dfG": dfG}
    return TableUtility(tuple(variables), measures, df, totcells)


def _weighted_ks(score: np.ndarray, ws: np.ndarray, wd: np.ndarray) -> float:
    o = np.argsort(score, kind="mergesort")
    sc, a, b = score[o], ws[o], wd[o]
    # cumulative shares at each distinct score
    uniq, idx = np.unique(sc, return_index=True)
    ca = np.cumsum(a) / a.sum()
    cb = np.cumsum(b) / b.sum()
    last = np.r_[idx[1:] - 1, sc.shape[0] - 1]
    return float(np.max(np.abs(ca[last] - cb[last])))


def _weighted_w(score: np.ndarray, ws: np.ndarray, wd: np.ndarray) -> float:
    """Wilcoxon W of the synthetic records' cell scores against the original ones' (ties
    count one half)."""
    uniq, inv = np.unique(score, return_inverse=True)
    a = np.bincount(inv, weights=ws, minlength=uniq.shape[0])
    b = np.bincount(inv, weights=wd, minlength=uniq.shape[0])
    below = np.concatenate([[0.0], np.cumsum(b)[:-1]])
    return float(np.sum(a * (below + 0.5 * b)))


__all__ = ["TableUtility", "table_utility"]
