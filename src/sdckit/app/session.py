"""The workbench session: a history of release specs (with undo, redo and branches) and the
figures every page shows, computed from the same functions the command line uses.

The session never holds a step object as its state: each state is a release-spec dict (the
TOML the steward can export), validated by :func:`sdckit.spec.spec_from_dict` whenever it
changes. A preview runs the spec's steps through the one step runner that
:meth:`sdckit.release.Release.run` uses (:func:`sdckit.runner.run_steps`: one child seed stream
per step, spawned from the run seed) with results cached by the step prefix that produced
them, so changing step 3 re-runs steps 3.. only. A release goes through
:func:`sdckit.release.protect` on the exported TOML itself.

The export and import of that TOML are :class:`sdckit.app.spec_file.SpecFile` (a base class of
:class:`Session`); what the data file says about its variables (declared missing codes, a
plausible weight, value labels) is :mod:`sdckit.app.variables`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError
from ..io.files import read_data
from ..microdata import Microdata
from ..result import jsonable
from ..runner import StepCache
from .security import FileRoots, PathRefused, check_file_name, path_text
from .spec_file import SpecFile, new_seed, spec_only
from .variables import (
    declared_missing_by_column,
    declared_missing_codes,
    json_value,
    value_label,
    weight_problem,
    whole_number,
)

#: suffixes the file picker lists
DATA_SUFFIXES = (".csv", ".parquet", ".pq", ".sav", ".zsav", ".dta", ".sas7bdat")
_LIST_ROLES = ("key_vars", "numeric_vars", "strata", "sensitive")
_ONE_ROLES = ("weight", "household")
#: the folder of the hierarchy editor's files, inside the output root
HIERARCHIES = "hierarchies"


@dataclass
class Branch:
    """One line of history: a list of spec dicts and the position of the current one."""

    states: list[dict]
    pos: int = 0
    labels: list[str] = field(default_factory=list)

    @property
    def state(self) -> dict:
        return self.states[self.pos]


@dataclass
class Preview:
    """The steps of a spec applied to the data: results, the data after each, the gate."""

    original: Microdata
    results: list
    datas: list  # Microdata before step 0, after step 0, ...
    gate: list
    error: str | None = None
    failed_step: int | None = None

    @property
    def released(self) -> Microdata:
        return self.datas[-1]


def _canon(obj: Any) -> str:
    return json.dumps(jsonable(obj), sort_keys=True, default=str)


class Session(SpecFile):
    """State of one workbench: the data, the release-spec history, caches.

    Parameters
    ----------
    workdir : Path
        Folder for uploads (created on first upload).
    roots : list of Path
        Folders the file picker lists. Files are read only inside these folders and the work
        folder (at any depth, links followed before the check); anything else is refused.
    output_root : Path, optional
        Releases are written only inside this folder (default: ``workdir``).
    """

    def __init__(self, workdir: Path, roots: list[Path], *, output_root: Path | None = None) -> None:
        self.workdir = Path(workdir)
        self.roots = [Path(r).resolve() for r in roots]
        out_root = Path(output_root) if output_root is not None else self.workdir
        # the hierarchy editor's files (written in the output root) are read by recode and tables
        self.files = FileRoots([*self.roots, self.workdir, out_root / HIERARCHIES], out_root)
        self.lock = threading.RLock()
        self.branches: dict[str, Branch] = {}
        self.current = "main"
        self._frame: pd.DataFrame | None = None
        self._meta = None
        self._data_key: str | None = None
        self._md_cache: OrderedDict[str, Microdata] = OrderedDict()
        self._step_cache = StepCache(64)
        self._risk_cache: OrderedDict[str, dict] = OrderedDict()
        self.releases: list[dict] = []
        self._suggestions: _Background | None = None
        #: step cards already laid out, by the cached step result they show (undo, redo and
        #: a reload answer from here)
        self.view_cache: OrderedDict[int, tuple[Any, dict]] = OrderedDict()
        #: explore sweeps and their results (kept for the session, reloads included)
        self.sweeps: list[dict] = []
        #: a spec imported before any data was open, waiting for the file it names
        self._pending_spec: dict | None = None

    # ------------------------------------------------------------------ data
    @property
    def has_data(self) -> bool:
        return self._frame is not None

    @property
    def frame(self) -> pd.DataFrame:
        if self._frame is None:
            raise InputError("no data is open: open a data file first (Data page).")
        return self._frame

    def open(self, path: str | Path, *, file_format: str | None = None,
             na_values: list | None = None, roles: dict | None = None,
             delimiter: str | None = None, honour_missing: bool = True) -> dict:
        """Read ``path`` and start a new history whose first state is a spec of it.

        ``path`` must lie inside the workbench's folders (:class:`~sdckit.app.security.FileRoots`);
        the file is opened once more without following links and checked again, and the
        reader reads that very descriptor.

        With ``honour_missing`` (the default) and no ``na_values``, the single user-missing
        codes an SPSS file declares (``-9`` "refused", say) are read as missing in the columns
        that declare them, exactly as ``[input] na_values = { Health = [-9] }`` (``sdckit
        protect``) reads them: the spec of the session then holds them, so the command line
        reruns it the same.
        """
        path = self.files.check_read(path, base=self.workdir, what="the data file")
        fd = self.files.open_read(path)
        try:
            fmt = file_format
            if fmt is None:
                from ..io.formats import infer_format
                fmt = infer_format(path)
            if fmt == "sas7bdat":  # its value formats may sit in a catalog beside it: same rule
                for cat in (path.with_suffix(".sas7bcat"), path.with_name("formats.sas7bcat")):
                    if os.path.lexists(cat):
                        self.files.check_read(cat, base=self.workdir, what="the SAS format catalog")
            df, meta = read_data(self.files.descriptor_path(fd, path), file_format=fmt,
                                 na_values=na_values or None, delimiter=delimiter, source=path)
            declared = declared_missing_by_column(meta)
            if honour_missing and not na_values and declared:
                # per column, as the file declares them and as [input] na_values = { col = [codes] }
                # reads them: the same reader, the same codes, no other column touched
                na_values = declared
                df, meta = read_data(self.files.descriptor_path(fd, path), file_format=fmt,
                                     na_values=na_values, delimiter=delimiter, source=path)
            mtime = os.fstat(fd).st_mtime_ns
        finally:
            os.close(fd)
        with self.lock:
            self._frame, self._meta = df, meta
            self._data_key = hashlib.sha256(
                f"{path}|{mtime}|{file_format}|{na_values}|{delimiter}".encode()).hexdigest()[:16]
            self._md_cache.clear()
            self._step_cache.clear()
            self._risk_cache.clear()
            self.view_cache.clear()
            self.sweeps = []
            inp: dict[str, Any] = {"path": str(path)}
            if file_format:
                inp["format"] = file_format
            if na_values:
                inp["na_values"] = {str(k): list(v) for k, v in na_values.items()} if isinstance(na_values, dict) \
                    else list(na_values)
            if delimiter:
                inp["delimiter"] = delimiter
            state = {"input": inp, "roles": dict(roles or {}), "run": {"seed": new_seed()},
                     "steps": [], "gate": {}, "output": {"directory": str(self.files.output_root / "release"),
                                                          "data": "released" + (path.suffix if path.suffix in (".csv", ".parquet") else ".csv")}}
            self.branches = {"main": Branch([state], 0, ["open " + path.name])}
            self.current = "main"
            # the identifier scan runs while the steward reads the variables
            self._suggestions = _Background(lambda f=df: _suggest(f))
        return self.variables()

    def suggestions(self) -> dict:
        """Role suggestions of the open data (computed in the background since it opened)."""
        if self._suggestions is None:
            raise InputError("no data is open: open a data file first (Data page).")
        return self._suggestions.result()

    def resolve_pick(self, root: int, name: str) -> Path:
        """The file ``name`` inside picker root ``root``; refuses anything else (a name with a
        folder, ``..`` or a link out of the workbench's folders: :class:`PathRefused`)."""
        if isinstance(root, bool) or not isinstance(root, int) or not (0 <= root < len(self.roots)):
            raise InputError(f"no such folder #{root!r}; pick a folder of the list")
        name = path_text(name, "the file name")
        if "/" in name or "\\" in name or name.strip() in (".", ".."):
            raise PathRefused(f"{name[:80]!r}: give a file name from the list (no folders or '..')")
        return self.files.check_read(self.roots[root] / name, base=self.roots[root], what="the file")

    def uploads_folder(self) -> Path:
        """The uploads folder (created), refused if it is a link out of the work folder."""
        folder = self.workdir / "uploads"
        folder.mkdir(parents=True, exist_ok=True)
        real, work = Path(os.path.realpath(folder)), Path(os.path.realpath(self.workdir))
        if work not in real.parents:
            raise PathRefused(f"{folder}: the uploads folder leads outside the work folder {work}; refused")
        return real

    def upload_target(self, name: str) -> Path:
        """Where an upload named ``name`` (a plain file name) is written: in the uploads folder,
        never through a link."""
        name = check_file_name(name, "the upload's name")
        target = self.uploads_folder() / name
        if target.is_symlink():
            raise PathRefused(f"{name!r}: the uploads folder holds a link of this name; refused")
        return target

    def uploaded_file(self, name, what: str) -> Path:
        """A file of the uploads folder named by an earlier upload's answer (its path or name)."""
        folder = self.uploads_folder()
        real = self.files.resolve(name, base=folder, what=f"the {what}")
        if real.parent != folder:
            raise PathRefused(f"the {what} {str(name)[:80]!r}: load it with the upload button first (only "
                              "files of the uploads folder are read here)")
        return self.files.check_read(real, base=folder, what=f"the {what}")

    def hierarchies_folder(self) -> Path:
        """The folder of the hierarchy editor's files, inside the output root (created)."""
        folder = self.files.check_write(self.files.output_root / HIERARCHIES, base=self.files.output_root,
                                        what="the hierarchies folder")
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def hierarchy_target(self, name) -> Path:
        """Where the editor saves a hierarchy named ``name`` (a plain ``.csv`` file name), never
        through a link."""
        name = check_file_name(name, "the hierarchy's file name")
        if not name.lower().endswith(".csv"):
            name += ".csv"
        target = self.hierarchies_folder() / name
        if target.is_symlink():
            raise PathRefused(f"{name!r}: the hierarchies folder holds a link of this name; refused")
        return target

    def hierarchy_file(self, name, what: str = "hierarchy") -> Path:
        """A file the editor saved, by its name (checked as every read is)."""
        name = check_file_name(name, f"the {what}'s file name")
        folder = self.hierarchies_folder()
        return self.files.check_read(folder / name, base=folder, what=f"the {what}")

    def saved_hierarchies(self) -> list[str]:
        """The names of the hierarchy files the editor saved."""
        folder = self.files.output_root / HIERARCHIES
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if p.is_file() and not p.is_symlink()
                      and p.suffix.lower() == ".csv")

    def list_files(self) -> list[dict]:
        out = []
        for i, r in enumerate(self.roots):
            if not r.is_dir():
                continue
            files = sorted(p.name for p in r.iterdir() if p.is_file() and p.suffix.lower() in DATA_SUFFIXES)
            out.append({"root": i, "folder": str(r), "files": files})
        return out

    def variables(self) -> dict:
        """Every column: type, number of categories, missing values, labels, examples."""
        df = self.frame
        meta = self._meta
        cols = []
        for c in df.columns:
            s = df[c]
            n_missing = int(s.isna().sum())
            nun = int(s.nunique(dropna=True))
            kind = ("numeric" if pd.api.types.is_float_dtype(s) and nun > 50 else
                    "integer" if pd.api.types.is_integer_dtype(s) or pd.api.types.is_float_dtype(s) else
                    "text")
            vl = dict(meta.value_labels.get(c, {})) if meta is not None else {}
            top = s.value_counts(dropna=True).head(6)
            cols.append({"name": str(c), "dtype": str(s.dtype), "kind": kind, "n_categories": nun,
                         "n_missing": n_missing, "label": (meta.column_labels.get(c) if meta else None),
                         "value_labels": {str(json_value(whole_number(k))): str(v) for k, v in list(vl.items())[:20]},
                         "n_value_labels": len(vl),
                         "examples": [json_value(whole_number(v)) for v in top.index],
                         "example_labels": [value_label(vl, v) for v in top.index]})
        return {"file": self.state["input"]["path"], "format": getattr(meta, "file_format", None),
                "n_records": int(len(df)), "n_columns": int(df.shape[1]), "columns": cols}

    # ------------------------------------------------------------------ history
    @property
    def branch(self) -> Branch:
        if not self.branches:
            raise InputError("no data is open: open a data file first (Data page).")
        return self.branches[self.current]

    @property
    def state(self) -> dict:
        return self.branch.state

    def push(self, state: dict, label: str) -> dict:
        """Validate ``state`` and make it the current one (dropping the redo part)."""
        self.validate(state)
        with self.lock:
            b = self.branch
            del b.states[b.pos + 1:]
            del b.labels[b.pos + 1:]
            b.states.append(state)
            b.labels.append(label)
            b.pos = len(b.states) - 1
        return state

    def edit(self, label: str, fn) -> dict:
        """Apply ``fn`` to a copy of the current state and push the result."""
        state = copy.deepcopy(self.state)
        fn(state)
        return self.push(state, label)

    def undo(self) -> None:
        b = self.branch
        if b.pos == 0:
            raise InputError("nothing to undo")
        b.pos -= 1

    def redo(self) -> None:
        b = self.branch
        if b.pos >= len(b.states) - 1:
            raise InputError("nothing to redo")
        b.pos += 1

    def goto(self, pos: int) -> None:
        b = self.branch
        if not 0 <= pos < len(b.states):
            raise InputError(f"history has no entry {pos}")
        b.pos = pos

    def new_branch(self, name: str) -> None:
        name = name.strip()
        if not name or len(name) > 40:
            raise InputError("a branch needs a name of 1 to 40 characters")
        if name in self.branches:
            raise InputError(f"a branch named {name!r} exists already")
        b = self.branch
        self.branches[name] = Branch(copy.deepcopy(b.states[:b.pos + 1]), b.pos, list(b.labels[:b.pos + 1]))
        self.current = name

    def switch(self, name: str) -> None:
        if name not in self.branches:
            raise InputError(f"no branch named {name!r}; the branches are {', '.join(self.branches)}")
        self.current = name

    def history(self) -> dict:
        b = self.branch
        return {"branch": self.current, "branches": list(self.branches), "pos": b.pos,
                "entries": [{"i": i, "label": lab} for i, lab in enumerate(b.labels)],
                "can_undo": b.pos > 0, "can_redo": b.pos < len(b.states) - 1}

    # ------------------------------------------------------------------ spec
    def validate(self, state: dict):
        """The state as a validated release spec; its files and folders checked against the
        workbench's folders first (an outside path is refused with :class:`PathRefused`)."""
        from ..spec import spec_from_dict

        self.check_paths(state)
        return spec_from_dict(spec_only(state), base_dir=self.workdir)

    def check_paths(self, state: dict, *, release: bool = False) -> None:
        """Refuse a state that names a file to read outside the read roots (the input, a step's
        file) or an output folder outside the output root; each is resolved again (links
        followed) on every call, so a check at release time sees the files as they are then.

        The input (already read into memory) must still be a readable file only for a
        ``release``; otherwise it need only lie inside the read roots.
        """
        inp = state.get("input")
        if isinstance(inp, dict) and "path" in inp:
            if release:
                self.files.check_read(inp["path"], base=self.workdir, what="input.path")
            elif self.files.readable_root(self.files.resolve(inp["path"], base=self.workdir,
                                                             what="input.path")) is None:
                raise PathRefused(f"input.path {str(inp['path'])[:80]!r}: is outside the folders this "
                                  "workbench reads")
        out = state.get("output")
        if isinstance(out, dict):
            if "directory" in out:
                self.files.check_write(out["directory"], base=self.workdir, what="output.directory")
            if out.get("internal_directory") is not None:
                self.files.check_write(out["internal_directory"], base=self.workdir,
                                       what="output.internal_directory")
            for key in ("data", "report", "internal_report"):
                if isinstance(out.get(key), str):
                    check_file_name(out[key], f"output.{key}")
        steps = state.get("steps")
        if isinstance(steps, list):
            for i, step in enumerate(steps):
                self.check_step_paths(step, f"steps[{i}]")

    def check_step_paths(self, step, where: str = "step", *, in_spec: bool = True) -> None:
        """Refuse a step whose file parameters (declared ``kind="path"``, or named ``file``,
        ``*_file`` or ``*_files``) lead outside the read roots; a folder parameter (``*_dir``)
        may not hold a link out.

        A text value of a step in the spec is read relative to the work folder (the spec's
        folder); a value the spec does not resolve (in a list or mapping, or of an explore
        candidate, ``in_spec=False``) is read relative to the current folder, and checked so.
        """
        if not isinstance(step, dict) or not isinstance(step.get("method"), str):
            return
        declared = _path_params(step["method"])
        for key, value in step.items():
            if key == "method" or value is None:
                continue
            if key in declared or key == "file" or key.endswith(("_file", "_files")):
                # one path, a list (an explore grid) or a mapping (variable -> hierarchy file)
                values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
                folder = key.endswith("_dir")
                base = self.workdir if in_spec and isinstance(value, str) else Path.cwd()
                for v in values:
                    if v is None:
                        continue
                    real = self.files.check_read(v, base=base, what=f"{where}.{key}",
                                                 kind="folder" if folder else "file")
                    if folder:  # its files are read by name: none may be a link out
                        self.files.check_folder_entries(real, f"{where}.{key}")

    # ------------------------------------------------------------------ state the pages derive
    def removed_columns(self, state: dict | None = None) -> list[str]:
        """Columns a ``remove`` step of the state takes out of the release."""
        out: list[str] = []
        for st in (state or self.state).get("steps", []):
            if isinstance(st, dict) and st.get("method") == "remove":
                v = st.get("variables", [])
                out += [v] if isinstance(v, str) else [str(x) for x in v or []]
        return out

    def offered_columns(self, state: dict | None = None) -> list[str]:
        """The columns a form may offer: the data's, less those a remove step takes out."""
        gone = set(self.removed_columns(state))
        return [str(c) for c in self.frame.columns if str(c) not in gone]

    def present_steps(self) -> list[str]:
        """The methods of the current steps (buttons reflect whether a step exists)."""
        return [str(st.get("method")) for st in self.state.get("steps", []) if isinstance(st, dict)]

    def check_new_step(self, steps: list, step: dict, index: int | None = None) -> None:
        """Refuse a step that repeats one already in the list, or removes a column already removed."""
        others = [s for j, s in enumerate(steps) if j != index]
        if step.get("method") == "remove":
            v = step.get("variables", [])
            wanted = [v] if isinstance(v, str) else [str(x) for x in v or []]
            gone = set(self.removed_columns({"steps": others}))
            again = [c for c in wanted if c in gone]
            if again:
                raise InputError(f"{', '.join(map(repr, again))} is already removed by a remove step; "
                                 "nothing to add")
        if any(_canon(s) == _canon(step) for s in others):
            raise InputError(f"the {step.get('method')} step is already in the list with these settings; "
                             "change its settings or edit the existing step")

    def warnings(self) -> list[str]:
        """Sentences about the roles and the file the steward should read before a release."""
        out: list[str] = []
        w = (self.state.get("roles") or {}).get("weight")
        if w and w in self.frame.columns:
            reason = weight_problem(self.frame[w])
            if reason:
                out.append(f"The weight {w!r} does not look like a sampling weight: {reason}. A sampling "
                           "weight is the number of population units a record stands for.")
        na = (self.state.get("input") or {}).get("na_values")
        declared = declared_missing_codes(self._meta)
        if declared and na:
            where = ", ".join(sorted(c for c, rs in (self._meta.missing_ranges or {}).items() if rs))
            scope = ("in those columns only (input.na_values per column)" if isinstance(na, dict)
                     else "in every column (input.na_values)")
            out.append("The file declares the missing codes " + ", ".join(map(str, declared)) + f" (in {where}); "
                       f"they are read as missing {scope}, as the command line reads them; untick the box on "
                       "the Data page and open the file again to keep them.")
        return out

    def column_label(self, col: str) -> str | None:
        return (self._meta.column_labels.get(col) if self._meta is not None else None) or None

    def categories(self, col: str, *, limit: int) -> list[dict]:
        """Every value of ``col`` with its count and label (missing values counted), in the
        order of the codes; more than ``limit`` values are refused in one line."""
        if col not in self.frame.columns:
            raise InputError(f"column {col!r} is not in the data")
        counts = self.frame[col].value_counts(dropna=False)
        if len(counts) > limit:
            raise InputError(f"{col!r} has {len(counts):,} values: too many to list one by one; use breaks")
        labels = self._meta.value_labels.get(col, {}) if self._meta is not None else {}
        rows, missing = [], 0
        for value, n in counts.sort_index().items():
            v = value.item() if hasattr(value, "item") else value
            if isinstance(v, float) and v != v:
                missing += int(n)
                continue
            if isinstance(v, float) and v.is_integer():
                v = int(v)  # a code read as a float (a column with missing values) shows as 1, not 1.0
            rows.append({"value": v, "records": int(n), "label": value_label(labels, value), "missing": False})
        if missing:
            rows.append({"value": None, "records": missing, "label": "missing", "missing": True})
        return rows

    def cached_view(self, result: Any, make) -> dict:
        """The step card of ``result`` (a cached step result), laid out once by ``make()``."""
        hit = self.view_cache.get(id(result))
        if hit is not None and hit[0] is result:
            return hit[1]
        view = make()
        with self.lock:
            self.view_cache[id(result)] = (result, view)
            while len(self.view_cache) > 64:
                self.view_cache.popitem(last=False)
        return view

    def public_release(self, rec: dict) -> dict:
        """A release as the pages show it: no internal report path, public and internal files apart."""
        return {k: v for k, v in rec.items() if k != "internal_report"}

    # ------------------------------------------------------------------ computing
    def microdata(self, roles: dict) -> Microdata:
        key = _canon(roles)
        with self.lock:
            md = self._md_cache.get(key)
            if md is None:
                clean = {k: (tuple(v) if k in _LIST_ROLES else v) for k, v in roles.items() if v}
                md = Microdata(self.frame, meta=self._meta, **clean)
                self._md_cache[key] = md
                while len(self._md_cache) > 8:
                    self._md_cache.popitem(last=False)
            return md

    def preview(self, state: dict | None = None) -> Preview:
        """Run the state's steps (cached by prefix) and its gate, without writing anything."""
        from ..gate import run_gate
        from ..runner import run_steps

        state = state or self.state
        spec = self.validate(state)
        md = self.microdata(state.get("roles", {}))
        results, datas = [], [md]
        error = failed = None

        def keep(i: int, step: Any, result: Any, seconds: float) -> None:
            results.append(result)
            datas.append(result.microdata)

        # the one runner: the release's seed rule, unchanged prefixes from the session's cache
        try:
            run_steps(md, spec.steps, spec.seed, cache=self._step_cache, on_step=keep)
        except Exception as exc:
            failed = len(results)
            error = one_line(exc, f"step {failed + 1} ({spec.step_params[failed]['method']})")
        current = datas[-1]
        gate = []
        if error is None and spec.gate:
            try:
                gate = [o.to_dict() for o in run_gate(spec.gate, md, current, results)]
            except Exception as exc:
                error = one_line(exc, "gate")
        return Preview(md, results, datas, gate, error, failed)

    def risk(self, md: Microdata, *, suda: bool = True, original: Microdata | None = None,
             results=(), linkage: bool = True) -> dict:
        """The risk panel of ``md`` (cached while ``md`` lives); linkage against ``original``
        with the published recodings of the step ``results`` that produced ``md``."""
        if not md.key_vars:
            return {"empty": "Choose key variables (Roles page) to measure the risk."}
        key = f"{id(md)}|{id(original)}|{suda}|{linkage}"
        hit = self._risk_cache.get(key)
        if hit is not None and hit["_md"] is md and hit["_orig"] is original:
            return hit["value"]
        from .figures import risk_panel

        value = risk_panel(md, suda=suda, original=original, results=results, linkage=linkage)
        with self.lock:
            self._risk_cache[key] = {"_md": md, "_orig": original, "value": value}
            while len(self._risk_cache) > 32:
                self._risk_cache.popitem(last=False)
        return value


class _Background:
    """A value computed in a daemon thread; :meth:`result` waits for it (and re-raises)."""

    def __init__(self, fn) -> None:
        self._done = threading.Event()
        self._value = self._error = None

        def run() -> None:
            try:
                self._value = fn()
            except Exception as exc:  # handed to the caller of result()
                self._error = exc
            finally:
                self._done.set()

        threading.Thread(target=run, daemon=True, name="sdckit-app-scan").start()

    def result(self):
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value


def _suggest(frame: pd.DataFrame) -> dict:
    from .figures import suggest_roles

    return suggest_roles(frame)


def _path_params(method: str) -> set[str]:
    """The parameters ``method`` declares as paths (none for an unknown method: refused later)."""
    from ..params import step_params
    from ..registry import known_steps, step_class

    if method not in known_steps():
        return set()
    return {p.name for p in step_params(step_class(method)) if p.kind == "path"}


def one_line(exc: BaseException, where: str | None = None) -> str:
    """The one-line message shown for a failure (never a traceback)."""
    from ..errors import SDCError

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if not isinstance(exc, SDCError):
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return f"{where}: {text}" if where else text
