"""The output guard: no writer of sdckit writes over an input, or over a folder a release must never replace.

Every writer goes through :func:`guard_target`: it refuses to write over any file sdckit read in
this process (:func:`register_input`) or was told is an input, including through a symbolic link
or a hard link to it. :func:`check_output_folder` refuses folders that a release must never
replace (the root, the home folder, the current folder and their ancestors), and
:func:`check_writable_folder` says before any work when an output folder cannot be written.

These checks read paths only and write nothing, so they sit apart from the journalled writes and
the folder switch of :mod:`sdckit.io.atomic`, which call them (and re-export them under their
old names).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import InputError

__all__ = ["register_input", "guard_target", "refuse_overwrite", "check_writable_folder",
           "check_output_folder"]

_INPUTS: set[str] = set()


def register_input(path: str | os.PathLike) -> None:
    """Remember a file sdckit read: no writer of this process may write over it."""
    try:
        _INPUTS.add(str(Path(path).resolve()))
    except OSError:  # pragma: no cover - unresolvable path: nothing to protect
        pass


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def guard_target(target: str | os.PathLike, inputs: Iterable[str | os.PathLike | None] = ()) -> None:
    """Refuse to write ``target`` over an input file (same path, a symbolic link or a hard link).

    The inputs are the ones given plus every file read in this process (:func:`register_input`).
    Raises :class:`~sdckit.errors.InputError` naming both files.
    """
    t = Path(target)
    for src in [*(i for i in inputs if i is not None), *sorted(_INPUTS)]:
        if _same_file(t, Path(src)):
            raise InputError(f"{target}: refusing to write over the input file {Path(src).name}; "
                             "choose another output path.")
    if t.is_symlink():
        raise InputError(f"{target}: is a symbolic link; refusing to write through it; "
                         "choose another output path.")


def refuse_overwrite(target: str | os.PathLike, inputs: Iterable[str | os.PathLike | None]) -> None:
    """Raise if ``target`` is one of the input files (same resolved path or same inode)."""
    guard_target(target, inputs)


def check_writable_folder(folder: str | os.PathLike) -> Path:
    """Raise a one-line error when ``folder`` cannot be created or written (before any work)."""
    folder = Path(folder)
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise InputError(f"{folder}: cannot create this folder: {probe} is a file, not a folder; "
                         "choose another output folder.")
    if probe.exists() and not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(f"{folder}: cannot write here: the folder {probe} is not writable; "
                         "choose another output folder.")
    return folder


def check_output_folder(folder: str | os.PathLike, what: str = "output folder") -> Path:
    """Refuse a folder that a release, which replaces its folder whole, must never be: the root
    folder, the home folder, the current folder, or a folder holding one of them.

    Returns the folder as an absolute path; raises a one-line
    :class:`~sdckit.errors.InputError` naming it.
    """
    given = Path(folder).expanduser()
    path = Path(os.path.abspath(given))
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # pragma: no cover - a symlink loop: the writer refuses it later
        real = path
    if real.parent == real or path.parent == path:
        raise InputError(f"{what}: {folder} is the root folder of the disk; a release replaces its folder "
                         "whole; choose a new folder, e.g. ./release.")
    for name, special in (("your home folder", _home()), ("the current folder", _cwd())):
        if special is None:
            continue
        if real == special:
            raise InputError(f"{what}: {folder} is {name}; a release replaces its folder whole; "
                             "choose a new folder inside it, e.g. ./release.")
        if real in special.parents:
            raise InputError(f"{what}: {folder} holds {name}; a release replaces its folder whole; "
                             "choose a new folder, e.g. ./release.")
    return path


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (OSError, RuntimeError, KeyError):  # pragma: no cover - no home folder
        return None


def _cwd() -> Path | None:
    try:
        return Path.cwd().resolve()
    except OSError:  # pragma: no cover - the current folder was removed
        return None
