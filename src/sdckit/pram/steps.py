"""The ``pram`` release step, the ``evolved`` matrix method and the ``min_diagonal`` gate check.

A release spec step::

    [[steps]]
    method = "pram"
    variables = ["region", "occupation"]
    matrix = "invariant"        # identity | max_entropy | invariant | file | evolved | optimal
    min_diagonal = 0.8          # a guarantee on the final matrix, every category
    strata = ["sex"]            # one matrix per stratum (optional)
    joint = false               # true: one matrix over the combinations of the variables

The release writes each matrix next to the data (``pram_<variables>[_<stratum>].csv`` and
``.json``) so analysts can undo PRAM (:func:`sdckit.pram.estimate.estimate_frequencies`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._random import seed_sequence, spawn_keyed
from .._validation import close_names
from ..errors import InputError
from ..microdata import Microdata
from ..params import check_params, param
from ..registry import GateCheck, GateOutcome, register_gate_check, register_step
from ..result import Guarantee, StepResult
from .apply import code_counts, group_names, pram_frame_codes, transition_counts
from .builders import MatrixContext, joint_codes, known_matrix_methods, matrix_method, register_matrix_method
from .loss import hellinger, total_variation
from .matrix import ROW_TOLERANCE, TransitionMatrix, invariance_error

try:  # optimal PRAM registers its builder on import, when present
    from . import optimal  # noqa: F401
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the checkout
    if exc.name != f"{__package__}.optimal":
        raise

#: tolerance of the invariance check p P = p (relative frequencies)
INVARIANCE_TOLERANCE = 1e-9


@register_matrix_method("evolved")
def _build_evolved(step, context: MatrixContext):
    """Marés & Shlomo's evolutionary invariant matrix (sdckit.pram.evolve) for this context.

    The search runs over the observed categories; categories without records keep their
    value (row e_k), which keeps invariance. The other key variables form the risk table.
    """
    from .evolve import EvolvePRAM, Problem

    v = context.codes()
    keep = v >= 0
    observed = np.flatnonzero(context.counts > 0)
    J = context.n_categories
    if observed.size < 2:
        raise InputError(f"pram (evolved): {list(context.variables)} has fewer than 2 categories with records "
                         "in this stratum; nothing to evolve.")
    compact = np.full(J, -1, dtype=np.int64)
    compact[observed] = np.arange(observed.size)
    md = context.microdata
    others = [md.codes(k)[context.rows][keep] for k in md.key_vars if k not in context.variables]
    problem = Problem.from_codes(compact[v[keep]], others, observed.size)
    d_min = step.d_min if step.d_min is not None else (step.min_diagonal if step.min_diagonal is not None else 0.8)
    d_max = step.d_max if step.d_max is not None else max(0.99, d_min)
    ea = EvolvePRAM(d_min=d_min, d_max=d_max, risk_weight=step.risk_weight, generations=step.generations,
                    population=step.population, pareto=step.pareto)
    res = ea.run(problem, rng=context.rng)
    X = np.eye(J)
    X[np.ix_(observed, observed)] = res.matrix
    X = np.maximum(X, 0.0)
    X /= X.sum(axis=1, keepdims=True)
    m = TransitionMatrix(context.categories, X, tuple(context.variables), "evolved")
    front = [[float(r), float(u)] for r, u, _ in res.pareto]
    return m, {"invariant": True, "min_diagonal": d_min, "builder": "evolved", "d_max": d_max,
               "risk_weight": step.risk_weight, "front": front, **res.to_dict()}


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


@register_step("pram", engines=("memory", "dask"))
@dataclass(frozen=True)
class Pram:
    """Post-randomisation (PRAM) of categorical key variables with a published matrix.

    Parameters
    ----------
    variables : list of str
        Key variables to PRAM.
    matrix : str
        Matrix method: ``"invariant"`` (default), ``"max_entropy"``, ``"identity"``,
        ``"file"``, ``"evolved"``, ``"optimal"`` (when installed) or any registered one.
    min_diagonal : float in (0, 1), optional
        Every diagonal entry of every final matrix is at least this (checked; the step stops
        with an error if the method cannot meet it). For ``max_entropy`` it is the keep
        probability d; for ``invariant`` the base diagonal is chosen to meet it (default 0.8).
    alpha : float in [0, 1], optional
        For ``invariant``: sdcMicro's blend alpha R + (1 - alpha) I (default 1, no blend). For
        ``optimal``: the security level alpha of condition (C1) of Cator et al.
    base : {"proportional", "uniform"}
        Base matrix of ``invariant``: moves to categories drawn from the frequencies, or evenly
        (sdcMicro's shape).
    file : str, optional
        Matrix file (CSV or JSON with labels) for ``matrix = "file"``.
    strata : list of str
        One matrix per combination of these columns (missing forms its own stratum).
    joint : bool
        One matrix over the joint space of all ``variables`` (C order); sparse when large.
    combinations, gamma, support
        Settings of ``optimal`` (Cator et al.): the variable combinations Pi, the diagonal
        bound gamma, the allowed moves.
    d_min, d_max, risk_weight, generations, population, pareto
        Settings of ``evolved`` (Marés & Shlomo); ``d_min`` defaults to ``min_diagonal``.

    Notes
    -----
    Missing values are never changed. Guarantees checked on the output by
    :func:`check_pram`: rows of every matrix sum to 1, entries >= 0, missing values
    unchanged, every change has P > 0, minimum diagonal >= ``min_diagonal`` and, for
    invariant methods, p P = p for the frequencies the matrix was built for.

    References
    ----------
    Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. and de Wolf, P.-P. (1998). Post
    randomisation for statistical disclosure control. *Journal of Official Statistics* 14(4).
    Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
    Marés, J. and Shlomo, N. (2014). *CSDA* 79, 1-13.
    """

    variables: Sequence[str] = param(kind="columns", role="key", label="variables to PRAM",
                                     help="key variables to PRAM")
    matrix: str = param("invariant", kind="choice", choices=known_matrix_methods,
                        help="matrix method (invariant, max_entropy, identity, file, evolved, "
                             "optimal, or any registered one)")
    min_diagonal: float | None = param(None, kind="float", low=0.0, high=1.0, low_open=True,
                                       high_open=True, nullable=True, symbol="d",
                                       grid=(0.6, 0.7, 0.8, 0.9),
                                       help="every diagonal entry of every final matrix is at "
                                            "least this (invariant default 0.8)")
    alpha: float | None = param(None, kind="float", low=0.0, high=1.0, nullable=True,
                                symbol="alpha",
                                help="invariant: blend alpha R + (1 - alpha) I; optimal: security "
                                     "level of condition (C1)")
    base: str = param("proportional", kind="choice", choices=("proportional", "uniform"),
                      help="base matrix of invariant: moves drawn from the frequencies, or evenly")
    file: str | None = param(None, kind="path", nullable=True,
                             help="matrix file (CSV or JSON with labels) for matrix = 'file'")
    strata: Sequence[str] = param((), kind="columns", nullable=True,
                                  help="one matrix per combination of these columns")
    joint: bool = param(False, kind="bool",
                        help="one matrix over the joint space of all variables")
    combinations: Any = param(None, kind="any", nullable=True, advanced=True, symbol="Pi",
                              help="optimal: the variable combinations Pi")
    gamma: float | None = param(None, kind="float", low=0.0, high=1.0, nullable=True,
                                symbol="gamma", advanced=True, help="optimal: the diagonal bound")
    support: Any = param(None, kind="any", nullable=True, advanced=True,
                         help="optimal: the allowed moves")
    d_min: float | None = param(None, kind="float", low=0.5, high=1.0, low_open=True,
                                nullable=True, advanced=True,
                                help="evolved: smallest diagonal (default min_diagonal)")
    d_max: float | None = param(None, kind="float", low=0.5, high=1.0, low_open=True,
                                nullable=True, advanced=True, help="evolved: largest diagonal")
    risk_weight: float = param(0.5, kind="float", low=0.0, high=1.0, advanced=True,
                               help="evolved: weight of risk against utility in the fitness")
    generations: int = param(200, kind="int", low=1, advanced=True, help="evolved: generations")
    population: int = param(50, kind="int", low=4, advanced=True, help="evolved: population size")
    pareto: bool = param(False, kind="bool", advanced=True,
                         help="evolved: also keep the non-dominated (risk, utility loss) matrices seen")

    def __post_init__(self) -> None:
        check_params(self)
        o = "Pram"
        if self.strata is None:
            object.__setattr__(self, "strata", ())
        if self.matrix == "file" and not self.file:
            from .._validation import param_error
            raise param_error(o, "file", "a matrix file path when matrix = 'file'", self.file)
        if self.matrix == "evolved":  # EvolvePRAM validates its own bounds
            from .evolve import EvolvePRAM
            d_min = self.d_min if self.d_min is not None else (self.min_diagonal or 0.8)
            EvolvePRAM(d_min=d_min, d_max=self.d_max if self.d_max is not None else max(0.99, d_min),
                       risk_weight=self.risk_weight, generations=self.generations,
                       population=self.population, pareto=self.pareto)

    # ------------------------------------------------------------------ helpers
    def published_matrix_variables(self) -> tuple[str, ...]:
        """The variables whose released values this step's published matrices describe: a
        release refuses a later step that PRAMs or recodes them again (the file would be
        replaced, or would no longer describe the released categories)."""
        return tuple(self.variables)

    def _params(self) -> dict:
        d = {"variables": list(self.variables), "matrix": self.matrix, "min_diagonal": self.min_diagonal,
             "alpha": self.alpha, "strata": list(self.strata), "joint": self.joint}
        if self.matrix == "invariant":
            d["base"] = self.base
        if self.matrix == "file":
            d["file"] = self.file
        if self.matrix == "optimal":
            d.update(combinations=self.combinations, gamma=self.gamma, support=self.support)
        if self.matrix == "evolved":
            d.update(d_min=self.d_min, d_max=self.d_max, risk_weight=self.risk_weight,
                     generations=self.generations, population=self.population, pareto=self.pareto)
        return d

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
        for v in self.variables:
            if v not in microdata.key_vars:
                where = ("is not a key variable; add it to roles.key_vars" if v in microdata.columns
                         else f"does not exist; {close_names(v, microdata.columns)}")
                raise InputError(f"pram: variable {v!r} {where}.")
        if self.joint and len(self.variables) > 1:
            groups = [tuple(self.variables)]
        else:
            groups = [(v,) for v in self.variables]
        shapes = {v: microdata.n_categories(v) for v in self.variables}
        strata_ids, labels = self._strata(microdata)
        n = microdata.n_records
        ss, record = seed_sequence(rng)
        root = np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size)
        streams = spawn_keyed(root, ["matrices", "sampling"])
        idx = list(range(len(labels))) if strata_ids is not None else ["all"]
        matrix_gens = list(spawn_keyed(np.random.SeedSequence(int(streams["matrices"].integers(2**63))),
                                       group_names(groups, idx)).values())
        builder = matrix_method(self.matrix)
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
                ctx = MatrixContext(microdata, g, shape, counts, rows, matrix_gens[i])
                i += 1
                m, ev = builder(self, ctx)
                m = self._check_matrix(m, ctx)
                matrices[(g, s)] = m
                evidence[(g, s)] = dict(ev or {})
        codes = {v: microdata.codes(v) for v in self.variables}
        new = pram_frame_codes(codes, shapes, matrices, streams["sampling"],
                               joint=groups, strata=strata_ids)
        released = microdata.with_codes(new)

        label_of = dict(zip(idx, labels))
        out_m, trans, before, after, ev_out, artifacts = {}, {}, {}, {}, {}, {}
        summary: dict[str, Any] = {"records": n, "changed": {}, "matrices": {}}
        promised, joint_after = {}, {}
        for g in groups:
            shape = tuple(shapes[v] for v in g)
            jb = joint_before[g]
            ja = joint_codes([new[v] for v in g], shape)
            joint_after[g] = ja
            changed = 0
            for s_i, s in enumerate(idx):
                key = (g, label_of[s])
                rows = slice(None) if s == "all" else strata_ids == s_i
                m = matrices[(g, s)]
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
                ev = evidence[(g, s)]
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
                                joint={g: (joint_before[g], joint_after[g]) for g in groups}, pairs=trans)
        return PramResult("pram", released, self._params(), summary, tuple(guarantees), record, artifacts,
                          matrices=out_m, transitions=trans, before=before, after=after, evidence=ev_out)

    def _check_matrix(self, m: Any, ctx: MatrixContext) -> TransitionMatrix:
        if not isinstance(m, TransitionMatrix):
            raise InputError(f"pram: the {self.matrix!r} method returned {type(m).__name__}, not a TransitionMatrix.")
        if m.n_categories != ctx.n_categories or m.categories != ctx.categories:
            m = m.match(ctx.categories, variable=" x ".join(ctx.variables))
        if self.min_diagonal is not None and m.min_diagonal < self.min_diagonal:
            k = int(np.argmin(m.diagonal))
            raise InputError(f"pram: the {self.matrix!r} matrix for {' x '.join(ctx.variables)} keeps "
                             f"{m.categories[k]!r} with probability {m.min_diagonal:.6g} < min_diagonal "
                             f"{self.min_diagonal}; give a matrix meeting it or lower min_diagonal.")
        return m


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

    def check(self, original: Microdata, released: Microdata, results) -> GateOutcome:
        return check_min_diagonal(original, released, results, self.d)

    def plan_problem(self, steps) -> str | None:
        if any(callable(getattr(s, "published_matrix_variables", None)) for s in steps):
            return None
        return ("no step of this release publishes a PRAM matrix, so there is nothing to check; "
                "remove the min_diagonal threshold or add a pram step")


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
