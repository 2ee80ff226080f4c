"""Error bounds a reader can use: an interval for every published cell.

* **Raw noisy cells** (the mechanism's output): the interval ``[y - q, y + q]`` with ``q`` the
  smallest integer such that ``P(|noise| <= q) >= confidence`` under the mechanism's exact
  distribution (the discrete Gaussian or discrete Laplace pmf, CKS 2020, Definitions 1 and
  3). Its coverage is exact and stated (integers make it a little above the level asked).
* **Post-processed cells** (consistent, non-negative): no closed form; the interval comes from
  a *simulation*, stated as such. The published table is taken as the truth (a parametric
  bootstrap: the intervals are a function of published numbers only, so they cost no
  privacy), the mechanism and the post-processing are run ``n_simulations`` times on it, and
  the errors (re-run minus published) are pooled over cells of the same *class*: the
  geographic level, which margin of the other dimensions the cell is, and the band its value
  falls in (relative to the noise's standard deviation; the band of the re-run's value, which
  is what a reader sees). Each class's interval ``[v - hi, v - lo]`` has integer end points
  chosen so that the share of simulated errors inside is as close to ``confidence`` as
  integers allow (equal tails where they can be). A class with fewer than ``min_samples`` errors borrows those of
  its level and band, then of its band. The interval is widened to hold ``v`` itself where
  it would not. Invariant cells are exact: ``[v, v]``.

References
----------
Canonne, C. L., Kamath, G. & Steinke, T. (2020). The discrete Gaussian for differential
privacy. arXiv:2004.00010, Definitions 1 and 3.
Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 6 (parametric
bootstrap). Chapman & Hall.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BAND_EDGES", "IntervalCalibration", "cell_classes", "calibrate", "tail_points", "value_bands"]

#: band edges in units of the noise's standard deviation (a band of its own for 0)
BAND_EDGES = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1000.0)


def value_bands(values: np.ndarray, sd: float) -> np.ndarray:
    """Band of each value: 0 for values <= 0, then by BAND_EDGES (in noise sd) above 0."""
    v = np.asarray(values, dtype=float)
    edges = np.asarray(BAND_EDGES[1:]) * float(sd)
    b = 1 + np.searchsorted(edges, v, side="left")
    return np.where(v <= 0, 0, b).astype(np.int64)


def cell_classes(layout) -> tuple[np.ndarray, int, int]:
    """Level class of every cell (flat, table order): the geographic depth, then the depth of
    the cell's code in each other dimension (which margin it is), as one mixed-radix integer
    with the geography first. Returns (classes, number of classes, classes per geographic depth)."""
    shape = layout.shape
    order = [layout.geo] + [d for d in range(len(shape)) if d != layout.geo]
    radices = [int(layout.depths[d].max()) + 1 for d in order]
    grids = np.meshgrid(*[layout.depths[d] for d in order], indexing="ij")
    code = np.zeros(grids[0].shape, dtype=np.int64)
    for g, r in zip(grids, radices):
        code = code * r + g
    # back to table order: the grid is in the order ``order``
    code = np.transpose(code, np.argsort(order)).reshape(-1)
    per_geo = int(np.prod(radices[1:])) if len(radices) > 1 else 1
    return code, int(np.prod(radices)), per_geo


def tail_points(counts: np.ndarray, offset: int, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every row of ``counts`` (error histogram, column c = error c + offset): integer end
    points ``lo, hi`` and the share of errors in ``[lo, hi]``.

    Start from the ends whose tails ``P(e < lo)``, ``P(e > hi)`` are each closest to
    ``(1 - confidence) / 2``; then move each end by up to two so that the share inside is
    closest to ``confidence`` (ties: the narrower interval)."""
    alpha = (1.0 - confidence) / 2.0
    n = counts.sum(axis=1, keepdims=True).astype(float)
    n = np.where(n == 0, 1.0, n)
    cdf = np.cumsum(counts, axis=1) / n                  # P(e <= c)
    below = np.concatenate([np.zeros((counts.shape[0], 1)), cdf[:, :-1]], axis=1)  # P(e < c)
    above = 1.0 - cdf                                    # P(e > c)
    lo0 = np.argmin(np.abs(below - alpha), axis=1)
    hi0 = np.argmin(np.abs(above - alpha), axis=1)
    rows = np.arange(counts.shape[0])
    W = counts.shape[1]
    # then move each end by up to two so that the share inside is closest to the confidence
    # (a one-sided error distribution, e.g. of cells held at zero, puts both tails on one side);
    # ties go to the narrower interval
    best = np.full(counts.shape[0], np.inf)
    lo, hi = lo0.copy(), hi0.copy()
    for dl in range(-2, 3):
        for dh in range(-2, 3):
            l = np.clip(lo0 + dl, 0, W - 1)
            h = np.clip(hi0 + dh, 0, W - 1)
            cov = cdf[rows, h] - below[rows, l]
            score = np.abs(cov - confidence) + 1e-9 * (h - l)
            score = np.where(h >= l, score, np.inf)
            better = score < best - 1e-15
            best = np.where(better, score, best)
            lo = np.where(better, l, lo)
            hi = np.where(better, h, hi)
    cover = cdf[rows, hi] - below[rows, lo]
    return lo + offset, hi + offset, cover


@dataclass(frozen=True)
class IntervalCalibration:
    """What the simulation found: per class the error end points and simulated coverage."""

    lo: np.ndarray           # per class (full key space), lower error end point
    hi: np.ndarray
    coverage: np.ndarray     # simulated share of errors inside, per class
    n_samples: np.ndarray    # errors the class's interval was computed from
    n_classes_used: int
    n_borrowed: int
    simulated_coverage: float  # over all simulated cells, with the intervals as published
    n_simulations: int


def calibrate(keys_sim: list[np.ndarray], errors: list[np.ndarray], fine_to_coarse: list[np.ndarray],
              n_keys: list[int], confidence: float, *, min_samples: int = 200) -> IntervalCalibration:
    """Pool the simulated errors by class and choose each class's integer end points.

    ``keys_sim[r]`` is the (finest) class of every cell in replicate ``r``, ``errors[r]`` its
    error; ``fine_to_coarse`` maps a finest key to each coarser level's key (the first entry is
    the identity), with ``n_keys`` keys per level. A class takes the finest level at which it
    holds ``min_samples`` errors.
    """
    e = np.concatenate(errors).astype(np.int64)
    k = np.concatenate(keys_sim).astype(np.int64)
    emin, emax = int(e.min(initial=0)), int(e.max(initial=0))
    W = emax - emin + 1
    n_fine = n_keys[0]
    levels = []
    for m, n in zip(fine_to_coarse, n_keys):
        counts = np.bincount(m[k] * W + (e - emin), minlength=n * W).reshape(n, W)
        lo, hi, cov = tail_points(counts, emin, confidence)
        levels.append((m, counts.sum(axis=1), lo, hi, cov))
    lo = np.zeros(n_fine, np.int64)
    hi = np.zeros(n_fine, np.int64)
    cov = np.zeros(n_fine)
    ns = np.zeros(n_fine, np.int64)
    done = np.zeros(n_fine, bool)
    borrowed = 0
    for li, (m, size, l, h, c) in enumerate(levels):
        take = ~done & ((size[m] >= min_samples) | (li == len(levels) - 1))
        lo[take], hi[take], cov[take], ns[take] = l[m[take]], h[m[take]], c[m[take]], size[m[take]]
        if li > 0:
            fine_size = levels[0][1]
            borrowed += int((take & (fine_size > 0)).sum())
        done |= take
    inside = (e >= lo[k]) & (e <= hi[k])
    used = int((levels[0][1] > 0).sum())
    return IntervalCalibration(lo, hi, cov, ns, used, borrowed, float(inside.mean()) if e.size else 1.0,
                               len(errors))
