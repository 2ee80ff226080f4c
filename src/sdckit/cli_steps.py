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
        from rich.markup import escape

        from ._spec_docs import steps_help_text

        return escape(spec_sections_help_text()) + "\n\n" + steps_help_text(markup=True)

    @epilog.setter
    def epilog(self, value) -> None:  # click sets it in __init__; the listing is computed
        pass


def spec_sections_help_text() -> str:
    """The spec's sections and their keys, from the declarations in :mod:`sdckit.spec` and
    :mod:`sdckit.explore.spec` (the head of ``sdckit protect --help``)."""
    from .explore.spec import CANDIDATE_KEYS, EXPLORE_KEYS
    from .spec import SPEC_SECTIONS

    out = ["Sections of a release spec (TOML), with their keys; 'docs/release_spec.md' explains each:"]
    for name, (meaning, keys) in SPEC_SECTIONS.items():
        out.append(f"  [{name}] {meaning}: {', '.join(sorted(keys))}")
    out.append("  [[steps]] the masking steps in order, each with method = \"...\" and its parameters (below)")
    out.append("  [gate] the thresholds the release must meet (below)")
    out.append("Used by 'sdckit explore' on the same spec:")
    out.append(f"  [explore] what the sweep measures and keeps: {', '.join(sorted(EXPLORE_KEYS))}")
    out.append(f"  [[candidates]] the settings swept ({', '.join(sorted(CANDIDATE_KEYS))}): method = \"...\", "
               "grid = a list of values per parameter, fixed = the parameters held")
    return "\n".join(out)


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
