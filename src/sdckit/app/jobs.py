"""Long work outside the request thread: a job runs in a worker thread, reports progress
(done out of total, with an estimated time left) and stops at the next check after cancel.

Library work reports through :mod:`sdckit.progress`: a job subscribes with
``ProgressEvents(job.on_event)`` and every event (a release step done, an explore run done)
updates the job and is a cancel check. A cancel therefore stops a release between two steps
(before the gate and before anything is written) and a sweep between two runs; a step or run
already under way finishes first."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .session import one_line


class Cancelled(BaseException):
    """Raised inside a job when the steward pressed cancel.

    A :class:`BaseException` (as :class:`KeyboardInterrupt`): it is raised from a progress
    listener, and :mod:`sdckit.progress` drops the exceptions (``Exception``) of listeners by design (a
    broken listener must not stop the work), while a cancel must stop it. No library code
    catches it, so it unwinds to the job runner through ``finally`` and ``with`` blocks only.
    """


@dataclass
class Job:
    id: str
    kind: str
    total: int = 0
    done: int = 0
    status: str = "queued"  # queued | running | done | failed | cancelled
    message: str = ""
    error: str | None = None
    result: Any = None
    started: float = field(default_factory=time.time)
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)

    def progress(self, done: int, total: int | None = None, message: str | None = None) -> None:
        """Report progress; raises :class:`Cancelled` when cancel was asked."""
        if total is not None:
            self.total = total
        self.done = done
        if message is not None:
            self.message = message
        if self._cancel.is_set():
            raise Cancelled()

    def on_event(self, event, *, offset: int = 0, total: int | None = None) -> None:
        """A listener for :class:`sdckit.progress.ProgressEvent`: the job's progress follows the
        event (``offset`` units done before it; ``total`` overrides the event's), and a cancel
        asked since the last event raises :class:`Cancelled` here."""
        t = total if total is not None else event.total
        eta = f", about {event.eta:.0f} s left" if event.eta is not None and event.kind == "advance" else ""
        self.progress(offset + event.done, t,
                      f"{event.name}: {event.done}/{event.total if event.total is not None else '?'}{eta}")

    def cancel(self) -> None:
        self._cancel.set()

    def to_dict(self) -> dict:
        elapsed = time.time() - self.started
        eta = None
        if self.status == "running" and self.done and self.total:
            eta = elapsed / self.done * (self.total - self.done)
        return {"id": self.id, "kind": self.kind, "status": self.status, "done": self.done,
                "total": self.total, "message": self.message, "error": self.error,
                "seconds": round(elapsed, 2), "eta_seconds": None if eta is None else round(eta, 1),
                "has_result": self.result is not None}


class JobManager:
    """One worker thread (the machine's cores go to the computation itself)."""

    def __init__(self, workers: int = 1) -> None:
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sdckit-app-job")
        self.jobs: dict[str, Job] = {}
        self._ids = itertools.count(1)

    def submit(self, kind: str, fn: Callable[[Job], Any]) -> Job:
        job = Job(f"{kind}-{next(self._ids)}", kind)
        self.jobs[job.id] = job

        def run() -> None:
            job.status = "running"
            job.started = time.time()
            try:
                job.result = fn(job)
                job.status = "done"
            except Cancelled:
                job.status = "cancelled"
            except Exception as exc:  # shown as one line, never a traceback
                job.status, job.error = "failed", one_line(exc)

        self.pool.submit(run)
        return job

    def get(self, job_id: str) -> Job:
        from ..errors import InputError

        if job_id not in self.jobs:
            raise InputError(f"no job {job_id!r}")
        return self.jobs[job_id]

    def shutdown(self) -> None:
        for j in self.jobs.values():
            j.cancel()
        self.pool.shutdown(wait=False, cancel_futures=True)
