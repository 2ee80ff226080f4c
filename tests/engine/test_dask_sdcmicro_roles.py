"""The Dask engine and sdcMicro's roles and methods: PRAM on a ``pram_vars`` variable (not a key),
the role read back from a DDI codebook, and the refusals of the steps that need the whole file
at once (each names the method and says to use the in-memory engine)."""

import numpy as np
import pandas as pd
import pytest

from sdckit.engine.frame import from_pandas
from sdckit.engine.masking import PramSettings, fit_pram, transform
from sdckit.engine.run import load_engine_spec, protect_with_dask
from sdckit.errors import InputError, SpecError

from .conftest import person_frame

SPEC = """
[input]
path = "persons"
format = "parquet"

[roles]
key_vars = ["region", "sex", "age"]
pram_vars = ["job"]
numeric_vars = ["income", "hours"]
weight = "weight"

[run]
seed = 7

[[steps]]
{step}

[gate]
none = "a test of the engine, not of the gate"

[output]
directory = "release"
data = "persons_released.parquet"
"""


def _write(tmp_path, step: str, n: int = 2000):
    folder = tmp_path / "persons"
    folder.mkdir(exist_ok=True)
    df = person_frame(n, seed=2)
    for i, part in enumerate(np.array_split(np.arange(n), 2)):
        df.iloc[part].to_parquet(folder / f"part.{i}.parquet", index=False)
    spec = tmp_path / "release.toml"
    spec.write_text(SPEC.format(step=step))
    return df, spec


def test_pram_on_a_pram_variable_runs_on_dask(tmp_path):
    df, spec = _write(tmp_path, 'method = "pram"\nvariables = ["job"]\nmatrix = { type = "invariant" }\n'
                                "min_diagonal = 0.6")
    run = protect_with_dask(spec, n_workers=1, processes=False, progress=False)
    parts = sorted(run.paths["data"].glob("*.parquet"), key=lambda f: int(f.stem.split(".")[-1]))
    out = pd.concat([pd.read_parquet(f) for f in parts], ignore_index=True)
    assert len(out) == len(df)
    assert set(out["job"].dropna()) <= set(df["job"].dropna())
    before = df["job"].value_counts().sort_index()
    after = out["job"].value_counts().reindex(before.index, fill_value=0)
    assert (before != after).any()                       # PRAM changed some records
    P = run.plans[0].matrices["job"][0].P                   # the fitted matrix of the run
    assert np.diag(P).min() >= 0.6 - 1e-12 and np.allclose(P.sum(axis=1), 1.0)


def test_fit_pram_takes_pram_vars_and_refuses_other_columns(client):
    df = person_frame(600, seed=5)
    pmd = from_pandas(df, npartitions=2, key_vars=["region", "sex"], pram_vars=["job"])
    assert pmd.pram_vars == ("job",) and list(pmd.categories["job"]) == ["a", "b", "c", "d", "e"]
    plan = fit_pram(pmd, PramSettings(("job",), min_diagonal=0.8), np.random.SeedSequence(1))
    out = transform(pmd, [plan], [np.random.SeedSequence(2)]).frame.compute()
    assert set(out["job"].dropna()) <= set("abcde")
    with pytest.raises(InputError, match="'age' is not a key variable or a PRAM variable; add it to "
                                         "roles.key_vars or roles.pram_vars"):
        fit_pram(pmd, PramSettings(("age",)))


def test_ddi_codebook_keeps_the_pram_role(tmp_path):
    from sdckit import Microdata
    from sdckit.catalogue.ddi import codebook_from_microdata, read_ddi, write_ddi

    md = Microdata(person_frame(50, seed=1, missing=False), key_vars=["region", "sex"], pram_vars=["job"])
    write_ddi(codebook_from_microdata(md, title="persons"), tmp_path / "c.xml")
    assert tuple(read_ddi(tmp_path / "c.xml").roles()["pram_vars"]) == ("job",)


@pytest.mark.parametrize("step, names", [
    ('method = "noise"\nvariables = ["income", "hours"]\nlevel = 0.1\nkind = "correlated2"', "correlated2"),
    ('method = "shuffle"\nvariables = ["income", "hours"]', "shuffle"),
    ('method = "microaggregation"\nvariables = ["income", "hours"]\nalgorithm = { type = "clustpca" }', "clustpca"),
    ('method = "microaggregation"\nvariables = ["income", "hours"]\nalgorithm = { type = "rmd" }', "rmd"),
    ('method = "record_swap"\nhierarchy = ["region", "sex"]\nswap_rate = 0.05\ndonors = "anywhere"\n'
     "allow_across_top = true", "anywhere"),
], ids=["correlated2", "shuffle", "clustpca", "rmd", "donors_anywhere"])
def test_whole_file_steps_are_refused_naming_the_method_and_the_in_memory_engine(tmp_path, step, names):
    _, spec = _write(tmp_path, step, n=50)
    with pytest.raises(SpecError) as info:
        load_engine_spec(spec)
    msg = str(info.value)
    assert names in msg and "memory engine" in msg, msg
    assert "\n" not in msg
