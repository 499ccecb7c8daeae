"""The clustering scatter of ``phasekit structure`` (seed 003, "Clustering").

Every reduced call of every rank as a point: repetitions against mean time between
repetitions (both logarithmic, the space DBSCAN works in), coloured by the loop it was
assigned to; filtered calls (below the explained-time threshold) in grey.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from matplotlib.ticker import ScalarFormatter

from phasekit.plot.common import WIDTH, color, figure, save
from phasekit.structure import StructureResult
from phasekit.structure.pseudocode import format_count

__all__ = ["plot_clusters"]


def plot_clusters(result: StructureResult, path: str | os.PathLike[str]) -> Path:
    """Write the scatter of ``result``'s reduced calls to ``path`` (format from its name)."""
    red = result.reduction
    fig = figure(WIDTH * 0.6, 5.0)
    ax = fig.add_subplot()
    repeated = np.flatnonzero(red.it > 1)
    loop_of = np.array([result.labels.get(int(e), -1) for e in repeated], np.int64)
    rest = repeated[loop_of < 0]
    if rest.size:
        ax.scatter(red.it[rest], red.imt[rest], s=18, c="lightgray", edgecolors="gray",
                   linewidths=0.5, label="filtered (explained time)")
    by_id = {loop.id: loop for loop in result.loops}
    for loop_id in sorted(set(loop_of[loop_of >= 0].tolist())):
        members = repeated[loop_of == loop_id]
        loop = by_id[loop_id]
        where = f" in {loop.parent.id}" if loop.parent is not None else ""
        ax.scatter(red.it[members], red.imt[members], s=28, color=color(loop_id),
                   edgecolors="black", linewidths=0.4,
                   label=f"loop {loop_id}{where}: {format_count(loop.iterations_per_outer)} "
                         f"iterations, {members.size} call(s) x rank")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_xlabel("repetitions (per rank)")
    ax.set_ylabel("mean time between repetitions (s)")
    name = Path(result.trace.sources[0]).name if result.trace.sources else "trace"
    ax.set_title(f"{name}: MPI calls clustered into loops (DBSCAN, eps "
                 f"{result.parameters.get('eps', 0.2):g} in log10 space)")
    if repeated.size:
        ax.legend(loc="best", fontsize="small")
    else:
        ax.text(0.5, 0.5, "no MPI call repeats: no loop", transform=ax.transAxes,
                ha="center", va="center")
    ax.grid(True, which="both", alpha=0.3)
    return save(fig, path)
