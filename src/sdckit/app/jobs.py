"""Long work outside the request thread: a job runs in a worker thread, reports progress
(done out of total, with an estimated time left) and stops at the next check after cancel."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .session import one_line


class Cancelled(Exception):
    """Raised inside a job when the steward pressed cancel."""


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
