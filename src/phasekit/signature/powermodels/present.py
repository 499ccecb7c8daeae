"""How a power model's scores read (Salinas Hilburg 2020, section 4.2): the headline (its error
on the held-out rows against the training mean's), the scores on the training and test rows,
the server breakdown, and the notes (the model, what was left out); what the command line,
the report and a notebook show (:mod:`phasekit.present`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from phasekit.present import ZERO_RTOL, Presentation, View

__all__ = ["eval_presentation", "fit_method", "fit_presentation", "watts"]

SCORE_HEADERS = ("rows", "n", "RMSE (W)", "MAE (W)", "MPE")


def watts(value: float | None, unit: str = "", scale: float = 0.0) -> str:
    """Three significant digits (whole numbers from 1000), ``n/a`` when not a number, ``0``
    when zero to rounding against ``scale`` (the total of a breakdown)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if abs(value) >= 1000:
        return f"{value:.0f}{unit}"
    if math.isfinite(scale) and abs(value) <= ZERO_RTOL * abs(scale):
        return "0" + unit
    return f"{value:.3g}{unit}"


def fit_method(result: Any) -> str:
    """The kind of model fitted (linear, pls, ge, boosting, or ``average of GE and
    gradient boosting``): a server model's dynamic parts'."""
    model = getattr(result.model, "cpu", result.model)
    return str(getattr(model, "label", None) or model.to_dict()["model"])


def _scores(title: str, rows: list[tuple[str, int, dict[str, float]]]) -> View:
    return View(title, SCORE_HEADERS,
                tuple((name, str(n), watts(s.get("rmse")), watts(s.get("mae")),
                       watts(s.get("mpe"), "%")) for name, n, s in rows),
                numeric=(False, True, True, True, True))


def _table_name(name: str | None, source: str | None) -> str:
    return name or (Path(source).name if source else "the table")


def fit_headline(result: Any) -> str:
    """One line: the model, its error on the held-out rows (RMSE, MPE), against the training
    mean's."""
    kind = ("server model" if result.breakdown
            else "models" if getattr(result.model, "members", None) else "model")
    n = len(result.model.features)
    what = (f"{fit_method(result)} {kind} of {result.target} from {n} "
            f"counter{'s' if n != 1 else ''}")
    if not result.n_test:
        train = dict(result.train)
        return (f"{what}: {watts(train.get('rmse'))} W RMSE (MPE {watts(train.get('mpe'))} %) "
                f"on its {result.n_train} training rows (none held out)")
    test, mean = dict(result.test), dict(result.mean_baseline)
    line = (f"{what}: {watts(test.get('rmse'))} W RMSE (MPE {watts(test.get('mpe'))} %) on "
            f"{result.n_test} held-out rows, against {watts(mean.get('rmse'))} W for the "
            "training mean")
    if test.get("rmse", math.nan) > mean.get("rmse", math.nan):
        line += ": no better than the mean"
    return line


def fit_presentation(result: Any, name: str | None = None) -> Presentation:
    """A fit as a person reads it: the headline, the scores on the training and test rows and
    of the training mean (``name``: the table, in the title), the server breakdown, the notes."""
    from phasekit.signature.powermodels.features import describe_excluded

    if result.split == "time":
        split = "time-ordered split" + (f" (by {result.time_column})" if result.time_column
                                        else " (row order)")
    else:
        split = f"random split (seed {result.seed})"
    baseline = dict(result.mean_baseline)
    rows = [("train", result.n_train, dict(result.train)),
            ("test", result.n_test, dict(result.test))]
    if result.n_test:
        rows.append(("test, training mean", result.n_test, baseline))
    views = [_scores(f"Power model ({fit_method(result)}) of {result.target} in "
                     f"{_table_name(name, result.source)}, {split}", rows)]
    if result.breakdown:
        total = result.breakdown.get("total_w", math.nan)
        views.append(View("Server power breakdown (eq. 4.15), mean over the test rows",
                          ("component", "W", "share"),
                          tuple((component.removesuffix("_w"), watts(w, scale=total),
                                 watts(100 * w / total, "%", scale=100))
                                for component, w in result.breakdown.items()),
                          numeric=(False, True, True), wrap=(True, True, True)))
    notes = [f"model: {result.text}"]
    test_rmse = dict(result.test).get("rmse", math.nan)
    if result.n_test and test_rmse > baseline["rmse"]:
        notes.append(f"note: on the test rows the model is worse than the training mean "
                     f"({test_rmse:.3g} W against {baseline['rmse']:.3g} W RMSE): what the "
                     "features said of the target in the training rows does not hold in these")
    bounds = getattr(result.model, "bounds", None)
    if bounds is not None:
        margin = 100 * float(result.model.meta.get("margin", 0.1))
        notes.append(f"predictions limited to [{bounds[0]:.4g}, {bounds[1]:.4g}] W (the "
                     f"training range ± {margin:g} %); {result.model.meta.get('selected', '')}")
    if result.excluded:
        notes.append(f"left out of the features: {describe_excluded(result.excluded)}")
    if result.dropped_text:
        notes.append(result.dropped_text)
    notes.append(f"counters: {', '.join(result.model.features)}; fitted in "
                 f"{result.fit_time_s:.2f} s (seed {result.seed})")
    return Presentation(fit_headline(result), tuple(views), tuple(notes))


def eval_presentation(result: Any, name: str | None = None) -> Presentation:
    """A stored model scored on a table (``name``: the table, in the title)."""
    table = _table_name(name, result.source)
    scores = dict(result.scores)
    kind = "models" if str(result.method).startswith("average of ") else "model"
    headline = (f"{result.method} {kind} of {result.target}: {watts(scores.get('rmse'))} W RMSE "
                f"(MPE {watts(scores.get('mpe'))} %) on the {result.n} rows of {table}")
    return Presentation(
        headline,
        (_scores(f"Power model ({result.method}) of {result.target} on {table}",
                 [("all", result.n, scores)]),),
        (f"mean power: predicted {result.predicted_mean_w:.4g} W, measured "
         f"{result.measured_mean_w:.4g} W",))
