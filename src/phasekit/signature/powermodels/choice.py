"""``model="auto"``: the model kind chosen by validation on the training rows alone
(:func:`choose_model`). Not in the thesis.

Every candidate (:data:`CANDIDATES`: linear, PLS, grammatical evolution, gradient boosting)
is fitted on the training rows but a validation share (the last ones in time for a
time-ordered split, a seeded random share for a random one) and scored on that share; the
lowest RMSE wins, a tie going to the candidate listed first. The test rows take no part.
Every candidate is then refitted on all the training rows, so the result can say what each
would have scored on the test rows; grammatical evolution keeps the expression it found
and refits its constants (one evolution per fit), so its formula is the one validated.

When validation cannot tell the best candidates apart, their average is the model: the
candidates whose squared errors on the validation rows exceed the best one's by at most one
standard error of that excess (paired over the rows; the one-standard-error rule of Hastie,
Tibshirani and Friedman 2009, section 7.10) are averaged (Bates and Granger 1969), if the
average's validation RMSE is below the best one's (not for whole-server models, whose
breakdown into parts is one model's). On the shared Kepler RAPL table and the
synthetic tables (benchmarks/powermodels.py) this made the default no worse than gradient
boosting on every target and split, where the best candidate alone was worse on two."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from phasekit.errors import InputError
from phasekit.signature.powermodels.average import AveragePowerModel, average_label, kind_label
from phasekit.signature.powermodels.boosting import fit_boosting
from phasekit.signature.powermodels.features import counter_matrix, target_values
from phasekit.signature.powermodels.ge import GEPowerModel
from phasekit.signature.powermodels.kernels import evaluate_program, fit_constants
from phasekit.signature.powermodels.protocol import errors
from phasekit.signature.powermodels.server import fit_model, fit_server
from phasekit.signature.powermodels.split import validation_rows

__all__ = ["AVERAGE", "CANDIDATES", "GE_DEFAULTS", "VALIDATION_SHARE", "ModelChoice",
           "averaged_kinds", "choice_label", "choice_line", "choose_model", "fit_kind",
           "refit_ge_constants"]

#: The kinds ``model="auto"`` chooses from, in the order that breaks ties.
CANDIDATES = ("linear", "pls", "ge", "boosting")
#: The kind of model that averages candidates validation cannot tell apart.
AVERAGE = "average"
#: The share of the training rows that validates the candidates.
VALIDATION_SHARE = 0.2
#: The settings of the GE candidate where the caller gives none: the thesis's Grammar 1 with
#: a linear term (``grammar="extended"``), which had a lower test RMSE than Grammar 1 on the
#: Kepler RAPL table (both targets and splits) and no higher on the synthetic tables
#: (benchmarks/powermodels.py).
GE_DEFAULTS: dict[str, Any] = {"grammar": "extended"}
#: A candidate beats one listed before it only by more than this share of the RMSE plus the
#: validation target's spread: ties to rounding go to the simpler model.
TIE = 1e-6


@dataclass(frozen=True)
class ModelChoice:
    """The candidates' validation RMSE (W; inf when a candidate could not be fitted, with
    the reason in ``failed``), the one chosen, and every candidate refitted on all the
    training rows (``models``). ``n_validation`` rows validated (0: too few training rows,
    the first candidate that fits is taken), after fitting on ``n_fitted``. ``chosen``
    :data:`AVERAGE`: the average of the candidates ``members`` (module docstring), whose
    validation RMSE is ``validation["average"]``."""

    chosen: str
    validation: Mapping[str, float]
    n_validation: int
    n_fitted: int
    split: str
    models: Mapping[str, Any]
    failed: Mapping[str, str] = dataclasses.field(default_factory=dict)
    members: tuple[str, ...] = ()

    def to_dict(self, test: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
        """What a saved fit keeps: the choice, its validation and each candidate's ``test``
        scores."""
        return {"chosen": self.chosen, "validation_rmse": dict(self.validation),
                "n_validation": self.n_validation, "n_fitted": self.n_fitted,
                "split": self.split, "failed": dict(self.failed),
                "members": list(self.members),
                "test": {name: dict(scores) for name, scores in test.items()}}


def _watts(value: float) -> str:
    return f"{value:.3g} W" if math.isfinite(value) else "n/a"


def choice_label(choice: Mapping[str, Any], kind: str | None = None) -> str:
    """How ``kind`` (default: the chosen one) of ``choice`` (:meth:`ModelChoice.to_dict`)
    reads: ``GE``, or ``average of GE and gradient boosting``."""
    kind = str(choice["chosen"]) if kind is None else kind
    members = [str(m) for m in choice.get("members") or ()]
    return average_label(members) if kind == AVERAGE and members else kind_label(kind)


def choice_line(choice: Mapping[str, Any]) -> str:
    """One plain line: the model chosen and why (``choice``: :meth:`ModelChoice.to_dict`),
    e.g. "model chosen by validation: gradient boosting, RMSE 3.1 W on the last 230
    training rows in time, against GE 4.2 W, linear 5 W, PLS 5 W"."""
    chosen = str(choice["chosen"])
    validation = {str(k): float(v) for k, v in dict(choice["validation_rmse"]).items()}
    n = int(choice["n_validation"])
    label = choice_label(choice)
    if not n:
        return (f"model: {label}, not validated ({choice['n_fitted']} training rows are "
                "too few to hold some out)")
    rows = (f"the last {n} training rows in time" if choice["split"] == "time"
            else f"{n} training rows drawn at random")
    order = (*CANDIDATES, AVERAGE)
    others = sorted((name for name in validation if name != chosen),
                    key=lambda name: (validation[name], order.index(name)
                                      if name in order else len(order)))
    against = ", ".join(f"{choice_label(choice, name)} {_watts(validation[name])}"
                        for name in others)
    line = (f"model chosen by validation: {label}, RMSE {_watts(validation[chosen])} on "
            f"{rows}" + (f", against {against}" if against else ""))
    if chosen == AVERAGE:
        line += ("; averaged, because validation cannot tell them apart (their squared "
                 "errors differ by less than one standard error)")
    return line


def refit_ge_constants(model: GEPowerModel, X: pd.DataFrame, y: np.ndarray) -> GEPowerModel:
    """``model``'s expression with its constants, intercept and slope refitted on ``X``,
    ``y`` by Levenberg-Marquardt (kept when that is no better), its output bounds and
    fallback from ``y`` (the training range widened on both sides by the share of it the
    model was fitted with, its ``margin``, and the mean)."""
    margin = float(model.meta.get("margin", 0.1))
    low, high = float(np.min(y)), float(np.max(y))
    bounds = (low - margin * (high - low), high + margin * (high - low))
    mean = float(np.mean(y))
    meta = {**dict(model.meta), "refitted_rows": len(y)}
    if model.slope == 0.0 and model.expression == "0.0":  # GE's training-mean fallback
        return dataclasses.replace(model, intercept=mean, bounds=bounds, fallback_w=mean,
                                   rmse_train=float(np.sqrt(np.mean((y - mean) ** 2))),
                                   meta=meta)
    program = model.program
    scaled = np.ascontiguousarray(counter_matrix(X, model.features)
                                  / np.asarray(model.scales, float))
    with np.errstate(all="ignore"):
        before = model.intercept + model.slope * evaluate_program(
            program.ops, program.args, np.asarray(model.constants, float), scaled)
        rmse = float(np.sqrt(np.mean((before - y) ** 2)))
        params, cost = fit_constants(program.ops, program.args,
                                     np.asarray(model.constants, float).copy(), scaled, y, 100)
    intercept, slope, constants = model.intercept, model.slope, model.constants
    if math.isfinite(cost) and not math.sqrt(cost / len(y)) > rmse:
        intercept, slope = float(params[0]), float(params[1])
        constants = tuple(float(c) for c in params[2:])
        rmse = math.sqrt(cost / len(y))
    return dataclasses.replace(model, intercept=intercept, slope=slope, constants=constants,
                               rmse_train=rmse, bounds=bounds, fallback_w=mean, meta=meta)


def fit_kind(kind: str, table: pd.DataFrame, target: str, names: Sequence[str], seed: int,
             options: Mapping[str, Any], server: Mapping[str, Any] | None) -> Any:
    """A model of ``kind`` fitted on ``table`` with its ``options``; the whole server's
    (:func:`~phasekit.signature.powermodels.fit_server`) with ``server``."""
    if server is not None:
        return fit_server(table, total=target, model=kind, features=names, seed=seed,
                          **server, **options)
    if kind == "boosting":
        return fit_boosting(table, target, features=names, seed=seed)
    return fit_model(kind, table, target, names, seed, options)


def choose_model(table: pd.DataFrame, target: str, names: Sequence[str], *, seed: int,
                 split: str, options: Mapping[str, Mapping[str, Any]],
                 server: Mapping[str, Any] | None = None,
                 candidates: Sequence[str] = CANDIDATES,
                 progress: Callable[[str, float], None] | None = None) -> ModelChoice:
    """The model kind of lowest validation RMSE among ``candidates``, each fitted on
    ``table`` (the training rows, in time order for ``split`` "time") but the
    :data:`VALIDATION_SHARE` held out, with its own ``options[kind]`` (keywords of its fit);
    then every candidate refitted on all of ``table``. ``server``: keywords of
    :func:`~phasekit.signature.powermodels.fit_server` (whole-server models, each
    candidate fitting its dynamic parts, a GE one refitted whole). An InputError when no
    candidate can be fitted."""
    values = target_values(table, target)
    fitted_rows, check_rows = validation_rows(len(table), VALIDATION_SHARE, split,
                                              np.random.default_rng([seed, 23]))
    fitted_part, check_part = table.iloc[fitted_rows], table.iloc[check_rows]
    validation: dict[str, float] = {}
    failed: dict[str, str] = {}
    refused: list[InputError] = []
    trial: dict[str, Any] = {}
    checked: dict[str, np.ndarray] = {}
    for kind in candidates:
        kind_options = dict(options.get(kind, {}))
        if kind == "ge" and progress is not None:
            kind_options["progress"] = progress
        try:
            model = fit_kind(kind, fitted_part, target, names, seed, kind_options, server)
        except InputError as exc:
            failed[kind] = str(exc)
            refused.append(exc)
            validation[kind] = math.inf
            continue
        trial[kind] = model
        validation[kind] = math.nan
        if len(check_rows):
            checked[kind] = np.asarray(model.predict(check_part), float)
            validation[kind] = errors(checked[kind], values[check_rows])["rmse"]
    if not trial:
        raise refused[0]
    chosen = next(iter(trial))
    if len(check_rows):
        spread = float(np.std(values[check_rows]))
        for kind in trial:
            if validation[kind] < validation[chosen] - TIE * (validation[chosen] + spread):
                chosen = kind
    members = averaged_kinds(checked, values[check_rows], chosen) if server is None else ()
    if members:
        validation[AVERAGE] = errors(np.mean([checked[k] for k in members], axis=0),
                                     values[check_rows])["rmse"]
        if not validation[AVERAGE] < validation[chosen]:
            members = ()
            del validation[AVERAGE]
    models: dict[str, Any] = {}
    for kind, model in trial.items():
        if not len(check_rows):
            models[kind] = model
        elif kind == "ge" and server is None:
            models[kind] = refit_ge_constants(model, table, values)
        else:
            models[kind] = fit_kind(kind, table, target, names, seed, dict(options.get(kind, {})),
                                server)
    if members:
        chosen = AVERAGE
        models[AVERAGE] = AveragePowerModel.of([models[k] for k in members])
    return ModelChoice(chosen=chosen, validation=validation, n_validation=len(check_rows),
                       n_fitted=len(fitted_rows), split=split, models=models, failed=failed,
                       members=members)


def averaged_kinds(predicted: Mapping[str, np.ndarray], measured: np.ndarray,
                   best: str) -> tuple[str, ...]:
    """The candidates validation cannot tell from ``best``: those whose squared errors on
    the validation rows (``predicted`` against ``measured``) exceed ``best``'s by at most one
    standard error of the mean excess, paired over the rows (module docstring); empty
    when only ``best`` is, or with fewer than two rows."""
    if measured.size < 2:
        return ()
    own = (predicted[best] - measured) ** 2

    def indistinguishable(values: np.ndarray) -> bool:
        excess = (values - measured) ** 2 - own
        return bool(np.all(np.isfinite(excess))
                    and excess.mean() <= excess.std(ddof=1) / math.sqrt(excess.size))

    members = tuple(kind for kind, values in predicted.items()
                    if kind == best or indistinguishable(values))
    return members if len(members) > 1 else ()
