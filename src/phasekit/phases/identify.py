"""Phase representation and identification (Tsafack Chetsa et al., section IV).

Representation (IV-A): a phase is summarized by its representative vector (the component-
wise mean of its EVs) and its reference vector (the member closest, in Manhattan distance,
to that mean); its start is its simulation point.

Identification (IV-B): a phase takes the id of the earliest earlier phase that is close to
it; otherwise a new id (ids count from 1, in order of appearance).

ev-literal (:func:`ids_by_distance`): "close" is the published algorithm's own threshold
(Tsafack Chetsa et al., IV-B): the Manhattan distance between the reference vectors is at most
``threshold`` times the largest distance between consecutive EVs of the run (our reading of
"a specific percentage of the maximum distance").

ev (ours, :func:`ids_by_score`; the default of every detector,
:class:`phasekit.phases.registry.PhaseDetector`): distances are taken in the detector's
scale-free features, z = log(v + 1 % of the sensor's mean over the run), and two phases are
close when each one's reference vector would be *in phase* in the other phase by the
detector's own score:

- the reference vector is the member closest to the phase's component-wise *median* in
  these features, each sensor divided by its noise level (the median |difference| between
  consecutive vectors of the run, at least ``ID_MIN_SCALE`` = 0.05), in Manhattan distance.
  In the raw per-cycle units the closest member is decided by the largest sensor alone
  (instructions per cycle, or the load in cycles per second) and may hold a burst of every
  other sensor; around the mean of the features, a sensor that is zero most of the time
  and bursts now and then (disk writes) puts the mean between its two levels, and a
  start-up vector can be the closest member;
- a phase's statistics are the mean and the mean absolute deviation (its spread) of its
  features after its first ``min_length`` vectors (the detector's young part: launch,
  set-up), all of them when it is shorter;
- score of a reference vector in a phase = mean over sensors of |z - the phase's mean| /
  max(the phase's spread, the run's noise), each term capped at 100, as in
  :mod:`phasekit.phases.ev`; phases i and k are the same when the score of i's
  reference in k and the score of k's reference in i are both at most ``id_threshold``
  (default: the detection threshold, 3).

So a recurring phase is recognized within its own variability (a workload whose 1 s samples
alternate between two steps has a spread to match), while the per-sensor floor keeps steady
phases apart. On bench_1 and bench_2 (five repetitions, seeds 0-8) every recurring workload
is identified and none confused with another: between two long phases (10 s or more,
80 % one workload) of the same workload the score is at most 1, of different workloads at
least 3.4 (MG and CG, the closest pair); id_threshold 1.5, 2 and 3 give the same
identification rates there. On the real recording in
tests/data, numpy and stream (both one Python process on one core) and gzip and sort share
ids: the /proc CPU sensors of that recording cannot tell them apart (an id_threshold of 1.5
does). An earlier version compared the reference vectors alone (chosen in raw units), by the
median over sensors of their differences in noise units: 85-95 % identified, because the
one reference vector of a workload whose samples alternate between two steps lies in
either step.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["ID_MIN_SCALE", "ID_SKIP", "ID_THRESHOLD", "MERGE_SCORE", "PhaseSummary",
           "consecutive_scores", "features", "ids_by_distance", "ids_by_score",
           "reference_matrix", "scaled_features", "summarize"]

ID_MIN_SCALE = 0.05  # = the ev detector's min_spread
ID_CAP = 100.0  # = the ev detector's cap
ID_SKIP = 8  # = the ev detector's min_length
ID_THRESHOLD = 3.0  # = the ev detector's threshold
MERGE_SCORE = 1.0  # = the ev detector's TRANSIENT: as close as a typical member


@dataclass(frozen=True, eq=False)
class PhaseSummary:
    """One phase: vectors ``[start, end)``; representative and reference vectors."""

    start: int
    end: int
    representative: np.ndarray
    reference: np.ndarray
    reference_index: int


def summarize(X: np.ndarray, starts: np.ndarray, *,
              space: np.ndarray | None = None) -> list[PhaseSummary]:
    """The phases ``[starts[i], starts[i+1])`` of ``X`` with their two vectors (IV-A); a
    phase made of gaps only has NaN vectors. The reference vector is the member closest to
    the phase's mean in Manhattan distance, in ``X`` (as published) or in ``space`` (the same
    vectors transformed, row for row: the ev method's :func:`scaled_features`)."""
    bounds = [*map(int, starts), X.shape[0]]
    where = X if space is None else space
    out = []
    for start, end in itertools.pairwise(bounds):
        block = X[start:end]
        valid = np.isfinite(block).all(axis=1) & np.isfinite(where[start:end]).all(axis=1)
        if not valid.any():
            nan = np.full(X.shape[1], np.nan)
            out.append(PhaseSummary(start, end, nan, nan, start))
            continue
        mean = block[valid].mean(axis=0)
        members = where[start:end][valid]
        center = members.mean(axis=0) if space is None else np.median(members, axis=0)
        closest = int(np.argmin(np.abs(members - center).sum(axis=1)))
        index = int(np.flatnonzero(valid)[closest])
        out.append(PhaseSummary(start, end, mean, block[index].copy(), start + index))
    return out


def features(X: np.ndarray, scale_from: np.ndarray | None = None,
             eps_rel: float = 0.01) -> np.ndarray:
    """The ev method's scale-free features of vectors ``X``: the detector's signed log
    (:func:`phasekit.phases.ev.signed_log`) with eps = 1 % of the sensor's mean |v| over
    ``scale_from``, all the run's vectors; default ``X``."""
    base = X if scale_from is None else scale_from
    with np.errstate(invalid="ignore"):
        scale = np.nanmean(np.abs(base), axis=0) if base.size else np.zeros(X.shape[1])
    eps = np.where(np.isfinite(scale) & (scale > 0), eps_rel * scale, 1e-300)
    with np.errstate(invalid="ignore"):
        return np.where(X >= 0, np.log(np.abs(X) + eps), 2 * np.log(eps) - np.log(eps + np.abs(X)))


def _noise(Z: np.ndarray) -> np.ndarray:
    """Per-sensor noise level of features ``Z``: median |consecutive difference|, at least
    ``ID_MIN_SCALE``."""
    steps = np.abs(np.diff(Z, axis=0))
    steps = steps[np.isfinite(steps).all(axis=1)]
    noise = np.median(steps, axis=0) if steps.size else np.zeros(Z.shape[1])
    return np.maximum(noise, ID_MIN_SCALE)


def scaled_features(X: np.ndarray) -> np.ndarray:
    """The ev method's features of ``X``, each sensor divided by its noise level (module
    docstring): where its reference vectors are chosen."""
    Z = features(X, X)
    return Z / _noise(Z)


def reference_matrix(summaries: list[PhaseSummary], n_sensors: int) -> np.ndarray:
    """The reference vectors of ``summaries`` as rows (phases x ``n_sensors``)."""
    return np.array([s.reference for s in summaries]).reshape(len(summaries), n_sensors)


def ids_by_distance(references: np.ndarray, limit: float, *, apart: bool = False
                    ) -> np.ndarray:
    """Ids (from 1) as published (IV-B): phase i takes the id of the earliest earlier phase
    whose reference vector is within Manhattan distance ``limit`` of its own (ev-literal:
    ``threshold`` x the largest consecutive-EV distance of the run), or a new id; with
    ``apart``, never its predecessor's."""
    return _first_match(references.shape[0], np.isfinite(references).all(axis=1),
                        lambda i, k: np.abs(references[i] - references[k]).sum() <= limit,
                        apart=apart)


def ids_by_score(references: np.ndarray, vectors: np.ndarray, starts: np.ndarray,
                 limit: float, *, min_length: int = ID_SKIP, apart: bool = False
                 ) -> np.ndarray:
    """Ids (from 1), ours (module docstring): phases i and k share an id when the score of
    i's reference vector in k and of k's in i are both at most ``limit``; ``vectors`` are the
    run's, ``starts`` the phases' (indices into them, in order), ``min_length`` the young
    part of a phase left out of its statistics; with ``apart``, consecutive phases never
    share an id (a phase takes the earliest match whose id is not its predecessor's)."""
    usable, score = _phase_scores(references, vectors, starts, min_length)
    return _first_match(references.shape[0], usable, lambda i, k: score(i, k) <= limit,
                        apart=apart)


def consecutive_scores(references: np.ndarray, vectors: np.ndarray, starts: np.ndarray,
                       min_length: int = ID_SKIP) -> np.ndarray:
    """The ev method's identification score (module docstring) between every phase and the
    one before it (entry 0: NaN; NaN where a phase has no usable statistics)."""
    usable, score = _phase_scores(references, vectors, starts, min_length)
    out = np.full(references.shape[0], np.nan)
    for i in range(1, references.shape[0]):
        if usable[i] and usable[i - 1]:
            out[i] = score(i, i - 1)
    return out


def _phase_scores(references: np.ndarray, vectors: np.ndarray, starts: np.ndarray,
                  min_length: int) -> tuple[np.ndarray, Callable[[int, int], float]]:
    """Which phases have statistics, and the symmetric score of two phases (the larger of
    each reference vector's score in the other phase)."""
    n = references.shape[0]
    Z = features(vectors, vectors)
    noise = _noise(Z)
    points = features(references, vectors)
    bounds = [*map(int, starts), vectors.shape[0]]
    means = np.full((n, Z.shape[1]), np.nan)
    scales = np.full((n, Z.shape[1]), np.nan)
    for p, (start, end) in enumerate(itertools.pairwise(bounds)):
        block = Z[start:end]
        block = block[np.isfinite(block).all(axis=1)]
        body = block[min_length:] if block.shape[0] > min_length + 1 else block
        if body.shape[0]:
            means[p] = body.mean(axis=0)
            spread = np.abs(body - means[p]).mean(axis=0)
            scales[p] = np.maximum(spread, noise)

    def one_way(i: int, k: int) -> float:
        return float(np.minimum(np.abs(points[i] - means[k]) / scales[k], ID_CAP).mean())

    usable = np.isfinite(points).all(axis=1) & np.isfinite(means).all(axis=1)
    return usable, lambda i, k: max(one_way(i, k), one_way(k, i))


def _first_match(n: int, usable: np.ndarray, close: Callable[[int, int], bool], *,
                 apart: bool = False) -> np.ndarray:
    """Ids: phase i takes the id of the earliest usable earlier phase k with close(i, k);
    with ``apart``, never the id of phase i - 1."""
    ids = np.zeros(n, np.int64)
    next_id = 1
    for i in range(n):
        if usable[i]:
            for k in range(i):
                if apart and i > 0 and ids[k] == ids[i - 1]:
                    continue
                if usable[k] and close(i, k):
                    ids[i] = ids[k]
                    break
        if ids[i] == 0:
            ids[i] = next_id
            next_id += 1
    return ids
