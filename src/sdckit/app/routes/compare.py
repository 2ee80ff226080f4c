"""The compare page: two branches side by side, steps with their settings, risk and utility."""

from __future__ import annotations

from starlette.routing import Route

from ...errors import InputError
from .common import AppContext, api
from .steps import gate_rows


def step_settings(step: dict, also: tuple = ()) -> dict[str, str]:
    """A step's settings in words (label -> value), for the side-by-side table; the settings
    named in ``also`` (set in the other branch) are shown with their declared defaults."""
    from ...params import step_params
    from ...registry import known_steps, step_class
    from ..words import form_fields, threshold_text

    method = step.get("method")
    declared = {p.name: p for p in step_params(step_class(method))} if method in known_steps() else {}
    labels = form_fields(list(declared.values()))
    out = {}
    filled = dict(step)
    for k in also:
        if k not in filled and k in declared and not declared[k].required:
            filled[k] = declared[k].default
    for k, v in filled.items():
        if k == "method" or v is None:
            continue
        p = declared.get(k)
        name = labels[k]["label"] if k in labels else k.replace("_", " ")
        if isinstance(v, dict):
            text = "; ".join(f"{a} = {', '.join(map(str, b)) if isinstance(b, list) else b}" for a, b in v.items())
        else:
            text = threshold_text(p, v)
        out[name] = text
    return out


# The entropy kept is explore's measure (sdckit.explore.measures "entropy": entropy_utility),
# computed from the key codes' label tables (utility.categorical.entropy_kept): the same
# figure, without a pass over the records' labels in Python.


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    def get_compare(request, body):
        ctx.need_data()
        from ...utility.categorical import entropy_kept, label_codes

        a, b = request.query_params.get("a"), request.query_params.get("b")
        out = {}
        for name in (a, b):
            if name not in session.branches:
                raise InputError(f"no branch named {name!r}")
        pair = [session.branches[n].state.get("steps", []) for n in (a, b)]

        def other_keys(i: int, j: int) -> tuple:
            """The settings step ``j`` of the other branch sets, where it is the same method."""
            mine, theirs = pair[i], pair[1 - i]
            if j < len(theirs) and theirs[j].get("method") == mine[j].get("method"):
                return tuple(theirs[j])
            return ()

        for bi, name in enumerate((a, b)):
            st = session.branches[name].state
            pv = session.preview(st)
            risk = (session.risk(pv.released, suda=False, original=pv.original, results=pv.results)
                    if pv.released.key_vars else None)
            out[name] = {"steps": [s.get("method") for s in st.get("steps", [])],
                         "settings": [{"method": s.get("method"), "settings": step_settings(s, other_keys(bi, j))}
                                      for j, s in enumerate(st.get("steps", []))],
                         "error": pv.error, "gate": gate_rows(pv.gate), "risk": risk,
                         "utility_entropy": (entropy_kept([(label_codes(pv.original, v), label_codes(pv.released, v))
                                                           for v in pv.original.key_vars])
                                             if pv.original.key_vars and pv.error is None else None)}
        return {"a": a, "b": b, "results": out}

    return [Route("/api/compare", api(get_compare))]
