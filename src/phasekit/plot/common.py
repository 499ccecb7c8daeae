"""What every figure shares: size, resolution, colours, and the atomic save.

Figures are drawn on Agg canvases without pyplot (no global state, no display needed) and
saved atomically; the format follows the file's extension (png, svg, pdf...).
"""

from __future__ import annotations

import os
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from phasekit.errors import UsageError
from phasekit.io.atomic import atomic_path

__all__ = ["COLORS", "DPI", "WIDTH", "color", "figure", "save"]

#: Resolution of raster figures: 12 in x 120 dpi = 1440 px, readable on a laptop screen.
DPI = 120
#: Width of every figure (inches).
WIDTH = 12.0
#: Colours of patterns or phases 1, 2, ... (matplotlib's tab10, cycled).
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
          "tab:pink", "tab:olive", "tab:cyan", "tab:gray")


def figure(width: float, height: float) -> Figure:
    """A figure on its own Agg canvas, constrained layout."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` atomically in the format of ``path``'s extension."""
    target = Path(path)
    fmt = target.suffix.lower().lstrip(".")
    supported = fig.canvas.get_supported_filetypes()
    if fmt not in supported:
        raise UsageError(f"cannot tell the figure format of {target} from its name; expected a "
                         "name ending in " + ", ".join("." + s for s in sorted(supported)))
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=fmt, dpi=DPI)
    return target


def color(i: int) -> str:
    return COLORS[i % len(COLORS)]
