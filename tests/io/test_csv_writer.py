"""``write_csv`` writes what ``DataFrame.to_csv(index=False)`` writes, byte for byte: numeric
frames through Arrow (floats as pandas formats them), every other frame through pandas."""

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.io.files import integral_floats_as_ints, write_csv

_floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                    st.sampled_from([0.0, -0.0, 1e16, 1e15, 1e-5, 1e-4, 0.1, 1 / 3, 5e-324, 123456789.125]))


def _same_bytes(tmp_path, frame: pd.DataFrame) -> None:
    got, want = tmp_path / "got.csv", tmp_path / "want.csv"
    write_csv(frame, got)
    frame.to_csv(want, index=False)          # the reference: pandas' own writer
    assert got.read_bytes() == want.read_bytes()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_floats, st.integers(-2**63, 2**63 - 1), st.integers(0, 255), _floats | st.none()),
                max_size=40),
       st.sampled_from(["float64", "float32"]), st.booleans())
def test_numeric_frames_are_written_as_pandas_writes_them(tmp_path_factory, rows, float_dtype, integral):
    tmp_path = tmp_path_factory.mktemp("csv")
    frame = pd.DataFrame(rows, columns=["x", "big", "small", "maybe"]) if rows else \
        pd.DataFrame({"x": [], "big": [], "small": [], "maybe": []})
    frame["x"] = frame["x"].astype(float_dtype)
    frame["big"] = frame["big"].astype("int64")
    frame["small"] = frame["small"].astype("uint8")
    frame["maybe"] = frame["maybe"].astype("float64")
    if integral:   # whole-number floats as nullable integers, as a release writes them
        frame["maybe"] = np.floor(frame["maybe"].where(np.isfinite(frame["maybe"]) & (frame["maybe"].abs() < 2**52)))
        frame = integral_floats_as_ints(frame)
    _same_bytes(tmp_path, frame)


def test_other_frames_and_odd_names_go_through_pandas(tmp_path):
    frame = pd.DataFrame({"a,b": [1.5, np.nan], 'q"uote': [1, 2], "text": ["x", None], "flag": [True, False]})
    _same_bytes(tmp_path, frame)                                   # text and bool: pandas writes them
    _same_bytes(tmp_path, frame[["a,b", 'q"uote']])                # numeric, with names pandas quotes
    _same_bytes(tmp_path, pd.DataFrame({"lone": [np.nan, 1.0]}))  # one column: a lone missing cell is ""
