"""Membership inference: can the release tell the records it was made from from other records?

Stadler, Oprisanu & Troncoso (2022, sec. 4) take membership inference as the test of a
synthetic file's privacy, and it applies to a masked file alike. The intruder scores each
target record; the members are original records (the release was made from them), the
non-members control records of the same population. Two attacks need no shadow models:

* ``"distance"``: the score is minus the distance to the closest released record (the
  "distance to closest record" attack; mixed Gower-like distance as in the other attacks);
* ``"density"``: the score is the log ratio of the release's density at the record to a
  reference density of the population, estimated from control records that are not targets
  (DOMIAS, van Breugel et al. 2023, sec. 3, eq. 2). Both densities are product kernels
  (Aitchison & Aitken's 1976 kernel for a categorical column, a Gaussian of Silverman's width
  for a numeric one) with the same widths, so only the data differ between them.

A record the release copied, or fitted too closely, scores higher than a comparable record it
never saw. The attack's power is read as the area under the ROC curve (AUC; 0.5 is chance)
and the true-positive rate at a small false-positive rate (ties between scores count as a
random choice, by interpolating the ROC curve). Each of ``n_repeats`` seeded repeats draws its
own targets (and its own reference and released samples); the figures are the means over the
repeats with Student-t intervals. Those intervals cover the attack's own sampling, not the
chance that made the files.

References
----------
Stadler, T., Oprisanu, B. and Troncoso, C. (2022). Synthetic data - anonymisation groundhog
day. *USENIX Security* 2022, 1451-1468.
van Breugel, B., Sun, H., Qian, Z. and van der Schaar, M. (2023). Membership inference attacks
against synthetic data through overfitting detection. *AISTATS* 2023, PMLR 206, 3493-3514.
Aitchison, J. and Aitken, C. G. G. (1976). Multivariate binary discrimination by the kernel
method. *Biometrika* 63(3), 413-420.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from scipy.stats import rankdata, t as student_t

from .._random import as_generator
from .._validation import check_choice, check_float, check_int
from ..errors import InputError
from .encode import EncodedFrames, FrameLike, encode_frames, missing_as_code
from .kernels import log_density
from .neighbours import nearest_released
from .results import MembershipResult

__all__ = ["membership_inference", "auc_score", "tpr_at_fpr"]

_OWNER = "membership_inference"


def auc_score(members: np.ndarray, nonmembers: np.ndarray) -> float:
    """Area under the ROC curve: P(member score > non-member score) + P(tie) / 2
    (Mann-Whitney U / (n_1 n_0), with mid-ranks for ties)."""
    n1, n0 = members.size, nonmembers.size
    ranks = rankdata(np.concatenate([members, nonmembers]))
    return float((ranks[:n1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def tpr_at_fpr(members: np.ndarray, nonmembers: np.ndarray, fpr: float) -> float:
    """True-positive rate at false-positive rate ``fpr`` on the ROC curve, interpolated
    between its points (a tie at the threshold is decided at random)."""
    scores = np.concatenate([members, nonmembers])
    label = np.concatenate([np.ones(members.size), np.zeros(nonmembers.size)])
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], label[order]
    last = np.r_[s[1:] != s[:-1], True]        # the last record of each run of equal scores
    tp = np.cumsum(y)[last] / members.size
    fp = np.cumsum(1 - y)[last] / nonmembers.size
    fp, tp = np.r_[0.0, fp], np.r_[0.0, tp]
    return float(np.interp(fpr, fp, tp))


def _mean_ci(values: np.ndarray, confidence: float) -> tuple[float, tuple[float, float]]:
    m = float(values.mean())
    if values.size < 2:
        return m, (m, m)
    half = float(student_t.ppf(0.5 * (1 + confidence), values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))
    return m, (max(0.0, m - half), min(1.0, m + half))


def _kernels(sample: np.ndarray, is_num: np.ndarray, smoothing: float):
    """Per column: log weight of agreeing and disagreeing values, and the numeric widths."""
    d = sample.shape[1]
    log_match = np.full(d, np.log1p(-smoothing))
    log_mismatch = np.empty(d)
    width = np.ones(d)
    n = max(sample.shape[0], 2)
    for c in range(d):
        x = sample[:, c]
        present = x[~np.isnan(x)]
        if is_num[c]:
            log_mismatch[c] = np.log(smoothing)
            if present.size > 1:
                sd = present.std(ddof=1)
                iqr = np.subtract(*np.percentile(present, [75, 25])) / 1.34
                spread = min(sd, iqr) if iqr > 0 else sd
                width[c] = 0.9 * spread * n ** -0.2 if spread > 0 else 1.0  # Silverman's rule
            if width[c] <= 0 or not np.isfinite(width[c]):
                width[c] = 1.0
        else:
            m = np.unique(present).size + (1 if present.size < x.size else 0)
            log_mismatch[c] = np.log(smoothing / max(m - 1, 1))
    return log_match, log_mismatch, width


def membership_inference(original: FrameLike, released: FrameLike, control: FrameLike, *,
                         method: str = "distance", n_targets: int = 500, n_repeats: int = 5,
                         fpr: float = 0.01, columns: Sequence[str] | None = None,
                         numeric: Sequence[str] | None = None, categorical: Sequence[str] | None = None,
                         max_sample: int = 20_000, smoothing: float = 0.1, confidence: float = 0.95,
                         rng=None, encoded: EncodedFrames | None = None) -> MembershipResult:
    """Membership-inference attack on a release (see the module docstring).

    Parameters
    ----------
    original, released, control : DataFrame or Microdata
        Members (the records the release was made from), the release, and non-members of the
        same population.
    method : {"distance", "density"}
    n_targets : int
        Members and non-members scored per repeat (each capped at what the files hold).
    n_repeats : int
        Seeded repeats (>= 2): the interval comes from their spread.
    fpr : float
        False-positive rate at which the true-positive rate is read.
    columns, numeric, categorical
        The columns the intruder compares (default: all shared) and their kinds.
    max_sample : int
        ``"density"``: records of the release and of the reference sample the densities are
        estimated from, at most (a random sample of each when there are more).
    smoothing : float
        ``"density"``: the kernel's weight on other categories (Aitchison & Aitken's lambda).
    confidence : float
        Level of the intervals.
    rng : int, Generator or None
    encoded : EncodedFrames, optional
    """
    t0, c0 = time.perf_counter(), time.process_time()
    check_choice(_OWNER, "method", method, ("distance", "density"))
    n_targets = check_int(_OWNER, "n_targets", n_targets, min_value=1)
    n_repeats = check_int(_OWNER, "n_repeats", n_repeats, min_value=2)
    fpr = check_float(_OWNER, "fpr", fpr, low=0.0, high=1.0, low_open=True, high_open=True)
    max_sample = check_int(_OWNER, "max_sample", max_sample, min_value=10)
    smoothing = check_float(_OWNER, "smoothing", smoothing, low=0.0, high=1.0, low_open=True, high_open=True)
    enc = encoded if encoded is not None else encode_frames(released, original, control, columns=columns,
                                                            numeric=numeric, categorical=categorical)
    if enc.control is None:
        raise InputError("membership inference: needs control records (the non-members).")
    cols = enc.index(columns) if columns is not None else np.arange(len(enc.columns))
    ori, con, rel = enc.original, enc.control, enc.released
    n_o, n_c, n_r = ori.shape[0], con.shape[0], rel.shape[0]
    if method == "density" and n_c < 2:
        raise InputError("membership inference by density: needs at least 2 control records (a reference "
                         "sample and non-member targets).")
    aucs, tprs = [], []
    gen = as_generator(rng)
    n_m = n_n = 0
    for child in gen.spawn(n_repeats):
        n_m = min(n_targets, n_o)
        members = ori[child.choice(n_o, n_m, replace=False)]
        if method == "distance":
            n_n = min(n_targets, n_c)
            nonmembers = con[child.choice(n_c, n_n, replace=False)]
            _, dist = nearest_released(enc, np.concatenate([members, nonmembers]), cols, 1, child)
            score = -dist[:, 0]
        else:
            perm = child.permutation(n_c)
            n_ref = min(n_c // 2, max_sample)
            reference = con[perm[:n_ref]][:, cols]
            pool = perm[n_c // 2:]
            n_n = min(n_targets, pool.size)
            nonmembers = con[child.choice(pool, n_n, replace=False)]
            rel_sample = rel[child.choice(n_r, min(n_r, max_sample), replace=False)][:, cols]
            is_num = enc.is_numeric[cols]
            log_match, log_mismatch, width = _kernels(np.concatenate([rel_sample, reference]), is_num, smoothing)
            targets = missing_as_code(np.concatenate([members, nonmembers])[:, cols], is_num)
            score = (log_density(targets, missing_as_code(rel_sample, is_num), is_num, log_match, log_mismatch, width)
                     - log_density(targets, missing_as_code(reference, is_num), is_num, log_match, log_mismatch,
                                   width))
        aucs.append(auc_score(score[:n_m], score[n_m:]))
        tprs.append(tpr_at_fpr(score[:n_m], score[n_m:], fpr))
    auc, auc_ci = _mean_ci(np.array(aucs), confidence)
    tpr, tpr_ci = _mean_ci(np.array(tprs), confidence)
    settings = {"columns": [enc.columns[i] for i in cols]}
    if method == "density":
        settings.update({"max_sample": max_sample, "smoothing": smoothing})
    return MembershipResult(method, auc, auc_ci, tpr, tpr_ci, fpr, confidence, n_m, n_n, n_repeats,
                            tuple(aucs), tuple(tprs), settings, time.perf_counter() - t0,
                            time.process_time() - c0)
