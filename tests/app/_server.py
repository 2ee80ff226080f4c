"""Start ``sdckit app`` as a user does (a separate process on a free loopback port) for the
browser tests, and stop it afterwards."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_app(folder: Path, token: str) -> Iterator[str]:
    """``sdckit app`` started in ``folder`` (its work folder ``folder/wb``) behind ``token``;
    yields its base URL once it answers, stops it on exit."""
    port = free_port()
    log = folder / "server.log"
    proc = subprocess.Popen([sys.executable, "-m", "sdckit", "app", "--port", str(port), "--no-browser",
                             "--token", token, "--workdir", str(folder / "wb")],
                            cwd=folder, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            stdout=subprocess.DEVNULL, stderr=log.open("w"))
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            urllib.request.urlopen(base + "/api/state", timeout=1)
        except urllib.error.HTTPError:
            break  # 401: it is up and refusing us
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("sdckit app exited: " + log.read_text()) from None
            time.sleep(0.2)
    else:
        proc.terminate()
        raise RuntimeError("sdckit app did not start in 30 s")
    try:
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
