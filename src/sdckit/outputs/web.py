"""The checker's queue in the workbench: the routes of the outputs page (``OUTPUT_ROUTES``).

Mount the routes in the workbench (behind its token middleware, :class:`sdckit.app.security.
TokenMiddleware`, which guards every route of the app: the session token for every request, the
CSRF token for every POST) and give the app an :class:`OutputQueue` as
``app.state.output_queue``::

    from sdckit.outputs.web import OUTPUT_ROUTES, OutputQueue
    from sdckit.report.outputs_release import release_outputs
    app.router.routes.extend(OUTPUT_ROUTES)
    app.state.output_queue = OutputQueue(results="outputs", release_root="releases", release=release_outputs)

The release function comes from the report layer (it signs the certificate), so this module,
in the methods layer, receives it instead of importing it. The page is
``static/outputs.html`` with ``static/js/outputs.js`` (shipped with the workbench); its words
come from the checks' words (:data:`sdckit.outputs.checks.CHECK_WORDS`).

Endpoints (JSON; errors are one line, ``{"error": ...}`` with status 400):

* ``GET /outputs``: the page;
* ``GET /api/outputs``: the queue (each output with its status, checks in words, the
  researcher's exception request and the checker's decision);
* ``POST /api/outputs/{id}/approve`` and ``/reject`` with ``{"reason", "checker"}``;
* ``POST /api/outputs/{id}/exception`` with ``{"reason"}`` (the researcher's request);
* ``POST /api/outputs/release`` with ``{"name", "overwrite"}``: the approved outputs into
  ``release_root/name`` (a plain folder name), signed when the queue holds a key.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..errors import InputError, SDCError
from .review import Review

__all__ = ["OUTPUT_ROUTES", "OutputQueue"]

MAX_BODY = 64 << 10
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass
class OutputQueue:
    """Where the workbench's checker works: the results folder, where releases go, how they are written.

    Attributes
    ----------
    results : path-like
        The results folder (``Session.finalise``'s or ACRO's).
    release_root : path-like
        The folder that receives each release (as ``release_root/NAME``).
    release : callable, optional
        ``release(results, folder, signing_key=..., overwrite=...) -> dict``:
        :func:`sdckit.report.outputs_release.release_outputs`.
    signing_key : optional
        The checker's private key (or its file) that signs each release's certificate.
    """

    results: str | os.PathLike
    release_root: str | os.PathLike
    release: Any = None
    signing_key: Any = None


def _queue(request: Request) -> OutputQueue:
    q = getattr(request.app.state, "output_queue", None)
    if q is None:
        raise InputError("the outputs page is not set up: start the workbench with a results folder")
    return q


async def _body(request: Request) -> dict:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise InputError("request too large")
    try:
        body = json.loads(raw or b"{}")
    except json.JSONDecodeError as exc:
        raise InputError(f"the request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise InputError("the request body must be a JSON object")
    return body


def _error(exc: Exception) -> JSONResponse:
    if isinstance(exc, SDCError):
        return JSONResponse({"error": " ".join(str(exc).split())}, status_code=400)
    return JSONResponse({"error": f"internal error {type(exc).__name__}"}, status_code=500)


async def page(request: Request) -> Response:
    html = resources.files("sdckit.app").joinpath("static", "outputs.html").read_text("utf-8")
    csrf = getattr(request.app.state, "csrf", "")
    return HTMLResponse(html.replace("{{csrf}}", str(csrf)))


async def list_outputs(request: Request) -> Response:
    try:
        q = _queue(request)
        review = await run_in_threadpool(Review, q.results)
        return JSONResponse({"results": review.path.name, "tool": (review.doc.get("tool") or {}).get("name"),
                             "outputs": review.queue(), "undecided": review.undecided(),
                             "can_release": q.release is not None})
    except Exception as exc:
        return _error(exc)


def _decide(action: str):
    async def endpoint(request: Request) -> Response:
        try:
            q = _queue(request)
            body = await _body(request)
            uid = request.path_params["output_id"]

            def work() -> dict:
                review = Review(q.results)
                if action == "exception":
                    review.request_exception(uid, body.get("reason", ""))
                    out = {"output": uid, "exception": review.results[uid]["exception"]}
                else:
                    fn = review.approve if action == "approve" else review.reject
                    out = {"output": uid, "decision": fn(uid, body.get("reason", ""), body.get("checker", ""))}
                review.save()
                return out

            return JSONResponse(await run_in_threadpool(work))
        except Exception as exc:
            return _error(exc)
    endpoint.__name__ = f"post_{action}"
    return endpoint


async def release(request: Request) -> Response:
    try:
        q = _queue(request)
        body = await _body(request)
        if q.release is None:
            raise InputError("releases are not set up on this workbench (no release function)")
        name = body.get("name", "")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise InputError(f"release name {str(name)[:40]!r}: use a plain folder name (letters, digits, . _ -)")
        target = Path(q.release_root) / name

        def work() -> dict:
            out = q.release(q.results, target, signing_key=q.signing_key, overwrite=bool(body.get("overwrite")))
            return {"folder": name, "files": out["files"], "approved": out["approved"], "rejected": out["rejected"],
                    "verdict": out["verdict"], "signed": q.signing_key is not None}

        return JSONResponse(await run_in_threadpool(work))
    except Exception as exc:
        return _error(exc)


OUTPUT_ROUTES = [
    Route("/outputs", page, methods=["GET"]),
    Route("/api/outputs", list_outputs, methods=["GET"]),
    Route("/api/outputs/release", release, methods=["POST"]),
    Route("/api/outputs/{output_id}/approve", _decide("approve"), methods=["POST"]),
    Route("/api/outputs/{output_id}/reject", _decide("reject"), methods=["POST"]),
    Route("/api/outputs/{output_id}/exception", _decide("exception"), methods=["POST"]),
]
