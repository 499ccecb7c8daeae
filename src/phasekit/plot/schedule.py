"""The figure of ``phasekit schedule`` (Salinas Hilburg 2020, Figs. 5.3-5.4): a Gantt chart per policy,
one row per core of each server, and the data-center power of every policy over time."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.plot.common import WIDTH, color, figure, save
from phasekit.schedule.registry import policy_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# phasekit.schedule.simulate's ScheduleResult and PolicyResult, typed Any: ScheduleResult.plot
# calls this module, which therefore does not import it (no import cycle).
ScheduleResult = PolicyResult = Any

__all__ = ["draw_gantt", "draw_power", "plot_schedule", "schedule_figure"]

def _runs(cores: tuple[int, ...]) -> list[tuple[int, int]]:
    """(first, last) of each run of consecutive core numbers."""
    runs: list[tuple[int, int]] = []
    for c in sorted(cores):
        if runs and c == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], c)
        else:
            runs.append((c, c))
    return runs


def _chosen(result: ScheduleResult, policies: tuple[str, ...] | None) -> list[PolicyResult]:
    return [p for p in result.policies if policies is None or p.policy in policies]


def draw_gantt(ax: Axes, result: ScheduleResult, policy: PolicyResult,
               width_color: dict[int, str], horizon: float) -> None:
    """The Gantt chart of one policy on ``ax``: one row per core of each server."""
    from matplotlib.collections import PolyCollection

    dc = result.datacenter
    rows = dc.servers * dc.cores
    p = policy
    verts, colors = [], []
    for i, cores in enumerate(p.cores):
        s, e = float(p.start_s[i]), float(p.end_s[i])
        for lo, hi in _runs(cores):  # contiguous cores as one bar
            y0 = int(p.server[i]) * dc.cores + lo
            y1 = int(p.server[i]) * dc.cores + hi + 1
            verts.append([(s, y0 + 0.1), (s, y1 - 0.1), (e, y1 - 0.1), (e, y0 + 0.1)])
            colors.append(width_color[len(cores)])
    ax.add_collection(PolyCollection(verts, facecolors=colors, edgecolors="white",
                                     linewidths=0.3 if rows <= 120 else 0.0))
    for s in range(1, dc.servers):
        ax.axhline(s * dc.cores, color="black", lw=0.4 if dc.servers <= 10 else 0.15)
    ax.axvline(p.makespan_s, color="black", ls="--", lw=1)
    ax.set_ylim(rows, 0)
    ax.set_xlim(0, horizon * 1.01)
    step = max(1, dc.servers // 10)
    ax.set_yticks([(s + 0.5) * dc.cores for s in range(0, dc.servers, step)])
    ax.set_yticklabels([f"S{s + 1}" for s in range(0, dc.servers, step)], fontsize=7)
    ax.set_ylabel("server")
    ax.set_title(f"{policy_label(p.policy)}: makespan {p.makespan_s:.6g} s, "
                 f"energy {p.energy_j / 1e6:.4g} MJ, saving {p.saving_vs_rr:.1f} % vs "
                 "round robin", fontsize=9, loc="left")


def draw_power(ax: Axes, result: ScheduleResult,
               policies: tuple[str, ...] | None = None) -> None:
    """The data-center power of ``policies`` (default all in ``result``) over time on ``ax``."""
    for k, p in enumerate(_chosen(result, policies)):
        ax.step(p.profile_t, p.profile_w / 1e3, where="post", color=color(k), lw=1,
                label=policy_label(p.policy))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("data-center power (kW)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")


def schedule_figure(result: ScheduleResult, policies: tuple[str, ...] | None = None) -> Figure:
    """The Gantt charts of ``policies`` (default all in ``result``) and their power."""
    from matplotlib.patches import Patch

    chosen = _chosen(result, policies)
    dc = result.datacenter
    rows = dc.servers * dc.cores
    gantt_h = min(max(1.6, 0.035 * rows + 1.0), 6.0)
    fig = figure(WIDTH, gantt_h * len(chosen) + 2.6)
    axes = fig.subplots(len(chosen) + 1, 1, sharex=True, squeeze=False,
                        height_ratios=[gantt_h] * len(chosen) + [2.2])[:, 0]
    horizon = max([p.makespan_s for p in chosen] + [1e-9])
    widths = sorted({len(c) for p in chosen for c in p.cores})
    width_color = {w: color(i) for i, w in enumerate(widths)}
    for ax, p in zip(axes[:-1], chosen, strict=False):
        draw_gantt(ax, result, p, width_color, horizon)
    handles = [Patch(color=width_color[w], label=f"{w} thread{'s' if w > 1 else ''}")
               for w in widths]
    if handles and chosen:
        axes[0].legend(handles=handles, loc="upper right", fontsize=7, ncol=len(handles))
    draw_power(axes[-1], result, policies)
    return fig


def plot_schedule(result: ScheduleResult, path: str | os.PathLike[str],
                  policies: tuple[str, ...] | None = None) -> Path:
    """Write :func:`schedule_figure` to ``path`` (format from its name)."""
    return save(schedule_figure(result, policies), path)
