"""The ``pram`` release step, the ``Evolved`` matrix type and the ``min_diagonal`` gate check.

A release spec step::

    [[steps]]
    method = "pram"
    variables = ["region", "occupation"]
    matrix = { type = "invariant", alpha = 1.0 }   # identity | max_entropy | invariant | file
                                                   # | evolved | optimal, with its own settings
    min_diagonal = 0.8          # a guarantee on the final matrix, every category
    strata = ["sex"]            # one matrix per stratum (optional)
    joint = false               # true: one matrix over the combinations of the variables

In Python: ``Pram(["region"], matrix=Optimal(alpha=0.1), joint=True)``.

The release writes each matrix next to the data (``pram_<variables>[_<stratum>].csv`` and
``.json``) so analysts can undo PRAM (:func:`sdckit.pram.estimate.estimate_frequencies`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._random import seed_sequence, spawn_keyed
from .._validation import close_names
from ..errors import InputError
from ..microdata import Microdata
from ..params import check_params, flat_form_problem, param, step_params, variant_value
from ..registry import GateCheck, GateOutcome, register_gate_check, register_step
from ..result import Guarantee, StepResult
from .apply import code_counts, group_names, pram_frame_codes, transition_counts
from .builders import Invariant, MatrixContext, joint_codes, matrix_types, register_matrix_type
from .loss import hellinger, total_variation
from .matrix import ROW_TOLERANCE, TransitionMatrix, invariance_error

try:  # optimal PRAM registers its builder on import, when present
    from . import optimal  # noqa: F401
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the checkout
    if exc.name != f"{__package__}.optimal":
        raise

#: tolerance of the invariance check p P = p (relative frequencies)
INVARIANCE_TOLERANCE = 1e-9


@register_matrix_type("evolved")
@dataclass(frozen=True)
class Evolved:
    """Marés & Shlomo's (2014) evolutionary invariant matrix: a genetic search over invariant
    matrices for the least weighted risk and utility loss (sdckit.pram.evolve)."""

    d_min: float | None = param(None, kind="float", low=0.5, high=1.0, low_open=True, nullable=True,
                                help="smallest diagonal (default: the step's min_diagonal, else 0.8)")
    d_max: float | None = param(None, kind="float", low=0.5, high=1.0, low_open=True, nullable=True,
                                help="largest diagonal (default max(0.99, d_min))")
    risk_weight: float = param(0.5, kind="float", low=0.0, high=1.0, symbol="w",
                               help="weight of risk against utility in the fitness")
    generations: int = param(200, kind="int", low=1, help="generations")
    population: int = param(50, kind="int", low=4, help="population size")
    pareto: bool = param(False, kind="bool",
                         help="also keep the non-dominated (risk, utility loss) matrices seen")

    def __post_init__(self) -> None:
        check_params(self)
        if self.d_min is not None or self.d_max is None:  # else checked with the step's min_diagonal
            self.search(None)  # EvolvePRAM validates its own bounds (d_min <= d_max)

    def search(self, min_diagonal: float | None):
        """The evolutionary search with this type's settings for a step promising ``min_diagonal``."""
        from .evolve import EvolvePRAM

        d_min = self.d_min if self.d_min is not None else (min_diagonal if min_diagonal is not None else 0.8)
        d_max = self.d_max if self.d_max is not None else max(0.99, d_min)
        return EvolvePRAM(d_min=d_min, d_max=d_max, risk_weight=self.risk_weight, generations=self.generations,
                          population=self.population, pareto=self.pareto)

    def build(self, context: MatrixContext) -> tuple[TransitionMatrix, dict]:
        """The evolved matrix for this context.

        The search runs over the observed categories; categories without records keep their
        value (row e_k), which keeps invariance. The other key variables form the risk table.
        """
        from .evolve import Problem

        v = context.codes()
        keep = v >= 0
        observed = np.flatnonzero(context.counts > 0)
        J = context.n_categories
        if observed.size < 2:
            raise InputError(f"pram (evolved): {list(context.variables)} has fewer than 2 categories with "
                             "records in this stratum; nothing to evolve.")
        compact = np.full(J, -1, dtype=np.int64)
        compact[observed] = np.arange(observed.size)
        md = context.microdata
        others = [md.codes(k)[context.rows][keep] for k in md.key_vars if k not in context.variables]
        problem = Problem.from_codes(compact[v[keep]], others, observed.size)
        ea = self.search(context.min_diagonal)
        res = ea.run(problem, rng=context.rng)
        X = np.eye(J)
        X[np.ix_(observed, observed)] = res.matrix
        X = np.maximum(X, 0.0)
        X /= X.sum(axis=1, keepdims=True)
        m = TransitionMatrix(context.categories, X, tuple(context.variables), "evolved")
        front = [[float(r), float(u)] for r, u, _ in res.pareto]
        return m, {"invariant": True, "min_diagonal": ea.d_min, "builder": "evolved", "d_max": ea.d_max,
                   "risk_weight": self.risk_weight, "front": front, **res.to_dict()}


def _evolved_report_section(ev: dict) -> str:
    """Report section of an evolved matrix: its fitness terms, the search's evidence and, with
    ``pareto = true``, the risk-utility front of non-dominated matrices."""
    from ..report.plots import figure_to_html, new_figure

    f = ev.get("fitness") or {}
    rows = [("fitness = w R + (1 - w) U", f.get("fitness")), ("risk R (expected correct matches / sample uniques)",
            f.get("risk")), ("utility loss U (Hellinger / reference matrix's)", f.get("utility_loss")),
            ("expected correct matches", f.get("expected_matches")), ("Hellinger distance", f.get("hellinger")),
            ("variance inflation of t* X^-1", ev.get("variance_inflation")),
            ("largest |change of Cramer's V| with another key",
             max((abs(x) for x in ev.get("cramers_v_change") or []), default=None)),
            ("diagonal bounds", f"[{ev.get('min_diagonal')}, {ev.get('d_max')}]"),
            ("generations run", ev.get("generations")),
            ("largest invariance error over every matrix produced", ev.get("max_invariance_error"))]
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(f'{v:.6g}' if isinstance(v, float) else str(v))}</td></tr>"
                   for k, v in rows if v is not None)
    out = ("<p>Evolved invariant matrix (Marés &amp; Shlomo), risk weight w = "
           f"{ev.get('risk_weight')}.</p><table class='kv'>{body}</table>")
    front = ev.get("front") or []
    if front:
        pts = np.asarray(front, dtype=float)
        fig, ax = new_figure(5, 3.5)
        ax.scatter(pts[:, 1], pts[:, 0], s=14, label="non-dominated matrices")
        if f:
            ax.scatter([f.get("utility_loss")], [f.get("risk")], marker="*", s=120, color="tab:red", label="chosen")
        ax.set_xlabel("utility loss U")
        ax.set_ylabel("risk R")
        ax.legend(fontsize=7)
        out += figure_to_html(fig, "risk-utility front of the evolved matrices")
    return out


def _builder_report_section(ev: dict) -> str:
    """The report section a matrix builder provides for its evidence, if any."""
    if ev.get("builder") == "evolved":
        return _evolved_report_section(ev)
    if "figure1" in ev:  # optimal PRAM's evidence
        try:
            from .optimal import report_section
        except ImportError:  # pragma: no cover
            return ""
        return report_section(ev)
    return ""


@dataclass(frozen=True)
class PramResult(StepResult):
    """PRAM result: every matrix (per variable group and stratum), the transition counts
    (original x released), the before/after frequencies and the builders' evidence.

    Keys of the dicts are ``(variables tuple, stratum label)``; the stratum is ``"all"``
    without strata.
    """

    matrices: dict = field(default_factory=dict)
    transitions: dict = field(default_factory=dict)
    before: dict = field(default_factory=dict)
    after: dict = field(default_factory=dict)
    evidence: dict = field(default_factory=dict)

    _headline = ("n_records", "n_changed", "n_matrices", "min_diagonal", "guarantees_held")

    @property
    def n_records(self) -> int:
        return int(self.summary.get("records", self.microdata.n_records))

    @property
    def n_changed(self) -> int:
        """Values changed by PRAM, over every variable group."""
        return int(sum(self.summary.get("changed", {}).values()))

    @property
    def n_matrices(self) -> int:
        return len(self.matrices)

    @property
    def min_diagonal(self) -> float | None:
        """The smallest keep probability over every published matrix."""
        return min((float(m.min_diagonal) for m in self.matrices.values()), default=None)

    def report_html(self) -> str:
        from ..report.plots import figure_to_html, new_figure

        parts = [super().report_html()]
        for key, m in self.matrices.items():
            group, stratum = key
            title = " x ".join(group) + ("" if stratum == "all" else f" (stratum {stratum})")
            b, a = self.before[key], self.after[key]
            share = m.expected_change_share(b) if b.sum() > 0 else 0.0
            parts.append(f"<h4>PRAM matrix: {html.escape(title)}</h4><p>{m.n_categories} categories, "
                         f"minimum diagonal {m.min_diagonal:.4f}, expected share of changed records "
                         f"{share:.4f}.</p>")
            if m.n_categories <= 40:
                P = m.to_dense()
                fig, ax = new_figure(min(2 + 0.35 * m.n_categories, 9), min(1.6 + 0.3 * m.n_categories, 8))
                im = ax.imshow(P, cmap="viridis", vmin=0, vmax=1)
                labels = [str(c) for c in m.categories]
                ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
                ax.set_yticks(range(len(labels)), labels, fontsize=7)
                ax.set_xlabel("released")
                ax.set_ylabel("original")
                fig.colorbar(im, ax=ax, label="P(released | original)")
                parts.append(figure_to_html(fig, f"PRAM matrix heat map {title}"))
            else:
                parts.append("<p>(too many categories for a heat map; the matrix is published as a file)</p>")
            order = np.argsort(-b, kind="stable")[:40]
            rows = "".join(f"<tr><td>{html.escape(str(m.categories[k]))}</td><td>{int(b[k])}</td>"
                           f"<td>{int(a[k])}</td><td>{m.diagonal[k]:.4f}</td></tr>" for k in order)
            parts.append("<table class='freq'><tr><th>category</th><th>before</th><th>after</th>"
                         f"<th>P(kept)</th></tr>{rows}</table>")
            parts.append(_builder_report_section(self.evidence.get(key, {})))
        if self.matrices:
            files = ", ".join(f"<code>{html.escape(n)}</code>" for n in sorted(self.artifacts) if n.endswith(".csv"))
            parts.append(
                "<h4>For analysts: undoing PRAM in estimates</h4>"
                "<p>The matrices are published with the data" + (f" ({files})" if files else "") + ". "
                "Row <i>k</i> gives the probabilities that a record whose true category is <i>k</i> "
                "was released in each category. Unbiased estimates of the original frequencies are "
                "t&#770; = t* P<sup>-1</sup> (t* the released counts), also within groups of unperturbed "
                "variables; from the command line: <code>sdckit estimate released.csv --matrix "
                "pram_&lt;variable&gt;.csv [--by other,variables]</code>, or in Python "
                "<code>sdckit.pram.estimate.estimate_frequencies(frame, TransitionMatrix.read(path), "
                "by=[...])</code>, which also gives standard errors and a maximum-likelihood estimate "
                "when the moment estimate has negative cells.</p>")
        return "".join(parts)


def _as_written(m: TransitionMatrix) -> TransitionMatrix:
    """The matrix with its labels as the released data file writes the values: a key read
    with missing values is a float column, and the writer writes its whole-number codes as
    integers (3.0 as 3), so the published labels are too, or ``sdckit verify`` and an
    analyst's estimate would not find the released values among the matrix's categories."""
    cats = list(m.categories)
    if not cats:
        return m
    width = len(cats[0]) if isinstance(cats[0], tuple) else 0
    parts = [[c[i] for c in cats] for i in range(width)] if width else [cats]

    def whole(values) -> bool:
        return all(isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer()
                   for v in values)

    as_int = [whole(values) for values in parts]
    if not any(as_int):
        return m
    fixed = [[int(v) for v in values] if conv else values for values, conv in zip(parts, as_int)]
    labels = list(zip(*fixed)) if width else fixed[0]
    return TransitionMatrix(tuple(labels), m.P, m.variables, m.name)


def _slug(text: Any) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-") or "x"


@dataclass(frozen=True)
class PramPlan:
    """What :meth:`Pram.build_matrices` hands to the drawing and the checks: the variable
    groups, categories per variable, stratum ids and labels, the checked matrix and the
    builder's evidence per (group, stratum index), and each group's joint codes before PRAM."""

    groups: tuple
    shapes: dict
    strata_ids: np.ndarray | None
    label_of: dict
    matrices: dict
    evidence: dict
    joint_before: dict


@register_step("pram", engines=("memory", "dask"))
@dataclass(frozen=True)
class Pram:
    """Post-randomisation (PRAM) of categorical key variables with a published matrix.

    Parameters
    ----------
    variables : list of str
        Key variables to PRAM.
    matrix : Invariant, MaxEntropy, Identity, File, Evolved, Optimal or any registered type
        How each matrix is built, with that builder's own settings:
        ``Invariant(alpha=1.0, base="proportional")`` (default), ``MaxEntropy()``,
        ``Identity()``, ``File(file=...)``, ``Evolved(risk_weight=..., ...)``,
        ``Optimal(alpha=...)`` (Cator et al.). In a spec an inline table:
        ``matrix = { type = "optimal", alpha = 0.1 }``.
    min_diagonal : float in (0, 1), optional
        Every diagonal entry of every final matrix is at least this, whatever the builder
        (checked; the step stops with an error if the matrix does not meet it). It is also the
        target of the builders that have one: the keep probability d of ``MaxEntropy``, the
        final diagonal of ``Invariant``, the smallest diagonal of ``Evolved`` (default 0.8).
    strata : list of str
        One matrix per combination of these columns (missing forms its own stratum).
    joint : bool
        One matrix over the joint space of all ``variables`` (C order); sparse when large.

    Notes
    -----
    Missing values are never changed. Guarantees checked on the output by
    :func:`check_pram`: rows of every matrix sum to 1, entries >= 0, missing values
    unchanged, every change has P > 0, minimum diagonal >= ``min_diagonal`` and, for
    invariant methods, p P = p for the frequencies the matrix was built for.

    :meth:`apply` has three parts: :meth:`build_matrices` (one matrix per variable group and
    stratum), :meth:`draw` (the released codes) and :meth:`describe_result` (the independent
    checks, the published files and the public figures).

    References
    ----------
    Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. and de Wolf, P.-P. (1998). Post
    randomisation for statistical disclosure control. *Journal of Official Statistics* 14(4).
    Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
    Marés, J. and Shlomo, N. (2014). *CSDA* 79, 1-13.
    """

    variables: Sequence[str] = param(kind="columns", role="pram", label="variables to PRAM",
                                     help="key variables to PRAM")
    matrix: Any = param(Invariant(), kind="variant", variants=matrix_types, label="matrix builder",
                        help="how each matrix is built, with that builder's own settings")
    min_diagonal: float | None = param(None, kind="float", low=0.0, high=1.0, low_open=True,
                                       high_open=True, nullable=True, symbol="d",
                                       grid=(0.6, 0.7, 0.8, 0.9),
                                       help="every diagonal entry of every final matrix is at "
                                            "least this (the target of invariant, max_entropy and "
                                            "evolved; default 0.8)")
    strata: Sequence[str] = param((), kind="columns", nullable=True,
                                  help="one matrix per combination of these columns")
    joint: bool = param(False, kind="bool",
                        help="one matrix over the joint space of all variables")

    #: keys of the flat form of earlier specs (builder settings beside the step's own)
    FLAT_KEYS: ClassVar[tuple[str, ...]] = ("alpha", "base", "file", "combinations", "gamma", "support",
                                            "d_min", "d_max", "risk_weight", "generations", "population",
                                            "pareto")

    def __post_init__(self) -> None:
        check_params(self)
        if self.strata is None:
            object.__setattr__(self, "strata", ())
        if isinstance(self.matrix, Evolved) and self.matrix.d_min is None:
            self.matrix.search(self.min_diagonal)  # d_min follows min_diagonal: bounds checked together

    @classmethod
    def spec_form_problem(cls, params: dict) -> str | None:
        """Why a spec table of this step is in the flat form of earlier specs (a builder name
        in ``matrix`` and its settings beside it), with the table to write instead; None
        when it is not. The spec reader refuses such a table with this one line."""
        return flat_form_problem(params, "matrix", cls.FLAT_KEYS, "invariant", what="matrix builder")

    # ------------------------------------------------------------------ helpers
    def published_matrix_variables(self) -> tuple[str, ...]:
        """The variables whose released values this step's published matrices describe: a
        release refuses a later step that PRAMs or recodes them again (the file would be
        replaced, or would no longer describe the released categories)."""
        return tuple(self.variables)

    def to_dict(self) -> dict:
        """The step's settings in their spec form (the builder as ``{"type": ..., ...}``):
        ``Pram(**step.to_dict()) == step``."""
        return {p.name: (variant_value(getattr(self, p.name)) if p.kind == "variant"
                         else list(getattr(self, p.name)) if isinstance(getattr(self, p.name), tuple)
                         else getattr(self, p.name)) for p in step_params(type(self))}

    def _params(self) -> dict:
        return self.to_dict()

    def _strata(self, microdata: Microdata) -> tuple[np.ndarray | None, list]:
        if not self.strata:
            return None, ["all"]
        for c in self.strata:
            if c not in microdata.columns:
                raise InputError(f"pram: strata column {c!r} does not exist; {close_names(c, microdata.columns)}")
        frame = microdata.frame.loc[:, list(self.strata)]
        ids = frame.groupby(list(self.strata), dropna=False, sort=True).ngroup().to_numpy().astype(np.int64)
        first = np.unique(ids, return_index=True)[1]
        labels = ["_".join(str(x) for x in row)
                  for row in frame.iloc[first].itertuples(index=False, name=None)]
        return ids, labels

    # ------------------------------------------------------------------ apply
    def apply(self, microdata: Microdata, *, rng=None) -> PramResult:
        """PRAM ``microdata``: build the matrices, draw the released values, check and describe.

        With ``rng=None`` the seed comes from OS entropy and is recorded in the result's
        :class:`~sdckit._random.SeedRecord` (internal report only).
        """
        ss, record = seed_sequence(rng)
        root = np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size)
        streams = spawn_keyed(root, ["matrices", "sampling"])
        plan = self.build_matrices(microdata, streams["matrices"])
        released, new = self.draw(microdata, plan, streams["sampling"])
        return self.describe_result(microdata, plan, released, new, record)

    def build_matrices(self, microdata: Microdata, rng: np.random.Generator) -> PramPlan:
        """Part 1 of :meth:`apply`: one checked matrix per variable group and stratum, each
        built by ``self.matrix`` from its own child stream of ``rng``."""
        for v in self.variables:
            if v not in microdata.key_vars and v not in microdata.pram_vars:
                where = ("is neither a key variable nor a PRAM variable; add it to roles.key_vars or "
                         "roles.pram_vars" if v in microdata.columns
                         else f"does not exist; {close_names(v, microdata.columns)}")
                raise InputError(f"pram: variable {v!r} {where}.")
        if self.joint and len(self.variables) > 1:
            groups = [tuple(self.variables)]
        else:
            groups = [(v,) for v in self.variables]
        shapes = {v: microdata.n_categories(v) for v in self.variables}
        strata_ids, labels = self._strata(microdata)
        idx = list(range(len(labels))) if strata_ids is not None else ["all"]
        matrix_gens = list(spawn_keyed(np.random.SeedSequence(int(rng.integers(2**63))),
                                       group_names(groups, idx)).values())
        matrices, evidence, joint_before = {}, {}, {}
        i = 0
        for g in groups:
            shape = tuple(shapes[v] for v in g)
            jc = joint_codes([microdata.codes(v) for v in g], shape)
            joint_before[g] = jc
            J = int(np.prod(shape))
            for s_i, s in enumerate(idx):
                sel = jc if s == "all" else jc[strata_ids == s_i]   # no mask or copy for "all"
                counts = code_counts(sel, J).astype(np.float64)
                rows = slice(None) if s == "all" else strata_ids == s_i
                ctx = MatrixContext(microdata, g, shape, counts, rows, matrix_gens[i],
                                    min_diagonal=self.min_diagonal, step_variables=tuple(self.variables))
                i += 1
                m, ev = self.matrix.build(ctx)
                matrices[(g, s)] = self._check_matrix(m, ctx)
                evidence[(g, s)] = dict(ev or {})
        return PramPlan(tuple(groups), shapes, strata_ids, dict(zip(idx, labels)), matrices, evidence,
                        joint_before)

    def draw(self, microdata: Microdata, plan: PramPlan, rng: np.random.Generator) -> tuple[Microdata, dict]:
        """Part 2 of :meth:`apply`: the released codes of every PRAMmed variable, drawn from
        the plan's matrices with ``rng``; returns the released data and those codes."""
        codes = {v: microdata.codes(v) for v in self.variables}
        new = pram_frame_codes(codes, plan.shapes, plan.matrices, rng, joint=list(plan.groups),
                               strata=plan.strata_ids)
        return microdata.with_codes(new), new

    def describe_result(self, microdata: Microdata, plan: PramPlan, released: Microdata, new: dict,
                        record) -> PramResult:
        """Part 3 of :meth:`apply`: count the transitions, check every guarantee independently
        (:func:`check_pram`), and gather the published matrices and the public figures."""
        groups, shapes, strata_ids, label_of = plan.groups, plan.shapes, plan.strata_ids, plan.label_of
        idx = list(label_of)
        out_m, trans, before, after, ev_out, artifacts = {}, {}, {}, {}, {}, {}
        summary: dict[str, Any] = {"records": microdata.n_records, "changed": {}, "matrices": {}}
        promised, joint_after = {}, {}
        for g in groups:
            shape = tuple(shapes[v] for v in g)
            jb = plan.joint_before[g]
            ja = joint_codes([new[v] for v in g], shape)
            joint_after[g] = ja
            changed = 0
            for s_i, s in enumerate(idx):
                key = (g, label_of[s])
                rows = slice(None) if s == "all" else strata_ids == s_i
                m = plan.matrices[(g, s)]
                b, a = jb[rows], ja[rows]
                J = m.n_categories
                # one count of the (original, released) pairs gives the frequencies before and
                # after and the number of changes (released values are never missing where
                # the original is observed: PRAM keeps missing values missing)
                t = transition_counts(b, a, J)
                fb = np.asarray(t.sum(axis=1)).ravel().astype(np.int64)
                fa = np.asarray(t.sum(axis=0)).ravel().astype(np.int64)
                n_changed = int(fb.sum() - (t.diagonal().sum() if hasattr(t, "diagonal") else 0))
                changed += n_changed
                out_m[key], before[key], after[key] = m, fb, fa
                trans[key] = t
                ev = plan.evidence[(g, s)]
                ev_out[key] = ev
                promised[key] = (bool(ev.get("invariant")), self.min_diagonal if self.min_diagonal is not None
                                 else ev.get("min_diagonal"))
                stem = "pram_" + "_".join(_slug(v) for v in g) + ("" if s == "all" else f"_{_slug(label_of[s])}")
                published = _as_written(m)
                artifacts[stem + ".csv"] = published.to_csv()
                artifacts[stem + ".json"] = published.to_json()
                name = " x ".join(g) + ("" if s == "all" else f" | {label_of[s]}")
                has = fb.sum() > 0
                summary["matrices"][name] = {
                    "file": stem + ".csv", "n_categories": J, "storage": "sparse" if m.is_sparse else "dense",
                    "min_diagonal": m.min_diagonal,
                    "expected_change_share": m.expected_change_share(fb) if has else 0.0,
                    "realised_change_share": float(n_changed / max(1, int(fb.sum()))),
                    "hellinger": hellinger(fb, fa) if has else 0.0,
                    "total_variation": total_variation(fb, fa) if has else 0.0,
                    **({"condition_number": m.condition_number()} if J <= 200 else {}),
                    **{k: v for k, v in ev.items() if isinstance(v, (int, float, str, bool)) or v is None},
                }
            summary["changed"][" x ".join(g)] = changed
        guarantees = check_pram(microdata, released, groups, out_m, promised, strata_ids, label_of,
                                joint={g: (plan.joint_before[g], joint_after[g]) for g in groups}, pairs=trans)
        return PramResult("pram", released, self._params(), summary, tuple(guarantees), record, artifacts,
                          matrices=out_m, transitions=trans, before=before, after=after, evidence=ev_out)

    def _check_matrix(self, m: Any, ctx: MatrixContext) -> TransitionMatrix:
        if not isinstance(m, TransitionMatrix):
            raise InputError(f"pram: the {type(self.matrix).__name__} builder returned {type(m).__name__}, "
                             "not a TransitionMatrix.")
        if m.n_categories != ctx.n_categories or m.categories != ctx.categories:
            m = m.match(ctx.categories, variable=" x ".join(ctx.variables))
        if self.min_diagonal is not None and m.min_diagonal < self.min_diagonal:
            k = int(np.argmin(m.diagonal))
            raise InputError(f"pram: the {type(self.matrix).variant_name!r} matrix for {' x '.join(ctx.variables)} keeps "
                             f"{m.categories[k]!r} with probability {m.min_diagonal:.6g} < min_diagonal "
                             f"{self.min_diagonal}; give a matrix meeting it or lower min_diagonal.")
        return m

    # ---- the Dask engine's protocol (sdckit.registry.DaskPlan)
    def dask_plan(self, roles):
        """Category counts per stratum merged over partitions, each partition drawn by its rows."""
        from ..registry import DaskPlan

        return DaskPlan("pram", tuple(dict.fromkeys((*self.variables, *self.strata))), tuple(self.variables))


def _same_column(a: pd.Series, b: pd.Series) -> bool:
    """Whether two columns hold the same values: at once when they share one numpy buffer
    (same dtype, shape, strides and address), else by comparing the values."""
    x, y = a.array, b.array
    if isinstance(x, pd.arrays.NumpyExtensionArray) and isinstance(y, pd.arrays.NumpyExtensionArray):
        u, w = x.to_numpy(), y.to_numpy()
        if (u.dtype == w.dtype and u.shape == w.shape and u.strides == w.strides
                and u.__array_interface__["data"][0] == w.__array_interface__["data"][0]):
            return True
    return bool(a.equals(b))


def check_pram(original: Microdata, released: Microdata, groups, matrices: dict, promised: dict,
               strata_ids: np.ndarray | None, label_of: dict, *, joint: dict | None = None,
               pairs: dict | None = None) -> list[Guarantee]:
    """Independent checks of a PRAM step on the data before and after and the published matrices.

    Recomputes from the matrices and the codes (not from the method's own figures): row sums
    and signs of every matrix, missing values unchanged, every change has P[orig, released] > 0,
    the promised minimum diagonal, and invariance p P = p with p counted from the original codes.
    ``joint`` may pass the joint codes (before, after) of each variable group already encoded
    by the step (they are the data, encoded; every figure is still counted here), and
    ``pairs`` the dense counts of (original, released) code pairs per matrix key, one
    ``bincount`` of those codes (:func:`~sdckit.pram.apply.transition_counts`), so they are
    not counted twice.
    """
    worst_row = max(float(np.abs(np.asarray(m.P.sum(axis=1)).ravel() - 1.0).max()) for m in matrices.values())
    negative = any(float((m.P.data if m.is_sparse else m.P).min()) < 0 for m in matrices.values())
    missing_ok, support_ok = True, True
    variables = [v for g in groups for v in g]
    for v in variables:
        b, a = original.codes(v), released.codes(v)
        missing_ok &= bool(np.array_equal(b < 0, a < 0))
    for v in original.columns:
        if v not in variables:
            missing_ok &= _same_column(original.frame[v], released.frame[v])
    inv_err, diag_short = 0.0, 0.0
    for (g, label), m in matrices.items():
        shape = tuple(original.n_categories(v) for v in g)
        if joint is not None and g in joint:
            jb, ja = joint[g]
        else:
            jb = joint_codes([original.codes(v) for v in g], shape)
            ja = joint_codes([released.codes(v) for v in g], shape)
        s_i = [k for k, lab in label_of.items() if lab == label][0]
        b, a = (jb, ja) if s_i == "all" else (jb[strata_ids == s_i], ja[strata_ids == s_i])
        J = m.n_categories
        p = None
        if not m.is_sparse and J <= 4096 and missing_ok:
            # one count of the (original, released) pairs: every pair seen off the diagonal
            # must have P > 0; its row sums are the original frequencies p
            t = None if pairs is None else pairs.get((g, label))
            if not isinstance(t, np.ndarray) or t.shape != (J, J):
                obs = b >= 0
                bb, aa = (b, a) if obs.all() else (b[obs], a[obs])
                t = np.bincount(bb.astype(np.int64) * J + aa, minlength=J * J).reshape(J, J)
            seen = t > 0
            np.fill_diagonal(seen, False)
            support_ok &= bool((np.asarray(m.P)[seen] > 0).all())
            p = t.sum(axis=1).astype(float)
        else:
            moved = (b >= 0) & (a != b)
            if moved.any():
                if m.is_sparse:
                    probs = np.asarray(m.P[b[moved], a[moved]]).ravel()
                else:
                    probs = m.P[b[moved], a[moved]]
                support_ok &= bool((probs > 0).all())
        invariant, min_diag = promised[(g, label)]
        if min_diag is not None:
            diag_short = max(diag_short, float(min_diag) - float(np.asarray(m.P.diagonal()).min()))
        if invariant:
            if p is None:
                p = np.bincount(b[b >= 0], minlength=m.n_categories).astype(float)
            if p.sum() > 0:
                inv_err = max(inv_err, invariance_error(m, p))
    out = [
        Guarantee("rows_sum_to_one", "every row of every published matrix sums to 1 (entries >= 0)",
                  worst_row, worst_row <= ROW_TOLERANCE and not negative),
        Guarantee("missing_unchanged", "missing values and the other columns are unchanged", missing_ok, missing_ok),
        Guarantee("changes_allowed", "every changed value has P[original, released] > 0", support_ok, support_ok),
    ]
    if any(md is not None for _, md in promised.values()):
        out.append(Guarantee("min_diagonal", "every diagonal entry of every matrix is at least the promised "
                             "minimum (largest shortfall shown)", max(diag_short, 0.0), diag_short <= 1e-12))
    if any(inv for inv, _ in promised.values()):
        out.append(Guarantee("invariance", "p P = p for the original frequencies p of each matrix "
                             "(largest |p P - p| shown)", inv_err, inv_err <= INVARIANCE_TOLERANCE))
    return out


@register_gate_check("min_diagonal", risk=False, engines=("memory", "dask"))
@dataclass(frozen=True)
class MinDiagonal(GateCheck):
    """Every PRAM matrix keeps every category with probability >= the threshold.

    Not a risk threshold: a smallest keep probability bounds how much PRAM may change (a
    promise of utility), not the disclosure risk, so a release still needs a risk threshold.
    """

    d: float = param(kind="float", low=0.0, high=1.0, low_open=True, symbol="d", unit="probability",
                     label="smallest keep probability",
                     help="every diagonal entry of every PRAM matrix must be at least this")

    measured_labels = {"smallest": ("smallest probability of keeping a category", "probability"),
                       "matrix": ("in the matrix of", None)}

    def check(self, original: Microdata, released: Microdata, results) -> GateOutcome:
        return check_min_diagonal(original, released, results, self.d)

    def plan_problem(self, steps) -> str | None:
        if any(callable(getattr(s, "published_matrix_variables", None)) for s in steps):
            return None
        return ("no step of this release publishes a PRAM matrix, so there is nothing to check; "
                "remove the min_diagonal threshold or add a pram step")

    # the Dask engine's protocol: (matrix name, smallest diagonal entry) of every fitted matrix
    dask_summary = "pram_matrices"

    def finish(self, summary) -> GateOutcome:
        return GateOutcome("min_diagonal", self.d, *min_diagonal_verdict(list(summary), self.d))


def check_min_diagonal(original: Microdata, released: Microdata, results, threshold: float) -> GateOutcome:
    """The smallest diagonal entry over every matrix of every PRAM step, recomputed from P."""
    diags = [(f"{' x '.join(g)}" + ("" if s == "all" else f" | {s}"), float(np.asarray(m.P.diagonal()).min()))
             for r in results if isinstance(r, PramResult) for (g, s), m in r.matrices.items()]
    return GateOutcome("min_diagonal", threshold, *min_diagonal_verdict(diags, threshold))


def min_diagonal_verdict(diags: list[tuple[str, float]], threshold: float) -> tuple[dict | None, bool, str]:
    """Value, verdict and one-line detail of the ``min_diagonal`` gate from (matrix name,
    smallest diagonal entry) pairs; shared by the in-memory and the Dask engine."""
    if not diags:
        return None, True, "no PRAM step in this release: no value was changed by PRAM"
    name, low = min(diags, key=lambda t: t[1])
    ok = low >= threshold
    detail = (f"all {len(diags)} PRAM matrices keep every category with probability >= {threshold} "
              f"(smallest {low:.6g}, {name})" if ok else
              f"the matrix for {name} keeps a category with probability {low:.6g} < {threshold}; "
              "raise the step's min_diagonal")
    return {"smallest": low, "matrix": name}, ok, detail


__all__ = ["MinDiagonal", "Pram", "PramResult", "check_pram", "check_min_diagonal", "min_diagonal_verdict"]
