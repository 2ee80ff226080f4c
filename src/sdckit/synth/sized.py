"""A synthetic file of another size than the original, and the utility figures' sample.

synthpop's ``syn(k = ...)`` draws a file of ``k`` records (Nowok, Raab & Dibben 2016,
section 3.1): the records come stratum after stratum, each stratum with its proportional share
(:meth:`sdckit.synth.synthesis.FittedSynthesis.draw_resized_rows`). The measures downstream
read the two sizes apart: the propensity utility uses ``c = n_syn / (n_orig + n_syn)``
(Snoke, Raab, Nowok, Dibben & Slavkovic 2018, section 2), the table measures
``c = sum(s) / N``, and the disclosure measures (repU, DiSCO, TCAP) are percentages of the
original records.

The propensity model of the utility figures may be fitted on a seeded sample of bounded size
(:func:`utility_rows`): the same rows of the two files on either engine, so the Dask engine's
figures equal the in-memory ones for the same seed, and the result says ``sampled`` with the
sample's sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..microdata import Microdata
from .synthesis import child_stream
from .utility import propensity_utility

#: children of the step's stream that pick the utility's sample of the original and synthetic
#: records (0 draws the file, 1 the permutations of the utility, 2 the records fitted)
ORIGINAL_SAMPLE_CHILD, SYNTHETIC_SAMPLE_CHILD = 3, 4


def utility_rows(n_original: int, n_synthetic: int, sample: int,
                 stream: np.random.SeedSequence) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The rows of the original and of the synthetic file the propensity model reads: None,
    None (every record) when ``sample`` is 0 or the two files hold at most ``sample`` records;
    else ``sample`` records in all, split in proportion to the files' sizes (so ``c`` stays
    ``n_syn / N`` up to rounding), each file's drawn without replacement from its own child of
    the step's stream and sorted."""
    total = n_original + n_synthetic
    if not sample or total <= sample:
        return None, None
    m_o = min(n_original, max(1, int(round(sample * n_original / total))))
    m_s = min(n_synthetic, max(1, int(sample) - m_o))
    g_o = np.random.default_rng(child_stream(stream, ORIGINAL_SAMPLE_CHILD))
    g_s = np.random.default_rng(child_stream(stream, SYNTHETIC_SAMPLE_CHILD))
    return (np.sort(g_o.choice(n_original, size=m_o, replace=False)),
            np.sort(g_s.choice(n_synthetic, size=m_s, replace=False)))


def step_utility(original: pd.DataFrame, synthetic: pd.DataFrame, *, method: str, variables: Sequence[str],
                 cont_na: dict, categorical: Sequence[str], n_permutations: int, rng: Any,
                 n_original: int, n_synthetic: int, sampled: bool) -> dict:
    """The step's propensity figures (pMSE, S_pMSE and what they were computed on) from the
    records read (every record, or the :func:`utility_rows` sample)."""
    u = propensity_utility(original.reset_index(drop=True), synthetic.reset_index(drop=True), method=method,
                           variables=list(variables), cont_na=cont_na, categorical=list(categorical),
                           n_permutations=n_permutations, rng=rng)
    out = {"method": u.method, "pMSE": u.pMSE, "S_pMSE": u.S_pMSE, "null_pMSE": u.null_pmse,
           "records_original": int(n_original), "records_synthetic": int(n_synthetic),
           "sampled": bool(sampled)}
    if sampled:
        out["sample_original"] = int(len(original))
        out["sample_synthetic"] = int(len(synthetic))
    return out


def resized_microdata(md: Microdata, frame: pd.DataFrame) -> Microdata:
    """The synthetic records of a file of another size as a Microdata with the input's roles
    and meta; key (and PRAM) variables keep the original's categories, so their codes mean
    what they meant."""
    frame = frame[list(md.columns)].reset_index(drop=True)
    coded = [*md.key_vars, *[v for v in md.roles.get("pram_vars", ()) if v not in md.key_vars]]
    codes, cats = {}, {}
    for v in coded:
        cat = md.categories(v)
        c = np.asarray(cat.get_indexer(pd.Index(frame[v])), dtype=np.int32)
        bad = (c < 0) & frame[v].notna().to_numpy()
        if bad.any():
            raise InputError(f"synthesise: the key variable {v!r} took the value {frame[v][bad].iloc[0]!r}, "
                             "which is not a category of the original; keys keep their categories.")
        codes[v], cats[v] = c, cat
    return Microdata(frame, meta=md.meta, _codes=codes, _categories=cats, **md.roles)


__all__ = ["utility_rows", "step_utility", "resized_microdata", "ORIGINAL_SAMPLE_CHILD", "SYNTHETIC_SAMPLE_CHILD"]
