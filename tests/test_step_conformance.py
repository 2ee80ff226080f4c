"""Conformance of every registered release step and gate check (in the spirit of scikit-learn's
``check_estimator``), through the public suite :mod:`sdckit.testing`.

Each step is built from its declared defaults (plus the example values of
:data:`sdckit.testing.EXAMPLE_PARAMS`), run twice with the same seed on a small Microdata, and
checked for determinism, the record count, its own guarantees, a JSON-ready ``to_dict()``,
``rng=None`` recording OS entropy, a repr that rebuilds it, the engines it claims, and the one
parameter-error template for every out-of-range or mistyped value of a declared parameter.
Every gate check is declared, typed and frozen, round-trips its spec form, uses the template
for every broken rule and runs on data holding its roles.

A step registered later is picked up automatically; if it has required parameters it gives
example values (``example_params``), or the declaration check fails until it does.
"""

from __future__ import annotations

import pytest

from sdckit._spec_docs import package_steps
from sdckit.registry import gate_check_class, known_gate_checks, step_class
from sdckit.testing import (
    EXAMPLE_PARAMS,
    bad_values,
    check_declaration,
    check_gate_check,
    check_step,
    example_microdata,
    parametrize_with_checks,
)

#: the invalid values of a declared parameter (the table methods' conformance test uses them too)
_bad_values = bad_values

STEPS = [step_class(n) for n in package_steps()]  # every step sdckit registers (not test ones)
GATES = [gate_check_class(n) for n in known_gate_checks() if gate_check_class(n).__module__.startswith("sdckit.")]


@parametrize_with_checks(STEPS + GATES)
def test_conformance(obj, check):
    check(obj, example_microdata())


def test_every_package_step_and_gate_check_is_covered():
    # the suite covers every registered class of sdckit's own (none silently left out)
    assert {c.step_name for c in STEPS} == set(package_steps())
    assert len(GATES) >= 20 and {"k_anonymity", "min_diagonal"} <= {c.gate_name for c in GATES}
    assert set(EXAMPLE_PARAMS) <= set(package_steps())


def test_the_suite_fails_a_step_that_breaks_a_promise():
    # the public runners raise on a broken promise (they are not checks that cannot fail):
    # a step whose declared default breaks its own rule, and a gate check claiming Dask
    # without its partitioned form
    from dataclasses import dataclass

    from sdckit.params import check_params, param
    from sdckit.registry import GateCheck

    @dataclass(frozen=True)
    class Broken:
        k: int = param(1, kind="int", low=2, help="a default below its own lower bound")

        def __post_init__(self):
            check_params(self)

    Broken.step_name = "broken"
    with pytest.raises(Exception, match="The 'k' parameter of Broken must be an int >= 2"):
        check_declaration(Broken)

    @dataclass(frozen=True)
    class ClaimsDask(GateCheck):
        k: int = param(kind="int", low=1, label="k", help="a threshold")

    ClaimsDask.gate_name, ClaimsDask.engines = "claims_dask", ("memory", "dask")
    from sdckit.testing import check_gate_engines_honoured

    with pytest.raises(AssertionError, match="dask_summary"):
        check_gate_engines_honoured(ClaimsDask)


def test_check_step_and_check_gate_check_run_every_check():
    check_step(step_class("remove"))
    check_gate_check(gate_check_class("k_anonymity"))
