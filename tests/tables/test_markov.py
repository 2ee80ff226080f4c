"""Markov bases: built-in 2-way moves, 4ti2 for K-way tables, cache, missing program."""

import shutil

import numpy as np
import pytest

from sdckit.tables.markov import FourTi2Missing, basic_moves, design_matrix, is_move, markov_basis

HAS_4TI2 = shutil.which("4ti2-markov") or shutil.which("markov")
needs_4ti2 = pytest.mark.skipif(not HAS_4TI2, reason="4ti2-markov (Debian package 4ti2) is not installed")


def test_basic_moves():
    m = basic_moves(3, 4)
    assert m.shape == (3 * 6, 3, 4)  # C(3,2) * C(4,2)
    assert not m.sum(axis=1).any() and not m.sum(axis=2).any()
    assert (np.abs(m).sum(axis=(1, 2)) == 4).all()
    assert len({x.tobytes() for x in m}) == len(m)


def test_design_matrix_gives_margins():
    t = np.arange(24).reshape(2, 3, 4)
    A = design_matrix(t.shape, [(0, 1), (2,)])
    assert np.array_equal(A @ t.ravel(), np.concatenate([t.sum(2).ravel(), t.sum((0, 1))]))


@needs_4ti2
@pytest.mark.parametrize("shape,size", [((3, 3, 3), 81), ((4, 3, 3), 450)])
def test_no_three_way_basis_sizes(shape, size, tmp_path):
    # sizes of the minimal Markov bases of the no-3-way model (Aoki & Takemura 2003: 81 and 450)
    moves = markov_basis(shape, cache_dir=tmp_path)
    assert moves.shape == (size,) + shape
    assert is_move(moves, shape, [(0, 1), (0, 2), (1, 2)]).all()


@needs_4ti2
def test_cache_on_disk(tmp_path, monkeypatch):
    first = markov_basis((2, 2, 3), cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.npy"))) == 1
    import sdckit.tables.markov as mk
    monkeypatch.setattr(mk, "_MEMORY", {})
    monkeypatch.setattr(mk, "find_4ti2", lambda program=None: pytest.fail("4ti2 called despite the cache"))
    again = markov_basis((2, 2, 3), cache_dir=tmp_path)
    assert np.array_equal(first, again)


def test_2way_needs_no_program():
    assert np.array_equal(markov_basis((3, 3), [(0,), (1,)], program="no-such-4ti2"), basic_moves(3, 3))


def test_missing_program_names_the_package(tmp_path):
    with pytest.raises(FourTi2Missing, match="Debian package '4ti2'"):
        markov_basis((3, 3, 2), program="no-such-4ti2-program", cache=False)
