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
