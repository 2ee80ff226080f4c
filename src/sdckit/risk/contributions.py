"""Contributions of each key variable to the disclosure risk.

* **SUDA2 contribution by attribute** (Elliot et al. 2002): a record's SUDA score is the sum
  of the weights of its minimal sample uniques (MSUs); the share of the score from the MSUs
  holding variable v is v's contribution for that record (the MSUs come from
  :mod:`sdckit.risk.suda`). Summed over records with the DIS-SUDA score as the record's
  weight, it gives each variable's share of the DIS-SUDA total (the per-variable DIS
  contribution); with the SUDA score as weight, sdcMicro's ``contributionPercent``.
* **Contribution to sample uniqueness**: the sample uniques lost when a key is dropped, and
  when it is coarsened (by a given recoding; by default adjacent category codes merged in
  pairs, code // 2).

References
----------
Elliot, M. J., Manning, A. M. and Ford, R. W. (2002). A computational algorithm for handling
the special uniques problem. IJUFKS 10(5), 493-509.

Templ, M., Kowarik, A. and Meindl, B. (2015). sdcMicro, ``suda2`` (``contributionPercent``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InputError
from ..result import jsonable
from .frequencies import frequencies_from_codes


@dataclass(frozen=True)
class SudaContributions:
    """Per-variable shares (percent) of the SUDA and DIS-SUDA totals."""

    variables: tuple
    suda_percent: dict
    dis_percent: dict
    record_contributions: np.ndarray   # (n, M) share of each record's score per variable

    def summary(self) -> dict:
        return jsonable({"suda_percent": self.suda_percent, "dis_percent": self.dis_percent})


def suda_contributions(microdata=None, *, suda=None, **suda_kwargs) -> SudaContributions:
    """Each key's share of the SUDA and DIS-SUDA totals, from SUDA2's MSUs.

    Give a Microdata (SUDA2 is run with ``suda_kwargs``) or a finished
    :class:`~sdckit.risk.suda.SudaResult` as ``suda``.
    """
    if suda is None:
        if microdata is None:
            raise InputError("suda_contributions: give a Microdata or a SUDA2 result.")
        from .suda import microdata_suda2
        suda = microdata_suda2(microdata, **suda_kwargs)
    share = suda.contributions                      # (n, M), rows sum to >= 1 (an MSU holds several variables)
    out = {}
    for name, wts in (("suda", suda.score), ("dis", suda.dis_score)):
        raw = (share * wts[:, None]).sum(axis=0)
        tot = float(wts.sum())
        out[name] = {v: (float(100.0 * raw[j] / tot) if tot > 0 else 0.0)
                     for j, v in enumerate(suda.variables)}
    return SudaContributions(tuple(suda.variables), out["suda"], out["dis"], share)


def coarsen_pairs(codes: np.ndarray) -> np.ndarray:
    """Default coarsening: adjacent category codes merged in pairs (missing stays missing)."""
    return np.where(codes < 0, codes, codes // 2)


def uniqueness_contributions(microdata, *, coarsen: Mapping[str, Mapping] | None = None,
                             keys: Sequence[str] | None = None) -> pd.DataFrame:
    """Sample uniques lost when each key is dropped or coarsened.

    Parameters
    ----------
    coarsen : dict, optional
        ``{key: {value: new value}}`` recodings (values not listed are kept); keys not listed
        are coarsened with :func:`coarsen_pairs`.

    Returns
    -------
    pandas.DataFrame
        One row per key: ``variable``, ``uniques`` (with every key), ``uniques_dropped``,
        ``lost_dropped``, ``share_lost_dropped``, ``uniques_coarsened``, ``lost_coarsened``,
        ``share_lost_coarsened``, ``coarsening``; sorted by ``lost_dropped`` (largest first).
    """
    keys = list(microdata.key_vars if keys is None else keys)
    if not keys:
        raise InputError("uniqueness contributions need key variables: give the key_vars role.")
    coarsen = dict(coarsen or {})
    unknown = [k for k in coarsen if k not in keys]
    if unknown:
        raise InputError(f"coarsen: {unknown} are not key variables (keys: {', '.join(keys)}).")
    codes = [microdata.codes(k) for k in keys]
    ncat = [microdata.n_categories(k) for k in keys]

    def uniques(cs, ms):
        if not cs:
            return 0
        return frequencies_from_codes(cs, ms).n_sample_uniques

    base = uniques(codes, ncat)
    rows = []
    for j, k in enumerate(keys):
        rest = [c for i, c in enumerate(codes) if i != j]
        rest_m = [m for i, m in enumerate(ncat) if i != j]
        u_drop = uniques(rest, rest_m)
        if k in coarsen:
            cats = microdata.categories(k)
            mapped = pd.Series(np.asarray(cats, dtype=object)).map(
                lambda v, mapping=coarsen[k]: mapping.get(v, v))
            new_codes_of_cat, _ = pd.factorize(mapped)
            cc = np.where(codes[j] < 0, -1, new_codes_of_cat[np.maximum(codes[j], 0)])
            how = f"{len(coarsen[k])} values recoded"
        else:
            cc = coarsen_pairs(codes[j])
            how = "adjacent categories merged in pairs"
        cm = int(cc.max()) + 1 if cc.size and cc.max() >= 0 else 1
        u_co = uniques(codes[:j] + [cc] + codes[j + 1:], ncat[:j] + [cm] + ncat[j + 1:])
        rows.append({"variable": k, "uniques": base, "uniques_dropped": u_drop,
                     "lost_dropped": base - u_drop,
                     "share_lost_dropped": (base - u_drop) / base if base else 0.0,
                     "uniques_coarsened": u_co, "lost_coarsened": base - u_co,
                     "share_lost_coarsened": (base - u_co) / base if base else 0.0,
                     "coarsening": how})
    return pd.DataFrame(rows).sort_values("lost_dropped", ascending=False, kind="stable").reset_index(drop=True)


__all__ = ["SudaContributions", "coarsen_pairs", "suda_contributions", "uniqueness_contributions"]
