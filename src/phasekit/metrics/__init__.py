"""Evaluation metrics: how well an analysis recovers known ground truth (DESIGN.md, metrics/)."""

from __future__ import annotations

from phasekit.metrics.periodicity import (
    PatternMatch,
    best_overlap_mapping,
    coverage,
    labels_ari,
    match_patterns,
    mean_consecutive,
    periodic_regions,
    sample_labels,
)

__all__ = [
    "PatternMatch",
    "best_overlap_mapping",
    "coverage",
    "labels_ari",
    "match_patterns",
    "mean_consecutive",
    "periodic_regions",
    "sample_labels",
]
