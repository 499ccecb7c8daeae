"""``phasekit report``: one self-contained HTML page of any results (:mod:`phasekit.report`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import (
    Output,
    check_output,
    out_console,
    print_json,
    print_written,
    progress_reporter,
    write_all,
)
from phasekit.report.api import load_result

__all__ = ["EPILOG", "load_result", "report"]

EPILOG = """\
Example:

\b
    phasekit analyze run.parquet -o periodicity.json
    phasekit phases run.parquet -o phases.json
    phasekit report periodicity.json phases.json -o report.html
    phasekit report results/*.json --title "LULESH on 8 nodes" -o lulesh.html
"""


def report(
    results: Annotated[list[Path], typer.Argument(
        metavar="RESULT.json...", show_default=False,
        help="Results written by phasekit's verbs (-o): analyze, phases, structure, "
             "energy fit/choose/phasediv, fingerprint, schedule, ...; a campaign (.json or its "
             ".jsonl log). Any other kind is shown generically.")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="REPORT.html",
        help="Where to write the report.")] = Path("report.html"),
    title: Annotated[str, typer.Option(
        "--title", metavar="TEXT", help="The report's title.")] = "phasekit report",
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"report\", \"results\": [{\"file\", \"kind\"}]} as JSON.")
    ] = False,
) -> None:
    """Write one self-contained HTML report of results: tables and figures per result.

    Shows each result by its kind: the profile with its periodic regions and the patterns
    over their instances, the cross-node view, the phase timeline, the loop pseudocode, the
    energy heatmaps and Pareto fronts, schedules; figures are inline SVG, there is no script
    and nothing to fetch, so the file opens anywhere, offline. Strings from the results are
    escaped.
    """
    from phasekit.report.api import write_report

    check_output(output, "--output", ("html", "htm"))
    items = [load_result(path) for path in results]
    with progress_reporter(not json_output, "writing the report") as progress:
        written = write_all(Output("report", output, lambda path: write_report(
            path, items, title=title, progress=progress)))
    if json_output:
        print_json({"report": str(output),
                    "results": [{"file": item.source, "kind": item.kind} for item in items]})
        return
    console = out_console()
    for item in items:
        console.print(f"{item.source}: {item.kind}", soft_wrap=True)
    print_written(console, written)
