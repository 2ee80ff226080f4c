"""The steps page: the methods' declarations (forms), the steps, their results and the history."""

from __future__ import annotations

from types import SimpleNamespace

from starlette.routing import Route

from ...errors import InputError
from ..words import form_fields, measured_sentence, threshold_text
from .common import AppContext, api, as_int


def check_step(step, session=None) -> None:
    """A step dict the spec reader would build, its file parameters inside the folders."""
    from ...registry import build_step

    if not isinstance(step, dict) or not isinstance(step.get("method"), str):
        raise InputError("a step needs a method")
    if session is not None:  # its file parameters inside the workbench's folders, or 403
        session.check_step_paths(step, "step")
    build_step(step["method"], {k: v for k, v in step.items() if k != "method"}, where="step")


def step_index(i, items: list) -> int:
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(items):
        raise InputError(f"there is no step {i!r}")
    return i


def gate_rows(gate: list[dict]) -> list[dict]:
    """Gate outcomes for the gate table: label, threshold with its unit, measured as a sentence."""
    from ...params import step_params
    from ...registry import gate_check

    rows = []
    for g in gate:
        name = g.get("name")
        try:
            params = step_params(gate_check(name).cls)
        except Exception:
            params = []
        first = params[0] if params else None
        fields = form_fields(params)
        label = fields[first.name]["label"] if first is not None else str(name).replace("_", " ")
        rows.append({**g, "label": label, "threshold_text": threshold_text(first, g.get("threshold")),
                     "measured": measured_sentence(str(name), g.get("value"))})
    return rows


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    def get_methods(request, body):
        from ...gate import NoThreshold
        from ...params import schema, step_params
        from ...registry import gate_check, known_gate_checks, known_steps, step_class

        # each threshold's declaration (label, unit, rule) for the form; "none" states why a
        # release has no risk threshold (its verdict then says NOT CHECKED)
        checks, labels = [], {}
        for n in known_gate_checks():
            gc = gate_check(n)
            params = step_params(gc.cls)
            checks.append({"name": n, "description": gc.description, "risk": gc.counts_as_risk,
                           "label": form_fields(params[:1]).get(params[0].name, {}).get("label") if params else n,
                           "params": [p.to_dict() for p in params]})
            labels["gate:" + n] = form_fields(params)
        none_params = step_params(NoThreshold)
        checks.append({"name": "none", "description": "no risk threshold, on purpose: say why (the verdict "
                       "then says NOT CHECKED)", "risk": False, "label": "No risk threshold (say why)",
                       "params": [p.to_dict() for p in none_params]})
        labels["gate:none"] = form_fields(none_params)
        methods = []
        for n in known_steps():
            cls = step_class(n)
            methods.append(schema(cls))  # the form is the declaration, field for field
            labels[n] = form_fields(step_params(cls))
            for p in step_params(cls):  # a variant's own settings: labelled the same way
                for t in (p.variants if p.kind == "variant" else ()):
                    labels[f"{n}:{p.name}:{t.variant_name}"] = form_fields(step_params(t))
        # the table methods' and rules' forms (tables page) are labelled the same way
        from ...tables.registry import (
            known_table_methods,
            known_table_rules,
            table_method_class,
            table_rule_class,
        )

        for n in known_table_methods():
            labels["table:" + n] = form_fields(step_params(table_method_class(n)))
        for n in known_table_rules():
            labels["rule:" + n] = form_fields(step_params(table_rule_class(n)))
        # labels: the declared label, or one derived from the help in one place (app/words.py)
        return {"methods": methods, "gate_checks": checks, "labels": labels}

    def post_steps(request, body):
        ctx.need_data()
        action = body.get("action")
        i = body.get("index")
        step = body.get("step")

        def change(st: dict) -> None:
            steps = st.setdefault("steps", [])
            if action == "add":
                check_step(step, session)
                session.check_new_step(steps, step)
                steps.append(step)
            elif action == "update":
                check_step(step, session)
                j = step_index(i, steps)
                session.check_new_step(steps, step, j)
                steps[j] = step
            elif action == "delete":
                steps.pop(step_index(i, steps))
            elif action in ("up", "down"):
                j = step_index(i, steps)
                k = j - 1 if action == "up" else j + 1
                if 0 <= k < len(steps):
                    steps[j], steps[k] = steps[k], steps[j]
            else:
                raise InputError(f"unknown step action {action!r}")

        label = {"add": "add", "update": "change", "delete": "remove", "up": "move", "down": "move"}.get(action, "?")
        what = (step or {}).get("method") if step else f"step {int(i) + 1 if isinstance(i, int) else '?'}"
        session.edit(f"{label} {what}", change)
        return ctx.state_payload()

    def risk_rise(i: int, res, before, after, risk) -> str:
        """The report's sentence when step ``i`` raised a displayed risk figure (PRAM: sample
        uniques rise while the intruder's certainty falls), with the intruder-side figure."""
        from ...errors import SDCError
        from ...report.fragments import risk_rise_html

        if not risk or risk.get("empty") or not before.key_vars:
            return ""
        prior = session.risk(before, suda=False, linkage=False)
        pram = getattr(res, "method", None) == "pram"
        if not pram or not risk_rise_html(prior, risk, pram=False):
            return risk_rise_html(prior, risk, pram=False, subject="data after this step",
                                  baseline="the data before it")
        from ...risk.intruder import intruder_view, linkage_risk

        try:
            step = session.validate(session.state).steps[i]
            b = linkage_risk(before, intruder_view(before, []))
            a = linkage_risk(after, intruder_view(before, [step]))
        except (SDCError, IndexError):  # the counts alone
            b = a = None
        return risk_rise_html(prior, risk, pram=True, intruder_before=b, intruder_after=a,
                              subject="data after this step", baseline="the data before it")

    def get_results(request, body):
        ctx.need_data()
        from ...report.narrative import step_sentence, verdict_words
        from ..figures import step_view
        from ..synthesis_view import synthesis_panel

        pv = session.preview()
        views = []
        steps = session.state.get("steps", [])
        for i, res in enumerate(pv.results):
            def make(i=i, res=res) -> dict:
                after = pv.datas[i + 1]
                risk = session.risk(after, suda=False, linkage=False) if after.key_vars else None
                v = step_view(i, res, pv.datas[i], after, risk=risk)
                params = {k: x for k, x in steps[i].items() if k != "method"} if i < len(steps) else {}
                v["explain_html"] = risk_rise(i, res, pv.datas[i], after, risk)
                v["synthesis"] = synthesis_panel(res, pv.datas[i], after)  # None but after synthesise
                try:  # the report's own sentence for what the step did
                    v["sentence"] = step_sentence(steps[i]["method"], params,
                                                  dict(getattr(res, "summary", {}) or {}), pv.datas[i].n_records)
                except Exception:
                    v["sentence"] = None
                return v
            # a cached step result is laid out once (its place in the list is set below)
            views.append({**session.cached_view(res, make), "index": i})
        final = session.risk(pv.released, original=pv.original, results=pv.results) if pv.released.key_vars else None
        # the verdict in words: never "passed" without a risk threshold ("NOT CHECKED: why")
        none = (session.state.get("gate") or {}).get("none")
        kind, words = verdict_words(SimpleNamespace(gate=pv.gate, not_checked=none))
        if not pv.gate and none is None:
            kind, words = None, None
        return {"steps": views, "gate": gate_rows(pv.gate), "passed": {"passed": True, "failed": False}.get(kind),
                "verdict_kind": kind, "verdict": words,
                "error": pv.error, "failed_step": pv.failed_step, "risk_after": final,
                "n_steps": len(steps)}

    def post_history(request, body):
        ctx.need_data()
        action = body.get("action")
        if action == "undo":
            session.undo()
        elif action == "redo":
            session.redo()
        elif action == "goto":
            session.goto(as_int(body.get("pos", -1), "pos"))
        elif action == "branch":
            session.new_branch(str(body.get("name", "")))
        elif action == "switch":
            session.switch(str(body.get("name", "")))
        else:
            raise InputError(f"unknown history action {action!r}")
        return ctx.state_payload()

    return [Route("/api/methods", api(get_methods)), Route("/api/steps", api(post_steps), methods=["POST"]),
            Route("/api/results", api(get_results)), Route("/api/history", api(post_history), methods=["POST"])]
