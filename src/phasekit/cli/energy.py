"""``phasekit energy``: energy models over frequency, cores and input (Silva 2024, chapter 4).

A small typer sub-app (:data:`energy_app`); ``fit``, ``choose`` and ``suggest`` live here,
other subcommands are added to the same app by their own modules. :func:`load_table` (a campaign JSON, JSON-lines log,
PaScal Analyzer JSON or CSV into one row per configuration) is shared with them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from phasekit.cli.common import (
    check_outputs,
    is_csv,
    json_file,
    name_file,
    number,
    out_console,
    print_json,
    print_written,
    progress_reporter,
    read_csv_table,
    sub_app,
    write_all,
    write_outputs,
)
from phasekit.errors import InputError, PhasekitError, UsageError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd
    from rich.console import Console

    from phasekit.campaign import Campaign
    from phasekit.energy.choose import ChoiceResult
    from phasekit.energy.fit import EnergyFitResult
    from phasekit.energy.suggest import Suggestion

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


def load_runs(path: Path, read_csv: Callable[[Path], Any] = read_csv_table
              ) -> Campaign | Any:
    """A campaign (our JSON or JSON lines, PaScal Analyzer JSON) or, for a ``.csv``/``.tsv``
    (optionally ``.gz``), its tidy table (columns as :meth:`Campaign.table`) as ``read_csv``
    reads it (a DataFrame; ``energy plot``: NumPy columns, without pandas). Errors name the
    file."""
    from phasekit.campaign import read_campaign

    try:
        return read_csv(path) if is_csv(path) else read_campaign(path)
    except PhasekitError as exc:
        raise name_file(exc, path) from exc


def load_table(path: Path) -> pd.DataFrame:
    """One row per configuration (:func:`phasekit.energy.fit.configurations`) from ``path``.

    A ``.csv``/``.tsv`` (optionally ``.gz``) is a table with columns frequency_ghz, cores,
    input, energy_j and optionally time_s; anything else is read as a campaign (our JSON or
    JSON lines, or PaScal Analyzer JSON). Errors name the file.
    """
    from phasekit.energy.fit import configurations

    try:
        return configurations(load_runs(path), source=str(path))
    except PhasekitError as exc:
        raise name_file(exc, path) from exc


def _baseline_names(text: str | None, none: bool) -> tuple[str, ...]:
    """``--baselines`` as a tuple of names (``all`` for every one); UsageError otherwise."""
    from phasekit.energy.fit import BASELINES

    if none and text:
        raise UsageError("--baselines and --no-baselines: give one of them")
    if not text:
        return ()
    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    if names == ["all"]:
        return tuple(BASELINES)
    unknown = [n for n in names if n not in BASELINES]
    if unknown or not names:
        raise UsageError(f"--baselines {text!r}: unknown baseline(s) {', '.join(unknown)}; "
                         f"expected some of {', '.join(BASELINES)} separated by commas, or all")
    return tuple(dict.fromkeys(names))


def _pct(value: float) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.2f}%"


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
             "training configurations (leave-one-out up to 10).")] = "extended",
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

    from phasekit.energy.fit import AUTO, DESIGNS, fit_energy
    from phasekit.energy.models import get_model

    if model != AUTO:
        get_model(model)
    if design not in DESIGNS:
        raise UsageError(f"--design {design!r}: expected one of {', '.join(DESIGNS)}")
    names = _baseline_names(baselines, no_baselines)
    if names and train is None:
        raise UsageError("--baselines: needs --train N (the baselines are scored on the "
                         "configurations held out)")
    check_outputs(output)
    configs = load_table(table)
    with progress_reporter(not json_output, f"fitting {table.name}") as progress:
        try:
            if progress is not None:
                progress(f"{model} model", 0.0)
            result = fit_energy(configs, model=model, n_train=train, design=design, seed=seed,
                                input=input_label, baselines=names, progress=progress)
        except PhasekitError as exc:
            raise name_file(exc, table) from exc
    data = result.saved_dict()
    written = write_all(json_file(output, data))
    if json_output:
        print_json(data)
        return
    console = out_console()
    title = (f"Energy model fit of {table.name}: {result.n_train} of {result.n_configs} "
             f"configurations ({result.design}), {result.n_holdout} held out")
    scores = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("method", "MPE train", "MPE holdout", "MSE holdout (J^2)"):
        scores.add_column(column, justify="left" if column == "method" else "right",
                          no_wrap=True)
    scores.add_row(f"{result.model} (fitted)", _pct(result.mpe_train), _pct(result.mpe_holdout),
                   f"{result.mse_holdout:.4g}" if math.isfinite(result.mse_holdout) else "n/a")
    for group in (result.other_models, result.baselines):
        for name, values in group.items():
            mse_value = values.get("mse_holdout", float("nan"))
            scores.add_row(name, _pct(values.get("mpe_train", float("nan"))),
                           _pct(values.get("mpe_holdout", float("nan"))),
                           f"{mse_value:.4g}" if math.isfinite(mse_value) else "n/a")
    console.print(scores)
    largest = max((abs(v) for v in result.params.values() if math.isfinite(v)), default=0.0)
    params = ", ".join(f"{k} = {number(v, largest)}" for k, v in result.params.items())
    console.print(f"parameters ({result.model}): {params}", soft_wrap=True)
    if result.selection:
        losses = ", ".join(f"{k} {v:.4g}" for k, v in result.selection.items())
        console.print(f"chosen by cross-validated loss on the training configurations: "
                      f"{losses}", soft_wrap=True)
    if result.with_time:
        console.print(f"time MPE: train {_pct(result.mpe_time_train)}, holdout "
                      f"{_pct(result.mpe_time_holdout)}; fit in {result.fit_time_s:.2f} s",
                      soft_wrap=True)
    if result.explanation:
        console.print(f"note: {result.explanation}", soft_wrap=True)
    print_written(console, written)


#: Grid options shared by `energy choose` and `energy suggest`.
FreqsOption = Annotated[str | None, typer.Option(
    "--freqs", metavar="GHZ,...", show_default=False,
    help="The machine's frequencies (default: those in TABLE).")]
CoresOption = Annotated[str | None, typer.Option(
    "--cores", metavar="1,2,...", show_default=False,
    help="The core counts to consider (default: those in TABLE).")]
MaxCoresOption = Annotated[int | None, typer.Option(
    "--max-cores", metavar="P", show_default=False, help="Use at most P cores.")]
MinFreqOption = Annotated[float | None, typer.Option(
    "--min-freq", metavar="GHZ", show_default=False, help="Lowest frequency allowed.")]
MaxFreqOption = Annotated[float | None, typer.Option(
    "--max-freq", metavar="GHZ", show_default=False, help="Highest frequency allowed.")]


#: What ``energy choose`` says of a model fitted on energy alone.
NO_TIME_CHOICE_NOTE = ("no run times: the model predicts energy alone, so no time column, no "
                       "time limit and no time-energy Pareto frontier")

CHOOSE_EPILOG = """\
Example:

\b
    phasekit energy choose campaign.json
    phasekit energy choose campaign.json --input large --max-time 30s --max-cores 16
    phasekit energy choose campaign.json --fit fit.json --user-cores 32 --json
    phasekit energy choose campaign.json --freqs 1.2,1.6,2.0,2.4 --cores 1,2,4,8,16,32
    phasekit energy choose campaign.json --train 10 --design doptimal   # regret, how sure
"""


def _inputs(configs: pd.DataFrame, asked: Sequence[str] | None
            ) -> tuple[list[float], dict[float, str]]:
    """The input numbers asked for (labels of the campaign, or numbers; each --input may be a
    comma-separated list), and their labels."""
    from phasekit.energy.fit import input_numbers

    names = [name for text in asked or () for name in text.split(",")]
    return input_numbers(configs, names or None, option="--input")


def _check_grid(configs: pd.DataFrame, frequencies: Sequence[float] | None,
                core_counts: Sequence[int] | None, *, max_cores: int | None,
                min_freq: float | None, max_freq: float | None,
                user_cores: int | None = None) -> None:
    """The grid options against the campaign, before any fit: UsageError when a frequency or
    core count is not positive, --user-cores is not a core count of the grid, or the limits
    leave no frequency or no core count (the checks :func:`phasekit.energy.choose.choose`
    makes after the fit)."""
    from phasekit.energy.fit import configuration_grid

    default_f, default_p = configuration_grid(configs)
    grid_f = tuple(frequencies) if frequencies else default_f
    grid_p = tuple(core_counts) if core_counts else default_p
    if any(not (math.isfinite(f) and f > 0) for f in grid_f):
        raise UsageError("--freqs: expected positive frequencies in GHz")
    if any(p < 1 for p in grid_p):
        raise UsageError("--cores: expected core counts of at least 1")
    if max_cores is not None and max_cores < 1:
        raise UsageError(f"--max-cores {max_cores}: expected at least 1")
    for option, value in (("--min-freq", min_freq), ("--max-freq", max_freq)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise UsageError(f"{option} {value:g}: expected a positive frequency in GHz")
    if user_cores is not None and user_cores not in grid_p:
        raise UsageError(f"--user-cores {user_cores}: not among the core counts "
                         f"{', '.join(map(str, sorted(set(grid_p))))}")
    low, high = min_freq or 0.0, max_freq or math.inf
    allowed_f = [f for f in grid_f if low <= f <= high] if grid_f else [None]
    allowed_p = [p for p in grid_p if p <= (max_cores or math.inf)]
    if not allowed_f or not allowed_p:
        raise UsageError("--max-cores, --min-freq, --max-freq: the limits leave no frequency "
                         "or no core count of the grid (frequencies "
                         f"{', '.join(f'{f:g}' for f in sorted(set(grid_f))) or 'uncontrolled'}"
                         f" GHz; cores {', '.join(map(str, sorted(set(grid_p))))})")


def _savings_text(predicted: dict[str, float], measured: dict[str, float], key: str) -> str:
    value = predicted.get(key, float("nan"))
    text = f"{value:+.1f}" if math.isfinite(value) else "n/a"
    if key in measured and math.isfinite(measured[key]):
        text += f" ({measured[key]:+.1f})"
    return text


def _read_fit(path: Path) -> EnergyFitResult:
    import json

    from phasekit.energy.fit import EnergyFitResult

    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not a JSON fit result: {exc}", path=str(path)) from None
    return EnergyFitResult.from_dict(data, source=str(path))


def _why(suggestion: Suggestion, members: int) -> str:
    """Why a configuration is suggested: the fit and refits predicting it beats the best
    measured, or near the minimum, or only uncertain."""
    if suggestion.improving_members:
        return f"may beat best measured ({suggestion.improving_members}/{members + 1} fits)"
    if suggestion.promising:
        return f"near best ({suggestion.near_optimal_members}/{members} refits)"
    return "uncertain"


def _check_percent(value: float, option: str) -> float:
    if not (math.isfinite(value) and value >= 0):
        raise UsageError(f"{option} {value:g}: expected a non-negative percentage")
    return value


@energy_app.command("choose", epilog=CHOOSE_EPILOG)
def choose(
    table: Annotated[Path, typer.Argument(
        metavar="TABLE", show_default=False,
        help="The campaign (or CSV) to fit and to take the grid of settings from.")],
    fit_file: Annotated[Path | None, typer.Option(
        "--fit", metavar="FIT.json", help="Use a saved `energy fit -o` result instead of "
        "fitting TABLE.")] = None,
    model: Annotated[str, typer.Option(
        "--model", metavar="pt|extended", help="Model to fit (without --fit).")] = "extended",
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
    freqs: FreqsOption = None,
    cores: CoresOption = None,
    max_time: Annotated[str | None, typer.Option(
        "--max-time", metavar="DURATION", show_default=False,
        help="Time limit per run (e.g. 90s, 2m).")] = None,
    max_cores: MaxCoresOption = None,
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
        help="A choice is unsure when its expected regret under the refits exceeds PCT %; "
             "then the next configurations to measure are suggested.")] = 2.0,
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
    from phasekit.cli.common import parse_duration, parse_list
    from phasekit.energy.fit import DESIGNS
    from phasekit.energy.models import get_model
    from phasekit.energy.workflow import fit_then_choose, untimed

    get_model(model)
    if design not in DESIGNS:
        raise UsageError(f"--design {design!r}: expected one of {', '.join(DESIGNS)}")
    _check_percent(tolerance, "--tolerance")
    check_outputs(output, plot)
    configs = load_table(table)
    if freqs and not configs["frequency_ghz"].notna().any():
        raise UsageError("--freqs: the campaign did not control the frequency, so the model "
                         "cannot predict other frequencies")
    asked = [name for text in inputs or () for name in text.split(",")] or None
    _inputs(configs, inputs)  # the option's own wording for an input that is not one
    frequencies = parse_list(freqs, "--freqs", float) if freqs else None
    core_counts = parse_list(cores, "--cores", int) if cores else None
    limit_s = parse_duration(max_time, "--max-time") if max_time else None
    _check_grid(configs, frequencies, core_counts, max_cores=max_cores, min_freq=min_freq,
                max_freq=max_freq, user_cores=user_cores)
    fitted_result = _read_fit(fit_file) if fit_file is not None else None
    if freqs and fitted_result is not None and not fitted_result.frequency_controlled:
        raise UsageError("--freqs: the fit did not control the frequency, so the model "
                         "cannot predict other frequencies")
    if limit_s is not None and (why := untimed(configs, fitted_result, train,
                                               table.name)) is not None:
        raise UsageError(f"--max-time {max_time}: {why}; there is no time to limit")
    with progress_reporter(not json_output, f"choosing for {table.name}") as progress:
        run = fit_then_choose(
            configs, fit=fitted_result, inputs=asked, frequencies=frequencies,
            cores=core_counts, max_time_s=limit_s, max_cores=max_cores,
            min_frequency_ghz=min_freq, max_frequency_ghz=max_freq, user_cores=user_cores,
            model=model, train=train, design=design, seed=seed, uncertainty=uncertainty,
            tolerance=tolerance, source=table, progress=progress)
    result, unsure = run.result, run.unsure
    notes, suggestions = result.notes, result.suggestions
    controlled = run.fitted.frequency_controlled
    data = result.saved_dict()

    def draw(path: Path) -> object:
        from phasekit.plot.energy import plot_choice

        return plot_choice(path, result)

    written = write_outputs(output, plot, lambda: data, draw)
    if json_output:
        print_json(data)
        return
    console = out_console()
    _print_choices(console, result, table.name, user_cores)
    for text in notes:
        console.print(f"note: {text}", soft_wrap=True)
    if unsure:
        names = ", ".join(c.input_label for c in unsure)
        console.print(f"not sure (expected regret under the refits > {tolerance:g} %) for "
                      f"input(s) {names}", soft_wrap=True)
        if suggestions:
            console.print("measure next (`phasekit energy suggest`): "
                          + "; ".join(_config_text(s.frequency_ghz, s.cores, s.input_label,
                                                   controlled) for s in suggestions),
                          soft_wrap=True)
    print_written(console, written)


def _config_text(f: float, p: int, label: str, controlled: bool) -> str:
    return f"input {label} " + (f"{f:g} GHz " if controlled else "") + f"{p} cores"


def _print_choices(console: Console, result: ChoiceResult, name: str,
                   user_cores: int | None) -> None:
    """The human view of a ChoiceResult: choices, savings, regret, uncertainty."""
    controlled = result.frequency_controlled
    policies = ("user",) if user_cores else ("worst", "random", "best")
    grid = (f"{len(result.frequencies_ghz)} frequencies x " if controlled else "") + \
        f"{len(result.cores)} core counts"
    out = Table(title=f"Minimum-energy configurations for {name} ({result.model} model, "
                      f"{grid})", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    with_regret = any(math.isfinite(c.regret) for c in result.choices)
    sureness = [c.uncertainty for c in result.choices if c.uncertainty is not None]
    level = f"{100 * sureness[0].level:.0f} % interval J" if sureness else ""
    timed = result.with_time
    columns = ["input", *(["GHz"] if controlled else []), "cores",
               *(["time s"] if timed else []), "predicted J", "measured J", "chosen by",
               *(["regret %"] if with_regret else []), *(["f* GHz"] if controlled else [])]
    at = f"{user_cores} cores" if user_cores else "the worst, a random, the best core count"
    saving = Table(title=(f"Savings vs ondemand (maximum frequency) at {at}" if controlled
                          else f"Savings vs {at}") + ", %: predicted (measured)",
                   title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    sure = Table(title=(f"How sure: prediction interval of the choice's energy; regret of "
                        f"the choice under {sureness[0].members} refits "
                        f"({sureness[0].method}), %") if sureness else "",
                 title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for table_, names in ((out, columns), (saving, ["input", *policies]),
                          (sure, ["input", level, "refits agreeing", "expected",
                                  "worst", "sure"])):
        for column in names:
            table_.add_column(column, justify="left" if column == "input" else "right",
                              no_wrap=True)
    for choice in result.choices:
        label = choice.input_label + (" (extrapolated)" if choice.extrapolated else "")
        best = choice.best
        if best is None:
            out.add_row(label, *["-"] * (len(columns) - 1))
            continue
        measured = (f"{best.measured_energy_j:.4g}" if math.isfinite(best.measured_energy_j)
                    else "-")
        u = choice.uncertainty
        out.add_row(label, *([f"{best.frequency_ghz:g}"] if controlled else []),
                    str(best.cores), *([f"{best.time_s:.4g}"] if timed else []),
                    f"{best.energy_j:.4g}", measured,
                    choice.basis,
                    *([f"{choice.regret:.1f}" if math.isfinite(choice.regret) else "-"]
                      if with_regret else []),
                    *([f"{choice.continuous_frequency_ghz:.3g}"] if controlled else []))
        saving.add_row(label, *(_savings_text(dict(choice.savings_predicted),
                                              dict(choice.savings_measured), p)
                                for p in policies))
        if u is not None:
            sure.add_row(label, f"{u.energy_low_j:.4g}-{u.energy_high_j:.4g}",
                         f"{100 * u.agreement:.0f} %", f"{u.expected_regret:.1f}",
                         f"{u.worst_regret:.1f}", "yes" if u.sure else "no")
    console.print(out)
    console.print("chosen by: the least energy, readings kept where measured and predicted "
                  "elsewhere, fell on a measured (or a predicted: model) configuration"
                  + ("; f* GHz: the frequency of least predicted energy at the chosen cores, "
                     "between the grid's frequencies" if controlled else ""), soft_wrap=True)
    if saving.row_count:
        console.print(saving)
    if sure.row_count:
        console.print(sure)
    if with_regret:
        console.print(f"regret (measured energy of the choice / the lowest measured - 1, where "
                      f"every feasible configuration was measured): mean "
                      f"{result.mean_regret:.1f} %, worst {result.worst_regret:.1f} %",
                      soft_wrap=True)
    if result.failed_readings or result.ruled_out:
        from phasekit.energy.fit import FAILED_RATIO

        console.print(f"{result.failed_readings} reading(s) at least {FAILED_RATIO:g}x below "
                      "the model (probable failed runs): not regret references; "
                      f"{result.ruled_out} configuration(s) the fit set aside as failed runs: "
                      "never chosen", soft_wrap=True)
    for choice in result.choices:
        if choice.best is None:
            console.print(f"input {choice.input_label}: {choice.reason}", soft_wrap=True)
    if len(result.choices) == 1 and result.choices[0].pareto:
        front = ", ".join((f"{c.frequency_ghz:g} GHz " if controlled else "")
                          + f"{c.cores}c: {c.time_s:.3g} s {c.energy_j:.4g} J"
                          for c in result.choices[0].pareto)
        console.print(f"Pareto frontier (time, energy), fastest first: {front}",
                      soft_wrap=True)
    if not controlled:
        console.print("note: the campaign did not control the frequency; the choice is over "
                      "cores at the frequency it ran at", soft_wrap=True)
    if not timed:
        console.print(f"note: {NO_TIME_CHOICE_NOTE}", soft_wrap=True)


SUGGEST_EPILOG = """\
Example:

\b
    phasekit energy suggest measured.csv --freqs 1.2,1.4,1.6,1.8,2.0,2.2 --cores 1,2,4,8,16,32
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
        "--model", metavar="pt|extended", help="Model to fit.")] = "extended",
    seed: Annotated[int, typer.Option("--seed", metavar="S", help="Random seed.")] = 0,
    inputs: Annotated[list[str] | None, typer.Option(
        "--input", metavar="LABEL", show_default=False,
        help="An input to suggest for (repeat, or a comma-separated list; default: every "
             "input of TABLE).")] = None,
    freqs: FreqsOption = None,
    cores: CoresOption = None,
    max_cores: MaxCoresOption = None,
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

    from phasekit.cli.common import parse_list
    from phasekit.energy.fit import DESIGNS, choose_training, configuration_grid
    from phasekit.energy.models import get_model
    from phasekit.energy.suggest import suggest as suggest_next
    from phasekit.energy.suggest import training_rows

    get_model(model)
    if design not in DESIGNS:
        raise UsageError(f"--design {design!r}: expected one of {', '.join(DESIGNS)}")
    if train is not None and fit_file is not None:
        raise UsageError("--train and --fit: give one of them")
    if k < 1:
        raise UsageError(f"-k {k}: expected at least 1")
    _check_percent(tolerance, "--tolerance")
    check_outputs(output)
    configs = load_table(table)
    numbers, labels = _inputs(configs, inputs)
    default_f, default_p = configuration_grid(configs)
    frequencies = parse_list(freqs, "--freqs", float) if freqs else default_f
    core_counts = parse_list(cores, "--cores", int) if cores else default_p
    _check_grid(configs, frequencies, core_counts, max_cores=max_cores, min_freq=min_freq,
                max_freq=max_freq)
    if fit_file is not None:
        fitted_result = _read_fit(fit_file)
        measured = training_rows(configs, fitted_result)
        if measured is None:
            raise UsageError(f"--fit {fit_file}: its training configurations are not all in "
                             f"{table}")
        model = fitted_result.model
    elif train is not None:
        if not 1 <= train < len(configs):
            raise UsageError(f"--train {train}: expected 1 to {len(configs) - 1} (the table "
                             f"has {len(configs)} configurations)")
        measured = configs.iloc[choose_training(configs, train, design=design, seed=seed,
                                                model=model)]
    else:
        measured = configs
    with progress_reporter(not json_output, f"suggesting for {table.name}") as progress:
        try:
            result = suggest_next(
                measured, k=k, frequencies_ghz=frequencies, cores=core_counts, inputs=numbers,
                labels=labels, model=model, max_cores=max_cores, min_frequency_ghz=min_freq,
                max_frequency_ghz=max_freq, tolerance=tolerance, seed=seed,
                reference=configs, progress=progress)
        except PhasekitError as exc:
            raise name_file(exc, table) from exc
    data = result.saved_dict()
    written = write_all(json_file(output, data))
    if json_output:
        print_json(data)
        return
    console = out_console()
    controlled = result.choice.frequency_controlled
    out = Table(title=f"Next {len(result.suggestions)} configurations to measure for "
                      f"{table.name} ({result.n_measured} measured, {result.n_candidates} "
                      f"not yet; {result.members} refits, {result.method})",
                title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("#", "input", *(["GHz"] if controlled else []), "cores", "energy J",
                   "interval J", "+/- %", "why"):
        out.add_column(column, justify="left" if column == "input" else "right", no_wrap=True)
    for rank, s in enumerate(result.suggestions, start=1):
        out.add_row(str(rank), s.input_label, *([f"{s.frequency_ghz:g}"] if controlled else []),
                    str(s.cores), f"{s.energy_j:.4g}",
                    f"{s.energy_low_j:.4g}-{s.energy_high_j:.4g}",
                    f"{100 * math.expm1(s.spread):.1f}",
                    _why(s, result.members))
    console.print(out)
    _print_choices(console, result.choice, table.name, None)
    if not result.suggestions:
        console.print("nothing to suggest: every configuration of the grid within the limits "
                      "is measured", soft_wrap=True)
    print_written(console, written)
