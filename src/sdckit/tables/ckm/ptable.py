"""Perturbation tables (p-tables) of the cell key method: read, check, generate, look up.

A p-table lists, for each original cell value ``i``, the possible perturbed values ``j`` with
their probabilities ``p`` and the perturbation ``v = j - i``. The rows of one ``i`` split
[0, 1) into intervals ``[p_int_lb, p_int_ub)`` of length ``p``; a cell whose key falls into an
interval gets that interval's ``v``.

Lookup rule (as tau-Argus): a cell with count ``i`` above the table's largest ``i`` uses the
row of the largest ``i`` (the "symmetric" row); the perturbation is the ``v`` of the first
row, in order of ``p_int_ub``, whose ``p_int_ub`` exceeds the cell key (intervals closed below,
open above); a zero cell stays 0.

Generation follows the maximum-entropy construction of the ``ptable`` R package (Enderle,
Giessing & Tent 2018; Giessing 2016): for each ``i`` the probabilities over
``j = max(i - D, 0), ..., i + D`` (without the blocked values ``1..js``) maximise the entropy
``-sum p log p`` subject to

    (5) sum p = 1, (1) sum v p = 0 (unbiased), (2) sum v^2 p <= V,
    p >= 1e-8 (p_stay for v = 0 when given), and, with ``mono``, p non-decreasing towards v = 0
    from below.

The cumulative bounds are rounded to 8 decimals and ``p`` is recomputed as their differences,
as the R package does. The convex problem is solved with scipy's SLSQP, whose active set
(bounds, monotone runs, variance) is then polished by solving the KKT conditions exactly
(:func:`_polish`, scipy ``root``).

References
----------
Enderle, T., Giessing, S. & Tent, R. (2018). Designing confidentiality on the fly. *PSD 2018*,
LNCS 11126, 189-207. Springer.
Giessing, S. (2016). Computational issues in the design of transition probabilities and
disclosure risk estimation for additive noise. *PSD 2016*, LNCS 9867, 237-251. Springer.
Fraser, B. & Wooton, J. (2006). A proposed method for confidentialising tabular output to
protect against differencing. Eurostat monographs of official statistics, 299-302.
sdcTools/ptable (R package), ``pt_create_pTable`` and ``pt_optim_entropy``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from ...errors import InputError, ParameterError, SolverError

__all__ = ["PTable", "KEY_SCALE", "load_ptable"]

#: cell keys and interval bounds are compared as integers in units of 1e-12 (exact for keys
#: and bounds given with up to 12 decimals, as tau-Argus's are)
KEY_DIGITS = 12
KEY_SCALE = 10 ** KEY_DIGITS
_ROUND = 8  # decimals of the cumulative bounds of a generated table (ptable R package)
_EPS = 1e-8  # lower bound of every probability in the construction (ptable R package)


@dataclass(frozen=True)
class PTable:
    """A perturbation table.

    Attributes
    ----------
    frame : DataFrame
        Columns ``i, j, p, v, p_int_lb, p_int_ub, type``, sorted by ``type, i, p_int_ub``.
    kind : {"counts", "magnitude"}
        Counts tables need every ``i`` from 0 to the largest; magnitude tables (fractional
        ``j`` or a ``type`` column) give rows at chosen ``i`` and are interpolated between them.
    source : str
        The file read, or the parameters the table was generated from.
    params : dict
        ``D``, ``V``, ``js`` (and ``step``, ``icat``) for a generated table, else empty.
    """

    frame: pd.DataFrame
    kind: str = "counts"
    source: str = ""
    params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_frame(self.frame, self.kind, self.source or "p-table")

    # ------------------------------------------------------------------ construction
    @classmethod
    def read(cls, path: str | Path, kind: str | None = None) -> PTable:
        """Read a p-table in tau-Argus / ptable format (``;``-separated, header ``i;j;p;v;p_int_ub``;
        ``p_ij_ub`` is accepted for ``p_int_ub``; an optional ``type`` column)."""
        p = Path(path)
        if not p.is_file():
            raise InputError(f"p-table {str(p)!r} does not exist; give the path of a p-table file (i;j;p;v;p_int_ub)")
        try:
            df = pd.read_csv(p, sep=None, engine="python")
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
            raise InputError(f"p-table {p}: cannot be read as a ;-separated table ({e})") from None
        return cls.from_frame(df, kind=kind, source=str(p))

    @classmethod
    def from_frame(cls, df: pd.DataFrame, kind: str | None = None, source: str = "p-table") -> PTable:
        """A p-table from a frame with columns ``i, j, p, v`` and ``p_int_ub`` (or ``p_ij_ub``)."""
        df = df.copy()
        df.columns = [str(c).strip().strip('"') for c in df.columns]
        if "p_int_ub" not in df.columns and "p_ij_ub" in df.columns:
            df = df.rename(columns={"p_ij_ub": "p_int_ub"})
        miss = [c for c in ("i", "j", "p", "v", "p_int_ub") if c not in df.columns]
        if miss:
            raise InputError(f"{source}: column(s) {miss} missing; a p-table has columns i;j;p;v;p_int_ub")
        for c in ("i", "j", "p", "v", "p_int_ub"):
            vals = pd.to_numeric(df[c], errors="coerce")
            if vals.isna().any():
                row = int(np.flatnonzero(vals.isna().to_numpy())[0]) + 2
                raise InputError(f"{source}: line {row}, column {c!r} is empty or not a number "
                                 f"({df[c].iloc[row - 2]!r}); every row needs numeric i, j, p, v, p_int_ub")
            df[c] = vals.astype(float)
        if "type" not in df.columns:
            df["type"] = "all"
        df["type"] = df["type"].astype(str).str.strip().str.strip('"')
        if kind is None:
            frac = (np.abs(df["j"] - np.round(df["j"])) > 1e-9).any()
            kind = "magnitude" if frac or (df["type"] != "all").any() or "type" in source else "counts"
            if kind == "counts" and frac:
                kind = "magnitude"
        df = df.sort_values(["type", "i", "p_int_ub"], kind="stable").reset_index(drop=True)
        df["p_int_lb"] = df.groupby(["type", "i"])["p_int_ub"].shift(1).fillna(0.0)
        df = df[["i", "j", "p", "v", "p_int_lb", "p_int_ub", "type"]]
        return cls(df, kind=kind, source=source)

    @classmethod
    def generate(cls, D: int, V: float, js: int = 0, *, pstay: float | None = None, mono: bool = True,
                 kind: str = "counts", step: int = 1, icat=None) -> PTable:
        """Generate a p-table from its parameters with the maximum-entropy construction.

        Parameters
        ----------
        D : int
            Maximum deviation (``|v| <= D``).
        V : float
            Noise variance (``sum v^2 p = V`` where the constraint binds).
        js : int
            Threshold: perturbed counts ``1..js`` never occur (counts tables only).
        pstay : float, optional
            Lower bound on the probability of no change (``v = 0``).
        mono : bool
            Probabilities do not decrease from ``v = -D`` towards ``v = 0``.
        kind : {"counts", "magnitude"}
            ``counts``: rows ``i = 1 .. D + js + 1`` (``1 .. D`` when ``js = 0``).
            ``magnitude``: rows at ``icat`` (must contain 1 and D), ``j`` in steps of ``1/step``.

        Returns
        -------
        PTable
            With ``params`` recording the arguments; every row is checked (sums to 1, mean 0,
            variance at most V).
        """
        owner = "PTable.generate"
        if not isinstance(D, (int, np.integer)) or D < 1:
            raise ParameterError(f"The 'D' parameter of {owner} must be an int >= 1. Got {D!r}.", param="D", value=D)
        if not isinstance(V, (int, float)) or not V > 0:
            raise ParameterError(f"The 'V' parameter of {owner} must be a number > 0. Got {V!r}.", param="V", value=V)
        if not isinstance(js, (int, np.integer)) or js < 0:
            raise ParameterError(f"The 'js' parameter of {owner} must be an int >= 0. Got {js!r}.", param="js", value=js)
        if pstay is not None and not 0 < pstay < 1:
            raise ParameterError(f"The 'pstay' parameter of {owner} must be in (0, 1). Got {pstay!r}.",
                                 param="pstay", value=pstay)
        if kind == "counts":
            rows = list(range(1, (D + js + 1 if js > 0 else D) + 1))
            step = 1
        elif kind == "magnitude":
            rows = sorted(set(int(x) for x in (icat if icat is not None else (1, D))))
            if 1 not in rows or D not in rows or max(rows) > D:
                raise ParameterError(f"The 'icat' parameter of {owner} must contain 1 and D={D} and nothing above D. "
                                     f"Got {rows}.", param="icat", value=icat)
            js, pstay = 0, None
        else:
            raise ParameterError(f"The 'kind' parameter of {owner} must be 'counts' or 'magnitude'. Got {kind!r}.",
                                 param="kind", value=kind)
        parts = [pd.DataFrame({"i": [0.0], "j": [0.0], "p": [1.0], "v": [0.0], "p_int_ub": [1.0]})]
        for i in rows:
            j, v, p = _max_entropy_row(i, D, V, js, pstay, mono, step)
            ub = np.round(np.cumsum(p), _ROUND)
            ub[-1] = 1.0
            parts.append(pd.DataFrame({"i": float(i), "j": j, "p": np.diff(np.r_[0.0, ub]), "v": v, "p_int_ub": ub}))
        df = pd.concat(parts, ignore_index=True)
        df["type"] = "all"
        params = {"D": int(D), "V": float(V), "js": int(js), "pstay": pstay, "mono": bool(mono), "kind": kind}
        if kind == "magnitude":
            params.update(step=int(step), icat=rows)
        src = f"generated (D={D}, V={V:g}" + (f", js={js}" if js else "") + (f", pstay={pstay:g}" if pstay else "") + ")"
        out = cls.from_frame(df, kind=kind, source=src)
        return PTable(out.frame, kind=kind, source=src, params=params)

    # ------------------------------------------------------------------ properties
    @property
    def max_i(self) -> int:
        return int(self.frame["i"].max())

    @property
    def max_abs_v(self) -> float:
        return float(np.abs(self.frame["v"]).max())

    def row_checks(self) -> pd.DataFrame:
        """Per row ``(type, i)``: sum of p, mean ``sum v p`` (bias) and variance ``sum v^2 p``."""
        f = self.frame.assign(pv=self.frame.p * self.frame.v, pv2=self.frame.p * self.frame.v ** 2)
        g = f.groupby(["type", "i"], sort=True)
        return pd.DataFrame({"p_sum": g["p"].sum(), "mean": g["pv"].sum(), "variance": g["pv2"].sum()}).reset_index()

    def describe(self) -> str:
        return f"{self.kind} p-table {self.source}: i = 0..{self.max_i}, |v| <= {self.max_abs_v:g}"

    def to_text(self) -> str:
        """The table in tau-Argus / ptable format (``;``-separated, 8 decimals)."""
        f = self.frame
        cols = ["i", "j", "p", "v", "p_int_ub"] + (["type"] if self.kind == "magnitude" else [])
        out = f[cols].copy()
        for c in ("i", "j", "v"):
            out[c] = out[c].map(lambda x: f"{x:g}")
        for c in ("p", "p_int_ub"):
            out[c] = out[c].map(lambda x: f"{x:.8f}".rstrip("0").rstrip(".") or "0")
        return out.to_csv(sep=";", index=False)

    # ------------------------------------------------------------------ lookup
    def lookup(self, i, cell_key_int, *, type_: str = "all") -> np.ndarray:
        """Perturbation ``v`` for integer counts ``i`` and cell keys given as integers in units of
        1/:data:`KEY_SCALE`. Zero counts get 0; counts above the largest ``i`` use its row."""
        i = np.asarray(i, dtype=np.int64)
        ck = np.asarray(cell_key_int, dtype=np.int64)
        f = self.frame[self.frame["type"] == type_]
        if f.empty:
            raise InputError(f"{self.source}: no rows of type {type_!r}")
        rows_i = f["i"].to_numpy().astype(np.int64)
        ub = np.rint(f["p_int_ub"].to_numpy() * KEY_SCALE).astype(np.int64)
        ub[np.r_[rows_i[1:] != rows_i[:-1], True]] = KEY_SCALE  # the last interval of a row ends at 1
        vv = f["v"].to_numpy()
        width = KEY_SCALE + 1
        g = rows_i * width + ub  # sorted: by i, then by p_int_ub
        ii = np.minimum(i, int(rows_i.max()))
        pos = np.searchsorted(g, ii * width + ck, side="right")  # first row with p_int_ub > key
        out = vv[np.minimum(pos, len(vv) - 1)]
        return np.where(i <= 0, 0.0, out)


def load_ptable(ptable, kind: str | None = None) -> PTable:
    """A :class:`PTable` from a PTable, a path, or a dict of generation parameters (D, V, js...)."""
    if isinstance(ptable, PTable):
        return ptable
    if isinstance(ptable, dict):
        args = dict(ptable)
        if kind is not None:
            args.setdefault("kind", kind)
        unknown = set(args) - {"D", "V", "js", "pstay", "mono", "kind", "step", "icat"}
        if unknown:
            raise ParameterError(f"p-table parameters: unknown key(s) {sorted(unknown)}; give D, V, js "
                                 "(and pstay, mono, kind, step, icat)", param=sorted(unknown)[0])
        if "D" not in args or "V" not in args:
            raise ParameterError("p-table parameters: give at least D (maximum deviation) and V (variance)", param="D")
        return PTable.generate(**args)
    if isinstance(ptable, (str, Path)):
        return PTable.read(ptable, kind=kind)
    raise InputError(f"ptable must be a PTable, a file path or a dict of parameters; got {type(ptable).__name__}")


def _check_frame(df: pd.DataFrame, kind: str, source: str, tol: float = 1e-6) -> None:
    """Each row (type, i) sums to 1, has p >= 0, bounds rising to 1 and matching cumsum(p);
    a counts table has every i from 0 to its largest."""
    if kind not in ("counts", "magnitude"):
        raise InputError(f"{source}: kind must be 'counts' or 'magnitude', got {kind!r}")
    if df.empty:
        raise InputError(f"{source}: the p-table has no rows")
    if (df["p"] < -tol).any():
        r = df[df["p"] < -tol].iloc[0]
        raise InputError(f"{source}: row i={r.i:g}, j={r.j:g} has p={r.p:g} < 0; probabilities must be >= 0")
    for (t, i), g in df.groupby(["type", "i"], sort=True):
        s = g["p"].sum()
        if abs(s - 1) > tol:
            raise InputError(f"{source}: the probabilities of row i={i:g} (type {t}) sum to {s:.8g}, not 1; "
                             "correct the p-table or generate it from its parameters")
        ub = g["p_int_ub"].to_numpy()
        if abs(ub[-1] - 1) > tol or np.abs(np.cumsum(g["p"].to_numpy()) - ub).max() > 1e-5:
            raise InputError(f"{source}: the bounds p_int_ub of row i={i:g} (type {t}) are not the running sums of p "
                             "ending at 1; correct the p-table")
    if kind == "counts":
        for t, g in df.groupby("type"):
            have = set(np.rint(g["i"]).astype(int))
            need = set(range(0, max(have) + 1))
            if need - have:
                raise InputError(f"{source}: the p-table lacks the cell value(s) i = {sorted(need - have)[:10]} "
                                 f"(type {t}); a counts p-table needs a row for every i from 0 to {max(have)}")


def _max_entropy_row(i: int, D: int, V: float, js: int, pstay, mono: bool, step: int):
    """Solve max -sum p log p s.t. sum p = 1, sum v p = 0, sum v^2 p <= V, p >= lb, monotone (ptable optim=1)."""
    j = np.round(np.arange(max(i - D, 0), i + D + 0.5 / step, 1.0 / step), 4)
    if js > 0:
        j = j[~np.isin(j, np.arange(1, js + 1))]
    v = np.round(j - i, 4)
    n = v.size
    lb = np.full(n, _EPS)
    if pstay is not None:
        lb[v == 0] = max(pstay, _EPS)
    cons = [{"type": "eq", "fun": lambda p: np.array([p.sum() - 1.0, p @ v]),
             "jac": lambda p: np.vstack([np.ones(n), v])},
            {"type": "ineq", "fun": lambda p: np.array([V - p @ v ** 2]), "jac": lambda p: -(v ** 2)[None, :]}]
    z = np.flatnonzero(v == 0)
    if mono and z.size and z[0] > 0:
        M = np.zeros((z[0], n))
        M[np.arange(z[0]), np.arange(z[0])] = 1.0
        M[np.arange(z[0]), np.arange(z[0]) + 1] = -1.0
        cons.append({"type": "ineq", "fun": lambda p: -(M @ p), "jac": lambda p: -M})
    # start from a discretised normal with variance V, shifted to mean 0 where the support allows
    x0 = np.exp(-0.5 * v ** 2 / V)
    x0 = np.maximum(x0 / x0.sum(), lb)
    x0 /= x0.sum()
    res = minimize(lambda p: float(np.sum(p * np.log(p))), x0, jac=lambda p: np.log(p) + 1.0, method="SLSQP",
                   bounds=list(zip(lb, np.ones(n))), constraints=cons, options={"ftol": 1e-10, "maxiter": 2000})
    p = np.clip(res.x, _EPS, 1.0)
    p = p / p.sum()
    p = _polish(p, v, V, lb, z[0] if (mono and z.size) else 0)
    mean, var = float(p @ v), float(p @ v ** 2)
    not_mono = bool(mono and z.size and np.any(np.diff(p[:z[0] + 1]) < -1e-7))
    if abs(p.sum() - 1) > 1e-9 or abs(mean) > 1e-7 or var > V + 1e-7 or not_mono:
        raise SolverError(f"p-table row i={i}: no distribution with D={D}, V={V:g}, js={js} meets the constraints "
                          f"(sum p = {p.sum():.6g}, mean = {mean:.3g}, variance = {var:.6g}); "
                          "the variance parameter is probably too small for these D and js")
    return j, v, p


def _polish(p: np.ndarray, v: np.ndarray, V: float, lb: np.ndarray, z: int) -> np.ndarray:
    """Solve the KKT conditions exactly on the active set the SLSQP answer shows.

    Probabilities at their lower bound stay there; runs of equal probabilities left of v = 0
    (active monotonicity) form groups G sharing one value. Stationarity of the entropy gives,
    for each free group, ``p_G = exp(-1 - l0 - l1 mean_G(v) - l2 mean_G(v^2))`` (l2 = 0 when the
    variance constraint is slack); ``l`` solves sum p = 1, sum v p = 0 (, sum v^2 p = V) with
    scipy's ``root``. The polished row is kept only if it is feasible and its entropy is not
    lower (beyond the 1e-6 an SLSQP row that misses the constraints by ~1e-8 can gain); otherwise
    the SLSQP row is returned.
    """
    from scipy.optimize import root

    n = p.size
    fixed = p <= lb * (1 + 1e-6)
    group = np.arange(n)
    for k in range(z):  # p_k <= p_{k+1} active: same group
        if abs(p[k] - p[k + 1]) <= 1e-6 * p[k + 1] and not fixed[k] and not fixed[k + 1]:
            group[k + 1] = group[k]
    var_active = abs(p @ v ** 2 - V) < 1e-6
    free = ~fixed
    if not free.any():
        return p
    gid = np.unique(group[free], return_inverse=True)[1]
    n_g = gid.max() + 1
    size = np.bincount(gid, minlength=n_g).astype(float)
    vbar = np.bincount(gid, weights=v[free], minlength=n_g) / size
    qbar = np.bincount(gid, weights=v[free] ** 2, minlength=n_g) / size
    pf = lb * fixed

    def expand(lam):
        pg = np.exp(-1.0 - lam[0] - lam[1] * vbar - (lam[2] * qbar if var_active else 0.0))
        out = pf.copy()
        out[free] = pg[gid]
        return out

    rows = [np.ones(n), v] + ([v ** 2] if var_active else [])
    cols = [np.ones(n_g), vbar] + ([qbar] if var_active else [])

    def resid(lam):
        q = expand(lam)
        return np.array([r @ q for r in rows]) - np.array([1.0, 0.0] + ([V] if var_active else []))

    def jac(lam):  # d p_G / d l_k = -p_G * cols[k][G]
        q = expand(lam)
        return np.array([[-(r[free] * q[free] * c[gid]).sum() for c in cols] for r in rows])

    # start: least squares fit of log p on the free groups
    A = np.column_stack([np.ones(n_g), vbar] + ([qbar] if var_active else []))
    logp = np.log(np.bincount(gid, weights=p[free], minlength=n_g) / size)
    lam0 = np.linalg.lstsq(A, -1.0 - logp, rcond=None)[0]
    lam0 = np.r_[lam0, 0.0] if not var_active else lam0
    k = 3 if var_active else 2
    with np.errstate(over="ignore", invalid="ignore"):
        sol = root(lambda x: resid(np.r_[x, 0.0][:3] if not var_active else x), lam0[:k],
                   jac=lambda x: jac(np.r_[x, 0.0][:3] if not var_active else x), method="hybr",
                   options={"xtol": 1e-15})
        lam = np.r_[sol.x, 0.0] if not var_active else sol.x
        q = expand(lam)
    ok = (np.all(np.isfinite(q)) and np.abs(resid(lam)).max() < 1e-13 and np.all(q >= lb - 1e-15)
          and q @ v ** 2 <= V + 1e-12 and (z == 0 or np.all(np.diff(q[:z + 1]) >= -1e-15))
          and -np.sum(q * np.log(q)) >= -np.sum(p * np.log(p)) - 1e-6)  # SLSQP's row may be infeasible by ~1e-8
    return q if ok else p
