"""Evaluation metrics (phasekit.metrics) on tiny hand-computed examples."""

from __future__ import annotations

import numpy as np
import pytest

from phasekit import UsageError
from phasekit.metrics import (
    PatternMatch,
    best_overlap_mapping,
    coverage,
    labels_ari,
    match_patterns,
    mean_consecutive,
    periodic_regions,
    sample_labels,
)


def _naive_sample_labels(n: int, starts: np.ndarray, lengths: np.ndarray,
                         labels: np.ndarray) -> list[int]:
    out = [-1] * n
    for s, length, lab in zip(starts, lengths, labels, strict=True):
        for i in range(s, s + length):
            if 0 <= i < n:
                out[i] = int(lab)
    return out


def test_sample_labels_by_hand() -> None:
    got = sample_labels(10, [1, 4, 8], [3, 2, 5], [0, 1, 0])
    assert got.tolist() == [-1, 0, 0, 0, 1, 1, -1, -1, 0, 0]  # the last one is clipped
    assert got.dtype == np.int64
    assert sample_labels(4, [], [], []).tolist() == [-1] * 4
    assert sample_labels(5, [0, 2], [4, 2], [0, 1]).tolist() == [0, 0, 1, 1, -1]  # later wins
    assert sample_labels(5, [-2, 4], [3, 0], [3, 2]).tolist() == [3, -1, -1, -1, -1]


def test_sample_labels_against_naive() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        k = int(rng.integers(0, 8))
        starts = rng.integers(-5, 40, k)
        lengths = rng.integers(0, 12, k)
        labels = rng.integers(0, 3, k)
        got = sample_labels(40, starts, lengths, labels).tolist()
        assert got == _naive_sample_labels(40, starts, lengths, labels)


def test_coverage_by_hand() -> None:
    assert coverage(10, [0, 5], [2, 3]) == pytest.approx(0.5)
    assert coverage(10, [0, 1], [4, 2]) == pytest.approx(0.4)  # union, not sum
    assert coverage(10, [6, 0, 2], [2, 3, 2]) == pytest.approx(0.6)  # unsorted, touching
    assert coverage(8, [0, 5], [2, 3]) == pytest.approx(5 / 8)  # n_valid excludes NaN samples
    assert coverage(10, [], []) == 0.0
    assert coverage(0, [], []) == 0.0
    with pytest.raises(UsageError):
        coverage(10, [0, 1], [2])


def test_coverage_against_naive() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        k = int(rng.integers(0, 8))
        starts, lengths = rng.integers(0, 40, k), rng.integers(0, 12, k)
        covered = set()
        for s, n in zip(starts, lengths, strict=True):
            covered.update(range(s, s + n))
        assert coverage(60, starts, lengths) == pytest.approx(len(covered) / 60)


def test_periodic_regions_by_hand() -> None:
    # Phase-TA's example [AAB AAB] BD [CBA CBA CBA] AABDC [AAB AAB] (§II-A)
    starts = [0, 3, 8, 11, 14, 22, 25]
    lengths = [3, 3, 3, 3, 3, 3, 3]
    labels = [0, 0, 1, 1, 1, 0, 0]
    assert periodic_regions(starts, lengths, labels) == [(0, 0, 2), (1, 2, 3), (0, 5, 2)]
    assert mean_consecutive(starts, lengths, labels) == pytest.approx(7 / 3)
    # a gap of 2 samples is within the default tolerance, 3 is not
    assert periodic_regions([0, 12], [10, 10], [4, 4]) == [(4, 0, 2)]
    assert periodic_regions([0, 13], [10, 10], [4, 4]) == [(4, 0, 1), (4, 1, 1)]
    assert periodic_regions([0, 13], [10, 10], [4, 4], tolerance=3) == [(4, 0, 2)]
    assert periodic_regions([0, 9], [10, 10], [4, 4]) == [(4, 0, 2)]  # one sample overlap
    # a label change splits a run even without a gap; string labels work too
    assert periodic_regions([0, 5, 10], [5, 5, 5], ["a", "a", "b"]) == [("a", 0, 2), ("b", 2, 1)]
    assert periodic_regions([], [], []) == []
    assert mean_consecutive([], [], []) == 0.0
    with pytest.raises(UsageError, match="time order"):
        periodic_regions([5, 0], [5, 5], [0, 0])


def test_labels_ari() -> None:
    assert labels_ari([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert labels_ari([-1, -1, 0, 0], [3, 3, 7, 7]) == pytest.approx(1.0)
    # hand computation: contingency [[2,0],[1,1]]; sum C(n_ij,2)=1, rows 1+1=2, cols 3+0=3,
    # expected = 2*3/6 = 1, max = 2.5 -> (1-1)/(2.5-1) = 0
    assert labels_ari([0, 0, 1, 1], [0, 0, 0, 1]) == pytest.approx(0.0)
    with pytest.raises(UsageError):
        labels_ari([0, 1], [0])


def test_best_overlap_mapping() -> None:
    true = np.array([-1, 0, 0, 0, 1, 1, 1, 1, -1, 2])
    pred = np.array([5, 5, 5, 9, 9, 9, 9, -1, -1, 5])
    # overlaps: true0-pred5 = 2, true0-pred9 = 1, true1-pred9 = 3, true2-pred5 = 1
    assert best_overlap_mapping(true, pred) == {5: 0, 9: 1}
    # one-to-one: both predicted labels mostly inside true 0, only one can have it
    assert best_overlap_mapping([0, 0, 0, 0, 1], [3, 3, 3, 4, 4]) == {3: 0, 4: 1}
    assert best_overlap_mapping([-1, -1], [0, 0]) == {}
    assert best_overlap_mapping([0, 0, 1], [-1, -1, -1]) == {}


def test_match_patterns() -> None:
    true = {"init": ([0, 10], [10, 10]), "compute": ([30, 40, 50], [10, 10, 10])}
    pred = {0: ([32, 42, 52], [10, 10, 8]), 1: ([1], [18]), 2: ([70], [5])}
    matches = match_patterns(true, pred)
    assert [(m.true_label, m.predicted_label) for m in matches] == [("init", 1), ("compute", 0)]
    init, compute = matches
    assert (init.overlap, init.true_samples, init.predicted_samples) == (18, 20, 18)
    assert init.precision == 1.0 and init.recall == pytest.approx(0.9)
    assert init.f1 == pytest.approx(2 * 0.9 / 1.9)
    # predicted 0 covers 32..59 (28 samples), true compute 30..59 (30 samples)
    assert (compute.overlap, compute.true_samples, compute.predicted_samples) == (28, 30, 28)
    assert match_patterns(true, {}) == []
    assert match_patterns({}, {}) == []
    assert PatternMatch("a", "b", 0, 0, 0).f1 == 0.0


def test_metrics_on_synthetic_truth() -> None:
    from phasekit.synth import generate

    _, truth = generate("hpcg", minutes=1, seed=0)
    sl = truth.sample_labels()
    assert labels_ari(sl, sl) == pytest.approx(1.0)
    assert best_overlap_mapping(sl, sl + 10 * (sl >= 0)) == {10: 0, 11: 1, 12: 2}
    per_label = {name: (truth.starts[truth.instance_labels == i],
                        truth.lengths[truth.instance_labels == i])
                 for i, name in enumerate(truth.labels)}
    matches = match_patterns(per_label, per_label)
    assert all(m.f1 == 1.0 and m.true_label == m.predicted_label for m in matches)
    regions = periodic_regions(truth.starts, truth.lengths, truth.instance_labels)
    assert len(regions) == 3
    assert mean_consecutive(truth.starts, truth.lengths, truth.instance_labels) == pytest.approx(
        truth.starts.size / 3)
