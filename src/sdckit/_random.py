"""Random number handling: one ``rng`` keyword, child streams, and the secret seed record.

A seed is a secret: whoever knows it can undo PRAM or swapping. The :class:`SeedRecord`
goes to the internal report only; the public report and the released files never hold it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

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
        return ss, SeedRecord(int(cast(int, ss.entropy)), tuple(ss.spawn_key), "os")  # one int of OS entropy
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


#: Rows per block of :func:`block_uniforms` (the default block length).
UNIFORM_BLOCK = 65536


def block_uniforms(ss: np.random.SeedSequence, start: int, stop: int, *,
                   block: int = UNIFORM_BLOCK) -> np.ndarray:
    """Uniforms on [0, 1) for global rows ``[start, stop)``, the same for any partitioning.

    Row ``i`` belongs to block ``b = i // block``; the numbers of block ``b`` come from the
    child stream ``SeedSequence(ss.entropy, spawn_key=ss.spawn_key + (b,))`` only (the b-th
    child :meth:`~numpy.random.SeedSequence.spawn` would give), row ``i`` being number
    ``i - b * block`` of that stream. So the draws of rows ``[a, c)`` equal the draws of
    ``[a, b)`` followed by those of ``[b, c)`` bit for bit, whichever worker, partition or
    order draws them: a partitioned engine and an in-memory one that both call this with the
    global row offsets draw the same numbers. Give each use (variable, step) its own ``ss``
    and do not spawn other children from it.

    Parameters
    ----------
    ss : numpy.random.SeedSequence
        The stream of this use (e.g. one variable of one PRAM step).
    start, stop : int
        Global row range, ``0 <= start <= stop``.
    block : int
        Rows per child stream; must be the same for every call that should agree.

    Returns
    -------
    ndarray of float64, shape (stop - start,)
    """
    if not isinstance(ss, np.random.SeedSequence):
        from .errors import ParameterError
        raise ParameterError(f"The 'ss' parameter of block_uniforms must be a numpy SeedSequence. Got {ss!r}.")
    start, stop, block = int(start), int(stop), int(block)
    if start < 0 or stop < start or block < 1:
        from .errors import ParameterError
        raise ParameterError("block_uniforms needs 0 <= start <= stop and block >= 1. "
                             f"Got start={start}, stop={stop}, block={block}.")
    out = np.empty(stop - start, dtype=np.float64)
    pos = start
    while pos < stop:
        b = pos // block
        end = min(stop, (b + 1) * block)
        bitgen = np.random.PCG64(child_stream(ss, b))
        # Generator.random uses one 64-bit output per double: skip the rows before ``pos``
        bitgen.advance(pos - b * block)
        out[pos - start:end - start] = np.random.Generator(bitgen).random(end - pos)
        pos = end
    return out


def child_stream(ss: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    """The ``index``-th child of ``ss`` (what ``ss.spawn`` gives first time round), built
    directly so that every worker derives it alone (one per row block, variable or step)."""
    return np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + (int(index),))


def standard_normals(u: np.ndarray) -> np.ndarray:
    """z = Phi^{-1}(u) (u = 0, probability 2^-53, is taken as 2^-54)."""
    from scipy.special import ndtri

    return ndtri(np.where(u > 0.0, u, 2.0 ** -54))


def block_normals(ss: np.random.SeedSequence, start: int, stop: int, n_columns: int) -> np.ndarray:
    """Standard normals for global rows [start, stop), column j from child j of ``ss``: the
    same numbers for any partitioning (the in-memory noise step draws rows [0, n))."""
    return np.column_stack([standard_normals(block_uniforms(child_stream(ss, j), start, stop))
                            for j in range(n_columns)]).reshape(stop - start, n_columns)
