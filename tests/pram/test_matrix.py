"""TransitionMatrix: validation with clear errors, label matching, facts, CSV/JSON round trips."""

import numpy as np
import pytest
import scipy.sparse as sp

from sdckit import InputError
from sdckit.pram.matrix import TransitionMatrix


def small():
    P = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.0, 0.4, 0.6]])
    return TransitionMatrix(["a", "b", "c"], P, ("v",))


def test_facts_by_hand():
    m = small()
    assert m.n_categories == 3 and m.categories == ("a", "b", "c")
    assert m.min_diagonal == pytest.approx(0.6)
    # expected change share: p = (0.5, 0.3, 0.2): 0.5*0.2 + 0.3*0.3 + 0.2*0.4 = 0.27 (by hand)
    assert m.expected_change_share([5, 3, 2]) == pytest.approx(0.27)
    # 2x2 symmetric [[a, 1-a], [1-a, a]] has singular values 1 and 2a-1: cond = 1/(2a-1)
    two = TransitionMatrix([0, 1], [[0.9, 0.1], [0.1, 0.9]])
    assert two.condition_number() == pytest.approx(1 / 0.8)
    assert two.is_invariant([1, 1]) and not two.is_invariant([3, 1])


def test_copy_frozen_and_read_only():
    P = np.array([[0.5, 0.5], [0.5, 0.5]])
    m = TransitionMatrix(["x", "y"], P)
    P[0, 0] = 9  # the caller's array is not the matrix's
    assert m.P[0, 0] == 0.5
    with pytest.raises(ValueError):
        m.P[0, 0] = 1.0
    with pytest.raises(AttributeError):
        m.categories = ("z",)


@pytest.mark.parametrize("P, words", [
    ([[0.9, 0.2], [0.5, 0.5]], ["do not sum to 1", "'a'", "1.1"]),
    ([[1.2, -0.2], [0.5, 0.5]], ["negative", "P['a', 'b']", "-0.2"]),
    ([[np.nan, 1], [0.5, 0.5]], ["non-finite"]),
])
def test_bad_matrices(P, words):
    with pytest.raises(InputError) as e:
        TransitionMatrix(["a", "b"], P)
    for w in words:
        assert w in str(e.value)


def test_bad_shapes_and_labels():
    with pytest.raises(InputError, match="square"):
        TransitionMatrix(["a", "b"], np.ones((2, 3)) / 3)
    with pytest.raises(InputError, match="2 x 2 but 3 category labels"):
        TransitionMatrix(["a", "b", "c"], np.eye(2))
    with pytest.raises(InputError, match="repeat"):
        TransitionMatrix(["a", "a"], np.eye(2))


def test_match_reorders_and_names_missing_and_extra():
    m = small()
    r = m.match(["c", "a", "b"])
    assert r.categories == ("c", "a", "b")
    assert r.P[0, 0] == 0.6 and r.P[1, 2] == 0.1  # P[c, c], P[a, b]
    with pytest.raises(InputError) as e:
        m.match(["a", "b", "d", "e"], variable="occupation")
    msg = str(e.value)
    assert "'occupation' has 2 categories not in the transition matrix: 'd', 'e'" in msg
    assert "the matrix has 1 categories 'occupation' does not have: 'c'" in msg


def test_match_text_labels_to_integer_categories():
    m = TransitionMatrix.from_csv(TransitionMatrix([1, 2], [[0.7, 0.3], [0.4, 0.6]]).to_csv())
    assert m.categories == ("1", "2")
    r = m.match([2, 1])
    assert r.categories == (2, 1) and r.P[0, 0] == 0.6


def test_csv_json_round_trip_exact(tmp_path):
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(6), size=6)
    P /= P.sum(axis=1, keepdims=True)
    m = TransitionMatrix([f"c{i}" for i in range(6)], P, ("v",))
    for suffix in (".csv", ".json"):
        path = tmp_path / f"m{suffix}"
        m.write(path)
        back = TransitionMatrix.read(path)
        assert back.categories == m.categories
        assert np.array_equal(back.to_dense(), P)  # repr floats: exact
        assert back.variables == ("v",)


def test_joint_and_sparse_round_trip():
    cats = [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    P = sp.csr_matrix(np.array([[0.9, 0.1, 0, 0], [0, 1, 0, 0], [0, 0, 0.5, 0.5], [0.25, 0, 0, 0.75]]))
    m = TransitionMatrix(cats, P, ("x", "y"))
    assert m.is_sparse and m.min_diagonal == 0.5
    j = TransitionMatrix.from_json(m.to_json())
    assert j.categories == tuple(cats) and j.is_sparse
    assert np.array_equal(j.to_dense(), P.toarray())
    c = TransitionMatrix.from_csv(m.to_csv())  # long format, text labels
    assert c.match(cats).categories == tuple(cats)
    assert np.array_equal(c.match(cats).to_dense(), P.toarray())
    # dense joint CSV keeps the tuple labels
    d = TransitionMatrix(cats, P.toarray(), ("x", "y"))
    back = TransitionMatrix.from_csv(d.to_csv())
    assert back.variables == ("x", "y") and back.categories[0] == ("a", "1")


def test_sparse_condition_number_matches_dense_one_norm():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(30) * 0.2, size=30) * 0.3 + 0.7 * np.eye(30)
    P /= P.sum(axis=1, keepdims=True)
    m = TransitionMatrix(range(30), sp.csr_matrix(P))
    # Hager's estimate is a lower bound of the exact 1-norm condition (numpy), exact here
    exact = np.linalg.cond(P, 1)
    assert exact / 2 <= m.condition_number() <= exact * (1 + 1e-9)
    assert TransitionMatrix(range(30), P).condition_number() == pytest.approx(exact, rel=1e-12)


def test_csv_errors_name_the_problem():
    with pytest.raises(InputError, match="not a number"):
        TransitionMatrix.from_csv("o \\ released,a,b\na,0.5,x\nb,0.5,0.5\n")
    with pytest.raises(InputError, match="row labels must equal the column labels"):
        TransitionMatrix.from_csv("o \\ released,a,b\na,0.5,0.5\nc,0.5,0.5\n")
    with pytest.raises(InputError, match="does not exist"):
        TransitionMatrix.read("/nonexistent/m.csv")
