"""``phasekit energy``: energy models over frequency, cores and input (seed 002, chapter 4).

A small typer sub-app (:data:`energy_app`); ``fit`` lives here, other subcommands are added to
the same app by their own modules. :func:`load_table` (a campaign JSON, JSON-lines log,
PaScal Analyzer JSON or CSV into one row per configuration) is shared with them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.table import Table

from phasekit.cli.common import (
    check_output,
    is_csv,
    name_file,
    out_console,
    print_json,
    print_written,
    read_csv_table,
    sub_app,
    write_json,
    write_outputs,
)
from phasekit.errors import InputError, PhasekitError, UsageError

if TYPE_CHECKING:
    import pandas as pd

    from phasekit.campaign import Campaign

__all__ = ["CHOOSE_EPILOG", "FIT_EPILOG", "choose", "energy_app", "fit", "load_runs",
           "load_table"]

energy_app = sub_app(
    "energy",
    "Energy of a program over frequency, cores and input (seed 002): fit models, choose "
    "configurations, divide into phases, plot.")

FIT_EPILOG = """\
Example:

\b
    phasekit energy fit campaign.json
    phasekit energy fit campaign.json --train 10 --seed 1
    phasekit energy fit pascal-output.json --train 10 --design doptimal --model seed
    phasekit energy fit runs.csv --train 10 --json > fit.json
"""


def load_runs(path: Path) -> Campaign | pd.DataFrame:
    """A campaign (our JSON or JSON lines, PaScal Analyzer JSON) or, for a ``.csv``/``.tsv``
    (optionally ``.gz``), its tidy table (columns as :meth:`Campaign.table`). Errors name the
    file."""
    from phasekit.campaign import read_campaign

    if is_csv(path):
        return read_csv_table(path)
    try:
        return read_campaign(path)
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
        "--model", metavar="seed|extended",
        help="seed: the thesis's E = P T (eqs. 4.14-4.22); extended: adds a "
             "frequency-insensitive share, contention, an input-dependent serial share and "
             "per-input deviations.")] = "extended",
    train: Annotated[int | None, typer.Option(
        "--train", metavar="N", show_default=False,
        help="Fit on N configurations and evaluate on all the others (the thesis: 10). "
             "Default: fit on every configuration.")] = None,
    seed: Annotated[int, typer.Option(
        "--seed", metavar="S", help="Random seed (random design, multi-start, baselines).")] = 0,
    design: Annotated[str, typer.Option(
        "--design", metavar="random|maximin|doptimal",
        help="How the N training configurations are chosen: random (the thesis), maximin "
             "(space filling) or doptimal (D-optimal for the model; both balanced over "
             "inputs).")] = "random",
    baselines: Annotated[bool, typer.Option(
        "--baselines/--no-baselines",
        help="Also train SVR, MLP, KNN and a decision tree on the same points (with "
             "--train).")] = True,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"model\", \"params\", \"n_train\", \"mpe_train\", "
        "\"mpe_holdout\", \"baselines\", ...} as JSON (MPE in percent).")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the result as JSON.")] = None,
) -> None:
    """Fit an energy model E(f, p, N) to measured configurations and report its error.

    Bounded nonlinear least squares on relative error, multi-start; time and energy together
    when times are measured. With --train N the model learns from N configurations and is
    scored on every other one: mean percentage error (seed 002, eq. 4.23) of the model, of
    the other model and of the machine-learning baselines trained on the same points.
    """
    from phasekit.energy.fit import BASELINES, DESIGNS, fit_energy
    from phasekit.energy.models import get_model

    get_model(model)
    if design not in DESIGNS:
        raise UsageError(f"--design {design!r}: expected one of {', '.join(DESIGNS)}")
    check_output(output, "--output")
    configs = load_table(table)
    try:
        result = fit_energy(configs, model=model, n_train=train, design=design, seed=seed,
                            baselines=BASELINES if baselines else ())
    except PhasekitError as exc:
        raise name_file(exc, table) from exc
    data = result.to_dict()
    if output is not None:
        write_json(output, data)
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
    params = ", ".join(f"{k} = {v:.4g}" for k, v in result.params.items())
    console.print(f"parameters ({result.model}): {params}", soft_wrap=True)
    if result.with_time:
        console.print(f"time MPE: train {_pct(result.mpe_time_train)}, holdout "
                      f"{_pct(result.mpe_time_holdout)}; fit in {result.fit_time_s:.2f} s",
                      soft_wrap=True)
    if result.explanation:
        console.print(f"note: {result.explanation}", soft_wrap=True)
    if output is not None:
        console.print(f"wrote result: {output}", soft_wrap=True)


CHOOSE_EPILOG = """\
Example:

\b
    phasekit energy choose campaign.json
    phasekit energy choose campaign.json --input large --max-time 30s --max-cores 16
    phasekit energy choose campaign.json --fit fit.json --user-cores 32 --json
    phasekit energy choose campaign.json --freqs 1.2,1.6,2.0,2.4 --cores 1,2,4,8,16,32
"""


def _inputs(configs: pd.DataFrame, asked: str | None) -> tuple[list[float], dict[float, str]]:
    """The input numbers asked for (labels of the campaign, or numbers), and their labels."""
    labels = dict(zip(configs["input"].astype(float), configs["input_label"].astype(str),
                      strict=True))
    if not asked:
        return sorted(labels), labels
    by_label = {v: k for k, v in labels.items()}
    numbers = []
    for item in asked.split(","):
        item = item.strip()
        if item in by_label:
            numbers.append(by_label[item])
            continue
        try:
            number = float(item)
        except ValueError:
            raise UsageError(f"--input {item!r}: not an input of the campaign (it has "
                             f"{', '.join(by_label)}) and not an input number") from None
        if not number > 0:
            raise UsageError(f"--input {item!r}: expected a positive input number")
        numbers.append(number)
        labels.setdefault(number, item)
    return numbers, labels


def _savings_text(predicted: dict[str, float], measured: dict[str, float], key: str) -> str:
    value = predicted.get(key, float("nan"))
    text = f"{value:+.1f}" if math.isfinite(value) else "n/a"
    if key in measured and math.isfinite(measured[key]):
        text += f" ({measured[key]:+.1f})"
    return text


@energy_app.command("choose", epilog=CHOOSE_EPILOG)
def choose(
    table: Annotated[Path, typer.Argument(
        metavar="TABLE", show_default=False,
        help="The campaign (or CSV) to fit and to take the grid of settings from.")],
    fit_file: Annotated[Path | None, typer.Option(
        "--fit", metavar="FIT.json", help="Use a saved `energy fit -o` result instead of "
        "fitting TABLE.")] = None,
    model: Annotated[str, typer.Option(
        "--model", metavar="seed|extended", help="Model to fit (without --fit).")] = "extended",
    train: Annotated[int | None, typer.Option(
        "--train", metavar="N", show_default=False,
        help="Fit on N configurations only (default: all of TABLE).")] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="S", help="Random seed.")] = 0,
    design: Annotated[str, typer.Option(
        "--design", metavar="random|maximin|doptimal",
        help="How the N training configurations are chosen.")] = "random",
    inputs: Annotated[str | None, typer.Option(
        "--input", metavar="LABEL,...", show_default=False,
        help="Inputs to choose for: the campaign's labels, or input numbers (a number it did "
             "not measure is extrapolated). Default: every input of TABLE.")] = None,
    freqs: Annotated[str | None, typer.Option(
        "--freqs", metavar="GHZ,...", show_default=False,
        help="The machine's frequencies (default: those in TABLE).")] = None,
    cores: Annotated[str | None, typer.Option(
        "--cores", metavar="1,2,...", show_default=False,
        help="The core counts to consider (default: those in TABLE).")] = None,
    max_time: Annotated[str | None, typer.Option(
        "--max-time", metavar="DURATION", show_default=False,
        help="Time limit per run (e.g. 90s, 2m).")] = None,
    max_cores: Annotated[int | None, typer.Option(
        "--max-cores", metavar="P", show_default=False, help="Use at most P cores.")] = None,
    min_freq: Annotated[float | None, typer.Option(
        "--min-freq", metavar="GHZ", show_default=False, help="Lowest frequency allowed.")
                        ] = None,
    max_freq: Annotated[float | None, typer.Option(
        "--max-freq", metavar="GHZ", show_default=False, help="Highest frequency allowed.")
                        ] = None,
    user_cores: Annotated[int | None, typer.Option(
        "--user-cores", metavar="P", show_default=False,
        help="The core count you would run with: the baseline is ondemand (maximum "
             "frequency) at P cores. Default: the worst, random and best core count.")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print the choices (best configuration, Pareto frontier, savings) as "
        "JSON.")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the result as JSON.")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE", help="Figure: predicted energy against time per input, the "
        "Pareto frontier, the choice and the ondemand baseline (.png, .svg, .pdf).")] = None,
) -> None:
    """Choose the minimum-energy configuration (frequency, cores) for each input.

    The model (fitted on TABLE, or --fit) predicts time and energy over the grid of
    frequencies x core counts; the minimum under the limits is chosen (seed 002, section
    4.12), with the Pareto frontier of (time, energy) and the savings (eq. 4.24) against
    Linux's ondemand governor at the maximum frequency: predicted, and measured in
    parentheses where the campaign ran every configuration involved.
    """
    import json

    import numpy as np

    from phasekit.cli.common import parse_duration, parse_list
    from phasekit.energy.choose import choose as choose_configurations
    from phasekit.energy.fit import DESIGNS, EnergyFitResult, fit_energy
    from phasekit.energy.models import get_model

    get_model(model)
    if design not in DESIGNS:
        raise UsageError(f"--design {design!r}: expected one of {', '.join(DESIGNS)}")
    check_output(output, "--output")
    check_output(plot, "--plot")
    configs = load_table(table)
    if fit_file is not None:
        try:
            data = json.loads(fit_file.read_text())
        except FileNotFoundError:
            raise InputError("no such file", path=str(fit_file)) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"not a JSON fit result: {exc}", path=str(fit_file)) from None
        fitted_result = EnergyFitResult.from_dict(data, source=str(fit_file))
    else:
        try:
            fitted_result = fit_energy(configs, model=model, n_train=train, design=design,
                                       seed=seed, baselines=(), compare=False)
        except PhasekitError as exc:
            raise name_file(exc, table) from exc
    controlled = fitted_result.frequency_controlled
    if freqs and not controlled:
        raise UsageError("--freqs: the campaign did not control the frequency, so the model "
                         "cannot predict other frequencies")
    numbers, labels = _inputs(configs, inputs)
    frequencies = (parse_list(freqs, "--freqs", float) if freqs
                   else tuple(np.unique(configs["frequency_ghz"].dropna())))
    core_counts = (parse_list(cores, "--cores", int) if cores
                   else tuple(int(c) for c in np.unique(configs["cores"])))
    result = choose_configurations(
        fitted_result.fitted, numbers, frequencies_ghz=frequencies, cores=core_counts,
        max_time_s=parse_duration(max_time, "--max-time") if max_time else None,
        max_cores=max_cores, min_frequency_ghz=min_freq, max_frequency_ghz=max_freq,
        user_cores=user_cores, measured=configs, labels=labels, frequency_controlled=controlled,
        known_inputs=tuple(np.unique(configs["input"])))
    data = result.to_dict()

    def draw(path: Path) -> object:
        from phasekit.plot.energy import plot_choice

        return plot_choice(path, result)

    written = write_outputs(output, plot, lambda: data, draw)
    if json_output:
        print_json(data)
        return
    console = out_console()
    policies = ("user",) if user_cores else ("worst", "random", "best")
    grid = (f"{len(result.frequencies_ghz)} frequencies x " if controlled else "") + \
        f"{len(result.cores)} core counts"
    out = Table(title=f"Minimum-energy configurations for {table.name} ({result.model} model, "
                      f"{grid})", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    columns = ["input", *(["GHz"] if controlled else []), "cores", "time s", "energy J",
               "measured J", *(["f* GHz"] if controlled else [])]
    at = f"{user_cores} cores" if user_cores else "the worst, a random, the best core count"
    saving = Table(title=(f"Savings vs ondemand (maximum frequency) at {at}" if controlled
                          else f"Savings vs {at}") + ", %: predicted (measured)",
                   title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for table_, names in ((out, columns), (saving, ["input", *policies])):
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
        out.add_row(label, *([f"{best.frequency_ghz:g}"] if controlled else []),
                    str(best.cores), f"{best.time_s:.4g}", f"{best.energy_j:.4g}", measured,
                    *([f"{choice.continuous_frequency_ghz:.3g}"] if controlled else []))
        saving.add_row(label, *(_savings_text(dict(choice.savings_predicted),
                                              dict(choice.savings_measured), p)
                                for p in policies))
    console.print(out)
    if saving.row_count:
        console.print(saving)
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
    print_written(console, written)
