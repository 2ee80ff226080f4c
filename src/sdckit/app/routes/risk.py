"""The risk page: the risk panel of the original data (the page's other half is the results')."""

from __future__ import annotations

from starlette.routing import Route

from .common import AppContext, api, as_int


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    def get_risk(request, body):
        ctx.need_data()
        md = session.microdata(session.state.get("roles", {}))
        return session.risk(md, suda=request.query_params.get("suda", "1") != "0")

    def get_records(request, body):
        """The riskiest records and the records below k after the current steps (paged tables
        with their key values, by their labels), and the l-diversity of the sensitive variables:
        the report's own fragments (escaped HTML, no JSON)."""
        from ...report.fragments import below_k_records_html, ldiversity_html, riskiest_records_html

        ctx.need_data()
        pv = session.preview()
        md = pv.released
        if not md.key_vars:
            return {"empty": "Choose key variables (Roles page) to list the riskiest records."}
        page = max(1, as_int(request.query_params.get("page", 1), "page"))
        k = max(2, as_int(request.query_params.get("k", 3), "k"))
        out = {"riskiest": riskiest_records_html(md, page=page), "below_k": below_k_records_html(md, k, page=page),
               "k": k, "page": page, "after_steps": len(pv.results)}
        if md.sensitive:
            out["ldiversity"] = ldiversity_html(md, 2)
        return out

    def get_utility(request, body):
        """Original against the data after the current steps: statistics, information loss per
        variable, tabulations (the report's utility panel)."""
        from ...report.fragments import utility_panel_html

        ctx.need_data()
        pv = session.preview()
        if not pv.results:
            return {"empty": "No steps yet: the data are unchanged."}
        return {"html": utility_panel_html(pv.original, pv.released), "after_steps": len(pv.results)}

    return [Route("/api/risk", api(get_risk)), Route("/api/risk/records", api(get_records)),
            Route("/api/utility", api(get_utility))]
