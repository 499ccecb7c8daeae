"""Phase representation and identification (seed 001, section IV).

Representation (IV-A): a phase is summarized by its representative vector (the component-
wise mean of its EVs) and its reference vector (the member closest, in Manhattan distance,
to that mean); its start is its simulation point.

Identification (IV-B): a phase takes the id of the earliest earlier phase whose reference
vector is close to its own; otherwise a new id (ids count from 1, in order of appearance).
"Close" is the seed's own threshold: the Manhattan distance between the reference vectors is
at most ``threshold`` times the largest distance between consecutive EVs of the run (our
reading of "a specific percentage of the maximum distance"; ev-literal). For the ev method
(ours), reference vectors are compared in its scale-free features (log(v + 1 % of the
sensor's mean)), each sensor divided by its noise level (the median |difference| between
consecutive vectors of the run, at least ``ID_MIN_SCALE`` = 0.05), and two phases are the same
when the *median* over sensors of these scaled differences is at most ``id_threshold`` (2):
the median, so that a burst in one or two sensors of a single reference vector (a disk write,
a network heartbeat) does not split a recurring phase. 2 is our choice from bench_1/bench_2
(five repetitions: 90-100 % of recurring workloads identified, no workload confused with
another).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

__all__ = ["ID_THRESHOLD", "PhaseSummary", "identify", "summarize"]

ID_THRESHOLD = 2.0
ID_MIN_SCALE = 0.05


@dataclass(frozen=True, eq=False)
class PhaseSummary:
    """One phase: vectors ``[start, end)``; representative and reference vectors."""

    start: int
    end: int
    representative: np.ndarray
    reference: np.ndarray
    reference_index: int


def summarize(X: np.ndarray, starts: np.ndarray) -> list[PhaseSummary]:
    """The phases ``[starts[i], starts[i+1])`` of ``X`` with their two vectors (IV-A); a
    phase made of gaps only has NaN vectors."""
    bounds = [*map(int, starts), X.shape[0]]
    out = []
    for start, end in itertools.pairwise(bounds):
        block = X[start:end]
        valid = np.isfinite(block).all(axis=1)
        if not valid.any():
            nan = np.full(X.shape[1], np.nan)
            out.append(PhaseSummary(start, end, nan, nan, start))
            continue
        members = block[valid]
        mean = members.mean(axis=0)
        closest = int(np.argmin(np.abs(members - mean).sum(axis=1)))
        index = int(np.flatnonzero(valid)[closest])
        out.append(PhaseSummary(start, end, mean, block[index].copy(), start + index))
    return out


def features(X: np.ndarray, scale_from: np.ndarray | None = None,
             eps_rel: float = 0.01) -> np.ndarray:
    """The ev method's scale-free features of vectors ``X``: log(v + 1 % of the sensor's mean
    over ``scale_from``, all the run's vectors; default ``X``)."""
    base = X if scale_from is None else scale_from
    scale = np.nanmean(np.where(base > 0, base, 0.0), axis=0)
    eps = np.where(scale > 0, eps_rel * scale, 1e-300)
    return np.log(np.clip(X, 0.0, None) + eps)


def identify(references: np.ndarray, *, method: str, threshold: float,
             max_consecutive: float = np.nan, id_threshold: float = ID_THRESHOLD,
             scale_from: np.ndarray | None = None) -> np.ndarray:
    """Ids (from 1) of phases whose reference vectors are the rows of ``references``.

    ev-literal: same id when the Manhattan distance is <= ``threshold`` x
    ``max_consecutive`` (the largest consecutive-EV distance of the run). ev: same id when the
    mean absolute difference of the features is <= ``id_threshold``; ``scale_from`` (all the
    run's vectors) sets the features' floor.
    """
    n = references.shape[0]
    if method == "ev-literal":
        points = references
        limit = threshold * max_consecutive if np.isfinite(max_consecutive) else 0.0
    else:
        base = references if scale_from is None else scale_from
        points = features(references, base)
        steps = np.abs(np.diff(features(base, base), axis=0))
        steps = steps[np.isfinite(steps).all(axis=1)]
        noise = np.median(steps, axis=0) if steps.size else np.zeros(references.shape[1])
        points = points / np.maximum(noise, ID_MIN_SCALE)
        limit = id_threshold * references.shape[1]
    ids = np.zeros(n, np.int64)
    next_id = 1
    for i in range(n):
        if not np.isfinite(points[i]).all():
            ids[i] = next_id
            next_id += 1
            continue
        for k in range(i):
            if not np.isfinite(points[k]).all():
                continue
            gap = np.abs(points[i] - points[k])
            close = (gap.sum() <= limit if method == "ev-literal"
                     else np.median(gap) <= id_threshold)
            if close:
                ids[i] = ids[k]
                break
        else:
            ids[i] = next_id
            next_id += 1
    return ids
