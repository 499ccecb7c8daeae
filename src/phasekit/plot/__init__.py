"""Matplotlib figures, one function per figure (DESIGN.md, plot/)."""

from __future__ import annotations

from phasekit.plot.periodicity import plot_analysis, plot_patterns, plot_profile

__all__ = ["plot_analysis", "plot_patterns", "plot_profile"]
