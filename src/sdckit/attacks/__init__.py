"""Privacy attacks on a released file, each measured against a control sample.

An intruder holds the released file (masked or synthetic) and auxiliary knowledge. Each attack
is run on the original records the release was made from and on control records of the same
population that it was not made from; the risk is the success beyond the control's
(Giomi et al. 2023, the three criteria of the Article 29 Working Party: singling out,
linkability, inference), and membership inference asks whether the release tells its own
records from others (Stadler et al. 2022; van Breugel et al. 2023). See
``docs/methods/attacks.md``.

The names load on first use, so ``sdckit attack --help`` imports no numerical library.
"""

from __future__ import annotations

import importlib

#: public name -> the module of this package that defines it
_WHERE = {
    "ATTACKS": "evaluate", "run_attacks": "evaluate",
    "singling_out": "singling", "singling_out_queries": "singling", "linkability": "linking", "split_columns": "linking",
    "inference": "inferring", "membership_inference": "membership", "auc_score": "membership",
    "tpr_at_fpr": "membership", "AttackReport": "results", "AttackResult": "results",
    "MembershipResult": "results", "Rate": "stats", "excess_risk": "stats", "wilson_rate": "stats",
    "encode_frames": "encode", "EncodedFrames": "encode",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
