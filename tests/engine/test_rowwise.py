"""Row-wise steps on partitioned data: the released values are the in-memory step's for any
partitioning (a property, checked with hypothesis), and the spec-level errors are the
in-memory step's."""

from __future__ import annotations

import dask
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.engine.frame import from_pandas, same_values
from sdckit.engine.rowwise import RowwiseStep, distinct_values, fit_rowwise, rowwise_partitioned
from sdckit.errors import InputError
from sdckit.masking.recode import Recode
from sdckit.masking.remove import RemoveVariables
from sdckit.microdata import Microdata


def _frame(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(0, 12, n), "job": rng.choice(list("abcd"), n),
                       "pay": rng.normal(30.0, 8.0, n), "note": rng.integers(0, 5, n)})
    df.loc[df.index[::7], "pay"] = np.nan
    return df


def _run(df: pd.DataFrame, step, method: str, npartitions: int, **roles) -> pd.DataFrame:
    pmd = from_pandas(df, npartitions=npartitions, **roles)
    s = RowwiseStep(step, method)
    with dask.config.set(scheduler="synchronous"):
        values = distinct_values(pmd, s)
        values = None if values is None else values.compute()
        out = rowwise_partitioned(pmd, fit_rowwise(pmd, s, values))
        return out.frame.compute().reset_index(drop=True), out


def _same(a: pd.Series, b: pd.Series) -> bool:
    """Equal values, missing where the other is missing (1 equals 1.0, 'x' equals 'x')."""
    na = a.isna().to_numpy()
    return bool((na == b.isna().to_numpy()).all()
                and (a[~na].astype(object).to_numpy() == b[~na].astype(object).to_numpy()).all())


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 120), parts=st.integers(1, 6),
       mode=st.sampled_from(["mapping_key", "mapping_plain", "breaks", "top_bottom", "top_key"]))
def test_any_partitioning_gives_the_in_memory_values(seed, n, parts, mode):
    df = _frame(seed, n)
    step = {"mapping_key": Recode(variable="job", mapping={"ab": ["a", "b"]}, others="keep"),
            "mapping_plain": Recode(variable="note", mapping={"low": [0, 1], "high": [2, 3, 4]}),
            "breaks": Recode(variable="pay", breaks=[-np.inf, 25.0, 35.0, np.inf]),
            "top_bottom": Recode(variable="pay", top=40.0, bottom=20.0),
            "top_key": Recode(variable="age", top=9)}[mode]
    roles = {"key_vars": ["age", "job"]}
    # the mappings name values that must occur (the in-memory step refuses unknown ones)
    df.loc[df.index[:2], "job"] = ["a", "b"]
    df.loc[df.index[:5], "note"] = np.arange(5)
    out, pmd_after = _run(df, step, "recode", min(parts, n), **roles)
    # the reference: the in-memory step on the whole frame
    expected = step.apply(Microdata(df, **roles)).microdata.frame
    var = step.variable
    assert _same(out[var], expected[var])
    others = [c for c in df.columns if c != var]
    assert same_values(out[others], df[others])  # every other column untouched
    if var in roles["key_vars"]:  # a recoded key gets its released values as categories
        assert set(pmd_after.categories[var]) == set(expected[var].dropna())


def test_remove_drops_the_columns_in_every_partition():
    df = _frame(1, 50)
    out, _ = _run(df, RemoveVariables(variables=["note"]), "remove", 3, key_vars=["age"])
    assert list(out.columns) == ["age", "job", "pay"] and same_values(out, df.drop(columns=["note"]))


def test_errors_are_the_in_memory_step_errors():
    df = _frame(2, 40)
    with pytest.raises(InputError, match="remove: column 'age' holds the key_vars role"):
        _run(df, RemoveVariables(variables=["age"]), "remove", 2, key_vars=["age"])
    with pytest.raises(InputError, match="remove: column 'nope' does not exist"):
        _run(df, RemoveVariables(variables=["nope"]), "remove", 2)
    with pytest.raises(InputError, match=r"recode: 'job' has no values \['z'\]"):
        _run(df, Recode(variable="job", mapping={"x": ["z"]}), "recode", 2, key_vars=["job"])
