"""Post-masking optimisation (Algorithm 13 of the seed; Sebé, Domingo-Ferrer, Mateo-Sanz &
Torra 2002): modify the 100q% of masked records that contribute most to IL'1 so the masked
file keeps the first and second moments of the original (objective E, eq. 5.3) while IL'1
stays within [0.99, 1.01] p IL'1 (eq. 5.4).

Everything happens on records standardised with the original's means and sds (step 1). A step
changes one value z''_{iv} of one record i_v in M; it costs O(d^2 + log n):

- the 2d + d(d-1)/2 sums of eq. 5.3 are kept as running sums S1_j = sum_i z''_ij and
  S2_jk = sum_i z''_ij z''_ik, updated in O(d) and E recomputed from them in O(d^2);
- the record's nearest original C(i_v) comes from a KD-tree query, O(log n);
- IL'1 is a running sum of per-record contributions; only record i_v's is recomputed, O(d).

The hill climbing (steps 8a-8i) runs in a numba kernel on pre-drawn random numbers, in chunks
so a time limit can stop it. IL'1 is measured on the original scale (eq. 5.2 divides by
|x_{C(i)j}|, which is meaningless on standardised values near 0); a zero original value
x_{C(i)j} = 0 uses the sd of variable j as its denominator instead.

References
----------
Sebé, F., Domingo-Ferrer, J., Mateo-Sanz, J. M. and Torra, V. (2002). Post-masking
optimization of the tradeoff between information loss and disclosure risk in masked
microdata sets. *Inference Control in Statistical Databases*, LNCS 2316, 163-171.
Mateo-Sanz, J. M., Sebé, F. and Domingo-Ferrer, J. (2004). Outlier protection in continuous
microdata masking. *PSD 2004*, LNCS 3050, 201-215.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np

from .._random import as_generator
from .._validation import check_float, check_int
from ..errors import ParameterError
from ..utility.numeric import as_pair, standardiser

LEAF_SIZE = 16


# --------------------------------------------------------------------------- KD-tree
@dataclass(frozen=True)
class KDTree:
    """A static KD-tree as flat arrays, queried from numba (nearest neighbour, ties to the
    smallest index). ``perm`` orders the points so each node holds perm[start:end]."""

    points: np.ndarray
    perm: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dim: np.ndarray
    split: np.ndarray
    left: np.ndarray
    right: np.ndarray


def build_kdtree(Z: np.ndarray, leaf_size: int = LEAF_SIZE) -> KDTree:
    """Median splits on the widest dimension until a node holds at most ``leaf_size`` points."""
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    n = Z.shape[0]
    cap = 2 * (n // max(1, leaf_size) + 1) * 2 + 1
    start = np.zeros(cap, np.int64)
    end = np.zeros(cap, np.int64)
    dim = np.full(cap, -1, np.int64)
    split = np.zeros(cap)
    left = np.full(cap, -1, np.int64)
    right = np.full(cap, -1, np.int64)
    perm = np.arange(n, dtype=np.int64)
    start[0], end[0] = 0, n
    n_nodes, stack = 1, [0]
    while stack:
        node = stack.pop()
        a, b = start[node], end[node]
        if b - a <= leaf_size:
            continue
        pts = Z[perm[a:b]]
        spread = pts.max(axis=0) - pts.min(axis=0)
        j = int(np.argmax(spread))
        if spread[j] == 0:  # all points equal: keep as a leaf
            continue
        mid = (b - a) // 2
        order = np.argpartition(pts[:, j], mid)
        perm[a:b] = perm[a:b][order]
        dim[node], split[node] = j, Z[perm[a + mid], j]
        for child, (s, e) in ((n_nodes, (a, a + mid)), (n_nodes + 1, (a + mid, b))):
            start[child], end[child] = s, e
            stack.append(child)
        left[node], right[node] = n_nodes, n_nodes + 1
        n_nodes += 2
    return KDTree(Z, perm, start[:n_nodes], end[:n_nodes], dim[:n_nodes], split[:n_nodes],
                  left[:n_nodes], right[:n_nodes])


@numba.njit(cache=True)
def _nn(q, P, perm, start, end, dim, split, left, right):  # pragma: no cover - compiled
    """Index of the point of P nearest to q (squared Euclidean), smallest index on ties."""
    best = np.inf
    best_i = -1
    nodes = np.empty(128, np.int64)
    bounds = np.empty(128)
    nodes[0] = 0
    bounds[0] = 0.0
    sp = 1
    d = P.shape[1]
    while sp > 0:
        sp -= 1
        node = nodes[sp]
        if bounds[sp] > best:
            continue
        if left[node] < 0:
            for t in range(start[node], end[node]):
                k = perm[t]
                s = 0.0
                for j in range(d):
                    r = q[j] - P[k, j]
                    s += r * r
                if s < best or (s == best and k < best_i):
                    best = s
                    best_i = k
            continue
        diff = q[dim[node]] - split[node]
        parent = bounds[sp]
        if diff < 0:
            near, far = left[node], right[node]
        else:
            near, far = right[node], left[node]
        # the far child lies beyond the split plane: its bound is at least diff^2;
        # the near child keeps the parent's bound (popped first)
        nodes[sp] = far
        bounds[sp] = max(parent, diff * diff)
        nodes[sp + 1] = near
        bounds[sp + 1] = parent
        sp += 2
    return best_i


@numba.njit(cache=True)
def kdtree_query(Q, P, perm, start, end, dim, split, left, right):  # pragma: no cover - compiled
    out = np.empty(Q.shape[0], np.int64)
    for i in range(Q.shape[0]):
        out[i] = _nn(Q[i], P, perm, start, end, dim, split, left, right)
    return out


def query(tree: KDTree, Q: np.ndarray) -> np.ndarray:
    """Nearest point of the tree for each row of Q."""
    return kdtree_query(np.ascontiguousarray(Q, dtype=np.float64), tree.points, tree.perm, tree.start,
                        tree.end, tree.dim, tree.split, tree.left, tree.right)


# --------------------------------------------------------------------------- objective
def moment_targets(Zo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """T1_j = sum_i z_ij / n and T2_jk = sum_i z_ij z_ik / n of the (standardised) original."""
    return Zo.mean(axis=0), (Zo.T @ Zo) / Zo.shape[0]


@numba.njit(cache=True)
def objective_e(S1, S2, T1, T2, n):  # pragma: no cover - compiled
    """E of eq. 5.3 from the running sums: means, squares (j = k) and cross products (j < k)."""
    d = S1.shape[0]
    e = 0.0
    for j in range(d):
        r = S1[j] / n - T1[j]
        e += r * r
        for k in range(j, d):
            r = S2[j, k] / n - T2[j, k]
            e += r * r
    return e


@numba.njit(cache=True)
def _record_loss(z, c, Zo, sd, den, power):  # pragma: no cover - compiled
    """Record's IL'1 sum: sum_j |x''_ij - x_cj| / |x_cj| = sum_j sd_j |z''_ij - z_cj| / den_cj
    (each term raised to ``power``; 1 is eq. 5.2)."""
    s = 0.0
    for j in range(z.shape[0]):
        r = sd[j] * abs(z[j] - Zo[c, j]) / den[c, j]
        s += r if power == 1.0 else r ** power
    return s


@numba.njit(cache=True)
def _climb(Z, C, loss, S1, S2, T1, T2, Zo, sd, den, M, rec_u, var_u, noise, step_size,
           relative, shift, power, literal, state, target_il, target_e, trace_e, trace_il, stride, step0,
           perm, start, end, dim, split, left, right):  # pragma: no cover - compiled
    """Steps 8a-8i of Algorithm 13 on pre-drawn random numbers; updates everything in place.

    state = [E, L (sum of record losses), accepted, E variable, IL'1 variable]; returns the
    number of steps taken. E and L are those of the current X''. The variables are what steps
    8c-8g compare with: the current X'''s (default), or with ``literal`` the last proposal's,
    since step 8i restores only v and C(i_v), not E and IL'1.
    """
    n = Z.shape[0]
    d = Z.shape[1]
    denom = n * d
    e = state[0]
    total = state[1]
    e_var = state[3]
    il_var = state[4]
    steps = rec_u.shape[0]
    for t in range(steps):
        if e_var < target_e:                 # while E >= TargetE
            return t
        i = M[rec_u[t]]                      # (a) a value v of a record i_v in M ...
        j = var_u[t]
        v = Z[i, j]
        if relative:                         # ... randomly perturbed to v': x' (1 + s N(0,1))
            v_new = v + step_size * noise[t] * abs(v + shift[j])   # |x'| / sd = |z' + mean/sd|
        else:                                # ... or v' = v + s N(0,1) (s in sds)
            v_new = v + step_size * noise[t]
        delta = v_new - v
        # running sums of eq. 5.3: S1_j, S2_jj, S2_jk (k != j)
        S1[j] += delta
        S2[j, j] += v_new * v_new - v * v
        for k in range(d):
            if k != j:
                S2[j, k] += delta * Z[i, k]
                S2[k, j] = S2[j, k]
        Z[i, j] = v_new
        old_c = C[i]
        new_c = _nn(Z[i], Zo, perm, start, end, dim, split, left, right)   # (b) C(i_v)
        prev_il = il_var                                                     # (c)
        new_loss = _record_loss(Z[i], new_c, Zo, sd, den, power)
        new_total = total - loss[i] + new_loss
        il = new_total / denom                                               # (d)
        e_new = objective_e(S1, S2, T1, T2, n)                               # (e), (f)
        undo = e_new >= e_var                                                # (e), (g)
        lo = 0.99 * target_il
        hi = 1.01 * target_il
        if (il < lo or il > hi) and abs(il - target_il) >= abs(prev_il - target_il):   # (h)
            undo = True
        if undo:                                                             # (i)
            Z[i, j] = v
            S1[j] -= delta
            S2[j, j] -= v_new * v_new - v * v
            for k in range(d):
                if k != j:
                    S2[j, k] -= delta * Z[i, k]
                    S2[k, j] = S2[j, k]
            C[i] = old_c
        else:
            C[i] = new_c
            loss[i] = new_loss
            total = new_total
            e = e_new
            state[2] += 1
        if literal:                          # (i) restores v only: E, IL'1 keep the proposal's
            e_var = e_new
            il_var = il
        else:
            e_var = e
            il_var = total / denom
        g = step0 + t
        if g % stride == 0:
            r = g // stride
            if r < trace_e.shape[0]:
                trace_e[r] = e
                trace_il[r] = total / denom
        state[0] = e
        state[1] = total
        state[3] = e_var
        state[4] = il_var
    return steps


# --------------------------------------------------------------------------- driver
#: scales of the IL'1 inside Algorithm 13 (see ``postmask_optimise``)
IL1_SCALES = ("original", "standardised", "absolute")
#: perturbations of step 8a (see ``postmask_optimise``)
PERTURBATIONS = ("additive", "relative")
#: what step 8i restores (see ``postmask_optimise``)
UNDO_RULES = ("restore", "literal")

@dataclass(frozen=True)
class PostMaskOutcome:
    """What Algorithm 13 did: the optimised file X'' and the trace of E and IL'1.

    ``trace_step``, ``trace_e`` and ``trace_il1`` hold E and IL'1 after every ``stride``-th step
    (every step when the step limit is at most ``max_trace``).
    """

    data: np.ndarray
    modified_records: np.ndarray
    e_initial: float
    e_final: float
    il1_initial: float
    il1_target: float
    il1_final: float
    steps: int
    accepted: int
    stop_reason: str
    seconds: float
    trace_step: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, np.int64))
    trace_e: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    trace_il1: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    def summary(self) -> dict:
        return {"e_initial": self.e_initial, "e_final": self.e_final, "il1_initial": self.il1_initial,
                "il1_target": self.il1_target, "il1_final": self.il1_final, "steps": self.steps,
                "accepted": self.accepted, "stop_reason": self.stop_reason, "seconds": self.seconds,
                "records_in_m": int(self.modified_records.size)}


def postmask_optimise(X, Xm, *, p: float = 0.5, q: float = 0.1, target_e: float = 0.0,
                      max_steps: int = 2_000_000, time_limit: float = 60.0, step_size: float = 0.1,
                      rng=None, chunk: int = 50_000, max_trace: int = 100_000,
                      il1_scale: str = "original", perturbation: str = "additive",
                      il1_power: float = 1.0, undo: str = "restore") -> PostMaskOutcome:
    """Algorithm 13 (PostMaskOptim(X, X', p, q, TargetE)) of the seed.

    Parameters
    ----------
    X, Xm : array (n, d), (n', d) or DataFrames with the same columns
        Original file X and its masking X'.
    p : float > 0
        TargetIL'1 = p IL'1(X, X') (step 3); IL'1 is kept within [0.99, 1.01] TargetIL'1 (eq. 5.4).
    q : float in (0, 1]
        Share of the records of X' (those contributing most to IL'1) that may change (step 5).
    target_e : float >= 0
        Stop once E < TargetE (step 8); 0 runs to the step or time limit.
    max_steps, time_limit : int, float
        Other stopping rules (steps of 8a-8i; seconds).
    step_size : float > 0
        Standard deviation of the Gaussian perturbation of step 8a, in sds of the variable.
    rng : int, Generator or None
        Randomness of the record, variable and perturbation draws.
    il1_scale : {"original", "standardised", "absolute"}
        Scale of the IL'1 that steps 2-5 and the constraint (5.4) use: eq. 5.2 on the original
        values (default); on the standardised values of step 1 (|z''_ij - z_cj| / |z_cj|, a
        zero z_cj replaced by 1), which is how Algorithm 13 reads literally; or the mean
        absolute deviation in sds (|z''_ij - z_cj|, no division). The outcome's ``il1_*``
        figures are on that scale.
    perturbation : {"additive", "relative"}
        Step 8a ("randomly perturb v"; the seed gives no distribution): ``"additive"`` draws
        v' = v + step_size N(0, 1) in sds of the variable (default); ``"relative"`` draws
        x' = x (1 + step_size N(0, 1)) on the original scale, so small values move little.
    il1_power : float > 0
        Each term of the IL'1 inside the algorithm raised to this power (1 is eq. 5.2; 2 sums
        squared relative errors). Kept with ``il1_scale`` for the study of the Table 5.1 gap
        (docs/methods/postmask.md): neither reproduces the paper's IL', DLD' and ID' together.
    undo : {"restore", "literal"}
        What a rejected move (step 8i) gives back. ``"restore"`` (default): the value v, C(i_v),
        E and IL'1, so steps 8c-8h compare every proposal with the current X''. ``"literal"``:
        only v and C(i_v), as step 8i is written; E and IL'1 keep the rejected proposal's values,
        the next proposal is compared with those, and the loop stops once that E is below
        TargetE (the outcome's ``e_final`` is the E of the returned X'', which may be above it).

    Returns
    -------
    PostMaskOutcome
        X'' on the original scale (values of records outside M are X' exactly) and the trace.
    """
    owner = "postmask_optimise"
    p = check_float(owner, "p", p, low=0.0, low_open=True)
    q = check_float(owner, "q", q, low=0.0, high=1.0, low_open=True)
    target_e = check_float(owner, "target_e", target_e, low=0.0)
    max_steps = check_int(owner, "max_steps", max_steps, min_value=1)
    time_limit = check_float(owner, "time_limit", time_limit, low=0.0, low_open=True)
    step_size = check_float(owner, "step_size", step_size, low=0.0, low_open=True)
    il1_power = check_float(owner, "il1_power", il1_power, low=0.0, low_open=True)
    X, Xm, _ = as_pair(X, Xm, where="postmask")
    gen = as_generator(rng)
    t0 = time.perf_counter()
    mean, sd = standardiser(X)                                   # step 1
    Zo = np.ascontiguousarray((X - mean) / sd)
    Z0 = np.ascontiguousarray((Xm - mean) / sd)
    Z = Z0.copy()
    if il1_scale not in IL1_SCALES:
        raise ParameterError(f"postmask_optimise: il1_scale must be one of {IL1_SCALES}; "
                             f"got {il1_scale!r}.")
    if il1_scale == "original":
        den = np.abs(X)
        den = np.where(den > 0, den, sd)                         # zero value: the sd instead
        w = sd                                                   # |x'' - x| = sd |z'' - z|
    elif il1_scale == "standardised":
        den = np.abs(Zo)
        den = np.where(den > 0, den, 1.0)
        w = np.ones_like(sd)
    else:                                                        # "absolute": |z'' - z| (in sds)
        den = np.ones_like(Zo)
        w = np.ones_like(sd)
    if undo not in UNDO_RULES:
        raise ParameterError(f"postmask_optimise: undo must be one of {UNDO_RULES}; got {undo!r}.")
    if perturbation not in PERTURBATIONS:
        raise ParameterError(f"postmask_optimise: perturbation must be one of {PERTURBATIONS}; "
                             f"got {perturbation!r}.")
    shift = mean / sd
    tree = build_kdtree(Zo)
    C = query(tree, Z)                                           # step 6 (c(i) = C(i) for X'' = X')
    loss = _losses(Z, C, Zo, w, den, float(il1_power))
    n, d = Z.shape
    il1_initial = float(loss.sum() / (n * d))                    # step 2, eq. 5.2
    target_il = p * il1_initial                                  # step 3
    m_size = max(1, int(np.ceil(q * n)))
    M = np.sort(np.argsort(-loss, kind="stable")[:m_size]).astype(np.int64)   # step 5
    T1, T2 = moment_targets(Zo)
    S1, S2 = Z.sum(axis=0), Z.T @ Z
    e_initial = float(objective_e(S1, S2, T1, T2, n))            # step 7
    state = np.array([e_initial, float(loss.sum()), 0.0, e_initial, il1_initial])
    stride = max(1, -(-max_steps // max_trace))
    trace_e = np.full(max_steps // stride + 1, np.nan)
    trace_il = np.full(max_steps // stride + 1, np.nan)
    done, reason = 0, "max_steps"
    while done < max_steps:                                      # step 8
        if state[3] < target_e:
            reason = "target_e"
            break
        if time.perf_counter() - t0 > time_limit:
            reason = "time_limit"
            break
        size = min(chunk, max_steps - done)
        rec_u = gen.integers(0, m_size, size)
        var_u = gen.integers(0, d, size)
        noise = gen.standard_normal(size)
        taken = _climb(Z, C, loss, S1, S2, T1, T2, Zo, w, den, M, rec_u, var_u, noise, step_size,
                       perturbation == "relative", shift, float(il1_power), undo == "literal", state, target_il, target_e, trace_e, trace_il, stride, done,
                       tree.perm, tree.start, tree.end, tree.dim, tree.split, tree.left, tree.right)
        done += int(taken)
        if taken < size:
            reason = "target_e"
            break
    else:
        reason = "target_e" if state[3] < target_e else "max_steps"
    out = Xm.copy()                                              # step 9: destandardise
    changed = Z != Z0
    out[changed] = (mean + sd * Z)[changed]
    rows = np.arange(0, done, stride)
    k = rows.size
    return PostMaskOutcome(out, M, e_initial, float(state[0]), il1_initial, float(target_il),
                           float(state[1] / (n * d)), done, int(state[2]), reason,
                           time.perf_counter() - t0, rows, trace_e[:k].copy(), trace_il[:k].copy())


@numba.njit(cache=True)
def _losses(Z, C, Zo, sd, den, power):  # pragma: no cover - compiled
    out = np.empty(Z.shape[0])
    for i in range(Z.shape[0]):
        out[i] = _record_loss(Z[i], C[i], Zo, sd, den, power)
    return out
