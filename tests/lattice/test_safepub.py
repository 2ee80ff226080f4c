"""SafePub: (epsilon, delta)-differential privacy in the lattice search (Bild, Kuhn & Prasser 2018)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from sdckit.errors import InputError
from sdckit.lattice import find_hierarchies
from sdckit.lattice.dp_params import dp_parameters
from sdckit.lattice.hierarchies import Hierarchy
from sdckit.lattice.problem import Problem
from sdckit.lattice.safepub import node_score, safepub, safepub_search, selection_probabilities
from sdckit.microdata import Microdata
from sdckit.registry import build_step

from ..conftest import shared_file

QIS = ["sex", "age", "race", "education"]


def _arx_reference(epsilon: float, delta: float) -> tuple[float, int]:
    """ARX's ParameterCalculation in its commented plain-double form: beta = 1 - e^-eps, a linear
    scan over k, d(k) from binomial probabilities summed one by one (scipy's pmf), the loop over n
    stopping once the largest a_n exceeds the Chernoff bound c_n. Independent of dp_params (which
    bisects on k and takes the tail from the incomplete beta function)."""
    beta = 1.0 - math.exp(-epsilon)
    power = math.exp(epsilon)
    gamma = (power - 1.0 + beta) / power

    def d(k):
        n = math.ceil(k / gamma - 1.0)
        dl, bound = -math.inf, math.inf
        while dl <= bound:
            a = float(binom.pmf(np.arange(math.floor(n * gamma) + 1, n + 1), n, beta).sum())
            dl = max(dl, a)
            bound = math.exp(-n * (gamma * math.log(gamma / beta) - (gamma - beta)))
            n += 1
        return dl

    k, dk = 1, math.inf
    while dk > delta:
        dk = d(k)
        k += 1
    return beta, k


@pytest.mark.parametrize("epsilon, delta", [(0.5, 1e-6), (1.0, 1e-6), (1.0, 1e-5), (2.0, 1e-4), (1.5, 1e-6)])
def test_parameters_equal_arx_parameter_calculation(epsilon, delta):
    beta, k = dp_parameters(epsilon, delta)
    rb, rk = _arx_reference(epsilon, delta)
    assert beta == pytest.approx(rb, rel=1e-12)
    assert k == rk


# k and beta printed by ARX 3.9.2's own ParameterCalculation (benchmarks/compare_arx_safepub.py, its
# "params" lines; ARX's beta is the lower end of an interval, 2e-16 below 1 - exp(-epsilon))
@pytest.mark.parametrize("epsilon, delta, arx_k, arx_beta", [
    (0.5, 1e-6, 64, 0.3934693402873664), (1.0, 1e-6, 75, 0.6321205588285574), (1.0, 1e-5, 62, 0.6321205588285574),
    (2.0, 1e-4, 82, 0.8646647167633871), (1.5, 1e-6, 100, 0.77686983985157), (2.0, 1e-6, 132, 0.8646647167633871)])
def test_parameters_equal_arx_output(epsilon, delta, arx_k, arx_beta):
    beta, k = dp_parameters(epsilon, delta)
    assert k == arx_k and beta == pytest.approx(arx_beta, abs=1e-15)


def test_parameters_refuse_bad_values():
    with pytest.raises(InputError, match="epsilon"):
        dp_parameters(0.0, 1e-6)
    with pytest.raises(InputError, match="delta"):
        dp_parameters(1.0, 1.0)


def _adult(qis=QIS):
    data = pd.read_csv(shared_file("arx_adult.csv"), dtype=str)[qis]
    return data, find_hierarchies(shared_file("arx_adult_hierarchies"), qis)


@pytest.mark.parametrize("metric", ["discernibility", "aecs", "precision", "loss", "non_uniform_entropy"])
def test_release_has_no_class_below_k_and_is_reproducible(metric):
    data, hier = _adult()
    out, res = safepub(data, QIS, hier, epsilon=1.0, delta=1e-5, steps=30, epsilon_search=0.1, metric=metric,
                       rng=np.random.default_rng(7))
    assert len(out) > 0
    assert out.groupby(QIS).size().min() >= res.k
    # the released QIs are the labels of the chosen levels; no record outside the drawn ones
    assert len(out) == res.n_released <= res.n_sampled
    out2, res2 = safepub(data, QIS, hier, epsilon=1.0, delta=1e-5, steps=30, epsilon_search=0.1, metric=metric,
                         rng=np.random.default_rng(7))
    assert res2.level_map == res.level_map and out2.equals(out)


def test_sample_rate_is_beta():
    # 30,162 records: the binomial sd of the rate is sqrt(b(1-b)/n) ~ 0.0028; 5 sd tolerance
    data, hier = _adult()
    for eps, seed in [(0.6, 1), (1.2, 2)]:
        _, res = safepub(data, QIS, hier, epsilon=eps, delta=1e-5, steps=5, epsilon_search=0.1,
                         metric="aecs", rng=np.random.default_rng(seed))
        sd = math.sqrt(res.beta * (1 - res.beta) / len(data))
        assert abs(res.n_sampled / len(data) - res.beta) < 5 * sd


def test_exponential_mechanism_frequencies():
    # a tiny lattice: 2 QIs of height 1, so the first step chooses between the two predecessors
    # of the top node; their probabilities are exp(eps s / 2) proportions of their scores
    # (McSherry & Talwar 2007); 4,000 seeded draws, tolerance 4 binomial sd
    # (aecs scores: 2 classes at (0, 1), 3 at (1, 0): probabilities e / (1 + e) and 1 / (1 + e))
    data = pd.DataFrame({"a": list("xxxxyyyyxy" * 6), "b": list("ppqqrrpqrp" * 6)})
    hier = {"a": Hierarchy(pd.DataFrame({0: ["x", "y"], 1: ["*", "*"]}), "a.csv"),
            "b": Hierarchy(pd.DataFrame({0: ["p", "q", "r"], 1: ["*", "*", "*"]}), "b.csv")}
    p = Problem(data, ["a", "b"], hier)
    eps_search, k, n = 2.0, 2, len(data)
    s = np.array([node_score("aecs", p, np.array(v), k, n) for v in [(0, 1), (1, 0)]])
    assert list(s) == [2.0, 3.0]
    probs = selection_probabilities(s, eps_search)
    rng = np.random.default_rng(11)
    draws = 4000
    first = [safepub_search(p, "aecs", k, n, 1, eps_search, rng)[4][1] for _ in range(draws)]
    freq = sum(1 for v in first if v == (0, 1)) / draws
    sd = math.sqrt(probs[0] * (1 - probs[0]) / draws)
    assert abs(freq - probs[0]) < 4 * sd + 1e-9
    # the probabilities themselves: exp(eps/2 * s) normalised, computed here directly
    w = np.exp(0.5 * eps_search * s)
    assert probs == pytest.approx(w / w.sum())


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-50, 50), min_size=1, max_size=8), st.floats(0.01, 10))
def test_selection_probabilities_are_exponential_proportions(scores, eps):
    p = selection_probabilities(np.array(scores), eps)
    assert p.sum() == pytest.approx(1.0)
    i, j = int(np.argmax(scores)), int(np.argmin(scores))
    assert p[i] / p[j] == pytest.approx(math.exp(0.5 * eps * (scores[i] - scores[j])), rel=1e-6)


def test_step_and_its_refusals():
    data, _ = _adult()
    md = Microdata(data, key_vars=QIS)
    params = {"hierarchy_dir": str(shared_file("arx_adult_hierarchies")),
              "dp": {"type": "safepub", "epsilon": 1.0, "delta": 1e-5, "steps": 20}}
    step = build_step("generalise", params)
    r1, r2 = step.apply(md, rng=5), step.apply(md, rng=5)
    assert r1.summary == r2.summary and all(g.holds for g in r1.guarantees)
    assert r1.summary["dp"]["k"] == dp_parameters(0.9, 1e-5)[1]
    assert "score" not in r1.summary["dp"] and "n_sampled" not in r1.summary["dp"]
    for bad in ({"l": 2.0}, {"suppression": 0.01}, {"metric": "kl_divergence"}):
        with pytest.raises(InputError, match="SafePub"):
            build_step("generalise", {**params, **bad})
    full = Microdata(pd.read_csv(shared_file("arx_adult.csv"), dtype=str), key_vars=QIS)
    with pytest.raises(InputError, match="not a quasi-identifier"):
        step.apply(full, rng=1)


def test_cli_epsilon(tmp_path, capsys):
    from sdckit.cli import main

    out = tmp_path / "rel.csv"
    main(["anonymise", str(shared_file("arx_adult.csv")), "--hierarchies", str(shared_file("arx_adult_hierarchies")),
          "--qis", ",".join(QIS), "--epsilon", "1.0", "--delta", "1e-5", "--dp-steps", "10", "--output", str(out),
          "--json"])
    rel = pd.read_csv(out, dtype=str)
    k = dp_parameters(0.9, 1e-5)[1]
    assert list(rel.columns) == QIS and rel.groupby(QIS).size().min() >= k


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("xyz"), st.sampled_from("pq")), min_size=1, max_size=80),
       st.integers(0, 2 ** 32 - 1), st.sampled_from(["discernibility", "aecs", "precision", "loss",
                                                     "non_uniform_entropy"]))
def test_release_invariants(rows, seed, metric):
    # on any data: every released class has >= k records, and each released record is an input
    # record generalised to the chosen levels (epsilon 1.0 with search 0.1, delta 0.2: k = 5)
    data = pd.DataFrame(rows, columns=["a", "b"])
    hier = {"a": Hierarchy(pd.DataFrame({0: ["x", "y", "z"], 1: ["xy", "xy", "z"], 2: ["*"] * 3}), "a.csv"),
            "b": Hierarchy(pd.DataFrame({0: ["p", "q"], 1: ["*", "*"]}), "b.csv")}
    out, res = safepub(data, ["a", "b"], hier, epsilon=1.0, delta=0.2, steps=3, epsilon_search=0.1, metric=metric,
                       rng=np.random.default_rng(seed))
    assert res.k == dp_parameters(0.9, 0.2)[1]
    if len(out):
        assert out.groupby(["a", "b"]).size().min() >= res.k
        assert set(out.index) <= set(data.index)
        up_a = {0: {"x": "x", "y": "y", "z": "z"}, 1: {"x": "xy", "y": "xy", "z": "z"}, 2: dict.fromkeys("xyz", "*")}
        la, lb = res.level_map["a"], res.level_map["b"]
        assert (out["a"] == data.loc[out.index, "a"].map(up_a[la])).all()
        assert (out["b"] == (data.loc[out.index, "b"] if lb == 0 else "*")).all()
