"""``phasekit analyze``: periodicities and representative patterns of a profile (Phase-TA)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from phasekit.cli import prometheus as prom
from phasekit.cli.common import (
    BinOption,
    PeriodOption,
    RankOption,
    check_metrics,
    check_outputs,
    check_trace_options,
    load_profile,
    name_file,
    parse_window,
    print_json,
    progress_reporter,
    write_outputs,
)
from phasekit.cli.many import SchedulerOption, WorkersOption, finish_many, is_many, refuse_plot
from phasekit.cli.render import show
from phasekit.errors import PhasekitError, UsageError
from phasekit.many import check_window, shown_name

EPILOG = """\
Example:

\b
    phasekit analyze run.parquet
    phasekit analyze run.csv --metric ipc --window 60:660 --plot run.png -o run.json
    phasekit analyze run.csv -m dram_rd -m dram_wr --json > result.json
    phasekit analyze lulesh.prv.gz --bin 0.01 -m ipc      (a trace's counters, binned)
    my-sampler | phasekit analyze -            (a CSV profile on stdin)
    phasekit analyze runs/job42/ --workers 8 -o job42.json
    phasekit analyze 'runs/job42/node*.parquet' --scheduler tcp://10.0.0.1:8786 --json
"""


def analyze(
    profiles: Annotated[list[Path], typer.Argument(
        metavar="PROFILE",
        help="Profile file: CSV (.csv, .tsv, .csv.gz), Parquet (.parquet), a recording "
             "(.arrows), or perf stat -I / likwid-perfctr -t output; - reads a CSV profile from "
             "stdin; a trace (Paraver .prv/.prv.gz, OTF2 .otf2): its counters binned (--bin). "
             "Several files, folders (their profiles) or quoted glob patterns: one "
             "profile per node of a run, analyzed in parallel and compared.",
        show_default=False)],
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", metavar="NAME",
        help="Metric to analyze; repeat for a joint (dependent DTW) analysis. Default: ipc when "
             "present or computable, else the most periodic metric (the detector's coverage "
             "on each; the output says which and why).")] = None,
    window: Annotated[str | None, typer.Option(
        "--window", metavar="START:END",
        help="Analyze only this time window, in seconds from the profile start "
             "(either side may be empty: 60:, :300).")] = None,
    half_window: Annotated[int | None, typer.Option(
        "--half-window", metavar="L",
        help="Fix the detector's half-window L (samples) instead of searching for it.")] = None,
    band: Annotated[float | None, typer.Option(
        "--band", metavar="F", help="DTW Sakoe-Chiba band as a fraction of the length, in "
        "(0, 1]. Default: phasekit.periodicity's (0.1).", show_default=False)] = None,
    cut_ratio: Annotated[float | None, typer.Option(
        "--cut-ratio", metavar="R",
        help="Clustering cut: split where a linkage exceeds R x the median one. Default: "
             "phasekit.periodicity's (4).", show_default=False)] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print the result as JSON on stdout, nothing else.")] = False,
    detail: Annotated[bool, typer.Option(
        "--detail", help="Also print the tables in Phase-TA's notation (Table II: T_exe, "
        "#rp(#i)[#pa], %period; pattern length, WGSS, DBA iterations).")] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE",
        help="Write the figure (profile with periodic regions, and the patterns).")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the result as JSON.")] = None,
    workers: WorkersOption = None,
    scheduler: SchedulerOption = None,
    period: PeriodOption = None,
    bin_s: BinOption = None,
    rank: RankOption = None,
    loops: Annotated[bool, typer.Option(
        "--loops/--no-loops",
        help="A trace: link each pattern to the loop of `phasekit structure` that makes it, "
             "with its call sites.")] = True,
    fold: Annotated[Path | None, typer.Option(
        "--fold", metavar="FILE", show_default=False,
        help="A trace: fold its counters over the instances of the main pattern (the "
             "average evolution within one iteration, at burst resolution) and draw them "
             "to FILE.")] = None,
    query: prom.QueryOption = None,
    start: prom.StartOption = None,
    end: prom.EndOption = "now",
    step: prom.StepOption = "5s",
    label: prom.LabelOption = "instance",
) -> int:
    """Find the periodicities of a profile and one representative pattern each.

    Prints first what repeats, how often and over how much of the run, then one row per
    pattern and the other scales it repeats at; --detail adds Phase-TA's Table II
    (T_exe, #patterns(#instances) [mean consecutive instances], %period). A profile without
    periodicity is a valid result: no pattern, coverage 0, exit code 0.

    Several profiles (files, folders, glob patterns: the nodes of one run) are analyzed in
    parallel, then compared (Phase-TA, IV-B): a row per node, the check that the patterns of
    all nodes agree (mean DTW distance per associated point within 1 % of the pattern mean,
    against a reference node), and the nodes that stand out. --json prints {"nodes": [...],
    "agreement": {...}, "outliers": [...], "errors": [...]}. A file that cannot be analyzed
    is one line on stderr; the others still are, and the exit code is then 5.

    A trace (Paraver, OTF2) is analyzed as the profile of its hardware counters: per bin each
    counter summed over the ranks, ipc and mpi_share, and the counters it samples on its own
    (uncore); a note says the bin and the ranks.
    """
    window_s = parse_window(window)
    given = {"band": band, "cut_ratio": cut_ratio, "half_window": half_window}
    options = {name: value for name, value in given.items() if value is not None}
    check_outputs(output, plot)
    profiles = prom.expand(profiles, query=query, start=start, end=end, step=step,
                           label=label, quiet=json_output)
    if is_many(profiles):  # the library checks the metrics and options (periodicity_runs)
        check_trace_options(bin_s, rank)
        refuse_plot(plot, "profile")
        return analyze_many(profiles, metrics=list(metric) if metric else None,
                            window_s=window_s, options=options, workers=workers,
                            scheduler=scheduler, json_output=json_output, output=output,
                            period=period, detail=detail)
    from phasekit.io.api import is_trace
    from phasekit.periodicity.api import figure, periodicity, with_loops

    profile = profiles[0]
    shown = shown_name(profile)  # a Prometheus node: its server and label, not a temporary file
    data = load_profile(profile, period, bin_s, rank)
    check_window(data, window_s, shown, window)
    metrics = list(metric) if metric else None
    if metrics:
        metrics = check_metrics(data, metrics, shown)  # stored names: cpu-clock is cpu_clock
        if len(set(metrics)) != len(metrics):
            raise UsageError("--metric: each metric may be given once")
    title = shown if shown != str(profile) else profile.name
    with progress_reporter(not json_output, f"analyzing {title}") as progress:
        try:
            result = periodicity(data, metrics=metrics, window=window_s,
                                 progress=progress, **options)
        except PhasekitError as exc:
            raise name_file(exc, shown) from exc

    if is_trace(profile) and loops:
        result = with_loops(result, profile)
    folded = None
    if fold is not None:
        if not is_trace(profile):
            raise UsageError("--fold: for a trace (Paraver .prv/.prv.gz, OTF2 .otf2)")
        if not result.patterns:
            raise UsageError("--fold: no pattern to fold over")
        from phasekit.folding.api import fold_pattern

        folded = fold_pattern(profile, result, 0)
        result = replace(result, params={**result.params, "fold": folded.present().headline})
    written = write_outputs(output, plot, result.saved_dict,
                            lambda path: figure(data, result, path))
    if folded is not None:
        from phasekit.folding.api import figure as fold_figure

        written = [*written, ("the folded counters", fold_figure(folded, fold))]

    if json_output:
        print_json(result.to_dict())
        return 0
    show(result.present(title), written, detail=detail)  # a trace's binning: in its notes
    return 0


# --- several profiles: the nodes of a run ----------------------------------------------------
def analyze_many(paths: Sequence[Path], *, metrics: list[str] | None,
                 window_s: tuple[float | None, float | None] | None, options: dict[str, Any],
                 workers: int | None, scheduler: str | None, json_output: bool,
                 output: Path | None, period: float | None = None, detail: bool = False
                 ) -> int:
    """``phasekit analyze`` on the profiles of several nodes
    (:func:`phasekit.many.periodicity_many`): output and exit code."""
    from phasekit.many import periodicity_runs

    with progress_reporter(not json_output, "analyzing") as progress:
        result, runs = periodicity_runs(paths, metrics=metrics, window=window_s,
                                        workers=workers, client=None, scheduler=scheduler,
                                        progress=progress, options=options, period=period)
    return finish_many(result, runs, output=output, json_output=json_output, detail=detail)
