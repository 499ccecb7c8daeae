"""Segmentation scores: F1 with a margin and Covering, as the Time Series Segmentation Benchmark
(TSSB; Ermshaus et al.) and claspy compute them, after van den Burg and Williams'
TCPDBench (one annotator), and the detection delay of an online detector.

Change points are sample indices (a change point ``c`` starts a new segment at ``c``);
``0`` is added to both sets, as TCPDBench does, so that a series with no change and no
detection scores 1.

- :func:`f1_score`: a true change point is found when a detection lies within ``margin``
  samples of it, each detection pairing with at most one change point (the closest first);
  precision = found / detections, recall = found / change points, F1 their harmonic mean.
- :func:`covering`: the segmentation covering of Arbelaez et al. (2010, eq. 8): each true
  segment weighted by its length times its best Jaccard overlap with a detected segment.
- :func:`detection_delays`: for every found change point, how many samples after it the
  detector reported it (the pairing of :func:`f1_score`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["SegmentationScores", "covering", "f1_score", "match_change_points",
           "score_segmentation"]


def _points(values: Iterable[int]) -> np.ndarray:
    return np.unique(np.asarray(list(values), dtype=np.int64))


def match_change_points(true_cps: Iterable[int], found_cps: Iterable[int], margin: int
                        ) -> list[tuple[int, int]]:
    """Pairs ``(true, found)`` within ``margin`` samples, each point used once; true change
    points are taken in order, each with the closest unused detection (TCPDBench's rule)."""
    free = sorted(set(map(int, _points(found_cps))))
    pairs = []
    for tau in map(int, _points(true_cps)):
        close = [(abs(tau - x), x) for x in free if abs(tau - x) <= margin]
        if close:
            _, best = min(close)
            free.remove(best)
            pairs.append((tau, best))
    return pairs


def f1_score(true_cps: Iterable[int], found_cps: Iterable[int], *, margin: int
             ) -> tuple[float, float, float]:
    """(F1, precision, recall) of ``found_cps`` against ``true_cps`` (module docstring)."""
    truth = np.union1d(_points(true_cps), [0])
    found = np.union1d(_points(found_cps), [0])
    hits = len(match_change_points(truth, found, margin))
    precision = hits / len(found)
    recall = hits / len(truth)
    f1 = 0.0 if hits == 0 else 2 * precision * recall / (precision + recall)
    return f1, precision, recall


def _bounds(cps: np.ndarray, n: int) -> np.ndarray:
    inner = cps[(cps > 0) & (cps < n)]
    return np.concatenate([[0], inner, [n]])


def covering(true_cps: Iterable[int], found_cps: Iterable[int], n: int) -> float:
    """Covering of the true segmentation of ``n`` samples by the found one (module docstring)."""
    if n <= 0:
        raise ValueError("covering needs a series of at least one sample")
    truth = _bounds(_points(true_cps), n)
    found = _bounds(_points(found_cps), n)
    t0, t1 = truth[:-1, None], truth[1:, None]
    f0, f1 = found[None, :-1], found[None, 1:]
    inter = np.clip(np.minimum(t1, f1) - np.maximum(t0, f0), 0, None)
    union = (t1 - t0) + (f1 - f0) - inter
    best = (inter / union).max(axis=1)
    return float(((truth[1:] - truth[:-1]) * best).sum() / n)


@dataclass(frozen=True)
class SegmentationScores:
    """F1, precision, recall and Covering of one segmentation, with the matched pairs'
    delays in samples (found - true; online detectors report after the change)."""

    f1: float
    precision: float
    recall: float
    covering: float
    n_true: int
    n_found: int
    delays: tuple[int, ...]

    @property
    def true_positives(self) -> int:
        return len(self.delays)

    @property
    def false_positives(self) -> int:
        return self.n_found - self.true_positives


def score_segmentation(true_cps: Iterable[int], found_cps: Iterable[int], n: int, *,
                       margin: int, reported: Iterable[int] | None = None
                       ) -> SegmentationScores:
    """All the scores of ``found_cps`` (located change points) against ``true_cps`` in a
    series of ``n`` samples; ``reported`` (same order as ``found_cps``) are the samples at
    which an online detector reported each change: the delays are reported - true."""
    truth = _points(true_cps)
    truth = truth[(truth > 0) & (truth < n)]
    found = np.asarray(list(found_cps), dtype=np.int64)
    when = found if reported is None else np.asarray(list(reported), dtype=np.int64)
    inner = (found > 0) & (found < n)
    found, when = found[inner], when[inner]
    f1, precision, recall = f1_score(truth, found, margin=margin)
    report_of = dict(zip(found.tolist(), when.tolist(), strict=True))
    delays = tuple(int(report_of[x] - tau)
                   for tau, x in match_change_points(truth, found, margin))
    return SegmentationScores(f1=f1, precision=precision, recall=recall,
                              covering=covering(truth, found, n), n_true=len(truth),
                              n_found=len(np.unique(found)), delays=delays)
