"""Fit then choose (Silva 2024, 4.12): from the configurations of a campaign to the
minimum-energy configuration of each input, in one call (``phasekit energy choose`` and
``pk.energy.choose``).

:func:`fit_then_choose` fits the energy model on the campaign (or takes a fit), refits it
into an ensemble for how sure each choice is (the CLI's ``--uncertainty``), and chooses over
the grid of settings. It returns a :class:`ChoiceRun`: the
:class:`~phasekit.energy.choose.ChoiceResult` and what the caller may want next (the
configurations to measure where a choice is unsure, notes on what could not be done). Files
are read by the caller (:func:`phasekit.energy.fit.configurations` of a campaign or table).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.arguments import callers_names
from phasekit.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

    from phasekit.energy.choose import Choice, ChoiceResult, Ensemble
    from phasekit.energy.fit import Configurations, EnergyFitResult
    from phasekit.energy.options import ChooseOptions
    from phasekit.energy.suggest import Suggestion

__all__ = ["SUGGESTIONS", "ChoiceRun", "fit_then_choose"]

#: Configurations :meth:`ChoiceRun.suggestions` proposes by default (the CLI's).
SUGGESTIONS = 3
Progress = Callable[[str, float], None]


@dataclass(frozen=True, eq=False)
class ChoiceRun:
    """What :func:`fit_then_choose` made: the ``result``; the ``fitted`` model; the
    ``ensemble`` of refits (None without uncertainty); the fit's ``training`` rows of the
    campaign and those ``trusted`` for the regret (None when the campaign does not hold them);
    ``notes`` on what could not be done (``no uncertainty: ...``)."""

    result: ChoiceResult
    fitted: EnergyFitResult
    ensemble: Ensemble | None
    training: Configurations | None
    trusted: Configurations | None
    notes: tuple[str, ...]
    tolerance: float

    def __repr__(self) -> str:
        return (f"ChoiceRun({self.result!r}, {len(self.unsure)} unsure"
                + (f", {len(self.notes)} notes" if self.notes else "") + ")")

    @property
    def unsure(self) -> tuple[Choice, ...]:
        """The choices whose expected regret under the refits exceeds the tolerance."""
        return tuple(c for c in self.result.choices
                     if c.uncertainty is not None and not c.uncertainty.sure)

    def suggestions(self, k: int = SUGGESTIONS) -> tuple[Suggestion, ...]:
        """The ``k`` configurations to measure next (``phasekit energy suggest``) when a
        choice is unsure; none when every choice is sure or there is no ensemble."""
        from phasekit.energy.suggest import next_configurations

        if self.ensemble is None or self.training is None or not self.unsure:
            return ()
        found, _ = next_configurations(self.ensemble, self.result, self.training,
                                       trusted=self.trusted, k=k, tolerance=self.tolerance)
        return tuple(found)


def untimed(configs: Configurations | pd.DataFrame, fit: EnergyFitResult | None = None,
            train: int | None = None, name: str = "the campaign") -> str | None:
    """Why the model of ``configs`` (or the given ``fit``) will predict no run time, so that
    a time limit means nothing; None when it will. A fit on ``train`` configurations has time
    when any was timed, a fit on all of them when every one was (``fit_energy``)."""
    if fit is not None:
        return None if fit.with_time else "the fit was made on energy alone"
    import numpy as np

    timed = (np.isfinite(np.asarray(configs["time_s"], float)) if "time_s" in configs
             else np.zeros(1, bool))
    measured = bool(timed.any())
    if measured if train is not None else bool(timed.all()):
        return None
    if not measured:
        return f"{name} measured energy but no run time"
    return (f"{name} lacks the run time of some configurations, so the model is fitted on "
            "energy alone")


def fit_then_choose(configs: Configurations | pd.DataFrame, *, fit: EnergyFitResult | None = None,
                    inputs: Sequence[str | float] | str | float | None = None,
                    source: str | Path | None = None, progress: Progress | None = None,
                    options: ChooseOptions | None = None, **keywords: Any) -> ChoiceRun:
    """The minimum-energy configuration for each input of a measured campaign.

    ``configs``: one row per configuration (:func:`phasekit.energy.fit.configurations`).
    ``fit``: a saved fit to use; without it the model is fitted here on the configurations
    of ``configs``. ``inputs``: labels or input numbers (default: every input of
    ``configs``). ``options``: the model, the grid, the limits and the uncertainty as one
    :class:`~phasekit.energy.options.ChooseOptions`, or the same as keywords, never both
    (checked before anything else). ``source``: the campaign's file, named in errors of the
    fit and in notes. What needs the campaign (the grid and limits against its settings, a
    time limit without times) is checked before the fit too.
    """
    from phasekit.energy.fit import one_blas_thread

    with one_blas_thread():  # small dense problems: BLAS threads only wait on a busy machine
        return _fit_then_choose(configs, fit=fit, inputs=inputs, source=source,
                                progress=progress, options=options, **keywords)


def _fit_then_choose(configs: Configurations | pd.DataFrame, *,
                     fit: EnergyFitResult | None = None,
                     inputs: Sequence[str | float] | str | float | None = None,
                     source: str | Path | None = None, progress: Progress | None = None,
                     options: ChooseOptions | None = None, **keywords: Any) -> ChoiceRun:
    import numpy as np

    from phasekit.energy.choose import check_grid, choose, fit_ensemble
    from phasekit.energy.fit import (
        Configurations,
        configuration_grid,
        fit_energy,
        input_numbers,
        without_failed_runs,
    )
    from phasekit.energy.noise import (
        ReadingNoise,
        denoised_energy,
        denoised_error,
        reading_noise,
        smooth_across_cores,
    )
    from phasekit.energy.options import ChooseOptions
    from phasekit.energy.suggest import at_points, training_rows, trusted_rows

    o = ChooseOptions.of(options, keywords, verb="fit_then_choose")
    configs = Configurations.of(configs)
    controlled = bool(np.isfinite(np.asarray(configs["frequency_ghz"], float)).any())
    if o.frequencies is not None and not controlled:
        raise UsageError("the campaign did not control the frequency, so the model cannot "
                         "predict other frequencies", parameter="frequencies")
    if o.frequencies is not None and fit is not None and not fit.frequency_controlled:
        raise UsageError("the fit did not control the frequency, so the model cannot "
                         "predict other frequencies", parameter="frequencies")
    name = Path(source).name if source is not None else "the campaign"
    if o.max_time_s is not None and (why := untimed(configs, fit, o.train, name)) is not None:
        raise UsageError(f"{why}; there is no time to limit", parameter="max_time_s",
                         value=o.max_time_s, option="--max-time")
    numbers, labels = input_numbers(configs, inputs)
    default_f, default_p = configuration_grid(configs)
    grid_f = o.frequencies if o.frequencies is not None else default_f
    grid_p = o.cores if o.cores is not None else default_p
    with callers_names({"frequencies_ghz": "frequencies"}):
        check_grid(grid_f, grid_p, max_cores=o.max_cores, min_frequency_ghz=o.min_frequency_ghz,
                   max_frequency_ghz=o.max_frequency_ghz, user_cores=o.user_cores,
                   frequency_controlled=controlled if fit is None else fit.frequency_controlled)
    report = progress or (lambda stage, fraction: None)
    given = fit is not None
    if fit is None:
        report(f"fitting the {o.model} model", 0.0)
        with callers_names({"n_train": "train"}, source):
            fit = fit_energy(configs, model=o.model, n_train=o.train, design=o.design,
                             seed=o.seed, baselines=(), compare=False)
    # a fit made here measured the noise of these very readings; a saved one, of its own
    noise = (ReadingNoise.from_dict(fit.noise) if not given and fit.noise is not None
             else reading_noise(configs))
    notes: list[str] = []
    training = training_rows(configs, fit)
    trusted = trusted_rows(training, fit)
    # a saved fit: every configuration of the campaign is a reading the user has, whether
    # the fit trained on it or not, and no choice should be worse than one of them
    measured = trusted
    if given:
        measured = configs.select(~at_points(configs, fit.suspect))
    # judged on every reading of the campaign but the probable failed runs, as `choose` does
    noise = replace(noise, across_cores=smooth_across_cores(without_failed_runs(fit.fitted,
                                                                                configs)))
    # where the readings' noise is known, a configuration whose grid neighbours were all
    # measured counts as the higher of its reading and its neighbourhood's (denoised)
    # energy: the lowest of many noisy readings is not chosen for its luck, nor a
    # configuration whose own reading is high among low neighbours. With a neighbour
    # missing, the median of the few measured follows the slope more than the noise, and the
    # reading stands (benchmarks/energy_choose.py: fitted on every configuration of a
    # campaign, the mean denoised regret fell from 5.7 % to 0.6 %)
    denoised = np.zeros(0)
    if noise.known and measured is not None:
        denoised = denoised_energy(measured, surrounded=True, across_cores=noise.across_cores)
        measured = Configurations({**measured.columns,
                                   "energy_j": np.fmax(measured["energy_j"], denoised)})
    # a reading's error; a denoised energy's where most readings counted are those
    reading_error = float("nan")
    if noise.known:
        mostly = np.isfinite(denoised).sum() > denoised.size / 2
        reading_error = noise.relative * (denoised_error(noise.across_cores) if mostly else 1.0)
    ensemble = None
    if o.uncertainty:
        if trusted is None:
            notes.append(f"no uncertainty: the fit's training configurations are not all "
                         f"in {name}")
        else:  # the refits see the readings the fit kept, not its probable failed runs
            try:
                ensemble = fit_ensemble(
                    trusted["frequency_ghz"], trusted["cores"],
                    trusted["input"], trusted["energy_j"],
                    trusted["time_s"] if fit.with_time else None, model=fit.model,
                    seed=o.seed, fitted=fit.fitted,
                    progress=lambda stage, x: report(stage, 0.3 + 0.7 * x))
            except UsageError as exc:  # too few training configurations
                notes.append(f"no uncertainty: {exc}")
    result = choose(fit.fitted, numbers, frequencies_ghz=grid_f, cores=grid_p,
                    max_time_s=o.max_time_s, max_cores=o.max_cores,
                    min_frequency_ghz=o.min_frequency_ghz,
                    max_frequency_ghz=o.max_frequency_ghz, user_cores=o.user_cores,
                    measured=configs, labels=labels,
                    frequency_controlled=fit.frequency_controlled,
                    known_inputs=tuple(sorted({n for _, _, n in fit.train})),
                    ensemble=ensemble, tolerance=o.tolerance, trusted=measured,
                    failed_runs=fit.suspect, noise=noise.threshold(),
                    across_cores=noise.across_cores,
                    reading_error=reading_error)
    result = replace(result, noise=noise.to_dict(), notes=tuple(notes),
                     model_selected=fit.model_selected)
    run = ChoiceRun(result=result, fitted=fit, ensemble=ensemble,
                    training=training, trusted=trusted, notes=tuple(notes),
                    tolerance=o.tolerance)
    return replace(run, result=replace(run.result, suggestions=run.suggestions()))
