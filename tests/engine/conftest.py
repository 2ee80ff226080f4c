"""A LocalCluster of 2 in-process workers (no network: the inproc transport) for the module."""

import warnings

import numpy as np
import pandas as pd
import pytest


@pytest.fixture(scope="session")
def client():
    from distributed import Client, LocalCluster

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
        c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def person_frame(n: int, seed: int = 0, *, integer_weights: bool = False, missing: bool = True) -> pd.DataFrame:
    """Synthetic persons: 4 keys (one with labels), a stratum, 2 numeric variables, weights."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(5, 80, n)
    df = pd.DataFrame({
        "region": rng.integers(1, 9, n),
        "sex": rng.choice(["f", "m"], n),
        "age": rng.integers(0, 18, n),
        "job": rng.choice(["a", "b", "c", "d", "e"], n, p=[0.5, 0.2, 0.15, 0.1, 0.05]),
        "income": rng.lognormal(10, 0.7, n),
        "hours": rng.normal(38, 6, n),
        "weight": np.round(w) if integer_weights else w,
    })
    if missing:
        df.loc[df.index[::97], "job"] = None
        df.loc[df.index[::89], "income"] = np.nan
    return df
