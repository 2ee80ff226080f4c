"""Access control of the workbench (an ASGI middleware).

- Every request needs the session token: once in the first URL (``/?token=...``, as Jupyter
  does), which sets an HttpOnly, SameSite=Strict cookie and redirects to the same page without
  the token; afterwards the cookie (or an ``X-Sdckit-Token`` header for scripts). Anything else
  gets 401 (no credential) or 403 (a wrong one).
- Requests that change state (POST, PUT, PATCH, DELETE) also need the CSRF token in the
  ``X-CSRF-Token`` header, equal to the ``sdckit_csrf`` cookie (double submit) and to the
  session's value; a cross-site form can set neither. A present ``Origin`` must be this host.
- The ``Host`` header must name an allowed host (defeats DNS rebinding).
"""

from __future__ import annotations

import hmac
import json
from urllib.parse import parse_qsl, urlencode

TOKEN_COOKIE = "sdckit_token"
CSRF_COOKIE = "sdckit_csrf"
_SAFE = {"GET", "HEAD", "OPTIONS"}


def _same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


def _cookies(headers: dict) -> dict:
    out = {}
    for part in headers.get("cookie", "").split(";"):
        if "=" in part:
            k, v = part.strip().split("=", 1)
            out[k] = v
    return out


class TokenMiddleware:
    """Refuse every request without the token (see the module docstring)."""

    def __init__(self, app, *, token: str, csrf: str, allowed_hosts: set[str] | None) -> None:
        self.app = app
        self.token = token
        self.csrf = csrf
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        hostname = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
        if self.allowed_hosts is not None and hostname not in self.allowed_hosts:
            return await _deny(send, 403, f"host {hostname!r} is not allowed")
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        cookies = _cookies(headers)
        method = scope["method"]
        by_header = False
        if "token" in query:
            if not _same(query["token"], self.token):
                return await _deny(send, 403, "wrong token")
            if method in _SAFE:  # set the cookies, then drop the token from the address bar
                rest = urlencode({k: v for k, v in query.items() if k != "token"})
                location = scope["path"] + ("?" + rest if rest else "")
                return await _redirect(send, location, [
                    f"{TOKEN_COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/",
                    f"{CSRF_COOKIE}={self.csrf}; SameSite=Strict; Path=/"])
        elif _same(headers.get("x-sdckit-token"), self.token):
            by_header = True  # a script: a cross-site page cannot set this header
        elif TOKEN_COOKIE in cookies:
            if not _same(cookies[TOKEN_COOKIE], self.token):
                return await _deny(send, 403, "wrong token")
        else:
            return await _deny(send, 401, "this workbench needs its token: open the address "
                               "printed by 'sdckit app' (it ends with ?token=...)")
        if method not in _SAFE and not by_header:
            origin = headers.get("origin")
            if origin is not None and origin.split("://", 1)[-1] != host:
                return await _deny(send, 403, "cross-origin request refused")
            if not (_same(headers.get("x-csrf-token"), self.csrf)
                    and _same(cookies.get(CSRF_COOKIE), self.csrf)):
                return await _deny(send, 403, "missing or wrong CSRF token; reload the page")
        return await self.app(scope, receive, send)


async def _deny(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send, location: str, cookies: list[str]) -> None:
    headers = [(b"location", location.encode("latin-1")), (b"content-length", b"0"),
               (b"cache-control", b"no-store")]
    headers += [(b"set-cookie", c.encode("latin-1")) for c in cookies]
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})
