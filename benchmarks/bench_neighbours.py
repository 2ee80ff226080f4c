"""Benchmark: neighbourhood resampling (Matloff & Tendick) of mixed data.

Synthetic records with 6 mixed variables: age, income (log-normal, depends on age and
education), hours (continuous); sex (2), region (5), education (4 categories, unequal)
categorical with weight 0.3. eps is calibrated for about 20 neighbours per record on average
(pilot runs on 1% of the records, scaling eps by (20 / mean)^(1/3): the three continuous
coordinates carry the distance inside a categorical combination). q = 1, no-neighbour
policy "suppress". Baseline: the same number of values drawn from random records (one
uniform index per value and one ``take`` per column), the least any resampling must do.

Figures: seconds (best of --repeat, untraced run), peak_mb (traced numpy/Python allocations
of a separate run), max_rss_mb (process peak), suppressed share, neighbours per record.
"""

from __future__ import annotations

import resource

import numpy as np
import pandas as pd
from _common import emit, parse_args, peak_mb, timed

from sdckit import Microdata
from sdckit.masking.neighbours import NeighbourResampling, Radius

CAT = ["sex", "region", "edu"]
WEIGHTS = {c: 0.3 for c in CAT}


def records(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.uniform(18, 80, n)
    edu = rng.choice(4, n, p=[0.4, 0.3, 0.2, 0.1])
    return pd.DataFrame({"age": age, "income": np.exp(rng.normal(9.5, 0.7, n) + 0.01 * age + 0.2 * edu),
                         "hours": rng.normal(38, 8, n), "sex": rng.integers(1, 3, n),
                         "region": rng.integers(0, 5, n), "edu": edu})


def calibrate(md: Microdata, target: float = 20.0) -> tuple[float, float]:
    """eps giving about ``target`` neighbours per record (pilots on 1% of the records)."""
    eps, mean = 0.3, 0.0
    for _ in range(4):
        r = NeighbourResampling(Radius(eps=eps, no_neighbour="knn"), q=0.01, categorical=CAT,
                                weights=WEIGHTS).apply(md, rng=0)
        mean = r.summary["neighbours_mean"]
        if abs(mean / target - 1) < 0.1:
            break
        eps *= (target / max(mean, 1.0)) ** (1 / 3)
    return eps, mean


def bench(n: int, repeat: int) -> None:
    md = Microdata(records(n))
    eps, _ = calibrate(md)
    step = NeighbourResampling(Radius(eps=eps), categorical=CAT, weights=WEIGHTS)
    seconds, r = timed(lambda: step.apply(md, rng=1), repeat)
    values = md.frame.to_numpy()

    def baseline():
        idx = np.random.default_rng(0).integers(0, n, size=values.shape)
        return np.column_stack([values[idx[:, j], j] for j in range(values.shape[1])])

    base, _ = timed(baseline, repeat)
    peak = peak_mb(lambda: step.apply(md, rng=1))
    s = r.summary
    emit(case="neighbours_mixed6", n=n, eps=round(eps, 4), seconds=seconds, peak_mb=peak,
         max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
         baseline_seconds=base, suppressed_share=s["suppressed_share"],
         neighbours_mean=s["neighbours_mean"], neighbours_median=s["neighbours_median"],
         records_changed=s["records_changed"], search=s["notes"][-1],
         guarantees_hold=all(g.holds for g in r.guarantees))


def main() -> None:
    args = parse_args(__doc__)
    sizes = [args.n] if args.n else ([20_000, 100_000] if args.quick else [100_000, 1_000_000])
    for n in sizes:
        bench(n, 1 if n >= 1_000_000 else args.repeat)


if __name__ == "__main__":
    main()
