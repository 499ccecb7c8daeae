"""The figure of a phase detection (Tsafack Chetsa et al.), in the layout of the paper's Fig. 1 and 5:

(a) detected phases as horizontal segments, one row per phase in order of appearance
    (Fig. 1 (a)); true change points, when given, as dashed vertical lines;
(b) the execution-vector sensors over time, each scaled to its own range (Fig. 1 (b));
(c) the detector's score with the limit it is compared with (Fig. 1 (c): the distance
    between consecutive EVs and the threshold; for the ev method the standardized deviation
    from the phase and its threshold);
(d) identified phases: one row per id, recurring phases on the same row (Fig. 5 (d)).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from phasekit.plot.common import WIDTH, color, figure, root_figure, save
from phasekit.profile import Profile
from phasekit.results import json_number, phase_spans, plain

__all__ = ["draw_ids", "phases_figure", "plot_phases", "timeline", "timeline_figure"]


def plot_phases(profile: Profile, result: Any, path: str | os.PathLike[str], *,
                true_changes_s: Sequence[float] = ()) -> Path:
    """Write :func:`phases_figure` to ``path``."""
    return save(phases_figure(profile, result, true_changes_s=true_changes_s), path)


def phases_figure(profile: Profile, result: Any, *,
                  true_changes_s: Sequence[float] = ()) -> Figure:
    """The four panels described in the module docstring (the profile gives the sensors)."""
    fig = figure(WIDTH, 9.0)
    axes = fig.subplots(4, 1, sharex=True, height_ratios=[1.2, 1.2, 1.0, 1.2])
    times = profile.times()
    end = profile.duration
    phases = result.phases

    ax = axes[0]
    for k, phase in enumerate(phases, start=1):
        ax.hlines(k, phase.start_s, phase.end_s, color=color(phase.id - 1), linewidth=3)
    ax.set_ylabel("phase (in order)")
    ax.set_title(f"{profile.node + ': ' if profile.node else ''}{len(phases)} phases, "
                 f"{result.n_ids} distinct ids ({result.method}, threshold "
                 f"{result.threshold:g}, smoothing {result.smooth})", loc="left")

    ax = axes[1]
    vectors = result.vectors(profile)
    values = vectors.values
    low, high = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
    span = np.where(high > low, high - low, 1.0)
    for j, name in enumerate(vectors.sensors):
        ax.plot(times, (values[:, j] - low[j]) / span[j], linewidth=0.8, label=name)
    unit = "per cycle" if vectors.normalization == "cycles" else "per second"
    ax.set_ylabel(f"sensors {unit}\n(each scaled 0-1)")
    ax.legend(loc="upper right", fontsize="x-small", ncol=min(5, len(vectors.sensors)))

    ax = axes[2]
    if result.score.size == times.size:
        ax.plot(times, result.score, color="black", linewidth=0.8, label="score")
        ax.plot(times, result.limit, color="tab:red", linewidth=0.8, label="limit")
        if result.method == "ev" and np.isfinite(result.score).any():
            ax.set_yscale("log")
        ax.legend(loc="upper right", fontsize="x-small")
    ax.set_ylabel("distance\n" + ("(Manhattan, consecutive)" if result.method == "ev-literal"
                                  else "(from the phase, standardized)"))

    ax = axes[3]
    for phase in phases:
        ax.hlines(phase.id, phase.start_s, phase.end_s, color=color(phase.id - 1), linewidth=3)
    ax.set_ylabel("phase id")
    ax.set_xlabel("time since the profile start (s)")
    for ax in axes:
        for t in true_changes_s:
            ax.axvline(t, color="gray", linestyle="--", linewidth=0.7)
        ax.set_xlim(0, end)
        ax.grid(alpha=0.3)
    return fig


# --- from the result alone -------------------------------------------------------------------
def timeline_figure(result: Any, ax: Axes | None = None) -> Figure:
    """The figure of a result alone (``Any.plot``): :func:`timeline` of its phases
    and, when it has them, its score and limit; on ``ax``, the rows by id only
    (:func:`draw_ids`; its figure is returned)."""
    items = plain([p.to_dict() for p in result.phases])
    title = (f"{result.node or 'profile'}: {len(result.phases)} phases, {result.n_ids} ids "
             f"({result.method})")
    if ax is not None:
        draw_ids(ax, items, title=title)
        ax.set_xlabel("time since the profile start (s)")
        ax.set_xlim(0, result.duration_s if result.duration_s > 0 else None)
        return root_figure(ax)
    return timeline(items, result.duration_s, result.score, result.limit, result.period,
                    title)


def _ids(phases: Sequence[Mapping[str, Any]]) -> list[int]:
    return sorted({int(json_number(p.get("id"))) for p in phases
                   if math.isfinite(json_number(p.get("id")))})


def draw_ids(ax: Axes, phases: Sequence[Mapping[str, Any]], *, title: str = "") -> None:
    """One row per phase id, each phase a bar in its id's colour (recurring phases on the
    same row), from phase records (``start_s``, ``end_s``, ``id``)."""
    ids = _ids(phases)
    row_of = {pid: r for r, pid in enumerate(ids)}
    for start, end, pid in phase_spans(phases):
        ax.broken_barh([(start, end - start)], (row_of[pid] - 0.4, 0.8), facecolors=color(pid - 1))
    ax.set_yticks(range(len(ids)), labels=[str(i) for i in ids])
    ax.set_ylim(max(len(ids), 1) - 0.5, -0.5)
    ax.set_ylabel("phase id")
    ax.grid(True, axis="x", alpha=0.3)
    if title:
        ax.set_title(title, loc="left", fontsize="medium")


def timeline(phases: Sequence[Mapping[str, Any]], duration_s: float, score: np.ndarray,
             limit: np.ndarray, period_s: float, title: str, *, width: float = WIDTH) -> Figure:
    """The phase timeline from phase records: phases in time order coloured by id
    (recurring phases share a colour), one row per id (:func:`draw_ids`), and the
    detector's score against its limit when given (the paper's Fig. 1 and 5)."""
    score, limit = np.asarray(score, dtype=float), np.asarray(limit, dtype=float)
    series = score.size > 0 and bool(np.isfinite(score).any())
    rows = max(1, len(_ids(phases)))
    top = min(0.5 + 0.28 * rows, 4.0)
    fig = figure(width, 1.4 + top + (2.0 if series else 0.0))
    axes = fig.subplots(3 if series else 2, 1, sharex=True,
                        height_ratios=[0.5, top] + ([2.0] if series else []))
    strip = axes[0]
    for start, end, pid in phase_spans(phases):
        strip.broken_barh([(start, end - start)], (0, 1), facecolors=color(pid - 1),
                          edgecolor="white", linewidth=0.5)
    strip.set_yticks([])
    strip.set_ylabel("phases", rotation=0, ha="right", va="center")
    strip.set_title(title, loc="left", fontsize="medium")
    draw_ids(axes[1], phases)
    if series:
        ax = axes[2]
        times = np.arange(score.size) * period_s
        ax.plot(times, score, color="black", linewidth=0.8, label="score")
        if limit.size == score.size:
            ax.plot(times, limit, color="tab:red", linewidth=0.8, label="limit")
        finite = score[np.isfinite(score) & (score > 0)]
        if finite.size and finite.max() > 50 * max(finite.min(), 1e-300):
            ax.set_yscale("log")
        ax.set_ylabel("detector score (no unit)")
        ax.legend(loc="upper right", fontsize="small")
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time since the profile start (s)")
    axes[-1].set_xlim(0, duration_s if duration_s > 0 else None)
    return fig
