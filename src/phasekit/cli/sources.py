"""``phasekit sources``: what this machine can measure, and why not where it cannot."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from phasekit.cli.common import out_console, print_json

EPILOG = """\
Example:

\b
    phasekit sources
    phasekit sources --json | jq '.[] | select(.available) | .metrics'
"""


def sources(
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print a list of {name, available, reason, metrics, "
                       "unavailable_metrics} as JSON.")] = False,
) -> None:
    """List the recording sources, their metrics, and the reason for each that cannot run."""
    from phasekit.record import builtin_sources, probe_all

    listing: list[dict[str, Any]] = []
    for availability in probe_all(builtin_sources()):
        listing.append({
            "name": availability.name, "available": availability.available,
            "reason": availability.reason or None,
            "metrics": [{"name": m.name, "unit": m.rate_unit or m.unit, "kind": m.kind}
                        for m in availability.metrics],
            "unavailable_metrics": dict(availability.unavailable_metrics),
        })
    if json_output:
        print_json(listing)
        return
    table = Table(title="Recording sources on this machine", title_justify="left")
    for column in ("source", "available", "metrics", "reason"):
        table.add_column(column, overflow="fold")
    for entry in listing:
        metrics = ", ".join(m["name"] for m in entry["metrics"]) or "-"
        reasons = [entry["reason"]] if entry["reason"] else []
        by_reason: dict[str, list[str]] = {}
        for name, why in entry["unavailable_metrics"].items():
            by_reason.setdefault(why, []).append(name)
        reasons += [f"{', '.join(names)}: {why}" if why != entry["reason"]
                    else f"unavailable: {', '.join(names)}" for why, names in by_reason.items()]
        table.add_row(entry["name"], "yes" if entry["available"] else "no", metrics,
                      "\n".join(reasons))
    console = out_console()
    console.print(table)
    console.print("Command sources (phasekit record --sensor NAME=COMMAND) run any program that "
                  "prints a number, such as an IPMI or GPU power reader.", soft_wrap=True)
