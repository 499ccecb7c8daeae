"""``phasekit phases``: phase changes and recurring phases of a profile (Tsafack Chetsa et al.)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from phasekit.cli import prometheus as prom
from phasekit.cli.common import (
    BinOption,
    PeriodOption,
    RankOption,
    check_outputs,
    check_trace_options,
    load_profile,
    name_file,
    print_json,
    progress_reporter,
    with_binning_note,
    write_outputs,
)
from phasekit.cli.many import SchedulerOption, WorkersOption, finish_many, is_many, refuse_plot
from phasekit.cli.render import show
from phasekit.errors import PhasekitError
from phasekit.many import PHASES_KIND

try:  # typer 0.28 carries its own copy of click
    from typer._click.types import StringParamType
except ImportError:  # older typer: click itself
    from click.types import StringParamType

EPILOG = """\
Example:

\b
    phasekit phases run.parquet
    phasekit phases run.parquet --method ev-literal --threshold 0.15 --smooth 3 --plot phases.png
    phasekit phases perf.csv --json > phases.json
    phasekit phases lulesh.prv.gz --bin 0.01           (a trace's counters, binned)
    phasekit phases runs/job42/ --workers 4 --json > phases.json
"""

#: ``kind`` of the JSON of several profiles (:class:`phasekit.many.MultiPhaseResult`).
MANY_KIND = PHASES_KIND


class MethodNames(StringParamType):
    """``--method``'s values, the registered phase detectors (:data:`phasekit.phases.DETECTORS`):
    ``auto`` first where it is one, ``online`` ones only where they must stream. Read when the
    help is shown, not when the command is built (the detectors import numba); the value goes
    to the library as given, which names the registered ones when it is not one of them."""

    name = "method"

    def __init__(self, *, auto: bool = False, online: bool = False) -> None:
        self.auto = auto
        self.online = online

    def get_metavar(self, param: Any, ctx: Any = None) -> str:
        from phasekit.phases.api import detectors

        names = detectors(online=self.online)
        return "|".join(["auto", *names] if self.auto else names)


def phases(
    profiles: Annotated[list[Path], typer.Argument(
        metavar="PROFILE", show_default=False,
        help="Profile: CSV, Parquet, a recording (.arrows), perf stat or LIKWID output; - "
             "reads a CSV profile from stdin; a trace (Paraver .prv/.prv.gz, OTF2 .otf2): its "
             "counters binned (--bin). Several files, folders or quoted glob patterns: "
             "analyzed in parallel, one row each.")],
    method: Annotated[str, typer.Option(
        "--method", click_type=MethodNames(auto=True),
        help="auto (default): shape for one series, ev otherwise; ev: online, robust to "
             "within-phase variability; ev-literal: Tsafack Chetsa et al.'s Algorithm 1 exactly; shape: "
             "changes of shape in one series (ClaSP-style, offline).")] = "auto",
    threshold: Annotated[float | None, typer.Option(
        "--threshold", metavar="T", show_default=False,
        help="ev-literal: share of the running maximum distance (default 0.15, Tsafack Chetsa et al. III-B); "
             "ev: standardized deviation from the phase (default 3).")
    ] = None,
    smooth: Annotated[int, typer.Option(
        "--smooth", metavar="N", help="Sliding-average window in vectors (1: none).")] = 1,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", metavar="NAME", help="A metric of the execution vectors (a sensor, "
        "Tsafack Chetsa et al.); repeat. Default: every metric that varies (ev-literal: the paper's sensors "
        "that the profile has).")
    ] = None,
    sensor: Annotated[list[str] | None, typer.Option(
        "--sensor", metavar="NAME", hidden=True, help="The old name of --metric.")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"phases\": [{\"start_s\", \"end_s\", \"id\", ...}]} as JSON.")
    ] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE", help="Write the figure (phases, sensors, distance and "
        "threshold, identified phases: Tsafack Chetsa et al.'s Fig. 1 and 5).")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the result as JSON.")] = None,
    workers: WorkersOption = None,
    scheduler: SchedulerOption = None,
    period: PeriodOption = None,
    bin_s: BinOption = None,
    rank: RankOption = None,
    query: prom.QueryOption = None,
    start: prom.StartOption = None,
    end: prom.EndOption = "now",
    step: prom.StepOption = "5s",
    label: prom.LabelOption = "instance",
) -> int:
    """Detect phase changes from execution vectors and identify recurring phases.

    Execution vectors (Tsafack Chetsa et al.): instructions, LLC references and misses, branches and
    branch misses per cycle, network and disk bytes; without a cycles metric, per second.
    Prints one row per phase in time order: start, end, duration, id (recurring phases
    share an id), when it was detected, and its representative vector.

    Several profiles (files, folders, glob patterns) are analyzed in parallel: one row per
    profile; --json prints {"nodes": [{"node", "file", "phases": [...], ...}], "errors":
    [...]}. A file that cannot be analyzed is one line on stderr; the others still are, and
    the exit code is then 5.
    """
    from phasekit.phases.api import figure
    from phasekit.phases.api import phases as run_phases

    sensor = [*(metric or ()), *(sensor or ())]  # --sensor: the old name of --metric
    check_outputs(output, plot)
    profiles = prom.expand(profiles, query=query, start=start, end=end, step=step,
                           label=label, quiet=json_output)
    if is_many(profiles):
        check_trace_options(bin_s, rank)
        refuse_plot(plot, "profile")
        return phases_many(profiles, options={
            "method": method, "threshold": threshold, "smooth": smooth,
            "metrics": list(sensor) if sensor else None}, workers=workers,
            scheduler=scheduler, json_output=json_output, output=output, period=period)
    profile = profiles[0]
    data = load_profile(profile, period, bin_s, rank)
    try:
        with progress_reporter(not json_output, f"phases of {profile.name}") as progress:
            result = run_phases(data, method=method, threshold=threshold, smooth=smooth,
                                metrics=list(sensor) if sensor else None, progress=progress)
    except PhasekitError as exc:
        raise name_file(exc, profile) from exc
    written = write_outputs(output, plot, result.saved_dict,
                            lambda path: figure(data, result, path))
    if json_output:
        print_json(result.to_dict())
        return 0
    show(with_binning_note(result.present(profile.name), data), written)
    return 0


def phases_many(paths: list[Path], *, options: dict[str, Any], workers: int | None,
                scheduler: str | None, json_output: bool, output: Path | None,
                period: float | None = None) -> int:
    """``phasekit phases`` on several profiles (:func:`phasekit.many.phases_many`); returns
    the exit code."""
    from phasekit.many import phases_runs

    with progress_reporter(not json_output, "detecting the phases of") as progress:
        result, runs = phases_runs(paths, workers=workers, client=None, scheduler=scheduler,
                                   progress=progress, options=options, period=period)
    return finish_many(result, runs, output=output, json_output=json_output)
