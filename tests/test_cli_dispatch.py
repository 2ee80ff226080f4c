"""The thin command-line parser in front of typer (sdckit.cli_dispatch) against typer itself.

For any command line of the hot verbs, the thin parser either steps aside (Unsupported: typer
then parses, with its own help and errors) or hands the verb exactly the keyword arguments
typer would hand it. The reference is typer's own parsing of the same command line, with the
verb's function replaced by one that records its arguments.
"""

from __future__ import annotations

import copy
import functools

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from sdckit.cli import app, main
from sdckit.cli_dispatch import Unsupported, find_command, one_verb_app, parse_verb


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
