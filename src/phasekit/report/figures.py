"""The report's own figures, drawn from result JSON alone (one function per figure).

:mod:`phasekit.plot` draws from the analysis objects and the input data (a profile, a trace);
where a result's JSON is enough to rebuild those objects the report uses its figures, and these
functions draw the rest: the patterns over instances from a result's preview, the phase
timeline, the cross-node view, the clustering scatter of a structure, the Pareto front of an
energy choice, the accuracy of an energy fit. The figure maker shows every label as written
(:func:`phasekit.plot.common.literal_text`). Sized for the report's 1100-pixel column.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from phasekit.results import json_number

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "accuracy_figure",
    "agreement_figure",
    "clusters_figure",
    "coverage_figure",
    "distance_figure",
    "instances_figure",
    "node_patterns_figure",
]

#: Width of the report's figures (inches): 10.5 in = 1008 CSS pixels at 72 pt per inch.
WIDTH = 10.5


# matplotlib is imported when the first figure is drawn, not with this module: a report
# without figures (or a failed input) does not pay for it.
def figure(width: float, height: float) -> Figure:
    """A figure on its own canvas (:func:`phasekit.plot.common.figure`)."""
    from phasekit.plot.common import figure as make

    return make(width, height)


def color(i: int) -> str:
    """The colour of pattern or node ``i`` (:func:`phasekit.plot.common.color`)."""
    from phasekit.plot.common import color as pick

    return pick(i)


# --- periodicity -----------------------------------------------------------------------------
def instances_figure(patterns: Sequence[Mapping[str, Any]], instances: Sequence[Mapping[str, Any]],
                     metrics: Sequence[str], sampling_period: float, units: Mapping[str, str]
                     ) -> Figure:
    """One panel per pattern and metric: the kept random instances (thin, the pattern's
    colour) and the representative pattern (thick black), like the paper's Fig. 3
    (:func:`phasekit.plot.periodicity.draw_preview_patterns`). Without instances, the
    patterns alone."""
    from phasekit.plot.periodicity import draw_preview_patterns

    columns = min(3, max(1, len(patterns)))
    rows = math.ceil(max(1, len(patterns)) / columns) * max(1, len(metrics))
    fig = figure(WIDTH if columns > 1 else 6.5, 0.5 + 2.4 * rows)
    draw_preview_patterns(fig, patterns, instances, metrics, sampling_period, units)
    return fig


# --- phases ----------------------------------------------------------------------------------
# --- many nodes ------------------------------------------------------------------------------
def _node_axes(n: int) -> tuple[Figure, Any, bool]:
    horizontal = n <= 40
    fig = figure(WIDTH, max(2.4, 0.9 + 0.24 * n) if horizontal else 3.6)
    return fig, fig.add_subplot(), horizontal


def coverage_figure(names: Sequence[str], coverage: np.ndarray, outliers: Sequence[bool]
                    ) -> Figure:
    """Coverage (share of the run in periodic regions) per node, outliers in red."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    n = len(names)
    fig, ax, horizontal = _node_axes(n)
    colours = ["tab:red" if o else "tab:blue" for o in outliers]
    position = np.arange(n)
    values = np.nan_to_num(100 * coverage, nan=0.0)
    if horizontal:
        ax.barh(position, values, color=colours)
        ax.set_yticks(position, labels=list(names), fontsize="small")
        ax.set_ylabel("node")
        ax.set_ylim(n - 0.5, -0.5)
        ax.set_xlabel("periodic coverage (% of the run)")
        ax.set_xlim(0, 100)
        ax.grid(True, axis="x", alpha=0.3)
    else:
        ax.bar(position, values, color=colours, width=0.9)
        ax.set_xlabel("node (in input order; outliers in red)")
        ax.set_ylabel("periodic coverage (%)")
        ax.set_ylim(0, 100)
        ax.grid(True, axis="y", alpha=0.3)
    median = float(np.nanmedian(100 * coverage)) if np.isfinite(coverage).any() else math.nan
    if math.isfinite(median):
        (ax.axvline if horizontal else ax.axhline)(median, color="black", ls="--", lw=1)
    ax.legend(handles=[Patch(color="tab:blue", label="node"),
                       Patch(color="tab:red", label="outlier"),
                       Line2D([], [], color="black", ls="--", label=f"median {median:.1f}%")],
              loc="lower right" if horizontal else "upper right", fontsize="small")
    ax.set_title("Coverage per node", loc="left", fontsize="medium")
    return fig


def distance_figure(names: Sequence[str], distances: Sequence[Sequence[float]],
                    threshold: float, outliers: Sequence[bool]) -> Figure:
    """Each node's patterns' distance to the reference node's (relative, in percent of the
    pattern mean; one point per pattern), the threshold dashed, outliers in red."""
    from matplotlib.lines import Line2D

    n = len(names)
    fig, ax, horizontal = _node_axes(n)
    for k, (values, outlier) in enumerate(zip(distances, outliers, strict=True)):
        pos = np.full(len(values), k)
        x = 100 * np.asarray(values, dtype=float)
        colour = "tab:red" if outlier else "tab:blue"
        if horizontal:
            ax.scatter(x, pos, s=28, color=colour, edgecolors="black", linewidths=0.4, zorder=3)
        else:
            ax.scatter(pos, x, s=14, color=colour, linewidths=0, zorder=3)
    if math.isfinite(threshold):
        (ax.axvline if horizontal else ax.axhline)(100 * threshold, color="black", ls="--",
                                                   lw=1)
    if horizontal:
        ax.set_yticks(range(n), labels=list(names), fontsize="small")
        ax.set_ylabel("node")
        ax.set_ylim(n - 0.5, -0.5)
        ax.set_xlabel("distance to the reference pattern (% of the pattern mean)")
        ax.set_xlim(left=0)
        ax.grid(True, axis="x", alpha=0.3)
    else:
        ax.set_xlabel("node (in input order; outliers in red)")
        ax.set_ylabel("distance to the reference (%)")
        ax.set_ylim(bottom=0)
        ax.grid(True, axis="y", alpha=0.3)
    if math.isfinite(threshold):
        ax.legend(handles=[Line2D([], [], color="black", ls="--",
                                  label=f"threshold {100 * threshold:.2g}%")],
                  loc="lower right" if horizontal else "upper right", fontsize="small")
    ax.set_title("Agreement with the reference node", loc="left", fontsize="medium")
    return fig


def _main_curve(node_patterns: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """The first metric of a node's main pattern (largest coverage), scaled to 0-1."""
    if not node_patterns:
        return np.zeros(0)
    main = max(node_patterns, key=lambda p: np.nan_to_num(json_number(p.get("coverage"))))
    values = main.get("values", [])
    y = np.array([json_number(v[0] if isinstance(v, list) and v else v) for v in values]) \
        if isinstance(values, list) else np.zeros(0)
    if y.size < 2 or not np.isfinite(y).all():
        return np.zeros(0)
    low, high = y.min(), y.max()
    return (y - low) / (high - low) if high > low else y - low


def node_patterns_figure(names: Sequence[str], patterns: Sequence[Sequence[Mapping[str, Any]]],
                         outliers: Sequence[bool], reference: int = 0) -> Figure:
    """Left: every pattern's period per node (marker area by coverage), so that nodes that
    agree line up. Right: each node's main pattern (largest coverage), first metric, scaled to
    0-1, against the fraction of its period, turned to the phase of the ``reference`` node's
    (patterns are cycles cut where each analysis chose); outliers dashed red."""
    from phasekit.periodicity.align import rotate_to

    n = len(names)
    fig = figure(WIDTH, max(3.2, min(0.9 + 0.24 * n, 8.0)))
    ax, bx = fig.subplots(1, 2, width_ratios=[1.0, 1.2])
    ref = _main_curve(patterns[reference]) if 0 <= reference < n else np.zeros(0)
    for k, (node_patterns, outlier) in enumerate(zip(patterns, outliers, strict=True)):
        for j, p in enumerate(node_patterns):
            period, cov = json_number(p.get("period_s")), json_number(p.get("coverage"))
            if math.isfinite(period):
                ax.scatter([period], [k], s=20 + 180 * (cov if math.isfinite(cov) else 0.0),
                           color="tab:red" if outlier else color(j), alpha=0.7,
                           edgecolors="black", linewidths=0.4)
        y = _main_curve(node_patterns)
        if y.size < 2:
            continue
        if ref.size >= 2:
            y = rotate_to(ref[:, None], y[:, None])[:, 0]
        bx.plot(np.linspace(0, 1, y.size), y, lw=1.6 if outlier else 0.9,
                ls="--" if outlier else "-", color="tab:red" if outlier else color(k),
                alpha=0.9 if outlier else 0.6)
    ax.set_yticks(range(n), labels=list(names) if n <= 40 else None,
                  fontsize="small")
    ax.set_ylabel("node")
    if n > 40:
        ax.set_yticks([])
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel("period (s)")
    ax.set_title("Periods per node (area: coverage)", loc="left", fontsize="medium")
    ax.grid(True, axis="x", alpha=0.3)
    bx.set_xlabel("time (share of the period)")
    bx.set_ylabel("main pattern (scaled 0-1)")
    bx.set_title("Main pattern of each node (outliers dashed red)", loc="left",
                 fontsize="medium")
    bx.grid(True, alpha=0.3)
    return fig


def agreement_figure(names: Sequence[str], matrix: np.ndarray, title: str) -> Figure:
    """A node x node matrix of the agreement (a similarity or a distance) as a heatmap."""
    n = len(names)
    size = min(max(3.5, 0.3 * n + 2.0), 8.0)
    fig = figure(min(size + 1.5, WIDTH), size)
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap="viridis", interpolation="nearest")
    if n <= 30:
        labels = list(names)
        ax.set_xticks(range(n), labels=labels, rotation=90, fontsize="small")
        ax.set_yticks(range(n), labels=labels, fontsize="small")
    fig.colorbar(image, ax=ax, shrink=0.85)
    ax.set_title(str(title), loc="left", fontsize="medium")
    return fig


# --- structure -------------------------------------------------------------------------------
def clusters_figure(clusters: Sequence[Mapping[str, Any]], eps: float) -> Figure:
    """Every reduced call (per rank) of a structure result: repetitions against mean time
    between repetitions, both logarithmic, coloured by loop (the space DBSCAN clusters in;
    :func:`phasekit.plot.structure.draw_clusters` from the JSON)."""
    from phasekit.plot.structure import draw_clusters

    fig = figure(7.0, 4.4)
    draw_clusters(fig.add_subplot(), clusters, title=f"MPI calls clustered into loops "
                  f"(DBSCAN, eps {eps:g} in log10 space)", title_size="medium")
    return fig


# --- energy ----------------------------------------------------------------------------------
def accuracy_figure(models: Sequence[tuple[str, float, float]]) -> Figure:
    """Mean percentage error of the energy model and the baselines, on the training and the
    holdout configurations (Silva 2024, section 4.10)."""
    fig = figure(7.5, max(2.4, 0.9 + 0.45 * len(models)))
    ax = fig.add_subplot()
    position = np.arange(len(models))
    train = np.array([m[1] for m in models])
    holdout = np.array([m[2] for m in models])
    ax.barh(position - 0.2, np.nan_to_num(train), height=0.38, color="tab:blue", label="train")
    ax.barh(position + 0.2, np.nan_to_num(holdout), height=0.38, color="tab:orange",
            label="holdout")
    ax.set_yticks(position, labels=[m[0] for m in models])
    ax.set_ylim(len(models) - 0.5, -0.5)
    ax.set_xlabel("mean percentage error of the energy (%)")
    ax.legend(loc="lower right", fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title("Model accuracy (missing bars: not evaluated)", loc="left", fontsize="medium")
    return fig
