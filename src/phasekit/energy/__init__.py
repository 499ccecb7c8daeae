"""Energy of a program over frequency, cores and input (seed 002, chapter 4).

:mod:`~phasekit.energy.models` holds the seed's model E(f, p, N) = P(f, p) T(f, p, N) and our
extension; :mod:`~phasekit.energy.fit` fits them from a few measured configurations and
compares them with machine-learning baselines.
"""

from __future__ import annotations

from phasekit.energy.fit import (
    BASELINES,
    DESIGNS,
    EnergyFitResult,
    FittedModel,
    choose_training,
    configurations,
    fit_energy,
    fit_model,
    learning_curve,
    mpe,
    mse,
)
from phasekit.energy.models import MODELS, get_model, optimal_frequency

__all__ = [
    "BASELINES",
    "DESIGNS",
    "MODELS",
    "EnergyFitResult",
    "FittedModel",
    "choose_training",
    "configurations",
    "fit_energy",
    "fit_model",
    "get_model",
    "learning_curve",
    "mpe",
    "mse",
    "optimal_frequency",
]
