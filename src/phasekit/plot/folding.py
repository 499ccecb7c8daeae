"""The figure of a folded result (:mod:`phasekit.folding`): how counters evolve within one
instance, 0 to 100 % of it.

Top: each count's mean cumulative share with the band between its quartiles over the
instances, and the diagonal of an even pace. Middle: its pace (the slope of the share; 1 is
the instance's mean pace), mean and quartile band. Bottom, when there are any: the ratios
(ipc, mpi_share), mean and quartile band. Drawn from the result alone, so a result read back
from JSON draws it too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from phasekit.plot.common import WIDTH, color, figure, root_figure, save

__all__ = ["MAX_COUNTS", "folded_figure", "plot_folded"]

#: Counts drawn by default (the first ones: instructions and cycles lead from a trace).
MAX_COUNTS = 6


def plot_folded(result: Any, path: str | os.PathLike[str],
                metrics: Sequence[str] | None = None) -> Path:
    """Write :func:`folded_figure` of ``result`` to ``path`` (format from its name)."""
    return save(folded_figure(result, metrics=metrics), path)


def _chosen(result: Any, metrics: Sequence[str] | None) -> tuple[list[Any], list[Any]]:
    if metrics is not None:
        curves = [result.curve(m) for m in metrics]
    else:
        counts = [c for c in result.curves if c.kind == "count" and c.n_instances]
        curves = counts[:MAX_COUNTS] + [c for c in result.curves if c.kind != "count"]
    return ([c for c in curves if c.kind == "count" and c.n_instances],
            [c for c in curves if c.kind != "count" and c.n_instances])


def _draw_shares(ax: Axes, result: Any, counts: Sequence[Any]) -> None:
    x = 100 * result.positions
    ax.plot([0, 100], [0, 100], color="0.6", linestyle=":", linewidth=1, label="even pace")
    for k, c in enumerate(counts):
        ax.fill_between(x, 100 * np.asarray(c.share["q25"]), 100 * np.asarray(c.share["q75"]),
                        color=color(k), alpha=0.2, linewidth=0)
        ax.plot(x, 100 * np.asarray(c.share["mean"]), color=color(k), linewidth=1.5,
                label=f"{c.metric} ({c.n_instances})")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_ylabel("share of the count (%)")
    ax.set_xlabel("position in the instance (%)")
    ax.legend(loc="upper left", fontsize="small", frameon=False)


def folded_figure(result: Any, ax: Axes | None = None,
                  metrics: Sequence[str] | None = None) -> Figure:
    """The figure of ``result`` (module docstring); on ``ax``, the shares only (its figure
    is returned). ``metrics``: the metrics to draw (default the first
    :data:`MAX_COUNTS` counts and the ratios)."""
    counts, ratios = _chosen(result, metrics)
    title = result.present().headline
    if ax is not None:
        _draw_shares(ax, result, counts)
        ax.set_title(title, fontsize="small", loc="left")
        return root_figure(ax)
    rows = 2 + bool(ratios)
    fig = figure(WIDTH * 0.7, 2.6 * rows + 0.6)
    axes = fig.subplots(rows, 1, sharex=True)
    _draw_shares(axes[0], result, counts)
    axes[0].set_xlabel("")
    axes[0].set_title(title, fontsize="small", loc="left", wrap=True)
    mid = result.segments * 100
    pace_ax = axes[1]
    pace_ax.axhline(1.0, color="0.6", linestyle=":", linewidth=1)
    for k, c in enumerate(counts):
        pace_ax.fill_between(mid, c.pace["q25"], c.pace["q75"], color=color(k), alpha=0.2,
                             linewidth=0)
        pace_ax.plot(mid, c.pace["mean"], color=color(k), linewidth=1.2, label=c.metric)
    pace_ax.set_ylabel("pace (1 = even)")
    pace_ax.set_ylim(bottom=0)
    if ratios:
        ratio_ax = axes[2]
        for k, c in enumerate(ratios, start=len(counts)):
            ratio_ax.fill_between(mid, c.level["q25"], c.level["q75"], color=color(k),
                                  alpha=0.2, linewidth=0)
            ratio_ax.plot(mid, c.level["mean"], color=color(k), linewidth=1.2, label=c.metric)
        ratio_ax.set_ylabel("ratio")
        ratio_ax.legend(loc="upper left", fontsize="small", frameon=False)
    axes[-1].set_xlabel("position in the instance (%)")
    axes[-1].set_xlim(0, 100)
    return fig
