"""Cell key method for magnitude tables: noise through the largest contributions.

Gießing's method as implemented by tau-Argus (``<CKM> T(K)`` with ``<SCALING> F(...)``) and the
``cellKey`` R package: the noise of a cell with value ``X`` is built from its ``K`` largest
contributions ``x_1 >= ... >= x_K``, one after the other,

    x_delta_k = sigma1 * x_k if x_k < x*, else eps_k * m(x_k) * x_k   (amplitude of contribution k)
    x_delta_k = |X_{k-1}| if that is smaller                 (rescaled: the amplitude never exceeds the value)
    a_k       = min(|X_{k-1} / x_delta_k|, D)                (row of the magnitude p-table)
    v_k       = ptable(a_k, ck_k)                            (interpolated between rows)
    X_k       = X_{k-1} + sign(X_{k-1}) * |x_delta_k| * v_k  (never below 0 for X_{k-1} > 0)

with ``X_0 = X`` and the published value ``X_K``. The flex function (Enderle, Giessing & Tent
2018, section 4)

    m(x) = sigma1                                              for x < x*
    m(x) = sigma0 * (1 + ((sigma1 x - sigma0 x*) / (sigma0 x*)) * (2 x* / (x* + x))^q)  otherwise

gives small contributions the relative noise ``sigma1`` and large ones a relative noise that
falls towards ``sigma0`` (continuous at x*). tau-Argus's metadata writes it
``<SCALING> F(sigma0, sigma1, x*, q, eps_2, ..., eps_K)`` (``eps_1 = 1``). The key of the
largest contribution is the cell key; the k-th uses the cell key with its 12 decimal digits
rotated k - 1 times (first digit moved to the end), the cellKey package's scrambling. If
``a_k`` lies between two rows ``i0 < a_k < i1`` of the p-table, ``v_k = (1 - l) v(i0) + l v(i1)``
with ``l = (a_k - i0)/(i1 - i0)``. With a small-cell p-table (``<SEPARATION> Y``), a contribution
below the separation point ``z_s = sqrt(m1^2) / (sqrt(sum eps_k^2) sigma1)`` (``m1^2`` the variance
of that table's largest row) is perturbed with amplitude 1 from that table; for k > 1 it adds
nothing (the intent stated in cellKey's ``.lookup_v_flex``).

References
----------
Gießing, S. & Tent, R. (2019). Concepts for generalising tools implementing the cell key method
to the case of continuous variables. UNECE/Eurostat Work Session on Statistical Data
Confidentiality, The Hague.
Enderle, T., Giessing, S. & Tent, R. (2018). Designing confidentiality on the fly. *PSD 2018*,
LNCS 11126, 189-207. Springer.
sdcTools/cellKey (R package), ``.perturb_cell_flex`` and ``.lookup_v_flex``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import InputError, ParameterError
from ..table import Hierarchy, Table
from .cellkey import CKMResult, cell_keys, record_keys, restore_codes
from .ptable import KEY_DIGITS, KEY_SCALE, PTable, load_ptable

__all__ = ["FlexParams", "ckm_magnitude", "perturb_magnitudes", "magnitude_lookup", "separation_point"]


@dataclass(frozen=True)
class FlexParams:
    """Parameters of the flex function (tau-Argus ``<SCALING> F(sigma0, sigma1, xstar, q, eps...)``).

    Parameters
    ----------
    sigma0 : float
        Relative noise of very large contributions (the asymptote).
    sigma1 : float
        Relative noise of contributions below ``xstar``.
    xstar : float
        Flex point x*.
    q : float
        Steepness of the flex function above x*.
    epsilon : tuple of float
        ``eps_1 = 1, eps_2, ..., eps_K``: weights of the K largest contributions.
    """

    sigma0: float = 0.03
    sigma1: float = 0.30
    xstar: float = 1000.0
    q: float = 3.0
    epsilon: tuple = (1.0,)

    def __post_init__(self) -> None:
        for name in ("sigma0", "sigma1", "xstar", "q"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not v > 0:
                raise ParameterError(f"The '{name}' parameter of FlexParams must be a number > 0. Got {v!r}.",
                                     param=name, value=v)
        eps = tuple(float(e) for e in self.epsilon)
        if not eps or eps[0] != 1.0 or any(not 0 < e <= 1 for e in eps):
            raise ParameterError(f"The 'epsilon' parameter of FlexParams must start with 1 and lie in (0, 1]. "
                                 f"Got {self.epsilon!r}.", param="epsilon", value=self.epsilon)
        object.__setattr__(self, "epsilon", eps)

    @property
    def top_k(self) -> int:
        return len(self.epsilon)

    def m(self, x: np.ndarray) -> np.ndarray:
        """The flex function m(x) (relative noise amplitude)."""
        x = np.abs(np.asarray(x, dtype=float))
        s0, s1, xs, q = self.sigma0, self.sigma1, self.xstar, self.q
        f1 = (s1 * x - s0 * xs) / (s0 * xs)
        f2 = (2 * xs / (xs + x)) ** q
        return np.where(x < xs, s1, s0 * (1 + f1 * f2))


def _rotate(ck: np.ndarray) -> np.ndarray:
    """Move the first of the 12 decimal digits of each integer key to the end."""
    top = 10 ** (KEY_DIGITS - 1)
    return (ck % top) * 10 + ck // top


def magnitude_lookup(pt: PTable, a: np.ndarray, ck: np.ndarray, type_: str = "all") -> np.ndarray:
    """Perturbation for real-valued rows ``a`` (cut at the largest i; linear between rows)."""
    f = pt.frame[pt.frame["type"] == type_]
    rows = np.sort(f["i"].unique())
    a = np.minimum(np.asarray(a, dtype=float), rows.max())
    out = np.zeros(a.size)
    pos = np.searchsorted(rows, a, side="left")
    exact = (pos < rows.size) & np.isclose(rows[np.minimum(pos, rows.size - 1)], a, rtol=0, atol=1e-12)
    lo = np.where(exact, pos, np.maximum(pos - 1, 0))
    hi = np.where(exact, pos, np.minimum(pos, rows.size - 1))
    i0, i1 = rows[lo], rows[hi]
    lam = np.where(i1 > i0, (a - i0) / np.where(i1 > i0, i1 - i0, 1), 0.0)

    def v_at(ivals: np.ndarray) -> np.ndarray:
        res = np.zeros(a.size)
        for iv in np.unique(ivals):
            sel = ivals == iv
            g = f[f["i"] == iv]
            ub = np.rint(g["p_int_ub"].to_numpy() * KEY_SCALE).astype(np.int64)
            ub[-1] = KEY_SCALE
            k = np.searchsorted(ub, ck[sel], side="right")
            res[sel] = g["v"].to_numpy()[np.minimum(k, len(ub) - 1)]
        return res

    out = (1 - lam) * v_at(i0) + lam * v_at(i1)
    return out


def separation_point(small: PTable, flex: FlexParams) -> float:
    """z_s = sqrt(m1^2) / (sqrt(E) sigma1): below it a contribution is perturbed as a count with the
    small-cell p-table (m1^2 = variance of that table's largest row, E = sum eps_k^2; cellKey)."""
    f = small.frame[small.frame["i"] == small.frame["i"].max()]
    m1sq = float(((f["i"] - f["j"]) ** 2 * f["p"]).sum())
    return float(np.sqrt(m1sq) / (np.sqrt(np.sum(np.square(flex.epsilon))) * flex.sigma1))


def ckm_magnitude(frame: pd.DataFrame, dims: Sequence[str], response: str, *, key: str = "Key", ptable=None,
                  flex: FlexParams | None = None, hierarchies: Mapping[str, Hierarchy] | None = None,
                  total: str = "Total", include_zeros: bool = False, table: Table | None = None,
                  small_ptable=None) -> CKMResult:
    """Perturb every cell (totals included) of the magnitude table of ``response`` by ``dims``.

    The cell key sums the keys of the records with a non-zero ``response`` (all records with
    ``include_zeros=True``, tau-Argus's ``<INCLUDEZEROS>``). Contributions are taken by their
    absolute value, as the sensitivity rules take them. With ``small_ptable`` (tau-Argus's
    ``<SEPARATION> Y`` with ``<PFILE_SEP>``), contributions below the separation point z_s are
    perturbed with amplitude 1 from that table (the largest one only; smaller ones add nothing).
    A p-table with rows of type ``even``/``odd`` (``<PARITY> Y``) is used by the parity of the
    number of contributors.
    """
    if ptable is None:
        raise InputError("ckm: give a magnitude p-table (a file, a PTable, or {'D': .., 'V': .., 'kind': 'magnitude'})")
    pt = load_ptable(ptable, kind="magnitude")
    small = None if small_ptable is None else load_ptable(small_ptable, kind="magnitude")
    flex = flex or FlexParams()
    dims = [dims] if isinstance(dims, str) else list(dims)
    keys = record_keys(frame, key)
    t = table if table is not None else Table.from_microdata(frame, dims, response=response,
                                                             hierarchies=hierarchies or {}, total=total,
                                                             n_top=flex.top_k)
    if t.top is None or t.top.shape[1] < flex.top_k:
        raise InputError(f"ckm: the table keeps {0 if t.top is None else t.top.shape[1]} top contributions; "
                         f"the flex parameters need {flex.top_k}")
    resp = pd.to_numeric(frame[response], errors="coerce").to_numpy(dtype=float)
    mask = None if include_zeros else resp != 0
    ck = cell_keys(t, frame, keys, mask)
    types = set(pt.frame["type"])
    if {"even", "odd"} <= types:
        if flex.top_k > 1:
            raise InputError(f"{pt.source}: even/odd p-tables need one top contributor (T(1)); got {flex.top_k}")
        main_type = np.where(t.freq % 2 == 0, "even", "odd")
    else:
        main_type = np.full(t.n_cells, "all" if "all" in types else sorted(types)[0], dtype=object)
    zs = separation_point(small, flex) if small is not None else 0.0
    x = t.value.astype(float).copy()
    ck_k = ck.copy()
    noise = np.zeros((t.n_cells, flex.top_k))
    n_small = 0
    for k in range(flex.top_k):
        if k > 0:
            ck_k = _rotate(ck_k)
        eps = flex.epsilon[k]
        xk = t.top[:, k]
        live = (xk > 0) & (x != 0) & (t.freq > 0)
        # amplitude x_delta (cellKey .perturb_cell_flex): sigma1 x below x*, eps_k m(x) x above
        delta = np.where(xk < flex.xstar, xk * flex.sigma1, xk * flex.m(xk) * eps)
        use_small = xk < zs
        delta = np.where(use_small, 1.0, delta)
        zero = np.zeros(t.n_cells, bool)
        over = np.abs(x) < np.abs(delta)  # the amplitude never exceeds the value: rescale
        if over.any():
            delta = np.where(over, np.abs(x), delta)
            x_resc = np.abs(x) / (flex.sigma1 * eps)
            to_small = over & (x_resc < zs)
            delta = np.where(to_small, 1.0, delta)
            use_small = use_small | to_small
            if k > 0:
                zero |= to_small
        if k > 0:
            zero |= use_small & (xk < zs) & (small is not None)
        live &= ~zero
        a = np.where(live, np.abs(x) / np.where(delta > 0, delta, 1.0), 0.0)
        v = np.zeros(t.n_cells)
        for tab, sel in ((pt, live & ~use_small), (small, live & use_small)):
            if tab is None or not sel.any():
                continue
            if tab is small:
                n_small += int(sel.sum())
                v[sel] = magnitude_lookup(tab, a[sel], ck_k[sel], type_=sorted(set(tab.frame["type"]))[0])
                continue
            for ty in np.unique(main_type[sel]):
                ss = sel & (main_type == ty)
                v[ss] = magnitude_lookup(tab, a[ss], ck_k[ss], type_=str(ty))
        step = np.sign(x) * np.abs(delta) * v
        step = np.where((x > 0) & (step < -x), -x, step)  # a positive value never goes below 0
        step = np.where((x < 0) & (step > -x), -x, step)
        step = np.where(live, step, 0.0)
        noise[:, k] = step
        x = x + step
    return CKMResult(t, ck / KEY_SCALE, x, pt, "magnitude",
                     {"noise_by_contributor": noise, "flex": flex, "separation_point": zs,
                      "n_small_lookups": n_small})


def perturb_magnitudes(frame: pd.DataFrame, dims: Sequence[str], response: str, key: str = "Key", ptable=None, *,
                       flex: FlexParams | None = None, hierarchies=None, totals: bool = False,
                       total: str = "Total", include_zeros: bool = False, small_ptable=None) -> pd.DataFrame:
    """Magnitude counterpart of :func:`~sdckit.tables.ckm.perturb_frequencies`: one row per
    non-empty cell with the ``dims`` columns, ``original`` and ``perturbed`` (totals as rows
    with ``totals=True``)."""
    res = ckm_magnitude(frame, dims, response, key=key, ptable=ptable, flex=flex, hierarchies=hierarchies,
                        total=total, include_zeros=include_zeros, small_ptable=small_ptable)
    dims = [dims] if isinstance(dims, str) else list(dims)
    return restore_codes(res.frame(totals=totals, empty=False)[dims + ["original", "perturbed"]].copy(), frame, dims)
