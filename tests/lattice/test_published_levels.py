"""A generalisation's published levels as the intruder applies them: the linkage measures and
gates that replay a release's global recodings get the chosen levels (the step's hierarchy
files are not among its public settings, so the step cannot be rebuilt from them).

Reference: the intruder's view built independently with the hierarchy tables
(``Hierarchy.mapping`` at the chosen levels, pandas), and the expected correct links counted
by hand with a group-by (each released record's match count, 1/m for a correct match).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdckit import Microdata
from sdckit.cli import main
from sdckit.lattice.hierarchies import find_hierarchies
from sdckit.lattice.steps import Generalise
from sdckit.lattice.transform import SUPPRESSED
from sdckit.registry import published_recodes
from sdckit.risk.identifiers import linkage_all_columns

from ..conftest import shared_file

QIS = ["sex", "age", "race", "education"]


def _release():
    frame = pd.read_csv(shared_file("arx_adult.csv"), dtype=str).iloc[:4000][QIS + ["salary-class"]]
    md = Microdata(frame, key_vars=QIS)
    step = Generalise(hierarchy_dir=str(shared_file("arx_adult_hierarchies")), k=5, suppression=0.02)
    return frame, md, step.apply(md)


def test_the_published_levels_map_each_value_to_its_released_label():
    frame, md, res = _release()
    hier = find_hierarchies(shared_file("arx_adult_hierarchies"), QIS)
    levels = res.summary["levels"]
    (recode,) = published_recodes([res])
    view = recode.apply(md).microdata.frame
    released = res.microdata.frame
    for q in QIS:   # every record, the suppressed ones too
        assert (view[q].to_numpy() == frame[q].map(hier[q].mapping(levels[q])).to_numpy()).all()
    # the view differs from the release exactly on the records the step suppressed (all QIs '*')
    differs = (view[QIS].to_numpy() != released[QIS].to_numpy()).any(axis=1)
    assert differs.sum() == res.summary["n_suppressed"] > 0
    assert (released[QIS].to_numpy()[differs] == SUPPRESSED).all()
    assert md.frame.equals(frame)   # the input is not modified


def test_the_linkage_measure_replays_the_levels():
    frame, md, res = _release()
    lk = linkage_all_columns(md, res.microdata, QIS, recodes=published_recodes([res]))
    # by hand: the intruder's view of each person, the released records matching it exactly
    hier = find_hierarchies(shared_file("arx_adult_hierarchies"), QIS)
    view = pd.DataFrame({q: frame[q].map(hier[q].mapping(res.summary["levels"][q])) for q in QIS})
    rel = res.microdata.frame[QIS].astype(str).reset_index(drop=True)
    m = rel.groupby(QIS, sort=False)[QIS[0]].transform("size").to_numpy()
    correct = (rel.to_numpy() == view.astype(str).to_numpy()).all(axis=1)
    assert np.isclose(lk["expected_correct_links"], (correct / m).sum())
    assert lk["expected_correct_links"] > 0   # the levels were applied: without them no record matches


def test_a_release_with_a_generalise_step_and_the_all_columns_linkage_gate(tmp_path, capsys):
    spec = tmp_path / "release.toml"
    spec.write_text(f"""
[input]
path = "{shared_file('arx_adult.csv')}"

[roles]
key_vars = ["sex", "age", "race", "education"]

[[steps]]
method = "remove"
variables = ["workclass", "marital-status", "occupation", "native-country", "salary-class"]

[[steps]]
method = "generalise"
hierarchy_dir = "{shared_file('arx_adult_hierarchies')}"
k = 5
suppression = 0.01

[gate]
k_anonymity = 5
max_linkage_all_columns = 0.5

[output]
directory = "{tmp_path / 'out'}"
""", encoding="utf-8")
    assert main(["protect", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "linkage" in out.lower()
