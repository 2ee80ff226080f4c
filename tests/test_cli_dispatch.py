"""The thin command-line parser in front of typer (sdckit.cli_dispatch) against typer itself.

For any command line of the hot verbs, the thin parser either steps aside (Unsupported: typer
then parses, with its own help and errors) or hands the verb exactly the keyword arguments
typer would hand it. The reference is typer's own parsing of the same command line, with the
verb's function replaced by one that records its arguments. The declarations the thin parser
reads without typer are compared with typer's reading of them (``get_params_from_function``) for
every verb, and the precomputed ``sdckit --help`` with typer's rendering of the same declarations.
"""

from __future__ import annotations

import copy
import functools

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from sdckit.cli import app, find_verb, main, root_help_text
from sdckit.cli_dispatch import ROOT_HELP, Unsupported, find_command, one_verb_app, parse_args, parse_verb


def typer_kwargs(argv: list[str]):
    """What typer passes the verb for ``sdckit ARGV`` (an exception when typer refuses it)."""
    import typer

    info = copy.copy(find_command(app, argv[0]))
    seen: dict = {}

    @functools.wraps(info.callback)
    def record(**kwargs):
        seen.update(kwargs)

    info.callback = record
    sub = copy.copy(app)
    sub.registered_commands = [info]
    sub.registered_groups = []
    typer.main.get_command(sub).main(args=argv, prog_name="sdckit", standalone_mode=False)
    return seen


# option -> text of a value of its kind (what a user might type)
INTS = st.integers(-50, 10**6).map(str)
FLOATS = st.one_of(st.floats(-1e6, 1e6, allow_nan=False).map(repr), st.integers(-9, 99).map(str),
                   st.sampled_from([".5", "1e-3", "2.", "+0.25", "1E+2"]))
WORDS = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=8)
VERBS = {
    "risk": {"positional": WORDS.map(lambda w: w + ".csv"),
             "options": {"--keys": WORDS, "--weight": WORDS, "--suda-max-size": INTS, "--missing-alpha": FLOATS,
                         "--uniqueness": INTS, "--max-global-risk": FLOATS, "--output": WORDS, "--attacker": FLOATS},
             "flags": ["--suda", "--json", "--population-uniques", "--contributions"], "required": ["--keys"]},
    "anonymise": {"positional": WORDS.map(lambda w: w + ".csv"),
                  "options": {"--hierarchies": WORDS, "--qis": WORDS, "--k": INTS, "--suppression": FLOATS,
                              "--l": FLOATS, "--max-nodes": INTS, "--time-limit": FLOATS, "--output": WORDS},
                  "flags": ["--json"], "required": ["--hierarchies", "--qis"]},
    "table": {"positional": st.sampled_from(["count", "posterior", "perturb"]),
              "options": {"--rows": WORDS, "--cols": WORDS, "--seed": INTS, "--samples": INTS, "--alpha": FLOATS,
                          "--time-limit": FLOATS, "--max-memory": FLOATS, "--argus": WORDS},
              "flags": ["--estimate", "--json"]},
}


@st.composite
def command_lines(draw):
    verb = draw(st.sampled_from(sorted(VERBS)))
    spec = VERBS[verb]
    tokens: list[list[str]] = [[draw(spec["positional"])]]
    required = [o for o in spec.get("required", ()) if draw(st.integers(0, 9))]  # now and then one is missing
    for name in required + draw(st.lists(st.sampled_from(sorted(spec["options"])), max_size=5)):
        value = draw(spec["options"][name])
        tokens.append([f"{name}={value}"] if draw(st.booleans()) else [name, value])
    tokens += [[f] for f in draw(st.lists(st.sampled_from(spec["flags"]), max_size=2))]
    order = draw(st.permutations(range(len(tokens))))
    return [verb] + [t for i in order for t in tokens[i]]


@settings(max_examples=300, deadline=None)
@given(argv=command_lines())
def test_the_thin_parser_passes_what_typer_passes(argv):
    try:
        _, fast = parse_verb(app, argv)
    except Unsupported:
        event("left to typer")
        return  # typer parses this one (e.g. a required option not given)
    event("thin parser")
    assert fast == typer_kwargs(argv)


@pytest.mark.parametrize("argv", [
    ["table", "count", "--rows", "108,286,71,127", "--cols", "220,215,93,64", "--json"],
    ["risk", "data.csv", "--keys", "Region,Sex,Age", "--json", "--max-global-risk", "0.02"],
    ["anonymise", "adult.csv", "--hierarchies", "h", "--qis", "sex,age", "--k", "5", "--suppression", "0.01"],
    ["table", "--argus", "job.arb", "--json"],
    ["risk", "d.csv", "--keys=a,b", "--na-values", "-9"],   # a value that starts with '-'
])
def test_the_hot_command_lines_take_the_thin_path(argv):
    callback, kwargs = parse_verb(app, argv)  # no Unsupported: these run without typer's parser
    assert callback is find_command(app, argv[0]).callback
    assert kwargs == typer_kwargs(argv)


@pytest.mark.parametrize("argv", [
    ["risk", "--help"], ["table", "count", "-h"], ["risk", "d.csv"],            # help; a required option missing
    ["anonymise", "a.csv", "--hierarchies", "h", "--qis", "x", "--k", "five"],  # not a whole number
    ["risk", "d.csv", "--keys", "a", "--nope", "1"], ["nope"], [], ["--version", "risk"],
    ["protect", "spec.toml"],                                                   # a command class of its own
    ["table", "count", "--rows"],                                               # an option without its value
])
def test_what_the_thin_parser_leaves_to_typer(argv):
    with pytest.raises(Unsupported):
        parse_verb(app, argv)


def test_one_verb_app_keeps_the_verb_and_leaves_the_app_unchanged():
    import typer

    n = len(app.registered_commands)
    sub = one_verb_app(app, "table")
    assert list(typer.main.get_command(sub).commands) == ["table"]
    assert len(app.registered_commands) == n and one_verb_app(app, "no-such-verb") is app


def test_typer_still_answers_help_and_errors(capsys):
    assert main(["table", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--rows" in out and "--argus" in out              # the verb's help lists its options
    assert main(["anonymise", "a.csv", "--qis", "x"]) == 2   # typer's usage error, one line
    err = capsys.readouterr().err
    assert "Missing option '--hierarchies'" in err and len(err.strip().splitlines()) == 1


def _typer_declarations(callback):
    """What typer reads from ``callback`` (the reference): name, kind, default, option strings."""
    from typer.models import ArgumentInfo
    from typer.utils import get_params_from_function

    out = []
    for name, meta in get_params_from_function(callback).items():
        info = meta.default
        kind = "argument" if isinstance(info, ArgumentInfo) else "option"
        decls = () if kind == "argument" else tuple(info.param_decls or ("--" + name.replace("_", "-"),))
        out.append((name, kind, info.default, decls))
    return out


@pytest.mark.parametrize("verb", sorted(c.name for c in app.registered_commands if c.name) +
                         sorted(c.callback.__name__ for c in app.registered_commands if not c.name))
def test_the_declarations_read_without_typer_are_typers(verb):
    from sdckit.cli_dispatch import _declarations

    verb = verb.replace("_", "-")
    info = find_command(app, verb)
    found = find_verb(verb)  # the verb's function, found without building the application
    assert found is not None and found[0] is info.callback
    try:
        ours = _declarations(info.callback)
    except Unsupported:
        return  # typer reads this verb (a context, a callback, a list option...)
    assert [(n, k, d, ds) for n, k, _, d, ds in ours] == _typer_declarations(info.callback)


def test_the_declarations_of_the_hot_verbs_are_read_without_typer():
    # the verbs the import test runs: each takes the thin path (or the check above is vacuous)
    from sdckit.cli_dispatch import _declarations

    for verb in ("risk", "anonymise", "table"):
        assert _declarations(find_verb(verb)[0])


def verb_from_source(signature: str):
    """A verb defined as in a verb module: typer's declarations, strings (PEP 563)."""
    from typing import Annotated

    namespace = {"Annotated": Annotated}
    exec(f"from __future__ import annotations\ndef verb({signature}) -> None:\n    pass\n", namespace)
    return namespace["verb"]


def test_a_declaration_the_thin_parser_cannot_read_is_left_to_typer():
    with pytest.raises(Unsupported, match="NoSuchType"):  # a name typer alone might resolve
        parse_args(verb_from_source("y: Annotated[NoSuchType, typer.Option('--y')] = 2"), ["--y", "3"])
    with pytest.raises(Unsupported, match="callback"):  # a callback typer calls
        parse_args(verb_from_source("x: Annotated[int, typer.Option('--x', callback=print)] = 1"), ["--x", "3"])
    with pytest.raises(Unsupported, match="no typer declaration"):
        parse_args(verb_from_source("x: int = 1"), ["--x", "3"])
    # the control: the same verb with a plain declaration is read
    assert parse_args(verb_from_source("x: Annotated[int, typer.Option('--x')] = 1"), ["--x", "3"]) == {"x": 3}


def test_the_precomputed_root_help_is_typers():
    # typer renders the declarations (plain text, 80 columns); `python tools/write_root_help.py`
    # rewrites ROOT_HELP after a verb is added or a verb's first docstring line changes
    assert ROOT_HELP == root_help_text(80)
    assert ROOT_HELP == root_help_text(200)  # click's help is at most 80 columns wide


@pytest.mark.parametrize("columns", [60, 79, 80, 132])
def test_sdckit_help_prints_typers_text_at_any_width(columns, monkeypatch, capsys):
    import typer

    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    # the reference: typer's own command object for the app, rendered by click without rich
    group = typer.main.get_command(app)
    group.rich_markup_mode = None
    assert out == group.get_help(typer.Context(group, info_name="sdckit")) + "\n"
