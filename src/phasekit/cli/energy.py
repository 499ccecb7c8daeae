"""``phasekit energy``: energy models over frequency, cores and input (Silva 2024, chapter 4).

A small typer sub-app (:data:`energy_app`); ``fit``, ``choose`` and ``suggest`` live here,
other subcommands are added to the same app by their own modules. :func:`load_table` (a campaign JSON, JSON-lines log,
PaScal Analyzer JSON or CSV into one row per configuration) is shared with them. Each command
parses its options, calls the library (:mod:`phasekit.energy.api`'s verbs run the same
functions), prints the result's presentation and writes its files; the library checks the
options, and :func:`_as_typed` says its errors with the flags and values as they were typed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from phasekit.cli.common import (
    check_outputs,
    json_file,
    name_file,
    parse_list,
    print_json,
    progress_reporter,
    sub_app,
    write_all,
    write_outputs,
)
from phasekit.cli.render import show
from phasekit.errors import PhasekitError, UsageError

if TYPE_CHECKING:
    from phasekit.energy.api import Configurations

__all__ = ["CHOOSE_EPILOG", "FIT_EPILOG", "SUGGEST_EPILOG", "choose", "energy_app", "fit",
           "load_runs", "load_table", "suggest"]

energy_app = sub_app(
    "energy",
    "Energy of a program over frequency, cores and input (Silva 2024): fit models, choose "
    "configurations, divide into phases, plot.")

FIT_EPILOG = """\
Example:

\b
    phasekit energy fit campaign.json
    phasekit energy fit campaign.json --train 10 --seed 1
    phasekit energy fit campaign.json --train 10 --baselines svr,knn
    phasekit energy fit pascal-output.json --train 10 --design doptimal --model pt
    phasekit energy fit runs.csv --train 10 --json > fit.json
"""


def load_runs(path: Path, *, columns: bool = False) -> Any:
    """A campaign (our JSON or JSON lines, PaScal Analyzer JSON) or, for a ``.csv``/``.tsv``
    (optionally ``.gz``), its tidy table (columns as :meth:`Campaign.table`): a DataFrame, or
    with ``columns`` NumPy columns, without pandas (``energy plot``;
    :func:`phasekit.energy.api.read_runs`). Errors name the file."""
    from phasekit.energy.api import read_runs

    try:
        return read_runs(path, columns=columns)
    except PhasekitError as exc:
        raise name_file(exc, path) from exc


def load_table(path: Path) -> Configurations:
    """One row per configuration (:func:`phasekit.energy.api.as_configuration_columns`)
    from ``path``.

    A ``.csv``/``.tsv`` (optionally ``.gz``) is a table with columns frequency_ghz, cores,
    input, energy_j and optionally time_s; anything else is read as a campaign (our JSON or
    JSON lines, or PaScal Analyzer JSON). Errors name the file.
    """
    from phasekit.energy.api import as_configuration_columns

    try:
        return as_configuration_columns(path)
    except PhasekitError as exc:
        raise name_file(exc, path) from exc


#: :attr:`UsageError.value` of an error that names no value.
@contextlib.contextmanager
def _as_typed(**typed: tuple[str, str | None]) -> Iterator[None]:
    """The library's UsageError about a parameter of ``typed`` (``parameter=(flag, text)``)
    said with the flag the user typed and, where ``text`` is given, the value as typed
    (``--max-time 30s``, not the 30.0 seconds the library was given)."""
    try:
        yield
    except UsageError as exc:
        if exc.parameter not in typed:
            raise
        raise exc.as_typed(*typed[exc.parameter]) from None


def _alias(value: Any, old: Any, flag: str, old_flag: str) -> tuple[Any, str]:
    """An option given by its name or by its old name (a hidden alias), and the flag used."""
    if value is not None and old is not None:
        raise UsageError(f"{flag} and {old_flag}: give one of them ({old_flag} is the old "
                         f"name of {flag})")
    return (old, old_flag) if old is not None else (value, flag)


def _baseline_names(text: str | None, none: bool) -> tuple[str, ...]:
    """``--baselines`` as a tuple of names (``all`` for every one; the library checks the
    names); UsageError for no name or both ``--baselines`` and ``--no-baselines``."""
    from phasekit.energy.api import baselines

    if none and text:
        raise UsageError("--baselines and --no-baselines: give one of them")
    if not text:
        return ()
    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    if not names:
        raise UsageError(f"--baselines {text!r}: expected some of {', '.join(baselines())} "
                         "separated by commas, or all")
    return baselines() if names == ["all"] else tuple(dict.fromkeys(names))


@energy_app.command("fit", epilog=FIT_EPILOG)
def fit(
    table: Annotated[Path, typer.Argument(
        metavar="TABLE", show_default=False,
        help="Campaign JSON (phasekit's, a .jsonl log or PaScal Analyzer's) or a CSV with "
             "columns frequency_ghz, cores, input, energy_j and optionally time_s (no "
             "frequency_ghz: the runs are at one uncontrolled frequency).")],
    model: Annotated[str, typer.Option(
        "--model", metavar="extended|pt|auto",
        help="pt: the thesis's E = P T (eqs. 4.14-4.22; \"seed\" is still accepted); "
             "extended: adds a "
             "frequency-insensitive share, contention, an input-dependent serial share and "
             "per-input deviations; auto: the one of lowest cross-validated loss on the "
             "training configurations (leave-one-out up to 10) when there are 20 to 100 of "
             "them, extended otherwise.")] = "auto",
    train: Annotated[int | None, typer.Option(
        "--train", metavar="N", show_default=False,
        help="Fit on N configurations and evaluate on all the others (the thesis: 10). "
             "Default: fit on every configuration.")] = None,
    input_label: Annotated[str | None, typer.Option(
        "--input", metavar="LABEL", show_default=False,
        help="Fit this input alone (its label or number; the input-fixed mode).")] = None,
    seed: Annotated[int, typer.Option(
        "--seed", metavar="S", help="Random seed (random design, multi-start, baselines).")] = 0,
    design: Annotated[str, typer.Option(
        "--design", metavar="random|maximin|doptimal",
        help="How the N training configurations are chosen: doptimal (D-optimal for the "
             "model and its per-input deviations; the most accurate on real campaigns), "
             "random (the thesis) or maximin (space filling); the designs are balanced over "
             "inputs.")] = "doptimal",
    baselines: Annotated[str | None, typer.Option(
        "--baselines", metavar="svr,mlp,knn,tree|all", show_default=False,
        help="Also train these machine-learning baselines on the same points and score them "
             "on the same holdout (with --train; the thesis's SVR, MLP, KNN and decision "
             "tree). None by default: their grid searches more than double the command's "
             "time.")] = None,
    no_baselines: Annotated[bool, typer.Option(
        "--no-baselines", hidden=True, help="No baselines (the default).")] = False,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"model\", \"params\", \"n_train\", \"mpe_train\", "
        "\"mpe_holdout\", \"baselines\", ...} as JSON (MPE in percent).")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the result as JSON.")] = None,
) -> None:
    """Fit an energy model E(f, p, N) to measured configurations and report its error.

    Bounded nonlinear least squares, multi-start (ours robustly on log error; pt,
    the thesis's model, on relative error as the thesis, after a robust pass that sets aside readings far
    below the fit: probable failed runs, which are named); time and energy together when
    times are measured. With --train N the model learns from N configurations and is
    scored on every other one: mean percentage error (Silva 2024, eq. 4.23) of the model, of
    the other model and, with --baselines, of machine-learning baselines trained on the same
    points.
    """

    from phasekit.energy.api import fit as fit_energy

    names = _baseline_names(baselines, no_baselines)
    if names and train is None:
        raise UsageError("--baselines: needs --train N (the baselines are scored on the "
                         "configurations held out)")
    check_outputs(output)
    with progress_reporter(not json_output, f"fitting {table.name}") as progress, \
            _as_typed(baselines=("--baselines", baselines)):
        try:
            if progress is not None:
                progress(f"{model} model", 0.0)
            result = fit_energy(table, model=model, train=train, design=design, seed=seed,
                                input=input_label, baselines=names, progress=progress)
        except PhasekitError as exc:
            raise name_file(exc, table) from exc
    data = result.saved_dict()
    written = write_all(json_file(output, data))
    if json_output:
        print_json(data)
        return
    show(result.present(table.name), written)


#: Grid options shared by `energy choose` and `energy suggest`: ``--frequencies`` and the
#: limits ``--min-frequency``, ``--max-frequency`` are the library's ``frequencies``,
#: ``min_frequency_ghz``, ``max_frequency_ghz``; ``--freqs``, ``--min-freq`` and
#: ``--max-freq``, their old names, are hidden aliases.
FrequenciesOption = Annotated[str | None, typer.Option(
    "--frequencies", metavar="GHZ,...", show_default=False,
    help="The machine's frequencies (default: those in TABLE).")]
FreqsOption = Annotated[str | None, typer.Option(
    "--freqs", metavar="GHZ,...", hidden=True, help="The old name of --frequencies.")]
CoresOption = Annotated[str | None, typer.Option(
    "--cores", metavar="1,2,...", show_default=False,
    help="The core counts to consider (default: those in TABLE).")]
MaxCoresOption = Annotated[int | None, typer.Option(
    "--max-cores", metavar="P", show_default=False, help="Use at most P cores.")]
MinFrequencyOption = Annotated[float | None, typer.Option(
    "--min-frequency", metavar="GHZ", show_default=False, help="Lowest frequency allowed.")]
MaxFrequencyOption = Annotated[float | None, typer.Option(
    "--max-frequency", metavar="GHZ", show_default=False, help="Highest frequency allowed.")]
MinFreqOption = Annotated[float | None, typer.Option(
    "--min-freq", metavar="GHZ", hidden=True, help="The old name of --min-frequency.")]
MaxFreqOption = Annotated[float | None, typer.Option(
    "--max-freq", metavar="GHZ", hidden=True, help="The old name of --max-frequency.")]


def _grid(frequencies: str | None, freqs: str | None, cores: str | None,
          min_frequency: float | None, min_freq: float | None, max_frequency: float | None,
          max_freq: float | None) -> tuple[dict[str, Any], dict[str, tuple[str, str | None]]]:
    """The grid options as the library's keywords (``frequencies``, ``cores``,
    ``min_frequency_ghz``, ``max_frequency_ghz``; None where not given), and how each was
    typed (for :func:`_as_typed`)."""
    text, flag = _alias(frequencies, freqs, "--frequencies", "--freqs")
    low, low_flag = _alias(min_frequency, min_freq, "--min-frequency", "--min-freq")
    high, high_flag = _alias(max_frequency, max_freq, "--max-frequency", "--max-freq")
    grid = {"frequencies": parse_list(text, flag, float) if text else None,
            "cores": parse_list(cores, "--cores", int) if cores else None,
            "min_frequency_ghz": low, "max_frequency_ghz": high}
    typed = {"frequencies": (flag, text), "frequencies_ghz": (flag, text),
             "cores": ("--cores", cores), "min_frequency_ghz": (low_flag, None),
             "max_frequency_ghz": (high_flag, None)}
    return grid, typed


CHOOSE_EPILOG = """\
Example:

\b
    phasekit energy choose campaign.json
    phasekit energy choose campaign.json --input large --max-time 30s --max-cores 16
    phasekit energy choose campaign.json --fit fit.json --user-cores 32 --json
    phasekit energy choose campaign.json --frequencies 1.2,1.6,2.0,2.4 --cores 1,2,4,8,16,32
    phasekit energy choose campaign.json --train 10 --design doptimal   # regret, how sure
"""


def _inputs(asked: list[str] | None) -> list[str] | None:
    """``--input``'s values (each may be a comma-separated list), None when not given."""
    return [name for text in asked or () for name in text.split(",")] or None


@energy_app.command("choose", epilog=CHOOSE_EPILOG)
def choose(
    table: Annotated[Path, typer.Argument(
        metavar="TABLE", show_default=False,
        help="The campaign (or CSV) to fit and to take the grid of settings from.")],
    fit_file: Annotated[Path | None, typer.Option(
        "--fit", metavar="FIT.json", help="Use a saved `energy fit -o` result instead of "
        "fitting TABLE.")] = None,
    model: Annotated[str, typer.Option(
        "--model", metavar="auto|extended|pt",
        help="Model to fit (without --fit): auto, the one of lowest cross-validated loss "
             "on 20 to 100 measured configurations, extended otherwise; see energy fit "
             "--help.")] = "auto",
    train: Annotated[int | None, typer.Option(
        "--train", metavar="N", show_default=False,
        help="Fit on N configurations only (default: all of TABLE).")] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="S", help="Random seed.")] = 0,
    design: Annotated[str, typer.Option(
        "--design", metavar="random|maximin|doptimal",
        help="How the N training configurations are chosen.")] = "doptimal",
    inputs: Annotated[list[str] | None, typer.Option(
        "--input", metavar="LABEL", show_default=False,
        help="An input to choose for (repeat, or a comma-separated list): the campaign's "
             "labels, or input numbers (a number it did not measure is extrapolated). "
             "Default: every input of TABLE.")] = None,
    frequencies: FrequenciesOption = None,
    freqs: FreqsOption = None,
    cores: CoresOption = None,
    max_time: Annotated[str | None, typer.Option(
        "--max-time", metavar="DURATION", show_default=False,
        help="Time limit per run (e.g. 90s, 2m).")] = None,
    max_cores: MaxCoresOption = None,
    min_frequency: MinFrequencyOption = None,
    max_frequency: MaxFrequencyOption = None,
    min_freq: MinFreqOption = None,
    max_freq: MaxFreqOption = None,
    user_cores: Annotated[int | None, typer.Option(
        "--user-cores", metavar="P", show_default=False,
        help="The core count you would run with: the baseline is ondemand (maximum "
             "frequency) at P cores. Default: the worst, random and best core count.")] = None,
    uncertainty: Annotated[bool, typer.Option(
        "--uncertainty/--no-uncertainty",
        help="Refit the model without one group of its training configurations at a time "
             "(leave-one-out up to 10, else 10 groups) for a 90 % prediction interval "
             "(jackknife+) and how sure each choice is.")] = True,
    tolerance: Annotated[float, typer.Option(
        "--tolerance", metavar="PCT",
        help="A choice is unsure when the chance that it loses more than PCT % against the "
             "best, under the model's error on configurations it did not see and the "
             "readings' noise, exceeds 10 %; then what to measure next is suggested.")] = 5.0,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print the choices (best configuration, Pareto frontier, savings, "
        "regret, uncertainty) as JSON.")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the result as JSON.")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE", help="Figure: predicted energy against time per input, the "
        "Pareto frontier, the choice and the ondemand baseline (.png, .svg, .pdf).")] = None,
) -> None:
    """Choose the minimum-energy configuration (frequency, cores) for each input.

    The model (fitted on TABLE, or --fit) predicts time and energy over the grid of
    frequencies x core counts; the minimum under the limits is chosen (Silva 2024, section
    4.12), with the Pareto frontier of (time, energy) and the savings (eq. 4.24) against
    Linux's ondemand governor at the maximum frequency: predicted, and measured in
    parentheses where the campaign ran every configuration involved. Where TABLE measured
    every configuration compared, the regret: measured energy of the choice over the lowest
    measured - 1. With --uncertainty (the default), how sure each choice is, and where it is
    not, the configurations to measure next (as `phasekit energy suggest`).
    """
    from phasekit.cli.common import parse_duration
    from phasekit.energy.api import choose_configurations, plot_choice

    check_outputs(output, plot)
    configs = load_table(table)
    grid, typed = _grid(frequencies, freqs, cores, min_frequency, min_freq, max_frequency,
                        max_freq)
    limit_s = parse_duration(max_time, "--max-time") if max_time else None
    with progress_reporter(not json_output, f"choosing for {table.name}") as progress, \
            _as_typed(**typed, max_time_s=("--max-time", max_time)):
        result = choose_configurations(
            configs, fit=fit_file, inputs=_inputs(inputs), max_time_s=limit_s,
            max_cores=max_cores, user_cores=user_cores, model=model, train=train,
            design=design, seed=seed, uncertainty=uncertainty, tolerance=tolerance,
            source=str(table), progress=progress, **grid)
    data = result.saved_dict()
    written = write_outputs(output, plot, lambda: data, lambda path: plot_choice(result, path))
    if json_output:
        print_json(data)
        return
    show(result.present(table.name), written)


SUGGEST_EPILOG = """\
Example:

\b
    phasekit energy suggest measured.csv --frequencies 1.2,1.4,1.6,1.8,2.0,2.2 --cores 1,2,4,8,16,32
    phasekit energy suggest campaign.json --train 10 --design doptimal -k 5
    phasekit energy suggest campaign.json --fit fit.json --json
"""


@energy_app.command("suggest", epilog=SUGGEST_EPILOG)
def suggest(
    table: Annotated[Path, typer.Argument(
        metavar="TABLE", show_default=False,
        help="The configurations measured so far (a campaign or CSV as for `energy fit`; "
             "configurations not measured yet are simply absent).")],
    k: Annotated[int, typer.Option(
        "-k", "--count", metavar="K", help="How many configurations to suggest.")] = 5,
    train: Annotated[int | None, typer.Option(
        "--train", metavar="N", show_default=False,
        help="Take only N configurations of TABLE as measured (chosen by --design): to try "
             "the loop on a campaign that measured everything, whose regret is then shown.")
                     ] = None,
    design: Annotated[str, typer.Option(
        "--design", metavar="random|maximin|doptimal",
        help="How the N configurations of --train are chosen.")] = "doptimal",
    fit_file: Annotated[Path | None, typer.Option(
        "--fit", metavar="FIT.json", help="Take the training configurations of a saved "
        "`energy fit -o` result as the measured ones (their energies are read from TABLE).")
                        ] = None,
    model: Annotated[str, typer.Option(
        "--model", metavar="auto|extended|pt",
        help="Model to fit: auto, the one of lowest cross-validated loss on 20 to 100 "
             "measured configurations, extended otherwise; see energy fit --help.")] = "auto",
    seed: Annotated[int, typer.Option("--seed", metavar="S", help="Random seed.")] = 0,
    inputs: Annotated[list[str] | None, typer.Option(
        "--input", metavar="LABEL", show_default=False,
        help="An input to suggest for (repeat, or a comma-separated list; default: every "
             "input of TABLE).")] = None,
    frequencies: FrequenciesOption = None,
    freqs: FreqsOption = None,
    cores: CoresOption = None,
    max_cores: MaxCoresOption = None,
    min_frequency: MinFrequencyOption = None,
    max_frequency: MaxFrequencyOption = None,
    min_freq: MinFreqOption = None,
    max_freq: MaxFreqOption = None,
    tolerance: Annotated[float, typer.Option(
        "--tolerance", metavar="PCT",
        help="Promising: within PCT % of the minimum under the fit or a refit.")] = 2.0,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"suggestions\": [...], \"choice\": {...}, ...} as JSON.")
                           ] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the result as JSON.")] = None,
) -> None:
    """Suggest the next configurations to measure, where the model is least sure of the best.

    Fits the model on the measured configurations and refits it without one group of them
    at a time. First come the configurations the fit and the refits predict below the lowest
    energy measured for their input (most votes first), then those within --tolerance of the
    minimum under the fit or a refit, then the rest, by how much the refits disagree; spread
    over the inputs. Measure them, add them to TABLE, run again.
    """

    from phasekit.energy.api import suggest_configurations

    check_outputs(output)
    configs = load_table(table)
    grid, typed = _grid(frequencies, freqs, cores, min_frequency, min_freq, max_frequency,
                        max_freq)
    with progress_reporter(not json_output, f"suggesting for {table.name}") as progress, \
            _as_typed(**typed):
        result = suggest_configurations(  # errors of the suggestion name the table
            configs, k=k, inputs=_inputs(inputs), train=train, fit=fit_file, design=design,
            model=model, seed=seed, max_cores=max_cores, tolerance=tolerance,
            source=str(table), progress=progress, **grid)
    data = result.saved_dict()
    written = write_all(json_file(output, data))
    if json_output:
        print_json(data)
        return
    show(result.present(table.name), written)
