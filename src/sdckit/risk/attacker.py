"""Attacker models of re-identification risk: prosecutor, journalist and marketer (as ARX).

* **Prosecutor**: the attacker knows the target is in the released file; a record's risk is
  1 / f_k, f_k the size of its key class in the file.
* **Journalist**: the attacker does not know whether the target is in the file and matches
  against the population (or an identification database covering it); a record's risk is
  1 / F_k, F_k the size of its class in the population (a population table, or the estimate
  from the sampling weights, F_k = max(sum of weights, f_k)).
* **Marketer**: the attacker wants to re-identify as many records as possible; the risk is
  the expected share of records re-identified, (1 / n) sum_k f_k / F_k (= the average of the
  journalist's per-record risk; with the file as the population, the number of classes / n).

For each: the share of records whose risk is above a threshold, the highest risk and the
average risk.

References
----------
El Emam, K. (2013). Guide to the De-Identification of Personal Health Information. CRC
Press, ch. 11-14.

El Emam, K. and Dankar, F. K. (2008). Protecting privacy using k-anonymity. Journal of the
American Medical Informatics Association 15(5), 627-637.

Prasser, F., Kohlmayer, F. et al., ARX (``RiskModelSampleSummary``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import check_float
from ..errors import InputError
from ..result import ResultDisplay, jsonable

MODELS = ("prosecutor", "journalist", "marketer")


@dataclass(frozen=True)
class AttackerRisk:
    """One attacker model's risk: per-record risk, share above the threshold, highest, average."""

    model: str
    threshold: float
    record_risk: np.ndarray
    highest: float
    average: float
    share_above: float
    n_above: int
    population: str = "sample"

    def summary(self) -> dict:
        return jsonable({"model": self.model, "threshold": self.threshold, "highest": self.highest,
                         "average": self.average, "share_above": self.share_above,
                         "n_above": self.n_above, "population": self.population})

    def to_dict(self) -> dict:
        return self.summary()


def _risk(model: str, r: np.ndarray, threshold: float, average: float | None = None,
          population: str = "sample") -> AttackerRisk:
    above = r > threshold
    return AttackerRisk(model, threshold, r, float(r.max()) if r.size else 0.0,
                        float(r.mean() if average is None else average) if r.size else 0.0,
                        float(above.mean()) if r.size else 0.0, int(above.sum()), population)


def prosecutor_risk(fk: np.ndarray, threshold: float = 0.2) -> AttackerRisk:
    """Prosecutor risk 1 / f_k of each record (``fk`` per record)."""
    threshold = check_float("prosecutor_risk", "threshold", threshold, low=0.0, high=1.0)
    fk = np.asarray(fk, dtype=np.float64)
    return _risk("prosecutor", 1.0 / fk, threshold)


def journalist_risk(fk: np.ndarray, Fk: np.ndarray, threshold: float = 0.2, *,
                    population: str = "weights") -> AttackerRisk:
    """Journalist risk 1 / F_k of each record (``fk``, ``Fk`` per record; F_k >= f_k)."""
    threshold = check_float("journalist_risk", "threshold", threshold, low=0.0, high=1.0)
    fk = np.asarray(fk, dtype=np.float64)
    Fk = np.asarray(Fk, dtype=np.float64)
    bad = np.flatnonzero(Fk < fk - 1e-9)
    if bad.size:
        raise InputError(f"journalist risk: {bad.size} records have a population count F_k below the "
                         f"sample count f_k (e.g. record {bad[0]}: F_k = {Fk[bad[0]]:g} < f_k = "
                         f"{fk[bad[0]]:g}); the population must contain the sample.")
    return _risk("journalist", 1.0 / Fk, threshold, population=population)


def marketer_risk(fk: np.ndarray, Fk: np.ndarray, threshold: float = 0.2, *,
                  population: str = "weights") -> AttackerRisk:
    """Marketer risk: expected share of records re-identified, (1 / n) sum_k f_k / F_k."""
    j = journalist_risk(fk, Fk, threshold, population=population)
    return AttackerRisk("marketer", j.threshold, j.record_risk, j.highest, j.average,
                        j.share_above, j.n_above, population)


def population_counts(frame: pd.DataFrame, keys: Sequence[str], population: pd.DataFrame,
                      count: str = "count") -> np.ndarray:
    """F_k of each record of ``frame`` looked up in a population table (keys + ``count``).

    Raises InputError when the table lacks a key or a count column, or does not cover every
    key combination of the sample (the message names ``population.attrs["source"]`` when set).
    """
    keys = list(keys)
    src = population.attrs.get("source")
    where = f"population table {src}" if src else "population table"
    missing = [c for c in keys + [count] if c not in population.columns]
    if missing:
        raise InputError(f"{where}: columns {missing} are missing; it needs the key "
                         f"columns {keys} and a count column {count!r}.")
    pop = population[keys + [count]].copy()
    if pop.duplicated(keys).any():
        pop = pop.groupby(keys, dropna=False, observed=True, as_index=False)[count].sum()
    left = frame[keys].copy()
    for k in keys:   # compare values, not dtypes (categorical vs plain)
        left[k] = left[k].astype(object)
        pop[k] = pop[k].astype(object)
    merged = left.merge(pop, on=keys, how="left", sort=False)
    Fk = merged[count].to_numpy(dtype=np.float64)
    miss = np.flatnonzero(np.isnan(Fk))
    if miss.size:
        combos = left.iloc[miss].drop_duplicates()
        ex = ", ".join(f"{k}={combos.iloc[0][k]!r}" for k in keys)
        raise InputError(f"{where}: it does not cover {len(combos)} key combinations of the "
                         f"sample ({miss.size} records; e.g. {ex}); give a table with every "
                         "combination of the sample.")
    return Fk


@dataclass(frozen=True)
class AttackerReport(ResultDisplay):
    prosecutor: AttackerRisk
    journalist: AttackerRisk
    marketer: AttackerRisk

    def summary(self) -> dict:
        return {m: getattr(self, m).summary() for m in MODELS}

    def to_dict(self) -> dict:
        return self.summary()

    def describe(self) -> str:
        lines = [f"attacker models (threshold {self.prosecutor.threshold:g}):"]
        for m in MODELS:
            r = getattr(self, m)
            lines.append(f"  {m:<10s} highest {r.highest:.4g}, average {r.average:.4g}, "
                         f"{100 * r.share_above:.2f} % of records above"
                         + ("" if m == "prosecutor" else f" (population: {r.population})"))
        return "\n".join(lines)


def attacker_risks(microdata, *, threshold: float = 0.2, population: pd.DataFrame | None = None,
                   population_count: str = "count") -> AttackerReport:
    """Prosecutor, journalist and marketer risk of a Microdata on its key variables.

    The population counts F_k come from ``population`` (a table of key combinations and
    counts) when given, else from the weight role (sum of weights, at least f_k); without
    either the file is taken as the population (F_k = f_k).
    """
    from .frequencies import key_frequencies

    keys = list(microdata.key_vars)
    if not keys:
        raise InputError("attacker models need key variables: give the key_vars role (--keys).")
    freq = key_frequencies(microdata)
    fk = freq.fk.astype(np.float64)
    if population is not None:
        Fk = population_counts(microdata.frame, keys, population, population_count)
        source = "population table"
    elif microdata.weight is not None:
        Fk = np.maximum(freq.Fk, fk)
        source = "weights"
    else:
        Fk = fk
        source = "sample (no weights)"
    return AttackerReport(prosecutor_risk(fk, threshold),
                          journalist_risk(fk, Fk, threshold, population=source),
                          marketer_risk(fk, Fk, threshold, population=source))


__all__ = ["AttackerReport", "AttackerRisk", "MODELS", "attacker_risks", "journalist_risk",
           "marketer_risk", "population_counts", "prosecutor_risk"]
