"""Inference: a secret column guessed from what the intruder knows.

The Article 29 Working Party (2014, sec. 2.2.3) calls inference the possibility to deduce, with
significant probability, the value of an attribute from the values of other attributes. As in
Anonymeter (Giomi et al. 2023, sec. 4.3), the intruder knows the ``aux`` columns of a target
and guesses its ``secret`` as the secret of the nearest released record on ``aux`` (mixed
Gower-like distance, ties broken at random, by the lowest released row, or as Anonymeter's
quicksort leaves them: ``tie_break``, see :mod:`sdckit.attacks.neighbours`). A categorical
guess is right when it equals the secret; a missing secret is guessed right by a missing value.
A numeric guess is right when its relative error is at most ``tolerance``, relative to

- the guess (``relative_to="guess"``, the default): ``|guess - secret| / (guess + 1e-12) <=
  tolerance``, Anonymeter's rule as its code has it (``anonymeter/evaluators/
  inference_evaluator.py``, ``evaluate_inference_guesses``; the paper, Giomi et al. 2023, sec.
  4.3, speaks of a relative difference without its denominator). The denominator is the signed
  guess: a negative guess gives a negative ratio and is always counted right, and a guess of 0
  is right only for a secret within ``tolerance * 1e-12`` of 0;
- the secret (``relative_to="secret"``): ``|guess - secret| <= tolerance * |secret|``.

Anonymeter compares a numeric secret with this tolerance only when its evaluator is told
``regression=True`` (its default, ``regression=False``, compares every secret for equality, as
``tolerance=0`` nearly does here).

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
from .neighbours import TIE_BREAKS, nearest_released_groups
from .results import AttackResult, attack_result

__all__ = ["inference", "guess_is_right", "RELATIVE_TO"]

_OWNER = "inference"


#: what the tolerance of a numeric secret is relative to
RELATIVE_TO = ("guess", "secret")


def guess_is_right(guess: np.ndarray, secret: np.ndarray, numeric: bool, tolerance: float,
                   relative_to: str = "guess") -> np.ndarray:
    """Per target: is the guessed secret right (see the module docstring)?

    Parameters
    ----------
    guess, secret : ndarray
        Guessed and true values (codes of a categorical secret), NaN for missing.
    numeric : bool
        Whether the secret is numeric (compared within ``tolerance``) or categorical (equal).
    tolerance : float
        Largest relative error of a right numeric guess.
    relative_to : {"guess", "secret"}
        ``"guess"``: ``|guess - secret| / (guess + 1e-12) <= tolerance`` (Anonymeter's rule);
        ``"secret"``: ``|guess - secret| <= tolerance * |secret|``.
    """
    both_missing = np.isnan(guess) & np.isnan(secret)
    with np.errstate(invalid="ignore", divide="ignore"):
        if not numeric:
            hit = guess == secret
        elif relative_to == "guess":   # Anonymeter: the signed guess (plus 1e-12) divides
            hit = np.abs(guess - secret) / (guess + 1e-12) <= tolerance
        else:
            hit = np.abs(guess - secret) <= tolerance * np.abs(secret)
    return both_missing | hit


def inference(original: FrameLike, released: FrameLike, control: FrameLike, *, secret: str,
              aux: Sequence[str], n_attacks: int = 500, tolerance: float = 0.05,
              numeric: Sequence[str] | None = None, categorical: Sequence[str] | None = None,
              confidence: float = 0.95, rng=None, encoded: EncodedFrames | None = None,
              tie_break: str = "random", relative_to: str = "guess") -> AttackResult:
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
    tie_break : {"random", "first", "quicksort"}
        Among equally near released records: one at random (seeded by ``rng``), the lowest
        row of the released file, or the one numba's quicksort puts first with Anonymeter's
        distance (the same neighbours as Anonymeter; see :mod:`sdckit.attacks.neighbours`).
    relative_to : {"guess", "secret"}
        What the tolerance is relative to: the guess (Anonymeter's rule, the default) or the
        secret (see the module docstring).
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
    relative_to = check_choice(_OWNER, "relative_to", relative_to, RELATIVE_TO)
    gen = as_generator(rng)
    enc = encoded if encoded is not None else encode_frames(
        released, original, control, columns=list(aux) + [secret], numeric=numeric, categorical=categorical)
    if enc.control is None:
        raise InputError("inference: needs control records (records the release was not made from).")
    s = int(enc.index([secret])[0])
    is_num = bool(enc.is_numeric[s])
    n_o = min(n_attacks, enc.original.shape[0])
    n_c = min(n_attacks, enc.control.shape[0])
    groups = (enc.original[gen.choice(enc.original.shape[0], n_o, replace=False)],
              enc.control[gen.choice(enc.control.shape[0], n_c, replace=False)])
    targets = np.concatenate(groups)
    idx, _ = nearest_released_groups(enc, groups, enc.index(aux), 1, gen, tie_break)
    right = guess_is_right(enc.released[idx[:, 0], s], targets[:, s], is_num, tolerance, relative_to)
    n_success, n_control = int(right[:n_o].sum()), int(right[n_o:].sum())
    n_b = min(n_o, enc.released.shape[0])
    guess = enc.released[gen.choice(enc.released.shape[0], n_b, replace=False), s]
    truth = enc.original[gen.choice(enc.original.shape[0], n_b, replace=False), s]
    n_baseline = int(guess_is_right(guess, truth, is_num, tolerance, relative_to).sum())
    settings = {"secret": secret, "aux": list(aux), "secret_kind": "numeric" if is_num else "categorical",
                "tie_break": tie_break}
    if is_num:
        settings["tolerance"] = tolerance
        settings["relative_to"] = relative_to
    notes = []
    if n_o < n_attacks or n_c < n_attacks:
        notes.append(f"{n_o:,} original and {n_c:,} control records were attacked (fewer than the "
                     f"{n_attacks:,} asked for: the files are smaller).")
    return attack_result("inference", n_success=n_success, n_attacks=n_o, n_control=n_control,
                         n_control_attacks=n_c, n_baseline=n_baseline, n_baseline_attacks=n_b,
                         confidence=confidence, settings=settings, notes=notes,
                         seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
