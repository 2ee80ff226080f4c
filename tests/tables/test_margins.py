import numpy as np

from sdckit.tables.margins import release_margins

from .helpers import SEED_COLS, SEED_INNER, SEED_ROWS, seed_table


def test_margins_audit_gives_the_frechet_bounds_on_the_seed_table():
    t = seed_table()
    res = release_margins(t)
    assert res.published.sum() == 9 and (~res.published).sum() == 16
    r, c, n = SEED_INNER.sum(1), SEED_INNER.sum(0), SEED_INNER.sum()
    for i, row in enumerate(SEED_ROWS):
        for j, col in enumerate(SEED_COLS):
            # Fréchet bounds, by hand from the margins
            want = (max(0, r[i] + c[j] - n), min(r[i], c[j]))
            assert res.audit.interval(t.cell_index(row, col)) == want
    assert res.guarantees[0].holds  # no inner cell is exactly determined
    d = res.to_dict()
    assert d["n_withheld"] == 16 and len(d["intervals"]) == 16


def test_margins_integer_audit_agrees_on_2d():
    t = seed_table()
    a, b = release_margins(t), release_margins(t, integer=True)
    assert np.allclose(a.audit.lower, b.audit.lower) and np.allclose(a.audit.upper, b.audit.upper)
