"""Markov bases of contingency tables with fixed margins.

A Markov basis is a set of integer *moves* (tables with zero margins) that connects every
fibre — the set of non-negative tables with given margins — so a random walk using them can
reach every table (Diaconis and Sturmfels 1998).

* :func:`basic_moves` — the degree-2 moves ``+1 (i,j), +1 (k,l), -1 (i,l), -1 (k,j)`` of a
  2-way table with fixed row and column sums (built in; they form a Markov basis).
* :func:`markov_basis` — any K-way table and any set of fixed margins (a hierarchical model,
  e.g. the no-three-way-interaction model of an I x J x K table with its three 2-way
  margins) through Debian's ``4ti2-markov`` (package ``4ti2``), called with ``-p 64`` and
  again with arbitrary precision if 64-bit arithmetic overflows. Bases depend only on the
  shape and the margins, so they are cached in memory and on disk.

References
----------
Diaconis, P. and Sturmfels, B. (1998). Algebraic algorithms for sampling from conditional
distributions. *Annals of Statistics* 26, 363-397.
Roehrig, S. F. (2002). *Disclosure Limitation in Large Statistical Databases* (CMU/Pitt seminar):
"Computing Groebner bases" — 3x3x3 in 25 ms, 4x3x3 in 20 minutes, 5x3x3 in 3 months.
4ti2 team. 4ti2 — A software package for algebraic, geometric and combinatorial problems on
linear spaces. https://4ti2.github.io
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import InputError, SDCError, SolverError

__all__ = ["FourTi2Missing", "basic_moves", "design_matrix", "markov_basis", "find_4ti2",
           "no_three_way_margins", "is_move"]

_PROGRAMS = ("4ti2-markov", "markov")
_MEMORY: dict[str, np.ndarray] = {}


class FourTi2Missing(SDCError):
    """The ``4ti2-markov`` program (Debian package ``4ti2``) is not installed."""

    exit_code = 4


def basic_moves(n_rows: int, n_cols: int) -> np.ndarray:
    """The degree-2 basic moves of an ``n_rows x n_cols`` table, shape ``(m, R, C)``.

    ``m = C(R, 2) * C(C, 2)``; each move has ``+1`` at ``(i, j)`` and ``(k, l)`` and ``-1`` at
    ``(i, l)`` and ``(k, j)`` for ``i < k``, ``j < l`` (the polynomial ``x_ij x_kl - x_il x_kj``
    of the seed's "Transform to an algebraic problem").
    """
    if n_rows < 2 or n_cols < 2:
        raise InputError(f"basic moves need at least 2 rows and 2 columns; got {n_rows} x {n_cols}")
    pairs_r = np.array(list(itertools.combinations(range(n_rows), 2)))
    pairs_c = np.array(list(itertools.combinations(range(n_cols), 2)))
    i = np.repeat(pairs_r[:, 0], len(pairs_c))
    k = np.repeat(pairs_r[:, 1], len(pairs_c))
    j = np.tile(pairs_c[:, 0], len(pairs_r))
    l_ = np.tile(pairs_c[:, 1], len(pairs_r))
    m = np.arange(i.size)
    moves = np.zeros((i.size, n_rows, n_cols), np.int64)
    moves[m, i, j] = 1
    moves[m, k, l_] = 1
    moves[m, i, l_] = -1
    moves[m, k, j] = -1
    return moves


def no_three_way_margins(ndim: int = 3) -> tuple[tuple[int, ...], ...]:
    """All ``ndim - 1``-way margins (the model without the highest interaction)."""
    return tuple(itertools.combinations(range(ndim), ndim - 1))


def _check_shape_margins(shape, margins) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    shape = tuple(int(s) for s in shape)
    if len(shape) < 2 or any(s < 2 for s in shape):
        raise InputError(f"a Markov basis needs a table with >= 2 dimensions of >= 2 levels each; got shape {shape}")
    out = []
    for m in margins:
        m = tuple(sorted(int(a) for a in m))
        if not m or len(set(m)) != len(m) or any(a < 0 or a >= len(shape) for a in m):
            raise InputError(f"margin {m} must name distinct axes among 0..{len(shape) - 1}")
        out.append(m)
    if not out:
        raise InputError("give at least one fixed margin (a tuple of axes)")
    return shape, tuple(sorted(set(out)))


def design_matrix(shape: Sequence[int], margins: Sequence[Sequence[int]]) -> np.ndarray:
    """The 0/1 matrix ``A`` with ``A @ t.ravel()`` = the fixed margins of ``t`` (C order cells)."""
    shape, margins = _check_shape_margins(shape, margins)
    n = int(np.prod(shape))
    idx = np.indices(shape).reshape(len(shape), n)
    blocks = []
    for m in margins:
        sub = tuple(shape[a] for a in m)
        row = np.ravel_multi_index(tuple(idx[a] for a in m), sub)
        block = np.zeros((int(np.prod(sub)), n), np.int64)
        block[row, np.arange(n)] = 1
        blocks.append(block)
    return np.vstack(blocks)


def is_move(moves: np.ndarray, shape: Sequence[int], margins: Sequence[Sequence[int]]) -> np.ndarray:
    """For each move (rows of ``moves``, cells in C order) whether all its fixed margins are zero."""
    A = design_matrix(shape, margins)
    M = np.asarray(moves).reshape(len(moves), -1)
    return ~(M @ A.T).any(axis=1)


def find_4ti2(program: str | None = None) -> str:
    """Path of the 4ti2 Markov program, or :class:`FourTi2Missing` naming the package."""
    names = (program,) if program else _PROGRAMS
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    raise FourTi2Missing(
        f"Markov bases of K-way tables need the program {' or '.join(repr(n) for n in names)} from the "
        "Debian package '4ti2' (install it with: apt-get install 4ti2); it was not found on PATH. "
        "2-way tables need no program: use basic_moves().")


def _cache_dir() -> Path:
    base = os.environ.get("SDCKIT_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "sdckit")
    return Path(base) / "markov"


def markov_basis(shape: Sequence[int], margins: Sequence[Sequence[int]] | None = None, *,
                 program: str | None = None, cache: bool = True, cache_dir: str | Path | None = None,
                 timeout: float | None = 600.0) -> np.ndarray:
    """A (minimal) Markov basis for tables of ``shape`` with the given fixed margins.

    Parameters
    ----------
    shape : sequence of int
        Table shape, e.g. ``(3, 3, 3)``.
    margins : sequence of tuples of axes, optional
        The fixed margins; default all ``(ndim - 1)``-way margins (for 3-way tables the
        no-three-way-interaction model). For a 2-way table with margins ``(0,), (1,)`` the
        built-in :func:`basic_moves` are returned without calling 4ti2.
    program : str, optional
        Name or path of the 4ti2 program (default: ``4ti2-markov``, then ``markov``).
    cache : bool
        Keep bases in memory and on disk (``$SDCKIT_CACHE`` or ``~/.cache/sdckit``, folder
        ``markov``; or ``cache_dir``), keyed by the shape and margins.
    timeout : float, optional
        Seconds allowed to 4ti2.

    Returns
    -------
    ndarray of int64, shape (n_moves, *shape)
        One move per row (each with zero fixed margins), sign-normalised so the first
        non-zero entry is positive.

    Raises
    ------
    FourTi2Missing
        When the program is not installed (for K-way tables).
    SolverError
        When 4ti2 fails with both 64-bit and arbitrary precision.
    """
    shape = tuple(int(s) for s in shape)
    if margins is None:
        margins = no_three_way_margins(len(shape))
    shape, margins = _check_shape_margins(shape, margins)
    if len(shape) == 2 and margins == ((0,), (1,)):
        return basic_moves(*shape)
    key = hashlib.sha1(repr((shape, margins)).encode()).hexdigest()[:16]
    if cache and key in _MEMORY:
        return _MEMORY[key].copy()
    folder = Path(cache_dir) if cache_dir is not None else _cache_dir()
    path = folder / f"{'x'.join(map(str, shape))}_{key}.npy"
    if cache and path.exists():
        moves = np.load(path)
        _MEMORY[key] = moves
        return moves.copy()
    exe = find_4ti2(program)
    A = design_matrix(shape, margins)
    flat = _run_4ti2(exe, A, timeout)
    moves = _normalise(flat).reshape((-1,) + shape)
    if not is_move(moves, shape, margins).all():
        raise SolverError("4ti2 returned vectors that are not moves of the model (non-zero margins)")
    if cache:
        _MEMORY[key] = moves
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, moves)
            os.replace(tmp, path)
        except OSError:  # a read-only home: the memory cache still works
            pass
    return moves.copy()


def _run_4ti2(exe: str, A: np.ndarray, timeout: float | None) -> np.ndarray:
    """Run ``exe -p 64`` (then ``-p arbitrary`` on overflow) on matrix ``A``; the .mar rows."""
    with tempfile.TemporaryDirectory(prefix="sdckit4ti2") as tmp:
        project = os.path.join(tmp, "model")
        with open(project + ".mat", "w") as fh:
            fh.write(f"{A.shape[0]} {A.shape[1]}\n")
            fh.writelines(" ".join(map(str, row)) + "\n" for row in A)
        last = None
        for precision in ("64", "arbitrary"):
            try:
                proc = subprocess.run([exe, "-q", "-p", precision, project], capture_output=True, text=True,
                                      timeout=timeout, cwd=tmp)
            except subprocess.TimeoutExpired as exc:
                raise SolverError(f"4ti2 ({exe}) did not finish within {timeout} s for a model with "
                                  f"{A.shape[1]} cells; raise the timeout") from exc
            text = (proc.stdout + proc.stderr).lower()
            if proc.returncode == 0 and os.path.exists(project + ".mar") and "overflow" not in text:
                return _read_mar(project + ".mar")
            last = (proc.returncode, (proc.stderr or proc.stdout).strip()[-400:])
            if "overflow" not in text and proc.returncode == 0:
                break
        raise SolverError(f"4ti2 ({exe}) failed (exit {last[0]}): {last[1]}")


def _read_mar(path: str) -> np.ndarray:
    with open(path) as fh:
        head = fh.readline().split()
        n, m = int(head[0]), int(head[1])
        data = np.array(fh.read().split(), dtype=object)
    vals = np.array([int(v) for v in data], dtype=object)
    if vals.size != n * m:
        raise SolverError(f"4ti2 output {path} is truncated ({vals.size} numbers for {n} x {m})")
    if n and max(abs(int(v)) for v in vals) >= 2**62:
        raise SolverError("a Markov move has entries beyond 64-bit integers; not supported")
    return vals.astype(np.int64).reshape(n, m)


def _normalise(flat: np.ndarray) -> np.ndarray:
    """Sign so the first non-zero entry is positive; rows in lexicographic order."""
    if flat.size == 0:
        return flat
    first = flat[np.arange(len(flat)), (flat != 0).argmax(axis=1)]
    out = flat * np.where(first < 0, -1, 1)[:, None]
    order = np.lexsort(out.T[::-1])
    return out[order]
