"""The page itself, its shipped assets (ES modules, CSS, the Vega bundle) and the job polls."""

from __future__ import annotations

import re
import threading
from importlib import resources

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .common import AppContext, api

#: headers of the app's own pages: no script from anywhere else, no framing by other sites, no
#: referrer (Vega-Lite compiles its expressions with Function, hence 'unsafe-eval')
PAGE_HEADERS = {
    "cache-control": "no-store",
    "content-security-policy": ("default-src 'self'; script-src 'self' 'unsafe-eval'; "
                                "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                                "connect-src 'self'; frame-src 'self'; object-src 'none'; "
                                "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    "x-frame-options": "DENY", "referrer-policy": "no-referrer", "x-content-type-options": "nosniff",
}
_STATIC = {"app.css": "text/css"}
_MODULE = re.compile(r"^[a-z][a-z_]*\.js$")
_vega_lock = threading.Lock()
_vega_bundle: str | None = None


def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script, from the installed vl-convert package."""
    global _vega_bundle
    with _vega_lock:
        if _vega_bundle is None:
            import vl_convert

            _vega_bundle = vl_convert.javascript_bundle()
        return _vega_bundle


def asset(name: str) -> str:
    """A file of the shipped ``static`` folder (``js/x.js`` for a module)."""
    return resources.files("sdckit.app").joinpath("static", *name.split("/")).read_text("utf-8")


def module_names() -> list[str]:
    """The ES modules shipped in ``static/js`` (the only ones served)."""
    folder = resources.files("sdckit.app").joinpath("static", "js")
    return sorted(p.name for p in folder.iterdir() if _MODULE.match(p.name))


def routes(ctx: AppContext) -> list[Route]:
    modules = set(module_names())

    async def index(request: Request) -> Response:
        page = asset("index.html").replace("{{csrf}}", ctx.csrf)
        return HTMLResponse(page, headers=PAGE_HEADERS)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name == "vega.js":
            text = await run_in_threadpool(vega_bundle)
            return Response(text, media_type="application/javascript",
                            headers={"cache-control": "max-age=3600"})
        if name not in _STATIC:
            return JSONResponse({"error": f"no asset {name!r}"}, status_code=404)
        return Response(asset(name), media_type=_STATIC[name], headers={"cache-control": "no-store"})

    async def module(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in modules:  # a fixed list: nothing else of the package is read
            return JSONResponse({"error": f"no module {name!r}"}, status_code=404)
        return Response(asset("js/" + name), media_type="text/javascript",
                        headers={"cache-control": "no-store", "x-content-type-options": "nosniff"})

    def get_job(request, body):
        job = ctx.jobs.get(request.path_params["job"])
        d = job.to_dict()
        if job.status == "done":
            d["result"] = job.result
        return d

    def post_cancel(request, body):
        job = ctx.jobs.get(request.path_params["job"])
        job.cancel()
        return job.to_dict()

    return [Route("/", index), Route("/static/{name}", static), Route("/static/js/{name}", module),
            Route("/api/jobs/{job}", api(get_job)),
            Route("/api/jobs/{job}/cancel", api(post_cancel), methods=["POST"])]
