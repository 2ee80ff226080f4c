"""``sdckit steps`` and the step listing of ``sdckit protect --help``, from the declarations.

Both read :mod:`sdckit.params` through :mod:`sdckit._spec_docs`, and only when asked: the
registry's discovery (which imports every method package) is not paid by other commands.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from typer.core import TyperCommand


class StepsEpilogCommand(TyperCommand):
    """A command whose ``--help`` ends with every step and its parameters (built lazily)."""

    @property
    def epilog(self) -> str:  # type: ignore[override]
        from ._spec_docs import steps_help_text

        return steps_help_text(markup=True)

    @epilog.setter
    def epilog(self, value) -> None:  # click sets it in __init__; the listing is computed
        pass


def steps_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
) -> None:
    """List every release step with its declared parameters (and the gate thresholds)."""
    from ._spec_docs import steps_document, steps_help_text
    from .result import jsonable

    if as_json:
        typer.echo(json.dumps(jsonable(steps_document())))
    else:
        typer.echo(steps_help_text())
