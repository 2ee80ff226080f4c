"""Spec export and import: the session as a TOML release spec, and back."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...errors import InputError
from ...result import jsonable
from .common import AppContext, api, error_response

#: largest spec accepted (bytes)
MAX_SPEC = 1_000_000


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    def get_export(request, body):
        ctx.need_data()
        with_seed = request.query_params.get("seed", "1") != "0"
        text = session.spec_toml(with_seed=with_seed)
        return Response(text, media_type="application/toml",
                        headers={"content-disposition": "attachment; filename=release.toml",
                                 "cache-control": "no-store"})

    async def post_import(request: Request) -> Response:
        try:
            raw = await request.body()
            if len(raw) > MAX_SPEC:
                raise InputError("the spec is larger than 1 MB")
            text = raw.decode("utf-8")
            await run_in_threadpool(session.import_toml, text)
            return JSONResponse(jsonable(ctx.state_payload()))
        except UnicodeDecodeError:
            return error_response(InputError("the spec is not UTF-8 text"))
        except Exception as exc:
            return error_response(exc)

    return [Route("/api/export", api(get_export)), Route("/api/import", post_import, methods=["POST"])]
