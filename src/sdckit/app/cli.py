"""``sdckit app``: start the workbench on 127.0.0.1 and open the browser.

The port is bound before the address is printed and the bound socket is handed to uvicorn,
so a port in use is one line and exit 2, never an address of somebody else's server.
"""

from __future__ import annotations

import errno
import ipaddress
import secrets
import socket
import sys
from importlib import resources
from pathlib import Path
from typing import Annotated

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


def bind_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (port 0: a free one), ready for uvicorn; a port in use is
    one :class:`InputError` line (the command exits 2)."""
    bind_host = "127.0.0.1" if host == "localhost" else host
    try:
        infos = socket.getaddrinfo(bind_host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise InputError(f"--host {host}: not an address of this machine ({exc}); pass --host 127.0.0.1") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # as uvicorn does: a restart binds while the old connections are in TIME_WAIT (a port
        # another server listens on stays refused)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} is in use; pass --port with another number "
                             "(or leave it out for a free one)") from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise InputError(f"port {port}: not allowed for this user (ports below 1024 need root); "
                             "pass --port with a number above 1024") from None
        raise InputError(f"--host {host} --port {port}: cannot listen there ({exc.strerror}); "
                         "pass --host 127.0.0.1 and another --port") from None
    sock.set_inheritable(True)
    return sock


def build(data_file: Path | None, *, host: str, port: int, token: str | None, workdir: Path | None,
          max_upload_mb: int = 512, output_root: Path | None = None, signing_key: Path | None = None,
          outputs: Path | None = None):
    """The app, its token and URL for the command's options (refuses unsafe settings).

    ``data_file`` is a file to open at start (its folder becomes the file picker's folder) or
    a folder to pick from; without it the picker shows the current folder. Files are read only
    inside that folder, the work folder and the packaged sample data; releases are written
    only inside ``output_root`` (default: the work folder).
    """
    from .server import create_app, signing_supported
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
        if data_file.is_dir():
            roots.append(data_file)
            data_file = None
        elif not data_file.is_file():
            raise InputError(f"{data_file}: no such file; check the path.")
        else:
            roots.append(data_file.parent)
    else:
        roots.append(Path.cwd().resolve())
    work = (workdir or Path.cwd() / "sdckit-workbench").expanduser().resolve()
    out_root = output_root.expanduser().resolve() if output_root is not None else work
    if out_root.exists() and not out_root.is_dir():
        raise InputError(f"--output-root {out_root}: is a file, not a folder.")
    key = None
    if signing_key is not None:
        signing_key = signing_key.expanduser().resolve()
        if not signing_key.is_file():
            raise InputError(f"--key {signing_key}: no such key file; give the steward's private key file.")
        if not signing_supported():
            from .server import SIGNING_MISSING
            raise InputError(SIGNING_MISSING)
        from ..report.signing import load_private_key

        key = load_private_key(signing_key)  # a wrong file or passphrase stops the start, not a release
    if outputs is not None:
        outputs = outputs.expanduser().resolve()
        if not outputs.is_dir():
            raise InputError(f"--outputs {outputs}: no such folder; give the results folder of a "
                             "researcher's outputs (Session.finalise's or ACRO's).")
    roots += [work / "uploads", Path(str(resources.files("sdckit").joinpath("data")))]
    session = Session(work, roots, output_root=out_root)
    if data_file is not None:
        session.open(data_file)
    token = token or secrets.token_urlsafe(24)
    hosts = None if not is_loopback(host) else {"127.0.0.1", "localhost", "[::1]", host}
    app = create_app(session, token=token, max_upload=max_upload_mb * 2**20, allowed_hosts=hosts,
                     signing_key=key, outputs=outputs)
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
    data_file: Annotated[Path | None, typer.Argument(help="Data file to open (CSV, Parquet, SPSS, Stata, SAS), or a folder to pick files from (default: the current folder).")] = None,
    port: Annotated[int, typer.Option("--port", help="Port (default: a free one).")] = 0,
    host: Annotated[str, typer.Option("--host", help="Interface to bind; other than loopback needs --token.")] = "127.0.0.1",
    token: Annotated[str | None, typer.Option("--token", help="Access token (default: a random one, printed in the URL).")] = None,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Do not open a browser.")] = False,
    workdir: Annotated[Path | None, typer.Option("--workdir", help="Folder for uploads and default release output (default ./sdckit-workbench).")] = None,
    max_upload_mb: Annotated[int, typer.Option("--max-upload-mb", help="Largest upload accepted, in MB.")] = 512,
    output_root: Annotated[Path | None, typer.Option("--output-root", help="Folder inside which releases may be written (default: the work folder).")] = None,
    key: Annotated[Path | None, typer.Option("--key", help="The steward's private key file: every release from the workbench is signed with it.")] = None,
    outputs: Annotated[Path | None, typer.Option("--outputs", help="A results folder of researchers' outputs to check (sdckit.outputs or ACRO): opens the output checker's queue.")] = None,
) -> None:
    """Start the workbench: a local web app for the whole release (open, roles, risk, steps,
    undo, explore, gate, release, tables). Needs the token in the URL it prints."""
    import uvicorn

    if not 0 <= port <= 65535:
        raise InputError(f"--port {port}: must be a number from 1 to 65535 (0: a free one)")
    if not is_loopback(host) and not token:  # refused before anything listens
        raise InputError(f"--host {host}: serving beyond this machine needs an explicit --token "
                         "(a long random string you share only with the steward).")
    # bind first: a port in use stops here, before any address is printed
    sock = bind_socket(host, port)
    try:
        app, token, url = build(data_file, host=host, port=sock.getsockname()[1], token=token, workdir=workdir,
                                max_upload_mb=max_upload_mb, output_root=output_root, signing_key=key,
                                outputs=outputs)
    except BaseException:
        sock.close()
        raise
    bound = sock.getsockname()[1]
    import threading

    threading.Thread(target=warm_up, name="sdckit-app-warm-up", daemon=True).start()
    sys.stderr.write(f"sdckit workbench: {url}\n(the token in this address is the key: share it with no one; "
                     "Ctrl+C stops the server)\n")
    sys.stderr.flush()
    if not no_browser:
        import webbrowser
        threading.Timer(1.0, lambda: webbrowser.open(url)).start()
    config = uvicorn.Config(app, host=host, port=bound, log_level="warning", access_log=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
