"""The steward's workbench: ``sdckit app``, a local web application for the whole release.

Open a data file, set the roles, watch the risk, add steps from every registered method
(forms generated from their parameter declarations), undo, branch and compare, explore
sweeps in the background, set the gate and release: the release writes exactly what
``sdckit protect`` writes for the exported spec. See ``docs/app.md``.
"""

__all__ = ["Session", "create_app"]


def __getattr__(name: str):  # imported lazily: ``sdckit --help`` does not load the web stack
    if name == "create_app":
        from .server import create_app
        return create_app
    if name == "Session":
        from .session import Session
        return Session
    raise AttributeError(name)
