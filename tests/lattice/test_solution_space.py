"""The solution space of a lattice search (what the workbench's lattice view and the report draw).

Reference values come from brute force: every node of a small random lattice generalised with
pandas from the hierarchy tables (``Hierarchy.mapping``), its classes counted with a group-by,
independent of the search's encoded tables and kernels.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.cli import main
from sdckit.errors import ParameterError
from sdckit.lattice import Evaluator, KAnonymity, Problem, exact, exhaustive
from sdckit.lattice.solution_space import STATUSES, describe_space, known_status

from ..conftest import shared_file
from .test_search import random_problem


def brute_force(df, qis, hier, k, suppression):
    """levels -> (satisfied, records suppressed, DM) for every node, by pandas group-bys."""
    n = len(df)
    limit = int(math.floor(suppression * n + 1e-9))
    out = {}
    for levels in itertools.product(*[range(hier[q].n_levels + 1) for q in qis]):
        cols = [df[q].map(hier[q].mapping(lv)) for q, lv in zip(qis, levels)]
        sizes = pd.concat(cols, axis=1).groupby(qis).size().to_numpy()
        sup = int(sizes[sizes < k].sum())
        dm = float((sizes[sizes >= k] ** 2).sum() + n * sup)
        out[levels] = (sup <= limit, sup, dm)
    return out


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), suppression=st.sampled_from([0.0, 0.05, 0.2]))
def test_every_node_checked_by_the_exhaustive_search_matches_brute_force(seed, k, suppression):
    df, qis, hier, _, _ = random_problem(seed)
    truth = brute_force(df, qis, hier, k, suppression)
    if not any(v[0] for v in truth.values()):
        return
    ev = Evaluator(Problem(df, qis, hier), [KAnonymity(k)], suppression, "discernibility")
    res = exhaustive(ev)
    space = describe_space(ev, res, limit=len(truth))
    c = space.counts
    assert c["nodes"] == c["checked"] == len(truth)
    assert c["checked_satisfying"] == sum(v[0] for v in truth.values())
    assert c["inferred_satisfying"] == c["inferred_failing"] == c["pruned"] == c["not_reached"] == 0
    assert not space.capped and len(space.nodes) == len(set(n.levels for n in space.nodes)) == len(truth)
    for node in space.nodes:
        sat, sup, _ = truth[node.levels]
        assert node.satisfied == sat and node.n_suppressed == sup
    assert {n.levels for n in space.nodes if n.satisfied} == {lv for lv, v in truth.items() if v[0]}


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), suppression=st.sampled_from([0.0, 0.05, 0.2]))
def test_what_the_exact_search_knows_without_a_check_is_true(seed, k, suppression):
    df, qis, hier, _, _ = random_problem(seed)
    truth = brute_force(df, qis, hier, k, suppression)
    if not any(v[0] for v in truth.values()):
        return
    p = Problem(df, qis, hier)
    ev = Evaluator(p, [KAnonymity(k)], suppression, "discernibility")
    res = exact(ev)
    status = known_status(ev, res.value)
    assert status is not None and status.size == p.n_nodes
    for node in range(p.n_nodes):
        sat, _, dm = truth[tuple(int(v) for v in p.levels_of(node))]
        s = STATUSES[int(status[node])]
        assert s != "chosen"
        if s in ("satisfies", "satisfies (inferred)"):
            assert sat
        elif s in ("fails", "fails (inferred)"):
            assert not sat
        elif s == "pruned":   # cannot do better than the chosen node
            assert not sat or dm >= res.value
        else:   # a proven optimum leaves no node unknown
            assert not res.optimal
    space = describe_space(ev, res)
    c = space.counts
    assert sum(c[x] for x in ("checked", "inferred_satisfying", "inferred_failing", "pruned", "not_reached")) \
        == c["nodes"]
    assert c["checked"] == res.nodes_checked


def test_neighbours_are_the_nodes_one_level_apart_in_one_qi():
    df, qis, hier, _, _ = random_problem(11)
    truth = brute_force(df, qis, hier, 2, 0.05)
    ev = Evaluator(Problem(df, qis, hier), [KAnonymity(2)], 0.05, "discernibility")
    res = exact(ev)
    space = describe_space(ev, res)
    chosen = np.array(space.chosen.levels)
    assert tuple(chosen) == tuple(res.levels)
    expected = {lv for lv in truth if np.abs(np.array(lv) - chosen).sum() == 1}   # independent: L1 distance 1
    got = {nb.node.levels for nb in space.neighbours}
    assert got == expected and len(space.neighbours) == len(expected)
    for nb in space.neighbours:
        j = qis.index(nb.qi)
        assert abs(nb.to_level - nb.from_level) == 1 and nb.from_level == chosen[j]
        assert nb.direction == ("coarser" if nb.to_level > nb.from_level else "finer")
        sat, sup, dm = truth[nb.node.levels]
        assert nb.node.satisfied == sat and nb.node.n_suppressed == sup
        if sat:
            assert nb.node.metric == pytest.approx(dm)


def test_the_cap_keeps_the_nearest_checked_nodes_and_says_so():
    df, qis, hier, _, _ = random_problem(5)
    ev = Evaluator(Problem(df, qis, hier), [KAnonymity(2)], 0.05, "discernibility")
    res = exhaustive(ev)
    n_checked = len(ev.evals)
    space = describe_space(ev, res, limit=3)
    assert space.capped and space.limit == 3
    drawn = space.nodes[1 + len(space.neighbours):]
    assert len(drawn) == 3
    chosen = np.array(space.chosen.levels)
    dist = lambda lv: int(np.abs(np.array(lv) - chosen).sum())  # noqa: E731
    near = {space.chosen.levels} | {nb.node.levels for nb in space.neighbours}
    left_out = [e.levels for e in ev.evals.values() if e.levels not in near and e.levels not in
                {n.levels for n in drawn}]
    assert left_out and max(dist(n.levels) for n in drawn) <= min(dist(lv) for lv in left_out)
    assert space.counts["checked"] == n_checked   # the counts are not capped
    from sdckit.app.figures import lattice_view

    view = lattice_view(space)
    assert view["capped"] and f"of the {n_checked:,} nodes the search checked" in view["cap_note"]
    assert not describe_space(ev, res, limit=10_000).capped
    with pytest.raises(ParameterError, match="The 'limit' parameter of describe_space"):
        describe_space(ev, res, limit=0)


def test_the_generalise_step_carries_the_space_to_the_report_and_the_workbench():
    from sdckit.app.figures import lattice_view
    from sdckit.microdata import Microdata
    from sdckit.registry import build_step

    qis = ["sex", "age", "race", "education"]
    data = pd.read_csv(shared_file("arx_adult.csv"), dtype=str)
    step = build_step("generalise", {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")), "k": 5,
                                     "suppression": 0.01})
    res = step.apply(Microdata(data, key_vars=qis))
    space = res.solution_space
    assert space.chosen.levels == tuple(res.summary["levels"][q] for q in qis)
    assert space.counts["checked"] == res.summary["nodes_checked"]
    assert res.to_dict()["solution_space"]["counts"] == space.counts
    html = res.report_html()
    assert "Solution space of the lattice search" in html and "<img" in html and "One step coarser" in html
    view = lattice_view(space)
    assert view["chosen"]["levels"].startswith("sex: level ")
    texts = [view["sentence"], view["cap_note"], view["chosen"]["levels"]] + \
        [p[k] for p in view["points"] for k in ("levels", "figures", "verdict")] + \
        [r[k] for r in view["neighbours"] for k in ("change", "verdict", "known")]
    assert not any("{" in t or "_" in t.split(":")[0] for t in texts)
    json.dumps(view)


def test_anonymise_json_holds_the_solution_space(capsys):
    rc = main(["anonymise", str(shared_file("arx_adult.csv")), "--hierarchies",
               str(shared_file("arx_adult_hierarchies")), "--qis", "sex,age,race", "--k", "5", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    s = doc["solution_space"]
    assert s["counts"]["nodes"] == doc["n_nodes"] and s["counts"]["checked"] == doc["nodes_checked"]
    assert s["chosen"]["levels"] == [doc["levels"][q] for q in ("sex", "age", "race")]


def test_the_public_report_of_a_release_draws_the_solution_space(tmp_path, capsys):
    spec = tmp_path / "release.toml"
    spec.write_text(f"""
[input]
path = "{shared_file('arx_adult.csv')}"

[roles]
key_vars = ["sex", "age", "race", "education"]

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
    capsys.readouterr()
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    start = report.index("Solution space of the lattice search")
    section = report[start:report.index("</table>", start)]
    assert "Chosen node" in section and "sex: level " in section and "One step coarser or finer" in section
    assert "data:image/png;base64," in section
    assert str(shared_file("arx_adult_hierarchies")) not in report   # no path in the public report
