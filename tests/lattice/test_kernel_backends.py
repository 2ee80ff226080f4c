"""The numpy twins of the lattice kernels (sdckit.lattice._kernels_np) against the numba kernels.

Each twin must return exactly what its numba kernel returns (values, dtypes, order) on the same
inputs, so the backend :mod:`sdckit.lattice._kernels` picks changes the search's speed and never
its result. The reference is the numba kernel itself (sdckit.lattice._kernels_nb), run on a copy
of the inputs; a search on random problems gives the same result on either backend.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.lattice import Evaluator, Problem, exact, heuristic
from sdckit.lattice import _kernels as K
from sdckit.lattice import _kernels_nb as NB
from sdckit.lattice import _kernels_np as NP

from .test_search import MODELS, S_HIER, random_problem


def same(a, b) -> None:
    """Equal values and types, element by element (arrays: dtype and shape too)."""
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b)
    else:
        assert a == b and float(a) == float(b), (a, b)


@st.composite
def keyed_rows(draw, dense: bool = False):
    m = draw(st.integers(0, 60))
    size = draw(st.integers(1, 40))
    keys = np.array(draw(st.lists(st.integers(0, size - 1) if dense else st.integers(-2**40, 2**40)
                                  if draw(st.booleans()) else st.integers(0, 7), min_size=m, max_size=m)),
                    dtype=np.int64)
    counts = np.array(draw(st.lists(st.integers(1, 9), min_size=m, max_size=m)), dtype=np.int64)
    wsum = np.array(draw(st.lists(st.floats(0.1, 50.0), min_size=m, max_size=m)), dtype=np.float64)
    return keys, counts, wsum, size


@settings(max_examples=150, deadline=None)
@given(rows=keyed_rows())
def test_group_is_numbas(rows):
    keys, counts, wsum, _ = rows
    same(NP.group(keys, counts, wsum), NB.group(keys, counts, wsum))


@settings(max_examples=150, deadline=None)
@given(rows=keyed_rows(dense=True))
def test_group_dense_is_numbas(rows):
    keys, counts, wsum, size = rows
    same(NP.group_dense(keys, counts, wsum, size), NB.group_dense(keys, counts, wsum, size))


@st.composite
def coded_tables(draw):
    """Raw codes of q quasi-identifiers with L levels each and their code maps per level."""
    q, n_levels, r_max = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 6))
    m = draw(st.integers(1, 50))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ncodes = rng.integers(1, r_max + 1, size=(q, n_levels)).astype(np.int64)
    if draw(st.booleans()):
        ncodes *= 3000  # a large key space: the hashed grouping
    cm3 = np.stack([np.stack([rng.integers(0, ncodes[j, lv], size=r_max) for lv in range(n_levels)])
                    for j in range(q)]).astype(np.int32)
    raw = rng.integers(0, r_max, size=(m, q)).astype(np.int8)
    lv = rng.integers(0, n_levels, size=q).astype(np.int64)
    counts = rng.integers(1, 5, size=m).astype(np.int64)
    wsum = rng.random(m)
    return raw, counts, wsum, cm3, lv, ncodes


@settings(max_examples=150, deadline=None)
@given(t=coded_tables())
def test_rollup_and_stage_keys_are_numbas(t):
    raw, counts, wsum, cm3, lv, ncodes = t
    same(NP.rollup(raw, counts, wsum, cm3, lv, ncodes), NB.rollup(raw, counts, wsum, cm3, lv, ncodes))
    q = raw.shape[1]
    cmn = np.ascontiguousarray(cm3[np.arange(q), lv])
    cols = np.arange(q, dtype=np.int64)[::-1].copy()
    mults = np.cumprod(np.r_[1, ncodes[np.arange(q), lv][:-1]]).astype(np.int64)
    rep = np.arange(raw.shape[0], dtype=np.int32)[::-1].copy()
    for keys_in in (np.empty(0, np.int64), np.arange(raw.shape[0], dtype=np.int64)):
        same(NP.stage_keys(keys_in, 7, raw, rep, cmn, cols, mults),
             NB.stage_keys(keys_in, 7, raw, rep, cmn, cols, mults))
    first = np.unique(rep[: max(1, rep.size // 2)]).astype(np.int64)
    taken = NB.take_rows(raw, rep, first, ncodes, lv)
    same(NP.take_rows(raw, rep, first, ncodes, lv), taken)
    # column-major copies of the first rows' codes (numpy's fancy indexing is the reference),
    # 0 in the columns with one code at lv; a roll-up from them reads the same classes
    assert taken[0].flags.f_contiguous and np.array_equal(taken[1], rep[first])
    multi = ncodes[np.arange(q), lv] > 1
    assert np.array_equal(taken[0][:, multi], raw[first][:, multi]) and not taken[0][:, ~multi].any()
    col_major = np.asfortranarray(raw)
    same(NB.rollup(col_major, counts, wsum, cm3, lv, ncodes), NB.rollup(raw, counts, wsum, cm3, lv, ncodes))
    sub = (taken[0], counts[first], wsum[first])
    same(NB.rollup(*sub, cm3, lv, ncodes), NB.rollup(raw[first], *sub[1:], cm3, lv, ncodes))


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 30), q=st.integers(1, 4))
def test_slot_lookups_and_class_stats_are_numbas(seed, n, q):
    rng = np.random.default_rng(seed)
    levels = rng.integers(0, 3, size=(n, q)).astype(np.int64)
    rows = rng.integers(0, 6, size=n).astype(np.int64)  # ties: the first slot wins in both
    lv = rng.integers(0, 3, size=q).astype(np.int64)
    for limit in (0, 3, 10**9):
        same(NP.best_slot(levels, rows, lv, limit), NB.best_slot(levels, rows, lv, limit))
    for count in (0, n // 2, n):
        same(NP.largest_above(levels, rows, count, lv), NB.largest_above(levels, rows, count, lv))
    size = rng.integers(1, 40, size=n).astype(np.int64)
    ok = rng.random(n) < 0.6
    for k in (1, 2, 5):
        same(NP.class_stats(size, ok, int(size.sum()), k), NB.class_stats(size, ok, int(size.sum()), k))


@st.composite
def lattices(draw):
    """A lattice numbered in C order over a random order of its quasi-identifiers."""
    radix = np.array(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)), dtype=np.int64)
    perm = np.array(draw(st.permutations(range(radix.size))), dtype=np.int64)
    strides = np.empty(radix.size, dtype=np.int64)
    step = 1
    for j in perm[::-1]:
        strides[j] = step
        step *= radix[j]
    return strides, radix, int(step), np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


@settings(max_examples=200, deadline=None)
@given(lat=lattices(), n_tags=st.integers(0, 12))
def test_tagging_a_search_is_numbas(lat, n_tags):
    # statuses made as a search makes them (a monotone model: a node satisfies from some level on)
    strides, radix, n, rng = lat
    threshold = rng.integers(0, radix.sum() + 1)
    ours, ref = np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int8)
    for node in rng.integers(0, n, size=n_tags):
        sat = int(((node // strides) % radix).sum()) >= threshold
        value = np.int8(1 if sat else 2)
        got = K._call("tag", 0, ours, int(node), strides, radix, value, sat)  # the twin, or numba where it refuses
        same(got, NB.tag(ref, int(node), strides, radix, value, sat))
        same(ours, ref)
    pruned = (rng.random(n) < 0.2).astype(np.int8)
    order = rng.permutation(n).astype(np.int64)
    for pos in (0, n // 2, n):
        same(NP.next_open(order, pos, ours, pruned), NB.next_open(order, pos, ref, pruned))
    rel = rng.random(radix.size)
    for start in rng.integers(0, n, size=3):
        same(NP.flash_path(int(start), ours, pruned, strides, radix, rel),
             NB.flash_path(int(start), ref, pruned, strides, radix, rel))
    val = np.where(rng.random(n) < 0.5, rng.random(n), np.inf)
    same(NP.inherited_min(val, strides, radix), NB.inherited_min(val, strides, radix))
    same(NP.inherited_bounds(-val, strides, radix), NB.inherited_bounds(-val, strides, radix))


@settings(max_examples=200, deadline=None)
@given(lat=lattices(), up=st.booleans(), start=st.integers(0, 10**6))
def test_a_tag_the_twin_cannot_prove_is_refused_before_writing(lat, up, start):
    # any statuses at all: the twin either tags exactly as the walk does, or refuses untouched
    strides, radix, n, rng = lat
    status = rng.integers(0, 3, size=n).astype(np.int8)
    ours, ref = status.copy(), status.copy()
    start %= n
    try:
        got = NP.tag(ours, start, strides, radix, np.int8(1), up)
    except NP.NotVectorised:
        same(ours, status)
        return
    same(got, NB.tag(ref, start, strides, radix, np.int8(1), up))
    same(ours, ref)


def test_the_twin_refuses_a_numbering_it_does_not_know():
    strides, radix = np.array([1, 3], dtype=np.int64), np.array([3, 3], dtype=np.int64)  # C order: fine
    NP.tag(np.zeros(9, np.int8), 4, strides, radix, np.int8(1), True)
    with pytest.raises(NP.NotVectorised):  # strides of another shape
        NP.tag(np.zeros(9, np.int8), 4, np.array([1, 4], dtype=np.int64), radix, np.int8(1), True)
    ours, ref = np.zeros(18, np.int8), np.zeros(18, np.int8)  # a strided view: written through
    same(NP.tag(ours[::2], 4, strides, radix, np.int8(1), True), NB.tag(ref[::2], 4, strides, radix, np.int8(1), True))
    same(ours, ref)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), model=st.sampled_from(sorted(MODELS)),
       metric=st.sampled_from(["discernibility", "loss", "precision"]), suppression=st.sampled_from([0.0, 0.1]))
def test_a_search_gives_the_same_result_on_either_backend(seed, model, metric, suppression):
    df, qis, hier, _, pop = random_problem(seed, population=model == "delta")
    results = {}
    try:
        for name in ("numpy", "numba"):
            K.use(name)
            p = Problem(df, qis, hier, sensitive="s", sensitive_hierarchy=S_HIER, population=pop)
            try:
                r = exact(Evaluator(p, MODELS[model](), suppression, metric))
                h = heuristic(Evaluator(p, MODELS[model](), suppression, metric), max_nodes=3)
            except Exception as exc:  # the same refusal on both (no node satisfies...)
                results[name] = repr(exc)
                continue
            results[name] = (r.levels, r.value, r.bound, r.n_suppressed, r.n_classes, r.nodes_checked,
                             h.levels, h.value, h.nodes_checked)
    finally:
        K.use("auto")
    assert results["numpy"] == results["numba"]


def test_auto_starts_on_numpy_and_moves_to_numba_for_good():
    # in a fresh process (this one has numba loaded): small calls stay on numpy and load no
    # numba; a call on more rows than NUMPY_MAX_ROWS moves to numba, and so does a spent budget
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from sdckit.lattice import _kernels as K\n"
            "k = np.arange(10, dtype=np.int64); c = np.ones(10, np.int64); w = np.ones(10)\n"
            "K.group(k, c, w); print(K.backend(), 'numba' in sys.modules)\n"
            "K.NUMPY_MAX_ROWS = 5; K.group(k, c, w); print(K.backend(), 'numba' in sys.modules)\n"
            "K.use('auto'); K.NUMPY_MAX_ROWS = 10**9; K.NUMPY_CPU_BUDGET = -1.0; print(K.backend())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.split("\n")[:3] == ["numpy False", "numba True", "numba"], proc.stdout


def test_auto_moves_to_numba_on_the_second_large_rollup():
    # in a fresh process: the first roll-up on more than NUMPY_MAX_ROLLUP_ROWS rows (the base
    # table, built once) stays on numpy; the second (a search rolling up node after node) moves
    # to numba for good; smaller roll-ups never count
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from sdckit.lattice import _kernels as K\n"
            "K.NUMPY_MAX_ROLLUP_ROWS = 5; K.NUMPY_MAX_ROWS = 10**9\n"
            "cm3 = np.zeros((1, 1, 2), np.int32); cm3[0, 0, 1] = 1; nc = np.full((1, 1), 2, np.int64)\n"
            "lv = np.zeros(1, np.int64)\n"
            "def roll(m):\n"
            "    K.rollup((np.arange(m) % 2).astype(np.int8).reshape(m, 1), np.ones(m, np.int64), np.ones(m), cm3,"
            " lv, nc)\n"
            "    return K.backend() + ' ' + str('numba' in sys.modules)\n"
            "print(roll(4), roll(6), roll(4), roll(6), roll(4))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.split("\n")[0] == "numpy False numpy False numpy False numba True numba True", proc.stdout
