"""What an attack returns: its figure, its interval and the counts behind them.

Every result reads as one sentence (:meth:`sentence`, for the report: words, no JSON), as a
dict with stable keys (:meth:`to_dict`, for ``--json``) and as a short ``repr``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from ..result import ResultDisplay, jsonable
from .stats import excess_risk, excess_risk_error, wilson_rate

__all__ = ["AttackResult", "MembershipResult", "AttackReport", "attack_result"]

_TITLES = {"singling_out": "Singling out", "linkability": "Linkability", "inference": "Inference"}


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


@dataclass(frozen=True, repr=False)
class AttackResult(ResultDisplay):
    """One attack measured against its control (singling out, linkability or inference).

    Attributes
    ----------
    attack : str
        ``"singling_out"``, ``"linkability"`` or ``"inference"``.
    risk : float
        ``(r_train - r_control) / (1 - r_control)``, clipped to [0, 1].
    ci : (float, float)
        Its interval at ``confidence``.
    attack_rate, control_rate, baseline_rate : float
        Wilson estimates of the success on training records, on control records and of the
        naive attacker (random guesses) on training records.
    attack_error, control_error, baseline_error : float
        Half-widths of their intervals.
    n_attacks, n_success : int
        Attacks on training records and how many succeeded.
    n_control_attacks : int
        Attacks on control records; ``n_control`` their successes (fractional when corrected
        for a control file of another size).
    n_baseline_attacks, n_baseline : int
        The naive attacker's tries and successes.
    raw_risk : float
        The risk before clipping (negative when control records were attacked more easily).
    risk_error : float
        Half-width of the interval before clipping.
    settings : dict
        What the attacker knew and did (columns, mode, neighbours).
    notes : tuple of str
        Warnings in words (fewer queries than asked, an attack no better than guessing).
    seconds, cpu_seconds : float
        Time taken.
    """

    attack: str
    risk: float
    ci: tuple[float, float]
    confidence: float
    attack_rate: float
    attack_error: float
    control_rate: float
    control_error: float
    baseline_rate: float
    baseline_error: float
    n_attacks: int
    n_success: int
    n_control_attacks: int
    n_control: float
    n_baseline_attacks: int
    n_baseline: int
    raw_risk: float
    risk_error: float
    settings: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def __repr__(self) -> str:
        return (f"<AttackResult {self.attack} risk={self.risk:.4f} "
                f"ci=({self.ci[0]:.4f}, {self.ci[1]:.4f}) n_attacks={self.n_attacks}>")

    def to_dict(self) -> dict:
        return jsonable({
            "attack": self.attack, "risk": self.risk, "ci_low": self.ci[0], "ci_high": self.ci[1],
            "confidence": self.confidence, "raw_risk": self.raw_risk, "risk_error": self.risk_error,
            "attack_rate": self.attack_rate, "attack_error": self.attack_error,
            "control_rate": self.control_rate, "control_error": self.control_error,
            "baseline_rate": self.baseline_rate, "baseline_error": self.baseline_error,
            "n_attacks": self.n_attacks, "n_success": self.n_success,
            "n_control_attacks": self.n_control_attacks, "n_control": self.n_control,
            "n_baseline_attacks": self.n_baseline_attacks, "n_baseline": self.n_baseline,
            "settings": self.settings, "notes": list(self.notes),
            "seconds": self.seconds, "cpu_seconds": self.cpu_seconds})

    def sentence(self) -> str:
        """The attack, its figure and its interval in one sentence (plain text)."""
        lo, hi = self.ci
        tail = (f"the risk, the success beyond the control's as a share of what it left to gain, is "
                f"{self.risk:.3f} ({100 * self.confidence:.0f}% interval {lo:.3f} to {hi:.3f}).")
        s = self.settings
        if self.attack == "singling_out":
            what = ("single rare values" if s.get("mode") == "univariate"
                    else f"combinations of {s.get('n_cols')} columns")
            head = (f"Singling out: of {self.n_attacks:,} predicates written from the release on {what}, "
                    f"{_pct(self.attack_rate)} isolate exactly one original record and {_pct(self.control_rate)} "
                    f"one control record (random predicates: {_pct(self.baseline_rate)}); ")
        elif self.attack == "linkability":
            head = (f"Linkability: an intruder holding one file with {', '.join(s.get('aux_a', []))} and another "
                    f"with {', '.join(s.get('aux_b', []))} joins the two parts of {_pct(self.attack_rate)} of "
                    f"{self.n_attacks:,} original records through their nearest released records "
                    f"({_pct(self.control_rate)} of control records, {_pct(self.baseline_rate)} by chance); ")
        else:
            head = (f"Inference: guessing {s.get('secret')} from {', '.join(s.get('aux', []))} by the nearest "
                    f"released record is right for {_pct(self.attack_rate)} of {self.n_attacks:,} original "
                    f"records, {_pct(self.control_rate)} of control records and {_pct(self.baseline_rate)} by "
                    f"a random released value; ")
        note = (" " + " ".join(self.notes)) if self.notes else ""
        return head + tail + note

    def describe(self) -> str:
        return self.sentence()

    def report_html(self) -> str:
        return f"<p>{html.escape(self.sentence())}</p>"


@dataclass(frozen=True, repr=False)
class MembershipResult(ResultDisplay):
    """A membership-inference attack: whether the release tells its own records from others.

    Attributes
    ----------
    method : str
        ``"distance"`` (distance to the closest released record) or ``"density"`` (ratio of
        the release's density to a reference density).
    auc : float
        Mean area under the ROC curve over the groups (0.5: no better than chance).
    auc_ci : (float, float)
        Its interval at ``confidence`` from the groups (Student's t).
    fpr : float
        The false-positive rate at which the true-positive rate is read.
    tpr : float
        Mean true-positive rate at ``fpr``; ``tpr_ci`` its interval.
    n_members, n_nonmembers : int
        Targets scored (training records, control records), split into ``n_repeats``
        disjoint groups.
    aucs, tprs : tuple of float
        Per group.
    """

    method: str
    auc: float
    auc_ci: tuple[float, float]
    tpr: float
    tpr_ci: tuple[float, float]
    fpr: float
    confidence: float
    n_members: int
    n_nonmembers: int
    n_repeats: int
    aucs: tuple[float, ...] = ()
    tprs: tuple[float, ...] = ()
    settings: dict = field(default_factory=dict)
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    @property
    def attack(self) -> str:
        return f"membership_{self.method}"

    def __repr__(self) -> str:
        return (f"<MembershipResult {self.method} auc={self.auc:.4f} "
                f"ci=({self.auc_ci[0]:.4f}, {self.auc_ci[1]:.4f}) tpr@{self.fpr:g}={self.tpr:.4f}>")

    def to_dict(self) -> dict:
        return jsonable({
            "attack": self.attack, "method": self.method, "auc": self.auc, "auc_ci_low": self.auc_ci[0],
            "auc_ci_high": self.auc_ci[1], "fpr": self.fpr, "tpr": self.tpr, "tpr_ci_low": self.tpr_ci[0],
            "tpr_ci_high": self.tpr_ci[1], "confidence": self.confidence, "n_members": self.n_members,
            "n_nonmembers": self.n_nonmembers, "n_repeats": self.n_repeats, "aucs": list(self.aucs),
            "tprs": list(self.tprs), "settings": self.settings, "seconds": self.seconds,
            "cpu_seconds": self.cpu_seconds})

    def sentence(self) -> str:
        how = ("the distance to the closest released record" if self.method == "distance" else
               "how much denser the release is than other records of the population around a record")
        lo, hi = self.auc_ci
        tlo, thi = self.tpr_ci
        return (f"Membership inference by {how}: telling {self.n_members:,} records the release was made "
                f"from apart from {self.n_nonmembers:,} control records gives an area under the ROC curve "
                f"of {self.auc:.3f} ({100 * self.confidence:.0f}% interval {lo:.3f} to {hi:.3f}; 0.5 is "
                f"chance, 1 is certainty), and it finds {_pct(self.tpr)} of the members ({tlo:.3f} to "
                f"{thi:.3f}) when it may accuse {_pct(self.fpr)} of non-members wrongly "
                f"(mean of {self.n_repeats} seeded groups of targets).")

    def describe(self) -> str:
        return self.sentence()

    def report_html(self) -> str:
        return f"<p>{html.escape(self.sentence())}</p>"


@dataclass(frozen=True, repr=False)
class AttackReport(ResultDisplay):
    """Several attacks on one release with one control sample."""

    results: tuple[Any, ...]
    n_released: int
    n_original: int
    n_control: int
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def __repr__(self) -> str:
        shown = ", ".join(f"{r.attack}={getattr(r, 'risk', getattr(r, 'auc', None)):.3f}" for r in self.results)
        return f"<AttackReport {shown}>"

    def __getitem__(self, attack: str):
        for r in self.results:
            if r.attack == attack:
                return r
        raise KeyError(attack)

    def to_dict(self) -> dict:
        return jsonable({"n_released": self.n_released, "n_original": self.n_original,
                         "n_control": self.n_control, "seconds": self.seconds,
                         "cpu_seconds": self.cpu_seconds,
                         "attacks": [r.to_dict() for r in self.results]})

    def report_html(self) -> str:
        """The report section: what was attacked and one sentence per attack (HTML fragment)."""
        intro = (f"<p>An intruder holding the released file ({self.n_released:,} records) attacked "
                 f"{self.n_original:,} records the release was made from and, for comparison, "
                 f"{self.n_control:,} control records of the same population that it was not made from. "
                 "Each risk counts only the success beyond the control's: what the release reveals about "
                 "its own records, not what it teaches about the population.</p>")
        items = "".join(f"<li>{html.escape(r.sentence())}</li>" for r in self.results)
        return intro + f"<ul class='attacks'>{items}</ul>"

    def describe(self) -> str:
        return "\n".join(r.sentence() for r in self.results)


def attack_result(attack: str, *, n_success: int, n_attacks: int, n_control: float,
                  n_control_attacks: int, n_baseline: int, n_baseline_attacks: int,
                  confidence: float, settings: dict, notes: list[str], seconds: float,
                  cpu_seconds: float) -> AttackResult:
    """An :class:`AttackResult` from the three attacks' counts (Wilson rates, excess risk)."""
    train = wilson_rate(n_success, n_attacks, confidence)
    control = wilson_rate(n_control, n_control_attacks, confidence)
    base = wilson_rate(n_baseline, n_baseline_attacks, confidence)
    risk, ci, raw = excess_risk(train, control)
    notes = list(notes)
    if base.value >= train.value:
        notes.append("The attack did no better than random guessing, so this figure says little.")
    if control.value >= 1.0:
        notes.append("Every control record was attacked successfully: no excess can be measured.")
    return AttackResult(attack, risk, ci, confidence, train.value, train.error, control.value,
                        control.error, base.value, base.error, int(n_attacks), int(n_success),
                        int(n_control_attacks), float(n_control), int(n_baseline_attacks),
                        int(n_baseline), raw, excess_risk_error(train, control), dict(settings), tuple(notes),
                        seconds, cpu_seconds)
