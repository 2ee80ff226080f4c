"""The workbench session's state as a release-spec TOML file: export, import, and a spec waiting for its data.

:class:`SpecFile` holds the methods of :class:`sdckit.app.session.Session` that turn its current
state into the TOML ``sdckit protect`` runs (:meth:`SpecFile.spec_toml`, the run seed kept or
left out) and read such a file back into a new history (:meth:`SpecFile.import_toml`), with
every file and folder it names checked against the workbench's folders. A spec whose data file
is not there yet is kept, and resumes when that file is uploaded
(:meth:`SpecFile.resume_pending_spec`).

The release spec's text is its own concept (the one thing the workbench and the command line
exchange), so it sits apart from the session's data, history and previews; the session class
inherits these methods, and its module re-exports :func:`new_seed`.
"""

from __future__ import annotations

import copy
import os
import secrets
from pathlib import Path
from typing import Any

from ..errors import InputError, SpecError
from .security import check_file_name, path_text

__all__ = ["SpecFile", "new_seed", "spec_only"]


def new_seed() -> int:
    """A fresh run seed (a secret: shown only on the internal page and in the exported spec)."""
    return secrets.randbelow(2**31 - 1) + 1


class SpecFile:
    """The release-spec file of a workbench session (a mixin of :class:`sdckit.app.session.Session`).

    It uses what the session holds: ``state``, ``files`` (:class:`~sdckit.app.security.FileRoots`),
    ``workdir``, ``roots`` and ``_pending_spec``, and its methods ``open``, ``push`` and
    ``check_paths``.
    """

    _pending_spec: dict | None

    def spec_toml(self, state: dict | None = None, *, with_seed: bool = True) -> str:
        """The state as a release spec in TOML (tomli-w), ready for ``sdckit protect``."""
        import tomli_w

        raw = spec_only(copy.deepcopy(state or self.state))
        if not with_seed:
            raw.pop("run", None)
        head = ("# Release spec exported by the sdckit workbench; run it with: sdckit protect FILE\n"
                + ("# It holds the run seed: a secret (whoever knows it can undo PRAM or swapping).\n"
                   if with_seed else ""))
        return head + tomli_w.dumps(_drop_none(raw))

    def import_toml(self, text: str, base_dir: Path | None = None) -> dict:
        """Read a release spec's TOML ``text`` into a new history (its data opened); returns the state."""
        import tomllib

        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SpecError(f"the spec is not valid TOML: {exc}") from None
        base = base_dir or self.workdir
        inp = raw.get("input")
        if not isinstance(inp, dict) or not isinstance(inp.get("path"), str):
            raise SpecError("input.path: is required: the data file to protect, as a string")
        for key in ("run", "output"):
            if not isinstance(raw.get(key, {}), dict):
                raise SpecError(f"{key}: must be a table")
        text = path_text(inp["path"], "input.path")
        p = Path(text).expanduser() if text.startswith("~") else Path(text)
        if not p.is_absolute():  # relative: to the workbench folder, else to a picker folder
            tries = [base, self.workdir / "uploads", *self.roots]
            p = next((t / p for t in tries if (t / p).is_file()), base / p)
        self._wait_for_data(raw, p, base)
        # every file and folder the spec names: inside the workbench's folders, or refused
        p = self.files.check_read(p, base=base, what="input.path")
        inp["path"] = str(p)
        out = raw.setdefault("output", {})
        out["directory"] = str(self.files.check_write(out.get("directory", "release"), base=base,
                                                      what="output.directory"))
        if "internal_directory" in out:
            out["internal_directory"] = str(self.files.check_write(
                out["internal_directory"], base=base, what="output.internal_directory"))
        raw.setdefault("run", {})
        if raw["run"].get("seed") is None:
            raw["run"]["seed"] = new_seed()
        for k in list(raw):
            if k not in ("input", "roles", "run", "steps", "gate", "output"):
                raise SpecError(f"{k}: unknown section of a release spec")
        self.check_paths({"input": inp, "output": out, "steps": raw.get("steps", [])})
        from ..spec import spec_from_dict
        spec_from_dict(raw, base_dir=base)  # validate before touching the session
        self.open(p, file_format=inp.get("format"), na_values=inp.get("na_values"),
                  roles=raw.get("roles"), delimiter=inp.get("delimiter"))
        state = {"input": inp, "roles": raw.get("roles", {}), "run": raw["run"],
                 "steps": raw.get("steps", []), "gate": raw.get("gate", {}), "output": out}
        self.push(state, "import spec")
        return state

    # ------------------------------------------------------------------ a spec before its data
    def _wait_for_data(self, raw: dict, p: Path, base: Path) -> None:
        """A spec whose data file is missing (inside the workbench's folders) is kept, and the
        refusal names the file to open or upload; that file, once uploaded, resumes it."""
        try:
            real = self.files.resolve(p, base=base, what="input.path")
        except Exception:
            return  # refused below, as before (outside the folders, a bad name)
        if os.path.lexists(real) or self.files.readable_root(real) is None:
            return
        try:
            name = check_file_name(real.name, "input.path")
        except Exception:
            return
        self._pending_spec = {"raw": copy.deepcopy(raw), "name": name}
        raise InputError(f"input.path: the spec needs its data file {name!r}, which is not in the workbench's "
                         f"folders: upload {name} (Data page) and the spec continues from it")

    def pending_spec_info(self) -> dict | None:
        """The data file a spec imported before its data waits for, or None."""
        if self._pending_spec is None:
            return None
        return {"needs": self._pending_spec["name"],
                "message": f"an imported spec waits for its data file {self._pending_spec['name']}: upload it"}

    def pending_spec_wants(self, name: str) -> bool:
        """Whether a spec imported before its data waits for the file ``name``."""
        return self._pending_spec is not None and self._pending_spec["name"] == name

    def resume_pending_spec(self, path: Path) -> dict:
        """Import the waiting spec with its data file now at ``path``."""
        import tomli_w

        raw = copy.deepcopy(self._pending_spec["raw"])
        raw["input"]["path"] = str(path)
        state = self.import_toml(tomli_w.dumps(_drop_none(raw)))
        self._pending_spec = None
        return state


def spec_only(state: dict) -> dict:
    """The release-spec sections of a session state (what ``sdckit protect`` reads), nothing else.

    Parameters
    ----------
    state : dict
        A session state (a release-spec dict, possibly with keys the spec does not know).

    Returns
    -------
    dict
        The sections ``input``, ``roles``, ``run``, ``steps``, ``gate``, ``output`` and
        ``report`` that the state has (not copied).
    """
    return {k: state[k] for k in ("input", "roles", "run", "steps", "gate", "output", "report") if k in state}


def _drop_none(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _drop_none(v) for k, v in obj.items() if v is not None and v != [] or k == "steps"}
    if isinstance(obj, (list, tuple)):
        return [_drop_none(v) for v in obj]
    return obj
