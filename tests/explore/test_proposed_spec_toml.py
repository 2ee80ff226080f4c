"""The proposed release spec is written with tomli-w: numpy scalars, tuples and None entries
(which TOML cannot hold) are converted or dropped, and the text reads back as the same data."""

import tomllib

import numpy as np
import tomli_w

from sdckit.explore.run import _toml_ready


def test_toml_ready_round_trips_numpy_tuples_and_drops_none():
    doc = {"input": {"path": "x.csv", "sep": None},
           "steps": [{"method": "microaggregation", "k": np.int64(3), "variables": ("a", "b"),
                      "level": np.float64(0.25), "strata": None}],
           "gate": {"k_anonymity": 3}}
    back = tomllib.loads(tomli_w.dumps(_toml_ready(doc)))
    # expected by hand: None entries gone, numpy scalars as plain numbers, tuples as arrays
    assert back == {"input": {"path": "x.csv"},
                    "steps": [{"method": "microaggregation", "k": 3, "variables": ["a", "b"],
                               "level": 0.25}],
                    "gate": {"k_anonymity": 3}}
    assert type(back["steps"][0]["k"]) is int
