"""``pk.energy.fit``, ``pk.energy.choose``, ``pk.energy.suggest``: the verbs of ``phasekit
energy fit|choose|suggest`` (the Python front door), and what the other ``phasekit energy``
commands and ``phasekit fingerprint`` call: the views of ``energy plot``, the phase division
of ``energy phasediv``, the fingerprints, and the figures of these results."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike, callers_names
from phasekit.energy.efficiency import NO_TIME_NOTE
from phasekit.errors import InputError, PhasekitError, UsageError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from phasekit.energy.choose import ChoiceResult
    from phasekit.energy.efficiency import ConfigurationTable, EfficiencyTable, RunColumns
    from phasekit.energy.fingerprint import FingerprintResult
    from phasekit.energy.fit import Configurations, EnergyFitResult
    from phasekit.energy.options import ChooseOptions, FitOptions, SuggestOptions
    from phasekit.energy.phasediv import PhaseDivision, PowerProfiles
    from phasekit.energy.suggest import SuggestResult
    from phasekit.present import Presentation
    from phasekit.profile import Profile
    from phasekit.runs import Campaign

__all__ = ["HEATMAP_MODES", "NO_TIME_NOTE", "VIEW_KINDS", "as_configuration_columns",
           "as_configurations", "baselines",
           "campaign_notes", "campaign_presentation", "campaign_runs", "campaign_views",
           "check_campaign_view", "check_fingerprint", "check_phasediv", "choose",
           "choose_configurations", "fingerprint", "fit", "phasediv", "plot_campaign",
           "plot_choice", "plot_fingerprints", "plot_phase_division", "profile_files",
           "read_power_profiles", "read_runs", "suggest", "suggest_configurations"]

Progress = Callable[[str, float], None]


def as_configurations(data: Campaign | pd.DataFrame | PathLike) -> pd.DataFrame:
    """One row per configuration from a campaign, a table of runs, or their file (as
    ``phasekit energy fit TABLE`` reads it).

    Parameters
    ----------
    data
        A :class:`~phasekit.runs.Campaign`, a DataFrame of runs (columns as
        :meth:`Campaign.table`), or a campaign or table file (our JSON or JSON lines, PaScal
        Analyzer JSON, ``.csv``/``.tsv``).

    Returns
    -------
    pandas.DataFrame
        ``frequency_ghz``, ``cores``, ``input`` (N), ``energy_j`` and ``time_s`` (the means
        over the configuration's successful runs), ``runs`` (how many) and ``input_label``
        (the input as the campaign names it); an InputError naming the file and column when
        a required column is missing or no run has a positive energy.
    """
    return as_configuration_columns(data).to_frame()


def as_configuration_columns(data: Campaign | pd.DataFrame | PathLike) -> Configurations:
    """:func:`as_configurations` as NumPy columns (what the energy verbs work on): a CSV
    file is read without pandas (0.25 s to import).

    Returns
    -------
    phasekit.energy.columns.Configurations
        The same columns as :func:`as_configurations`; ``.to_frame()`` is its DataFrame.
    """
    from phasekit.energy.fit import configuration_columns

    if isinstance(data, str | os.PathLike):
        from phasekit.io import is_csv

        if is_csv(data):
            from phasekit.io.table import read_csv_columns

            return configuration_columns(read_csv_columns(data), source=os.fspath(data))
        from phasekit.campaign import read_campaign

        return configuration_columns(read_campaign(data), source=os.fspath(data))
    return configuration_columns(data)


def read_runs(path: PathLike, *, columns: bool = False
              ) -> Campaign | pd.DataFrame | dict[str, np.ndarray]:
    """The runs of a campaign file as read for the energy commands: a campaign (our JSON or
    JSON lines, PaScal Analyzer JSON) or, for a ``.csv``/``.tsv`` (optionally ``.gz``), its
    tidy table (columns as :meth:`Campaign.table`).

    Parameters
    ----------
    path
        The campaign or table file.
    columns
        Read a table as NumPy columns (a dict) rather than a DataFrame: without pandas
        (0.25 s to import), as ``phasekit energy plot`` does.
    """
    from phasekit.io import is_csv

    if is_csv(path):
        from phasekit.io.table import read_csv_columns, read_csv_table

        return read_csv_columns(path) if columns else read_csv_table(path)
    from phasekit.campaign import read_campaign

    return read_campaign(path)


def baselines() -> tuple[str, ...]:
    """The machine-learning baselines :func:`fit` can score beside the model (its
    ``baselines`` keyword; the thesis's SVR, MLP, KNN and decision tree).

    Returns
    -------
    tuple of str
        Their names.
    """
    from phasekit.energy.fit import BASELINES

    return tuple(BASELINES)


def _source(data: Any) -> str | None:
    return os.fspath(data) if isinstance(data, str | os.PathLike) else None


def fit(data: Campaign | pd.DataFrame | PathLike, *, input: float | str | None = None,
        progress: Progress | None = None, options: FitOptions | None = None,
        **keywords: Any) -> EnergyFitResult:
    """Fit the energy model E(f, p, N) (``phasekit energy fit``; Silva 2024):
    :func:`phasekit.energy.fit.fit_energy` on the configurations of ``data``.

    Parameters
    ----------
    data
        A campaign, a table of runs, or its file.
    input
        Fit this input alone (its label or number; the input-fixed mode).
    progress
        Called as ``progress(stage, fraction)`` as the work advances.
    options
        The tuning parameters as one :class:`~phasekit.energy.FitOptions`.
    **keywords
        Or the same as keywords, never both: the fields of
        :class:`~phasekit.energy.FitOptions` (``model``, ``train``, ``design``, ``seed``,
        ``baselines``, ``loss``, ...).
    """
    from phasekit.energy.fit import fit_energy
    from phasekit.energy.options import FitOptions

    o = FitOptions.of(options, keywords, verb="fit")
    with callers_names({"n_train": "train"}):
        return fit_energy(as_configuration_columns(data), model=o.model, n_train=o.train,
                          design=o.design, seed=o.seed, baselines=o.baselines,
                          compare=o.compare, starts=o.starts, use_time=o.use_time,
                          input=input, loss=o.loss, progress=progress)


def choose(data: Campaign | pd.DataFrame | PathLike, *,
           fit: EnergyFitResult | PathLike | None = None,
           inputs: Sequence[str | float] | str | float | None = None,
           progress: Progress | None = None, options: ChooseOptions | None = None,
           **keywords: Any) -> ChoiceResult:
    """The minimum-energy configuration for each input (``phasekit energy choose``; Silva
    2024): :func:`choose_configurations` on the configurations of ``data``.

    Parameters
    ----------
    data
        The measured campaign (a campaign, a table of runs, or its file).
    fit
        An :class:`~phasekit.energy.fit.EnergyFitResult` or its JSON file; without it the
        model is fitted here (``model``, ``train``, ``design``, ``seed``).
    inputs
        Labels or numbers (default: every input of ``data``).
    progress
        Called as ``progress(stage, fraction)`` as the work advances.
    options
        The tuning parameters as one :class:`~phasekit.energy.ChooseOptions`.
    **keywords
        Or the same as keywords, never both: the fields of
        :class:`~phasekit.energy.ChooseOptions` (the model fitted, the grid
        ``frequencies`` x ``cores``, the limits ``max_time_s``, ``max_cores``,
        ``min_frequency_ghz``, ``max_frequency_ghz``, ``user_cores``, ``uncertainty``,
        ``tolerance``).
    """
    from phasekit.energy.options import ChooseOptions

    o = ChooseOptions.of(options, keywords, verb="choose")
    return choose_configurations(as_configuration_columns(data), fit=fit, inputs=inputs,
                                 source=_source(data), progress=progress, options=o)


def choose_configurations(configs: Configurations | pd.DataFrame, *,
                          fit: EnergyFitResult | PathLike | None = None,
                          inputs: Sequence[str | float] | str | float | None = None,
                          source: str | None = None, progress: Progress | None = None,
                          options: ChooseOptions | None = None, **keywords: Any
                          ) -> ChoiceResult:
    """:func:`choose` on configurations already read (:func:`as_configurations`):
    :func:`phasekit.energy.workflow.fit_then_choose`, as the CLI runs it.

    Parameters
    ----------
    configs
        One row per configuration (:func:`as_configurations`).
    fit, inputs, progress, options, **keywords
        As :func:`choose`.
    source
        The campaign's file, named in errors of the fit and in notes.
    """
    from phasekit.energy.fit import load_fit
    from phasekit.energy.options import ChooseOptions
    from phasekit.energy.workflow import fit_then_choose

    o = ChooseOptions.of(options, keywords, verb="choose_configurations")
    return fit_then_choose(configs, fit=None if fit is None else load_fit(fit), inputs=inputs,
                           source=source, progress=progress, options=o).result


def suggest(data: Campaign | pd.DataFrame | PathLike, *,
            inputs: Sequence[str | float] | str | float | None = None,
            fit: EnergyFitResult | PathLike | None = None, progress: Progress | None = None,
            options: SuggestOptions | None = None, **keywords: Any) -> SuggestResult:
    """The next configurations to measure (``phasekit energy suggest``; the active-learning
    loop on the energy model of Silva 2024): :func:`suggest_configurations` on the
    configurations of ``data``.

    Parameters
    ----------
    data
        A campaign, a table of runs, or its file.
    inputs
        Labels or numbers of the inputs to suggest for (default: every input of ``data``).
    fit
        Take the training configurations of this fit (or its JSON file) as the measured
        ones; default: every configuration of ``data``, or ``train`` of them.
    progress
        Called as ``progress(stage, fraction)`` as the work advances.
    options
        The tuning parameters as one :class:`~phasekit.energy.SuggestOptions`.
    **keywords
        Or the same as keywords, never both: the fields of
        :class:`~phasekit.energy.SuggestOptions` (``k``, the model fitted, ``train``
        configurations of ``data`` taken as measured, chosen by ``design``, the grid
        ``frequencies`` x ``cores``, the limits ``max_time_s``, ``max_cores``,
        ``min_frequency_ghz``, ``max_frequency_ghz``, ``tolerance``).
    """
    from phasekit.energy.options import SuggestOptions

    o = SuggestOptions.of(options, keywords, verb="suggest")
    return suggest_configurations(as_configuration_columns(data), inputs=inputs, fit=fit,
                                  source=_source(data), progress=progress, options=o)


def suggest_configurations(configs: Configurations | pd.DataFrame, *,
                           inputs: Sequence[str | float] | str | float | None = None,
                           fit: EnergyFitResult | PathLike | None = None,
                           source: str | None = None, progress: Progress | None = None,
                           options: SuggestOptions | None = None,
                           **keywords: Any) -> SuggestResult:
    """:func:`suggest` on configurations already read (:func:`as_configurations`):
    :func:`phasekit.energy.suggest.suggest` from the configurations taken as measured
    (:func:`phasekit.energy.suggest.measured_rows`), on the grid of ``configs``.

    Parameters
    ----------
    configs
        One row per configuration (:func:`as_configurations`).
    inputs, fit, progress, options, **keywords
        As :func:`suggest`.
    source
        The campaign's file, named in messages and in errors of the suggestion.
    """
    from phasekit.energy.fit import configuration_grid, input_numbers
    from phasekit.energy.options import SuggestOptions
    from phasekit.energy.suggest import measured_rows
    from phasekit.energy.suggest import suggest as run_suggest

    o = SuggestOptions.of(options, keywords, verb="suggest_configurations")
    numbers, labels = input_numbers(configs, inputs)
    default_f, default_p = configuration_grid(configs)  # the grid of configs, not of train's
    measured, fitted = measured_rows(configs, train=o.train, fit=fit, design=o.design,
                                     seed=o.seed, model=o.model, source=source)
    with callers_names({"frequencies_ghz": "frequencies"}, source):
        return run_suggest(measured, k=o.k, frequencies_ghz=o.frequencies or default_f,
                           cores=o.cores or default_p, inputs=numbers, labels=labels,
                           model=o.model if fitted is None else fitted.model, seed=o.seed,
                           max_time_s=o.max_time_s, max_cores=o.max_cores,
                           min_frequency_ghz=o.min_frequency_ghz,
                           max_frequency_ghz=o.max_frequency_ghz, tolerance=o.tolerance,
                           reference=configs, progress=progress)


def plot_choice(result: ChoiceResult, path: PathLike) -> Path:
    """Write the figure of a choice (what ``phasekit energy choose --plot`` writes):
    predicted energy against time per input, the Pareto frontier, the choice and the
    ondemand baseline (:func:`phasekit.plot.energy.plot_choice`).

    Parameters
    ----------
    result
        What :func:`choose` returned.
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).
    """
    from phasekit.plot.energy import plot_choice as plot

    return plot(path, result)


# --- phasekit energy plot: the PaScal Viewer's views of a campaign -------------------------
#: The views of :func:`campaign_views`: the efficiency tables, the configurations, or both.
VIEW_KINDS = ("efficiency", "energy", "all")
#: The heatmap modes of :func:`plot_campaign` (:data:`phasekit.plot.energy.MODES`, repeated
#: here so that checking them imports no matplotlib, 0.3 s).
HEATMAP_MODES = ("discrete", "smoothed", "both")


def check_campaign_view(*, kind: str = "all", mode: str = "both") -> None:
    """UsageError naming ``kind`` or ``mode`` unless :func:`campaign_views` and
    :func:`plot_campaign` take it, before the campaign is read.

    Parameters
    ----------
    kind
        As :func:`campaign_views`: one of :data:`VIEW_KINDS`.
    mode
        As :func:`plot_campaign`: one of :data:`HEATMAP_MODES`.
    """
    if kind not in VIEW_KINDS:
        raise UsageError(f"expected one of {', '.join(VIEW_KINDS)}", parameter="kind",
                         value=kind, option="--kind")
    if mode not in HEATMAP_MODES:
        raise UsageError(f"expected one of {', '.join(HEATMAP_MODES)}", parameter="mode",
                         value=mode, option="--mode")


def campaign_runs(data: Campaign | pd.DataFrame | Mapping[str, Any], *,
                  source: str | None = None) -> RunColumns:
    """The runs of a campaign as columns, without pandas
    (:func:`phasekit.energy.efficiency.campaign_columns`): what :func:`campaign_views`
    takes; ``.inputs`` names the inputs and ``.select(mask)`` keeps some runs.

    Parameters
    ----------
    data
        A campaign, a table of runs or its columns (:func:`read_runs`).
    source
        Its file, named in errors.
    """
    from phasekit.energy.efficiency import campaign_columns

    return campaign_columns(data, source=source)


def campaign_views(runs: RunColumns, *, kind: str = "all",
                   regions: Sequence[str] | None = None, frequency: float | None = None,
                   cores: int | None = None, source: str | None = None
                   ) -> tuple[tuple[EfficiencyTable, ...], ConfigurationTable | None]:
    """The views of ``phasekit energy plot`` (Silva 2024, 3.10.1): the efficiency tables
    (:func:`phasekit.energy.efficiency.efficiency_tables`; none without run times, see
    :data:`NO_TIME_NOTE`) and the energy over configurations
    (:func:`phasekit.energy.efficiency.configuration_table`).

    Parameters
    ----------
    runs
        :func:`campaign_runs`.
    kind
        "efficiency" (the tables alone), "energy" (the configurations alone) or "all"
        (:data:`VIEW_KINDS`; anything else is a UsageError).
    regions
        The regions with an efficiency table besides the whole program (default: every one).
    frequency, cores
        Efficiency at this frequency (GHz; default the highest measured) and on this many
        cores where threads and cores were varied apart (default the most).
    source
        The campaign's file, named in errors.

    Returns
    -------
    tuple
        The efficiency tables (the program's, then each region's) and the configuration
        table (None for kind "efficiency").
    """
    from phasekit.energy.efficiency import configuration_table, efficiency_tables

    check_campaign_view(kind=kind)
    tables: tuple[EfficiencyTable, ...] = ()
    configs: ConfigurationTable | None = None
    if kind in ("efficiency", "all"):
        tables = tuple(efficiency_tables(runs, regions=regions or None, frequency=frequency,
                                         cores=cores, source=source))
    if kind in ("energy", "all"):
        configs = configuration_table(runs, source=source)
    return tables, configs


def campaign_notes(tables: Sequence[EfficiencyTable], configs: ConfigurationTable | None
                   ) -> list[str]:
    """The notes of :func:`campaign_views`: those of the efficiency tables (each once),
    then the configuration table's (:func:`phasekit.energy.table.campaign_notes`).

    Parameters
    ----------
    tables, configs
        What :func:`campaign_views` returned.
    """
    from phasekit.energy.table import campaign_notes as notes

    return notes(tables, configs)


def campaign_presentation(tables: Sequence[EfficiencyTable],
                          configs: ConfigurationTable | None,
                          name: str | None = None) -> Presentation:
    """What ``phasekit energy plot`` shows of a campaign: the whole program's efficiency
    and where each input used the least energy, the efficiency tables, each input's least
    energy, the notes (:func:`phasekit.energy.table.campaign_presentation`).

    Parameters
    ----------
    tables, configs
        What :func:`campaign_views` returned.
    name
        The campaign's file.
    """
    from phasekit.energy.table import campaign_presentation as presentation

    return presentation(tables, configs, name)


def plot_campaign(path: PathLike, *, tables: Sequence[EfficiencyTable] = (),
                  configs: ConfigurationTable | None = None, mode: str = "both") -> Path:
    """Write the figure of :func:`campaign_views` (what ``phasekit energy plot --plot``
    writes): the efficiency heatmaps, the energy over configurations and energy against
    time with the Pareto frontiers (:func:`phasekit.plot.energy.plot_energy`).

    Parameters
    ----------
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).
    tables, configs
        What :func:`campaign_views` returned.
    mode
        Heatmaps with one cell per configuration ("discrete"), interpolated ("smoothed"),
        or "both" side by side (:data:`HEATMAP_MODES`).
    """
    from phasekit.plot.energy import plot_energy

    check_campaign_view(mode=mode)
    return plot_energy(path, tables=tables, configs=configs, mode=mode)


# --- phasekit energy phasediv: the minimum-energy phase division (Silva 2024, ch. 5) -------
def read_power_profiles(path: PathLike, *, input: str | None = None,
                        repetition: str | None = None, sensor: str | None = None
                        ) -> PowerProfiles:
    """The power profiles in a JSON file: phasekit's power profiles or a PaScal Analyzer
    JSON (one input and repetition; :func:`phasekit.energy.phasediv.power_profiles_from_dict`).
    Errors name the file.

    Parameters
    ----------
    path
        The JSON file.
    input, repetition, sensor
        PaScal Analyzer JSON only: the input (default: the smallest), the repetition
        (default: the first) and the power sensor (default: ipmi).
    """
    from phasekit.energy.phasediv import power_profiles_from_dict
    from phasekit.io.inputs import read_json
    from phasekit.io.naming import name_file

    data = read_json(path, "power profiles (JSON)")
    if not isinstance(data, dict):
        raise InputError("expected a JSON object (phasekit power profiles or PaScal Analyzer "
                         "output)", path=os.fspath(path))
    pascal = "data" in data and "config" in data and "kind" not in data
    if not pascal and (input is not None or repetition is not None or sensor is not None):
        raise UsageError(f"apply to PaScal Analyzer JSON only; {os.fspath(path)} is phasekit "
                         "power profiles", parameter="input, repetition and sensor",
                         option="--input, --rep and --sensor")
    selection = {"input": input, "repetition": repetition, "sensor": sensor} if pascal else {}
    try:
        return power_profiles_from_dict(data, source=os.fspath(path), **selection)
    except PhasekitError as exc:
        raise name_file(exc, path) from exc


def check_phasediv(*, max_phases: int = 35, grid: int = 1000, method: str = "dp",
                   integrator: str = "trapezoid", switch_cost_s: float = 0.0,
                   switch_cost_j: float = 0.0) -> None:
    """UsageError naming the first option :func:`phasediv` cannot take, before any profile
    is read (:func:`phasekit.energy.phasediv.check_division`).

    Parameters
    ----------
    max_phases, grid, method, integrator, switch_cost_s, switch_cost_j
        As :func:`phasediv`.
    """
    from phasekit.energy.phasediv import check_division

    check_division(max_phases=max_phases, grid=grid, method=method, integrator=integrator,
                   switch_cost_s=switch_cost_s, switch_cost_j=switch_cost_j)


def phasediv(profiles: PowerProfiles | PathLike, *, max_phases: int = 35, grid: int = 1000,
             method: str = "dp", integrator: str = "trapezoid", switch_cost_s: float = 0.0,
             switch_cost_j: float = 0.0, **options: Any) -> PhaseDivision:
    """Divide a run into phases, each at its minimum-energy configuration (``phasekit energy
    phasediv``; Silva 2024, ch. 5): :func:`phasekit.energy.phasediv.divide_phases`.

    Parameters
    ----------
    profiles
        Power profiles, one run per configuration, or their JSON file
        (:func:`read_power_profiles`).
    max_phases
        Divide into 1..max_phases phases.
    grid
        Breakpoints on multiples of 1/grid of the execution.
    method
        "dp" (the exact optimum) or "ga" (the thesis's genetic algorithm, with the optimum
        beside it).
    integrator
        "trapezoid" (ours) or "zoh" (the thesis's).
    switch_cost_s, switch_cost_j
        Time and energy added by each switch of configuration.
    **options
        ``seed``, ``progress``, and the genetic algorithm's ``population``,
        ``generations``, ``elite``, ``mutation``.
    """
    from phasekit.energy.phasediv import divide_phases

    check_phasediv(max_phases=max_phases, grid=grid, method=method, integrator=integrator,
                   switch_cost_s=switch_cost_s, switch_cost_j=switch_cost_j)
    if isinstance(profiles, str | os.PathLike):
        profiles = read_power_profiles(profiles)
    return divide_phases(profiles, max_phases=max_phases, grid=grid, method=method,
                         integrator=integrator, switch_cost_s=switch_cost_s,
                         switch_cost_j=switch_cost_j, **options)


def plot_phase_division(result: PhaseDivision, path: PathLike) -> Path:
    """Write the figure of a phase division (what ``phasekit energy phasediv --plot``
    writes): energy against the number of phases and the chosen configuration over the
    execution (:func:`phasekit.plot.energy_phases.plot_energy_phases`).

    Parameters
    ----------
    result
        What :func:`phasediv` returned.
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).
    """
    from phasekit.plot.energy_phases import plot_energy_phases

    return plot_energy_phases(result, path)


# --- phasekit fingerprint: runs clustered by their fingerprints (Silva 2024, 5.10) ----------
def profile_files(paths: Sequence[PathLike]) -> list[Path]:
    """The profile files that ``paths`` name: a folder gives its profiles (not its
    subfolders), a glob pattern its matches, anything else itself
    (:func:`phasekit.parallel.expand_inputs`); InputError for the first that names none.

    Parameters
    ----------
    paths
        Files, folders or glob patterns.
    """
    from phasekit.io import PROFILE_SUFFIXES
    from phasekit.parallel import expand_inputs

    files, problems = expand_inputs(paths, PROFILE_SUFFIXES)
    if problems:
        where, why = problems[0]
        raise InputError(why, path=where)
    return files


def check_fingerprint(n_profiles: int, *, ratio: str | None = None,
                      clusters: int | None = None, points: int = 101) -> None:
    """UsageError naming the first option :func:`fingerprint` cannot take for
    ``n_profiles`` profiles, before any profile is read
    (:func:`phasekit.energy.fingerprint.check_options`).

    Parameters
    ----------
    n_profiles
        How many profiles there are (at least two).
    ratio, clusters, points
        As :func:`fingerprint`.
    """
    from phasekit.energy.fingerprint import check_options

    with callers_names({"n_clusters": "clusters", "n_points": "points"}):
        check_options(n_profiles, ratio=ratio, n_clusters=clusters, n_points=points)


def fingerprint(profiles: Sequence[Profile] | Sequence[PathLike] | PathLike, *,
                names: Sequence[str] | None = None, ratio: str | None = None,
                clusters: int | None = None, points: int = 101,
                period: float | None = None) -> FingerprintResult:
    """Cluster runs by their fingerprints, the instructions / memory instructions series
    (``phasekit fingerprint``; Silva 2024, 5.10):
    :func:`phasekit.energy.fingerprint.fingerprint_profiles`.

    Parameters
    ----------
    profiles
        Two or more profiles, one run each, or their files, folders or glob patterns
        (:func:`profile_files`).
    names
        The runs' names (default: each file's name, its path where two names are the same;
        each profile's ``meta["name"]``); an error about a run starts with its name.
    ratio
        The counter ratio, ``NUM/DEN`` with each side a column or a sum ``a+b`` (default:
        instructions over the first memory-instruction count the profiles have).
    clusters
        The number of clusters (default: chosen from the programs the profiles name, else
        the best mean silhouette).
    points
        Points of a fingerprint (0..100 % of the execution).
    period
        Of a CSV file without a time column: one row every ``period`` seconds.
    """
    from phasekit.energy.fingerprint import fingerprint_profiles
    from phasekit.profile import Profile

    if isinstance(profiles, str | os.PathLike):
        profiles = [profiles]
    if not all(isinstance(p, Profile) for p in profiles):
        from phasekit.io import read_profile

        files = profile_files(profiles)
        check_fingerprint(len(files), ratio=ratio, clusters=clusters, points=points)
        if names is None:
            names = [f.name for f in files]
            if len(set(names)) != len(names):
                names = [str(f) for f in files]
        profiles = [read_profile(f, period=period) for f in files]
    return fingerprint_profiles(profiles, names=names, ratio=ratio, n_clusters=clusters,
                                n_points=points)


def plot_fingerprints(result: FingerprintResult, path: PathLike) -> Path:
    """Write the figure of the fingerprints (what ``phasekit fingerprint --plot`` writes):
    the dendrogram and the fingerprints (:func:`phasekit.plot.fingerprint.plot_fingerprints`).

    Parameters
    ----------
    result
        What :func:`fingerprint` returned.
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).
    """
    from phasekit.plot.fingerprint import plot_fingerprints as plot

    return plot(result, path)
