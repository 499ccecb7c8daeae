"""Evaluation of periodicity detection against ground truth (Phase-TA, §II-A and Table II).

Pure functions on arrays. Instances are given as parallel integer arrays ``starts``,
``lengths`` and ``labels`` (one entry per periodic instance, sample indices); a sample outside
every instance has label ``-1``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from phasekit.errors import UsageError

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


def _intervals(starts: Any, lengths: Any) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(starts, dtype=np.int64).ravel()
    n = np.asarray(lengths, dtype=np.int64).ravel()
    if s.shape != n.shape:
        raise UsageError(f"{s.size} instance starts but {n.size} lengths")
    if np.any(n < 0):
        raise UsageError("instance lengths must be non-negative")
    return s, n


def _instances(starts: Any, lengths: Any, labels: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s, n = _intervals(starts, lengths)
    lab = np.asarray(labels).ravel()
    if lab.shape != s.shape:
        raise UsageError(f"{s.size} instance starts but {lab.size} labels")
    return s, n, lab


def sample_labels(n_samples: int, starts: Any, lengths: Any, labels: Any) -> np.ndarray:
    """The label of every sample (``int64``, ``-1`` outside every instance).

    Instances are clipped to ``[0, n_samples)``; where instances overlap the later one in the
    input order wins.
    """
    s, n, lab = _instances(starts, lengths, labels)
    out = np.full(int(n_samples), -1, dtype=np.int64)
    lab = lab.astype(np.int64)
    s0 = np.clip(s, 0, n_samples)
    e0 = np.clip(s + n, 0, n_samples)
    n0 = e0 - s0
    keep = n0 > 0
    if not np.any(keep):
        return out
    s0, n0, lab = s0[keep], n0[keep], lab[keep]
    # concatenated ranges [s0[i], s0[i] + n0[i]) without a Python loop
    first = np.cumsum(n0) - n0
    index = np.arange(int(n0.sum()), dtype=np.int64) - np.repeat(first - s0, n0)
    out[index] = np.repeat(lab, n0)  # later assignments win on duplicate indices
    return out


def _union_length(starts: np.ndarray, lengths: np.ndarray) -> int:
    if starts.size == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    s = starts[order]
    e = s + lengths[order]
    reach = np.maximum.accumulate(e)  # furthest end among this and earlier intervals
    previous = np.concatenate(([np.iinfo(np.int64).min], reach[:-1]))
    return int(np.maximum(0, e - np.maximum(s, previous)).sum())


def coverage(n_valid: int, starts: Any, lengths: Any) -> float:
    """Share of the ``n_valid`` (non-NaN) samples covered by the union of the instances.

    This is the ``%period`` column of Phase-TA Table II (as a fraction, not a percentage).
    Returns 0.0 when ``n_valid`` is 0.
    """
    s, n = _intervals(starts, lengths)
    if n_valid < 0:
        raise UsageError("expected a count >= 0", parameter="n_valid", value=n_valid)
    if n_valid == 0:
        return 0.0
    return _union_length(s, n) / float(n_valid)


def periodic_regions(starts: Any, lengths: Any, labels: Any, *,
                     tolerance: int = 2) -> list[tuple[Any, int, int]]:
    """Maximal runs of consecutive instances of one label: ``(label, first_index, count)``.

    Instance ``i`` continues the run of instance ``i - 1`` when both have the same label and
    ``|starts[i] - (starts[i-1] + lengths[i-1])| <= tolerance`` samples (our choice: 2 samples
    absorbs the rounding of instance boundaries by a detector). Instances must be in time
    order; ``first_index`` indexes the input arrays. Every instance belongs to exactly one
    run, so an isolated instance is a run of count 1 (a periodic region in the sense of seed
    000 §II-A needs at least 2).
    """
    s, n, lab = _instances(starts, lengths, labels)
    if s.size == 0:
        return []
    if np.any(np.diff(s) < 0):
        raise UsageError("instances must be in time order (non-decreasing starts)")
    if tolerance < 0:
        raise UsageError("expected a number >= 0", parameter="tolerance", value=tolerance)
    joins = (lab[1:] == lab[:-1]) & (np.abs(s[1:] - (s[:-1] + n[:-1])) <= tolerance)
    firsts = np.concatenate(([0], np.flatnonzero(~joins) + 1))
    counts = np.diff(np.concatenate((firsts, [s.size])))
    return [(lab[f].item(), int(f), int(c)) for f, c in zip(firsts, counts, strict=True)]


def mean_consecutive(starts: Any, lengths: Any, labels: Any, *, tolerance: int = 2) -> float:
    """Mean number of instances per periodic region: the ``[#pa]`` of Phase-TA Table II.

    0.0 when there is no instance.
    """
    regions = periodic_regions(starts, lengths, labels, tolerance=tolerance)
    if not regions:
        return 0.0
    return float(np.mean([count for _, _, count in regions]))


def labels_ari(true_labels: Any, predicted_labels: Any) -> float:
    """Adjusted Rand index between two per-sample labelings (``-1`` is a label like any other),
    computed as ``sklearn.metrics.adjusted_rand_score`` computes it (pair counts as integers,
    then one division; the tests compare the two bit for bit) without importing scikit-learn
    and, with it, pandas (0.25 s of a command)."""
    t = np.asarray(true_labels).ravel()
    p = np.asarray(predicted_labels).ravel()
    if t.shape != p.shape:
        raise UsageError(f"label arrays differ in length: {t.size} true vs {p.size} predicted")
    t = np.unique(t, return_inverse=True)[1].ravel().astype(np.int64)
    p = np.unique(p, return_inverse=True)[1].ravel().astype(np.int64)
    n = int(t.size)
    cells = np.bincount(t * (int(p.max()) + 1) + p) if n else np.zeros(0, np.int64)
    same_both = int((cells ** 2).sum())
    same_truth = int((np.bincount(t) ** 2).sum())
    same_labels = int((np.bincount(p) ** 2).sum())
    tp, fp, fn = same_both - n, same_labels - same_both, same_truth - same_both
    tn = n * n - fp - fn - same_both
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def _overlap_matrix(true_sl: np.ndarray, pred_sl: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Overlap counts between labels >= 0 of two per-sample labelings, with the label values."""
    both = (true_sl >= 0) & (pred_sl >= 0)
    t_values = np.unique(true_sl[true_sl >= 0])
    p_values = np.unique(pred_sl[pred_sl >= 0])
    ti = np.searchsorted(t_values, true_sl[both])
    pi = np.searchsorted(p_values, pred_sl[both])
    counts = np.bincount(ti * p_values.size + pi, minlength=t_values.size * p_values.size)
    return counts.reshape(t_values.size, p_values.size), t_values, p_values


def _assign(overlap: np.ndarray) -> list[tuple[int, int]]:
    """Hungarian assignment maximizing the total overlap; pairs with no overlap are dropped."""
    from scipy.optimize import linear_sum_assignment

    if overlap.size == 0:
        return []
    rows, cols = linear_sum_assignment(overlap, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if overlap[r, c] > 0]


def best_overlap_mapping(true_sample_labels: Any, pred_sample_labels: Any) -> dict[int, int]:
    """Map each predicted label to the true label it shares most samples with, one-to-one.

    Labels are per-sample integer arrays (``-1`` = outside every instance, ignored). The pairing
    maximizes the total number of shared samples (Hungarian algorithm); a predicted label with
    no overlap, or left over when there are more predicted than true labels, is absent.
    """
    t = np.asarray(true_sample_labels, dtype=np.int64).ravel()
    p = np.asarray(pred_sample_labels, dtype=np.int64).ravel()
    if t.shape != p.shape:
        raise UsageError(f"label arrays differ in length: {t.size} true vs {p.size} predicted")
    overlap, t_values, p_values = _overlap_matrix(t, p)
    return {int(p_values[c]): int(t_values[r]) for r, c in _assign(overlap)}


@dataclass(frozen=True)
class PatternMatch:
    """One true periodicity paired with one predicted pattern, with their sample counts."""

    true_label: Hashable
    predicted_label: Hashable
    overlap: int
    true_samples: int
    predicted_samples: int

    @property
    def precision(self) -> float:
        """Share of the predicted pattern's samples that lie in the true periodicity."""
        return self.overlap / self.predicted_samples if self.predicted_samples else 0.0

    @property
    def recall(self) -> float:
        """Share of the true periodicity's samples that the predicted pattern covers."""
        return self.overlap / self.true_samples if self.true_samples else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0


Intervals = tuple[Any, Any]


def match_patterns(true_instances: Mapping[Hashable, Intervals],
                   predicted_instances: Mapping[Hashable, Intervals]) -> list[PatternMatch]:
    """Pair true periodicities with predicted patterns by sample overlap (Hungarian).

    Each mapping goes from a label (any hashable: id or name) to that label's instances as
    ``(starts, lengths)`` arrays. Overlap counts the samples inside an instance of the true
    label and inside an instance of the predicted one; the pairing maximizes the total overlap.
    Returns the pairs with a positive overlap, ordered as the true labels are given.
    """
    t_keys, p_keys = list(true_instances), list(predicted_instances)
    groups = [true_instances[k] for k in t_keys] + [predicted_instances[k] for k in p_keys]
    ends = [int(np.max(np.asarray(s, np.int64) + np.asarray(n, np.int64)))
            for s, n in groups if np.size(s)]
    n_samples = max(ends, default=0)

    def labeling(keys: list[Hashable], mapping: Mapping[Hashable, Intervals]) -> np.ndarray:
        parts = [_intervals(*mapping[k]) for k in keys]
        starts = np.concatenate([s for s, _ in parts]) if parts else np.empty(0, np.int64)
        lengths = np.concatenate([n for _, n in parts]) if parts else np.empty(0, np.int64)
        ids = np.repeat(np.arange(len(keys)), [s.size for s, _ in parts])
        return sample_labels(n_samples, starts, lengths, ids)

    t_sl, p_sl = labeling(t_keys, true_instances), labeling(p_keys, predicted_instances)
    t_size = np.bincount(t_sl[t_sl >= 0], minlength=len(t_keys))
    p_size = np.bincount(p_sl[p_sl >= 0], minlength=len(p_keys))
    overlap, t_values, p_values = _overlap_matrix(t_sl, p_sl)
    pairs = sorted(_assign(overlap), key=lambda rc: int(t_values[rc[0]]))
    return [
        PatternMatch(true_label=t_keys[int(t_values[r])], predicted_label=p_keys[int(p_values[c])],
                     overlap=int(overlap[r, c]), true_samples=int(t_size[t_values[r]]),
                     predicted_samples=int(p_size[p_values[c]]))
        for r, c in pairs
    ]
