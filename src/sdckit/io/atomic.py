"""Atomic writes and the one switch of a release's folder pair, under sdckit's journals.

Names no user file can have, and a journal
    Every temporary entry sdckit makes beside an output carries a fresh random 128-bit token in
    its name (``.<target>.sdckit-<token>.tmp`` for a file being written,
    ``.<target>.sdckit-<token>.staging`` for a folder being written,
    ``.<target>.sdckit-<token>.previous`` for the release it replaces). Before the entry is
    created it is listed in a journal, ``.sdckit-<token>.journal``, that sdckit writes in the
    same folder, with the pid of the writing process and that process's start time.
    :func:`clean_stale` reads the journals of a folder whose process is no longer running and
    removes exactly the entries they list whose names carry the journal's token, then the
    journal. Nothing is ever deleted because its name looks like sdckit's: a user's
    ``.survey.2023.tmp`` or ``.backup.2019.tmp/`` is not listed in any journal and is left alone.

Files
    :func:`atomic_path` writes to a temporary file in the target's folder, then renames it over
    the target. A failure mid-write leaves no partial file; the rename is atomic on one file
    system. After a kill the next writer in that folder removes the temporary file.

The pair of release folders (one switch)
    A release has a public folder and an internal folder (its seeds and row order).
    :func:`staged_release` stages both beside their targets, each holding a release mark
    (:data:`RELEASE_MARK`) with the run's random id, then switches them under one journal in the
    public folder's parent:

    1. ``staging`` -- both staging folders are written; a kill here is rolled *back* (the
       staging folders are removed, the targets were never touched);
    2. ``switching`` -- the commit point: the journal is rewritten (a new file renamed over the
       old one, then synced) to say so. From here a kill is rolled *forward*: each target whose
       mark does not name the new run is exchanged with its staging folder (``renameat2`` with
       ``RENAME_EXCHANGE`` where the kernel offers it; else the old folder is renamed aside and
       the new one renamed in), the internal folder first;
    3. the previous folders are removed, the locks, then the journal.

    The next run on the same folders and ``sdckit verify`` (:func:`recover_release`) finish an
    interrupted switch the same way, so whoever looks sees the old pair or the new pair, never a
    mix; and ``verify`` compares the run ids of the two folders besides.

One writer at a time
    A release takes a lock beside each of its folders (``.<folder>.sdckit-lock``, created
    exclusively: written under a token name, then hard-linked to its name, which fails when the
    name exists; it holds the pid, the process start time and the token). A second run is
    refused while the lock's process runs. A lock is stale only when its process is gone *and*
    a journal sdckit wrote lists it with the same token; then recovering that journal removes it.

Switch points
    The moments of the switch are named in :data:`SWITCH_POINTS`. When the environment variable
    ``SDCKIT_TEST_KILL_AT`` names one of them, the process ends there at once with
    ``os._exit(KILL_EXIT)``, as a SIGKILL would end it: the kill tests enumerate every point.

The output guard
    Every writer goes through :func:`guard_target` (it refuses to write over an input file);
    :func:`check_output_folder` refuses folders that a release must never replace. Those
    checks live in :mod:`sdckit.io.guard` and are re-exported here; whether the process that
    wrote a journal or lock still runs is asked of :mod:`sdckit.io.processes`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from .guard import check_output_folder, check_writable_folder, guard_target, refuse_overwrite, register_input
from .processes import owner_alive, this_process

__all__ = ["register_input", "guard_target", "refuse_overwrite", "check_writable_folder", "check_output_folder",
           "clean_stale", "staged_folder", "staged_release", "recover_release", "ReleaseStage", "read_mark",
           "atomic_path", "atomic_write_bytes", "atomic_write_text", "atomic_write_with", "new_token",
           "RELEASE_MARK", "SWITCH_POINTS", "KILL_EXIT", "JOURNAL_FORMAT", "MARK_FORMAT"]

#: a file inside a folder that sdckit wrote as a release (so --overwrite may replace the folder);
#: it holds the run id (JSON, :data:`MARK_FORMAT`)
RELEASE_MARK = ".sdckit-release"
MARK_FORMAT = "sdckit-release-mark/1"
JOURNAL_FORMAT = "sdckit-journal/1"
LOCK_FORMAT = "sdckit-lock/1"
#: the named moments of a release switch, in order (see the module docstring)
SWITCH_POINTS = ("locked", "staged", "committed", "internal_aside", "internal_switched", "public_aside",
                 "public_switched", "previous_removed", "unlocked")
#: the moments of an atomic file write
FILE_POINTS = ("file_journal", "file_written", "file_replaced")
#: exit status of a process ended at a switch point by ``SDCKIT_TEST_KILL_AT``
KILL_EXIT = 137
_KILL_ENV = "SDCKIT_TEST_KILL_AT"
#: set to 1 to switch folders by two renames even where renameat2 can exchange them (tests)
_NO_EXCHANGE_ENV = "SDCKIT_TEST_NO_EXCHANGE"

_TOKEN = r"[0-9a-f]{32}"
_JOURNAL_RE = re.compile(rf"\.sdckit-({_TOKEN})\.journal")


def _point(name: str) -> None:
    """A named moment of a switch: the kill tests end the process here (see the module docstring)."""
    if os.environ.get(_KILL_ENV) == name:
        os._exit(KILL_EXIT)


def new_token() -> str:
    """A fresh random 128-bit token, as 32 hex digits."""
    return secrets.token_hex(16)


# --------------------------------------------------------------------------- journals

def _short(name: str) -> str:
    """A target's name as it appears inside sdckit's entry names (long names shortened)."""
    if len(name) <= 100:
        return name
    import hashlib

    return name[:80] + "-" + hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]


def _journal_path(folder: Path, token: str) -> Path:
    return folder / f".sdckit-{token}.journal"


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_new(path: Path, data: bytes, *, sync: bool, mode: int = 0o644) -> None:
    """Create ``path`` (it must not exist) holding ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.write(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _write_journal(folder: Path, data: dict, *, sync: bool) -> Path:
    path = _journal_path(folder, data["token"])
    body = json.dumps(data).encode("utf-8")
    if not path.exists():
        _write_new(path, body, sync=sync)
    else:  # an update: a new file renamed over the journal, so a kill leaves one whole journal
        new = path.with_name(path.name + ".new")
        with contextlib.suppress(FileNotFoundError):
            new.unlink()
        _write_new(new, body, sync=sync)
        os.replace(new, path)
    if sync:
        _fsync_dir(folder)
    return path


def _read_journal(path: Path) -> dict | None:
    """A journal's content when it is one sdckit wrote (format, kind, token matching its name)."""
    m = _JOURNAL_RE.fullmatch(path.name)
    if m is None:
        return None
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if (not isinstance(data, dict) or data.get("format") != JOURNAL_FORMAT or data.get("token") != m.group(1)
            or data.get("kind") not in ("file", "release")):
        return None
    return data


def _remove_journal(path: Path) -> None:
    for p in (path.with_name(path.name + ".new"), path):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def _listed(folder: Path, name: object, token: str) -> Path | None:
    """The entry ``name`` in ``folder`` when the name is a plain name carrying ``token``."""
    if (not isinstance(name, str) or token not in name or "/" in name or "\0" in name
            or name in ("", ".", "..") or (os.sep != "/" and os.sep in name)):
        return None
    return folder / name


def _remove_entry(path: Path | None) -> bool:
    """Remove a listed entry: a file or link, or a folder sdckit created (with what it wrote)."""
    if path is None:
        return False
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        return True
    except FileNotFoundError:
        return False
    except OSError:  # pragma: no cover - not ours to force
        return False


def clean_stale(folder: str | os.PathLike) -> int:
    """Finish what killed sdckit runs left in ``folder``, by their journals only.

    For each journal sdckit wrote in ``folder`` (``.sdckit-<token>.journal``) whose process is
    no longer running: a file write's temporary file is removed; a release switch is rolled
    back (before its commit) or forward (after it) by :func:`recover_release`'s rules. Only
    entries the journal lists, whose names carry its token, are removed. Returns how many
    entries were removed or switched.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return 0
    done = 0
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return 0
    for name in names:
        if not _JOURNAL_RE.fullmatch(name):
            continue
        path = folder / name
        data = _read_journal(path)
        if data is None or owner_alive(data.get("pid"), data.get("proc_start")):
            continue
        if data["kind"] == "file":
            for entry in data.get("entries", []) or []:
                done += _remove_entry(_listed(folder, entry, data["token"]))
            _remove_journal(path)
        else:
            with contextlib.suppress(InputError):
                done += _recover(path, data)
    return done


# --------------------------------------------------------------------------- files

@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, *, mode: int | None = None, exclusive: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success rename it to ``target``.

    The temporary file's name carries a random token and is listed in a journal first (see the
    module docstring). On any exception the temporary file is removed and ``target`` is left as
    it was. ``mode`` sets the file's permissions (default: as an ordinary write would, 0666 less
    the umask); ``exclusive`` refuses to replace an existing ``target`` (the new file is linked
    to its name, which fails when the name exists).
    """
    target = Path(target)
    guard_target(target)
    check_writable_folder(target.parent)
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    clean_stale(folder)
    token = new_token()
    tmp = folder / f".{_short(target.name)}.sdckit-{token}.tmp"
    journal = _write_journal(folder, {"format": JOURNAL_FORMAT, "kind": "file", "token": token, **this_process(),
                                      "target": target.name, "entries": [tmp.name]}, sync=False)
    _point("file_journal")
    try:
        _write_new(tmp, b"", sync=False, mode=0o600)
        yield tmp
        os.chmod(tmp, (0o666 & ~_umask()) if mode is None else mode)
        _point("file_written")
        if exclusive:
            try:
                os.link(tmp, target)
            except FileExistsError:
                raise InputError(f"{target}: already exists; sdckit does not replace it: remove it or "
                                 "choose another name.") from None
            tmp.unlink()
        else:
            os.replace(tmp, target)
        _point("file_replaced")
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    finally:
        _remove_journal(journal)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(target: str | os.PathLike, data: bytes, *, mode: int | None = None,
                       exclusive: bool = False) -> Path:
    """Write ``data`` to ``target`` atomically (see :func:`atomic_path` for ``mode`` and ``exclusive``)."""
    with atomic_path(target, mode=mode, exclusive=exclusive) as tmp:
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


# --------------------------------------------------------------------------- release marks

def read_mark(folder: str | os.PathLike) -> dict | None:
    """The release mark of a folder sdckit wrote (``{"run_id": ..., "folder": ...}``); None
    when the folder has no mark. A mark of an older sdckit (plain text) gives ``{"run_id": None}``."""
    path = Path(folder) / RELEASE_MARK
    try:
        if not path.is_file() or path.is_symlink():
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return {"run_id": None}
    if not isinstance(data, dict) or data.get("format") != MARK_FORMAT:
        return {"run_id": None}
    return {"run_id": data.get("run_id") if isinstance(data.get("run_id"), str) else None,
            "folder": data.get("folder")}


def _run_id_of(folder: Path) -> str | None:
    mark = read_mark(folder) if folder.is_dir() and not folder.is_symlink() else None
    return None if mark is None else mark.get("run_id")


def _write_mark(folder: Path, run_id: str, role: str) -> None:
    body = json.dumps({"format": MARK_FORMAT, "run_id": run_id, "folder": role,
                       "note": "written by sdckit; this folder is replaced whole by the next release run "
                               "with --overwrite"}, indent=1) + "\n"
    _write_new(folder / RELEASE_MARK, body.encode("utf-8"), sync=True)


# --------------------------------------------------------------------------- the folder switch

@dataclass(frozen=True)
class ReleaseStage:
    """The staging folders of one release switch: write into them, then leave the ``with`` block."""

    public: Path
    internal: Path | None
    run_id: str


def _check_target(target: Path, overwrite: bool) -> bool:
    """Refuse a target that is a file, a link, or a folder that sdckit did not write; returns
    whether it holds files."""
    check_writable_folder(target)
    if target.is_symlink():
        raise InputError(f"{target}: the output folder is a symbolic link; choose a real folder.")
    if target.exists() and not target.is_dir():
        raise InputError(f"{target}: is a file, not a folder; choose another output folder.")
    try:
        existing = target.is_dir() and any(target.iterdir())
    except OSError as exc:
        raise InputError(f"{target}: cannot be read ({exc.strerror}); choose another output folder.") from None
    if existing:
        if read_mark(target) is None:
            raise InputError(f"{target}: the folder exists and holds files sdckit did not write; "
                             "choose a new output folder (nothing was written).")
        if not overwrite:
            raise InputError(f"{target}: a release is already there; pass --overwrite (or "
                             "overwrite = true in [output]) to replace it, or choose another folder.")
    return existing


def _lock_path(target: Path) -> Path:
    return target.parent / f".{_short(target.name)}.sdckit-lock"


def _read_lock(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == LOCK_FORMAT else None


def _take_lock(target: Path, token: str, journal_folder: Path) -> Path:
    """Create the lock of ``target`` exclusively, holding this process, ``token`` and the
    folder of the journal that lists it."""
    lock = _lock_path(target)
    body = json.dumps({"format": LOCK_FORMAT, "token": token, **this_process(), "folder": target.name,
                       "journal_folder": str(journal_folder)}).encode()
    new = lock.with_name(f".{_short(target.name)}.sdckit-{token}.lock")
    _write_new(new, body, sync=False)
    try:
        try:
            os.link(new, lock)
        except FileExistsError:
            raise
        except OSError as exc:  # a file system without hard links: create the name exclusively
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
                raise
            _write_new(lock, body, sync=False)
    finally:
        with contextlib.suppress(FileNotFoundError):
            new.unlink()
    return lock


def _release_lock(parent: Path, name: object, token: str) -> None:
    if not isinstance(name, str) or "/" in name:
        return
    path = parent / name
    held = _read_lock(path)
    if held is not None and held.get("token") == token:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    with contextlib.suppress(FileNotFoundError):
        (parent / f"{name[:-len('sdckit-lock')]}sdckit-{token}.lock").unlink()


def _busy(target: Path, lock: Path) -> InputError:
    held = _read_lock(lock)
    if held is None:
        return InputError(f"{target}: the lock file {lock.name} beside it was not written by sdckit (or is "
                          "unreadable); if no sdckit run is writing to this folder, remove the lock file.")
    pid = held.get("pid")
    if owner_alive(pid, held.get("proc_start")):
        return InputError(f"another sdckit run is writing to {target.name} (pid {pid}); wait for it or choose "
                          "another folder")
    return InputError(f"{target}: the lock file {lock.name} names a sdckit run (pid {pid}) that has ended "
                      "but no sdckit journal lists it; if no sdckit run is writing to this folder, remove "
                      "the lock file.")


def _acquire(target: Path, token: str, journal_folder: Path) -> Path:
    """Take the lock of ``target``; a stale lock (its process ended, a journal lists it) is
    cleared by recovering that journal first."""
    lock = _lock_path(target)
    for _ in range(2):
        try:
            return _take_lock(target, token, journal_folder)
        except FileExistsError:
            held = _read_lock(lock)
            if held is None or owner_alive(held.get("pid"), held.get("proc_start")):
                raise _busy(target, lock) from None
            owner = held.get("token")
            journal = None
            for folder in {target.parent, *_journal_folders_of(held)}:
                cand = _journal_path(folder, owner) if isinstance(owner, str) and re.fullmatch(_TOKEN, owner) else None
                if cand is not None and cand.is_file():
                    journal = cand
            data = _read_journal(journal) if journal is not None else None
            if journal is None or data is None or not any(isinstance(lk, dict) and lk.get("name") == lock.name
                                       for lk in data.get("locks", [])):
                raise _busy(target, lock) from None
            _recover(journal, data)
    raise _busy(target, lock)


def _journal_folders_of(lock: dict) -> list[Path]:
    folder = lock.get("journal_folder")
    return [Path(folder)] if isinstance(folder, str) else []


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with renameat2(RENAME_EXCHANGE); False where unsupported."""
    if os.environ.get(_NO_EXCHANGE_ENV) == "1":
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    rc = fn(AT_FDCWD, os.fsencode(str(a)), AT_FDCWD, os.fsencode(str(b)), RENAME_EXCHANGE)
    return rc == 0


def _switch_one(entry: dict, run_id: str) -> None:
    """Bring one folder of a committed switch to the new run (idempotent: a redo after a kill
    finds what was done by the run ids of the marks)."""
    parent = Path(entry["parent"])
    target, stage, aside = parent / entry["target"], parent / entry["stage"], parent / entry["aside"]
    role = entry.get("role", "public")
    if _run_id_of(target) == run_id:
        return
    if not (stage.is_dir() and _run_id_of(stage) == run_id):
        raise InputError(f"{target}: an interrupted release switch cannot be finished: its staging folder "
                         f"{stage.name} is missing; run the release again with --overwrite.")
    if target.is_dir() and not target.is_symlink():
        if not _exchange(stage, target):
            os.rename(target, aside)
            _point(f"{role}_aside")
            os.rename(stage, target)
    elif target.exists() or target.is_symlink():
        raise InputError(f"{target}: is not a folder; an interrupted release switch cannot be finished.")
    else:
        os.rename(stage, target)
    _point(f"{role}_switched")


def _remove_previous(path: Path) -> None:
    """Remove a folder a switch replaced: an earlier release (it has a mark) whole, an empty
    folder; anything else is left where it is."""
    if not path.is_dir() or path.is_symlink():
        return
    if read_mark(path) is not None:
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.rmdir()


def _finish(journal: Path, data: dict) -> None:
    """Remove the previous folders, the staging leftovers, the locks, then the journal."""
    token = data["token"]
    for entry in data.get("folders", []):
        parent = Path(entry["parent"])
        for key in ("stage", "aside"):
            p = _listed(parent, entry.get(key), token)
            if p is not None:
                _remove_previous(p)
    _point("previous_removed")
    for lk in data.get("locks", []):
        _release_lock(Path(lk["parent"]), lk["name"], token)
    _point("unlocked")
    _remove_journal(journal)


def _roll_back(journal: Path, data: dict) -> None:
    token = data["token"]
    for entry in data.get("folders", []):
        parent = Path(entry["parent"])
        _remove_entry(_listed(parent, entry.get("stage"), token))
    for lk in data.get("locks", []):
        _release_lock(Path(lk["parent"]), lk["name"], token)
    _remove_journal(journal)
    for d in reversed(data.get("created", []) or []):
        if isinstance(d, str):
            with contextlib.suppress(OSError):
                Path(d).rmdir()  # a folder this run created, if it is still empty


def _valid_release_journal(data: dict) -> bool:
    folders = data.get("folders")
    if not isinstance(folders, list) or not isinstance(data.get("run_id"), str):
        return False
    for e in folders:
        if not (isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("parent", "target", "stage", "aside"))
                and data["token"] in e["stage"] and data["token"] in e["aside"]):
            return False
    return all(isinstance(lk, dict) and isinstance(lk.get("parent"), str) and isinstance(lk.get("name"), str)
               for lk in data.get("locks", []) or [])


def _recover(journal: Path, data: dict) -> int:
    """Roll an interrupted release switch back (not committed) or forward (committed)."""
    if not _valid_release_journal(data):
        return 0
    if data.get("state") == "switching":
        for entry in data["folders"]:
            _switch_one(entry, data["run_id"])
        _finish(journal, data)
    else:
        _roll_back(journal, data)
    return 1


def recover_release(public: str | os.PathLike) -> dict[str, Any]:
    """Finish an interrupted switch of the release in ``public`` (and its internal folder).

    Looks for sdckit's release journals beside ``public`` whose switch names this folder.
    Returns ``{"recovered": n, "running": [pids]}``: how many interrupted switches were rolled
    back or forward, and the pids of sdckit runs that are switching it now (left alone).
    """
    public = Path(public)
    parent = public.parent if str(public.parent) else Path(".")
    recovered = 0
    running: list[Any] = []  # the pids as the journals give them
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return {"recovered": recovered, "running": running}
    for name in names:
        if not _JOURNAL_RE.fullmatch(name):
            continue
        data = _read_journal(parent / name)
        if data is None or data.get("kind") != "release" or not _valid_release_journal(data):
            continue
        if not any(e["target"] == public.name and e.get("role") == "public" for e in data["folders"]):
            continue
        if owner_alive(data.get("pid"), data.get("proc_start")):
            running.append(data.get("pid"))
            continue
        recovered += _recover(parent / name, data)
    return {"recovered": recovered, "running": running}


def _mkdirs(folder: Path, created: list[str]) -> None:
    """Create ``folder`` and its missing parents, recording each one created."""
    missing = []
    p = folder
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir()
            created.append(str(d))
        except FileExistsError:
            pass


@contextlib.contextmanager
def staged_release(public: str | os.PathLike, internal: str | os.PathLike | None = None, *,
                   overwrite: bool = False, run_id: str | None = None) -> Iterator[ReleaseStage]:
    """Stage a release's public folder (and its internal folder) and switch them in together.

    Yields a :class:`ReleaseStage` whose empty staging folders (each holding the release mark
    with ``run_id``, a fresh random id by default) the caller fills. On leaving the block the
    pair is switched in under one journal (see the module docstring): after a kill at any
    moment, the next run or ``sdckit verify`` sees the previous pair or the new pair, never a
    mix.

    * a target absent (or an empty folder): renamed into place;
    * a target an earlier release: replaced only with ``overwrite=True`` (kept until the switch);
    * a target a folder that sdckit did not write: refused (its files would be lost);
    * another sdckit run writing to the same folders: refused.

    On any exception before the switch the staging folders, the locks, the journal and the
    folders this call created are removed, and the targets are left as they were.
    """
    public = Path(os.path.abspath(public))
    internal = Path(os.path.abspath(internal)) if internal is not None else None
    targets = [("public", public)] + ([("internal", internal)] if internal is not None else [])
    for _, t in targets:
        _check_target(t, overwrite)
    run_id = run_id or new_token()
    token = new_token()
    created: list[str] = []
    journal: Path | None = None
    data: dict = {}
    locked: list[Path] = []
    committed = False
    try:
        for _, t in targets:
            _mkdirs(t.parent, created)
        order = [("internal", internal)] if internal is not None else []
        order.append(("public", public))  # the internal folder is switched first
        data = {"format": JOURNAL_FORMAT, "kind": "release", "token": token, **this_process(), "state": "staging",
                "run_id": run_id, "created": created,
                "folders": [{"role": role, "parent": str(t.parent), "target": t.name,
                             "stage": f".{_short(t.name)}.sdckit-{token}.staging",
                             "aside": f".{_short(t.name)}.sdckit-{token}.previous"} for role, t in order],
                "locks": [{"parent": str(t.parent), "name": _lock_path(t).name} for _, t in targets]}
        journal = _write_journal(public.parent, data, sync=True)
        for _, t in targets:
            locked.append(_acquire(t, token, public.parent))
        _point("locked")
        for _, t in targets:
            clean_stale(t.parent)  # what killed runs left, by their journals
            _check_target(t, overwrite)  # again, now that no other run can write there
        stages = {}
        for entry in data["folders"]:
            stage = Path(entry["parent"]) / entry["stage"]
            stage.mkdir()
            _write_mark(stage, run_id, entry["role"])
            stages[entry["role"]] = stage
        yield ReleaseStage(stages["public"], stages.get("internal"), run_id)
        for stage in stages.values():
            os.chmod(stage, 0o777 & ~_umask())
            _fsync_dir(stage)
        _point("staged")
        data["state"] = "switching"
        _write_journal(public.parent, data, sync=True)  # the commit point
        committed = True
        _point("committed")
        for entry in data["folders"]:
            _switch_one(entry, run_id)
        _fsync_dir(public.parent)
        _finish(journal, data)
    except BaseException:
        if journal is None:
            for d in reversed(created):
                with contextlib.suppress(OSError):
                    Path(d).rmdir()
            raise
        if not committed:
            _roll_back(journal, data)
        else:  # a failed switch: try to finish it; else the next run or verify rolls it forward
            with contextlib.suppress(Exception):
                for entry in data["folders"]:
                    _switch_one(entry, run_id)
                _finish(journal, data)
        raise


@contextlib.contextmanager
def staged_folder(target: str | os.PathLike, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder beside ``target``; on success switch it in as ``target``
    (one folder of :func:`staged_release`)."""
    with staged_release(target, None, overwrite=overwrite) as stage:
        yield stage.public
