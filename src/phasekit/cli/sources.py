"""``phasekit sources``: what this machine can measure, and why not where it cannot."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from phasekit.cli.common import print_json
from phasekit.cli.render import show

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
    from phasekit.record.api import list_sources, present_sources, sources_paragraphs

    listing = list_sources()
    if json_output:
        print_json(listing)
        return
    shown = present_sources(listing)
    if sys.stdout.isatty():
        show(shown)
    else:
        sys.stdout.write(sources_paragraphs(shown, PIPED_WIDTH))
