"""The explicitly internal page (the run seed) and a release's own reports."""

from __future__ import annotations

import html
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .common import AppContext
from .pages import PAGE_HEADERS


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    async def internal(request: Request) -> Response:
        """The explicitly internal page: the run seed and the internal reports."""
        if not session.has_data:
            body = "<p>No data is open.</p>"
        else:
            seed = session.state.get("run", {}).get("seed")
            rel = "".join(
                f"<li>release {i + 1}: {html.escape(r['directory'])} — "
                f"<a href='/release/{i}/internal'>internal report</a> (seeds, parameters); internal files: "
                f"{html.escape(', '.join(r.get('internal_files', [])) or 'none')}</li>"
                for i, r in enumerate(session.releases))
            body = (f"<p>Run seed of the current spec: <code id='seed'>{html.escape(str(seed))}</code>. "
                    "Whoever knows it can undo PRAM or swapping: never publish it.</p>"
                    f"<ul>{rel or '<li>no release yet</li>'}</ul>")
        return HTMLResponse("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>sdckit — internal"
                            "</title><link rel='stylesheet' href='/static/app.css'></head><body class='internal'>"
                            "<header><h1>sdckit workbench — INTERNAL</h1><a href='/'>back</a></header><main>"
                            "<p class='warn'>This page shows secrets. Do not share screenshots of it.</p>"
                            f"{body}</main></body></html>", headers=PAGE_HEADERS)

    async def release_file(request: Request) -> Response:
        i = request.path_params["n"]
        which = request.path_params["which"]
        if not 0 <= i < len(session.releases) or which not in ("report", "internal"):
            return JSONResponse({"error": "no such release report"}, status_code=404)
        path = Path(session.releases[i]["report" if which == "report" else "internal_report"])
        if not path.is_file():
            return JSONResponse({"error": f"{path.name} is no longer there"}, status_code=404)
        # a release's own report (self-contained, with its inline charts): framed by the app only
        return HTMLResponse(path.read_text("utf-8"), headers={
            "cache-control": "no-store", "x-frame-options": "SAMEORIGIN", "referrer-policy": "no-referrer",
            "content-security-policy": "connect-src 'none'; frame-ancestors 'self'"})

    return [Route("/internal", internal), Route("/release/{n:int}/{which}", release_file)]
