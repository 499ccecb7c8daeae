"""``phasekit analyze``: periodicities and representative patterns of a profile (seed 000)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import (
    check_metrics,
    check_output,
    load_profile,
    name_file,
    parse_window,
    print_json,
    print_result,
    progress_reporter,
    write_outputs,
)
from phasekit.errors import PhasekitError, UsageError

EPILOG = """\
Example:

\b
    phasekit analyze run.parquet
    phasekit analyze run.csv --metric ipc --window 60:660 --plot run.png -o run.json
    phasekit analyze run.csv -m dram_rd -m dram_wr --json > result.json
"""

FIGURE_SUFFIXES = ("png", "svg", "pdf", "jpg", "jpeg", "webp", "tif", "tiff", "eps", "ps")


def analyze(
    profile: Annotated[Path, typer.Argument(
        metavar="PROFILE", help="Profile file: CSV (.csv, .tsv, .csv.gz), Parquet (.parquet), a recording (.arrows), or perf stat -I / likwid-perfctr -t output.",
        show_default=False)],
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", metavar="NAME",
        help="Metric to analyze; repeat for a joint (dependent DTW) analysis. Default: ipc when "
             "present or computable, else the metric that varies most.")] = None,
    window: Annotated[str | None, typer.Option(
        "--window", metavar="START:END",
        help="Analyze only this time window, in seconds from the profile start "
             "(either side may be empty: 60:, :300).")] = None,
    half_window: Annotated[int | None, typer.Option(
        "--half-window", metavar="L",
        help="Fix the detector's half-window L (samples) instead of searching for it.")] = None,
    band: Annotated[float | None, typer.Option(
        "--band", metavar="F", help="DTW Sakoe-Chiba band as a fraction of the length, in "
        "(0, 1]. Default: phasekit.periodicity's (0.1).", show_default=False)] = None,
    cut_ratio: Annotated[float | None, typer.Option(
        "--cut-ratio", metavar="R",
        help="Clustering cut: split where a linkage exceeds R x the median one. Default: "
             "phasekit.periodicity's (4).", show_default=False)] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print the result as JSON on stdout, nothing else.")] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE",
        help="Write the figure (profile with periodic regions, and the patterns).")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the result as JSON.")] = None,
) -> None:
    """Find the periodicities of a profile and one representative pattern each.

    Prints a summary in the style of Table II of seed 000 (T_exe, #patterns(#instances)
    [mean consecutive instances], %period), then one row per pattern. A profile without
    periodicity is a valid result: no pattern, coverage 0, exit code 0.
    """
    from phasekit.periodicity import analyze as run_analysis

    window_s = parse_window(window)
    given = {"band": band, "cut_ratio": cut_ratio, "half_window": half_window}
    options = {name: value for name, value in given.items() if value is not None}
    check_output(output, "--output")
    check_output(plot, "--plot", FIGURE_SUFFIXES)

    data = load_profile(profile)
    if window_s is not None and window_s[0] is not None and window_s[0] >= data.duration:
        raise UsageError(f"{profile}: --window {window!r}: starts at {window_s[0]:g} s, after the "
                         f"end of this {data.duration:g} s profile")
    metrics = list(metric) if metric else None
    if metrics:
        check_metrics(data, metrics, profile)
        if len(set(metrics)) != len(metrics):
            raise UsageError("--metric: each metric may be given once")
    with progress_reporter(not json_output, f"analyzing {profile.name}") as progress:
        try:
            result = run_analysis(data, metrics=metrics, window_s=window_s,
                                  progress=progress, **options)
        except PhasekitError as exc:
            raise name_file(exc, profile) from exc

    def draw(path: Path) -> None:
        from phasekit.plot import plot_analysis

        plot_analysis(data, result, path)

    written = write_outputs(output, plot, result.to_dict, draw)

    if json_output:
        print_json(result.to_dict())
        return
    print_result(result, profile.name)
    for what, path in written:
        typer.echo(f"wrote {what}: {path}")
