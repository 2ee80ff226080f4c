"""The SATRE disclosure-control record of a release (``satre_record.json``).

SATRE (the Standard Architecture for Trusted Research Environments) asks in requirement
3.3.09 (pillar Data Management, capability Output Management) for "a machine-readable record
of all disclosure-control criteria applied to each set of outputs released", associated with
the output package, recording "the configuration parameters used during output checking,
including thresholds, suppression or perturbation rules, model requirements, risk-appetite
settings, and tool or configuration versions". SATRE lists these items in prose and defines
no schema, so the record below names one key per item, each tagged with the requirement it
serves, and fills it from the release certificate:

============================  ==================================  =================================
record key                    SATRE source                        filled from the certificate
============================  ==================================  =================================
``output_package``            3.3.09 "associated with the         ``run_id`` and every published
                              specific output package"            file's name, role and SHA-256
``thresholds``                3.3.09 "thresholds"                 ``gate``: name, threshold,
                                                                  measured value, passed
``risk_appetite``             3.3.09 "risk-appetite settings"     the verdict, ``not_checked``
``suppression_or_perturbation_rules``  3.3.09                     ``steps``: method and public
                                                                  parameters (no seed)
``guarantees``                3.3.06 "statistical basis"          each step's guarantees and the
                                                                  checker's verdict
``tool_versions``             3.3.09 "tool or configuration       sdckit's version and its
                              versions"                           dependencies' versions
``configuration``             3.3.09 "configuration parameters"   the public release spec
``model_requirements``        3.3.09 "model requirements"         empty: a microdata release holds
                                                                  no trained model
``output_checker``            3.3.05 responsibility for checking  empty: the steward's name is not
                                                                  known to sdckit
``process``                   3.3.04 documented process           empty unless given (a reference
                                                                  to the steward's own document)
============================  ==================================  =================================

A table release's certificate (``data.kind = "table"``) has no gate and no masking steps: its
``tables`` fill the same keys, each rule's thresholds and measured sensitive cells as
``thresholds``, the protection method and its public parameters as
``suppression_or_perturbation_rules``, the method's guarantees as ``guarantees`` and the audit's
status (exact, sampled, failed) beside the verdict in ``risk_appetite``.

References
----------
SATRE specification v2.0 (sa-tre/satre-specification, ``docs/source/spec/specification.yaml``),
requirements 3.3.04, 3.3.05, 3.3.06 and 3.3.09.
"""

from __future__ import annotations

__all__ = ["FORMAT", "satre_record", "SATRE_FIELDS"]

FORMAT = "sdckit-satre-record/1"
#: record key -> the SATRE requirement it serves
SATRE_FIELDS = {
    "output_package": "3.3.09", "thresholds": "3.3.09", "risk_appetite": "3.3.09",
    "suppression_or_perturbation_rules": "3.3.09", "guarantees": "3.3.06", "tool_versions": "3.3.09",
    "configuration": "3.3.09", "model_requirements": "3.3.09", "output_checker": "3.3.05", "process": "3.3.04",
}


def satre_record(certificate: dict, *, process: str | None = None, output_checker: str | None = None) -> dict:
    """The SATRE record of a release from its certificate's fields (a dict as
    :func:`sdckit.report.certificate.certificate_dict` makes it; no seed, no path).

    The fields SATRE names but sdckit cannot know (``output_checker``, ``process``) are
    ``null`` unless given; ``model_requirements`` is an empty list (no model is released).
    """
    files = [{"name": f.get("name"), "role": f.get("role"), "sha256": f.get("sha256")}
             for f in certificate.get("files", []) or []]
    tables = certificate.get("tables", []) or []
    thresholds = [{"name": g.get("name"), "threshold": g.get("threshold"), "measured": g.get("measured"),
                   "passed": g.get("passed")} for g in certificate.get("gate", []) or []]
    thresholds += [{"name": r.get("rule"), "table": t.get("file"), "threshold": r.get("thresholds"),
                    "measured": r.get("measured"), "passed": None} for t in tables for r in t.get("rules", []) or []]
    rules = [{"method": s.get("method"), "params": s.get("params")} for s in certificate.get("steps", []) or []]
    rules += [{"method": t.get("method"), "table": t.get("file"), "params": t.get("params")} for t in tables]
    guarantees = [{"method": s.get("method"), **g} for s in certificate.get("steps", []) or []
                  for g in s.get("guarantees", []) or []]
    guarantees += [{"method": t.get("method"), **g} for t in tables for g in t.get("guarantees", []) or []]
    appetite = {"verdict": certificate.get("verdict"), "passed": certificate.get("passed"),
                "not_checked": certificate.get("not_checked")}
    if tables:
        appetite["audits"] = [{"table": t.get("file"), **(t.get("audit") or {})} for t in tables]
    return {
        "format": FORMAT,
        "specification": "SATRE v2.0, requirement 3.3.09 (machine-readable disclosure-control record)",
        "satre_requirements": dict(SATRE_FIELDS),
        "output_package": {"run_id": certificate.get("run_id"), "created": certificate.get("created"),
                           "data_file": (certificate.get("data") or {}).get("file"),
                           "n_records": (certificate.get("data") or {}).get("n_records"), "files": files},
        "thresholds": thresholds,
        "risk_appetite": appetite,
        "suppression_or_perturbation_rules": rules,
        "guarantees": guarantees,
        "tool_versions": {"sdckit": certificate.get("sdckit_version"),
                          **(certificate.get("dependencies") or {})},
        "configuration": certificate.get("spec"),
        "model_requirements": [],
        "output_checker": output_checker,
        "process": process,
    }
