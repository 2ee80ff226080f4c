"""Per-column missing codes (``[input] na_values = { Health = [-9] }``) on the Dask engine: a
code declared missing in one column is missing there only, as in the in-memory reader."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask")

from sdckit.engine.frame import read_partitioned  # noqa: E402
from sdckit.errors import InputError  # noqa: E402
from sdckit.io.files import read_data  # noqa: E402


@pytest.fixture
def csv(tmp_path):
    frame = pd.DataFrame({"health": [1, -9, 2, -9, 1, 3], "family": [-9, 1, 1, 2, -9, 2],
                          "sex": [1, 2, 1, 2, 1, 2]})
    path = tmp_path / "p.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("na_values", [[("health", [-9])], {"health": [-9]}])
def test_a_code_declared_for_one_column_is_missing_there_only(csv, na_values):
    part = read_partitioned(csv, key_vars=["sex"], na_values=na_values, blocksize=40)
    got = part.frame.compute()
    # expected by hand: the two -9 of health are missing, the two -9 of family stay values
    assert got["health"].isna().sum() == 2
    assert (got["family"] == -9).sum() == 2
    # and the same as the in-memory reader
    memory = read_data(csv, na_values=na_values)[0]
    np.testing.assert_array_equal(got["health"].to_numpy(), memory["health"].to_numpy())
    np.testing.assert_array_equal(got["family"].to_numpy(), memory["family"].to_numpy())


def test_a_missing_code_for_an_unknown_column_is_refused(csv):
    with pytest.raises(InputError, match=r"na_values names column `helth`"):
        read_partitioned(csv, key_vars=["sex"], na_values={"helth": [-9]})
