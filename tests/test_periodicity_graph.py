"""The clustering's graph kernels against scipy.sparse.csgraph, which they replace (so
that the analysis imports no scipy.sparse), ties included."""

from __future__ import annotations

import numpy as np
import pytest

from phasekit.periodicity.cluster import connected_components, spanning_tree

sparse = pytest.importorskip("scipy.sparse")
csgraph = pytest.importorskip("scipy.sparse.csgraph")


def _random_graph(rng: np.random.Generator, n: int, edges: int, levels: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct vertex pairs in random order and direction, weights on ``levels`` values (ties)."""
    keys = rng.choice(n * (n - 1) // 2, size=min(edges, n * (n - 1) // 2), replace=False)
    i, j = np.triu_indices(n, k=1)
    i, j = i[keys], j[keys]
    swap = rng.random(i.size) < 0.5
    i, j = np.where(swap, j, i), np.where(swap, i, j)
    weights = rng.integers(1, levels + 1, size=i.size) * 0.1
    return i.astype(np.int64), j.astype(np.int64), weights


def _scipy_tree(i: np.ndarray, j: np.ndarray, weights: np.ndarray, n: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    graph = sparse.coo_matrix((weights, (i, j)), shape=(n, n)).tocsr()
    tree = csgraph.minimum_spanning_tree(graph).tocoo()
    return tree.row, tree.col, tree.data


@pytest.mark.parametrize("seed", range(40))
def test_spanning_tree_equals_scipy_ties_included(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 120))
    levels = int(rng.choice([1, 2, 3, 10, 1000]))  # one level: every weight ties
    i, j, weights = _random_graph(rng, n, int(rng.integers(1, 6 * n)), levels)
    got = spanning_tree(i, j, weights, n)
    expected = _scipy_tree(i, j, weights, n)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)


def test_spanning_tree_of_complete_graphs_equals_scipy() -> None:
    rng = np.random.default_rng(7)
    for n in (2, 3, 10, 64):
        i, j = np.triu_indices(n, k=1)
        for weights in (np.full(i.size, 2.5), rng.integers(0, 3, size=i.size) + 1e-300,
                        rng.random(i.size)):
            got = spanning_tree(i, j, weights, n)
            for a, b in zip(got, _scipy_tree(i, j, weights, n), strict=True):
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed", range(20))
def test_connected_components_equal_scipy(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 150))
    i, j, _ = _random_graph(rng, n, int(rng.integers(0, n + 1)), 1) if n > 1 else (
        np.empty(0, np.int64), np.empty(0, np.int64), None)
    count, labels = connected_components(n, i, j)
    graph = sparse.coo_matrix((np.ones(i.size), (i, j)), shape=(n, n))
    expected_count, expected = csgraph.connected_components(graph, directed=False)
    assert count == expected_count
    np.testing.assert_array_equal(labels, expected)
