"""Rank swapping's certified check: the swap's own record of what it did (records in rank
order, the rank each rank received) is verified against the input and the output, and gives
the same verdict and distances as sorting the output; a certificate or an output that does not
match is never believed."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sdckit.masking.rank_swap import _rank_swap, check_rank_swap, rank_swap_array


@st.composite
def swap_case(draw):
    n = draw(st.integers(1, 300))
    p = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = np.round(rng.lognormal(0, 1, (n, p)), draw(st.integers(0, 3)))
    if draw(st.booleans()):
        X[rng.random((n, p)) < 0.1] = np.nan
    strata = rng.integers(0, 3, n) if draw(st.booleans()) else None
    return X, strata, draw(st.floats(0.5, 60)), draw(st.integers(0, 10**6))


@given(swap_case())
def test_certified_check_equals_the_sorting_check(case):
    X, strata, p, seed = case
    out, cert = _rank_swap(X, p, seed, top_percent=0.0, bottom_percent=0.0, strata=strata)
    assert np.array_equal(out, rank_swap_array(X, p, seed, strata=strata), equal_nan=True)
    assert check_rank_swap(X, out, p, 0, 0, strata, certificates=cert) == check_rank_swap(X, out, p, 0, 0, strata)


@given(swap_case(), st.integers(0, 2))
def test_a_changed_output_or_certificate_gets_the_sorting_verdict(case, how):
    X, strata, p, seed = case
    out, cert = _rank_swap(X, p, seed, top_percent=0.0, bottom_percent=0.0, strata=strata)
    finite = np.flatnonzero(np.isfinite(out[:, 0]))
    if finite.size < 2 or not cert[0]:
        return
    bad_out, bad_cert = out.copy(), [list(c) for c in cert]
    if how == 0:            # a released value changed
        bad_out[finite[0], 0] += 1.0
    elif how == 1:          # two released values exchanged far apart
        i, j = finite[0], finite[-1]
        bad_out[[i, j], 0] = bad_out[[j, i], 0]
    else:                   # a certificate that claims another partner
        order, partner = bad_cert[0][0]
        partner = partner.copy()
        partner[[0, -1]] = partner[[-1, 0]]
        bad_cert[0][0] = (order, partner)
    assert check_rank_swap(X, bad_out, p, 0, 0, strata, certificates=bad_cert) == \
        check_rank_swap(X, bad_out, p, 0, 0, strata)
