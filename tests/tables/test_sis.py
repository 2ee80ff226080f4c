"""Sequential importance sampling of tables (Chen, Diaconis, Holmes & Liu 2005) against exact counts."""

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.errors import ParameterError, SDCError
from sdckit.tables.count import count_tables, enumerate_tables
from sdckit.tables.sis import format_big, sis_count


def seeded_cases(n_cases=100):
    """Small random margins (3 x 3 to 4 x 5, totals 8 to 40) from fixed seeds."""
    out = []
    for seed in range(n_cases):
        rng = np.random.default_rng(1000 + seed)
        R, C = int(rng.integers(3, 5)), int(rng.integers(3, 6))
        t = rng.multinomial(int(rng.integers(8, 41)), rng.dirichlet(np.ones(R * C))).reshape(R, C)
        out.append((t.sum(1).tolist(), t.sum(0).tolist()))
    return out


def test_sis_covers_exact_counts_within_three_standard_errors():
    # exact counts from count_tables (checked against brute force and Barvinok in test_count_dp)
    covered = 0
    for k, (rows, cols) in enumerate(seeded_cases()):
        exact = count_tables(rows, cols)
        res = sis_count(rows, cols, n_samples=400, rng=k)
        covered += res.covers(exact, 3.0)
    assert covered >= 95


@pytest.mark.parametrize("proposal", ["product", "uniform"])
def test_both_proposals_are_unbiased_on_the_seed_margins(proposal):
    # seed 002: 18,272,363,056 tables share the margins
    res = sis_count([20, 55, 25, 35], [50, 35, 30, 20], n_samples=4000, proposal=proposal, rng=7)
    assert res.covers(18_272_363_056, 3.0)
    assert 1 <= res.ess <= res.n_samples


def test_cell_distributions_match_exact_enumeration():
    rows, cols = [6, 4, 5], [5, 3, 7]
    tabs = enumerate_tables(rows, cols)  # every table, uniform distribution
    res = sis_count(rows, cols, n_samples=20_000, keep_tables=True, rng=3)
    for i, j in [(0, 0), (1, 2), (2, 1)]:
        exact = np.bincount(tabs[:, i, j]) / len(tabs)
        est = res.cell_distribution(i, j)
        m = max(exact.size, est.size)
        assert np.abs(np.pad(exact, (0, m - exact.size)) - np.pad(est, (0, m - est.size))).max() < 0.02


def test_sampled_tables_have_the_margins():
    rows, cols = [7, 0, 9, 4], [3, 8, 2, 7]
    res = sis_count(rows, cols, n_samples=200, keep_tables=True, rng=1)
    assert (res.tables.sum(2) == rows).all() and (res.tables.sum(1) == cols).all() and (res.tables >= 0).all()


def test_fixed_seed_gives_fixed_estimate():
    a = sis_count([5, 6, 7], [9, 9], n_samples=50, rng=11)
    b = sis_count([5, 6, 7], [9, 9], n_samples=50, rng=11)
    assert a.log10_estimate == b.log10_estimate


@pytest.mark.parametrize("proposal", ["product", "uniform"])
def test_two_columns_is_exact(proposal):
    # with two columns the first column fixes the table and every filling of it is one table:
    # every weight equals the number of fillings, so the estimate is exact with no spread
    rows, cols = [4, 4, 4], [7, 5]
    res = sis_count(rows, cols, n_samples=20, proposal=proposal, rng=0)
    assert round(10 ** res.log10_estimate) == count_tables(rows, cols)
    assert res.ess == pytest.approx(20)


def test_big_tables_report_strings():
    rng = np.random.default_rng(5)
    t = rng.multinomial(600, np.full(100, 0.01)).reshape(10, 10)
    d = sis_count(t.sum(1), t.sum(0), n_samples=50, rng=1).to_dict()
    assert isinstance(d["log10_estimate"], float) and d["ess"] > 0
    assert format_big(400.5) == "3.16228e+400"


def test_errors():
    with pytest.raises(ParameterError):
        sis_count([1, 2], [3], n_samples=1)
    with pytest.raises(SDCError):
        sis_count([1, 2], [4])


def test_cli_estimate_json():
    r = CliRunner().invoke(app, ["table", "count", "--rows", "20,55,25,35", "--cols", "50,35,30,20",
                                 "--estimate", "--samples", "500", "--seed", "1", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert {"estimate", "std_error", "ess"} <= set(d)
    assert abs(d["estimate"] - 18_272_363_056) <= 4 * d["std_error"]


def test_cli_exact_json():
    r = CliRunner().invoke(app, ["table", "count", "--rows", "108,286,71,127", "--cols", "220,215,93,64", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    # Diaconis & Gangolli (1995); below 2**53 it is a JSON number
    assert d["count"] == 1_225_914_276_768_514 and d["method"] == "ie-mitm" and d["seconds"] >= 0
    assert math.isfinite(d["seconds"])
