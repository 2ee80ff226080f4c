"""The release of a checker's approved outputs: one folder with the approved files, a
``results.json`` that lists them with their checks and decisions, and a signed
``certificate.json`` that ``sdckit verify`` re-checks.

The folder is written through sdckit's release machinery (:func:`sdckit.io.atomic.staged_release`:
staged, journaled, switched in whole, with the release mark). The certificate has the format of
:mod:`sdckit.report.certificate` with ``data.kind = "outputs"`` and an ``outputs`` list: each
output's id, type, files (their SHA-256 are in ``files``), status, the verdict of every check,
the researcher's exception request and the checker's decision (who approved it, when, why),
and the rules the outputs were checked against. Rejected and undecided outputs are not
released; a release with an undecided output is refused (every output needs a decision).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..outputs.review import Review
from ..outputs.session import RESULTS_FILE

__all__ = ["release_outputs", "outputs_certificate", "OUTPUTS_DATA_KIND"]

#: ``data.kind`` of an outputs release's certificate
OUTPUTS_DATA_KIND = "outputs"


def outputs_certificate(review: Review, folder: Path, *, approved: list[str], rejected: list[str],
                        run_id: str) -> dict:
    """The public certificate of an outputs release (see the module docstring)."""
    from .. import __version__
    from ..result import jsonable
    from .certificate import FORMAT, dependency_versions, file_entry, mark_entry

    files = [file_entry(folder, RESULTS_FILE, "results")]
    outputs = []
    for uid in approved:
        rec = review.results[uid]
        names = [f["name"] for f in rec.get("files", [])]
        files += [file_entry(folder, n, "output") for n in names]
        sd = rec.get("sdckit") or {}
        dec = sd.get("decision") or {}
        outputs.append({"id": uid, "type": rec.get("type"), "method": (rec.get("properties") or {}).get("method"),
                        "files": names, "status": rec.get("status"),
                        "checks": {c["name"]: c["status"] for c in sd.get("checks", [])}
                        or (rec.get("fair") or {}).get("check_status", {}),
                        "exception": rec.get("exception", ""), "verdict": dec.get("verdict"),
                        "checker": dec.get("checker"), "reason": dec.get("reason"), "decided": dec.get("time")})
    files += mark_entry(folder)
    n_fail = sum(1 for o in outputs if o["status"] == "fail")
    verdict = (f"Passed: {len(outputs)} outputs approved by a checker"
               + (f" ({n_fail} failing a rule, each approved on the researcher's exception request)" if n_fail else "")
               + (f"; {len(rejected)} rejected and not released" if rejected else ""))
    cert = {
        "format": FORMAT, "kind": "public", "run_id": run_id,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "sdckit_version": __version__, "dependencies": dependency_versions(),
        "passed": True, "verdict": verdict, "not_checked": None,
        "data": {"file": RESULTS_FILE, "kind": OUTPUTS_DATA_KIND, "n_records": len(outputs), "columns": [],
                 "roles": {}},
        "files": files, "gate": [], "steps": [], "checks": {"matrices": []},
        "rules": review.doc.get("rules"), "checked_by": review.doc.get("tool"),
        "outputs": outputs, "rejected": list(rejected),
    }
    return jsonable(cert)


def release_outputs(results: str | os.PathLike | Review, public: str | os.PathLike, *, signing_key: Any = None,
                    overwrite: bool = False) -> dict:
    """Release the approved outputs of a reviewed results folder into ``public``.

    Parameters
    ----------
    results : path-like or Review
        The results folder (``Session.finalise``'s), its ``results.json``, or a :class:`Review`.
    public : path-like
        The release folder (new, or an earlier release with ``overwrite=True``).
    signing_key : path-like or Ed25519 private key, optional
        The checker's key (``sdckit keygen``) that signs the certificate.

    Returns ``{"folder", "files", "approved", "rejected", "verdict", "run_id"}``.
    """
    from ..io.atomic import atomic_write_text, check_output_folder, staged_release
    from .certificate import CERTIFICATE, seal

    review = results if isinstance(results, Review) else Review(results)
    undecided = review.undecided()
    if undecided:
        raise InputError(f"{review.path.name}: {len(undecided)} outputs have no decision ({', '.join(undecided[:5])}"
                         f"{'...' if len(undecided) > 5 else ''}); approve or reject each before the release")
    approved = review.approved()
    rejected = [k for k in review.results if k not in approved]
    if not approved:
        raise InputError(f"{review.path.name}: no output is approved; nothing to release")
    pub = check_output_folder(public, "release folder")
    src = review.folder.resolve()
    if pub.resolve() == src or src in pub.resolve().parents or pub.resolve() in src.parents:
        raise InputError(f"{pub.name}: the release folder must lie beside the results folder {src.name}, "
                         "not be it, inside it or hold it")
    if isinstance(signing_key, (str, os.PathLike)):
        real = Path(os.path.abspath(signing_key)).resolve()
        if real == pub.resolve() or pub.resolve() in real.parents:
            raise InputError(f"{Path(signing_key).name}: the signing key is inside the release folder; keep it "
                             "outside")
        from .signing import load_private_key

        signing_key = load_private_key(signing_key)
    with staged_release(pub, None, overwrite=overwrite) as stage:
        folder = stage.public
        for uid in approved:
            for f in review.results[uid].get("files", []):
                source = review.folder / f["name"]
                if not source.is_file() or source.is_symlink():
                    raise InputError(f"{f['name']}: a file of {uid} is missing from the results folder (or is a link)")
                shutil.copyfile(source, folder / f["name"])
        doc = dict(review.doc, results={k: review.results[k] for k in approved})
        doc["linked_sets"] = [s for s in doc.get("linked_sets", []) if set(s.get("outputs", [])) <= set(approved)]
        atomic_write_text(folder / RESULTS_FILE, json.dumps(doc) + "\n")
        cert = outputs_certificate(review, folder, approved=approved, rejected=rejected, run_id=stage.run_id)
        atomic_write_text(folder / CERTIFICATE, json.dumps(seal(cert, signing_key), indent=2) + "\n")
        run_id = stage.run_id
        names = sorted(p.name for p in folder.iterdir())
    return {"folder": str(pub), "files": names, "approved": approved, "rejected": rejected,
            "verdict": cert["verdict"], "run_id": run_id}
