"""HiGHS helpers for the table methods: re-exports :mod:`sdckit._highs`, the package's one factory."""

from __future__ import annotations

from .._highs import INF, build_lp, new_highs, pass_lp, raise_for_status, run, status  # noqa: F401

__all__ = ["INF", "build_lp", "new_highs", "pass_lp", "raise_for_status", "run", "status"]
