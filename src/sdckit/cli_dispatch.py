"""A thin parser in front of typer for the ``sdckit`` verbs (start-up cost of the command line).

typer checks every option's value through a pydantic ``TypeAdapter`` built when the command line
is parsed: importing pydantic and building the adapters costs about 0.1 s of CPU on every call,
more than the whole of some commands (``sdckit table count`` on a small table), and importing typer
itself costs 0.07 s more. This module parses a verb's command line itself where the verb's options
are all of the plain kinds it understands (``str``, ``int``, ``float``, ``bool`` flags,
``pathlib.Path``, each optionally ``None``) and the command line holds nothing else; the verb's
function is then called with the same keyword arguments typer would pass it. The verb's typer
declarations (``Annotated[int | None, typer.Option("--k", help=...)]``, strings under
``from __future__ import annotations``) are read without importing typer: each annotation is
evaluated in the verb's module namespace with ``typer`` bound to a recorder of the declaration's
arguments. Anything else (``--help``, an unknown option, a value that does not read as its type,
a missing required option, a parameter with a callback, a constraint or a prompt, an annotation
that does not evaluate...) raises :class:`Unsupported` and the caller hands the command line to
typer unchanged, so typer's help and error messages are kept word for word.

A verb module may name annotation aliases in ``ANNOTATION_ALIASES`` (``{"JsonOpt": "Annotated[bool,
typer.Option(...)]"}``): the recorder evaluates them the same way.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path

__all__ = ["ROOT_HELP", "Unsupported", "find_command", "one_verb_app", "parse_args", "parse_verb"]

_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_PLAIN = (str, int, float, bool, Path)
# ParameterInfo attributes that change only the help text: any other attribute away from its
# default (a callback, a constraint, an environment variable, a prompt...) leaves the verb to typer
_HELP_ONLY = {"default", "param_decls", "help", "show_default", "show_choices", "show_envvar", "hidden",
              "metavar", "rich_help_panel"}


class Unsupported(Exception):
    """The command line needs typer's own parser (help, an error, or a feature not handled here)."""


def find_command(app, verb: str):
    """The registered typer command named ``verb`` (typer's naming), or None."""
    from typer.main import get_command_name

    for info in app.registered_commands:
        name = info.name or get_command_name(info.callback.__name__)
        if name == verb:
            return info
    return None


def one_verb_app(app, verb: str):
    """A copy of ``app`` holding only ``verb`` (and the root callback), or ``app`` itself when no
    command has that name; building the click command then costs one verb, not all of them."""
    import copy

    info = find_command(app, verb)
    if info is None:
        return app
    sub = copy.copy(app)  # a shallow copy: the registered lists are replaced, `app` is unchanged
    sub.registered_commands = [info]
    sub.registered_groups = []
    return sub


def _plain_type(annotation):
    """``(base, optional)`` for ``T`` or ``T | None`` with ``T`` a plain type, else Unsupported."""
    optional = False
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        if len(args) != 1:
            raise Unsupported(f"type {annotation!r}")
        annotation = args[0]
    if annotation not in _PLAIN:
        raise Unsupported(f"type {annotation!r}")
    return annotation, optional


def _convert(text: str, base):
    if base is str:
        return text
    if base is int and _INT.match(text):
        return int(text)
    if base is float and _FLOAT.match(text):
        return float(text)
    if base is Path and text:
        return Path(text)
    raise Unsupported(f"value {text!r}")  # typer reports it (or reads it its own way)


class _Declared:
    """What ``typer.Option(...)`` or ``typer.Argument(...)`` was given (recorded, not built)."""

    def __init__(self, kind: str, args: tuple, keywords: dict) -> None:
        self.kind, self.args, self.keywords = kind, args, keywords


class _Recorder:
    """Stands in for the ``typer`` module while a verb's annotations are evaluated."""

    @staticmethod
    def Option(*args, **keywords) -> _Declared:  # noqa: N802 (typer's name)
        return _Declared("option", args, keywords)

    @staticmethod
    def Argument(*args, **keywords) -> _Declared:  # noqa: N802 (typer's name)
        return _Declared("argument", args, keywords)


def _annotations(callback) -> dict:
    """``{parameter: (base type, declaration)}`` of ``callback``, its annotations evaluated with
    ``typer`` standing for :class:`_Recorder` (Unsupported where one does not evaluate)."""
    namespace = dict(getattr(callback, "__globals__", {}))
    namespace["typer"] = _Recorder
    for alias, text in namespace.get("ANNOTATION_ALIASES", {}).items():
        namespace[alias] = eval(text, namespace)  # noqa: S307 (the verb module's own declaration)
    out = {}
    for name, text in getattr(callback, "__annotations__", {}).items():
        if name == "return":
            continue
        try:
            value = eval(text, namespace) if isinstance(text, str) else text  # noqa: S307
        except Exception as exc:  # a name typer would resolve another way: leave it to typer
            raise Unsupported(f"parameter {name}: {exc}") from None
        if typing.get_origin(value) is not typing.Annotated:
            raise Unsupported(f"parameter {name}: no typer declaration")
        base, *meta = typing.get_args(value)
        declared = [m for m in meta if isinstance(m, _Declared)]
        if len(declared) != 1 or len(meta) != 1:
            raise Unsupported(f"parameter {name}: {meta!r}")
        out[name] = (base, declared[0])
    return out


def _declarations(callback):
    """Each parameter of ``callback``: name, kind ('argument' or 'option'), base type, default
    (``...`` when required) and option strings, as typer declares them."""
    import inspect

    annotations = _annotations(callback)
    out = []
    for name, param in inspect.signature(callback).parameters.items():
        if name not in annotations or param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise Unsupported(f"parameter {name}")  # e.g. a typer.Context, or no typer declaration
        annotation, info = annotations[name]
        for attr in info.keywords:
            if attr not in _HELP_ONLY or attr in ("default", "param_decls"):
                raise Unsupported(f"parameter {name}: {attr}")  # a callback, a constraint, a prompt...
        base, _ = _plain_type(annotation)
        default = ... if param.default is param.empty else param.default
        if info.kind == "argument":
            if info.args:  # a default inside Argument(...): typer refuses it in Annotated
                raise Unsupported(f"parameter {name}: {info.args!r}")
            out.append((name, "argument", base, default, ()))
            continue
        decls = tuple(info.args)
        if not decls:
            decls = ("--" + name.replace("_", "-"),)
        if any(not isinstance(d, str) or "/" in d or not d.startswith("-") for d in decls):
            raise Unsupported(f"parameter {name}: {decls}")  # secondary (--no-x) flags, names
        out.append((name, "option", base, default, decls))
    return out


def parse_verb(app, args: list[str]):
    """``(callback, kwargs)`` for ``sdckit VERB ARGS...`` as typer would call the verb of ``app``.

    Raises
    ------
    Unsupported
        Where the command line or the verb needs typer's parser; nothing has run then.
    """
    if not args or args[0].startswith("-"):
        raise Unsupported("no verb")
    info = find_command(app, args[0])
    if info is None or info.context_settings:
        raise Unsupported(f"verb {args[0]!r}")
    from typer.core import TyperCommand

    if info.cls not in (None, TyperCommand) and not getattr(info.cls, "help_only", False):
        # a command class of its own may parse its own way (one that changes only the help does not)
        raise Unsupported(f"verb {args[0]!r}: {info.cls!r}")
    return info.callback, parse_args(info.callback, args[1:])


def parse_args(callback, args: list[str]) -> dict:
    """The keyword arguments typer would pass ``callback`` (a verb) for the command line ``args``
    that follow the verb's name; typer is not imported.

    Raises
    ------
    Unsupported
        Where the command line or the verb needs typer's parser; nothing has run then.
    """
    decls = _declarations(callback)
    options = {d: (name, base) for name, kind, base, _, ds in decls if kind == "option" for d in ds}
    positional = [(name, base) for name, kind, base, _, _ in decls if kind == "argument"]
    kwargs: dict = {}
    given: list[str] = []
    rest = iter(args)
    only_positional = False
    for token in rest:
        if not only_positional and token == "--":
            only_positional = True
            continue
        if not only_positional and token.startswith("-") and len(token) > 1:
            flag, eq, value = token.partition("=")
            if flag not in options:
                raise Unsupported(f"option {flag}")  # --help, -h, an unknown option
            name, base = options[flag]
            if base is bool:
                if eq:
                    raise Unsupported(f"option {token}")
                kwargs[name] = True
                continue
            if not eq:
                value = next(rest, None)
                if value is None:
                    raise Unsupported(f"option {flag} without a value")
            kwargs[name] = _convert(value, base)
            continue
        given.append(token)
    if len(given) > len(positional):
        raise Unsupported("extra arguments")
    for (name, base), text in zip(positional, given):
        kwargs[name] = _convert(text, base)
    for name, _, _, default, _ in decls:
        if name not in kwargs:
            if default is ...:
                raise Unsupported(f"{name} is required")
            kwargs[name] = default
    return kwargs


# ``sdckit --help`` on a terminal of 80 columns or more, exactly as typer renders it from the verbs'
# declarations (sdckit.cli.root_help_text): printed without importing typer or any verb's module.
# tests/test_cli_dispatch.py compares the two; `python tools/write_root_help.py` rewrites it.
ROOT_HELP = """\
Usage: sdckit [OPTIONS] COMMAND [ARGS]...

  sdckit: statistical disclosure control for microdata and tables.

Options:
  --version  Print the version and exit.
  --help     Show this message and exit.

Commands:
  risk           Measure the disclosure risk of a data file on its key...
  protect        Run a release spec: read, mask, check the gate, write...
  explore        Sweep candidate methods, draw the R-U map, and propose...
  report         Summarise a written release (public figures only) and...
  table          Protect a table from a spec (rules, suppression,...
  estimate       For analysts: unbiased estimates of the original...
  demo           Run the bundled release on the bundled census sample and...
  app            Start the workbench: a local web app for the whole...
  steps          List every release step with its declared parameters...
  verify         Check a release folder against its certificate.json: the...
  outputs        Check researchers' outputs (ACRO's rules with the LP...
  keygen         Write the steward's Ed25519 key pair that signs release...
  from-sdcmicro  Translate an sdcMicro script (createSdcObj's roles, the...
  anonymise      Find the generalisation with the least loss that...
  attack         Attack a release as an intruder would: singling out,..."""
