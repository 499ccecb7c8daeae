"""What every figure must get right, checked on the drawn figure rather than eyeballed:

- every text (titles, axis labels, tick labels, legend entries, annotations) lies inside the
  figure;
- a legend covers at most :data:`MAX_COVERED` of any Axes' data points, or of the area of
  its bars;
- every numeric axis with tick labels has a label with a unit: ``(s)``, ``[J]``, ``%``, or a
  first word that counts something (:data:`COUNTS`); an axis of names (fixed labels) needs
  none.

:func:`figure_problems` returns one line per problem (empty when the figure passes).
"""

from __future__ import annotations

import re

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import Collection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter, FuncFormatter, NullFormatter

from phasekit.plot.common import DPI

#: The largest share of an Axes' data points a legend drawn over it may hide.
MAX_COVERED = 0.05
#: An axis whose label starts with one of these counts things: no unit needed.
COUNTS = {"cores", "core", "threads", "ranks", "rank", "nodes", "node", "inputs", "input",
          "repetitions", "iterations", "instances", "phases", "phase", "patterns", "pattern",
          "count", "number", "loop", "loops", "cluster", "clusters", "task", "tasks",
          "server", "servers", "configurations", "configuration", "samples", "runs",
          "calls", "events", "members", "generation", "generations", "run"}
UNIT = re.compile(r"\([^()]+\)\s*$|\[[^\[\]]+\]|%|×|\bper\b")
#: Slack in pixels for a text at the figure's edge.
SLACK = 1.0


def _texts(fig: Figure) -> list[Text]:
    """The figure's visible texts: tick labels only of ticks in view (drawn)."""
    ticks = {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
             for t in axis.get_ticklabels(which="both")}
    shown = {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
             for t in _visible_ticklabels(axis)}
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and (id(t) not in ticks or id(t) in shown)]


def _visible_ticklabels(axis) -> list[Text]:  # type: ignore[no-untyped-def]
    """The tick labels the axis draws (``get_ticklabels`` also returns those of ticks beyond
    the view; matplotlib's ``_update_ticks`` returns the drawn ticks)."""
    drawn = axis._update_ticks()
    return [label for tick in drawn for label in (tick.label1, tick.label2)
            if label.get_visible() and label.get_text()]


def text_outside(fig: Figure) -> list[str]:
    """Texts that reach beyond the figure's edges."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    box = fig.bbox
    out = []
    for text in _texts(fig):
        if text.get_clip_on() and text.axes is not None and text.get_clip_box() is not None \
                and text not in (*_visible_ticklabels(text.axes.xaxis),
                                 *_visible_ticklabels(text.axes.yaxis)):
            continue  # clipped to its Axes: it cannot leave the figure
        extent = text.get_window_extent(renderer)
        if text.get_wrap():  # measured unwrapped; only where it starts and its height count
            inside = extent.x0 >= box.x0 - SLACK and extent.y0 >= box.y0 - SLACK \
                and extent.y1 <= box.y1 + SLACK
        else:
            inside = (extent.x0 >= box.x0 - SLACK and extent.x1 <= box.x1 + SLACK
                      and extent.y0 >= box.y0 - SLACK and extent.y1 <= box.y1 + SLACK)
        if not inside:
            out.append(f"text outside the figure: {text.get_text()[:60]!r}")
    return out


def _data_points(ax: Axes) -> np.ndarray:
    """The display coordinates of the Axes' data points (lines' vertices, scatter offsets)."""
    points = []
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = np.column_stack([np.asarray(line.get_xdata(), float),
                              np.asarray(line.get_ydata(), float)])
        xy = xy[np.isfinite(xy).all(axis=1)]
        if xy.size:
            points.append(line.get_transform().transform(xy))
    for collection in ax.collections:
        if not isinstance(collection, Collection) or not collection.get_visible():
            continue
        offsets = np.asarray(collection.get_offsets(), float)
        if offsets.ndim == 2 and offsets.shape[0] > 1:
            offsets = offsets[np.isfinite(offsets).all(axis=1)]
            points.append(collection.get_offset_transform().transform(offsets))
    if not points:
        return np.zeros((0, 2))
    xy = np.concatenate(points)
    box = ax.bbox
    inside = ((xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0)
              & (xy[:, 1] <= box.y1))
    return xy[inside]


def _data_boxes(ax: Axes) -> np.ndarray:
    """The display boxes (x0, y0, x1, y1) of the Axes' filled shapes: polygons (bars of a
    Gantt chart) and patches (bars, spans)."""
    boxes = []
    for collection in ax.collections:
        if isinstance(collection, PolyCollection) and collection.get_visible():
            transform = collection.get_transform()
            for path in collection.get_paths():
                if len(path.vertices):
                    xy = transform.transform(path.vertices)
                    boxes.append([*xy.min(axis=0), *xy.max(axis=0)])
    for patch in ax.patches:
        if patch.get_visible():
            box = patch.get_window_extent()
            boxes.append([box.x0, box.y0, box.x1, box.y1])
    return np.array(boxes, float).reshape(-1, 4)


def _hidden_share(ax: Axes, box) -> float:  # type: ignore[no-untyped-def]
    """The larger of the share of the Axes' data points inside ``box`` and the share of its
    shapes' area under it."""
    shares = [0.0]
    xy = _data_points(ax)
    if xy.shape[0] >= 2:
        shares.append(float(np.mean((xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1)
                                    & (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1))))
    shapes = _data_boxes(ax)
    clip = ax.bbox
    if shapes.size:
        x0, y0 = np.maximum(shapes[:, 0], clip.x0), np.maximum(shapes[:, 1], clip.y0)
        x1, y1 = np.minimum(shapes[:, 2], clip.x1), np.minimum(shapes[:, 3], clip.y1)
        area = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
        under = (np.clip(np.minimum(x1, box.x1) - np.maximum(x0, box.x0), 0, None)
                 * np.clip(np.minimum(y1, box.y1) - np.maximum(y0, box.y0), 0, None))
        if area.sum() > 0:
            shares.append(float(under.sum() / area.sum()))
    return max(shares)


def legend_covering(fig: Figure, max_covered: float = MAX_COVERED) -> list[str]:
    """Legends that hide more than ``max_covered`` of the data points of an Axes."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    legends: list[Legend] = [*(ax.get_legend() for ax in fig.axes), *fig.legends]
    out = []
    for legend in legends:
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            hidden = _hidden_share(ax, box)
            if hidden > max_covered:
                title = ax.get_title() or ax.get_title(loc="left") or "an axes"
                out.append(f"legend covers {100 * hidden:.0f} % of the points of "
                           f"{title[:50]!r}")
    return out


def missing_units(fig: Figure) -> list[str]:
    """Numeric axes with tick labels but no unit in their label."""
    out = []
    for ax in fig.axes:
        if not ax.axison:
            continue
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if not axis.get_visible() or not _visible_ticklabels(axis):
                continue
            formatter = axis.get_major_formatter()
            if isinstance(formatter, FixedFormatter | NullFormatter) or (
                    isinstance(formatter, FuncFormatter) and axis.get_scale() == "linear"
                    and not any(ch.isdigit() for t in _visible_ticklabels(axis)
                                for ch in t.get_text())):
                continue  # names, not numbers
            if axis.__class__.__name__ == "XAxis" and ax.get_shared_x_axes().get_siblings(ax) \
                    and len(ax.get_shared_x_axes().get_siblings(ax)) > 1 \
                    and not axis.get_label_text():
                siblings = ax.get_shared_x_axes().get_siblings(ax)
                if any(s.xaxis.get_label_text() for s in siblings if s is not ax):
                    continue  # a shared time axis labelled once, under the lowest panel
            label = axis.get_label_text().strip()
            title = ax.get_title() or ax.get_title(loc="left") or "an axes"
            if not label:
                out.append(f"{name} axis of {title[:50]!r} has no label")
            elif not (UNIT.search(label) or label.split()[0].lower().strip(",:")
                      in COUNTS):
                out.append(f"{name} axis of {title[:50]!r} has no unit: {label!r}")
    return out


def figure_problems(fig: Figure, max_covered: float = MAX_COVERED) -> list[str]:
    """Every problem of :func:`text_outside`, :func:`legend_covering` and
    :func:`missing_units`, after drawing ``fig`` at the resolution it is saved at (text
    wrapped to the figure's width wraps differently at another)."""
    fig.set_dpi(DPI)
    fig.canvas.draw()
    return [*text_outside(fig), *legend_covering(fig, max_covered), *missing_units(fig)]


__all__ = ["figure_problems", "legend_covering", "missing_units", "text_outside"]
