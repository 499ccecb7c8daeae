"""The figure of ``phasekit schedule`` (Salinas Hilburg 2020, Figs. 5.3-5.4): a Gantt chart per
policy, a lane per server and a block per task over as many rows as it has cores, and the
data-center power of every policy over time; time in hours (or minutes) where long."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from phasekit.plot.common import WIDTH, color, figure, save, time_unit
from phasekit.schedule.registry import policy_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# phasekit.schedule.simulate's ScheduleResult and PolicyResult, typed Any: ScheduleResult.plot
# calls this module, which therefore does not import it (no import cycle).
ScheduleResult = PolicyResult = Any

__all__ = ["display_rows", "draw_gantt", "draw_power", "plot_schedule", "schedule_figure",
           "time_unit"]

#: A task's name is written in its block when the block spans at least this share of the
#: time axis (and is tall enough for the text).
LABEL_SHARE = 0.05
#: Points of height a block needs for its name.
LABEL_HEIGHT_PT = 10.0


def _runs(rows: Sequence[int]) -> list[tuple[int, int]]:
    """(first, last) of each run of consecutive row numbers."""
    runs: list[tuple[int, int]] = []
    for c in sorted(rows):
        if runs and c == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], c)
        else:
            runs.append((c, c))
    return runs


def display_rows(policy: PolicyResult, cores: int) -> list[list[tuple[int, int]]]:
    """Per task, the rows of its server's lane it is drawn on, as runs (first, last): the
    lowest block of as many free rows as it has cores wherever the lane has one at its
    start, else the lowest free rows (the cores of a server are alike, so the figure may
    place a task on other core numbers than the plan's and show it as one block). Tasks are
    placed in order of start; the schedule never runs more tasks' cores than the server
    has, so free rows always exist. A tightly packed lane can leave no block free: such a
    task is drawn in pieces (on three generated batches of 30 tasks on 3 x 12 cores, 1-8
    of the LTF heuristic's tasks and 0-2 of round robin's); trying the block freed last or
    the tightest run of free rows instead split exactly as many on the batch tried."""
    start = np.asarray(policy.start_s, float)
    end = np.asarray(policy.end_s, float)
    free_at: dict[int, np.ndarray] = {}
    out: list[list[tuple[int, int]]] = [[] for _ in range(start.size)]
    for i in np.argsort(start, kind="stable"):
        lane = free_at.setdefault(int(policy.server[i]), np.full(cores, -np.inf))
        width = len(policy.cores[i])
        free = lane <= start[i] + 1e-9 * max(1.0, abs(start[i]))
        window = np.convolve(free.astype(int), np.ones(width, int), "valid") == width
        first = int(np.argmax(window)) if window.any() else -1
        rows = (list(range(first, first + width)) if first >= 0
                else [int(r) for r in np.flatnonzero(free)[:width]])
        lane[rows] = end[i]
        out[i] = _runs(rows)
    return out


def _chosen(result: ScheduleResult, policies: tuple[str, ...] | None) -> list[PolicyResult]:
    return [p for p in result.policies if policies is None or p.policy in policies]


def draw_gantt(ax: Axes, result: ScheduleResult, policy: PolicyResult,
               width_color: dict[int, str], horizon: float) -> None:
    """The Gantt chart of one policy on ``ax``: a lane per server, a block per task over as
    many rows as it has cores (:func:`display_rows`), coloured by its core count and named
    where it is wide enough."""
    from matplotlib.collections import PolyCollection

    dc = result.datacenter
    rows = dc.servers * dc.cores
    scale, unit = time_unit(horizon)
    p = policy
    verts, colors, names = [], [], []
    row_pt = ax.bbox.height * 72.0 / ax.figure.dpi / max(rows, 1)
    for i, runs in enumerate(display_rows(p, dc.cores)):
        s, e = float(p.start_s[i]) / scale, float(p.end_s[i]) / scale
        base = int(p.server[i]) * dc.cores
        for lo, hi in runs:
            verts.append([(s, base + lo + 0.08), (s, base + hi + 0.92), (e, base + hi + 0.92),
                          (e, base + lo + 0.08)])
            colors.append(width_color[len(p.cores[i])])
        lo, hi = runs[0]
        tall = (hi - lo + 1) * row_pt >= LABEL_HEIGHT_PT
        if tall and (e - s) >= LABEL_SHARE * horizon / scale:
            name = result.names[i] if i < len(result.names) else f"task {i + 1}"
            names.append(((s + e) / 2, base + (lo + hi + 1) / 2, name))
    ax.add_collection(PolyCollection(verts, facecolors=colors, edgecolors="white",
                                     linewidths=0.5 if rows <= 120 else 0.0))
    for x, y, name in names:
        ax.text(x, y, name, ha="center", va="center", fontsize=8.5, color="white",
                clip_on=True)
    for s in range(1, dc.servers):
        ax.axhline(s * dc.cores, color="black", lw=0.8 if dc.servers <= 10 else 0.3)
    ax.axvline(p.makespan_s / scale, color="black", ls="--", lw=1)
    ax.set_ylim(rows, 0)
    ax.set_xlim(0, horizon / scale * 1.01)
    step = max(1, dc.servers // 10)
    ax.set_yticks([(s + 0.5) * dc.cores for s in range(0, dc.servers, step)])
    ax.set_yticklabels([f"S{s + 1}" for s in range(0, dc.servers, step)], fontsize=8.5)
    ax.set_ylabel("server")
    ax.set_title(f"{policy_label(p.policy)}: makespan {p.makespan_s / scale:.3g} {unit}, "
                 f"energy {p.energy_j / 1e6:.4g} MJ, saving {p.saving_vs_rr:.1f} % vs "
                 "round robin", fontsize=9, loc="left")


def draw_power(ax: Axes, result: ScheduleResult,
               policies: tuple[str, ...] | None = None) -> None:
    """The data-center power of ``policies`` (default all in ``result``) over time on ``ax``,
    each policy's line in its own colour and dash (lines that coincide stay visible), the
    legend outside the data on the right."""
    chosen = _chosen(result, policies)
    horizon = max([float(np.max(p.profile_t, initial=0.0)) for p in chosen] + [1e-9])
    scale, unit = time_unit(horizon)
    dashes = ("-", "--", ":", "-.")
    for k, p in enumerate(chosen):
        ax.step(np.asarray(p.profile_t) / scale, p.profile_w / 1e3, where="post",
                color=color(k), lw=1.2, ls=dashes[k % len(dashes)],
                label=policy_label(p.policy))
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("data-center power (kW)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))


def schedule_figure(result: ScheduleResult, policies: tuple[str, ...] | None = None) -> Figure:
    """The Gantt charts of ``policies`` (default all in ``result``) and their power."""
    from matplotlib.patches import Patch

    chosen = _chosen(result, policies)
    dc = result.datacenter
    rows = dc.servers * dc.cores
    gantt_h = min(max(1.3, 0.022 * rows + 0.8), 4.0)
    fig = figure(WIDTH, gantt_h * len(chosen) + 2.6)
    axes = fig.subplots(len(chosen) + 1, 1, sharex=True, squeeze=False,
                        height_ratios=[gantt_h] * len(chosen) + [2.2])[:, 0]
    horizon = max([p.makespan_s for p in chosen] + [1e-9])
    widths = sorted({len(c) for p in chosen for c in p.cores})
    width_color = {w: color(i) for i, w in enumerate(widths)}
    fig.canvas.draw()  # the Axes' heights, for which blocks can carry a name
    for ax, p in zip(axes[:-1], chosen, strict=False):
        draw_gantt(ax, result, p, width_color, horizon)
    handles = [Patch(color=width_color[w], label=f"{w} thread{'s' if w > 1 else ''}")
               for w in widths]
    if handles and chosen:
        fig.legend(handles=handles, loc="outside upper right", fontsize="small",
                   ncol=len(handles))
    draw_power(axes[-1], result, policies)
    return fig


def plot_schedule(result: ScheduleResult, path: str | os.PathLike[str],
                  policies: tuple[str, ...] | None = None) -> Path:
    """Write :func:`schedule_figure` to ``path`` (format from its name)."""
    return save(schedule_figure(result, policies), path)
