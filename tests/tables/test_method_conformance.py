"""Conformance of every registered table method and sensitivity rule (as
``tests/test_step_conformance.py`` does for the release steps): declared parameters with words,
the one parameter-error template for every broken rule (and the spec's key path), the same rng
giving the same output, and the audit's guarantee holding on a small table.

A method registered later is picked up automatically; its required parameters go in
``REQUIRED``. The small table is the delinquent-children table of OMB Statistical Policy
Working Paper 22 (``tests/tables/helpers.py``); its guarantee is checked independently: a
suppression pattern by brute-force enumeration of every integer completion
(``enumerate_intervals``), a rounded table by the base and the margins, a noisy table by its
own additivity.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import ParameterError, SpecError
from sdckit.params import step_params
from sdckit.tables.registry import (
    TableResult,
    build_table_method,
    build_table_rule,
    declarations,
    known_table_methods,
    known_table_rules,
    table_method_class,
    table_rule_class,
)
from sdckit.tables.rules import primary_cells
from sdckit.tables.table import Hierarchy, Table

from ..test_step_conformance import _bad_values
from .helpers import SEED_COLS, SEED_INNER, SEED_ROWS, enumerate_intervals

REQUIRED = {"dp_gaussian_counts": {"rho": 0.5}, "dp_laplace_counts": {"epsilon": 1.0},
            "dp_gaussian_sums": {"rho": 0.5, "lower": 0, "upper": 10},
            "dp_laplace_sums": {"epsilon": 1.0, "lower": 0, "upper": 10}}
METHODS = known_table_methods()
RULES = known_table_rules()


def _microdata() -> pd.DataFrame:
    """One record per unit of the seed table (county, education, a contribution 1..5 and a
    record key), so counts equal SEED_INNER and the cell key method has its keys."""
    rows = []
    rng = np.random.default_rng(20261126)
    for i, r in enumerate(SEED_ROWS):
        for j, c in enumerate(SEED_COLS):
            for _ in range(SEED_INNER[i, j]):
                rows.append((r, c, int(rng.integers(1, 6)), float(rng.random())))
    return pd.DataFrame(rows, columns=["county", "education", "x", "Key"])


def _table(kind: str, frame: pd.DataFrame) -> Table:
    hier = {"county": Hierarchy.flat(SEED_ROWS), "education": Hierarchy.flat(SEED_COLS)}
    return Table.from_microdata(frame, ["county", "education"], response="x" if kind == "magnitude" else None,
                                hierarchies=hier)


def _run(name: str, rng: int) -> tuple[TableResult, Table, object]:
    cls = table_method_class(name)
    frame = _microdata()
    table = _table("magnitude" if cls.kinds == ("magnitude",) else "frequency", frame)
    rule = build_table_rule({"type": "threshold", "n": 3}).build()
    primary = primary_cells(table, [rule]) if cls.needs_rules else None
    m = build_table_method(name, REQUIRED.get(name, {}))
    return m.apply(table, primary, rng=rng, microdata=frame), table, primary


@pytest.mark.parametrize("name", METHODS + RULES)
def test_declaration_has_words(name):
    cls = table_method_class(name) if name in METHODS else table_rule_class(name)
    assert cls.label and cls.help
    for p in step_params(cls):
        assert p.help, f"{name}.{p.name} has no help"
        assert p.display_label
    decl = declarations()
    entry = next(e for e in decl["methods"] + decl["rules"] if e["name"] == name)
    assert {"name", "label", "help", "params"} <= set(entry)
    for p in entry["params"]:
        assert {"name", "label", "help", "unit", "symbol", "kind", "default", "choices", "low", "high"} <= set(p)
    json.dumps(decl)


def test_every_shipped_method_is_registered():
    assert {"optimal", "modular", "heuristic", "hypercube", "rounding", "ckm", "margins", "dp_gaussian_counts",
            "dp_laplace_counts", "dp_gaussian_sums", "dp_laplace_sums"} <= set(METHODS)
    assert {"threshold", "p%", "pq", "nk"} <= set(RULES)


@pytest.mark.parametrize("name", METHODS + RULES)
def test_every_broken_rule_uses_the_one_message_template(name):
    is_method = name in METHODS
    cls = table_method_class(name) if is_method else table_rule_class(name)
    base = REQUIRED.get(name, {})
    tried = 0
    for p in step_params(cls):
        for value in _bad_values(p):
            settings = {**base, p.name: value}
            template = re.compile(rf"^The {re.escape(repr(p.name))} parameter of {cls.__name__} "
                                  rf"must be .+\. Got .+\.$", re.S)
            with pytest.raises(ParameterError) as exc:
                cls(**settings)
            assert template.match(str(exc.value)), str(exc.value)
            assert exc.value.param == p.name
            with pytest.raises(SpecError, match=rf"^protection\.{re.escape(p.name)}: must be "):
                if is_method:
                    build_table_method(name, settings, where="protection")
                else:
                    build_table_rule({"type": name, **settings}, where="protection")
            tried += 1
    assert tried >= len([p for p in step_params(cls) if p.kind in ("int", "float")])


def test_unknown_names_are_one_line_with_the_closest():
    with pytest.raises(SpecError, match=r"^protection\.method: unknown table method 'optimum' .*optimal"):
        build_table_method("optimum")
    with pytest.raises(SpecError, match=r"^protection\.tme_limit: unknown parameter .*time_limit"):
        build_table_method("optimal", {"tme_limit": 3})
    with pytest.raises(SpecError, match=r"^rules\[0\]\.type: unknown sensitivity rule"):
        build_table_rule({"type": "thresh"})


@pytest.mark.parametrize("name", METHODS)
def test_same_rng_same_output_and_the_audit_guarantee_holds(name):
    a, table, primary = _run(name, 7)
    b, _, _ = _run(name, 7)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.status, b.status)
    assert a.audit.status == "exact", a.audit.sentence  # a 25-cell table is audited in full
    assert all(g.holds for g in a.guarantees), [g.to_dict() for g in a.guarantees]
    assert set(a.status) <= {"safe", "suppressed", "rounded", "perturbed"}
    json.dumps(a.to_dict())
    inner = np.asarray(SEED_INNER)
    t = a.table
    if name == "cta":  # an adjusted table: additive, every sensitive cell moved out of its interval
        v = a.values.reshape(len(SEED_ROWS) + 1, len(SEED_COLS) + 1)
        assert np.allclose(v[1:, 0], v[1:, 1:].sum(1)) and np.allclose(v[0, 1:], v[1:, 1:].sum(0))
        a0 = np.asarray(table.value, float)
        s = primary.sensitive
        assert ((a.values[s] >= a0[s] + primary.upper[s] - 1e-6) | (a.values[s] <= a0[s] - primary.lower[s] + 1e-6)).all()
    elif table_method_class(name).needs_rules:
        # independent check: brute force over every integer completion of the suppressed inner cells
        grid = a.status.reshape(len(SEED_ROWS) + 1, len(SEED_COLS) + 1)
        mask = grid[1:, 1:] == "suppressed"
        if not (grid[0, :] == "suppressed").any() and not (grid[:, 0] == "suppressed").any():
            iv = enumerate_intervals(inner, mask)
            sens = primary.sensitive.reshape(grid.shape)[1:, 1:]
            up = primary.upper.reshape(grid.shape)[1:, 1:]
            lo = primary.lower.reshape(grid.shape)[1:, 1:]
            for (i, j), (low, high) in iv.items():
                if sens[i, j]:
                    assert high >= inner[i, j] + up[i, j] - 1e-9 and low <= inner[i, j] - lo[i, j] + 1e-9
        assert (a.status[primary.sensitive] == "suppressed").all()
    elif name == "rounding":
        v = a.values.reshape(len(SEED_ROWS) + 1, len(SEED_COLS) + 1)
        assert (v % 3 == 0).all()
        assert np.allclose(v[1:, 0], v[1:, 1:].sum(1)) and np.allclose(v[0, 1:], v[1:, 1:].sum(0))
    elif name.startswith("dp_"):
        v = a.values.reshape(len(t.hierarchies[0]), len(t.hierarchies[1]))
        assert np.allclose(v[1:, 0], v[1:, 1:].sum(1)) and (v >= 0).all()
        assert a.seed is not None and "lower" in a.extra


@pytest.mark.parametrize("name", ["rounding", "dp_laplace_counts", "ckm"])
def test_a_random_method_records_its_seed_internally(name):
    # rounding is random only with the unbiased procedure
    cls = table_method_class(name)
    frame = _microdata().drop(columns=["Key"]) if name == "ckm" else _microdata()
    table = _table("frequency", frame)
    params = {"rounding": "unbiased"} if name == "rounding" else REQUIRED.get(name, {})
    res = build_table_method(name, params).apply(table, None, rng=None, microdata=frame)
    assert res.seed is not None  # OS entropy drawn and recorded (internal only)
    assert "seed" not in json.dumps(res.to_dict())
    assert cls.method_name == name


def test_pq_refuses_q_below_p_with_the_template():
    with pytest.raises(ParameterError, match=r"^The 'q' parameter of PQ must be a number in \[p, 100\]"):
        table_rule_class("pq")(p=20, q=10)
