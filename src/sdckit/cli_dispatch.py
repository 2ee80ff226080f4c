"""A thin parser in front of typer for the ``sdckit`` verbs (start-up cost of the command line).

typer checks every option's value through a pydantic ``TypeAdapter`` built when the command line
is parsed: importing pydantic and building the adapters costs about 0.1 s of CPU on every call,
more than the whole of some commands (``sdckit table count`` on a small table). This module
parses a verb's command line itself where the verb's options are all of the plain kinds it
understands (``str``, ``int``, ``float``, ``bool`` flags, ``pathlib.Path``, each optionally
``None``) and the command line holds nothing else; the verb's function is then called with the
same keyword arguments typer would pass it. Anything else (``--help``, an unknown option, a value
that does not read as its type, a missing required option, a parameter with a callback, a
constraint or a prompt...) raises :class:`Unsupported` and the caller hands the command line to
typer unchanged, so typer's help and error messages are kept word for word.
"""

from __future__ import annotations

import copy
import re
import types
import typing
from pathlib import Path

__all__ = ["Unsupported", "find_command", "one_verb_app", "parse_verb"]

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


def _declarations(callback):
    """Each parameter of ``callback``: name, kind ('argument' or 'option'), base type, default
    (``...`` when required) and option strings, as typer declares them."""
    from typer.models import ArgumentInfo, OptionInfo
    from typer.utils import get_params_from_function

    plain = {ArgumentInfo: ArgumentInfo(), OptionInfo: OptionInfo()}
    out = []
    for name, meta in get_params_from_function(callback).items():
        info = meta.default
        if type(info) not in plain:
            raise Unsupported(f"parameter {name}")  # e.g. a typer.Context, or no typer declaration
        ref = plain[type(info)]
        for attr, value in vars(info).items():
            if attr not in _HELP_ONLY and value != getattr(ref, attr, value):
                raise Unsupported(f"parameter {name}: {attr}")
        base, _ = _plain_type(meta.annotation)
        if isinstance(info, ArgumentInfo):
            out.append((name, "argument", base, info.default, ()))
            continue
        decls = tuple(info.param_decls or ())
        if not decls:
            decls = ("--" + name.replace("_", "-"),)
        if any("/" in d or not d.startswith("-") for d in decls):
            raise Unsupported(f"parameter {name}: {decls}")  # secondary (--no-x) flags, names
        out.append((name, "option", base, info.default, decls))
    return out


def parse_verb(app, args: list[str]):
    """``(callback, kwargs)`` for ``sdckit VERB ARGS...`` as typer would call the verb.

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

    if info.cls not in (None, TyperCommand):  # a command class of its own may parse its own way
        raise Unsupported(f"verb {args[0]!r}: {info.cls!r}")
    decls = _declarations(info.callback)
    options = {d: (name, base) for name, kind, base, _, ds in decls if kind == "option" for d in ds}
    positional = [(name, base) for name, kind, base, _, _ in decls if kind == "argument"]
    kwargs: dict = {}
    given: list[str] = []
    rest = iter(args[1:])
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
    return info.callback, kwargs
