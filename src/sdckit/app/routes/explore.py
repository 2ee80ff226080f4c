"""The explore page: sweeps as background jobs; their results stay in the session."""

from __future__ import annotations

import json
import time

from starlette.routing import Route

from ...errors import InputError
from ..jobs import Job
from .common import AppContext, api
from .steps import check_step


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    def post_explore(request, body):
        ctx.need_data()
        from ...explore.search import choose
        from ...explore.sweep import Candidate, Sweep
        from ...registry import build_step

        cands = body.get("candidates") or []
        if not cands:
            raise InputError("add at least one candidate (a method and the values of one parameter)")
        try:
            threshold = float(body.get("threshold", 0.03))
            seeds = [int(s) for s in body.get("seeds", [1, 2])] or [1]
        except (TypeError, ValueError):
            raise InputError("threshold must be a number and seeds a list of whole numbers") from None
        if not isinstance(cands, list) or not all(isinstance(c, dict) for c in cands):
            raise InputError("candidates must be a list of objects (method, grid, fixed)")
        candidates = []
        for i, c in enumerate(cands):
            grid = c.get("grid") or {}
            if not isinstance(grid, dict) or not isinstance(c.get("fixed") or {}, dict):
                raise InputError(f"candidates[{i}]: grid and fixed must be objects")
            cand = Candidate(str(c.get("method")), {k: list(v) for k, v in grid.items()}, dict(c.get("fixed") or {}))
            for params in cand.settings():
                # a file parameter (a hierarchy) must lie inside the workbench's folders
                session.check_step_paths({"method": cand.method, **params}, f"candidates[{i}]", in_spec=False)
                build_step(cand.method, params, where=f"candidates[{i}]")
            candidates.append(cand)
        pv = session.preview()
        if pv.error:
            raise InputError(f"fix the steps first: {pv.error}")
        spec = session.validate(session.state)
        md = pv.original
        if not md.key_vars:
            raise InputError("explore needs key variables (Roles page)")
        request_echo = {"candidates": cands, "threshold": threshold, "seeds": seeds}

        def work(job: Job) -> dict:
            from ...progress import ProgressEvents

            sweep = Sweep(md, candidates, risk=body.get("risk", "linkage"), utility=body.get("utility", "entropy"),
                          pre_steps=list(spec.steps), seeds=seeds, n_jobs=1, cache_dir=None, progress=False)
            job.progress(0, len(sweep.tasks()), "sweeping")
            # the sweep's own progress events (runs done out of total, ETA) feed the job; each
            # is a cancel check, so a cancel stops the sweep after the run under way
            with ProgressEvents(lambda ev: job.on_event(ev) if ev.name == "explore sweep" else None, bars=False):
                res = sweep.run()
            summ = res.summary()
            prop = choose(summ, threshold)
            out = {"points": [{"method": r.method, "params": json.loads(r.params), "label": r.label,
                               "risk": r.risk, "utility": r.utility, "risk_sd": r.risk_sd,
                               "utility_sd": r.utility_sd} for r in summ.itertuples()],
                   "failures": res.failures().to_dict("records"), "threshold": threshold,
                   "original_risk": res.original_risk, "risk": sweep.risk_name, "utility": sweep.utility_name,
                   "proposal": None if prop is None else prop.to_dict()}
            # kept in the session: a reload (or another page) finds the sweep and its map
            session.sweeps.append({"request": request_echo, "result": out, "branch": session.current,
                                   "time": time.strftime("%Y-%m-%d %H:%M:%S")})
            return out

        return ctx.jobs.submit("explore", work).to_dict()

    def get_sweeps(request, body):
        ctx.need_data()
        return {"sweeps": session.sweeps}

    def post_explore_load(request, body):
        ctx.need_data()
        method = str(body.get("method"))
        params = dict(body.get("params") or {})
        step = {"method": method, **params}
        check_step(step, session)

        def change(st):
            steps = st.setdefault("steps", [])
            session.check_new_step(steps, step)
            steps.append(step)
        session.edit(f"explore: {method}", change)
        return ctx.state_payload()

    return [Route("/api/explore", api(post_explore), methods=["POST"]),
            Route("/api/explore/sweeps", api(get_sweeps)),
            Route("/api/explore/load", api(post_explore_load), methods=["POST"])]
