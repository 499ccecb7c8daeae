"""F1 and Covering (phasekit.metrics.segmentation) against naive set-based references written
from TCPDBench's definitions, and TCPDBench's own one-annotator examples."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from phasekit.metrics.segmentation import covering, f1_score, score_segmentation


def naive_partition(cps: list[int], n: int) -> list[set[int]]:
    bounds = [0, *sorted(c for c in set(cps) if 0 < c < n), n]
    return [set(range(a, b)) for a, b in itertools.pairwise(bounds)]


def naive_covering(true_cps: list[int], found_cps: list[int], n: int) -> float:
    truth, found = naive_partition(true_cps, n), naive_partition(found_cps, n)
    return sum(len(r) * max(len(r & s) / len(r | s) for s in found) for r in truth) / n


def test_f1_tcpdbench_examples() -> None:
    assert f1_score([10, 20], [10, 20], margin=5)[0] == 1.0
    assert f1_score([], [], margin=5)[0] == 1.0
    # one true change, one far detection: 0 is a hit, so P = R = 1/2
    f1, precision, recall = f1_score([50], [10], margin=5)
    assert (precision, recall) == (0.5, 0.5) and f1 == pytest.approx(0.5)
    # a detection pairs with at most one change point
    assert f1_score([10, 12], [11], margin=5)[2] == pytest.approx(2 / 3)


def test_covering_tcpdbench_examples() -> None:
    # _cover_single([{1,2,3},{4,5},{6}], [{1,2,3},{4,5,6}]) on 0-based indices
    assert covering([3], [3, 5], 6) == pytest.approx(0.8333333333333334)
    assert covering([], [4], 6) == pytest.approx(0.6666666666666666)
    assert covering([1, 2, 3], [], 6) == pytest.approx(0.3333333333333333)


@pytest.mark.parametrize("seed", range(20))
def test_covering_matches_naive(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    true_cps = rng.integers(0, n, size=rng.integers(0, 5)).tolist()
    found_cps = rng.integers(0, n, size=rng.integers(0, 8)).tolist()
    assert covering(true_cps, found_cps, n) == pytest.approx(naive_covering(true_cps, found_cps, n))


def test_scores_report_delays_and_false_positives() -> None:
    scores = score_segmentation([100, 200], [101, 150, 203], 300, margin=5,
                                reported=[102, 151, 204])
    assert scores.delays == (2, 4)
    assert scores.true_positives == 2 and scores.false_positives == 1
    assert scores.recall == 1.0 and scores.precision == pytest.approx(3 / 4)
