"""The workbench's ASGI application (Starlette): JSON API, pages and shipped assets.

:func:`create_app` builds the app for a :class:`~sdckit.app.session.Session`; :func:`serve`
runs it with uvicorn on 127.0.0.1. Every failure answers ``{"error": "<one line>"}``, never a
traceback. Long work (release, explore) runs as a job (:mod:`sdckit.app.jobs`) the page polls.
"""

from __future__ import annotations

import contextlib
import copy
import html
import json
import secrets
import tempfile
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..errors import InputError, SDCError
from ..result import jsonable
from .jobs import Job, JobManager
from .security import TokenMiddleware, check_file_name
from .session import DATA_SUFFIXES, Session, one_line

#: default upload limit (bytes)
MAX_UPLOAD = 512 * 1024 * 1024
_STATIC = {"app.js": "application/javascript", "app.css": "text/css"}
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


def _asset(name: str) -> str:
    return resources.files("sdckit.app").joinpath("static", name).read_text("utf-8")


def _error(exc: BaseException, status: int | None = None) -> JSONResponse:
    if status is None:  # a path outside the workbench's folders: 403; other refusals: 400
        status = getattr(exc, "http_status", None) or (400 if isinstance(exc, SDCError) else 500)
    return JSONResponse({"error": one_line(exc)}, status_code=status)


def _int(value, what: str) -> int:
    """``value`` as an int, or a one-line 400."""
    if isinstance(value, bool):
        raise InputError(f"{what}: must be a whole number, got {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{what}: must be a whole number, got {str(value)[:40]!r}") from None


def _protect(spec_path: Path, signing_key):
    """``sdckit protect`` on the spec file, signed with ``signing_key`` when one is given."""
    import inspect

    from ..release import ReleaseRun, protect

    if signing_key is None:
        return protect(spec_path)
    if "signing_key" in inspect.signature(protect).parameters:
        return protect(spec_path, signing_key=signing_key)
    if "signing_key" not in inspect.signature(ReleaseRun.write).parameters:
        raise InputError(SIGNING_MISSING)
    from ..io.atomic import check_writable_folder
    from ..release import Release
    from ..spec import load_spec

    spec = load_spec(spec_path)  # protect's own steps, with the key passed to write
    check_writable_folder(spec.output.directory)
    run = Release.from_spec(spec).run()
    return run, run.write(spec.output, signing_key=signing_key)


SIGNING_MISSING = ("--key: this sdckit cannot sign releases (ReleaseRun.write takes no signing_key); "
                   "start the workbench without --key, or update sdckit")


def signing_supported() -> bool:
    """Whether releases can be signed (``ReleaseRun.write`` or ``protect`` takes ``signing_key``)."""
    import inspect

    from ..release import ReleaseRun, protect

    return any("signing_key" in inspect.signature(f).parameters for f in (protect, ReleaseRun.write))


def _safe_name(name: str, suffixes: tuple[str, ...]) -> str:
    base = Path(name.replace("\\", "/")).name
    clean = "".join(ch for ch in base if ch.isalnum() or ch in "._- ").strip()
    if not clean or clean.startswith(".") or Path(clean).suffix.lower() not in suffixes:
        raise InputError(f"{name!r}: upload a file named *{' or *'.join(suffixes)} (no folders).")
    return clean


def create_app(session: Session, *, token: str | None = None, max_upload: int = MAX_UPLOAD,
               allowed_hosts: set[str] | None = None, signing_key=None) -> Starlette:
    """The workbench for ``session``. ``token`` defaults to a fresh random one (``app.state.token``);
    with ``signing_key`` (the steward's private key, loaded, or its file) every release is signed."""
    token = token or secrets.token_urlsafe(24)
    csrf = secrets.token_urlsafe(24)
    jobs = JobManager()

    # ------------------------------------------------------------------ helpers
    def api(fn):
        """A JSON endpoint: body parsed, work done in the thread pool, one-line errors."""
        async def endpoint(request: Request) -> Response:
            try:
                body = {}
                if request.method == "POST" and request.headers.get("content-type", "").startswith("application/json"):
                    raw = await request.body()
                    if len(raw) > 10_000_000:
                        raise InputError("request too large")
                    body = json.loads(raw or b"{}")
                    if not isinstance(body, dict):
                        raise InputError("the request body must be a JSON object")
                out = await run_in_threadpool(fn, request, body)
                if isinstance(out, Response):
                    return out
                return JSONResponse(jsonable(out))
            except json.JSONDecodeError as exc:
                return _error(InputError(f"the request body is not JSON: {exc}"))
            except Exception as exc:
                return _error(exc)
        endpoint.__name__ = fn.__name__
        return endpoint

    def need_data() -> None:
        if not session.has_data:
            raise InputError("no data is open: open a data file first (Data page).")

    def public_state() -> dict:
        st = copy.deepcopy(session.state)
        st.pop("run", None)  # the seed is a secret: internal page only
        return st

    def state_payload() -> dict:
        if not session.has_data:
            return {"has_data": False, "files": session.list_files()}
        return {"has_data": True, "spec": public_state(), "history": session.history(),
                "n_records": int(len(session.frame)), "columns": [str(c) for c in session.frame.columns],
                "releases": [{k: v for k, v in r.items() if k != "internal_report"} for r in session.releases]}

    # ------------------------------------------------------------------ pages
    async def index(request: Request) -> Response:
        page = _asset("index.html").replace("{{csrf}}", csrf)
        return HTMLResponse(page, headers=PAGE_HEADERS)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name == "vega.js":
            text = await run_in_threadpool(vega_bundle)
            return Response(text, media_type="application/javascript",
                            headers={"cache-control": "max-age=3600"})
        if name not in _STATIC:
            return JSONResponse({"error": f"no asset {name!r}"}, status_code=404)
        return Response(_asset(name), media_type=_STATIC[name], headers={"cache-control": "no-store"})

    async def internal(request: Request) -> Response:
        """The explicitly internal page: the run seed and the internal reports."""
        if not session.has_data:
            body = "<p>No data is open.</p>"
        else:
            seed = session.state.get("run", {}).get("seed")
            rel = "".join(
                f"<li>release {i + 1}: {html.escape(r['directory'])} — "
                f"<a href='/release/{i}/internal'>internal report</a> (seeds, parameters)</li>"
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

    # ------------------------------------------------------------------ data
    def get_state(request, body):
        return state_payload()

    def get_files(request, body):
        return {"folders": session.list_files()}

    def post_open(request, body):
        path = session.resolve_pick(_int(body.get("root", -1), "root"), body.get("name", ""))
        session.open(path, na_values=_na(body.get("na_values")), delimiter=body.get("delimiter") or None)
        return state_payload()

    async def upload(request: Request) -> Response:
        try:
            kind = request.query_params.get("kind", "data")
            # a p-table of the cell key method is a tau-Argus text file (or a CSV)
            name = _safe_name(request.headers.get("x-filename", ""),
                              (".txt", ".csv") if kind == "ptable" else DATA_SUFFIXES)
            length = request.headers.get("content-length")
            if length is not None and int(length) > max_upload:
                raise InputError(f"the file is larger than the upload limit ({max_upload // 2**20} MB)")
            chunks, size = [], 0
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_upload:
                    raise InputError(f"the file is larger than the upload limit ({max_upload // 2**20} MB)")
                chunks.append(chunk)
            if size == 0:
                raise InputError(f"{name}: the upload is empty")

            def save() -> dict:
                from ..io.atomic import atomic_write_bytes

                target = session.upload_target(name)
                atomic_write_bytes(target, b"".join(chunks))
                if kind == "table":
                    return {"table_file": str(target), "name": name}
                if kind == "ptable":
                    from ..tables.ckm import load_ptable
                    pt = load_ptable(target)  # checked now: rows sum to 1, every count present
                    return {"ptable_file": str(target), "name": name, "ptable": pt.describe()}
                session.open(target, na_values=_na(request.query_params.get("na_values")),
                             delimiter=request.query_params.get("delimiter") or None)
                return state_payload()

            return JSONResponse(jsonable(await run_in_threadpool(save)))
        except Exception as exc:
            return _error(exc, 413 if "upload limit" in str(exc) else None)

    def get_variables(request, body):
        need_data()
        return session.variables()

    def get_suggestions(request, body):
        need_data()
        return session.suggestions()

    def get_categories(request, body):
        """The values of one column with their counts and labels (the recode helper's rows)."""
        need_data()
        col = request.query_params.get("column", "")
        if col not in session.frame.columns:
            raise InputError(f"column {col!r} is not in the data")
        counts = session.frame[col].value_counts(dropna=False)
        if len(counts) > 500:
            raise InputError(f"{col!r} has {len(counts):,} values: too many to recode one by one; use breaks")
        labels = (session._meta.value_labels.get(col, {}) if session._meta is not None else {})
        rows = []
        for value, n in counts.sort_index().items():
            v = value.item() if hasattr(value, "item") else value
            if isinstance(v, float) and v != v:
                continue
            rows.append({"value": v, "records": int(n), "label": labels.get(value)})
        return {"column": col, "values": rows}

    def post_roles(request, body):
        need_data()
        roles = body.get("roles", {})
        if not isinstance(roles, dict):
            raise InputError("roles must be an object")
        clean: dict[str, Any] = {}
        for k, v in roles.items():
            if k in ("weight", "household"):
                if v:
                    clean[k] = str(v)
            elif k in ("key_vars", "numeric_vars", "strata", "sensitive"):
                if v:
                    clean[k] = [str(x) for x in v]
            else:
                raise InputError(f"unknown role {k!r}")
        session.edit("roles: " + ", ".join(clean.get("key_vars", [])[:4]),
                     lambda st: st.__setitem__("roles", clean))
        return state_payload()

    def get_risk(request, body):
        need_data()
        md = session.microdata(session.state.get("roles", {}))
        return session.risk(md, suda=request.query_params.get("suda", "1") != "0")

    # ------------------------------------------------------------------ steps
    def get_methods(request, body):
        from ..params import schema
        from ..registry import known_gate_checks, known_steps, gate_check, step_class
        from ..gate import NoThreshold
        from ..params import step_params

        # each threshold's declaration (label, unit, rule) for the form; "none" states why a
        # release has no risk threshold (its verdict then says NOT CHECKED)
        checks = [{"name": n, "description": gate_check(n).description, "risk": gate_check(n).counts_as_risk,
                   "params": [p.to_dict() for p in step_params(gate_check(n).cls)]} for n in known_gate_checks()]
        checks.append({"name": "none", "description": "no risk threshold, on purpose: say why (the verdict "
                       "then says NOT CHECKED)", "risk": False,
                       "params": [p.to_dict() for p in step_params(NoThreshold)]})
        return {"methods": [schema(step_class(n)) for n in known_steps()], "gate_checks": checks}

    def post_steps(request, body):
        need_data()
        action = body.get("action")
        i = body.get("index")
        step = body.get("step")

        def change(st: dict) -> None:
            steps = st.setdefault("steps", [])
            if action == "add":
                _check_step(step, session)
                steps.append(step)
            elif action == "update":
                _check_step(step, session)
                steps[_index(i, steps)] = step
            elif action == "delete":
                steps.pop(_index(i, steps))
            elif action in ("up", "down"):
                j = _index(i, steps)
                k = j - 1 if action == "up" else j + 1
                if 0 <= k < len(steps):
                    steps[j], steps[k] = steps[k], steps[j]
            else:
                raise InputError(f"unknown step action {action!r}")

        label = {"add": "add", "update": "change", "delete": "remove", "up": "move", "down": "move"}.get(action, "?")
        what = (step or {}).get("method") if step else f"step {int(i) + 1 if isinstance(i, int) else '?'}"
        session.edit(f"{label} {what}", change)
        return state_payload()

    def get_results(request, body):
        need_data()
        from .figures import step_view
        pv = session.preview()
        views = []
        for i, res in enumerate(pv.results):
            after = pv.datas[i + 1]
            risk = session.risk(after, suda=False, linkage=False) if after.key_vars else None
            views.append(step_view(i, res, pv.datas[i], after, risk=risk))
        final = session.risk(pv.released, original=pv.original, results=pv.results) if pv.released.key_vars else None
        # the verdict in words: never "passed" without a risk threshold ("NOT CHECKED: why")
        from types import SimpleNamespace

        from ..report.narrative import verdict_words

        none = (session.state.get("gate") or {}).get("none")
        kind, words = verdict_words(SimpleNamespace(gate=pv.gate, not_checked=none))
        if not pv.gate and none is None:
            kind, words = None, None
        return {"steps": views, "gate": pv.gate, "passed": {"passed": True, "failed": False}.get(kind),
                "verdict_kind": kind, "verdict": words,
                "error": pv.error, "failed_step": pv.failed_step, "risk_after": final,
                "n_steps": len(session.state.get("steps", []))}

    def post_history(request, body):
        need_data()
        action = body.get("action")
        if action == "undo":
            session.undo()
        elif action == "redo":
            session.redo()
        elif action == "goto":
            session.goto(_int(body.get("pos", -1), "pos"))
        elif action == "branch":
            session.new_branch(str(body.get("name", "")))
        elif action == "switch":
            session.switch(str(body.get("name", "")))
        else:
            raise InputError(f"unknown history action {action!r}")
        return state_payload()

    def get_compare(request, body):
        need_data()
        a, b = request.query_params.get("a"), request.query_params.get("b")
        out = {}
        for name in (a, b):
            if name not in session.branches:
                raise InputError(f"no branch named {name!r}")
            st = session.branches[name].state
            pv = session.preview(st)
            from ..explore.measures import entropy_utility
            risk = session.risk(pv.released, suda=False, original=pv.original, results=pv.results) if pv.released.key_vars else None
            out[name] = {"steps": [s.get("method") for s in st.get("steps", [])], "error": pv.error,
                         "gate": pv.gate, "risk": risk,
                         "utility_entropy": (entropy_utility(pv.original, pv.released)
                                             if pv.original.key_vars and pv.error is None else None)}
        return {"a": a, "b": b, "results": out}

    # ------------------------------------------------------------------ gate, release, spec
    def post_gate(request, body):
        need_data()
        gate = body.get("gate", {})
        if not isinstance(gate, dict):
            raise InputError("gate must be an object of thresholds")
        gate = {k: v for k, v in gate.items() if v not in (None, "")}
        session.edit("gate " + ", ".join(f"{k}={v}" for k, v in gate.items()),
                     lambda st: st.__setitem__("gate", gate))
        return state_payload()

    def post_output(request, body):
        need_data()
        directory = body.get("directory", "")
        data = body.get("data", "")
        if not isinstance(directory, str) or not isinstance(data, str):
            raise InputError("directory and data must be text")
        directory, data = directory.strip(), data.strip()
        if not directory:
            raise InputError("give the folder to write the release to")
        # only inside the output root (links followed before the check): else 403
        d = session.files.check_write(directory, base=session.workdir, what="the output folder")
        if data:
            check_file_name(data, "the data file name")

        def change(st):
            st["output"] = {**st.get("output", {}), "directory": str(d)}
            if data:
                st["output"]["data"] = data
        session.edit(f"output {d.name}", change)
        return state_payload()

    def post_release(request, body):
        need_data()
        state = copy.deepcopy(session.state)
        session.validate(state)
        session.check_paths(state, release=True)  # its files and folders checked again, as they are now
        text = session.spec_toml(state)

        def work(job: Job) -> dict:
            from ..progress import ProgressEvents

            n = len(state.get("steps", []))
            job.progress(0, n, "running the steps and the gate")
            # the library's progress events (one per step) feed the page, and each is a cancel
            # check: a cancel stops the release between two steps, before anything is written
            with tempfile.TemporaryDirectory(prefix="sdckit-app-") as tmp, \
                    ProgressEvents(lambda ev: job.on_event(ev) if ev.name == "release steps" else None, bars=False):
                spec_path = Path(tmp) / "release.toml"
                spec_path.write_text(text, "utf-8")
                session.check_paths(state, release=True)  # once more right before reading and writing
                run, paths = _protect(spec_path, signing_key)  # exactly what `sdckit protect` runs
            job.done = job.total = job.total or 1
            job.message = "written"
            rec = {"directory": str(Path(paths["data"]).parent), "data": str(paths["data"]),
                   "report": str(paths["report"]), "internal_report": str(paths["internal_report"]),
                   "passed": run.verdict == "passed", "verdict": run.verdict_text,
                   "gate": [o.to_dict() for o in run.gate],
                   "files": sorted(p.name for p in paths.values()), "time": time.strftime("%Y-%m-%d %H:%M:%S")}
            session.releases.append(rec)
            return {k: v for k, v in rec.items() if k != "internal_report"} | {"index": len(session.releases) - 1}

        return jobs.submit("release", work).to_dict()

    def get_export(request, body):
        need_data()
        with_seed = request.query_params.get("seed", "1") != "0"
        text = session.spec_toml(with_seed=with_seed)
        return Response(text, media_type="application/toml",
                        headers={"content-disposition": "attachment; filename=release.toml",
                                 "cache-control": "no-store"})

    async def post_import(request: Request) -> Response:
        try:
            raw = await request.body()
            if len(raw) > 1_000_000:
                raise InputError("the spec is larger than 1 MB")
            text = raw.decode("utf-8")
            await run_in_threadpool(session.import_toml, text)
            return JSONResponse(jsonable(state_payload()))
        except UnicodeDecodeError:
            return _error(InputError("the spec is not UTF-8 text"))
        except Exception as exc:
            return _error(exc)

    # ------------------------------------------------------------------ explore
    def post_explore(request, body):
        need_data()
        from ..explore.search import choose
        from ..explore.sweep import Candidate, Sweep
        from ..registry import build_step

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

        def work(job: Job) -> dict:
            from ..progress import ProgressEvents

            sweep = Sweep(md, candidates, risk=body.get("risk", "linkage"), utility=body.get("utility", "entropy"),
                          pre_steps=list(spec.steps), seeds=seeds, n_jobs=1, cache_dir=None, progress=False)
            job.progress(0, len(sweep.tasks()), "sweeping")
            # the sweep's own progress events (runs done out of total, ETA) feed the job; each
            # is a cancel check, so a cancel stops the sweep after the run under way
            with ProgressEvents(lambda ev: job.on_event(ev) if ev.name == "explore sweep" else None, bars=False):
                res = sweep.run()
            summ = res.summary()
            prop = choose(summ, threshold)
            return {"points": [{"method": r.method, "params": json.loads(r.params), "label": r.label,
                                "risk": r.risk, "utility": r.utility, "risk_sd": r.risk_sd,
                                "utility_sd": r.utility_sd} for r in summ.itertuples()],
                    "failures": res.failures().to_dict("records"), "threshold": threshold,
                    "original_risk": res.original_risk, "risk": sweep.risk_name, "utility": sweep.utility_name,
                    "proposal": None if prop is None else prop.to_dict()}

        return jobs.submit("explore", work).to_dict()

    def post_explore_load(request, body):
        need_data()
        method = str(body.get("method"))
        params = dict(body.get("params") or {})
        step = {"method": method, **params}
        _check_step(step, session)
        session.edit(f"explore: {method}", lambda st: st.setdefault("steps", []).append(step))
        return state_payload()

    def get_job(request, body):
        job = jobs.get(request.path_params["job"])
        d = job.to_dict()
        if job.status == "done":
            d["result"] = job.result
        return d

    def post_cancel(request, body):
        job = jobs.get(request.path_params["job"])
        job.cancel()
        return job.to_dict()

    # ------------------------------------------------------------------ tables
    def uploaded(name, what: str) -> Path:
        """A file of the uploads folder (links followed; anything else: 403 or 400)."""
        return session.uploaded_file(name, what)

    def post_table(request, body):
        from .tables import build_table, check_table_request, protect_table

        dims = [str(d) for d in body.get("dims", [])]
        micro = None
        if body.get("table_file"):
            p = uploaded(body["table_file"], "cell list")
            import os

            import pandas as pd
            fd = session.files.open_read(p)  # no link swapped in since the check
            with os.fdopen(fd, "rb") as fh:
                frame = pd.read_csv(fh, dtype={d: str for d in dims})
            table = build_table(frame, dims, cells=True, value=body.get("value"))
        else:
            need_data()
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

        return jobs.submit("table", work).to_dict()

    routes = [
        Route("/", index), Route("/internal", internal),
        Route("/static/{name}", static),
        Route("/release/{n:int}/{which}", release_file),
        Route("/api/state", api(get_state)), Route("/api/files", api(get_files)),
        Route("/api/open", api(post_open), methods=["POST"]),
        Route("/api/upload", upload, methods=["POST"]),
        Route("/api/variables", api(get_variables)), Route("/api/suggestions", api(get_suggestions)),
        Route("/api/roles", api(post_roles), methods=["POST"]),
        Route("/api/categories", api(get_categories)),
        Route("/api/risk", api(get_risk)), Route("/api/methods", api(get_methods)),
        Route("/api/steps", api(post_steps), methods=["POST"]),
        Route("/api/results", api(get_results)),
        Route("/api/history", api(post_history), methods=["POST"]),
        Route("/api/compare", api(get_compare)),
        Route("/api/gate", api(post_gate), methods=["POST"]),
        Route("/api/output", api(post_output), methods=["POST"]),
        Route("/api/release", api(post_release), methods=["POST"]),
        Route("/api/export", api(get_export)),
        Route("/api/import", post_import, methods=["POST"]),
        Route("/api/explore", api(post_explore), methods=["POST"]),
        Route("/api/explore/load", api(post_explore_load), methods=["POST"]),
        Route("/api/jobs/{job}", api(get_job)),
        Route("/api/jobs/{job}/cancel", api(post_cancel), methods=["POST"]),
        Route("/api/table", api(post_table), methods=["POST"]),
    ]

    async def not_found(request: Request, exc) -> Response:
        return JSONResponse({"error": f"{request.url.path}: not found"}, status_code=getattr(exc, "status_code", 404))

    async def server_error(request: Request, exc) -> Response:
        return _error(exc, 500)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        jobs.shutdown()

    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found, 500: server_error},
                    lifespan=lifespan)
    app.add_middleware(TokenMiddleware, token=token, csrf=csrf, allowed_hosts=allowed_hosts)
    app.state.token = token
    app.state.csrf = csrf
    app.state.session = session
    app.state.jobs = jobs
    return app


def _na(value) -> list | None:
    if value in (None, "", []):
        return None
    if isinstance(value, str):
        out = []
        for v in value.split(","):
            v = v.strip()
            if not v:
                continue
            try:
                out.append(int(v))
            except ValueError:
                try:
                    out.append(float(v))
                except ValueError:
                    out.append(v)
        return out or None
    return list(value)


def _index(i, items: list) -> int:
    if not isinstance(i, int) or not 0 <= i < len(items):
        raise InputError(f"there is no step {i!r}")
    return i


def _check_step(step, session: Session | None = None) -> None:
    from ..registry import build_step

    if not isinstance(step, dict) or not isinstance(step.get("method"), str):
        raise InputError("a step needs a method")
    if session is not None:  # its file parameters inside the workbench's folders, or 403
        session.check_step_paths(step, "step")
    build_step(step["method"], {k: v for k, v in step.items() if k != "method"}, where="step")
