"""``pk.energy.fit``, ``pk.energy.choose``, ``pk.energy.suggest``: the verbs of ``phasekit
energy fit|choose|suggest`` (the Python front door)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike
from phasekit.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

    from phasekit.energy.choose import ChoiceResult
    from phasekit.energy.fit import EnergyFitResult
    from phasekit.energy.suggest import SuggestResult
    from phasekit.runs import Campaign

__all__ = ["as_configurations", "choose", "fit", "suggest"]


def as_configurations(data: Campaign | pd.DataFrame | PathLike) -> pd.DataFrame:
    """One row per configuration from a campaign, a table of runs, or their file (as
    ``phasekit energy fit TABLE`` reads it)."""
    import pandas as pd

    from phasekit.energy.fit import configurations
    from phasekit.runs import Campaign

    if isinstance(data, Campaign | pd.DataFrame):
        return configurations(data)
    from phasekit.io import is_csv, read_csv_table

    if is_csv(data):
        return configurations(read_csv_table(data), source=os.fspath(data))
    from phasekit.campaign import read_campaign

    return configurations(read_campaign(data), source=os.fspath(data))


def _source(data: Any) -> str | None:
    return os.fspath(data) if isinstance(data, str | os.PathLike) else None


def fit(data: Campaign | pd.DataFrame | PathLike, *, model: str = "extended",
        train: int | None = None, **options: Any) -> EnergyFitResult:
    """Fit the energy model E(f, p, N) (``phasekit energy fit``; Silva 2024):
    :func:`phasekit.energy.fit.fit_energy` on the configurations of ``data``.

    Parameters
    ----------
    data
        A campaign, a table of runs, or its file.
    model
        The energy model (:data:`phasekit.energy.MODELS`).
    train
        Fit on that many configurations, scored on the others (``n_train``).
    **options
        The other keywords of ``fit_energy`` (``design``, ``seed``, ``baselines``,
        ``input``, ``loss``, ...).
    """
    from phasekit.energy.fit import fit_energy

    try:
        return fit_energy(as_configurations(data), model=model, n_train=train, **options)
    except UsageError as exc:
        if exc.parameter == "n_train":
            raise exc.renamed("train") from None  # this function's keyword for it
        raise


def choose(data: Campaign | pd.DataFrame | PathLike, *,
           fit: EnergyFitResult | PathLike | None = None,
           inputs: Sequence[str | float] | str | float | None = None,
           frequencies: Sequence[float] | None = None,
           cores: Sequence[int] | None = None, max_time_s: float | None = None,
           max_cores: int | None = None, min_frequency_ghz: float | None = None,
           max_frequency_ghz: float | None = None, user_cores: int | None = None,
           model: str = "extended", train: int | None = None,
           design: str = "doptimal", seed: int = 0, uncertainty: bool = True,
           tolerance: float | None = None) -> ChoiceResult:
    """The minimum-energy configuration for each input (``phasekit energy choose``; Silva
    2024): :func:`phasekit.energy.workflow.fit_then_choose`, as the CLI runs it.

    Parameters
    ----------
    data
        The measured campaign (a campaign, a table of runs, or its file).
    fit
        An :class:`~phasekit.energy.fit.EnergyFitResult` or its JSON file; without it the
        model is fitted here (``model``, ``train``, ``design``, ``seed``).
    inputs
        Labels or numbers (default: every input of ``data``).
    frequencies, cores
        The grid to choose from (default: those of ``data``).
    max_time_s, max_cores, min_frequency_ghz, max_frequency_ghz, user_cores
        Limits on the choice and the user's own core count (the baseline of the savings).
    uncertainty, tolerance
        Say how sure each choice is (an ensemble of refits; ``tolerance`` percent of
        expected regret).
    """
    from phasekit.energy.choose import TOLERANCE
    from phasekit.energy.fit import load_fit
    from phasekit.energy.workflow import fit_then_choose

    return fit_then_choose(
        as_configurations(data), fit=None if fit is None else load_fit(fit), inputs=inputs,
        frequencies=frequencies, cores=cores, max_time_s=max_time_s, max_cores=max_cores,
        min_frequency_ghz=min_frequency_ghz, max_frequency_ghz=max_frequency_ghz,
        user_cores=user_cores, model=model, train=train, design=design, seed=seed,
        uncertainty=uncertainty, tolerance=TOLERANCE if tolerance is None else tolerance,
        source=_source(data)).result


def suggest(data: Campaign | pd.DataFrame | PathLike, *, k: int = 5,
            frequencies: Sequence[float] | None = None, cores: Sequence[int] | None = None,
            model: str = "extended", seed: int = 0, **limits: Any) -> SuggestResult:
    """The next configurations to measure (``phasekit energy suggest``; the active-learning
    loop on the energy model of Silva 2024): :func:`phasekit.energy.suggest.suggest` from
    every configuration measured in ``data``.

    Parameters
    ----------
    data
        A campaign, a table of runs, or its file.
    k
        How many configurations to suggest.
    frequencies, cores
        The grid to choose from (default: those of ``data``).
    **limits
        ``max_time_s``, ``max_cores``, ``min_frequency_ghz``, ``max_frequency_ghz``,
        ``tolerance``.
    """
    from phasekit.energy.suggest import suggest as run_suggest

    try:
        return run_suggest(as_configurations(data), k=k,
                           frequencies_ghz=tuple(frequencies or ()), cores=tuple(cores or ()),
                           model=model, seed=seed, **limits)
    except UsageError as exc:
        if exc.parameter == "frequencies_ghz":
            raise exc.renamed("frequencies") from None  # this function's keyword for it
        raise
