"""One spec, both engines: every registered step runs on the Dask engine or says why not, and
every step declared for both engines gives on the Dask engine what docs/engine.md promises.

For each such step, one small release spec (one step, CSV input read in several byte blocks,
Parquet output) runs in memory (``Release``) and on the Dask engine (``protect_with_dask``
on the session's 2-worker cluster), with the same seed, and the releases are compared:

* bit for bit (``same_values``: floats by their bits, labels by value) for ``pram``,
  ``noise``, ``remove`` and ``recode`` (docs/engine.md, "Same answers as in memory");
* by the step's own guarantee checker on the Dask output for the block methods, which the
  engine runs within blocks or areas (docs/engine.md, "Block methods and their guarantees"),
  and their report section must say so (``scope``).
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import pytest

from sdckit.engine.frame import same_values
from sdckit.engine.run import dask_steps, engine_steps, load_engine_spec, protect_with_dask
from sdckit.errors import SpecError
from sdckit.microdata import Microdata
from sdckit.registry import known_steps, step_class
from sdckit.release import Release
from sdckit.spec import load_spec

from .conftest import person_frame

ROLES = """key_vars = ["region", "sex", "age", "job"]
numeric_vars = ["income", "hours"]
weight = "weight"
"""
HOUSEHOLD_ROLES = """key_vars = ["region", "district", "sex", "age"]
household = "hid"
"""


def _toml_value(v) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "{ " + ", ".join(f'"{k}" = {_toml_value(x)}' for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return repr(v)


def _households(n_hh: int = 400, seed: int = 7) -> pd.DataFrame:
    # households of 2 persons in 4 regions x 5 districts (as tests/engine/test_blockwise.py)
    rng = np.random.default_rng(seed)
    hid = np.repeat(np.arange(n_hh), 2)
    region = rng.integers(0, 4, n_hh)
    district = region * 10 + rng.integers(0, 5, n_hh)
    return pd.DataFrame({"hid": hid, "region": region[hid], "district": district[hid], "hsize": 2,
                         "sex": rng.integers(1, 3, hid.size), "age": rng.integers(0, 18, hid.size)})


#: step -> list of (case id, data, roles, step parameters, comparison)
CASES = {
    "pram": [("invariant", "persons", ROLES,
              {"variables": ["age", "job"], "matrix": {"type": "invariant"}, "min_diagonal": 0.7}, "bitwise"),
             ("strata", "persons", ROLES,
              {"variables": ["job"], "matrix": {"type": "invariant"}, "min_diagonal": 0.8, "strata": ["sex"]}, "bitwise")],
    "noise": [("correlated_kim", "persons", ROLES,
               {"variables": ["income", "hours"], "level": 0.1, "kind": "correlated", "restore": "kim"},
               "bitwise"),
              ("multiplicative", "persons", ROLES,
               {"variables": ["hours"], "level": 0.05, "kind": "multiplicative"}, "bitwise")],
    "remove": [("column", "persons", ROLES, {"variables": ["person_id"]}, "bitwise")],
    "recode": [("mapping_key", "persons", ROLES,
                {"variable": "job", "mapping": {"ab": ["a", "b"], "cde": ["c", "d", "e"]}}, "bitwise"),
               ("mapping_numbers", "persons", ROLES,
                {"variable": "age", "mapping": {"0-5": [0, 1, 2, 3, 4, 5], "6+": list(range(6, 18))}},
                "bitwise"),
               ("mapping_plain_column", "persons", ROLES,
                {"variable": "grade", "mapping": {"low": [0, 1], "high": [2, 3]}}, "bitwise"),
               ("breaks_numeric", "persons", ROLES,
                {"variable": "person_id", "breaks": [0.0, 500.0, 1000.0, float("inf")]}, "bitwise"),
               ("top_bottom", "persons", ROLES, {"variable": "hours", "top": 45.0, "bottom": 30.0},
                "bitwise"),
               ("top_key", "persons", ROLES, {"variable": "age", "top": 15}, "bitwise")],
    "rank_swap": [("p3", "persons", ROLES, {"variables": ["income"], "p": 3}, "guarantee")],
    "microaggregation": [("k4", "persons", ROLES, {"variables": ["hours"], "k": 4}, "guarantee")],
    "local_suppression": [("k3", "persons", ROLES, {"k": 3}, "guarantee")],
    "record_swap": [("regions", "households", HOUSEHOLD_ROLES,
                     {"hierarchy": ["region", "district"], "similar": [["hsize"]],
                      "risk_variables": ["sex", "age"], "swap_rate": 0.1, "k_anonymity": 3}, "guarantee")],
    "synthesise": [("cart_strata_blocks", "persons", ROLES,
                    {"variables": ["sex", "age", "job", "income", "hours"], "strata": ["region"], "draw_block": 400,
                     "utility": "none"}, "bitwise")],
}


def _spec(tmp_path, data: str, roles: str, method: str, params: dict) -> tuple:
    df = (person_frame(1500, seed=11).assign(person_id=np.arange(1500), grade=np.arange(1500) % 4)
          if data == "persons" else _households())
    df.to_csv(tmp_path / "in.csv", index=False)
    step = "\n".join(f"{k} = {_toml_value(v)}" for k, v in params.items())
    text = (f'[input]\npath = "in.csv"\n\n[roles]\n{roles}\n[run]\nseed = 20261123\n\n'
            f'[[steps]]\nmethod = "{method}"\n{step}\n\n'
            f'[gate]\nnone = "the engines are compared, not the gate"\n\n'
            f'[output]\ndirectory = "out"\ndata = "released.parquet"\nkeep_order = true\n')
    path = tmp_path / "release.toml"
    path.write_text(text)
    return path, pd.read_csv(tmp_path / "in.csv")


def _both(tmp_path, client, data, roles, method, params):
    path, df = _spec(tmp_path, data, roles, method, params)
    memory = Release.from_spec(load_spec(path)).run()
    size = (tmp_path / "in.csv").stat().st_size
    run = protect_with_dask(path, scheduler=client.scheduler.address, progress=False, blocksize=size // 3 + 1)
    assert run.n_partitions > 1  # the CSV was read in several partitions
    released = pd.read_parquet(run.paths["data"]).reset_index(drop=True)
    return df, memory, run, released


def _sdckit_steps() -> list[str]:
    """The steps sdckit registers (tests may register their own, e.g. tests/test_spec.py)."""
    return [n for n in known_steps() if step_class(n).__module__.startswith("sdckit.")]


def test_every_registered_step_runs_on_dask_or_says_why():
    for name in _sdckit_steps():
        cls = step_class(name)
        assert "memory" in cls.engines, name
        if "dask" not in cls.engines:
            assert isinstance(cls.dask_note, str) and len(cls.dask_note) > 20, \
                f"step {name!r}: declare engines=(\"memory\", \"dask\") or a dask_note saying why not"
    # the engine implements exactly the steps that declare it
    assert sorted(n for n in dask_steps() if n in _sdckit_steps()) == sorted(engine_steps())


@pytest.mark.parametrize("name", [n for n in _sdckit_steps() if "dask" not in step_class(n).engines])
def test_the_refusal_quotes_the_step_declaration(tmp_path, name):
    (tmp_path / "in.csv").write_text("a,b\n1,2\n")
    spec = tmp_path / "release.toml"
    spec.write_text(f'[input]\npath = "in.csv"\n\n[[steps]]\nmethod = "{name}"\n\n[output]\ndirectory = "out"\n')
    with pytest.raises(SpecError) as err:
        load_engine_spec(spec)
    msg = str(err.value)
    assert f"{name!r} does not run on the Dask engine: {step_class(name).dask_note}" in msg
    assert "recode" in msg  # the list of what runs


def test_every_step_for_both_engines_has_a_case():
    assert sorted(n for n in dask_steps() if n in _sdckit_steps()) == sorted(CASES), \
        "add a case for each step that runs on both engines"


@pytest.mark.parametrize("method,case_id,data,roles,params,how",
                         [(m, c, d, r, p, h) for m, cases in CASES.items() for (c, d, r, p, h) in cases],
                         ids=[f"{m}-{c[0]}" for m, cases in CASES.items() for c in cases])
def test_both_engines_agree(tmp_path, client, method, case_id, data, roles, params, how):
    df, memory, run, released = _both(tmp_path, client, data, roles, method, params)
    section = run.public_dict()["steps"][0]
    assert section["method"] == method
    if how == "bitwise":
        expected = memory.released.frame.reset_index(drop=True)
        assert list(released.columns) == list(expected.columns)
        if method == "recode" and pd.api.types.is_numeric_dtype(expected[params["variable"]]):
            # a recoded numeric column is written as float64 by the engine (docs/engine.md)
            expected = expected.assign(**{params["variable"]: expected[params["variable"]].astype("float64")})
        assert same_values(released, expected)
        # and the in-memory step's own guarantees hold on the engine's release
        assert all(g.holds for r in memory.results for g in r.guarantees)
        return
    # guarantee: the engine ran the method within blocks or areas; its report section says so
    assert "within" in section["scope"]
    assert html.escape(section["scope"]) in run.paths["report"].read_text()  # in the step's section
    if method == "rank_swap":
        from sdckit.masking.rank_swap import check_rank_swap

        chk = check_rank_swap(df[["income"]].to_numpy(), released[["income"]].to_numpy(), 3.0, 0, 0)
        assert chk["within_window"] and chk["multiset_kept"]
    elif method == "microaggregation":
        # MDAV's guarantee: every group (records sharing one released value) has >= k records
        assert released.groupby("hours").size().min() >= 4
        assert not np.array_equal(released["hours"].to_numpy(), df["hours"].to_numpy())
    elif method == "local_suppression":
        from sdckit.risk.steps import check_k_anonymity

        keys = ["region", "sex", "age", "job"]
        before = Microdata(df, key_vars=keys)
        after = Microdata(released, key_vars=keys)
        assert not check_k_anonymity(before, before, [], 3).passed  # the case needs protection
        assert check_k_anonymity(before, after, [], 3).passed
        kept = released["age"].notna() & df["age"].notna()
        assert (released.loc[kept, "age"] == df.loc[kept, "age"]).all()  # suppressed, never changed
    elif method == "record_swap":
        from sdckit.masking.record_swap import check_record_swap

        hh = df["hid"].to_numpy()
        checks = {g.name: g.holds for g in check_record_swap(df, released, hh, ["region", "district"], [],
                                                               False, 0, 0)}
        assert checks["other_variables_unchanged"] and checks["whole_households"] and checks["top_level_kept"]
        assert (released["district"] != df["district"]).mean() > 0.02  # households were swapped


def test_the_demo_spec_runs_on_the_dask_engine(tmp_path, client):
    from importlib import resources

    data = resources.files("sdckit.data")
    for name in ("demo_release.toml", "uk_census2011_teaching_10k.csv"):
        (tmp_path / name).write_bytes(data.joinpath(name).read_bytes())
    spec = tmp_path / "demo_release.toml"
    size = (tmp_path / "uk_census2011_teaching_10k.csv").stat().st_size
    run = protect_with_dask(spec, scheduler=client.scheduler.address, progress=False, blocksize=size // 3 + 1)
    assert run.passed and run.n_records == 10_000 and run.n_partitions > 1
    assert [s["method"] for s in run.public_dict()["steps"]] == \
        ["remove", "recode", "recode", "pram", "local_suppression"]
    released = pd.concat([pd.read_csv(p) for p in sorted(run.paths["data"].glob("*.csv"))], ignore_index=True)
    assert "Person ID" not in released.columns
    # the row-wise steps give the in-memory values: Age recoded to its 4 bands
    assert set(released["Age"].dropna().unique()) <= {"0-15", "16-34", "35-54", "55+"}
    memory = Release.from_spec(load_spec(spec)).run()
    assert memory.passed
