"""``sdckit app``: start the workbench on 127.0.0.1 and open the browser."""

from __future__ import annotations

import ipaddress
import secrets
import socket
import sys
from importlib import resources
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import InputError

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def build(data_file: Path | None, *, host: str, port: int, token: str | None, workdir: Path | None,
          max_upload_mb: int = 512):
    """The app, its token and URL for the command's options (refuses unsafe settings)."""
    from .server import create_app
    from .session import Session

    if not is_loopback(host) and not token:
        raise InputError(f"--host {host}: serving beyond this machine needs an explicit --token "
                         "(a long random string you share only with the steward).")
    if token is not None and not token.strip():
        raise InputError("--token: give a non-empty token")
    if token is not None and len(token) < 16:
        sys.stderr.write("warning: a token shorter than 16 characters is easy to guess\n")
    roots: list[Path] = []
    if data_file is not None:
        data_file = data_file.expanduser().resolve()
        if not data_file.is_file():
            raise InputError(f"{data_file}: no such file; check the path.")
        roots.append(data_file.parent)
    work = (workdir or Path.cwd() / "sdckit-workbench").expanduser().resolve()
    roots += [work / "uploads", Path(str(resources.files("sdckit").joinpath("data")))]
    session = Session(work, roots)
    if data_file is not None:
        session.open(data_file)
    token = token or secrets.token_urlsafe(24)
    hosts = None if not is_loopback(host) else {"127.0.0.1", "localhost", "[::1]", host}
    app = create_app(session, token=token, max_upload=max_upload_mb * 2**20, allowed_hosts=hosts)
    shown = "127.0.0.1" if host in ("127.0.0.1", "localhost") else host
    url = f"http://{'[' + shown + ']' if ':' in shown else shown}:{port}/?token={token}"
    return app, token, url


def warm_up() -> None:
    """Compile the numba kernels and build the chart bundle before the first click (run in a
    background thread at start: the first risk panel and steps then answer at warm speed)."""
    try:
        from ..io.files import read_data
        from ..microdata import Microdata
        from ..registry import build_step
        from ..risk.report import measure_risk
        from .server import vega_bundle

        frame, _ = read_data(Path(str(resources.files("sdckit").joinpath("data", "uk_census2011_teaching_10k.csv"))))
        md = Microdata(frame.head(400), key_vars=["Region", "Sex", "Age", "Marital Status"])
        measure_risk(md, suda=True)
        for method, params in [("pram", {"variables": ["Marital Status"], "min_diagonal": 0.8}),
                               ("local_suppression", {"k": 2})]:
            md = build_step(method, params).apply(md, rng=0).microdata
        vega_bundle()
    except Exception:  # a warm-up failure only costs speed  # pragma: no cover
        pass


def app_command(
    data_file: Annotated[Optional[Path], typer.Argument(help="Data file to open (CSV, Parquet, SPSS, Stata, SAS).")] = None,
    port: Annotated[int, typer.Option("--port", help="Port (default: a free one).")] = 0,
    host: Annotated[str, typer.Option("--host", help="Interface to bind; other than loopback needs --token.")] = "127.0.0.1",
    token: Annotated[Optional[str], typer.Option("--token", help="Access token (default: a random one, printed in the URL).")] = None,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Do not open a browser.")] = False,
    workdir: Annotated[Optional[Path], typer.Option("--workdir", help="Folder for uploads and default release output (default ./sdckit-workbench).")] = None,
    max_upload_mb: Annotated[int, typer.Option("--max-upload-mb", help="Largest upload accepted, in MB.")] = 512,
) -> None:
    """Start the workbench: a local web app for the whole release (open, roles, risk, steps,
    undo, explore, gate, release, tables). Needs the token in the URL it prints."""
    import uvicorn

    if port == 0:
        port = free_port(host if host != "localhost" else "127.0.0.1")
    app, token, url = build(data_file, host=host, port=port, token=token, workdir=workdir,
                            max_upload_mb=max_upload_mb)
    import threading

    threading.Thread(target=warm_up, name="sdckit-app-warm-up", daemon=True).start()
    sys.stderr.write(f"sdckit workbench: {url}\n(the token in this address is the key: share it with no one; "
                     "Ctrl+C stops the server)\n")
    sys.stderr.flush()
    if not no_browser:
        import webbrowser
        threading.Timer(1.0, lambda: webbrowser.open(url)).start()
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
