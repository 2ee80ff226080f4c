"""Classification accuracy of a release: does a classifier trained on the released data predict
as well as one trained on the original?

ARX's "classification performance" analysis (Prasser, Eicher, Spengler, Bild & Kuhn 2020,
"Flexible data anonymization using ARX — current status and challenges ahead", Software:
Practice and Experience 50(7), section 4.3; ARX 3.9 ``StatisticsClassification``): k-fold
cross-validation over the records; in each fold three classifiers are trained on the other
folds — one on the original records, one on the released records (records the release
suppressed are left out of its training, as ARX leaves its outliers out), and ZeroR (always
the most frequent class of the training folds) — and each predicts the held-out fold's target
from that fold's own features (original features for the original classifier, released
features for the released one). The truth is the target as released (the target is normally
not masked). Figures per classifier:

* ``accuracy`` (released), ``original_accuracy``, ``zeror_accuracy``: shares of the held-out
  records predicted correctly, over all folds;
* ``relative_accuracy`` = (accuracy - ZeroR) / (original - ZeroR), ARX's "relative accuracy"
  (``ViewStatisticsClassificationOutput``; accuracy / ZeroR when the original is no better
  than ZeroR): 1 when the release loses nothing a classifier uses, 0 when it is no better
  than guessing the most frequent class;
* Brier scores (mean squared error of the predicted class probabilities, Brier 1950) for
  the three classifiers.

The classifiers are scikit-learn's (ARX uses its own implementations: figures agree in kind,
not to the digit): ``naive_bayes`` (:class:`~sklearn.naive_bayes.CategoricalNB`, every
feature a category, Laplace smoothing 1), ``random_forest``
(:class:`~sklearn.ensemble.RandomForestClassifier`, 100 trees on one-hot features) and
``logistic`` (:class:`~sklearn.linear_model.LogisticRegression`, L2, on one-hot features).
Every feature is treated as categorical, as a generalised value (an interval, a group, ``*``)
is a category.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._validation import check_choice, check_int, check_names
from ..errors import InputError
from ..result import ResultDisplay

#: the classifiers offered, name -> words
CLASSIFIERS = {"naive_bayes": "naive Bayes", "random_forest": "random forest", "logistic": "logistic regression"}


def _frame(data: Any) -> pd.DataFrame:
    return data.frame if hasattr(data, "frame") and isinstance(data.frame, pd.DataFrame) else pd.DataFrame(data)


def _codes(columns: Sequence[pd.Series]) -> tuple[np.ndarray, ...]:
    """Integer codes of each column over the union of its values (missing -> its own code)."""
    out = []
    for col in columns:
        s = col.astype("string").fillna("\0missing")
        out.append(s)
    both = pd.concat(out, ignore_index=True)
    codes, _ = pd.factorize(both, sort=True)
    res, start = [], 0
    for s in out:
        res.append(codes[start:start + len(s)].astype(np.int64))
        start += len(s)
    return tuple(res)


def _model(name: str, n_categories: np.ndarray, seed: int):
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import CategoricalNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    if name == "naive_bayes":
        return CategoricalNB(alpha=1.0, min_categories=n_categories)
    cats = [np.arange(int(c)) for c in n_categories]
    onehot = ColumnTransformer([("onehot", OneHotEncoder(categories=cats, handle_unknown="ignore"),
                                 list(range(len(cats))))])
    if name == "random_forest":
        return make_pipeline(onehot, RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1))
    return make_pipeline(onehot, LogisticRegression(max_iter=1000))


def _brier(proba: np.ndarray, classes: np.ndarray, truth: np.ndarray, n_classes: int) -> float:
    """Sum over classes of (p - [class = truth])^2, summed over records (divided later)."""
    full = np.zeros((len(truth), n_classes))
    full[:, classes] = proba
    onehot = np.zeros_like(full)
    onehot[np.arange(len(truth)), truth] = 1.0
    return float(((full - onehot) ** 2).sum())


def _folds(n: int, k: int, seed: int) -> np.ndarray:
    """Fold of each record: a seeded permutation of 0, 1, ..., k-1, 0, 1, ... (sizes differ by <= 1)."""
    return np.random.default_rng(seed).permutation(np.arange(n) % k)


def _zeror(truth: np.ndarray, fold_of: np.ndarray, k: int, n_classes: int) -> tuple[int, float]:
    """Hits and summed Brier score of ZeroR (the training folds' most frequent class)."""
    hits, brier = 0, 0.0
    for f in range(k):
        test = fold_of == f
        counts = np.bincount(truth[~test], minlength=n_classes)
        yt = truth[test]
        hits += int((yt == int(np.argmax(counts))).sum())
        brier += _brier(np.tile(counts / counts.sum(), (len(yt), 1)), np.arange(n_classes), yt, n_classes)
    return hits, brier


def _cross_validate(name: str, x: np.ndarray, truth: np.ndarray, skip: np.ndarray, fold_of: np.ndarray,
                    k: int, n_categories: np.ndarray, n_classes: int, seed: int) -> tuple[int, float]:
    """Hits and summed Brier score of classifier ``name`` over the k folds (``skip``: not trained on)."""
    hits, brier = 0, 0.0
    for f in range(k):
        test = fold_of == f
        train = ~test & ~skip
        ys, yt = truth[train], truth[test]
        if len(np.unique(ys)) < 2:  # one class (or none) to learn from: predict it (or the fold's)
            cls = int(ys[0]) if len(ys) else int(np.argmax(np.bincount(truth[~test], minlength=n_classes)))
            hits += int((yt == cls).sum())
            p = np.zeros((len(yt), n_classes))
            p[:, cls] = 1.0
            brier += _brier(p, np.arange(n_classes), yt, n_classes)
            continue
        model = _model(name, n_categories, seed)
        model.fit(x[train], ys)
        hits += int((model.predict(x[test]) == yt).sum())
        brier += _brier(model.predict_proba(x[test]), np.asarray(model.classes_), yt, n_classes)
    return hits, brier


def cross_validated_accuracy(data: Any, target: str, features: Sequence[str], *, classifier: str = "naive_bayes",
                             folds: int = 10, seed: int = 0) -> dict[str, float]:
    """Accuracy of ``classifier`` predicting ``target`` from ``features`` on one data set, k-fold
    cross-validated, and ZeroR's on the same folds (the ``classification`` analysis of a spec).

    Returns
    -------
    dict
        ``accuracy``, ``zeror_accuracy``, ``brier``, ``n``.
    """
    where = "cross_validated_accuracy"
    check_names(where, "target", target)
    feats = check_names(where, "features", features)
    check_choice(where, "classifier", classifier, tuple(CLASSIFIERS))
    frame = _frame(data)
    missing = [c for c in (target, *feats) if c not in frame.columns]
    if missing:
        raise InputError(f"{where}: the data have no column {missing[0]!r}; name one of its columns.")
    n = len(frame)
    k = min(check_int(where, "folds", folds, min_value=2), n)
    if k < 2:
        raise InputError(f"{where}: {n} records cannot be cross-validated; at least 2 are needed.")
    x = np.column_stack([_codes([frame[f]])[0] for f in feats])
    (truth,) = _codes([frame[target]])
    n_classes = int(truth.max()) + 1
    fold_of = _folds(n, k, seed)
    hits, brier = _cross_validate(classifier, x, truth, np.zeros(n, bool), fold_of, k, x.max(axis=0) + 1,
                                  n_classes, seed)
    zhits, _ = _zeror(truth, fold_of, k, n_classes)
    return {"accuracy": hits / n, "zeror_accuracy": zhits / n, "brier": brier / n, "n": n}


@dataclass(frozen=True)
class ClassificationAccuracy(ResultDisplay):
    """Cross-validated accuracy of classifiers trained on the original and on the released data.

    ``rows`` holds one dict per classifier: classifier, accuracy, original_accuracy,
    zeror_accuracy, relative_accuracy, brier, original_brier, zeror_brier; ``n`` records,
    ``n_trained_released`` records the released classifier could learn from (suppressed ones
    left out), ``folds``.
    """

    target: str
    features: tuple[str, ...]
    rows: tuple[dict, ...]
    n: int
    n_trained_released: int
    folds: int
    _headline: ClassVar[tuple[str, ...]] = ("target", "n", "folds", "relative_accuracy")

    @property
    def relative_accuracy(self) -> dict[str, float]:
        """ARX's relative accuracy per classifier."""
        return {r["classifier"]: r["relative_accuracy"] for r in self.rows}

    def to_frame(self) -> pd.DataFrame:
        """One row per classifier."""
        return pd.DataFrame(list(self.rows))

    def report_html(self) -> str:
        """A table in words: classifier, accuracy on released and original, ZeroR, relative."""
        body = "".join(
            f"<tr><td>{html.escape(CLASSIFIERS[r['classifier']])}</td><td>{r['accuracy']:.1%}</td>"
            f"<td>{r['original_accuracy']:.1%}</td><td>{r['zeror_accuracy']:.1%}</td>"
            f"<td>{r['relative_accuracy']:.1%}</td></tr>" for r in self.rows)
        return (f"<p>Predicting <b>{html.escape(self.target)}</b> from "
                f"{html.escape(', '.join(self.features))} ({self.folds}-fold cross-validation, "
                f"{self.n:,} records):</p><table class='classification'><tr><th>classifier</th>"
                "<th>accuracy, trained on the release</th><th>accuracy, trained on the original</th>"
                "<th>always the most frequent class</th><th>relative accuracy</th></tr>"
                f"{body}</table>")


def classification_accuracy(original: Any, released: Any, target: str, features: Sequence[str], *,
                            classifiers: Sequence[str] = ("naive_bayes", "random_forest", "logistic"),
                            folds: int = 10, seed: int = 0,
                            suppressed: np.ndarray | None = None) -> ClassificationAccuracy:
    """Cross-validated classification accuracy of the released data against the original (ARX).

    Parameters
    ----------
    original, released : pandas.DataFrame or Microdata
        The same records in the same order (a release that keeps the order, or
        ``[output] keep_order``).
    target : str
        The class attribute to predict.
    features : list of str
        The attributes it is predicted from (treated as categories).
    classifiers : list of {"naive_bayes", "random_forest", "logistic"}
    folds : int
        Folds of the cross-validation (ARX's default 10); at most the number of records.
    seed : int
        Seed of the fold assignment and of the random forest (not the release's seed).
    suppressed : bool array, optional
        Records the release suppressed: left out of the released classifier's training (ARX's
        outliers). Default: none.

    Returns
    -------
    ClassificationAccuracy

    References
    ----------
    Prasser, F. et al. (2020), section 4.3 (ARX's classification analysis); Brier, G. W. (1950),
    "Verification of forecasts expressed in terms of probability", Monthly Weather Review 78(1).
    """
    where = "classification_accuracy"
    check_names(where, "target", target)
    feats = check_names(where, "features", features)
    for name in classifiers:
        check_choice(where, "classifiers", name, tuple(CLASSIFIERS))
    orig, rel = _frame(original), _frame(released)
    for label, frame in (("original", orig), ("released", rel)):
        missing = [c for c in (target, *feats) if c not in frame.columns]
        if missing:
            raise InputError(f"{where}: the {label} data have no column {missing[0]!r}; "
                             "name columns both files have.")
    if len(orig) != len(rel):
        raise InputError(f"{where}: the original has {len(orig):,} records and the release {len(rel):,}; "
                         "compare the same records in the same order (keep_order).")
    n = len(orig)
    folds = check_int(where, "folds", folds, min_value=2)
    k = min(folds, n)
    if k < 2:
        raise InputError(f"{where}: {n} records cannot be cross-validated; at least 2 are needed.")
    skip = np.zeros(n, bool) if suppressed is None else np.asarray(suppressed, bool)
    if skip.shape != (n,):
        raise InputError(f"{where}: 'suppressed' must have one flag per record ({n:,}); it has {skip.size:,}.")

    pairs = [_codes([orig[f], rel[f]]) for f in feats]
    xo = np.column_stack([p[0] for p in pairs])
    xr = np.column_stack([p[1] for p in pairs])
    n_categories = np.maximum(np.maximum(xo.max(axis=0), xr.max(axis=0)) + 1, 1)
    (truth,) = _codes([rel[target]])
    n_classes = int(truth.max()) + 1

    fold_of = _folds(n, k, seed)
    zeror = _zeror(truth, fold_of, k, n_classes)   # the same for every classifier
    rows = []
    for name in classifiers:
        orig_fit = _cross_validate(name, xo, truth, np.zeros(n, bool), fold_of, k, n_categories, n_classes, seed)
        rel_fit = _cross_validate(name, xr, truth, skip, fold_of, k, n_categories, n_classes, seed)
        acc = {"released": rel_fit[0] / n, "original": orig_fit[0] / n, "zeror": zeror[0] / n}
        denominator = acc["original"] - acc["zeror"]
        relative = ((acc["released"] - acc["zeror"]) / denominator if denominator != 0
                    else (acc["released"] / acc["zeror"] if acc["zeror"] else float("nan")))
        rows.append({"classifier": name, "accuracy": acc["released"], "original_accuracy": acc["original"],
                     "zeror_accuracy": acc["zeror"], "relative_accuracy": relative,
                     "brier": rel_fit[1] / n, "original_brier": orig_fit[1] / n, "zeror_brier": zeror[1] / n})
    return ClassificationAccuracy(target=target, features=tuple(feats), rows=tuple(rows), n=n,
                                  n_trained_released=int((~skip).sum()), folds=k)
