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
random choice, by interpolating the ROC curve). The scored targets are split at random
(seeded) into ``n_repeats`` disjoint groups; the figures are the means over the groups with
Student-t intervals. Those intervals cover the attack's own sampling, not the chance that made
the files.

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
from scipy.stats import rankdata
from scipy.stats import t as student_t

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
                         method: str = "distance", n_targets: int = 1000, n_repeats: int = 5,
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
        Members and non-members scored (each capped at what the files hold; for
        ``"density"`` at most half the control records, the rest being the reference).
    n_repeats : int
        Disjoint seeded groups the targets are split into (>= 2): the interval comes from the
        spread of their figures.
    fpr : float
        False-positive rate at which the true-positive rate is read.
    columns, numeric, categorical
        The columns the intruder compares (default: all shared) and their kinds.
    max_sample : int
        ``"density"``: records of the release and of the reference sample the densities are
        estimated from, at most (a random sample of each when there are more). A sample of a
        large release rarely holds a member's own released record, so on large files the
        distance attack is the sharper one.
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
    gen = as_generator(rng)
    n_m = min(n_targets, n_o)
    members = ori[gen.choice(n_o, n_m, replace=False)]
    if method == "distance":
        n_n = min(n_targets, n_c)
        nonmembers = con[gen.choice(n_c, n_n, replace=False)]
        _, dist = nearest_released(enc, np.concatenate([members, nonmembers]), cols, 1, gen)
        score = -dist[:, 0]
    else:
        perm = gen.permutation(n_c)
        n_n = min(n_targets, n_c // 2)          # the rest of the control records: the reference
        nonmembers = con[perm[:n_n]]
        reference = con[perm[n_n:n_n + max_sample]][:, cols]
        rel_sample = rel[gen.choice(n_r, min(n_r, max_sample), replace=False)][:, cols]
        is_num = enc.is_numeric[cols]
        log_match, log_mismatch, width = _kernels(np.concatenate([rel_sample, reference]), is_num, smoothing)
        targets = missing_as_code(np.concatenate([members, nonmembers])[:, cols], is_num)
        score = (log_density(targets, missing_as_code(rel_sample, is_num), is_num, log_match, log_mismatch, width)
                 - log_density(targets, missing_as_code(reference, is_num), is_num, log_match, log_mismatch,
                               width))
    if min(n_m, n_n) < n_repeats:
        raise InputError(f"membership inference: {n_m} members and {n_n} non-members cannot be split into "
                         f"{n_repeats} groups; lower n_repeats or give more records.")
    aucs, tprs = [], []
    split_m = np.array_split(gen.permutation(n_m), n_repeats)
    split_n = np.array_split(n_m + gen.permutation(n_n), n_repeats)
    for gm, gn in zip(split_m, split_n):  # disjoint seeded splits of the scored targets
        aucs.append(auc_score(score[gm], score[gn]))
        tprs.append(tpr_at_fpr(score[gm], score[gn], fpr))
    auc, auc_ci = _mean_ci(np.array(aucs), confidence)
    tpr, tpr_ci = _mean_ci(np.array(tprs), confidence)
    settings = {"columns": [enc.columns[i] for i in cols]}
    if method == "density":
        settings.update({"max_sample": max_sample, "smoothing": smoothing})
    return MembershipResult(method, auc, auc_ci, tpr, tpr_ci, fpr, confidence, n_m, n_n, n_repeats,
                            tuple(aucs), tuple(tprs), settings, time.perf_counter() - t0,
                            time.process_time() - c0)
