"""Inference: a secret column guessed from what the intruder knows.

The Article 29 Working Party (2014, sec. 2.2.3) calls inference the possibility to deduce, with
significant probability, the value of an attribute from the values of other attributes. As in
Anonymeter (Giomi et al. 2023, sec. 4.3), the intruder knows the ``aux`` columns of a target
and guesses its ``secret`` as the secret of the nearest released record on ``aux`` (mixed
Gower-like distance, ties broken at random or by the lowest released row: ``tie_break``). A
categorical guess is right when it equals the secret; a numeric guess when
``|guess - secret| <= tolerance * |secret|``; a missing secret is guessed right by a missing
value.

``n_attacks`` targets from the original records give the success; as many from the control
records give the control success; the naive attacker guesses the secret of a random released
record.

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
from .._validation import check_choice, check_float, check_int, check_names
from ..errors import InputError
from .encode import EncodedFrames, FrameLike, encode_frames
from .neighbours import TIE_BREAKS, nearest_released
from .results import AttackResult, attack_result

__all__ = ["inference", "guess_is_right"]

_OWNER = "inference"


def guess_is_right(guess: np.ndarray, secret: np.ndarray, numeric: bool, tolerance: float) -> np.ndarray:
    """Per target: is the guessed secret right (see the module docstring)?"""
    both_missing = np.isnan(guess) & np.isnan(secret)
    with np.errstate(invalid="ignore"):
        if numeric:
            hit = np.abs(guess - secret) <= tolerance * np.abs(secret)
        else:
            hit = guess == secret
    return both_missing | hit


def inference(original: FrameLike, released: FrameLike, control: FrameLike, *, secret: str,
              aux: Sequence[str], n_attacks: int = 500, tolerance: float = 0.05,
              numeric: Sequence[str] | None = None, categorical: Sequence[str] | None = None,
              confidence: float = 0.95, rng=None, encoded: EncodedFrames | None = None,
              tie_break: str = "random") -> AttackResult:
    """Inference risk of a release for one secret column (see the module docstring).

    Parameters
    ----------
    original, released, control : DataFrame or Microdata
        The records the release was made from, the release, and records of the same
        population that it was not made from.
    secret : str
        The column the intruder guesses.
    aux : sequence of str
        The columns the intruder knows about the target (not ``secret``).
    n_attacks : int
        Targets drawn from the original and from the control records.
    tolerance : float
        Relative error of a right guess of a numeric secret.
    numeric, categorical, confidence, rng, encoded
        As in :func:`~sdckit.attacks.singling_out`.
    tie_break : {"random", "first"}
        Among equally near released records: one at random (seeded by ``rng``), or the lowest
        row of the released file (see :mod:`sdckit.attacks.neighbours`).
    """
    t0, c0 = time.perf_counter(), time.process_time()
    aux = check_names(_OWNER, "aux", aux)
    if not isinstance(secret, str):
        raise InputError(f"inference: secret must be one column name; got {secret!r}.")
    if secret in aux:
        raise InputError(f"inference: the secret {secret!r} is among the auxiliary columns; the intruder "
                         "cannot know what it guesses.")
    n_attacks = check_int(_OWNER, "n_attacks", n_attacks, min_value=1)
    tolerance = check_float(_OWNER, "tolerance", tolerance, low=0.0)
    tie_break = check_choice(_OWNER, "tie_break", tie_break, TIE_BREAKS)
    gen = as_generator(rng)
    enc = encoded if encoded is not None else encode_frames(
        released, original, control, columns=list(aux) + [secret], numeric=numeric, categorical=categorical)
    if enc.control is None:
        raise InputError("inference: needs control records (records the release was not made from).")
    s = int(enc.index([secret])[0])
    is_num = bool(enc.is_numeric[s])
    n_o = min(n_attacks, enc.original.shape[0])
    n_c = min(n_attacks, enc.control.shape[0])
    targets = np.concatenate([enc.original[gen.choice(enc.original.shape[0], n_o, replace=False)],
                              enc.control[gen.choice(enc.control.shape[0], n_c, replace=False)]])
    idx, _ = nearest_released(enc, targets, enc.index(aux), 1, gen, tie_break)
    right = guess_is_right(enc.released[idx[:, 0], s], targets[:, s], is_num, tolerance)
    n_success, n_control = int(right[:n_o].sum()), int(right[n_o:].sum())
    n_b = min(n_o, enc.released.shape[0])
    guess = enc.released[gen.choice(enc.released.shape[0], n_b, replace=False), s]
    truth = enc.original[gen.choice(enc.original.shape[0], n_b, replace=False), s]
    n_baseline = int(guess_is_right(guess, truth, is_num, tolerance).sum())
    settings = {"secret": secret, "aux": list(aux), "secret_kind": "numeric" if is_num else "categorical",
                "tie_break": tie_break}
    if is_num:
        settings["tolerance"] = tolerance
    notes = []
    if n_o < n_attacks or n_c < n_attacks:
        notes.append(f"{n_o:,} original and {n_c:,} control records were attacked (fewer than the "
                     f"{n_attacks:,} asked for: the files are smaller).")
    return attack_result("inference", n_success=n_success, n_attacks=n_o, n_control=n_control,
                         n_control_attacks=n_c, n_baseline=n_baseline, n_baseline_attacks=n_b,
                         confidence=confidence, settings=settings, notes=notes,
                         seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
