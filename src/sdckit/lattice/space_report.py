"""The ``generalise`` step's result with its solution space, and the report's section on it.

The section is the workbench's lattice view for the public report: the counts of what the
search knows in a sentence, a picture of the nodes drawn by height (bottom: the original data,
top: everything generalised), coloured by what the search knows, the chosen node named in
words and its neighbours (one level coarser or finer in one quasi-identifier) in a table with
their figures. It holds levels and counts only, never a record.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from ..result import StepResult
from .solution_space import STATUSES, SolutionSpace

#: one colour per status of :data:`.solution_space.STATUSES` (the workbench uses the same)
STATUS_COLOURS = {"chosen": "#1f3a56", "satisfies": "#2e7d32", "fails": "#c62828",
                  "satisfies (inferred)": "#a5d6a7", "fails (inferred)": "#ef9a9a", "pruned": "#b0bec5",
                  "not reached": "#eceff1"}


def counts_sentence(space: SolutionSpace) -> str:
    """What the search knows, in one or two sentences."""
    c = space.counts
    text = (f"The lattice has {c['nodes']:,} nodes (every combination of the levels of "
            f"{len(space.qis)} quasi-identifier{'s' if len(space.qis) != 1 else ''}). The search checked "
            f"{c['checked']:,}: {c['checked_satisfying']:,} {_verb(c['checked_satisfying'], 'satisfy')} the privacy "
            f"models within the suppression limit of {space.max_suppressed:,} records and "
            f"{c['checked_failing']:,} {_verb(c['checked_failing'], 'fail')}.")
    if c.get("pruned") is not None:
        text += (f" Without a check it knows that {c['inferred_satisfying']:,} more "
                 f"{_verb(c['inferred_satisfying'], 'satisfy')} and {c['inferred_failing']:,} more "
                 f"{_verb(c['inferred_failing'], 'fail')} (from the nodes checked, the models being monotone, and "
                 f"from projections); {c['pruned']:,} {'lies' if c['pruned'] == 1 else 'lie'} above a node whose "
                 f"lower bound of the {_metric(space)} is not below the chosen node's, so "
                 f"{'it cannot' if c['pruned'] == 1 else 'none of them can'} do better (pruned); "
                 f"{c['not_reached']:,} {'was' if c['not_reached'] == 1 else 'were'} not reached.")
    text += (" The chosen node is the proven optimum." if space.optimal else
             " The chosen node is the best found; the search did not prove it optimal.")
    return text


def search_sentence(space: SolutionSpace, bound: float | None = None) -> str:
    """What the lattice search found, in one line (``sdckit protect`` prints it for the step).

    Parameters
    ----------
    space : SolutionSpace
        The search's solution space (its counts, the chosen node, whether it is proven optimal).
    bound : float, optional
        The search's lower bound on the optimum's metric (``SearchResult.bound``); said where the
        chosen node is not proven optimal, with the gap (best - bound) / best.

    Returns
    -------
    str
        "searched 564 of 6,480 combinations of levels; the chosen one is the proven optimum", or
        "...; the chosen one is the best found within the search's budget, not proven optimal; the
        optimum's discernibility is at least 1.2e+06 (gap 3.1%)".
    """
    c = space.counts
    text = f"searched {c['checked']:,} of {c['nodes']:,} combinations of levels; "
    if space.optimal:
        return text + "the chosen one is the proven optimum"
    text += "the chosen one is the best found within the search's budget, not proven optimal"
    best = space.chosen.metric
    if bound is None or best is None or not math.isfinite(bound):
        return text + "; no lower bound on the optimum is known"
    text += f"; the optimum's {_metric(space)} is at least {_fig(float(bound))}"
    if best > 0:  # the anytime search's relative gap: (best - bound) / best
        text += f" (gap {100.0 * (best - bound) / best:.3g}%)"
    return text


def _verb(n: int, verb: str) -> str:
    """``verb`` agreeing with ``n`` nodes: "1 fails", "2 fail"."""
    if n != 1:
        return verb
    return verb[:-1] + "ies" if verb.endswith("y") else verb + "s"


def _metric(space: SolutionSpace) -> str:
    return space.metric.replace("_", " ")


def _fig(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.6g}"
    return f"{int(value):,}"


def neighbour_rows(space: SolutionSpace) -> list[dict]:
    """The chosen node's neighbours as table rows in words: the change, whether it satisfies
    the models, its figures and their differences from the chosen node's."""
    ch = space.chosen
    rows = []
    for nb in space.neighbours:
        n = nb.node
        change = (f"{nb.qi} one level {nb.direction}: level {nb.from_level} to {nb.to_level}, "
                  f"{space.levels_in_words[space.qis.index(nb.qi)][nb.to_level]}")
        if n.satisfied:
            verdict = "satisfies the models"
            d_metric = None if n.metric is None or ch.metric is None else n.metric - ch.metric
        else:
            verdict = "fails: " + (n.why_fails or "the models fail")
            d_metric = None
        known = ("checked by the search" if n.checked
                 else "not reached by the search (checked for this view)" if n.status == "not reached"
                 else f"known to the search without a check: {n.status} (checked for this view)")
        rows.append({"change": change, "verdict": verdict, "known": known, "satisfied": n.satisfied,
                     "n_suppressed": n.n_suppressed, "d_suppressed": n.n_suppressed - ch.n_suppressed,
                     "n_classes": n.n_classes, "d_classes": n.n_classes - ch.n_classes,
                     "metric": n.metric if n.satisfied else None, "d_metric": d_metric})
    return rows


def _signed(v) -> str:
    if v is None:
        return ""
    s = _fig(abs(v))
    return f" ({'+' if v > 0 else '−' if v < 0 else '±'}{s})"


def _picture(space: SolutionSpace) -> str:
    """The nodes drawn by height (matplotlib, inline PNG)."""
    from ..report.plots import figure_to_html, new_figure  # noqa: PLC0415 - a core-layer leaf

    fig, ax = new_figure(7.0, 3.8)
    xs = space.positions()
    chosen = space.nodes[0]
    x0 = xs[0]
    for i, nb in enumerate(space.neighbours, start=1):
        ax.plot([x0, xs[i]], [chosen.height, nb.node.height], color="#1f3a56", lw=0.8, zorder=1)
    for status in STATUSES:
        pts = [(x, n.height) for x, n in zip(xs, space.nodes) if n.status == status]
        if not pts:
            continue
        big = status == "chosen"
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=110 if big else 26, marker="*" if big else "o",
                   color=STATUS_COLOURS[status], edgecolors="#333333", linewidths=0.4, zorder=3 if big else 2,
                   label=status)
    nb_pts = [(xs[i], nb.node.height) for i, nb in enumerate(space.neighbours, start=1)]
    if nb_pts:
        ax.scatter([p[0] for p in nb_pts], [p[1] for p in nb_pts], s=70, facecolors="none", edgecolors="#1f3a56",
                   linewidths=1.2, zorder=4, label="neighbour of the chosen node")
    ax.set_xticks([])
    ax.set_xlim(0, 1)
    ax.set_ylabel("height (sum of the levels)")
    ax.set_ylim(-0.5, sum(space.heights) + 0.5)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    return figure_to_html(fig, alt=f"the lattice's checked nodes by height; chosen node: {space.level_text(chosen.levels)}")


def space_html(space: SolutionSpace) -> str:
    """The public report's section on the solution space (words, a picture, a table)."""
    esc = html.escape
    parts = ["<h4>Solution space of the lattice search</h4>", f"<p>{esc(counts_sentence(space))}</p>"]
    ch = space.chosen
    parts.append(f"<p><b>Chosen node</b>: {esc(space.level_text(ch.levels))}. It suppresses "
                 f"{ch.n_suppressed:,} records and forms {ch.n_classes:,} classes; {esc(_metric(space))} "
                 f"{esc(_fig(ch.metric))}.</p>")
    shown = (f"The picture shows {space.n_shown_checked:,} of the {space.counts['checked']:,} nodes the search "
             "checked" + (f" (the {space.limit:,} nearest the chosen node: the rest are left out)" if space.capped
                          else "") + " and the chosen node's neighbours; bottom: the original data, top: every "
             "quasi-identifier at its highest level.")
    parts.append(f"<p class='small'>{esc(shown)}</p>")
    parts.append(_picture(space))
    rows = "".join(
        f"<tr><td>{esc(r['change'])}</td><td class='{'ok' if r['satisfied'] else 'fail'}'>{esc(r['verdict'])}</td>"
        f"<td>{esc(_fig(r['n_suppressed']) + _signed(r['d_suppressed']))}</td>"
        f"<td>{esc(_fig(r['n_classes']) + _signed(r['d_classes']))}</td>"
        f"<td>{esc(_fig(r['metric']) + _signed(r['d_metric']))}</td><td>{esc(r['known'])}</td></tr>"
        for r in neighbour_rows(space))
    if rows:
        parts.append("<p>One step coarser or finer from the chosen node (differences from the chosen node in "
                     "brackets):</p><table class='lattice-neighbours'><tr><th>change</th><th>privacy models</th>"
                     f"<th>records suppressed</th><th>classes</th><th>{esc(_metric(space))}</th><th>known how</th>"
                     f"</tr>{rows}</table>")
    if space.notes:
        parts.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in space.notes) + "</ul>")
    return "".join(parts)


@dataclass(frozen=True)
class GeneraliseResult(StepResult):
    """A ``generalise`` step's result: :class:`~sdckit.result.StepResult` plus the search's
    :class:`~sdckit.lattice.solution_space.SolutionSpace` (None where no lattice search ran)."""

    solution_space: SolutionSpace | None = None
    #: the levels as an intruder applies them (:class:`~sdckit.lattice.transform.PublishedLevels`),
    #: what :func:`sdckit.registry.published_recodes` hands to the linkage measures
    published_recoding: object | None = None

    def to_dict(self) -> dict:
        out = super().to_dict()
        if self.solution_space is not None:
            out["solution_space"] = self.solution_space.to_dict()
        return out

    def describe(self) -> str:
        """The step in words (:meth:`~sdckit.result.StepResult.describe`), its second line saying
        what the lattice search found (:func:`search_sentence`)."""
        text = super().describe()
        if self.solution_space is None:
            return text
        first, _, rest = text.partition("\n")
        line = "  lattice search: " + search_sentence(self.solution_space, self.summary.get("bound"))
        return "\n".join([first, line] + ([rest] if rest else []))

    def report_html(self) -> str:
        base = super().report_html()
        return base + (space_html(self.solution_space) if self.solution_space is not None else "")
