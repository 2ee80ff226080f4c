"""The one way sdckit runs HiGHS (highspy): instance factory, model builder, status mapping.

Every HiGHS instance in the package comes from :func:`new_highs`, so that

* every instance uses the same thread setting (``threads = 1``). HiGHS keeps one task
  scheduler per process: once an instance has run with the default thread count, a later
  instance that asks for one thread ends with model status "not set". With one setting for
  all, the order in which methods run no longer matters, and results do not depend on
  scheduling;
* nothing from the solver reaches stdout or stderr. HiGHS >= 1.12 prints a banner from C++
  when an instance is constructed, before any option can be set; the construction runs with
  file descriptors 1 and 2 pointed at ``/dev/null`` (C stdio is flushed before they are put
  back, so a buffered banner cannot leak later), then ``output_flag`` is switched off;
* solver statuses become the package's errors in one place (:func:`raise_for_status`), with a
  message that names the step and says what to try.

This is a core module: the method layers (tables, masking, pram) import it; it imports
nothing of sdckit but :mod:`sdckit.errors`.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from contextlib import contextmanager

import highspy
import numpy as np
import scipy.sparse as sp

from .errors import SolverError

INF = highspy.kHighsInf
THREADS = 1

_FD_LOCK = threading.Lock()
try:  # the C library, to flush stdio buffers the solver wrote into
    _LIBC = ctypes.CDLL(None)
except OSError:  # pragma: no cover - non-POSIX
    _LIBC = None


@contextmanager
def quiet_fds():
    """Point file descriptors 1 and 2 at /dev/null for the duration (C-level output included)."""
    with _FD_LOCK:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # pragma: no cover - closed or replaced streams
                pass
        try:
            saved = (os.dup(1), os.dup(2))
        except OSError:  # pragma: no cover - no fds 1/2 (daemonised); nothing to protect
            yield
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            yield
        finally:
            if _LIBC is not None:
                _LIBC.fflush(None)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in (*saved, devnull):
                os.close(fd)


def new_highs(*, time_limit: float | None = None, presolve: bool = True,
              options: dict | None = None) -> highspy.Highs:
    """A silent, single-threaded HiGHS instance: the only way sdckit creates one.

    Parameters
    ----------
    time_limit : float, optional
        Seconds before HiGHS stops (status "time limit reached").
    presolve : bool
        Switch HiGHS' presolve off with False.
    options : dict, optional
        Further HiGHS options (name -> value). ``threads`` and ``output_flag`` cannot be set
        here: they are the package's policy.

    References
    ----------
    Huangfu, Q. and Hall, J. A. J. (2018). Parallelizing the dual revised simplex method.
    *Mathematical Programming Computation* 10, 119-142 (HiGHS).
    """
    with quiet_fds():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("log_to_console", False)
    h.setOptionValue("threads", THREADS)
    if not presolve:
        h.setOptionValue("presolve", "off")
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    for name, value in (options or {}).items():
        if name in ("threads", "output_flag", "log_to_console"):
            raise ValueError(f"HiGHS option {name!r} is fixed by sdckit's solver policy")
        h.setOptionValue(name, value)
    return h


def pass_lp(h: highspy.Highs, matrix: sp.spmatrix, *, cost: np.ndarray, col_lower: np.ndarray,
            col_upper: np.ndarray, row_lower: np.ndarray, row_upper: np.ndarray,
            integrality: np.ndarray | None = None, maximize: bool = False) -> None:
    """Load ``row_lower <= matrix @ x <= row_upper``, ``col_lower <= x <= col_upper`` into ``h``."""
    h.passModel(build_lp(matrix, cost=cost, col_lower=col_lower, col_upper=col_upper, row_lower=row_lower,
                         row_upper=row_upper, integrality=integrality, maximize=maximize))


def build_lp(matrix: sp.spmatrix, *, cost: np.ndarray, col_lower: np.ndarray, col_upper: np.ndarray,
             row_lower: np.ndarray, row_upper: np.ndarray, integrality: np.ndarray | None = None,
             maximize: bool = False) -> highspy.HighsLp:
    """The HighsLp of ``row_lower <= matrix @ x <= row_upper``, ``col_lower <= x <= col_upper``
    (column-wise sparse matrix; integer columns where ``integrality`` is true)."""
    a = sp.csc_matrix(matrix)
    a.sort_indices()
    lp = highspy.HighsLp()
    lp.num_col_ = a.shape[1]
    lp.num_row_ = a.shape[0]
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_ = np.asarray(col_lower, dtype=float)
    lp.col_upper_ = np.asarray(col_upper, dtype=float)
    lp.row_lower_ = np.asarray(row_lower, dtype=float)
    lp.row_upper_ = np.asarray(row_upper, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = a.indptr.astype(np.int32)
    lp.a_matrix_.index_ = a.indices.astype(np.int32)
    lp.a_matrix_.value_ = a.data.astype(float)
    if maximize:
        lp.sense_ = highspy.ObjSense.kMaximize
    if integrality is not None:
        lp.integrality_ = [highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous
                           for v in integrality]
    return lp


def run(h: highspy.Highs) -> str:
    """Solve (``h.run()``) with C-level output kept off the terminal; return :func:`status`."""
    h.run()
    return status(h)


def status(h: highspy.Highs) -> str:
    """Model status as lower-case text ("optimal", "infeasible", "unbounded", "time limit reached")."""
    return h.modelStatusToString(h.getModelStatus()).lower()


#: what to try, per status, in the one solver-error message
_ADVICE = {
    "time limit reached": "raise the step's time_limit, or make the problem smaller",
    "iteration limit reached": "make the problem smaller or relax its bounds",
    "infeasible": "the constraints admit no solution: relax the step's bounds",
    "primal infeasible or unbounded": "the constraints admit no solution: relax the step's bounds",
    "unbounded": "the model is unbounded; please report this input",
    "not set": "the solver did not run; please report this input",
    "load error": "the model could not be loaded; please report this input",
    "model error": "the model is malformed; please report this input",
    "solve error": "the solver failed numerically; try again with other settings or report this input",
    "empty": "the model is empty (NaN or infinite inputs?); check the input values",
}


def raise_for_status(h: highspy.Highs, *, step: str, what: str = "",
                     accept: tuple[str, ...] = ("optimal",), advice: str | None = None) -> str:
    """Return the status if it is one of ``accept``; otherwise raise :class:`SolverError`.

    The message names the step, what was being solved, the status and what to try:
    ``"local_suppression (exact MILP): HiGHS ended 'time limit reached'; raise the step's
    time_limit, or make the problem smaller."``
    """
    st = status(h)
    if st in accept:
        return st
    hint = advice or _ADVICE.get(st, "please report this input")
    where = f"{step} ({what})" if what else step
    raise SolverError(f"{where}: HiGHS ended {st!r}; {hint}.")
