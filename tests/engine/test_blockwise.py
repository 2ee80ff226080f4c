"""Block methods at scale: rank swapping within blocks of ranks, microaggregation by the
scalable MDAV within blocks, in-memory steps within areas. Their guarantees are checked by
the masking module's own independent checkers."""

import warnings

import numpy as np
import pandas as pd

from sdckit.engine.blockwise import (
    BlockMicroaggregation,
    BlockRankSwap,
    GroupedStep,
    _rank_swap_parts,
    fit_microaggregation,
    fit_rank_swap,
    grouped_partitioned,
    microaggregate_partitioned,
    rank_swap_partitioned,
    run_blocks_in_memory,
)
from sdckit.engine.frame import from_pandas, same_values
from sdckit.engine.masking import child_stream
from sdckit.masking.local_suppression import LocalSuppression
from sdckit.masking.microaggregation import check_microaggregation
from sdckit.masking.rank_swap import check_rank_swap
from sdckit.microdata import Microdata
from sdckit.risk.missing import microdata_frequencies

from .conftest import person_frame

ROLES = dict(key_vars=["region", "sex", "age", "job"], numeric_vars=["income", "hours"], weight="weight")


def test_rank_swap_in_blocks_keeps_window_and_multiset_for_any_partitioning(client):
    df = person_frame(8000, seed=1)
    outs = []
    for npart in (1, 5):
        pmd = from_pandas(df, npartitions=npart, **ROLES)
        plan = fit_rank_swap(pmd, BlockRankSwap(("income", "hours"), p=2.0, block_rows=1500))
        outs.append(rank_swap_partitioned(pmd, plan, np.random.SeedSequence(5)).frame.compute().reset_index(drop=True))
    assert same_values(outs[0], outs[1])  # blocks and streams depend on the data only
    assert all(len(e) >= 2 for e in plan.edges.values())  # several blocks: borders exist
    chk = check_rank_swap(df[["income", "hours"]].to_numpy(), outs[0][["income", "hours"]].to_numpy(), 2.0, 0, 0)
    assert chk["within_window"] and chk["multiset_kept"] and chk["missing_in_place"]
    assert chk["max_rank_distance"][0] > 0.5 * chk["window"][0]  # values do travel
    # the in-memory reference path: the same blocks and function on the whole frame
    block_of, fn = _rank_swap_parts(plan, "income", child_stream(np.random.SeedSequence(5), 0))
    mem = run_blocks_in_memory(df, ["income"], block_of, fn)
    assert np.array_equal(mem["income"].to_numpy(), outs[0]["income"].to_numpy(), equal_nan=True)


def test_microaggregation_in_blocks_gives_groups_of_k_to_2k_minus_1(client):
    df = person_frame(6000, seed=2, missing=False)
    pmd = from_pandas(df, npartitions=4, **ROLES)
    plan = fit_microaggregation(pmd, BlockMicroaggregation(("income", "hours"), k=3, block_rows=1500, cell=500))
    out = microaggregate_partitioned(pmd, plan).frame.compute().reset_index(drop=True)
    X, Y = df[["income", "hours"]].to_numpy(), out[["income", "hours"]].to_numpy()
    labels = pd.Series(list(map(tuple, Y))).factorize()[0]  # a group = records sharing the released values
    chk = check_microaggregation(X, Y, [labels], [[0, 1]], 3, "mean")
    assert chk["sizes_ok"] and chk["values_ok"], chk
    assert len(plan.edges) >= 2


def test_local_suppression_within_areas_gives_k_anonymity_overall(client):
    df = person_frame(4000, seed=3)
    pmd = from_pandas(df, npartitions=3, **ROLES)
    gs = GroupedStep(LocalSuppression(k=3), "region", ("sex", "age", "job"), ROLES)
    out = grouped_partitioned(pmd, gs, np.random.SeedSequence(1)).frame.compute().reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = microdata_frequencies(Microdata(df, **ROLES)).fk.min()
        after = microdata_frequencies(Microdata(out, **ROLES)).fk.min()
    assert before < 3 <= after  # region is a key: k-anonymity per area is k-anonymity overall
    assert (out["region"] == df["region"]).all()
    kept = out["age"].notna() & df["age"].notna()
    assert (out.loc[kept, "age"] == df.loc[kept, "age"]).all()  # values are suppressed, never changed


def test_record_swapping_within_top_level_areas(client):
    # households (2 persons each) in 4 regions x 5 districts; swaps stay inside a region
    from sdckit.masking.record_swap import RecordSwap

    rng = np.random.default_rng(7)
    n_hh = 1500
    hid = np.repeat(np.arange(n_hh), 2)
    region = rng.integers(0, 4, n_hh)
    district = region * 10 + rng.integers(0, 5, n_hh)
    df = pd.DataFrame({"hid": hid, "region": region[hid], "district": district[hid],
                       "hsize": 2, "sex": rng.integers(1, 3, hid.size), "age": rng.integers(0, 18, hid.size)})
    roles = dict(key_vars=["region", "district", "sex", "age"], household="hid")
    pmd = from_pandas(df, npartitions=3, **roles)
    step = RecordSwap(hierarchy=["region", "district"], similar=[["hsize"]], risk_variables=["sex", "age"],
                      swap_rate=0.1, k_anonymity=3)
    gs = GroupedStep(step, "region", ("region", "district"), roles)
    out = grouped_partitioned(pmd, gs, np.random.SeedSequence(3)).frame.compute().reset_index(drop=True)
    moved = out["district"] != df["district"]
    assert moved.mean() > 0.05                                 # households were swapped
    assert (out["region"] == df["region"]).all()               # never across a region
    per_hh = out.groupby("hid")["district"].nunique()
    assert (per_hh == 1).all()                                 # a household moves whole
    assert (out[["hid", "sex", "age"]] == df[["hid", "sex", "age"]]).all().all()
