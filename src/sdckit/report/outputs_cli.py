"""``sdckit outputs``: the checker's command line for researchers' outputs.

``sdckit outputs check RESULTS --rules rules.toml --json`` re-checks a results file (sdckit's or
ACRO's) against the environment's rules; ``approve``/``reject``/``exception`` record a decision
or a researcher's request in the results file; ``release RESULTS --to FOLDER [--key K]`` writes
the approved outputs with a signed certificate. Only typer and the standard library load with
this module; the checks load when the command runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

ACTIONS = ("check", "approve", "reject", "exception", "release")


def outputs_command(
    action: Annotated[str, typer.Argument(help="check, approve, reject, exception or release.")],
    results: Annotated[Path, typer.Argument(help="The results folder (Session.finalise or ACRO's finalise) or its "
                                            "results.json.")],
    rules: Annotated[Path | None, typer.Option("--rules", help="check: the environment's rules (TOML; default "
                                               "ACRO's defaults).")] = None,
    output_id: Annotated[str | None, typer.Option("--output", help="approve/reject/exception: the output's id "
                                                  "(output_3).")] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="approve/reject/exception: why, in words.")] = None,
    checker: Annotated[str | None, typer.Option("--checker", help="approve/reject: the checker's name.")] = None,
    to: Annotated[Path | None, typer.Option("--to", help="release: the release folder to write.")] = None,
    key: Annotated[Path | None, typer.Option("--key", help="release: the private key (NAME.key of 'sdckit keygen') "
                                             "that signs the certificate.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="release: replace an earlier release in --to.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
) -> None:
    """Check researchers' outputs against the environment's rules (with the LP audit of margins),
    record a checker's decisions, and release the approved outputs with a signed certificate."""
    from ..errors import InputError

    if action not in ACTIONS:
        raise InputError(f"outputs: unknown action {action!r}; use one of {', '.join(ACTIONS)}")
    if action == "check":
        from ..outputs import check_results, load_rules

        doc = check_results(results, load_rules(rules))
        if as_json:
            typer.echo(json.dumps(doc))
            return
        c = doc["counts"]
        typer.echo(f"{doc['n_outputs']} outputs: {c['pass']} pass, {c['review']} review, {c['fail']} fail")
        for o in doc["outputs"]:
            how = "re-checked" if o.get("rechecked") else f"as recorded ({o.get('why')})"
            typer.echo(f"  {o['id']}: {o['status']} ({o['type']}, {how})")
            for r in o.get("recovered", []):
                typer.echo(f"    {r['sentence']}")
        return
    if action in ("approve", "reject", "exception"):
        from ..outputs import Review

        if not output_id:
            raise InputError(f"outputs {action}: name the output with --output (e.g. --output output_3)")
        review = Review(results)
        if action == "exception":
            review.request_exception(output_id, reason or "")
            out = {"output": output_id, "exception": review.results[output_id]["exception"]}
        else:
            dec = (review.approve if action == "approve" else review.reject)(output_id, reason or "", checker or "")
            out = {"output": output_id, "decision": dec}
        review.save()
        typer.echo(json.dumps(out) if as_json else f"{output_id}: {action} recorded in {review.path.name}")
        return
    from .outputs_release import release_outputs

    if to is None:
        raise InputError("outputs release: give the release folder with --to FOLDER")
    out = release_outputs(results, to, signing_key=key, overwrite=overwrite)
    out["folder"] = Path(out["folder"]).name
    if as_json:
        typer.echo(json.dumps(out))
    else:
        typer.echo(out["verdict"])
        typer.echo(f"written: {to} ({len(out['files'])} files); check it with: sdckit verify {to}")
