"""The risk page: the risk panel of the original data (the page's other half is the results')."""

from __future__ import annotations

from starlette.routing import Route

from .common import AppContext, api


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    def get_risk(request, body):
        ctx.need_data()
        md = session.microdata(session.state.get("roles", {}))
        return session.risk(md, suda=request.query_params.get("suda", "1") != "0")

    return [Route("/api/risk", api(get_risk))]
