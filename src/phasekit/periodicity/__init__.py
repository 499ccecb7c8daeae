"""Periodicity detection and representative patterns (Phase-TA, seed 000)."""

from phasekit.periodicity.analyze import (
    Pattern,
    PeriodicityResult,
    analyze,
    default_metrics,
    instances_of,
    relevance,
)

__all__ = ["Pattern", "PeriodicityResult", "analyze", "default_metrics", "instances_of", "relevance"]
