"""The figure of ``phasekit fingerprint`` (Silva 2024, Fig. 5.11 and 5.13-5.15).

Left: the Ward dendrogram on Canberra distances, leaves coloured by cluster. Right: the
fingerprints (0-100 % of the value against 0-100 % of the execution), coloured the same way.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from phasekit.plot.common import WIDTH, color, figure, root_figure, save

__all__ = ["draw_curves", "fingerprints_figure", "plot_fingerprints"]


def plot_fingerprints(result: Any, path: str | os.PathLike[str]) -> Path:
    """Write :func:`fingerprints_figure` of ``result`` to ``path``."""
    return save(fingerprints_figure(result), path)


def fingerprints_figure(result: Any, ax: Axes | None = None) -> Figure:
    """The dendrogram and the fingerprints of ``result`` (module docstring); on ``ax``, the
    fingerprints only (:func:`draw_curves`; its figure is returned)."""
    from scipy.cluster.hierarchy import dendrogram

    if ax is not None:
        draw_curves(ax, result)
        return root_figure(ax)
    n = len(result.names)
    fig = figure(WIDTH, max(4.5, 0.22 * n + 1.5))
    ax, bx = fig.subplots(1, 2)
    labels = [f"{name} [{result.programs[i]}]" if result.programs else name
              for i, name in enumerate(result.names)]
    leaf_color = {i: color(int(c) - 1) for i, c in enumerate(result.clusters)}
    tree = dendrogram(result.linkage, ax=ax, labels=labels, orientation="left",
                      color_threshold=0, above_threshold_color="gray", leaf_font_size=9)
    for tick, leaf in zip(ax.get_yticklabels(), tree["leaves"], strict=True):
        tick.set_color(leaf_color[leaf])
    if 1 < result.n_clusters < n:
        heights = sorted(result.linkage[:, 2])
        cut = 0.5 * (heights[n - result.n_clusters - 1] + heights[n - result.n_clusters])
        ax.axvline(cut, color="black", ls=":", lw=1)
    ax.set_xlabel("Ward linkage height (Canberra distance)")
    ax.set_ylabel("run")
    ax.set_title(f"{result.n_clusters} clusters ({result.k_rule})"
                 + (f", ARI {result.ari:.2f}" if result.ari is not None else ""))
    draw_curves(bx, result)
    return fig


def draw_curves(ax: Axes, result: Any) -> None:
    """Every fingerprint (0-100 % of the value against 0-100 % of the execution),
    coloured by cluster."""
    x = result.x_percent
    for i, curve in enumerate(result.fingerprints):
        ax.plot(x, curve, color=color(int(result.clusters[i]) - 1), lw=1, alpha=0.8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("execution (%)")
    ax.set_ylabel("value (% of its range)")
    # the ratio in the title, wrapped at the figure's edge: as the axis label, a long one ran
    # off the figure
    ratio = re.sub(r"\s*([/+])\s*", r" \1 ", result.ratio or "the ratio")  # breakable
    ax.set_title(f"Fingerprints of {ratio}, coloured by cluster", loc="left", wrap=True)
    ax.grid(True, alpha=0.3)
