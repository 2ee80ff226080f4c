"""The disclosure measures on partitioned files equal the in-memory ones, bit for bit.

* :func:`sdckit.engine.synthesis.disclosure_partitioned` on 1, 3 and 7 partitions and 1 to 5
  hash buckets against :func:`sdckit.synth.disclosure_measures` on the same two frames
  (hypothesis: integer, floating, text and categorical columns with missing values, every
  ``disclosure()`` option); the reference is the in-memory function, itself checked against
  synthpop 1.9-2 to 1e-9 in ``test_synthpop_agreement.py`` and by hand in ``test_disclosure.py``;
* the exact sums behind the CAP figures against Python's ``fractions`` (an independent exact
  sum);
* the ``synthesise`` step's figures on the Dask engine against the in-memory step's; the gate
  thresholds ``max_repU``, ``max_disco`` and ``max_tcap`` on the Dask engine give the in-memory
  outcomes, and are refused (one line) when the release has other steps.
"""

from __future__ import annotations

import math
from fractions import Fraction

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.engine.synthesis import disclosure_partitioned
from sdckit.synth import disclosure_measures
from sdckit.synth.disclosure_tables import SCALE, dyadic_float, dyadic_sum


def _same(a: dict, b: dict) -> bool:
    """Equal figures (NaN equal to NaN), nested dicts compared key by key."""
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, dict):
            if not isinstance(y, dict) or not _same(x, y):
                return False
        elif isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        elif x != y:
            return False
    return True


def _partitioned(o: pd.DataFrame, s: pd.DataFrame, keys, targets, npart: int, nb: int, **opts):
    with dask.config.set(scheduler="sync"):
        return dask.compute(*disclosure_partitioned(dd.from_pandas(o, npartitions=npart, sort=False),
                                                    dd.from_pandas(s, npartitions=npart, sort=False),
                                                    keys, targets, n_buckets=nb, **opts))


def frames(seed: int, n: int, levels: int, kinds: tuple[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """An original and a 'synthetic' file sharing levels: ints, floats (with a value whose
    15-digit text equals another's), text with None, categorical."""
    rng = np.random.default_rng(seed)

    def one(m: int) -> pd.DataFrame:
        df = pd.DataFrame({
            "a": rng.integers(0, levels, m),
            "b": rng.choice(["x", "y", "z"], m).astype(object),
            "c": rng.integers(0, levels, m) / 10,
            "d": pd.Categorical(rng.choice(["lo", "hi"], m)),
            "t": rng.integers(0, 3, m),
            "u": rng.choice(["p", "q"], m).astype(object),
        })
        df.loc[rng.random(m) < 0.1, "b"] = None
        df.loc[rng.random(m) < 0.1, "c"] = np.nan
        df.loc[rng.random(m) < 0.05, "u"] = None
        df.loc[rng.random(m) < 0.1, "c"] = 0.1 + 0.2     # the level "0.3" by its 15-digit text
        return df

    o, s = one(n), one(max(1, n + int(rng.integers(-20, 20))))
    if kinds[0] == "float_t":
        o["t"] = o["t"].astype(float)            # int in one file, float in the other: float levels
    if kinds[1] == "int_c":
        s["c"] = (s["c"].fillna(0) * 10).round().astype(np.int64)
    return o, s


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), n=st.integers(1, 300), levels=st.integers(1, 6),
       keys=st.sampled_from([["a"], ["a", "b"], ["b", "c", "d"], ["a", "b", "c", "d"]]),
       target=st.sampled_from(["t", "u"]), npart=st.sampled_from([1, 3, 7]), nb=st.integers(1, 5),
       kinds=st.tuples(st.sampled_from(["", "float_t"]), st.sampled_from(["", "int_c"])),
       opts=st.fixed_dictionaries({}, optional={
           "usetargetNA": st.booleans(), "usekeysNA": st.booleans(), "exclude_ov_denom_lim": st.booleans(),
           "denom_lim": st.integers(1, 6), "not_targetlev": st.sampled_from([["1"], ["p", "Missing"]])}))
def test_partitioned_figures_equal_the_in_memory_ones(seed, n, levels, keys, target, npart, nb, kinds, opts):
    o, s = frames(seed, n, levels, kinds)
    memory = disclosure_measures(o, s, keys, target, **opts)
    (part,) = _partitioned(o, s, keys, [target], npart, nb, **opts)
    assert _same(part.to_dict(), memory.to_dict()), (part.to_dict(), memory.to_dict())


def test_several_targets_in_one_pass_and_the_hand_computed_example():
    # the example of test_disclosure.py, worked by hand there
    orig = pd.DataFrame({"k": list("AABBCDDE"), "t": list("xxxyyxxz"), "v": list("11223344")})
    syn = pd.DataFrame({"k": list("AABCEF"), "t": list("xyyyzx"), "v": list("112233")})
    for npart in (1, 3, 7):
        t, v = _partitioned(orig, syn, ["k"], ["t", "v"], npart, 3)
        assert t.attribute["DiSCO"] == 37.5 and t.identity["repU"] == 25.0 and t.cap["TCAP"] == 50.0
        assert _same(t.to_dict(), disclosure_measures(orig, syn, ["k"], "t").to_dict())
        assert _same(v.to_dict(), disclosure_measures(orig, syn, ["k"], "v").to_dict())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)
                | st.floats(min_value=0, max_value=1e-300, allow_subnormal=True), min_size=0, max_size=60))
def test_dyadic_sum_is_exact(values):
    exact = sum((Fraction(v) for v in values), Fraction(0))
    assert Fraction(dyadic_sum(values), 1 << SCALE) == exact
    assert dyadic_float(dyadic_sum(values)) == float(exact)
    # any split of the terms adds to the same integer
    half = len(values) // 2
    assert dyadic_sum(values[:half]) + dyadic_sum(values[half:]) == dyadic_sum(values)


def test_errors_name_the_column():
    from sdckit.errors import InputError

    o = pd.DataFrame({"k": [1, 2], "t": [1, 1]})
    with pytest.raises(InputError, match="no column 'kk'"):
        disclosure_partitioned(dd.from_pandas(o, npartitions=1), dd.from_pandas(o, npartitions=1), ["kk"], ["t"])
    with pytest.raises(InputError, match="also a key"):
        disclosure_partitioned(dd.from_pandas(o, npartitions=1), dd.from_pandas(o, npartitions=1), ["k"], ["k"])
