"""The figures of ``phasekit energy plot``: the PaScal Viewer's diagrams (seed 002, §3.10.1).

- Efficiency heatmaps (Figs. 3.5-3.7): x = input, y = thread count, one per region and one for
  the whole program, in the discrete mode (one cell per measured configuration, its value
  written in it) and the smoothed mode (the thesis's "interpolation to create a visual element
  where the color transition is less pronounced"; its axes show only the first and last
  values). Our smoothing: linear interpolation over (input index, thread-count index) — the
  discrete view's cells, which are log2 threads for the usual 1, 2, 4, ... counts — on a
  200 x 200 mesh: bilinear (scipy RegularGridInterpolator) on a full grid, piecewise-planar
  (scipy griddata) when cells are missing. Every heatmap uses one fixed colour scale, 0 to 1
  (efficiency above 1, superlinear, in a separate colour), so that heatmaps compare.
- Energy and time over configurations (Figs. 3.8-3.9 and 4.11), one row per input: energy
  against frequency with one line per core count (against cores when one frequency was
  measured), time against cores with one line per frequency, and energy against time of every
  configuration with the Pareto frontier highlighted and the minimum-energy configuration
  named. Without energy only the time panels are drawn, and the figure says so.
- ``phasekit energy choose --plot`` (:func:`plot_choice`): per input, the model's predicted
  energy against time over every configuration within the limits, its Pareto frontier, the
  chosen configuration and the ondemand baseline (maximum frequency, every core count).
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
from matplotlib.ticker import NullFormatter

from phasekit.errors import UsageError
from phasekit.plot.common import WIDTH, figure, root_figure, save

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# The results drawn here (phasekit.energy.efficiency's EfficiencyTable and ConfigurationTable,
# phasekit.energy.choose's ChoiceResult and Choice) are typed Any: their plot() methods call
# this module, which therefore imports none of them (no import cycle, tests/test_import_graph).
EfficiencyTable = ConfigurationTable = ChoiceResult = Choice = Any

__all__ = ["MODES", "choice_figure", "draw_choice", "draw_efficiency", "energy_figure",
           "plot_choice", "plot_energy", "smooth_grid", "target_axes"]

#: Heatmap modes: the thesis's discrete and smoothed views, or both side by side.
MODES = ("discrete", "smoothed", "both")
#: Points of the smoothed mesh per axis.
MESH = 200
_ROW_H = 3.0  # inches per row of panels
_ANNOTATE_MAX = 400  # cells: above this the values are not written in the cells


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
    scipy.interpolate: 0.3 s of the command; issue 20)."""
    def cells(axis: np.ndarray, fine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        low = np.clip(np.searchsorted(axis, fine, side="right") - 1, 0, axis.size - 2)
        return low, (fine - axis[low]) / (axis[low + 1] - axis[low])

    (i, v), (j, u) = cells(y, ys), cells(x, xs)
    v, u = v[:, None], u[None, :]
    return ((1 - v) * ((1 - u) * values[np.ix_(i, j)] + u * values[np.ix_(i, j + 1)])
            + v * ((1 - u) * values[np.ix_(i + 1, j)] + u * values[np.ix_(i + 1, j + 1)]))


def _text_color(rgba: Sequence[float]) -> str:
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def _discrete(ax: Any, table: EfficiencyTable, cmap: Any, norm: Normalize) -> Any:
    eff = table.efficiency
    image = ax.imshow(np.ma.masked_invalid(eff), cmap=cmap, norm=norm, origin="lower",
                      aspect="auto", interpolation="nearest")
    ax.set_xticks(range(len(table.inputs)), labels=table.inputs)
    ax.set_yticks(range(len(table.counts)), labels=[str(p) for p in table.counts])
    cells = eff.size
    if cells <= _ANNOTATE_MAX:
        size = 8 if cells <= 60 else 6 if cells <= 150 else 5
        for i in range(eff.shape[0]):
            for j in range(eff.shape[1]):
                value = eff[i, j]
                if np.isfinite(value):
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=size,
                            color=_text_color(cmap(norm(value))))
    if len(table.inputs) > 8:
        ax.tick_params(axis="x", labelrotation=45)
    return image


def _smoothed(ax: Any, table: EfficiencyTable, cmap: Any, norm: Normalize) -> Any:
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
    return image


def _draw_heatmaps(fig: Any, tables: Sequence[EfficiencyTable], mode: str) -> None:
    modes = ("discrete", "smoothed") if mode == "both" else (mode,)
    panels = [(t, m) for t in tables for m in modes]
    rows, columns = _heat_layout(len(tables), mode)
    axes = np.atleast_1d(fig.subplots(rows, columns, squeeze=False)).ravel()
    cmap, norm = _efficiency_cmap(), Normalize(0.0, 1.0)
    image = None
    for ax, (table, m) in zip(axes, panels, strict=False):
        image = (_discrete if m == "discrete" else _smoothed)(ax, table, cmap, norm)
        ax.set_title(f"{table.name} ({m})", fontsize="medium")
        ax.set_xlabel("input")
        ax.set_ylabel(table.unit)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    first = tables[0]
    over = any(np.nanmax(t.efficiency, initial=0.0) > 1.0 for t in tables)
    if image is not None:
        fig.colorbar(ScalarMappable(norm, cmap), ax=list(axes[:len(panels)]),
                     extend="max" if over else "neither", shrink=0.9,
                     label=f"efficiency (speedup / {first.unit})")
    at = "" if first.frequency_ghz is None else f" at {first.frequency_ghz:g} GHz"
    on = "" if first.cores is None else f" on {first.cores} cores"
    estimated = any(any(t.estimated) for t in tables)
    extra = " (T(1) estimated for some inputs, see notes)" if estimated else ""
    fig.suptitle(f"Parallel efficiency{at}{on}, seed 002 §3.10.1{extra}", fontsize="large")


def _core_norm(cores: np.ndarray) -> Normalize:
    lo, hi = float(np.min(cores)), float(np.max(cores))
    return LogNorm(lo, hi) if hi > lo else Normalize(lo - 1, hi + 1)


def _freq_norm(freqs: Sequence[float]) -> Normalize:
    lo, hi = (min(freqs), max(freqs)) if freqs else (0.0, 1.0)
    return Normalize(lo, hi) if hi > lo else Normalize(lo - 0.1, hi + 0.1)


def _pow2_ticks(lo: float, hi: float) -> list[float]:
    """Both ends and the powers of two between them, not crowding the ends."""
    ticks = {lo, hi} | {2.0**k for k in range(math.ceil(math.log2(lo)),
                                               math.floor(math.log2(hi)) + 1)}
    return sorted(t for t in ticks if t in (lo, hi) or (
        math.log2(t / lo) >= 0.5 and math.log2(hi / t) >= 0.5))


def _log2_cores(ax: Any, cores: np.ndarray) -> None:
    """Cores on a log2 axis, ticks at the powers of two in range and at both ends."""
    values = np.unique(cores)
    if values.size > 1:
        ax.set_xscale("log", base=2)
        ticks = _pow2_ticks(float(values[0]), float(values[-1]))
        ax.set_xticks(ticks, labels=[f"{t:g}" for t in ticks])
        ax.minorticks_off()


def _log_if_wide(ax: Any, values: Any, axis: str) -> None:
    """A log scale when ``values`` span more than a factor of 4 (minor ticks unlabelled)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if values.size and values.max() > 4 * values.min():
        getattr(ax, f"set_{axis}scale")("log")
        target = ax.xaxis if axis == "x" else ax.yaxis
        target.set_minor_formatter(NullFormatter())


def _draw_time(ax: Any, rows: Any, freqs: tuple[float, ...], fmap: Any, fnorm: Normalize,
               label: str, unit: str) -> None:
    groups = rows.groupby(rows["frequency_ghz"].fillna(-1.0), sort=True)
    for f, part in groups:
        colour = fmap(fnorm(f)) if f > 0 and len(freqs) > 1 else "tab:blue"
        part = part.sort_values("cores")
        ax.plot(part["cores"], part["time_s"], marker="o", ms=3, lw=1.2, color=colour,
                label=f"{f:g} GHz" if f > 0 else None)
    _log2_cores(ax, rows["cores"].to_numpy())
    _log_if_wide(ax, rows["time_s"], "y")
    ax.set_xlabel(unit)
    ax.set_ylabel("time (s)")
    ax.set_title(f"input {label}: time", fontsize="medium")
    ax.grid(True, alpha=0.3)


def _draw_energy(ax: Any, rows: Any, freqs: tuple[float, ...], cmap: Any, cnorm: Normalize,
                 label: str, unit: str) -> None:
    rows = rows.dropna(subset=["energy_j"])
    if len(freqs) > 1:
        for p, part in rows.groupby("cores", sort=True):
            part = part.dropna(subset=["frequency_ghz"]).sort_values("frequency_ghz")
            ax.plot(part["frequency_ghz"], part["energy_j"], marker="o", ms=2.5, lw=1.0,
                    color=cmap(cnorm(p)))
        ax.set_xlabel("frequency (GHz)")
        ax.set_title(f"input {label}: energy, one line per {unit[:-1]} count",
                     fontsize="medium")
    else:
        part = rows.sort_values("cores")
        ax.plot(part["cores"], part["energy_j"], marker="o", ms=3, lw=1.2, color="tab:green")
        _log2_cores(ax, part["cores"].to_numpy())
        ax.set_xlabel(unit)
        ax.set_title(f"input {label}: energy", fontsize="medium")
    _log_if_wide(ax, rows["energy_j"], "y")
    ax.set_ylabel("energy (J)")
    ax.grid(True, alpha=0.3)


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
    _log_if_wide(ax, rows["time_s"], "x")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("energy (J)")
    ax.set_title(f"input {label}: energy vs time (seed 002 §4.11)", fontsize="medium")
    ax.legend(loc="upper right", fontsize="small")
    ax.grid(True, alpha=0.3)


def _draw_configurations(fig: Any, configs: ConfigurationTable) -> None:
    frame = configs.frame
    freqs = configs.frequencies
    cmap, fmap = colormaps["viridis"], colormaps["plasma"]
    cnorm, fnorm = _core_norm(frame["cores"].to_numpy()), _freq_norm(freqs)
    inputs, unit = configs.inputs, configs.unit
    if configs.has_energy:
        axes = fig.subplots(len(inputs), 3, squeeze=False)
        for k, label in enumerate(inputs):
            rows = frame[frame["input"] == label]
            _draw_energy(axes[k, 0], rows, freqs, cmap, cnorm, label, unit)
            _draw_time(axes[k, 1], rows, freqs, fmap, fnorm, label, unit)
            _draw_pareto(axes[k, 2], rows, cmap, cnorm, label, unit)
        bar = fig.colorbar(ScalarMappable(cnorm, cmap), ax=list(axes[:, 0]), location="bottom",
                           shrink=0.8, aspect=30, label=f"{unit} (energy lines, scatter points)")
        if isinstance(cnorm, LogNorm):
            ticks = _pow2_ticks(cnorm.vmin, cnorm.vmax)
            bar.set_ticks(ticks, labels=[f"{t:g}" for t in ticks])
            bar.ax.xaxis.set_minor_formatter(NullFormatter())
        time_axes = list(axes[:, 1])
        title = "Energy and time over configurations"
    else:
        columns = min(3, len(inputs))
        grid = fig.subplots(math.ceil(len(inputs) / columns), columns, squeeze=False).ravel()
        for ax, label in zip(grid, inputs, strict=False):
            _draw_time(ax, frame[frame["input"] == label], freqs, fmap, fnorm, label, unit)
        for ax in grid[len(inputs):]:
            ax.set_visible(False)
        time_axes = list(grid[:len(inputs)])
        title = "Time over configurations (no energy measured: energy panels skipped)"
    if len(freqs) > 1:
        fig.colorbar(ScalarMappable(fnorm, fmap), ax=time_axes, location="bottom",
                     shrink=0.8, aspect=30, label="frequency (GHz, time lines)")
    fig.suptitle(title, fontsize="large")


def _heat_layout(n_tables: int, mode: str) -> tuple[int, int]:
    """(rows, columns) of heatmap panels: discrete/smoothed pairs two to a row, single
    panels three to a row."""
    if mode == "both":
        columns = 4 if n_tables > 1 else 2
        return math.ceil(2 * n_tables / columns), columns
    columns = min(3, n_tables)
    return math.ceil(n_tables / columns), columns


def _heat_height(tables: Sequence[EfficiencyTable], mode: str) -> float:
    return _heat_layout(len(tables), mode)[0] * _ROW_H + 0.6


def _config_height(configs: ConfigurationTable) -> float:
    n = len(configs.inputs)
    rows = n if configs.has_energy else math.ceil(n / min(3, n))
    return rows * _ROW_H + 0.6


def energy_figure(*, tables: Sequence[EfficiencyTable] = (),
                  configs: ConfigurationTable | None = None, mode: str = "both") -> Figure:
    """The efficiency heatmaps of ``tables`` (program and regions) in ``mode``, then the
    energy/time panels of ``configs``; either part may be left out."""
    if mode not in MODES:
        raise UsageError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    tables = list(tables)
    if not tables and (configs is None or not configs.inputs):
        raise UsageError("nothing to plot: no efficiency table and no configuration")
    parts: list[tuple[str, float]] = []
    if tables:
        parts.append(("heat", _heat_height(tables, mode)))
    if configs is not None and configs.inputs:
        parts.append(("config", _config_height(configs)))
    height = sum(h for _, h in parts)
    fig = figure(WIDTH, height)
    subs = ([fig] if len(parts) == 1 else
            list(fig.subfigures(len(parts), 1, height_ratios=[h for _, h in parts])))
    for sub, (kind, _) in zip(subs, parts, strict=True):
        if kind == "heat":
            _draw_heatmaps(sub, tables, mode)
        else:
            assert configs is not None
            _draw_configurations(sub, configs)
    return fig


def plot_energy(path: str | os.PathLike[str], *, tables: Sequence[EfficiencyTable] = (),
                configs: ConfigurationTable | None = None, mode: str = "both") -> Path:
    """Write :func:`energy_figure` to ``path`` (format from its name)."""
    return save(energy_figure(tables=tables, configs=configs, mode=mode), path)


def draw_efficiency(ax: Axes, table: EfficiencyTable, mode: str = "discrete") -> Any:
    """One efficiency heatmap of ``table`` on ``ax`` (``mode`` discrete or smoothed), with
    its colour bar; returns the image."""
    if mode not in ("discrete", "smoothed"):
        raise UsageError(f"mode {mode!r}: expected discrete or smoothed on one Axes")
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
    from JSON, which does not keep the others), the choice and the ondemand baseline."""
    import pandas as pd

    points = choice.evaluated or choice.pareto
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
    rows["frequency_ghz"] = rows["frequency_ghz"].astype(float)
    rows["energy_j"] = rows["energy_j"].astype(float)
    rows["pareto"] = [key(c.frequency_ghz, c.cores) in front for c in points]
    _draw_pareto(ax, rows, cmap, cnorm, choice.input_label, "cores")
    ondemand = rows[np.isclose(rows["frequency_ghz"], fmax)] if np.isfinite(fmax) else rows
    ax.plot(ondemand["time_s"], ondemand["energy_j"], ls="none", marker="^", ms=6,
            mfc="none", color="tab:gray",
            label="ondemand (max frequency)" if np.isfinite(fmax) else "every core count")
    if legend:
        ax.legend(loc="upper right", fontsize="small")


def choice_figure(result: ChoiceResult) -> Figure:
    """The figure of ``phasekit energy choose`` (module docstring), one panel per input."""
    choices = [c for c in result.choices if c.evaluated or c.pareto]
    if not choices:
        raise UsageError("nothing to plot: no configuration meets the limits")
    columns = min(3, len(choices))
    rows_n = math.ceil(len(choices) / columns)
    fig = figure(WIDTH, _ROW_H * rows_n + 0.8)
    axes = fig.subplots(rows_n, columns, squeeze=False).ravel()
    cmap = colormaps["viridis"]
    cnorm = _core_norm(np.asarray(result.cores, float))
    for ax, choice in zip(axes, choices, strict=False):
        draw_choice(ax, result, choice)
    for ax in axes[len(choices):]:
        ax.set_visible(False)
    fig.colorbar(ScalarMappable(cnorm, cmap), ax=list(axes[:len(choices)]), location="bottom",
                 shrink=0.6, aspect=40, label="cores")
    fig.suptitle(f"Predicted energy and time ({result.model} model): minimum-energy choice "
                 "and Pareto frontier", fontsize="large")
    return fig


def plot_choice(path: str | os.PathLike[str], result: ChoiceResult) -> Path:
    """Write :func:`choice_figure` to ``path`` (format from its name)."""
    return save(choice_figure(result), path)
