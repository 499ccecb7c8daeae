"""Figures of a periodicity analysis (Phase-TA): one function per figure.

- :func:`plot_profile`: the analyzed metric over time with its periodic regions shaded, one
  colour per pattern;
- :func:`plot_patterns`: each representative pattern (thick) over random instances it was
  inferred from (thin), like the paper's Fig. 3;
- :func:`plot_analysis`: both in one figure (what ``phasekit analyze --plot`` writes).

Figures are drawn and saved by :mod:`phasekit.plot.common`.
"""

from __future__ import annotations

import datetime
import math
import os
import textwrap
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from phasekit.errors import UsageError
from phasekit.metrics.periodicity import periodic_regions
from phasekit.plot.common import (
    WIDTH,
    color,
    figure,
    metric_label,
    readable_numbers,
    root_figure,
    save,
    time_unit,
)
from phasekit.present import plural
from phasekit.profile import Profile
from phasekit.results import json_array, json_number, plain

__all__ = ["analysis_figure", "draw_preview_patterns", "draw_profile", "patterns_figure",
           "plot_analysis", "plot_patterns", "plot_profile", "preview_profile",
           "profile_figure", "result_figure"]

#: At most this many pattern panels side by side.
MAX_COLUMNS = 3
#: Instances closer than this fraction of their median length form one shaded region
#: (the tolerance analyze uses for periodic regions).
REGION_TOLERANCE = 0.1

Canvas = Figure | SubFigure


def plot_profile(profile: Profile, result: Any, path: str | os.PathLike[str]
                 ) -> Path:
    """Write :func:`profile_figure` to ``path``; returns the path written."""
    return save(profile_figure(profile, result), path)


def plot_patterns(profile: Profile, result: Any, path: str | os.PathLike[str],
                  *, n_instances: int = 10, seed: int = 0) -> Path:
    """Write :func:`patterns_figure` to ``path``; returns the path written."""
    return save(patterns_figure(profile, result, n_instances=n_instances, seed=seed), path)


def plot_analysis(profile: Profile, result: Any, path: str | os.PathLike[str],
                  *, n_instances: int = 10, seed: int = 0) -> Path:
    """Write :func:`analysis_figure` to ``path`` (what ``phasekit analyze --plot`` writes)."""
    return save(analysis_figure(profile, result, n_instances=n_instances, seed=seed), path)


def profile_figure(profile: Profile, result: Any, ax: Axes | None = None
                   ) -> Figure:
    """The analyzed metric over time (s) with the periodic regions shaded by pattern, on
    ``ax`` when given (its figure is returned).

    With several analyzed metrics the first one is drawn. Without a pattern the title is the
    result's explanation. A result computed on a window shows the whole profile with the
    window marked.
    """
    if ax is None:
        ax = figure(WIDTH, 4.2).add_subplot()
    draw_profile(ax, profile, result)
    return root_figure(ax)


def patterns_figure(profile: Profile, result: Any, *, n_instances: int = 10,
                    seed: int = 0) -> Figure:
    """One panel per pattern: ``n_instances`` random instances (thin) and the pattern (thick).

    The paper's Fig. 3 shows ten instances. With several metrics each pattern gets one panel
    per metric (z-scores, as analyzed). ``seed`` makes the choice of instances reproducible.
    """
    columns, rows = _grid(result)
    fig = figure(WIDTH if columns > 1 else 7.0, 0.6 + 2.7 * rows)
    _draw_patterns(fig, profile, result, n_instances=n_instances, seed=seed)
    return fig


def analysis_figure(profile: Profile, result: Any, *, n_instances: int = 10,
                    seed: int = 0) -> Figure:
    """The profile with its periodic regions on top and the patterns below, in one figure."""
    if not result.patterns:
        return profile_figure(profile, result)
    _, rows = _grid(result)
    top, bottom = 4.2, 0.6 + 2.7 * rows
    fig = figure(WIDTH, top + bottom)
    upper, lower = fig.subfigures(2, 1, height_ratios=[top, bottom])
    draw_profile(upper.add_subplot(), profile, result)
    _draw_patterns(lower, profile, result, n_instances=n_instances, seed=seed)
    return fig


# --- from the result alone -------------------------------------------------------------------
def preview_profile(result: Any) -> Profile:
    """The profile a result keeps for figures (``result.preview["profile"]``: the analyzed
    metrics, a min/max envelope when long); without a preview (an older result), a profile
    of NaN spanning the analyzed time, so that the periodic regions still show."""
    preview = result.preview.get("profile") if isinstance(result.preview, dict) else None
    if isinstance(preview, dict) and preview.get("values") is not None:
        metrics = tuple(str(m) for m in preview.get("metrics") or ())
        values = np.array([[np.nan if v is None else float(v) for v in column]
                           for column in preview["values"]], dtype=float).T
        units = {str(k): str(v) for k, v in (preview.get("units") or {}).items()}
        start = preview.get("start")
        return Profile(values=values.reshape(values.shape[0], -1),
                       period=float(preview["period_s"]), metrics=metrics, units=units,
                       node=result.node,
                       start=(datetime.datetime.fromisoformat(start) if isinstance(start, str)
                              else float(start or 0.0)))
    end = result.offset_s + result.duration_s
    return Profile(values=np.full((2, 1), np.nan), period=max(end, 1e-9) / 2,
                   metrics=tuple(result.metrics[:1]) or ("metric",), node=result.node)


def result_figure(result: Any, ax: Axes | None = None) -> Figure:
    """The figure of a result alone (``Any.plot``): the profile preview with
    the periodic regions shaded and, below, each pattern over the random instances the
    result keeps; on ``ax`` when given, the profile only (its figure is returned)."""
    profile = preview_profile(result)
    if ax is not None or not result.patterns:
        return profile_figure(profile, result, ax)
    preview = result.preview.get("profile") if isinstance(result.preview, dict) else None
    units = {str(k): str(v) for k, v in ((preview or {}).get("units") or {}).items()}
    instances = result.preview.get("instances") if isinstance(result.preview, dict) else None
    columns = min(MAX_COLUMNS, len(result.patterns))
    rows = math.ceil(len(result.patterns) / columns) * max(1, len(result.metrics))
    top, bottom = 4.2, 0.5 + 2.4 * rows
    fig = figure(WIDTH, top + bottom)
    upper, lower = fig.subfigures(2, 1, height_ratios=[top, bottom])
    draw_profile(upper.add_subplot(), profile, result)
    draw_preview_patterns(lower, plain([p.to_dict() for p in result.patterns]),
                          instances if isinstance(instances, list) else [],
                          list(result.metrics), result.sampling_period, units)
    return fig


def draw_preview_patterns(canvas: Canvas, patterns: Sequence[Mapping[str, Any]],
                          instances: Sequence[Mapping[str, Any]], metrics: Sequence[str],
                          sampling_period: float, units: Mapping[str, str]) -> None:
    """One panel per pattern and metric from JSON records: the kept random instances (thin,
    the pattern's colour; a result's ``preview["instances"]``) and the representative
    pattern (thick black), like the paper's Fig. 3 and :func:`patterns_figure`. Without
    instances, the patterns alone."""
    n = len(patterns)
    d = max(1, len(metrics))
    columns = min(MAX_COLUMNS, max(n, 1))
    rows = max(1, math.ceil(n / columns)) * d
    axes = canvas.subplots(rows, columns, squeeze=False)
    joint = len(metrics) > 1
    for i, pattern in enumerate(patterns):
        values = np.asarray([[json_number(v) for v in (row if isinstance(row, list) else [row])]
                             for row in pattern.get("values", [])], dtype=float)
        values = values.reshape(values.shape[0], -1) if values.size else np.zeros((0, d))
        kept = instances[i] if i < len(instances) else {}
        step = json_number(kept.get("step_s"))
        if not math.isfinite(step):
            step = sampling_period
        curves = kept.get("values", []) if isinstance(kept.get("values"), list) else []
        for k in range(d):
            ax = axes[(i // columns) * d + k, i % columns]
            for curve in curves:
                y = json_array(curve[k]) if isinstance(curve, list) and k < len(curve) \
                    else json_array([])
                ax.plot(np.arange(y.size) * step, y, color=color(i), linewidth=0.8, alpha=0.45)
            if k < values.shape[1]:
                ax.plot(np.arange(values.shape[0]) * sampling_period, values[:, k],
                        color="black", linewidth=2.4)
            metric = str(metrics[k]) if k < len(metrics) else f"dimension {k}"
            unit = units.get(metrics[k]) if k < len(metrics) else None
            label = f"{metric} (z-score)" if joint else metric_label(metric, unit)
            ax.set_ylabel(label, fontsize="small")
            readable_numbers(ax, values[:, k] if k < values.shape[1] else np.zeros(0))
            ax.grid(True, linewidth=0.4, alpha=0.5)
            if k == 0:
                ax.set_title(f"pattern {i + 1}: period {json_number(pattern.get('period_s')):.3g} s, "
                             f"{len(curves)} of {pattern.get('n_instances', '?')} instances",
                             fontsize="medium", loc="left")
            if k == d - 1:
                ax.set_xlabel("time within the instance (s)")
            if i == 0 and k == 0:
                handles = [Line2D([], [], color="black", linewidth=2.4,
                                  label="representative pattern")]
                if curves:
                    every = len(curves) == pattern.get("n_instances")
                    handles.insert(0, Line2D([], [], color=color(i), linewidth=0.8, alpha=0.6,
                                             label="every instance" if every
                                             else "random instances"))
                ax.legend(handles=handles, fontsize="small", loc="best")
    for index in range(n, max(1, math.ceil(n / columns)) * columns):
        for k in range(d):
            axes[(index // columns) * d + k, index % columns].set_axis_off()


# --- drawing ---------------------------------------------------------------------------------
def _label(profile: Profile, metric: str) -> str:
    return metric_label(metric, profile.units.get(metric))



def _wrap(text: str, width: int = 110) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def _regions(starts: np.ndarray, lengths: np.ndarray) -> list[tuple[int, int]]:
    """Sample intervals [start, end) of runs of consecutive instances."""
    if starts.size == 0:
        return []
    order = np.argsort(starts, kind="stable")
    starts, lengths = starts[order], lengths[order]
    tolerance = max(2, math.ceil(REGION_TOLERANCE * float(np.median(lengths))))
    runs = periodic_regions(starts, lengths, np.zeros(starts.size, np.int64),
                            tolerance=tolerance)
    return [(int(starts[first]), int(starts[first + count - 1] + lengths[first + count - 1]))
            for _, first, count in runs]


#: Samples beyond which the profile is drawn as its envelope (the least and the most of each
#: of :data:`ENVELOPE_BINS` stretches) and its mean: a line of thousands of cycles across a
#: figure is a solid band.
DENSE = 3000
ENVELOPE_BINS = 600
#: A stretch without data (NaN), or reading exactly 0 in a metric that mostly does not, is
#: labelled when it lasts at least this share of the profile.
GAP_SHARE = 0.01


def _clock(profile: Profile) -> tuple[float, str]:
    """The time of the profile's first sample on the figure's axis, and the axis's words:
    the file's own clock where it gave one in seconds, else time since its start."""
    if isinstance(profile.start, datetime.datetime):
        return 0.0, f"time since {profile.start:%Y-%m-%d %H:%M:%S}"
    origin = float(profile.start or 0.0)
    return (origin, "time, as the file counts it") if origin else (0.0, "time since the "
                                                                       "profile start")


def _stretches(mask: np.ndarray, shortest: int) -> list[tuple[int, int]]:
    """[first, end) of each run of True in ``mask`` at least ``shortest`` long."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)
            if b - a >= shortest]


def _draw_values(ax: Axes, times: np.ndarray, values: np.ndarray) -> list[Any]:
    """The metric as a line, or as its envelope and mean when dense; the legend's handles."""
    if values.size <= DENSE:
        ax.plot(times, values, color="0.2", linewidth=0.6, zorder=3)
        return []
    k = -(-values.size // ENVELOPE_BINS)
    padded = np.full(k * ENVELOPE_BINS, np.nan)
    padded[:values.size] = values
    blocks = padded.reshape(ENVELOPE_BINS, k)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN stretch: no data
        low, high, mean = (np.nanmin(blocks, axis=1), np.nanmax(blocks, axis=1),
                           np.nanmean(blocks, axis=1))
    middle = times[0] + (np.arange(ENVELOPE_BINS) + 0.5) * k * (times[1] - times[0])
    ax.fill_between(middle, low, high, color="0.65", linewidth=0, zorder=2, step="mid")
    ax.plot(middle, mean, color="0.1", linewidth=0.8, zorder=3)
    return [Patch(color="0.65", label=f"least to most of every {k} samples"),
            Line2D([], [], color="0.1", linewidth=0.8, label="their mean")]


def _draw_gaps(ax: Axes, times: np.ndarray, values: np.ndarray) -> list[Any]:
    """Stretches without data (NaN) and stretches reading exactly 0 in a metric that mostly
    does not, shaded and named; the legend's handles."""
    shortest = max(2, int(GAP_SHARE * values.size))
    missing = _stretches(~np.isfinite(values), shortest)
    zero = values == 0
    idle = _stretches(zero, shortest) if zero.mean() < 0.5 else []
    step = float(times[1] - times[0]) if times.size > 1 else 1.0
    handles = []
    for spans, hatch, label in ((missing, "///", "no data"), (idle, "..", "reads 0")):
        for a, b in spans:
            ax.axvspan(times[a], times[b - 1] + step, facecolor="none", edgecolor="0.5",
                       hatch=hatch, linewidth=0, zorder=1)
            ax.text((times[a] + times[b - 1] + step) / 2, 0.5, label, rotation=90,
                    transform=ax.get_xaxis_transform(), ha="center", va="center",
                    fontsize="small", color="0.3", clip_on=True)
        if spans:
            handles.append(Patch(facecolor="white", edgecolor="0.5", hatch=hatch,
                                 label=f"{label} ({plural(len(spans), 'stretch')})"))
    return handles


def _draw_scales(ax: Axes, result: Any, x: Any) -> list[Any]:
    """Where the profile repeats at several scales (a cycle nested in a longer one): the
    instances of each as brackets at the top of the panel, the longest highest (at most
    three scales); the legend's handles."""
    from matplotlib.collections import LineCollection

    scales = sorted(getattr(result, "scales", ()), key=lambda s: -s.period_s)
    if len(scales) < 2:
        return []
    handles = []
    for level, scale in enumerate(scales[:3]):
        y, tick = 0.96 - 0.06 * level, 0.025
        segments = []
        for start, length in zip(scale.starts, scale.lengths, strict=True):
            a = x(result.offset_s + start * result.sampling_period)
            b = x(result.offset_s + (start + length) * result.sampling_period)
            segments += [[(a, y), (b, y)], [(a, y - tick), (a, y)], [(b, y - tick), (b, y)]]
        shade = f"{0.1 + 0.25 * level:.2f}"
        ax.add_collection(LineCollection(segments, colors=shade, linewidths=1.2,
                                         transform=ax.get_xaxis_transform(), zorder=4))
        which = "outer" if level == 0 else "inner"
        handles.append(Line2D([], [], color=shade, linewidth=1.2, label=(
            f"{which} cycle {scale.period_s:.3g} s ({plural(scale.n_instances, 'instance')}"
            f", {100 * scale.coverage:.0f}%)")))
    return handles


def draw_profile(ax: Axes, profile: Profile, result: Any) -> None:
    """:func:`profile_figure` on ``ax``: the metric over time (its envelope and mean when
    dense), the periodic regions shaded by pattern, every scale bracketed at the top, the
    stretches without data or reading 0 named, on the file's own clock in s, min or h."""
    metric = result.metrics[0] if result.metrics else profile.metrics[0]
    share = "window" if result.params.get("window_s") is not None else "profile"
    values = profile.select([metric]).values[:, 0]
    origin, words = _clock(profile)
    horizon = origin + max(profile.duration, profile.period)
    scale, unit = time_unit(max(profile.duration, profile.period))

    def x(t: float) -> float:  # seconds from the profile start -> the axis
        return (origin + t) / scale

    times = (origin + profile.times()) / scale
    handles: list[Any] = _draw_values(ax, times, values)
    handles += _draw_gaps(ax, times, values)
    for i, pattern in enumerate(result.patterns):
        for start, end in _regions(pattern.starts, pattern.lengths):
            ax.axvspan(x(result.offset_s + start * result.sampling_period),
                       x(result.offset_s + end * result.sampling_period),
                       color=color(i), alpha=0.3, linewidth=0, zorder=1)
        handles.append(Patch(color=color(i), alpha=0.45, label=(
            f"pattern {i + 1}: period {pattern.period_s:.3g} s, "
            f"{100 * pattern.coverage:.1f}% of the {share}")))
    bracketed = _draw_scales(ax, result, x)
    if bracketed:  # room above the data for the brackets
        low, high = ax.get_ylim()
        ax.set_ylim(low, high + (high - low) * (0.06 + 0.08 * len(bracketed)))
    handles += bracketed
    window = result.params.get("window_s")
    if window is not None:
        first, last = result.offset_s, result.offset_s + result.duration_s
        for lo, hi in ((0.0, first), (last, profile.duration)):
            if hi > lo:
                ax.axvspan(x(lo), x(hi), color="0.85", linewidth=0, zorder=0)
        ax.axvline(x(first), color="0.4", linestyle="--", linewidth=1)
        ax.axvline(x(last), color="0.4", linestyle="--", linewidth=1)
        handles.append(Patch(facecolor="0.85",
                             label=f"not analyzed (window {first:g}-{last:g} s)"))
    if handles:
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16),
                  ncols=min(len(handles), 3), frameon=False, fontsize="small")
    ax.set_xlim(origin / scale, horizon / scale)
    ax.set_xlabel(f"{words} ({unit})")
    ax.set_ylabel(_label(profile, metric))
    readable_numbers(ax, values)
    ax.grid(True, axis="y", linewidth=0.4, alpha=0.5)
    name = f"{profile.node}: " if profile.node else ""
    if result.patterns:
        extra = f" (analyzed jointly with {', '.join(result.metrics[1:])})" if len(
            result.metrics) > 1 else ""
        title = (f"{name}{metric}{extra}: {plural(len(result.patterns), 'pattern')}, "
                 f"{100 * result.coverage:.1f}% of the {share} periodic")
    else:
        title = name + (result.explanation or "no periodicity found")
    ax.set_title(_wrap(title), fontsize="medium", loc="left")


def _grid(result: Any) -> tuple[int, int]:
    """Columns and rows of pattern panels (one row per metric in each row of patterns)."""
    n = len(result.patterns)
    if n == 0:
        return 1, 1
    columns = min(MAX_COLUMNS, n)
    return columns, math.ceil(n / columns) * max(1, len(result.metrics))


def _draw_patterns(canvas: Canvas, profile: Profile, result: Any, *,
                   n_instances: int, seed: int) -> None:
    if n_instances < 0:
        raise UsageError("expected a count >= 0", parameter="n_instances", value=n_instances)
    if not result.patterns:
        ax = canvas.add_subplot()
        ax.set_axis_off()
        ax.text(0.5, 0.5, _wrap("No pattern. " + (result.explanation or ""), 80),
                ha="center", va="center", transform=ax.transAxes)
        return
    columns, rows = _grid(result)
    d = max(1, len(result.metrics))
    axes = canvas.subplots(rows, columns, squeeze=False)
    period = result.sampling_period
    joint = len(result.metrics) > 1
    for i, pattern in enumerate(result.patterns):
        X, lengths = result.instances(profile, i)
        rng = np.random.default_rng([seed, i])
        count = min(n_instances, lengths.size)
        chosen = np.sort(rng.choice(lengths.size, size=count, replace=False))
        for k in range(d):
            ax = axes[(i // columns) * d + k, i % columns]
            for j in chosen:
                ax.plot(np.arange(lengths[j]) * period, X[j, : lengths[j], k], color=color(i),
                        linewidth=0.8, alpha=0.45)
            ax.plot(np.arange(pattern.length) * period, pattern.values[:, k], color="black",
                    linewidth=2.4)
            metric = result.metrics[k] if k < len(result.metrics) else f"dimension {k}"
            ax.set_ylabel(f"{metric} (z-score)" if joint else _label(profile, metric),
                          fontsize="small")
            readable_numbers(ax, pattern.values[:, k])
            ax.grid(True, linewidth=0.4, alpha=0.5)
            if k == 0:
                ax.set_title(f"pattern {i + 1}: period {pattern.period_s:.3g} s, "
                             f"{plural(pattern.n_instances, 'instance')}, "
                             f"{100 * pattern.coverage:.1f}%", fontsize="medium", loc="left")
            if k == d - 1:
                ax.set_xlabel("time within the instance (s)")
            if i == 0 and k == 0:
                ax.legend(handles=[
                    Line2D([], [], color=color(i), linewidth=0.8, alpha=0.6,
                           label=(f"every instance ({count})" if count == lengths.size
                                  else plural(count, "random instance"))),
                    Line2D([], [], color="black", linewidth=2.4, label="representative pattern"),
                ], fontsize="small", loc="best")
    for index in range(len(result.patterns), math.ceil(len(result.patterns) / columns) * columns):
        for k in range(d):
            axes[(index // columns) * d + k, index % columns].set_axis_off()
