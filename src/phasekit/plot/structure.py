"""The figures of ``phasekit structure``.

- The timeline (:func:`timeline_figure`, the default): ranks top to bottom, time left to
  right, the main loop's iterations as blocks in alternating shades of its colour with the
  share of each iteration spent in MPI darkened at its foot, and the loops directly inside
  it as thin strips above, as a Paraver or Vampir user reads a run. Drawn from the result's
  ``timeline`` (:mod:`phasekit.structure.timeline`), so a result read back draws it too.
- The clustering scatter (:func:`structure_figure`, ``--plot --detail``; Martínez Vera,
  "Clustering"): every reduced call of every rank as a point, repetitions against mean time
  between repetitions (both logarithmic, the space DBSCAN works in), coloured by the loop
  it was assigned to; filtered calls (below the explained-time threshold) in grey.
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

__all__ = ["draw_clusters", "draw_timeline", "plot_clusters", "structure_figure",
           "timeline_figure"]


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
                        f"{eps if isinstance(eps, int | float) else 0.2:g})",
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


def timeline_figure(result: Any, ax: Axes | None = None) -> Figure:
    """The main loop's iterations per rank over time (module docstring), on ``ax`` when
    given (its figure is returned), else on a new figure."""
    timeline = list(result.timeline)
    rows = len(timeline[0]["ranks"]) if timeline else 1
    if ax is None:
        ax = figure(WIDTH, min(1.6 + 0.32 * rows, 8.0)).add_subplot()
    loops = {int(r["id"]): r for r in result.loop_records() if isinstance(r.get("id"), int)}
    draw_timeline(ax, timeline, loops)
    sources = result.trace.get("sources") or []
    name = Path(str(sources[0])).name if sources else "trace"
    ax.set_title(f"{name}: {result.present().headline}", loc="left", fontsize="medium",
                 wrap=True)
    return root_figure(ax)


def draw_timeline(ax: Axes, timeline: Sequence[Mapping[str, Any]],
                  loops: Mapping[int, Mapping[str, Any]]) -> None:
    """The timeline of :func:`timeline_figure` on ``ax``: the first record is the main
    loop's, the others those of the loops inside it."""
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Patch

    from phasekit.plot.common import time_unit

    if not timeline:
        ax.text(0.5, 0.5, "no loop: nothing repeats", transform=ax.transAxes, ha="center",
                va="center")
        ax.set_axis_off()
        return
    main = timeline[0]
    ranks = [int(r) for r in main["ranks"]]
    row = {r: k for k, r in enumerate(ranks)}
    horizon = max((max(e) for e in main["ends"] if e), default=1.0)
    scale, unit = time_unit(horizon)
    handles = []
    strip = min(0.1, 0.3 / max(len(timeline) - 1, 1))  # the inner loops' strips, stacked
    foot = 0.42 - strip * (len(timeline) - 1)  # the main loop's blocks end there
    for depth, record in enumerate(timeline):
        colour = color(int(record["id"]))
        light = to_rgba(colour, 0.45)
        top, bottom = ((-0.42, foot) if depth == 0
                       else (foot + strip * (depth - 1) + 0.01, foot + strip * depth))
        verts, faces, mpi = [], [], []
        for r, starts, ends, shares in zip(record["ranks"], record["starts"], record["ends"],
                                           record["mpi_share"], strict=True):
            if int(r) not in row:
                continue
            y = row[int(r)]
            for k, (a, b, share) in enumerate(zip(starts, ends, shares, strict=True)):
                a, b = a / scale, b / scale
                verts.append([(a, y + top), (a, y + bottom), (b, y + bottom), (b, y + top)])
                faces.append(colour if k % 2 == 0 else light)
                if depth == 0 and share > 0:  # from the block's foot up
                    head = y + bottom - share * (bottom - top)
                    mpi.append([(a, y + bottom), (a, head), (b, head), (b, y + bottom)])
        ax.add_collection(PolyCollection(verts, facecolors=faces, edgecolors="none"))
        if mpi:
            ax.add_collection(PolyCollection(mpi, facecolors=to_rgba("black", 0.45),
                                             edgecolors="none"))
        info = loops.get(int(record["id"]), {})
        group = int(record.get("group", 1))
        what = "main loop" if depth == 0 else f"loop {record['id']}, inside it"
        where = f" ({info['function']})" if info.get("function") else ""
        grouped = f", {group} iterations per block" if group > 1 else ""
        handles.append(Patch(facecolor=colour, label=f"{what}{where}{grouped}"))
    handles.append(Patch(facecolor=to_rgba("black", 0.45),
                         label="time in MPI (share of each iteration)"))
    ax.set_ylim(len(ranks) - 0.5, -0.5)
    ax.set_xlim(0, horizon / scale * 1.01)
    ax.set_yticks(range(len(ranks)), labels=[str(r) for r in ranks],
                  fontsize="small" if len(ranks) > 8 else None)
    ax.set_ylabel("rank")
    ax.set_xlabel(f"time since the trace start ({unit})")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
