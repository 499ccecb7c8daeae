"""Energy of a program over frequency, cores and input (Silva 2024, chapter 4).

:mod:`~phasekit.energy.models` holds the published model E(f, p, N) = P(f, p) T(f, p, N) and our
extension; :mod:`~phasekit.energy.fit` fits them from a few measured configurations and
compares them with machine-learning baselines; :mod:`~phasekit.energy.choose` chooses the
minimum-energy configurations (with their regret and uncertainty) and
:mod:`~phasekit.energy.suggest` the configurations to measure next (their functions
``choose.choose`` and ``suggest.suggest`` are not re-exported here: the names are the
modules'). The options of ``pk.energy.fit``, ``choose`` and ``suggest`` are
:class:`FitOptions`, :class:`ChooseOptions` and :class:`SuggestOptions`
(:mod:`~phasekit.energy.options`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from phasekit.energy.choose import (
        ChoiceResult,
        Ensemble,
        Uncertainty,
        fit_ensemble,
        regret,
    )
    from phasekit.energy.columns import Configurations
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
    from phasekit.energy.options import ChooseOptions, FitOptions, SuggestOptions
    from phasekit.energy.suggest import Suggestion, SuggestResult

#: Each name exported here and its module, imported on first use: ``phasekit energy phasediv``
#: needs none of them, and they import pandas (0.2-0.3 s).
_EXPORTS = {
    **dict.fromkeys(("ChoiceResult", "Ensemble", "Uncertainty", "fit_ensemble", "regret"),
                    "choose"),
    **dict.fromkeys(("Configurations",), "columns"),
    **dict.fromkeys(("BASELINES", "DESIGNS", "EnergyFitResult", "FittedModel",
                     "choose_training", "configurations", "fit_energy", "fit_model",
                     "learning_curve", "mpe", "mse"), "fit"),
    **dict.fromkeys(("MODELS", "get_model", "optimal_frequency"), "models"),
    **dict.fromkeys(("ChooseOptions", "FitOptions", "SuggestOptions"), "options"),
    **dict.fromkeys(("Suggestion", "SuggestResult"), "suggest"),
}


#: The submodules, reachable as attributes before anything imported them
#: (``pk.energy.suggest(...)`` runs the verb, :mod:`phasekit.verbmodule`).
_SUBMODULES = frozenset(("choose", "columns", "efficiency", "fingerprint", "fit", "models",
                         "options",
                         "phasediv", "suggest", "table", "workflow"))


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    elif name in _SUBMODULES:
        value = import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | _SUBMODULES)


__all__ = [
    "BASELINES",
    "DESIGNS",
    "MODELS",
    "ChoiceResult",
    "ChooseOptions",
    "Configurations",
    "EnergyFitResult",
    "Ensemble",
    "FitOptions",
    "FittedModel",
    "SuggestOptions",
    "SuggestResult",
    "Suggestion",
    "Uncertainty",
    "choose_training",
    "configurations",
    "fit_energy",
    "fit_ensemble",
    "fit_model",
    "get_model",
    "learning_curve",
    "mpe",
    "mse",
    "optimal_frequency",
    "regret",
]
