"""Seed 002's data-swapping example: 10 voters, unique on (Location, Age, Sex), swapped with a
record of the same age and sex in the other city. Prints the table before and after and one
JSON line with the headline figures."""

from __future__ import annotations

import json

import pandas as pd

from sdckit import Microdata
from sdckit.masking.record_swap import RecordSwap

TOY = pd.DataFrame(
    [("Pittsburgh", "Young", "M", "Bush"), ("Pittsburgh", "Young", "M", "Gore"),
     ("Pittsburgh", "Young", "F", "Gore"), ("Pittsburgh", "Old", "M", "Gore"),
     ("Pittsburgh", "Old", "M", "Bush"), ("Cleveland", "Young", "F", "Bush"),
     ("Cleveland", "Young", "F", "Gore"), ("Cleveland", "Old", "M", "Gore"),
     ("Cleveland", "Old", "F", "Bush"), ("Cleveland", "Old", "F", "Gore")],
    columns=["Location", "Age", "Sex", "Candidate"])


def main(seed: int = 2002) -> dict:
    md = Microdata(TOY, key_vars=["Location", "Age", "Sex"], sensitive=["Candidate"])
    # swapping attribute: Location (one level, so partners are in the other city);
    # uniques key and swapping key: Age and Sex; protected variable: Candidate
    step = RecordSwap(hierarchy=["Location"], similar=[["Age", "Sex"]], risk_variables=["Age", "Sex"],
                      k_anonymity=2, swap_rate=0.0, allow_across_top=True)
    result = step.apply(md, rng=seed)
    out = TOY.assign(**{"Location after": result.microdata.frame["Location"]})
    print(out.to_string(index=False))
    fk_before = TOY.groupby(["Location", "Age", "Sex"])["Sex"].transform("size")
    summary = {"records": len(TOY), "uniques_before": int((fk_before == 1).sum()),
               "records_swapped": result.summary["records_swapped"],
               "risky_swapped_share": result.summary["risky_swapped_share"],
               "candidate_margin_kept": bool(result.microdata.frame["Candidate"].equals(TOY["Candidate"]))}
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
