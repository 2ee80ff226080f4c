"""Random number handling: one ``rng`` keyword, child streams, and the secret seed record.

A seed is a secret: whoever knows it can undo PRAM or swapping. The :class:`SeedRecord`
goes to the internal report only; the public report and the released files never hold it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

RngLike = None | int | np.random.Generator | np.random.SeedSequence


@dataclass(frozen=True)
class SeedRecord:
    """The entropy a run started from, and the spawn path of each child stream.

    Kept for the internal report only (reproduce a release exactly); never published.
    """

    entropy: int | None
    spawn_key: tuple[int, ...] = ()
    source: str = "user"  # "user" (an int or SeedSequence), "os" (fresh entropy), "generator"

    def to_dict(self) -> dict:
        return {"entropy": None if self.entropy is None else str(self.entropy),
                "spawn_key": list(self.spawn_key), "source": self.source}


def seed_sequence(rng: RngLike) -> tuple[np.random.SeedSequence, SeedRecord]:
    """Normalise ``rng`` to a SeedSequence and the record of where it came from.

    ``None`` draws OS entropy and records it, so the run can still be reproduced from the
    internal report. A Generator gives a SeedSequence drawn from it (recorded as such).
    """
    if rng is None:
        ss = np.random.SeedSequence()
        return ss, SeedRecord(int(ss.entropy), tuple(ss.spawn_key), "os")
    if isinstance(rng, np.random.SeedSequence):
        ent = rng.entropy if isinstance(rng.entropy, int) else None
        return rng, SeedRecord(ent, tuple(rng.spawn_key), "user")
    if isinstance(rng, np.random.Generator):
        ent = int(rng.integers(0, 2**63 - 1))
        ss = np.random.SeedSequence(ent)
        return ss, SeedRecord(ent, (), "generator")
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            from .errors import ParameterError
            raise ParameterError(f"The 'rng' seed must be an int >= 0. Got {rng!r}.")
        ss = np.random.SeedSequence(int(rng))
        return ss, SeedRecord(int(rng), (), "user")
    from .errors import ParameterError
    raise ParameterError(
        f"The 'rng' parameter must be None, an int >= 0, a numpy SeedSequence or Generator. Got {rng!r}.")


def as_generator(rng: RngLike) -> np.random.Generator:
    """``np.random.default_rng`` for every accepted ``rng`` form (a Generator is used as is)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(seed_sequence(rng)[0])


def spawn(rng: RngLike, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators (``SeedSequence.spawn``), so results do not depend
    on scheduling: child i is the same whichever worker draws it."""
    ss, _ = seed_sequence(rng)
    return [np.random.default_rng(c) for c in ss.spawn(n)]


def spawn_keyed(ss: np.random.SeedSequence, names: list[str]) -> dict[str, np.random.Generator]:
    """One child generator per name, in the order given (per variable, stratum or partition)."""
    return {name: np.random.default_rng(child) for name, child in zip(names, ss.spawn(len(names)))}


@dataclass
class RunSeeds:
    """Seeds of a whole release run: one root, one child per step (internal report only)."""

    root: SeedRecord
    steps: list[SeedRecord] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"root": self.root.to_dict(), "steps": [s.to_dict() for s in self.steps]}
