"""``phasekit fingerprint``: fingerprints of runs and their clustering (Silva 2024, ch. 5.10)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import (
    PeriodOption,
    check_outputs,
    print_json,
    write_outputs,
)
from phasekit.cli.render import show

EPILOG = """\
Example:

\b
    phasekit fingerprint runs/*.parquet
    phasekit fingerprint a.csv b.csv c.csv --ratio instructions/mem_loads+mem_stores
    phasekit fingerprint runs/*.parquet --clusters 5 --plot dendrogram.png --json
"""


def fingerprint(
    profiles: Annotated[list[Path], typer.Argument(
        metavar="PROFILE...", show_default=False,
        help="Two or more profiles (CSV, Parquet, perf stat, LIKWID, recordings), or a folder "
             "of them, one run "
             "each, with an instruction and a memory-instruction counter.")],
    ratio: Annotated[str | None, typer.Option(
        "--ratio", metavar="NUM/DEN", show_default=False,
        help="The counter ratio; each side a column or a sum a+b. Default: instructions over "
             "mem_instructions, or mem_loads+mem_stores, ... (the first the profiles have).")
    ] = None,
    clusters: Annotated[int | None, typer.Option(
        "--clusters", metavar="K", show_default=False,
        help="Number of clusters. Default: when every profile names its program (metadata "
             "\"program\"), the number that best groups runs of a program; else the best "
             "mean silhouette.")] = None,
    points: Annotated[int, typer.Option(
        "--points", metavar="N", help="Points of a fingerprint (0..100 % of the execution).")
    ] = 101,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"n_clusters\", \"k_rule\", \"runs\": [{\"name\", \"cluster\", "
        "...}], \"ratio\", ...} as JSON.")] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE", help="Write the dendrogram and the fingerprints.")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the full result (fingerprints, "
        "distances, linkage) as JSON.")] = None,
    period: PeriodOption = None,
) -> None:
    """Cluster runs by their fingerprints: the instructions / memory instructions series.

    Silva 2024, ch. 5.10: each run's ratio series goes through a median filter, B-spline
    resampling onto 0..100 % of the execution, Savitzky-Golay smoothing and 0..100 %
    normalization; runs are compared with the Canberra distance and clustered with Ward's
    linkage. Prints each run's cluster, in dendrogram order.
    """
    from phasekit.energy.api import check_fingerprint, plot_fingerprints, profile_files
    from phasekit.energy.api import fingerprint as fingerprint_runs

    check_fingerprint(len(profile_files(profiles)), ratio=ratio, clusters=clusters,
                      points=points)  # before the outputs are checked and the runs read
    check_outputs(output, plot)
    # errors about one run start with its name (the file name)
    result = fingerprint_runs(profiles, ratio=ratio, clusters=clusters, points=points,
                              period=period)
    written = write_outputs(output, plot, result.saved_dict,
                            lambda path: plot_fingerprints(result, path))
    if json_output:
        print_json(result.to_dict(series=False))
        return
    show(result.present(), written)
