"""Log-linear model risk (Skinner & Shlomo 2008; sdcMicro's modRisk methods).

The independent fit is statsmodels' GLM Poisson (its own IRLS and its own patsy coding) on
the full grid of the key table; tau1 / tau2 are then computed by hand from its fitted means
with S&S eq. 5-6.
"""

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.risk.loglinear import (
    METHODS,
    expected_inverse_population,
    loglinear_risk,
    microdata_loglinear_risk,
    parse_formula,
)


def small_sample(seed=3, n=400):
    """Three keys (4 x 3 x 2 = 24 cells), dependent a-b, weights 5..40 by stratum a."""
    rng = np.random.default_rng(seed)
    a = rng.choice(4, n, p=[0.5, 0.3, 0.15, 0.05])
    b = np.where(rng.random(n) < 0.6, a % 3, rng.integers(0, 3, n))
    c = rng.integers(0, 2, n)
    w = np.array([5.0, 10.0, 20.0, 40.0])[a] * rng.uniform(1.0, 1.5, n)
    return pd.DataFrame({"a": a, "b": b, "c": c, "w": w})


def grid_table(df, keys=("a", "b", "c")):
    """Full grid with counts f, weight sums W, sums of 1/w (independent of sdckit)."""
    levels = [sorted(df[k].unique()) for k in keys]
    grid = pd.DataFrame(list(itertools.product(*levels)), columns=list(keys))
    agg = df.groupby(list(keys)).agg(f=("w", "size"), W=("w", "sum"),
                                      P=("w", lambda s: (1 / s).sum())).reset_index()
    t = grid.merge(agg, on=list(keys), how="left").fillna({"f": 0, "W": 0.0, "P": 0.0})
    return t


def taus_by_hand(t, mu):
    su = t["f"].to_numpy() == 1
    pi = t["P"].to_numpy()[su]                     # 1 / w of the unique record
    nu = mu[su] * (1 - pi) / pi                    # lambda (1 - pi), lambda = mu / pi
    return np.exp(-nu).sum(), ((1 - np.exp(-nu)) / nu).sum()


def sm_fit(t, formula, offset=None, response="f"):
    d = t.copy()
    for k in ("a", "b", "c"):
        d[k] = d[k].astype(str)
    m = smf.glm(f"{response} ~ {formula}", data=d, family=sm.families.Poisson(), offset=offset)
    return m.fit(tol=1e-12, maxiter=200).fittedvalues.to_numpy()


@pytest.mark.parametrize("formula,smformula", [
    (None, "C(a) + C(b) + C(c)"),
    ("a + b + c + a:b", "C(a) + C(b) + C(c) + C(a):C(b)"),
])
def test_default_matches_statsmodels(formula, smformula):
    df = small_sample()
    t = grid_table(df)
    mu = sm_fit(t, smformula)
    tau1, tau2 = taus_by_hand(t, mu)
    codes = [df[k].to_numpy() for k in ("a", "b", "c")]
    r = loglinear_risk(codes, df["w"].to_numpy(), names=["a", "b", "c"], formula=formula)
    assert r.n_sample_uniques == int((t["f"] == 1).sum()) > 0
    assert r.tau1 == pytest.approx(tau1, rel=1e-7)
    assert r.tau2 == pytest.approx(tau2, rel=1e-7)
    # fitted means of the non-empty cells (grid order is C order in both)
    nonempty = t["f"].to_numpy() > 0
    assert np.allclose(r.cells["mu"].to_numpy(), mu[nonempty], rtol=1e-7)


def test_weighted_methods_match_statsmodels():
    df = small_sample(seed=11)
    t = grid_table(df)
    f, W = t["f"].to_numpy(), t["W"].to_numpy()
    n, N = f.sum(), W.sum()
    codes = [df[k].to_numpy() for k in ("a", "b", "c")]
    main = "C(a) + C(b) + C(c)"
    # CE: offset log(f / W + 0.1) with 0/0 read as 0 (sdcMicro modRisk)
    ec = np.log(np.where(W > 0, f / np.where(W > 0, W, 1), 0.0) + 0.1)
    mu_ce = sm_fit(t, main, offset=ec)
    # PML: response round(W n / N)
    t2 = t.assign(ft=np.round(W * n / N))
    mu_pml = sm_fit(t2, main, response="ft")
    # weightedLLM: W as a linear predictor
    mu_wl = sm_fit(t.assign(Ws=W / W.max()), main + " + Ws")
    for method, mu in (("CE", mu_ce), ("PML", mu_pml), ("weightedLLM", mu_wl)):
        r = loglinear_risk(codes, df["w"].to_numpy(), names=["a", "b", "c"], method=method)
        tau1, tau2 = taus_by_hand(t, mu)
        assert r.tau1 == pytest.approx(tau1, rel=1e-6), method
        assert r.tau2 == pytest.approx(tau2, rel=1e-6), method


def test_ipf_equals_newton_with_interaction_and_zero_margin():
    # both are the maximum-likelihood fit; an empty (a, b) margin makes mu = 0 there
    df = small_sample(seed=5)
    df = df[~((df["a"] == 3) & (df["b"] == 0))]
    codes = [df[k].to_numpy() for k in ("a", "b", "c")]
    kw = dict(names=["a", "b", "c"], formula="a*b + c")
    r_irls = loglinear_risk(codes, df["w"].to_numpy(), method="default", **kw)
    r_ipf = loglinear_risk(codes, df["w"].to_numpy(), method="IPF", **kw)
    assert r_irls.converged and r_ipf.converged
    assert r_irls.tau1 == pytest.approx(r_ipf.tau1, rel=1e-7)
    assert np.allclose(r_irls.cells["mu"], r_ipf.cells["mu"], rtol=1e-6)


def test_sdcmicro_convention_by_hand():
    # sdcMicro: nu = mu (1 - sum of 1/w in the cell), sums divided by the non-empty cells
    df = small_sample(seed=7)
    t = grid_table(df)
    mu = sm_fit(t, "C(a) + C(b) + C(c)")
    su = t["f"].to_numpy() == 1
    nu = mu[su] * (1 - t["P"].to_numpy()[su])
    m = int((t["f"] > 0).sum())
    r = loglinear_risk([df[k].to_numpy() for k in "abc"], df["w"].to_numpy(), names=list("abc"))
    assert r.sdcmicro_gr1 == pytest.approx(np.exp(-nu).sum() / m, rel=1e-7)
    assert r.sdcmicro_gr2 == pytest.approx(((1 - np.exp(-nu)) / nu).sum() / m, rel=1e-7)


@pytest.mark.parametrize("f,nu", [(1, 0.0), (1, 0.3), (1, 40.0), (2, 0.7), (3, 5.0), (7, 60.0)])
def test_expected_inverse_population_brute_force(f, nu):
    # E(1 / (f + X)), X ~ Poisson(nu), by direct summation of the Poisson series
    from scipy.stats import poisson
    x = np.arange(0, 2000)
    ref = np.sum(poisson.pmf(x, nu) / (f + x))
    assert expected_inverse_population(np.array([f]), np.array([nu]))[0] == pytest.approx(ref, rel=1e-9)


def test_record_risk_and_microdata():
    df = small_sample(seed=2)
    md = Microdata(df.assign(a=df["a"].astype(str)), key_vars=["a", "b", "c"], weight="w")
    r = microdata_loglinear_risk(md)
    assert r.record_risk.shape == (len(df),)
    su = r.record_pop_unique > 0
    assert r.record_pop_unique.sum() == pytest.approx(r.tau1)
    # per-record risk of sample uniques sums to tau2
    fk = df.groupby(["a", "b", "c"])["w"].transform("size").to_numpy()
    assert r.record_risk[fk == 1].sum() == pytest.approx(r.tau2)
    assert np.all(r.record_pop_unique[fk > 1] == 0) and su.sum() <= (fk == 1).sum()
    s = r.summary()
    assert set(s) >= {"method", "tau1", "tau2", "diagnostic", "sdcmicro_gr1"}


def test_diagnostic_flags_underfitting():
    # strongly dependent keys: main effects under-fit (positive score), the saturated
    # two-way model does not
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.integers(0, 12, n)
    b = np.where(rng.random(n) < 0.9, a, rng.integers(0, 12, n))
    c = rng.integers(0, 3, n)
    codes = [a, b, c]
    w = np.full(n, 20.0)
    main = loglinear_risk(codes, w, names=list("abc"))
    inter = loglinear_risk(codes, w, names=list("abc"), formula="a*b + c")
    assert main.diagnostic["tau1"]["score"] > 1.96
    assert "under" in main.diagnostic["tau1"]["verdict"]
    assert abs(inter.diagnostic["tau1"]["score"]) < abs(main.diagnostic["tau1"]["score"])


# ------------------------------------------------------------------ bad input

def test_weights_below_one():
    df = small_sample()
    w = df["w"].to_numpy().copy()
    w[4] = 0.5
    with pytest.raises(InputError, match=r"below 1.*fraction above 1"):
        loglinear_risk([df[k].to_numpy() for k in "abc"], w, names=list("abc"), weight_name="w")


def test_rank_deficient_names_term():
    # every cell holds one record with the same weight: the weighted-LLM covariate W is
    # constant, aliased with the intercept
    codes = [np.repeat(np.arange(3), 2), np.tile(np.arange(2), 3)]
    with pytest.raises(InputError, match=r"rank-deficient: the term 'weights'"):
        loglinear_risk(codes, np.full(6, 10.0), names=["a", "b"], method="weightedLLM")


def test_no_sample_uniques_says_so():
    codes = [np.repeat(np.arange(3), 4), np.tile(np.arange(2), 6)]
    r = loglinear_risk(codes, np.full(12, 10.0), names=["a", "b"])
    assert r.n_sample_uniques == 0 and r.tau1 == 0 and r.tau2 == 0
    assert any("no sample uniques" in n for n in r.notes)


def test_missing_keys_and_bad_formula():
    with pytest.raises(InputError, match="missing in 1 records"):
        loglinear_risk([np.array([0, 1, -1]), np.array([0, 1, 1])], None, names=["a", "b"])
    with pytest.raises(InputError, match="not a key variable"):
        parse_formula("a + z", ["a", "b"])
    with pytest.raises(InputError, match="has no main effect"):
        parse_formula("a", ["a", "b"])
    with pytest.raises(InputError, match="needs its lower-order term"):
        parse_formula("a + b + c + a:b:c", ["a", "b", "c"])
    assert parse_formula("~ a*b", ["a", "b"]) == ((0,), (1,), (0, 1))


# ------------------------------------------------------------------ properties

@settings(max_examples=30)
@given(st.integers(0, 10_000), st.sampled_from(METHODS))
def test_tau_bounds(seed, method):
    """0 <= tau1 <= tau2 <= number of sample uniques (exp(-nu) <= (1 - exp(-nu)) / nu <= 1)."""
    rng = np.random.default_rng(seed)
    n = 150
    codes = [rng.integers(0, 4, n), rng.integers(0, 5, n), rng.integers(0, 3, n)]
    w = rng.uniform(1.0, 50.0, n)
    r = loglinear_risk(codes, w, names=list("abc"), method=method)
    assert 0 <= r.tau1 <= r.tau2 + 1e-12
    assert r.tau2 <= r.n_sample_uniques + 1e-9
    assert np.all((r.record_risk > 0) & (r.record_risk <= 1 + 1e-12))


@given(st.integers(0, 10_000))
def test_census_every_unique_is_population_unique(seed):
    """Weights 1 (pi = 1): nu = 0, so tau1 = tau2 = the number of sample uniques."""
    rng = np.random.default_rng(seed)
    codes = [rng.integers(0, 5, 80), rng.integers(0, 6, 80)]
    r = loglinear_risk(codes, np.ones(80), names=["a", "b"])
    assert r.tau1 == pytest.approx(r.n_sample_uniques)
    assert r.tau2 == pytest.approx(r.n_sample_uniques)


# ------------------------------------------------------------------ gate, report, command line

def test_tau_gates_recompute_on_released_data():
    from sdckit.gate import run_gate
    from sdckit.registry import discover, gate_check
    discover()
    df = small_sample(seed=9)
    md = Microdata(df, key_vars=["a", "b", "c"], weight="w")
    r = microdata_loglinear_risk(md)
    out = {o.name: o for o in run_gate({"max_tau1": r.tau1 + 0.01, "max_tau2": r.tau2 - 0.01}, md, md, [])}
    assert out["max_tau1"].passed and out["max_tau1"].value["tau1"] == pytest.approx(r.tau1)
    assert not out["max_tau2"].passed and "recode or suppress" in out["max_tau2"].detail
    with pytest.raises(InputError):
        gate_check("max_tau1").validate(-1)
    with pytest.raises(InputError, match="needs sampling weights"):
        run_gate({"max_tau1": 1.0}, md, Microdata(df, key_vars=["a", "b", "c"]), [])


def test_report_and_cli_json(tmp_path):
    import json

    from sdckit.risk import measure_risk
    df = small_sample(seed=9)
    md = Microdata(df, key_vars=["a", "b", "c"], weight="w")
    rep = measure_risk(md, loglinear_method="CE", population_uniques=True, attacker_threshold=0.2)
    s = rep.to_dict()
    r = microdata_loglinear_risk(md, method="CE")
    assert s["loglinear"] == {"method": "CE", "tau1": pytest.approx(r.tau1), "tau2": pytest.approx(r.tau2),
                              "gr1": pytest.approx(r.sdcmicro_gr1), "gr2": pytest.approx(r.sdcmicro_gr2)}
    assert {"population_uniques", "attacker", "loglinear_model"} <= set(s)
    assert "log-linear risk (CE" in rep.describe() and "tau1" in rep.report_html()
    json.dumps(s)
    from typer.testing import CliRunner

    from sdckit.cli import app
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    out = CliRunner().invoke(app, ["risk", str(path), "--keys", "a,b,c", "--weight", "w",
                                   "--model", "loglinear", "--method", "CE",
                                   "--formula", "a+b+c+a:b", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    r2 = microdata_loglinear_risk(md, method="CE", formula="a+b+c+a:b")
    assert d["loglinear"]["method"] == "CE"
    assert d["loglinear"]["tau1"] == pytest.approx(r2.tau1) and d["loglinear"]["tau2"] == pytest.approx(r2.tau2)
    assert "n_sample_uniques" in d and "global_risk" in d       # the other keys stay


def test_margin_design_equals_explicit_sparse_design():
    """X'WX, X'v and X beta from margins equal the explicit sparse design's products."""
    from sdckit.risk.loglinear import MarginDesign, design_matrix
    rng = np.random.default_rng(8)
    shape, terms, names = (4, 3, 5), ((0,), (1,), (2,), (0, 1), (1, 2)), ["a", "b", "c"]
    X, cols = design_matrix(shape, terms, names)
    cov = rng.random(60)
    d = MarginDesign(shape, terms, names, covariate=cov)
    Xc = np.hstack([X.toarray(), cov[:, None]])
    w, v, beta = rng.random(60), rng.normal(size=60), rng.normal(size=Xc.shape[1])
    assert np.allclose(d.gram(w), Xc.T @ (w[:, None] * Xc))
    assert np.allclose(d.xt(v), Xc.T @ v)
    assert np.allclose(d.x(beta), Xc @ beta)
    assert d.col_terms == cols + ["weights"]


def test_leverages_by_explicit_hat_matrix():
    """h_kk from margins equals the diagonal of W^1/2 X (X'WX)^-1 X' W^1/2; trace = p."""
    from sdckit.risk.loglinear import MarginDesign, design_matrix
    rng = np.random.default_rng(2)
    shape, terms, names = (3, 4, 2), ((0,), (1,), (2,), (0, 1)), ["a", "b", "c"]
    X = design_matrix(shape, terms, names)[0].toarray()
    mu = rng.uniform(0.2, 5.0, X.shape[0])
    H = np.sqrt(mu)[:, None] * X @ np.linalg.inv(X.T @ (mu[:, None] * X)) @ X.T * np.sqrt(mu)[None, :]
    lev = MarginDesign(shape, terms, names).leverages(mu)
    assert np.allclose(lev, np.diag(H))
    assert lev.sum() == pytest.approx(X.shape[1])


def test_diagnostic_near_zero_for_the_true_model():
    """Counts drawn from the fitted model family itself: |B| stays small (leverage-corrected)."""
    rng = np.random.default_rng(12)
    n = 8000
    a = np.minimum(rng.geometric(0.15, n) - 1, 14)
    b = np.where(rng.random(n) < 0.5, a % 10, rng.integers(0, 10, n))
    c = rng.integers(0, 8, n)
    r = loglinear_risk([a, b, c], np.full(n, 30.0), names=list("abc"), formula="a*b + c")
    assert abs(r.diagnostic["tau1"]["score"]) < 3


def test_forward_selection_finds_the_interaction():
    """a and b are dependent, c and d independent: the search adds a:b and stops."""
    from sdckit.risk.loglinear import select_loglinear_model
    rng = np.random.default_rng(21)
    n = 3000
    a = rng.integers(0, 10, n)
    b = np.where(rng.random(n) < 0.7, a, rng.integers(0, 10, n))
    c, d = rng.integers(0, 4, n), rng.integers(0, 3, n)
    r = select_loglinear_model([a, b, c, d], np.full(n, 25.0), names=list("abcd"))
    steps = r.extra["selection"]
    assert steps[0]["score"] > 1.96
    assert steps[1]["formula"].endswith("+ a:b")
    assert abs(r.diagnostic["tau1"]["score"]) <= 1.96 and r.formula == steps[-1]["formula"]
    assert r.summary()["selection"] == steps
