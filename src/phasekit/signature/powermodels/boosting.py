"""Gradient boosting of regression trees on counters (scikit-learn's
``GradientBoostingRegressor``): :class:`BoostedPowerModel` and :func:`fit_boosting`. Not in
the thesis: the non-formula model that ``model="auto"`` weighs against linear, PLS and
grammatical evolution.

Stored as JSON, not pickled: the fitted trees themselves (each node's counter, threshold,
children and value), the initial value and the learning rate, which is all a prediction
needs. :meth:`BoostedPowerModel.predict` walks the trees in numpy the way scikit-learn does
(counters as 32-bit floats against 64-bit thresholds, the trees' values summed in order), so
a model read back predicts what the fitted estimator predicted, with no scikit-learn needed
to read it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from phasekit.errors import InputError
from phasekit.results import check_version, plain
from phasekit.signature.powermodels.features import (
    as_frame,
    candidate_features,
    counter_matrix,
    target_values,
)
from phasekit.signature.powermodels.protocol import MODEL_VERSION

__all__ = ["BoostedPowerModel", "RegressionTree", "fit_boosting"]

LEAF = -1  # the children of a leaf


@dataclass(frozen=True)
class RegressionTree:
    """One fitted tree: node ``k`` sends a row left when its ``feature[k]`` (an index into
    the model's features) is at most ``threshold[k]``, else right; a leaf (``left[k]`` -1)
    gives ``value[k]``."""

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[float, ...]

    def leaf_values(self, X32: np.ndarray) -> np.ndarray:
        """The value of the leaf each row of ``X32`` (float32 counters) reaches."""
        feature, threshold = np.asarray(self.feature), np.asarray(self.threshold)
        left, right = np.asarray(self.left), np.asarray(self.right)
        node = np.zeros(len(X32), dtype=np.int64)
        rows = np.arange(len(X32))
        inner = left[node] != LEAF
        while inner.any():
            at, k = rows[inner], node[inner]
            goes_left = X32[at, feature[k]] <= threshold[k]
            node[at] = np.where(goes_left, left[k], right[k])
            inner = left[node] != LEAF
        return np.asarray(self.value, float)[node]

    def to_dict(self) -> dict[str, list[Any]]:
        return {"feature": list(self.feature), "threshold": list(self.threshold),
                "left": list(self.left), "right": list(self.right), "value": list(self.value)}

    @staticmethod
    def from_dict(data: Mapping[str, Any], n_features: int) -> RegressionTree:
        tree = RegressionTree(feature=tuple(int(f) for f in data["feature"]),
                              threshold=tuple(float(t) for t in data["threshold"]),
                              left=tuple(int(c) for c in data["left"]),
                              right=tuple(int(c) for c in data["right"]),
                              value=tuple(float(v) for v in data["value"]))
        n = len(tree.value)
        if not n or any(len(part) != n for part in (tree.feature, tree.threshold, tree.left,
                                                      tree.right)):
            raise ValueError("a tree's node arrays differ in length")
        for k in range(n):
            if tree.left[k] == LEAF:
                continue
            if not (k < tree.left[k] < n and k < tree.right[k] < n
                    and 0 <= tree.feature[k] < n_features):
                raise ValueError(f"tree node {k} points outside the tree or the features")
        return tree


@dataclass(frozen=True)
class BoostedPowerModel:
    """Gradient-boosted regression trees: ``P = init_w + learning_rate * sum of the trees'
    leaf values`` for the counters ``features``."""

    features: tuple[str, ...]
    init_w: float
    learning_rate: float
    trees: tuple[RegressionTree, ...]
    target: str = "power_w"
    meta: Mapping[str, Any] = field(default_factory=dict)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        X32 = counter_matrix(X, self.features).astype(np.float32)
        out = np.full(len(X32), self.init_w)
        for tree in self.trees:
            out += self.learning_rate * tree.leaf_values(X32)
        return out

    @property
    def expression(self) -> str:
        """What the model is, in words (trees have no formula)."""
        depth = self.meta.get("max_depth")
        return (f"gradient boosting of {len(self.trees)} regression trees"
                + (f" of depth {depth}" if depth is not None else "")
                + f" on {', '.join(self.features)}")

    @property
    def text(self) -> str:
        return f"{self.target}: {self.expression}"

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_model", "version": MODEL_VERSION, "model": "boosting",
                      "target": self.target, "features": list(self.features),
                      "expression": self.expression, "init_w": self.init_w,
                      "learning_rate": self.learning_rate,
                      "trees": [tree.to_dict() for tree in self.trees],
                      "meta": dict(self.meta)})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> BoostedPowerModel:
        check_version(data, "power_model", MODEL_VERSION, source)
        try:
            features = tuple(str(f) for f in data["features"])
            return BoostedPowerModel(
                features=features, init_w=float(data["init_w"]),
                learning_rate=float(data["learning_rate"]),
                trees=tuple(RegressionTree.from_dict(t, len(features)) for t in data["trees"]),
                target=str(data.get("target", "power_w")), meta=dict(data.get("meta") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed gradient-boosting power model: {exc}",
                             path=source) from None


def fit_boosting(X: pd.DataFrame, y: Any = "power_w", *,
                 features: Sequence[str] | None = None, seed: int = 0) -> BoostedPowerModel:
    """scikit-learn's ``GradientBoostingRegressor`` with its defaults (squared error, 100
    trees of depth 3, learning rate 0.1) and ``random_state=seed``, fitted on the counters
    ``features`` (default: every numeric column but ``y``) and kept as its trees."""
    from sklearn.ensemble import GradientBoostingRegressor

    X = as_frame(X)
    names = candidate_features(X, features, y if isinstance(y, str) else None)
    values = target_values(X, y)
    if len(values) < 2:
        raise InputError(f"{len(values)} rows: too few to fit a model")
    estimator = GradientBoostingRegressor(random_state=seed)
    estimator.fit(counter_matrix(X, names), values)
    trees = []
    for (stage,) in estimator.estimators_:
        fitted = stage.tree_
        leaf = fitted.children_left == -1
        trees.append(RegressionTree(
            feature=tuple(int(f) for f in np.where(leaf, 0, fitted.feature)),
            threshold=tuple(float(t) for t in np.where(leaf, 0.0, fitted.threshold)),
            left=tuple(int(c) for c in fitted.children_left),     # a leaf's are LEAF (-1)
            right=tuple(int(c) for c in fitted.children_right),
            value=tuple(float(v) for v in fitted.value[:, 0, 0])))
    return BoostedPowerModel(
        features=names, init_w=float(np.ravel(estimator.init_.constant_)[0]),
        learning_rate=float(estimator.learning_rate), trees=tuple(trees),
        target=y if isinstance(y, str) else "power_w",
        meta={"n_estimators": int(estimator.n_estimators_),
              "max_depth": int(estimator.max_depth), "seed": seed,
              "fitted_with": "scikit-learn GradientBoostingRegressor"})
