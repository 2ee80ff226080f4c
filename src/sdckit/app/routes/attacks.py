"""The attacks page: singling out, linkability, inference and membership inference against the
current branch's release with a control split (:mod:`sdckit.app.attack_view`), as a job with
progress and Cancel; the panels of the session's runs stay for reloads."""

from __future__ import annotations

import time

from starlette.routing import Route

from ...errors import InputError
from ..jobs import Job
from .common import AppContext, api


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session
    runs: list[dict] = ctx.extra.setdefault("attack_runs", [])

    def post_attacks(request, body):
        ctx.need_data()
        from ..attack_view import attack_request, run_attack_panel

        pv = session.preview()
        if pv.error:
            raise InputError(f"fix the steps first: {pv.error}")
        spec = session.validate(session.state)
        md = pv.original
        offered = [c for c in session.offered_columns() if c in pv.released.columns]
        req = attack_request(body, md, offered)
        branch, steps, seed = session.current, list(spec.steps), spec.seed

        def work(job: Job) -> dict:
            t0 = time.perf_counter()
            out = run_attack_panel(md, steps, seed, req, lambda d, t, m: job.progress(d, t, m))
            out["seconds"] = round(time.perf_counter() - t0, 2)
            out["branch"] = branch
            out["time"] = time.strftime("%Y-%m-%d %H:%M:%S")
            runs.append(out)  # a reload (or another page) finds the run
            return out

        return ctx.jobs.submit("attacks", work).to_dict()

    def get_attacks(request, body):
        ctx.need_data()
        from ..attack_view import ATTACK_NAMES, TIE_BREAK_WORDS

        return {"runs": runs, "attacks": ATTACK_NAMES, "tie_breaks": TIE_BREAK_WORDS, "key_vars": list(session.state.get("roles", {}).get("key_vars") or []),
                "sensitive": list(session.state.get("roles", {}).get("sensitive") or [])}

    return [Route("/api/attacks", api(post_attacks), methods=["POST"]), Route("/api/attacks/runs", api(get_attacks))]
