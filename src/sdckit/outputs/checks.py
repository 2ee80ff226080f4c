"""The per-cell evidence of a table and ACRO's checks on it, vectorised.

Evidence per cell (interior and margins): the number of records, the total, the largest
contribution, the sum of the two and of the n largest, the number of negative contributions and
whether a value is missing. The checks carry ACRO's names (``MinimumThresholdCheck``,
``PresenceOfZeroCheck``, ``NKCheck``, ``PPercentCheck``, ``MinimumDoFCheck``, ``MissingCheck``...)
so that a results file reads in SACRO-Viewer; which checks run for which statistic follows
ACRO's ontology (``acro/analyses.json``: counts are frequencies, means and sums linear
aggregations, standard deviations need degrees of freedom, medians/minima/maxima positions).

References
----------
Hundepool, A. et al. (2012). *Statistical Disclosure Control*, sections 4.2.2-4.2.3. Wiley.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CellEvidence", "cell_evidence", "Check", "table_checks", "CHECKS_BY_STATISTIC", "overall_status"]

#: ACRO's checks per statistic (its ontology, acro/analyses.json via statbarns and risks)
_FREQ = ("RequiredZeroCheck", "PresenceOfZeroCheck", "PresenceOfLinkedTableCheck", "MinimumThresholdCheck")
_LINEAR = ("NKCheck", "PPercentCheck", "PresenceOfLinkedTableCheck", "MinimumThresholdCheck")
_POSITION = ("RequiredZeroCheck", "PresenceOfZeroCheck", "MinimumThresholdCheck")
CHECKS_BY_STATISTIC = {
    "count": _FREQ, "mean": _LINEAR, "sum": _LINEAR, "std": ("MinimumDoFCheck",),
    "median": _POSITION, "min": _POSITION, "max": _POSITION,
    "mode": ("PresenceOfLinkedTableCheck", "RequiredZeroCheck", "PresenceOfZeroCheck"),
}
#: ACRO's statistic (analysis) names, for the results file's ``fair`` record
STATBARN = {"count": "Frequencies", "mean": "LinearAggregations", "sum": "LinearAggregations", "std": "Shape",
            "median": "Position", "min": "Endpoints", "max": "Endpoints", "mode": "Mode"}

#: what each check means, in words (the checker's page and the guide)
CHECK_WORDS = {
    "MinimumThresholdCheck": "fewer records than the threshold",
    "PresenceOfZeroCheck": "no record (a zero reveals that nobody has the combination)",
    "RequiredZeroCheck": "whether zeros count as disclosive (never flags a cell)",
    "PresenceOfLinkedTableCheck": "other outputs may link to this one (sdckit audits the links)",
    "NKCheck": "the largest contributions dominate the total",
    "PPercentCheck": "the rest of the cell estimates its largest contribution too closely",
    "MinimumDoFCheck": "too few residual degrees of freedom",
    "MissingCheck": "a missing value was ignored",
    "MarginAuditCheck": "a failing cell can be recovered from the published cells and margins",
    "LinkedOutputsCheck": "outputs of the session together recover a small or suppressed cell",
    "ManualReviewCheck": "this kind of output needs a checker's review",
    "StatbarnDataCheck": "a checker should review plots made from the same data",
    "SurvivalThresholdCheck": "steps of the curve with fewer records at risk than the threshold",
}


@dataclass
class CellEvidence:
    """Per-cell figures over a (rows x columns) grid, margins in the last row/column when present."""

    count: np.ndarray
    total: np.ndarray
    largest: np.ndarray
    top2: np.ndarray
    top_n: np.ndarray
    negative: np.ndarray
    missing: np.ndarray


def cell_evidence(cell: np.ndarray, values: np.ndarray | None, shape: tuple[int, int], *, margins: bool,
                  nk_n: int) -> CellEvidence:
    """The evidence of every cell from each record's interior cell (flat; -1 outside).

    With margins, a record also counts in its row total, its column total and the grand total.
    One ``lexsort`` and a few ``bincount``s: no loop over cells or records.
    """
    r, c = shape
    ok = cell >= 0
    cell = cell[ok]
    v = np.ones(cell.size) if values is None else np.asarray(values, float)[ok]
    if margins:
        rr, cc = r + 1, c + 1
        i, j = np.divmod(cell, c)
        codes = np.concatenate([i * cc + j, i * cc + c, r * cc + j, np.full(cell.size, r * cc + c)])
        v = np.tile(v, 4)
    else:
        rr, cc = r, c
        codes = cell
    n = rr * cc
    if values is None:  # counts: every record adds 1, so the top k of a cell are min(count, k) ones
        count = np.bincount(codes, minlength=n).astype(float).reshape(rr, cc)
        return CellEvidence(count, count.copy(), np.minimum(count, 1.0), np.minimum(count, 2.0),
                            np.minimum(count, float(nk_n)), np.zeros((rr, cc)), np.zeros((rr, cc), bool))
    miss = np.isnan(v)
    vz = np.where(miss, 0.0, v)
    count = np.bincount(codes, minlength=n).astype(float)
    total = np.bincount(codes, weights=vz, minlength=n)
    negative = np.bincount(codes, weights=(vz < 0).astype(float), minlength=n)
    missing = np.bincount(codes, weights=miss.astype(float), minlength=n) > 0
    # rank within cell by value, largest first (missing last)
    order = np.lexsort((-np.where(miss, -np.inf, vz), codes))
    sc = codes[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sc)) + 1]
    rank = np.arange(sc.size) - np.repeat(starts, np.diff(np.r_[starts, sc.size]))
    sv = vz[order]
    largest = np.zeros(n)
    largest[sc[rank == 0]] = sv[rank == 0]
    top2 = np.bincount(sc, weights=np.where(rank < 2, sv, 0.0), minlength=n)
    top_n = np.bincount(sc, weights=np.where(rank < nk_n, sv, 0.0), minlength=n)
    shape2 = (rr, cc)
    return CellEvidence(count.reshape(shape2), total.reshape(shape2), largest.reshape(shape2), top2.reshape(shape2),
                        top_n.reshape(shape2), negative.reshape(shape2), missing.reshape(shape2))


@dataclass
class Check:
    """One check's outcome: status ("pass", "fail", "review"), a one-line summary, the flagged cells."""

    name: str
    status: str
    summary: str
    mask: np.ndarray | None = None  # flagged cells of the table's grid
    value: float | None = None       # a single figure (degrees of freedom)
    details: list | None = None      # recovered intervals (the audits)

    @property
    def n_cells(self) -> int:
        return 0 if self.mask is None else int(self.mask.sum())

    def cells(self) -> list[list[int]]:
        return [] if self.mask is None else np.argwhere(self.mask).tolist()


def _mask_check(name: str, mask: np.ndarray, status_if: str = "fail", note: str = "") -> Check:
    k = int(mask.sum())
    status = status_if if k else "pass"
    return Check(name, status, f"{status} - {k} cells may need suppressing.{note}", mask)


def table_checks(ev: CellEvidence, statistics: tuple[str, ...], rules, dims: list[str]) -> list[Check]:
    """ACRO's checks for a table of the given statistics (``count``, ``mean``, ...), in ACRO's order."""
    names: list[str] = []
    for s in statistics:
        for n in CHECKS_BY_STATISTIC.get(s, ("ManualReviewCheck",)):
            if n not in names:
                names.append(n)
    if rules.check_missing_values:
        names.append("MissingCheck")
    out: list[Check] = []
    none = np.zeros(ev.count.shape, bool)
    for name in names:
        if name == "MinimumThresholdCheck":
            mask = ev.count < rules.threshold
            if not rules.zeros_are_disclosive:
                mask &= ev.count > 0
            out.append(_mask_check(name, mask))
        elif name == "PresenceOfZeroCheck":
            if rules.zeros_are_disclosive:
                out.append(_mask_check(name, ev.count == 0))
            else:
                c = _mask_check(name, none)
                c.summary += " - risk appetite states zeros not disclosive."
                out.append(c)
        elif name == "RequiredZeroCheck":
            out.append(Check(name, "pass", f"zeros are {'' if rules.zeros_are_disclosive else 'not '}considered "
                             "disclosive.", none))
        elif name == "PresenceOfLinkedTableCheck":
            out.append(Check(name, "pass", "linked outputs are audited by sdckit (MarginAuditCheck, "
                             f"LinkedOutputsCheck). Variables defining table are: {dims}.", none))
        elif name in ("NKCheck", "PPercentCheck"):
            if ev.negative.sum() > 0:
                out.append(Check(name, "review", "Dominance not defined when negative value are present",
                                 ev.negative > 0))
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                if name == "NKCheck":
                    share = ev.top_n / ev.total  # (n,k)-dominance, Hundepool et al. 2012 sec. 4.2.3
                    mask = share >= rules.nk_k  # 0/0 (an empty cell): not flagged, as ACRO
                else:
                    rest = (ev.total - ev.top2) / ev.largest  # p% rule, sec. 4.2.2: X - x1 - x2 < p x1
                    mask = np.where(ev.largest == 0, False, rest < rules.p_ratio)
            out.append(_mask_check(name, mask))
        elif name == "MinimumDoFCheck":
            dof = ev.count - 1
            mask = dof < rules.dof_threshold
            c = _mask_check(name, mask)
            c.value = float(dof.min()) if dof.size else 0.0
            c.summary = (f"{c.status} dof={c.value:g} {'<' if c.status == 'fail' else '>='} {rules.dof_threshold}")
            out.append(c)
        elif name == "MissingCheck":
            c = _mask_check(name, ev.missing, status_if="review",
                            note=" Review Notes: missing values have been ignored when calculating mean/std etc.")
            out.append(c)
        else:
            out.append(Check(name, "review", "review: a manual check is needed for this statistic", none))
    return out


def overall_status(checks: list[Check]) -> str:
    statuses = [c.status for c in checks]
    return "fail" if "fail" in statuses else "review" if "review" in statuses else "pass"
