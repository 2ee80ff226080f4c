"""All attacks on one release with one control sample: :func:`run_attacks`."""

from __future__ import annotations

import time
from collections.abc import Sequence

from .._random import as_generator
from .._validation import check_names
from ..errors import InputError
from .encode import FrameLike, as_frame, encode_frames
from .inferring import inference
from .linking import linkability, split_columns
from .membership import membership_inference
from .results import AttackReport
from .singling import singling_out

__all__ = ["run_attacks", "ATTACKS"]

#: the attacks run_attacks knows, in the order it runs them
ATTACKS = ("singling_out", "linkability", "inference", "membership")


def run_attacks(original: FrameLike, released: FrameLike, control: FrameLike, *,
                aux: Sequence[str] | None = None, secret: str | Sequence[str] | None = None,
                aux_a: Sequence[str] | None = None, aux_b: Sequence[str] | None = None,
                attacks: Sequence[str] = ATTACKS, n_attacks: int = 500, mode: str = "multivariate",
                n_cols: int = 3, n_neighbors: int = 1, mia_methods: Sequence[str] = ("distance", "density"),
                n_targets: int = 1000, n_repeats: int = 5, fpr: float = 0.01, numeric: Sequence[str] | None = None,
                categorical: Sequence[str] | None = None, confidence: float = 0.95,
                rng=None, tie_break: str = "random", tolerance: float = 0.05,
                relative_to: str = "guess") -> AttackReport:
    """Run the attacks on a release and collect their results.

    Parameters
    ----------
    original, released, control : DataFrame or Microdata
        The records the release was made from, the release, and records of the same
        population that it was not made from.
    aux : sequence of str, optional
        What the intruder knows about a target: the inference attack guesses each secret
        from these, and the linkability attack splits them into two files (first half,
        second half) unless ``aux_a``/``aux_b`` are given. Default: every shared column but
        the secrets.
    secret : str or sequence of str, optional
        Columns the inference attack guesses (one attack each); required for ``"inference"``.
    attacks : sequence of str
        Any of ``"singling_out"``, ``"linkability"``, ``"inference"``, ``"membership"``.
    n_attacks : int
        Targets or predicates per attack (Anonymeter's ``n_attacks``).
    mode, n_cols
        Singling out (see :func:`~sdckit.attacks.singling_out`).
    n_neighbors : int
        Linkability (see :func:`~sdckit.attacks.linkability`).
    mia_methods, n_targets, n_repeats, fpr
        Membership inference (see :func:`~sdckit.attacks.membership_inference`).
    numeric, categorical : sequence of str, optional
        Which columns are numeric (see :func:`~sdckit.attacks.encode.encode_frames`).
    confidence : float
        Level of every interval.
    rng : int, Generator or None
        Each attack draws from its own child stream.
    tie_break : {"random", "first", "quicksort"}
        Linkability and inference: how ties between equally near released records are broken
        (see :mod:`sdckit.attacks.neighbours`).
    tolerance, relative_to
        Inference of a numeric secret (see :func:`~sdckit.attacks.inference`).
    """
    t0, c0 = time.perf_counter(), time.process_time()
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown:
        raise InputError(f"unknown attack(s) {unknown}; the attacks are {', '.join(ATTACKS)}.")
    secrets = () if secret is None else check_names("run_attacks", "secret", secret)
    if "inference" in attacks and not secrets:
        raise InputError("the inference attack needs a secret column (the value the intruder guesses).")
    enc = encode_frames(released, original, control, numeric=numeric, categorical=categorical)
    if aux is None:
        aux = [c for c in enc.columns if c not in secrets]
    aux = list(check_names("run_attacks", "aux", aux))
    for c in list(aux) + list(secrets) + list(aux_a or ()) + list(aux_b or ()):
        if c not in enc.columns:
            raise InputError(f"the column {c!r} is not in all three files (released, original, control).")
    gen = as_generator(rng)
    streams = dict(zip(("singling_out", "linkability", "inference", "membership"), gen.spawn(4)))
    results = []
    if "singling_out" in attacks:
        results.append(singling_out(original, released, control, mode=mode, n_attacks=n_attacks, n_cols=n_cols,
                                    confidence=confidence, rng=streams["singling_out"], encoded=enc))
    if "linkability" in attacks:
        if aux_a is None or aux_b is None:
            aux_a, aux_b = split_columns(aux)
        results.append(linkability(original, released, control, aux_a=aux_a, aux_b=aux_b, n_attacks=n_attacks,
                                   n_neighbors=n_neighbors, confidence=confidence, rng=streams["linkability"],
                                   encoded=enc, tie_break=tie_break))
    if "inference" in attacks:
        for s, child in zip(secrets, streams["inference"].spawn(len(secrets))):
            known = [c for c in aux if c != s]
            results.append(inference(original, released, control, secret=s, aux=known, n_attacks=n_attacks,
                                     confidence=confidence, rng=child, encoded=enc, tie_break=tie_break,
                                     tolerance=tolerance, relative_to=relative_to))
    if "membership" in attacks:
        for m, child in zip(mia_methods, streams["membership"].spawn(len(mia_methods))):
            results.append(membership_inference(original, released, control, method=m, n_targets=n_targets,
                                                n_repeats=n_repeats, fpr=fpr, confidence=confidence, rng=child,
                                                encoded=enc))
    return AttackReport(tuple(results), len(as_frame(released, "released")), len(as_frame(original, "original")),
                        len(as_frame(control, "control")), time.perf_counter() - t0, time.process_time() - c0)
