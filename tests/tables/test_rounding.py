import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError, ParameterError
from sdckit.tables.rounding import ControlledRounding, check_rounding
from sdckit.tables.table import Hierarchy, Table

from .helpers import seed_table, table_2d

# the seed's base-3 controlled rounding of the delinquent-children table (rows Total, Alpha,
# Beta, Gamma, Delta; columns Total, Low, Medium, High, VeryHigh)
SEED_ROUNDED = np.array([[135, 51, 33, 30, 21], [18, 15, 0, 3, 0], [57, 21, 9, 12, 15],
                         [24, 3, 9, 9, 3], [36, 12, 15, 6, 3]])

ROW_HRC = "A\n@a1\n@a2\n@a3\nB\n@b1\n@b2\n"


def _table(inner: np.ndarray, hierarchical_rows: bool, transpose: bool = False) -> Table:
    """A 2-D table from inner counts; rows flat or a 2-level hierarchy (A: a1-a3, B: b1-b2)."""
    if not hierarchical_rows:
        return table_2d(inner.T if transpose else inner)
    h = Hierarchy.from_hrc(ROW_HRC)
    rows = list(h.leaves)
    cols = [f"c{j}" for j in range(inner.shape[1])]
    df = pd.DataFrame([(r, c, inner[i, j]) for i, r in enumerate(rows) for j, c in enumerate(cols)],
                      columns=["row", "col", "n"])
    hs = {"row": h, "col": Hierarchy.flat(cols)}
    dims = ["col", "row"] if transpose else ["row", "col"]
    return Table.from_cells(df, dims, "n", hierarchies=hs)


tables = st.builds(lambda seed, hier, tr, base: (seed, hier, tr, base), st.integers(0, 10_000),
                   st.booleans(), st.booleans(), st.sampled_from([2, 3, 5, 10]))


@settings(max_examples=25)
@given(tables)
def test_rounding_is_additive_and_zero_restricted_on_2d_tables(case):
    seed, hier, tr, base = case
    rng = np.random.default_rng(seed)
    inner = rng.integers(0, 30, size=(5 if hier else int(rng.integers(2, 6)), int(rng.integers(2, 6))))
    inner[rng.random(inner.shape) < 0.2] = 0
    t = _table(inner, hier, tr)
    for method in ("optimal", "unbiased"):
        res = ControlledRounding(base=base, method=method, intervals=False).apply(t, rng=seed)
        c = check_rounding(t, res.rounded, base, zero_restricted=True)
        assert c == {"multiples": True, "additive": True, "adjacent": True}
        assert res.zero_restricted
        # independent restatement: every cell within one base, multiples (zeros too) kept
        d = res.rounded - t.value
        assert np.all(np.abs(d) < base) and np.all(res.rounded[t.value % base == 0] == t.value[t.value % base == 0])


def test_seed_rounding_is_a_valid_controlled_rounding_and_ours_is_no_farther():
    t = seed_table()
    seed_r = SEED_ROUNDED.reshape(-1).astype(float)
    assert check_rounding(t, seed_r, 3) == {"multiples": True, "additive": True, "adjacent": True}
    res = ControlledRounding(base=3).apply(t)
    assert np.abs(res.rounded - t.value).sum() <= np.abs(seed_r - t.value).sum()
    # the original lies in every cell's interval given the rounded table
    iv = res.intervals
    assert np.all(iv.lower <= t.value[iv.cells] + 1e-9) and np.all(t.value[iv.cells] <= iv.upper + 1e-9)
    assert np.all(iv.upper - iv.lower <= 2 * (3 - 1) + 1e-9)  # never wider than the uniform interval


def test_unbiased_mean_equals_the_original_within_its_standard_error():
    t = seed_table()
    n_runs = 1500
    ss = np.random.SeedSequence(2024).spawn(n_runs)
    runs = np.array([ControlledRounding(base=3, method="unbiased", intervals=False)
                     .apply(t, rng=np.random.default_rng(s)).rounded for s in ss])
    mean, se = runs.mean(0), runs.std(0, ddof=1) / np.sqrt(n_runs)
    # cells that are multiples never move; the others: |mean - a| within 4 standard errors
    fixed = t.value % 3 == 0
    assert np.all(runs[:, fixed] == t.value[fixed])
    z = np.abs(mean[~fixed] - t.value[~fixed]) / se[~fixed]
    assert z.max() < 4.0
    # a cell with fractional part e/b goes up with probability e/b (Cox 1987): Alpha/Medium = 1 -> P(3) = 1/3
    k = t.cell_index("Alpha", "Medium")
    assert abs((runs[:, k] == 3).mean() - 1 / 3) < 4 * np.sqrt(2 / 9 / n_runs)


def test_unbiased_is_reproducible_with_a_seed():
    t = seed_table()
    a = ControlledRounding(base=3, method="unbiased").apply(t, rng=7).rounded
    b = ControlledRounding(base=3, method="unbiased").apply(t, rng=7).rounded
    assert np.array_equal(a, b)


def test_three_dimensional_rounding_by_ilp():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.choice(list("pqr"), 300), "b": rng.choice(list("xyz"), 300),
                       "c": rng.choice(list("uvw"), 300)})
    t = Table.from_microdata(df, ["a", "b", "c"])
    res = ControlledRounding(base=5, intervals=False).apply(t)
    c = check_rounding(t, res.rounded, 5, zero_restricted=res.zero_restricted)
    assert all(c.values())
    with pytest.raises(InputError, match="2-D"):
        ControlledRounding(base=5, method="unbiased").apply(t)


def test_non_additive_or_bad_parameters():
    with pytest.raises(ParameterError, match="base"):
        ControlledRounding(base=1)
    with pytest.raises(ParameterError, match="method"):
        ControlledRounding(method="random")


def test_3d_table_without_a_zero_restricted_rounding():
    # a 3x3x3 table (found by a search over random tables) for which base-2 zero-restricted
    # controlled rounding does not exist
    inner = np.array([[[1, 2, 2], [0, 0, 1], [2, 2, 1]], [[2, 2, 2], [2, 2, 2], [2, 0, 0]],
                      [[2, 1, 2], [1, 2, 0], [2, 0, 0]]])
    idx = list(np.ndindex(inner.shape))
    df = pd.DataFrame([(f"a{i}", f"b{j}", f"c{k}", inner[i, j, k]) for i, j, k in idx], columns=list("abcn"))
    hs = {d: Hierarchy.flat([f"{d}{i}" for i in range(3)]) for d in "abc"}
    t = Table.from_cells(df, list("abc"), "n", hierarchies=hs)
    # reference by enumeration: a zero-restricted rounding fixes the even inner cells and moves
    # each odd one by +-1; none of the 2^5 choices gives every total adjacent (and even totals kept)
    odd = [c for c in idx if inner[c] % 2]
    full = np.zeros((4, 4, 4))
    exists = False
    for signs in np.array(np.meshgrid(*[[-1, 1]] * len(odd), indexing="ij")).reshape(len(odd), -1).T:
        r = inner.astype(float).copy()
        for c, s in zip(odd, signs):
            r[c] += s
        full[1:, 1:, 1:] = r
        for ax in range(3):  # fill the totals (index 0 along each axis)
            full = np.moveaxis(full, ax, 0)
            full[0] = full[1:].sum(0)
            full = np.moveaxis(full, 0, ax)
        d = full.reshape(-1) - t.value
        even = t.value % 2 == 0
        exists |= bool(np.all(np.abs(d) < 2) and np.all(d[even] == 0))
    assert not exists
    res = ControlledRounding(base=2, intervals=False).apply(t)
    assert not res.zero_restricted and "no zero-restricted" in res.status
    assert all(check_rounding(t, res.rounded, 2, zero_restricted=False).values())
    from sdckit.errors import SolverError
    with pytest.raises(SolverError, match="allow_non_zero_restricted"):
        ControlledRounding(base=2, intervals=False, allow_non_zero_restricted=False).apply(t)


def test_unbiased_on_a_larger_table_stays_exact():
    # long cycles on a 60 x 60 table: the walk works in integer units of 1/b, so no round-off
    rng = np.random.default_rng(9)
    t = table_2d(rng.integers(0, 40, size=(60, 60)))
    res = ControlledRounding(base=5, method="unbiased", intervals=False).apply(t, rng=3)
    assert check_rounding(t, res.rounded, 5) == {"multiples": True, "additive": True, "adjacent": True}
