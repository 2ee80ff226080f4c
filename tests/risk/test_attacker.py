"""Prosecutor, journalist and marketer risk (El Emam; ARX), against hand counts."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit import InputError, Microdata
from sdckit.risk.attacker import (
    attacker_risks,
    journalist_risk,
    marketer_risk,
    population_counts,
    prosecutor_risk,
)


def data():
    # classes: (1,x) x3, (1,y) x1, (2,y) x2 -> f = 3,3,3,1,2,2
    return pd.DataFrame({"a": [1, 1, 1, 1, 2, 2], "b": ["x", "x", "x", "y", "y", "y"],
                         "w": [10.0, 10.0, 10.0, 4.0, 5.0, 5.0]})


def test_prosecutor_by_hand():
    md = Microdata(data(), key_vars=["a", "b"], weight="w")
    rep = attacker_risks(md, threshold=0.4)
    p = rep.prosecutor
    # 1/f = 1/3,1/3,1/3,1,1/2,1/2: highest 1, average = 3 classes / 6 records, above 0.4: 3 records
    assert p.highest == 1.0
    assert p.average == pytest.approx(3 / 6)
    assert p.n_above == 3 and p.share_above == pytest.approx(0.5)


def test_journalist_and_marketer_from_weights_by_hand():
    md = Microdata(data(), key_vars=["a", "b"], weight="w")
    rep = attacker_risks(md, threshold=0.1)
    # F = 30,30,30,4,10,10 -> 1/F; marketer = mean of 1/F = (3/30 + 1/4 + 2/10) / 6
    j = rep.journalist
    assert j.highest == pytest.approx(0.25)
    assert j.n_above == 1                         # only 1/4 > 0.1 (1/10 is not above)
    m = rep.marketer
    assert m.average == pytest.approx((3 / 30 + 1 / 4 + 2 / 10) / 6)
    assert j.population == "weights"


def test_population_table():
    md = Microdata(data(), key_vars=["a", "b"])
    pop = pd.DataFrame({"a": [1, 1, 2, 3], "b": ["x", "y", "y", "x"], "count": [50, 2, 8, 7]})
    rep = attacker_risks(md, population=pop, threshold=0.3)
    assert rep.journalist.highest == pytest.approx(0.5)
    assert rep.marketer.average == pytest.approx((3 / 50 + 1 / 2 + 2 / 8) / 6)
    assert rep.journalist.population == "population table"


def test_population_table_not_covering():
    md = Microdata(data(), key_vars=["a", "b"])
    pop = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "count": [50, 8]})
    with pytest.raises(InputError, match=r"does not cover 1 key combinations .*a=1, b='y'"):
        attacker_risks(md, population=pop)
    with pytest.raises(InputError, match="count column"):
        population_counts(data(), ["a", "b"], pop.drop(columns="count"))


def test_population_smaller_than_sample():
    with pytest.raises(InputError, match="below the sample count"):
        journalist_risk(np.array([3.0]), np.array([2.0]))


@given(st.lists(st.integers(1, 8), min_size=1, max_size=40), st.floats(0.0, 1.0),
       st.floats(1.0, 30.0))
def test_orderings(fk, threshold, extra):
    """Journalist risk <= prosecutor risk per record (F >= f); marketer = mean journalist."""
    fk = np.array(fk, dtype=float)
    Fk = fk * extra
    p = prosecutor_risk(fk, threshold)
    j = journalist_risk(fk, Fk, threshold)
    m = marketer_risk(fk, Fk, threshold)
    assert np.all(j.record_risk <= p.record_risk + 1e-12)
    assert j.highest <= p.highest + 1e-12 and j.share_above <= p.share_above + 1e-12
    assert m.average == pytest.approx(j.record_risk.mean())
    assert 0 <= p.share_above <= 1


def test_attacker_gates():
    from sdckit.gate import run_gate
    from sdckit.registry import discover
    discover()
    md = Microdata(data(), key_vars=["a", "b"], weight="w")
    out = {o.name: o for o in run_gate({"max_prosecutor_risk": 0.5, "max_journalist_risk": 0.25,
                                        "max_marketer_risk": 0.05}, md, md, [])}
    assert not out["max_prosecutor_risk"].passed        # a sample unique: 1/f = 1
    assert out["max_journalist_risk"].passed            # highest 1/F = 1/4
    assert not out["max_marketer_risk"].passed          # (3/30 + 1/4 + 2/10) / 6 = 0.0917
    assert out["max_marketer_risk"].value["average"] == pytest.approx((3 / 30 + 1 / 4 + 2 / 10) / 6)


def test_population_table_from_the_command_line(tmp_path):
    import json

    from typer.testing import CliRunner

    from sdckit.cli import app
    data().to_csv(tmp_path / "d.csv", index=False)
    pd.DataFrame({"a": [1, 1, 2], "b": ["x", "y", "y"], "count": [50, 2, 8]}).to_csv(
        tmp_path / "pop.csv", index=False)
    out = CliRunner().invoke(app, ["risk", str(tmp_path / "d.csv"), "--keys", "a,b", "--attacker", "0.3",
                                   "--population-table", str(tmp_path / "pop.csv"), "--json"])
    assert out.exit_code == 0, out.output
    j = json.loads(out.stdout)["attacker"]["journalist"]
    assert j["highest"] == pytest.approx(0.5) and j["population"] == "population table"
