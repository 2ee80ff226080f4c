"""The per-function rules of the sdcMicro translator: each sdcMicro masking call (``removeDirectID``,
``globalRecode``, ``groupAndRename``, ``topBotCoding``, ``localSuppression``/``kAnon``,
``pram``, ``microaggregation``, ``addNoise``, ``rankSwap``, ``shuffle``, ``recordSwap``) with its
arguments becomes a ``[[steps]]`` table, the ``[roles]`` and ``[gate]`` entries it implies and
the note of its line; a call a rule cannot translate raises :class:`NotTranslated` with why.
The script walker is :mod:`sdckit.sdcmicro.translate`.
"""

from __future__ import annotations

from typing import Any

from .evaluate import Env, as_list, known, show
from .reader import Node


class NotTranslated(Exception):
    """A call the translator cannot turn into a step, with why (reported on its line)."""


class Args:
    """The arguments of one call, matched by name or position, evaluated as constants."""

    def __init__(self, call: Node, env: Env) -> None:
        self.call, self.env = call, env
        self.named = {n: a for n, a in call.args if n}
        self.positional = [a for n, a in call.args if not n]
        self.unknown: list[str] = []

    def get_node(self, *names: str, pos: int | None = None) -> Node | None:
        for n in names:
            if n in self.named:
                return self.named[n]
        if pos is not None and pos < len(self.positional):
            return self.positional[pos]
        return None

    def get(self, *names: str, pos: int | None = None, default: Any = None, decisive: bool = False) -> Any:
        """The constant value of an argument; ``default`` when absent. An argument given but
        not known before the script runs is noted; a ``decisive`` one (it chooses the method)
        stops the translation of the call."""
        node = self.get_node(*names, pos=pos)
        if node is None:
            return default
        v = self.env.eval(node)
        if not known(v):
            if decisive:
                raise NotTranslated(f"{names[0]}: {v.why}")
            self.unknown.append(f"{names[0]}: {v.why}")
            return default
        return v

    def has(self, name: str) -> bool:
        return name in self.named


def _column_of(node: Node | None) -> str | None:
    """x$age -> "age"; x[["age"]] -> "age"."""
    if node is None:
        return None
    if node.kind == "dollar":
        return node.value
    if node.kind == "index" and node.args and node.args[-1][1].kind == "str":
        return node.args[-1][1].value
    return None


def _names(v: Any, what: str) -> list[str]:
    vals = as_list(v)
    if not vals or not all(isinstance(x, str) for x in vals):
        raise NotTranslated(f"{what} must be column names (got {v!r}): name the columns")
    return vals


def _num(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise NotTranslated(f"{what} is not a number the translator can read ({v!r})")
    return float(v)


def _rule_remove(a: Args, _data):
    v = _names(a.get("var", pos=1), "var")
    return {"method": "remove", "variables": v}, {}, {}, f"remove step: variables {v}"


def _rule_global_recode(a: Args, data):
    column = a.get("column") or _column_of(data)
    if column is None:
        raise NotTranslated("the column to recode is not named (give column = or x$name)")
    breaks = a.get("breaks")
    if not isinstance(breaks, list):
        raise NotTranslated("breaks is a number of intervals (computed from the data); give the break "
                             "points as a list in a recode step (breaks = [...])")
    step = {"method": "recode", "variable": column, "breaks": [float(b) for b in breaks], "closed": "right"}
    labels = a.get("labels")
    if labels is not None:
        step["labels"] = [str(x) for x in as_list(labels)]
    return step, {}, {}, f"recode step on {column!r}: intervals (a, b] (sdcMicro's cut)"


def _rule_group_and_rename(a: Args, _data):
    var = a.get("var", pos=1)
    before = as_list(a.get("before", pos=2))
    after = as_list(a.get("after", pos=3))
    if not isinstance(var, str) or len(after) != 1:
        raise NotTranslated("needs one variable and one new category")
    step = {"method": "recode", "variable": var, "mapping": {str(after[0]): [str(b) for b in before]},
            "others": "keep"}                                # the other categories stay as they are
    return step, {"key_vars": [var]}, {}, f"recode step on {var!r}: {before} -> {after[0]!r}"


def _rule_top_bot(a: Args, data):
    column = a.get("column") or _column_of(data)
    if column is None:
        raise NotTranslated("the column is not named (give column = or x$name)")
    kind = a.get("kind", pos=3, default="top", decisive=True)
    value = _num(a.get("value", pos=1), "value")
    repl = _num(a.get("replacement", pos=2), "replacement")
    side = "top" if kind == "top" else "bottom"
    step = {"method": "recode", "variable": column, side: value, f"{side}_value": repl}
    return step, {}, {}, f"recode step on {column!r}: {side} coding at {value:g}"


def _rule_local_suppression(a: Args, _data):
    k = int(_num(a.get("k", pos=1, default=2), "k"))
    step: dict[str, Any] = {"method": "local_suppression", "k": k}
    imp = a.get("importance")
    if imp is not None:
        step["importance"] = [int(x) for x in as_list(imp)]
    roles = {}
    kv = a.get("keyVars")
    if kv is not None:
        roles["key_vars"] = _names(kv, "keyVars")
    if a.get("combs") is not None:
        raise NotTranslated("combs (k-anonymity on subsets of the keys) has no sdckit equivalent")
    return step, roles, {"k_anonymity": k}, f"local_suppression step (k = {k}) and [gate] k_anonymity = {k}"


def _rule_pram(a: Args, _data):
    variables = a.get("variables", pos=1)
    if variables is None:
        raise NotTranslated("variables: sdcMicro PRAMs the pramVars; name them")
    variables = _names(variables, "variables")
    alpha = a.get("alpha", default=0.5)
    pd = a.get("pd", default=0.8)
    step: dict[str, Any] = {"method": "pram", "variables": variables,
                            "matrix": {"type": "invariant", "base": "uniform", "alpha": float(alpha)}}
    strata = a.get("strata_variables")
    if strata is not None:
        step["strata"] = _names(strata, "strata_variables")
    what = (f"pram step on {variables}: invariant matrix, uniform base, alpha = {alpha:g}; sdcMicro's "
            f"pd = {pd} bounds the base matrix's random diagonal (P_ii ~ U(pd, 1)), not the released "
            "matrix's: min_diagonal (the released matrix's smallest diagonal) keeps its default")
    return step, {"pram_vars": variables}, {}, what


_MA_METHODS = {"mdav": "mdav", "simple": "simple", "single": "single", "onedims": "onedims", "pca": "pca",
               "rmd": "rmd", "clustpca": "clustpca", "clustpppca": "clustpppca", "clustmcdpca": "clustmcdpca",
               "influence": "influence", "pppca": "pppca", "mcdpca": "mcdpca"}
_MA_CLUSTERED = ("clustpca", "clustpppca", "clustmcdpca", "influence")


def _rule_microaggregation(a: Args, _data):
    method = a.get("method", default="mdav", decisive=True)
    if method not in _MA_METHODS:
        raise NotTranslated(f"method {method!r} is not a method of sdcMicro 5.8.1's microaggregation; "
                             f"sdckit has {', '.join(sorted(_MA_METHODS))}")
    k = int(_num(a.get("aggr", default=3), "aggr"))
    algorithm: dict[str, Any] = {"type": _MA_METHODS[method]}
    if method in _MA_CLUSTERED:
        clustermethod = a.get("clustermethod", default="clara")
        if clustermethod != "clara":
            raise NotTranslated(f"clustermethod {clustermethod!r}: sdckit clusters with CLARA (sdcMicro's "
                                 "default, clustermethod = \"clara\") only")
        nc = int(_num(a.get("nc", default=8), "nc"))
        if nc != 8:
            algorithm["n_clusters"] = nc
    step: dict[str, Any] = {"method": "microaggregation", "k": k, "algorithm": algorithm}
    variables = a.get("variables")
    roles = {}
    if variables is not None:
        step["variables"] = _names(variables, "variables")
        roles["numeric_vars"] = step["variables"]
    measure = a.get("measure", default="mean")
    if measure not in ("mean", "median"):
        raise NotTranslated(f"measure {measure!r}: sdckit aggregates by mean or median")
    if measure != "mean":
        step["aggregate"] = measure
    if a.get("varsort") not in (None, 1, 1.0):
        raise NotTranslated("varsort: list the sort variable first in variables instead")
    what = f"microaggregation step: algorithm {method!r}, k = {k} (aggr)"
    if method in _MA_CLUSTERED:
        what += f", n_clusters = {algorithm.get('n_clusters', 8)} (nc), CLARA on the untransformed values"
        if a.has("transf"):
            what += " (sdcMicro 5.8.1 computes transf but clusters the untransformed values: no effect)"
    return step, roles, {}, what


def _rule_add_noise(a: Args, _data):
    method = a.get("method", default="additive", decisive=True)
    noise = _num(a.get("noise", default=150), "noise")
    if method == "additive":
        level, what = (noise / 100) ** 2, f"level = (noise / 100)^2 = {(noise / 100) ** 2:g} (sd = noise/100 s)"
    elif method == "correlated":
        level, what = noise / 100, f"level = noise / 100 = {noise / 100:g} (covariance = noise/100 Sigma)"
    elif method == "correlated2":
        delta = _num(a.get("delta", default=0.1), "delta")
        level, what = delta ** 2, f"level = delta^2 = {delta ** 2:g}"
    else:
        raise NotTranslated(f"method {method!r} has no sdckit equivalent (additive, correlated, correlated2 do)")
    step: dict[str, Any] = {"method": "noise", "kind": method, "level": level}
    roles = {}
    variables = a.get("variables")
    if variables is not None:
        step["variables"] = _names(variables, "variables")
        roles["numeric_vars"] = step["variables"]
    return step, roles, {}, f"noise step: kind {method!r}, {what}"


def _rule_rank_swap(a: Args, _data):
    step: dict[str, Any] = {"method": "rank_swap"}
    P = a.get("P")
    if a.get("R0") is not None or a.get("K0") is not None:
        raise NotTranslated("R0 / K0 have no sdckit equivalent; give P")
    if P is not None:
        step["p"] = 100.0 * _num(P, "P")                  # P is a fraction of n in sdcMicro 5.8.1
    step["top_percent"] = _num(a.get("TopPercent", default=5), "TopPercent")
    step["bottom_percent"] = _num(a.get("BottomPercent", default=5), "BottomPercent")
    roles = {}
    variables = a.get("variables")
    if variables is not None:
        step["variables"] = _names(variables, "variables")
        roles["numeric_vars"] = step["variables"]
    return step, roles, {}, "rank_swap step: p = 100 P (percent of n), top/bottom percent as given"


def _rule_shuffle(a: Args, _data):
    form = a.get_node("form", pos=1)
    if form is None or form.kind != "formula":
        raise NotTranslated("form must be a formula: confidential ~ non-confidential")

    def terms(node: Node) -> list[str]:
        if node.kind == "binary" and node.value == "+":
            return terms(node.args[0]) + terms(node.args[1])
        if node.kind == "name":
            return [node.value]
        raise NotTranslated(f"formula term `{show(node)}` is not a column name")

    variables, predictors = terms(form.args[0]), terms(form.args[1])
    method = a.get("method", default="ds", decisive=True)
    if method != "ds":
        raise NotTranslated(f"method {method!r}: sdckit's shuffle is Muralidhar & Sarathy's (method \"ds\")")
    step = {"method": "shuffle", "variables": variables, "predictors": predictors}
    return step, {"numeric_vars": variables}, {}, f"shuffle step: {variables} given {predictors}"


def _rule_record_swap(a: Args, _data):
    hierarchy = _names(a.get("hierarchy"), "hierarchy")
    step: dict[str, Any] = {"method": "record_swap", "hierarchy": hierarchy,
                            "allow_across_top": True, "donors": "anywhere"}
    similar = a.get("similar")
    if similar is not None:
        sim = [_names(s, "similar") for s in similar] if isinstance(similar, list) and similar and \
            isinstance(similar[0], list) else _names(similar, "similar")
        step["similar"] = sim
    rv = a.get("risk_variables")
    if rv is not None:
        step["risk_variables"] = _names(rv, "risk_variables")
    step["swap_rate"] = _num(a.get("swaprate", default=0.05), "swaprate")
    step["k_anonymity"] = int(_num(a.get("k_anonymity", default=3), "k_anonymity"))
    hid = a.get("hid")
    if hid is not None:
        step["household"] = _names(hid, "hid")[0]
    ca = a.get("carry_along")
    if ca is not None:
        step["carry_along"] = _names(ca, "carry_along")
    if a.get("risk") is not None or a.get("risk_threshold") not in (None, 0):
        raise NotTranslated("risk / risk_threshold (a given risk per record) have no sdckit equivalent; "
                             "k_anonymity sets the risk")
    roles = {"household": step["household"]} if "household" in step else {}
    return step, roles, {}, ("record_swap step: donors anywhere outside the receiver's area, across the top "
                          "level (sdcMicro's rule)")


#: sdcMicro function -> its rule: (step table, roles, gate thresholds, what the note says)
STEP_RULES = {
    "removeDirectID": _rule_remove, "globalRecode": _rule_global_recode,
    "groupAndRename": _rule_group_and_rename, "topBotCoding": _rule_top_bot,
    "localSuppression": _rule_local_suppression, "kAnon": _rule_local_suppression, "pram": _rule_pram,
    "microaggregation": _rule_microaggregation, "addNoise": _rule_add_noise, "rankSwap": _rule_rank_swap,
    "shuffle": _rule_shuffle, "recordSwap": _rule_record_swap,
}
