"""The tables page: the table endpoints of :mod:`sdckit.app.tables` (its ``TABLE_ROUTES`` when
that module declares them), and the one-request protection endpoint ``/api/table``."""

from __future__ import annotations

import os
from pathlib import Path

from starlette.routing import BaseRoute, Route

from ..jobs import Job
from .common import AppContext, api


def routes(ctx: AppContext) -> list[BaseRoute]:
    from .. import tables as table_module

    session = ctx.session

    def uploaded(name, what: str) -> Path:
        """A file of the uploads folder (links followed; anything else: 403 or 400)."""
        return session.uploaded_file(name, what)

    def post_table(request, body):
        from ..tables import build_table, check_table_request, protect_table

        dims = [str(d) for d in body.get("dims", [])]
        micro = None
        if body.get("table_file"):
            import pandas as pd

            p = uploaded(body["table_file"], "cell list")
            fd = session.files.open_read(p)  # no link swapped in since the check
            with os.fdopen(fd, "rb") as fh:
                frame = pd.read_csv(fh, dtype={d: str for d in dims})
            table = build_table(frame, dims, cells=True, value=body.get("value"))
        else:
            ctx.need_data()
            micro = session.frame
            table = build_table(micro, dims, response=body.get("response") or None)
        seed = session.state.get("run", {}).get("seed") if session.has_data else None
        options = body.get("options", {}) or {}
        pfile = str(uploaded(options["ptable_file"], "p-table")) if options.get("ptable_file") else None
        rules, method = body.get("rules", []), str(body.get("method", "optimal"))
        if method == "ckm":  # a look-up per cell: answered at once
            return protect_table(table, rules, method, options, seed=seed, frame=micro, ptable_file=pfile)
        check_table_request(rules, method)  # bad rules or method: refused now, in one line

        def work(job: Job) -> dict:
            # suppression (a MILP per table) can take minutes on a large table: it runs as a job,
            # so the page shows its progress and stays usable; a cancel discards the result
            job.progress(0, 1, f"protecting the {' x '.join(dims)} table ({method})")
            out = protect_table(table, rules, method, options, seed=seed, frame=micro, ptable_file=pfile)
            job.progress(1, 1, "protected")
            return out

        return ctx.jobs.submit("table", work).to_dict()

    out: list[BaseRoute] = [Route("/api/table", api(post_table), methods=["POST"])]
    extra = getattr(table_module, "TABLE_ROUTES", None)
    if extra is not None:  # the tables API (methods, protect, release), owned by app/tables.py
        out += list(extra(ctx) if callable(extra) else extra)
    return out
