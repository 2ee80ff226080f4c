"""Checks of ARX's further models on a released frame, with pandas only (independent of the
search's class tables): k-map by its estimate, beta-likeness, delta-disclosure privacy,
ordered-distance t-closeness and the population uniqueness bound (definitions in
:mod:`.models_arx` and :mod:`.models`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..result import Guarantee


def arx_guarantees(out: pd.DataFrame, kept: pd.DataFrame, qis: list[str], settings,
                   sensitive: str | None) -> list[Guarantee]:
    """The guarantees of the models ``settings`` (a :class:`.steps.Generalise`) sets, checked
    on the kept records ``kept`` of the released frame ``out``."""
    s = settings
    g: list[Guarantee] = []
    keys = kept[qis].astype(str)
    sizes = keys.groupby(qis, sort=False, dropna=False).size().to_numpy()
    if getattr(s, "k_map", None) is not None:
        from .models_arx import derived_k  # noqa: PLC0415

        kk = derived_k(int(s.k_map), len(out), float(s.population_size), s.k_map_estimator, s.significance)
        g.append(Guarantee("k_map", f"every released class has >= {kk} records (ARX's {s.k_map_estimator} "
                           f"estimate of {s.k_map}-map, N = {s.population_size:g})", int(sizes.min()),
                           int(sizes.min()) >= kk))
    if getattr(s, "population_uniqueness", None) is not None:
        from .models_arx import PopulationUniquenessBound  # noqa: PLC0415

        share = PopulationUniquenessBound(float(s.population_uniqueness), float(s.population_size),
                                          s.uniqueness_model).share(sizes)
        g.append(Guarantee("population_uniqueness", f"estimated share of population uniques ({s.uniqueness_model}) "
                           f"<= {s.population_uniqueness:g}", share, share <= s.population_uniqueness + 1e-12))
    wants = [getattr(s, "beta", None) is not None, getattr(s, "delta_disclosure", None) is not None,
             s.t is not None and s.t_distance == "ordered"]
    if sensitive is None or not any(wants):
        return g
    overall = out[sensitive].astype(str).value_counts(normalize=True)
    tab = pd.crosstab([keys[c] for c in qis], kept[sensitive].astype(str).to_numpy(), normalize="index")
    tab = tab.reindex(columns=overall.index, fill_value=0.0)
    p, q = tab.to_numpy(), overall.to_numpy()[None, :]
    present = p > 0
    if wants[0]:
        rel = np.where(present, (p - q) / q, -np.inf)
        limit = np.minimum(s.beta, -np.log(q)) if s.beta_variant == "enhanced" else s.beta
        worst = float((rel - limit).max())
        g.append(Guarantee("beta_likeness", f"every released class is {s.beta_variant} {s.beta:g}-like on "
                           f"{sensitive}", worst, worst <= 1e-12))
    if wants[1]:
        with np.errstate(divide="ignore"):
            d = np.where(present, np.abs(np.log2(np.where(present, p, 1.0) / q)), 0.0)
        g.append(Guarantee("delta_disclosure", f"every released class has |log2(p/q)| < {s.delta_disclosure:g} "
                           f"for the values of {sensitive} it holds", float(d.max()),
                           float(d.max()) < s.delta_disclosure - 1e-12))
    if wants[2]:
        labels = list(overall.index)
        try:
            order = np.argsort([float(v) for v in labels], kind="stable")
        except ValueError:
            order = np.argsort(np.array(labels, dtype=object), kind="stable")
        m = len(labels)
        emd = np.abs(np.cumsum((p - q)[:, order], axis=1)).sum(axis=1) / max(m - 1, 1)
        g.append(Guarantee("t_closeness_ordered", f"every released class is within ordered EMD {s.t:g} of the "
                           f"overall distribution of {sensitive}", float(emd.max()),
                           float(emd.max()) <= s.t + 1e-9 and math.isfinite(float(emd.max()))))
    return g


def profitability_guarantees(out: pd.DataFrame, suppressed: np.ndarray, qis: list[str], hierarchies: dict,
                             levels: dict, kind: str, cost_benefit) -> list[Guarantee]:
    """The profitability model ``kind`` (prosecutor or prosecutor_no_attack) checked on the
    released frame: every released class pays the publisher (payout > 0), or no attack on it
    pays the adversary (``|E| > G / C``). The shares of the released labels are counted in the
    hierarchy tables and the payout written out (Wan et al. 2015; definitions in
    :mod:`.profitability`), apart from the search's class tables."""
    cb = cost_benefit
    kept = out.loc[~np.asarray(suppressed, dtype=bool)]
    if len(kept) == 0:
        return []
    size = kept[qis].astype(str).groupby(qis, sort=False, dropna=False).transform("size")
    size = np.asarray(size, dtype=float).reshape(len(kept), -1)[:, 0]
    if kind == "prosecutor_no_attack":
        g, c = float(cb.adversary_gain), float(cb.adversary_cost)
        # an attack pays when G / |E| - C > 0; none does when |E| C >= G (ARX: |E| > G / C, k = 1 when G = 0)
        smallest = float(size.min())
        return [Guarantee("profitability_no_attack", f"no attack on a released record pays the adversary "
                          f"(every class size > gain {g:g} / cost {c:g})", smallest, g == 0 or smallest * c > g)]
    log_share = np.zeros(len(kept))
    log_domain = 0.0
    for q in qis:
        tab = hierarchies[q].table
        col = tab.iloc[:, int(levels[q])].astype(str)
        share = col.value_counts() / float(len(tab))
        log_share += np.log10(kept[q].astype(str).map(share).to_numpy(dtype=float))
        log_domain += math.log10(len(tab))
    il = np.clip(log_share / log_domain + 1.0, 0.0, 1.0) if log_domain > 0 else np.zeros(len(kept))
    p = 1.0 / size
    fine = np.where(cb.adversary_gain * p > cb.adversary_cost, cb.publisher_loss * p, 0.0)
    payout = cb.publisher_benefit * (1.0 - il) - fine
    worst = float(payout.min())
    return [Guarantee("profitability", "publishing every released record pays the publisher (expected payout "
                      "B (1 - IL) - fine > 0, prosecutor)", worst, worst > 0)]
