"""How well an analysis recovers a known ground truth (the public door to
:mod:`phasekit.metrics`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from phasekit.periodicity.analyze import PeriodicityResult
    from phasekit.synth.periodic import Truth

__all__ = ["periodicity_scores"]


def periodicity_scores(result: PeriodicityResult, truth: Truth) -> dict[str, float | int]:
    """A periodicity analysis against the truth of a synthetic profile (what ``phasekit demo
    --synthetic`` reports).

    Parameters
    ----------
    result
        The analysis of the profile (:func:`phasekit.periodicity.api.periodicity`).
    truth
        The profile's truth (:func:`phasekit.synth.api.generate`).

    Returns
    -------
    dict
        ``coverage`` and ``true_coverage`` (the share of samples in an instance),
        ``patterns`` and ``true_patterns`` (how many), and ``ari``: the adjusted Rand index
        of the sample labels (:func:`phasekit.metrics.periodicity.labels_ari`).
    """
    import numpy as np

    from phasekit.metrics.periodicity import labels_ari, sample_labels

    patterns = result.patterns
    starts = np.concatenate([p.starts for p in patterns]) if patterns else np.empty(0, np.int64)
    lengths = np.concatenate([p.lengths for p in patterns]) if patterns else np.empty(0, np.int64)
    labels = np.repeat(np.arange(len(patterns)), [p.n_instances for p in patterns])
    predicted = sample_labels(result.n_samples, starts, lengths, labels)
    return {
        "coverage": result.coverage, "true_coverage": truth.coverage(),
        "patterns": len(patterns), "true_patterns": len(truth.labels),
        "ari": labels_ari(truth.sample_labels(), predicted),
    }
