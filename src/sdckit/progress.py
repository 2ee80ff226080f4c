"""Progress of long work: events for any listener, and rich progress bars on a terminal.

Long work (a release step, an explore sweep, a table protection) reports through
:func:`task`: it emits :class:`ProgressEvent` objects to every listener registered in the
current context (a :class:`contextvars.ContextVar`, so concurrent jobs of the workbench each
see only their own events) and, when standard error is a terminal, draws a rich progress
bar there. Nothing is ever written to standard output, so ``--json`` output stays one
document, and nothing is drawn when standard error is not a TTY (a log file, a pipe, a test).

Examples
--------
>>> from sdckit.progress import ProgressEvents, task
>>> seen = []
>>> with ProgressEvents(seen.append):
...     with task("sweep", total=2) as t:
...         t.advance()
...         t.advance()
>>> [(e.kind, e.done, e.total) for e in seen]
[('start', 0, 2), ('advance', 1, 2), ('advance', 2, 2), ('finish', 2, 2)]
"""

from __future__ import annotations

import contextvars
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

__all__ = ["ProgressEvent", "ProgressEvents", "ProgressTask", "task", "bars_enabled"]

#: work shorter than this (seconds) draws no bar (its events are still sent to listeners)
BAR_AFTER_SECONDS = 2.0


@dataclass(frozen=True)
class ProgressEvent:
    """One change of a task's progress.

    Attributes
    ----------
    kind : str
        ``"start"``, ``"advance"`` or ``"finish"``.
    name : str
        What is being done (``"pram"``, ``"explore sweep"``, ``"table protection"``).
    done, total : int
        Units done and the number expected (``total`` is None when unknown).
    elapsed : float
        Seconds since the task started.
    eta : float or None
        Estimated seconds left (linear in the units done), None before the first unit.
    """

    kind: str
    name: str
    done: int
    total: int | None
    elapsed: float
    eta: float | None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "name": self.name, "done": self.done, "total": self.total,
                "elapsed": round(self.elapsed, 3), "eta": None if self.eta is None else round(self.eta, 3)}


_LISTENERS: contextvars.ContextVar[tuple[Callable[[ProgressEvent], None], ...]] = \
    contextvars.ContextVar("sdckit_progress_listeners", default=())
_BARS: contextvars.ContextVar[bool | None] = contextvars.ContextVar("sdckit_progress_bars", default=None)


class ProgressEvents:
    """Context manager subscribing ``listener`` to the progress events of the current context.

    Listeners nest; each is called with every :class:`ProgressEvent` emitted inside the
    ``with`` block (and in threads started with a copy of this context). A listener that
    raises is dropped from the call, never stops the work.
    """

    def __init__(self, listener: Callable[[ProgressEvent], None], *, bars: bool | None = None) -> None:
        self.listener = listener
        self.bars = bars
        self._tokens: list = []

    def __enter__(self) -> ProgressEvents:
        self._tokens.append(_LISTENERS.set((*_LISTENERS.get(), self.listener)))
        if self.bars is not None:
            self._tokens.append(_BARS.set(self.bars))
        return self

    def __exit__(self, *exc: object) -> None:
        for token in reversed(self._tokens):
            token.var.reset(token)
        self._tokens.clear()


def bars_enabled() -> bool:
    """Whether progress bars are drawn: on a terminal only (standard error a TTY), unless a
    :class:`ProgressEvents` block or :func:`disable_bars` says otherwise."""
    forced = _BARS.get()
    if forced is not None:
        return forced
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


@contextmanager
def disable_bars() -> Iterator[None]:
    """No bars inside the block (events still reach listeners)."""
    token = _BARS.set(False)
    try:
        yield
    finally:
        _BARS.reset(token)


class ProgressTask:
    """A running task: call :meth:`advance` per unit done. Made by :func:`task` or :func:`start`.

    On a terminal a bar appears once the task has run ``bar_after`` seconds (a timer, so a
    single long unit shows one too) and disappears when it finishes.
    """

    def __init__(self, name: str, total: int | None, bar_after: float) -> None:
        self.name, self.total, self.done = name, total, 0
        self._t0 = time.perf_counter()
        self._bars = bars_enabled()
        self._progress: Progress | None = None
        self._bar: TaskID | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._timer: threading.Timer | None = None
        if self._bars:
            self._timer = threading.Timer(bar_after, self._show)
            self._timer.daemon = True
            self._timer.start()

    def _emit(self, kind: str) -> None:
        elapsed = time.perf_counter() - self._t0
        eta = None
        if self.total and self.done:
            eta = elapsed / self.done * max(self.total - self.done, 0)
        event = ProgressEvent(kind, self.name, self.done, self.total, elapsed, eta)
        for listener in _LISTENERS.get():
            try:
                listener(event)
            except Exception:  # a broken listener must not stop the work
                pass
        with self._lock:
            if self._progress is not None and self._bar is not None and kind == "advance":
                self._progress.update(self._bar, completed=self.done)

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        with self._lock:
            if self._closed or self._progress is not None:
                return
            cols = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn()]
            if self.total:
                cols += [MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
            else:
                cols += [TimeElapsedColumn()]
            self._progress = Progress(*cols, console=Console(stderr=True), transient=True)
            self._progress.start()
            self._bar = self._progress.add_task(self.name, total=self.total, completed=self.done)

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        self.done += n
        self._emit("advance")

    def close(self) -> None:
        """Finish the task: the last event, and the bar (if any) goes away."""
        if self._closed:
            return
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
        self._emit("finish")
        with self._lock:
            if self._progress is not None:
                self._progress.stop()
                self._progress = None


@contextmanager
def task(name: str, total: int | None = None, *, bar_after: float = BAR_AFTER_SECONDS) -> Iterator[ProgressTask]:
    """Report the progress of one piece of work (see the module docstring).

    Parameters
    ----------
    name : str
        Shown beside the bar and sent in every event.
    total : int, optional
        Units expected (runs of a sweep, steps of a release); None when unknown.
    bar_after : float
        A bar appears only once the work has run (or is expected to run) this many seconds.
    """
    t = start(name, total, bar_after=bar_after)
    try:
        yield t
    finally:
        t.close()


def start(name: str, total: int | None = None, *, bar_after: float = BAR_AFTER_SECONDS) -> ProgressTask:
    """Start a task without a ``with`` block; call ``advance()`` per unit and ``close()`` at the end."""
    t = ProgressTask(name, total, bar_after)
    t._emit("start")
    return t
