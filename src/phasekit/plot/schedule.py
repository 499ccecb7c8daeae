"""The figure of ``phasekit schedule`` (seed 004, Figs. 5.3-5.4): a Gantt chart per policy,
one row per core of each server, and the data-center power of every policy over time."""

from __future__ import annotations

import os
from pathlib import Path

from phasekit.plot.common import WIDTH, color, figure, save
from phasekit.schedule.simulate import ScheduleResult

__all__ = ["plot_schedule"]

_LABELS = {"rr": "round robin", "heuristic": "LTF heuristic", "sa": "simulated annealing",
           "milp": "MILP"}


def _runs(cores: tuple[int, ...]) -> list[tuple[int, int]]:
    """(first, last) of each run of consecutive core numbers."""
    runs: list[tuple[int, int]] = []
    for c in sorted(cores):
        if runs and c == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], c)
        else:
            runs.append((c, c))
    return runs


def plot_schedule(result: ScheduleResult, path: str | os.PathLike[str],
                  policies: tuple[str, ...] | None = None) -> Path:
    """Write the Gantt charts of ``policies`` (default all in ``result``) and their power."""
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    chosen = [p for p in result.policies if policies is None or p.policy in policies]
    dc = result.datacenter
    rows = dc.servers * dc.cores
    gantt_h = min(max(1.6, 0.035 * rows + 1.0), 6.0)
    fig = figure(WIDTH, gantt_h * len(chosen) + 2.6)
    axes = fig.subplots(len(chosen) + 1, 1, sharex=True,
                        height_ratios=[gantt_h] * len(chosen) + [2.2])
    horizon = max([p.makespan_s for p in chosen] + [1e-9])
    widths = sorted({len(c) for p in chosen for c in p.cores})
    width_color = {w: color(i) for i, w in enumerate(widths)}
    for ax, p in zip(axes[:-1], chosen, strict=False):
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
        ax.set_title(f"{_LABELS.get(p.policy, p.policy)}: makespan {p.makespan_s:.6g} s, "
                     f"energy {p.energy_j / 1e6:.4g} MJ, saving {p.saving_vs_rr:.1f} % vs "
                     "round robin", fontsize=9, loc="left")
    handles = [Patch(color=width_color[w], label=f"{w} thread{'s' if w > 1 else ''}")
               for w in widths]
    if handles:
        axes[0].legend(handles=handles, loc="upper right", fontsize=7, ncol=len(handles))
    pax = axes[-1]
    for k, p in enumerate(chosen):
        pax.step(p.profile_t, p.profile_w / 1e3, where="post", color=color(k), lw=1,
                 label=_LABELS.get(p.policy, p.policy))
    pax.set_xlabel("time (s)")
    pax.set_ylabel("data-center power (kW)")
    pax.grid(True, alpha=0.3)
    pax.legend(fontsize=7, loc="upper right")
    return save(fig, path)
