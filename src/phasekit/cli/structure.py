"""``phasekit structure``: the loop structure of an MPI application from its trace (Martínez Vera)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from phasekit.cli.common import (
    check_outputs,
    name_file,
    out_console,
    print_json,
    write_outputs,
)
from phasekit.cli.many import SchedulerOption, WorkersOption, finish_many, is_many, refuse_plot
from phasekit.cli.render import show
from phasekit.errors import PhasekitError
from phasekit.many import STRUCTURE_KIND, check_trace

EPILOG = """\
Example:

\b
    phasekit structure lulesh.prv
    phasekit structure run.prv.gz --plot timeline.png
    phasekit structure run.prv.gz --rank 0 --plot clusters.png --detail
    phasekit structure scorep-run/traces.otf2 --json > structure.json
    phasekit structure 'traces/*.prv.gz' --workers 2 --json > structures.json
"""

#: ``kind`` of the JSON of several traces (:class:`phasekit.many.MultiStructureResult`).
MANY_KIND = STRUCTURE_KIND


def structure(
    trace_paths: Annotated[list[Path], typer.Argument(
        metavar="TRACE", show_default=False,
        help="Paraver trace (.prv or .prv.gz, with its .pcf and .row beside it) or an OTF2 "
             "anchor file (.otf2). Several files, folders or quoted glob patterns: analyzed "
             "in parallel, one row each.")],
    rank: Annotated[int | None, typer.Option(
        "--rank", metavar="R", show_default=False,
        help="Analyze rank R only (0-based).")] = None,
    eps: Annotated[float, typer.Option(
        "--eps", metavar="E", help="DBSCAN radius in log10 of repetitions and of the mean "
        "time between them (Martínez Vera: 0.2).")] = 0.2,
    min_pts: Annotated[int, typer.Option(
        "--min-pts", metavar="N", help="DBSCAN minimum points (Martínez Vera: 1).")] = 1,
    min_explained: Annotated[float, typer.Option(
        "--min-explained", metavar="F", help="Drop repeated calls explaining less than this "
        "share of the run (δ = repetitions x mean time between them / run time).")] = 0.01,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"loops\": [{\"iterations\", \"iteration_time_s\", \"loops\", "
        "\"calls\", ...}], ...} as JSON.")] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE", help="Write the main loop's iterations per rank over time, "
        "their time in MPI shaded (with --detail: the clustering scatter).")] = None,
    detail: Annotated[bool, typer.Option(
        "--detail", help="With --plot: the clustering scatter (repetitions against mean "
        "time between repetitions, coloured by loop) instead of the timeline.")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the result as JSON.")] = None,
    full: Annotated[bool, typer.Option(
        "--full", help="Every call site in the pseudocode: by default a run of conditional "
        "blocks that each make one call of the same MPI function (a neighbour exchange) is "
        "one row.")] = False,
    workers: WorkersOption = None,
    scheduler: SchedulerOption = None,
) -> int:
    """Infer the loops of an MPI application from its execution trace and print pseudocode.

    MPI calls are proxies for iterations (Martínez Vera): each unique call (call type and call
    path) is reduced to its repetitions and mean time between repetitions, clustered into
    loops (DBSCAN), loops are nested where their timestamps show it, ranks are merged with
    IF rank in [...] blocks, and the result is printed as Martínez Vera's pseudocode table with
    E(TIME), E(SIZE) and E(IPC) per call.

    Several traces (files, folders, glob patterns) are analyzed in parallel: one row per
    trace; --json prints {"traces": [{"file", "loops": [...], ...}], "errors": [...]}. A
    trace that cannot be analyzed is one line on stderr; the others still are, and the exit
    code is then 5.
    """
    from phasekit.structure.api import figure, fit_width
    from phasekit.structure.api import structure as run_structure

    check_outputs(output, plot)
    if is_many(trace_paths):
        refuse_plot(plot, "trace")
        return structure_many(trace_paths, options={
            "rank": rank, "eps": eps, "min_pts": min_pts, "min_explained": min_explained},
            workers=workers, scheduler=scheduler, json_output=json_output, output=output)
    trace_path = trace_paths[0]
    check_trace(trace_path)
    try:
        result = run_structure(trace_path, rank=rank, eps=eps, min_pts=min_pts,
                               min_explained=min_explained)
    except PhasekitError as exc:
        raise name_file(exc, trace_path) from exc
    written = write_outputs(output, plot, result.saved_dict,
                            lambda path: figure(result, path, detail=detail))
    if json_output:
        print_json(result.to_dict(clusters=False))
        return 0
    show(fit_width(result.present(trace_path.name, full=full), out_console().width), written)
    return 0


def structure_many(paths: list[Path], *, options: dict[str, Any], workers: int | None,
                   scheduler: str | None, json_output: bool, output: Path | None) -> int:
    """``phasekit structure`` on several traces (:func:`phasekit.many.structure_many`);
    returns the exit code."""
    from phasekit.cli.common import progress_reporter
    from phasekit.many import structure_runs

    with progress_reporter(not json_output, "inferring the structure of") as progress:
        result, runs = structure_runs(paths, workers=workers, client=None, scheduler=scheduler,
                                      progress=progress, options=options)
    return finish_many(result, runs, output=output, json_output=json_output)
