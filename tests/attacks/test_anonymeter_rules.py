"""Anonymeter's rules in sdckit's attacks: the "quicksort" tie rule of the nearest-neighbour
search and the tolerance of a numeric secret.

References: the distance row of the tie rule is recomputed here with plain numpy in the
arithmetic Anonymeter documents in ``anonymeter/neighbors/mixed_types_kneighbors.py``
(``gower_distance``) and ``anonymeter/preprocessing/transformations.py``
(``_scale_numerical``), and sorted with numba's own ``argsort`` (the sort Anonymeter calls);
the tolerance cases are computed by hand; the last test runs Anonymeter itself (skipped when
its environment, ``.venv-anonymeter``, is absent).
"""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.attacks import inference, linkability
from sdckit.attacks.encode import encode_frames
from sdckit.attacks.inferring import guess_is_right
from sdckit.attacks.neighbours import nearest_released
from sdckit.attacks.steps import MaxInference, MaxLinkability
from sdckit.errors import ParameterError

ROOT = Path(__file__).resolve().parents[2]
ANON_PY = ROOT / ".venv-anonymeter" / "bin" / "python"


@numba.njit(cache=False)
def _numba_argsort(row):  # pragma: no cover - compiled
    return row.argsort()


def _brute_rows(released: pd.DataFrame, targets: pd.DataFrame, numeric: list[str]) -> np.ndarray:
    """Distance of every target to every released record, Anonymeter's arithmetic in numpy:
    numeric columns divided by their range over both files (0 -> 1), added in name order as
    |a - b| (1 when both are missing), then 1.0 per differing category (missing = a value)."""
    rows = np.zeros((len(targets), len(released)))
    for c in sorted(numeric):
        r = released[c].to_numpy(float)
        t = targets[c].to_numpy(float)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r_lo, t_lo, r_hi, t_hi = np.nanmin(r), np.nanmin(t), np.nanmax(r), np.nanmax(t)
        # pandas' ``min1.where(min1 < min2, min2)``: a comparison with NaN is false, so a
        # column missing throughout the released file takes the targets' extremes
        lo = r_lo if r_lo < t_lo else t_lo
        span = (r_hi if r_hi > t_hi else t_hi) - lo
        span = 1.0 if span == 0 else span
        a, b = t[:, None] / span, r[None, :] / span
        rows += np.where(np.isnan(a) & np.isnan(b), 1.0, np.abs(a - b))
    for c in [c for c in released.columns if c not in numeric]:
        r = released[c].fillna("<na>").to_numpy(str)
        t = targets[c].fillna("<na>").to_numpy(str)
        rows += (t[:, None] != r[None, :]).astype(float)
    return rows


@st.composite
def _files(draw):
    n_rel = draw(st.integers(1, 40))
    n_tgt = draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)

    def frame(m):
        # column order differs from name order, so the order of the numeric sum is exercised
        z = rng.integers(0, 4, m) / 3.0 + rng.choice([0.0, 0.1, 0.7], m)
        z[rng.random(m) < 0.15] = np.nan
        b = rng.integers(-2, 3, m).astype(float)
        b[rng.random(m) < 0.15] = np.nan
        u = rng.choice(["p", "q", "r"], m).astype(object)
        u[rng.random(m) < 0.1] = None
        return pd.DataFrame({"z": z, "u": u, "b": b, "a": rng.choice(["x", "y"], m)})

    return frame(n_rel), frame(n_tgt), draw(st.integers(1, 5))


@settings(max_examples=60, deadline=None)
@given(_files())
def test_quicksort_rule_is_numba_argsort_of_the_distance_row(files):
    released, targets, k = files
    numeric = ["z", "b"]
    enc = encode_frames(released, targets, None, numeric=numeric)
    idx, dist = nearest_released(enc, enc.original, np.arange(4), k, np.random.default_rng(0), "quicksort")
    rows = _brute_rows(released, targets, numeric)
    k = min(k, len(released))
    for i, row in enumerate(rows):
        expected = _numba_argsort(row)[:k]
        np.testing.assert_array_equal(idx[i], expected)
        # bit for bit the same distances (NaN where one number is missing)
        np.testing.assert_array_equal(dist[i].view(np.int64), row[expected].view(np.int64))
        # it only orders ties: the k distances are the k smallest (NaN last)
        np.testing.assert_array_equal(dist[i], np.sort(row)[:k])


def test_quicksort_rule_breaks_ties_unlike_first():
    # 100 released records all at distance 0 from the target: "first" keeps rows 0, 1, 2;
    # numba's quicksort on 100 equal keys (far above its insertion-sort cut-off) does not keep
    # the row order
    released = pd.DataFrame({"a": ["x"] * 100})
    targets = pd.DataFrame({"a": ["x"]})
    enc = encode_frames(released, targets, None)
    q, _ = nearest_released(enc, enc.original, np.arange(1), 3, np.random.default_rng(0), "quicksort")
    f, _ = nearest_released(enc, enc.original, np.arange(1), 3, np.random.default_rng(0), "first")
    np.testing.assert_array_equal(q[0], _numba_argsort(np.zeros(100))[:3])
    np.testing.assert_array_equal(f[0], [0, 1, 2])
    assert not np.array_equal(q[0], f[0])


def _census(n_cand: int, n_query: int):
    census = pd.read_csv(ROOT / "src" / "sdckit" / "data" / "uk_census2011_teaching_10k.csv")
    census = census.drop(columns=["Person ID"])
    text = census.astype(str)
    numeric = ["Health", "Family Composition", "Hours worked per week", "Approximated Social Grade"]
    for c in numeric:
        text[c] = census[c].astype(float)
    text.loc[text["Hours worked per week"] == -9, "Hours worked per week"] = np.nan
    perm = np.random.default_rng(7).permutation(len(text))
    return (text.iloc[perm[:n_cand]].reset_index(drop=True),
            text.iloc[perm[n_cand:n_cand + n_query]].reset_index(drop=True), numeric)


@pytest.mark.skipif(not ANON_PY.exists(), reason=".venv-anonymeter is absent (make it with "
                    "`benchmarks/compare_anonymeter.py --setup`): Anonymeter itself is the reference")
def test_quicksort_neighbours_identical_to_anonymeters(tmp_path):
    cand, queries, numeric = _census(2000, 300)
    for name, f in (("candidates", cand), ("queries", queries)):
        f.astype(object).where(f.notna(), "<missing>").to_csv(tmp_path / f"{name}.csv", index=False)
    (tmp_path / "numeric.json").write_text(json.dumps(numeric))
    k = 3
    proc = subprocess.run([str(ANON_PY), str(ROOT / "benchmarks" / "compare_anonymeter.py"), "--neighbours-worker",
                           str(tmp_path), str(k)], capture_output=True, text=True, check=True)
    expected = np.array(json.loads(proc.stdout.strip().splitlines()[-1])["indices"])
    enc = encode_frames(cand, queries, None, numeric=numeric)
    idx, _ = nearest_released(enc, enc.original, np.arange(len(enc.columns)), k, np.random.default_rng(0),
                              "quicksort")
    assert idx.shape == expected.shape == (300, 3)
    np.testing.assert_array_equal(idx, expected)


def test_quicksort_attacks_do_not_depend_on_the_seed():
    # with every record a target, the seed only orders the targets: the quicksort rule's
    # counts cannot change (the random tie rule's may)
    cand, queries, numeric = _census(600, 200)
    ori, con = queries.iloc[:100], queries.iloc[100:]
    aux = [c for c in cand.columns if c != "Health"]
    kw = {"n_attacks": 100, "numeric": numeric, "tie_break": "quicksort"}
    inf = {(r.n_success, r.n_control) for r in (inference(ori, cand, con, secret="Health", aux=aux, rng=s, **kw)
                                                 for s in range(3))}
    link = {(r.n_success, r.n_control) for r in (linkability(ori, cand, con, aux_a=aux[:7], aux_b=aux[7:], rng=s,
                                                             **kw) for s in range(3))}
    assert len(inf) == 1 and len(link) == 1


def test_tolerance_relative_to_the_guess_and_to_the_secret():
    # hand-computed with tolerance 0.05:
    #   guess 100, secret 105: |d| = 5; 5 / 100 = 0.05 <= 0.05 right;     5 <= 0.05 * 105 = 5.25 right
    #   guess  95, secret 100: 5 / 95 = 0.0526 > 0.05 wrong;              5 <= 5.0 right
    #   guess 105, secret 100: 5 / 105 = 0.0476 right;                    5 <= 5.0 right
    #   guess  -3, secret  50: 53 / -3 < 0 right (a negative guess);      53 > 2.5 wrong
    #   guess   0, secret   0: 0 / 1e-12 = 0 right;                       0 <= 0 right
    #   guess   0, secret 1e-14: 1e-14 / 1e-12 = 0.01 right;              1e-14 > 5e-16 wrong
    #   guess NaN, secret NaN: both missing right (either rule); guess NaN, secret 1: wrong
    guess = np.array([100, 95, 105, -3, 0, 0, np.nan, np.nan])
    secret = np.array([105, 100, 100, 50, 0, 1e-14, np.nan, 1])
    np.testing.assert_array_equal(guess_is_right(guess, secret, True, 0.05, "guess"),
                                  [True, False, True, True, True, True, True, False])
    np.testing.assert_array_equal(guess_is_right(guess, secret, True, 0.05, "secret"),
                                  [True, True, True, False, True, False, True, False])
    np.testing.assert_array_equal(guess_is_right(guess, secret, False, 0.05, "guess"),
                                  [False, False, False, False, True, False, True, False])


def test_inference_numeric_secret_counts_with_the_chosen_rule():
    # one aux column that points each target to one released record; hand-counted successes:
    # guesses 95 (secret 100), -3 (secret 50), 105 (secret 100): relative to the guess 2 right,
    # relative to the secret 2 right, but not the same two
    released = pd.DataFrame({"k": ["a", "b", "c"], "s": [95.0, -3.0, 105.0]})
    original = pd.DataFrame({"k": ["a", "b", "c"], "s": [100.0, 50.0, 100.0]})
    control = pd.DataFrame({"k": ["x", "y", "z"], "s": [1.0, 2.0, 3.0]})
    kw = {"secret": "s", "aux": ["k"], "n_attacks": 3, "rng": 0, "tie_break": "quicksort"}
    by_guess = inference(original, released, control, **kw)
    by_secret = inference(original, released, control, relative_to="secret", **kw)
    assert by_guess.n_success == 2 and by_secret.n_success == 2
    assert by_guess.settings["relative_to"] == "guess" and by_secret.settings["relative_to"] == "secret"
    one = pd.DataFrame({"k": ["b"], "s": [50.0]})
    assert inference(one, released, control, **{**kw, "n_attacks": 1}).n_success == 1
    assert inference(one, released, control, relative_to="secret", **{**kw, "n_attacks": 1}).n_success == 0


def test_declared_parameters_and_errors():
    gate = MaxInference(0.2, control_file="c.csv", tie_break="quicksort", relative_to="secret", tolerance=0.1)
    assert (gate.tie_break, gate.relative_to, gate.tolerance) == ("quicksort", "secret", 0.1)
    assert MaxInference(0.2, control_file="c.csv").relative_to == "guess"
    assert MaxLinkability(0.2, control_file="c.csv", tie_break="quicksort").tie_break == "quicksort"
    with pytest.raises(ParameterError, match="relative_to"):
        MaxInference(0.2, control_file="c.csv", relative_to="target")
    frame = pd.DataFrame({"k": ["a"], "s": [1.0]})
    with pytest.raises(ParameterError, match=r"'relative_to'.*'guess', 'secret'"):
        inference(frame, frame, frame, secret="s", aux=["k"], relative_to="target")
