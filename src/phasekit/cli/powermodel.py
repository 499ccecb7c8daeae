"""``phasekit powermodel``: server power models from hardware counters (Salinas Hilburg 2020, section 4.2).

A typer sub-app (:data:`powermodel_app`) with ``fit`` (a model of measured power on counters,
scored on held-out rows: by default the one of linear, partial least squares, grammatical
evolution and gradient boosting that validates best on the training rows) and ``eval`` (a
stored model on another table).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from phasekit.cli.common import (
    check_outputs,
    json_file,
    name_file,
    print_json,
    progress_reporter,
    read_csv_table,
    sub_app,
    write_all,
)
from phasekit.cli.render import show
from phasekit.errors import InputError, PhasekitError, UsageError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EVAL_EPILOG", "FIT_EPILOG", "evaluate", "fit", "load_counters", "powermodel_app"]

powermodel_app = sub_app(
    "powermodel",
    "Server power models from hardware counters (Salinas Hilburg 2020): linear, partial least "
    "squares, grammatical evolution, gradient boosting, or the best of them on validation "
    "rows (the average of those validation cannot tell apart).")

FIT_EPILOG = """\
Example:

\b
    phasekit powermodel fit counters.csv --target power_w
    phasekit powermodel fit counters.csv --target power_w --model boosting
    phasekit powermodel fit rapl.csv --target package_power --split random
    phasekit powermodel fit counters.csv --target power_w --model ge --seed 1 -o ge.json
    phasekit powermodel fit counters.csv --model pls --features C1,C2,C10,C11 --json
    phasekit powermodel fit server.csv --server --leakage leak.csv --fan fan.csv
    phasekit powermodel fit server.csv --server --leakage 15.2,-0.37,0.0063 --fan 0.1,0,0,1e-11
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


@powermodel_app.command("fit", epilog=FIT_EPILOG)
def fit(
    table: Annotated[Path, typer.Argument(
        metavar="TABLE.csv", show_default=False,
        help="CSV of counters (one column per counter, e.g. C1..C14) and measured power, one "
             "row per sample.")],
    target: Annotated[str, typer.Option(
        "--target", metavar="COLUMN", help="The measured power column (W).")] = "power_w",
    model: Annotated[str, typer.Option(
        "--model", metavar="auto|linear|pls|ge|boosting",
        help="auto: the one of the four others with the lowest RMSE on the last 20 % of the "
             "training rows (random ones with --split random), or the average of those "
             "within one standard error of it; GE's formula shown beside; "
             "linear: least squares with forward feature selection; pls: partial least "
             "squares on counters chosen by PCA (eq. 4.19); ge: grammatical evolution "
             "(eq. 4.20, Appendix A); boosting: scikit-learn's gradient-boosted trees.")
    ] = "auto",
    features: Annotated[str | None, typer.Option(
        "--features", metavar="C1,C2,...", show_default=False,
        help="Counter columns to use (default: every numeric column but the target, "
             "time-like columns (timestamp_s, time, t_s...), other power or energy readings, "
             "empty and constant columns; the output says what was left out).")] = None,
    seed: Annotated[int, typer.Option(
        "--seed", metavar="N", help="Random seed (train/test split, evolution).")] = 0,
    test_fraction: Annotated[float, typer.Option(
        "--test-fraction", metavar="F", help="Share of rows held out for testing.")] = 0.3,
    split: Annotated[str, typer.Option(
        "--split", metavar="time|random",
        help="time: test on the last rows in time (by a time/timestamp column, else the row "
             "order); random: a seeded random share.")] = "time",
    restarts: Annotated[int | None, typer.Option(
        "--restarts", metavar="N", show_default=False,
        help="--model ge or auto: independent runs of grammatical evolution; the model is "
             "the expression with the lowest validation RMSE.  [default: 3]")] = None,
    generations: Annotated[int | None, typer.Option(
        "--generations", metavar="N", show_default=False,
        help="--model ge or auto: generations of grammatical evolution.  [default: 1000]")
    ] = None,
    grammar: Annotated[str | None, typer.Option(
        "--grammar", metavar="thesis|extended", show_default=False,
        help="--model ge or auto: the thesis's Grammar 1, or extended with a linear term.  "
             "[default: thesis with --model ge, extended with auto]")
    ] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"method\", \"target\", \"features\", \"excluded\", "
        "\"expression\", \"split\", \"train\": {\"rmse\", \"mae\", \"mpe\"}, \"test\": {...}, "
        "\"mean_baseline\": {...}, \"choice\": {\"chosen\", \"validation_rmse\", \"test\", ...} "
        "(auto), \"formula\": {...} (GE beside another kind), \"model\": {...}} as JSON.")
    ] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FIT.json",
        help="Write the fit as JSON: its model, scores and split (what `powermodel eval` "
             "and `signature run --power-model` read).")
    ] = None,
    server: Annotated[bool, typer.Option(
        "--server", help="The whole-server breakdown (eq. 4.15): idle + leakage(T) + CPU "
        "dynamic + fan(rpm) + memory dynamic + disk; needs --leakage and --fan, and the "
        "table's temperature, fan-speed and memory-power columns.")] = False,
    leakage: Annotated[str | None, typer.Option(
        "--leakage", metavar="LEAK.csv|A0,A1,A2", show_default=False,
        help="--server: the leakage experiment (columns temp_c, leak_w), fitted by eq. 4.16, "
             "or its coefficients.")] = None,
    fan: Annotated[str | None, typer.Option(
        "--fan", metavar="FAN.csv|B0,B1,B2,B3", show_default=False,
        help="--server: the fan experiment (columns fan_rpm, fan_w), fitted by eq. 4.17, or "
             "its coefficients.")] = None,
    memory_column: Annotated[str, typer.Option(
        "--memory-column", metavar="COLUMN", help="--server: the memory (DIMM) power.")
    ] = "mem_dyn_w",
    idle_w: Annotated[float, typer.Option(
        "--idle-w", metavar="W", help="--server: idle power (the thesis's server: 50 W).")
    ] = 50.0,
    disk_w: Annotated[float, typer.Option(
        "--disk-w", metavar="W", help="--server: disk power (the thesis's: 16.75 W).")
    ] = 16.75,
) -> None:
    """Fit a power model of TARGET on counters and score it on held-out rows.

    The last rows in time (or, with --split random, a seeded random share) are the test set;
    RMSE and MAE in watts and MPE in percent are reported on the training and test rows,
    and the training mean's scores on the test rows for reference. By default (--model auto)
    every kind is fitted on the training rows but the last 20 % (or a random 20 % with
    --split random) and scored there: the lowest RMSE is the model, or the average of the
    kinds whose errors there are within one standard error of its (validation cannot tell
    them apart, and their average errs less); one line says which and why, a table gives
    every kind's validation and test RMSE, and GE's formula is printed when another kind
    won. Grammatical evolution prints the evolved expression in raw
    counter units and shows a progress bar. Rows with an empty cell in the target or a
    counter used are left out, and one line says how many. --restarts, --generations and
    --grammar go with --model ge or auto only.
    """
    from phasekit.powermodel import fit as fit_verb

    names = None
    if features is not None:
        names = [f.strip() for f in features.split(",") if f.strip()]
        if not names:
            raise UsageError(f"--features {features!r}: expected column names separated by "
                             "commas")
    check_outputs(output)
    breakdown = _server_options(server, leakage, fan, memory_column, idle_w, disk_w)
    frame = load_counters(table)
    evolution = {name: value for name, value in (("generations", generations),
                                                 ("grammar", grammar), ("restarts", restarts))
                 if value is not None}
    try:
        with progress_reporter(model in ("ge", "auto") and not json_output,
                               f"evolving a power model of {table.name}") as progress:
            result = fit_verb(frame, target=target, model=model,
                              features=names, seed=seed, test_fraction=test_fraction,
                              split=split, source=str(table), progress=progress,
                              server=breakdown, **evolution)
    except PhasekitError as exc:
        raise name_file(exc, table) from exc
    written = write_all(json_file(output, result.saved_dict()))
    if json_output:
        print_json(result.to_dict())
        return
    show(result.present(table.name), written)


def _coefficients_or_fit(value: str, option: str, x: str, y: str, degree: int
                         ) -> tuple[float, ...]:
    """Polynomial coefficients given as numbers (A0,A1,...), or fitted on a CSV of (x, y)."""
    from phasekit.powermodel import fit_polynomial

    try:
        return tuple(float(v) for v in value.split(","))
    except ValueError:
        pass
    path = Path(value)
    if not path.is_file():
        raise UsageError(f"{option} {value!r}: expected a CSV file with columns {x}, {y} or "
                         "coefficients separated by commas")
    table = load_counters(path)
    for column in (x, y):
        if column not in table.columns:
            raise InputError(f"no column {column!r} (expected {x} and {y})", path=str(path))
    try:
        return fit_polynomial(table[x].to_numpy(float), table[y].to_numpy(float), degree)
    except PhasekitError as exc:
        raise name_file(exc, path) from exc
    except (ValueError, TypeError) as exc:
        raise InputError(f"cannot fit the polynomial of {y} on {x}: {exc}",
                         path=str(path)) from None


def _server_options(server: bool, leakage: str | None, fan: str | None, memory: str,
                    idle_w: float, disk_w: float) -> dict[str, Any] | None:
    if not server:
        if leakage is not None or fan is not None:
            raise UsageError("--leakage and --fan go with --server")
        return None
    if leakage is None or fan is None:
        raise UsageError("--server needs --leakage (LEAK.csv or A0,A1,A2) and --fan "
                         "(FAN.csv or B0,B1,B2,B3)")
    return {"leakage": _coefficients_or_fit(leakage, "--leakage", "temp_c", "leak_w", 2),
            "fan": _coefficients_or_fit(fan, "--fan", "fan_rpm", "fan_w", 3),
            "mem": memory, "idle_w": idle_w, "disk_w": disk_w}


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
    from phasekit.powermodel import evaluate as evaluate_model
    from phasekit.powermodel import read_model

    power_model = read_model(model_file)
    frame = load_counters(table)
    try:
        result = evaluate_model(power_model, frame, target=target, source=str(table))
    except PhasekitError as exc:
        raise name_file(exc, table) from exc
    if json_output:
        print_json(result.to_dict())
        return
    show(result.present(table.name))
