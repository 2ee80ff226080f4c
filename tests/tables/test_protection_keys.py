"""The ``[protection]`` keys of a table spec come from the table-method registry's declarations,
and the registered methods' defaults from their kernels' declarations (each declared once)."""

import dataclasses
import inspect
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import SpecError
from sdckit.params import param, step_params
from sdckit.tables import registry
from sdckit.tables.registry import (
    TableMethod,
    kernel_constant,
    kernel_defaults,
    kernel_settings,
    known_table_methods,
    register_table_method,
    table_method_class,
)
from sdckit.tables.spec import (
    PROTECTION_COMMON,
    check_protection_keys,
    load_table_spec,
    method_from_spec,
    protection_keys,
    run_table_spec,
    spec_methods,
)

TAB = """
[input]
table = "cells.csv"
value = "n"
[table]
dimensions = ["r", "c"]
[[rules]]
type = "threshold"
n = 3
"""


@pytest.fixture
def cells(tmp_path):
    rows = [(r, c, n) for r, ns in zip("ab", ([5, 1, 7], [6, 4, 2])) for c, n in zip("xyz", ns)]
    pd.DataFrame(rows, columns=["r", "c", "n"]).to_csv(tmp_path / "cells.csv", index=False)
    return tmp_path


def _spec(tmp_path, protection: str):
    p = tmp_path / "s.toml"
    p.write_text(TAB + "[protection]\n" + protection)
    return p


# ------------------------------------------------------------------ refusals, in one line

def test_a_key_of_another_method_is_refused_naming_the_method_and_its_keys(cells):
    # before: accepted by one hand-written list of every method's keys, then silently ignored
    with pytest.raises(SpecError) as e:
        load_table_spec(_spec(cells, "method = 'optimal'\nbase = 3\n"))
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("protection.base: the method 'optimal' does not take this key")
    assert "a key of 'rounding'" in msg
    assert "takes method, audit, zero_unsafe, seed, cost, time_limit, mip_gap, lower_bound, upper_bound" in msg


def test_a_misspelt_key_gets_the_close_name_of_the_chosen_method(cells):
    with pytest.raises(SpecError, match=r"protection.max_sibling: unknown key; did you mean 'max_siblings'\? "
                                        r"\(the method 'hypercube' takes method, audit, .*cleanup_seconds"):
        load_table_spec(_spec(cells, "method = 'hypercube'\nmax_sibling = 3\n"))


def test_a_rounding_spec_refuses_a_suppression_cost(cells):
    with pytest.raises(SpecError, match="protection.cost: the method 'rounding' does not take this key .*"
                                        "'optimal'.*takes method, audit, zero_unsafe, seed, base, rounding"):
        run_table_spec(_spec(cells, "method = 'rounding'\nbase = 3\ncost = 'value'\n"), write=False)


# ------------------------------------------------------------------ the allowed set, derived

def _expected(method: str) -> set[str]:
    """The keys of ``method`` from the registry walked here: the section's common keys, the
    registered class's declaration, and, for the two spec methods read by their own modules,
    the keys those modules declare."""
    from sdckit.dp import run as dp_run
    from sdckit.tables.ckm import run as ckm_run

    keys = {p.name for p in PROTECTION_COMMON}
    if method == "dp":
        return keys | set(dp_run.PROTECTION_KEYS)
    keys |= {p.name for p in step_params(table_method_class(method))}
    return keys | (set(ckm_run.PROTECTION_KEYS) if method == "ckm" else set())


def test_the_allowed_set_is_the_union_of_the_declarations():
    names = known_table_methods()
    assert set(spec_methods()) == {n for n in names if not n.startswith("dp_")} | {"dp"}
    union = set().union(*(_expected(m) for m in spec_methods()))
    keys = protection_keys()
    assert set(keys) == union and len(keys) == len(union)  # each key once
    for m in spec_methods():
        assert set(protection_keys(m)) == _expected(m), m


def test_every_declared_parameter_of_every_registered_method_is_accepted():
    # the four DP settings are read by sdckit.dp.run under the spec's names: the clipping bounds
    # are clip_lower and clip_upper there (the rest keep their declared names)
    dp_names = {"lower": "clip_lower", "upper": "clip_upper"}
    for name in known_table_methods():
        cls = table_method_class(name)
        spec_method = "dp" if name.startswith("dp_") else name
        for p in step_params(cls):
            key = dp_names.get(p.name, p.name) if spec_method == "dp" else p.name
            assert key in protection_keys(spec_method), (name, key)
            # the reader's check accepts it (a dp key without its budget is refused later, not here)
            check_protection_keys({"method": spec_method, key: p.default})
            if spec_method not in ("dp", "ckm") and not p.required:
                m = method_from_spec(name, {p.name: p.default})
                assert getattr(m, p.name) == p.default


@settings(max_examples=200, deadline=None)
@given(method=st.sampled_from(spec_methods()),
       key=st.one_of(st.sampled_from(sorted(protection_keys())), st.from_regex(r"[a-z_]{1,14}", fullmatch=True)))
def test_a_key_is_accepted_exactly_when_the_method_declares_it(method, key):
    try:
        check_protection_keys({"method": method, key: 1})
        accepted = True
    except SpecError as e:
        accepted = False
        assert str(e).startswith(f"protection.{key}: ") and "\n" not in str(e)
    assert accepted == (key in _expected(method))


def test_a_newly_registered_method_is_accepted_without_editing_the_reader(monkeypatch, cells):
    monkeypatch.setattr(registry, "_METHODS", dict(registry._METHODS))

    @register_table_method("keys_probe", label="probe", help="a method registered by this test only")
    @dataclass(frozen=True)
    class Probe(TableMethod):
        strength: int = param(2, kind="int", low=1, help="how strong")

    assert "keys_probe" in spec_methods() and "strength" in protection_keys("keys_probe")
    spec = load_table_spec(_spec(cells, "method = 'keys_probe'\nstrength = 4\n"))
    assert method_from_spec("keys_probe", spec["protection"]).strength == 4
    with pytest.raises(SpecError, match="protection.strength: the method 'optimal' does not take this key "
                                        r"\(it is a key of 'keys_probe'\)"):
        load_table_spec(_spec(cells, "strength = 4\n"))


# ------------------------------------------------------------------ keys that used to be dropped

def test_modular_takes_its_kernels_cleanup_budget(cells):
    # before: accepted by the spec and never passed to ModularSuppression
    m = method_from_spec("modular", {"cleanup_seconds": 5.0, "cost": "unity"})
    from sdckit.tables.modular import ModularSuppression

    k = ModularSuppression(**kernel_settings(m))
    assert k.cleanup_seconds == 5.0 and k.cost == "unity"
    run = run_table_spec(_spec(cells, "method = 'modular'\ncleanup_seconds = 5\n"), write=False)
    assert run.to_dict()["audit_ok"]


def test_ckm_takes_its_registered_declaration_as_the_ptable(tmp_path):
    # the registered "ckm" method declares D, V and js (what the workbench's form and its exported spec
    # hold): the spec reader gives them to the cell key method as ptable = {D, V, js}, which a
    # second spec writes out by hand (the independent run: the same keys, the same noise)
    g = np.random.default_rng(5)
    pd.DataFrame({"r": g.choice(list("abc"), 200), "s": g.choice(list("xy"), 200),
                  "Key": g.random(200)}).to_csv(tmp_path / "m.csv", index=False)
    base = '[input]\nmicrodata = "m.csv"\n[table]\ndimensions = ["r", "s"]\n[protection]\nmethod = "ckm"\n'
    (tmp_path / "a.toml").write_text(base + "D = 3\nV = 1.5\njs = 1\n")
    (tmp_path / "b.toml").write_text(base + "ptable = {D = 3, V = 1.5, js = 1}\n")
    a, b = run_table_spec(tmp_path / "a.toml", write=False), run_table_spec(tmp_path / "b.toml", write=False)
    assert np.array_equal(a.result.perturbed, b.result.perturbed) and a.result.n_perturbed > 0
    (tmp_path / "c.toml").write_text(base + "D = 3\nptable = {D = 3, V = 1.5}\n")
    with pytest.raises(SpecError, match="protection.D: give the p-table either as ptable or as D, V, js"):
        run_table_spec(tmp_path / "c.toml", write=False)
    (tmp_path / "d.toml").write_text(base + "D = 0\n")
    with pytest.raises(SpecError, match=r"protection.D: must be an int >= 1, got 0"):
        run_table_spec(tmp_path / "d.toml", write=False)


# ------------------------------------------------------------------ defaults declared once, in the kernels

KERNELS = {  # registered method -> (kernel module, kernel, the method's names that differ from the kernel's)
    "optimal": ("suppression", "OptimalSuppression", {}),
    "heuristic": ("suppression", "HeuristicSuppression", {}),
    "modular": ("modular", "ModularSuppression", {}),
    "hypercube": ("hypercube", "HypercubeSuppression", {}),
    "gauss": ("gauss", "GaussSuppression", {}),
    "chain_hypercube": ("chain_cube", "ChainCubeSuppression", {}),
    "margins": ("margins", "release_margins", {}),
    "cta": ("cta", "ControlledAdjustment", {"solver": "method"}),
    "rounding": ("rounding", "ControlledRounding", {"rounding": "method"}),
}


def _imported_defaults(module: str, name: str) -> dict:
    """The kernel's defaults read from the imported object (the independent reading)."""
    import importlib

    obj = getattr(importlib.import_module(f"sdckit.tables.{module}"), name)
    if dataclasses.is_dataclass(obj):
        return {f.name: f.default for f in dataclasses.fields(obj) if f.default is not dataclasses.MISSING}
    return {k: p.default for k, p in inspect.signature(obj).parameters.items() if p.default is not p.empty}


@pytest.mark.parametrize("method", sorted(KERNELS))
def test_a_methods_defaults_are_its_kernels(method):
    module, name, renames = KERNELS[method]
    read = dict(kernel_defaults(f"sdckit.tables.{module}", name))
    imported = _imported_defaults(module, name)
    assert read == imported
    for p in step_params(table_method_class(method)):
        k = renames.get(p.name, p.name)
        assert k in imported, (method, p.name)
        assert p.default == imported[k] and type(p.default) is type(imported[k]), (method, p.name)


def test_choices_are_the_kernels():
    from sdckit.tables import cta, gauss, suppression

    assert kernel_constant("sdckit.tables.suppression", "COSTS") == suppression.COSTS
    assert {p.name: p.options() for p in step_params(table_method_class("gauss"))}["singletons"] == \
        gauss.SINGLETON_METHODS
    assert {p.name: p.options() for p in step_params(table_method_class("cta"))}["solver"] == cta.METHODS


def test_kernel_defaults_refuses_a_computed_default(tmp_path, monkeypatch):
    (tmp_path / "probe_kernel_mod.py").write_text("X = 3\n\nclass K:\n    a: int = X + 1\n    b: str = 'ok'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match="probe_kernel_mod.K.a: the default is not a literal"):
        kernel_defaults("probe_kernel_mod", "K")
    assert kernel_constant("probe_kernel_mod", "X") == 3
