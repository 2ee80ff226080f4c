"""The chain of fitted models of one stratum: fit each variable of the visit sequence on the
original records, draw the synthetic records variable by variable, enforce the rules.

Pseudocode (one stratum)::

    fit:   for j in visit sequence:
               rows_j = records not fixed by an assignment rule of j (rules/rvalues)
               model_j = fit(method_j, y = Y_j[rows_j], x = predictors_j[rows_j])
    draw:  for j in visit sequence (own random stream per variable):
               y*_j = model_j.draw(x* = synthetic predictors_j)
               y*_j[condition of an assignment rule] = its value
               while a rule of j fails on a record: draw that record again

References
----------
Nowok, B., Raab, G. M. and Dibben, C. (2016). synthpop: Bespoke creation of synthetic data in
R. Journal of Statistical Software 74(11), section 2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .encoding import (
    OBSERVED,
    Column,
    Records,
    Slots,
    decoded,
    encode_value,
    isnull,
    predictors_of,
    set_bins,
)
from .expr import Rule
from .models import ConstantModel, Fitted, Predictors, fit_model, usable_predictors
from .plan import Plan

#: re-draws of a record whose synthetic value breaks a rule before falling back to the
#: values that meet the rule in the original data
MAX_REDRAWS = 50


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


@dataclass
class Chain:
    """The fitted models of one stratum, in visit order, and for each rule the original
    records that meet it (the values a record falls back to)."""

    models: list
    rule_pools: dict


def rule_rows(rules: Sequence[Rule], decoded: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    """Records where any of the rules' conditions holds."""
    hit = np.zeros(n, dtype=bool)
    for r in rules:
        hit |= np.asarray(r.condition.evaluate(decoded, n), dtype=bool)
    return hit


def fit_chain(plan: Plan, enc: Mapping[str, Column], sl: Slots, orig: Records, rows: np.ndarray,
               decoded: Mapping | None, n_jobs: int = 1) -> Chain:
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
    return Chain(models, pools)


def _fit_variable(plan: Plan, enc: Mapping[str, Column], sl: Slots, orig: Records, rows: np.ndarray,
                  dec: Mapping | None, var: str) -> VariableModel:
    col = enc[var]
    method = plan.methods[var]
    if method == "passive":
        return VariableModel(var, "passive")
    assign = [r for r in plan.rules if r.target == var and r.assigns]
    fit_rows = rows
    if assign:
        fit_rows = rows[~rule_rows(assign, dec, rows.shape[0])]
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


def _fit_one(method: str, y: np.ndarray, orig: Records, slots: list, sl: Slots, rows: np.ndarray,
             categorical: bool, n_levels: int, plan: Plan, var: str, smooth: bool = True) -> tuple[Fitted, tuple]:
    smoothing = smooth and var in plan.smoothing
    if np.unique(y).shape[0] == 1:
        return ConstantModel("constant", value=y[0]), ()
    if slots and method != "sample":
        keep = usable_predictors(predictors_of(orig, slots, sl, rows), y)
        slots = [s for s, k in zip(slots, keep) if k]
    if not slots or method == "sample":
        return fit_model("sample", y, Predictors.none(y.shape[0]), categorical=categorical,
                         n_classes=n_levels, smoothing=smoothing), ()
    m = fit_model(method, y, predictors_of(orig, slots, sl, rows), categorical=categorical,
                  n_classes=n_levels, min_leaf=plan.min_leaf, cp=plan.cp, smoothing=smoothing)
    return m, tuple(slots)


def _draw_values(model: Fitted, preds: tuple, syn: Records, sl: Slots, rows: np.ndarray,
                 gen: np.random.Generator) -> np.ndarray:
    x = predictors_of(syn, preds, sl, rows) if preds else Predictors.none(rows.shape[0])
    return model.draw(x, gen)


def draw_chain(plan: Plan, enc: Mapping[str, Column], sl: Slots, chain: Chain, given: Records, m: int,
                ss: np.random.SeedSequence) -> tuple[Records, dict]:
    """Draw ``m`` records of one stratum; ``given`` holds the kept columns' values."""
    syn = Records.empty(m, sl)
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
            _store_passive(col, syn, e.evaluate(decoded(enc, syn, e.columns), m))
            set_bins(enc, sl, syn, var)
            continue
        assign = [r for r in plan.rules if r.target == var and r.assigns]
        fixed = np.zeros(m, dtype=bool)
        if assign:
            fixed = rule_rows(assign, decoded(enc, syn, sorted({c for r in assign for c in r.condition.columns})), m)
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
            hit = np.asarray(r.condition.evaluate(decoded(enc, syn, r.condition.columns), m), dtype=bool)
            if hit.any():
                _assign(col, syn, var, hit, r.value)
        set_bins(enc, sl, syn, var)
        general = [r for r in plan.rules if r.target == var and not r.assigns]
        if general:
            redraws[var] = _enforce(enc, sl, chain, vm, general, syn, gen)
    return syn, {"redraws": redraws}


def _assign(col: Column, syn: Records, var: str, hit: np.ndarray, value: Any) -> None:
    kind, v = encode_value(col, value)
    if kind == "code":
        syn.codes[var][hit] = v
    elif kind == "status":
        syn.status[var][hit] = v
        syn.values[var][hit] = 0.0
    else:
        syn.values[var][hit] = v
        if var in syn.status:
            syn.status[var][hit] = OBSERVED


def _store_passive(col: Column, syn: Records, val: np.ndarray) -> None:
    var = col.name
    if col.categorical:
        labels = list(col.categories)
        index = {lab: i for i, lab in enumerate(labels)}
        codes = np.empty(val.shape[0], dtype=np.int64)
        for i, v in enumerate(val):
            key = None if isnull(v) else v
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


def _enforce(enc: Mapping[str, Column], sl: Slots, chain: Chain, vm: VariableModel, rules: list,
             syn: Records, gen: np.random.Generator) -> int:
    """Draw again the records where a rule fails (up to MAX_REDRAWS times), then give the
    remaining ones a value of the original records that meet the rule."""
    var = vm.name
    col = enc[var]
    m = syn.n
    cols = sorted({c for r in rules for c in r.condition.columns + r.consequent.columns})

    def failing() -> np.ndarray:
        dec = decoded(enc, syn, cols)
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
        set_bins(enc, sl, syn, var, bad)
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
        set_bins(enc, sl, syn, var, bad)
        bad = failing()
    if bad.size:
        raise InputError(f"rules: {len(bad)} synthetic records still break "
                         f"{'; '.join(r.source for r in rules)} after {2 * MAX_REDRAWS} draws; check that the "
                         "rule holds in the original data and that its variables come before "
                         f"{var!r} in visit_sequence.")
    return total



__all__ = ["MAX_REDRAWS", "VariableModel", "Chain", "rule_rows", "fit_chain", "draw_chain"]
