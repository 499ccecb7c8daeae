"""Server power models from hardware counters (seed 004, section 4.2 and Appendix A).

Three kinds of model share one small protocol (:class:`PowerModel`) that the signature
pipeline uses: ``model.predict(X)`` gives watts for a :class:`pandas.DataFrame` ``X`` whose
columns are counters by name, ``model.features`` names the columns it reads, and
``to_dict()`` / :func:`power_model_from_dict` store it as versioned JSON (kind
``"power_model"``).

- Classical (section 4.2.1.1.1): ordinary least squares (:func:`fit_linear`) or partial least
  squares (:func:`fit_pls`) on selected counters (:func:`select_features`: greedy forward
  selection by cross-validated RMSE, or the thesis's PCA reading).
- Grammatical evolution (section 4.2.1.1.2, Appendix A; :func:`fit_ge`): 8-bit codons, 100
  codons per chromosome, 200 individuals, crossover probability 0.9, per-codon mutation
  probability 1 / (number of grammar rules), 3 wraps, RMSE fitness, the thesis's Grammar 1.
  Every expression's constants are then fitted by local least squares (Levenberg-Marquardt)
  together with an intercept and a scale; evaluation and fitting run in numba kernels.
- Server breakdown (4.15-4.17; :class:`ServerPowerModel`): ``P_total = P_idle + P_leak(T) +
  P_CPU,dyn + P_fan(rpm) + P_Mem,dyn + P_disk`` with polynomial leakage and fan fits.

Where the thesis is silent (generations, selection, replacement, codons of single-choice
rules, how the constants are tuned, how ``<expr><op><expr>`` nests) the choice is ours and
named where it is made.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from numba import njit

from phasekit.errors import InputError, UsageError
from phasekit.results import check_version, plain

__all__ = [
    "FIT_VERSION",
    "GRAMMARS",
    "MODEL_VERSION",
    "SPLITS",
    "GEPowerModel",
    "Grammar",
    "LinearPowerModel",
    "PowerModel",
    "PowerModelEval",
    "PowerModelFit",
    "ServerPowerModel",
    "build_grammar",
    "compile_expression",
    "default_features",
    "describe_excluded",
    "errors",
    "evaluate_power_model",
    "fit_fan",
    "fit_ge",
    "fit_leakage",
    "fit_linear",
    "fit_pls",
    "fit_polynomial",
    "fit_power_model",
    "fit_server",
    "is_power_column",
    "map_genome",
    "parse_bnf",
    "power_model_from_dict",
    "screen_features",
    "select_features",
    "split_rows",
    "time_order",
]

MODEL_VERSION = 2  # 2: GE models carry output bounds (a version 1 model reads as unbounded)
FIT_VERSION = 1
MODELS = ("linear", "pls", "ge")
SPLITS = ("time", "random")


# --- the protocol ----------------------------------------------------------------------------
@runtime_checkable
class PowerModel(Protocol):
    """What the signature pipeline needs from a power model."""

    @property
    def features(self) -> tuple[str, ...]: ...

    def predict(self, X: pd.DataFrame) -> np.ndarray: ...

    def to_dict(self) -> dict[str, Any]: ...


# --- errors and input checks -----------------------------------------------------------------
def errors(predicted: Any, measured: Any) -> dict[str, float]:
    """RMSE and MAE (W) and MPE (mean |error| / |measured|, percent, over non-zero
    measurements) of ``predicted`` against ``measured``; NaN when empty."""
    p = np.asarray(predicted, float)
    m = np.asarray(measured, float)
    if p.size == 0:
        return {"rmse": math.nan, "mae": math.nan, "mpe": math.nan}
    e = p - m
    nonzero = m != 0
    mpe = float(np.mean(np.abs(e[nonzero]) / np.abs(m[nonzero])) * 100) if nonzero.any() \
        else math.nan
    return {"rmse": float(np.sqrt(np.mean(e**2))), "mae": float(np.mean(np.abs(e))),
            "mpe": mpe}


def _frame(X: Any, what: str = "X") -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        raise UsageError(f"{what}: expected a pandas DataFrame with counter columns by name, "
                         f"got {type(X).__name__}")
    return X


def _column(X: pd.DataFrame, name: str, source: str | None) -> np.ndarray:
    """Column ``name`` as float64; InputError naming the file, the column and the first bad
    line (the CSV line: row + 2) when it is missing, not numeric or not finite."""
    if name not in X.columns:
        have = ", ".join(map(str, X.columns[:20])) + (" ..." if len(X.columns) > 20 else "")
        raise InputError(f"no column {name!r} (the table has: {have})", path=source)
    raw = X[name]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        line = row + 2 if source is not None else None
        value = raw.iloc[row]
        what = "missing value" if pd.isna(value) else f"value {value!r} is not a finite number"
        where = "" if line is not None else f" (row {row})"
        raise InputError(f"{what}{where}; expected numbers", path=source, line=line,
                         column=name)
    return values


def _matrix(X: Any, features: Sequence[str], source: str | None = None) -> np.ndarray:
    X = _frame(X)
    if len(X) == 0:
        raise InputError("the table has no rows", path=source)
    return np.column_stack([_column(X, f, source) for f in features]) if features else \
        np.empty((len(X), 0))


def _target(X: Any, target: str | Any, source: str | None = None) -> np.ndarray:
    if isinstance(target, str):
        return _column(_frame(X), target, source)
    y = np.asarray(target, float).reshape(-1)
    if len(y) != len(X):
        raise UsageError(f"y has {len(y)} values for {len(X)} rows")
    if not np.isfinite(y).all():
        raise InputError("the target has missing or non-finite values")
    return y


_NON_FEATURES = {"time", "time_s", "timestamp", "t", "sample", "index", "t_s"}
#: Name parts that mark a power or energy reading (``package_power``, ``power_w``,
#: ``energy_uj``, ``power/energy-pkg/``, the recorder's ``power_package0``): our rule.
_POWER_WORDS = {"w", "mw", "kw", "watt", "watts", "j", "uj", "mj", "kj", "joule", "joules",
                "wh", "kwh", "rapl"}
_POWER_PART = re.compile(r"(power|energy|watts?|joules?)\d*")


def is_power_column(name: str) -> bool:
    """Whether a column name reads as a power or energy measurement (our rule: a part of the
    name, split at non-alphanumerics, is power/energy/watt(s)/joule(s) with an optional
    number, a unit w, mw, kw, j, uj, mj, kj, wh, kwh, or rapl)."""
    parts = [p for p in re.split(r"[^a-z0-9]+", str(name).lower()) if p]
    return any(p in _POWER_WORDS or _POWER_PART.fullmatch(p) for p in parts)


def screen_features(X: pd.DataFrame, target: str | None = None,
                    exclude: Sequence[str] = ()) -> tuple[tuple[str, ...], dict[str, str]]:
    """The default candidate counters of ``X`` and the columns left out, each with its reason.

    Left out (our choice, issue 18): the target and ``exclude`` (not reported), time-like
    columns (time, time_s, timestamp, t, sample, index), other power or energy readings
    (:func:`is_power_column`: another meter is not a counter, and a model that reads one
    does not predict power from activity), columns that are all zero or constant (they carry
    nothing), boolean and label columns (mostly text). A column whose values are mostly
    numbers counts as numeric (its other values are then reported as bad input, not silently
    dropped)."""
    out: list[str] = []
    excluded: dict[str, str] = {}
    for name in X.columns:
        if name == target or name in exclude:
            continue
        column = X[name]
        if str(name).lower() in _NON_FEATURES:
            excluded[str(name)] = "time"
            continue
        if pd.api.types.is_bool_dtype(column):
            excluded[str(name)] = "not a number"
            continue
        numbers = pd.to_numeric(column, errors="coerce")
        if not (pd.api.types.is_numeric_dtype(column)
                or (len(column) and numbers.notna().mean() >= 0.5)):
            excluded[str(name)] = "not a number"
            continue
        if is_power_column(str(name)):
            excluded[str(name)] = "power or energy reading"
            continue
        values = numbers.to_numpy(dtype=float, na_value=np.nan)
        if len(values) and np.isfinite(values).all() and np.ptp(values) == 0:
            excluded[str(name)] = "all zero" if values[0] == 0 else "constant"
            continue
        out.append(str(name))
    return tuple(out), excluded


def default_features(X: pd.DataFrame, target: str | None = None,
                     exclude: Sequence[str] = ()) -> tuple[str, ...]:
    """The default candidate counters of ``X`` (:func:`screen_features`)."""
    return screen_features(X, target, exclude)[0]


def describe_excluded(excluded: Mapping[str, str]) -> str:
    """``a, b (power or energy reading); c (constant)``: the left-out columns by reason."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in excluded.items():
        by_reason.setdefault(reason, []).append(name)
    plural = {"power or energy reading": "power or energy readings", "time": "time",
              "constant": "constant", "all zero": "all zero", "not a number": "not numbers"}
    return "; ".join(f"{', '.join(names)} ({plural.get(reason, reason) if len(names) > 1 else reason})"
                     for reason, names in by_reason.items())


def _features(X: pd.DataFrame, features: Sequence[str] | None, target: str | None
              ) -> tuple[str, ...]:
    if features is None:
        found, excluded = screen_features(X, target)
        if not found:
            left = f" (left out: {describe_excluded(excluded)})" if excluded else ""
            raise InputError(f"no counter columns to model power from{left}; name them "
                             "with features / --features")
        return found
    features = tuple(str(f) for f in features)
    if not features:
        raise UsageError("features: expected at least one column name")
    if len(set(features)) != len(features):
        raise UsageError(f"features {', '.join(features)}: a column is named twice")
    if target is not None and target in features:
        raise UsageError(f"features: the target {target!r} cannot also be a feature")
    return features


# --- classical models ------------------------------------------------------------------------
def _standardize(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mu = A.mean(axis=0)
    sd = A.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (A - mu) / sd, mu, sd


def _ols(Z: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Intercept and coefficients of y on standardized Z (least squares, SVD-based)."""
    design = np.column_stack([np.ones(len(Z)), Z])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(coef[0]), coef[1:]


def _folds(n: int, k: int, seed: int) -> list[np.ndarray]:
    order = np.random.default_rng([seed, 5]).permutation(n)
    return [order[i::k] for i in range(k)]


def _cv_rmse(Z: np.ndarray, y: np.ndarray, folds: list[np.ndarray]) -> float:
    sq = 0.0
    for test in folds:
        train = np.ones(len(y), bool)
        train[test] = False
        b0, b = _ols(Z[train], y[train])
        sq += float(np.sum((Z[test] @ b + b0 - y[test]) ** 2))
    return math.sqrt(sq / len(y))


def select_features(X: pd.DataFrame, y: Any, *, features: Sequence[str] | None = None,
                    method: str = "forward", max_features: int | None = None,
                    variance: float = 0.7, max_corr: float = 0.9, folds: int = 5,
                    min_gain: float = 0.01, seed: int = 0) -> tuple[str, ...]:
    """Choose the counters a classical model uses.

    ``method="forward"`` (our default): greedy forward selection; add the counter that most
    lowers the ``folds``-fold cross-validated RMSE of a least-squares fit, stop when the gain
    is below ``min_gain`` (relative) or at ``max_features`` (default 8).
    ``method="pca"`` (the thesis's section 4.2.1.1.1, read as an algorithm): standardize,
    keep the principal components that explain ``variance`` (70 %) of the variance, and take
    the counters with the largest loadings, round-robin over the components, skipping any
    counter correlated above ``max_corr`` with one already chosen, until ``max_features``
    (default: the number of components + 1; the thesis: 3 components, 4 counters).
    ``method="none"``: every feature.
    """
    X = _frame(X)
    names = _features(X, features, y if isinstance(y, str) else None)
    A = _matrix(X, names)
    target = _target(X, y)
    keep = A.std(axis=0) > 0
    names = tuple(n for n, k in zip(names, keep, strict=True) if k)
    A = A[:, keep]
    if not names:
        raise InputError("every candidate counter is constant")
    if method == "none":
        return names
    Z, _, _ = _standardize(A)
    if method == "forward":
        limit = min(max_features or 8, len(names))
        chosen: list[int] = []
        parts = _folds(len(target), max(2, min(folds, len(target))), seed)
        best = math.sqrt(np.mean((target - target.mean()) ** 2))
        while len(chosen) < limit:
            scores = [(_cv_rmse(Z[:, [*chosen, j]], target, parts), j)
                      for j in range(len(names)) if j not in chosen]
            score, j = min(scores)
            if chosen and score > best * (1 - min_gain):
                break
            chosen.append(j)
            best = score
        return tuple(names[j] for j in chosen)
    if method == "pca":
        _, s, vt = np.linalg.svd(Z, full_matrices=False)
        explained = np.cumsum(s**2) / np.sum(s**2)
        k = int(np.searchsorted(explained, variance) + 1)
        limit = min(max_features or k + 1, len(names))
        corr = np.corrcoef(Z, rowvar=False) if len(names) > 1 else np.ones((1, 1))
        ranked = [list(np.argsort(-np.abs(vt[c]))) for c in range(k)]
        chosen = []
        while len(chosen) < limit and any(ranked):
            for order in ranked:
                while order:
                    j = order.pop(0)
                    if j in chosen or any(abs(corr[j, i]) > max_corr for i in chosen):
                        continue
                    chosen.append(j)
                    break
                if len(chosen) >= limit:
                    break
        return tuple(names[j] for j in chosen)
    raise UsageError(f"method {method!r}: expected forward, pca or none")


@dataclass(frozen=True)
class LinearPowerModel:
    """``P = intercept + sum_i coefficients[i] * X[features[i]]`` (eq. 4.19), fitted by
    ordinary least squares (``method="linear"``) or partial least squares (``"pls"``)."""

    method: str
    features: tuple[str, ...]
    intercept: float
    coefficients: tuple[float, ...]
    n_components: int | None = None
    target: str = "power_w"
    meta: Mapping[str, Any] = field(default_factory=dict)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        A = _matrix(X, self.features)
        return A @ np.asarray(self.coefficients, float) + self.intercept

    @property
    def expression(self) -> str:
        terms = [f"{self.intercept:.6g}"]
        for name, c in zip(self.features, self.coefficients, strict=True):
            terms.append(f"{'-' if c < 0 else '+'} {abs(c):.6g}*{name}")
        return " ".join(terms)

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_model", "version": MODEL_VERSION, "model": self.method,
                      "target": self.target, "features": list(self.features),
                      "intercept": self.intercept, "coefficients": list(self.coefficients),
                      "n_components": self.n_components, "expression": self.expression,
                      "meta": dict(self.meta)})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> LinearPowerModel:
        check_version(data, "power_model", MODEL_VERSION, source)
        try:
            features = tuple(str(f) for f in data["features"])
            coefficients = tuple(float(c) for c in data["coefficients"])
            if len(features) != len(coefficients):
                raise ValueError("features and coefficients differ in length")
            n_comp = data.get("n_components")
            return LinearPowerModel(method=str(data["model"]), features=features,
                                    intercept=float(data["intercept"]),
                                    coefficients=coefficients,
                                    n_components=None if n_comp is None else int(n_comp),
                                    target=str(data.get("target", "power_w")),
                                    meta=dict(data.get("meta") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed linear power model: {exc}", path=source) from None


def _raw(b0: float, b: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> tuple[float, np.ndarray]:
    coef = b / sd
    return float(b0 - np.sum(coef * mu)), coef


def _selected(X: pd.DataFrame, y: Any, features: Sequence[str] | None, select: str,
              max_features: int | None, seed: int
              ) -> tuple[str, tuple[str, ...], np.ndarray, np.ndarray]:
    """The target's name, the selected counters, the target values and the counter matrix
    (what :func:`fit_linear` and :func:`fit_pls` share)."""
    X = _frame(X)
    target_name = y if isinstance(y, str) else "power_w"
    names = _features(X, features, y if isinstance(y, str) else None)
    values = _target(X, y)
    if select != "none":
        names = select_features(X, values, features=names, method=select,
                                max_features=max_features, seed=seed)
    A = _matrix(X, names)
    if len(values) < len(names) + 2:
        raise InputError(f"{len(values)} rows for {len(names)} counters: too few to fit")
    return target_name, tuple(names), values, A


def fit_linear(X: pd.DataFrame, y: Any = "power_w", *, features: Sequence[str] | None = None,
               select: str = "forward", max_features: int | None = None,
               seed: int = 0) -> LinearPowerModel:
    """Least-squares linear model of ``y`` (a column name or values) on counters.

    ``features`` are the candidates (default: every numeric column but the target);
    ``select`` the feature selection (:func:`select_features`: "forward", "pca", "none").
    The fit is on standardized counters (counts are 1e6-1e12), coefficients are given back in
    raw units.
    """
    target_name, names, values, A = _selected(X, y, features, select, max_features, seed)
    Z, mu, sd = _standardize(A)
    b0, b = _ols(Z, values)
    intercept, coef = _raw(b0, b, mu, sd)
    return LinearPowerModel(method="linear", features=names, intercept=intercept,
                            coefficients=tuple(float(c) for c in coef), target=target_name,
                            meta={"selection": select})


def fit_pls(X: pd.DataFrame, y: Any = "power_w", *, features: Sequence[str] | None = None,
            select: str = "pca", max_features: int | None = None,
            n_components: int | None = None, folds: int = 5, seed: int = 0
            ) -> LinearPowerModel:
    """Partial least squares regression (section 4.2.1.1.1) on selected counters.

    Selection as in :func:`fit_linear` (default the thesis's PCA reading). ``n_components``
    default: the number (1 .. number of counters) with the lowest ``folds``-fold
    cross-validated RMSE (our choice; the thesis does not say).
    """
    from sklearn.cross_decomposition import PLSRegression

    target_name, names, values, A = _selected(X, y, features, select, max_features, seed)
    Z, mu, sd = _standardize(A)
    p = Z.shape[1]
    if n_components is None:
        parts = _folds(len(values), max(2, min(folds, len(values))), seed)
        best = (math.inf, 1)
        for k in range(1, p + 1):
            sq = 0.0
            for test in parts:
                train = np.ones(len(values), bool)
                train[test] = False
                model = PLSRegression(n_components=k, scale=False).fit(Z[train], values[train])
                sq += float(np.sum((model.predict(Z[test]).ravel() - values[test]) ** 2))
            best = min(best, (sq, k))
        n_components = best[1]
    elif not 1 <= n_components <= p:
        raise UsageError(f"n_components = {n_components}: expected 1..{p}")
    model = PLSRegression(n_components=n_components, scale=False).fit(Z, values)
    # the PLS predictor is linear in Z: read its coefficients back exactly
    b0, b = _ols(Z, model.predict(Z).ravel())
    intercept, coef = _raw(b0, b, mu, sd)
    return LinearPowerModel(method="pls", features=names, intercept=intercept,
                            coefficients=tuple(float(c) for c in coef),
                            n_components=int(n_components), target=target_name,
                            meta={"selection": select})


# --- grammars and the genotype-to-phenotype mapping (Appendix A) ----------------------------
@dataclass(frozen=True)
class Grammar:
    """A BNF grammar: ``rules`` in order (the first is the start symbol), each a
    non-terminal ``"<name>"`` with its productions (tuples of symbols; a terminal is any
    symbol not in angle brackets)."""

    rules: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]
    name: str = "custom"

    @property
    def start(self) -> str:
        return self.rules[0][0]

    @property
    def n_rules(self) -> int:
        return len(self.rules)

    def table(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        return dict(self.rules)


_BNF_SYMBOL = re.compile(r"<[^<>\s]+>|[A-Za-z_][A-Za-z0-9_]*|\d|\S")


def parse_bnf(text: str, name: str = "custom") -> Grammar:
    """A :class:`Grammar` from lines ``<lhs> ::= a | b | ...``. Terminals are split into
    tokens: names (``sin``, ``x3``), single digits and single other characters."""
    rules: list[tuple[str, tuple[tuple[str, ...], ...]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "::=" not in line:
            raise UsageError(f"grammar line {number}: expected '<symbol> ::= ...'")
        lhs, rhs = (part.strip() for part in line.split("::=", 1))
        if not re.fullmatch(r"<[^<>\s]+>", lhs):
            raise UsageError(f"grammar line {number}: {lhs!r} is not a <non-terminal>")
        productions = tuple(tuple(_BNF_SYMBOL.findall(alt)) for alt in rhs.split("|"))
        if any(not p for p in productions):
            raise UsageError(f"grammar line {number}: an empty production")
        rules.append((lhs, productions))
    if not rules:
        raise UsageError("the grammar has no rules")
    defined = {lhs for lhs, _ in rules}
    for lhs, productions in rules:
        for production in productions:
            for symbol in production:
                if symbol.startswith("<") and symbol not in defined:
                    raise UsageError(f"grammar: {symbol} (used by {lhs}) is not defined")
    return Grammar(rules=tuple(rules), name=name)


#: Grammar 1 of the thesis (section 4.3.2) with ``{vars}`` for the variables. We read
#: ``<expr><op><expr>`` as one node of the expression tree, written with parentheses: the
#: published models (4.20) nest sub-expressions, which a flat reading cannot produce.
GRAMMARS: dict[str, str] = {
    "thesis": """
        <expr> ::= (<expr><op><expr>) | <cte>*<var>*<var> | <cte>*<var>/<var> | <cte>
        <op> ::= + | - | * | /
        <var> ::= {vars}
        <cte> ::= <dig>.<dig>
        <dig> ::= 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9
    """,
    # Grammar 2 is garbled in the text; what can be read of it, and the co-allocation
    # models it produced (4.22), add a linear term <cte>*<var> to Grammar 1.
    "extended": """
        <expr> ::= (<expr><op><expr>) | <cte>*<var>*<var> | <cte>*<var>/<var> | <cte>*<var> | <cte>
        <op> ::= + | - | * | /
        <var> ::= {vars}
        <cte> ::= <dig>.<dig>
        <dig> ::= 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9
    """,
}


def build_grammar(name_or_text: str, n_vars: int) -> Grammar:
    """The named grammar (:data:`GRAMMARS`) or a BNF text, with variables ``x0 .. x{n-1}``
    in place of ``{vars}``."""
    if n_vars < 1:
        raise UsageError("a grammar needs at least one variable")
    text = GRAMMARS.get(name_or_text, name_or_text)
    name = name_or_text if name_or_text in GRAMMARS else "custom"
    if "::=" not in text:
        raise UsageError(f"grammar {name_or_text!r}: expected one of {', '.join(GRAMMARS)} "
                         "or a BNF text")
    return parse_bnf(text.replace("{vars}", " | ".join(f"x{i}" for i in range(n_vars))), name)


def map_genome(genome: Sequence[int] | np.ndarray, grammar: Grammar, *, wraps: int = 3
               ) -> tuple[list[str] | None, int]:
    """Decode ``genome`` (codons 0..255) with ``grammar``: the terminals of the phenotype
    (None when the codons run out after ``wraps`` wraps) and the number of codons read.

    Leftmost derivation; each non-terminal takes the production ``codon mod number of
    choices`` (eq. A.2). Every non-terminal reads a codon, single-choice ones too (as the
    authors' JECO library does; the thesis's example has no single-choice rule).
    """
    table = grammar.table()
    codons = [int(c) for c in genome]
    n = len(codons)
    if n == 0:
        return None, 0
    out: list[str] = []
    stack = [grammar.start]
    index = 0
    wrap = 0
    while stack:
        symbol = stack.pop()
        productions = table.get(symbol)
        if productions is None:
            out.append(symbol)
            continue
        if index >= n:
            if wrap >= wraps:
                return None, wrap * n + index
            index = 0
            wrap += 1
        production = productions[codons[index] % len(productions)]
        index += 1
        stack.extend(reversed(production))
    return out, wrap * n + index


# --- expressions: tokens -> tree -> postfix program -----------------------------------------
OP_VAR, OP_CONST, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_NEG = 0, 1, 2, 3, 4, 5, 6
OP_SIN, OP_COS, OP_LOG, OP_EXP, OP_SQRT = 7, 8, 9, 10, 11
_BINARY = {"+": OP_ADD, "-": OP_SUB, "*": OP_MUL, "/": OP_DIV}
_UNARY = {"sin": OP_SIN, "cos": OP_COS, "log": OP_LOG, "exp": OP_EXP, "sqrt": OP_SQRT}
_SYMBOL = {v: k for k, v in _BINARY.items()}
_FUNCTION = {v: k for k, v in _UNARY.items()}


def _merge_numbers(tokens: Sequence[str]) -> list[str]:
    """Join runs of digit and '.' tokens (the phenotype of ``<dig>.<dig>``) into numbers."""
    out: list[str] = []
    for token in tokens:
        if (token.isdigit() or token == ".") and out and re.fullmatch(r"[\d.]+", out[-1]):
            out[-1] += token
        else:
            out.append(token)
    return out


# tree nodes: ("const", index) | ("var", j) | ("bin", op, left, right) | ("un", op, child)
Node = tuple[Any, ...]


class _Parser:
    """Recursive descent with the usual precedence: + - < * / < unary minus < atoms."""

    def __init__(self, tokens: Sequence[str], variables: Mapping[str, int]) -> None:
        self.tokens = list(tokens)
        self.pos = 0
        self.variables = variables
        self.values: list[float] = []

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise ValueError("unexpected end of expression")
        self.pos += 1
        return token

    def parse(self) -> Node:
        node = self.sum()
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()!r}")
        return node

    def sum(self) -> Node:
        node = self.product()
        while self.peek() in ("+", "-"):
            op = _BINARY[self.take()]
            node = ("bin", op, node, self.product())
        return node

    def product(self) -> Node:
        node = self.unary()
        while self.peek() in ("*", "/"):
            op = _BINARY[self.take()]
            node = ("bin", op, node, self.unary())
        return node

    def unary(self) -> Node:
        if self.peek() == "-":
            self.take()
            return ("un", OP_NEG, self.unary())
        if self.peek() == "+":
            self.take()
            return self.unary()
        return self.atom()

    def atom(self) -> Node:
        token = self.take()
        if token == "(":
            node = self.sum()
            if self.take() != ")":
                raise ValueError("expected ')'")
            return node
        if token in _UNARY:
            if self.take() != "(":
                raise ValueError(f"expected '(' after {token}")
            node = self.sum()
            if self.take() != ")":
                raise ValueError("expected ')'")
            return ("un", _UNARY[token], node)
        if token in self.variables:
            return ("var", self.variables[token])
        try:
            value = float(token)
        except ValueError:
            raise ValueError(f"unknown symbol {token!r}") from None
        self.values.append(value)
        return ("const", len(self.values) - 1)


@dataclass(frozen=True)
class Program:
    """A compiled expression: postfix ``ops`` and ``args`` (variable or constant index), the
    constants' initial values, and the tree (for printing)."""

    ops: np.ndarray
    args: np.ndarray
    constants: np.ndarray
    tree: Node
    n_vars_used: int

    @property
    def key(self) -> bytes:
        """The structure without the constants' values (two expressions that differ only in
        their constants are the same model once the constants are fitted)."""
        return self.ops.tobytes() + b"|" + self.args.tobytes()

    def __len__(self) -> int:
        return len(self.ops)


def _emit(node: Node, ops: list[int], args: list[int]) -> None:
    kind = node[0]
    if kind == "const":
        ops.append(OP_CONST)
        args.append(node[1])
    elif kind == "var":
        ops.append(OP_VAR)
        args.append(node[1])
    elif kind == "bin":
        _emit(node[2], ops, args)
        _emit(node[3], ops, args)
        ops.append(node[1])
        args.append(0)
    else:
        _emit(node[2], ops, args)
        ops.append(node[1])
        args.append(0)


def compile_expression(text: str | Sequence[str], variables: Sequence[str]) -> Program:
    """Parse an expression (a string, or the terminal tokens of a phenotype) over
    ``variables`` into a :class:`Program`. Raises ValueError on a malformed expression."""
    if isinstance(text, str):
        tokens = re.findall(r"\d+\.\d*|\d*\.\d+|\d+|[A-Za-z_][A-Za-z0-9_]*|\S", text)
    else:
        tokens = _merge_numbers(text)
    parser = _Parser(tokens, {v: i for i, v in enumerate(variables)})
    tree = parser.parse()
    ops: list[int] = []
    args: list[int] = []
    _emit(tree, ops, args)
    used = len({a for o, a in zip(ops, args, strict=True) if o == OP_VAR})
    return Program(ops=np.asarray(ops, np.int64), args=np.asarray(args, np.int64),
                   constants=np.asarray(parser.values, float), tree=tree, n_vars_used=used)


# --- numba kernels ---------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def _evaluate(ops: np.ndarray, args: np.ndarray, consts: np.ndarray, X: np.ndarray
              ) -> np.ndarray:  # pragma: no cover - numba
    n = X.shape[0]
    out = np.empty(n)
    stack = np.empty(ops.shape[0] + 1)
    for i in range(n):
        sp = 0
        for t in range(ops.shape[0]):
            op = ops[t]
            if op == 0:
                stack[sp] = X[i, args[t]]
                sp += 1
            elif op == 1:
                stack[sp] = consts[args[t]]
                sp += 1
            elif op <= 5:
                b = stack[sp - 1]
                a = stack[sp - 2]
                sp -= 1
                if op == 2:
                    stack[sp - 1] = a + b
                elif op == 3:
                    stack[sp - 1] = a - b
                elif op == 4:
                    stack[sp - 1] = a * b
                else:
                    stack[sp - 1] = a / b
            else:
                a = stack[sp - 1]
                if op == 6:
                    stack[sp - 1] = -a
                elif op == 7:
                    stack[sp - 1] = np.sin(a)
                elif op == 8:
                    stack[sp - 1] = np.cos(a)
                elif op == 9:
                    stack[sp - 1] = np.log(a)
                elif op == 10:
                    stack[sp - 1] = np.exp(a)
                else:
                    stack[sp - 1] = np.sqrt(a)
        out[i] = stack[0]
    return out


@njit(cache=True, error_model="numpy")
def _evaluate_jacobian(ops: np.ndarray, args: np.ndarray, consts: np.ndarray, X: np.ndarray,
                       f: np.ndarray, J: np.ndarray) -> None:  # pragma: no cover - numba
    """Values ``f`` and derivatives ``J[i, j] = d f_i / d consts[j]`` (forward mode)."""
    k = consts.shape[0]
    L = ops.shape[0] + 1
    sv = np.empty(L)
    sd = np.empty((L, k))
    for i in range(X.shape[0]):
        sp = 0
        for t in range(ops.shape[0]):
            op = ops[t]
            if op == 0 or op == 1:
                for j in range(k):
                    sd[sp, j] = 0.0
                if op == 0:
                    sv[sp] = X[i, args[t]]
                else:
                    sv[sp] = consts[args[t]]
                    sd[sp, args[t]] = 1.0
                sp += 1
            elif op <= 5:
                b = sv[sp - 1]
                a = sv[sp - 2]
                q = sp - 2
                r = sp - 1
                if op == 2:
                    sv[q] = a + b
                    for j in range(k):
                        sd[q, j] += sd[r, j]
                elif op == 3:
                    sv[q] = a - b
                    for j in range(k):
                        sd[q, j] -= sd[r, j]
                elif op == 4:
                    sv[q] = a * b
                    for j in range(k):
                        sd[q, j] = sd[q, j] * b + a * sd[r, j]
                else:
                    sv[q] = a / b
                    for j in range(k):
                        sd[q, j] = (sd[q, j] - a / b * sd[r, j]) / b
                sp -= 1
            else:
                q = sp - 1
                a = sv[q]
                if op == 6:
                    sv[q] = -a
                    g = -1.0
                elif op == 7:
                    sv[q] = np.sin(a)
                    g = np.cos(a)
                elif op == 8:
                    sv[q] = np.cos(a)
                    g = -np.sin(a)
                elif op == 9:
                    sv[q] = np.log(a)
                    g = 1.0 / a
                elif op == 10:
                    sv[q] = np.exp(a)
                    g = sv[q]
                else:
                    sv[q] = np.sqrt(a)
                    g = 0.5 / sv[q]
                for j in range(k):
                    sd[q, j] *= g
        f[i] = sv[0]
        for j in range(k):
            J[i, j] = sd[0, j]


@njit(cache=True)
def _solve(M: np.ndarray, rhs: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """Gaussian elimination with partial pivoting; NaNs when singular."""
    n = rhs.shape[0]
    A = M.copy()
    b = rhs.copy()
    for c in range(n):
        p = c
        for r in range(c + 1, n):
            if abs(A[r, c]) > abs(A[p, c]):
                p = r
        if not abs(A[p, c]) > 1e-300:
            return np.full(n, np.nan)
        if p != c:
            for j in range(n):
                A[c, j], A[p, j] = A[p, j], A[c, j]
            b[c], b[p] = b[p], b[c]
        for r in range(c + 1, n):
            m = A[r, c] / A[c, c]
            if m != 0.0:
                for j in range(c, n):
                    A[r, j] -= m * A[c, j]
                b[r] -= m * b[c]
    x = np.empty(n)
    for c in range(n - 1, -1, -1):
        s = b[c]
        for j in range(c + 1, n):
            s -= A[c, j] * x[j]
        x[c] = s / A[c, c]
    return x


@njit(cache=True, error_model="numpy")
def _fit_constants(ops: np.ndarray, args: np.ndarray, c0: np.ndarray, X: np.ndarray,
                   y: np.ndarray, max_iter: int) -> tuple[np.ndarray, float]:  # pragma: no cover
    """Least-squares fit of ``y ~ a + b * f(X; c)`` over (a, b, c) by Levenberg-Marquardt,
    starting at ``c0`` with (a, b) from a linear regression of y on f(X; c0).

    Returns ``[a, b, c...]`` and the sum of squared residuals (inf when f is not finite)."""
    n = X.shape[0]
    k = c0.shape[0]
    m = k + 2
    params = np.empty(m)
    params[2:] = c0
    f = np.empty(n)
    Jf = np.empty((n, k))
    _evaluate_jacobian(ops, args, params[2:], X, f, Jf)
    if not np.all(np.isfinite(f)):
        params[0] = 0.0
        params[1] = 0.0
        return params, np.inf
    fm = f.mean()
    ym = y.mean()
    sff = np.sum((f - fm) ** 2)
    if sff > 1e-12 * max(1.0, fm * fm) * n:
        params[1] = np.sum((f - fm) * (y - ym)) / sff
    else:
        params[1] = 0.0
    params[0] = ym - params[1] * fm
    r = params[0] + params[1] * f - y
    cost = np.sum(r * r)
    if params[1] == 0.0 or k == 0:
        return params, cost
    lam = 1e-3
    gain = 0.0
    J = np.empty((n, m))
    trial = np.empty(m)
    for _ in range(max_iter):
        for i in range(n):
            J[i, 0] = 1.0
            J[i, 1] = f[i]
            for j in range(k):
                J[i, 2 + j] = params[1] * Jf[i, j]
        if not np.all(np.isfinite(J)):
            break
        A = J.T @ J
        g = J.T @ r
        top = 0.0
        for j in range(m):
            top = max(top, A[j, j])
        accepted = False
        for _attempt in range(10):
            M = A.copy()
            for j in range(m):
                M[j, j] += lam * (A[j, j] + 1e-9 * top + 1e-300)
            step = _solve(M, -g)
            if not np.all(np.isfinite(step)):
                lam *= 10.0
                continue
            for j in range(m):
                trial[j] = params[j] + step[j]
            ft = _evaluate(ops, args, trial[2:], X)
            rt = trial[0] + trial[1] * ft - y
            ct = np.sum(rt * rt)
            if np.isfinite(ct) and ct < cost:
                gain = (cost - ct) / max(cost, 1e-300)
                params[:] = trial
                cost = ct
                lam = max(lam / 3.0, 1e-12)
                accepted = True
                break
            lam *= 4.0
        if not accepted or gain < 1e-9:
            break
        _evaluate_jacobian(ops, args, params[2:], X, f, Jf)
        r = params[0] + params[1] * f - y
    return params, cost


# --- the mapping and compiling of a whole population, in numba ------------------------------
T_DIGIT, T_DOT, T_OPEN, T_CLOSE, T_BINARY, T_FUNCTION, T_VAR, T_OTHER = range(8)


@functools.lru_cache(maxsize=32)
def _grammar_tables(grammar: Grammar, variables: tuple[str, ...]
                    ) -> tuple[np.ndarray, ...]:
    """``grammar`` as flat arrays for :func:`_map_population`: rule -> productions ->
    symbols (a non-terminal as its rule index, a terminal t as ``-t - 1``) and, per
    terminal, its kind and value."""
    index = {lhs: i for i, (lhs, _) in enumerate(grammar.rules)}
    terminals: dict[str, int] = {}
    kinds: list[int] = []
    values: list[int] = []
    variable = {v: i for i, v in enumerate(variables)}

    def terminal(token: str) -> int:
        if token not in terminals:
            terminals[token] = len(kinds)
            if token.isdigit() and len(token) == 1:
                kinds.append(T_DIGIT)
                values.append(int(token))
            elif token == ".":
                kinds.append(T_DOT)
                values.append(0)
            elif token in ("(", ")"):
                kinds.append(T_OPEN if token == "(" else T_CLOSE)
                values.append(0)
            elif token in _BINARY:
                kinds.append(T_BINARY)
                values.append(_BINARY[token])
            elif token in _UNARY:
                kinds.append(T_FUNCTION)
                values.append(_UNARY[token])
            elif token in variable:
                kinds.append(T_VAR)
                values.append(variable[token])
            else:
                kinds.append(T_OTHER)
                values.append(0)
        return terminals[token]

    rule_start = [0]
    prod_start = [0]
    symbols: list[int] = []
    for _, productions in grammar.rules:
        for production in productions:
            for symbol in production:
                symbols.append(index[symbol] if symbol in index else -terminal(symbol) - 1)
            prod_start.append(len(symbols))
        rule_start.append(len(prod_start) - 1)
    longest = max(len(p) for _, prods in grammar.rules for p in prods)
    return (np.asarray(rule_start, np.int64), np.asarray(prod_start, np.int64),
            np.asarray(symbols, np.int64), np.asarray(kinds, np.int64),
            np.asarray(values, np.int64), np.int64(longest))


@njit(cache=True)
def _map_one(genome: np.ndarray, wraps: int, rule_start: np.ndarray, prod_start: np.ndarray,
             symbols: np.ndarray, kinds: np.ndarray, values: np.ndarray, longest: int,
             max_nodes: int, ops: np.ndarray, args: np.ndarray, consts: np.ndarray
             ) -> tuple[int, int, int, int]:  # pragma: no cover - numba
    """Map and compile one genome (the semantics of :func:`map_genome` followed by
    :func:`compile_expression`): returns (number of ops, number of constants, codons read,
    status: 1 valid, 0 codons ran out or malformed, -1 longer than ``max_nodes``, -2 no
    variable)."""
    n = genome.shape[0]
    budget = n * (wraps + 1)
    cap = budget * longest + 2
    stack = np.empty(cap, np.int64)
    tokens = np.empty(cap, np.int64)
    sp = 1
    stack[0] = 0
    nt = 0
    index = 0
    wrap = 0
    while sp > 0:
        sp -= 1
        symbol = stack[sp]
        if symbol < 0:
            tokens[nt] = -symbol - 1
            nt += 1
            continue
        if index >= n:
            if wrap >= wraps:
                return 0, 0, wrap * n + index, 0
            index = 0
            wrap += 1
        first = rule_start[symbol]
        count = rule_start[symbol + 1] - first
        production = first + genome[index] % count
        index += 1
        lo = prod_start[production]
        hi = prod_start[production + 1]
        if sp + (hi - lo) > cap:
            return 0, 0, wrap * n + index, 0
        for j in range(hi - 1, lo - 1, -1):
            stack[sp] = symbols[j]
            sp += 1
    used = wrap * n + index
    # shunting-yard: + - (1) < * / (2) < unary minus (3); functions apply to a parenthesis
    opstack = np.empty(nt + 1, np.int64)  # op codes; -1 marks an open parenthesis
    top = 0
    n_ops = 0
    n_consts = 0
    depth = 0
    has_var = False
    expect = True
    i = 0
    while i < nt:
        kind = kinds[tokens[i]]
        value = values[tokens[i]]
        if kind in (T_DIGIT, T_DOT):
            if not expect:
                return 0, 0, used, 0
            mantissa = 0.0  # all digits as an integer, then / 10^decimals: correctly
            decimals = 0    # rounded, as float("d.d") is
            dots = 0
            digits = 0
            while i < nt and (kinds[tokens[i]] == T_DIGIT or kinds[tokens[i]] == T_DOT):
                if kinds[tokens[i]] == T_DOT:
                    dots += 1
                else:
                    digits += 1
                    mantissa = mantissa * 10.0 + values[tokens[i]]
                    if dots > 0:
                        decimals += 1
                i += 1
            if dots > 1 or digits == 0:
                return 0, 0, used, 0
            if n_ops >= max_nodes:
                return 0, 0, used, -1
            ops[n_ops] = OP_CONST
            args[n_ops] = n_consts
            consts[n_consts] = mantissa / 10.0 ** decimals
            n_ops += 1
            n_consts += 1
            depth += 1
            expect = False
            continue
        if kind == T_VAR:
            if not expect:
                return 0, 0, used, 0
            if n_ops >= max_nodes:
                return 0, 0, used, -1
            ops[n_ops] = OP_VAR
            args[n_ops] = value
            n_ops += 1
            depth += 1
            has_var = True
            expect = False
        elif kind == T_FUNCTION:
            if not expect or i + 1 >= nt or kinds[tokens[i + 1]] != T_OPEN:
                return 0, 0, used, 0
            opstack[top] = value
            top += 1
        elif kind == T_OPEN:
            if not expect:
                return 0, 0, used, 0
            opstack[top] = -1
            top += 1
        elif kind == T_CLOSE:
            if expect:
                return 0, 0, used, 0
            while top > 0 and opstack[top - 1] != -1:
                top -= 1
                op = opstack[top]
                if n_ops >= max_nodes:
                    return 0, 0, used, -1
                ops[n_ops] = op
                args[n_ops] = 0
                n_ops += 1
                if op <= OP_DIV:
                    depth -= 1
            if top == 0:
                return 0, 0, used, 0
            top -= 1
            if top > 0 and opstack[top - 1] >= OP_SIN:
                top -= 1
                if n_ops >= max_nodes:
                    return 0, 0, used, -1
                ops[n_ops] = opstack[top]
                args[n_ops] = 0
                n_ops += 1
        elif kind == T_BINARY:
            if expect:
                if value == OP_SUB:
                    opstack[top] = OP_NEG
                    top += 1
                elif value != OP_ADD:
                    return 0, 0, used, 0
            else:
                rank = 1 if value <= OP_SUB else 2
                while top > 0:
                    other = opstack[top - 1]
                    if other == OP_NEG:
                        other_rank = 3
                    elif OP_ADD <= other <= OP_DIV:
                        other_rank = 1 if other <= OP_SUB else 2
                    else:
                        break
                    if other_rank < rank:
                        break
                    top -= 1
                    if n_ops >= max_nodes:
                        return 0, 0, used, -1
                    ops[n_ops] = other
                    args[n_ops] = 0
                    n_ops += 1
                    if other <= OP_DIV:
                        depth -= 1
                opstack[top] = value
                top += 1
                expect = True
        else:
            return 0, 0, used, 0
        i += 1
    if expect:
        return 0, 0, used, 0
    while top > 0:
        top -= 1
        op = opstack[top]
        if op == -1 or op >= OP_SIN:
            return 0, 0, used, 0
        if n_ops >= max_nodes:
            return 0, 0, used, -1
        ops[n_ops] = op
        args[n_ops] = 0
        n_ops += 1
        if op <= OP_DIV:
            depth -= 1
    if depth != 1:
        return 0, 0, used, 0
    if not has_var:
        return n_ops, n_consts, used, -2
    return n_ops, n_consts, used, 1


@njit(cache=True)
def _map_population(genomes: np.ndarray, wraps: int, rule_start: np.ndarray,
                    prod_start: np.ndarray, symbols: np.ndarray, kinds: np.ndarray,
                    values: np.ndarray, longest: int, max_nodes: int
                    ) -> tuple[np.ndarray, ...]:  # pragma: no cover - numba
    m = genomes.shape[0]
    ops = np.zeros((m, max_nodes), np.int64)
    args = np.zeros((m, max_nodes), np.int64)
    consts = np.zeros((m, max_nodes), np.float64)
    n_ops = np.zeros(m, np.int64)
    n_consts = np.zeros(m, np.int64)
    used = np.zeros(m, np.int64)
    status = np.zeros(m, np.int64)
    for g in range(m):
        a, b, c, d = _map_one(genomes[g], wraps, rule_start, prod_start, symbols, kinds,
                              values, longest, max_nodes, ops[g], args[g], consts[g])
        n_ops[g] = a
        n_consts[g] = b
        used[g] = c
        status[g] = d
    return ops, args, consts, n_ops, n_consts, used, status


# --- printing: the evolved expression in raw counter units, constants folded -----------------
# A sum is a constant plus coefficient x product terms; a product is a sorted tuple of
# (factor text, exponent). Factors are counters, functions and sums that cannot be expanded
# (written in parentheses, divided by their own first constant so that they read "(k*C4 + 1)").
_Product = tuple[tuple[str, int], ...]


@dataclass
class _Sum:
    const: float = 0.0
    terms: dict[_Product, float] = field(default_factory=dict)

    def scaled(self, k: float) -> _Sum:
        return _Sum(self.const * k, {p: c * k for p, c in self.terms.items()})

    def single(self) -> tuple[_Product, float] | None:
        """The one term of a monomial (no constant, one term), else None."""
        return next(iter(self.terms.items())) if self.const == 0 and len(self.terms) == 1 \
            else None


def _fmt(value: float, digits: int = 4) -> str:
    return f"{value:.{digits}g}"


def _times(a: _Product, b: _Product) -> _Product:
    power: dict[str, int] = {}
    for text, e in (*a, *b):
        power[text] = power.get(text, 0) + e
    return tuple(sorted((t, e) for t, e in power.items() if e))


def _plus(a: _Sum, b: _Sum, sign: float = 1.0) -> _Sum:
    terms = dict(a.terms)
    for p, c in b.terms.items():
        terms[p] = terms.get(p, 0.0) + sign * c
    return _Sum(a.const + sign * b.const, {p: c for p, c in terms.items() if c != 0})


def _monomial(product: _Product, coef: float) -> _Sum:
    return _Sum(coef, {}) if not product else _Sum(0.0, {product: coef})


def _expand(a: _Sum, product: _Product, coef: float) -> _Sum:
    """``a`` times one term."""
    out = _monomial(product, coef * a.const) if a.const else _Sum()
    for p, c in a.terms.items():
        out = _plus(out, _monomial(_times(p, product), c * coef))
    return out


def _factor(s: _Sum, digits: int, names: Sequence[str]) -> tuple[float, str]:
    """A sum that stays a factor: its content (the constant, else the first coefficient) and
    the parenthesized rest."""
    content = s.const if s.const else next(iter(s.terms.values()))
    return content, f"({_sum_text(s.scaled(1.0 / content), digits, names)})"


def _symbolic(tree: Node, consts: Sequence[float], scales: Sequence[float], digits: int,
              names: Sequence[str]) -> _Sum:
    """``tree`` (over x_j = counter_j / scale_j) as a sum in raw counter units."""
    kind = tree[0]
    if kind == "const":
        return _Sum(float(consts[tree[1]]))
    if kind == "var":
        return _Sum(0.0, {((names[tree[1]], 1),): 1.0 / scales[tree[1]]})
    if kind == "un":
        inner = _symbolic(tree[2], consts, scales, digits, names)
        if tree[1] == OP_NEG:
            return inner.scaled(-1.0)
        function = _FUNCTION[tree[1]]
        if not inner.terms:
            return _Sum(float(getattr(np, function)(inner.const)))
        return _Sum(0.0, {((f"{function}({_sum_text(inner, digits, names)})", 1),): 1.0})
    a = _symbolic(tree[2], consts, scales, digits, names)
    b = _symbolic(tree[3], consts, scales, digits, names)
    op = tree[1]
    if op in (OP_ADD, OP_SUB):
        return _plus(a, b, 1.0 if op == OP_ADD else -1.0)
    if op == OP_DIV:
        if not b.terms:
            return a.scaled(1.0 / b.const if b.const else math.inf)
        one = b.single()
        if one is not None:
            inverse = (tuple((t, -e) for t, e in one[0]), 1.0 / one[1])
        else:
            content, text = _factor(b, digits, names)
            inverse = (((text, -1),), 1.0 / content)
        if a.terms and a.single() is None:  # (a + b*C1)/(...) stays one fraction
            content, text = _factor(a, digits, names)
            return _monomial(_times(((text, 1),), inverse[0]), content * inverse[1])
        return _expand(a, *inverse)
    if not a.terms:
        return b.scaled(a.const)
    if not b.terms:
        return a.scaled(b.const)
    for x, y in ((a, b), (b, a)):
        one = y.single()
        if one is not None:
            return _expand(x, *one)
    (ka, ta), (kb, tb) = _factor(a, digits, names), _factor(b, digits, names)
    return _monomial(_times(((ta, 1),), ((tb, 1),)), ka * kb)


def _sum_text(s: _Sum, digits: int, names: Sequence[str]) -> str:
    parts: list[tuple[bool, str]] = []
    if s.const or not s.terms:
        parts.append((s.const < 0, _fmt(abs(s.const), digits)))
    for product, coef in s.terms.items():
        up = [t for t, e in product if e > 0 for _ in range(e)]
        down = [t for t, e in product if e < 0 for _ in range(-e)]
        magnitude = _fmt(abs(coef), digits)
        head = up if magnitude == "1" and up else [magnitude, *up]
        parts.append((coef < 0, "*".join(head) + "".join(f"/{t}" for t in down)))
    text = ""
    for k, (negative, part) in enumerate(parts):
        if k == 0:
            text = f"-{part}" if negative else part
        else:
            text += f" {'-' if negative else '+'} {part}"
    return text


def _equation(tree: Node, consts: Sequence[float], scales: Sequence[float], intercept: float,
              slope: float, digits: int, names: Sequence[str]) -> str:
    body = _symbolic(tree, consts, scales, digits, names).scaled(slope)
    return _sum_text(_plus(_Sum(intercept), body), digits, names)


_FUNCTIONS_NS = {"sin": np.sin, "cos": np.cos, "log": np.log, "exp": np.exp, "sqrt": np.sqrt}


# --- the grammatical-evolution model ---------------------------------------------------------
@dataclass(frozen=True)
class GEPowerModel:
    """An expression found by grammatical evolution: ``P = intercept + slope * f(X / scales)``
    with ``f`` the evolved ``expression`` over variables ``x0..`` (= ``features[i] /
    scales[i]``) and its fitted ``constants``; :attr:`text` is the readable form in raw
    counter units. Predictions are limited to ``bounds`` (W; None: unlimited) and a
    prediction that is not a number (0/0 on an unseen input) is ``fallback_w``."""

    features: tuple[str, ...]
    scales: tuple[float, ...]
    expression: str
    constants: tuple[float, ...]
    intercept: float
    slope: float
    target: str = "power_w"
    grammar: str = "thesis"
    genome: tuple[int, ...] = ()
    rmse_train: float = math.nan
    generations: int = 0
    seed: int = 0
    history: tuple[float, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    bounds: tuple[float, float] | None = None
    fallback_w: float | None = None

    @property
    def program(self) -> Program:
        return compile_expression(self.expression, [f"x{i}" for i in range(len(self.features))])

    def unbounded(self, X: pd.DataFrame) -> np.ndarray:
        """The expression's value, without the output bounds."""
        A = _matrix(X, self.features) / np.asarray(self.scales, float)
        program = self.program
        f = _evaluate(program.ops, program.args, np.asarray(self.constants, float),
                      np.ascontiguousarray(A))
        return self.intercept + self.slope * f

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return _bounded(self.unbounded(X), self.bounds, self.fallback_w)

    @property
    def text(self) -> str:
        """The model as an equation in raw counter units with its constants folded, e.g.
        ``power_w = 12.1 + 3.1e-10*C2/C1 + ...`` (without the output bounds). Four significant
        digits, more when four would change a prediction by over 1e-3 (relative) at typical
        counter values."""
        tree = self.program.tree
        placeholders = [f"v{i}" for i in range(len(self.features))]
        probe = np.random.default_rng(0).uniform(0.5, 1.5, (16, len(self.features))) \
            * np.asarray(self.scales, float)
        frame = pd.DataFrame(probe, columns=list(self.features))
        with np.errstate(all="ignore"):
            exact = self.unbounded(frame)
        digits = 4
        for digits in (4, 6, 9, 17):
            text = _equation(tree, self.constants, self.scales, self.intercept, self.slope,
                             digits, placeholders)
            namespace = {**_FUNCTIONS_NS, **{p: probe[:, i] for i, p in enumerate(placeholders)}}
            try:
                with np.errstate(all="ignore"):
                    value = eval(text, {"__builtins__": {}}, namespace)  # our own text
            except (SyntaxError, NameError, ZeroDivisionError, TypeError):
                break
            finite = np.isfinite(exact)
            if np.all(np.abs(np.broadcast_to(value, exact.shape)[finite] - exact[finite])
                      <= 1e-3 * np.maximum(np.abs(exact[finite]), 1e-12)):
                break
        names = [str(f) for f in self.features]
        return f"{self.target} = " + _equation(tree, self.constants, self.scales,
                                                self.intercept, self.slope, digits, names)

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_model", "version": MODEL_VERSION, "model": "ge",
                      "target": self.target, "features": list(self.features),
                      "scales": list(self.scales), "expression": self.expression,
                      "constants": list(self.constants), "intercept": self.intercept,
                      "slope": self.slope, "text": self.text, "grammar": self.grammar,
                      "genome": list(self.genome), "rmse_train": self.rmse_train,
                      "generations": self.generations, "seed": self.seed,
                      "history": list(self.history), "meta": dict(self.meta),
                      "bounds": None if self.bounds is None else list(self.bounds),
                      "fallback_w": self.fallback_w})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> GEPowerModel:
        check_version(data, "power_model", MODEL_VERSION, source)
        try:
            model = GEPowerModel(
                features=tuple(str(f) for f in data["features"]),
                scales=tuple(float(s) for s in data["scales"]),
                expression=str(data["expression"]),
                constants=tuple(float(c) for c in data["constants"]),
                intercept=float(data["intercept"]), slope=float(data["slope"]),
                target=str(data.get("target", "power_w")),
                grammar=str(data.get("grammar", "thesis")),
                genome=tuple(int(c) for c in data.get("genome", ())),
                rmse_train=math.nan if data.get("rmse_train") is None
                else float(data["rmse_train"]),
                generations=int(data.get("generations", 0)), seed=int(data.get("seed", 0)),
                history=tuple(math.nan if h is None else float(h)
                              for h in data.get("history", ())),
                meta=dict(data.get("meta") or {}),
                bounds=None if data.get("bounds") is None
                else (float(data["bounds"][0]), float(data["bounds"][1])),
                fallback_w=None if data.get("fallback_w") is None
                else float(data["fallback_w"]))
            if len(model.scales) != len(model.features):
                raise ValueError("features and scales differ in length")
            program = model.program
            if len(program.constants) != len(model.constants):
                raise ValueError("the expression and its constants do not match")
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed GE power model: {exc}", path=source) from None
        return model


@dataclass
class _Evaluator:
    """Fitness of a population: mapping and compiling (numba), fitting the constants (numba),
    RMSE on every row of ``X``; fits are cached by expression structure."""

    tables: tuple[np.ndarray, ...]
    X: np.ndarray
    y: np.ndarray
    X_fit: np.ndarray
    y_fit: np.ndarray
    wraps: int
    max_nodes: int
    iterations: int
    cache: dict[bytes, tuple[float, Any, np.ndarray, np.ndarray]] = field(default_factory=dict)
    fits: int = 0

    def __call__(self, genomes: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[Any]]:
        """Fitness (RMSE; inf when invalid), codons read, and (fitted [a, b, constants], ops,
        args, structure key) of each genome (None when invalid)."""
        ops, args, consts, n_ops, n_consts, used, status = _map_population(
            genomes, self.wraps, *self.tables, self.max_nodes)
        fitness = np.full(len(genomes), math.inf)
        found: list[Any] = [None] * len(genomes)
        for g in np.flatnonzero(status == 1):
            n = n_ops[g]
            o, a = ops[g, :n], args[g, :n]
            key = o.tobytes() + a.tobytes()
            entry = self.cache.get(key)
            if entry is None:
                self.fits += 1
                fitted, cost = _fit_constants(o, a, consts[g, :n_consts[g]], self.X_fit,
                                              self.y_fit, self.iterations)
                rmse = math.inf
                if math.isfinite(cost):
                    f = _evaluate(o, a, fitted[2:], self.X)
                    rmse = float(np.sqrt(np.mean((fitted[0] + fitted[1] * f - self.y) ** 2)))
                entry = (rmse if math.isfinite(rmse) else math.inf, fitted, o.copy(), a.copy())
                self.cache[key] = entry
            fitness[g] = entry[0]
            found[g] = (entry[1], entry[2], entry[3], key)
        return fitness, used, found


def _bounded(predicted: np.ndarray, bounds: tuple[float, float] | None,
             fallback: float | None) -> np.ndarray:
    """Predictions limited to ``bounds``; NaN (0/0) replaced by ``fallback``."""
    out = np.asarray(predicted, float)
    if fallback is not None:
        out = np.where(np.isnan(out), fallback, out)
    if bounds is not None:
        out = np.clip(out, bounds[0], bounds[1])
    return out


def _output_bounds(y: np.ndarray, margin: float) -> tuple[float, float]:
    low, high = float(np.min(y)), float(np.max(y))
    extra = margin * (high - low)
    return low - extra, high + extra


def _validation_rows(n: int, validation: float, split: str, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Evolution and validation rows: the last ``validation`` share (``split="time"``) or a
    random one; no validation rows when either part would have fewer than 10 rows."""
    if split not in SPLITS:
        raise UsageError(f"validation split {split!r}: expected one of {', '.join(SPLITS)}")
    if not 0 <= validation < 1:
        raise UsageError(f"validation = {validation}: expected 0 <= share < 1")
    n_val = round(validation * n)
    if n_val < 10 or n - n_val < 10:
        return np.arange(n), np.arange(0)
    if split == "time":
        return np.arange(n - n_val), np.arange(n - n_val, n)
    order = rng.permutation(n)
    return np.sort(order[n_val:]), np.sort(order[:n_val])


def _evolve(evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
            rng: np.random.Generator, *, population: int, codons: int, generations: int,
            crossover: float, p_mut: float, tournament: int, elite: int, patience: int,
            report: Callable[[int, float], None]) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """One run of the evolution: the final population, its fitness and the best fitness of
    every generation. Stops early after ``patience`` generations without a 1e-4 (relative)
    improvement of the best fitness (0: never)."""
    pop = rng.integers(0, 256, size=(population, codons), dtype=np.uint8)
    fitness, used = evaluate(pop)
    for _ in range(10):  # redraw individuals that do not map at all
        invalid = ~np.isfinite(fitness)
        if not invalid.any():
            break
        pop[invalid] = rng.integers(0, 256, size=(int(invalid.sum()), codons), dtype=np.uint8)
        fitness[invalid], used[invalid] = evaluate(pop[invalid])
    history = [float(np.min(fitness))]
    n_children = population - elite
    n_pairs = (n_children + 1) // 2
    last_gain = 0
    for generation in range(generations):
        order = np.argsort(fitness, kind="stable")
        contenders = rng.integers(0, population, size=(n_pairs, 2, tournament))
        winners = np.take_along_axis(
            contenders, np.argmin(fitness[contenders], axis=2)[..., None], axis=2)[..., 0]
        first, second = winners[:, 0], winners[:, 1]
        cross = rng.random(n_pairs) < crossover
        reach = np.maximum(np.minimum(used[first], used[second]), 2)
        points = (rng.random(n_pairs) * (reach - 1)).astype(np.int64) + 1
        swap = (np.arange(codons)[None, :] >= points[:, None]) & cross[:, None]
        offspring = np.concatenate([np.where(swap, pop[second], pop[first]),
                                    np.where(swap, pop[first], pop[second])])[:n_children]
        flips = rng.random(offspring.shape) < p_mut
        offspring[flips] = rng.integers(0, 256, size=int(flips.sum()), dtype=np.uint8)
        child_fitness, child_used = evaluate(offspring)
        keep = order[:elite]
        pop = np.concatenate([pop[keep], offspring])
        fitness = np.concatenate([fitness[keep], child_fitness])
        used = np.concatenate([used[keep], child_used])
        best = float(np.min(fitness))
        if best < history[last_gain] * (1 - 1e-4):
            last_gain = len(history)
        history.append(best)
        report(generation + 1, best)
        if patience and len(history) - 1 - last_gain >= patience:
            break
    return pop, fitness, history


def fit_ge(X: pd.DataFrame, y: Any = "power_w", *, features: Sequence[str] | None = None,
           grammar: str = "thesis", population: int = 200, codons: int = 100,
           generations: int = 1000, crossover: float = 0.9, mutation: float | None = None,
           wraps: int = 3, tournament: int = 2, elite: int = 2, fit_samples: int = 300,
           iterations: int = 10, max_nodes: int = 60, restarts: int = 3,
           patience: int = 250, validation: float = 0.2, validation_split: str = "time",
           candidates: int = 5, margin: float = 0.1, seed: int = 0,
           progress: Callable[[str, float], None] | None = None) -> GEPowerModel:
    """Grammatical evolution of a power model (section 4.2.1.1.2, Appendix A).

    The thesis's settings: ``population`` 200, ``codons`` 100 of 8 bits, ``crossover`` 0.9,
    ``mutation`` per codon 1 / number of grammar rules (default; 0.2 for Grammar 1, as the
    authors' JECO library computes it), ``wraps`` 3, RMSE fitness, ``grammar`` "thesis"
    (Grammar 1; "extended" adds a linear term, or give a BNF text with ``{vars}``).

    Our choices where the thesis is silent: binary ``tournament`` selection, integer-flip
    mutation and generational replacement as in JECO, plus the ``elite`` best individuals
    kept; one-point crossover at the same point of both parents, drawn inside the codons
    both parents use (as PonyGE2 does: a cut beyond them changes nothing); up to
    ``generations`` 1000 per run. Each expression's constants, with an intercept and a scale
    (``P = a + b f(X; c)``), are fitted by Levenberg-Marquardt (``iterations`` steps) on a
    fixed random subset of ``fit_samples`` evolution rows; the fitness is the RMSE on every
    evolution row. Expressions longer than ``max_nodes`` or without a variable are invalid
    (infinite fitness), as are those whose codons run out. Counters enter divided by their
    mean absolute value (numerical range; the printed model is in raw units).

    Robustness on real data (issue 18, our choices): ``restarts`` independent runs (seeds
    ``[seed, r]``), each stopped after ``patience`` generations without improvement;
    ``validation`` (20 %) of the training rows — the last ones as ``X`` orders them
    (``validation_split="time"``) or a random share ("random") — take no part in the
    evolution, and the model is the one of the ``candidates`` best distinct expressions of
    every run with the lowest validation RMSE, or the evolution rows' mean power when no
    expression beats it there (``meta["selected"]`` says which); its constants are then
    refitted on every training row. Predictions are limited to the training range of the
    target widened by ``margin`` (10 %) of that range on both sides, and a prediction that
    is not a number (0/0) is the training mean. Mapping, compiling, evaluation and fitting
    run in numba kernels; fits are cached by expression structure. Seeded: the same data and
    ``seed`` give the same model.
    """
    X = _frame(X)
    target_name = y if isinstance(y, str) else "power_w"
    names = _features(X, features, y if isinstance(y, str) else None)
    values = _target(X, y)
    A = _matrix(X, names)
    if len(values) < 3:
        raise InputError(f"{len(values)} rows: too few to fit a model")
    for name, value in (("population", population), ("codons", codons),
                        ("generations", generations), ("tournament", tournament),
                        ("fit_samples", fit_samples), ("max_nodes", max_nodes),
                        ("restarts", restarts), ("candidates", candidates)):
        if value < 1:
            raise UsageError(f"{name} = {value}: expected a positive number")
    if not 0 <= crossover <= 1:
        raise UsageError(f"crossover = {crossover}: expected a probability")
    if wraps < 0 or elite < 0 or elite >= population or patience < 0 or margin < 0:
        raise UsageError("wraps >= 0, patience >= 0, margin >= 0 and 0 <= elite < population "
                         "expected")
    gram = build_grammar(grammar, len(names))
    p_mut = 1.0 / gram.n_rules if mutation is None else float(mutation)
    if not 0 <= p_mut <= 1:
        raise UsageError(f"mutation = {mutation}: expected a probability")
    scales = np.mean(np.abs(A), axis=0)
    scales = np.where(scales > 0, scales, 1.0)
    Xs = np.ascontiguousarray(A / scales)
    rng = np.random.default_rng([seed, 17])
    evolve_rows, check_rows = _validation_rows(len(values), validation, validation_split, rng)
    X_evo, y_evo = np.ascontiguousarray(Xs[evolve_rows]), values[evolve_rows]
    if len(y_evo) > fit_samples:
        rows = np.sort(rng.choice(len(y_evo), fit_samples, replace=False))
    else:
        rows = np.arange(len(y_evo))
    evaluator = _Evaluator(tables=_grammar_tables(gram, tuple(f"x{i}" for i in range(len(names)))),
                           X=X_evo, y=y_evo, X_fit=np.ascontiguousarray(X_evo[rows]),
                           y_fit=y_evo[rows], wraps=wraps, max_nodes=max_nodes,
                           iterations=iterations)

    def evaluate(genomes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        fitness, used, _ = evaluator(genomes)
        return fitness, np.minimum(used, codons)

    started = time.perf_counter()
    evo_bounds = _output_bounds(y_evo, margin)
    X_check, y_check = np.ascontiguousarray(Xs[check_rows]), values[check_rows]
    pool: dict[bytes, tuple[float, int, np.ndarray, Any]] = {}  # key -> (score, run, genome, fit)
    runs: list[dict[str, Any]] = []
    histories: list[list[float]] = []
    for run in range(restarts):
        def report(generation: int, best: float, run: int = run) -> None:
            if progress is not None:
                progress(f"run {run + 1}/{restarts}, generation {generation}/{generations}, "
                         f"best RMSE {best:.4g}", (run + generation / generations) / restarts)

        pop, fitness, history = _evolve(
            evaluate, np.random.default_rng([seed, run]), population=population, codons=codons,
            generations=generations, crossover=crossover, p_mut=p_mut, tournament=tournament,
            elite=elite, patience=patience, report=report)
        histories.append(history)
        order = np.argsort(fitness, kind="stable")
        _, _, found = evaluator(pop[order[: 4 * candidates]])
        taken = 0
        best_check = math.inf
        for genome, entry in zip(pop[order[: 4 * candidates]], found, strict=True):
            if entry is None or taken >= candidates:
                continue
            params, o, a, key = entry
            if key in pool:
                taken += 1
                continue
            taken += 1
            score = float(evaluator.cache[key][0])
            if len(y_check):
                with np.errstate(all="ignore"):
                    guess = params[0] + params[1] * _evaluate(o, a, params[2:], X_check)
                guess = _bounded(guess, evo_bounds, float(np.mean(y_evo)))
                score = float(np.sqrt(np.mean((guess - y_check) ** 2)))
                score = score if math.isfinite(score) else math.inf
            best_check = min(best_check, score)
            pool[key] = (score, run, genome.copy(), entry)
        runs.append({"generations": len(history) - 1, "train_rmse": history[-1],
                     "validation_rmse": best_check if len(y_check) else None})
    if not pool or not math.isfinite(min(p[0] for p in pool.values())):
        raise InputError("grammatical evolution found no valid expression (are the counters "
                         "all zero or the target constant?)")
    score, run, genome, (params, _, _, _) = min(pool.values(), key=lambda p: (p[0], p[1]))
    mean_check = float(np.sqrt(np.mean((y_check - np.mean(y_evo)) ** 2))) if len(y_check) \
        else math.inf
    bounds = _output_bounds(values, margin)
    fallback = float(np.mean(values))
    meta = {"population": population, "codons": codons, "crossover": crossover,
            "mutation": p_mut, "wraps": wraps, "tournament": tournament, "elite": elite,
            "fit_samples": len(rows), "restarts": restarts, "patience": patience,
            "validation_rows": len(check_rows), "validation_split": validation_split,
            "margin": margin, "runs": runs, "validation_rmse": score,
            "validation_rmse_mean": mean_check if len(y_check) else None,
            "expressions_fitted": evaluator.fits}
    if len(y_check) and score >= mean_check:
        meta |= {"selected": "the training mean: no expression beat it on the validation rows",
                 "fit_time_s": time.perf_counter() - started}
        return GEPowerModel(
            features=names, scales=tuple(float(s) for s in scales), expression="0.0",
            constants=(0.0,), intercept=fallback, slope=0.0, target=target_name,
            grammar=gram.name, rmse_train=float(np.sqrt(np.mean((values - fallback) ** 2))),
            generations=generations, seed=seed, history=tuple(histories[0]), meta=meta,
            bounds=bounds, fallback_w=fallback)
    tokens, _ = map_genome(genome, gram, wraps=wraps)
    program = compile_expression(tokens or [], [f"x{i}" for i in range(len(names))])
    # refit the chosen expression's constants on every training row
    params_all, cost = _fit_constants(program.ops, program.args, params[2:].copy(), Xs,
                                      values, 100)
    with np.errstate(all="ignore"):
        before = params[0] + params[1] * _evaluate(program.ops, program.args, params[2:], Xs)
    rmse = float(np.sqrt(np.mean((before - values) ** 2)))
    if math.isfinite(cost) and not math.sqrt(cost / len(values)) > rmse:
        params, rmse = params_all, math.sqrt(cost / len(values))
    expression = " ".join(_merge_numbers(tokens or []))
    meta |= {"selected": f"run {run + 1}: the lowest validation RMSE" if len(y_check)
             else f"run {run + 1}: the lowest training RMSE (too few rows to validate)",
             "fit_time_s": time.perf_counter() - started}
    return GEPowerModel(
        features=names, scales=tuple(float(s) for s in scales), expression=expression,
        constants=tuple(float(c) for c in params[2:]), intercept=float(params[0]),
        slope=float(params[1]), target=target_name, grammar=gram.name,
        genome=tuple(int(c) for c in genome), rmse_train=float(rmse),
        generations=generations, seed=seed, history=tuple(histories[run]), meta=meta,
        bounds=bounds, fallback_w=fallback)


# --- server power breakdown (4.15-4.17) ------------------------------------------------------
def fit_polynomial(x: Any, y: Any, degree: int) -> tuple[float, ...]:
    """Least-squares polynomial coefficients in ascending order (c0, c1, ...), fitted on a
    scaled domain and converted back to raw units."""
    xv = np.asarray(x, float)
    yv = np.asarray(y, float)
    if xv.shape != yv.shape or xv.ndim != 1:
        raise UsageError("x and y: expected two 1-D arrays of the same length")
    if not (np.isfinite(xv).all() and np.isfinite(yv).all()):
        raise InputError("missing or non-finite values in the polynomial data")
    if len(np.unique(xv)) <= degree:
        raise InputError(f"{len(np.unique(xv))} distinct x values: too few for degree {degree}")
    poly = np.polynomial.Polynomial.fit(xv, yv, degree).convert()
    coef = np.zeros(degree + 1)
    coef[: len(poly.coef)] = poly.coef
    return tuple(float(c) for c in coef)


def fit_leakage(temperature_c: Any, leakage_w: Any, *, degree: int = 2) -> tuple[float, ...]:
    """Eq. 4.16: ``alpha0 + alpha1 T + alpha2 T^2`` (the second-order Taylor expansion of an
    exponential), T the CPU temperature (degrees C)."""
    return fit_polynomial(temperature_c, leakage_w, degree)


def fit_fan(rpm: Any, fan_w: Any, *, degree: int = 3) -> tuple[float, ...]:
    """Eq. 4.17: ``beta0 + beta1 rpm + beta2 rpm^2 + beta3 rpm^3``."""
    return fit_polynomial(rpm, fan_w, degree)


def _poly(coef: Sequence[float], x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    for c in reversed(coef):
        out = out * x + c
    return out


@dataclass(frozen=True)
class ServerPowerModel:
    """Eq. 4.15: ``P_total = P_idle + P_leak(T) + P_CPU,dyn + P_fan(rpm) + P_Mem,dyn +
    P_disk`` (defaults: the thesis's P_idle = 50.0 W, P_disk = 16.75 W, section 4.2.1)."""

    cpu: Any
    mem: Any
    leakage: tuple[float, ...]
    fan: tuple[float, ...]
    idle_w: float = 50.0
    disk_w: float = 16.75
    temperature: str = "temp_c"
    rpm: str = "fan_rpm"
    target: str = "power_w"
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def features(self) -> tuple[str, ...]:
        names: list[str] = []
        for name in (*self.cpu.features, *self.mem.features, self.temperature, self.rpm):
            if name not in names:
                names.append(name)
        return tuple(names)

    def components(self, X: pd.DataFrame) -> pd.DataFrame:
        """The breakdown per row: idle, leakage, cpu_dyn, fan, mem_dyn, disk and total (W)."""
        X = _frame(X)
        temp = _column(X, self.temperature, None)
        rpm = _column(X, self.rpm, None)
        parts = pd.DataFrame({
            "idle_w": np.full(len(X), self.idle_w),
            "leak_w": _poly(self.leakage, temp),
            "cpu_dyn_w": self.cpu.predict(X),
            "fan_w": _poly(self.fan, rpm),
            "mem_dyn_w": self.mem.predict(X),
            "disk_w": np.full(len(X), self.disk_w),
        }, index=X.index)
        parts["total_w"] = parts.sum(axis=1)
        return parts

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.components(X)["total_w"].to_numpy()

    @property
    def expression(self) -> str:
        def poly(coef: Sequence[float], x: str) -> str:
            return " + ".join(f"{c:.4g}" + (f"*{x}" if k else "") + (f"^{k}" if k > 1 else "")
                              for k, c in enumerate(coef))

        def part(model: Any) -> str:
            return model.text.split(" = ", 1)[-1] if isinstance(model, GEPowerModel) \
                else model.expression

        return (f"{self.idle_w:g} (idle) + [{poly(self.leakage, self.temperature)}] (leakage) "
                f"+ [{part(self.cpu)}] (CPU dynamic) + [{poly(self.fan, self.rpm)}] (fan) + "
                f"[{part(self.mem)}] (memory dynamic) + {self.disk_w:g} (disk)")

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_model", "version": MODEL_VERSION, "model": "server",
                      "target": self.target, "features": list(self.features),
                      "cpu": self.cpu.to_dict(), "mem": self.mem.to_dict(),
                      "leakage": list(self.leakage), "fan": list(self.fan),
                      "idle_w": self.idle_w, "disk_w": self.disk_w,
                      "temperature": self.temperature, "rpm": self.rpm,
                      "meta": dict(self.meta)})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> ServerPowerModel:
        check_version(data, "power_model", MODEL_VERSION, source)
        try:
            return ServerPowerModel(
                cpu=power_model_from_dict(data["cpu"], source),
                mem=power_model_from_dict(data["mem"], source),
                leakage=tuple(float(c) for c in data["leakage"]),
                fan=tuple(float(c) for c in data["fan"]),
                idle_w=float(data.get("idle_w", 50.0)), disk_w=float(data.get("disk_w", 16.75)),
                temperature=str(data.get("temperature", "temp_c")),
                rpm=str(data.get("rpm", "fan_rpm")), target=str(data.get("target", "power_w")),
                meta=dict(data.get("meta") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed server power model: {exc}", path=source) from None


def _fit_one(model: str, X: pd.DataFrame, y: Any, features: Sequence[str] | None, seed: int,
             options: Mapping[str, Any]) -> Any:
    if model == "linear":
        return fit_linear(X, y, features=features, seed=seed, **options)
    if model == "pls":
        return fit_pls(X, y, features=features, seed=seed, **options)
    if model == "ge":
        return fit_ge(X, y, features=features, seed=seed, **options)
    raise UsageError(f"model {model!r}: expected one of {', '.join(MODELS)}")


def fit_server(frame: pd.DataFrame, *, leakage: Sequence[float], fan: Sequence[float],
               total: str = "power_w", mem: str = "mem_dyn_w", temperature: str = "temp_c",
               rpm: str = "fan_rpm", idle_w: float = 50.0, disk_w: float = 16.75,
               model: str = "linear", features: Sequence[str] | None = None, seed: int = 0,
               **options: Any) -> ServerPowerModel:
    """The whole-server model of 4.15 the thesis's way (section 4.2.1): leakage and fan
    polynomials from their own experiments (:func:`fit_leakage`, :func:`fit_fan`), memory
    dynamic power from the DIMM sensor column ``mem``, and the CPU dynamic power as what is
    left of the measured ``total`` (``total - idle - leak(T) - fan(rpm) - mem - disk``);
    both dynamic parts are fitted with ``model`` on the counters ``features`` (default: the
    numeric columns other than the power, temperature and fan columns)."""
    frame = _frame(frame)
    temp = _column(frame, temperature, None)
    speed = _column(frame, rpm, None)
    measured = _column(frame, total, None)
    memory = _column(frame, mem, None)
    if features is None:
        skip = {total, mem, temperature, rpm}
        features = [f for f in default_features(frame, total) if f not in skip
                    and not str(f).endswith("_w")]
    cpu_dyn = measured - idle_w - _poly(tuple(leakage), temp) - _poly(tuple(fan), speed) \
        - memory - disk_w
    cpu_model = _fit_one(model, frame, cpu_dyn, features, seed, options)
    mem_model = _fit_one(model, frame, memory, features, seed, options)
    return ServerPowerModel(cpu=cpu_model, mem=mem_model, leakage=tuple(leakage),
                            fan=tuple(fan), idle_w=idle_w, disk_w=disk_w,
                            temperature=temperature, rpm=rpm, target=total)


def power_model_from_dict(data: Mapping[str, Any], source: str | None = None) -> Any:
    """Any power model stored by ``to_dict()`` (kind ``"power_model"``)."""
    data = dict(data) if isinstance(data, Mapping) else data
    check_version(data, "power_model", MODEL_VERSION, source)
    kind = data.get("model")
    if kind in ("linear", "pls"):
        return LinearPowerModel.from_dict(data, source)
    if kind == "ge":
        return GEPowerModel.from_dict(data, source)
    if kind == "server":
        return ServerPowerModel.from_dict(data, source)
    raise InputError(f"unknown power model {kind!r} (expected linear, pls, ge or server)",
                     path=source)


# --- fit and evaluate on a table (what the CLI runs) ----------------------------------------
@dataclass(frozen=True)
class PowerModelFit:
    """A model fitted on ``1 - test_fraction`` of the rows and scored on the rest: RMSE, MAE
    (W) and MPE (%) on the training and test rows. ``split`` "time": the test rows are the
    last ones in time (by ``time_column``, else in row order); "random": drawn at random.
    ``excluded``: the columns left out of the default features, with the reason;
    ``mean_baseline``: the scores of the training mean on the test rows."""

    model: Any
    target: str
    n_train: int
    n_test: int
    train: Mapping[str, float]
    test: Mapping[str, float]
    seed: int
    test_fraction: float
    fit_time_s: float
    source: str | None = None
    #: Server models (eq. 4.15): the mean of each component over the test rows (W).
    breakdown: Mapping[str, float] = field(default_factory=dict)
    split: str = "random"
    time_column: str | None = None
    excluded: Mapping[str, str] = field(default_factory=dict)
    mean_baseline: Mapping[str, float] = field(default_factory=dict)

    @property
    def text(self) -> str:
        model = self.model
        return model.text if isinstance(model, GEPowerModel) else \
            f"{self.target} = {model.expression}"

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_model_fit", "version": FIT_VERSION,
                      "model": self.model.to_dict(), "method": self.model.to_dict()["model"],
                      "target": self.target, "features": list(self.model.features),
                      "excluded": dict(self.excluded), "expression": self.text,
                      "n_train": self.n_train, "n_test": self.n_test,
                      "train": dict(self.train), "test": dict(self.test),
                      "mean_baseline": dict(self.mean_baseline), "seed": self.seed,
                      "split": self.split, "time_column": self.time_column,
                      "test_fraction": self.test_fraction, "fit_time_s": self.fit_time_s,
                      "source": self.source, "breakdown": dict(self.breakdown)})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> PowerModelFit:
        check_version(data, "power_model_fit", FIT_VERSION, source)

        def scores(d: Mapping[str, Any]) -> dict[str, float]:
            return {k: math.nan if v is None else float(v) for k, v in d.items()}

        try:
            return PowerModelFit(
                model=power_model_from_dict(data["model"], source), target=str(data["target"]),
                n_train=int(data["n_train"]), n_test=int(data["n_test"]),
                train=scores(data["train"]), test=scores(data["test"]), seed=int(data["seed"]),
                test_fraction=float(data["test_fraction"]),
                fit_time_s=float(data.get("fit_time_s") or math.nan),
                source=data.get("source"), breakdown=scores(data.get("breakdown") or {}),
                split=str(data.get("split", "random")), time_column=data.get("time_column"),
                excluded={str(k): str(v) for k, v in (data.get("excluded") or {}).items()},
                mean_baseline=scores(data.get("mean_baseline") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed power_model_fit result: {exc}", path=source) from None


def time_order(table: pd.DataFrame) -> tuple[np.ndarray, str | None]:
    """Row indices in time order and the column that gave it: the first time-like column
    (time, time_s, timestamp, t, t_s, sample, index) that is all numbers or all dates, else
    the row order (None). Ties keep the row order."""
    for name in table.columns:
        if str(name).lower() not in _NON_FEATURES:
            continue
        column = table[name]
        values = pd.to_numeric(column, errors="coerce")
        if values.isna().any():
            try:
                values = pd.to_datetime(column, errors="coerce", utc=True)
            except (TypeError, ValueError):
                continue
            if values.isna().any():
                continue
        return np.argsort(values.to_numpy(), kind="stable"), str(name)
    return np.arange(len(table)), None


def split_rows(n: int, test_fraction: float, seed: int, *, split: str = "random",
               order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Train and test row indices; at least one training row. ``split="random"``: a seeded
    random share, both sorted; ``"time"``: the test rows are the last ``test_fraction`` of
    ``order`` (the time order, default the row order) and the training rows are given in
    that order (the order :func:`fit_ge` validates in)."""
    if not 0 <= test_fraction < 1:
        raise UsageError(f"test fraction {test_fraction}: expected 0 <= fraction < 1")
    if split not in SPLITS:
        raise UsageError(f"split {split!r}: expected one of {', '.join(SPLITS)}")
    n_test = min(round(test_fraction * n), n - 1)
    if split == "time":
        order = np.arange(n) if order is None else np.asarray(order)
        return order[: n - n_test], np.sort(order[n - n_test:])
    order = np.random.default_rng([seed, 3]).permutation(n)
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def fit_power_model(table: pd.DataFrame, *, target: str = "power_w", model: str = "linear",
                    features: Sequence[str] | None = None, seed: int = 0,
                    test_fraction: float = 0.3, split: str = "time",
                    source: str | None = None,
                    progress: Callable[[str, float], None] | None = None,
                    server: Mapping[str, Any] | None = None,
                    **options: Any) -> PowerModelFit:
    """Fit ``model`` ("linear", "pls" or "ge") of ``target`` on counters and score it on a
    held-out ``test_fraction`` of the rows. Input errors name ``source`` (the file) and the
    column.

    ``split`` "time" (the default, our choice): the test rows are the last in time (by a
    time-like column, else the row order) — samples of a run are autocorrelated, and a random
    split puts the neighbours of every test sample in training, which overstates accuracy on
    new runs; "random": a seeded random share (for tables of independent experiments).
    ``features`` default: :func:`screen_features` (no power or energy readings, no constant
    columns); what it left out is in the result's ``excluded``. Grammatical evolution
    validates in the same way it is tested (the last training rows, or random ones).

    ``server``: keyword arguments of :func:`fit_server` (``leakage`` and ``fan``
    coefficients at least): the whole-server model of eq. 4.15 instead, its two dynamic parts
    fitted with ``model``; the result holds the mean of each component on the test rows."""
    table = _frame(table, "table")
    if model not in MODELS:
        raise UsageError(f"model {model!r}: expected one of {', '.join(MODELS)}")
    if split not in SPLITS:
        raise UsageError(f"split {split!r}: expected one of {', '.join(SPLITS)}")
    if len(table) == 0:
        raise InputError("the table has no rows", path=source)
    values = _column(table, target, source)
    excluded: dict[str, str] = {}
    if server is not None:
        mem, temperature = server.get("mem", "mem_dyn_w"), server.get("temperature", "temp_c")
        rpm = server.get("rpm", "fan_rpm")
        for column in (mem, temperature, rpm):
            _column(table, column, source)
        skip = {target, mem, temperature, rpm}
        if features is not None:
            names = list(features)
        else:
            found, excluded = screen_features(table, target, exclude=tuple(skip))
            names = list(found)
    elif features is None:
        found, excluded = screen_features(table, target)
        if not found:
            _features(table, None, target)  # the error, with what was left out
        names = list(found)
    else:
        names = list(_features(table, features, target))
    _matrix(table, names, source)  # every error names the file, column and line
    order, time_column = time_order(table) if split == "time" else (None, None)
    train, test = split_rows(len(table), test_fraction, seed, split=split, order=order)
    minimum = len(names) + 2 if model != "ge" else 3
    if len(train) < minimum:
        raise InputError(f"{len(train)} training rows for {len(names)} counters: too few to "
                         "fit (give more rows or a smaller --test-fraction)", path=source)
    started = time.perf_counter()
    fitted_table = table.iloc[train]
    if model == "ge":
        options = {"validation_split": split, **options, "progress": progress}
    breakdown: dict[str, float] = {}
    if server is not None:
        fitted = fit_server(fitted_table, total=target, model=model, features=names,
                            seed=seed, **server, **options)
        parts = fitted.components(table.iloc[test if len(test) else train])
        breakdown = {str(k): float(v) for k, v in parts.mean().items()}
    else:
        fitted = _fit_one(model, fitted_table, target, names, seed, options)
    elapsed = time.perf_counter() - started
    predicted = fitted.predict(table)
    mean = float(np.mean(values[train]))
    return PowerModelFit(model=fitted, target=target, n_train=len(train), n_test=len(test),
                         train=errors(predicted[train], values[train]),
                         test=errors(predicted[test], values[test]), seed=seed,
                         test_fraction=test_fraction, fit_time_s=elapsed, source=source,
                         breakdown=breakdown, split=split, time_column=time_column,
                         excluded=excluded,
                         mean_baseline={"mean_w": mean, **errors(np.full(len(test), mean),
                                                                 values[test])})


@dataclass(frozen=True)
class PowerModelEval:
    """A stored model scored on a table: RMSE, MAE (W), MPE (%)."""

    method: str
    target: str
    n: int
    scores: Mapping[str, float]
    predicted_mean_w: float
    measured_mean_w: float
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_model_eval", "version": FIT_VERSION,
                      "method": self.method, "target": self.target, "n": self.n,
                      **dict(self.scores), "predicted_mean_w": self.predicted_mean_w,
                      "measured_mean_w": self.measured_mean_w, "source": self.source})


def evaluate_power_model(model: Any, table: pd.DataFrame, *, target: str | None = None,
                         source: str | None = None) -> PowerModelEval:
    """Score ``model`` on ``table`` (the measured power in ``target``, default the model's)."""
    table = _frame(table, "table")
    target = target or getattr(model, "target", "power_w")
    if len(table) == 0:
        raise InputError("the table has no rows", path=source)
    measured = _column(table, target, source)
    for name in model.features:
        _column(table, name, source)
    predicted = model.predict(table)
    return PowerModelEval(method=model.to_dict()["model"], target=target, n=len(table),
                          scores=errors(predicted, measured),
                          predicted_mean_w=float(np.mean(predicted)),
                          measured_mean_w=float(np.mean(measured)), source=source)
