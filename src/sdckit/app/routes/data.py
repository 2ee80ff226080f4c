"""The data page: the file picker, uploads, the variables and per-variable frequencies."""

from __future__ import annotations

from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...errors import InputError
from ...result import jsonable
from ..session import DATA_SUFFIXES
from .common import AppContext, api, as_int, error_response, parse_na


def safe_upload_name(name: str, suffixes: tuple[str, ...]) -> str:
    """The bare file name of an upload, or a one-line refusal (no folders, known suffixes)."""
    base = Path(name.replace("\\", "/")).name
    clean = "".join(ch for ch in base if ch.isalnum() or ch in "._- ").strip()
    if not clean or clean.startswith(".") or Path(clean).suffix.lower() not in suffixes:
        raise InputError(f"{name!r}: upload a file named *{' or *'.join(suffixes)} (no folders).")
    return clean


def _flag(value) -> bool:
    return str(value).lower() not in ("0", "false", "no", "off")


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    def get_state(request, body):
        return ctx.state_payload()

    def get_files(request, body):
        return {"folders": session.list_files()}

    def post_open(request, body):
        path = session.resolve_pick(as_int(body.get("root", -1), "root"), body.get("name", ""))
        if session.pending_spec_wants(path.name):
            session.resume_pending_spec(path)  # the file a spec imported before its data named
            return ctx.state_payload()
        session.open(path, na_values=parse_na(body.get("na_values")), delimiter=body.get("delimiter") or None,
                     honour_missing=_flag(body.get("honour_missing", True)))
        return ctx.state_payload()

    async def upload(request: Request) -> Response:
        try:
            kind = request.query_params.get("kind", "data")
            # a p-table of the cell key method is a tau-Argus text file (or a CSV)
            name = safe_upload_name(request.headers.get("x-filename", ""),
                                    (".txt", ".csv") if kind == "ptable" else DATA_SUFFIXES)
            length = request.headers.get("content-length")
            if length is not None and int(length) > ctx.max_upload:
                raise InputError(f"the file is larger than the upload limit ({ctx.max_upload // 2**20} MB)")
            chunks, size = [], 0
            async for chunk in request.stream():
                size += len(chunk)
                if size > ctx.max_upload:
                    raise InputError(f"the file is larger than the upload limit ({ctx.max_upload // 2**20} MB)")
                chunks.append(chunk)
            if size == 0:
                raise InputError(f"{name}: the upload is empty")

            def save() -> dict:
                from ...io.atomic import atomic_write_bytes

                target = session.upload_target(name)
                atomic_write_bytes(target, b"".join(chunks))
                if kind == "table":
                    return {"table_file": str(target), "name": name}
                if kind == "ptable":
                    from ...tables.ckm import load_ptable
                    pt = load_ptable(target)  # checked now: rows sum to 1, every count present
                    return {"ptable_file": str(target), "name": name, "ptable": pt.describe()}
                if session.pending_spec_info() is not None and session.pending_spec_wants(name):
                    session.resume_pending_spec(target)  # the file a spec imported before data named
                    return ctx.state_payload()
                session.open(target, na_values=parse_na(request.query_params.get("na_values")),
                             delimiter=request.query_params.get("delimiter") or None,
                             honour_missing=_flag(request.query_params.get("honour_missing", "1")))
                return ctx.state_payload()

            return JSONResponse(jsonable(await run_in_threadpool(save)))
        except Exception as exc:
            return error_response(exc, 413 if "upload limit" in str(exc) else None)

    def get_variables(request, body):
        ctx.need_data()
        return session.variables()

    def get_categories(request, body):
        """The values of one column with their counts and labels (the recode helper's rows)."""
        ctx.need_data()
        col = request.query_params.get("column", "")
        rows = session.categories(col, limit=500)
        return {"column": col, "values": [r for r in rows if not r["missing"]]}

    def get_frequencies(request, body):
        """One variable's frequency table: every value with its label and count, missing counted."""
        ctx.need_data()
        col = request.query_params.get("column", "")
        rows = session.categories(col, limit=200)
        return {"column": col, "label": session.column_label(col), "rows": rows,
                "n_records": int(len(session.frame))}

    return [Route("/api/state", api(get_state)), Route("/api/files", api(get_files)),
            Route("/api/open", api(post_open), methods=["POST"]),
            Route("/api/upload", upload, methods=["POST"]),
            Route("/api/variables", api(get_variables)), Route("/api/categories", api(get_categories)),
            Route("/api/frequencies", api(get_frequencies))]
