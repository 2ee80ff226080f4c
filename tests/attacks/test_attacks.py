"""The attacks against known answers: an independent sample from the same population reveals
nothing about the training records (risk 0, AUC 0.5 within the intervals), a copy of them
reveals everything (risk and AUC near 1). Fixed seeds throughout."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd
import pytest

from sdckit.attacks import (
    auc_score,
    inference,
    linkability,
    membership_inference,
    run_attacks,
    singling_out,
    tpr_at_fpr,
)
from sdckit.errors import InputError


@pytest.fixture(scope="module")
def census():
    """The census teaching sample cut at random into three thirds: training records, control
    records and an independent sample of the same population (a release that never saw the
    training records)."""
    path = resources.files("sdckit") / "data" / "uk_census2011_teaching_10k.csv"
    df = pd.read_csv(path).drop(columns=["Person ID"]).astype(str)
    perm = np.random.default_rng(2026).permutation(len(df))
    return [df.iloc[perm[i::3]].reset_index(drop=True) for i in range(3)]


@pytest.fixture(scope="module")
def continuous():
    """3,000 records of 4 continuous and 2 categorical columns, drawn three times from one
    population: training, control, independent."""
    rng = np.random.default_rng(7)

    def draw(n):
        z = rng.normal(size=(n, 4)) @ np.array([[1, .5, 0, 0], [0, 1, .3, 0], [0, 0, 1, .2], [0, 0, 0, 1]])
        return pd.DataFrame({"x1": z[:, 0], "x2": z[:, 1], "x3": z[:, 2], "x4": z[:, 3],
                             "c1": rng.choice(list("abc"), n), "c2": rng.choice(list("uvwxyz"), n)})
    return draw(1000), draw(1000), draw(1000)


def _risks_near_zero(res):
    assert res.ci[0] == 0.0, res   # 0 within the interval
    assert res.risk < 0.1, res


def test_independent_sample_has_no_excess_risk(census):
    train, control, independent = census
    cols = list(train.columns)
    _risks_near_zero(singling_out(train, independent, control, n_attacks=300, rng=1))
    _risks_near_zero(linkability(train, independent, control, aux_a=cols[:8], aux_b=cols[8:], rng=2))
    _risks_near_zero(inference(train, independent, control, secret="Health",
                               aux=[c for c in cols if c != "Health"], rng=3))


def test_copy_of_the_training_records_is_found_out(census):
    train, control, _ = census
    cols = list(train.columns)
    so = singling_out(train, train, control, n_attacks=300, rng=1)
    assert so.risk > 0.95 and so.attack_rate > 0.98
    inf = inference(train, train, control, secret="Health", aux=[c for c in cols if c != "Health"], rng=3)
    assert inf.risk > 0.85
    # on 8 categorical columns many records tie with their own copy, so the two halves find
    # the same released record less often: the risk is clearly above an independent sample's
    link = linkability(train, train, control, aux_a=cols[:8], aux_b=cols[8:], rng=2)
    assert link.ci[0] > 0.1


def test_linkability_of_a_copy_of_continuous_records_is_near_one(continuous):
    train, control, independent = continuous
    copy = linkability(train, train, control, aux_a=["x1", "x2", "c1"], aux_b=["x3", "x4", "c2"], rng=4)
    assert copy.risk > 0.95
    _risks_near_zero(linkability(train, independent, control, aux_a=["x1", "x2", "c1"],
                                 aux_b=["x3", "x4", "c2"], rng=4))
    inf = inference(train, train, control, secret="x4", aux=["x1", "x2", "x3", "c1"], rng=5)
    assert inf.risk > 0.95 and inf.settings["secret_kind"] == "numeric"
    _risks_near_zero(inference(train, independent, control, secret="x4", aux=["x1", "x2", "x3", "c1"], rng=5))


@pytest.mark.parametrize("method", ["distance", "density"])
def test_membership_auc_is_chance_for_an_independent_sample(census, method):
    train, control, independent = census
    res = membership_inference(train, independent, control, method=method, n_targets=1000, n_repeats=8, rng=11)
    assert res.auc_ci[0] <= 0.5 <= res.auc_ci[1], res
    assert res.tpr < 0.05


@pytest.mark.parametrize("method, floor", [("distance", 0.95), ("density", 0.85)])
def test_membership_auc_is_near_one_for_a_copy(continuous, census, method, floor):
    # the density attack smooths each record over its neighbours (Silverman's width), so a
    # copy stands out less than to the distance attack, which sees the exact match
    train, control, _ = continuous
    res = membership_inference(train, train, control, method=method, n_targets=400, n_repeats=5, rng=11)
    assert res.auc > floor and res.auc_ci[0] > floor - 0.05, res
    train, control, _ = census
    res = membership_inference(train, train, control, method=method, n_targets=400, n_repeats=5, rng=11)
    assert res.auc > 0.85, res   # categorical records: some control records equal a training record


def test_auc_and_tpr_against_hand_computed_values():
    members, nonmembers = np.array([3.0, 2.0, 2.0, 1.0]), np.array([2.0, 0.0, 0.0, 0.0])
    # pairs (member > non-member) + ties / 2: 4 + 3 + 3 + 3, ties (2,2) twice -> 13 + 2 * 0.5 = 14 of 16
    assert auc_score(members, nonmembers) == pytest.approx(14 / 16)
    # ROC points (fpr, tpr): (0,0), (0, .25) at score 3, (.25, .75) at 2, (.25, 1) at 1, (1, 1);
    # at fpr 0.1 on the segment from (0, .25) to (.25, .75): .25 + .1 / .25 * .5 = .45
    assert tpr_at_fpr(members, nonmembers, 0.1) == pytest.approx(0.45)
    from sklearn.metrics import roc_auc_score  # an independent implementation

    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 5, 50).astype(float), rng.integers(0, 4, 60).astype(float)
    assert auc_score(a, b) == pytest.approx(roc_auc_score(np.r_[np.ones(50), np.zeros(60)], np.r_[a, b]))


def test_same_seed_same_result(census):
    train, control, independent = census
    kw = dict(secret="Health", n_attacks=100, n_targets=200, n_repeats=2, rng=5)
    a = run_attacks(train, independent, control, **kw)
    b = run_attacks(train, independent, control, **kw)
    def strip(d):
        return [{k: v for k, v in r.items() if k not in ("seconds", "cpu_seconds")} for r in d["attacks"]]

    assert strip(a.to_dict()) == strip(b.to_dict())
    html = a.report_html()
    assert "Singling out" in html and "{" not in html  # words, no JSON


def test_inputs_are_not_modified(census):
    train, control, independent = census
    before = [f.copy() for f in census]
    run_attacks(train, independent, control, secret="Health", n_attacks=50, n_targets=100, n_repeats=2, rng=1)
    for a, b in zip(before, census):
        pd.testing.assert_frame_equal(a, b)


def test_errors_name_the_problem(census):
    train, control, independent = census
    with pytest.raises(InputError, match="'Helth'.*did you mean 'Health'"):
        inference(train, independent, control, secret="Helth", aux=["Sex"])
    with pytest.raises(InputError, match="in both of the intruder's files"):
        linkability(train, independent, control, aux_a=["Sex", "Age"], aux_b=["Age"])
    with pytest.raises(InputError, match="needs a secret"):
        run_attacks(train, independent, control)
    with pytest.raises(Exception, match="The 'mode' parameter of singling_out must be one of"):
        singling_out(train, independent, control, mode="bivariate")
