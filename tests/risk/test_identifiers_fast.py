"""Identifier check, linkage on all columns and the undeclared-column scan on value codes
(integers counted, each column coded once) against the earlier implementations, kept here as
the reference: one ``pd.factorize`` per column and per combination, object comparisons."""

import warnings

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sdckit import Microdata
from sdckit.risk import identifiers as new
from sdckit.risk.identifiers import name_says_identifier


# ---------------------------------------------------------------- the earlier implementation
def ref_row_codes(frame, columns):
    codes = np.zeros(len(frame), dtype=np.int64)
    for col in columns:
        c, uniq = pd.factorize(frame[col], use_na_sentinel=False)
        k = max(len(uniq), 1)
        if codes.max(initial=0) >= (np.iinfo(np.int64).max // (k + 1)):
            codes = pd.factorize(codes)[0].astype(np.int64)
        codes = codes * k + c
    return pd.factorize(codes)[0].astype(np.int64)


def ref_linkage(original, released, columns):
    rel, orig = released.frame, original.frame
    n = len(rel)
    both = pd.concat([orig[list(columns)].reset_index(drop=True),
                      rel[list(columns)].reset_index(drop=True)], ignore_index=True)
    codes = ref_row_codes(both, columns)
    a, b = codes[:n], codes[n:]
    counts = np.bincount(b, minlength=int(max(a.max(), b.max())) + 1)
    m = counts[a]
    expected = float(np.where((a == b) & (m > 0), 1.0 / np.maximum(m, 1), 0.0).sum())
    uniques = int((counts[b] == 1).sum())
    return {"columns": list(columns), "n_records": n, "sample_uniques": uniques,
            "sample_unique_share": uniques / n, "expected_correct_links": expected,
            "correct_link_share": expected / n}


def ref_undeclared(md, top=None):
    frame, keys = md.frame, list(md.key_vars)
    cands = [c for c in frame.columns if c not in keys]

    def n_unique(cols):
        if not cols:
            return 0
        codes = ref_row_codes(frame, cols)
        return int((np.bincount(codes)[codes] == 1).sum())
    base = n_unique(keys)
    rows = []
    for c in cands:
        with_c = n_unique(keys + [c])
        rows.append({"column": str(c), "n_categories": int(frame[c].nunique(dropna=False)),
                     "uniques_with": with_c, "added_uniques": with_c - base})
    rows.sort(key=lambda r: (-r["added_uniques"], r["column"]))
    return rows[:top] if top else rows


def ref_identifier_check(original, released, allow=(), share=0.9):
    allow, rel, orig, out = set(allow), released.frame, original.frame, []
    n = len(rel)
    for col in rel.columns:
        values = rel[col]
        nonmissing = values.dropna()
        distinct = int(nonmissing.nunique()) if len(nonmissing) else 0
        dshare = distinct / len(nonmissing) if len(nonmissing) else 0.0
        marker = name_says_identifier(col)
        unique = n >= 20 and len(nonmissing) >= 20 and dshare > share
        if not (unique or marker):
            continue
        masked = False
        if col in orig.columns:
            a, b = orig[col].reset_index(drop=True), values.reset_index(drop=True)
            same = (a.astype(object) == b.astype(object)) | (a.isna() & b.isna())
            masked = (float(1.0 - same.mean()) if len(a) else 0.0) >= 0.5
        if unique and marker:
            reason = f"its name says it is an identifier ({marker!r}) and {dshare:.1%} of its values are distinct"
        elif unique:
            reason = f"{dshare:.1%} of its {len(nonmissing)} values are distinct (above {share:.0%})"
        else:
            reason = f"its name says it is an identifier ({marker!r})"
        out.append({"column": str(col), "reason": reason, "distinct_share": dshare, "name_marker": marker,
                    "nearly_unique": bool(unique), "allowed": col in allow, "masked": bool(masked)})
    return out


# ---------------------------------------------------------------- the comparison
@st.composite
def release_pair(draw):
    n = draw(st.integers(1, 150))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    df = pd.DataFrame({
        "region": rng.integers(0, draw(st.integers(1, 6)), n),
        "sex": np.where(np.arange(n) == 0, "f", rng.choice(["f", "m", None], n)),
        "hours": np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 4, n)).astype(float),
        "person_id": np.arange(n) * draw(st.sampled_from([1, 7])),
        "income": np.round(rng.lognormal(0, 1, n), draw(st.integers(0, 2))),
        "note": rng.choice([1, 1.0, "1", None, np.nan, "x"], n).astype(object),
    })
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        md = Microdata(df, key_vars=["region", "sex"])
        rel = md.with_columns({"income": df["income"] * (1 + (rng.random(n) < draw(st.floats(0, 1))))})
    return md, rel


@given(release_pair())
def test_identifier_figures_equal_the_earlier_implementation(pair):
    md, rel = pair
    cols = list(md.frame.columns)
    assert np.array_equal(new.row_codes(md.frame, cols), ref_row_codes(md.frame, cols))
    assert new.identifier_check(md, rel, allow=["hours"]) == ref_identifier_check(md, rel, allow=["hours"])
    assert new.identifier_check(md, rel, allow=["hours"]) == ref_identifier_check(md, rel, allow=["hours"])
    assert new.identifier_check(rel, rel) == ref_identifier_check(rel, rel)
    assert new.linkage_all_columns(md, md, cols) == ref_linkage(md, md, cols)
    assert new.linkage_all_columns(md, rel, cols) == ref_linkage(md, rel, cols)
    assert new.undeclared_scan(md) == ref_undeclared(md)
    assert new.undeclared_scan(rel, top=2) == ref_undeclared(rel, top=2)
