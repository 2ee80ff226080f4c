"""RiskReport: per-record risk columns and a summary of a Microdata's disclosure risk."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..microdata import Microdata
from .frequencies import KeyFrequencies, key_frequencies


@dataclass(frozen=True)
class RiskReport:
    """Disclosure risk of a Microdata on its key variables.

    Attributes
    ----------
    records : pandas.DataFrame
        One row per record: ``fk``, ``Fk`` and flags ``violates_k{k}``.
    summary : dict
        ``n_records``, ``n_combinations``, ``n_sample_uniques``, ``k_violations``
        (``{"2": .., "3": .., "5": ..}``), ``k_reached``.
    """

    records: pd.DataFrame
    summary: dict = field(default_factory=dict)
    frequencies: KeyFrequencies | None = None

    def to_dict(self) -> dict:
        return dict(self.summary)

    def describe(self) -> str:
        s = self.summary
        lines = [f"records              {s['n_records']:,}",
                 f"key combinations     {s['n_combinations']:,}",
                 f"sample uniques       {s['n_sample_uniques']:,}  (records with f_k = 1)",
                 f"k reached            {s['k_reached']}"]
        for k, v in s["k_violations"].items():
            lines.append(f"records with f_k < {k:<2s} {v:,}")
        return "\n".join(lines)

    def report_html(self) -> str:
        s = self.summary
        rows = [("records", s["n_records"]), ("key combinations", s["n_combinations"]),
                ("sample uniques (f_k = 1)", s["n_sample_uniques"]), ("k reached", s["k_reached"])]
        rows += [(f"records with f_k &lt; {k}", v) for k, v in s["k_violations"].items()]
        body = "".join(f"<tr><th>{a}</th><td>{html.escape(str(b))}</td></tr>" for a, b in rows)
        return f"<table class='kv'>{body}</table>"


def measure_risk(microdata: Microdata, *, k_values: Sequence[int] = (2, 3, 5)) -> RiskReport:
    """Measure the disclosure risk of ``microdata`` on its key variables.

    Parameters
    ----------
    microdata : Microdata
        Data with at least one key variable.
    k_values : sequence of int
        The k for which records violating k-anonymity are counted.
    """
    freq = key_frequencies(microdata)
    records = pd.DataFrame({"fk": freq.fk, "Fk": freq.Fk}, index=microdata.frame.index)
    for k in k_values:
        records[f"violates_k{k}"] = freq.fk < k
    summary = {
        "n_records": freq.n_records,
        "n_combinations": freq.n_combinations,
        "n_sample_uniques": freq.n_sample_uniques,
        "k_violations": {str(k): freq.k_violations(k) for k in k_values},
        "k_reached": freq.k_reached(),
    }
    return RiskReport(records, summary, freq)
