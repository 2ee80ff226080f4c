"""Cell key method: lookup rule, consistency, p-table generation, noise variance, bad input."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import InputError
from sdckit.tables.ckm import (
    FlexParams,
    PTable,
    add_record_keys,
    ckm_frequency,
    ckm_magnitude,
    perturb_frequencies,
)
from sdckit.tables.table import Hierarchy

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
META = SHARED / "tauargus_meta"
needs_shared = pytest.mark.skipif(not (SHARED / "tauargus_ckm_microdata.csv").is_file(),
                                  reason="../shared/data (tau-Argus CKM microdata and p-tables, EUPL) is absent")


def _hand_lookup(pt_frame: pd.DataFrame, count: int, key: Decimal) -> int:
    """The tau-Argus rule applied row by row, from the p-table file as read by pandas."""
    if count == 0:
        return 0
    i = min(count, int(pt_frame["i"].max()))
    rows = pt_frame[pt_frame["i"] == i].sort_values("p_int_ub")
    for ub, v in zip(rows["p_int_ub"], rows["v"]):
        if Decimal(repr(float(ub))) > key:
            return int(v)
    return int(rows["v"].iloc[-1])


def _hand_cells(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Counts and exact decimal cell keys by an independent pandas groupby."""
    g = df.groupby(by, sort=True) if by else None
    if g is None:
        s = sum((Decimal(repr(k)) for k in df["Key"]), Decimal(0))
        return pd.DataFrame({"n": [len(df)], "ck": [s - int(s)]})
    out = g["Key"].agg(lambda k: (lambda s: s - int(s))(sum((Decimal(repr(x)) for x in k), Decimal(0))))
    return pd.DataFrame({"n": g.size(), "ck": out}).reset_index()


@pytest.fixture(scope="module")
def micro() -> pd.DataFrame:
    return pd.read_csv(SHARED / "tauargus_ckm_microdata.csv", dtype={"Sex": str, "Age": str})


@needs_shared
def test_perturbations_equal_hand_lookup_inner_and_margins(micro):
    # reference: pandas groupby counts + exact Decimal key sums + the p-table scanned row by row
    ptf = pd.read_csv(META / "ptab_freq.txt", sep=";")
    got = perturb_frequencies(micro, ["Sex", "Age"], key="Key", ptable=META / "ptab_freq.txt", totals=True)
    assert list(got.columns) == ["Sex", "Age", "original", "perturbed"]
    hand = []
    for by in (["Sex", "Age"], ["Sex"], ["Age"], []):
        h = _hand_cells(micro, by)
        for d in ("Sex", "Age"):
            if d not in by:
                h[d] = "Total"
        hand.append(h)
    hand = pd.concat(hand, ignore_index=True)
    hand["perturbed"] = [n + _hand_lookup(ptf, n, ck) for n, ck in zip(hand["n"], hand["ck"])]
    m = got.merge(hand, on=["Sex", "Age"], how="outer", validate="one_to_one")
    assert len(m) == len(got) == len(hand) == 2 * 6 + 2 + 6 + 1
    assert (m["original"] == m["n"]).all()
    assert (m["perturbed_x"] == m["perturbed_y"]).all()
    inner = perturb_frequencies(micro, ["Sex", "Age"], ptable=META / "ptab_freq.txt")
    assert len(inner) == 12 and not (inner[["Sex", "Age"]] == "Total").any().any()


@needs_shared
def test_hierarchical_45_cells_and_same_cell_same_noise(micro):
    h = {"Sex": Hierarchy.from_hrc(META / "dim_sex.hrc"), "Age": Hierarchy.from_hrc(META / "dim_age.hrc")}
    res = ckm_frequency(micro, ["Sex", "Age"], ptable=META / "ptab_freq.txt", hierarchies=h)
    f = res.frame()
    assert len(f) == 45  # 5 Sex nodes x 9 Age nodes, as tau-Argus
    # subtotal A1 holds only code 1: same records, same key, same noise
    a1 = f[f.Age == "A1"].set_index("Sex")["perturbed"]
    one = f[f.Age == "1"].set_index("Sex")["perturbed"]
    assert (a1 == one).all()
    # the Sex margin of this table equals the Sex table of its own (another table, same records)
    sex = perturb_frequencies(micro, ["Sex"], ptable=META / "ptab_freq.txt", totals=True).set_index("Sex")
    flat = perturb_frequencies(micro, ["Sex", "Age"], ptable=META / "ptab_freq.txt", totals=True)
    marg = flat[flat.Age == "Total"].set_index("Sex")
    assert (sex.loc[marg.index, "perturbed"] == marg["perturbed"]).all()
    assert res.additivity()["n_broken"] > 0  # margins are perturbed as cells


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "e"]), st.sampled_from(["x", "y", " z"])),
                min_size=1, max_size=80), st.booleans())
def test_frequency_table_equals_table_from_microdata(rows, hier):
    # reference: Table.from_microdata expands every record into all its cells; frequency_table sums
    # inner counts up the hierarchies -- both must give the same cells and counts
    import warnings

    from sdckit.tables.ckm.cellkey import frequency_table
    df = pd.DataFrame(rows, columns=["r", "s"])
    hs = {"r": Hierarchy(["Total", "ab", "a", "b", "cde", "c", "d", "e"], [-1, 0, 1, 1, 0, 4, 4, 4])} if hier else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = Table_from(df, hs)
        got = frequency_table(df, ["r", "s"], hs)
    assert [h.codes for h in got.hierarchies] == [h.codes for h in ref.hierarchies]
    assert np.array_equal(got.value, ref.value) and np.array_equal(got.freq, ref.freq)


def Table_from(df, hs):
    from sdckit.tables.table import Table
    return Table.from_microdata(df, ["r", "s"], hierarchies=hs)


@needs_shared
def test_integer_codes_merge_with_groupby():
    # the data's own integer codes come back, so a plain groupby merges with the result
    df = pd.read_csv(SHARED / "tauargus_ckm_microdata.csv")
    out = perturb_frequencies(df, ["Sex", "Age"], ptable=META / "ptab_freq.txt")
    assert out["Sex"].dtype == df["Sex"].dtype
    n = df.groupby(["Sex", "Age"]).size().rename("n").reset_index()
    m = n.merge(out, on=["Sex", "Age"], validate="one_to_one")
    assert len(m) == len(out) == 12 and (m.n == m.original).all()


def test_interval_closed_below_open_above_and_zero_cells():
    pt = PTable.from_frame(pd.DataFrame({"i": [0, 1, 1, 2, 2], "j": [0, 0, 3, 0, 3], "p": [1, .75, .25, .5, .5],
                                         "v": [0, -1, 2, -2, 1], "p_int_ub": [1, .75, 1, .5, 1]}), kind="counts")
    df = pd.DataFrame({"g": ["a", "b", "c", "d"], "Key": [0.75, 0.74999999, 0.0, 0.3]})
    out = perturb_frequencies(df, ["g"], ptable=pt).set_index("g")["perturbed"]
    # key 0.75 == p_int_ub of the first row: not below it -> next row (v=+2); just below -> v=-1
    assert out["a"] == 3 and out["b"] == 0 and out["c"] == 0
    big = pd.DataFrame({"g": ["x"] * 5, "Key": [0.1] * 5})  # count 5 > largest i = 2: row 2, key 0.5 -> v=+1
    assert perturb_frequencies(big, ["g"], ptable=pt)["perturbed"].iloc[0] == 6
    # a code with no records in a hierarchy gives an empty cell that stays 0
    h = {"g": Hierarchy.flat(["a", "b", "c", "d", "e"])}
    with pytest.warns(Warning):
        res = ckm_frequency(df, ["g"], ptable=pt, hierarchies=h)
    e = res.table.cell_index("e")
    assert res.original[e] == 0 and res.perturbed[e] == 0


@needs_shared
@pytest.mark.parametrize("name, args, tol_p", [
    # the R package solves with nloptr at xtol_rel = 1e-7, so its shipped p carry up to ~1e-7 of solver
    # error; after both tables' 8-decimal rounding, measured largest |p_ours - p_shipped|: 1.0e-8 (freq),
    # 4.0e-8 (savings_all), 1.2e-7 (smallcells). Our rows are the exact optimum (next test).
    ("ptab_freq.txt", dict(D=5, V=3.0, js=2, pstay=0.5), 2e-8),
    ("ptab_savings_all.txt", dict(D=5, V=1.0, kind="magnitude", step=2, icat=[1, 5]), 5e-8),
    ("ptab_savings_smallcells.txt", dict(D=8, V=2.0, kind="magnitude", step=2, icat=[1, 8]), 1.5e-7),
])
def test_generated_equal_shipped(name, args, tol_p):
    shipped = PTable.read(META / name)
    gen = PTable.generate(**args)
    a, b = shipped.frame, gen.frame
    assert len(a) == len(b)
    assert np.array_equal(a["i"], b["i"]) and np.allclose(a["j"], b["j"], atol=1e-9)
    assert np.allclose(a["v"], b["v"], atol=1e-9)
    assert np.abs(a["p"].to_numpy() - b["p"].to_numpy()).max() <= tol_p
    # most rows agree to the 8 printed decimals: the cumulative bounds differ by at most one unit of 1e-8
    # where the R solver's error crosses a rounding boundary
    if name == "ptab_freq.txt":
        assert np.abs(a["p_int_ub"].to_numpy() - b["p_int_ub"].to_numpy()).max() <= 1.0000001e-8


def test_generated_row_is_the_exact_max_entropy_solution():
    # reference: for i >= D + js the row is symmetric and, with p_stay = 0.5 binding, the max-entropy
    # solution is p(v) = 0.5 exp(-l v^2)/Z for v != 0 with l solved from the variance (closed form + brentq)
    from scipy.optimize import brentq
    v = np.arange(-5, 6, dtype=float)
    nz = v != 0

    def dist(lam):
        w = np.exp(-lam * v[nz] ** 2)
        p = np.full(v.size, 0.5)
        p[nz] = 0.5 * w / w.sum()
        return p

    lam = brentq(lambda x: dist(x) @ v ** 2 - 3.0, -5, 5)
    ub = np.round(np.cumsum(dist(lam)), 8)
    gen = PTable.generate(D=5, V=3.0, js=2, pstay=0.5).frame
    assert np.allclose(gen[gen.i == 8]["p_int_ub"].to_numpy(), ub, atol=1e-12)
    # magnitude rows i = D (no bound active): p(v) = exp(-l v^2)/Z on v = -D..D in steps of 1/2
    for D, V in ((5, 1.0), (8, 2.0)):
        w = np.arange(-D, D + 0.25, 0.5)

        def mdist(lam, w=w):
            e = np.exp(-lam * w ** 2)
            return e / e.sum()

        lam = brentq(lambda x, w=w, V=V: mdist(x) @ w ** 2 - V, 1e-6, 10)
        g = PTable.generate(D=D, V=V, kind="magnitude", step=2, icat=[1, D]).frame
        assert np.allclose(g[g.i == D]["p_int_ub"].to_numpy(), np.round(np.cumsum(mdist(lam)), 8), atol=1e-12)


@pytest.mark.parametrize("D, V, js", [(5, 3.0, 2), (3, 1.0, 0), (4, 2.0, 1)])
def test_generated_rows_sum_to_one_unbiased_variance_v(D, V, js):
    pt = PTable.generate(D=D, V=V, js=js)
    chk = pt.row_checks()
    rows = chk[chk.i > 0]
    assert np.allclose(rows.p_sum, 1.0, atol=1e-12)
    assert np.abs(rows["mean"]).max() < 5e-8 * D  # unbiased up to the 8-decimal rounding of the bounds
    assert np.allclose(rows.variance, V, atol=5e-8 * D * D)
    assert pt.max_abs_v <= D
    assert not np.isin(pt.frame.j[pt.frame.i > 0], np.arange(1, js + 1)).any()  # 1..js never published


def test_empirical_noise_variance_close_to_v():
    # every row of the generated table has variance V and mean 0, and cell keys of fresh uniform record
    # keys are uniform, so over n cells the sample variance of the noise has standard error
    # sqrt((E v^4 - V^2)/n); we allow 4 standard errors (fixed seeds: the test cannot flake)
    D, V = 4, 2.0
    pt = PTable.generate(D=D, V=V, js=0)
    gen = np.random.default_rng(20260101)
    noise = []
    for _ in range(4):
        df = pd.DataFrame({"a": gen.integers(0, 100, 60_000).astype(str), "b": gen.integers(0, 50, 60_000).astype(str)})
        df = add_record_keys(df, rng=gen)
        r = ckm_frequency(df, ["a", "b"], ptable=pt)
        noise.append(r.perturbation[r.table.freq > 0])
    noise = np.concatenate(noise)
    f = pt.frame[pt.frame.i == pt.max_i]
    m4 = float((f.p * f.v ** 4).sum())
    se = np.sqrt((m4 - V ** 2) / noise.size)
    assert noise.size > 20_000
    assert abs(noise.var() - V) < 4 * se
    assert abs(noise.mean()) < 4 * np.sqrt(V / noise.size)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("xy"), st.floats(0, 0.999999)), min_size=1,
                max_size=60), st.randoms(use_true_random=False))
def test_properties_bounded_nonneg_threshold_and_order_free(rows, rnd):
    pt = PTable.generate(D=3, V=1.5, js=1) if not hasattr(test_properties_bounded_nonneg_threshold_and_order_free, "pt") \
        else test_properties_bounded_nonneg_threshold_and_order_free.pt
    test_properties_bounded_nonneg_threshold_and_order_free.pt = pt
    df = pd.DataFrame(rows, columns=["a", "b", "Key"])
    out = perturb_frequencies(df, ["a", "b"], ptable=pt, totals=True)
    d = out.perturbed - out.original
    assert (d.abs() <= 3).all() and (out.perturbed >= 0).all()
    assert not out.perturbed.isin([1]).any()  # js = 1: a count of 1 is never published
    idx = list(range(len(df)))
    rnd.shuffle(idx)
    again = perturb_frequencies(df.iloc[idx], ["a", "b"], ptable=pt, totals=True)
    pd.testing.assert_frame_equal(out, again)


def test_magnitude_by_hand_top1():
    # reference: the flex-function formula and the p-table scanned by hand for a one-contributor weight
    pt = PTable.generate(D=3, V=1.0, kind="magnitude", step=2, icat=[1, 3])
    flex = FlexParams(0.05, 0.2, 100.0, 3.0, (1.0,))
    df = pd.DataFrame({"g": ["a", "a", "a", "b"], "x": [500.0, 40.0, 30.0, 7.0], "Key": [0.3, 0.2, 0.15, 0.9]})
    res = ckm_magnitude(df, ["g"], "x", ptable=pt, flex=flex)
    f = pt.frame
    for code, X, x1, ck in (("a", 570.0, 500.0, Decimal("0.65")), ("b", 7.0, 7.0, Decimal("0.9"))):
        s0, s1, xs, q = 0.05, 0.2, 100.0, 3.0
        m = s1 if x1 < xs else s0 * (1 + ((s1 * x1 - s0 * xs) / (s0 * xs)) * (2 * xs / (xs + x1)) ** q)
        delta = min(m * x1, X)
        a = min(X / delta, 3.0)
        rows = sorted(f.i.unique())
        i0 = max(r for r in rows if r <= a)
        i1 = min(r for r in rows if r >= a)

        def vrow(i, f=f, ck=ck):
            g = f[f.i == i].sort_values("p_int_ub")
            return next(v for ub, v in zip(g.p_int_ub, g.v) if Decimal(repr(float(ub))) > ck or ub == g.p_int_ub.max())

        lam = 0 if i1 == i0 else (a - i0) / (i1 - i0)
        v = (1 - lam) * vrow(i0) + lam * vrow(i1)
        exp = max(X + delta * v, 0.0)
        assert res.perturbed[res.table.cell_index(code)] == pytest.approx(exp, rel=1e-12)


def _scan(f: pd.DataFrame, i: float, ck: Decimal) -> float:
    g = f[f.i == i].sort_values("p_int_ub")
    return next(v for ub, v in zip(g.p_int_ub, g.v) if Decimal(repr(float(ub))) > ck or ub == g.p_int_ub.max())


def test_magnitude_separation_and_parity_by_hand():
    # reference: z_s = sqrt(m1^2)/(sqrt(E) sigma1) with m1^2 the variance of the small table's largest
    # row (V = 1 by construction) -> z_s = 1/(1 * 0.2) = 5; a 3-unit cell is perturbed as a count:
    # amplitude 1, row a = min(3, 3) of the small table
    pt = PTable.generate(D=3, V=1.0, kind="magnitude", step=2, icat=[1, 3])
    small = PTable.generate(D=3, V=1.0, kind="magnitude", step=1, icat=[1, 3])
    flex = FlexParams(0.05, 0.2, 100.0, 3.0, (1.0,))
    df = pd.DataFrame({"g": ["a", "b"], "x": [500.0, 3.0], "Key": [0.3, 0.9]})
    res = ckm_magnitude(df, ["g"], "x", ptable=pt, flex=flex, small_ptable=small)
    assert res.details["separation_point"] == pytest.approx(5.0, rel=1e-6)
    b = res.table.cell_index("b")
    assert res.perturbed[b] == pytest.approx(max(3.0 + _scan(small.frame, 3.0, Decimal("0.9")), 0.0))
    # parity: a p-table with even/odd rows; one contributor -> odd rows, two -> even rows
    odd = PTable.generate(D=3, V=2.0, kind="magnitude", step=2, icat=[1, 3]).frame.assign(type="odd")
    even = pt.frame.assign(type="even")
    par = PTable.from_frame(pd.concat([odd, even]).drop(columns="p_int_lb"), kind="magnitude")
    df2 = pd.DataFrame({"g": ["a", "b", "b"], "x": [50.0, 30.0, 20.0], "Key": [0.3, 0.2, 0.15]})
    r2 = ckm_magnitude(df2, ["g"], "x", ptable=par, flex=flex)
    for code, X, x1, ck, f in (("a", 50.0, 50.0, Decimal("0.3"), odd), ("b", 50.0, 30.0, Decimal("0.35"), even)):
        delta = min(0.2 * x1, X)
        v = _scan(f, 3.0, ck)  # a = X/delta >= 3 = largest row
        assert r2.perturbed[r2.table.cell_index(code)] == pytest.approx(max(X + delta * v, 0.0), rel=1e-12)


@needs_shared
def test_magnitude_same_cell_same_noise_and_nonnegative(micro):
    flex = FlexParams(0.03, 0.30, 1000.0, 3.0, (1.0, 0.5, 0.2))
    h = {"Sex": Hierarchy.from_hrc(META / "dim_sex.hrc"), "Age": Hierarchy.from_hrc(META / "dim_age.hrc")}
    r1 = ckm_magnitude(micro, ["Sex", "Age"], "Savings", ptable=META / "ptab_savings_all.txt", flex=flex, hierarchies=h)
    r2 = ckm_magnitude(micro, ["Sex"], "Savings", ptable=META / "ptab_savings_all.txt", flex=flex,
                       hierarchies={"Sex": h["Sex"]})
    f1 = r1.frame().query("Age == 'Total'").set_index("Sex")["perturbed"]
    f2 = r2.frame().set_index("Sex")["perturbed"]
    assert np.allclose(f1, f2.loc[f1.index])
    assert (r1.perturbed >= 0).all() and r1.n_perturbed > 0


def test_bad_keys_one_line():
    pt = PTable.generate(D=2, V=1.0)
    with pytest.raises(InputError, match=r"row 2 is 1\.5, outside \[0, 1\)"):
        perturb_frequencies(pd.DataFrame({"g": ["a", "b"], "Key": [0.2, 1.5]}), ["g"], ptable=pt)
    with pytest.raises(InputError, match="missing in row 1"):
        perturb_frequencies(pd.DataFrame({"g": ["a", "b"], "Key": [np.nan, 0.5]}), ["g"], ptable=pt)
    with pytest.raises(InputError, match="record key column 'Key' is missing"):
        perturb_frequencies(pd.DataFrame({"g": ["a"]}), ["g"], ptable=pt)


def test_bad_ptables_one_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("i;j;p;v;p_int_ub\n0;0;1;0;1\n1;0;0.5;-1;0.5\n1;2;0.4;1;0.9\n")
    with pytest.raises(InputError, match=r"row i=1 .* sum to 0\.9, not 1"):
        PTable.read(bad)
    gap = tmp_path / "gap.txt"
    gap.write_text("i;j;p;v;p_int_ub\n0;0;1;0;1\n1;0;0.5;-1;0.5\n1;2;0.5;1;1\n3;2;0.5;-1;0.5\n3;4;0.5;1;1\n")
    with pytest.raises(InputError, match=r"lacks the cell value\(s\) i = \[2\]"):
        PTable.read(gap)
    txt = tmp_path / "txt.txt"
    txt.write_text("i;j;p;v;p_int_ub\n0;0;1;0;1\n1;0;x;-1;1\n")
    with pytest.raises(InputError, match="line 3, column 'p'"):
        PTable.read(txt)
    for e in (str(InputError),):
        assert "\n" not in e


def test_ptable_roundtrip_text(tmp_path):
    pt = PTable.generate(D=3, V=1.5, js=1)
    p = tmp_path / "pt.txt"
    p.write_text(pt.to_text())
    back = PTable.read(p)
    assert np.allclose(back.frame.p_int_ub, pt.frame.p_int_ub, atol=1e-12)


@needs_shared
def test_cli_ckm_spec_json(tmp_path, capsys):
    import shutil
    for f in ("ptab_freq.txt", "dim_sex.hrc", "dim_age.hrc"):
        shutil.copy(META / f, tmp_path / f)
    shutil.copy(SHARED / "tauargus_ckm_microdata.csv", tmp_path / "micro.csv")
    (tmp_path / "s.toml").write_text(
        '[input]\nmicrodata = "micro.csv"\n[table]\ndimensions = ["Sex", "Age"]\n'
        '[hierarchies.Sex]\nhrc = "dim_sex.hrc"\n[hierarchies.Age]\nhrc = "dim_age.hrc"\n'
        '[protection]\nmethod = "ckm"\nptable = "ptab_freq.txt"\n')
    from sdckit.cli import main
    code = main(["table", str(tmp_path / "s.toml"), "--json"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    out = json.loads(cap.out)  # exactly one JSON document on stdout
    assert out["n_cells"] == 45 and out["ptable"].endswith("ptab_freq.txt")
    assert 0 < out["n_perturbed"] <= 45 and 0 < out["max_abs_perturbation"] <= 5
    pub = pd.read_csv(tmp_path / "s_published.csv", dtype=str)
    assert len(pub) == 45 and set(pub.status) == {"perturbed"}


def test_spec_draws_missing_keys_from_seed_and_magnitude(tmp_path):
    from sdckit.errors import SpecError
    from sdckit.tables.spec import run_table_spec
    g = np.random.default_rng(7)
    pd.DataFrame({"r": g.choice(list("abc"), 300), "s": g.choice(list("xy"), 300),
                  "y": g.integers(1, 5000, 300)}).to_csv(tmp_path / "m.csv", index=False)
    (tmp_path / "pt.txt").write_text(PTable.generate(D=3, V=1.5, js=1).to_text())
    base = '[input]\nmicrodata = "m.csv"\n[table]\ndimensions = ["r", "s"]\n'
    (tmp_path / "a.toml").write_text(base + '[protection]\nmethod = "ckm"\nptable = "pt.txt"\n')
    with pytest.raises(SpecError, match="protection.key: column 'Key' is not in the microdata"):
        run_table_spec(tmp_path / "a.toml")
    (tmp_path / "b.toml").write_text(base + '[protection]\nmethod = "ckm"\nptable = "pt.txt"\nseed = 11\n')
    r1, r2 = run_table_spec(tmp_path / "b.toml"), run_table_spec(tmp_path / "b.toml")
    assert np.array_equal(r1.result.perturbed, r2.result.perturbed)  # same seed, same keys, same noise
    d = r1.to_dict()
    assert d["n_cells"] == 12 and "11" not in (tmp_path / "b_published.csv").read_text().split("\n")[0]
    (tmp_path / "c.toml").write_text(
        '[input]\nmicrodata = "m.csv"\n[table]\ndimensions = ["r", "s"]\nresponse = "y"\n'
        '[protection]\nmethod = "ckm"\nseed = 3\n'
        'ptable = {D = 3, V = 1.0, kind = "magnitude", step = 2, icat = [1, 3]}\n'
        "flex = [0.05, 0.2, 1000, 3]\nepsilon = [1, 0.5]\n")
    r3 = run_table_spec(tmp_path / "c.toml")
    assert r3.to_dict()["kind"] == "magnitude" and r3.result.n_perturbed > 0
    assert (r3.result.perturbed >= 0).all()


def test_spec_writes_public_page_and_csv_with_perturbed_status(tmp_path):
    """The CKM spec run writes the public page and CSV (sdckit.tables.public) as the other
    methods do: non-empty cells `perturbed` (marked p), empty cells `safe` and 0."""
    import re

    g = np.random.default_rng(5)
    df = pd.DataFrame({"r": g.choice(list("abc"), 400), "s": g.choice(list("xy"), 400)})
    df = df[~((df.r == "c") & (df.s == "y"))]  # one empty inner cell
    df.to_csv(tmp_path / "m.csv", index=False)
    (tmp_path / "pt.txt").write_text(PTable.generate(D=3, V=1.5, js=1).to_text())
    (tmp_path / "t.toml").write_text('[input]\nmicrodata = "m.csv"\n[table]\ndimensions = ["r", "s"]\n'
                                     '[protection]\nmethod = "ckm"\nptable = "pt.txt"\nseed = 4\n')
    from sdckit.tables.spec import run_table_spec
    run = run_table_spec(tmp_path / "t.toml")
    assert Path(run.outputs["public_table"]).name == "t_public.csv"
    pub = pd.read_csv(run.outputs["public_table"], dtype=str)
    # the empty cell by hand: (c, y) has no records, so it is published 0 and `safe`
    empty = pub[(pub.r == "c") & (pub.s == "y")]
    assert empty.status.tolist() == ["safe"] and empty.value.tolist() == ["0"]
    rest = pub.drop(empty.index)
    assert len(pub) == 12 and set(rest.status) == {"perturbed"}
    res = run.result
    assert [int(v) for v in pub.value] == [int(round(v)) for v in res.perturbed]
    # the lost additivity, counted by hand from the public CSV: each total against its parts
    v = {(a, b): int(x) for a, b, x in zip(pub.r, pub.s, pub.value)}
    rs, ss = ["a", "b", "c", "Total"], ["x", "y", "Total"]
    broken = sum(v[(a, "Total")] != v[(a, "x")] + v[(a, "y")] for a in rs) \
        + sum(v[("Total", b)] != sum(v[(a, b)] for a in "abc") for b in ss)  # 4 rows + 3 columns
    page = Path(run.outputs["public_report"]).read_text()
    m = re.search(r"(\d+) of (\d+) total = sum-of-parts relations do not hold", page)
    assert m and int(m.group(1)) == broken and int(m.group(2)) == 7
    assert page.count("<td class='perturbed'>") == 11 and "perturbed by the cell key method" in page
    assert "seed" not in page and "Key" not in pub.columns
