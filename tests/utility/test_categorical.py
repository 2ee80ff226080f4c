"""Utility of categorical variables from codes and counts, against the record-by-record
computations (a Python label per record) they replace: entropy kept, shares before and after,
records changed, and the uniqueness contributions of the report."""

import warnings

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.explore.measures import entropy_utility
from sdckit.report.release import uniqueness_contributions
from sdckit.utility.categorical import canonical_label, changed_share, entropy_kept, label_codes, shares


def _natural(x):
    try:
        return (0, float(x), "")
    except ValueError:
        return (1, 0.0, x)


def reference_shares(a: pd.Series, b: pd.Series):
    """The earlier record-by-record shares: a label per record, value_counts, reindexed."""
    def lab(s):
        return s.map(canonical_label, na_action="ignore").fillna("(missing)").astype(str)
    la, lb = lab(a), lab(b)
    cats = list(dict.fromkeys([*sorted(la.unique(), key=_natural), *sorted(lb.unique(), key=_natural)]))
    if "(missing)" in cats:
        cats.remove("(missing)")
        cats.append("(missing)")
    return (la.value_counts(normalize=True).reindex(cats, fill_value=0.0),
            lb.value_counts(normalize=True).reindex(cats, fill_value=0.0))


def reference_changed(a: pd.Series, b: pd.Series) -> float:
    x = a.map(canonical_label, na_action="ignore").fillna("\0missing").to_numpy(dtype=object)
    y = b.map(canonical_label, na_action="ignore").fillna("\0missing").to_numpy(dtype=object)
    return float((x != y).mean())


labels = st.one_of(st.none(), st.integers(0, 6), st.sampled_from([1.0, 2.5, "1", "01", "x", "(missing)"]))


@st.composite
def pair(draw):
    n = draw(st.integers(1, 60))
    a = draw(st.lists(labels, min_size=n, max_size=n))
    b = draw(st.lists(labels, min_size=n, max_size=n))
    if all(v is None for v in a):
        a[0] = 1
    if all(v is None for v in b):
        b[0] = 2
    return pd.Series(a, dtype=object), pd.Series(b, dtype=object), draw(st.booleans())


def microdata(values: pd.Series, key: bool) -> Microdata:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Microdata(pd.DataFrame({"v": values, "o": np.arange(len(values)) % 2}),
                         key_vars=["v"] if key else ["o"])


@given(pair())
def test_shares_changed_and_entropy_equal_the_record_by_record_reference(case):
    a, b, key = case
    ma, mb = microdata(a, key), microdata(b, key)
    la, lb = label_codes(ma, "v"), label_codes(mb, "v")
    pa, pb = shares(la, lb)
    ra, rb = reference_shares(a, b)
    assert list(pa.index) == list(ra.index) and list(pb.index) == list(rb.index)
    assert np.array_equal(pa.to_numpy(), ra.to_numpy()) and np.array_equal(pb.to_numpy(), rb.to_numpy())
    assert changed_share(la, lb) == reference_changed(a, b)
    if key:   # reference: explore's entropy utility, a label per record through pd.factorize
        assert entropy_kept([(la, lb)]) == entropy_utility(ma, mb, ["v"])


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.one_of(st.none(), st.integers(0, 2))),
                min_size=1, max_size=80))
def test_uniqueness_contributions_from_codes_equal_a_groupby_count(rows):
    """Reference: group sizes by pandas groupby on every record (the earlier computation)."""
    df = pd.DataFrame(rows, columns=["a", "b", "c"]).astype({"c": float})
    keys = ["a", "b", "c"]
    codes = pd.DataFrame({v: pd.factorize(df[v], use_na_sentinel=False)[0] for v in keys})

    def sizes(cols):
        return codes.groupby(cols, sort=False)[cols[0]].transform("size").to_numpy()
    unique = sizes(keys) == 1
    ref = [int((unique & (sizes([k for k in keys if k != v]) > 1)).sum()) for v in keys]
    assert uniqueness_contributions(df, keys)["uniques_due"].tolist() == ref
    if df[keys].notna().any().all():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            md = Microdata(df, key_vars=keys)
        assert uniqueness_contributions(md, keys)["uniques_due"].tolist() == ref
