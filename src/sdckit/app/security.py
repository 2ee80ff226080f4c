"""Access control of the workbench (an ASGI middleware).

- Every request needs the session token: once in the first URL (``/?token=...``, as Jupyter
  does), which sets an HttpOnly, SameSite=Strict cookie and redirects to the same page without
  the token; afterwards the cookie (or an ``X-Sdckit-Token`` header for scripts). Anything else
  gets 401 (no credential) or 403 (a wrong one).
- Requests that change state (POST, PUT, PATCH, DELETE) also need the CSRF token in the
  ``X-CSRF-Token`` header, equal to the ``sdckit_csrf`` cookie (double submit) and to the
  session's value; a cross-site form can set neither. A present ``Origin`` must be this host.
- The ``Host`` header must name an allowed host (defeats DNS rebinding).

Files: :class:`FileRoots` keeps every read inside the workbench's folders and every release
inside its output folder (see the section below).
"""

from __future__ import annotations

import errno
import hmac
import json
import os
import stat
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from ..errors import InputError

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


# ---------------------------------------------------------------------- files and folders
#
# The workbench reads only inside its read roots (the folder given on the command line or the
# current folder, its own work folder, the packaged sample data) and writes releases only
# inside its output root (the work folder, or --output-root). A path is resolved with every
# symbolic link followed before the check, so "..", an absolute path or a link out of a root
# is refused (403); a file is opened again with O_NOFOLLOW and the opened descriptor's real
# path checked once more, so a link swapped in after the check is refused as well.

#: longest path and path component accepted (Linux's PATH_MAX and NAME_MAX)
MAX_PATH = 4096
MAX_NAME = 255


class PathRefused(InputError):
    """A path outside the folders the workbench may read or write (answered with 403)."""

    http_status = 403


def _show(value: object) -> str:
    text = repr(str(value))
    return text if len(text) <= 80 else text[:60] + "…" + text[-16:]


def path_text(value: object, what: str) -> str:
    """``value`` as a path string, or a one-line :class:`InputError` (400) for an empty, NUL,
    over-long or non-text value."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise InputError(f"{what}: give a path as text, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"{what}: is empty; give a file or folder name")
    if "\x00" in value:
        raise InputError(f"{what} {_show(value)}: holds a NUL byte; give a plain file name")
    if len(value) > MAX_PATH or any(len(part.encode("utf-8", "surrogatepass")) > MAX_NAME
                                    for part in value.replace("\\", "/").split("/")):
        raise InputError(f"{what} {_show(value)}: is too long for a path (at most {MAX_NAME} bytes a "
                         f"name, {MAX_PATH} in all)")
    return value


def check_file_name(value: object, what: str) -> str:
    """A plain file name (no folder, not ``.`` or ``..``), or :class:`PathRefused`."""
    name = path_text(value, what)
    if "/" in name or "\\" in name or name.strip() in (".", ".."):
        raise PathRefused(f"{what} {_show(name)}: must be a file name inside the folder (no folders or '..')")
    return name


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class FileRoots:
    """Where the workbench may read (``read_roots``) and write releases (``output_root``).

    Parameters
    ----------
    read_roots : iterable of Path
        Folders whose files (at any depth) may be opened, imported or used as hierarchy
        files.
    output_root : Path
        The folder inside which release folders may be written.
    """

    def __init__(self, read_roots, output_root) -> None:
        self.read_roots = tuple(dict.fromkeys(_real(Path(r)) for r in read_roots))
        self.output_root = _real(Path(output_root))

    def resolve(self, value, *, base: Path, what: str) -> Path:
        """``value`` (relative to ``base``) with every link followed; a bad value is a 400."""
        text = path_text(value, what)
        p = Path(text)
        if text.startswith("~"):
            p = p.expanduser()
        if not p.is_absolute():
            p = Path(base) / p
        try:
            return _real(p)
        except (OSError, ValueError, RuntimeError) as exc:  # a loop of links, a bad name
            raise InputError(f"{what} {_show(value)}: cannot be resolved ({exc})") from None

    def readable_root(self, path: Path) -> Path | None:
        """The read root holding ``path`` (resolved), or None."""
        return next((r for r in self.read_roots if _inside(path, r)), None)

    def check_read(self, value, *, base: Path, what: str = "the file", kind: str = "file") -> Path:
        """The resolved path of ``value`` (relative to ``base``) if it lies inside a read root
        and is a regular file (``kind="file"``) or a folder (``kind="folder"``).

        Raises
        ------
        PathRefused
            Outside every read root (after following links): 403.
        InputError
            Missing, not a regular file (a folder, a pipe, a device), unreadable: 400.
            ``kind="any"`` takes a regular file or a folder.
        """
        real = self.resolve(value, base=base, what=what)
        if self.readable_root(real) is None:
            raise PathRefused(f"{what} {_show(value)}: is outside the folders this workbench reads "
                              f"({', '.join(str(r) for r in self.read_roots)}); copy it there or upload it")
        try:
            st = os.stat(real)
        except FileNotFoundError:
            raise InputError(f"{what} {_show(value)}: no such {kind}; check the name") from None
        except OSError as exc:
            raise InputError(f"{what} {_show(value)}: cannot be read ({exc.strerror})") from None
        if kind == "folder":
            if not stat.S_ISDIR(st.st_mode):
                raise InputError(f"{what} {_show(value)}: is not a folder")
        elif kind == "any" and stat.S_ISDIR(st.st_mode):
            pass
        elif not stat.S_ISREG(st.st_mode):
            kind_seen = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a pipe, socket or device)"
            raise InputError(f"{what} {_show(value)}: is {kind_seen}; give a data file")
        return real

    def check_folder_entries(self, folder: Path, what: str) -> None:
        """Refuse a folder (e.g. of hierarchy files) holding a link that leads out of the roots."""
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            raise InputError(f"{what} {_show(folder)}: cannot be listed ({exc.strerror})") from None
        for e in entries:
            if e.is_symlink() and self.readable_root(_real(Path(e.path))) is None:
                raise PathRefused(f"{what} {_show(folder)}: holds {e.name!r}, a link to outside the folders "
                                  "this workbench reads")

    def check_write(self, value, *, base: Path, what: str = "the output folder") -> Path:
        """The resolved path of an output folder strictly inside the output root (its internal
        sibling must fit there too); it may not exist yet, but must not be a file."""
        real = self.resolve(value, base=base, what=what)
        if real == self.output_root or not _inside(real, self.output_root):
            raise PathRefused(f"{what} {_show(value)}: must be a folder inside {self.output_root} (the "
                              "workbench writes releases only there; start it with --output-root to "
                              "choose another place)")
        if real.exists() and not real.is_dir():
            raise InputError(f"{what} {_show(value)}: is a file, not a folder")
        return real

    def open_read(self, real: Path) -> int:
        """Open a checked file again for reading and return the descriptor.

        The open does not follow a link in the last component (``O_NOFOLLOW``) and does not
        block on a pipe; the descriptor must be a regular file whose real path (read back from
        ``/proc/self/fd`` where there is one, else by re-resolving the path and comparing the
        inode) still lies inside a read root. So a link swapped in after :meth:`check_read`
        is refused. The caller closes the descriptor.
        """
        flags = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
        try:
            fd = os.open(real, flags)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathRefused(f"{_show(real.name)}: became a symbolic link after it was checked; "
                                  "refused") from None
            raise InputError(f"{_show(real.name)}: cannot be opened ({exc.strerror})") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise InputError(f"{_show(real.name)}: is not a regular file; give a data file")
            now = self._descriptor_path(fd, real, st)
            if now is None or self.readable_root(now) is None:
                raise PathRefused(f"{_show(real.name)}: now leads outside the folders this workbench reads; "
                                  "refused")
        except BaseException:
            os.close(fd)
            raise
        return fd

    @staticmethod
    def _descriptor_path(fd: int, real: Path, st: os.stat_result) -> Path | None:
        proc = Path(f"/proc/self/fd/{fd}")
        try:
            return Path(os.readlink(proc))
        except OSError:
            pass
        again = _real(real)  # no /proc: the path must still name this very file
        try:
            st2 = os.stat(again)
        except OSError:
            return None
        return again if (st.st_dev, st.st_ino) == (st2.st_dev, st2.st_ino) else None

    @staticmethod
    def descriptor_path(fd: int, real: Path) -> Path:
        """A path a reader can open that names the descriptor's file (``/proc/self/fd/N`` or
        ``/dev/fd/N``), else ``real`` (already checked again by :meth:`open_read`)."""
        for cand in (Path(f"/proc/self/fd/{fd}"), Path(f"/dev/fd/{fd}")):
            if cand.exists():
                return cand
        return real
