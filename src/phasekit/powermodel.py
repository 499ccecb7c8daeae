"""``pk.powermodel``: the verbs of ``phasekit powermodel`` (the Python front door)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from phasekit.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import pandas as pd

    from phasekit.signature.powermodels.fit import (
        PowerModelEval,
        PowerModelFit,
        PowerModelOptions,
    )

__all__ = ["evaluate", "fit", "fit_polynomial", "read_model"]


def fit(table: pd.DataFrame | str | os.PathLike[str], *, target: str = "power_w",
        features: Sequence[str] | None = None, server: Mapping[str, Any] | None = None,
        source: str | None = None, progress: Callable[[str, float], None] | None = None,
        options: PowerModelOptions | None = None, **keywords: Any) -> PowerModelFit:
    """Fit a power model of ``target`` on counters and score it on held-out rows
    (``phasekit powermodel fit``; Salinas Hilburg 2020, chapter 3):
    :func:`phasekit.signature.powermodels.fit_power_model`. By default (``model="auto"``)
    linear, PLS, grammatical evolution and gradient boosting are each fitted on the training
    rows but a validation share and the one of lowest RMSE there is the model (or the
    average of those within one standard error of it, when that validates lower); the
    result's ``choice_text`` says which and why, and ``formula`` keeps GE's expression when
    another kind won.

    Parameters
    ----------
    table
        A DataFrame of counters and measured power, one row per sample, or its CSV file.
    target
        The measured power column.
    features
        The counter columns (default: the numeric columns but time, power and energy
        readings, and empty or constant ones).
    server
        Keywords of :func:`phasekit.signature.powermodels.fit_server` (``leakage`` and
        ``fan`` coefficients at least): the whole-server model of eq. 4.15 instead.
    source
        The table's name in messages and in the result (default: its file).
    progress
        ``progress(stage, fraction)``, told how far grammatical evolution is.
    options
        The tuning parameters as one
        :class:`~phasekit.signature.powermodels.PowerModelOptions`, or none of them.
    **keywords
        The same parameters as keywords (never with ``options``): the fields of
        :class:`~phasekit.signature.powermodels.PowerModelOptions` (``model`` "auto",
        "linear", "pls", "ge" or "boosting", ``seed``, ``test_fraction``, ``split``, and
        each model's own, e.g. ``generations`` for "ge" and "auto").

    Returns
    -------
    PowerModelFit
        The model and its scores (RMSE, MAE, MPE) on the training and held-out rows;
        ``save`` writes what :func:`read_model` and :func:`evaluate` read.
    """
    from phasekit.signature.powermodels import fit_power_model

    table, read_from = _table(table)
    return fit_power_model(table, target=target, features=features, server=server,
                           source=source or read_from, progress=progress, options=options,
                           **keywords)


def _table(table: pd.DataFrame | str | os.PathLike[str]) -> tuple[pd.DataFrame, str | None]:
    """The DataFrame, or the rows of its CSV file and the file's name (InputError without
    rows)."""
    import pandas as pd

    if isinstance(table, pd.DataFrame):
        return table, None
    from phasekit.io import read_csv_table

    source = os.fspath(table)
    frame = read_csv_table(table)
    if len(frame) == 0:
        raise InputError("the table has no rows", path=source)
    return frame, source


def read_model(path: str | os.PathLike[str]) -> Any:
    """The power model in a JSON file: a stored model or a saved power-model fit (its
    model), gradient boosting included; InputError naming the file otherwise
    (:func:`phasekit.signature.powermodels.server.read_power_model`).

    Parameters
    ----------
    path
        The JSON file (``phasekit powermodel fit -o``).
    """
    from phasekit.signature.powermodels.server import read_power_model

    return read_power_model(path)


def evaluate(model: Any, table: pd.DataFrame | str | os.PathLike[str], *,
             target: str | None = None, source: str | None = None) -> PowerModelEval:
    """Score a stored power model on another table: RMSE, MAE (W) and MPE (%)
    (``phasekit powermodel eval``): :func:`phasekit.signature.powermodels.evaluate_power_model`.

    Parameters
    ----------
    model
        A power model, its JSON file (:func:`read_model`), or a power-model fit (its model).
    table
        A DataFrame with the model's counter columns and the measured power, or its CSV file.
    target
        The measured power column (default: the model's target).
    source
        The table's name in messages and in the result (default: its file).
    """
    from phasekit.signature.powermodels import evaluate_power_model

    if isinstance(model, str | os.PathLike):
        model = read_model(model)
    model = getattr(model, "model", model)
    table, read_from = _table(table)
    return evaluate_power_model(model, table, target=target, source=source or read_from)


def fit_polynomial(x: Sequence[float], y: Sequence[float], degree: int) -> tuple[float, ...]:
    """Least-squares polynomial coefficients of ``y`` on ``x`` in ascending order (c0, c1,
    ...), in raw units: the leakage (eq. 4.16, degree 2) and fan (eq. 4.17, degree 3)
    curves of the whole-server model (``fit(..., server=...)``)
    (:func:`phasekit.signature.powermodels.fit_polynomial`).

    Parameters
    ----------
    x, y
        The measured points (1-D, the same length, finite).
    degree
        The polynomial's degree; more distinct ``x`` values are needed.
    """
    from phasekit.signature.powermodels import fit_polynomial as fit_coefficients

    return fit_coefficients(x, y, degree)
