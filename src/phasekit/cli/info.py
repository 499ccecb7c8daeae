"""``phasekit info``: what a profile or a trace file holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli import prometheus as prom
from phasekit.cli.common import (
    BinOption,
    PeriodOption,
    RankOption,
    check_trace_options,
    load_profile,
    print_json,
)
from phasekit.cli.render import show
from phasekit.errors import UsageError

EPILOG = """\
Example:

\b
    phasekit info run.parquet
    phasekit info run.csv --json
    phasekit info lulesh.prv
    phasekit info lulesh.prv --bin 0.005
"""


def info(
    profile: Annotated[Path, typer.Argument(
        metavar="FILE", help="Profile file: CSV (.csv, .tsv, .csv.gz), Parquet (.parquet), a recording (.arrows), or perf stat -I / likwid-perfctr -t output; or a trace: Paraver (.prv, .prv.gz) or OTF2 (.otf2 anchor); - reads a CSV profile from stdin.",
        show_default=False)],
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {n_samples, period_s, duration_s, metrics, ...} as JSON (for a trace: {n_ranks, duration_s, n_calls, calls, counters, ...}; for several nodes of prometheus://: {\"nodes\": [...]}).")] = False,
    period: PeriodOption = None,
    bin_s: BinOption = None,
    rank: RankOption = None,
    query: prom.QueryOption = None,
    start: prom.StartOption = None,
    end: prom.EndOption = "now",
    step: prom.StepOption = "5s",
    label: prom.LabelOption = "instance",
) -> None:
    """Show the samples, sampling period, duration and metrics of a profile, or the ranks,
    MPI calls and counters of a trace, and the profile phasekit analyze and phases bin it
    into (bins, why that bin, metrics)."""
    from phasekit.io.api import (
        describe,
        describe_trace,
        is_trace,
        present_info,
        present_trace,
        read_trace,
    )

    if is_trace(profile):
        if period is not None:
            raise UsageError("--period: for a CSV profile without a time column; a trace "
                             "has its own times")
        trace = read_trace(profile)
        if json_output:
            print_json(describe_trace(trace, bin_s=bin_s, ranks=rank or None))
        else:
            show(present_trace(trace, str(profile), bin_s=bin_s, ranks=rank or None))
        return
    check_trace_options(bin_s, rank)
    paths = prom.expand([profile], query=query, start=start, end=end, step=step, label=label,
                        quiet=json_output)
    loaded = ((path, load_profile(path, period)) for path in paths)
    if json_output:
        described = [describe(p) for _, p in loaded]
        print_json(described[0] if paths == [profile] else {"nodes": described})
        return
    several = paths != [profile]
    shown = [present_info(p, p.node or str(path) if several else str(profile))
             for path, p in loaded]
    for presentation in shown:
        show(presentation)
