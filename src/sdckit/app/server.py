"""The workbench's ASGI application (Starlette): JSON API, pages and shipped assets.

:func:`create_app` builds the app for a :class:`~sdckit.app.session.Session` from one router per
page (:mod:`sdckit.app.routes`); :func:`serve` in :mod:`sdckit.app.cli` runs it with uvicorn on
127.0.0.1. Every failure answers ``{"error": "<one line>"}``, never a traceback. Long work
(release, explore, table protection) runs as a job (:mod:`sdckit.app.jobs`) the page polls.
"""

from __future__ import annotations

import contextlib
import secrets

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .jobs import JobManager
from .routes import AppContext, all_routes
from .routes.common import error_response
from .routes.pages import PAGE_HEADERS, vega_bundle
from .routes.release import SIGNING_MISSING, signing_supported
from .security import TokenMiddleware
from .session import Session

#: default upload limit (bytes)
MAX_UPLOAD = 512 * 1024 * 1024

__all__ = ["MAX_UPLOAD", "PAGE_HEADERS", "SIGNING_MISSING", "create_app", "signing_supported", "vega_bundle"]


def create_app(session: Session, *, token: str | None = None, max_upload: int = MAX_UPLOAD,
               allowed_hosts: set[str] | None = None, signing_key=None, outputs=None) -> Starlette:
    """The workbench for ``session``. ``token`` defaults to a fresh random one (``app.state.token``);
    with ``signing_key`` (the steward's private key, loaded, or its file) every release is signed.
    ``outputs`` (a results folder of researchers' outputs, :class:`sdckit.outputs.web.OutputQueue`
    or a path) opens the output checker's queue at ``/outputs``; its releases go into the session's
    output root and are signed with the same key."""
    from ..outputs.web import OUTPUT_ROUTES, OutputQueue
    ctx = AppContext(session=session, jobs=JobManager(), token=token or secrets.token_urlsafe(24),
                     csrf=secrets.token_urlsafe(24), max_upload=max_upload, signing_key=signing_key)

    async def not_found(request: Request, exc) -> Response:
        return JSONResponse({"error": f"{request.url.path}: not found"}, status_code=getattr(exc, "status_code", 404))

    async def server_error(request: Request, exc) -> Response:
        return error_response(exc, 500)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        ctx.jobs.shutdown()

    app = Starlette(routes=[*all_routes(ctx), *OUTPUT_ROUTES], exception_handlers={404: not_found, 405: not_found, 500: server_error},
                    lifespan=lifespan)
    app.add_middleware(TokenMiddleware, token=ctx.token, csrf=ctx.csrf, allowed_hosts=allowed_hosts)
    app.state.token = ctx.token
    app.state.csrf = ctx.csrf
    app.state.session = session
    app.state.jobs = ctx.jobs
    if outputs is not None and not isinstance(outputs, OutputQueue):
        from ..report.outputs_release import release_outputs

        outputs = OutputQueue(results=outputs, release_root=session.files.output_root, release=release_outputs,
                              signing_key=signing_key)
    app.state.output_queue = outputs
    return app
