"""RiskReport: per-record risk columns and a summary of a Microdata's disclosure risk.

:func:`measure_risk` is the one entry point the command line and the release report use:
frequencies with missing values as wildcards (:mod:`sdckit.risk.missing`), k-anonymity,
individual and global risk with the mu-Argus threshold, household risk, optionally SUDA2,
and l-diversity / t-closeness when the data have sensitive variables. :func:`compare_risk`
sets two reports side by side (before / after masking).

References
----------
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for micro-data
using the R package sdcMicro. Journal of Statistical Software 67(4). (``measure_risk``.)

Hundepool, A. et al. (2012). Statistical Disclosure Control. Wiley, ch. 3.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._validation import check_choice, check_float, check_int
from ..errors import InputError
from ..microdata import Microdata
from ..result import ResultDisplay, jsonable
from .frequencies import KeyFrequencies
from .individual import METHODS, global_risk_threshold, individual_risk
from .ldiversity import LDiversityResult, TClosenessResult
from .measures import (
    Attacker,
    Contributions,
    Diversity,
    Households,
    LogLinear,
    Measure,
    MeasureContext,
    PopulationUniques,
    Suda2,
    Uniqueness,
    ordered,
)
from .missing import microdata_frequencies

if TYPE_CHECKING:  # SUDA2's numba kernels load when SUDA2 is asked for
    from .suda import SudaResult


@dataclass(frozen=True)
class RiskReport(ResultDisplay):
    """Disclosure risk of a Microdata on its key variables.

    Attributes
    ----------
    records : pandas.DataFrame
        One row per record: ``fk``, ``Fk``, ``risk`` (individual risk), flags
        ``violates_k{k}`` and ``above_threshold`` (risk above the mu-Argus threshold for
        ``max_global_risk``), ``hh_risk`` with a household role, ``suda_score`` and
        ``dis_suda_score`` with SUDA2.
    summary : dict
        ``n_records``, ``n_combinations``, ``n_sample_uniques``, ``k_violations``
        (``{"2": .., "3": .., "5": ..}``), ``k_reached``, ``global_risk`` (ER / n),
        ``expected_reidentifications`` (ER), ``max_individual_risk``, ``risk_threshold``,
        ``household_risk`` (mean of r_hh over records) with households, ``suda`` with SUDA2,
        ``l_diversity`` / ``t_closeness`` with sensitive variables.
    """

    records: pd.DataFrame
    summary: dict = field(default_factory=dict)
    frequencies: KeyFrequencies | None = None
    suda: SudaResult | None = None
    ldiversity: LDiversityResult | None = None
    tcloseness: TClosenessResult | None = None
    uniqueness: pd.DataFrame | None = None

    _headline = ("n_records", "n_sample_uniques", "k_reached", "global_risk", "max_individual_risk")

    @property
    def n_records(self) -> int:
        return int(self.summary["n_records"])

    @property
    def n_sample_uniques(self) -> int:
        """Records whose key combination is unique in the sample (f_k = 1)."""
        return int(self.summary["n_sample_uniques"])

    @property
    def k_reached(self) -> int:
        """The smallest f_k over the records (the k of k-anonymity the data reach)."""
        return int(self.summary["k_reached"])

    @property
    def global_risk(self) -> float | None:
        """Expected re-identifications per record (ER / n), when measured."""
        v = self.summary.get("global_risk")
        return None if v is None else float(v)

    @property
    def max_individual_risk(self) -> float | None:
        v = self.summary.get("max_individual_risk")
        return None if v is None else float(v)

    def to_dict(self) -> dict:
        return jsonable(dict(self.summary))

    def describe(self) -> str:
        s = self.summary
        lines = [f"records              {s['n_records']:,}",
                 f"key combinations     {s['n_combinations']:,}",
                 f"sample uniques       {s['n_sample_uniques']:,}  (records with f_k = 1)",
                 f"k reached            {s['k_reached']}"]
        for k, v in s["k_violations"].items():
            lines.append(f"records with f_k < {k:<2s} {v:,}")
        if "global_risk" in s:
            fk, Fk = self.records["fk"], self.records["Fk"]
            lines += [f"f_k                  min {fk.min():g}, median {fk.median():g}, max {fk.max():g}",
                      f"F_k                  min {Fk.min():g}, median {Fk.median():g}, max {Fk.max():g}",
                      f"individual risk      {s['risk_method']} ({'weighted' if s['weighted'] else 'population: 1/f_k'}), "
                      f"max {s['max_individual_risk']:.4g}",
                      f"expected re-identifications  {s['expected_reidentifications']:.4f}",
                      f"global risk          {s['global_risk']:.6f}  ({100 * s['global_risk']:.4f} %)"]
            th = s.get("risk_threshold")
            lines.append(f"risk threshold for global risk < {s['max_global_risk']:g}: "
                         + ("already below" if th is None else
                            f"{th:.4g} ({s['n_above_threshold']:,} records above)"))
        if "household_risk" in s:
            lines.append(f"household risk       {s['household_risk']:.6f} (mean of r_hh), "
                         f"{s['household_expected_reidentifications']:.4f} expected")
        if "suda" in s:
            d = s["suda"]
            lines += [f"SUDA2 (MSU size <= {d['max_size']}, {d['weights']} weights): "
                      f"{d['n_scored']:,} records with MSUs, {d['n_msu']:,} MSUs "
                      f"({', '.join(f'size {a}: {b}' for a, b in d['n_msu_by_size'].items())})",
                      f"  sum of scores {d['sum_scores']:.4g}, max score {d['max_score']:.4g}, "
                      f"sum of DIS-SUDA scores {d['sum_dis']:.4g} (sampling fraction {d['dis_fraction']:.4g})",
                      "  contribution by variable: " + ", ".join(
                          f"{v} {c:.1f}%" for v, c in sorted(d["attribute_contributions"].items(),
                                                             key=lambda x: -x[1]))]
        if self.uniqueness is not None:
            from .uniqueness import drivers_text
            lines.append("key combinations with the most uniques:")
            lines.append(drivers_text(self.uniqueness, top=8))
        if "l_diversity" in s:
            lines.append("l-diversity (smallest over classes): " + ", ".join(
                f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                for k, v in s["l_diversity"].items() if k not in ("sensitive", "recursive_c")))
        if "t_closeness" in s:
            lines.append("t-closeness (largest EMD): " + ", ".join(
                f"{k} {v:.4g} ({s['t_closeness']['ground_distance'][k]} distance)"
                for k, v in s["t_closeness"]["t"].items()))
        lines += _model_lines(s)
        return "\n".join(lines)

    def report_html(self) -> str:
        """Public HTML fragment: the summary table and a chart of the individual risks."""
        s = self.summary
        rows = [("records", s["n_records"]), ("key combinations", s["n_combinations"]),
                ("sample uniques (f_k = 1)", s["n_sample_uniques"]), ("k reached", s["k_reached"])]
        rows += [(f"records with f_k < {k}", v) for k, v in s["k_violations"].items()]
        for key, label in [("expected_reidentifications", "expected re-identifications"),
                           ("global_risk", "global risk (ER / n)"),
                           ("max_individual_risk", "largest individual risk"),
                           ("household_risk", "household risk (mean r_hh)")]:
            if key in s:
                rows.append((label, s[key]))
        if "suda" in s:
            rows += [("records with MSUs (SUDA2)", s["suda"]["n_scored"]),
                     ("sum of DIS-SUDA scores", s["suda"]["sum_dis"])]
        if "loglinear" in s:
            rows += [("tau1: expected population uniques (log-linear)", s["loglinear"]["tau1"]),
                     ("tau2: expected correct matches (log-linear)", s["loglinear"]["tau2"])]
        if "population_uniques" in s:
            rows.append(("estimated population uniques", s["population_uniques"]["population_uniques"]))
        for m, r in s.get("attacker", {}).items():
            rows.append((f"{m} risk (highest / average)", f"{r['highest']:.4g} / {r['average']:.4g}"))
        body = "".join(f"<tr><th>{html.escape(a)}</th><td>{html.escape(_fmt(b))}</td></tr>"
                       for a, b in rows)
        out = f"<table class='kv'>{body}</table>"
        if self.uniqueness is not None and len(self.uniqueness):
            rows_u = "".join(
                f"<tr><td>{html.escape(r.variables)}</td><td>{100 * r.share_unique:.2f}%</td>"
                f"<td>{100 * r.share_below_k:.2f}%</td></tr>"
                for r in self.uniqueness.head(10).itertuples(index=False))
            out += ("<table class='uniqueness'><tr><th>key variables</th><th>unique</th>"
                    f"<th>below k</th></tr>{rows_u}</table>")
        if "risk" in self.records and len(self.records):
            out += risk_histogram_html(self.records["risk"].to_numpy())
        return out


def _model_lines(s: dict) -> list[str]:
    """Text lines of the model-based measures of a summary (log-linear, population, attacker)."""
    lines = []
    if "loglinear_model" in s:
        m = s["loglinear_model"]
        d = m["diagnostic"]
        lines += [f"log-linear risk ({m['method']}, {m['formula']}): tau1 {m['tau1']:.4f} expected "
                  f"population uniques, tau2 {m['tau2']:.4f} expected correct matches "
                  f"(of {m['n_sample_uniques']:,} sample uniques)",
                  f"  model diagnostic: tau1 score {d['tau1']['score']:.3g} ({d['tau1']['verdict']}), "
                  f"tau2 score {d['tau2']['score']:.3g} ({d['tau2']['verdict']})"]
        lines += [f"  note: {n}" for n in m["notes"]]
    if "population_uniques" in s:
        p = s["population_uniques"]
        def f(v):
            return "n/a" if v is None else f"{v:,.1f}"
        lines.append(f"population uniques: {f(p['population_uniques'])} ({p['dankar_model']} by Dankar "
                     f"et al.'s rule; Zayatz {f(p['zayatz'])}, Pitman {f(p['pitman'])}, SNB {f(p['snb'])}; "
                     f"sampling fraction {p['sampling_fraction']:.4g})")
    if "key_contributions" in s:
        lines.append("sample uniques lost per key (dropped / coarsened): " + ", ".join(
            f"{r['variable']} {r['lost_dropped']} / {r['lost_coarsened']}" for r in s["key_contributions"]))
    if "attacker" in s:
        for m, r in s["attacker"].items():
            lines.append(f"{m} risk: highest {r['highest']:.4g}, average {r['average']:.4g}, "
                         f"{100 * r['share_above']:.2f} % of records above {r['threshold']:g}")
    return lines


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    return str(v)


def risk_histogram_html(risk: np.ndarray, alt: str = "records by individual risk") -> str:
    """Bar chart of the number of records per individual-risk band (embedded PNG)."""
    from ..report.plots import figure_to_html, new_figure

    edges = [0, 0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0000001]
    labels = ["<0.1%", "0.1-1%", "1-5%", "5-10%", "10-20%", "20-50%", ">=50%"]
    counts, _ = np.histogram(risk, bins=edges)
    fig, ax = new_figure(6, 3)
    ax.bar(labels, counts, color="#4a7ab0")
    ax.set_xlabel("individual re-identification risk")
    ax.set_ylabel("records")
    ax.set_yscale("symlog")
    return figure_to_html(fig, alt)


def _not_microdata(value) -> str:
    """The one-line refusal of a ``measure_risk`` input that is not a Microdata."""
    kind = "None" if value is None else type(value).__name__
    if isinstance(value, pd.DataFrame):
        how = "build one with sdckit.Microdata(frame, key_vars=[...]) or read_microdata(frame, key_vars=[...])"
    elif kind == "PartitionedMicrodata":
        how = "partitioned data are measured by sdckit.engine.risk.measure_risk_partitioned"
    else:
        how = "read one with sdckit.io.read_microdata(path, key_vars=[...])"
    return f"measure_risk needs a Microdata (the data with their key variables), got {kind}; {how}."


def measure_risk(microdata: Microdata, *, k_values: Sequence[int] = (2, 3, 5), suda: bool = False,
                 suda_max_size: int | None = None, missing_alpha: float = 1.0,
                 dis_fraction: float | None = None, risk_method: str = "approx",
                 max_global_risk: float = 0.01, suda_weights: str = "elliot",
                 recursive_c: float = 2.0, uniqueness_max_size: int | None = None,
                 ordinal: Sequence[str] | None = None, loglinear_method: str | None = None,
                 loglinear_formula: str | None = None, population_uniques: bool = False,
                 attacker_threshold: float | None = None, contributions: bool = False,
                 attacker_population: pd.DataFrame | None = None,
                 measures: Sequence[Measure] = ()) -> RiskReport:
    """Measure the disclosure risk of ``microdata`` on its key variables.

    Parameters
    ----------
    microdata : Microdata
        Data with at least one key variable; its ``weight`` role gives F_k (without weights
        the data are a population and r = 1/f_k), its ``household`` role the household risk,
        its ``sensitive`` role l-diversity and t-closeness.
    k_values : sequence of int
        The k for which records violating k-anonymity are counted.
    suda : bool
        Also run SUDA2.
    suda_max_size : int, optional
        Largest MSU size (default: the number of keys).
    missing_alpha : float in [0, 1]
        Weight of wildcard matches of missing key values (sdcMicro's ``alpha``).
    dis_fraction : float, optional
        Sampling fraction for DIS-SUDA. Default: n / sum of weights with a weight role,
        otherwise 0.01 (sdcMicro's default).
    risk_method : {"approx", "exact"}
        Individual-risk formula for f_k >= 3.
    max_global_risk : float in (0, 1)
        Target global risk for the mu-Argus threshold on individual risk (sdcMicro's
        ``max_global_risk``, default 0.01).
    suda_weights : {"elliot", "ihsn"}
    recursive_c : float
        c of recursive (c, l)-diversity.
    uniqueness_max_size : int, optional
        Also tabulate uniqueness by combination of up to this many key variables
        (:func:`~sdckit.risk.uniqueness.uniqueness_by_combination`, with k = the largest of
        ``k_values``); the table is ``report.uniqueness``, its first 10 rows go to the summary.
    ordinal : list of str, optional
        Sensitive variables measured with the ordered distance in t-closeness (default:
        ordered categoricals only).
    measures : sequence of Measure, optional
        Further analyses, added rather than flagged (:mod:`sdckit.risk.measures`):
        ``Suda2(...)``, ``Uniqueness(max_size)``, ``LogLinear(...)``, ``PopulationUniques()``,
        ``Attacker(threshold)``, ``Contributions()``. The flags above build the same measures
        (``suda=True`` is ``Suda2()``); the data's roles add ``Households()`` and
        ``Diversity()``. Each runs once, in a fixed order.

    References
    ----------
    Templ, Kowarik and Meindl (2015), sdcMicro's ``measure_risk``, ``freqCalc``, ``suda2``,
    ``ldiversity``.
    """
    if not isinstance(microdata, Microdata):
        raise InputError(_not_microdata(microdata))
    if not microdata.key_vars:
        raise InputError("measure_risk needs key variables: give the key_vars role (--keys).")
    ks = [check_int("measure_risk", "k_values", k, min_value=1) for k in k_values]
    check_choice("measure_risk", "risk_method", risk_method, METHODS)
    if suda or suda_weights != "elliot":  # the default is valid; SUDA2 loads only when used
        from .suda import SCORE_WEIGHTS

        check_choice("measure_risk", "suda_weights", suda_weights, SCORE_WEIGHTS)
    max_global_risk = check_float("measure_risk", "max_global_risk", max_global_risk, low=0,
                                  high=1, low_open=True, high_open=True)
    flags = dict(suda=suda, suda_max_size=suda_max_size, suda_weights=suda_weights, dis_fraction=dis_fraction,
                 recursive_c=recursive_c, ordinal=ordinal, uniqueness_max_size=uniqueness_max_size,
                 loglinear_method=loglinear_method, loglinear_formula=loglinear_formula,
                 population_uniques=population_uniques, attacker_threshold=attacker_threshold,
                 attacker_population=attacker_population, contributions=contributions)
    freq = microdata_frequencies(microdata, alpha=missing_alpha)
    weighted = microdata.weight is not None
    # one risk per key combination (f_k, F_k are constant within it), then per record
    g_risk = individual_risk(freq.counts, freq.weighted_counts, method=risk_method,
                             weighted=weighted)
    risk = g_risk[freq.group]
    n = freq.n_records
    er = float(risk.sum())  # ER = sum r_i
    # the summary's counts come from the combinations (f_k, risk and records per combination),
    # not from passes over the records
    sizes = freq.group_sizes
    threshold = global_risk_threshold(g_risk, max_global_risk, counts=sizes)
    above = risk > threshold if threshold is not None else np.zeros(n, dtype=bool)
    columns = {"fk": freq.fk, "Fk": freq.Fk, "risk": risk}
    for k in ks:
        columns[f"violates_k{k}"] = freq.fk < k
    columns["above_threshold"] = above
    records = pd.DataFrame(columns, index=microdata.frame.index, copy=False)
    fk_min = float(np.min(freq.counts))
    missing = None
    for v in microdata.key_vars:
        c = microdata.codes(v)
        if c.size and c.min() >= 0:      # nothing missing in this key
            continue
        m = c < 0
        missing = m if missing is None else np.logical_or(missing, m, out=missing)
    summary = {
        "n_records": n,
        "n_combinations": freq.n_combinations,
        "n_sample_uniques": int(sizes[freq.counts == 1].sum()),
        "k_violations": {str(k): int(sizes[freq.counts < k].sum()) for k in ks},
        "k_reached": int(np.floor(fk_min)),
        "global_risk": er / n,
        "expected_reidentifications": er,
        "max_individual_risk": float(g_risk.max()),
        "risk_threshold": threshold,
        "max_global_risk": max_global_risk,
        "n_above_threshold": 0 if threshold is None else int(sizes[g_risk > threshold].sum()),
        "risk_method": risk_method,
        "weighted": weighted,
        "missing_alpha": float(missing_alpha),
        "n_records_with_missing_keys": 0 if missing is None else int(np.count_nonzero(missing)),
    }
    context = MeasureContext(microdata, records, summary, ks)
    for measure in ordered(_flag_measures(microdata, **flags) + list(measures)):
        measure.add(context)
    p = context.parts
    return RiskReport(records, summary, freq, p.get("suda"), p.get("ldiversity"), p.get("tcloseness"),
                      p.get("uniqueness"))


def _flag_measures(microdata: Microdata, *, suda: bool, suda_max_size: int | None, suda_weights: str,
                   dis_fraction: float | None, recursive_c: float, ordinal: Sequence[str] | None,
                   uniqueness_max_size: int | None, loglinear_method: str | None,
                   loglinear_formula: str | None, population_uniques: bool,
                   attacker_threshold: float | None, attacker_population: pd.DataFrame | None,
                   contributions: bool) -> list[Measure]:
    """The measures :func:`measure_risk`'s flags and the data's roles ask for."""
    out: list[Measure] = []
    if microdata.household is not None:
        out.append(Households())
    if suda:
        out.append(Suda2(max_size=suda_max_size, weights=suda_weights, dis_fraction=dis_fraction))
    if microdata.sensitive:
        out.append(Diversity(recursive_c=recursive_c, ordinal=ordinal))
    if uniqueness_max_size is not None:
        out.append(Uniqueness(uniqueness_max_size))
    if loglinear_method is not None or loglinear_formula is not None:
        out.append(LogLinear(loglinear_method, loglinear_formula))
    if population_uniques:
        out.append(PopulationUniques())
    if attacker_threshold is not None:
        out.append(Attacker(attacker_threshold, attacker_population))
    if contributions:
        out.append(Contributions())
    return out



#: measures set side by side by :func:`compare_risk`: (summary key, label, lower is safer)
COMPARED = [("n_combinations", "key combinations"),
            ("n_sample_uniques", "sample uniques (f_k = 1)"),
            ("k_reached", "k reached (smallest f_k)"),
            ("expected_reidentifications", "expected re-identifications"),
            ("global_risk", "global risk (ER / n)"),
            ("max_individual_risk", "largest individual risk"),
            ("household_risk", "household risk (mean r_hh)")]


@dataclass(frozen=True)
class RiskComparison:
    """Two risk reports side by side: ``rows`` of (measure, before, after)."""

    rows: tuple

    def to_dict(self) -> dict:
        return jsonable({"measures": [{"measure": m, "before": b, "after": a} for m, b, a in self.rows]})

    def describe(self) -> str:
        width = max(len(r[0]) for r in self.rows) if self.rows else 10
        lines = [f"{'measure':{width}s}  {'before':>14s}  {'after':>14s}"]
        for m, b, a in self.rows:
            lines.append(f"{m:{width}s}  {_fmt(b):>14s}  {_fmt(a):>14s}")
        return "\n".join(lines)

    def report_html(self) -> str:
        body = "".join(f"<tr><th>{html.escape(m)}</th><td>{html.escape(_fmt(b))}</td>"
                       f"<td>{html.escape(_fmt(a))}</td></tr>" for m, b, a in self.rows)
        return ("<table class='risk-comparison'><tr><th>measure</th><th>original</th>"
                f"<th>released</th></tr>{body}</table>")


def compare_risk(before: RiskReport, after: RiskReport) -> RiskComparison:
    """The measures of two reports (original and released data) side by side."""
    b, a = before.summary, after.summary
    rows = []
    for key, label in COMPARED:
        if key in b or key in a:
            rows.append((label, b.get(key), a.get(key)))
    for k in b["k_violations"]:
        rows.append((f"records with f_k < {k}", b["k_violations"][k], a["k_violations"].get(k)))
    if "suda" in b or "suda" in a:
        rows.append(("records with MSUs (SUDA2)", b.get("suda", {}).get("n_scored"),
                     a.get("suda", {}).get("n_scored")))
        rows.append(("sum of DIS-SUDA scores", b.get("suda", {}).get("sum_dis"),
                     a.get("suda", {}).get("sum_dis")))
    return RiskComparison(tuple(rows))
