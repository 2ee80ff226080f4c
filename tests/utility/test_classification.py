"""Classification accuracy of a release (ARX's classification analysis): reference values from a
hand-written categorical naive Bayes and from ZeroR counted by hand, and the invariants."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError, ParameterError
from sdckit.utility import Classification, classification_accuracy, compare_analyses
from sdckit.utility.analyses import analysis_from_dict


def _data(n: int = 400, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = rng.integers(0, 3, n)
    y = np.where(rng.random(n) < 0.85, (a + b > 3).astype(int), 1 - (a + b > 3).astype(int))
    return pd.DataFrame({"a": a, "b": b, "y": y})


def _folds(n: int, k: int, seed: int) -> np.ndarray:
    # the fold rule the function documents: a seeded permutation of 0..k-1 repeated
    return np.random.default_rng(seed).permutation(np.arange(n) % k)


def _naive_bayes_by_hand(df: pd.DataFrame, feats: list[str], target: str, k: int, seed: int) -> float:
    """Categorical naive Bayes with Laplace smoothing 1, written out: P(y) * prod P(x_j | y)."""
    fold = _folds(len(df), k, seed)
    cats = {f: sorted(df[f].astype(str).unique()) for f in feats}
    classes = sorted(df[target].astype(str).unique())
    hits = 0
    for f in range(k):
        train, test = df[fold != f], df[fold == f]
        ytr = train[target].astype(str)
        for _, row in test.iterrows():
            best, best_score = None, -math.inf
            for c in classes:
                sub = train[ytr == c]
                if len(sub) == 0:
                    continue
                score = math.log(len(sub) / len(train))
                for j in feats:
                    count = int((sub[j].astype(str) == str(row[j])).sum())
                    score += math.log((count + 1) / (len(sub) + len(cats[j])))
                if score > best_score:
                    best, best_score = c, score
            hits += best == str(row[target])
    return hits / len(df)


def test_naive_bayes_equals_the_hand_computation():
    df = _data(240)
    r = classification_accuracy(df, df, "y", ["a", "b"], classifiers=["naive_bayes"], folds=5, seed=7)
    expected = _naive_bayes_by_hand(df, ["a", "b"], "y", 5, 7)
    assert r.rows[0]["original_accuracy"] == pytest.approx(expected, abs=1e-12)
    assert r.rows[0]["accuracy"] == pytest.approx(expected, abs=1e-12)


def test_zeror_is_the_training_folds_majority_counted_by_hand():
    df = _data(150)
    r = classification_accuracy(df, df, "y", ["a"], classifiers=["naive_bayes"], folds=4, seed=2)
    fold = _folds(len(df), 4, 2)
    hits = 0
    for f in range(4):
        majority = df.y[fold != f].value_counts().sort_index().idxmax()  # ties: the lower class, as argmax
        hits += int((df.y[fold == f] == majority).sum())
    assert r.rows[0]["zeror_accuracy"] == pytest.approx(hits / len(df))


def test_a_release_that_removes_every_feature_is_no_better_than_zeror():
    df = _data(300)
    rel = df.assign(a="*", b="*")
    r = classification_accuracy(df, rel, "y", ["a", "b"], classifiers=["naive_bayes", "logistic"], folds=5)
    for row in r.rows:
        assert row["accuracy"] == pytest.approx(row["zeror_accuracy"])
        assert row["relative_accuracy"] == pytest.approx(0.0)
        assert row["original_accuracy"] > row["zeror_accuracy"]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 6))
def test_an_unchanged_release_has_relative_accuracy_one(seed, k):
    df = _data(120, seed)
    r = classification_accuracy(df, df.copy(), "y", ["a", "b"], classifiers=["naive_bayes"], folds=k, seed=seed)
    row = r.rows[0]
    assert row["accuracy"] == row["original_accuracy"]
    if row["original_accuracy"] != row["zeror_accuracy"]:
        assert row["relative_accuracy"] == pytest.approx(1.0)
    assert 0.0 <= row["brier"] <= 2.0


def test_suppressed_records_are_left_out_of_the_released_training():
    df = _data(200)
    rel = df.astype({"a": object, "b": object})
    rel.loc[:99, ["a", "b"]] = "*"
    mask = np.zeros(len(df), bool)
    mask[:100] = True
    r = classification_accuracy(df, rel, "y", ["a", "b"], classifiers=["naive_bayes"], folds=4, suppressed=mask)
    assert r.n_trained_released == 100
    assert "relative accuracy" in r.report_html() and "naive Bayes" in r.report_html()


def test_bad_input_is_refused_in_one_line():
    df = _data(50)
    with pytest.raises(InputError, match="no column 'c'"):
        classification_accuracy(df, df, "y", ["a", "c"])
    with pytest.raises(InputError, match="same records"):
        classification_accuracy(df, df.iloc[:10], "y", ["a"])
    with pytest.raises(ParameterError):
        classification_accuracy(df, df, "y", ["a"], classifiers=["svm"])


def test_the_classification_analysis_of_a_spec():
    df = _data(200)
    rel = df.assign(a=np.where(df.a < 2, "low", "high"))
    a = analysis_from_dict({"kind": "classification", "target": "y", "features": ["a", "b"], "folds": 4})
    assert isinstance(a, Classification)
    cmp = compare_analyses(df, rel, [a])
    quantities = {r["quantity"]: r for r in cmp.rows}
    assert set(quantities) == {"accuracy", "ZeroR accuracy"}
    direct = classification_accuracy(df, rel, "y", ["a", "b"], classifiers=["naive_bayes"], folds=4)
    assert quantities["accuracy"]["original"] == pytest.approx(direct.rows[0]["original_accuracy"])
    assert quantities["accuracy"]["released"] == pytest.approx(direct.rows[0]["accuracy"])
    with pytest.raises(InputError, match="target, features"):
        analysis_from_dict({"kind": "classification", "outcome": "y"})
