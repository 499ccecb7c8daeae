"""Single-linkage clustering of periodic instances on DTW_2 (seed 000, section III-B).

Single linkage merges at the edges of the minimum spanning tree (MST) of the DTW_2 graph, so
the clusters for a cut are the connected components of the MST without the edges above the
cut.

The cut criterion (the seed gives none; ours): an MST edge separates two clusters when it is
more than ``cut_ratio`` times the median MST edge. Instances of one periodicity differ by
noise and jitter and their nearest-neighbour DTW_2 is concentrated around the median edge;
an edge between two periodicities is much longer. The default ratio, 4.0, was chosen on the
synthetic ground-truth suite by ``benchmarks/cut_criterion.py`` (adjusted Rand index against
the true labels over ratios 1.5 to 32; the table is in benchmarks/RESULTS.md).

Exact single linkage needs all n(n-1)/2 DTW_2. Above ``exact_below`` instances we compute
DTW_2 only on candidate edges: each instance's ``neighbors`` = 6 nearest neighbours in squared
Euclidean distance after resampling to a common length (the banded DTW_2 of equal-length
series is never larger than it, so true near neighbours are among them), plus edges that
join the components of that graph. This is the MST of a sparse subgraph of the DTW_2 graph:
its clusters equal exact single linkage whenever every cluster's MST edges are among the
candidates, which the tests check against the exact computation.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

from phasekit.distance.dtw import as_band, dtw2_matrix, dtw2_pairs

CUT_RATIO = 4.0
NEIGHBORS = 6
EXACT_BELOW = 64


def resample_series(X: np.ndarray, lengths: np.ndarray, length: int) -> np.ndarray:
    """Every padded series linearly resampled to ``length`` points, flattened (n x length*d)."""
    n, _, dims = X.shape
    out = np.empty((n, length, dims))
    target = np.linspace(0.0, 1.0, length)
    for i in range(n):  # one interpolation per instance
        source = np.linspace(0.0, 1.0, lengths[i])
        for d in range(dims):
            out[i, :, d] = np.interp(target, source, X[i, :lengths[i], d])
    return out.reshape(n, length * dims)


def euclidean_neighbors(Y: np.ndarray, k: int, chunk: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j), i < j, of each row's ``k`` nearest rows in squared Euclidean distance."""
    n = Y.shape[0]
    k = min(k, n - 1)
    norms = (Y * Y).sum(axis=1)
    left, right = [], []
    for lo in range(0, n, chunk):
        block = norms[lo:lo + chunk, None] + norms[None, :] - 2.0 * Y[lo:lo + chunk] @ Y.T
        rows = np.arange(lo, min(n, lo + chunk))
        block[rows - lo, rows] = np.inf
        nearest = np.argpartition(block, k - 1, axis=1)[:, :k]
        left.append(np.repeat(rows, k))
        right.append(nearest.ravel())
    i = np.concatenate(left)
    j = np.concatenate(right)
    pairs = np.unique(np.stack([np.minimum(i, j), np.maximum(i, j)], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]


def mst_edges(X: np.ndarray, lengths: np.ndarray, *, band: float | None,
              neighbors: int = NEIGHBORS, exact_below: int = EXACT_BELOW
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges (i, j, DTW_2) of the minimum spanning tree of the instances."""
    n = X.shape[0]
    lengths = lengths.astype(np.int64)
    if n < 2:
        empty = np.empty(0, np.int64)
        return empty, empty, np.empty(0)
    if n <= exact_below:
        matrix = dtw2_matrix(X, lengths, band)
        i, j = np.triu_indices(n, k=1)
        weights = matrix[i, j]
    else:
        Y = resample_series(X, lengths, int(np.median(lengths)))
        i, j = euclidean_neighbors(Y, neighbors)
        weights = dtw2_pairs(X, lengths, i, j, as_band(band))
        i, j, weights = _join_components(X, lengths, Y, i, j, weights, band)
    # a zero weight would read as "no edge" in a sparse graph: offset every edge by a tiny amount
    graph = coo_matrix((weights + _tiny(weights), (i, j)), shape=(n, n)).tocsr()
    tree = minimum_spanning_tree(graph).tocoo()
    return tree.row.astype(np.int64), tree.col.astype(np.int64), tree.data - _tiny(weights)


def _tiny(weights: np.ndarray) -> float:
    return 1e-12 * (float(np.max(weights)) if weights.size else 1.0) + 1e-300


def _join_components(X: np.ndarray, lengths: np.ndarray, Y: np.ndarray, i: np.ndarray,
                     j: np.ndarray, weights: np.ndarray, band: float | None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = X.shape[0]
    graph = coo_matrix((np.ones(i.size), (i, j)), shape=(n, n))
    count, component = connected_components(graph, directed=False)
    if count == 1:
        return i, j, weights
    # join every pair of components through their Euclidean-closest members
    reps_i, reps_j = [], []
    members = [np.flatnonzero(component == c) for c in range(count)]
    for a in range(count):
        for b in range(a + 1, count):
            ya, yb = Y[members[a]], Y[members[b]]
            d2 = (ya * ya).sum(1)[:, None] + (yb * yb).sum(1)[None, :] - 2 * ya @ yb.T
            p, q = np.unravel_index(np.argmin(d2), d2.shape)
            reps_i.append(members[a][p])
            reps_j.append(members[b][q])
    extra_i = np.asarray(reps_i, np.int64)
    extra_j = np.asarray(reps_j, np.int64)
    extra_w = dtw2_pairs(X, lengths, extra_i, extra_j, as_band(band))
    return (np.concatenate([i, extra_i]), np.concatenate([j, extra_j]),
            np.concatenate([weights, extra_w]))


def cut_tree(n: int, i: np.ndarray, j: np.ndarray, weights: np.ndarray, *,
             cut_ratio: float = CUT_RATIO) -> np.ndarray:
    """Cluster label per instance: components of the MST without edges > cut_ratio x median."""
    if n == 0:
        return np.empty(0, np.int64)
    if weights.size:
        scale = float(np.median(weights))
        floor = 1e-9 * float(np.max(weights)) if np.max(weights) > 0 else 0.0
        keep = weights <= cut_ratio * max(scale, floor)
        i, j = i[keep], j[keep]
    graph = coo_matrix((np.ones(i.size), (i, j)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    # number clusters by decreasing size, then first appearance
    sizes = np.bincount(labels)
    first = np.array([np.flatnonzero(labels == c)[0] for c in range(sizes.size)])
    order = np.lexsort((first, -sizes))
    renumber = np.empty_like(order)
    renumber[order] = np.arange(order.size)
    return renumber[labels].astype(np.int64)


def single_linkage(X: np.ndarray, lengths: np.ndarray, *, band: float | None,
                   cut_ratio: float = CUT_RATIO, neighbors: int = NEIGHBORS,
                   exact_below: int = EXACT_BELOW) -> np.ndarray:
    """Cluster labels of padded instances by single linkage on DTW_2 and our cut criterion."""
    i, j, weights = mst_edges(X, lengths, band=band, neighbors=neighbors, exact_below=exact_below)
    return cut_tree(X.shape[0], i, j, weights, cut_ratio=cut_ratio)
