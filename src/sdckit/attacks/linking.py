"""Linkability: two files about the same people joined through the release.

The Article 29 Working Party (2014, sec. 2.2.3) calls linkability the ability to link at least
two records concerning the same person. As in Anonymeter (Giomi et al. 2023, sec. 4.2), the
intruder holds two files: one with the columns ``aux_a`` and one with ``aux_b`` of the same
people. For each target the intruder looks up the ``n_neighbors`` released records nearest to
its ``aux_a`` part and those nearest to its ``aux_b`` part (mixed Gower-like distance, ties
broken at random, by the lowest released row, or as Anonymeter's quicksort leaves them:
``tie_break``, see :mod:`sdckit.attacks.neighbours`); the two parts are linked when the two
lists share a released record.

``n_attacks`` targets drawn from the original records give the success; as many drawn from the
control records give the control success; and two lists of ``n_neighbors`` released records
drawn at random per target give the naive baseline.

References
----------
Article 29 Data Protection Working Party (2014). Opinion 05/2014 on anonymisation techniques.
Giomi, M. et al. (2023). A unified framework for quantifying privacy risk in synthetic data.
*PETS* 2023(2), 312-328.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from .._random import as_generator
from .._validation import check_choice, check_int, check_names
from ..errors import InputError
from .encode import EncodedFrames, FrameLike, encode_frames
from .neighbours import TIE_BREAKS, nearest_released_groups
from .results import AttackResult, attack_result

__all__ = ["linkability", "split_columns"]

_OWNER = "linkability"


def split_columns(columns: Sequence[str]) -> tuple[list[str], list[str]]:
    """The default two files of the linkability attack: the first half of the columns and
    the rest."""
    columns = list(columns)
    if len(columns) < 2:
        raise InputError(f"linkability needs at least two auxiliary columns to split between two files; "
                         f"got {columns}.")
    half = (len(columns) + 1) // 2
    return columns[:half], columns[half:]


def _shared(rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
    """Per target: do its two neighbour lists share a record?"""
    return (rows_a[:, :, None] == rows_b[:, None, :]).any(axis=(1, 2))


def linkability(original: FrameLike, released: FrameLike, control: FrameLike, *,
                aux_a: Sequence[str], aux_b: Sequence[str], n_attacks: int = 500,
                n_neighbors: int = 1, numeric: Sequence[str] | None = None,
                categorical: Sequence[str] | None = None, confidence: float = 0.95, rng=None,
                encoded: EncodedFrames | None = None, tie_break: str = "random") -> AttackResult:
    """Linkability risk of a release (see the module docstring for the attack).

    Parameters
    ----------
    original, released, control : DataFrame or Microdata
        The records the release was made from, the release, and records of the same
        population that it was not made from.
    aux_a, aux_b : sequence of str
        The columns of the intruder's two files (disjoint).
    n_attacks : int
        Targets drawn from the original records and from the control records (each capped at
        the file's size).
    n_neighbors : int
        Released records looked up per part.
    numeric, categorical, confidence, rng, encoded
        As in :func:`~sdckit.attacks.singling_out`.
    tie_break : {"random", "first", "quicksort"}
        Among equally near released records: one at random (seeded by ``rng``), the lowest
        row of the released file, or the one numba's quicksort puts first with Anonymeter's
        distance (the same neighbours as Anonymeter; see :mod:`sdckit.attacks.neighbours`).
    """
    t0, c0 = time.perf_counter(), time.process_time()
    aux_a = check_names(_OWNER, "aux_a", aux_a)
    aux_b = check_names(_OWNER, "aux_b", aux_b)
    both = set(aux_a) & set(aux_b)
    if both:
        raise InputError(f"linkability: the columns {sorted(both)} are in both of the intruder's files; "
                         "aux_a and aux_b must not overlap.")
    n_attacks = check_int(_OWNER, "n_attacks", n_attacks, min_value=1)
    n_neighbors = check_int(_OWNER, "n_neighbors", n_neighbors, min_value=1)
    tie_break = check_choice(_OWNER, "tie_break", tie_break, TIE_BREAKS)
    gen = as_generator(rng)
    enc = encoded if encoded is not None else encode_frames(
        released, original, control, columns=list(aux_a) + list(aux_b), numeric=numeric, categorical=categorical)
    if enc.control is None:
        raise InputError("linkability: needs control records (records the release was not made from).")
    n_r = enc.released.shape[0]
    k = min(n_neighbors, n_r)
    n_o = min(n_attacks, enc.original.shape[0])
    n_c = min(n_attacks, enc.control.shape[0])
    targets = (enc.original[gen.choice(enc.original.shape[0], n_o, replace=False)],
               enc.control[gen.choice(enc.control.shape[0], n_c, replace=False)])
    ia, _ = nearest_released_groups(enc, targets, enc.index(aux_a), k, gen, tie_break)
    ib, _ = nearest_released_groups(enc, targets, enc.index(aux_b), k, gen, tie_break)
    linked = _shared(ia, ib)
    n_success, n_control = int(linked[:n_o].sum()), int(linked[n_o:].sum())
    # the naive attacker: two random lists of k released records per target
    ra = np.stack([gen.choice(n_r, k, replace=False) for _ in range(n_o)])
    rb = np.stack([gen.choice(n_r, k, replace=False) for _ in range(n_o)])
    n_baseline = int(_shared(ra, rb).sum())
    settings = {"aux_a": list(aux_a), "aux_b": list(aux_b), "n_neighbors": k, "tie_break": tie_break}
    notes = []
    if n_o < n_attacks or n_c < n_attacks:
        notes.append(f"{n_o:,} original and {n_c:,} control records were attacked (fewer than the "
                     f"{n_attacks:,} asked for: the files are smaller).")
    return attack_result("linkability", n_success=n_success, n_attacks=n_o, n_control=n_control,
                         n_control_attacks=n_c, n_baseline=n_baseline, n_baseline_attacks=n_o,
                         confidence=confidence, settings=settings, notes=notes,
                         seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
