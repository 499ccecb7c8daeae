"""The clustering scatter of ``phasekit structure`` (Martínez Vera, "Clustering").

Every reduced call of every rank as a point: repetitions against mean time between
repetitions (both logarithmic, the space DBSCAN works in), coloured by the loop it was
assigned to; filtered calls (below the explained-time threshold) in grey. Drawn from the
result's ``clusters`` records alone, so a result read back from JSON draws it too.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter

from phasekit.plot.common import WIDTH, color, figure, root_figure, save
from phasekit.results import format_count, json_number

__all__ = ["draw_clusters", "plot_clusters", "structure_figure"]


def plot_clusters(result: Any, path: str | os.PathLike[str]) -> Path:
    """Write the scatter of ``result``'s reduced calls to ``path`` (format from its name)."""
    return save(structure_figure(result), path)


def structure_figure(result: Any, ax: Axes | None = None) -> Figure:
    """The scatter of ``result``'s reduced calls, on ``ax`` when given (its figure is
    returned), else on a new figure."""
    if ax is None:
        ax = figure(WIDTH * 0.6, 5.0).add_subplot()
    sources = result.trace.get("sources") or []
    name = Path(str(sources[0])).name if sources else "trace"
    eps = result.parameters.get("eps")
    loops = {int(r["id"]): r for r in result.loop_records()
             if isinstance(r.get("id"), int)}
    draw_clusters(ax, result.clusters or (), loops=loops,
                  title=f"{name}: MPI calls clustered into loops (DBSCAN, eps "
                        f"{eps if isinstance(eps, int | float) else 0.2:g} in log10 space)",
                  empty="no MPI call repeats: no loop" if result.clusters is not None else
                  "no clusters: this result was saved without them")
    return root_figure(ax)


def draw_clusters(ax: Axes, clusters: Sequence[Mapping[str, Any]], *,
                  loops: Mapping[int, Mapping[str, Any]] | None = None, title: str = "",
                  title_size: str | None = None,
                  empty: str = "no MPI call repeats: no loop") -> None:
    """The scatter on ``ax`` from cluster records (``repetitions``,
    ``mean_time_between_s``, ``loop``: a loop id or None for a filtered call). ``loops``
    (id -> a loop record with ``parent`` and ``iterations_per_outer``) makes the legend say
    where each loop is and how many iterations it makes; ``empty`` is written on an axes
    without a point."""
    groups: dict[int, list[tuple[float, float]]] = {}
    rest: list[tuple[float, float]] = []
    for c in clusters:
        point = (json_number(c.get("repetitions")), json_number(c.get("mean_time_between_s")))
        if not all(math.isfinite(v) and v > 0 for v in point):
            continue
        loop = c.get("loop")
        if isinstance(loop, int) and not isinstance(loop, bool):
            groups.setdefault(loop, []).append(point)
        else:
            rest.append(point)
    if rest:
        x, y = zip(*rest, strict=True)
        ax.scatter(x, y, s=18, c="lightgray", edgecolors="gray", linewidths=0.5,
                   label="filtered (explained time)")
    for loop_id in sorted(groups):
        x, y = zip(*groups[loop_id], strict=True)
        record = (loops or {}).get(loop_id)
        if record is not None:
            parent = record.get("parent")
            where = f" in {parent}" if parent is not None else ""
            label = (f"loop {loop_id}{where}: "
                     f"{format_count(json_number(record.get('iterations_per_outer')))} "
                     f"iterations, {len(x)} call(s) x rank")
        else:
            label = f"loop {loop_id}: {len(x)} call(s) x rank"
        ax.scatter(x, y, s=28 if loops is not None else 30, color=color(loop_id),
                   edgecolors="black", linewidths=0.4, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_xlabel("repetitions (per rank)")
    ax.set_ylabel("mean time between repetitions (s)")
    if title:
        ax.set_title(title, **({"loc": "left", "fontsize": title_size} if title_size else {}))
    if groups or rest:
        ax.legend(loc="best", fontsize="small")
    else:
        ax.text(0.5, 0.5, empty, transform=ax.transAxes,
                ha="center", va="center")
    ax.grid(True, which="both", alpha=0.3)
