"""Command-line entry of table protection: ``sdckit table SPEC [--json]``.

:func:`table_command` runs a TOML table spec (see :mod:`sdckit.tables.spec`) and returns the
JSON-able summary with the stable keys ``n_cells``, ``n_primary``, ``n_secondary``, ``cost``,
``audit_ok``, ``seconds`` (plus ``method``, ``status`` and the ``outputs`` written) together
with the :class:`~sdckit.tables.spec.TableRun`. Bad input raises an
:class:`~sdckit.errors.SDCError` subclass with one clear line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .spec import TableRun

__all__ = ["table_command", "argus_command", "is_release_spec"]


def is_release_spec(spec_path) -> bool:
    """Whether the table spec's ``[output]`` names a release ``folder`` (then ``sdckit table``
    writes a release: public and internal folders, certificates, checked by ``sdckit verify``)."""
    from .spec import load_table_spec

    out = load_table_spec(spec_path).get("output", {})
    return isinstance(out, dict) and "folder" in out


def argus_command(arb_path) -> dict:
    """Run a tau-Argus batch file; the jobs run and the files written (see :mod:`sdckit.tables.argus.batch`)."""
    from .argus.batch import run_arb

    return run_arb(arb_path)


def table_command(spec_path: str) -> tuple[dict, TableRun]:
    """Run the table spec at ``spec_path``; write the published table and the HTML report atomically."""
    from ..progress import task
    from .spec import run_table_spec

    with task("table protection"):  # a bar on a terminal after 2 s, events for listeners
        run = run_table_spec(spec_path)
    return run.to_dict(), run
