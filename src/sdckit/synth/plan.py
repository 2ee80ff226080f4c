"""Settings and plan of a sequential synthesis: which variables, in which visit sequence, by
which method, under which rules and strata (Nowok, Raab & Dibben 2016, sections 2-3).

:class:`Synthesiser` holds the settings (validated on creation); :meth:`Synthesiser.plan`
resolves them against the data's columns into a :class:`Plan` (the visit sequence, each
variable's method and predictors, the target variable of each rule).

References
----------
Nowok, B., Raab, G. M. and Dibben, C. (2016). synthpop: Bespoke creation of synthetic data in
R. Journal of Statistical Software 74(11), sections 2-3.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._validation import check_choice, check_float, check_int, close_names, param_error
from ..errors import InputError
from .expr import Expression, Rule, parse_expression, parse_rule
from .models import CATEGORICAL_ONLY, METHODS, NUMERIC_ONLY

if TYPE_CHECKING:
    from .synthesis import FittedSynthesis


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
        from .synthesis import FittedSynthesis  # the driver imports this module

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
            categorical[c] = (not num) or c in key_vars or c in s.categorical or c in s.strata
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



__all__ = ["Synthesiser", "Plan", "frame_and_keys"]
