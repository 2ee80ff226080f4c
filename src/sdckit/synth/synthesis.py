"""Sequential synthesis of microdata (Nowok, Raab & Dibben 2016, section 2).

The joint distribution of the variables ``Y_1 .. Y_p`` is written as a chain of conditionals
in a *visit sequence*::

    f(Y_1, ..., Y_p) = f(Y_1) f(Y_2 | Y_1) ... f(Y_p | Y_1, ..., Y_{p-1})

The first variable is drawn from its marginal (``sample``); each later one from a model of it
fitted on the original records with the variables before it as predictors, evaluated at the
synthetic values already drawn (method ``cart`` by default, or ``norm``, ``normrank``,
``pmm``, ``logreg``, ``polyreg``, ``sample``, ``passive``). Columns that are not synthesised
keep their values and condition every synthesised variable (a partially synthetic file).

Pseudocode (the chain of one stratum: :mod:`sdckit.synth.chain`)::

    fit:   for j in visit sequence:
               rows_j = records not fixed by an assignment rule of j (rules/rvalues)
               model_j = fit(method_j, y = Y_j[rows_j], x = predictors_j[rows_j])
    draw:  for j in visit sequence (own random stream per variable):
               y*_j = model_j.draw(x* = synthetic predictors_j)
               y*_j[condition of an assignment rule] = its value
               while a rule of j fails on a record: draw that record again
           the strata columns keep their values; each stratum is fitted and drawn alone

Missing values: a categorical variable's missing value is one more category. A numeric
variable with missing values or special codes (synthpop's ``cont.na``, e.g. ``-8``) is
synthesised in two parts, as synthpop does: first its *status* (observed, missing, or each
code) as a categorical variable, then its value for the records whose synthetic status is
"observed", from the observed records only; later variables see the value (0 where not
observed) and the status as two predictors.

Randomness: the fit uses none. A file (of one synthetic record per original record, or of
another size ``k`` whose records come stratum after stratum) is drawn in fixed blocks of rows (:data:`DRAW_BLOCK` records): block ``b`` draws from child ``b`` of the
draw's stream (the stream itself for a file of one block), and within a block each stratum
from a child of the block's stream and each variable from a child of that
(:meth:`FittedSynthesis.draw_rows`). The draw of a record depends on its position in its
block's stream, so any partitioning of the records into partitions that read whole blocks
gives the same file; the Dask engine (:mod:`sdckit.engine.synthesis`) draws this way.

Modules: this one is the driver (:class:`Synthesiser`, the settings; :class:`FittedSynthesis`,
the fit and the blocked draw); :mod:`sdckit.synth.plan` (the settings resolved against the data:
visit sequence, methods, rules), :mod:`sdckit.synth.encoding` (records as codes, values and
tree bins), :mod:`sdckit.synth.chain` (one stratum's chain: fit, draw, rules),
:mod:`sdckit.synth.output` (the drawn file as a DataFrame), :mod:`sdckit.synth.models` and
:mod:`sdckit.synth.tree` (the models).

References
----------
Nowok, B., Raab, G. M. and Dibben, C. (2016). synthpop: Bespoke creation of synthetic data in
R. Journal of Statistical Software 74(11), sections 2-3.
Reiter, J. P. (2005). Using CART to generate partially synthetic public use microdata. Journal
of Official Statistics 21(3), 441-462.
Drechsler, J. and Reiter, J. P. (2011). An empirical evaluation of easily implemented,
nonparametric methods for generating synthetic datasets. CSDA 55(12), 3232-3243.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._random import RngLike, seed_sequence
from .._validation import check_choice, check_float, check_int, param_error
from ..errors import InputError
from .chain import MAX_REDRAWS, draw_chain, fit_chain
from .encoding import OBSERVED, Column, Records, Slots, decoded, encode_column, n_different, set_bins
from .expr import parse_rule
from .models import METHODS
from .output import SynthesisDraw
from .plan import Plan, frame_and_keys

#: records drawn from one random stream (a block of the file's rows): the file is the same for
#: any partitioning of the records into whole blocks or not
DRAW_BLOCK = 65_536


# ----------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class Synthesiser:
    """Settings of a sequential synthesis (validated on creation).

    Parameters
    ----------
    variables : list of str, optional
        Columns to synthesise (default: every column). The others keep their values and
        condition the synthesised ones.
    visit_sequence : list of str or "data" or "synthpop"
        Order of synthesis. ``"data"`` (default): the data's column order. ``"synthpop"``:
        synthpop's advice for a CART synthesis, categorical variables with few categories
        first, then by increasing number of categories, numeric variables last (Nowok, Raab
        & Dibben 2016, section 3.2 and the synthpop vignette). A list names the variables
        in order; listed variables come first, the rest follow in data order.
    method : str
        Method of every variable (default ``"cart"``); the first variable of the sequence
        is always sampled from its marginal.
    methods : mapping, optional
        Per-variable methods overriding ``method`` (``{"income": "normrank"}``).
    passive : mapping, optional
        Derived variables: ``{"bmi": "weight / (height / 100) ** 2"}`` (method ``passive``).
    rules : list of str
        ``"condition -> consequent"`` (``"age < 16 -> marital == 'SINGLE'"``).
    strata : list of str
        Synthesis within the strata these columns define (they keep their values).
    missing_codes : mapping, optional
        Special codes of numeric variables synthesised as categories (``{"income": [-8]}``).
    smoothing : list of str
        Numeric variables whose synthetic values are smoothed by a Gaussian kernel.
    categorical : list of str
        Numeric columns to treat as categorical.
    min_leaf : int
        Smallest leaf of a tree (synthpop's ``minbucket``).
    cp : float
        Complexity parameter of the trees (synthpop's ``cp``).
    """

    variables: tuple[str, ...] = ()
    visit_sequence: Any = "data"
    method: str = "cart"
    methods: Mapping[str, str] = field(default_factory=dict)
    passive: Mapping[str, str] = field(default_factory=dict)
    rules: tuple[str, ...] = ()
    strata: tuple[str, ...] = ()
    missing_codes: Mapping[str, Sequence[float]] = field(default_factory=dict)
    smoothing: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    min_leaf: int = 5
    cp: float = 1e-8

    def __post_init__(self) -> None:
        o = "Synthesiser"
        for name in ("variables", "rules", "strata", "smoothing", "categorical"):
            v = getattr(self, name)
            if isinstance(v, str):
                v = (v,)
            if not isinstance(v, Sequence) or not all(isinstance(s, str) and s for s in v):
                raise param_error(o, name, "a list of strings", v)
            object.__setattr__(self, name, tuple(v))
        vs = self.visit_sequence
        if isinstance(vs, str):
            check_choice(o, "visit_sequence", vs, ("data", "synthpop"))
        elif not (isinstance(vs, Sequence) and all(isinstance(s, str) for s in vs)) or len(set(vs)) != len(vs):
            raise param_error(o, "visit_sequence", "'data', 'synthpop' or a list of distinct column names", vs)
        else:
            object.__setattr__(self, "visit_sequence", tuple(vs))
        check_choice(o, "method", self.method, METHODS[:-1])
        for name in ("methods", "passive", "missing_codes"):
            if not isinstance(getattr(self, name), Mapping):
                raise param_error(o, name, "a table (mapping)", getattr(self, name))
        for var, m in self.methods.items():
            if m not in METHODS:
                raise param_error(o, "methods", "a table of column -> one of " + ", ".join(map(repr, METHODS)),
                                  dict(self.methods))
            if m == "passive" and var not in self.passive:
                raise InputError(f"methods.{var}: method 'passive' needs a formula in passive.{var}.")
        for f in self.passive.values():
            if not isinstance(f, str) or not f.strip():
                raise param_error(o, "passive", "a table of column -> formula (a string)", dict(self.passive))
        for codes in self.missing_codes.values():
            if isinstance(codes, (int, float)) and not isinstance(codes, bool):
                codes = [codes]
            if not isinstance(codes, Sequence) or not all(isinstance(c, (int, float)) and not isinstance(c, bool)
                                                          and math.isfinite(c) for c in codes):
                raise param_error(o, "missing_codes", "a table of column -> list of numbers", dict(self.missing_codes))
        check_int(o, "min_leaf", self.min_leaf, min_value=1)
        check_float(o, "cp", self.cp, low=0.0, high=1.0)
        for r in self.rules:
            parse_rule(r, where="rules")   # syntax now; columns when the data are known

    # ------------------------------------------------------------------ planning
    def plan(self, frame: pd.DataFrame, *, key_vars: Sequence[str] = ()) -> Plan:
        """Resolve the settings against the data's columns: the visit sequence, each
        variable's method and predictors, the rules' targets. Raises InputError naming the
        column and the rule broken."""
        return Plan.build(self, frame, key_vars=tuple(key_vars))

    def fit(self, data: Any, *, n_jobs: int = 1) -> FittedSynthesis:
        """Fit every variable's model on the original records (a DataFrame or Microdata);
        ``n_jobs`` threads fit variables side by side (the result does not depend on it)."""
        frame, keys = frame_and_keys(data)
        return FittedSynthesis.fit(self.plan(frame, key_vars=keys), frame, data, n_jobs=n_jobs)


# ----------------------------------------------------------------------------- fitted
@dataclass
class FittedSynthesis:
    """Models fitted on the original records; :meth:`draw` makes synthetic files from them.

    ``chains`` maps each stratum (a tuple of labels; ``()`` without strata) to its fitted
    models; ``stratum_rows`` to the original rows of the stratum. Fitting draws no random
    number, so one fit serves any number of draws (of any size, by partitions).
    """

    plan: Plan
    encoded: dict
    slots: Slots
    original: Records
    chains: dict
    stratum_rows: dict
    stratum_labels: dict
    n_original: int
    notes: list = field(default_factory=list)
    #: records fitted per stratum (kept when :meth:`for_drawing` drops the rows)
    stratum_sizes: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ fit
    @classmethod
    def fit(cls, plan: Plan, frame: pd.DataFrame, source: Any = None, *, n_jobs: int = 1) -> FittedSynthesis:
        enc: dict[str, Column] = {}
        for c in plan.columns:
            key = None
            if source is not None and not isinstance(source, pd.DataFrame) and c in getattr(source, "key_vars", ()):
                key = (source.codes(c), source.categories(c))
            enc[c] = encode_column(c, frame[c], categorical=plan.categorical[c],
                                   missing_codes=plan.missing_codes.get(c, ()), key=key)
        n = int(frame.shape[0])
        sl = Slots(enc)
        orig = Records.empty(n, sl)
        for c, col in enc.items():
            if col.categorical:
                orig.codes[c] = col.codes
            else:
                orig.values[c] = col.values
                if col.status is not None:
                    orig.status[c] = col.status
            set_bins(enc, sl, orig, c)
        # strata
        if plan.strata:
            key = np.zeros(n, dtype=np.int64)
            for c in plan.strata:
                key = key * (enc[c].n_levels + 1) + enc[c].codes
            uniq, inv = np.unique(key, return_inverse=True)
            order = np.argsort(inv, kind="stable")
            bounds = np.searchsorted(inv[order], np.arange(uniq.shape[0] + 1))
            strata_rows, labels = {}, {}
            for i in range(uniq.shape[0]):
                rows = order[bounds[i]:bounds[i + 1]]
                lab = tuple(enc[c].categories[enc[c].codes[rows[0]]] for c in plan.strata)
                strata_rows[lab] = rows
                labels[lab] = {c: enc[c].codes[rows[0]] for c in plan.strata}
        else:
            strata_rows = {(): np.arange(n, dtype=np.int64)}
            labels = {(): {}}
        dec_all = decoded(enc, orig, plan.columns) if (plan.rules or plan.passive) else None
        notes = []
        for var, e in plan.passive.items():
            diff = n_different(e.evaluate(dec_all, n), dec_all[var])
            if diff:
                notes.append(f"the formula of {var!r} ({e.source}) differs from the original values in "
                             f"{diff} of {n} records")
        chains = {lab: fit_chain(plan, enc, sl, orig, rows, dec_all, n_jobs)
                  for lab, rows in strata_rows.items()}
        sizes = {lab: int(r.shape[0]) for lab, r in strata_rows.items()}
        return cls(plan, enc, sl, orig, chains, strata_rows, labels, n, notes, sizes)

    # ------------------------------------------------------------------ draw
    def allocation(self, k: int) -> dict:
        """Records per stratum for a file of ``k`` records: the original counts when ``k`` is
        the original size, else proportional (largest remainders)."""
        sizes = self.stratum_sizes or {lab: int(r.shape[0]) for lab, r in self.stratum_rows.items()}
        if k == self.n_original:
            return sizes
        exact = {lab: k * s / self.n_original for lab, s in sizes.items()}
        out = {lab: int(math.floor(v)) for lab, v in exact.items()}
        rest = k - sum(out.values())
        for lab in sorted(exact, key=lambda x: (-(exact[x] - out[x]), str(x)))[:rest]:
            out[lab] += 1
        return out

    def draw(self, k: int | None = None, *, rng: RngLike = None, frame: pd.DataFrame | None = None,
             block_rows: int = DRAW_BLOCK) -> SynthesisDraw:
        """A synthetic file of ``k`` records (default: the original size), or one synthetic
        record per record of ``frame``.

        A row-aligned file (the original size, or ``frame`` given) is drawn in blocks of
        ``block_rows`` records (:meth:`draw_rows`): synthetic record ``i`` takes the stratum
        (and the values of any kept column) of record ``i`` of ``frame`` (default: the records
        fitted), and block ``b`` draws from its own child of ``rng``, so the file does not
        depend on how the records are partitioned. A file of another size needs every column
        synthesised (or a stratum): its records come stratum after stratum (each stratum's
        share of ``k``, :meth:`allocation`) and are drawn in the same blocks
        (:meth:`draw_resized_rows`); for ``k`` up to ``block_rows`` stratum ``s`` draws from
        child ``s`` of ``rng``.
        """
        block_rows = check_int("FittedSynthesis", "block_rows", block_rows, min_value=1)
        ss, record = seed_sequence(rng)
        if frame is not None or k is None or k == self.n_original:
            if frame is not None and k is not None and k != len(frame):
                raise InputError(f"k = {k} differs from the {len(frame)} records of the frame given; leave k "
                                 "out to draw one synthetic record per record.")
            n = self.n_original if frame is None else int(len(frame))
            parts, checks = self.draw_rows(frame, ss, first_row=0, n_total=n, block_rows=block_rows)
            return SynthesisDraw(self, n, parts, checks, record, aligned=True)
        k = check_int("FittedSynthesis", "k", k, min_value=1)
        self.check_resizable(k)
        parts, checks = self.draw_resized_rows(ss, k, 0, k, block_rows=block_rows)
        return SynthesisDraw(self, k, parts, checks, record)

    def check_resizable(self, k: int) -> None:
        """Raise InputError when a file of ``k`` records (not the original size) cannot be drawn:
        a kept column that is not a stratum has no value for a record that stands for no
        original record."""
        non_strata_kept = [c for c in self.plan.kept if c not in self.plan.strata]
        if non_strata_kept and k != self.n_original:
            raise InputError(f"records in the synthetic file: {k:,} differs from the {self.n_original:,} original "
                             f"records, but {non_strata_kept[0]!r} is kept (not synthesised); a file of another "
                             "size needs every column synthesised (or a stratum): add it to the synthesised "
                             "columns or keep the original size.")

    def resized_strata(self, k: int, lo: int, hi: int) -> pd.DataFrame:
        """The strata columns of rows ``lo .. hi`` of a file of ``k`` records of another size:
        the strata in the fit's order, each with its :meth:`allocation` of records (a frame
        without columns when there are no strata)."""
        alloc = self.allocation(k)
        labs = list(self.stratum_rows)
        counts = np.array([alloc[lab] for lab in labs], dtype=np.int64)
        which = np.repeat(np.arange(len(labs)), counts)[lo:hi]
        data = {c: pd.Series([labs[s][j] for s in range(len(labs))], dtype=object).to_numpy()[which]
                for j, c in enumerate(self.plan.strata)}
        return pd.DataFrame(data, index=pd.RangeIndex(lo, hi))

    def draw_resized_rows(self, ss: np.random.SeedSequence, k: int, lo: int, hi: int, *,
                          block_rows: int = DRAW_BLOCK) -> tuple[list, list]:
        """Rows ``lo .. hi`` (whole blocks) of a synthetic file of ``k`` records of another size
        than the original (synthpop's ``k``): its records come stratum after stratum
        (:meth:`resized_strata`) and are drawn in blocks exactly as :meth:`draw_rows` draws a
        file of the original size, so any cut of the rows into whole blocks (the Dask
        engine's partitions) gives the same file. Rows are counted from ``lo``."""
        frame = self.resized_strata(k, lo, hi).reset_index(drop=True)
        return self.draw_rows(frame, ss, first_row=lo, n_total=k, block_rows=block_rows)

    def draw_rows(self, frame: pd.DataFrame | None, ss: np.random.SeedSequence, *, first_row: int,
                  n_total: int, block_rows: int = DRAW_BLOCK) -> tuple[list, list]:
        """Draw the synthetic records of rows ``first_row .. first_row + len(frame)`` of a file
        of ``n_total`` records (``frame``: those rows' original records; None: the records
        fitted, all of them).

        The definition of the file, the same on every engine: the file's rows are cut into
        blocks of ``block_rows``; block ``b`` draws from ``block_stream(ss, b, n_blocks)`` (the
        stream itself when the file is one block, else its child ``b``), and within a block
        the records of stratum ``s`` (in the fit's order of strata) draw from the block
        stream's child ``s``, one child per variable. ``first_row`` must start a block and the
        rows must end a block or the file. Returns the parts ``(stratum, rows, records)``, rows
        counted from ``first_row``, and each part's checks.
        """
        n = self.n_original if frame is None else int(len(frame))
        if first_row % block_rows or (first_row + n != n_total and n % block_rows):
            raise ValueError("draw_rows: the rows must be whole blocks of the file")
        n_blocks = max(1, -(-n_total // block_rows))
        labs = list(self.stratum_rows)
        parts, checks = [], []
        for lo in range(0, n, block_rows):
            hi = min(n, lo + block_rows)
            if frame is None:
                given, strata = self.original.take(np.arange(lo, hi)), self.stratum_of_records()[lo:hi]
            else:
                given, strata = self.records_of(frame.iloc[lo:hi])
            bs = block_stream(ss, (first_row + lo) // block_rows, n_blocks)
            for s in np.unique(strata):
                rows = np.flatnonzero(strata == s)
                syn, chk = draw_chain(self.plan, self.encoded, self.slots, self.chains[labs[s]],
                                      given.take(rows), int(rows.shape[0]), child_stream(bs, int(s)))
                parts.append((labs[s], lo + rows, syn))
                checks.append(chk)
        return parts, checks

    def stratum_of_records(self) -> np.ndarray:
        """The stratum (index into the fit's order of strata) of every record fitted."""
        out = np.zeros(self.n_original, dtype=np.int64)
        for s, rows in enumerate(self.stratum_rows.values()):
            out[rows] = s
        return out

    def records_of(self, frame: pd.DataFrame) -> tuple[Records, np.ndarray]:
        """The kept columns (strata included) of ``frame``'s records, encoded as the fit
        encoded them, and each record's stratum (index into the fit's order of strata).

        Raises InputError naming the column and the value when a record holds a category or a
        stratum the fit did not see (possible when the fit read a sample of the records).
        """
        m = int(len(frame))
        given = Records.empty(m, self.slots)
        for c in self.plan.kept:
            col = self.encoded[c]
            if col.categorical:
                given.codes[c] = _category_codes(col, frame[c], n_fitted=self.n_original,
                                                 where="strata" if c in self.plan.strata else c)
            else:
                given.values[c], status = _numeric_status(col, frame[c])
                if col.status is not None:
                    given.status[c] = status
            set_bins(self.encoded, self.slots, given, c)
        strata = np.zeros(m, dtype=np.int64)
        if self.plan.strata:
            radix = [self.encoded[c].n_levels + 1 for c in self.plan.strata]
            key = np.zeros(m, dtype=np.int64)
            for c, r in zip(self.plan.strata, radix):
                key = key * r + given.codes[c]
            known = {}
            for s, codes in enumerate(self.stratum_labels.values()):
                kk = 0
                for c, r in zip(self.plan.strata, radix):
                    kk = kk * r + int(codes[c])
                known[kk] = s
            uniq, inv = np.unique(key, return_inverse=True)
            missing = [u for u in uniq.tolist() if u not in known]
            if missing:
                i = int(np.flatnonzero(key == missing[0])[0])
                lab = tuple(frame[c].iloc[i] for c in self.plan.strata)
                raise InputError(f"strata: the stratum {lab!r} of {', '.join(self.plan.strata)} has no record "
                                 f"in the {self.n_original} records fitted; fit on more records (fit_sample) "
                                 "or merge the stratum with another.")
            strata = np.array([known[u] for u in uniq.tolist()], dtype=np.int64)[inv.reshape(-1)]
        return given, strata

    def for_drawing(self) -> FittedSynthesis:
        """A copy holding only what :meth:`draw_rows` needs with a ``frame`` (the models and
        encodings; the fitted records' arrays only where a rule falls back on them), small
        enough to send to the workers of a cluster."""
        enc = self.encoded
        if not self.plan.rules:
            def slim(a: np.ndarray | None) -> np.ndarray | None:   # None keeps its meaning (no status)
                return None if a is None else a[:0]

            enc = {c: dataclasses.replace(col, codes=slim(col.codes), values=slim(col.values),
                                          status=slim(col.status)) for c, col in enc.items()}
        rows = {lab: np.zeros(0, dtype=np.int64) for lab in self.stratum_rows}
        return dataclasses.replace(self, encoded=enc, original=Records.empty(0, self.slots),
                                   stratum_rows=rows)

    def draw_stratum(self, lab: tuple, m: int, ss: np.random.SeedSequence, *,
                     rows: np.ndarray | None = None) -> tuple[Records, dict]:
        """Draw ``m`` records of stratum ``lab`` from the stream ``ss`` (one child per variable).

        ``rows`` (fitted records, one per synthetic record) supply the kept columns' values.
        The draw of a record depends on its position in the call (one stream is consumed in
        order), so a partitioned draw calls this on whole blocks (:meth:`draw_rows`).
        """
        sl = self.slots
        if rows is not None:
            given = self.original.take(np.asarray(rows, dtype=np.int64))
        else:
            given = Records.empty(m, sl)
            for c, code in self.stratum_labels[lab].items():
                given.codes[c] = np.full(m, code, dtype=np.int64)
                set_bins(self.encoded, sl, given, c)
        return draw_chain(self.plan, self.encoded, sl, self.chains[lab], given, m, ss)


def child_stream(ss: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """Child ``i`` of ``ss``: what ``ss.spawn(i + 1)[i]`` gives on a fresh ``ss`` (NumPy's
    ``SeedSequence.spawn``), whatever was spawned from ``ss`` before."""
    return np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, int(i)), pool_size=ss.pool_size)


def block_stream(ss: np.random.SeedSequence, b: int, n_blocks: int) -> np.random.SeedSequence:
    """The stream of block ``b`` of a file of ``n_blocks`` blocks: ``ss`` itself for a file of
    one block (the draw of a small file is that of one call), else child ``b`` of ``ss``."""
    return ss if n_blocks == 1 else child_stream(ss, b)


def _category_codes(col: Column, values: pd.Series, *, where: str, n_fitted: int) -> np.ndarray:
    labels = [x for x in col.categories.tolist() if x is not None]
    has_na = col.n_levels > len(labels)
    codes = pd.Index(labels).get_indexer(pd.Index(values)).astype(np.int64)
    missing = values.isna().to_numpy()
    bad = (codes < 0) & (~missing | (missing & ~has_na))
    if bad.any():
        v = values.iloc[int(np.flatnonzero(bad)[0])]
        v = v.item() if isinstance(v, np.generic) else v
        raise InputError(f"{where}: the value {v!r} of {col.name!r} does not occur in the {n_fitted} records "
                         f"fitted; fit on more records (fit_sample) or synthesise {col.name!r}.")
    codes[missing] = len(labels)
    return codes


def _numeric_status(col: Column, values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    v = values.to_numpy(dtype=np.float64, na_value=np.nan)
    status = np.zeros(v.shape[0], dtype=np.int64)
    for s, lab in enumerate(col.status_labels, start=1):
        status[np.isnan(v) if lab is None else v == lab] = s
    if np.isnan(v[status == OBSERVED]).any():
        raise InputError(f"{col.name}: a record is missing a value, and the records fitted have none missing; "
                         f"fit on more records (fit_sample) or synthesise {col.name!r}.")
    return np.where(status == OBSERVED, v, 0.0), status


__all__ = ["Synthesiser", "Plan", "FittedSynthesis", "SynthesisDraw", "Column", "encode_column", "frame_and_keys",
           "MAX_REDRAWS", "DRAW_BLOCK", "block_stream", "child_stream"]
