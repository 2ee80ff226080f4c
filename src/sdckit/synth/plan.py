"""Settings and plan of a sequential synthesis: which variables, in which visit sequence, by
which method, under which rules and strata (Nowok, Raab & Dibben 2016, sections 2-3).

:class:`sdckit.synth.synthesis.Synthesiser` holds the settings (validated on creation); its
``plan`` method resolves them against the data's columns into a :class:`Plan` (the visit sequence, each
variable's method and predictors, the target variable of each rule).

References
----------
Nowok, B., Raab, G. M. and Dibben, C. (2016). synthpop: Bespoke creation of synthetic data in
R. Journal of Statistical Software 74(11), sections 2-3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .._validation import close_names
from ..errors import InputError
from .expr import Expression, Rule, parse_expression, parse_rule
from .models import CATEGORICAL_ONLY, NUMERIC_ONLY


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
    def build(cls, s: Any, frame: pd.DataFrame, *, key_vars: tuple[str, ...]) -> Plan:
        """Resolve the settings ``s`` (a :class:`sdckit.synth.synthesis.Synthesiser`) against the
        data's columns."""
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



__all__ = ["Plan", "frame_and_keys"]
