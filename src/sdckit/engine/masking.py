"""PRAM and noise on partitioned microdata, with output independent of the partitioning.

Every method here is split in two:

* **fit**: statistics from a distributed pass (category counts per stratum for PRAM, the
  count / sum / sum of squares of each numeric variable for noise), merged exactly, then a
  small fitted plan on the client (the PRAM matrices from the PRAM engine's builders, the
  noise scale);
* **transform**: a pure function of one partition, its global row offset and the plan. Its
  random numbers are :func:`sdckit._random.block_uniforms` of the variable's own stream at the
  partition's global rows, so a record gets the same draw in whichever partition or worker
  it lands, and the output is the same bit for bit for any number of partitions or workers.

:func:`run_in_memory` applies the same transform to a whole in-memory frame as one
partition (offset 0): the in-memory reference the equality tests compare against.

PRAM (Gouweleeuw et al. 1998): record i with category k in stratum s is released as a
draw from row k of P_s (Cator, Hensbergen and Rozenholc, section 1: P(released = l | original = k) = p_kl) by the
PRAM engine's own sampling (:func:`sdckit.pram.apply.pram_codes`, alias tables) fed with
the record's block uniform u_i. Missing values are never changed.
Noise (Brand 2002; the ``noise`` step's meaning, level = noise variance relative to the
data's): additive x + sqrt(level) s z, correlated x + F z with F F^T = level Sigma,
multiplicative x (1 + sqrt(level) z), with z = Phi^{-1}(u) standard normal from the block
uniforms (:func:`block_normals`) and s, Sigma from exactly merged sums.

References
----------
Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. and de Wolf, P.-P. (1998). Post
randomisation for statistical disclosure control: theory and implementation. Journal of
Official Statistics 14(4), 463-478.

Brand, R. (2002). Microdata protection through noise addition. In Inference Control in
Statistical Databases, LNCS 2316, 97-116.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._random import block_normals, block_uniforms, child_stream, standard_normals  # noqa: F401
from .._sums import mean_sd
from .._validation import check_choice, check_float, param_error
from ..errors import InputError
from ..masking.moments import (  # noqa: F401
    CROSS,
    covariance_from_sums,
    exact_scale,
    merge_moment_dicts,
    moments_partition,
    psd_factor,
)
from .frame import PartitionedMicrodata, encode


# --------------------------------------------------------------------------- PRAM
def sampling_tables(matrices: Sequence[Any]) -> list:
    """The PRAM engine's sampling table of each matrix (one per stratum)."""
    from ..pram.apply import SamplingTable

    return [SamplingTable.from_matrix(m) for m in matrices]


def draw_codes(codes: np.ndarray, strata: np.ndarray, u: np.ndarray, tables: Sequence[Any]) -> np.ndarray:
    """Released codes by the PRAM engine's sampling (:func:`sdckit.pram.apply.pram_codes`)
    with the given uniforms: record i of stratum s draws from ``tables[s]`` with ``u[i]``;
    ``-1`` stays ``-1``."""
    from ..pram.apply import pram_codes

    codes = np.asarray(codes, dtype=np.int64)
    if len(tables) == 1:
        return pram_codes(codes, tables[0], uniforms=u)
    out = np.empty_like(codes)
    order = np.argsort(strata, kind="stable")
    bounds = np.flatnonzero(np.diff(strata[order])) + 1
    for rows in np.split(order, bounds):
        if rows.size:
            out[rows] = pram_codes(codes[rows], tables[int(strata[rows[0]])], uniforms=u[rows])
    return out


@dataclass(frozen=True)
class PramPlan:
    """A fitted PRAM of several variables (independently), optionally per stratum.

    ``matrices[var][s]`` is the PRAM engine's TransitionMatrix of stratum ``s`` (``s = 0``
    without strata; strata are the combinations of the strata columns' codes, a missing value
    counting as one more code). ``tables[var][s]`` is its sampling table;
    ``counts[var]`` has the category counts per stratum, shape (S, K).
    """

    variables: tuple[str, ...]
    strata: tuple[str, ...]
    categories: dict
    strata_categories: dict
    matrices: dict
    tables: dict
    counts: dict
    evidence: dict = field(default_factory=dict)


#: largest number of strata (product of the strata columns' categories + 1) at scale
MAX_STRATA = 100_000


@dataclass(frozen=True)
class PramSettings:
    """PRAM at scale, with the ``pram`` step's setting names (:class:`sdckit.pram.steps.Pram`).

    ``step`` is the in-memory step built from the same spec table, if any: the matrix
    builders read their settings (``base``, ``d_min``, ...) from it. ``options`` holds
    builder settings when no step is given.
    """

    variables: tuple[str, ...]
    matrix: str = "invariant"
    min_diagonal: float | None = None
    alpha: float | None = None
    file: str | None = None
    strata: tuple[str, ...] = ()
    joint: bool = False
    options: dict = field(default_factory=dict)
    step: Any = None

    def __post_init__(self) -> None:
        for name in ("variables", "strata"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value or ()))
        if not self.variables:
            raise param_error("PRAM", "variables", "a non-empty list of key variables", self.variables)
        if self.min_diagonal is not None:
            check_float("PRAM", "min_diagonal", self.min_diagonal, low=0.0, high=1.0)
        if self.alpha is not None:
            check_float("PRAM", "alpha", self.alpha, low=0.0, high=1.0)
        if self.joint and len(self.variables) > 1:
            raise param_error("PRAM on the Dask engine", "joint",
                              "false (joint PRAM over the combined space runs in memory only)", self.joint)

    @classmethod
    def from_step(cls, step: Any) -> PramSettings:
        """From the in-memory ``pram`` step (same spec table, same validation)."""
        m = step.matrix  # a matrix builder type (Invariant(), Optimal(alpha=...), ...)
        return cls(tuple(step.variables), m.variant_name, step.min_diagonal, getattr(m, "alpha", None),
                   getattr(m, "file", None), tuple(step.strata), bool(getattr(step, "joint", False)), step=step)


class _BuilderStep:
    """The settings as the builders read them: the in-memory step's attributes when there is
    one, else the named fields, then ``options``, else None."""

    def __init__(self, settings: PramSettings) -> None:
        self._settings = settings

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        s = self._settings
        if s.step is not None:
            return getattr(s.step, name)
        if name in s.__dataclass_fields__ and name not in ("options", "step"):
            return getattr(s, name)
        return s.options.get(name)


class _CategorySource:
    """What the PRAM engine's builders read from a Microdata: ``categories(var)``."""

    def __init__(self, categories: dict) -> None:
        self._categories = categories

    def categories(self, var: str) -> pd.Index:
        return self._categories[var]


def _strata_codes(pdf: pd.DataFrame, strata: tuple[str, ...], strata_categories: dict,
                  partition: int | None) -> tuple[np.ndarray, int]:
    """Stratum of each record: mixed radix over the strata columns' codes, a missing value
    being one more category of its column (so missing forms strata of its own)."""
    if not strata:
        return np.zeros(pdf.shape[0], dtype=np.int64), 1
    out = np.zeros(pdf.shape[0], dtype=np.int64)
    size = 1
    for c in strata:
        r = len(strata_categories[c]) + 1
        code = encode(pdf[c], strata_categories[c], var=c, partition=partition)
        out *= r
        out += np.where(code < 0, r - 1, code)
        size *= r
    return out, size


def _strata_categories(pmd: PartitionedMicrodata, strata: Sequence[str]) -> dict:
    for c in strata:
        if c not in pmd.categories:
            raise InputError(f"PRAM: strata column {c!r} has no agreed categories; give it the strata role.")
    size = int(np.prod([len(pmd.categories[c]) + 1 for c in strata])) if strata else 1
    if size > MAX_STRATA:
        raise InputError(f"PRAM: the strata {list(strata)} make {size:,} strata (more than {MAX_STRATA:,}); "
                         "use fewer or coarser strata columns.")
    return {c: pmd.categories[c] for c in strata}


def _pram_counts_partition(pdf: pd.DataFrame, variables: tuple[str, ...], categories: dict,
                           strata: tuple[str, ...], strata_categories: dict, partition=None) -> dict:
    s_codes, n_strata = _strata_codes(pdf, strata, strata_categories, partition)
    out = {}
    for v in variables:
        K = len(categories[v])
        c = encode(pdf[v], categories[v], var=v, partition=partition).astype(np.int64)
        ok = c >= 0
        out[v] = np.bincount(s_codes[ok] * K + c[ok], minlength=n_strata * K).astype(np.int64)
    return out


def _sum_dicts(parts: list[dict]) -> dict:
    out: dict = {}
    for p in parts:
        for k, v in p.items():
            out[k] = v.copy() if k not in out else out[k] + v
    return out


def pram_counts(pmd: PartitionedMicrodata, variables: Sequence[str], strata: Sequence[str] = ()):
    """Delayed {var: counts per (stratum, category)} summed over partitions (exact ints)."""
    import dask

    from .risk import tree_reduce

    variables, strata = tuple(variables), tuple(strata or ())
    cats = {v: pmd.categories[v] for v in variables}
    scats = _strata_categories(pmd, strata)
    cols = list(dict.fromkeys(list(variables) + list(strata)))
    parts = [dask.delayed(_pram_counts_partition)(p, variables, cats, strata, scats, i)
             for i, p in enumerate(pmd.frame[cols].to_delayed())]
    return tree_reduce(parts, _sum_dicts)


def pram_streams(ss: np.random.SeedSequence) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """The step's matrix and sampling roots, derived as the in-memory ``pram`` step does:
    children "matrices" (0) and "sampling" (1) of the step's SeedSequence, each turned into a
    root SeedSequence by one 63-bit integer drawn from it. Variable j samples from child j of
    the sampling root (:func:`child_stream`), its strata sharing that stream."""
    gens = [np.random.default_rng(child_stream(ss, i)) for i in (0, 1)]
    matrix_root = np.random.SeedSequence(int(gens[0].integers(2**63)))
    sampling_root = np.random.SeedSequence(int(gens[1].integers(0, 2**63 - 1)))
    return matrix_root, sampling_root


def build_matrices(settings: PramSettings, var: str, categories: pd.Index, counts: np.ndarray,
                   matrix_root: np.random.SeedSequence, first_stream: int):
    """One matrix per stratum with the PRAM engine's registered builder ``settings.matrix``.

    ``counts`` has shape (S, K). Builders that need the records themselves (not only their
    counts) cannot run at scale and fail here with the builder's own error. Stratum s of a
    random builder draws from child ``first_stream + s`` of ``matrix_root``.
    """
    from ..pram.builders import MatrixContext, matrix_method

    builder = matrix_method(settings.matrix)
    step = _BuilderStep(settings)
    source = _CategorySource({var: categories})
    out, evidence = [], []
    for s in range(counts.shape[0]):
        ctx = MatrixContext(source, (var,), (len(categories),), counts[s].astype(np.float64),
                            np.zeros(0, dtype=bool),
                            np.random.default_rng(child_stream(matrix_root, first_stream + s)))
        m, ev = builder(step, ctx)
        out.append(m)
        evidence.append(dict(ev or {}))
    return out, evidence


def _as_transition_matrix(P: Any, categories: pd.Index, var: str):
    from ..pram.matrix import TransitionMatrix

    if isinstance(P, TransitionMatrix):
        if P.n_categories != len(categories):
            raise InputError(f"PRAM: the matrix for {var!r} has {P.n_categories} categories, but {var!r} "
                             f"has {len(categories)}.")
        return P
    P = np.asarray(P, dtype=np.float64)
    if P.shape != (len(categories), len(categories)):
        raise InputError(f"PRAM: the matrix for {var!r} is {P.shape[0]} x {P.shape[1]}, but {var!r} "
                         f"has {len(categories)} categories.")
    return TransitionMatrix(tuple(categories), P, (var,), "given")


def fit_pram(pmd: PartitionedMicrodata, settings: PramSettings, rng: np.random.SeedSequence | None = None,
             *, counts: dict | None = None, matrices: dict | None = None) -> PramPlan:
    """Fit PRAM from distributed category counts (one pass unless ``counts`` are given).

    ``matrices`` ({var: [P per stratum]}, arrays or TransitionMatrix) bypasses the builders
    (a published matrix, tests). ``rng`` is the step's SeedSequence (random builders).
    """
    variables = tuple(settings.variables)
    for v in variables:
        if v not in pmd.key_vars and v not in pmd.pram_vars:
            raise InputError(f"PRAM: {v!r} is not a key variable or a PRAM variable; add it to "
                             "roles.key_vars or roles.pram_vars.")
    scats = _strata_categories(pmd, settings.strata)
    if counts is None:
        counts = pram_counts(pmd, variables, settings.strata).compute()
    S = int(np.prod([len(scats[c]) + 1 for c in settings.strata])) if settings.strata else 1
    matrix_root, _ = pram_streams(rng if rng is not None else np.random.SeedSequence(0))
    mats, tables, cnt, evidence = {}, {}, {}, {}
    for j, v in enumerate(variables):
        K = len(pmd.categories[v])
        c = counts[v].reshape(S, K)
        if matrices is not None:
            Ps, ev = list(matrices[v]), [{} for _ in matrices[v]]
        else:
            Ps, ev = build_matrices(settings, v, pmd.categories[v], c, matrix_root, j * S)
        if len(Ps) != S:
            raise InputError(f"PRAM: {len(Ps)} matrices given for {v!r}, expected {S} (one per stratum).")
        Ps = [_as_transition_matrix(P, pmd.categories[v], v) for P in Ps]
        mats[v], tables[v], cnt[v], evidence[v] = Ps, sampling_tables(Ps), c, ev
    return PramPlan(variables, tuple(settings.strata), {v: pmd.categories[v] for v in variables},
                    scats, mats, tables, cnt, evidence)


def pram_partition(pdf: pd.DataFrame, plan: PramPlan, ss: np.random.SeedSequence, start: int,
                   partition: int | None = None) -> pd.DataFrame:
    """PRAM one partition whose first row is global row ``start``; returns a new frame."""
    out = pdf.copy(deep=False)
    n = pdf.shape[0]
    s_codes, _ = _strata_codes(pdf, plan.strata, plan.strata_categories, partition)
    _, sampling = pram_streams(ss)
    for j, v in enumerate(plan.variables):
        cats = plan.categories[v]
        c = encode(pdf[v], cats, var=v, partition=partition).astype(np.int64)
        u = block_uniforms(child_stream(sampling, j), start, start + n)
        new = draw_codes(c, s_codes, u, plan.tables[v])
        out[v] = _decode_like(pdf[v], new, cats)
    return out


def _decode_like(original: pd.Series, codes: np.ndarray, cats: pd.Index) -> pd.Series:
    """Labels of ``codes`` in the dtype of ``original`` where it can hold them (as Microdata.decode)."""
    cat = pd.Categorical.from_codes(codes, categories=cats)
    values = pd.Series(cat, index=original.index, name=original.name)
    if isinstance(original.dtype, pd.CategoricalDtype):
        return values.astype(original.dtype)
    values = values.astype(cats.dtype if (codes >= 0).all() else object)
    try:
        return values.astype(original.dtype)
    except (TypeError, ValueError):
        return values


# --------------------------------------------------------------------------- noise
NOISE_METHODS = ("additive", "correlated", "multiplicative")
NOISE_RESTORE = ("none", "kim")


@dataclass(frozen=True)
class NoiseSettings:
    """Noise at scale, with the ``noise`` step's names and meaning (:class:`sdckit.masking.noise.Noise`).

    ``level`` is the noise variance relative to the data's: additive e_j ~ N(0, level s_j^2);
    correlated e ~ N(0, level Sigma) (Sigma the covariance of the complete records);
    multiplicative x (1 + sqrt(level) z). ``restore = "kim"`` (correlated only) applies Kim's
    transformation d y + (1 - d) x-bar, d = 1 / sqrt(1 + level). The exact moment match
    (``restore = "exact"``) needs a second pass over the output and runs in memory only.
    """

    variables: tuple[str, ...] = ()
    level: float = 0.1
    method: str = "correlated"
    restore: str = "none"

    def __post_init__(self) -> None:
        if isinstance(self.variables, str):
            object.__setattr__(self, "variables", (self.variables,))
        object.__setattr__(self, "variables", tuple(self.variables or ()))
        if not self.variables:
            raise param_error("Noise", "variables", "a non-empty list of numeric variables", self.variables)
        check_float("Noise", "level", self.level, low=0.0, low_open=True)
        check_choice("Noise", "method", self.method, NOISE_METHODS)
        check_choice("Noise on the Dask engine", "restore", self.restore, NOISE_RESTORE)
        if self.restore == "kim" and self.method != "correlated":
            raise param_error("Noise", "restore", "'kim' only with method 'correlated'", self.restore)

    @classmethod
    def from_step(cls, step: Any, numeric_vars: Sequence[str] = ()) -> NoiseSettings:
        """From the in-memory ``noise`` step (its variables default to the numeric role)."""
        return cls(tuple(step.variables or numeric_vars), float(step.level), step.kind, step.restore)


@dataclass(frozen=True)
class NoisePlan:
    """Fitted noise: each variable's mean and sd, and for correlated noise the factor F of
    level * Sigma (F F^T = level Sigma), all from exactly merged sums."""

    settings: NoiseSettings
    mean: dict
    sd: dict
    n_values: dict
    factor: np.ndarray | None = None
    n_complete: int | None = None


def noise_moments(pmd: PartitionedMicrodata, variables: Sequence[str], cross: bool = False):
    """Delayed {var: (n, sum hi, sum lo, sum of squares hi, lo)} over partitions; with
    ``cross`` also the complete records' count, sums and cross-products (``"__cross__"``)."""
    import dask

    from .risk import tree_reduce

    variables = tuple(variables)
    for v in variables:
        if v not in pmd.frame.columns:
            raise InputError(f"noise: no column {v!r} in the data.")
    parts = [dask.delayed(moments_partition)(p, variables, cross)
             for p in pmd.frame[list(variables)].to_delayed()]
    return tree_reduce(parts, merge_moment_dicts)


def fit_noise(pmd: PartitionedMicrodata, settings: NoiseSettings, *, moments: dict | None = None) -> NoisePlan:
    """The noise step's plan for partitioned data: the variables' means and standard deviations
    (and, for correlated noise, their covariance) from one pass of exact moments over every
    partition, so each partition draws its noise from the same whole-data figures.

    Parameters
    ----------
    pmd : PartitionedMicrodata
        The partitioned data.
    settings : NoiseSettings
        The step's settings (variables, method, level).
    moments : dict, optional
        Moments already computed by :func:`noise_moments` (default: computed here).

    Returns
    -------
    NoisePlan
        What every partition needs to draw its noise.
    """
    correlated = settings.method == "correlated"
    if moments is None:
        moments = noise_moments(pmd, settings.variables, correlated).compute()
    means, sds, ns = {}, {}, {}
    for v in settings.variables:
        m, s = mean_sd(moments[v])
        if settings.method != "multiplicative" and not (s > 0):
            raise InputError(f"noise: {v!r} is constant or has fewer than 2 values; noise scaled to its "
                             "spread adds nothing: drop it from the variables.")
        means[v], sds[v], ns[v] = m, s, moments[v][0]
    factor = n_complete = None
    if correlated:
        S = covariance_from_sums(moments[CROSS], len(settings.variables))
        factor = np.sqrt(settings.level) * psd_factor(S)       # F F^T = level Sigma
        n_complete = int(moments[CROSS][0])
    return NoisePlan(settings, means, sds, ns, factor, n_complete)


def noise_partition(pdf: pd.DataFrame, plan: NoisePlan, ss: np.random.SeedSequence, start: int,
                    partition: int | None = None) -> pd.DataFrame:
    """Noise on one partition whose first row is global row ``start``; variable j's normals
    are Phi^{-1} of the block uniforms of child j of ``ss``."""
    out = pdf.copy(deep=False)
    n = pdf.shape[0]
    s = plan.settings
    names = list(s.variables)
    X = pdf[names].to_numpy(dtype=np.float64, na_value=np.nan)
    E = block_normals(ss, start, start + n, len(names))
    root = np.sqrt(s.level)
    if s.method == "multiplicative":
        Y = X * (1.0 + root * E)                                    # f ~ N(1, level)
    elif s.method == "additive":
        Y = X + E * (root * np.array([plan.sd[v] for v in names]))  # e_j ~ N(0, level s_j^2)
    else:
        Y = X + np.einsum("il,jl->ij", E, plan.factor)              # e = F u ~ N(0, level Sigma)
        if s.restore == "kim":
            d = 1.0 / np.sqrt(1.0 + s.level)                        # Kim (1986): d y + (1 - d) x-bar
            Y = d * Y + (1.0 - d) * np.array([plan.mean[v] for v in names])
    for j, v in enumerate(names):
        out[v] = Y[:, j]  # NaN stays NaN
    return out


# --------------------------------------------------------------------------- running plans
TRANSFORMS = {PramPlan: pram_partition, NoisePlan: noise_partition}


def _apply_plans(pdf: pd.DataFrame, plans: tuple, seeds: tuple, offsets: np.ndarray,
                 partition_info=None) -> pd.DataFrame:
    part = 0 if partition_info is None else partition_info["number"]
    start = int(offsets[part])
    if pdf.shape[0] != int(offsets[part + 1]) - start:
        raise InputError(f"partition {part} has {pdf.shape[0]} rows but the scan counted "
                         f"{int(offsets[part + 1]) - start}: the input changed while running.")
    for plan, ss in zip(plans, seeds):
        try:
            pdf = TRANSFORMS[type(plan)](pdf, plan, ss, start, part)
        except InputError:
            raise
        except Exception as exc:  # report where it happened
            raise InputError(f"partition {part} (rows {start}..{start + pdf.shape[0] - 1}): "
                             f"{type(plan).__name__} failed: {type(exc).__name__}: {exc}") from exc
    return pdf


def transform(pmd: PartitionedMicrodata, plans: Sequence[Any], seeds: Sequence[np.random.SeedSequence]) -> PartitionedMicrodata:
    """Apply fitted plans partition by partition (lazy); one SeedSequence per plan."""
    plans, seeds = tuple(plans), tuple(seeds)
    meta = pmd.frame._meta
    for plan, ss in zip(plans, seeds):
        meta = TRANSFORMS[type(plan)](meta, plan, ss, 0, None) if len(meta) else _meta_after(meta, plan)
    frame = pmd.frame.map_partitions(_apply_plans, plans, seeds, pmd.offsets, meta=meta,
                                     align_dataframes=False)
    return pmd.with_frame(frame)


def _meta_after(meta: pd.DataFrame, plan: Any) -> pd.DataFrame:
    out = meta.copy()
    if isinstance(plan, NoisePlan):
        for v in plan.settings.variables:
            out[v] = out[v].astype(np.float64)
    return out


def run_in_memory(df: pd.DataFrame, plans: Sequence[Any], seeds: Sequence[np.random.SeedSequence]) -> pd.DataFrame:
    """The in-memory reference: the same per-partition transform on the whole frame as one
    partition starting at global row 0."""
    return _apply_plans(df.reset_index(drop=True), tuple(plans), tuple(seeds),
                        np.array([0, df.shape[0]], dtype=np.int64), None)
