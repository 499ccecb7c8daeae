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

from phasekit.cli.common import check_output, name_file, out_console, print_json, write_json
from phasekit.errors import InputError, PhasekitError, UsageError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FIT_EPILOG", "energy_app", "fit", "load_table"]

energy_app = typer.Typer(
    name="energy",
    help="Energy of a program over frequency, cores and input (seed 002): fit models.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

FIT_EPILOG = """\
Example:

\b
    phasekit energy fit campaign.json
    phasekit energy fit campaign.json --train 10 --seed 1
    phasekit energy fit pascal-output.json --train 10 --design doptimal --model seed
    phasekit energy fit runs.csv --train 10 --json > fit.json
"""

_CSV_SUFFIXES = (".csv", ".tsv", ".txt")


def load_table(path: Path) -> pd.DataFrame:
    """One row per configuration (:func:`phasekit.energy.fit.configurations`) from ``path``.

    A ``.csv``/``.tsv`` (optionally ``.gz``) is a table with columns frequency_ghz, cores,
    input, energy_j and optionally time_s; anything else is read as a campaign (our JSON or
    JSON lines, or PaScal Analyzer JSON). Errors name the file.
    """
    import pandas as pd

    from phasekit.campaign import read_campaign
    from phasekit.energy.fit import configurations

    source = str(path)
    name = path.name.lower().removesuffix(".gz")
    try:
        if name.endswith(_CSV_SUFFIXES):
            if not path.is_file():
                raise InputError("no such file", path=source)
            try:
                table = pd.read_csv(path, sep=None, engine="python")
            except (ValueError, UnicodeDecodeError, pd.errors.ParserError,
                    pd.errors.EmptyDataError) as exc:
                raise InputError(f"not a readable CSV table: {exc}", path=source) from None
            table.columns = [str(c).strip() for c in table.columns]
            return configurations(table, source=source)
        campaign = read_campaign(path)
        return configurations(campaign, source=source)
    except PhasekitError as exc:
        raise name_file(exc, path) from exc


def _pct(value: float) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.2f}%"


@energy_app.command("fit", epilog=FIT_EPILOG)
def fit(
    table: Annotated[Path, typer.Argument(
        metavar="TABLE", show_default=False,
        help="Campaign JSON (phasekit's, a .jsonl log or PaScal Analyzer's) or a CSV with "
             "columns frequency_ghz, cores, input, energy_j and optionally time_s.")],
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
