"""sdckit.pram: post-randomisation (PRAM) of categorical variables.

- :class:`~sdckit.pram.matrix.TransitionMatrix`: a labelled, validated matrix (dense or sparse),
  read and written as CSV/JSON because it is published with the data;
- :mod:`~sdckit.pram.builders`: identity, maximum-entropy and invariant matrices (with a
  guaranteed minimum diagonal) and the registry of matrix methods;
- :mod:`~sdckit.pram.apply`: fast vectorised PRAM of integer codes (one variable, several,
  jointly, by stratum);
- :mod:`~sdckit.pram.estimate`: unbiased and maximum-likelihood estimates for analysts;
- :mod:`~sdckit.pram.loss`: information loss of a matrix (closed-form L2, KL, Hellinger, TV);
- :mod:`~sdckit.pram.steps`: the ``pram`` release step and the ``min_diagonal`` gate check.
"""

# The names load on first use (PEP 562): importing one module of this package does not import
# the others (a command pays only for what it uses).
from .._lazy import attach

_EXPORTS = {
    "TransitionMatrix": "matrix",
}

__all__ = [
    "TransitionMatrix",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__, globals())
