"""Evidence of an optimal PRAM matrix: the comparison with the usual (invariant, maximum
entropy) families at equal C1 (Kronecker products of per-variable matrices), the probability of
change against frequency (the paper's figure 1) and the report section.

References
----------
Cator, E., Hensbergen, A. and Rozenholc, Y. Statistical disclosure control using PRAM.
TU Delft (DIAM) and Universite Pierre et Marie Curie; sections 2-4.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ..._validation import check_choice
from ..recognition import Combination, combination_counts, recognition_check
from .constraints import OWNER


def kron_recognition_max(mats: Sequence[np.ndarray], counts: np.ndarray, shape: Sequence[int],
                         combinations: Sequence[Combination]) -> float:
    """Largest C1 ratio of the per-variable PRAM P = kron(P_1, ..., P_m), exactly.

    The rows of the variables outside pi sum to 1, so A_pi[m, k0] = prod_{j in pi} P_j[m_j, k0_j]
    depends on m through m_pi only and D_pi = U_pi^T kron_{j in pi} P_j: the check runs on the
    tables U_pi (small) instead of the joint space. Tested equal to :func:`recognition_check`.
    """
    best = 0.0
    for pi in combinations:
        K = np.ones((1, 1))
        for j in pi:
            K = np.kron(K, mats[j])
        u = combination_counts(counts, shape, pi)
        D = u @ K
        occ = u > 0
        Ko = K[occ]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(Ko > 0, Ko / np.where(D > 0, D, 1.0)[None, :], 0.0)
        best = max(best, float(ratio.max()))
    return best


def kron_loss(mats: Sequence[np.ndarray], counts: np.ndarray, shape: Sequence[int]) -> tuple[float, float]:
    """l2 and expected changes of P = kron(P_j) without forming it.

    P^{-1} = kron(P_j^{-1}) so s_l = prod_j ||row l_j of P_j^{-1}||^2; c = U_0^T P is U_0 with
    each P_j applied along its axis.
    """
    t = np.asarray(counts, dtype=float).reshape(tuple(shape))
    n = t.sum()
    c = t
    s = np.ones(())
    keep = np.ones(())
    for j, Pj in enumerate(mats):
        c = np.moveaxis(np.tensordot(c, Pj, axes=([j], [0])), -1, j)
        try:
            W = np.linalg.inv(Pj)
        except np.linalg.LinAlgError:
            return np.inf, np.nan
        s = np.multiply.outer(s, (W * W).sum(axis=1))
        keep = np.multiply.outer(keep, np.diag(Pj))
    return float((c * s).sum() / n**2 - 1.0 / n), float((t * (1.0 - keep)).sum())


def usual_family(kind: str, counts: np.ndarray, shape: Sequence[int], theta: float) -> list[np.ndarray]:
    """Per-variable matrices of strength theta in [0, 1] (0: identity, 1: no information).

    ``"invariant"``: sdcMicro's invariant PRAM R = P Q (Q the Bayes inverse for the variable's
    frequencies) with base diagonal pd_j = 1 - theta (1 - 1/L_j) and the rest spread evenly;
    ``"max_entropy"``: keep with d_j = 1 - theta (1 - 1/L_j), else move evenly.
    """
    from ..builders import invariant_array, max_entropy_array

    t = np.asarray(counts, dtype=float).reshape(tuple(shape))
    mats = []
    for j, L in enumerate(shape):
        d = 1.0 - theta * (1.0 - 1.0 / L)
        base = max_entropy_array(L, d)
        if kind == "max_entropy":
            mats.append(base)
        else:
            p = t.sum(axis=tuple(a for a in range(len(shape)) if a != j))
            mats.append(np.asarray(invariant_array(base, p / p.sum(), 1.0)))
    return mats


def weakest_usual(kind: str, counts: np.ndarray, shape: Sequence[int],
                  combinations: Sequence[Combination], alpha: float, *, steps: int = 40) -> dict:
    """The weakest member (smallest theta) of :func:`usual_family` that meets C1 at alpha.

    Bisection on theta (C1 holds at theta = 1, where every row is the same); the answer is
    the feasible end of the final bracket, certified by :func:`kron_recognition_max` and, when
    the joint space is small, by the general checker on the Kronecker product.
    """
    check_choice(OWNER, "kind", kind, ("invariant", "max_entropy"))
    counts = np.asarray(counts, dtype=float)

    def ok(theta):
        return kron_recognition_max(usual_family(kind, counts, shape, theta), counts, shape,
                                    combinations) <= alpha
    lo, hi = 0.0, 1.0
    if ok(lo):
        hi = 0.0
    else:
        for _ in range(steps):
            mid = 0.5 * (lo + hi)
            if ok(mid):
                hi = mid
            else:
                lo = mid
    mats = usual_family(kind, counts, shape, hi)
    ratio = kron_recognition_max(mats, counts, shape, combinations)
    if counts.size <= 3000:
        P = mats[0]
        for M in mats[1:]:
            P = np.kron(P, M)
        ratio = recognition_check(P, counts, shape, combinations).max_ratio
    loss, changes = kron_loss(mats, counts, shape)
    diag = np.ones(())
    for M in mats:
        diag = np.multiply.outer(diag, np.diag(M))
    return {"kind": kind, "theta": hi, "max_ratio": ratio, "holds": ratio <= alpha,
            "l2_loss": loss, "expected_changes": changes,
            "min_diagonal": float(diag.ravel()[counts > 0].min()), "matrices": mats}


def change_evidence(P, counts: np.ndarray, labels: Sequence | None = None, top: int = 10) -> dict:
    """Public evidence of where P moves records (no record-level data, only expectations).

    ``figure1``: for every occurring element its frequency U_0(m), the probability 1 - P_mm
    that one of its records changes and the probability 1 - P_mm^U_0(m) that at least one does
    (the paper's Figure 1); ``destinations``: the elements receiving the expected changed
    records, largest first, with their share; ``from_top3``: the share of the expected changes
    that come from the three most frequent elements (88 % in the paper).
    """
    counts = np.asarray(counts, dtype=float)
    diag = np.asarray(P.diagonal() if sp.issparse(P) else np.diag(P), dtype=float)
    occ = np.flatnonzero(counts > 0)
    change = np.clip(1.0 - diag[occ], 0.0, 1.0)
    out_flow = counts[occ] * change
    total = float(out_flow.sum())
    Pm = sp.csr_matrix(P) if sp.issparse(P) else P
    inflow = np.asarray(counts @ Pm).ravel() - counts * diag      # expected records moved in
    inflow = np.clip(inflow, 0.0, None)
    order = np.argsort(-inflow, kind="stable")[:top]
    name = (lambda k: labels[k]) if labels is not None else (lambda k: int(k))
    top3 = occ[np.argsort(-counts[occ], kind="stable")[:3]]
    return {
        "figure1": {"element": [name(k) for k in occ], "frequency": counts[occ].tolist(),
                    "p_change_record": change.tolist(),
                    "p_change_element": (1.0 - (1.0 - change) ** counts[occ]).tolist()},
        "destinations": [{"element": name(k), "expected_records_in": float(inflow[k]),
                          "share": float(inflow[k] / total) if total > 0 else 0.0}
                         for k in order if inflow[k] > 0],
        "from_top3": float((counts[top3] * (1.0 - diag[top3])).sum() / total) if total > 0 else 0.0,
    }


def figure1(fig1: dict, title: str = "Probability of change against frequency"):
    """The paper's Figure 1 from :func:`change_evidence`'s ``figure1``: a figure with two panels
    (at least one record of the element changes; one record changes)."""
    from ...report.plots import new_figure

    fig, ax = new_figure(9.0, 3.6)
    fig.delaxes(ax)
    a1, a2 = fig.subplots(1, 2)
    f = np.asarray(fig1["frequency"])
    a1.scatter(f, fig1["p_change_element"], s=14)
    a1.set_xlabel("frequency U_0(m)")
    a1.set_ylabel("P(some record of m changes)")
    a1.set_title(title, fontsize=9)
    a2.scatter(f, fig1["p_change_record"], s=14, color="tab:orange")
    a2.set_xlabel("frequency U_0(m)")
    a2.set_ylabel("1 - P_mm (one record)")
    fig.tight_layout()
    return fig


def report_section(evidence: dict) -> str:
    """HTML for the release report: recognition risk before/after, Figure 1, destinations."""
    import html as _html

    from ...report.plots import figure_to_html

    parts = [f"<p>Spontaneous recognition (C1, alpha = {evidence.get('alpha')}, combinations "
             f"{_html.escape(str(evidence.get('combinations')))}): largest ratio "
             f"{evidence.get('max_ratio_before', float('nan')):.4g} before, "
             f"{evidence.get('max_ratio_after', float('nan')):.4g} after (independent check). "
             f"Expected changed records {evidence.get('expected_changes', 0):.3g}; L2 loss "
             f"{evidence.get('l2_loss', 0):.3g}; solver {evidence.get('solver_status')}.</p>"]
    if evidence.get("figure1"):
        parts.append(figure_to_html(figure1(evidence["figure1"]), "probability of change against frequency"))
    dest = evidence.get("destinations") or []
    if dest:
        rows = "".join(f"<tr><td>{_html.escape(str(d['element']))}</td><td>{d['expected_records_in']:.3g}</td>"
                       f"<td>{d['share']:.3f}</td></tr>" for d in dest)
        parts.append("<table class='freq'><tr><th>changed records go to</th><th>expected records</th>"
                     f"<th>share</th></tr>{rows}</table>")
    return "".join(parts)
