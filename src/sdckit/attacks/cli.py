"""``sdckit attack``: the privacy attacks on a released file, with a control sample.

Only typer and the standard library are imported with this module; the attacks load when the
command runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

#: the attacks run by default (sdckit.attacks.ATTACKS, spelled here so that --help loads nothing)
ALL_ATTACKS = "singling_out,linkability,inference,membership"


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _scalar(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def attack_command(
    original: Annotated[Path, typer.Argument(help="The records the release was made from (CSV, Parquet, SPSS, "
                                             "Stata).")],
    released: Annotated[Path, typer.Argument(help="The released file (masked or synthetic).")],
    control: Annotated[Path, typer.Option("--control", help="Records of the same population that the release "
                                          "was not made from (same columns as the original).")],
    secret: Annotated[str | None, typer.Option("--secret", help="Column(s) the inference attack guesses, "
                                                  "comma-separated.")] = None,
    aux: Annotated[str | None, typer.Option("--aux", help="Columns the intruder knows, comma-separated "
                                               "(default: every shared column but the secrets); the linkability "
                                               "attack splits them into two files.")] = None,
    link_a: Annotated[str | None, typer.Option("--link-a", help="Linkability: the first file's columns "
                                                  "(default: the first half of --aux).")] = None,
    link_b: Annotated[str | None, typer.Option("--link-b", help="Linkability: the second file's columns "
                                                  "(default: the rest of --aux).")] = None,
    attacks: Annotated[str, typer.Option("--attacks", help="Which attacks, comma-separated: singling_out, "
                                         "linkability, inference, membership.")] = ALL_ATTACKS,
    n_attacks: Annotated[int, typer.Option("--n-attacks", help="Targets or predicates per attack (Anonymeter's "
                                           "n_attacks).")] = 500,
    mode: Annotated[str, typer.Option("--mode", help="Singling out: multivariate or univariate.")] = "multivariate",
    n_cols: Annotated[int, typer.Option("--n-cols", help="Singling out: columns per predicate.")] = 3,
    n_neighbors: Annotated[int, typer.Option("--n-neighbors", help="Linkability: records looked up per part.")] = 1,
    tie_break: Annotated[str, typer.Option("--tie-break", help="Linkability and inference: among equally near "
                                           "released records, one at random (random), the lowest row "
                                           "(first), or the one Anonymeter keeps (quicksort).")] = "random",
    tolerance: Annotated[float, typer.Option("--tolerance", help="Inference of a numeric secret: largest "
                                             "relative error of a right guess.")] = 0.05,
    relative_to: Annotated[str, typer.Option("--relative-to", help="Inference of a numeric secret: the "
                                             "tolerance is relative to the guess (Anonymeter's rule) or to the "
                                             "secret.")] = "guess",
    mia: Annotated[str, typer.Option("--mia", help="Membership inference: distance, density or both "
                                     "(comma-separated).")] = "distance,density",
    n_targets: Annotated[int, typer.Option("--n-targets", help="Membership inference: members and "
                                           "non-members scored.")] = 1000,
    n_repeats: Annotated[int, typer.Option("--n-repeats", help="Membership inference: disjoint seeded groups "
                                           "of targets behind the interval.")] = 5,
    numeric: Annotated[str | None, typer.Option("--numeric", help="Numeric columns (default: every column "
                                                   "with numbers in all three files, less --categorical).")] = None,
    categorical: Annotated[str | None, typer.Option("--categorical", help="Columns to treat as categories "
                                                       "although they hold numbers.")] = None,
    na_values: Annotated[str | None, typer.Option("--na-values", help="Codes meaning missing in all three "
                                                     "files, comma-separated (e.g. -9).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the attacks' own sampling.")] = 0,
    html_out: Annotated[Path | None, typer.Option("--html", help="Also write the report section (an HTML "
                                                     "fragment) to this file.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
) -> None:
    """Attack a release as an intruder would: singling out, linkability, inference (each measured
    against control records, as Anonymeter does) and membership inference."""
    from ..errors import InputError
    from ..io.files import read_data
    from ..result import jsonable
    from .evaluate import ATTACKS, run_attacks

    chosen = _split(attacks)
    bad = [a for a in chosen if a not in ATTACKS]
    if bad or not chosen:
        raise InputError(f"--attacks: unknown attack(s) {bad}; choose from {', '.join(ATTACKS)}.")
    methods = _split(mia)
    if "membership" in chosen and (not methods or any(m not in ("distance", "density") for m in methods)):
        raise InputError(f"--mia: must be distance, density or both, got {mia!r}.")
    if (link_a is None) != (link_b is None):
        raise InputError("--link-a and --link-b go together: give both files' columns, or neither.")
    na = [_scalar(v) for v in _split(na_values)] or None
    frames = {}
    for name, path in (("original", original), ("released", released), ("control", control)):
        frames[name], _ = read_data(path, na_values=na)
    report = run_attacks(frames["original"], frames["released"], frames["control"],
                         aux=_split(aux) or None, secret=_split(secret) or None,
                         aux_a=_split(link_a) or None, aux_b=_split(link_b) or None, attacks=chosen,
                         n_attacks=n_attacks, mode=mode, n_cols=n_cols, n_neighbors=n_neighbors,
                         mia_methods=methods, n_targets=n_targets, n_repeats=n_repeats, numeric=_split(numeric) or None,
                         categorical=_split(categorical) or None, rng=seed, tie_break=tie_break,
                         tolerance=tolerance, relative_to=relative_to)
    if html_out is not None:
        from ..io.atomic import atomic_write_text, guard_target

        guard_target(html_out, (original, released, control))
        atomic_write_text(html_out, report.report_html())
    if as_json:
        typer.echo(json.dumps(jsonable(report.to_dict())))
        return
    for line in report.describe().splitlines():
        typer.echo(line)
    typer.echo(f"({report.seconds:.1f} s)")
