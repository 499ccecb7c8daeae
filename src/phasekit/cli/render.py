"""The command line's one way to print a result: its :class:`~phasekit.present.Presentation`
(the headline, each table as a text table, the notes), then the files written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from phasekit.cli.common import out_console, titled_table
from phasekit.present import Presentation, View

__all__ = ["print_view", "show"]


def print_view(console: Console, shown: View) -> None:
    """One table, as every command prints its tables (:func:`titled_table`)."""
    table = titled_table(shown.title)
    for c, header in enumerate(shown.headers):
        table.add_column(header, justify="right" if shown.is_numeric(c) else "left",
                         no_wrap=not shown.wraps(c), overflow="fold")
    for row in shown.rows:
        table.add_row(*row)
    console.print(table)


def show(shown: Presentation, written: Sequence[tuple[str, Path]] = (), *,
         detail: bool = False) -> None:
    """Print ``shown`` on stdout (its ``detail`` views with ``detail``), then one ``wrote
    WHAT: PATH`` line per file written."""
    shown = shown.shown(detail)
    console = out_console()
    console.print(shown.headline, soft_wrap=True)
    for v in shown.views:
        print_view(console, v)
    for line in shown.notes:
        console.print(line, soft_wrap=True)
    for what, path in written:
        console.print(f"wrote {what}: {path}", soft_wrap=True)
