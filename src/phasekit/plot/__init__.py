"""Matplotlib figures, one function per figure."""

from __future__ import annotations

from phasekit.plot.periodicity import plot_analysis, plot_patterns, plot_profile

__all__ = ["plot_analysis", "plot_patterns", "plot_phases", "plot_profile"]


def __getattr__(name: str) -> object:
    if name == "plot_phases":  # imported on first use: it pulls in phasekit.phases
        from phasekit.plot.phases import plot_phases

        return plot_phases
    raise AttributeError(name)
