"""``phasekit powermodel``: server power models from hardware counters (seed 004, section 4.2).

A typer sub-app (:data:`powermodel_app`) with ``fit`` (a linear, partial-least-squares or
grammatical-evolution model of measured power on counters, scored on held-out rows) and
``eval`` (a stored model on another table).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from phasekit.cli.common import (
    check_output,
    name_file,
    out_console,
    print_json,
    progress_reporter,
    read_csv_table,
    sub_app,
    write_json,
)
from phasekit.errors import InputError, PhasekitError, UsageError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EVAL_EPILOG", "FIT_EPILOG", "evaluate", "fit", "load_counters", "powermodel_app"]

powermodel_app = sub_app(
    "powermodel",
    "Server power models from hardware counters (seed 004): linear, partial least "
    "squares, grammatical evolution.")

FIT_EPILOG = """\
Example:

\b
    phasekit powermodel fit counters.csv --target power_w
    phasekit powermodel fit counters.csv --target power_w --model ge --seed 1 -o ge.json
    phasekit powermodel fit counters.csv --model pls --features C1,C2,C10,C11 --json
"""

EVAL_EPILOG = """\
Example:

\b
    phasekit powermodel eval ge.json other-counters.csv
    phasekit powermodel eval ge.json other-counters.csv --json
"""


def load_counters(path: Path) -> pd.DataFrame:
    """A CSV (or TSV, optionally gzipped) of counters and measured power, one row per sample;
    errors name the file."""
    table = read_csv_table(path)
    if len(table) == 0:
        raise InputError("the table has no rows", path=str(path))
    return table


def _number(value: float, unit: str = "") -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:.3g}{unit}" if abs(value) < 1000 else f"{value:.0f}{unit}"


def _scores_table(title: str, rows: list[tuple[str, int, dict[str, float]]]) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("rows", "n", "RMSE (W)", "MAE (W)", "MPE"):
        table.add_column(column, justify="left" if column == "rows" else "right",
                         no_wrap=True)
    for name, n, scores in rows:
        table.add_row(name, str(n), _number(scores["rmse"]), _number(scores["mae"]),
                      _number(scores["mpe"], "%"))
    return table


@powermodel_app.command("fit", epilog=FIT_EPILOG)
def fit(
    table: Annotated[Path, typer.Argument(
        metavar="TABLE.csv", show_default=False,
        help="CSV of counters (one column per counter, e.g. C1..C14) and measured power, one "
             "row per sample.")],
    target: Annotated[str, typer.Option(
        "--target", metavar="COLUMN", help="The measured power column (W).")] = "power_w",
    model: Annotated[str, typer.Option(
        "--model", metavar="linear|pls|ge",
        help="linear: least squares with forward feature selection; pls: partial least "
             "squares on counters chosen by PCA (eq. 4.19); ge: grammatical evolution "
             "(eq. 4.20, Appendix A).")] = "linear",
    features: Annotated[str | None, typer.Option(
        "--features", metavar="C1,C2,...", show_default=False,
        help="Counter columns to use (default: every numeric column but the target and "
             "time-like columns).")] = None,
    seed: Annotated[int, typer.Option(
        "--seed", metavar="N", help="Random seed (train/test split, evolution).")] = 0,
    test_fraction: Annotated[float, typer.Option(
        "--test-fraction", metavar="F", help="Share of rows held out for testing.")] = 0.3,
    generations: Annotated[int, typer.Option(
        "--generations", metavar="N", help="Generations of grammatical evolution (ge).")
    ] = 1000,
    grammar: Annotated[str, typer.Option(
        "--grammar", metavar="thesis|extended",
        help="ge grammar: the thesis's Grammar 1, or extended with a linear term.")
    ] = "thesis",
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"method\", \"target\", \"features\", \"expression\", \"train\": "
        "{\"rmse\", \"mae\", \"mpe\"}, \"test\": {...}, \"model\": {...}} as JSON.")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="MODEL.json",
        help="Write the fitted model (for `powermodel eval` and the signature pipeline).")
    ] = None,
) -> None:
    """Fit a power model of TARGET on counters and score it on held-out rows.

    The rows are split at random (seeded) into training and test sets; RMSE and MAE in
    watts and MPE in percent are reported on both. Grammatical evolution prints the evolved
    expression in raw counter units and shows a progress bar.
    """
    from phasekit.signature.powermodels import MODELS, fit_power_model

    if model not in MODELS:
        raise UsageError(f"--model {model!r}: expected one of {', '.join(MODELS)}")
    if not 0 <= test_fraction < 1:
        raise UsageError(f"--test-fraction {test_fraction}: expected 0 <= F < 1")
    if generations < 1:
        raise UsageError(f"--generations {generations}: expected a positive number")
    if grammar not in ("thesis", "extended"):
        raise UsageError(f"--grammar {grammar!r}: expected thesis or extended")
    names = None
    if features is not None:
        names = [f.strip() for f in features.split(",") if f.strip()]
        if not names:
            raise UsageError(f"--features {features!r}: expected column names separated by "
                             "commas")
    check_output(output, "--output")
    frame = load_counters(table)
    options: dict[str, Any] = {"generations": generations, "grammar": grammar} \
        if model == "ge" else {}
    try:
        with progress_reporter(model == "ge" and not json_output,
                               f"evolving a power model of {table.name}") as progress:
            result = fit_power_model(frame, target=target, model=model, features=names,
                                     seed=seed, test_fraction=test_fraction,
                                     source=str(table), progress=progress, **options)
    except PhasekitError as exc:
        raise name_file(exc, table) from exc
    if output is not None:
        write_json(output, result.model.to_dict())
    if json_output:
        print_json(result.to_dict())
        return
    console = out_console()
    console.print(_scores_table(
        f"Power model ({model}) of {target} in {table.name}",
        [("train", result.n_train, dict(result.train)),
         ("test", result.n_test, dict(result.test))]))
    console.print(f"model: {result.text}", soft_wrap=True)
    console.print(f"counters: {', '.join(result.model.features)}; fitted in "
                  f"{result.fit_time_s:.2f} s (seed {seed})", soft_wrap=True)
    if output is not None:
        console.print(f"wrote model: {output}", soft_wrap=True)


@powermodel_app.command("eval", epilog=EVAL_EPILOG)
def evaluate(
    model_file: Annotated[Path, typer.Argument(
        metavar="MODEL.json", show_default=False,
        help="A model written by `powermodel fit -o`.")],
    table: Annotated[Path, typer.Argument(
        metavar="TABLE.csv", show_default=False,
        help="CSV with the model's counter columns and the measured power.")],
    target: Annotated[str | None, typer.Option(
        "--target", metavar="COLUMN", show_default=False,
        help="The measured power column (default: the model's target).")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"method\", \"target\", \"n\", \"rmse\", \"mae\", \"mpe\", ...} "
        "as JSON.")] = False,
) -> None:
    """Score a stored power model on another table: RMSE, MAE (W) and MPE (%)."""
    from phasekit.signature.powermodels import evaluate_power_model, power_model_from_dict

    if not model_file.is_file():
        raise InputError("no such file", path=str(model_file))
    try:
        data = json.loads(model_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not a JSON power model: {exc}", path=str(model_file)) from None
    power_model = power_model_from_dict(data, str(model_file))
    frame = load_counters(table)
    try:
        result = evaluate_power_model(power_model, frame, target=target, source=str(table))
    except PhasekitError as exc:
        raise name_file(exc, table) from exc
    if json_output:
        print_json(result.to_dict())
        return
    console = out_console()
    console.print(_scores_table(
        f"Power model ({result.method}) of {result.target} on {table.name}",
        [("all", result.n, dict(result.scores))]))
    console.print(f"mean power: predicted {result.predicted_mean_w:.4g} W, measured "
                  f"{result.measured_mean_w:.4g} W", soft_wrap=True)
