"""``phasekit energy plot``: the PaScal Viewer's diagrams of a campaign (Silva 2024, §3.10.1).

Efficiency heatmaps (speedup / threads over inputs x threads, discrete and smoothed, one per
region and one for the program) and energy over configurations (heatmaps per input, energy
against time with the Pareto frontier); works from time alone (a campaign recorded on a
virtual machine), time heatmaps instead of the energy panels, and from energy alone (PaScal's
tables of frequency_ghz, cores, input, energy_j), the energy heatmaps without what needs time,
each with a note. Reading, the tables and the figure import no pandas (0.25 s).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from phasekit.cli.common import (
    FIGURE_SUFFIXES,
    check_outputs,
    figure_file,
    json_file,
    name_file,
    print_json,
    write_all,
)
from phasekit.cli.energy import load_runs
from phasekit.cli.render import show
from phasekit.errors import InputError, PhasekitError, UsageError

#: The kind of ``--json``/``-o``'s object: its ``view`` is ``--kind`` (in earlier versions this
#: field was "kind" itself, which clashed with the result kind "efficiency").
VIEW_KIND = "energy_view"

__all__ = ["EPILOG", "plot"]

EPILOG = """\
Example:

\b
    phasekit energy plot campaign.json --plot campaign.png
    phasekit energy plot campaign.jsonl --kind efficiency --mode smoothed --region solve \\
        --plot efficiency.svg
    phasekit energy plot pascal-output.json --kind energy --input 3 --plot energy.pdf \\
        -o energy.json
    phasekit energy plot runs.csv --frequency 2.2 --json
"""


def plot(
    campaign: Annotated[Path, typer.Argument(
        metavar="CAMPAIGN", show_default=False,
        help="Campaign JSON (phasekit's, a .jsonl log or PaScal Analyzer's) or a CSV with "
             "columns input, threads or cores, time_s or energy_j or both, and optionally "
             "frequency_ghz, status, region:NAME.")],
    figure: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE", show_default=False,
        help="Write the figure (png, svg, pdf...: from the name).")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", show_default=False,
        help="Write the result as JSON (what --json prints). A figure's name (-o FILE.png, "
             "the old spelling of --plot) still writes the figure.")] = None,
    kind: Annotated[str, typer.Option(
        "--kind", metavar="efficiency|energy|all",
        help="efficiency: the heatmaps; energy: energy over frequency and cores per input "
             "(time without energy) and energy against time with the Pareto frontier; all: "
             "both.")] = "all",
    mode: Annotated[str, typer.Option(
        "--mode", metavar="discrete|smoothed|both",
        help="Heatmaps with one cell per configuration, interpolated (the thesis's smoothed "
             "mode), or both side by side.")] = "both",
    regions: Annotated[list[str] | None, typer.Option(
        "--region", metavar="NAME", show_default=False,
        help="Heatmaps of this region (repeatable; default: every region) besides the whole "
             "program.")] = None,
    inputs: Annotated[list[str] | None, typer.Option(
        "--input", metavar="LABEL", show_default=False,
        help="Only this input (repeatable; default: every input).")] = None,
    frequency: Annotated[float | None, typer.Option(
        "--frequency", metavar="GHZ", show_default=False,
        help="Efficiency at this frequency (default: the highest measured).")] = None,
    cores: Annotated[int | None, typer.Option(
        "--cores", metavar="N", show_default=False,
        help="Efficiency on N cores when threads and cores were varied independently "
             "(default: the most).")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"efficiency\": [{\"region\", \"unit\", \"inputs\", \"rows\": "
        "[{\"input\", \"threads\", \"time_s\", \"speedup\", \"efficiency\"}], \"reference\", "
        "\"notes\"}], \"configurations\", \"has_energy\", \"has_time\", \"notes\", "
        "\"figure\"} as JSON.")
    ] = False,
) -> None:
    """Plot a campaign as the PaScal Viewer does: efficiency heatmaps and energy over
    configurations.

    Silva 2024, section 3.10.1: efficiency = speedup / threads, speedup = T(1 thread) / T(p) for
    the same input, one heatmap per region and one for the whole program (x = input,
    y = threads), discrete and smoothed. Without a 1-thread run T(1) is estimated from the
    fewest threads measured, assuming linear speedup up to them (said in a note). Then, per
    input, a heatmap of energy over frequency and cores relative to the input's least (the
    least boxed, the Pareto frontier dotted), and energy against time of every input with
    the frontiers (section 4.11). Campaigns without energy (a virtual machine) get the
    efficiency heatmaps and time heatmaps; tables with energy but no time (PaScal's
    frequency_ghz, cores, input, energy_j) the energy heatmaps alone, with a note. Prints the
    efficiency tables and each input's least energy."""
    from phasekit.energy.api import (
        NO_TIME_NOTE,
        campaign_notes,
        campaign_presentation,
        campaign_runs,
        campaign_views,
        check_campaign_view,
        plot_campaign,
    )

    check_campaign_view(kind=kind, mode=mode)
    if frequency is not None and not (math.isfinite(frequency) and frequency > 0):
        raise UsageError(f"--frequency {frequency!r}: expected a positive frequency in GHz")
    if cores is not None and cores < 1:
        raise UsageError(f"--cores {cores}: expected a positive core count")
    if output is not None and output.suffix.lower().lstrip(".") in FIGURE_SUFFIXES:
        if figure is not None:  # -o FIGURE: the old spelling of --plot
            raise UsageError(f"--output {output}: a figure; give it with --plot (or -o a .json)")
        figure, output = output, None
    check_outputs(None, figure, ("--output", output, ("json",)))
    source = str(campaign)
    data = load_runs(campaign, columns=True)
    try:
        runs = campaign_runs(data, source=source)
        if inputs:
            wanted = list(dict.fromkeys(str(x) for x in inputs))
            unknown = [x for x in wanted if x not in runs.inputs]
            if unknown:
                raise UsageError(f"--input {unknown[0]!r}: the campaign's inputs are "
                                 + ", ".join(runs.inputs))
            runs = runs.select([x in wanted for x in runs["input"].tolist()])
        tables, configs = campaign_views(runs, kind=kind, regions=regions, frequency=frequency,
                                         cores=cores, source=source)
        if kind == "efficiency" and not tables:
            raise InputError(f"{NO_TIME_NOTE} (--kind energy draws the energy)",
                             path=source, column="time_s")
    except PhasekitError as exc:
        raise name_file(exc, campaign) from exc
    notes = campaign_notes(tables, configs)
    data_out: dict[str, Any] = {  # a view of the campaign, not a result pk.load reads
        "kind": VIEW_KIND, "version": 1, "campaign": source, "view": kind, "mode": mode,
        "efficiency": [t.to_dict() for t in tables],
        "configurations": None if configs is None else configs.to_dict()["configurations"],
        "has_energy": None if configs is None else configs.has_energy,
        "has_time": None if configs is None else configs.has_time,
        "notes": notes, "figure": None if figure is None else str(figure),
    }
    def draw(path: Path) -> Path:
        return plot_campaign(path, tables=tables, configs=configs, mode=mode)

    try:  # no progress bar: the figure takes a fraction of a second
        written = write_all(figure_file(figure, draw), json_file(output, data_out))
    except PhasekitError as exc:
        raise name_file(exc, campaign) from exc
    if json_output:
        print_json(data_out)
        return
    shown = campaign_presentation(tables, configs, campaign.name)
    if figure is None:  # about the command line: said after the notes, before "wrote ..."
        shown = replace(shown, notes=(*shown.notes,
                                      "no figure written (give --plot FILE.png, .svg or .pdf)"))
    show(shown, written)
