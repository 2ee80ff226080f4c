"""Optimal PRAM against spontaneous recognition (Cator, Hensbergen & Rozenholc).

The steward states the security level alpha and the set Pi of variable combinations an
intruder may look at; this module finds the transition matrix P with the least L2 loss

    l2(P) = (1/n^2) sum_i sum_{k,l} (P^{-1}_{lk})^2 P_{xi(i) l} - 1/n                 (sec. 3)
          = (1/n^2) sum_l c_l s_l - 1/n,   c = U_0^T P,  s_l = ||row l of P^{-1}||^2

subject to condition C1 (eq. (1), linear in P once the denominator is an auxiliary
variable), rows summing to 1, P >= 0 and optionally diag(P) >= gamma, and certifies it with
the independent checker of :mod:`sdckit.pram.recognition`. No matrix leaves this package
unchecked: a failed or infeasible solve raises :class:`~sdckit.errors.SolverError` naming the
constraints that cannot be met.

Two supports:

- ``"full"``: every entry of P is free (the paper's 48 x 48 experiment). Solver: sequential
  quadratic programming from the identity. Each step minimises the exact gradient plus a
  diagonal quadratic model (2 U_0(m) / n^2 per entry of row m, the exact second-order term of
  the loss at I) under the exact linear constraints with the HiGHS QP solver, followed by an
  Armijo backtracking on the true loss (the feasible set is convex, so every point on the
  step is feasible). A final HiGHS LP gives the Frank-Wolfe gap g^T (P - P_lp), an upper
  bound on the distance to the optimum for a convex loss.
- ``"restricted"`` (end of section 4, for large identifying spaces): records only move from
  frequent elements (U_0 >= 1/alpha; at most ``max_sources``, the most frequent) into a small
  target set that covers every problem combination (pi, k0) with 0 < U_pi(k0) < 1/alpha,
  chosen by a set cover (HiGHS MILP over every element of small spaces, greedy merging of
  compatible combinations for large ones). With sources and targets disjoint, P is block
  triangular and the loss separates over source rows f with moved mass M_f (r_f = sum M_f):

      l2 = (1/n^2) sum_f U_0(f) [ (1 + ||M_f||^2) / (1 - r_f) + r_f - 1 ],

  a convex function (quadratic-over-linear), so Newton-SQP with the exact Hessian converges to
  the restricted optimum. C1 reduces to D_pi(k0) >= 1/alpha for the combinations of rare
  elements (their rows stay the identity), and sources satisfy it by ineq. (2). P is sparse.

The package: :mod:`.l2` (the loss, its gradient and Hessian), :mod:`.highs` (HiGHS calls),
:mod:`.constraints` (C1 as linear rows, input validation, the certificate),
:mod:`.targets` (the target cover of the restricted support), :mod:`.solver` (SQP, Frank-Wolfe,
:func:`optimal_matrix`), :mod:`.evidence` (comparison with the usual matrices, figure 1, the
report section) and :mod:`.register` (``Optimal``, ``matrix = { type = "optimal", ... }`` in the ``pram`` step and the
``max_recognition_ratio`` gate, registered on import).

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
TU Delft (DIAM) and Universite Pierre et Marie Curie; sections 2-4.
Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. and de Wolf, P.-P. (1998). Post
randomisation for statistical disclosure control. *Journal of Official Statistics* 14(4).
"""

from __future__ import annotations

from .constraints import MAX_FULL_ELEMENTS, OWNER, SAFETY, OptimalPRAMResult, projection_codes_of
from .evidence import (
                       change_evidence,
                       figure1,
                       kron_loss,
                       kron_recognition_max,
                       report_section,
                       usual_family,
                       weakest_usual,
)
from .highs import QP_TIME_LIMIT
from .l2 import l2_gradient, l2_loss_value, restricted_terms  # noqa: F401
from .register import MaxRecognitionRatio, Optimal  # registers the Optimal matrix type and its gate
from .solver import QP_MAX_VARIABLES, optimal_matrix
from .targets import target_cover

__all__ = ["MAX_FULL_ELEMENTS", "MaxRecognitionRatio", "OWNER", "Optimal", "OptimalPRAMResult", "QP_MAX_VARIABLES", "QP_TIME_LIMIT", "SAFETY",
           "change_evidence", "figure1", "kron_loss", "kron_recognition_max", "l2_gradient", "l2_loss_value",
           "optimal_matrix", "projection_codes_of", "report_section", "target_cover", "usual_family",
           "weakest_usual"]
