"""Score and Score': the weighted sums of eq. 5.1 and of Domingo-Ferrer & Torra."""

import numpy as np
import pytest

from sdckit.explore.scores import score, score_primed
from sdckit.risk.interval import interval_disclosure
from sdckit.risk.linkage import distance_linkage, probabilistic_linkage
from sdckit.utility.numeric import information_loss


def test_score_primed_of_identical_files_is_50():
    # IL' = 0, DLD' = 100, ID' = 100 -> 0.5*0 + 0.25*100 + 0.25*100
    A = np.random.default_rng(0).normal(10, 1, size=(80, 3))
    r = score_primed(A, A)
    assert (r.il, r.dld, r.id) == (0.0, 100.0, 100.0)
    assert r.score == pytest.approx(50.0)


def test_score_primed_is_the_weighted_sum_of_its_parts():
    rng = np.random.default_rng(1)
    A = rng.normal(10, 2, size=(120, 4))
    B = A + rng.normal(scale=1.0, size=A.shape)
    r = score_primed(A, B)
    il = information_loss(A, B, primed=True).il
    dld = distance_linkage(A, B, primed=True).value
    idr = interval_disclosure(A, B, primed=True).value
    assert (r.il, r.dld, r.id) == pytest.approx((il, dld, idr))
    assert r.score == pytest.approx(0.5 * il + 0.25 * dld + 0.25 * idr)
    assert r.primed and "Score'" in r.describe()


def test_score_is_the_weighted_sum_with_pld():
    rng = np.random.default_rng(2)
    A = rng.normal(10, 2, size=(60, 3))
    B = A + rng.normal(scale=0.5, size=A.shape)
    r = score(A, B)
    pld = probabilistic_linkage(A, B).value
    assert r.pld == pytest.approx(pld)
    assert r.score == pytest.approx(0.5 * information_loss(A, B).il + 0.125 * distance_linkage(A, B).value
                                    + 0.125 * pld + 0.25 * interval_disclosure(A, B).value)
    assert not r.primed and r.to_dict()["pld"] == r.pld


def test_score_falls_back_to_primed_for_other_sizes():
    A = np.random.default_rng(3).normal(size=(50, 2))
    r = score(A, A[:20])
    assert r.primed and r.pld is None and "Score'" in r.note
