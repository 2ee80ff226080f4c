"""The two-way tabulations of the utility panel (one ``bincount`` of label-id pairs) against the
same tables from ``pd.crosstab`` of the columns labelled record by record (a Python label per
record, value labels applied), the computation they replace: the whole panel's HTML must match."""

import html
import warnings

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.microdata import DatasetMeta, Microdata
from sdckit.report import fragments as F
from sdckit.utility.categorical import canonical_label, order_key, value_labels_of


def _esc(x) -> str:
    return html.escape(str(x))


def reference_crosstab_html(original, protected, a, b, max_cells=12):
    """Record-by-record labels, then pd.crosstab (the earlier implementation's counting)."""
    def labelled(md, v):
        look = value_labels_of(md, v)
        return md.frame[v].map(lambda x: "(missing)" if pd.isna(x) else look.get(canonical_label(x),
                                                                                    canonical_label(x)))

    ta = pd.crosstab(labelled(original, a), labelled(original, b))
    tb = pd.crosstab(labelled(protected, a), labelled(protected, b))
    rows = sorted(set(ta.index) | set(tb.index), key=order_key)
    cols = sorted(set(ta.columns) | set(tb.columns), key=order_key)
    if len(rows) > max_cells or len(cols) > max_cells:
        return (f"<p>{_esc(a)} by {_esc(b)}: {len(rows)} by {len(cols)} categories, too many to show as a "
                "table.</p>")
    ta, tb = ta.reindex(index=rows, columns=cols, fill_value=0), tb.reindex(index=rows, columns=cols, fill_value=0)
    head = "".join(f"<th>{_esc(c)}</th>" for c in cols)
    body = "".join(f"<tr><th>{_esc(r)}</th>" + "".join(
        f"<td class='{'differs' if ta.at[r, c] != tb.at[r, c] else ''}'>{int(ta.at[r, c]):,} / {int(tb.at[r, c]):,}</td>"
        for c in cols) + "</tr>" for r in rows)
    return (f"<table class='crosstab'><caption>{_esc(a)} (rows) by {_esc(b)} (columns): records in the original / "
            f"in the release</caption><tr><th></th>{head}</tr>{body}</table>")


@settings(max_examples=40, deadline=None)
@given(st.integers(5, 120), st.integers(0, 10_000), st.integers(2, 15), st.booleans())
def test_utility_panel_tabulations_match_pd_crosstab(n, seed, n_regions, float_codes):
    rng = np.random.default_rng(seed)
    sex = rng.integers(1, 3, n).astype(float if float_codes else np.int64)   # 1.0 is labelled "1"
    df = pd.DataFrame({"sex": sex, "age": rng.choice(["<25", "25-44", "45-64", "65+"], n),
                       "region": rng.integers(1, n_regions + 1, n)})
    if float_codes:
        df.loc[df.index[:2], "sex"] = np.nan
    rel = df.copy()
    flip = rng.random(n) < 0.3
    rel.loc[flip, "age"] = rng.choice(["<25", "65+", "(missing)"], int(flip.sum()))   # a label "(missing)" too
    meta = DatasetMeta(value_labels={"sex": {1: "Male", 2: "Female"}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # single-category keys are fine here
        mo = Microdata(df, key_vars=["sex", "age", "region"], meta=meta)
        mr = Microdata(rel, key_vars=["sex", "age", "region"], meta=meta)
    got = F.utility_panel_html(mo, mr)
    want_tables = "".join(reference_crosstab_html(mo, mr, a, b) for a, b in [("sex", "age"), ("age", "region")])
    assert "<h4>Two-way tabulations</h4>" + want_tables in got
