"""Gate thresholds on attacks: ``max_singling_out``, ``max_linkability``, ``max_inference``
and ``max_mia_auc``.

An attack needs control records: records of the same population that the release was not made
from. The gate cannot make them (every input record is released), so the steward sets them
aside before the release and names the file in the threshold's table::

    [gate]
    max_singling_out = { risk = 0.05, control_file = "control.csv" }
    max_inference = { risk = 0.10, control_file = "control.csv", secret = ["Health"] }
    max_mia_auc = { auc = 0.60, control_file = "control.csv" }

The control file has the input's columns and is read like it (``na_values`` as in
``[input]``); a relative path is taken from the input file's folder. The release's published
global recodings are applied to the original and the control records first, since an intruder
applies them to what they know. A threshold passes when the *upper end* of the figure's 95%
interval is at most the threshold: the release passes only when the attack is shown to stay
below it. The attack's own sampling (targets, predicates, tie-breaks) is seeded by ``seed``,
which is not the release's secret seed and reveals nothing about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validation import param_error
from ..errors import InputError
from ..microdata import Microdata
from ..params import check_params, param
from ..registry import GateCheck, GateOutcome, measured_words, published_recodes, register_gate_check
from ..result import StepResult

__all__ = ["AttackGateCheck", "ExcessRiskGateCheck", "MaxSinglingOut", "MaxLinkability", "MaxInference", "MaxMiaAuc",
           "ATTACK_GATES", "attack_section_html"]

#: the gate thresholds of this module
ATTACK_GATES = ("max_singling_out", "max_linkability", "max_inference", "max_mia_auc")

_CONTROL_HELP = ("records of the same population that the release was not made from, with the "
                 "input's columns (relative paths from the input file's folder)")


def _control_rule(name: str) -> str:
    return (f'a table such as {name} = {{ ..., control_file = "control.csv" }}: the attack needs control '
            "records of the same population that the release was not made from")


def _load(check, original: Microdata, released: Microdata, results: Sequence[StepResult]):
    """Original and control records as the intruder sees them (published recodes applied)."""
    from ..io.files import read_microdata

    path = Path(check.control_file).expanduser()
    if not path.is_absolute() and original.meta.source:
        path = Path(original.meta.source).parent / path
    if not path.exists():
        raise InputError(f"gate.{check.gate_name}.control_file: {path.name}: no such file; the attack needs "
                         "control records of the same population that the release was not made from.")
    roles = {k: v for k, v in original.roles.items() if v}
    control = read_microdata(path, na_values=list(check.na_values) or None, **roles)
    missing = [c for c in released.columns if c in original.columns and c not in control.columns]
    if missing:
        raise InputError(f"gate.{check.gate_name}.control_file: {path.name} lacks the released column(s) "
                         f"{missing}; it must have the input's columns.")
    for step in published_recodes(results):  # the intruder applies the published recodings
        original = step.apply(original).microdata
        control = step.apply(control).microdata
    return original, control


def _outcome(check, threshold: float, result, value_key: str, upper: float) -> GateOutcome:
    ok = upper <= threshold
    value = result.to_dict()
    value["sentence"] = result.sentence()
    figure = "AUC" if value_key == "auc" else "risk"
    detail = (f"{result.attack.replace('_', ' ')} {figure} {getattr(result, value_key):.3f}, upper end of its "
              f"95% interval {upper:.3f} {'<=' if ok else '>'} {threshold:g}")
    if not ok:
        detail += "; protect the release further (or attack more records to narrow the interval)"
    return GateOutcome(check.gate_name, threshold, value, ok, detail)


def attack_words(measured: Any) -> str:
    """An attack's measured value for a person: the attack's own sentence (its rates, the risk
    and its 95% interval in words), else its figures in words; never JSON."""
    if isinstance(measured, dict) and measured.get("sentence"):
        return str(measured["sentence"])
    return measured_words(measured, {"risk": ("risk beyond the control records", None),
                                     "ci_high": ("upper end of its 95% interval", None),
                                     "auc": ("area under the ROC curve", None),
                                     "auc_ci_high": ("upper end of its 95% interval", None)})


@dataclass(frozen=True, kw_only=True)
class AttackGateCheck(GateCheck):
    """The parameters every attack threshold shares: the control file, its missing codes and
    the attack's seed. Keyword-only, so that each subclass's threshold stays the first declared
    parameter (the registry's threshold-first rule)."""

    control_file: str | None = param(None, kind="path", nullable=True, help=_CONTROL_HELP)
    na_values: tuple = param((), kind="any", help="codes of the control file that mean missing, as [input] na_values",
                             advanced=True)
    seed: int = param(0, kind="int", low=0, help="seed of the attack's own sampling (not the release's seed)",
                      advanced=True)

    @classmethod
    def measured_sentence(cls, measured: Any) -> str:
        return attack_words(measured)

    def __post_init__(self) -> None:
        check_params(self)
        if self.control_file is None:
            raise param_error(type(self).__name__, "control_file", _control_rule(self.gate_name), None)

    @staticmethod
    def report_section(outcomes) -> tuple[str, str]:
        """The release report's section for the attack thresholds: (title, HTML fragment)."""
        return attack_report_section(outcomes)


@dataclass(frozen=True, kw_only=True)
class ExcessRiskGateCheck(AttackGateCheck):
    """An attack measured as its success beyond the control's (Giomi et al. 2023): also the
    number of predicates or target records."""

    n_attacks: int = param(500, kind="int", low=10, help="predicates written from the release (singling out) "
                           "or target records (linkability, inference)", advanced=True)


@register_gate_check("max_singling_out")
@dataclass(frozen=True)
class MaxSinglingOut(ExcessRiskGateCheck):
    """Singling-out risk against control records at most the threshold (upper end of its interval).

    References
    ----------
    Giomi, M. et al. (2023). A unified framework for quantifying privacy risk in synthetic
    data. *PETS* 2023(2), sec. 4.1.
    """

    risk: float = param(kind="float", low=0.0, high=1.0, label="largest singling-out risk",
                        unit="share", help="excess share of predicates from the release that isolate one record")
    mode: str = param("multivariate", kind="choice", choices=("multivariate", "univariate"),
                      help="predicates on combinations of columns, or on single rare values")
    n_cols: int = param(3, kind="int", low=1, help="columns per multivariate predicate", advanced=True)

    def check(self, original: Microdata, released: Microdata, results: Sequence[StepResult]) -> GateOutcome:
        from .singling import singling_out

        original, control = _load(self, original, released, results)
        res = singling_out(original, released, control, mode=self.mode, n_attacks=self.n_attacks,
                           n_cols=self.n_cols, rng=self.seed)
        return _outcome(self, self.risk, res, "risk", res.ci[1])


@register_gate_check("max_linkability")
@dataclass(frozen=True)
class MaxLinkability(ExcessRiskGateCheck):
    """Linkability risk against control records at most the threshold (upper end of its interval).

    References
    ----------
    Giomi, M. et al. (2023). A unified framework for quantifying privacy risk in synthetic
    data. *PETS* 2023(2), sec. 4.2.
    """

    risk: float = param(kind="float", low=0.0, high=1.0, label="largest linkability risk", unit="share",
                        help="excess share of records whose two parts the release links")
    aux_a: tuple = param((), kind="columns", help="columns of the intruder's first file (default: the first "
                         "half of the key variables)")
    aux_b: tuple = param((), kind="columns", help="columns of the intruder's second file (default: the other "
                         "key variables)")
    n_neighbors: int = param(1, kind="int", low=1, help="released records looked up per part", advanced=True)
    tie_break: str = param("random", kind="choice", choices=("random", "first", "quicksort"),
                           help="among equally near released records: one at random (seeded), the lowest "
                           "released row, or the one Anonymeter keeps (its distance and quicksort order)",
                           advanced=True)

    def check(self, original: Microdata, released: Microdata, results: Sequence[StepResult]) -> GateOutcome:
        from .linking import linkability, split_columns

        aux_a, aux_b = self.aux_a, self.aux_b
        if not aux_a or not aux_b:
            keys = [c for c in released.key_vars if c in released.columns]
            if len(keys) < 2:
                raise InputError(f"gate.{self.gate_name}: name aux_a and aux_b (the columns of the intruder's "
                                 "two files); the data have fewer than two key variables to split.")
            aux_a, aux_b = split_columns(keys)
        original, control = _load(self, original, released, results)
        res = linkability(original, released, control, aux_a=aux_a, aux_b=aux_b, n_attacks=self.n_attacks,
                          n_neighbors=self.n_neighbors, rng=self.seed, tie_break=self.tie_break)
        return _outcome(self, self.risk, res, "risk", res.ci[1])


@register_gate_check("max_inference")
@dataclass(frozen=True)
class MaxInference(ExcessRiskGateCheck):
    """Inference risk of each secret column against control records at most the threshold.

    References
    ----------
    Giomi, M. et al. (2023). A unified framework for quantifying privacy risk in synthetic
    data. *PETS* 2023(2), sec. 4.3.
    """

    risk: float = param(kind="float", low=0.0, high=1.0, label="largest inference risk", unit="share",
                        help="excess share of secrets guessed right from the release")
    secret: tuple = param((), kind="columns", help="columns the intruder guesses (default: the sensitive "
                          "variables)")
    aux: tuple = param((), kind="columns", help="columns the intruder knows (default: the key variables)")
    tolerance: float = param(0.05, kind="float", low=0.0, unit="share", help="largest relative error of a right "
                             "guess of a numeric secret", advanced=True)
    relative_to: str = param("guess", kind="choice", choices=("guess", "secret"),
                             help="what the tolerance is relative to: the guess (Anonymeter's rule) or the "
                             "secret", advanced=True)
    tie_break: str = param("random", kind="choice", choices=("random", "first", "quicksort"),
                           help="among equally near released records: one at random (seeded), the lowest "
                           "released row, or the one Anonymeter keeps (its distance and quicksort order)",
                           advanced=True)

    def check(self, original: Microdata, released: Microdata, results: Sequence[StepResult]) -> GateOutcome:
        import numpy as np

        from .inferring import inference

        secrets = [s for s in (self.secret or released.sensitive)]
        if not secrets:
            raise InputError(f"gate.{self.gate_name}: name the secret column(s) (secret = [...]) or give the "
                             "data a sensitive variable ([roles] sensitive).")
        aux = list(self.aux or released.key_vars)
        original, control = _load(self, original, released, results)
        worst = None
        rng = np.random.default_rng(self.seed)
        for s, child in zip(secrets, rng.spawn(len(secrets))):
            res = inference(original, released, control, secret=s, aux=[c for c in aux if c != s],
                            n_attacks=self.n_attacks, rng=child, tie_break=self.tie_break,
                            tolerance=self.tolerance, relative_to=self.relative_to)
            if worst is None or res.ci[1] > worst.ci[1]:
                worst = res
        out = _outcome(self, self.risk, worst, "risk", worst.ci[1])
        return out


@register_gate_check("max_mia_auc")
@dataclass(frozen=True)
class MaxMiaAuc(AttackGateCheck):
    """Membership inference no better than the threshold AUC (upper end of its interval).

    References
    ----------
    Stadler, T., Oprisanu, B. and Troncoso, C. (2022). Synthetic data - anonymisation
    groundhog day. *USENIX Security* 2022, sec. 4.
    """

    auc: float = param(kind="float", low=0.5, high=1.0, label="largest membership-inference AUC",
                       unit="AUC", help="area under the ROC curve of telling released records from others "
                       "(0.5 is chance)")
    method: str = param("distance", kind="choice", choices=("distance", "density"),
                        help="distance to the closest released record, or the density ratio (DOMIAS)")
    n_targets: int = param(1000, kind="int", low=10, help="members and non-members scored", advanced=True)
    n_repeats: int = param(5, kind="int", low=2, help="disjoint seeded groups of targets behind the interval",
                           advanced=True)

    def check(self, original: Microdata, released: Microdata, results: Sequence[StepResult]) -> GateOutcome:
        from .membership import membership_inference

        original, control = _load(self, original, released, results)
        res = membership_inference(original, released, control, method=self.method, n_targets=self.n_targets,
                                   n_repeats=self.n_repeats, rng=self.seed)
        return _outcome(self, self.auc, res, "auc", res.auc_ci[1])


def attack_section_html(outcomes) -> str:
    """The report section of a release's attack thresholds (HTML fragment; empty without
    one): one sentence per attack, with its figure and interval, and the verdict."""
    import html

    items = []
    for o in outcomes:
        if getattr(o, "name", None) in ATTACK_GATES and isinstance(o.value, dict) and "sentence" in o.value:
            verdict = "passed" if o.passed else "FAILED"
            items.append(f"<li>{html.escape(o.value['sentence'])} <strong>Threshold {o.threshold:g}: "
                         f"{verdict}</strong> (the upper end of the interval is compared).</li>")
    if not items:
        return ""
    return ("<p>An intruder holding the released file attacked the records it was made from and, for "
            "comparison, control records of the same population that it was not made from; each figure "
            "counts only the success beyond the control's.</p><ul class='attacks'>" + "".join(items) + "</ul>")


def attack_report_section(outcomes) -> tuple[str, str]:
    """The release report's section for the attack thresholds: (title, HTML fragment)."""
    return "Privacy attacks", attack_section_html(outcomes)

