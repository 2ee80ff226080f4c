"""Release only the margins of a table, with the audit of every inner cell.

Publishing only the totals and subtotals (every cell that is a total in at least one
dimension) withholds all inner cells. The audit gives each inner cell's feasibility interval
given the margins; for a 2-D table these are the Fréchet bounds
``[max(0, r_i + c_j - N), min(r_i, c_j)]``.

References
----------
Karr, A.F. et al.; Roehrig (2002), slide "Release only the margins" (delinquent children, 4 x 4).
Fréchet, M. (1951). Sur les tableaux de corrélation dont les marges sont données.
*Annales de l'Université de Lyon* A 14, 53-77.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..result import Guarantee
from .audit import AuditResult, audit
from .table import Table

__all__ = ["MarginsRelease", "release_margins"]


@dataclass(frozen=True)
class MarginsRelease:
    """The published margins and the audit intervals of the withheld inner cells."""

    table: Table
    published: np.ndarray
    audit: AuditResult
    seconds: float
    n_sensitive_published: int = 0

    @property
    def ok(self) -> bool:
        """Every sensitive inner cell meets its levels and no sensitive cell is a published margin."""
        return self.audit.ok and self.n_sensitive_published == 0

    @property
    def guarantees(self) -> tuple[Guarantee, ...]:
        width = self.audit.upper - self.audit.lower
        exact = int((width < 1e-9).sum())
        return (Guarantee("no_inner_cell_exact", "no withheld inner cell is exactly determined by the margins",
                          exact, exact == 0),
                Guarantee("protection_intervals", "every sensitive cell is withheld and its interval meets its levels",
                          self.audit.n_unprotected + self.n_sensitive_published, self.ok))

    def to_dict(self) -> dict:
        return {"method": "margins", "n_cells": self.table.n_cells, "n_published": int(self.published.sum()),
                "n_withheld": int((~self.published).sum()), "audit_ok": self.ok,
                "n_sensitive_published": self.n_sensitive_published,
                "n_exact": int(((self.audit.upper - self.audit.lower) < 1e-9).sum()),
                "seconds": round(self.seconds, 4), "intervals": self.audit.to_dict()["intervals"]}

    def describe(self) -> str:
        return (f"margins release: {int(self.published.sum())} margins published, "
                f"{int((~self.published).sum())} inner cells withheld\n" + self.audit.describe())

    def report_html(self) -> str:
        return self.audit.report_html()


def release_margins(table: Table, *, primary=None, lower_bound=None, upper_bound=None,
                    integer: bool = False) -> MarginsRelease:
    """Publish every total and subtotal; audit every inner cell given them.

    With ``primary`` (:func:`~sdckit.tables.rules.primary_cells`) the audit also checks the
    protection levels of the sensitive inner cells (a sensitive total is published anyway and
    fails the audit's check: such a table needs suppression, not a margins release).
    """
    t0 = time.perf_counter()
    inner = table.is_inner
    aud = audit(table, inner, primary=primary, lower_bound=lower_bound, upper_bound=upper_bound, integer=integer)
    exposed = 0 if primary is None else int((primary.sensitive & ~inner).sum())
    return MarginsRelease(table, ~inner, aud, time.perf_counter() - t0, exposed)
