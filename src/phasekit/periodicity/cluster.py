"""Single-linkage clustering of periodic instances on DTW_2 (Phase-TA, section III-B).

Single linkage merges at the edges of the minimum spanning tree (MST) of the DTW_2 graph, so
the clusters for a cut are the connected components of the MST without the edges above the
cut.

The cut criterion (the paper gives none; ours): an MST edge separates two clusters when it is
more than ``cut_ratio`` times the median MST edge. Instances of one periodicity differ by
noise and jitter and their nearest-neighbour DTW_2 is concentrated around the median edge;
an edge between two periodicities is much longer. The default ratio, 4.0, was chosen on the
synthetic ground-truth suite by ``benchmarks/cut_criterion.py`` (adjusted Rand index against
the true labels over ratios 1.5 to 32; the table is in benchmarks/RESULTS.md).

The median edge is a scale only while it measures real differences. Instances of an exactly
periodic signal (a simulator's or a synthetic exporter's output) differ by floating-point
rounding alone: every edge is about 1e-29, their ratios are arbitrary, and cutting at 4 x
the median split one periodicity into several (3 patterns of the same 4 s cycle).
So the scale has a floor at the data's own resolution: edges count as equal below
``RESOLUTION``^2 = (1e-9)^2 times the mean energy (sum of squares) of an instance, that is
when the instances differ by less than one part in 10^9 in RMS (ours; double precision
resolves about 1e-16, and a computed signal loses a few digits to rounding before it is
sampled). Noisy instances are far above this floor, so it changes nothing for them.

A cluster too small to be a pattern (fewer than the 3 instances ``analyze`` requires) is not
dropped when it links to a large cluster: it joins the large cluster its shortest MST edge
leads to (``absorb_small``; ours). The detector verified its instances as periodic with the
length of the group, and the phase alignment tied them to the same reference cycle; what
set them apart is an amplitude the rest of the run does not have (an iteration that shared
its core with another job, a page-fault burst). Dropping them lost 12 of the 40 iterations
of one demo recording made while other jobs ran (64 % coverage, 92 % with them); on the
synthetic suite the mean ARI rises from 0.964 to 0.984 and the coverage error falls from
1.1 to 0.44 points with the same pattern counts (benchmarks/RESULTS.md). Small clusters that
link only to one another stay apart, so they can still not make up a pattern on their own.

Exact single linkage needs all n(n-1)/2 DTW_2. Above ``exact_below`` instances we compute
DTW_2 only on candidate edges: each instance's ``neighbors`` = 6 nearest neighbours in squared
Euclidean distance after resampling to a common length (the banded DTW_2 of equal-length
series is never larger than it, so true near neighbours are among them), plus edges that
join the components of that graph. This is the MST of a sparse subgraph of the DTW_2 graph:
its clusters equal exact single linkage whenever every cluster's MST edges are among the
candidates, which the tests check against the exact computation.

Finding those Euclidean neighbours exactly compares every instance with every other, which
grows with the square of the run's length (a day at 5 ms holds about 78 000 cycles of 1.1 s).
Above ``APPROXIMATE_ABOVE`` instances (ours: 8192, a run of 2.5 hours at that period; the
answers of shorter runs are unchanged) the candidates come from a k-d tree over the
instances' first ``PROJECTED`` principal components (of a sample of ``PCA_SAMPLE``), ``4 k``
per instance, and each instance keeps the ``k`` nearest of them in the full Euclidean
distance: near-linear work. The tree is searched to within a factor ``1 + TREE_EPS`` = 2 of
each candidate's distance (scipy's ``eps``): searched exactly, a tree over 16 dimensions
visits most of its leaves, 9 to 26 s for the 60,638 instances of a day's run on two
cores, against 1 to 5 s so. A 2-hour NEMO-like run (5038 instances) forced through it kept
93 % of the exact neighbour edges (97 % with the exact tree search) and gave the same
result, key for key; the tests check the clusters against the exact search's on instances
that vary in a few ways.
"""

from __future__ import annotations

import numpy as np

from phasekit.distance.dtw import as_band, dtw2_matrix, dtw2_pairs
from phasekit.distance.vector import pairwise_squared_euclidean, squared_euclidean
from phasekit.parallel import worker_threads
from phasekit.periodicity import _kernels

CUT_RATIO = 4.0
NEIGHBORS = 6
EXACT_BELOW = 64
RESOLUTION = 1e-9
APPROXIMATE_ABOVE = 8192
PROJECTED = 16
PCA_SAMPLE = 4096
CANDIDATES = 4
TREE_EPS = 1.0


def resample_series(X: np.ndarray, lengths: np.ndarray, length: int) -> np.ndarray:
    """Every padded series linearly resampled to ``length`` points, flattened (n x length*d):
    ``np.interp`` from ``np.linspace(0, 1, lengths[i])`` to ``np.linspace(0, 1, length)``."""
    n, _, dims = X.shape
    distinct, grid_of = np.unique(lengths, return_inverse=True)
    grids = np.zeros((distinct.size, max(1, int(distinct.max(initial=1)))))
    for g, m in enumerate(distinct):  # one grid per distinct length
        grids[g, :m] = np.linspace(0.0, 1.0, m)
    out = _interp_rows(X, lengths.astype(np.int64), grid_of.astype(np.int64).reshape(-1), grids,
                       np.linspace(0.0, 1.0, length))
    return out.reshape(n, length * dims)


def _interp_rows(X: np.ndarray, lengths: np.ndarray, grid_of: np.ndarray, grids: np.ndarray,
                 target: np.ndarray) -> np.ndarray:
    """``np.interp(target, grids[grid_of[i]][:lengths[i]], X[i, :lengths[i], d])`` for every
    series and dimension, with NumPy's arithmetic and special cases (target increasing; in C)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((X.shape[0], len(target), X.shape[2]))
    _kernels.interp_rows(X, np.ascontiguousarray(lengths, dtype=np.int64),
                         np.ascontiguousarray(grid_of, dtype=np.int64),
                         np.ascontiguousarray(grids, dtype=np.float64),
                         np.ascontiguousarray(target, dtype=np.float64), out)
    return out


def euclidean_neighbors(Y: np.ndarray, k: int, chunk: int = 1024,
                        approximate_above: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j), i < j, of each row's ``k`` nearest rows in squared Euclidean
    distance: exactly up to ``approximate_above`` rows (default :data:`APPROXIMATE_ABOVE`),
    from projected candidates above (module docstring)."""
    n = Y.shape[0]
    k = min(k, n - 1)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    limit = APPROXIMATE_ABOVE if approximate_above is None else approximate_above
    if n > limit and k > 0:
        return _distinct_pairs(*_projected_neighbors(Y, k, chunk), n)
    left, right = [], []
    for lo in range(0, n, chunk):
        block = (pairwise_squared_euclidean(Y) if n <= chunk
                 else squared_euclidean(Y[lo:lo + chunk], Y))
        rows = np.arange(lo, min(n, lo + chunk))
        block[rows - lo, rows] = np.inf
        nearest = np.argpartition(block, k - 1, axis=1)[:, :k]
        left.append(np.repeat(rows, k))
        right.append(nearest.ravel())
    return _distinct_pairs(np.concatenate(left), np.concatenate(right), n)


def _distinct_pairs(i: np.ndarray, j: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs (min, max) of (i, j) in lexicographic order, through one integer
    key per pair."""
    i, j = i.astype(np.int64), j.astype(np.int64)
    keys = np.unique(np.minimum(i, j) * n + np.maximum(i, j))
    return keys // n, keys % n


def _projected_neighbors(Y: np.ndarray, k: int, chunk: int
                         ) -> tuple[np.ndarray, np.ndarray]:
    """(row, neighbour) of each row's ``k`` nearest among its :data:`CANDIDATES` x ``k``
    nearest in the first :data:`PROJECTED` principal components (module docstring)."""
    from scipy.spatial import cKDTree

    n = Y.shape[0]
    rng = np.random.default_rng(0)
    sample = Y[np.sort(rng.choice(n, min(n, PCA_SAMPLE), replace=False))]
    mean = sample.mean(axis=0)
    _, _, axes = np.linalg.svd(sample - mean, full_matrices=False)
    projected = (Y - mean) @ axes[:PROJECTED].T
    count = min(n, CANDIDATES * k + 1)
    _, candidates = cKDTree(projected).query(projected, k=count, eps=TREE_EPS,
                                             workers=worker_threads())
    squares = np.einsum("ij,ij->i", Y, Y)
    left, right = [], []
    for lo in range(0, n, chunk):
        rows = np.arange(lo, min(n, lo + chunk))
        near = candidates[rows]
        distance = squares[near] - 2 * np.einsum("ij,ikj->ik", Y[rows], Y[near])
        distance[near == rows[:, None]] = np.inf
        best = np.argpartition(distance, k - 1, axis=1)[:, :k]
        left.append(np.repeat(rows, k))
        right.append(np.take_along_axis(near, best, axis=1).ravel())
    return np.concatenate(left), np.concatenate(right)


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
    # every edge offset by a tiny amount, as when the tree came from scipy's sparse graphs (a
    # zero weight read as "no edge" there): the offset's rounding makes the same ties
    tree_i, tree_j, tree_w = spanning_tree(i, j, weights + _tiny(weights), n)
    return tree_i, tree_j, tree_w - _tiny(weights)


def _tiny(weights: np.ndarray) -> float:
    return 1e-12 * (float(np.max(weights)) if weights.size else 1.0) + 1e-300


def spanning_tree(i: np.ndarray, j: np.ndarray, weights: np.ndarray, n: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The minimum spanning tree (forest) of the graph of ``n`` vertices and the distinct edges
    (i, j, weights), as ``scipy.sparse.csgraph.minimum_spanning_tree`` of its CSR matrix gives
    it, ties included: Kruskal's algorithm on the edges in row-major order, sorted stably by
    weight; the tree's edges in row-major order (without importing scipy.sparse, for the command's start-up)."""
    i, j = np.asarray(i, np.int64), np.asarray(j, np.int64)
    order = np.lexsort((j, i))
    i, j, weights = i[order], j[order], np.asarray(weights, np.float64)[order]
    keep = np.empty(i.size, bool)
    _kernels.kruskal(int(n), i, j, np.argsort(weights, kind="stable").astype(np.int64), keep)
    return i[keep], j[keep], weights[keep]


def connected_components(n: int, i: np.ndarray, j: np.ndarray) -> tuple[int, np.ndarray]:
    """Number of connected components of the undirected graph of ``n`` vertices and edges
    (i, j), and the component of each vertex, numbered in the order of their lowest vertex (as
    ``scipy.sparse.csgraph.connected_components(..., directed=False)``)."""
    labels = np.empty(n, np.int64)
    count = _kernels.components(int(n), np.ascontiguousarray(i, dtype=np.int64),
                                np.ascontiguousarray(j, dtype=np.int64), labels)
    return count, labels


def _join_components(X: np.ndarray, lengths: np.ndarray, Y: np.ndarray, i: np.ndarray,
                     j: np.ndarray, weights: np.ndarray, band: float | None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = X.shape[0]
    count, component = connected_components(n, i, j)
    if count == 1:
        return i, j, weights
    # join every pair of components through their Euclidean-closest members
    reps_i, reps_j = [], []
    members = [np.flatnonzero(component == c) for c in range(count)]
    for a in range(count):
        for b in range(a + 1, count):
            d2 = squared_euclidean(Y[members[a]], Y[members[b]])
            p, q = np.unravel_index(np.argmin(d2), d2.shape)
            reps_i.append(members[a][p])
            reps_j.append(members[b][q])
    extra_i = np.asarray(reps_i, np.int64)
    extra_j = np.asarray(reps_j, np.int64)
    extra_w = dtw2_pairs(X, lengths, extra_i, extra_j, as_band(band))
    return (np.concatenate([i, extra_i]), np.concatenate([j, extra_j]),
            np.concatenate([weights, extra_w]))


def resolution_floor(X: np.ndarray, lengths: np.ndarray, *,
                     resolution: float = RESOLUTION) -> float:
    """The DTW_2 below which padded instances count as equal: ``resolution``^2 times the
    mean sum of squares of an instance (the padding is zeros and adds nothing)."""
    if X.shape[0] == 0:
        return 0.0
    energy = float(np.einsum("ijk,ijk->", X, X)) / X.shape[0]
    return resolution * resolution * energy if np.isfinite(energy) else 0.0


def cut_tree(n: int, i: np.ndarray, j: np.ndarray, weights: np.ndarray, *,
             cut_ratio: float = CUT_RATIO, floor: float = 0.0) -> np.ndarray:
    """Cluster label per instance: components of the MST without edges > cut_ratio x median
    (the median taken as at least ``floor``, the data's resolution, and 1e-9 x the longest
    edge)."""
    if n == 0:
        return np.empty(0, np.int64)
    if weights.size:
        scale = float(np.median(weights))
        relative = 1e-9 * float(np.max(weights)) if np.max(weights) > 0 else 0.0
        keep = weights <= cut_ratio * max(scale, relative, floor)
        i, j = i[keep], j[keep]
    _, labels = connected_components(n, i, j)
    return _renumber(labels)


def _renumber(labels: np.ndarray) -> np.ndarray:
    """Labels numbered by decreasing cluster size, then first appearance."""
    sizes = np.bincount(labels)
    first = np.array([np.flatnonzero(labels == c)[0] for c in range(sizes.size)])
    order = np.lexsort((first, -sizes))
    renumber = np.empty_like(order)
    renumber[order] = np.arange(order.size)
    return renumber[labels].astype(np.int64)


def absorb_small(labels: np.ndarray, i: np.ndarray, j: np.ndarray, weights: np.ndarray, *,
                 min_size: int) -> np.ndarray:
    """``labels`` with every cluster of fewer than ``min_size`` instances merged into the
    large cluster (``min_size`` or more) nearest to it in single linkage: the MST edges are
    taken in increasing order and small clusters merge along them, with one another too,
    until they meet a large one; two large clusters never merge. Small clusters that meet
    no large one keep their own labels."""
    if min_size <= 1 or labels.size == 0:
        return labels
    parent = np.arange(int(labels.max()) + 1)
    large = np.bincount(labels) >= min_size

    def root(c: int) -> int:
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for e in np.argsort(weights, kind="stable"):  # one step per MST edge, not per sample
        a, b = root(int(labels[i[e]])), root(int(labels[j[e]]))
        if a == b or (large[a] and large[b]):
            continue
        parent[b] = a
        large[a] = large[a] or large[b]
    final = np.array([root(c) if large[root(c)] else c for c in range(parent.size)])
    return _renumber(np.unique(final[labels], return_inverse=True)[1].astype(np.int64))


def single_linkage(X: np.ndarray, lengths: np.ndarray, *, band: float | None,
                   cut_ratio: float = CUT_RATIO, neighbors: int = NEIGHBORS,
                   exact_below: int = EXACT_BELOW, min_size: int = 1) -> np.ndarray:
    """Cluster labels of padded instances by single linkage on DTW_2 and our cut criterion;
    with ``min_size`` > 1, clusters too small to be a pattern join their nearest large one
    (``absorb_small``)."""
    i, j, weights = mst_edges(X, lengths, band=band, neighbors=neighbors, exact_below=exact_below)
    labels = cut_tree(X.shape[0], i, j, weights, cut_ratio=cut_ratio,
                      floor=resolution_floor(X, lengths))
    return absorb_small(labels, i, j, weights, min_size=min_size)
