"""Periodicity detection and representative patterns (Phase-TA)."""

from phasekit.periodicity.analyze import (
    Pattern,
    PeriodicityOptions,
    PeriodicityResult,
    analyze,
    default_metrics,
    instances_of,
    relevance,
)
from phasekit.verbmodule import make_callable

__all__ = ["Pattern", "PeriodicityOptions", "PeriodicityResult", "analyze", "default_metrics", "instances_of", "relevance"]


make_callable(__name__, "phasekit.periodicity.api:periodicity")  # pk.periodicity(...) runs it
