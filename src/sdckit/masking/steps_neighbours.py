"""The ``neighbours`` release step: neighbourhood resampling with its operational checks.

The step runs :class:`~sdckit.masking.neighbours.NeighbourResampling` and then, on its input
and output, the steward's representative analyses (:mod:`sdckit.utility.analyses`) and the
tracking of rare records (:mod:`sdckit.risk.tracking`), so the release report shows how the
analyses moved and what became of the rare records (Matloff & Tendick, section 5.1)::

    [[steps]]
    method = "neighbours"
    neighbourhood = { type = "radius", eps = 0.3 }
    variables = ["age", "sex", "wkswrkd", "ms", "phd", "wageinc"]
    categorical = ["sex", "ms", "phd"]
    weights = { sex = 0.2, ms = 0.2, phd = 0.2 }
    analyses = [{ kind = "linear", outcome = "wageinc", regressors = ["age", "sex", "wkswrkd", "ms", "phd"] }]
    track = ["sex == 2 and phd == 1 and age < 31"]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._validation import param_error
from ..params import param
from ..registry import register_step
from ..result import jsonable
from ..risk.tracking import TrackingReport, track_records
from ..utility.analyses import AnalysisComparison, analysis_from_dict, compare_analyses
from .neighbours import NeighbourResampling, NeighbourResult


@dataclass(frozen=True)
class NeighbourStepResult(NeighbourResult):
    """Neighbourhood resampling result with the analysis comparison and the tracking."""

    analyses: AnalysisComparison | None = None
    tracking: TrackingReport | None = None

    def report_html(self) -> str:
        out = super().report_html()
        if self.analyses is not None and self.analyses.rows:
            out += ("<h4>Analyses on the original and the released data</h4>"
                    "<p>Regression quantities are compared in units of the original standard "
                    "error; records with a missing value (suppressed) leave the fits.</p>"
                    + self.analyses.report_html())
        if self.tracking is not None and (self.tracking.targets or self.tracking.keys):
            out += ("<p>Rare records were tracked into the release; the results are in the internal "
                    "report only (they would point an intruder at the tracked people's records).</p>")
        return out

    def internal_report_html(self) -> str:
        """The tracking table (row ids, where each tracked record went): internal report only."""
        if self.tracking is None or not (self.tracking.targets or self.tracking.keys):
            return ""
        return ("<h4>Rare records tracked into the release (internal)</h4>"
                "<p>Original values are not shown.</p>" + self.tracking.report_html())


@register_step("neighbours", dask_note="each record is resampled from its neighbours within "
               "distance epsilon over the whole file, which a partition does not hold")
@dataclass(frozen=True)
class NeighboursStep(NeighbourResampling):
    """Neighbourhood resampling step with operational utility and risk checks.

    Parameters
    ----------
    (all of :class:`NeighbourResampling`), and
    analyses : list of tables
        Representative analyses run on the input and the output: ``{kind = "linear" |
        "logistic", outcome, regressors}`` or ``{kind = "pca", variables, n_components}``.
    track : list of str
        Queries naming rare records to follow (pandas query syntax).
    track_rows : list
        Row ids (index labels) to follow.
    track_keys : list of str
        Key variables whose unique records are listed when left unchanged (default: the
        data's key variables).

    References
    ----------
    Matloff, N. and Tendick, P. (2018), sections 2, 5.1 and 6.
    """

    analyses: Sequence[Mapping[str, Any]] = param(
        (), kind="any", help="representative analyses run on the input and the output "
                             "(tables: kind = linear | logistic | pca, ...)")
    track: Sequence[str] = param((), kind="str_list",
                                 help="queries naming rare records to follow (pandas query syntax)")
    track_rows: Sequence[Any] = param((), kind="any", advanced=True,
                                      help="row ids (index labels) of records to follow")
    track_keys: Sequence[str] | None = param(None, kind="columns", nullable=True, allow_empty=True,
                                             advanced=True,
                                             help="key variables whose unique records are listed "
                                                  "when unchanged (default: the key variables)")

    def __post_init__(self) -> None:
        super().__post_init__()  # check_params(self) runs there, over the inherited fields too
        owner = type(self).__name__
        if isinstance(self.analyses, Mapping) or not isinstance(self.analyses, Sequence):
            raise param_error(owner, "analyses", "a list of analysis tables", self.analyses)
        object.__setattr__(self, "analyses",
                           tuple(a if not isinstance(a, Mapping) else analysis_from_dict(a) for a in self.analyses))
        if isinstance(self.track_rows, (str, bytes)) or not isinstance(self.track_rows, Sequence):
            raise param_error(owner, "track_rows", "a list of row ids", self.track_rows)
        object.__setattr__(self, "track_rows", tuple(self.track_rows))

    def apply(self, microdata, *, rng=None) -> NeighbourStepResult:
        base = super().apply(microdata, rng=rng)
        released = base.microdata
        cmp = compare_analyses(microdata, released, self.analyses, raise_errors=False) \
            if self.analyses else None
        tracking = None
        keys = self.track_keys if self.track_keys is not None else microdata.key_vars
        if self.track or self.track_rows or keys:
            tracking = track_records(microdata, released, queries=self.track, rows=self.track_rows,
                                     variables=base.variables, categorical=base.params["categorical"],
                                     weights=self.weights, keys=keys)
        summary = dict(base.summary)
        if cmp is not None:
            summary["analyses_max_rel_diff"] = {
                a.label: cmp.max_rel_diff(a.label) for a in self.analyses}
        # the tracking summary stays off the public summary: counts of original matches
        # would tell an intruder that a population unique exists (internal report only)
        params = dict(base.params)
        params["analyses"] = [a.label for a in self.analyses]
        params["track"] = list(self.track)
        fields = {f: getattr(base, f) for f in ("source", "selected", "suppressed", "fallback",
                                                 "n_neighbours", "radius", "variables", "metric")}
        return NeighbourStepResult(base.method, released, jsonable(params), summary, base.guarantees,
                                   base.seed, base.artifacts, analyses=cmp, tracking=tracking, **fields)


__all__ = ["NeighbourStepResult", "NeighboursStep"]
