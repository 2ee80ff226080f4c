"""``sdckit protect`` (text) says in words what the lattice search of a ``generalise`` step found:
how many combinations of levels it searched, and whether the chosen one is the proven optimum
or the best found, with the search's lower bound on the optimum and the gap (before: only the
raw figures ``nodes checked``, ``optimal: true``, ``bound``)."""

from __future__ import annotations

import math

import pytest

from sdckit.cli import main
from sdckit.lattice import Evaluator, KAnonymity, Problem, exhaustive
from sdckit.lattice.anytime import anytime
from sdckit.lattice.solution_space import describe_space
from sdckit.lattice.space_report import search_sentence

from ..conftest import shared_file
from .test_search import random_problem


def _evaluator(seed: int) -> tuple[Evaluator, int]:
    df, qis, hier, _, _ = random_problem(seed)
    n_nodes = math.prod(hier[q].n_levels + 1 for q in qis)  # the lattice, counted from the hierarchies
    return Evaluator(Problem(df, qis, hier), [KAnonymity(3)], 0.0, "discernibility"), n_nodes


@pytest.mark.parametrize("seed", [0, 5, 13])
def test_an_exhaustive_search_is_the_proven_optimum(seed):
    ev, n_nodes = _evaluator(seed)
    res = exhaustive(ev)
    assert search_sentence(describe_space(ev, res), res.bound) == (
        f"searched {n_nodes:,} of {n_nodes:,} combinations of levels; the chosen one is the proven optimum")


@pytest.mark.parametrize("seed", [0, 5, 13])
def test_a_search_stopped_by_its_budget_gives_the_bound_and_the_gap(seed):
    ev, n_nodes = _evaluator(seed)
    res = anytime(ev, time_limit=None, max_nodes=2)  # two checks: far from done on these lattices
    assert not res.optimal
    text = search_sentence(describe_space(ev, res), res.bound)
    assert text.startswith(f"searched {res.nodes_checked:,} of {n_nodes:,} combinations of levels; the chosen "
                           "one is the best found within the search's budget, not proven optimal; the optimum's "
                           "discernibility is at least ")
    gap = 100.0 * (res.value - res.bound) / res.value
    assert text.endswith(f" (gap {gap:.3g}%)") and 0 < gap < 100
    # what it says is true: the optimum (the exhaustive search on the same problem) is at least the bound
    best = exhaustive(_evaluator(seed)[0]).value
    assert res.bound <= best <= res.value


def test_protect_prints_the_sentence_under_the_generalise_step(tmp_path, capsys):
    spec = tmp_path / "release.toml"
    spec.write_text(f"""
[input]
path = "{shared_file('arx_adult.csv')}"

[roles]
key_vars = ["sex", "age", "race"]

[[steps]]
method = "generalise"
hierarchy_dir = "{shared_file('arx_adult_hierarchies')}"
k = 5
suppression = 0.01

[gate]
k_anonymity = 5

[output]
directory = "{tmp_path / 'out'}"
""", encoding="utf-8")
    assert main(["protect", str(spec)]) == 0
    lines = capsys.readouterr().out.splitlines()
    step = next(i for i, line in enumerate(lines) if line.startswith("generalise: "))
    said = lines[step + 1]
    assert said.startswith("  lattice search: searched ") and " combinations of levels; the chosen one is " in said
    checked = next(line for line in lines[step:] if line.startswith("  nodes checked: "))
    nodes = next(line for line in lines[step:] if line.startswith("  n nodes: "))
    n_checked, n_nodes = (int(x.rsplit(":", 1)[1].replace(",", "")) for x in (checked, nodes))
    assert said.startswith(f"  lattice search: searched {n_checked:,} of {n_nodes:,} ")
