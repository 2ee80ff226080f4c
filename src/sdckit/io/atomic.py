"""Atomic writes: write to a temporary file in the target folder, then rename over the target.

A failure mid-write leaves no partial file; the rename is atomic on one file system.
Writing over a file the release was read from is refused.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..errors import InputError


def refuse_overwrite(target: str | os.PathLike, inputs: Iterable[str | os.PathLike | None]) -> None:
    """Raise if ``target`` is one of the input files (same resolved path or same inode)."""
    t = Path(target).resolve()
    for src in inputs:
        if src is None:
            continue
        s = Path(src).resolve()
        same = t == s
        if not same and t.exists() and s.exists():
            same = os.path.samefile(t, s)
        if same:
            raise InputError(f"{target}: refusing to write over the input file {src}; "
                             "choose another output path.")


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success rename it to ``target``.

    On any exception the temporary file is removed and ``target`` is left as it was.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_umask())  # as an ordinary write would (mkstemp gives 0600)
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(target: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``target`` atomically."""
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(target)


def atomic_write_text(target: str | os.PathLike, text: str) -> Path:
    """Write UTF-8 ``text`` to ``target`` atomically."""
    return atomic_write_bytes(target, text.encode("utf-8"))


def atomic_write_with(target: str | os.PathLike, writer: Callable[[Path], None]) -> Path:
    """Call ``writer(tmp_path)`` (e.g. a pandas or pyreadstat writer), then rename atomically."""
    with atomic_path(target) as tmp:
        writer(tmp)
    return Path(target)
