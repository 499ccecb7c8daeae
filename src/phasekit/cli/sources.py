"""``phasekit sources``: what this machine can measure, and why not where it cannot."""

from __future__ import annotations

import sys
import textwrap
from typing import Annotated

import typer
from rich.table import Table

from phasekit.cli.common import out_console, print_json

#: Width of the listing when stdout is not a terminal (a pipe, a file): a plain paragraph per
#: source, wrapped between words, instead of a table as wide as its longest cell.
PIPED_WIDTH = 80

EPILOG = """\
Example:

\b
    phasekit sources
    phasekit sources --json | jq '.[] | select(.available) | .metrics'
"""


def sources(
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print a list of {name, available, reason, metrics, "
                       "unavailable_metrics, command_metrics} as JSON.")] = False,
) -> None:
    """List the recording sources, their metrics, and the reason for each that cannot run.

    command_metrics: what the source records of a command's own process tree
    ('phasekit record -- COMMAND'), named cmd_..."""
    from phasekit.record.api import list_sources

    listing = list_sources()
    if json_output:
        print_json(listing)
        return
    rows = []
    for entry in listing:
        metrics = ", ".join(m["name"] for m in entry["metrics"]) or "-"
        if entry["command_metrics"]:
            metrics += "\nwith a command: " + ", ".join(m["name"] for m in entry["command_metrics"])
        reasons = [entry["reason"]] if entry["reason"] else []
        by_reason: dict[str, list[str]] = {}
        for name, why in entry["unavailable_metrics"].items():
            by_reason.setdefault(why, []).append(name)
        reasons += [f"{', '.join(names)}: {why}" if why != entry["reason"]
                    else f"unavailable: {', '.join(names)}" for why, names in by_reason.items()]
        rows.append((entry["name"], entry["available"], metrics, "\n".join(reasons)))
    note = ("Command sources (phasekit record --sensor NAME=COMMAND) run any program that "
            "prints a number, such as an IPMI or GPU power reader.")
    if not sys.stdout.isatty():
        sys.stdout.write(_paragraphs(rows, note))
        return
    table = Table(title="Recording sources on this machine", title_justify="left")
    for column in ("source", "available", "metrics", "reason"):
        table.add_column(column, overflow="fold")
    for name, available, metrics, reasons in rows:
        table.add_row(name, "yes" if available else "no", metrics, reasons)
    console = out_console()
    console.print(table)
    console.print(note, soft_wrap=True)


def _paragraphs(rows: list[tuple[str, bool, str, str]], note: str) -> str:
    """The table's rows as text for a pipe: ``NAME: available`` (or ``not available``), then
    its metrics, and why (``reason:``) or what to know (``note:``), indented and wrapped at
    :data:`PIPED_WIDTH` between words (a metric name or a path is never split)."""

    def wrapped(text: str, first: str, rest: str) -> list[str]:
        return textwrap.wrap(text, PIPED_WIDTH, initial_indent=first, subsequent_indent=rest,
                             break_long_words=False, break_on_hyphens=False) or [first.rstrip()]

    lines = ["Recording sources on this machine", ""]
    for name, available, metrics, reasons in rows:
        lines.append(f"{name}: {'available' if available else 'not available'}")
        for k, part in enumerate(metrics.split("\n")):
            label = "  metrics: " if k == 0 and not part.startswith("with a command") else "  "
            lines += wrapped(part, label, "      ")
        for reason in filter(None, reasons.split("\n")):
            label = "" if reason.startswith("unavailable:") else \
                "  reason: " if not available else "  note: "
            lines += wrapped(reason, label or "  ", "      ")
    lines += ["", *wrapped(note, "", "")]
    return "\n".join(lines) + "\n"
