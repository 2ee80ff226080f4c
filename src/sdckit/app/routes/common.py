"""What every page's router shares: the app context, the JSON endpoint wrapper, one-line errors.

Each module of :mod:`sdckit.app.routes` holds the routes of one page and exposes
``routes(ctx) -> list[Route]``; :func:`sdckit.app.server.create_app` mounts them all.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ...errors import InputError, SDCError
from ...result import jsonable
from ..jobs import JobManager
from ..session import Session, one_line

#: largest JSON request body (bytes)
MAX_JSON = 10_000_000


@dataclass
class AppContext:
    """The state the routers share: the session, the jobs, the tokens and the options."""

    session: Session
    jobs: JobManager
    token: str
    csrf: str
    max_upload: int
    signing_key: Any = None
    extra: dict = field(default_factory=dict)

    def need_data(self) -> None:
        """Refuse, in one line, a request that needs open data when none is."""
        if not self.session.has_data:
            raise InputError("no data is open: open a data file first (Data page).")

    def public_state(self) -> dict:
        """The current spec without its run seed (a secret: internal page only)."""
        st = copy.deepcopy(self.session.state)
        st.pop("run", None)
        return st

    def state_payload(self) -> dict:
        """Everything the pages derive their forms and buttons from, after every action."""
        s = self.session
        if not s.has_data:
            return {"has_data": False, "files": s.list_files(), "pending_spec": s.pending_spec_info()}
        return {"has_data": True, "spec": self.public_state(), "history": s.history(),
                "n_records": int(len(s.frame)), "columns": [str(c) for c in s.frame.columns],
                "offered_columns": s.offered_columns(), "present_steps": s.present_steps(),
                "warnings": s.warnings(), "sweeps": len(s.sweeps), "pending_spec": s.pending_spec_info(),
                "releases": [s.public_release(r) for r in s.releases]}


def error_response(exc: BaseException, status: int | None = None) -> JSONResponse:
    """``{"error": "<one line>"}``: 403 for a path outside the folders, 400 for a refusal."""
    if status is None:
        status = getattr(exc, "http_status", None) or (400 if isinstance(exc, SDCError) else 500)
    return JSONResponse({"error": one_line(exc)}, status_code=status)


def as_int(value, what: str) -> int:
    """``value`` as an int, or a one-line 400."""
    if isinstance(value, bool):
        raise InputError(f"{what}: must be a whole number, got {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{what}: must be a whole number, got {str(value)[:40]!r}") from None


def api(fn):
    """A JSON endpoint: body parsed, work done in the thread pool, one-line errors."""
    async def endpoint(request: Request) -> Response:
        try:
            body = {}
            if request.method == "POST" and request.headers.get("content-type", "").startswith("application/json"):
                raw = await request.body()
                if len(raw) > MAX_JSON:
                    raise InputError("request too large")
                body = json.loads(raw or b"{}")
                if not isinstance(body, dict):
                    raise InputError("the request body must be a JSON object")
            out = await run_in_threadpool(fn, request, body)
            if isinstance(out, Response):
                return out
            return JSONResponse(jsonable(out))
        except json.JSONDecodeError as exc:
            return error_response(InputError(f"the request body is not JSON: {exc}"))
        except Exception as exc:
            return error_response(exc)
    endpoint.__name__ = fn.__name__
    return endpoint


def parse_na(value) -> list | None:
    """Codes meaning missing from a form ("-9, -8" or a list) as a list, or None."""
    if value in (None, "", []):
        return None
    if isinstance(value, str):
        out: list = []
        for v in value.split(","):
            v = v.strip()
            if not v:
                continue
            try:
                out.append(int(v))
            except ValueError:
                try:
                    out.append(float(v))
                except ValueError:
                    out.append(v)
        return out or None
    return list(value)
