"""Sequential synthesis of microdata (Nowok, Raab & Dibben 2016, section 2).

The joint distribution of the variables ``Y_1 .. Y_p`` is written as a chain of conditionals
in a *visit sequence*::

    f(Y_1, ..., Y_p) = f(Y_1) f(Y_2 | Y_1) ... f(Y_p | Y_1, ..., Y_{p-1})

The first variable is drawn from its marginal (``sample``); each later one from a model of it
fitted on the original records with the variables before it as predictors, evaluated at the
synthetic values already drawn (method ``cart`` by default, or ``norm``, ``normrank``,
``pmm``, ``logreg``, ``polyreg``, ``sample``, ``passive``). Columns that are not synthesised
keep their values and condition every synthesised variable (a partially synthetic file).

Pseudocode (one stratum)::

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

Randomness: the fit uses none. The draw of each stratum takes the stratum's child stream of
the step's seed (``SeedSequence.spawn``) and each variable a child of that, so a stratum or a
partition of records can be drawn alone from one fit and gives the same file whatever the
scheduling (:meth:`FittedSynthesis.draw` with ``partition``).

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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._random import RngLike, SeedRecord, seed_sequence
from .._validation import check_choice, check_float, check_int, close_names, param_error
from ..errors import InputError
from .expr import Expression, Rule, parse_expression, parse_rule
from .models import (
    CATEGORICAL_ONLY,
    METHODS,
    NUMERIC_ONLY,
    ConstantModel,
    Fitted,
    Predictors,
    decimal_places,
    fit_model,
    usable_predictors,
)
from .tree import MAX_BINS, cut_points

#: the status category of an observed value of a numeric variable
OBSERVED = 0
#: re-draws of a record whose synthetic value breaks a rule before falling back to the
#: values that meet the rule in the original data
MAX_REDRAWS = 50


# ----------------------------------------------------------------------------- encoding
@dataclass
class Column:
    """One column of the original data, encoded once.

    A categorical column has ``codes`` (0..L-1, the missing value as one more code when
    present) and ``categories`` (labels, ``None`` for missing). A numeric one has ``values``
    (floats, 0 where not observed), and when it has missing values or special codes a
    ``status`` (0 = observed, then one code per status in ``status_labels``: ``None`` for
    missing, else the special value).
    """

    name: str
    categorical: bool
    codes: np.ndarray | None = None
    categories: np.ndarray | None = None
    values: np.ndarray | None = None
    status: np.ndarray | None = None
    status_labels: list = field(default_factory=list)
    dtype: Any = None
    cuts: np.ndarray | None = None   # numeric: bin cut points for the trees
    decimals: int = 0
    key_codes: bool = False          # categories are those of a Microdata key (missing = -1 there)

    @property
    def n_levels(self) -> int:
        return int(self.categories.shape[0]) if self.categorical else 0

    def bins(self, values: np.ndarray) -> np.ndarray:
        """Tree bins of values of this column (codes for a categorical one)."""
        if self.categorical:
            codes = np.asarray(values, dtype=np.int64)
            if self.n_levels > MAX_BINS:   # ordered groups of the sorted categories
                return (codes * MAX_BINS // self.n_levels).astype(np.uint8)
            return codes.astype(np.uint8)
        return np.searchsorted(self.cuts, np.asarray(values, dtype=np.float64), side="left").astype(np.uint8)

    def decode(self, codes: np.ndarray | None = None, values: np.ndarray | None = None,
               status: np.ndarray | None = None) -> np.ndarray:
        """Values for expressions and output: labels (object, None = missing) or floats (NaN =
        missing, special codes restored)."""
        if self.categorical:
            return self.categories[np.asarray(codes, dtype=np.int64)]
        out = np.asarray(values, dtype=np.float64).copy()
        if status is not None and self.status_labels:
            for s, lab in enumerate(self.status_labels, start=1):
                out[status == s] = np.nan if lab is None else float(lab)
        return out


def encode_column(name: str, series: pd.Series, *, categorical: bool,
                  missing_codes: Sequence[float] = (), key: tuple[np.ndarray, pd.Index] | None = None) -> Column:
    """Encode one column (see :class:`Column`)."""
    if categorical:
        if key is not None:
            codes, cats = key
            codes = np.asarray(codes, dtype=np.int64).copy()
            labels = list(cats)
        else:
            codes, uniques = pd.factorize(series, sort=True, use_na_sentinel=True)
            codes = codes.astype(np.int64)
            labels = list(uniques)
        if (codes < 0).any():
            codes[codes < 0] = len(labels)
            labels.append(None)
        cat = np.empty(len(labels), dtype=object)
        cat[:] = labels
        return Column(name, True, codes=codes, categories=cat, dtype=series.dtype, key_codes=key is not None)
    v = series.to_numpy(dtype=np.float64, na_value=np.nan)
    status = np.zeros(v.shape[0], dtype=np.int64)
    labels: list = []
    if np.isnan(v).any():
        labels.append(None)
        status[np.isnan(v)] = len(labels)
    for c in missing_codes:
        hit = v == float(c)
        if hit.any():
            labels.append(float(c))
            status[hit] = len(labels)
    values = np.where(status == OBSERVED, v, 0.0)
    observed = values[status == OBSERVED]
    return Column(name, False, values=values, status=status if labels else None, status_labels=labels,
                  dtype=series.dtype, cuts=cut_points(values if observed.size else np.zeros(1)),
                  decimals=decimal_places(observed))


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


def frame_and_keys(data: Any) -> tuple[pd.DataFrame, tuple[str, ...]]:
    if isinstance(data, pd.DataFrame):
        return data, ()
    frame = getattr(data, "frame", None)
    if isinstance(frame, pd.DataFrame):
        return frame, tuple(getattr(data, "key_vars", ()))
    raise InputError(f"synthesis needs a pandas DataFrame or a Microdata; got {type(data).__name__}.")


@dataclass(frozen=True)
class Plan:
    """The resolved synthesis: what is synthesised, how, in which order."""

    columns: tuple[str, ...]            # every column of the data
    sequence: tuple[str, ...]           # synthesised variables in visit order
    kept: tuple[str, ...]               # not synthesised (strata included): keep values, condition the rest
    strata: tuple[str, ...]
    methods: Mapping[str, str]
    categorical: Mapping[str, bool]
    passive: Mapping[str, Expression]
    rules: tuple[Rule, ...]
    missing_codes: Mapping[str, tuple]
    smoothing: tuple[str, ...]
    min_leaf: int
    cp: float

    @classmethod
    def build(cls, s: Synthesiser, frame: pd.DataFrame, *, key_vars: tuple[str, ...]) -> Plan:
        cols = [str(c) for c in frame.columns]

        def need(names: Sequence[str], what: str) -> None:
            for c in names:
                if c not in cols:
                    raise InputError(f"{what}: column {c!r} does not exist; {close_names(c, cols)}")

        need(s.variables, "variables")
        need(s.strata, "strata")
        need(s.methods, "methods")
        need(s.passive, "passive")
        need(s.missing_codes, "missing_codes")
        need(s.smoothing, "smoothing")
        need(s.categorical, "categorical")
        if not isinstance(s.visit_sequence, str):
            need(s.visit_sequence, "visit_sequence")
        variables = [c for c in (s.variables or cols) if c not in s.strata]
        bad = [c for c in s.strata if c in s.variables]
        if bad:
            raise InputError(f"strata: {bad[0]!r} is also listed in variables; a strata column keeps its "
                             "values (synthesis runs within each stratum): take it out of one list.")
        if not variables:
            raise InputError("variables: nothing to synthesise; name at least one column that is not a stratum.")
        categorical = {}
        for c in cols:
            sr = frame[c]
            num = pd.api.types.is_numeric_dtype(sr) and not pd.api.types.is_bool_dtype(sr)
            categorical[c] = (not num) or c in key_vars or c in s.categorical
        for c in s.missing_codes:
            if categorical[c]:
                raise InputError(f"missing_codes.{c}: {c!r} is categorical (a key or text column), where a "
                                 "special code is already a category of its own; remove it from missing_codes.")
        for c in s.smoothing:
            if categorical[c]:
                raise InputError(f"smoothing: {c!r} is categorical; only numeric variables are smoothed.")
        # visit sequence
        if isinstance(s.visit_sequence, tuple):
            listed = [c for c in s.visit_sequence if c in variables]
            extra = [c for c in s.visit_sequence if c not in variables]
            if extra:
                raise InputError(f"visit_sequence: {extra[0]!r} is not synthesised (it is a stratum or not in "
                                 "variables); list synthesised variables only.")
            sequence = listed + [c for c in variables if c not in listed]
        elif s.visit_sequence == "synthpop":
            def order_key(c: str) -> tuple:
                if categorical[c]:
                    return (0, int(frame[c].nunique(dropna=False)), cols.index(c))
                return (1, 0, cols.index(c))
            sequence = sorted(variables, key=order_key)
        else:
            sequence = list(variables)
        # passive variables come after every column their formula reads
        passive = {}
        for var, f in s.passive.items():
            if var not in variables:
                raise InputError(f"passive.{var}: {var!r} is not synthesised; a passive variable must be one of "
                                 "the synthesised variables.")
            e = parse_expression(f, known=cols, where=f"passive.{var}")
            if var in e.columns:
                raise InputError(f"passive.{var}: the formula {f!r} reads {var!r} itself.")
            passive[var] = e
        pos = {c: i for i, c in enumerate(sequence)}
        kept = [c for c in cols if c not in pos]
        conditioning = [c for c in kept if c not in s.strata]
        methods = {}
        for i, c in enumerate(sequence):
            m = s.methods.get(c, "passive" if c in passive else s.method)
            if c in passive and m != "passive":
                raise InputError(f"methods.{c}: {c!r} has a passive formula; its method must be 'passive'.")
            if i == 0 and m != "passive" and not conditioning:
                m = "sample"   # the first variable has no predictors: its marginal
            if categorical[c] and m in NUMERIC_ONLY:
                raise InputError(f"methods.{c}: {m!r} is for numeric variables and {c!r} is categorical; use "
                                 "'cart', 'sample', 'logreg' or 'polyreg'.")
            if not categorical[c] and m in CATEGORICAL_ONLY:
                raise InputError(f"methods.{c}: {m!r} is for categorical variables and {c!r} is numeric; use "
                                 "'cart', 'sample', 'norm', 'normrank' or 'pmm' (or list it in categorical).")
            if m == "logreg" and frame[c].nunique(dropna=False) > 2:
                raise InputError(f"methods.{c}: 'logreg' is for two categories and {c!r} has "
                                 f"{frame[c].nunique(dropna=False)}; use 'polyreg' or 'cart'.")
            methods[c] = m
        for var, e in passive.items():
            late = [c for c in e.columns if c in pos and pos[c] > pos[var]]
            if late:
                raise InputError(f"passive.{var}: the formula reads {late[0]!r}, which is synthesised after "
                                 f"{var!r}; put {late[0]!r} earlier in visit_sequence.")
        # rules: the target is the consequent's column synthesised last
        rules = []
        for text in s.rules:
            r = parse_rule(text, known=cols, where="rules")
            in_seq = [c for c in r.consequent.columns if c in pos]
            if not in_seq:
                raise InputError(f"rules: {text!r} constrains only columns that are not synthesised; the "
                                 "original values already decide it.")
            target = max(in_seq, key=lambda c: pos[c])
            late = [c for c in r.condition.columns + r.consequent.columns if c in pos and pos[c] > pos[target]]
            if late:
                raise InputError(f"rules: {text!r} reads {late[0]!r}, synthesised after {target!r}; put "
                                 f"{late[0]!r} earlier in visit_sequence.")
            if methods[target] == "passive":
                raise InputError(f"rules: {text!r} constrains {target!r}, which is passive (derived by its "
                                 "formula); write the rule on the variables the formula reads.")
            assigns = r.assigns and r.consequent.columns == (target,)
            rules.append(Rule(r.source, r.condition, r.consequent, target, r.value, assigns))
        missing = {c: tuple(float(x) for x in ([v] if isinstance(v, (int, float)) else v))
                   for c, v in s.missing_codes.items()}
        return cls(tuple(cols), tuple(sequence), tuple(kept), tuple(s.strata), methods, categorical,
                   passive, tuple(rules), missing, tuple(s.smoothing), s.min_leaf, s.cp)

    def predictors(self, var: str) -> list[str]:
        """The columns that condition ``var``: every kept column, then the variables before it
        (strata are constant within a stratum and add nothing)."""
        i = self.sequence.index(var)
        return [c for c in self.kept if c not in self.strata] + list(self.sequence[:i])


# ----------------------------------------------------------------------------- fitted chain
# ----------------------------------------------------------------------------- fitted chain
@dataclass
class VariableModel:
    """The fitted models of one variable within one stratum."""

    name: str
    method: str
    predictors: tuple[str, ...] = ()          # predictor slots used (after dropping unusable ones)
    value: Fitted | None = None               # values (codes for a categorical variable)
    status: Fitted | None = None              # numeric variable with missing values: its status
    status_predictors: tuple[str, ...] = ()
    n_fit: int = 0


class _Slots:
    """Predictor slots: a categorical column is one slot; a numeric column is its value slot
    (``name``) and, with a status, a categorical status slot (``name#status``). Every slot is
    one column of a frame's matrix of tree bins."""

    def __init__(self, enc: Mapping[str, Column]) -> None:
        self.enc = enc
        self.names: list[str] = []
        for c in enc:
            self.names.extend(self.slots(c))
        self.index = {s: j for j, s in enumerate(self.names)}

    def slots(self, col: str) -> list[str]:
        c = self.enc[col]
        return [col] if c.categorical or c.status is None else [col, col + "#status"]

    def is_cat(self, slot: str) -> bool:
        if slot.endswith("#status"):
            return True
        c = self.enc[slot]
        return c.categorical and c.n_levels <= MAX_BINS

    def n_levels(self, slot: str) -> int:
        if slot.endswith("#status"):
            return len(self.enc[slot[:-7]].status_labels) + 1
        return self.enc[slot].n_levels


@dataclass
class _Frame:
    """Encoded records (original or synthetic): per column codes, or values (+ status), and
    the matrix of tree bins (records x slots)."""

    n: int
    binned: np.ndarray
    codes: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    status: dict = field(default_factory=dict)

    @classmethod
    def empty(cls, n: int, sl: _Slots) -> _Frame:
        return cls(n, np.zeros((n, len(sl.names)), dtype=np.uint8))

    def raw(self, slot: str) -> np.ndarray:
        if slot.endswith("#status"):
            return self.status[slot[:-7]]
        return self.codes[slot] if slot in self.codes else self.values[slot]

    def take(self, rows: np.ndarray) -> _Frame:
        return _Frame(int(rows.shape[0]), self.binned[rows],
                      {k: v[rows] for k, v in self.codes.items()},
                      {k: v[rows] for k, v in self.values.items()},
                      {k: v[rows] for k, v in self.status.items()})


def _predictors(frame: _Frame, slots: Sequence[str], sl: _Slots, rows: np.ndarray) -> Predictors:
    return Predictors(frame.binned, np.array([sl.index[s] for s in slots], dtype=np.int64),
                      np.asarray(rows, dtype=np.int64),
                      np.array([sl.is_cat(s) for s in slots], dtype=bool),
                      np.array([sl.n_levels(s) for s in slots], dtype=np.int64),
                      [frame.raw(s) for s in slots])


def _decoded(enc: Mapping[str, Column], frame: _Frame, names: Sequence[str],
             rows: np.ndarray | None = None) -> dict:
    out = {}
    for c in names:
        col = enc[c]
        if col.categorical:
            codes = frame.codes[c]
            out[c] = col.decode(codes=codes if rows is None else codes[rows])
        else:
            v, st = frame.values[c], frame.status.get(c)
            if rows is not None:
                v = v[rows]
                st = None if st is None else st[rows]
            out[c] = col.decode(values=v, status=st)
    return out


def _set_bins(enc: Mapping[str, Column], sl: _Slots, frame: _Frame, col: str,
              rows: np.ndarray | None = None) -> None:
    """Bin column ``col`` (all records, or ``rows`` only) into the frame's matrix."""
    c = enc[col]
    j = sl.index[col]
    if c.categorical:
        src = frame.codes[col]
    else:
        src = frame.values[col]
    if rows is None:
        frame.binned[:, j] = c.bins(src)
    else:
        frame.binned[rows, j] = c.bins(src[rows])
    if not c.categorical and c.status is not None:
        js = sl.index[col + "#status"]
        st = frame.status[col]
        if rows is None:
            frame.binned[:, js] = st.astype(np.uint8)
        else:
            frame.binned[rows, js] = st[rows].astype(np.uint8)


def _encode_value(col: Column, value: Any) -> tuple[str, Any]:
    """A rule's constant as this column's code, or (for numeric) value and status."""
    if col.categorical:
        labels = list(col.categories)
        for i, lab in enumerate(labels):
            if lab == value or (lab is not None and not isinstance(lab, str) and isinstance(value, (int, float))
                                and not isinstance(value, bool) and float(lab) == float(value)):
                return "code", i
        raise InputError(f"rules: {value!r} is not a category of {col.name!r}; the categories are "
                         f"{', '.join(repr(x) for x in labels[:10])}{' ...' if len(labels) > 10 else ''}.")
    v = float(value)
    if col.status_labels and v in [x for x in col.status_labels if x is not None]:
        return "status", list(col.status_labels).index(v) + 1
    return "value", v


@dataclass
class _Chain:
    """The fitted models of one stratum, in visit order, and for each rule the original
    records that meet it (the values a record falls back to)."""

    models: list
    rule_pools: dict


@dataclass
class FittedSynthesis:
    """Models fitted on the original records; :meth:`draw` makes synthetic files from them.

    ``chains`` maps each stratum (a tuple of labels; ``()`` without strata) to its fitted
    models; ``stratum_rows`` to the original rows of the stratum. Fitting draws no random
    number, so one fit serves any number of draws (of any size, by partitions).
    """

    plan: Plan
    encoded: dict
    slots: _Slots
    original: _Frame
    chains: dict
    stratum_rows: dict
    stratum_labels: dict
    n_original: int
    notes: list = field(default_factory=list)

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
        sl = _Slots(enc)
        orig = _Frame.empty(n, sl)
        for c, col in enc.items():
            if col.categorical:
                orig.codes[c] = col.codes
            else:
                orig.values[c] = col.values
                if col.status is not None:
                    orig.status[c] = col.status
            _set_bins(enc, sl, orig, c)
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
        decoded = _decoded(enc, orig, plan.columns) if (plan.rules or plan.passive) else None
        notes = []
        for var, e in plan.passive.items():
            diff = _n_different(e.evaluate(decoded, n), decoded[var])
            if diff:
                notes.append(f"the formula of {var!r} ({e.source}) differs from the original values in "
                             f"{diff} of {n} records")
        chains = {lab: _fit_chain(plan, enc, sl, orig, rows, decoded, n_jobs)
                  for lab, rows in strata_rows.items()}
        return cls(plan, enc, sl, orig, chains, strata_rows, labels, n, notes)

    # ------------------------------------------------------------------ draw
    def allocation(self, k: int) -> dict:
        """Records per stratum for a file of ``k`` records: the original counts when ``k`` is
        the original size, else proportional (largest remainders)."""
        sizes = {lab: int(r.shape[0]) for lab, r in self.stratum_rows.items()}
        if k == self.n_original:
            return sizes
        exact = {lab: k * s / self.n_original for lab, s in sizes.items()}
        out = {lab: int(math.floor(v)) for lab, v in exact.items()}
        rest = k - sum(out.values())
        for lab in sorted(exact, key=lambda x: (-(exact[x] - out[x]), str(x)))[:rest]:
            out[lab] += 1
        return out

    def draw(self, k: int | None = None, *, rng: RngLike = None) -> SynthesisDraw:
        """A synthetic file of ``k`` records (default: the original size).

        With the original size, synthetic record ``i`` takes the stratum (and the values of
        any kept column) of original record ``i``; with another size the kept columns must be
        strata only, and the records come stratum after stratum. Each stratum draws from its
        own child of ``rng`` (:meth:`draw_stratum`).
        """
        k = self.n_original if k is None else check_int("FittedSynthesis", "k", k, min_value=1)
        non_strata_kept = [c for c in self.plan.kept if c not in self.plan.strata]
        if k != self.n_original and non_strata_kept:
            raise InputError(f"k = {k} differs from the {self.n_original} original records, but "
                             f"{non_strata_kept[0]!r} is kept (not synthesised); a file of another size "
                             "needs every column synthesised (or a stratum).")
        ss, record = seed_sequence(rng)
        labs = list(self.stratum_rows)
        streams = dict(zip(labs, ss.spawn(len(labs))))
        alloc = self.allocation(k)
        parts, checks = [], []
        for lab in labs:
            if alloc[lab] == 0:
                continue
            rows = self.stratum_rows[lab] if k == self.n_original else None
            syn, chk = self.draw_stratum(lab, alloc[lab], streams[lab], rows=rows)
            parts.append((lab, rows, syn))
            checks.append(chk)
        return SynthesisDraw(self, k, parts, checks, record)

    def draw_stratum(self, lab: tuple, m: int, ss: np.random.SeedSequence, *,
                     rows: np.ndarray | None = None) -> tuple[_Frame, dict]:
        """Draw ``m`` records of stratum ``lab`` from the stream ``ss`` (one child per variable).

        ``rows`` (original rows, one per synthetic record) supply the kept columns' values.
        A partition of a large file is one call with its own stream: the draw of a record
        depends on that record's earlier variables only, so partitions need no exchange.
        """
        sl = self.slots
        if rows is not None:
            given = self.original.take(np.asarray(rows, dtype=np.int64))
        else:
            given = _Frame.empty(m, sl)
            for c, code in self.stratum_labels[lab].items():
                given.codes[c] = np.full(m, code, dtype=np.int64)
                _set_bins(self.encoded, sl, given, c)
        return _draw_chain(self.plan, self.encoded, sl, self.chains[lab], given, m, ss)


def _n_different(a: np.ndarray, b: np.ndarray) -> int:
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype.kind in "fiub" and b.dtype.kind in "fiub":
        a, b = a.astype(float), b.astype(float)
        both_nan = np.isnan(a) & np.isnan(b)
        close = np.isclose(a, b, rtol=1e-9, atol=1e-8)
        return int((~(close | both_nan)).sum())
    return int(sum(1 for x, y in zip(a, b) if not (x == y or (_isnull(x) and _isnull(y)))))


def _isnull(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _rule_rows(rules: Sequence[Rule], decoded: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    """Records where any of the rules' conditions holds."""
    hit = np.zeros(n, dtype=bool)
    for r in rules:
        hit |= np.asarray(r.condition.evaluate(decoded, n), dtype=bool)
    return hit


def _fit_chain(plan: Plan, enc: Mapping[str, Column], sl: _Slots, orig: _Frame, rows: np.ndarray,
               decoded: Mapping | None, n_jobs: int = 1) -> _Chain:
    """Fit the models of one stratum (its original ``rows``). Each variable's fit reads the
    original records only, so the variables are fitted independently (``n_jobs`` threads:
    the trees release the interpreter lock)."""
    m = rows.shape[0]
    dec = None if decoded is None else {k: v[rows] for k, v in decoded.items()}
    pools = {}
    for r in plan.rules:
        ok = np.flatnonzero(np.asarray(r.condition.evaluate(dec, m), dtype=bool)
                            & np.asarray(r.consequent.evaluate(dec, m), dtype=bool))
        pools[r.source] = rows[ok]

    def fit_var(var: str) -> VariableModel:
        return _fit_variable(plan, enc, sl, orig, rows, dec, var)

    if n_jobs > 1 and len(plan.sequence) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            models = list(pool.map(fit_var, plan.sequence))
    else:
        models = [fit_var(v) for v in plan.sequence]
    return _Chain(models, pools)


def _fit_variable(plan: Plan, enc: Mapping[str, Column], sl: _Slots, orig: _Frame, rows: np.ndarray,
                  dec: Mapping | None, var: str) -> VariableModel:
    col = enc[var]
    method = plan.methods[var]
    if method == "passive":
        return VariableModel(var, "passive")
    assign = [r for r in plan.rules if r.target == var and r.assigns]
    fit_rows = rows
    if assign:
        fit_rows = rows[~_rule_rows(assign, dec, rows.shape[0])]
    slots = [] if method == "sample" else [s for c in plan.predictors(var) for s in sl.slots(c)]
    vm = VariableModel(var, method, n_fit=int(fit_rows.shape[0]))
    if fit_rows.shape[0] == 0:
        vm.method = "rule"   # every record is fixed by a rule: the rule's value is all there is
        return vm
    if col.categorical:
        vm.value, vm.predictors = _fit_one(method, orig.codes[var][fit_rows], orig, slots, sl, fit_rows,
                                           True, col.n_levels, plan, var)
        return vm
    status = orig.status.get(var)
    val_rows = fit_rows
    if status is not None:
        st = status[fit_rows]
        st_method = method if method in ("cart", "sample") else "cart"
        vm.status, vm.status_predictors = _fit_one(st_method, st, orig, slots, sl, fit_rows, True,
                                                   len(col.status_labels) + 1, plan, var, smooth=False)
        val_rows = fit_rows[st == OBSERVED]
    if val_rows.shape[0] == 0:
        vm.value = ConstantModel("constant", value=0.0)
    else:
        vm.value, vm.predictors = _fit_one(method, orig.values[var][val_rows], orig, slots, sl, val_rows,
                                           False, 0, plan, var)
    return vm


def _fit_one(method: str, y: np.ndarray, orig: _Frame, slots: list, sl: _Slots, rows: np.ndarray,
             categorical: bool, n_levels: int, plan: Plan, var: str, smooth: bool = True) -> tuple[Fitted, tuple]:
    smoothing = smooth and var in plan.smoothing
    if np.unique(y).shape[0] == 1:
        return ConstantModel("constant", value=y[0]), ()
    if slots and method != "sample":
        keep = usable_predictors(_predictors(orig, slots, sl, rows), y)
        slots = [s for s, k in zip(slots, keep) if k]
    if not slots or method == "sample":
        return fit_model("sample", y, Predictors.none(y.shape[0]), categorical=categorical,
                         n_classes=n_levels, smoothing=smoothing), ()
    m = fit_model(method, y, _predictors(orig, slots, sl, rows), categorical=categorical,
                  n_classes=n_levels, min_leaf=plan.min_leaf, cp=plan.cp, smoothing=smoothing)
    return m, tuple(slots)


def _draw_values(model: Fitted, preds: tuple, syn: _Frame, sl: _Slots, rows: np.ndarray,
                 gen: np.random.Generator) -> np.ndarray:
    x = _predictors(syn, preds, sl, rows) if preds else Predictors.none(rows.shape[0])
    return model.draw(x, gen)


def _draw_chain(plan: Plan, enc: Mapping[str, Column], sl: _Slots, chain: _Chain, given: _Frame, m: int,
                ss: np.random.SeedSequence) -> tuple[_Frame, dict]:
    """Draw ``m`` records of one stratum; ``given`` holds the kept columns' values."""
    syn = _Frame.empty(m, sl)
    for c in plan.kept:
        if c in given.codes:
            syn.codes[c] = given.codes[c]
        elif c in given.values:
            syn.values[c] = given.values[c]
            if c in given.status:
                syn.status[c] = given.status[c]
        else:
            continue
        for s in sl.slots(c):
            syn.binned[:, sl.index[s]] = given.binned[:, sl.index[s]]
    gens = [np.random.default_rng(c) for c in ss.spawn(len(plan.sequence))]
    redraws = {}
    for vm, gen in zip(chain.models, gens):
        var = vm.name
        col = enc[var]
        if vm.method == "passive":
            e = plan.passive[var]
            _store_passive(col, syn, e.evaluate(_decoded(enc, syn, e.columns), m))
            _set_bins(enc, sl, syn, var)
            continue
        assign = [r for r in plan.rules if r.target == var and r.assigns]
        fixed = np.zeros(m, dtype=bool)
        if assign:
            fixed = _rule_rows(assign, _decoded(enc, syn, sorted({c for r in assign for c in r.condition.columns})), m)
        free = np.flatnonzero(~fixed)
        if col.categorical:
            codes = np.zeros(m, dtype=np.int64)
            if free.size and vm.value is not None:
                codes[free] = _draw_values(vm.value, vm.predictors, syn, sl, free, gen)
            syn.codes[var] = codes
        else:
            values = np.zeros(m, dtype=np.float64)
            status = np.zeros(m, dtype=np.int64) if col.status is not None else None
            if free.size and vm.method != "rule":
                if status is not None:
                    status[free] = _draw_values(vm.status, vm.status_predictors, syn, sl, free, gen)
                    obs = free[status[free] == OBSERVED]
                else:
                    obs = free
                if obs.size:
                    values[obs] = _draw_values(vm.value, vm.predictors, syn, sl, obs, gen)
            syn.values[var] = values
            if status is not None:
                syn.status[var] = status
        # assignment rules (synthpop's rvalues), in order: the last one that applies wins
        for r in assign:
            hit = np.asarray(r.condition.evaluate(_decoded(enc, syn, r.condition.columns), m), dtype=bool)
            if hit.any():
                _assign(col, syn, var, hit, r.value)
        _set_bins(enc, sl, syn, var)
        general = [r for r in plan.rules if r.target == var and not r.assigns]
        if general:
            redraws[var] = _enforce(enc, sl, chain, vm, general, syn, gen)
    return syn, {"redraws": redraws}


def _assign(col: Column, syn: _Frame, var: str, hit: np.ndarray, value: Any) -> None:
    kind, v = _encode_value(col, value)
    if kind == "code":
        syn.codes[var][hit] = v
    elif kind == "status":
        syn.status[var][hit] = v
        syn.values[var][hit] = 0.0
    else:
        syn.values[var][hit] = v
        if var in syn.status:
            syn.status[var][hit] = OBSERVED


def _store_passive(col: Column, syn: _Frame, val: np.ndarray) -> None:
    var = col.name
    if col.categorical:
        labels = list(col.categories)
        index = {lab: i for i, lab in enumerate(labels)}
        codes = np.empty(val.shape[0], dtype=np.int64)
        for i, v in enumerate(val):
            key = None if _isnull(v) else v
            if key not in index:
                raise InputError(f"passive.{var}: the formula gives {key!r}, which is not a category of "
                                 f"{var!r} in the original data; a passive categorical variable takes the "
                                 "original's categories.")
            codes[i] = index[key]
        syn.codes[var] = codes
        return
    v = np.asarray(val, dtype=np.float64)
    if col.status is not None:
        status = np.zeros(v.shape[0], dtype=np.int64)
        for s, lab in enumerate(col.status_labels, start=1):
            hit = np.isnan(v) if lab is None else v == lab
            status[hit] = s
        syn.status[var] = status
        v = np.where(status == OBSERVED, v, 0.0)
    syn.values[var] = v


def _enforce(enc: Mapping[str, Column], sl: _Slots, chain: _Chain, vm: VariableModel, rules: list,
             syn: _Frame, gen: np.random.Generator) -> int:
    """Draw again the records where a rule fails (up to MAX_REDRAWS times), then give the
    remaining ones a value of the original records that meet the rule."""
    var = vm.name
    col = enc[var]
    m = syn.n
    cols = sorted({c for r in rules for c in r.condition.columns + r.consequent.columns})

    def failing() -> np.ndarray:
        dec = _decoded(enc, syn, cols)
        bad = np.zeros(m, dtype=bool)
        for r in rules:
            bad |= ~r.holds(dec, m)
        return np.flatnonzero(bad)

    total = 0
    bad = failing()
    for _ in range(MAX_REDRAWS):
        if bad.size == 0 or vm.method == "rule":
            break
        total += int(bad.size)
        if col.categorical:
            syn.codes[var][bad] = _draw_values(vm.value, vm.predictors, syn, sl, bad, gen)
        else:
            if col.status is not None:
                syn.status[var][bad] = _draw_values(vm.status, vm.status_predictors, syn, sl, bad, gen)
                obs = bad[syn.status[var][bad] == OBSERVED]
            else:
                obs = bad
            syn.values[var][bad] = 0.0
            if obs.size:
                syn.values[var][obs] = _draw_values(vm.value, vm.predictors, syn, sl, obs, gen)
        _set_bins(enc, sl, syn, var, bad)
        bad = failing()
    pool = np.unique(np.concatenate([chain.rule_pools.get(r.source, np.zeros(0, np.int64)) for r in rules]))
    for _ in range(MAX_REDRAWS):
        if bad.size == 0 or pool.size == 0:
            break
        # fall back to the values of original records that meet the rules
        pick = pool[gen.integers(0, pool.size, bad.size)]
        total += int(bad.size)
        if col.categorical:
            syn.codes[var][bad] = col.codes[pick]
        else:
            syn.values[var][bad] = col.values[pick]
            if col.status is not None:
                syn.status[var][bad] = col.status[pick]
        _set_bins(enc, sl, syn, var, bad)
        bad = failing()
    if bad.size:
        raise InputError(f"rules: {len(bad)} synthetic records still break "
                         f"{'; '.join(r.source for r in rules)} after {2 * MAX_REDRAWS} draws; check that the "
                         "rule holds in the original data and that its variables come before "
                         f"{var!r} in visit_sequence.")
    return total


# ----------------------------------------------------------------------------- output
@dataclass
class SynthesisDraw:
    """A synthetic file drawn from a :class:`FittedSynthesis`, with its checks."""

    fitted: FittedSynthesis
    k: int
    parts: list
    checks: list
    seed: SeedRecord

    def frame(self, template: pd.DataFrame) -> pd.DataFrame:
        """The synthetic records as a DataFrame with ``template``'s columns and dtypes
        (row-aligned to it when the file has the original size)."""
        fit = self.fitted
        enc = fit.encoded
        cols = list(fit.plan.columns)
        if self.k == fit.n_original:
            index = template.index
        else:
            index = pd.RangeIndex(self.k)
        data = {}
        for c in cols:
            col = enc[c]
            if col.categorical and not isinstance(template[c].dtype, pd.CategoricalDtype):
                data[c] = self._categorical(c, template[c], index)
            else:
                data[c] = _restore_dtype(pd.Series(self.column(c), index=index, name=c), template[c], col)
        return pd.DataFrame(data, index=index)

    def _categorical(self, c: str, original: pd.Series, index: pd.Index) -> pd.Series:
        """A categorical column from its codes (no Python object per record): a categorical
        array cast to the original dtype."""
        col = self.fitted.encoded[c]
        codes = self.codes(c)
        cats = list(col.categories)
        if cats and cats[-1] is None:
            cats = cats[:-1]
            codes = np.where(codes == len(cats), -1, codes)
        try:
            cat = pd.Categorical.from_codes(codes, categories=pd.Index(cats))
            ser = pd.Series(cat, index=index, name=c)
            dt = original.dtype
            plain_int = pd.api.types.is_integer_dtype(dt) and not isinstance(dt, pd.api.extensions.ExtensionDtype)
            if (codes < 0).any() and plain_int:
                return ser.astype(float)
            return ser.astype(dt)
        except (TypeError, ValueError):
            return _restore_dtype(pd.Series(self.column(c), index=index, name=c), original, col)

    def column(self, c: str) -> np.ndarray:
        """Decoded values of column ``c`` over the whole file (labels or floats)."""
        fit = self.fitted
        enc = fit.encoded[c]
        out = np.empty(self.k, dtype=object if enc.categorical else np.float64)
        pos = 0
        for lab, rows, syn in self.parts:
            if c in syn.codes or c in syn.values:
                vals = (enc.decode(codes=syn.codes[c]) if enc.categorical else
                        enc.decode(values=syn.values[c], status=syn.status.get(c)))
            else:   # a stratum column of a resized file
                vals = np.full(syn.n, lab[fit.plan.strata.index(c)], dtype=object)
            if rows is None:
                out[pos:pos + syn.n] = vals
            else:
                out[rows] = vals
            pos += syn.n
        return out

    def codes(self, c: str) -> np.ndarray:
        """Internal codes of a categorical column over the whole file."""
        out = np.empty(self.k, dtype=np.int64)
        pos = 0
        for _lab, rows, syn in self.parts:
            vals = syn.codes[c]
            if rows is None:
                out[pos:pos + syn.n] = vals
            else:
                out[rows] = vals
            pos += syn.n
        return out

    def stratum_of_rows(self) -> list:
        """(stratum labels, rows of the file) of every part."""
        out = []
        pos = 0
        for lab, rows, syn in self.parts:
            out.append((lab, np.arange(pos, pos + syn.n) if rows is None else rows))
            pos += syn.n
        return out


def _restore_dtype(values: pd.Series, original: pd.Series, col: Column) -> pd.Series:
    dt = original.dtype
    if col.categorical:
        if isinstance(dt, pd.CategoricalDtype):
            return values.astype(dt)
        try:
            plain_int = pd.api.types.is_integer_dtype(dt) and not isinstance(dt, pd.api.extensions.ExtensionDtype)
            if values.isna().any() and plain_int:
                return values.astype(float)
            return values.astype(dt)
        except (TypeError, ValueError):
            return values
    if pd.api.types.is_integer_dtype(dt):
        v = values.to_numpy(dtype=float)
        if not np.isnan(v).any() and np.all(v == np.round(v)):
            try:
                return values.astype(dt)
            except (TypeError, ValueError):
                return values
        if isinstance(dt, pd.api.extensions.ExtensionDtype) and np.all(np.isnan(v) | (v == np.round(v))):
            return values.astype(dt)
        return values
    try:
        return values.astype(dt)
    except (TypeError, ValueError):
        return values


__all__ = ["Synthesiser", "Plan", "FittedSynthesis", "SynthesisDraw", "Column", "encode_column", "frame_and_keys",
           "MAX_REDRAWS"]
