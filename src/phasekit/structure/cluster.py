"""Clustering the reduced calls into loops (Martínez Vera, "Clustering", "Further considerations").

DBSCAN (ε = 0.2, minPts = 1, the paper's values) in the two-dimensional space of the number
of repetitions and the mean time between repetitions: a cluster is a loop. The paper says the
space is normalized without saying how; ours is log10 of both, so ε is a ratio (10^0.2 ≈ 1.58)
that does not depend on the other loops of the trace: min-max scaling would make calls of one
loop on different ranks (a few per cent apart) fall apart whenever the trace holds only loops
of similar size, and merge loops 10 and 20 iterations long whenever another has 10,000.

Cluster aliasing (two loops that look alike in this space, Martínez Vera, "Further considerations") is
detected and undone here: calls of one loop interleave in time, calls of two loops that run
one after the other do not. Each cluster is split into the groups whose time ranges overlap
(on any ranks), and the split is reported.
"""

from __future__ import annotations

import numpy as np

from phasekit.structure.reduce import Reduction

__all__ = ["EPS", "MIN_PTS", "cluster_entries", "dbscan", "features", "neighborhoods",
           "split_aliased"]

#: DBSCAN radius in the log10 space (Martínez Vera: "ε empirically set to 0.2").
EPS = 0.2
#: DBSCAN minimum points (Martínez Vera: "minPts set to 1").
MIN_PTS = 1
_TINY_S = 1e-12


def features(reduction: Reduction, entries: np.ndarray) -> np.ndarray:
    """(log10 repetitions, log10 mean time between repetitions) of ``entries``."""
    return np.column_stack([np.log10(reduction.it[entries].astype(np.float64)),
                            np.log10(np.maximum(reduction.imt[entries], _TINY_S))])


def cluster_entries(reduction: Reduction, entries: np.ndarray, *, eps: float = EPS,
                    min_pts: int = MIN_PTS) -> np.ndarray:
    """DBSCAN labels of ``entries`` (-1: noise, only possible with ``min_pts`` > 1)."""
    if entries.size == 0:
        return np.zeros(0, np.int64)
    return dbscan(features(reduction, entries), eps=eps, min_pts=min_pts)


def neighborhoods(X: np.ndarray, eps: float) -> list[np.ndarray]:
    """For each point of ``X`` (n x d), the indices of the points within Euclidean distance
    ``eps`` (itself included), ascending: a sweep over the points sorted by their first
    coordinate, so that only those within ``eps`` along it are compared."""
    order = np.argsort(X[:, 0], kind="stable")
    first = X[order, 0]
    lows = np.searchsorted(first, first - eps, side="left")
    highs = np.searchsorted(first, first + eps, side="right")
    out: list[np.ndarray] = [np.empty(0, np.int64)] * len(X)
    for k, i in enumerate(order):
        candidates = order[lows[k]:highs[k]]
        close = np.sum((X[candidates] - X[i]) ** 2, axis=1) <= eps * eps
        out[i] = np.sort(candidates[close])
    return out


def dbscan(X: np.ndarray, *, eps: float, min_pts: int) -> np.ndarray:
    """DBSCAN labels (Ester et al., KDD 1996) as scikit-learn's ``DBSCAN(eps, min_samples)``
    gives them, without importing scikit-learn (0.5 s of every ``phasekit structure``;
    start-up): a point is core when at least ``min_pts`` points (itself included) lie within
    ``eps``; clusters grow depth first from the unlabelled core points in index order, and
    a border point takes the label of the first cluster that reaches it; -1 is noise."""
    near = neighborhoods(np.asarray(X, dtype=np.float64), eps)
    core = np.array([len(n) >= min_pts for n in near], bool)
    labels = np.full(len(near), -1, np.int64)
    label = 0
    for start in range(len(near)):
        if labels[start] != -1 or not core[start]:
            continue
        stack = [start]
        while stack:
            i = stack.pop()
            if labels[i] != -1:
                continue
            labels[i] = label
            if core[i]:
                around = near[i]
                stack.extend(around[labels[around] == -1].tolist())
        label += 1
    return labels


def split_aliased(reduction: Reduction, entries: np.ndarray, labels: np.ndarray
                  ) -> tuple[np.ndarray, list[list[int]]]:
    """Split clusters whose calls form groups that do not overlap in time.

    Two signatures of a cluster belong together when their time ranges (first to last call,
    on any rank: timestamps are global) overlap. Returns the new labels (noise stays -1) and, per cluster that was
    split, the new labels it became.
    """
    new = np.full(labels.size, -1, np.int64)
    splits: list[list[int]] = []
    next_label = 0
    for label in np.unique(labels[labels >= 0]):
        members = np.flatnonzero(labels == label)
        sigs = np.unique(reduction.signature[entries[members]])
        parent = {int(s): int(s) for s in sigs}

        def find(s: int, parent: dict[int, int] = parent) -> int:
            while parent[s] != s:
                parent[s] = parent[parent[s]]
                s = parent[s]
            return s

        order = np.argsort(reduction.first[entries[members]], kind="stable")
        reach = -np.inf
        group_sig = -1
        for e in entries[members[order]]:
            sig = int(reduction.signature[e])
            if reduction.first[e] <= reach:
                parent[find(sig)] = find(group_sig)
            else:
                group_sig = sig
            reach = max(reach, reduction.last[e])
        group = np.array([find(int(reduction.signature[entries[m]])) for m in members])
        roots = sorted(set(group.tolist()),
                       key=lambda root: reduction.first[entries[members[group == root]]].min())
        if len(roots) > 1:
            splits.append(list(range(next_label, next_label + len(roots))))
        for root in roots:
            new[members[group == root]] = next_label
            next_label += 1
    return new, splits
