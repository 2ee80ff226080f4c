"""The hierarchy editor: build an interval, grouping, masking or date hierarchy of a column
(:mod:`sdckit.masking.hierarchy_builder`), show its levels, save it as an ARX-compatible CSV in
the ``hierarchies`` folder of the output root, and attach it to a recode step (the step's
``hierarchy_file``) or, by its file name, to a table dimension (the tables page's
``hierarchies``)."""

from __future__ import annotations

from starlette.routing import Route

from ...errors import InputError
from .common import AppContext, api

#: rows of the levels table sent to the page (the file holds them all)
PREVIEW_ROWS = 200

#: the editor's words: each kind's label and one line, each setting's label and help
KIND_WORDS = {
    "intervals": ("Intervals", "numbers in ranges; each level has wider ranges (each width a multiple of the one below)"),
    "grouping": ("Grouping", "the ordered values in groups of a fixed size per level (each size a multiple of the one below)"),
    "masking": ("Masking", "text masked from the right, one more character per level (codes such as postcodes)"),
    "dates": ("Dates", "a day becomes its week, or its month, quarter, year and decade"),
    "priority": ("Priority", "the values in order of priority; each level hides a further share of them as *, "
                             "the first kept longest (ARX's priority-based builder)"),
}
SETTING_WORDS = {
    "widths": ("Range width at each level", "comma-separated, finest first, e.g. 5, 10, 50"),
    "start": ("Lower bound of the first range", "empty: the smallest value rounded down to the first width"),
    "sizes": ("Values per group at each level", "comma-separated, finest first, e.g. 2, 4"),
    "order": ("Order of the values", "comma-separated; empty: sorted"),
    "n_levels": ("Number of levels", "empty: as many as the longest value has characters"),
    "char": ("Masking character", "one character; empty: *"),
    "levels": ("Coarser levels", "comma-separated, finest first, from week, month, quarter, year, decade"),
    "format": ("Date format", "a strftime format such as %d/%m/%Y; empty: recognised automatically"),
    "direction": ("Kept longest", "highest_to_lowest (empty) or lowest_to_highest: which end of the order"),
    "priorities": ("Priorities", "value=priority pairs, comma-separated, e.g. nurse=2, clerk=5; empty: the "
                                 "values' own order (numbers as numbers)"),
    "max_levels": ("Most levels", "a whole number; empty: 10"),
}


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    def build(body: dict):
        from ...masking.hierarchy_builder import build_hierarchy

        ctx.need_data()
        column = str(body.get("column", ""))
        if column not in session.frame.columns:
            raise InputError(f"hierarchy: no column named {column[:80]!r}; choose one of the data's columns")
        settings = {k: v for k, v in (body.get("settings") or {}).items() if v not in (None, "")}
        return column, build_hierarchy(session.frame[column], str(body.get("kind", "")), settings, name=column)

    def view(h) -> dict:
        from ...masking.hierarchy_builder import hierarchy_levels

        return hierarchy_levels(h, limit=PREVIEW_ROWS)

    def get_kinds(request, body):
        from ...masking.hierarchy_builder import HIERARCHY_KINDS

        return {"kinds": [{"name": k, "label": KIND_WORDS[k][0], "help": KIND_WORDS[k][1],
                           "settings": [{"name": s, "label": SETTING_WORDS[s][0], "help": SETTING_WORDS[s][1]}
                                        for s in settings]}
                          for k, settings in HIERARCHY_KINDS.items()],
                "saved": session.saved_hierarchies()}

    def post_preview(request, body):
        _, h = build(body)
        return view(h)

    def post_save(request, body):
        from ...masking.hierarchy_builder import write_hierarchy

        column, h = build(body)
        target = session.hierarchy_target(body.get("name") or f"{column}.csv")
        write_hierarchy(h, target, overwrite=bool(body.get("overwrite")))
        return {**view(h), "file": target.name, "path": str(target), "column": column,
                "n_levels": h.n_levels, "saved": session.saved_hierarchies()}

    return [Route("/api/hierarchy/kinds", api(get_kinds)),
            Route("/api/hierarchy/preview", api(post_preview), methods=["POST"]),
            Route("/api/hierarchy/save", api(post_save), methods=["POST"])]
