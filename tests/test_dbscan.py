"""phasekit's DBSCAN (structure/cluster.py, so that `phasekit structure` imports no
scikit-learn) against scikit-learn's on the same points: the same labels, noise and border
points included."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import DBSCAN

from phasekit.structure.cluster import dbscan, neighborhoods


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("min_pts", [1, 2, 4])
def test_same_labels_as_scikit_learn(seed: int, min_pts: int) -> None:
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 6, size=(5, 2))
    X = np.vstack([c + rng.normal(0, 0.15, size=(rng.integers(1, 40), 2)) for c in centres]
                  + [rng.uniform(0, 6, size=(15, 2))])          # clusters and scattered points
    for eps in (0.1, 0.2, 0.5):
        expected = DBSCAN(eps=eps, min_samples=min_pts).fit(X).labels_
        assert dbscan(X, eps=eps, min_pts=min_pts).tolist() == expected.tolist()


def test_neighborhoods_are_the_brute_force_ones() -> None:
    X = np.random.default_rng(1).uniform(0, 1, size=(300, 2))
    dist = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    for i, near in enumerate(neighborhoods(X, 0.07)):
        assert near.tolist() == np.flatnonzero(dist[i] <= 0.07).tolist()


def test_no_points_and_duplicates() -> None:
    assert dbscan(np.empty((0, 2)), eps=0.2, min_pts=1).tolist() == []
    X = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 5.0]])
    assert dbscan(X, eps=0.2, min_pts=2).tolist() == [0, 0, -1]
