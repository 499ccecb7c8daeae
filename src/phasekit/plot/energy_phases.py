"""The figure of ``phasekit energy phases`` (Silva 2024, Fig. 5.2 and 5.4-5.5).

Left: energy against the number of phases (the exact optimum, and the genetic algorithm when
it ran), relative to the best single configuration. Right: the chosen configuration over the
execution fraction for the chosen number of phases: cores and frequency when the
configurations carry them (the thesis's Fig. 5.4-5.5), otherwise the configuration index.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from phasekit.plot.common import WIDTH, color, figure, root_figure, save

__all__ = ["draw_configurations", "draw_energy", "energy_phases_figure", "plot_energy_phases"]


def plot_energy_phases(result: Any, path: str | os.PathLike[str]) -> Path:
    """Write :func:`energy_phases_figure` of ``result`` to ``path`` (format from its name)."""
    return save(energy_phases_figure(result), path)


def energy_phases_figure(result: Any, ax: Axes | None = None) -> Figure:
    """The two panels of the module docstring; on ``ax``, the energy against the number of
    phases only (:func:`draw_energy`; its figure is returned)."""
    if ax is not None:
        draw_energy(ax, result)
        return root_figure(ax)
    fig = figure(WIDTH, 4.5)
    ax, bx = fig.subplots(1, 2)
    draw_energy(ax, result)
    draw_configurations(bx, result)
    return fig


def draw_energy(ax: Axes, result: Any) -> None:
    """Energy against the number of phases, in % of the best single configuration."""
    k = np.arange(1, result.max_phases + 1)
    ref = result.single_energy_j
    ax.plot(k, 100 * np.asarray(result.energy_dp) / ref, marker="o", ms=3, color=color(0),
            label="dynamic programming (exact)")
    if result.energy_ga is not None:
        ax.plot(k, 100 * np.asarray(result.energy_ga) / ref, marker="s", ms=3,
                color=color(1), label="genetic algorithm")
    ax.axhline(100, color="gray", ls="--", lw=1,
               label=f"best single: {result.labels[result.single_config]}")
    ax.axvline(result.best_k, color="black", ls=":", lw=1, label=f"chosen: {result.best_k}")
    ax.set_xlabel("number of phases")
    ax.set_ylabel("energy (% of the best single configuration)")
    extra = (f", switch {result.switch_cost_j:g} J" if result.switch_cost_j else "")
    ax.set_title(f"Energy vs phases ({result.integrator}, grid {result.grid}{extra})")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")


def draw_configurations(bx: Axes, result: Any) -> None:
    """The configuration chosen over the execution for the chosen number of phases: cores
    and frequency (a twin axis) when the configurations carry them, else its index."""
    best = result.best
    edges = 100 * np.asarray(best.breakpoints)
    params = [result.params[c] for c in best.configs]
    have = all("cores" in p and "frequency_ghz" in p for p in params)
    if have:
        cores = [p["cores"] for p in params]
        freq = [p["frequency_ghz"] for p in params]
        bx.stairs(cores, edges, baseline=None, color=color(0), lw=2, label="cores")
        bx.set_ylabel("cores", color=color(0))
        bx.set_ylim(0, max(cores) * 1.1 + 1)
        cx = bx.twinx()
        cx.stairs(freq, edges, baseline=None, color=color(3), lw=2, ls="--", label="frequency")
        cx.set_ylabel("frequency (GHz)", color=color(3))
    else:
        bx.stairs(list(best.configs), edges, baseline=None, color=color(0), lw=2)
        bx.set_ylabel("configuration index")
    for x in edges[1:-1]:
        bx.axvline(x, color="lightgray", lw=0.6)
    bx.set_xlim(0, 100)
    bx.set_xlabel("execution (%)")
    bx.set_title(f"Chosen configuration, {result.best_k} phase(s) ({result.method}): "
                 f"{100 * result.savings:.1f} % saved")
