"""Differentially private tables: the settings (one declared dataclass per mechanism) and the
result.

``DiscreteGaussianCounts(rho=0.5).apply(table, rng=seed)`` noises every cell of a frequency
table (inner cells and every total) with the discrete Gaussian, makes the noisy table
consistent and non-negative (:mod:`sdckit.dp.postprocess`), and states an interval for every
cell (:mod:`sdckit.dp.accuracy`). ``DiscreteLaplaceCounts(epsilon=1.0)`` does the same with the
discrete Laplace (pure DP); ``DiscreteGaussianSums`` / ``DiscreteLaplaceSums`` protect sums
of contributions clipped to ``[lower, upper]`` (tables built by :func:`clipped_table`).

Sensitivity (what one person can change), from the table's definition and the contribution
bound: a person contributes to at most ``m = max_contributions`` inner cells, each by at most
``B`` (1 for counts, ``max(|lower|, |upper|)`` for sums). Every inner cell counts again in each
of its totals: with ``c`` the number of cells one record reaches (the product over the
dimensions of the levels of its code, ``prod_d (n_levels_d + 1)``),

* ``Delta_1 = m c B`` (the L1 norm of the change);
* ``Delta_2^2 = B^2 (m + m^2 (c - 1))``: the ``m`` inner cells change by at most ``B`` each;
  a total can collect all ``m`` contributions, and the ``c - 1`` totals of each margin
  level change by at most ``m B`` in one cell, ``sum x^2 <= max x * sum x``. An upper bound,
  tight for ``m = 1``.

The discrete Gaussian with variance ``sigma^2`` on every cell is ``Delta_2^2 / (2 sigma^2)``-zCDP
(CKS 2020, Theorem 14); the discrete Laplace with scale ``b`` is ``Delta_1 / b``-DP (CKS 2020,
sec. 2.2; Ghosh, Roughgarden & Sundararajan 2012). The scale is rounded towards *more* noise
to an exact rational, and the loss recorded is the exact loss of the noise drawn.

The guarantee covers the noisy cells and anything computed from them (the consistent table,
the intervals: post-processing is free). It does not cover the invariants, which are
published without noise, nor a person who contributes more than the bound: the bound must
hold (for microdata with a person column :func:`clipped_table` enforces it).

References
----------
Canonne, C. L., Kamath, G. & Steinke, T. (2020). The discrete Gaussian for differential
privacy. *NeurIPS 2020*; arXiv:2004.00010, Theorem 14, sec. 2.2.
Ghosh, A., Roughgarden, T. & Sundararajan, M. (2012). Universally utility-maximizing privacy
mechanisms. *SIAM J. Comput.* 41(6), 1673-1693.
Abowd, J. M. et al. (2022). The 2020 Census Disclosure Avoidance System TopDown Algorithm.
*Harvard Data Science Review*; arXiv:2204.08986.
"""

from __future__ import annotations

import html
import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._random import SeedRecord, seed_sequence
from ..errors import InputError
from ..params import check_params, param
from ..result import Guarantee, ResultDisplay, jsonable
from ..tables.table import Table
from .accountant import ZCDP, Charge, PureDP
from .accuracy import BAND_EDGES, IntervalCalibration, calibrate, cell_classes, value_bands
from .postprocess import TopDownLayout, check_consistency, topdown
from .sampling import (
    BitSource,
    discrete_gaussian,
    discrete_gaussian_pmf,
    discrete_laplace,
    discrete_laplace_pmf,
    gaussian_parameters,
    laplace_parameters,
    symmetric_quantile,
)

__all__ = ["DiscreteGaussianCounts", "DiscreteLaplaceCounts", "DiscreteGaussianSums", "DiscreteLaplaceSums",
           "DPTableResult", "Sensitivity", "table_sensitivity", "clipped_table", "MECHANISMS"]


#: simulated cells the intervals of a post-processed table are calibrated on (at least)
SIMULATED_CELLS = 50_000


@dataclass(frozen=True)
class Sensitivity:
    """What one person can change in the table: ``l1``, ``l2_squared`` (exact integers), the
    cells one record reaches and the bound per cell."""

    max_contributions: int
    cells_per_record: int
    bound: int
    l1: int
    l2_squared: int

    @property
    def l2(self) -> float:
        return math.sqrt(self.l2_squared)

    def describe(self) -> str:
        unit = "count" if self.bound == 1 else f"contribution clipped to at most {self.bound} in absolute value"
        return (f"one person reaches at most {self.max_contributions} inner cell(s) (each {unit}); a record "
                f"counts in {self.cells_per_record} cells with the totals, so the L1 sensitivity is {self.l1} "
                f"and the L2 sensitivity sqrt({self.l2_squared}) = {self.l2:.4g}")


def table_sensitivity(table: Table, max_contributions: int, bound: int = 1) -> Sensitivity:
    """Sensitivity of the whole table (every cell, totals included); see the module text."""
    c = int(np.prod([h.n_levels + 1 for h in table.hierarchies]))
    m, B = int(max_contributions), int(bound)
    return Sensitivity(m, c, B, m * c * B, B * B * (m + m * m * (c - 1)))


# ----------------------------------------------------------------------------- settings

@dataclass(frozen=True, kw_only=True)
class _DPTable:
    """Settings every DP table method shares (post-processing and intervals)."""

    max_contributions: int = param(1, kind="int", low=1, unit="inner cells per person", symbol="m",
                                   help="how many inner cells one person can count in (each by at most one unit)")
    geography: str | None = param(None, kind="column", nullable=True,
                                  help="the geography dimension, fitted top-down (default: the first dimension)")
    invariant_depth: int | None = param(0, kind="int", low=0, nullable=True, unit="geographic levels",
                                        help="totals published exactly down to this geographic level "
                                             "(0: the grand total; unset: none)")
    consistent: bool = param(True, kind="bool",
                             help="publish non-negative integers that add up (top-down post-processing)")
    confidence: float = param(0.9, kind="float", low=0.5, high=1, high_open=True, unit="probability",
                              help="level of the interval published for every cell")
    n_simulations: int = param(4, kind="int", low=1, high=200, advanced=True, unit="runs",
                               help="simulated runs that calibrate the intervals of post-processed cells (at "
                                    "least; a small table runs more, to simulate 50,000 cells)")

    kind: str = field(default="frequency", init=False, repr=False)
    mechanism_name: str = field(default="", init=False, repr=False)

    def __post_init__(self) -> None:
        check_params(self)

    # -- overridden ------------------------------------------------------------------
    def _bound(self) -> int:
        return 1

    def _noise(self, sens: Sensitivity):
        """(loss, sampler(n, source), pmf, variance, description of the noise)."""
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------
    def sensitivity(self, table: Table) -> Sensitivity:
        return table_sensitivity(table, self.max_contributions, self._bound())

    def charge(self, table: Table, name: str = "table") -> Charge:
        """The privacy loss of applying these settings to ``table`` (known before any noise)."""
        loss = self._noise(self.sensitivity(table))[0]
        return Charge(name, self.mechanism_name, loss, table.n_cells)

    def _check_table(self, table: Table) -> None:
        if not isinstance(table, Table):
            raise InputError(f"{type(self).__name__}.apply needs a sdckit.tables.Table, got {type(table).__name__}")
        v = np.asarray(table.value)
        if not np.all(np.isfinite(v)) or np.any(v != np.round(v)):
            raise InputError(f"{type(self).__name__}: the table's cells must be whole numbers (the discrete "
                             "mechanisms add integer noise); round the contributions or use clipped_table()")
        if self.kind == "frequency":
            if table.kind != "frequency":
                raise InputError(f"{type(self).__name__} protects counts; the table holds sums of "
                                 f"{table.response!r}: use DiscreteGaussianSums / DiscreteLaplaceSums")
            if np.any(v < 0):
                raise InputError(f"{type(self).__name__}: a count is negative ({v.min():g}); counts must be >= 0")
        if table.non_additive():
            raise InputError(f"{type(self).__name__}: the table is not additive: {table.non_additive()[0]}")

    def _geo_axis(self, table: Table) -> int:
        if self.geography is None:
            return 0
        if self.geography not in table.dims:
            raise InputError(f"geography {self.geography!r} is not a dimension of the table; the dimensions "
                             f"are {list(table.dims)}")
        return table.dims.index(self.geography)

    def runs(self, n_cells: int) -> int:
        """Simulated runs for the intervals: ``n_simulations``, more for a small table (at least
        50,000 simulated cells, at most 200 runs)."""
        return int(min(200, max(self.n_simulations, math.ceil(SIMULATED_CELLS / max(1, n_cells)))))

    def apply(self, table: Table, *, rng=None, name: str = "table") -> DPTableResult:
        """Noise every cell, post-process, state the intervals.

        Parameters
        ----------
        table : Table
            Counts (or clipped sums for the ``*Sums`` methods); every total is noised too.
        rng : int, numpy Generator or SeedSequence, None, or "secrets"
            Source of the random bits (a seed is a secret: it undoes the noise). ``"secrets"``
            draws the mechanism's bits from the operating system (:mod:`secrets`); the
            simulations for the intervals then use fresh OS entropy too.
        name : str
            The table's name in the accountant's record.
        """
        t0 = time.perf_counter()
        self._check_table(table)
        geo = self._geo_axis(table)
        sens = self.sensitivity(table)
        loss, sampler, pmf, variance, noise_text = self._noise(sens)
        n_sim = self.runs(table.n_cells)
        if isinstance(rng, str) and rng == "secrets":
            noise_source, record = BitSource("secrets"), SeedRecord(None, (), "os")
            sim_streams = [np.random.default_rng(c) for c in np.random.SeedSequence().spawn(n_sim)]
        else:
            ss, record = seed_sequence(rng)
            children = ss.spawn(1 + n_sim)
            noise_source = BitSource(np.random.default_rng(children[0]))
            sim_streams = [np.random.default_rng(c) for c in children[1:]]
        truth = np.rint(np.asarray(table.value)).astype(np.int64)
        noise = sampler(table.n_cells, noise_source)
        noisy = truth + noise
        sd = math.sqrt(variance)
        q, q_cover = symmetric_quantile(pmf, self.confidence, int(60 * sd) + 60)
        layout = TopDownLayout.from_hierarchies(table.hierarchies, geo)
        nonneg = self.kind == "frequency" or self._lower() >= 0
        inv_units: dict[int, int] = {}
        inv_cells: dict[int, int] = {}
        info: dict = {}
        calib = None
        if self.consistent:
            if self.invariant_depth is not None:
                tot = layout.unit_totals_index()
                for g in np.flatnonzero(layout.geo_depth <= self.invariant_depth):
                    inv_units[int(g)] = int(truth[tot[g]])
                    inv_cells[int(tot[g])] = int(truth[tot[g]])
            published, _, info = topdown(layout, noisy, invariant_totals=inv_units, nonnegative=nonneg)
            lower, upper, calib = _simulate_intervals(layout, published, sampler, sim_streams, inv_units, inv_cells,
                                                      nonneg, self.confidence, sd)
            status = np.full(table.n_cells, "dp", dtype=object)
            status[list(inv_cells)] = "invariant"
        else:
            published = noisy
            lower, upper = noisy - q, noisy + q
            if nonneg:  # no true value is negative: clip the lower end (coverage unchanged)
                lower = np.where(upper >= 0, np.maximum(lower, 0), lower)
            status = np.full(table.n_cells, "dp", dtype=object)
        check = check_consistency(table, published, invariant_cells=inv_cells, nonnegative=nonneg) \
            if self.consistent else None
        return DPTableResult(settings=self, table=table, name=name, geography=table.dims[geo], sensitivity=sens,
                             charge=Charge(name, self.mechanism_name, loss, table.n_cells, noise_text),
                             noisy=noisy, published=np.asarray(published, dtype=np.int64),
                             lower=np.asarray(lower, dtype=np.int64), upper=np.asarray(upper, dtype=np.int64),
                             status=status, noise_sd=sd, raw_halfwidth=q, raw_coverage=q_cover,
                             calibration=calib, check=check, invariant_cells=inv_cells, postprocess=info,
                             seed=record, seconds=time.perf_counter() - t0)

    def _lower(self) -> int:
        return 0


def _gauss(rho: float, sens: Sensitivity):
    a, b, rho_spent = gaussian_parameters(rho, sens.l2_squared)
    sigma2 = a / b

    def sampler(n, source):
        return discrete_gaussian(a, b, n, source)

    text = (f"discrete Gaussian noise, variance sigma^2 = {a}/{b} = {sigma2:.6g}, on every cell; "
            f"rho = Delta_2^2 / (2 sigma^2) = {float(rho_spent):.6g}")
    return ZCDP(float(rho_spent)), sampler, lambda x: discrete_gaussian_pmf(x, sigma2), sigma2, text


def _laplace(epsilon: float, sens: Sensitivity):
    s, t, eps_spent = laplace_parameters(epsilon, sens.l1)
    scale = t / s
    q = math.exp(-s / t)

    def sampler(n, source):
        return discrete_laplace(s, t, n, source)

    var = 2 * q / (1 - q) ** 2  # variance of Lap_Z(scale): 2 e^{-1/b} / (1 - e^{-1/b})^2
    text = (f"discrete Laplace noise, scale {t}/{s} = {scale:.6g}, on every cell; "
            f"epsilon = Delta_1 / scale = {float(eps_spent):.6g}")
    return PureDP(float(eps_spent)), sampler, lambda x: discrete_laplace_pmf(x, scale), var, text


@dataclass(frozen=True, kw_only=True)
class DiscreteGaussianCounts(_DPTable):
    """Counts with discrete Gaussian noise (rho-zCDP), made consistent top-down.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Algorithm 3 and Theorem 14; Abowd et al. (2022).
    """

    rho: float = param(kind="float", low=0, low_open=True, symbol="rho", unit="zCDP",
                       help="privacy loss of the whole table (zero-concentrated DP)")
    mechanism_name: str = field(default="discrete Gaussian", init=False, repr=False)

    def _noise(self, sens):
        return _gauss(self.rho, sens)


@dataclass(frozen=True, kw_only=True)
class DiscreteLaplaceCounts(_DPTable):
    """Counts with discrete Laplace (geometric) noise (pure epsilon-DP), made consistent top-down.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Algorithm 2; Ghosh, Roughgarden & Sundararajan (2012).
    """

    epsilon: float = param(kind="float", low=0, low_open=True, symbol="epsilon", unit="pure DP",
                           help="privacy loss of the whole table (pure differential privacy)")
    mechanism_name: str = field(default="discrete Laplace", init=False, repr=False)

    def _noise(self, sens):
        return _laplace(self.epsilon, sens)


@dataclass(frozen=True, kw_only=True)
class _DPSums(_DPTable):
    lower: int = param(kind="int", symbol="L", unit="response units",
                       help="each person's contribution to a cell is clipped to at least this")
    upper: int = param(kind="int", symbol="U", unit="response units",
                       help="each person's contribution to a cell is clipped to at most this")
    kind: str = field(default="magnitude", init=False, repr=False)

    def __post_init__(self) -> None:
        check_params(self)
        if self.upper < self.lower:
            from .._validation import param_error

            raise param_error(type(self).__name__, "upper", f"an int >= lower ({self.lower})", self.upper)

    def _bound(self) -> int:
        return max(abs(self.lower), abs(self.upper), 1)

    def _lower(self) -> int:
        return self.lower

    def _check_table(self, table: Table) -> None:
        super()._check_table(table)
        if table.kind != "magnitude":
            raise InputError(f"{type(self).__name__} protects sums; the table holds counts: use "
                             "DiscreteGaussianCounts / DiscreteLaplaceCounts")
        if table.top is None:
            raise InputError(f"{type(self).__name__}: the table does not say its largest contributions; build it "
                             "from microdata with sdckit.dp.clipped_table() so the clipping can be checked")
        biggest = float(np.max(table.top[:, 0], initial=0.0))
        if biggest > self._bound():
            raise InputError(f"{type(self).__name__}: a contribution of {biggest:g} passes the clipping bound "
                             f"{self._bound()}; build the table with sdckit.dp.clipped_table(lower={self.lower}, "
                             f"upper={self.upper})")


@dataclass(frozen=True, kw_only=True)
class DiscreteGaussianSums(_DPSums):
    """Sums of clipped contributions with discrete Gaussian noise (rho-zCDP), made consistent."""

    rho: float = param(kind="float", low=0, low_open=True, symbol="rho", unit="zCDP",
                       help="privacy loss of the whole table (zero-concentrated DP)")
    mechanism_name: str = field(default="discrete Gaussian", init=False, repr=False)

    def _noise(self, sens):
        return _gauss(self.rho, sens)


@dataclass(frozen=True, kw_only=True)
class DiscreteLaplaceSums(_DPSums):
    """Sums of clipped contributions with discrete Laplace noise (pure epsilon-DP), made consistent."""

    epsilon: float = param(kind="float", low=0, low_open=True, symbol="epsilon", unit="pure DP",
                           help="privacy loss of the whole table (pure differential privacy)")
    mechanism_name: str = field(default="discrete Laplace", init=False, repr=False)

    def _noise(self, sens):
        return _laplace(self.epsilon, sens)


#: (statistic, mechanism) -> settings class
MECHANISMS = {("counts", "gaussian"): DiscreteGaussianCounts, ("counts", "laplace"): DiscreteLaplaceCounts,
              ("sums", "gaussian"): DiscreteGaussianSums, ("sums", "laplace"): DiscreteLaplaceSums}


# ----------------------------------------------------------------------------- intervals by simulation

def _simulate_intervals(layout, published, sampler, streams, inv_units, inv_cells, nonneg, confidence, sd):
    levels, n_levels, per_geo = cell_classes(layout)
    nb = len(BAND_EDGES) + 1
    n_fine = n_levels * nb
    fine = np.arange(n_fine)
    geo_depth_of = (fine // nb) // per_geo
    band_of = fine % nb
    maps = [fine, geo_depth_of * nb + band_of, band_of]
    n_keys = [n_fine, (int(geo_depth_of.max()) + 1) * nb, nb]
    keys, errors = [], []
    for gen in streams:
        rerun = published + sampler(published.size, BitSource(gen))
        cells, _, _ = topdown(layout, rerun, invariant_totals=inv_units, nonnegative=nonneg)
        keys.append(levels * nb + value_bands(cells, sd))
        errors.append(cells - published)
    calib = calibrate(keys, errors, maps, n_keys, confidence)
    k = levels * nb + value_bands(published, sd)
    # the interval always holds the published value (a class whose errors all lie on one side
    # would otherwise give an interval beside it)
    lower = np.minimum(published - calib.hi[k], published)
    upper = np.maximum(published - calib.lo[k], published)
    if nonneg:
        lower = np.maximum(lower, 0)
    if inv_cells:
        idx = np.fromiter(inv_cells.keys(), dtype=np.int64)
        lower[idx] = published[idx]
        upper[idx] = published[idx]
    return lower, upper, calib


# ----------------------------------------------------------------------------- tabulation with clipping

def clipped_table(frame: pd.DataFrame, dims, *, response: str | None = None, person: str | None = None,
                  max_contributions: int = 1, lower: int | None = None, upper: int | None = None,
                  hierarchies=None, total: str = "Total") -> tuple[Table, dict]:
    """Tabulate microdata under the contribution bound, without modifying ``frame``.

    With ``person`` (a column identifying people), each person keeps the records of at most
    ``max_contributions`` distinct inner cells (the first ones in file order; for counts a
    person counts once per cell). Without it every record is taken as a different person. For
    sums, each person's contribution to a cell is rounded to a whole number and clipped to
    ``[lower, upper]``.

    Returns the table and ``{"n_records", "n_dropped", "n_clipped"}``.
    """
    dims = [dims] if isinstance(dims, str) else list(dims)
    for c in dims + [x for x in (response, person) if x]:
        if c not in frame.columns:
            raise InputError(f"column {c!r} is not in the data; the columns are {list(frame.columns)[:20]}")
    if response is not None and (lower is None or upper is None):
        raise InputError("sums need clipping bounds: give lower and upper (each person's contribution to a cell "
                         "is clipped to [lower, upper])")
    df = frame[dims + [x for x in (response, person) if x]].copy()
    n0 = len(df)
    dropped = clipped = 0
    key = df[dims].astype(str).apply(lambda s: s.str.strip())
    if person is not None:
        cell = pd.MultiIndex.from_frame(key).codes
        cell_id = np.zeros(len(df), dtype=np.int64)
        for c in cell:
            cell_id = cell_id * (int(c.max(initial=0)) + 1) + c
        df = df.assign(_cell=cell_id)
        if response is None:
            dedup = ~df.duplicated([person, "_cell"])
            df = df[dedup]
        else:
            df = df.groupby([person, "_cell"], sort=False, as_index=False).agg(
                {**{d: "first" for d in dims}, response: "sum"})
        rank = df.groupby(person, sort=False).cumcount()
        keep = rank < int(max_contributions)
        dropped = n0 - int(keep.sum())
        df = df[keep.to_numpy()]
    if response is not None:
        x = pd.to_numeric(df[response], errors="coerce").to_numpy(dtype=float)
        if np.isnan(x).any():
            raise InputError(f"response {response!r} has {int(np.isnan(x).sum())} missing or non-numeric values; "
                             "impute or drop them before tabulating")
        r = np.rint(x)
        c = np.clip(r, lower, upper)
        clipped = int((c != r).sum())
        df = df.assign(**{response: c})
    import warnings

    from ..errors import InputWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        t = Table.from_microdata(df.drop(columns=[c for c in ("_cell",) if c in df.columns]), dims,
                                 response=response, holding=person if response is not None else None,
                                 hierarchies=hierarchies, total=total)
    return t, {"n_records": n0, "n_dropped": dropped, "n_clipped": clipped}


# ----------------------------------------------------------------------------- result

@dataclass(frozen=True)
class DPTableResult(ResultDisplay):
    """A differentially private table: the published cells, their intervals, the privacy loss,
    the checks.

    ``published`` (consistent integers when ``settings.consistent``), ``lower``/``upper`` (the
    interval at ``settings.confidence``), ``status`` per cell (``"dp"`` or ``"invariant"``),
    ``noisy`` (the mechanism's raw output), ``charge`` (the loss, for the accountant and the
    certificate), ``check`` (the independent consistency check), ``seed`` (internal only).
    """

    settings: _DPTable
    table: Table
    name: str
    geography: str
    sensitivity: Sensitivity
    charge: Charge
    noisy: np.ndarray
    published: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    status: np.ndarray
    noise_sd: float
    raw_halfwidth: int
    raw_coverage: float
    calibration: IntervalCalibration | None
    check: dict | None
    invariant_cells: dict
    postprocess: dict
    seed: SeedRecord
    seconds: float

    @property
    def guarantees(self) -> list[Guarantee]:
        s = self.settings
        loss = self.charge.loss
        out = [Guarantee("privacy_loss", f"the noisy cells are {loss.describe()} for a person who counts in at "
                                         f"most {s.max_contributions} inner cell(s)", vars(loss), True)]
        if self.check is not None:
            c = self.check
            out.append(Guarantee("additive", "every total equals the sum of its parts", c["broken"], c["broken"] == 0))
            out.append(Guarantee("non_negative", "no published cell is negative", c["negative"], c["negative"] == 0))
            out.append(Guarantee("invariants", "the invariant totals are published exactly", c["invariants_broken"],
                                 c["invariants_broken"] == 0))
        return out

    @property
    def ok(self) -> bool:
        return all(g.holds for g in self.guarantees)

    def frame(self) -> pd.DataFrame:
        """The public table: codes, value, lower, upper, status (one row per cell)."""
        t = self.table
        df = t.to_frame()[list(t.dims)]
        df["value"] = self.published
        df["lower"] = self.lower
        df["upper"] = self.upper
        df["status"] = self.status
        return df

    def interval_statement(self) -> str:
        s = self.settings
        pct = f"{100 * s.confidence:g}%"
        if not s.consistent:
            return (f"Each published cell is the true cell plus noise; the interval value +/- {self.raw_halfwidth} "
                    f"holds the true value with probability {100 * self.raw_coverage:.2f}% (exact, from the "
                    f"noise's distribution; {pct} asked, integers make it a little more).")
        c = self.calibration
        return (f"The intervals ({pct}) of the post-processed cells come from a simulation, not a formula: the "
                f"mechanism and the post-processing were run {c.n_simulations} more times on the published table "
                f"and the errors pooled by geographic level, margin and size of cell; in that simulation the "
                f"intervals held the value in {100 * c.simulated_coverage:.1f}% of cells. Invariant cells are exact. "
                f"Before post-processing, each noisy cell was within +/- {self.raw_halfwidth} of the truth with "
                f"probability {100 * self.raw_coverage:.2f}% (exact).")

    def to_dict(self) -> dict:
        s = self.settings
        d = {"n_cells": self.table.n_cells, "mechanism": self.charge.mechanism, "statistic":
             "counts" if s.kind == "frequency" else "sums", "loss": self.charge.to_dict(),
             "sensitivity": {"l1": self.sensitivity.l1, "l2": self.sensitivity.l2,
                             "cells_per_record": self.sensitivity.cells_per_record,
                             "max_contributions": self.sensitivity.max_contributions, "bound": self.sensitivity.bound},
             "noise_sd": self.noise_sd, "consistent": bool(s.consistent), "geography": self.geography,
             "invariant_depth": s.invariant_depth, "n_invariants": len(self.invariant_cells),
             "confidence": s.confidence, "raw_halfwidth": self.raw_halfwidth, "raw_coverage": self.raw_coverage,
             "mean_interval_width": float(np.mean(self.upper - self.lower)),
             "n_negative": int((self.published < 0).sum()), "ok": self.ok,
             "seconds": round(self.seconds, 4)}
        if self.check is not None:
            d["consistency"] = dict(self.check)
        if self.calibration is not None:
            c = self.calibration
            d["simulated_coverage"] = c.simulated_coverage
            d["n_simulations"] = c.n_simulations
            d["postprocess"] = dict(self.postprocess)
        return jsonable(d)

    def describe(self) -> str:
        d = self.to_dict()
        line = (f"{d['mechanism']} on {d['n_cells']:,} cells: {self.charge.loss.describe()}; noise sd "
                f"{self.noise_sd:.3g}")
        if self.check is not None:
            line += ("; consistent, non-negative, invariants exact" if self.check["ok"] else
                     f"; CONSISTENCY CHECK FAILED ({self.check})")
        return line + f"; mean interval width {d['mean_interval_width']:.3g} ({100 * self.settings.confidence:g}%)"

    def report_html(self) -> str:
        """The report section, in words: what was done, what it costs, what it guarantees, how
        accurate it is."""
        s = self.settings
        loss = self.charge.loss
        e = html.escape
        check = ""
        if self.check is not None:
            c = self.check
            held = "hold" if c["broken"] == 0 else f"hold except {c['broken']:,}"
            check = (f"<p>Checked on the published table: the {c['relations']:,} relations total = sum of parts "
                     f"{held}; negative cells: {c['negative']:,}; invariant totals: {c['invariants']:,}, of which "
                     f"changed: {c['invariants_broken']:,}.</p>")
        n_inv = len(self.invariant_cells)
        where = ("the grand total" if s.invariant_depth == 0 else
                 f"the totals of {e(self.geography)} down to geographic level {s.invariant_depth}")
        inv = ("" if not s.consistent or s.invariant_depth is None else
               f"<p>Invariants: {where} ({n_inv:,} {'cell' if n_inv == 1 else 'cells'}) "
               f"{'is' if n_inv == 1 else 'are'} published <strong>without noise</strong>; the privacy "
               "guarantee does not cover them.</p>")
        post = ("<p>The noisy cells were made consistent top-down (as the 2020 Census TopDown algorithm): "
                "a least-squares fit per geographic unit, then, level by level, the non-negative fit "
                "closest to it that adds up to the parent, rounded to integers keeping the parent's totals. "
                "Post-processing costs no privacy.</p>" if s.consistent else
                "<p>The noisy cells are published as drawn: they may be negative and totals need not equal "
                "the sum of their parts.</p>")
        return (f"<section class='dp-table'><h2>Differential privacy: {e(self.name)}</h2>"
                f"<p>{e(self.table.describe())}.</p>"
                f"<p>Mechanism: {e(self.charge.note)}. Privacy loss of this table: {e(loss.describe())}.</p>"
                f"<p>Sensitivity: {e(self.sensitivity.describe())}. The guarantee holds only if this bound "
                f"holds.</p>{post}{inv}{check}<p>Accuracy: {e(self.interval_statement())}</p></section>")
