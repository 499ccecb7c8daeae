"""The figure of a phase detection (seed 001), in the layout of the seed's Fig. 1 and 5:

(a) detected phases as horizontal segments, one row per phase in order of appearance
    (Fig. 1 (a)); true change points, when given, as dashed vertical lines;
(b) the execution-vector sensors over time, each scaled to its own range (Fig. 1 (b));
(c) the detector's score with the limit it is compared with (Fig. 1 (c): the distance
    between consecutive EVs and the threshold; for the ev method the standardized deviation
    from the phase and its threshold);
(d) identified phases: one row per id, recurring phases on the same row (Fig. 5 (d)).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from phasekit.phases import PhaseResult, execution_vectors
from phasekit.plot.common import WIDTH, color, figure, save
from phasekit.profile import Profile

__all__ = ["plot_phases"]


def plot_phases(profile: Profile, result: PhaseResult, path: str | os.PathLike[str], *,
                true_changes_s: Sequence[float] = ()) -> Path:
    """Write the four panels described in the module docstring to ``path``."""
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
    vectors = execution_vectors(profile, sensors=result.sensors, smooth_window=result.smooth)
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
    return save(fig, path)
