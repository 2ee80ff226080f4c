"""The gate and release page: thresholds, the output folder (with the overwrite box), the
report's title, organisation and release fields, the release itself (run as a job through
:func:`sdckit.release.protect` on the exported spec) and a release's downloads (public report
as HTML and PDF, certificate)."""

from __future__ import annotations

import copy
import inspect
import tempfile
import time
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...errors import InputError
from ..jobs import Job
from ..security import check_file_name
from .common import AppContext, api, error_response

SIGNING_MISSING = ("--key: this sdckit cannot sign releases (ReleaseRun.write takes no signing_key); "
                   "start the workbench without --key, or update sdckit")


def signing_supported() -> bool:
    """Whether releases can be signed (``ReleaseRun.write`` or ``protect`` takes ``signing_key``)."""
    from ...release import ReleaseRun, protect

    return any("signing_key" in inspect.signature(f).parameters for f in (protect, ReleaseRun.write))


def run_protect(spec_path: Path, signing_key):
    """``sdckit protect`` on the spec file, signed with ``signing_key`` when one is given."""
    from ...release import ReleaseRun, protect

    if signing_key is None:
        return protect(spec_path)
    if "signing_key" in inspect.signature(protect).parameters:
        return protect(spec_path, signing_key=signing_key)
    if "signing_key" not in inspect.signature(ReleaseRun.write).parameters:
        raise InputError(SIGNING_MISSING)
    from ...io.atomic import check_writable_folder
    from ...release import Release
    from ...spec import load_spec

    spec = load_spec(spec_path)  # protect's own steps, with the key passed to write
    check_writable_folder(spec.output.directory)
    run = Release.from_spec(spec).run()
    return run, run.write(spec.output, signing_key=signing_key)


def split_files(paths: dict) -> tuple[list[str], list[str]]:
    """The names of a release's files: public (beside the data) and internal, apart."""
    public_dir = Path(paths["data"]).parent
    public, internal = [], []
    for key, p in paths.items():
        p = Path(p)
        (internal if "internal" in str(key) or p.parent != public_dir else public).append(p.name)
    return sorted(set(public)), sorted(set(internal))


#: the spec's ``[report]`` fields the release page sets
REPORT_FIELDS = ("title", "organisation", "release")


def release_pdf(session, rec: dict) -> Path:
    """The PDF of a release's public report (headless Chromium), written once into the work
    folder's ``pdf`` folder: beside the release, never inside it (the release folder holds
    exactly the files its certificate lists)."""
    from ...report.export import report_to_pdf

    folder = session.workdir / "pdf"
    folder.mkdir(parents=True, exist_ok=True)
    report = Path(rec["report"])
    target = folder / f"{Path(rec['directory']).name}-{rec.get('time', '').replace(':', '').replace(' ', '-')}-report.pdf"
    if not target.is_file() or target.stat().st_mtime < report.stat().st_mtime:
        report_to_pdf(report, target)
    return target


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    def post_gate(request, body):
        ctx.need_data()
        gate = body.get("gate", {})
        if not isinstance(gate, dict):
            raise InputError("gate must be an object of thresholds")
        gate = {k: v for k, v in gate.items() if v not in (None, "")}
        session.edit("gate " + ", ".join(f"{k}={v}" for k, v in gate.items()),
                     lambda st: st.__setitem__("gate", gate))
        return ctx.state_payload()

    def post_output(request, body):
        ctx.need_data()
        directory = body.get("directory", "")
        data = body.get("data", "")
        overwrite = body.get("overwrite")
        if not isinstance(directory, str) or not isinstance(data, str):
            raise InputError("directory and data must be text")
        if overwrite is not None and not isinstance(overwrite, bool):
            raise InputError("overwrite must be true or false")
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
            if overwrite is not None:
                if overwrite:
                    st["output"]["overwrite"] = True
                else:
                    st["output"].pop("overwrite", None)
        session.edit(f"output {d.name}", change)
        return ctx.state_payload()

    def post_release(request, body):
        ctx.need_data()
        state = copy.deepcopy(session.state)
        session.validate(state)
        session.check_paths(state, release=True)  # its files and folders checked again, as they are now
        text = session.spec_toml(state)

        def work(job: Job) -> dict:
            from ...progress import ProgressEvents

            n = len(state.get("steps", []))
            job.progress(0, n, "running the steps and the gate")
            # the library's progress events (one per step) feed the page, and each is a cancel
            # check: a cancel stops the release between two steps, before anything is written
            with tempfile.TemporaryDirectory(prefix="sdckit-app-") as tmp, \
                    ProgressEvents(lambda ev: job.on_event(ev) if ev.name == "release steps" else None, bars=False):
                spec_path = Path(tmp) / "release.toml"
                spec_path.write_text(text, "utf-8")
                session.check_paths(state, release=True)  # once more right before reading and writing
                try:
                    run, paths = run_protect(spec_path, ctx.signing_key)  # exactly what `sdckit protect` runs
                except InputError as exc:
                    if "pass --overwrite" in str(exc):  # the page has a box for it, not a flag
                        raise InputError(f"{state['output']['directory']}: a release is already there; tick "
                                         "'replace the earlier release' or choose another folder") from None
                    raise
            job.done = job.total = job.total or 1
            job.message = "written"
            public, internal = split_files(paths)
            rec = {"directory": str(Path(paths["data"]).parent), "data": str(paths["data"]),
                   "report": str(paths["report"]), "internal_report": str(paths["internal_report"]),
                   "certificate": str(paths.get("certificate", Path(paths["report"]).with_name("certificate.json"))),
                   "passed": run.verdict == "passed", "verdict": run.verdict_text,
                   "gate": [o.to_dict() for o in run.gate],
                   "files": sorted(p.name for p in paths.values()),
                   "public_files": public, "internal_files": internal,
                   "time": time.strftime("%Y-%m-%d %H:%M:%S")}
            session.releases.append(rec)
            return session.public_release(rec) | {"index": len(session.releases) - 1}

        return ctx.jobs.submit("release", work).to_dict()

    def post_report(request, body):
        """The spec's ``[report]`` title, organisation and release (the reports' and the PDF's
        title page); an empty field is left out."""
        ctx.need_data()
        fields = {}
        for key in REPORT_FIELDS:
            value = body.get(key, "")
            if not isinstance(value, str) or len(value) > 200:
                raise InputError(f"report {key}: must be text of at most 200 characters")
            if value.strip():
                fields[key] = value.strip()

        def change(st):
            rest = {k: v for k, v in (st.get("report") or {}).items() if k not in REPORT_FIELDS}
            if rest or fields:
                st["report"] = {**rest, **fields}
            else:
                st.pop("report", None)
        session.edit("report " + ", ".join(fields) if fields else "report fields cleared", change)
        return ctx.state_payload()

    async def download(request: Request) -> Response:
        """A release's public report (HTML), its PDF or its certificate, as a download."""
        i, which = request.path_params["n"], request.path_params["which"]
        if not 0 <= i < len(session.releases) or which not in ("html", "pdf", "certificate"):
            return JSONResponse({"error": "no such release file"}, status_code=404)
        rec = session.releases[i]
        folder = Path(rec["directory"]).name
        if which == "certificate":
            path, name, media = Path(rec.get("certificate", "")), f"{folder}-certificate.json", "application/json"
        else:
            path, name, media = Path(rec["report"]), f"{folder}-report.html", "text/html"
        if not path.is_file():
            return JSONResponse({"error": f"{path.name} is no longer there"}, status_code=404)
        if which == "pdf":
            try:
                path = await run_in_threadpool(release_pdf, session, rec)
            except Exception as exc:
                return error_response(exc)
            name, media = f"{folder}-report.pdf", "application/pdf"
        return Response(path.read_bytes(), media_type=media, headers={
            "content-disposition": f'attachment; filename="{name}"', "cache-control": "no-store"})

    return [Route("/api/report", api(post_report), methods=["POST"]),
            Route("/release/{n:int}/download/{which}", download),
            Route("/api/gate", api(post_gate), methods=["POST"]),
            Route("/api/output", api(post_output), methods=["POST"]),
            Route("/api/release", api(post_release), methods=["POST"])]
