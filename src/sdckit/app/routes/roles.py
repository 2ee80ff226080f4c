"""The roles page: suggestions from the identifier scan, and the roles of the session."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ...errors import InputError
from .common import AppContext, api

_ONE = ("weight", "household")
_MANY = ("key_vars", "numeric_vars", "strata", "sensitive")


def routes(ctx: AppContext) -> list[Route]:
    session = ctx.session

    def get_suggestions(request, body):
        ctx.need_data()
        return session.suggestions()

    def post_roles(request, body):
        ctx.need_data()
        roles = body.get("roles", {})
        if not isinstance(roles, dict):
            raise InputError("roles must be an object")
        offered = set(session.offered_columns())
        clean: dict[str, Any] = {}
        for k, v in roles.items():
            if k in _ONE:
                if v:
                    clean[k] = str(v)
            elif k in _MANY:
                if v:
                    clean[k] = [str(x) for x in v]
            else:
                raise InputError(f"unknown role {k!r}")
        named = [c for k, v in clean.items() for c in ([v] if isinstance(v, str) else v)]
        gone = [c for c in named if c not in offered and c in set(map(str, session.frame.columns))]
        if gone:
            raise InputError(f"{gone[0]!r} is removed by a remove step: it can hold no role; "
                             "delete the remove step first")
        session.edit("roles: " + ", ".join(clean.get("key_vars", [])[:4]),
                     lambda st: st.__setitem__("roles", clean))
        return ctx.state_payload()

    return [Route("/api/suggestions", api(get_suggestions)),
            Route("/api/roles", api(post_roles), methods=["POST"])]
