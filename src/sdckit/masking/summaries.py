"""The before/after figures of the continuous masking steps (noise, rank swapping) in few
passes over the data."""

from __future__ import annotations

import numpy as np

from ._numeric import moments_summary


def complete_moments_summary(before: np.ndarray, after: np.ndarray, names, *,
                             corr_before: np.ndarray | None = None) -> dict:
    """The effect of a continuous step on each variable (values changed, means and sds before
    and after, the largest change of a correlation): the figures of
    :func:`~sdckit.masking._numeric.moments_summary`, with complete data
    (no missing value on either side: the usual case) in fewer passes: the values changed
    counted at once, the means and sds without the missing-value copies, the correlations
    on the arrays as they are. The same figures, bit for bit (the same reductions on the
    same values); with missing values the general summary. ``corr_before``: the correlation
    matrix of ``before`` (``np.corrcoef(before, rowvar=False)``), when the caller has it."""
    if before.size == 0 or np.isnan(before).any() or np.isnan(after).any():
        return moments_summary(before, after, names)
    changed = int(np.count_nonzero(before != after))
    p = before.shape[1]
    if before.shape[0] < 3 or p < 2:
        dc = np.zeros((p, p))
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            # C order, as the general summary's row selection leaves them (the same product)
            cb = np.corrcoef(np.ascontiguousarray(before), rowvar=False) if corr_before is None else corr_before
            dc = np.abs(np.corrcoef(np.ascontiguousarray(after), rowvar=False) - cb)
    return {
        "values_changed": changed,
        "values_changed_share": float(changed / before.size),
        "moments": {v: {"mean_before": float(np.mean(before[:, j])), "mean_after": float(np.mean(after[:, j])),
                        "sd_before": float(np.std(before[:, j], ddof=1)),
                        "sd_after": float(np.std(after[:, j], ddof=1))}
                    for j, v in enumerate(names)},
        "max_correlation_change": float(np.nanmax(dc)) if dc.size else 0.0,
    }
