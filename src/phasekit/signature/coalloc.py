"""Power of co-allocated tasks (Salinas Hilburg 2020, section 4.2.2, eqs. 4.21-4.22, Fig. 4.6).

Two tasks are profiled alone; a model predicts the counters they show when they share the
server from their solo counters, and a power model turns the predicted counters into watts.
One regression per predicted counter, over the solo counters of both tasks (columns
``<counter>_t1`` and ``<counter>_t2``):

- ``method="linear"`` (4.21): ``C~ = eta0 + sum_i eta_i C_i,t1 + sum_i eta'_i C_i,t2`` by least
  squares;
- ``method="ge"`` (4.22): one grammatical-evolution model per counter
  (:func:`~phasekit.signature.powermodels.fit_ge`, by default with the "extended" grammar:
  Grammar 2 of the thesis is garbled, and the models it produced contain linear terms).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from phasekit.errors import InputError, PhasekitError, UsageError
from phasekit.results import Result, check_version, plain, short_repr
from phasekit.signature.powermodels import errors, fit_ge, fit_linear, power_model_from_dict
from phasekit.signature.powermodels.features import as_frame, numeric_column

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["CoallocModel", "fit_coalloc", "pair_frame"]

VERSION = 1
SUFFIXES = ("_t1", "_t2")


def pair_frame(task1: pd.DataFrame, task2: pd.DataFrame, inputs: Sequence[str]) -> pd.DataFrame:
    """The solo counters of both tasks side by side: ``C_t1`` and ``C_t2`` for each input
    counter C, one row per experiment (the two tables are matched by position)."""
    task1, task2 = as_frame(task1, "task1"), as_frame(task2, "task2")
    if len(task1) != len(task2):
        raise InputError(f"task1 has {len(task1)} rows and task2 {len(task2)}: expected one "
                         "row per experiment in both")
    columns: dict[str, np.ndarray] = {}
    for suffix, frame in zip(SUFFIXES, (task1, task2), strict=True):
        for name in inputs:
            columns[f"{name}{suffix}"] = numeric_column(frame, name, None)
    return pd.DataFrame(columns)


@dataclass(frozen=True)
class CoallocModel(Result):
    """Predicts the ``counters`` of two co-allocated tasks from the solo ``inputs`` of each;
    ``models[c]`` is the regression for counter c (features ``<input>_t1``,
    ``<input>_t2``)."""

    method: str
    counters: tuple[str, ...]
    inputs: tuple[str, ...]
    models: Mapping[str, Any]
    meta: Mapping[str, Any] = field(default_factory=dict)

    KIND: ClassVar[str] = "coalloc_model"

    def __repr__(self) -> str:
        return short_repr(self, self.method, f"predicts {', '.join(self.counters)}",
                          f"from {', '.join(self.inputs)} of each task")

    def predict_counters(self, task1: pd.DataFrame, task2: pd.DataFrame) -> pd.DataFrame:
        """The predicted counters of the pair, one row per experiment."""
        pairs = pair_frame(task1, task2, self.inputs)
        return pd.DataFrame({c: self.models[c].predict(pairs) for c in self.counters},
                            index=as_frame(task1).index)

    def predict_power(self, task1: pd.DataFrame, task2: pd.DataFrame, power_model: Any, *,
                      extra: pd.DataFrame | Mapping[str, Any] | None = None) -> np.ndarray:
        """Watts of the pair: ``power_model`` (any power model) on the predicted counters,
        with its other inputs (e.g. temperature, fan speed) taken from ``extra``."""
        predicted = self.predict_counters(task1, task2)
        if extra is not None:
            extra_frame = pd.DataFrame(extra, index=predicted.index) \
                if not isinstance(extra, pd.DataFrame) else extra.set_axis(predicted.index)
            for name in extra_frame.columns:
                if name not in predicted.columns:
                    predicted[name] = extra_frame[name].to_numpy()
        missing = [f for f in power_model.features if f not in predicted.columns]
        if missing:
            raise UsageError(f"the power model needs {', '.join(missing)}, which the "
                             f"co-allocation model does not predict (it predicts "
                             f"{', '.join(self.counters)}); give them in extra",
                             parameter="extra")
        return power_model.predict(predicted)

    def scores(self, task1: pd.DataFrame, task2: pd.DataFrame, together: pd.DataFrame
               ) -> dict[str, dict[str, float]]:
        """RMSE, MAE and MPE per predicted counter against the measured ``together``."""
        predicted = self.predict_counters(task1, task2)
        return {c: errors(predicted[c].to_numpy(), numeric_column(together, c, None))
                for c in self.counters}

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "coalloc_model", "version": VERSION, "method": self.method,
                      "counters": list(self.counters), "inputs": list(self.inputs),
                      "models": {c: m.to_dict() for c, m in self.models.items()},
                      "meta": dict(self.meta)})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> CoallocModel:
        check_version(data, "coalloc_model", VERSION, source)
        try:
            counters = tuple(str(c) for c in data["counters"])
            models = {c: power_model_from_dict(data["models"][c], source) for c in counters}
            return CoallocModel(method=str(data["method"]), counters=counters,
                                inputs=tuple(str(c) for c in data["inputs"]), models=models,
                                meta=dict(data.get("meta") or {}))
        except PhasekitError:  # a nested part's own message (an InputError is a ValueError)
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed coalloc_model: {exc}", path=source) from None

    def summary(self) -> pd.DataFrame:
        """One row per predicted counter: its regression's features and expression."""
        def expression(model: Any) -> str:
            return str(getattr(model, "text", None) or getattr(model, "expression", ""))

        return pd.DataFrame([{"counter": c, "method": self.method,
                              "features": len(self.models[c].features),
                              "expression": expression(self.models[c])}
                             for c in self.counters],
                            columns=["counter", "method", "features", "expression"])

    def plot(self, ax: Axes | None = None) -> Figure:
        """Linear models (eq. 4.21): the coefficient of each solo counter of each task in
        each predicted counter's regression, as a heatmap; others (grammatical evolution,
        eq. 4.22): their expressions written out."""
        from matplotlib.colors import CenteredNorm

        from phasekit.plot.energy import target_axes

        fig, ax = target_axes(ax, height=max(2.5, 0.5 * len(self.counters) + 1.5))
        features = [f"{name}{suffix}" for suffix in SUFFIXES for name in self.inputs]
        linear = all(hasattr(m, "coefficients") for m in self.models.values())
        if linear:
            grid = np.full((len(self.counters), len(features)), np.nan)
            for i, c in enumerate(self.counters):
                model = self.models[c]
                for name, value in zip(model.features, model.coefficients, strict=True):
                    if name in features:
                        grid[i, features.index(name)] = value
            image = ax.imshow(grid, cmap="RdBu_r", norm=CenteredNorm(), aspect="auto")
            ax.set_xticks(range(len(features)), labels=features, rotation=45)
            ax.set_yticks(range(len(self.counters)), labels=list(self.counters))
            fig.colorbar(image, ax=ax, label="coefficient")
        else:
            ax.axis("off")
            for i, row in enumerate(self.summary().itertuples(index=False)):
                ax.text(0.0, 1.0 - (i + 0.5) / max(len(self.counters), 1),
                        f"{row.counter} = {row.expression}", fontsize=8, va="center",
                        family="monospace", transform=ax.transAxes)
        ax.set_title(f"Co-allocation model ({self.method}): counters of the pair from the "
                     "solo counters of each task", fontsize="medium")
        return fig


def fit_coalloc(task1: pd.DataFrame, task2: pd.DataFrame, together: pd.DataFrame, *,
                counters: Sequence[str] = ("C1", "C2", "C10", "C11"),
                inputs: Sequence[str] | None = None, method: str = "linear", seed: int = 0,
                grammar: str = "extended",
                progress: Callable[[str, float], None] | None = None,
                **ge_options: Any) -> CoallocModel:
    """Fit one model per counter of ``counters`` measured in ``together`` (one row per
    experiment) from the solo counters ``inputs`` (default: the same counters) of
    ``task1`` and ``task2`` (one row per experiment, same order).

    The default counters are those of the classical model (C1, C2, C10, C11, eq. 4.21); the
    thesis's GE models (4.22) predict C2, C3, C4, C5, C10, C11, C14.
    """
    counters = tuple(counters)
    inputs = tuple(inputs) if inputs is not None else counters
    if not counters or not inputs:
        raise UsageError("counters and inputs: expected at least one counter each")
    if method not in ("linear", "ge"):
        raise UsageError("expected linear or ge", parameter="method", value=method)
    together = as_frame(together, "together")
    pairs = pair_frame(task1, task2, inputs)
    if len(pairs) != len(together):
        raise InputError(f"{len(pairs)} solo experiments and {len(together)} co-allocated "
                         "ones: expected one row per experiment in each")
    features = list(pairs.columns)
    models: dict[str, Any] = {}
    for k, counter in enumerate(counters):
        target = numeric_column(together, counter, None)
        if method == "linear":
            model: Any = fit_linear(pairs, target, features=features, select="none")
            model = replace(model, target=counter)
        else:
            def report(stage: str, fraction: float, k: int = k, counter: str = counter
                       ) -> None:
                if progress is not None:
                    progress(f"{counter}: {stage}", (k + fraction) / len(counters))

            model = fit_ge(pairs, target, features=features, seed=seed + k, grammar=grammar,
                           progress=report, **ge_options)
            model = replace(model, target=counter)
        models[counter] = model
    return CoallocModel(method=method, counters=counters, inputs=inputs, models=models,
                        meta={"n_fit": len(pairs), "grammar": grammar if method == "ge" else
                              None})
