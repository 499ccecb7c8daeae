"""The figure of a phase detection (Tsafack Chetsa et al., Fig. 1 and 5), read at a glance.

:func:`phases_figure` (with the profile at hand: ``phasekit phases --plot``) draws

(a) the detected phases as coloured spans labelled with their id ("phase 3"; recurring
    phases share the id and the colour), true change points, when given, dotted;
(b) the few sensors that drove them (:func:`driving_sensors`), one small panel each in the
    units the detector saw (per cycle, per second, or the level's own unit), under the same
    spans; the rest on request (``sensors="all"``, a number, or names);
(c) the detector's score against its limit, with the vectors above the limit that started no
    phase marked by the detector's rule that ruled them out (:func:`draw_score`).

:func:`timeline` (a result alone: ``PhaseResult.plot()`` and the report) draws (a), one row
per id (:func:`draw_ids`) and (c) with the same colours, labels, score panel and time axis.
Phase colours: Okabe-Ito's seven colours, two of Paul Tol's muted scheme and grey, chosen to
stay apart for the common colour-vision deficiencies; ids beyond ten repeat them with a
hatch, and every span wide enough is labelled. Time in seconds since the
profile start, in minutes or hours when the profile is long.
"""

from __future__ import annotations

import itertools
import math
import os
import textwrap
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from phasekit.errors import UsageError
from phasekit.plot.common import (
    WIDTH,
    figure,
    ink_on,
    metric_label,
    readable_numbers,
    root_figure,
    save,
    time_unit,
)
from phasekit.profile import Profile
from phasekit.results import json_number, phase_spans, plain

__all__ = ["DRIVING_SENSORS", "PHASE_COLORS", "PHASE_HATCHES", "draw_ids", "draw_phase_strip",
           "draw_score", "driving_sensors", "phase_style", "phases_figure", "plot_phases",
           "sensor_changes", "sensor_unit", "timeline", "timeline_figure"]

#: Colours of phase ids 1, 2, ...: Okabe-Ito (without black), Tol's indigo and wine, grey.
PHASE_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442",
                "#332288", "#882255", "#BBBBBB")
#: Hatches of ids beyond the colours: id k has colour k mod 10 and hatch k // 10.
PHASE_HATCHES = ("", "//", "..", "xx", "\\\\", "++")
#: Sensor panels drawn by default: the sensors that change most between phases.
DRIVING_SENSORS = 4
#: Opacity of the phase spans behind the sensors and the score.
SPAN_ALPHA = 0.2
#: Colour of the score, and of the limit and the vectors above it that started no phase
#: (greys: no phase's colour).
SCORE_COLOR = "0.45"
LIMIT_COLOR = "black"
#: Line style of true change points (dotted: the limit is dashed).
TRUTH_STYLE = (0, (1, 1.5))
#: Share of a sensor's range (1st to 99th percentile) below which a within-phase spread
#: counts as that floor: a sensor flat within its phases does not make tiny steps drivers.
SPREAD_FLOOR = 0.01
#: Characters per line of the note above the score panel.
NOTE_WIDTH = 135
#: Fraction of the figure width the time axis is assumed to span when fitting span labels.
AXES_SHARE = 0.65


def plot_phases(profile: Profile, result: Any, path: str | os.PathLike[str], *,
                true_changes_s: Sequence[float] = (),
                sensors: int | str | Sequence[str] = DRIVING_SENSORS) -> Path:
    """Write :func:`phases_figure` to ``path`` (format from its extension)."""
    return save(phases_figure(profile, result, true_changes_s=true_changes_s,
                              sensors=sensors), path)


# --- colours, time ------------------------------------------------------------------------
def phase_style(pid: int) -> tuple[str, str]:
    """(colour, hatch) of phase id ``pid`` (from 1): distinct for every id up to
    ``len(PHASE_COLORS) * len(PHASE_HATCHES)``."""
    k = max(int(pid) - 1, 0)
    return (PHASE_COLORS[k % len(PHASE_COLORS)],
            PHASE_HATCHES[(k // len(PHASE_COLORS)) % len(PHASE_HATCHES)])


def _time_label(unit: str) -> str:
    return f"time since the profile start ({unit})"


# --- which sensors ------------------------------------------------------------------------
def sensor_changes(values: np.ndarray, starts: Sequence[int]) -> np.ndarray:
    """How much each sensor (column of ``values``) changes between consecutive phases
    (starting at the row indices ``starts``): the mean over the phase boundaries of
    |difference of the two phases' medians| / their pooled spread (1.4826 x the median
    absolute deviation, at least ``SPREAD_FLOOR`` of the sensor's range). Zero without a
    boundary; NaN values are left out."""
    values = np.asarray(values, dtype=float)
    n, d = values.shape
    edges = [0, *sorted({int(s) for s in starts if 0 < int(s) < n}), n]
    if len(edges) < 3:
        return np.zeros(d)
    values = np.where(np.isfinite(values), values, np.nan)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN sensors or phases
        low, high = np.nanpercentile(values, [1, 99], axis=0)
        floor = np.fmax(SPREAD_FLOOR * (high - low), np.finfo(float).tiny)
        medians = np.array([np.nanmedian(values[a:b], axis=0)
                            for a, b in itertools.pairwise(edges)])
        spreads = np.array([1.4826 * np.nanmedian(np.abs(values[a:b] - m), axis=0)
                            for (a, b), m in zip(itertools.pairwise(edges), medians,
                                                 strict=True)])
        pooled = np.sqrt((spreads[1:] ** 2 + spreads[:-1] ** 2) / 2)
        ratios = np.abs(np.diff(medians, axis=0)) / np.fmax(pooled, floor)
    return np.nan_to_num(ratios, nan=0.0, posinf=0.0).mean(axis=0)


def driving_sensors(values: np.ndarray, sensors: Sequence[str], starts: Sequence[int],
                    count: int | None = DRIVING_SENSORS) -> list[str]:
    """The ``count`` sensors (None: all) that change most between consecutive phases
    (:func:`sensor_changes`), most first; ties (a single phase) keep the sensors' order."""
    score = sensor_changes(values, starts)
    order = sorted(range(len(sensors)), key=lambda j: (-score[j], j))
    return [sensors[j] for j in order[:count]]


def _chosen_sensors(values: np.ndarray, names: Sequence[str], starts: Sequence[int],
                    sensors: int | str | Sequence[str]) -> list[str]:
    """The sensors to draw: the ``sensors`` most driving (a number), all of them by how much
    they drive ("all"), or the names given."""
    if isinstance(sensors, str) and sensors != "all":
        sensors = [sensors]
    if sensors == "all" or isinstance(sensors, int | np.integer):
        count = None if sensors == "all" else int(sensors)
        if count is not None and count < 0:
            raise UsageError("expected a number of sensors >= 0, 'all' or sensor names",
                             parameter="sensors", value=sensors)
        return driving_sensors(values, names, starts, count)
    missing = [s for s in sensors if s not in names]
    if missing:
        raise UsageError(f"not sensors of this result ({', '.join(names)})",
                         parameter="sensors", value=", ".join(missing))
    return list(sensors)


def sensor_unit(profile: Profile, sensor: str, normalization: str,
                levels: Sequence[str] = ()) -> str | None:
    """The unit of ``sensor`` in the execution vectors: a count per cycle or per second
    (``normalization`` "cycles" or "interval"), a level in its recorded unit (None: not
    recorded); the load sensor ``cycles_per_s``, the one sensor derived from the profile's
    metrics rather than one of them, in cycles/s."""
    if sensor not in profile.metrics:
        return "cycles/s"
    recorded = profile.units.get(sensor, "")
    if sensor in levels:
        return recorded or None
    per = "cycle" if normalization == "cycles" else "s"
    return f"{recorded}/{per}" if recorded else f"per {per}"


def _two_lines(label: str) -> str:
    """A metric label with its unit on a second line."""
    for mark in (" [", " (unit"):
        if mark in label:
            head, _, tail = label.partition(mark)
            return f"{head}\n{mark.strip()}{tail}"
    return label


# --- panels -------------------------------------------------------------------------------
def draw_phase_strip(ax: Axes, phases: Sequence[Mapping[str, Any]], duration_s: float, *,
                     time_scale: float = 1.0, title: str = "") -> None:
    """The phases as spans coloured by id, each labelled "phase <id>" (or "<id>") where it
    is wide enough, from phase records (``start_s``, ``end_s``, ``id``)."""
    width_in = AXES_SHARE * root_figure(ax).get_figwidth()
    points_per_char = 0.62 * 9.0  # fontsize "small" at the default 10 pt
    for start, end, pid in phase_spans(phases):
        colour, hatch = phase_style(pid)
        ax.broken_barh([(start / time_scale, (end - start) / time_scale)], (0, 1),
                       facecolors=colour, edgecolor="white", linewidth=0.8, hatch=hatch)
        room = 72 * width_in * (end - start) / duration_s if duration_s > 0 else 0.0
        label = next((t for t in (f"phase {pid}", str(pid))
                      if len(t) * points_per_char + 4 <= room), "")
        if label:
            ax.text((start + end) / 2 / time_scale, 0.5, label, ha="center", va="center",
                    fontsize="small", color=ink_on(colour), clip_on=True,
                    bbox={"facecolor": colour, "edgecolor": "none", "pad": 1.0}
                    if hatch else None)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_ylabel("phases", rotation=0, ha="right", va="center")
    if title:
        ax.set_title(title, loc="left", fontsize="medium")


def _shade(ax: Axes, phases: Sequence[Mapping[str, Any]], time_scale: float) -> None:
    """The phases as light spans behind an Axes' data, and a thin line at each change."""
    for k, (start, end, pid) in enumerate(phase_spans(phases)):
        colour, hatch = phase_style(pid)
        ax.axvspan(start / time_scale, end / time_scale, facecolor=colour, edgecolor=colour,
                   alpha=SPAN_ALPHA, hatch=hatch, linewidth=0)
        if k:
            ax.axvline(start / time_scale, color="0.4", linewidth=0.6)


def _index(value: Any, default: int) -> int:
    """A whole number from a result's JSON value, ``default`` when it is none."""
    number = json_number(value)
    return round(number) if math.isfinite(number) else default


def _spikes(score: np.ndarray, limit: np.ndarray, phases: Sequence[Mapping[str, Any]],
            period_s: float, method: str | None, params: Mapping[str, Any]
            ) -> dict[str, np.ndarray]:
    """The vectors above the limit that started no phase (legend label -> mask), from the
    phase records' located starts and detections: for ev, split into those in a phase's
    first ``min_length`` vectors (or a run's last, when a change there was not kept) and
    the rest (not confirmed, or merged back); none for ev-literal, whose every excursion
    above the limit is a change under way."""
    n = score.size
    with np.errstate(invalid="ignore"):
        above = np.isfinite(score) & np.isfinite(limit) & (score > limit)
    if method == "ev-literal" or not above.any():
        return {}
    change = np.zeros(n, bool)
    starts = []
    for p in phases:
        if not isinstance(p, Mapping):
            continue
        start = _index(p.get("start_index"), -1)
        if start < 0:
            continue
        detected_s = json_number(p.get("detected_at_s"))
        detected = (round(detected_s / period_s) if math.isfinite(detected_s)
                    and period_s > 0 else start)
        change[start:max(detected, start) + 1] = True
        starts.append(start)
    unexplained = above & ~change
    min_length = _index(params.get("min_length"), 0)
    confirm = _index(params.get("confirm"), 0)
    if method != "ev" or min_length < 1 or confirm < 1:
        return {"above the limit, no new phase": unexplained}
    young = np.zeros(n, bool)
    for start in starts:
        young[start:start + min_length] = True
    if _index(params.get("unsettled_changes"), 0) > 0:
        young[max(n - min_length + 1, 0):] = True
    merged = _index(params.get("merged_changes"), 0)
    return {"minimum phase length": unexplained & young,
            "burst" + (" or merged back" if merged else ""): unexplained & ~young}


def _score_note(method: str | None, params: Mapping[str, Any], threshold: float | None
                ) -> str:
    """What the limit is and why the score may exceed it without a new phase (the rules of
    the detector ``method`` with the result's ``params``)."""
    limit = f"limit {threshold:g}" if threshold is not None and math.isfinite(threshold) \
        else "limit"
    min_length = _index(params.get("min_length"), 0)
    confirm = _index(params.get("confirm"), 0)
    window = _index(params.get("shift_window"), 0)
    if method == "ev" and min_length >= 1 and confirm >= 1:
        merged = _index(params.get("merged_changes"), 0)
        shift = f", or a lasting shift of the last {window} vectors" if window >= 1 else ""
        return (f"A change: the score above the {limit}, out of phase for {confirm} vectors "
                f"in a row (at once when most sensors move){shift}. Above the limit without a new phase: "
                f"o in a phase's first {min_length} vectors (the minimum phase length), "
                f"x a burst (out of phase for fewer than {confirm} vectors in a row)"
                + (f", or one of {merged} changes merged back into the phase they left"
                   if merged > 1 else ", or the change merged back into the phase it left"
                   if merged else "") + ".")
    if method == "ev-literal":
        return ("A change starts when the distance exceeds the limit (the threshold x the "
                "largest distance since the last change); the new phase starts where the "
                "distance falls back under it.")
    return (f"A new phase needs the score above the {limit}; marked: above it without a new "
            "phase (the detector's own rules kept no change there).")


def draw_score(ax: Axes, times: np.ndarray, score: np.ndarray, limit: np.ndarray, *,
               phases: Sequence[Mapping[str, Any]] = (), period_s: float = 1.0,
               method: str | None = None, params: Mapping[str, Any] | None = None,
               threshold: float | None = None, time_scale: float = 1.0) -> None:
    """The detector's score against its limit (Tsafack Chetsa et al., Fig. 1 (c)), the
    vectors above the limit that started no phase marked by the rule that ruled them out
    (``method`` and ``params``: the result's), a note saying so above the panel and the
    legend to the right of it."""
    params = params or {}
    x = np.asarray(times, float) / time_scale
    ax.plot(x, score, color=SCORE_COLOR, linewidth=0.8, label="score")
    if limit.size == score.size:
        ax.plot(x, limit, color=LIMIT_COLOR, linewidth=1.3, linestyle="--", label="limit")
        for (label, mask), marker in zip(
                _spikes(score, limit, phases, period_s, method, params).items(), "ox",
                strict=False):
            if mask.any():
                ax.scatter(x[mask], score[mask], marker=marker, s=30, zorder=3,
                           linewidths=1.2, label=f"{label} ({int(mask.sum())})",
                           **({"color": LIMIT_COLOR} if marker == "x" else
                              {"facecolors": "none", "edgecolors": LIMIT_COLOR}))
    finite = score[np.isfinite(score) & (score > 0)]
    if finite.size and finite.max() > 50 * max(finite.min(), 1e-300):
        ax.set_yscale("log")
    ax.set_ylabel("detector score\n(no unit)" if method != "ev-literal"
                  else "Manhattan distance\n(consecutive vectors)",
                  rotation=0, ha="right", va="center")
    ax.set_title(textwrap.fill(_score_note(method, params, threshold), NOTE_WIDTH), loc="left",
                 fontsize="small")
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize="small",
              frameon=False)


def _draw_sensor(ax: Axes, profile: Profile, vectors: Any, name: str,
                 phases: Sequence[Mapping[str, Any]], time_scale: float) -> None:
    """One sensor of the execution vectors over the phase spans, its unit in the label."""
    _shade(ax, phases, time_scale)
    column = vectors.values[:, vectors.sensors.index(name)]
    ax.plot(profile.times() / time_scale, column, color="black", linewidth=0.8)
    readable_numbers(ax, column, sep=" ")
    unit = sensor_unit(profile, name, vectors.normalization, vectors.levels)
    ax.set_ylabel(_two_lines(metric_label(name, unit)), rotation=0, ha="right", va="center")


def _sensors_note(shown: int, total: int) -> str:
    """Which sensors the panels show and why."""
    if shown < total:
        return (f"{shown} of {total} sensors: those that change most between consecutive "
                "phases (change of the median against the spread within the phases)")
    return f"all {total} sensors, those that change most between consecutive phases first"


# --- the figure with the profile ----------------------------------------------------------
def phases_figure(profile: Profile, result: Any, *, true_changes_s: Sequence[float] = (),
                  sensors: int | str | Sequence[str] = DRIVING_SENSORS) -> Figure:
    """The phases over the sensors that drove them and the detector's score (module
    docstring).

    Parameters
    ----------
    profile
        The profile ``result`` was computed on (it gives the sensors' values and units).
    result
        A :class:`~phasekit.phases.analyze.PhaseResult`.
    true_changes_s
        Known change points (s), drawn dotted.
    sensors
        The sensor panels: the number most driving the changes (:func:`driving_sensors`),
        ``"all"``, or sensor names.
    """
    vectors = result.vectors(profile)
    items = plain([p.to_dict() for p in result.phases])
    starts = [p.start_index for p in result.phases]
    shown = _chosen_sensors(vectors.values, vectors.sensors, starts, sensors)
    score = np.asarray(result.score, float)
    limit = np.asarray(result.limit, float)
    times = profile.times()
    series = score.size == times.size and bool(np.isfinite(score).any())
    end = profile.duration
    scale, unit = time_unit(end)
    heights = [0.45, *([1.0] * len(shown)), *([1.9] if series else [])]
    fig = figure(WIDTH, 1.3 + sum(heights))
    axes = np.atleast_1d(fig.subplots(len(heights), 1, sharex=True, height_ratios=heights))
    draw_phase_strip(axes[0], items, end, time_scale=scale, title=(
        f"{result.node or 'profile'}: {len(result.phases)} phases, {result.n_ids} ids "
        f"({result.method}, threshold {result.threshold:g}, smoothing {result.smooth})"))
    for ax, name in zip(axes[1:1 + len(shown)], shown, strict=True):
        _draw_sensor(ax, profile, vectors, name, items, scale)
    if shown:
        axes[1].set_title(_sensors_note(len(shown), len(vectors.sensors)), loc="left",
                          fontsize="small")
    if series:
        _shade(axes[-1], items, scale)
        draw_score(axes[-1], times, score, limit, phases=items, period_s=result.period,
                   method=result.method, params=result.params, threshold=result.threshold,
                   time_scale=scale)
    for ax in axes:
        for t in true_changes_s:
            ax.axvline(t / scale, color="black", linestyle=TRUTH_STYLE, linewidth=1.2)
        ax.set_xlim(0, end / scale if end > 0 else None)
        ax.grid(True, axis="x", alpha=0.3)
    if len(true_changes_s):
        target = axes[-1] if series else axes[0]
        handles, labels = target.get_legend_handles_labels()
        handles.append(Line2D([], [], color="black", linestyle=TRUTH_STYLE, linewidth=1.2))
        target.legend(handles, [*labels, "true change"], loc="upper left",
                      bbox_to_anchor=(1.005, 1.0), fontsize="small", frameon=False)
    axes[-1].set_xlabel(_time_label(unit))
    return fig


# --- from the result alone -----------------------------------------------------------------
def timeline_figure(result: Any, ax: Axes | None = None) -> Figure:
    """The figure of a result alone (``PhaseResult.plot``): :func:`timeline` of its
    phases and, when it has them, its score and limit; on ``ax``, the rows by id only
    (:func:`draw_ids`; its figure is returned)."""
    items = plain([p.to_dict() for p in result.phases])
    title = (f"{result.node or 'profile'}: {len(result.phases)} phases, {result.n_ids} ids "
             f"({result.method})")
    if ax is not None:
        scale, unit = time_unit(result.duration_s)
        draw_ids(ax, items, title=title, time_scale=scale)
        ax.set_xlabel(_time_label(unit))
        ax.set_xlim(0, result.duration_s / scale if result.duration_s > 0 else None)
        return root_figure(ax)
    return timeline(items, result.duration_s, result.score, result.limit, result.period,
                    title, method=result.method, params=result.params,
                    threshold=result.threshold)


def _ids(phases: Sequence[Mapping[str, Any]]) -> list[int]:
    return sorted({int(json_number(p.get("id"))) for p in phases
                   if math.isfinite(json_number(p.get("id")))})


def draw_ids(ax: Axes, phases: Sequence[Mapping[str, Any]], *, title: str = "",
             time_scale: float = 1.0) -> None:
    """One row per phase id, each phase a bar in its id's colour (recurring phases on the
    same row), from phase records (``start_s``, ``end_s``, ``id``); times divided by
    ``time_scale`` (seconds per unit of the time axis)."""
    ids = _ids(phases)
    row_of = {pid: r for r, pid in enumerate(ids)}
    for start, end, pid in phase_spans(phases):
        colour, hatch = phase_style(pid)
        ax.broken_barh([(start / time_scale, (end - start) / time_scale)],
                       (row_of[pid] - 0.4, 0.8), facecolors=colour, edgecolor="white",
                       linewidth=0.8, hatch=hatch)
    ax.set_yticks(range(len(ids)), labels=[str(i) for i in ids])
    ax.set_ylim(max(len(ids), 1) - 0.5, -0.5)
    ax.set_ylabel("phase id")
    ax.grid(True, axis="x", alpha=0.3)
    if title:
        ax.set_title(title, loc="left", fontsize="medium")


def timeline(phases: Sequence[Mapping[str, Any]], duration_s: float, score: np.ndarray,
             limit: np.ndarray, period_s: float, title: str, *, width: float = WIDTH,
             method: str | None = None, params: Mapping[str, Any] | None = None,
             threshold: float | None = None) -> Figure:
    """The phase timeline from phase records: the phases as labelled spans coloured by id
    (:func:`draw_phase_strip`), one row per id (:func:`draw_ids`), and the detector's score
    against its limit when given (:func:`draw_score`; ``method``, ``params`` and
    ``threshold``, the result's, name the rule that left a vector above the limit without a
    new phase), in the style of :func:`phases_figure`."""
    score, limit = np.asarray(score, dtype=float), np.asarray(limit, dtype=float)
    series = score.size > 0 and bool(np.isfinite(score).any())
    rows = max(1, len(_ids(phases)))
    top = min(0.5 + 0.28 * rows, 4.0)
    fig = figure(width, 1.4 + top + (2.2 if series else 0.0))
    axes = fig.subplots(3 if series else 2, 1, sharex=True,
                        height_ratios=[0.45, top] + ([1.9] if series else []))
    scale, unit = time_unit(duration_s)
    draw_phase_strip(axes[0], phases, duration_s, time_scale=scale, title=title)
    draw_ids(axes[1], phases, time_scale=scale)
    if series:
        _shade(axes[2], phases, scale)
        draw_score(axes[2], np.arange(score.size) * period_s, score, limit, phases=phases,
                   period_s=period_s, method=method, params=params, threshold=threshold,
                   time_scale=scale)
    axes[-1].set_xlabel(_time_label(unit))
    axes[-1].set_xlim(0, duration_s / scale if duration_s > 0 else None)
    return fig
