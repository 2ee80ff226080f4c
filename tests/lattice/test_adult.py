"""On ARX's adult data: the exact search's DM equals an exhaustive check; pycanon confirms k and l."""

from __future__ import annotations

import pandas as pd
import pytest

from sdckit.lattice import (
    DistinctLDiversity,
    Evaluator,
    KAnonymity,
    Problem,
    exact,
    exhaustive,
    find_hierarchies,
    generalise_frame,
)

from ..conftest import shared_file

QIS8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
QIS4 = ["sex", "age", "race", "marital-status", "education"]


def _adult(qis, sensitive=None):
    data = pd.read_csv(shared_file("arx_adult.csv"), dtype=str)
    hier = find_hierarchies(shared_file("arx_adult_hierarchies"), qis)
    return data, Problem(data, qis, hier, sensitive=sensitive)


@pytest.mark.parametrize("k", [5, 10])
@pytest.mark.parametrize("suppression", [0.0, 0.01, 0.02])
def test_adult_five_qis_optimum_equals_every_node(k, suppression):
    # reference: exhaustive check of all 2*5*2*3*4 = 240 nodes
    _, p = _adult(QIS4)
    assert p.n_nodes == 240
    brute = exhaustive(Evaluator(p, [KAnonymity(k)], suppression, "discernibility"))
    p.clear_cache()
    got = exact(Evaluator(p, [KAnonymity(k)], suppression, "discernibility"))
    assert got.optimal and got.value == brute.value
    assert got.nodes_checked < p.n_nodes


@pytest.mark.slow
@pytest.mark.parametrize("k", [5, 10])
@pytest.mark.parametrize("suppression", [0.0, 0.01, 0.02])
def test_adult_eight_qis_optimum_equals_all_6480_nodes(k, suppression):
    # reference: exhaustive check of all 6,480 nodes
    _, p = _adult(QIS8)
    assert p.n_nodes == 6480
    brute = exhaustive(Evaluator(p, [KAnonymity(k)], suppression, "discernibility"))
    p.clear_cache()
    got = exact(Evaluator(p, [KAnonymity(k)], suppression, "discernibility"))
    assert got.optimal and got.value == brute.value


def test_pycanon_confirms_k_and_l_of_the_release():
    pycanon = pytest.importorskip("pycanon.anonymity")
    data, p = _adult(QIS4, sensitive="salary-class")
    ev = Evaluator(p, [KAnonymity(5), DistinctLDiversity(2)], 0.01, "discernibility")
    res = exact(ev)
    out, suppressed = generalise_frame(data, ev, res.levels)
    assert int(suppressed.sum()) == res.n_suppressed <= ev.max_suppressed
    released = out.loc[~suppressed].reset_index(drop=True)
    # pycanon is an independent implementation of k-anonymity and l-diversity
    assert pycanon.k_anonymity(released, QIS4) >= 5
    assert pycanon.l_diversity(released, QIS4, ["salary-class"]) >= 2
