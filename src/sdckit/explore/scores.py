"""Score and Score' (Domingo-Ferrer & Torra 2001; Dandekar et al. 2002): see
:mod:`sdckit.utility.scores`, where they live so the methods can use them too."""

from ..utility.scores import PRIMED_WEIGHTS, WEIGHTS, ScoreResult, score, score_primed  # noqa: F401

__all__ = ["PRIMED_WEIGHTS", "ScoreResult", "WEIGHTS", "score", "score_primed"]
