"""The workbench's routes, one router per page.

Each module's ``routes(ctx)`` returns the routes of one page: :mod:`.pages` (the page, its
assets, job polls), :mod:`.data`, :mod:`.roles`, :mod:`.risk`, :mod:`.steps` (methods, steps,
results, history), :mod:`.compare`, :mod:`.explore`, :mod:`.release` (gate, output, release),
:mod:`.spec` (export, import), :mod:`.report` (the internal page, a release's reports),
:mod:`.tables`, :mod:`.hierarchy` (the hierarchy editor) and :mod:`.attacks` (the attack panel).
"""

from __future__ import annotations

from starlette.routing import BaseRoute

from . import (
    attacks,
    compare,
    data,
    explore,
    hierarchy,
    pages,
    release,
    report,
    risk,
    roles,
    spec,
    steps,
    tables,
)
from .common import AppContext

PAGES = (pages, report, data, roles, risk, steps, compare, explore, release, spec, tables, hierarchy, attacks)


def all_routes(ctx: AppContext) -> list[BaseRoute]:
    """Every page's routes, in one list."""
    return [r for page in PAGES for r in page.routes(ctx)]


__all__ = ["PAGES", "AppContext", "all_routes"]
