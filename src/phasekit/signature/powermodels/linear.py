"""Classical power models (Salinas Hilburg 2020, section 4.2.1.1.1): ordinary least squares
(:func:`fit_linear`) or partial least squares (:func:`fit_pls`) on selected counters
(:func:`select_features`: greedy forward selection by cross-validated RMSE, or the thesis's
PCA reading)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from phasekit.errors import InputError, UsageError
from phasekit.results import check_version, plain
from phasekit.signature.powermodels.features import (
    as_frame,
    candidate_features,
    counter_matrix,
    target_values,
)
from phasekit.signature.powermodels.protocol import MODEL_VERSION

__all__ = ["SELECTIONS", "LinearPowerModel", "fit_linear", "fit_pls", "select_features"]

#: The feature selections of :func:`select_features` (its ``method``).
SELECTIONS = ("forward", "pca", "none")


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
    X = as_frame(X)
    names = candidate_features(X, features, y if isinstance(y, str) else None)
    A = counter_matrix(X, names)
    target = target_values(X, y)
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
    raise UsageError(f"expected {', '.join(SELECTIONS[:-1])} or {SELECTIONS[-1]}",
                     parameter="method", value=method)


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
        A = counter_matrix(X, self.features)
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
    X = as_frame(X)
    target_name = y if isinstance(y, str) else "power_w"
    names = candidate_features(X, features, y if isinstance(y, str) else None)
    values = target_values(X, y)
    if select != "none":
        names = select_features(X, values, features=names, method=select,
                                max_features=max_features, seed=seed)
    A = counter_matrix(X, names)
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
        raise UsageError(f"expected 1..{p}", parameter="n_components", value=n_components)
    model = PLSRegression(n_components=n_components, scale=False).fit(Z, values)
    # the PLS predictor is linear in Z: read its coefficients back exactly
    b0, b = _ols(Z, model.predict(Z).ravel())
    intercept, coef = _raw(b0, b, mu, sd)
    return LinearPowerModel(method="pls", features=names, intercept=intercept,
                            coefficients=tuple(float(c) for c in coef),
                            n_components=int(n_components), target=target_name,
                            meta={"selection": select})
