"""Fit and evaluate a power model on a table: what ``phasekit powermodel`` runs
(:func:`fit_power_model` on held-out rows, the kind chosen by validation by default;
:func:`evaluate_power_model` of a stored model)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from phasekit.errors import InputError, PhasekitError, UsageError
from phasekit.options import Options, Rule
from phasekit.results import Result, check_version, plain, short_repr
from phasekit.signature.powermodels.average import AveragePowerModel
from phasekit.signature.powermodels.boosting import BoostedPowerModel
from phasekit.signature.powermodels.choice import (
    CANDIDATES,
    GE_DEFAULTS,
    choice_label,
    choice_line,
    choose_model,
    fit_kind,
)
from phasekit.signature.powermodels.features import (
    as_frame,
    candidate_features,
    counter_matrix,
    drop_missing,
    numeric_column,
    require_columns,
    screen_features,
)
from phasekit.signature.powermodels.ge import SETTINGS, GEPowerModel, setting_rules
from phasekit.signature.powermodels.linear import SELECTIONS
from phasekit.signature.powermodels.protocol import errors
from phasekit.signature.powermodels.server import (
    MODELS,
    power_model_from_dict,
)
from phasekit.signature.powermodels.split import SPLITS, split_rows, time_order

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation, View

__all__ = ["FIT_VERSION", "KINDS", "MODEL_FIELDS", "PowerModelEval", "PowerModelFit",
           "PowerModelOptions", "evaluate_power_model", "fit_power_model"]

#: 2: a fit says how its model was chosen (``choice``) and keeps the GE formula beside a
#: model of another kind (``formula``); a version 1 fit reads with neither.
FIT_VERSION = 2
EVAL_VERSION = 1

#: The model kinds :func:`fit_power_model` fits: "auto" (chosen by validation among
#: :data:`~phasekit.signature.powermodels.choice.CANDIDATES`), the thesis's "linear", "pls"
#: and "ge", and "boosting" (gradient-boosted trees).
KINDS = ("auto", *MODELS, "boosting")
#: What "auto" chooses from for a whole-server model: the classical fits (a GE server model
#: evolves two expressions, once for the choice and once more on every training row).
SERVER_CANDIDATES = ("linear", "pls")


def _score_bars(ax: Axes, table: pd.DataFrame, title: str) -> None:
    """RMSE and MAE (W) of each row of ``table`` (column ``rows``) as grouped bars, MPE (%)
    written above."""
    x = np.arange(len(table))
    ax.bar(x - 0.2, table["rmse"], 0.4, label="RMSE", color="tab:blue")
    ax.bar(x + 0.2, table["mae"], 0.4, label="MAE", color="tab:orange")
    for i, (top, mpe) in enumerate(zip(table[["rmse", "mae"]].max(axis=1), table["mpe"],
                                       strict=True)):
        if np.isfinite(top) and np.isfinite(mpe):
            ax.annotate(f"MPE {mpe:.3g} %", (i, top), ha="center", va="bottom",
                        fontsize="small")
    ax.set_xticks(x, labels=list(table["rows"]))
    ax.set_ylabel("error (W)")
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)


@dataclass(frozen=True)
class PowerModelFit(Result):
    """A model fitted on ``1 - test_fraction`` of the rows and scored on the rest: RMSE, MAE
    (W) and MPE (%) on the training and test rows. ``split`` "time": the test rows are the
    last ones in time (by ``time_column``, else in row order); "random": drawn at random.
    ``excluded``: the columns left out of the default features, with the reason;
    ``mean_baseline``: the scores of the training mean on the test rows; ``n_dropped``: the
    rows left out for a missing value in a column the model uses (``missing``: how many
    values each such column missed). ``choice`` (model "auto"): the candidates' validation
    RMSE, the one chosen and each one's scores on the test rows
    (:meth:`~phasekit.signature.powermodels.choice.ModelChoice.to_dict`; empty when the
    kind was given); ``formula``: the GE model beside a chosen model of another kind."""

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
    n_dropped: int = 0
    missing: Mapping[str, int] = field(default_factory=dict)
    choice: Mapping[str, Any] = field(default_factory=dict)
    formula: GEPowerModel | None = None

    KIND: ClassVar[str] = "power_model_fit"

    @property
    def choice_text(self) -> str | None:
        """One line: the model chosen by validation and why, or None when it was given."""
        return choice_line(self.choice) if self.choice else None

    @property
    def dropped_text(self) -> str | None:
        """One line on the rows left out for a missing value, or None when none was."""
        if not self.n_dropped:
            return None
        total = self.n_train + self.n_test + self.n_dropped
        where = ", ".join(f"{name}: {n}" for name, n in self.missing.items())
        return f"left out {self.n_dropped} of {total} rows with a missing value ({where})"

    @property
    def text(self) -> str:
        model = self.model
        return model.text if isinstance(model, GEPowerModel | BoostedPowerModel
                                        | AveragePowerModel) else \
            f"{self.target} = {model.expression}"

    def __repr__(self) -> str:
        return short_repr(
            self, type(self.model).__name__, self.target,
            f"{self.n_train} train/{self.n_test} test rows",
            ", ".join(f"test {k} {v:.4g}" for k, v in list(self.test.items())[:3]))

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
                      "source": self.source, "breakdown": dict(self.breakdown),
                      "n_dropped": self.n_dropped, "missing": dict(self.missing),
                      "choice": dict(self.choice) or None,
                      "formula": None if self.formula is None else self.formula.to_dict()})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> PowerModelFit:
        check_version(data, "power_model_fit", FIT_VERSION, source)

        def scores(d: Mapping[str, Any]) -> dict[str, float]:
            return {k: math.nan if v is None else float(v) for k, v in d.items()}

        try:
            formula = data.get("formula")
            return PowerModelFit(
                model=power_model_from_dict(data["model"], source), target=str(data["target"]),
                n_train=int(data["n_train"]), n_test=int(data["n_test"]),
                train=scores(data["train"]), test=scores(data["test"]), seed=int(data["seed"]),
                test_fraction=float(data["test_fraction"]),
                fit_time_s=float(data.get("fit_time_s") or math.nan),
                source=data.get("source"), breakdown=scores(data.get("breakdown") or {}),
                split=str(data.get("split", "random")), time_column=data.get("time_column"),
                excluded={str(k): str(v) for k, v in (data.get("excluded") or {}).items()},
                mean_baseline=scores(data.get("mean_baseline") or {}),
                n_dropped=int(data.get("n_dropped") or 0),
                missing={str(k): int(v) for k, v in (data.get("missing") or {}).items()},
                choice=_read_choice(data.get("choice")),
                formula=None if formula is None else GEPowerModel.from_dict(formula, source))
        except PhasekitError:  # a nested part's own message (an InputError is a ValueError)
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed power_model_fit result: {exc}", path=source) from None

    def summary(self) -> pd.DataFrame:
        """The scores ``phasekit powermodel fit`` prints: RMSE, MAE (W) and MPE (%) on the
        training rows, the test rows, and of the training mean on the test rows."""
        rows = [("train", self.n_train, self.train), ("test", self.n_test, self.test)]
        if self.mean_baseline:
            rows.append(("mean baseline (test)", self.n_test, self.mean_baseline))
        nan = float("nan")
        return pd.DataFrame([{"rows": name, "n": n, "rmse": s.get("rmse", nan),
                              "mae": s.get("mae", nan), "mpe": s.get("mpe", nan)}
                             for name, n, s in rows],
                            columns=["rows", "n", "rmse", "mae", "mpe"])

    def present(self, name: str | None = None) -> Presentation:
        """The headline (the error on the held-out rows against the training mean's), the
        scores (``name``: the table), the server breakdown and the notes
        (:mod:`phasekit.signature.powermodels.present`); with a model chosen by validation,
        the candidates' scores, the line saying why, and the GE formula when another kind
        won."""
        from dataclasses import replace

        from phasekit.signature.powermodels.present import fit_presentation

        shown = fit_presentation(self, name)
        if not self.choice:
            return shown
        notes = list(shown.notes)
        at = next((i + 1 for i, note in enumerate(notes) if note.startswith("model: ")), 0)
        if self.formula is not None and "ge" not in (self.choice.get("members") or ()):
            notes.insert(at, f"GE formula (not chosen): {self.formula.text}")
        notes.insert(0, str(self.choice_text))
        return replace(shown, views=(*shown.views, _choice_view(self.choice)),
                       notes=tuple(notes))

    def plot(self, ax: Axes | None = None) -> Figure:
        """The scores of :meth:`summary` as bars."""
        from phasekit.plot.energy import target_axes

        fig, ax = target_axes(ax)
        _score_bars(ax, self.summary(), f"{type(self.model).__name__} of {self.target} "
                    f"({self.split} split)")
        return fig


def _read_choice(data: Any) -> dict[str, Any]:
    """A saved fit's ``choice`` (None: the kind was given), numbers as floats (NaN for
    None)."""
    if not data:
        return {}

    def number(value: Any) -> float:
        return math.nan if value is None else float(value)

    return {"chosen": str(data["chosen"]),
            "validation_rmse": {str(k): number(v) for k, v in data["validation_rmse"].items()},
            "n_validation": int(data["n_validation"]), "n_fitted": int(data["n_fitted"]),
            "split": str(data["split"]),
            "failed": {str(k): str(v) for k, v in (data.get("failed") or {}).items()},
            "members": [str(m) for m in data.get("members") or ()],
            "test": {str(k): {str(m): number(v) for m, v in scores.items()}
                     for k, scores in (data.get("test") or {}).items()}}


def _choice_view(choice: Mapping[str, Any]) -> View:
    """The candidates of a choice by validation: validation RMSE (what chose) and test RMSE
    (what each would have scored), the chosen one marked."""
    from phasekit.present import View
    from phasekit.signature.powermodels.present import watts

    validation, test = dict(choice["validation_rmse"]), dict(choice.get("test") or {})
    split = ("the last training rows in time" if choice["split"] == "time"
             else "training rows drawn at random")
    rows = tuple((choice_label(choice, kind) + (" (chosen)" if kind == choice["chosen"] else ""),
                  watts(validation.get(kind)),
                  watts(dict(test.get(kind) or {}).get("rmse")))
                 for kind in sorted(validation, key=lambda k: (
                     not math.isfinite(validation[k]), validation[k])))
    return View(f"Model choice: RMSE on {choice['n_validation']} validation rows ({split}) "
                "and on the test rows", ("model", "validation RMSE (W)", "test RMSE (W)"),
                rows, numeric=(False, True, True))


#: The fields of :class:`PowerModelOptions` each model takes beyond ``model``, ``seed``,
#: ``test_fraction`` and ``split``: keywords of its fit
#: (:func:`~phasekit.signature.powermodels.fit_linear`,
#: :func:`~phasekit.signature.powermodels.fit_pls`,
#: :func:`~phasekit.signature.powermodels.fit_ge`); "auto" takes every candidate's, each
#: passed on to the candidates that take it; "boosting" takes none (scikit-learn's
#: defaults).
MODEL_FIELDS: dict[str, tuple[str, ...]] = {
    "linear": ("select", "max_features"),
    "pls": ("select", "max_features", "n_components", "folds"),
    "ge": SETTINGS,
    "boosting": (),
}
MODEL_FIELDS["auto"] = tuple(dict.fromkeys(name for kind in CANDIDATES
                                           for name in MODEL_FIELDS[kind]))


@dataclass(frozen=True)
class PowerModelOptions(Options):
    """The tuning parameters of :func:`fit_power_model`, declared and checked once:
    ``fit_power_model(table, options=PowerModelOptions(model="ge", generations=200))`` or,
    equally, ``fit_power_model(table, model="ge", generations=200)``.

    ``model`` (:data:`KINDS`): "auto" (our default: the one of linear, pls, ge and
    boosting with the lowest RMSE on a validation share of the training rows, or the average
    of those validation cannot tell apart,
    :func:`~phasekit.signature.powermodels.choice.choose_model`), "linear", "pls", "ge" or
    "boosting" (scikit-learn's gradient-boosted trees); ``seed``: of the random split, the
    evolution and the trees; ``test_fraction``: the share of the rows held out, the last in
    time (``split`` "time", our default) or a seeded random share ("random"); the choice
    of "auto" and grammatical evolution validate the same way.

    The other fields belong to one model's fit or two (:data:`MODEL_FIELDS`) and are None
    unless given, None being that fit's own default: ``select`` ("forward" for linear, the
    thesis's "pca" for pls) and ``max_features``
    (:func:`~phasekit.signature.powermodels.select_features`), ``n_components`` and
    ``folds`` (:func:`~phasekit.signature.powermodels.fit_pls`), and the settings of
    grammatical evolution (:data:`~phasekit.signature.powermodels.ge.SETTINGS`:
    ``grammar``, ``population``, ``generations``, ``restarts``, ...; the thesis's values
    and ours are in :func:`~phasekit.signature.powermodels.fit_ge`); "auto" takes them all
    and gives each candidate its own (its GE's ``grammar`` is "extended" unless given:
    :data:`~phasekit.signature.powermodels.choice.GE_DEFAULTS`). A value out of range, or
    a field given with a model that does not take it, is a
    :class:`~phasekit.errors.UsageError` naming the field.
    """

    model: str = "auto"
    seed: int = 0
    test_fraction: float = 0.3
    split: str = "time"
    select: str | None = None
    max_features: int | None = None
    n_components: int | None = None
    folds: int | None = None
    grammar: str | None = None
    population: int | None = None
    codons: int | None = None
    generations: int | None = None
    crossover: float | None = None
    mutation: float | None = None
    wraps: int | None = None
    tournament: int | None = None
    elite: int | None = None
    fit_samples: int | None = None
    iterations: int | None = None
    max_nodes: int | None = None
    restarts: int | None = None
    patience: int | None = None
    validation: float | None = None
    candidates: int | None = None
    margin: float | None = None

    def given(self) -> dict[str, Any]:
        """The model-specific fields given (not None), by name."""
        names = dict.fromkeys(name for taken in MODEL_FIELDS.values() for name in taken)
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}

    def fit_options(self) -> dict[str, Any]:
        """The keywords of the model's fit: its fields that were given."""
        return {name: value for name, value in self.given().items()
                if name in MODEL_FIELDS.get(self.model, ())}

    def rules(self) -> list[Rule]:
        """The constraints on the fields (:class:`phasekit.options.Options`)."""
        given = self.given()

        def taken_by(name: str) -> str:
            models = [repr(model) for model, names in MODEL_FIELDS.items() if name in names]
            either = ", ".join(models[:-1]) + " or " + models[-1] if len(models) > 1 \
                else models[0]
            return f"only model {either} takes it, not model {self.model!r}"

        return [
            ("model", self.model in KINDS, f"expected one of {', '.join(KINDS)}"),
            ("split", self.split in SPLITS, f"expected one of {', '.join(SPLITS)}"),
            ("test_fraction", 0 <= self.test_fraction < 1, "expected 0 <= fraction < 1"),
            ("select", self.select is None or self.select in SELECTIONS,
             f"expected one of {', '.join(SELECTIONS)}"),
            ("max_features", self.max_features is None or self.max_features >= 1,
             "expected at least 1"),
            ("n_components", self.n_components is None or self.n_components >= 1,
             "expected at least 1"),
            ("folds", self.folds is None or self.folds >= 2, "expected at least 2"),
            *setting_rules({name: value for name, value in given.items() if name in SETTINGS}),
            *((name, name in MODEL_FIELDS.get(self.model, ()), taken_by(name))
              for name in given),
        ]


def fit_power_model(table: pd.DataFrame, *, target: str = "power_w",
                    features: Sequence[str] | None = None, source: str | None = None,
                    progress: Callable[[str, float], None] | None = None,
                    server: Mapping[str, Any] | None = None,
                    options: PowerModelOptions | None = None,
                    **keywords: Any) -> PowerModelFit:
    """Fit a model of ``target`` on counters and score it on held-out rows: by default the
    kind of lowest validation RMSE on the training rows ("auto"), or the one given
    (:data:`KINDS`). ``options``: the tuning parameters as one :class:`PowerModelOptions`
    (``model``, ``seed``, ``test_fraction``, ``split`` and each model's own; defaults
    there), or the same as keywords (``model="ge", generations=200``), never both. Input
    errors name ``source`` (the file) and the column.

    ``split`` "time" (the default, our choice): the test rows are the last in time (by a
    time-like column, else the row order) — samples of a run are autocorrelated, and a random
    split puts the neighbours of every test sample in training, which overstates accuracy on
    new runs; "random": a seeded random share (for tables of independent experiments).
    ``features`` default: :func:`screen_features` (no time, power or energy columns, no
    constant or empty ones); what it left out is in the result's ``excluded``. A target or
    feature that is not a column is a UsageError. Rows missing a value (an empty cell) in the
    target or a feature are left out (the result's ``n_dropped`` and ``missing``); an
    InputError when too few rows are left. Grammatical evolution validates in the same way
    it is tested (the last training rows, or random ones) and tells ``progress(stage,
    fraction)`` how far it is.

    "auto" (:func:`~phasekit.signature.powermodels.choice.choose_model`): linear, pls, ge
    and boosting are fitted on the training rows but a validation share (the last 20 % in
    time, or a random 20 %, as the test rows are split off) and scored there; the lowest
    RMSE is the model, refitted on every training row, or the average of the candidates
    within one standard error of it (an :class:`~.average.AveragePowerModel`) when that
    validates lower. The result's ``choice`` keeps every
    candidate's validation and test scores and :attr:`PowerModelFit.choice_text` says why in
    one line; ``formula`` keeps the GE model when another kind won.

    ``server``: keyword arguments of :func:`fit_server` (``leakage`` and ``fan``
    coefficients at least): the whole-server model of eq. 4.15 instead, its two dynamic parts
    fitted with ``model`` (linear, pls or ge; "auto" chooses between linear and pls:
    :data:`SERVER_CANDIDATES`); the result holds the mean of each component on the test
    rows."""
    o = PowerModelOptions.of(options, keywords, verb="fit_power_model")
    model, seed, split, test_fraction = o.model, o.seed, o.split, o.test_fraction
    fit_options = o.fit_options()
    if server is not None and model == "boosting":
        raise UsageError("a server model's dynamic parts are linear, pls or ge (or auto: "
                         "linear or pls, the better on validation rows)", parameter="model",
                         value=model)
    if server is not None and model == "auto":
        for name, value in fit_options.items():
            if name in SETTINGS:
                raise UsageError("with a server model, auto chooses between linear and pls; "
                                 "give model 'ge' for grammatical evolution", parameter=name,
                                 value=value)
    table = as_frame(table, "table")
    if len(table) == 0:
        raise InputError("the table has no rows", path=source)
    excluded: dict[str, str] = {}
    server_columns: tuple[str, ...] = ()
    if server is not None:
        mem, temperature = server.get("mem", "mem_dyn_w"), server.get("temperature", "temp_c")
        rpm = server.get("rpm", "fan_rpm")
        server_columns = (mem, temperature, rpm)
        for column in server_columns:  # the server model's inputs: InputError naming one
            if column not in table.columns:
                numeric_column(table, column, source)
    require_columns(table, [target, *(features or ())], source)
    if server is not None:
        if features is not None:
            names = list(features)
        else:
            found, excluded = screen_features(table, target, exclude=server_columns)
            names = list(found)
    elif features is None:
        found, excluded = screen_features(table, target)
        if not found:
            candidate_features(table, None, target)  # the error, with what was left out
        names = list(found)
    else:
        names = list(candidate_features(table, features, target))
    n_rows = len(table)
    table, n_dropped, missing = drop_missing(table, [target, *names, *server_columns])
    left_out = (f" (after leaving out {n_dropped} of {n_rows} rows with a missing value in "
                f"{', '.join(missing)})" if n_dropped else "")
    if len(table) == 0:
        raise InputError(f"no row left{left_out}", path=source)
    values = numeric_column(table, target, source)
    for column in server_columns:
        numeric_column(table, column, source)
    counter_matrix(table, names, source)  # every error names the file, column and line
    order, time_column = time_order(table) if split == "time" else (None, None)
    train, test = split_rows(len(table), test_fraction, seed, split=split, order=order)
    minimum = 3 if model in ("ge", "boosting") else len(names) + 2
    if len(train) < minimum:
        raise InputError(f"{len(train)} training rows for {len(names)} counters{left_out}: "
                         "too few to fit (give more rows or a smaller test_fraction)",
                         path=source)
    started = time.perf_counter()
    fitted_table = table.iloc[train]
    if model == "ge":
        fit_options |= {"validation_split": split, "progress": progress}
    breakdown: dict[str, float] = {}
    choice: dict[str, Any] = {}
    formula = None
    if model == "auto":
        candidates = CANDIDATES if server is None else SERVER_CANDIDATES
        given = o.given()
        by_kind = {kind: {name: value for name, value in given.items()
                          if name in MODEL_FIELDS[kind]} for kind in candidates}
        if "ge" in by_kind:
            by_kind["ge"] = GE_DEFAULTS | by_kind["ge"] | {"validation_split": split}
        chosen = choose_model(fitted_table, target, names, seed=seed, split=split,
                              options=by_kind, server=server, candidates=candidates,
                              progress=progress)
        fitted = chosen.models[chosen.chosen]
        choice = chosen.to_dict({kind: errors(m.predict(table.iloc[test]), values[test])
                                 for kind, m in chosen.models.items()})
        if chosen.chosen != "ge" and isinstance(chosen.models.get("ge"), GEPowerModel):
            formula = chosen.models["ge"]
    else:
        fitted = fit_kind(model, fitted_table, target, names, seed, fit_options, server)
    if server is not None:
        parts = fitted.components(table.iloc[test if len(test) else train])
        breakdown = {str(k): float(v) for k, v in parts.mean().items()}
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
                                                                 values[test])},
                         n_dropped=n_dropped, missing=missing, choice=choice,
                         formula=formula)


@dataclass(frozen=True)
class PowerModelEval(Result):
    """A stored model scored on a table: RMSE, MAE (W), MPE (%)."""

    method: str
    target: str
    n: int
    scores: Mapping[str, float]
    predicted_mean_w: float
    measured_mean_w: float
    source: str | None = None

    KIND: ClassVar[str] = "power_model_eval"

    def __repr__(self) -> str:
        return short_repr(
            self, self.method, self.target, f"{self.n} rows",
            ", ".join(f"{k} {v:.4g}" for k, v in list(self.scores.items())[:3]))

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_model_eval", "version": EVAL_VERSION,
                      "method": self.method, "target": self.target, "n": self.n,
                      **dict(self.scores), "predicted_mean_w": self.predicted_mean_w,
                      "measured_mean_w": self.measured_mean_w, "source": self.source})

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str | None = None) -> PowerModelEval:
        check_version(data, cls.KIND, EVAL_VERSION, source)

        def num(value: Any) -> float:
            return math.nan if value is None else float(value)

        try:
            known = {"kind", "version", "method", "target", "n", "predicted_mean_w",
                     "measured_mean_w", "source"}
            return cls(method=str(data["method"]), target=str(data["target"]),
                       n=int(data["n"]),
                       scores={k: num(v) for k, v in data.items() if k not in known},
                       predicted_mean_w=num(data.get("predicted_mean_w")),
                       measured_mean_w=num(data.get("measured_mean_w")),
                       source=data.get("source"))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed power_model_eval result: {exc}", path=source) from None

    def summary(self) -> pd.DataFrame:
        """One row: the rows scored, RMSE, MAE (W), MPE (%) and the mean predicted and
        measured power (W)."""
        return pd.DataFrame([{"method": self.method, "target": self.target, "n": self.n,
                              **dict(self.scores), "predicted_mean_w": self.predicted_mean_w,
                              "measured_mean_w": self.measured_mean_w}])

    def present(self, name: str | None = None) -> Presentation:
        """The headline, the scores (``name``: the table) and the mean powers
        (:mod:`phasekit.signature.powermodels.present`)."""
        from phasekit.signature.powermodels.present import eval_presentation

        return eval_presentation(self, name)

    def plot(self, ax: Axes | None = None) -> Figure:
        """The scores as bars."""
        from phasekit.plot.energy import target_axes

        fig, ax = target_axes(ax)
        table = self.summary().assign(rows=f"{self.n} rows")
        _score_bars(ax, table, f"{self.method} model of {self.target} on "
                    f"{self.source or 'a table'}: measured mean {self.measured_mean_w:.4g} W, "
                    f"predicted {self.predicted_mean_w:.4g} W")
        return fig


def evaluate_power_model(model: Any, table: pd.DataFrame, *, target: str | None = None,
                         source: str | None = None) -> PowerModelEval:
    """Score ``model`` on ``table`` (the measured power in ``target``, default the model's)."""
    table = as_frame(table, "table")
    if len(table) == 0:
        raise InputError("the table has no rows", path=source)
    if target:
        require_columns(table, [target], source)  # named by the caller
    target = target or getattr(model, "target", "power_w")
    measured = numeric_column(table, target, source)
    for name in model.features:
        numeric_column(table, name, source)
    predicted = model.predict(table)
    return PowerModelEval(method=getattr(model, "label", None) or model.to_dict()["model"],
                          target=target, n=len(table),
                          scores=errors(predicted, measured),
                          predicted_mean_w=float(np.mean(predicted)),
                          measured_mean_w=float(np.mean(measured)), source=source)
