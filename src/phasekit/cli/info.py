"""``phasekit info``: what a profile or a trace file holds."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer
from rich.table import Table

from phasekit.cli import prometheus as prom
from phasekit.cli.common import PeriodOption, load_profile, name_file, out_console, print_json
from phasekit.errors import PhasekitError, UsageError
from phasekit.profile import Profile

if TYPE_CHECKING:
    from phasekit.trace import Trace

EPILOG = """\
Example:

\b
    phasekit info run.parquet
    phasekit info run.csv --json
    phasekit info lulesh.prv
"""


def describe(profile: Profile) -> dict[str, Any]:
    """The contract keys (n_samples, period_s, duration_s, metrics) and a few extras."""
    start = profile.start.isoformat() if isinstance(profile.start, _dt.datetime) else profile.start
    values = profile.values
    finite = np.isfinite(values)
    stats: dict[str, dict[str, Any]] = {}
    for j, name in enumerate(profile.metrics):
        column = values[finite[:, j], j]
        stats[name] = {
            "unit": profile.units.get(name),
            "n_missing": int(profile.n_samples - column.size),
            "min": float(column.min()) if column.size else None,
            "mean": float(column.mean()) if column.size else None,
            "max": float(column.max()) if column.size else None,
        }
    return {
        "n_samples": profile.n_samples, "period_s": profile.period,
        "duration_s": profile.duration, "metrics": list(profile.metrics),
        "start": start, "node": profile.node, "units": dict(profile.units),
        "n_missing": int((~finite.all(axis=1)).sum()), "metric_stats": stats,
    }


def describe_trace(trace: Trace) -> dict[str, Any]:
    """The trace summary (:meth:`Trace.summary`): ranks, calls per type, duration, counters."""
    return trace.summary()


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
    from phasekit.io import is_trace, read_trace

    if is_trace(profile):
        if period is not None:
            raise UsageError("--period: for a CSV profile without a time column; a trace "
                             "has its own times")
        try:
            trace = read_trace(profile)
        except PhasekitError as exc:
            raise name_file(exc, profile) from exc
        summary = describe_trace(trace)
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
