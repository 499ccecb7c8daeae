"""The figures of ``phasekit energy plot``: the PaScal Viewer's diagrams (Silva 2024, §3.10.1).

- Efficiency heatmaps (Figs. 3.5-3.7): x = input, y = thread count, one per region and one for
  the whole program, in the discrete mode (one cell per measured configuration, its value
  written in it) and the smoothed mode (the thesis's "interpolation to create a visual element
  where the color transition is less pronounced"; its axes show only the first and last
  values). Our smoothing: linear interpolation over (input index, thread-count index) — the
  discrete view's cells, which are log2 threads for the usual 1, 2, 4, ... counts — on a
  200 x 200 mesh: bilinear (scipy RegularGridInterpolator) on a full grid, piecewise-planar
  (scipy griddata) when cells are missing. Every heatmap uses one fixed colour scale, 0 to 1
  (efficiency above 1, superlinear, in a separate colour), so that heatmaps compare.
- Energy over configurations (the data of Figs. 3.8-3.9 and 4.11, drawn our way): one
  heatmap per input, x = frequency, y = core count, of the energy relative to the input's
  least (one logarithmic colour scale for all, so that inputs compare; values written in
  small grids), the least-energy cell boxed and the cells on the time-energy Pareto frontier
  dotted; one campaign-wide panel of energy against time, a colour per input (that of its
  heatmap's title), each input's frontier as a line and its least energy as a star. With one
  frequency (or none) a single heatmap, x = input, relative per input. Without energy the
  heatmaps show time relative to each input's fastest, and the figure says so; without time
  (PaScal's tables of energy alone) the energy heatmaps are drawn without the frontier and
  the energy-time panel, and the section's title says why. (Before issue
  20: three line panels per input under constrained layout; as heatmaps the information is
  the same at a third of the drawing time.)
- The layout is fixed in inches (:class:`_Section`), not constrained layout, whose extra
  measuring draw was half of the command's time; log axes get plain ``%g``/``k`` tick
  labels (mathtext's parser costs 0.1 s on first use).
- ``phasekit energy choose --plot`` (:func:`plot_choice`): per input, the model's predicted
  energy against time over every configuration within the limits, its Pareto frontier, the
  chosen configuration and the ondemand baseline (maximum frequency, every core count). A
  model fitted on energy alone (no run times) predicts no time: predicted energy against
  cores, a line per frequency, instead. An input with no configuration within the time
  limit: every configuration against the limit (a dashed line), the fastest marked.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import LogNorm, Normalize
from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    MaxNLocator,
    NullLocator,
)

from phasekit.errors import UsageError
from phasekit.plot.common import WIDTH, color, figure, ink_on, root_figure, save

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# The results drawn here (phasekit.energy.efficiency's EfficiencyTable and ConfigurationTable,
# phasekit.energy.choose's ChoiceResult and Choice) are typed Any: their plot() methods call
# this module, which therefore imports none of them (no import cycle, tests/test_import_graph).
EfficiencyTable = ConfigurationTable = ChoiceResult = Choice = Any

__all__ = ["CHOICE_ROWS", "MODES", "choice_figure", "draw_choice", "draw_choice_map",
           "draw_efficiency", "energy_figure", "plot_choice", "plot_energy", "smooth_grid",
           "target_axes"]

#: Heatmap modes: the thesis's discrete and smoothed views, or both side by side.
MODES = ("discrete", "smoothed", "both")
#: Points of the smoothed mesh per axis.
MESH = 200
_ANNOTATE_MAX = 60  # cells: above this the values are not written in the cells


def target_axes(ax: Axes | None, height: float = 4.0, width: float = 0.6 * WIDTH
                ) -> tuple[Figure, Axes]:
    """``ax`` and its (root) figure, or a new figure of one Axes (for a result's
    ``plot(ax=None)``)."""
    if ax is not None:
        return root_figure(ax), ax
    fig = figure(width, height)
    return fig, fig.add_subplot()


def _efficiency_cmap() -> Any:
    # Red (poor) through yellow to blue (ideal); superlinear cells in dark purple.
    return colormaps["RdYlBu"].with_extremes(over="#40004b", bad="#d9d9d9")


def smooth_grid(values: np.ndarray, x: np.ndarray, y: np.ndarray, *, mesh: int = MESH
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``values`` (len(y) x len(x), NaN where missing) interpolated linearly on a mesh.

    Returns (xs, ys, grid) with grid of shape (len(ys), len(xs)). A full grid is interpolated
    bilinearly; one with holes piecewise-linearly over the Delaunay triangulation of its
    measured cells (NaN outside their hull); a single row or column along its one axis; a
    single value is constant.
    """
    values = np.asarray(values, dtype=float)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    xs = np.linspace(x[0], x[-1], mesh) if x.size > 1 else x.copy()
    ys = np.linspace(y[0], y[-1], mesh) if y.size > 1 else y.copy()
    finite = np.isfinite(values)
    if not finite.any():
        return xs, ys, np.full((ys.size, xs.size), np.nan)
    if x.size == 1 or y.size == 1:
        line = values.ravel()
        axis, fine = (y, ys) if x.size == 1 else (x, xs)
        ok = np.isfinite(line)
        if ok.sum() == 1:
            out = np.full(fine.size, line[ok][0])
        else:
            out = np.interp(fine, axis[ok], line[ok], left=np.nan, right=np.nan)
        return xs, ys, out.reshape(ys.size, xs.size)
    gy, gx = np.meshgrid(ys, xs, indexing="ij")
    if finite.all():
        return xs, ys, _bilinear(values, x, y, xs, ys)
    from scipy.interpolate import griddata

    py, px = np.meshgrid(y, x, indexing="ij")
    points = np.column_stack([py[finite], px[finite]])
    try:
        grid = griddata(points, values[finite], (gy, gx), method="linear")
    except Exception:  # collinear or too few points: Qhull refuses; nearest is defined
        grid = griddata(points, values[finite], (gy, gx), method="nearest")
    return xs, ys, grid


def _bilinear(values: np.ndarray, x: np.ndarray, y: np.ndarray, xs: np.ndarray, ys: np.ndarray
              ) -> np.ndarray:
    """``values`` (len(y) x len(x)) interpolated bilinearly at every (ys[i], xs[j]), the mesh
    inside the grid's range (scipy's RegularGridInterpolator "linear", without importing
    scipy.interpolate: 0.3 s of the command)."""
    def cells(axis: np.ndarray, fine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        low = np.clip(np.searchsorted(axis, fine, side="right") - 1, 0, axis.size - 2)
        return low, (fine - axis[low]) / (axis[low + 1] - axis[low])

    (i, v), (j, u) = cells(y, ys), cells(x, xs)
    v, u = v[:, None], u[None, :]
    return ((1 - v) * ((1 - u) * values[np.ix_(i, j)] + u * values[np.ix_(i, j + 1)])
            + v * ((1 - u) * values[np.ix_(i + 1, j)] + u * values[np.ix_(i + 1, j + 1)]))


def _discrete(ax: Any, table: EfficiencyTable, cmap: Any, norm: Normalize, *,
              rotate: bool | None = None) -> Any:
    eff = table.efficiency
    image = ax.imshow(np.ma.masked_invalid(eff), cmap=cmap, norm=norm, origin="lower",
                      aspect="auto", interpolation="nearest")
    ax.set_xticks(range(len(table.inputs)), labels=table.inputs)
    _ticks(ax, "y", [str(p) for p in table.counts])
    cells = eff.size
    if cells <= _ANNOTATE_MAX:  # values legible in a report column of 800 px (8.5 pt)
        size = 8.5
        for i in range(eff.shape[0]):
            for j in range(eff.shape[1]):
                value = eff[i, j]
                if np.isfinite(value):
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=size,
                            color=ink_on(cmap(norm(value))))
    if len(table.inputs) > 8 if rotate is None else rotate:
        ax.tick_params(axis="x", labelrotation=45)
    return image


def _smoothed(ax: Any, table: EfficiencyTable, cmap: Any, norm: Normalize, *,
              rotate: bool | None = None) -> Any:
    x = np.arange(len(table.inputs), dtype=float)
    y = np.arange(len(table.counts), dtype=float)  # rows as in the discrete view
    xs, ys, grid = smooth_grid(table.efficiency, x, y)
    x0, x1 = (xs[0], xs[-1]) if xs.size > 1 else (xs[0] - 0.5, xs[0] + 0.5)
    y0, y1 = (ys[0], ys[-1]) if ys.size > 1 else (ys[0] - 0.5, ys[0] + 0.5)
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, origin="lower",
                      aspect="auto", interpolation="nearest", extent=(x0, x1, y0, y1))
    # The thesis's smoothed diagrams show only the first and last values on each axis.
    xt = [x[0], x[-1]] if x.size > 1 else [x[0]]
    yt = [y[0], y[-1]] if y.size > 1 else [y[0]]
    ax.set_xticks(xt, labels=[table.inputs[0], table.inputs[-1]][:len(xt)])
    ax.set_yticks(yt, labels=[str(table.counts[0]), str(table.counts[-1])][:len(yt)])
    if rotate:
        ax.tick_params(axis="x", labelrotation=45)
    return image


# --- the fixed layout ---------------------------------------------------------------------------
# energy_figure places its Axes itself, in inches, instead of constrained layout: that engine
# measures every text of every Axes in an extra draw before the real one, which was half of
# ``phasekit energy plot``. The margins fit what is drawn here: short numbers on
# the y axes, x labels rotated and given room when long, one colour bar right of a section.
_TITLE_H = 0.45  # a section's title
_AX_TOP = 0.3  # an Axes' title
_AX_LEFT = 0.7  # y tick labels and the y label
_AX_BOTTOM = 0.55  # x tick labels and the x label
_GAP = 0.3  # between panels
_BAR = 1.0  # a section's colour bar with its labels
_PANEL_H = 2.3
_PANEL_W_MAX = 4.6
_TICK_CHAR = 0.085  # inches per character of a 10-point tick label
_MAX_LABELS = 6  # tick labels per heatmap axis at most (every tick is kept)
_CELL_TEXT_MAX = 48  # cells of a configuration heatmap above which values are not written


class _Section:
    """A titled block of equal panels in rows of ``columns``, with an optional colour bar
    right of them; sizes in inches."""

    def __init__(self, panels: int, columns: int, *, labels: Sequence[str] = (),
                 rotate: bool = False, bar: bool = True) -> None:
        self.panels, self.columns, self.rotate, self.bar = panels, max(1, columns), rotate, bar
        longest = max((len(s) for s in labels), default=0)
        self.bottom = _AX_BOTTOM + (0.7 * _TICK_CHAR * max(0, longest - 2) if rotate else 0.0)
        self.rows = math.ceil(panels / self.columns)
        self.row_h = _AX_TOP + _PANEL_H + self.bottom
        self.height = _TITLE_H + self.rows * self.row_h

    def place(self, fig: Figure, top: float, title: str) -> tuple[list[Axes], Axes | None]:
        """The Axes of the panels (and of the colour bar) of this section, ``top`` inches
        below the top of ``fig``, under ``title``."""
        width, height = fig.get_size_inches()
        room = width - (_BAR if self.bar else 0.2)
        panel_w = min(_PANEL_W_MAX, room / self.columns - _AX_LEFT - _GAP)
        used = self.columns * (_AX_LEFT + panel_w + _GAP)
        x0 = (room - used) / 2

        def rect(left: float, upper: float, w: float, h: float) -> tuple[float, ...]:
            return (left / width, 1 - (upper + h) / height, w / width, h / height)

        axes = []
        for k in range(self.panels):
            r, c = divmod(k, self.columns)
            axes.append(fig.add_axes(rect(x0 + c * (_AX_LEFT + panel_w + _GAP) + _AX_LEFT,
                                          top + _TITLE_H + r * self.row_h + _AX_TOP,
                                          panel_w, _PANEL_H)))
        fig.text(0.5, 1 - (top + 0.5 * _TITLE_H) / height, title, ha="center", va="center",
                 fontsize="large")
        bar = None
        if self.bar:
            span = (self.rows - 1) * self.row_h + _PANEL_H
            short = 0.1 * span if self.rows > 1 else 0.0
            bar = fig.add_axes(rect(x0 + used + 0.05, top + _TITLE_H + _AX_TOP + short / 2,
                                    0.15, span - short))
        return axes, bar


def _ticks(ax: Any, axis: str, labels: Sequence[str]) -> None:
    """Categorical ticks 0, 1, ... with ``labels``, at most :data:`_MAX_LABELS` of them
    written (the first, the last and evenly between)."""
    n = len(labels)
    shown = set(range(n))
    if n > _MAX_LABELS:  # evenly spaced when a step allows, else the last moved to the end
        base = math.ceil((n - 1) / (_MAX_LABELS - 1))
        step = next((s for s in range(base, base + 3) if (n - 1) % s == 0), base)
        shown = set(range(0, n, step))
        if (n - 1) % step:
            if n - 1 - max(shown) < step / 2:
                shown.discard(max(shown))
            shown.add(n - 1)
    text = [s if k in shown else "" for k, s in enumerate(labels)]
    getattr(ax, f"set_{axis}ticks")(range(n), labels=text)


def _label_names(values: Sequence[Any]) -> list[str]:
    return [f"{v:g}" if isinstance(v, float) and math.isfinite(v) else
            "-" if isinstance(v, float) else str(v) for v in values]


def _long(labels: Sequence[str], panels: int) -> bool:
    """Whether x tick labels must be rotated to fit: room per label against their length."""
    per_panel = 10.0 / max(1, min(panels, 4))  # inches of a panel, roughly
    written = min(len(labels), _MAX_LABELS)
    return written * (max((len(s) for s in labels), default=0) + 1) * _TICK_CHAR > per_panel


def _draw_heatmaps(fig: Figure, top: float, section: _Section,
                   tables: Sequence[EfficiencyTable], mode: str) -> None:
    modes = ("discrete", "smoothed") if mode == "both" else (mode,)
    panels = [(t, m) for t in tables for m in modes]
    first = tables[0]
    at = "" if first.frequency_ghz is None else f" at {first.frequency_ghz:g} GHz"
    on = "" if first.cores is None else f" on {first.cores} cores"
    estimated = any(any(t.estimated) for t in tables)
    extra = " (T(1) estimated for some inputs, see notes)" if estimated else ""
    axes, bar = section.place(fig, top, f"Parallel efficiency{at}{on}, Silva 2024 §3.10.1{extra}")
    cmap, norm = _efficiency_cmap(), Normalize(0.0, 1.0)
    for ax, (table, m) in zip(axes, panels, strict=True):
        (_discrete if m == "discrete" else _smoothed)(ax, table, cmap, norm,
                                                      rotate=section.rotate)
        ax.set_title(f"{table.name} ({m})", fontsize="medium")
        ax.set_xlabel("input")
        ax.set_ylabel(table.unit)
    over = any(np.nanmax(t.efficiency, initial=0.0) > 1.0 for t in tables)
    assert bar is not None
    fig.colorbar(ScalarMappable(norm, cmap), cax=bar, extend="max" if over else "neither",
                 label=f"efficiency (speedup / {first.unit})")


def _heat_section(tables: Sequence[EfficiencyTable], mode: str) -> _Section:
    """Discrete/smoothed pairs two to a row, single panels three to a row."""
    n = len(tables)
    panels = 2 * n if mode == "both" else n
    columns = (4 if n > 1 else 2) if mode == "both" else min(3, n)
    labels = [str(s) for s in tables[0].inputs]  # every table has the same inputs
    return _Section(panels, columns, labels=labels,
                    rotate=len(labels) > 8 or _long(labels, columns))


class _Landscape:
    """One configuration heatmap: ``values`` (rows: core counts, columns: ``columns``) relative
    to the least of each group of columns (the whole panel when it shows one input, each
    column when the columns are inputs), the frontier and least cells marked."""

    def __init__(self, title: str, xlabel: str, columns: list[str], counts: list[str],
                 values: np.ndarray, pareto: np.ndarray, per_column: bool,
                 color: str = "black") -> None:
        self.title, self.xlabel, self.columns, self.counts = title, xlabel, columns, counts
        self.color, self.pareto = color, pareto
        with np.errstate(invalid="ignore", divide="ignore"):
            if per_column:
                least = np.nanmin(np.where(np.isfinite(values), values, np.inf), axis=0)
                self.ratio = values / least[None, :]
                self.best = [(int(np.nanargmin(np.where(np.isfinite(values[:, j]),
                                                        values[:, j], np.inf))), j)
                             for j in range(values.shape[1]) if np.isfinite(least[j])]
            else:
                finite = np.where(np.isfinite(values), values, np.inf)
                k = int(np.argmin(finite))
                self.ratio = values / finite.flat[k]
                self.best = [divmod(k, values.shape[1])] if np.isfinite(finite.flat[k]) else []


def _landscapes(configs: ConfigurationTable, value: str) -> list[_Landscape]:
    """The configuration heatmaps of ``configs`` for column ``value`` (energy_j or time_s):
    one per input over frequency and cores, or, with a single (or no) frequency, one over
    inputs and cores."""
    columns = configs.columns
    cores = np.asarray(columns["cores"], dtype=int)
    freq = np.round(np.asarray(columns["frequency_ghz"], dtype=float), 6)
    labels = np.asarray(columns["input"], dtype=object)
    data = np.asarray(columns[value], dtype=float)
    front = np.asarray(columns["pareto"], dtype=bool)
    counts = np.unique(cores)
    row = np.searchsorted(counts, cores)
    freqs = list(np.unique(freq[np.isfinite(freq)]))
    if np.isnan(freq).any():
        freqs.append(math.nan)
    inputs = list(configs.inputs)
    if len(freqs) <= 1:
        col = np.asarray([inputs.index(x) if x in inputs else -1 for x in labels])
        keep = col >= 0
        grid = np.full((counts.size, len(inputs)), np.nan)
        marks = np.zeros(grid.shape, dtype=bool)
        grid[row[keep], col[keep]] = data[keep]
        marks[row[keep], col[keep]] = front[keep]
        at = f" at {freqs[0]:g} GHz" if freqs and math.isfinite(freqs[0]) else ""
        return [_Landscape(f"every input{at}", "input", inputs, _label_names(list(counts)),
                           grid, marks, per_column=True)]
    fcol = np.asarray([freqs.index(f) if math.isfinite(f) else len(freqs) - 1 for f in freq])
    out = []
    for k, label in enumerate(inputs):
        mine = labels == label
        grid = np.full((counts.size, len(freqs)), np.nan)
        marks = np.zeros(grid.shape, dtype=bool)
        grid[row[mine], fcol[mine]] = data[mine]
        marks[row[mine], fcol[mine]] = front[mine]
        least = np.nanmin(grid) if np.isfinite(grid).any() else math.nan
        what = _amount(least, "J" if value == "energy_j" else "s")
        word = "least" if value == "energy_j" else "fastest"
        out.append(_Landscape(f"input {label}: {word} {what}", "frequency (GHz)",
                              _label_names(freqs), _label_names(list(counts)), grid, marks,
                              per_column=False, color=color(k)))
    return out


def _amount(value: float, unit: str) -> str:
    """``value`` in ``unit`` with 4 significant digits, in k``unit`` from 10 000."""
    return f"{value / 1e3:.4g} k{unit}" if abs(value) >= 1e4 else f"{value:.4g} {unit}"


def _compact(value: float, _: Any = None) -> str:
    """A tick label: 3, 30, 300, 3000, 30k, 300k, 3M."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:g}M"
    return f"{value / 1e3:g}k" if abs(value) >= 1e4 else f"{value:g}"


def _outline(ax: Any, cells: Sequence[tuple[int, int]], **style: Any) -> None:
    """Squares around ``cells`` (row, column), one Line2D."""
    xs: list[float] = []
    ys: list[float] = []
    for i, j in cells:
        xs += [j - 0.5, j + 0.5, j + 0.5, j - 0.5, j - 0.5, math.nan]
        ys += [i - 0.5, i - 0.5, i + 0.5, i + 0.5, i - 0.5, math.nan]
    if xs:
        ax.plot(xs, ys, solid_joinstyle="miter", **style)


def _draw_landscape(ax: Any, land: _Landscape, cmap: Any, norm: Normalize, unit: str,
                    *, rotate: bool, marks: bool) -> None:
    ratio = land.ratio
    ax.imshow(np.ma.masked_invalid(ratio), cmap=cmap, norm=norm, origin="lower",
              aspect="auto", interpolation="nearest")
    if ratio.size <= _CELL_TEXT_MAX:
        size = 9 if ratio.size <= 24 else 8.5
        for i, j in zip(*np.nonzero(np.isfinite(ratio)), strict=True):
            v = float(ratio[i, j])
            ax.text(j, i, f"{v:.2f}" if v < 10 else f"{v:.0f}", ha="center", va="center",
                    fontsize=size, color=ink_on(cmap(norm(v))))
    if marks:  # the frontier: a dot in the upper right corner of its cells
        i, j = np.nonzero(land.pareto & np.isfinite(ratio))
        if i.size:
            ax.plot(j + 0.3, i + 0.28, ls="none", marker="o", ms=3.5, mfc="white",
                    mec="black", mew=0.7)
    _region_edges(ax, np.isfinite(ratio) & (ratio <= WITHIN), color="white", lw=1.6)
    _outline(ax, land.best, color="black", lw=2.4)
    ax.set_xlim(-0.5, ratio.shape[1] - 0.5)
    ax.set_ylim(-0.5, ratio.shape[0] - 0.5)
    _ticks(ax, "x", land.columns)
    _ticks(ax, "y", land.counts)
    if rotate:
        ax.tick_params(axis="x", labelrotation=45)
    ax.set_xlabel(land.xlabel)
    ax.set_ylabel(unit)
    ax.set_title(land.title, fontsize="medium", color=land.color)


def _region_edges(ax: Any, inside: np.ndarray, **style: Any) -> None:
    """The border of the cells ``inside`` (a mask over the image's rows x columns), along
    the cells' edges."""
    from matplotlib.collections import LineCollection

    padded = np.pad(inside, 1, constant_values=False)
    segments = []
    for i, j in zip(*np.nonzero(inside), strict=True):
        x0, x1, y0, y1 = j - 0.5, j + 0.5, i - 0.5, i + 0.5
        if not padded[i, j + 1]:
            segments.append([(x0, y0), (x1, y0)])
        if not padded[i + 2, j + 1]:
            segments.append([(x0, y1), (x1, y1)])
        if not padded[i + 1, j]:
            segments.append([(x0, y0), (x0, y1)])
        if not padded[i + 1, j + 2]:
            segments.append([(x1, y0), (x1, y1)])
    if segments:
        ax.add_collection(LineCollection(segments, colors=style.get("color", "white"),
                                         linewidths=style.get("lw", 1.5),
                                         linestyles=style.get("linestyle", "solid")))


def _nice_ticks(lo: float, hi: float, most: int = 7) -> list[float]:
    """1-2-5 values from ``lo`` to ``hi`` (positive) for a log axis, at most ``most``."""
    steps = ((1.0, 2.0, 5.0), (1.0, 3.0), (1.0,))
    low, high = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for mantissas in steps:
        ticks = [m * 10.0**e for e in range(low, high + 1) for m in mantissas]
        ticks = [t for t in ticks if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]
        if len(ticks) <= most:
            break
    while len(ticks) > most:  # decades only, thinned
        ticks = ticks[::2]
    if len(ticks) < 3:  # a narrow range: evenly spaced round values
        ticks = [float(t) for t in MaxNLocator(5, steps=[1, 2, 5, 10]).tick_values(lo, hi)
                 if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]
    return ticks or [lo]


def _plain_log(ax: Any, axis: str, values: np.ndarray) -> None:
    """A log scale over ``values`` when they span more than a factor of 4, with plain tick
    labels (``%g``: the default mathtext labels parse a grammar on first use, 0.1 s) and no
    minor ticks."""
    values = values[np.isfinite(values) & (values > 0)]
    if not values.size or values.max() <= 4 * values.min():
        return
    getattr(ax, f"set_{axis}scale")("log")
    lo, hi = float(values.min()), float(values.max())
    ticks = _nice_ticks(lo, hi, 5)
    if len(ticks) < 2:
        ticks = sorted({lo, hi})
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(FixedLocator(ticks))
    target.set_major_formatter(FuncFormatter(_compact))
    target.set_minor_locator(NullLocator())


def _draw_tradeoff(ax: Any, configs: ConfigurationTable) -> None:
    """Energy against time of every configuration, one colour per input (that of its
    heatmap's title), each input's Pareto frontier as a line and its least energy as a
    star (Silva 2024 §4.11)."""
    columns = configs.columns
    labels = np.asarray(columns["input"], dtype=object)
    time_s = np.asarray(columns["time_s"], dtype=float)
    energy = np.asarray(columns["energy_j"], dtype=float)
    front = np.asarray(columns["pareto"], dtype=bool)
    for k, label in enumerate(configs.inputs):
        mine = (labels == label) & np.isfinite(energy)
        if not mine.any():
            continue
        c = color(k)
        ax.scatter(time_s[mine], energy[mine], s=9, color=c, alpha=0.45, linewidths=0)
        on = mine & front
        order = np.argsort(time_s[on])
        ax.plot(time_s[on][order], energy[on][order], color=c, lw=1.2, marker="o", ms=3.5,
                mfc="white")
        best = np.flatnonzero(mine)[np.argmin(energy[mine])]
        ax.plot([time_s[best]], [energy[best]], marker="*", ms=11, color=c, mec="black",
                mew=0.6, ls="none")
    ok = np.isfinite(energy)
    _plain_log(ax, "x", time_s[ok])
    _plain_log(ax, "y", energy[ok])
    ax.set_xlabel("time (s)")
    ax.set_ylabel("energy (J)")
    ax.margins(0.06)
    ax.set_title("energy vs time, every input", fontsize="medium")
    ax.grid(True, alpha=0.3)


def _tradeoff(configs: ConfigurationTable) -> bool:
    """Whether ``configs`` have the energy-vs-time panel: energy and time measured."""
    return bool(configs.has_energy and configs.has_time)


def _config_section(configs: ConfigurationTable, lands: Sequence[_Landscape]) -> _Section:
    panels = len(lands) + (1 if _tradeoff(configs) else 0)
    columns = panels if panels <= 4 else math.ceil(panels / math.ceil(panels / 4))
    labels = lands[0].columns  # the same in every heatmap
    return _Section(panels, columns, labels=labels, rotate=_long(labels, columns))


#: The heatmaps' colour scale runs from each input's least to this multiple of it (beyond:
#: the last colour): the choice lies among the configurations within a few per cent of the
#: least, which a scale running to the worst (20x on real campaigns) paints in one colour.
NEAR_BEST = 1.5
#: The contour drawn on each heatmap: configurations within 5 % of the input's least.
WITHIN = 1.05


def _ratio_top(lands: Sequence[_Landscape]) -> float:
    return max((float(np.nanmax(land.ratio)) for land in lands
                if np.isfinite(land.ratio).any()), default=1.0)


def _ratio_norm(lands: Sequence[_Landscape]) -> Normalize:
    return Normalize(1.0, min(max(_ratio_top(lands), WITHIN), NEAR_BEST))


def _draw_configurations(fig: Figure, top: float, section: _Section,
                         configs: ConfigurationTable, lands: Sequence[_Landscape]) -> None:
    what = "energy" if configs.has_energy else "time"
    least = "least" if configs.has_energy else "fastest"
    if _tradeoff(configs):
        title = ("Energy relative to each input's least: box and star the least, white line "
                 "within 5 %, dots the time-energy Pareto frontier (§4.11)")
    elif configs.has_energy:
        title = ("Energy relative to each input's least (boxed; white line: within 5 %); "
                 "no run times: efficiency and the time-energy frontier need time_s")
    else:
        title = ("Time over configurations relative to each input's fastest, box: fastest "
                 "(no energy measured: energy panels skipped)")
    axes, bar = section.place(fig, top, title)
    if _tradeoff(configs):
        _draw_tradeoff(axes[0], configs)
        axes = axes[1:]
    cmap = colormaps["RdYlBu_r"].with_extremes(bad="#d9d9d9")
    norm = _ratio_norm(lands)
    for ax, land in zip(axes, lands, strict=True):
        _draw_landscape(ax, land, cmap, norm, configs.unit, rotate=section.rotate,
                        marks=_tradeoff(configs))
    assert bar is not None
    cb = fig.colorbar(ScalarMappable(norm, cmap), cax=bar,
                      extend="max" if _ratio_top(lands) > NEAR_BEST else "neither",
                      label=f"{what} (× the input's {least})")
    ticks = _nice_ticks(norm.vmin, norm.vmax, 6)
    cb.set_ticks(ticks, labels=[f"{t:g}" for t in ticks])
    cb.ax.yaxis.set_minor_locator(NullLocator())


def energy_figure(*, tables: Sequence[EfficiencyTable] = (),
                  configs: ConfigurationTable | None = None, mode: str = "both") -> Figure:
    """The efficiency heatmaps of ``tables`` (program and regions) in ``mode``, then the
    configurations of ``configs``: energy (time when none was measured) relative to each
    input's least over frequency and cores, and energy against time with the Pareto
    frontiers (not when no time was measured); either part may be left out."""
    if mode not in MODES:
        raise UsageError(f"expected one of {', '.join(MODES)}", parameter="mode", value=mode)
    tables = list(tables)
    if not tables and (configs is None or not configs.inputs):
        raise UsageError("nothing to plot: no efficiency table and no configuration")
    heat = _heat_section(tables, mode) if tables else None
    lands: list[_Landscape] = []
    config = None
    if configs is not None and configs.inputs:
        lands = _landscapes(configs, "energy_j" if configs.has_energy else "time_s")
        config = _config_section(configs, lands)
    height = sum(s.height for s in (heat, config) if s is not None) + 0.1
    fig = figure(WIDTH, height, layout=None)
    top = 0.0
    if heat is not None:
        _draw_heatmaps(fig, top, heat, tables, mode)
        top += heat.height
    if config is not None:
        assert configs is not None
        _draw_configurations(fig, top, config, configs, lands)
    return fig


def plot_energy(path: str | os.PathLike[str], *, tables: Sequence[EfficiencyTable] = (),
                configs: ConfigurationTable | None = None, mode: str = "both") -> Path:
    """Write :func:`energy_figure` to ``path`` (format from its name)."""
    return save(energy_figure(tables=tables, configs=configs, mode=mode), path)


def _core_norm(cores: np.ndarray) -> Normalize:
    lo, hi = float(np.min(cores)), float(np.max(cores))
    return LogNorm(lo, hi) if hi > lo else Normalize(lo - 1, hi + 1)


def _draw_pareto(ax: Any, rows: Any, cmap: Any, cnorm: Normalize, label: str,
                 unit: str) -> None:
    rows = rows.dropna(subset=["energy_j"])
    ax.scatter(rows["time_s"], rows["energy_j"], c=rows["cores"], cmap=cmap, norm=cnorm, s=12,
               alpha=0.8, linewidths=0)
    front = rows[rows["pareto"]].sort_values("time_s")
    ax.plot(front["time_s"], front["energy_j"], color="black", lw=1.2, marker="o", ms=5,
            mfc="none", label=f"Pareto frontier ({len(front)})")
    if len(rows):
        best = rows.loc[rows["energy_j"].idxmin()]
        f = best["frequency_ghz"]
        name = f"{int(best['cores'])} {unit}" + ("" if not np.isfinite(f) else f", {f:g} GHz")
        ax.plot([best["time_s"]], [best["energy_j"]], marker="*", ms=11, color="tab:red",
                ls="none", label=f"min energy: {name}")
    _plain_log(ax, "x", rows["time_s"].to_numpy(float))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("energy (J)")
    ax.set_title(f"input {label}: energy vs time (Silva 2024 §4.11)", fontsize="medium")
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, alpha=0.3)


def draw_efficiency(ax: Axes, table: EfficiencyTable, mode: str = "discrete") -> Any:
    """One efficiency heatmap of ``table`` on ``ax`` (``mode`` discrete or smoothed), with
    its colour bar; returns the image."""
    if mode not in ("discrete", "smoothed"):
        raise UsageError("expected discrete or smoothed on one Axes", parameter="mode",
                         value=mode)
    cmap, norm = _efficiency_cmap(), Normalize(0.0, 1.0)
    image = (_discrete if mode == "discrete" else _smoothed)(ax, table, cmap, norm)
    ax.set_title(f"{table.name} ({mode})", fontsize="medium")
    ax.set_xlabel("input")
    ax.set_ylabel(table.unit)
    over = bool(np.nanmax(table.efficiency, initial=0.0) > 1.0)
    ax.figure.colorbar(ScalarMappable(norm, cmap), ax=ax, extend="max" if over else "neither",
                       label=f"efficiency (speedup / {table.unit})")
    return image


def draw_choice(ax: Axes, result: ChoiceResult, choice: Choice, *, legend: bool = True) -> None:
    """One input's panel of :func:`choice_figure` on ``ax``: predicted energy against time of
    every configuration within the limits (the Pareto frontier alone for a result read back
    from JSON, which does not keep the others), the choice and the ondemand baseline. A model
    fitted on energy alone: predicted energy against cores, a line per frequency. No
    configuration within the time limit: every configuration against the limit, the fastest
    marked."""
    import pandas as pd

    points = choice.drawn_points()
    if not points:
        why = choice.reason or "no configuration meets the limits"
        raise UsageError(f"input {choice.input_label}: nothing to plot ({why})")
    cmap = colormaps["viridis"]
    cnorm = _core_norm(np.asarray(result.cores, float))
    fmax = max(result.frequencies_ghz) if result.frequency_controlled else float("nan")
    def key(frequency: float, cores: int) -> tuple[float, int]:
        return (round(float(frequency), 9) if math.isfinite(frequency) else -1.0, int(cores))

    front = {key(c.frequency_ghz, c.cores) for c in choice.pareto}
    rows = pd.DataFrame([c.to_dict() for c in points])
    for name in ("frequency_ghz", "time_s", "energy_j"):
        rows[name] = rows[name].astype(float)
    rows["pareto"] = [key(c.frequency_ghz, c.cores) in front for c in points]
    if choice.best is None:
        _draw_over_limit(ax, result, choice, rows, cmap, cnorm)
    elif not result.with_time:
        _draw_energy_by_cores(ax, result, choice, rows, fmax)
    else:
        _draw_pareto(ax, rows, cmap, cnorm, choice.input_label, "cores")
        ondemand = rows[np.isclose(rows["frequency_ghz"], fmax)] if np.isfinite(fmax) else rows
        ax.plot(ondemand["time_s"], ondemand["energy_j"], ls="none", marker="^", ms=6,
                mfc="none", color="tab:gray",
                label="ondemand (max frequency)" if np.isfinite(fmax) else "every core count")
    if legend:
        ax.legend(loc="best", fontsize="small")


def _frequency_norm(result: ChoiceResult) -> Normalize:
    freqs = np.asarray(result.frequencies_ghz, float)
    lo, hi = float(freqs.min()), float(freqs.max())
    return Normalize(lo, hi) if hi > lo else Normalize(lo - 0.1, hi + 0.1)


def _draw_energy_by_cores(ax: Any, result: ChoiceResult, choice: Choice, rows: Any,
                          fmax: float) -> None:
    """Predicted energy against cores, a line per frequency (coloured by it), the choice
    starred and ondemand's configurations (maximum frequency) as triangles: a model fitted
    on energy alone predicts no time to plot energy against."""
    cmap, fnorm = colormaps["plasma"], _frequency_norm(result)
    groups = rows.groupby(rows["frequency_ghz"].fillna(-1.0), sort=True)
    for frequency, group in groups:
        group = group.sort_values("cores")
        shade = cmap(fnorm(frequency)) if frequency > 0 else "tab:blue"
        ax.plot(group["cores"], group["energy_j"], color=shade, lw=1.0, marker=".", ms=4)
    best = choice.best
    name = f"{best.cores} cores" + (f", {best.frequency_ghz:g} GHz"
                                    if math.isfinite(best.frequency_ghz) else "")
    ax.plot([best.cores], [best.energy_j], marker="*", ms=11, color="tab:red", ls="none",
            label=f"min energy: {name}")
    ondemand = rows[np.isclose(rows["frequency_ghz"], fmax)] if np.isfinite(fmax) else rows
    ax.plot(ondemand["cores"], ondemand["energy_j"], ls="none", marker="^", ms=6, mfc="none",
            color="tab:gray",
            label="ondemand (max frequency)" if np.isfinite(fmax) else "every core count")
    _plain_log(ax, "x", rows["cores"].to_numpy(float))
    ax.set_xlabel("cores")
    ax.set_ylabel("predicted energy (J)")
    ax.set_title(f"input {choice.input_label}: predicted energy by cores", fontsize="medium")
    ax.grid(True, alpha=0.3)


def _draw_over_limit(ax: Any, result: ChoiceResult, choice: Choice, rows: Any, cmap: Any,
                     cnorm: Normalize) -> None:
    """Every configuration over the time limit, the limit as a dashed line and the fastest
    configuration marked: what ``energy choose`` says when none meets the limit."""
    limit = result.limits.get("max_time_s")
    ax.scatter(rows["time_s"], rows["energy_j"], c=rows["cores"], cmap=cmap, norm=cnorm, s=12,
               alpha=0.5, linewidths=0)
    fastest = choice.fastest
    if fastest is not None:
        name = f"{fastest.cores} cores" + (f", {fastest.frequency_ghz:g} GHz"
                                           if math.isfinite(fastest.frequency_ghz) else "")
        ax.plot([fastest.time_s], [fastest.energy_j], marker="D", ms=7, color="tab:red",
                ls="none", label=f"fastest: {fastest.time_s:.4g} s ({name})")
    times = rows["time_s"].to_numpy(float)
    if limit is not None and math.isfinite(limit):
        ax.axvline(limit, color="black", ls="--", lw=1.0, label=f"time limit {limit:g} s")
        times = np.append(times, limit)
    _plain_log(ax, "x", times)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("energy (J)")
    within = f" within {limit:g} s" if limit is not None else ""
    ax.set_title(f"input {choice.input_label}: no configuration{within}", fontsize="medium")
    ax.grid(True, alpha=0.3)


#: Inputs the choice figure draws at most (a row each); the others are named in its title.
CHOICE_ROWS = 8
_MAP_ROW_H = 2.1  # inches per input of the choice figure


def _choice_cells(choice: Choice) -> tuple[list[float], list[int], np.ndarray, np.ndarray]:
    """The grid of ``choice``'s configurations within the limits: its frequencies (NaN alone
    where the frequency was not controlled), core counts, and the predicted and measured
    energies as (cores x frequencies) arrays, NaN where absent."""
    points = choice.evaluated or choice.drawn_points()
    freqs = sorted({round(c.frequency_ghz, 9) for c in points
                    if math.isfinite(c.frequency_ghz)}) or [math.nan]
    cores = sorted({int(c.cores) for c in points})
    predicted = np.full((len(cores), len(freqs)), np.nan)
    measured = np.full_like(predicted, np.nan)
    for c in points:
        i, j = _cell_of(freqs, cores, c)
        predicted[i, j], measured[i, j] = c.energy_j, c.measured_energy_j
    return freqs, cores, predicted, measured


def _cell_of(freqs: Sequence[float], cores: Sequence[int], candidate: Any) -> tuple[int, int]:
    f = candidate.frequency_ghz
    j = freqs.index(round(f, 9)) if math.isfinite(f) and round(f, 9) in freqs else 0
    return cores.index(int(candidate.cores)), j


def _percent(value: float) -> str:
    return f"{value:+.1f} %" if math.isfinite(value) else "n/a"


def draw_choice_map(ax: Axes, result: ChoiceResult, choice: Choice, *,
                    measured: bool) -> None:
    """One input's energy over frequency x cores on ``ax``, relative to its least: the
    model's prediction or (``measured``) the campaign's readings (grey where not measured),
    the configurations within 5 % of the least bordered in white, the choice starred and the
    lowest reading boxed in black. The measured panel's title gives the regret (against the
    lowest reading, then the denoised one in parentheses)."""
    freqs, cores, predicted, readings = _choice_cells(choice)
    values = readings if measured else predicted
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = values / np.nanmin(values) if np.isfinite(values).any() else values
    cmap = colormaps["RdYlBu_r"].with_extremes(bad="#d9d9d9")
    ax.imshow(np.ma.masked_invalid(ratio), cmap=cmap, norm=Normalize(1.0, NEAR_BEST),
              origin="lower", aspect="auto", interpolation="nearest")
    _region_edges(ax, np.isfinite(ratio) & (ratio <= WITHIN), color="white", lw=1.6)
    band = _noise_threshold(result)
    if measured and band > WITHIN - 1:  # readings this close to the least are as good
        _region_edges(ax, np.isfinite(ratio) & (ratio <= 1 + band), color="black", lw=1.0,
                      linestyle=(0, (2, 2)))
    if np.isfinite(readings).any():
        lowest = np.unravel_index(np.nanargmin(readings), readings.shape)
        _outline(ax, [(int(lowest[0]), int(lowest[1]))], color="black", lw=2.4)
    best = choice.best
    if best is not None:
        i, j = _cell_of(freqs, cores, best)
        ax.plot([j], [i], marker="*", ms=13, color="white", mec="black", mew=0.9, ls="none")
    ax.set_xlim(-0.5, len(freqs) - 0.5)
    ax.set_ylim(-0.5, len(cores) - 0.5)
    _ticks(ax, "x", [f"{f:g}" for f in freqs] if math.isfinite(freqs[0]) else ["as run"])
    _ticks(ax, "y", [str(p) for p in cores])
    ax.set_xlabel("frequency (GHz)" if math.isfinite(freqs[0]) else "frequency")
    ax.set_ylabel("cores")
    if not measured:
        away = best is not None and not ratio[_cell_of(freqs, cores, best)] <= WITHIN
        ax.set_title(f"input {choice.input_label}: model"
                     + (" (choice from readings)" if away else ""),
                     fontsize="medium", loc="left")
        return
    if not np.isfinite(readings).any():
        ax.set_title("nothing measured", fontsize="medium", loc="left")
        return
    least = float(np.nanmin(readings))
    read = best.measured_energy_j if best is not None else math.nan
    if math.isfinite(read):
        smoothed = (f" ({choice.regret_denoised:+.1f} %)"
                    if math.isfinite(choice.regret_denoised) else "")
        verdict = f"choice {_percent(100 * (read / least - 1))}{smoothed}"
    else:
        verdict = "choice not measured"
    ax.set_title(f"readings: {verdict}", fontsize="medium", loc="left")


def _noise_threshold(result: ChoiceResult) -> float:
    """The relative difference below which two readings are indistinguishable (0 when the
    noise is unknown)."""
    threshold = (result.noise or {}).get("threshold")
    return float(threshold) if isinstance(threshold, int | float) and math.isfinite(
        threshold) else 0.0


def _noise_words(result: ChoiceResult) -> str:
    noise = result.noise or {}
    relative = noise.get("relative")
    if isinstance(relative, int | float) and math.isfinite(relative):
        return (f"; readings scatter ±{100 * relative:.1f} %, so those within "
                f"{100 * _noise_threshold(result):.0f} % of the lowest (dashed) are as good")
    return ""


def choice_figure(result: ChoiceResult) -> Figure:
    """The figure of ``phasekit energy choose`` (module docstring): per input, its energy
    over frequency x cores as the model predicts it and as the campaign measured it, the
    choice and the lowest reading marked (and, where times were measured, energy against
    time with the Pareto frontier); an input with no configuration within the time limit,
    every configuration against the limit. At most :data:`CHOICE_ROWS` inputs."""
    choices = [c for c in result.choices if c.drawn_points()]
    if not choices:
        raise UsageError("nothing to plot: no configuration meets the limits")
    shown = choices[:CHOICE_ROWS]
    panels = 3 if result.with_time else 2  # per input
    per_row = 1 if result.with_time else 2  # inputs side by side
    rows_n = math.ceil(len(shown) / per_row)
    fig = figure(WIDTH, _MAP_ROW_H * rows_n + 1.0)
    grid = fig.subplots(rows_n, panels * per_row, squeeze=False)
    slots = [grid[k // per_row, (k % per_row) * panels:(k % per_row + 1) * panels]
             for k in range(rows_n * per_row)]
    for row in slots[len(shown):]:
        for ax in row:
            ax.set_visible(False)
    maps, tradeoffs = [], []
    for row, choice in zip(slots, shown, strict=False):
        if choice.best is None:
            draw_choice(row[0], result, choice)
            for ax in row[1:]:
                ax.set_visible(False)
            continue
        draw_choice_map(row[0], result, choice, measured=False)
        draw_choice_map(row[1], result, choice, measured=True)
        maps += [row[0], row[1]]
        if result.with_time:
            draw_choice(row[2], result, choice)
            tradeoffs.append(row[2])
    if maps:
        fig.colorbar(ScalarMappable(Normalize(1.0, NEAR_BEST), colormaps["RdYlBu_r"]),
                     ax=maps, location="bottom", extend="max", shrink=0.6, aspect=40,
                     label="energy (× the least)")
    if tradeoffs:
        counts = np.asarray(result.cores, float)
        bar = fig.colorbar(ScalarMappable(_core_norm(counts), colormaps["viridis"]),
                           ax=tradeoffs, location="bottom", shrink=0.9, aspect=20,
                           label="cores")
        ticks = _nice_ticks(float(counts.min()), float(counts.max()), 6) \
            if counts.max() > counts.min() else [float(counts[0])]
        bar.set_ticks(ticks, labels=[f"{t:g}" for t in ticks])
        bar.ax.xaxis.set_minor_locator(NullLocator())
    more = (f" (the first {len(shown)} of {len(choices)} inputs)"
            if len(choices) > len(shown) else "")
    fig.suptitle(f"Minimum-energy choice per input{more}, the model's energy beside the "
                 f"readings: star the choice, black box the lowest reading, white line within "
                 f"5 % of the least; 'choice +x % (+y %)': its reading above the lowest, then "
                 f"with the noise smoothed out{_noise_words(result)}", fontsize="medium",
                 wrap=True)
    return fig


def plot_choice(path: str | os.PathLike[str], result: ChoiceResult) -> Path:
    """Write :func:`choice_figure` to ``path`` (format from its name)."""
    return save(choice_figure(result), path)
