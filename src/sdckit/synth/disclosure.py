"""Disclosure measures of a synthetic file, as synthpop 1.9 ``disclosure()`` defines them.

An intruder knows some *key* variables of a person and looks them up in the synthetic file,
to recognise a record (identity disclosure) or to learn the person's value of a *target*
variable (attribute disclosure). With ``d`` the original and ``s`` the synthetic records,
``f_d(k)``, ``f_s(k)`` the counts of key combination ``k`` and ``f_d(t, k)``, ``f_s(t, k)``
those of target level ``t`` within it, ``p_s(t | k) = f_s(t, k) / f_s(k)`` (Raab, Nowok &
Dibben 2024, sections 3-4; all measures in percent):

Identity
    ``UiO``   original records unique on the keys: ``#{k: f_d(k) = 1} / N_d``;
    ``UiS``   synthetic records unique on the keys: ``#{k: f_s(k) = 1} / N_s``;
    ``UiOiS`` original uniques whose keys occur in the synthetic file;
    ``repU``  replicated uniques: keys unique in both files, ``#{k: f_d(k) = f_s(k) = 1} / N_d``.
Attribute
    ``Dorig`` original records whose keys determine the target in the original
    (``p_d(t | k) = 1``); ``Dsyn`` the same within the synthetic file (over ``N_s``);
    ``iS``    original records whose keys occur in the synthetic file;
    ``DiS``   original records whose keys occur in the synthetic file with a target level that
    is certain there (some ``p_s(t | k) = 1``);
    ``DiSCO`` original records whose keys occur in the synthetic file and whose *own* target
    level is certain there (``p_s(t_i | k_i) = 1``): disclosed correctly;
    ``DiSDiO`` those of DiSCO whose target is also certain in the original.
CAP measures
    ``baseCAPd = sum_t (f_d(t) / N_d)^2``, ``CAPd = sum_k f_d(k) sum_t p_d(t | k)^2 / N_d``,
    ``CAPs`` the same within the synthetic file, ``DCAP = sum_{t,k} p_s(t | k) f_d(t, k) / N_d``
    and ``TCAP = DiSCO / (original records whose keys occur in the synthetic file)``
    (Taub, Elliot, Pampaka & Smith 2018 for the CAP family; synthpop 1.9's TCAP as above).

Missing values of keys and target are one more level ("Missing"). Options restrict the
records counted for attribute disclosure as synthpop's ``disclosure()`` does: ``not_targetlev``
(target levels not counted), ``usetargetNA`` (count records with a missing target),
``usekeysNA`` (count records with a missing key, one flag per key), and ``exclude_ov_denom_lim``
(drop cells counting more than ``denom_lim`` original records, which few would call
disclosive).

References
----------
Raab, G. M., Nowok, B. and Dibben, C. (2024). Practical privacy metrics for synthetic data.
arXiv:2406.16826 (the measures synthpop 1.9's ``disclosure()`` computes).
Taub, J., Elliot, M., Pampaka, M. and Smith, D. (2018). Differential correct attribution
probability for synthetic data: an exploration. PSD 2018, LNCS 11126, 122-137.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import close_names
from ..errors import InputError
from ..result import jsonable

IDENTITY = ("UiO", "UiS", "UiOiS", "repU")
ATTRIBUTE = ("Dorig", "Dsyn", "iS", "DiS", "DiSCO", "DiSDiO", "max_denom", "mean_denom")
CAP = ("baseCAPd", "CAPd", "CAPs", "DCAP", "TCAP")


@dataclass(frozen=True)
class DisclosureMeasures:
    """Identity, attribute and CAP measures of one synthetic file (percent), for ``keys`` and
    ``target``; ``n_original`` and ``n_synthetic`` records."""

    keys: tuple[str, ...]
    target: str
    identity: dict
    attribute: dict
    cap: dict
    n_original: int
    n_synthetic: int
    excluded: dict = field(default_factory=dict)

    @property
    def repU(self) -> float:
        return self.identity["repU"]

    @property
    def DiSCO(self) -> float:
        return self.attribute["DiSCO"]

    @property
    def TCAP(self) -> float:
        return self.cap["TCAP"]

    def to_dict(self) -> dict:
        return jsonable({"keys": list(self.keys), "target": self.target, "identity": self.identity,
                         "attribute": self.attribute, "cap": self.cap, "n_original": self.n_original,
                         "n_synthetic": self.n_synthetic, "excluded": self.excluded})

    def describe(self) -> str:
        return (f"keys {', '.join(self.keys)}; target {self.target}: "
                f"{self.identity['UiO']:.2f}% of the original records are unique on the keys, "
                f"{self.identity['repU']:.2f}% are unique in both files (repU); "
                f"the target is certain given the keys for {self.attribute['Dorig']:.2f}% in the "
                f"original and disclosed correctly by the synthetic file for "
                f"{self.attribute['DiSCO']:.2f}% (DiSCO; TCAP {self.cap['TCAP']:.2f}%)")

    def report_html(self) -> str:
        def row(label: str, v: float, what: str) -> str:
            return (f"<tr><th>{html.escape(label)}</th><td>{v:.2f}%</td>"
                    f"<td>{html.escape(what)}</td></tr>")

        i, a, c = self.identity, self.attribute, self.cap
        return ("<table class='kv'>"
                + row("unique in the original (UiO)", i["UiO"], "original records unique on the keys")
                + row("replicated uniques (repU)", i["repU"], "unique on the keys in both files")
                + row("target certain in the original (Dorig)", a["Dorig"],
                      "keys determine the target in the original data")
                + row("disclosed correctly (DiSCO)", a["DiSCO"],
                      "keys found in the synthetic file, which gives the person's own target value with certainty")
                + row("TCAP", c["TCAP"], "DiSCO among the original records whose keys occur in the synthetic file")
                + "</table>")


def _codes_union(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray, list]:
    """Codes of two columns over the union of their values; missing is one more level."""
    both = pd.concat([a.reset_index(drop=True), b.reset_index(drop=True)], ignore_index=True)
    if isinstance(both.dtype, pd.CategoricalDtype):
        both = both.astype(object)
    if pd.api.types.is_float_dtype(both):
        # a number's level is its text with 15 significant digits (R's as.character of a
        # double, which synthpop's factors use), so 0.1 + 0.2 and 0.3 are one level
        v = both.to_numpy(dtype=np.float64, na_value=np.nan)
        ok = ~np.isnan(v)
        text = np.full(v.shape[0], None, dtype=object)
        text[ok] = [f"{x:.15g}" for x in v[ok]]
        both = pd.Series(text)
    codes, uniques = pd.factorize(both, sort=True, use_na_sentinel=True)
    codes = codes.astype(np.int64)
    labels = [str(u) for u in uniques]
    if (codes < 0).any():
        codes[codes < 0] = len(labels)
        labels.append("Missing")
    return codes[:len(a)], codes[len(a):], labels


def disclosure_measures(original: Any, synthetic: Any, keys: Sequence[str], target: str, *,
                        not_targetlev: Sequence[Any] = (), usetargetNA: bool = True,
                        usekeysNA: bool | Sequence[bool] = True, exclude_ov_denom_lim: bool = False,
                        denom_lim: int = 5) -> DisclosureMeasures:
    """synthpop 1.9's ``disclosure()`` measures of ``synthetic`` against ``original``.

    Parameters
    ----------
    original, synthetic : pandas.DataFrame or Microdata
    keys : list of str
        What the intruder knows.
    target : str
        What the intruder wants to learn (not one of the keys).
    not_targetlev : list
        Target levels not counted as disclosed (as labels).
    usetargetNA, usekeysNA : bool
        Count records with a missing target / key (per key: a list of flags).
    exclude_ov_denom_lim, denom_lim
        Drop cells of more than ``denom_lim`` records from the attribute measures.

    Returns
    -------
    DisclosureMeasures
    """
    d = _frame(original, "original")
    s = _frame(synthetic, "synthetic")
    keys = list(keys)
    if isinstance(target, (list, tuple)):
        raise InputError("disclosure: target must be a single column.")
    for c in [*keys, target]:
        for name, fr in (("original", d), ("synthetic", s)):
            if c not in fr.columns:
                raise InputError(f"disclosure: the {name} data have no column {c!r}; "
                                 f"{close_names(c, [str(x) for x in fr.columns])}")
    if not keys:
        raise InputError("disclosure: name at least one key variable.")
    if len(set(keys)) != len(keys):
        raise InputError("disclosure: the keys repeat a column.")
    if target in keys:
        raise InputError(f"disclosure: the target {target!r} is also a key; the target is what the keys "
                         "should not reveal.")
    # synthpop orders the keys as the data's columns
    keys = [c for c in d.columns if c in keys]
    if isinstance(usekeysNA, bool):
        use_key_na = [usekeysNA] * len(keys)
    else:
        use_key_na = list(usekeysNA)
        if len(use_key_na) != len(keys):
            raise InputError("disclosure: usekeysNA needs one flag per key.")
    nd, ns = len(d), len(s)
    # key combinations as one code over both files
    kd = np.zeros(nd, dtype=np.int64)
    ks = np.zeros(ns, dtype=np.int64)
    key_missing_d, key_missing_s = [], []
    for c in keys:
        a, b, labels = _codes_union(d[c], s[c])
        L = len(labels) + 1
        kd = kd * L + a
        ks = ks * L + b
        miss = len(labels) - 1 if labels and labels[-1] == "Missing" else -1
        key_missing_d.append(a == miss)
        key_missing_s.append(b == miss)
    allk = np.concatenate([kd, ks])
    kuniq, kinv = np.unique(allk, return_inverse=True)
    kd, ks = kinv[:nd], kinv[nd:]
    nk = kuniq.shape[0]
    td, ts, tlabels = _codes_union(d[target], s[target])
    nt = len(tlabels)
    # the two-way tables (target x keys), as dense arrays when small, else by cell
    cells_d = td * nk + kd
    cells_s = ts * nk + ks
    cuniq, cinv = np.unique(np.concatenate([cells_d, cells_s]), return_inverse=True)
    fd = np.bincount(cinv[:nd], minlength=cuniq.shape[0]).astype(np.float64)
    fs = np.bincount(cinv[nd:], minlength=cuniq.shape[0]).astype(np.float64)
    ct = cuniq // nk            # target level of each cell
    ck = cuniq % nk             # key combination of each cell
    # margins before exclusions
    kd_tot = np.bincount(ck, weights=fd, minlength=nk)
    ks_tot = np.bincount(ck, weights=fs, minlength=nk)
    td_tot = np.bincount(ct, weights=fd, minlength=nt)
    with np.errstate(invalid="ignore", divide="ignore"):
        pd_ = np.where(kd_tot[ck] > 0, fd / kd_tot[ck], 0.0)
        ps_ = np.where(ks_tot[ck] > 0, fs / ks_tot[ck], 0.0)
    in_syn_key = ks_tot > 0                     # keys present in the synthetic file
    did = np.where(pd_ == 1, fd, 0.0)
    dis = np.where(ps_ == 1, fs, 0.0)
    t_iS = np.where(in_syn_key[ck], fd, 0.0)
    any_dis = np.zeros(nk, dtype=bool)
    any_dis[ck[ps_ == 1]] = True
    t_DiS = np.where(any_dis[ck], fd, 0.0)
    t_DiSCO = np.where(ps_ == 1, t_iS, 0.0)
    t_DiSDiO = np.where(pd_ == 1, t_DiSCO, 0.0)
    # exclusions (the same rule on every table)
    drop = np.zeros(cuniq.shape[0], dtype=bool)
    excluded = {}
    if not_targetlev:
        bad = {str(v) for v in not_targetlev}
        drop_t = np.array([lab in bad for lab in tlabels], dtype=bool)
        drop |= drop_t[ct]
        excluded["not_targetlev"] = sorted(bad)
    if not usetargetNA and tlabels and tlabels[-1] == "Missing":
        drop |= ct == nt - 1
        excluded["missing_target"] = True
    if not all(use_key_na):
        # a key combination whose component for a key with usekeysNA = False is missing
        kmiss = np.zeros(nk, dtype=bool)
        for j, use in enumerate(use_key_na):
            if not use:
                kmiss[kd[key_missing_d[j]]] = True
                kmiss[ks[key_missing_s[j]]] = True
        drop |= kmiss[ck]
        excluded["missing_keys"] = [k for k, u in zip(keys, use_key_na) if not u]

    def ex(t: np.ndarray) -> np.ndarray:
        t = np.where(drop, 0.0, t)
        if exclude_ov_denom_lim:
            t = np.where(t > denom_lim, 0.0, t)
        return t

    fd_x, fs_x = ex(fd), ex(fs)
    did, dis, t_iS, t_DiS, t_DiSCO, t_DiSDiO = (ex(t) for t in (did, dis, t_iS, t_DiS, t_DiSCO, t_DiSDiO))
    if exclude_ov_denom_lim:
        excluded["over_denom_lim"] = int(denom_lim)
    # identity, from the tables after exclusions
    kd_x = np.bincount(ck, weights=fd_x, minlength=nk)
    ks_x = np.bincount(ck, weights=fs_x, minlength=nk)
    UiS = float(np.sum(ks_x == 1)) / ns * 100
    UiO = float(np.sum(kd_x == 1)) / nd * 100
    UiOiS = float(np.sum((kd_x == 1) & in_syn_key)) / nd * 100
    repU = float(np.sum(kd_x[(ks_x == 1) & (kd_x == 1)])) / nd * 100
    # attribute
    Dorig = float(did.sum()) / nd * 100
    Dsyn = float(dis.sum()) / ns * 100
    iS = float(t_iS.sum()) / nd * 100
    DiS = float(t_DiS.sum()) / nd * 100
    DiSCO = float(t_DiSCO.sum()) / nd * 100
    DiSDiO = float(t_DiSDiO.sum()) / nd * 100
    pos = t_DiSCO[t_DiSCO > 0]
    max_denom = float(t_DiSCO.max()) if t_DiSCO.size else 0.0
    mean_denom = float(pos.mean()) if pos.size else float("nan")
    # CAP family
    with np.errstate(invalid="ignore", divide="ignore"):
        pdx = np.where(kd_x[ck] > 0, fd_x / kd_x[ck], 0.0)
        psx = np.where(ks_x[ck] > 0, fs_x / ks_x[ck], 0.0)
    baseCAPd = float(np.sum((td_tot / nd) ** 2)) * 100
    CAPd = float(np.sum(np.bincount(ck, weights=pdx ** 2, minlength=nk) * kd_x)) / nd * 100
    CAPs = float(np.sum(np.bincount(ck, weights=psx ** 2, minlength=nk) * ks_x)) / ns * 100
    DCAP = float(np.sum(psx * fd_x)) / nd * 100
    tcap_denom = float(np.sum(kd_x[ks_x > 0]))
    TCAP = float(t_DiSCO.sum()) / tcap_denom * 100 if tcap_denom > 0 else float("nan")
    return DisclosureMeasures(
        tuple(keys), target,
        {"UiO": UiO, "UiS": UiS, "UiOiS": UiOiS, "repU": repU},
        {"Dorig": Dorig, "Dsyn": Dsyn, "iS": iS, "DiS": DiS, "DiSCO": DiSCO, "DiSDiO": DiSDiO,
         "max_denom": max_denom, "mean_denom": mean_denom},
        {"baseCAPd": baseCAPd, "CAPd": CAPd, "CAPs": CAPs, "DCAP": DCAP, "TCAP": TCAP},
        nd, ns, excluded)


def _frame(data: Any, what: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    frame = getattr(data, "frame", None)
    if isinstance(frame, pd.DataFrame):
        return frame
    raise InputError(f"disclosure: the {what} data must be a DataFrame or a Microdata; got {type(data).__name__}.")


__all__ = ["DisclosureMeasures", "disclosure_measures", "IDENTITY", "ATTRIBUTE", "CAP"]
