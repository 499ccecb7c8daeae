"""What every figure shares: size, resolution, colours, and the atomic save.

Figures are drawn on Agg canvases without pyplot (no global state, no display needed) and
saved atomically; the format follows the file's extension (png, svg, pdf...). Each figure of
:mod:`phasekit.plot` has a function that returns the Figure (``*_figure``, drawing on a
given Axes where it has one panel or a one-panel form) and a ``plot_*`` that writes it to a
path with :func:`save`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure, SubFigure
from matplotlib.ticker import EngFormatter, FixedFormatter, Formatter, FuncFormatter

from phasekit.errors import UsageError
from phasekit.io.atomic import atomic_path

__all__ = ["COLORS", "DPI", "WIDTH", "color", "figure", "ink_on", "literal_text",
           "metric_label", "readable_numbers", "root_figure", "save", "time_unit"]

#: Resolution of raster figures: 12 in x 120 dpi = 1440 px, readable on a laptop screen.
DPI = 120
#: Width of every figure (inches).
WIDTH = 12.0
#: Colours of patterns or phases 1, 2, ... (matplotlib's tab10, cycled).
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
          "tab:pink", "tab:olive", "tab:cyan", "tab:gray")


def figure(width: float, height: float, *, layout: str | None = "constrained") -> Figure:
    """A figure on its own Agg canvas, constrained layout unless ``layout`` says otherwise
    (None: the caller places its Axes, which saves the extra draw constrained layout makes)."""
    fig = Figure(figsize=(width, height), layout=layout)
    FigureCanvasAgg(fig)
    return fig


def root_figure(ax: Axes) -> Figure:
    """The figure ``ax`` is drawn on (the top-level one when ``ax`` is on a subfigure): what
    a ``plot(ax=...)`` returns."""
    fig: Figure | SubFigure | None = ax.figure
    while isinstance(fig, SubFigure):
        fig = fig.figure
    if not isinstance(fig, Figure):
        raise ValueError("the axes belong to no figure")
    return fig


def save(fig: Figure, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` atomically in the format of ``path``'s extension."""
    target = Path(path)
    fmt = target.suffix.lower().lstrip(".")
    supported = fig.canvas.get_supported_filetypes()
    if fmt not in supported:
        raise UsageError(f"cannot tell the figure format of {target} from its name; expected a "
                         "name ending in " + ", ".join("." + s for s in sorted(supported)))
    literal_text(fig)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=fmt, dpi=DPI)
    return target


def literal_text(fig: Figure) -> None:
    """Show every text of ``fig`` as written: ``$`` escaped, so that a name from an input
    file (a metric ``cost$``, a node ``a$1$b``) is not read as mathtext. None of our own
    labels uses mathtext; the tick labels a log axis draws in mathtext are formatted when the
    figure is drawn, after this, and keep theirs. Tick labels that are names
    (``set_xticks(..., labels=...)``, a function of the tick) are escaped by a formatter
    around theirs."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        content = text.get_text()
        if "$" in content:
            text.set_text(_escape_dollars(content))
    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            major, minor = axis.get_major_formatter(), axis.get_minor_formatter()
            if isinstance(major, FixedFormatter | FuncFormatter):
                axis.set_major_formatter(_EscapedLabels(major))
            if isinstance(minor, FixedFormatter | FuncFormatter):
                axis.set_minor_formatter(_EscapedLabels(minor))


class _EscapedLabels(Formatter):
    """The labels of a formatter of names (fixed labels, or a function of the tick),
    ``$`` escaped."""

    def __init__(self, inner: Formatter) -> None:
        self.inner = inner

    def __call__(self, x: float, pos: int | None = None) -> str:
        return _escape_dollars(str(self.inner(x, pos)))

    def set_axis(self, axis: object) -> None:
        super().set_axis(axis)
        self.inner.set_axis(axis)


def _escape_dollars(text: str) -> str:
    """``$`` as a literal dollar sign in matplotlib (already escaped ones kept)."""
    return re.sub(r"(?<!\\)\$", r"\\$", text)


def time_unit(horizon_s: float) -> tuple[float, str]:
    """Seconds per unit and the unit's name for a time axis up to ``horizon_s``: hours
    beyond 2 h, minutes beyond 2 min, else seconds."""
    if horizon_s > 7200:
        return 3600.0, "h"
    if horizon_s > 120:
        return 60.0, "min"
    return 1.0, "s"


#: Units of metrics whose name says them, for files that give none.
NAMED_UNITS = {"ipc": "instructions per cycle", "cpi": "cycles per instruction"}


def metric_label(metric: str, unit: str | None) -> str:
    """An axis label for a metric: ``power [W]``; ``ipc [instructions per cycle]`` where
    the name says it (:data:`NAMED_UNITS`); else ``dram_rd (unit not recorded)`` when its
    file gave no unit (a reader should not guess one)."""
    unit = unit or NAMED_UNITS.get(metric.lower())
    return f"{metric} [{unit}]" if unit else f"{metric} (unit not recorded)"


def ink_on(colour: Any) -> str:
    """Black or white, whichever reads on ``colour`` (a name or an RGB(A) tuple)."""
    r, g, b = to_rgb(colour)
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def readable_numbers(ax: Axes, values: Any, *, sep: str = "") -> None:
    """Large values on ``ax``'s y axis ticked 2M, 500k (from ten thousand on), not 2 beside
    a bare 1e6 at the axis's top."""
    finite = np.abs(np.asarray(values, float))
    finite = finite[np.isfinite(finite)]
    if finite.size and finite.max() >= 1e4:
        ax.yaxis.set_major_formatter(EngFormatter(sep=sep))


def color(i: int) -> str:
    return COLORS[i % len(COLORS)]

