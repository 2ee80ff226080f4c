"""The attack panel's work: the current branch's release attacked with a control split.

The workbench releases every record it holds, so no record is left over to serve as the
attacks' control. As Anonymeter's evaluations and ``benchmarks/compare_anonymeter.py`` do, the
panel therefore sets aside a seeded share of the records as control records, protects the
others with the branch's steps (the same steps and run seed as the release) and attacks that
release (:func:`sdckit.attacks.run_attacks`): the risk of each attack is its success on the
protected records beyond its success on the control records (Giomi et al. 2023), and
membership inference tells the protected records from the control ones (Stadler et al. 2022).
The published global recodings are applied to the records the intruder holds, as the gate's
attack thresholds do. Every figure is shown with its 95% interval in the attack's own sentence
(:meth:`sdckit.attacks.AttackResult.sentence`), the one the release report uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..microdata import Microdata

#: the attacks in the panel's order, with their names in words
ATTACK_NAMES = {"singling_out": "Singling out", "linkability": "Linkability", "inference": "Inference",
                "membership": "Membership inference"}


@dataclass(frozen=True)
class AttackRequest:
    """What the steward asked for on the attack panel (checked by :func:`attack_request`)."""

    aux: tuple[str, ...]
    secrets: tuple[str, ...]
    attacks: tuple[str, ...]
    n_attacks: int = 500
    control_share: float = 0.5
    seed: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)
    tie_break: str = "random"


#: the tie rules of the nearest-record attacks (linkability, inference; the attacks' declared
#: ``tie_break`` choices), in words
TIE_BREAK_WORDS = {
    "random": "one of the equally near released records at random (seeded with the attacks' seed)",
    "first": "the equally near released record that comes first in the release",
    "quicksort": "the one Anonymeter picks: its distances' float rounding and numpy's quicksort order "
                 "(figures comparable with Anonymeter's)",
}


def attack_request(body: dict, md: Microdata, offered: Sequence[str]) -> AttackRequest:
    """The request of ``body`` checked against the data: known columns, known attacks, numbers
    in range; one-line :class:`~sdckit.errors.InputError` otherwise.

    Defaults: the intruder knows the key variables and guesses the sensitive ones; inference is
    left out, with a note, when there is nothing to guess.
    """
    def names(key: str, default: Sequence[str]) -> tuple[str, ...]:
        v = body.get(key)
        if v in (None, "", []):
            return tuple(default)
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise InputError(f"{key}: give a list of column names")
        bad = [x for x in v if x not in offered]
        if bad:
            raise InputError(f"{key}: {', '.join(map(repr, bad))} is not a column of the released data")
        return tuple(dict.fromkeys(v))

    aux = names("aux", md.key_vars)
    if not aux:
        raise InputError("the attacks need what the intruder knows: set key variables (Roles page) or choose "
                         "the known columns")
    secrets = names("secret", [c for c in md.sensitive if c not in aux])
    attacks = body.get("attacks") or list(ATTACK_NAMES)
    if not isinstance(attacks, list) or any(a not in ATTACK_NAMES for a in attacks):
        raise InputError(f"attacks: choose from {', '.join(ATTACK_NAMES)}")
    notes = []
    if "inference" in attacks and not secrets:
        attacks = [a for a in attacks if a != "inference"]
        notes.append("Inference was not run: choose the column the intruder guesses (or declare a sensitive "
                     "variable on the Roles page).")
    if not attacks:
        raise InputError("choose at least one attack")
    overlap = [s for s in secrets if s in aux]
    if overlap:
        raise InputError(f"the guessed column(s) {', '.join(overlap)} cannot also be known to the intruder")
    try:
        n_attacks = int(body.get("n_attacks", 500))
        share = float(body.get("control_share", 0.5))
        seed = int(body.get("seed", 0))
    except (TypeError, ValueError):
        raise InputError("attacks per kind, the control share and the seed must be numbers") from None
    if not 10 <= n_attacks <= 100_000:
        raise InputError(f"attacks per kind: must be between 10 and 100,000, got {n_attacks}")
    if not 0.05 <= share <= 0.95:
        raise InputError(f"share of records set aside as control: must be between 5% and 95%, got {100 * share:g}%")
    if seed < 0:
        raise InputError(f"seed of the attacks: must be a whole number >= 0, got {seed}")
    tie_break = body.get("tie_break") or "random"
    if tie_break not in TIE_BREAK_WORDS:
        raise InputError(f"equally near records: choose one of {', '.join(TIE_BREAK_WORDS)}, got {tie_break!r}")
    n_control = int(round(md.n_records * share))
    if min(n_control, md.n_records - n_control) < 20:
        raise InputError(f"{md.n_records:,} records are too few to set aside control records: each part needs 20")
    return AttackRequest(aux, secrets, tuple(a for a in ATTACK_NAMES if a in attacks), n_attacks, share, seed,
                         tuple(notes), tie_break)


def split_records(md: Microdata, share: float, seed: int) -> tuple[Microdata, Microdata]:
    """(protected part, control part): a seeded random ``share`` of the records as control, the
    rest to be protected, each in its original order. The seed is the attacks' own (not the
    release's secret seed)."""
    n = md.n_records
    n_control = int(round(n * share))
    order = np.random.default_rng(seed).permutation(n)
    control_rows, kept_rows = np.sort(order[:n_control]), np.sort(order[n_control:])
    roles = {k: v for k, v in md.roles.items() if v}

    def part(rows: np.ndarray) -> Microdata:
        return Microdata(md.frame.iloc[rows].reset_index(drop=True), meta=md.meta, **roles)

    return part(kept_rows), part(control_rows)


def run_attack_panel(md: Microdata, steps: Sequence[Any], run_seed: Any, req: AttackRequest,
                     progress: Callable[[int, int, str], None]) -> dict:
    """Protect the records not set aside with ``steps`` and attack the release.

    ``progress(done, total, message)`` is called before each step and each attack (a job's
    cancel check). Returns the panel: an introduction, one row per attack (its name, figure,
    95% interval and the attack's own sentence) and the notes.
    """
    from ..attacks import run_attacks
    from ..registry import published_recodes
    from ..runner import run_steps

    kept, control = split_records(md, req.control_share, req.seed)
    total = len(steps) + len(req.attacks)
    progress(0, total, "protecting the records not set aside")

    def on_step(i: int, step: Any, result: Any, seconds: float) -> None:
        progress(i + 1, total, f"step {i + 1} of {len(steps)} done")

    run = run_steps(kept, steps, run_seed, on_step=on_step)
    released = run.released
    for step in published_recodes(run.results):  # the intruder applies the published recodings
        kept = step.apply(kept).microdata
        control = step.apply(control).microdata
    shared = set(released.columns) & set(kept.columns) & set(control.columns)
    missing = [c for c in (*req.aux, *req.secrets) if c not in shared]
    if missing:
        raise InputError(f"the column(s) {', '.join(missing)} are not in the release (removed by a step); "
                         "choose others")
    rows: list[dict] = []
    for j, attack in enumerate(req.attacks):
        progress(len(steps) + j, total, f"attack: {ATTACK_NAMES[attack].lower()}")
        # one attack per call, each from the child stream run_attacks gives it for this seed:
        # the same figures as one call with every attack, with a cancel check in between
        rep = run_attacks(kept, released, control, aux=list(req.aux), secret=list(req.secrets) or None,
                          attacks=[attack], n_attacks=req.n_attacks, rng=req.seed, tie_break=req.tie_break)
        for r in rep.results:
            rows.append(attack_row(r))
    progress(total, total, "attacks done")
    intro = (f"{control.n_records:,} of the {md.n_records:,} records (a seeded {100 * req.control_share:g}%) were "
             f"set aside as control records; the other {kept.n_records:,} were protected with this branch's "
             f"{len(steps)} step{'s' if len(steps) != 1 else ''} and the release was attacked by an intruder who "
             f"knows {', '.join(req.aux)}"
             + (f" and guesses {', '.join(req.secrets)}" if req.secrets else "")
             + (f". Among equally near records the linkability and inference attacks take "
                f"{TIE_BREAK_WORDS[req.tie_break]}" if {"linkability", "inference"} & set(req.attacks) else "")
             + ". Each risk counts only the "
             "success beyond that on the control records: what the release reveals about its own records, not "
             "what it teaches about the population.")
    return {"intro": intro, "attacks": rows, "notes": list(req.notes), "tie_break": req.tie_break,
            "n_protected": kept.n_records,
            "n_control": control.n_records}


def attack_row(r: Any) -> dict:
    """One attack result as the panel shows it: name, figure, 95% interval, sentence."""
    if hasattr(r, "auc"):
        return {"attack": r.attack, "name": f"Membership inference ({'distance' if r.method == 'distance' else 'density'})",
                "figure": "area under the ROC curve", "value": float(r.auc), "low": float(r.auc_ci[0]),
                "high": float(r.auc_ci[1]), "confidence": float(r.confidence), "chance": 0.5,
                "sentence": r.sentence()}
    name = ATTACK_NAMES.get(r.attack, r.attack)
    if r.attack == "inference":
        name += f" of {r.settings.get('secret')}"
    return {"attack": r.attack, "name": name, "figure": "risk beyond the control records",
            "value": float(r.risk), "low": float(r.ci[0]), "high": float(r.ci[1]),
            "confidence": float(r.confidence), "chance": 0.0, "sentence": r.sentence()}


__all__ = ["ATTACK_NAMES", "AttackRequest", "attack_request", "split_records", "run_attack_panel", "attack_row"]
