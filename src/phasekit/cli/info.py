"""``phasekit info``: what a profile or a trace file holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from phasekit.cli import prometheus as prom
from phasekit.cli.common import PeriodOption, load_profile, out_console, print_json
from phasekit.errors import UsageError

EPILOG = """\
Example:

\b
    phasekit info run.parquet
    phasekit info run.csv --json
    phasekit info lulesh.prv
"""


def _print_trace(path: Path, data: dict[str, Any]) -> None:
    head = Table(show_header=False, title=str(path), title_justify="left")
    head.add_column(style="bold")
    head.add_column()
    app = f", application {data['application']}" if data["application"] is not None else ""
    head.add_row("format", f"{data['format']}{app}")
    threads = sorted(set(data["threads_per_rank"]))
    head.add_row("ranks", f"{data['n_ranks']} ({'/'.join(map(str, threads)) or 0} "
                          "thread(s) per rank)")
    head.add_row("duration", f"{data['duration_s']:.6g} s")
    head.add_row("MPI calls", f"{data['n_calls']} ({data['n_signatures']} signatures)")
    head.add_row("counters", ", ".join(data["counters"]) or "none")
    if data["explanation"]:
        head.add_row("note", data["explanation"])
    table = Table(title="MPI calls", title_justify="left")
    for column in ("call", "count", "time in call", "bytes"):
        table.add_column(column, justify="left" if column == "call" else "right")
    for name, s in data["calls"].items():
        table.add_row(name, str(s["count"]), f"{s['time_s']:.6g} s", f"{s['bytes']:.6g}")
    console = out_console()
    console.print(head)
    if data["calls"]:
        console.print(table)


def info(
    profile: Annotated[Path, typer.Argument(
        metavar="FILE", help="Profile file: CSV (.csv, .tsv, .csv.gz), Parquet (.parquet), a recording (.arrows), or perf stat -I / likwid-perfctr -t output; or a trace: Paraver (.prv, .prv.gz) or OTF2 (.otf2 anchor); - reads a CSV profile from stdin.",
        show_default=False)],
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {n_samples, period_s, duration_s, metrics, ...} as JSON (for a trace: {n_ranks, duration_s, n_calls, calls, counters, ...}; for several nodes of prometheus://: {\"nodes\": [...]}).")] = False,
    period: PeriodOption = None,
    query: prom.QueryOption = None,
    start: prom.StartOption = None,
    end: prom.EndOption = "now",
    step: prom.StepOption = "5s",
    label: prom.LabelOption = "instance",
) -> None:
    """Show the samples, sampling period, duration and metrics of a profile, or the ranks,
    MPI calls and counters of a trace."""
    from phasekit.io.api import describe, is_trace, read_trace

    if is_trace(profile):
        if period is not None:
            raise UsageError("--period: for a CSV profile without a time column; a trace "
                             "has its own times")
        summary = describe(read_trace(profile))
        if json_output:
            print_json(summary)
        else:
            _print_trace(profile, summary)
        return
    paths = prom.expand([profile], query=query, start=start, end=end, step=step, label=label,
                        quiet=json_output)
    described = [describe(load_profile(path, period)) for path in paths]
    if json_output:
        print_json(described[0] if paths == [profile] else {"nodes": described})
        return
    for path, data in zip(paths, described, strict=True):
        _print_profile(data["node"] or str(path) if paths != [profile] else str(profile), data)


def _print_profile(title: str, data: dict[str, Any]) -> None:
    head = Table(show_header=False, title=title, title_justify="left")
    head.add_column(style="bold")
    head.add_column()
    head.add_row("samples", f"{data['n_samples']} ({data['n_missing']} with a missing value)")
    head.add_row("period", f"{data['period_s']:g} s ({1 / data['period_s']:g} Hz)")
    head.add_row("duration", f"{data['duration_s']:.6g} s")
    head.add_row("start", str(data["start"]))
    if data["node"]:
        head.add_row("node", data["node"])
    table = Table(title="Metrics", title_justify="left")
    for column in ("metric", "unit", "missing", "min", "mean", "max"):
        table.add_column(column, justify="left" if column in ("metric", "unit") else "right")
    for name, s in data["metric_stats"].items():
        table.add_row(name, s["unit"] or "", str(s["n_missing"]),
                      *("" if s[k] is None else f"{s[k]:.6g}" for k in ("min", "mean", "max")))
    console = out_console()
    console.print(head)
    console.print(table)
