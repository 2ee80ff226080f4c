"""Which process wrote a journal or a lock, and whether it still runs.

A journal or lock that sdckit writes holds the pid of the writing process and that process's
start time (:func:`this_process`). :func:`owner_alive` tells whether that process still runs: the
same pid and, where the system tells (``/proc``), the same start time, so that a reused pid is
taken for another process and a zombie for one that has ended. A journal whose owner has ended
may be recovered; a lock whose owner runs refuses a second writer.

This is the only place sdckit asks the operating system about processes; it is kept apart from
the journals and the folder switch of :mod:`sdckit.io.atomic`, which use it.
"""

from __future__ import annotations

import os

__all__ = ["owner_alive", "this_process"]


def _pid_alive(pid: int) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's live process
        return True
    except OSError:  # pragma: no cover - pid out of range
        return False
    return True


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks since boot) of a process, from /proc; None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
        rest = data[data.rindex(b")") + 2:].split()
        return rest[0].decode(), rest[19].decode()
    except (OSError, ValueError, IndexError):
        return None


def _proc_start(pid: int) -> str | None:
    st = _proc_stat(pid)
    return None if st is None else st[1]


def owner_alive(pid: object, start: object) -> bool:
    """Whether the process that wrote a journal or lock still runs.

    The same pid and, where the system tells, the same start time: a reused pid is another
    process; a zombie has ended.

    Parameters
    ----------
    pid : object
        The pid as the journal or lock gives it (anything but a positive int is not running).
    start : object
        The process's start time as :func:`this_process` recorded it (clock ticks since boot, a
        string), or None where it was not known.

    Returns
    -------
    bool
        True while that process runs.
    """
    if not isinstance(pid, int) or not _pid_alive(pid):
        return False
    st = _proc_stat(pid)
    if st is None:
        return True
    state, now = st
    if state == "Z":
        return False
    return not (isinstance(start, str) and start and start != now)


def this_process() -> dict:
    """The pid and start time of this process, as a journal or lock records its writer.

    Returns
    -------
    dict
        ``{"pid": int, "proc_start": str | None}`` (the start time is None where ``/proc`` is absent).
    """
    return {"pid": os.getpid(), "proc_start": _proc_start(os.getpid())}
