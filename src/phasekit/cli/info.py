"""``phasekit info``: what a profile file holds."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table

from phasekit.cli.common import load_profile, out_console, print_json
from phasekit.profile import Profile

EPILOG = """\
Example:

\b
    phasekit info run.parquet
    phasekit info run.csv --json
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


def info(
    profile: Annotated[Path, typer.Argument(
        metavar="PROFILE", help="Profile file: CSV (.csv, .tsv, .csv.gz), Parquet (.parquet), a recording (.arrows), or perf stat -I / likwid-perfctr -t output.",
        show_default=False)],
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {n_samples, period_s, duration_s, metrics, ...} as JSON.")] = False,
) -> None:
    """Show the samples, sampling period, duration and metrics of a profile."""
    data = describe(load_profile(profile))
    if json_output:
        print_json(data)
        return
    head = Table(show_header=False, title=str(profile), title_justify="left")
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
