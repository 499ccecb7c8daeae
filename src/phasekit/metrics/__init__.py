"""Evaluation metrics: how well an analysis recovers known ground truth."""

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
from phasekit.metrics.phases import (
    ChangeScores,
    IdentificationScores,
    evaluate_changes,
    identification_rate,
)

__all__ = [
    "ChangeScores",
    "IdentificationScores",
    "PatternMatch",
    "best_overlap_mapping",
    "coverage",
    "evaluate_changes",
    "identification_rate",
    "labels_ari",
    "match_patterns",
    "mean_consecutive",
    "periodic_regions",
    "sample_labels",
]
