"""Atomic writes and the one output guard.

* Files: write to a temporary file in the target folder, then rename over the target. A
  failure mid-write leaves no partial file; the rename is atomic on one file system.
* Folders: a release is written whole into a staging folder beside the target and switched
  in with one rename (an atomic exchange where the kernel offers it), so a kill at any moment
  leaves either the previous release or the new one, never a mix. Stale staging folders and
  temporary files of killed runs are removed by the next run.
* Every writer goes through :func:`guard_target`: it refuses to write over any file sdckit
  read in this process (:func:`register_input`) or was told is an input, including through a
  symbolic link or a hard link to it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..errors import InputError

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


#: a file inside a folder that sdckit wrote as a release (so --overwrite may replace the folder)
RELEASE_MARK = ".sdckit-release"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's live process
        return True
    return True


def clean_stale(folder: str | os.PathLike) -> int:
    """Remove staging folders and temporary files that killed runs left in ``folder``.

    Names are ``.<target>.staging-<pid>-<random>`` and ``.<target>.<pid>-<random>.tmp``; those of a
    process still running are kept. Returns how many were removed.
    """
    import shutil

    folder = Path(folder)
    if not folder.is_dir():
        return 0
    removed = 0
    for entry in folder.iterdir():
        name = entry.name
        if not name.startswith("."):
            continue
        pid = None
        if ".staging-" in name:
            pid = name.rsplit(".staging-", 1)[1].split("-", 1)[0]
        elif name.endswith(".tmp") and name.count(".") >= 3:
            pid = name[:-4].rsplit(".", 1)[1].split("-", 1)[0]
        elif name.endswith(".old-release"):
            pid = name.rsplit(".", 2)[-2].split("-", 1)[0] if name.count(".") >= 3 else "0"
        if pid is None or not pid.isdigit():
            continue
        if int(pid) != os.getpid() and _pid_alive(int(pid)):
            continue
        if int(pid) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            removed += 1
    return removed


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with renameat2(RENAME_EXCHANGE); False where unsupported."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    rc = fn(AT_FDCWD, os.fsencode(str(a)), AT_FDCWD, os.fsencode(str(b)), RENAME_EXCHANGE)
    return rc == 0


@contextlib.contextmanager
def staged_folder(target: str | os.PathLike, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder beside ``target``; on success switch it in as ``target``.

    * ``target`` absent (or an empty folder): one rename.
    * ``target`` an earlier release: only with ``overwrite=True``; the folders are exchanged in
      one atomic step (renameat2), then the previous release is removed. Where the exchange is
      not available the previous release is renamed aside first and restored if the switch fails.
    * ``target`` a folder that sdckit did not write: refused (its files would be lost).

    On any exception (and after a kill, at the next run) the staging folder is removed and
    ``target`` is left as it was.
    """
    import shutil

    target = Path(target)
    check_writable_folder(target)
    if target.is_symlink():
        raise InputError(f"{target}: the output folder is a symbolic link; choose a real folder.")
    if target.exists() and not target.is_dir():
        raise InputError(f"{target}: is a file, not a folder; choose another output folder.")
    existing = target.is_dir() and any(target.iterdir())
    if existing:
        if not (target / RELEASE_MARK).exists():
            raise InputError(f"{target}: the folder exists and holds files sdckit did not write; "
                             "choose a new output folder (nothing was written).")
        if not overwrite:
            raise InputError(f"{target}: a release is already there; pass --overwrite (or "
                             "overwrite = true in [output]) to replace it, or choose another folder.")
    parent = target.parent if str(target.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    clean_stale(parent)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging-{os.getpid()}-", dir=parent))
    try:
        yield staging
        (staging / RELEASE_MARK).write_text("written by sdckit; this folder is replaced whole by "
                                            "the next release run with --overwrite\n")
        os.chmod(staging, 0o777 & ~_umask())
        if target.is_dir() and not existing:
            target.rmdir()
        if not target.exists():
            os.rename(staging, target)
        elif _exchange(staging, target):
            shutil.rmtree(staging, ignore_errors=True)  # now holds the previous release
        else:
            aside = parent / f".{target.name}.{os.getpid()}-prev.old-release"
            os.rename(target, aside)
            try:
                os.rename(staging, target)
            except BaseException:
                os.rename(aside, target)
                raise
            shutil.rmtree(aside, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success rename it to ``target``.

    On any exception the temporary file is removed and ``target`` is left as it was.
    """
    target = Path(target)
    guard_target(target)
    check_writable_folder(target.parent)
    target.parent.mkdir(parents=True, exist_ok=True)
    clean_stale(target.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp", dir=target.parent)
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
