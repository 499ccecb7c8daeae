"""One pattern per loop: clusters of one period whose shapes differ only at noise level are
merged (ours; Phase-TA does not merge).

The single-linkage cut (:mod:`phasekit.periodicity.cluster`) splits a periodicity whenever its
instances form groups a long MST edge apart, and groups of one loop arise: instances cut at
another phase of the cycle (a batch the phase alignment turned wrongly: the demo's page faults
as 32 + 4 and 27 + 7 instances of the 0.4 s iteration, a third of a cycle apart), the first
iteration after each checkpoint starting 20 ms late (36 + 3 instances, 0.4017 and 0.4 s), and,
in an exactly periodic signal, instances cut a sample apart, far apart on the scale of
noise-free instances (19 cycles of a square wave as 10 + 5 + 4 instances).

Two clusters A and B (A the one with more instances) are compared when their periods (mean
instance lengths) are within ``period_tolerance`` (``analyze`` passes its
``length_tolerance``, 5 %, the length grouping's tolerance for one periodicity) plus one
sample (``SAMPLE_SLACK``: lengths are whole samples, so a loop of 11.1 samples whose
instances jitter by a sample comes out as groups of 10, 11 and 12, 9 % apart; the shape test
then decides; at 5 ms, 220 samples, the sample adds 0.5 %). Every
quantity is a mean squared difference per sample, summed over the metrics; the instances are
resampled linearly to A's mean length:

- ``distance``: between the mean instances of A and B, B's turned to A's phase (the circular
  rotation of best correlation, :func:`phasekit.periodicity.align.best_rotation`). The means
  and the Euclidean distance, not the DBA representatives and DTW_2: the DBA averages of two
  halves of one cluster (random, or early and late instances, of the synthetic suite's
  patterns) came out up to 4 times this noise apart, their means at most 1.2 times; and the
  DTW band absorbs most of the difference between a square wave and a pulse of one period.
- ``noise``: ``max(v_A, v_B) (1 / n_A + 1 / n_B) + r``. ``v`` is a cluster's instance
  variance (unbiased, around its mean), so ``v (1 / n_A + 1 / n_B)`` is the expected distance
  between the means of ``n_A`` and ``n_B`` instances of one shape (the larger ``v`` for both:
  three instances say little about their own spread). ``r`` is the time resolution: a quarter
  of the mean squared step between consecutive samples of the smoother mean (circular), the
  difference between two samplings of a cycle half a sample apart; it is what the clusters of
  a noise-free signal differ by (their ``v`` can be 0).
- Merge when ``distance <= MERGE_RATIO x noise``, ``MERGE_RATIO`` = 4 (the means within two
  standard errors, in root mean square), the least ratio first, then again with the merged
  cluster, until no pair qualifies.

The ratio was chosen with ``benchmarks/pattern_merge.py`` over every pair of one period it
finds without the merge: in 20 noise-free cycles (sine, square-ish, triangle, sawtooth, pulse),
two regions of one shape or of two shapes at noise 1 % to 20 % of the range, the ground-truth
suite and its same-length pairs, and 16 recordings of the demo's workload (each metric). Pairs
of one loop: 22 of 24 at ratios up to 3.4; the other two (7.0 and 29.5) are the demo's context
switches in a region where the loop itself behaved differently. Pairs of two loops: none below
7.7 up to a noise of 10 % of the range; at 20 %, 3 of 14 (sawtooth and triangle, in clusters
the single-linkage cut had already mixed) at 2.0 to 3.9. A ratio of 2 would leave the demo's
late first iterations apart (2.7 to 3.4); 6 would merge no more pairs of one loop, one more of
two.
The figures are in benchmarks/RESULTS.md.

Merging pools the instances: B's instances are cut again at A's phase when the rotation
exceeds ``KEEP_CUT`` = a tenth of the cycle (shifted by the rotation, scaled to each
instance's length; smaller rotations are the cut's own jitter, left to DTW and DBA as within
a cluster); a re-cut instance that would leave the profile, cover a missing sample or overlap
one of A's by more than a quarter of its length is dropped, so no sample counts twice. The
representative is the DBA of the pooled instances started from A's
(:func:`phasekit.periodicity.average.dba`), the coverage the union of the instances. Every
merge is recorded (:func:`records`: ``params["merged"]`` of the result).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from phasekit.periodicity import align, average
from phasekit.periodicity.cluster import resample_series

MERGE_RATIO = 4.0
OVERLAP = 0.25
KEEP_CUT = 0.1
SAMPLE_SLACK = 1.0


@dataclass(frozen=True, eq=False)
class Cluster:
    """Instances clustered together (``X`` padded, n x length x metrics, with their
    ``starts``/``lengths`` in the analyzed profile), their DBA representative, and the merges
    that made the cluster (:func:`merge_same_shape`)."""

    X: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    average: average.Average
    merges: tuple[dict[str, Any], ...] = field(default=())

    @property
    def n_instances(self) -> int:
        return int(self.starts.size)

    @property
    def period(self) -> float:
        """Mean instance length (samples)."""
        return float(self.lengths.mean()) if self.lengths.size else 0.0


@dataclass(frozen=True)
class Comparison:
    """The merge rule's quantities for clusters ``into`` (more instances) and ``other``."""

    distance: float
    noise: float
    rotation: int  # signed, in samples of ``into``'s mean length

    @property
    def ratio(self) -> float:
        if self.noise > 0:
            return self.distance / self.noise
        return 0.0 if self.distance == 0 else float("inf")


def resampled(cluster: Cluster, length: int) -> np.ndarray:
    """The cluster's instances linearly resampled to ``length`` samples (n x length x d)."""
    dims = cluster.X.shape[2]
    Y = resample_series(cluster.X, cluster.lengths.astype(np.int64), length)
    return Y.reshape(cluster.n_instances, length, dims)


def mean_and_variance(Y: np.ndarray) -> tuple[np.ndarray, float]:
    """The mean instance and the instance variance: the mean squared difference per sample
    from the mean (unbiased; 0 for one instance)."""
    mean = Y.mean(axis=0)
    if Y.shape[0] < 2:
        return mean, 0.0
    diff = Y - mean[None]
    return mean, float(np.einsum("ijk,ijk->", diff, diff)) / ((Y.shape[0] - 1) * Y.shape[1])


def time_resolution(cycle: np.ndarray) -> float:
    """A quarter of the mean squared step between consecutive samples of a cycle (circular):
    the mean squared difference between two samplings of it half a sample apart."""
    step = cycle - np.roll(cycle, 1, axis=0)
    return float(np.einsum("ij,ij->", step, step)) / (4 * cycle.shape[0])


def compare(into: Cluster, other: Cluster) -> Comparison:
    """The distance between the clusters' mean instances and the noise it is measured against
    (the module's rule)."""
    length = max(2, round(into.period))
    mean_a, var_a = mean_and_variance(resampled(into, length))
    mean_b, var_b = mean_and_variance(resampled(other, length))
    rotation, _ = align.best_rotation(mean_a, mean_b)
    diff = mean_a - np.roll(mean_b, -rotation, axis=0)
    distance = float(np.einsum("ij,ij->", diff, diff)) / length
    noise = (max(var_a, var_b) * (1 / into.n_instances + 1 / other.n_instances)
             + min(time_resolution(mean_a), time_resolution(mean_b)))
    if rotation > length // 2:
        rotation -= length
    return Comparison(distance, noise, int(rotation))


def same_period(a: Cluster, b: Cluster, tolerance: float) -> bool:
    """Mean lengths within ``tolerance`` (relative to the longer) plus one sample: a length
    is a whole number of samples, so the instances of one loop of period P (samples) jitter
    between floor(P) and ceil(P), and when P is short the length grouping (a relative
    tolerance) splits them by length; a sample of slack lets the shape test decide."""
    return abs(a.period - b.period) <= tolerance * max(a.period, b.period) + SAMPLE_SLACK


def recut(x: np.ndarray, into: Cluster, other: Cluster, rotation: int
          ) -> tuple[np.ndarray, np.ndarray]:
    """``other``'s instances cut at ``into``'s phase (start + rotation scaled to each
    instance's length), without those that would leave ``x``, cover a missing sample or
    overlap an instance of ``into`` by more than ``OVERLAP`` of their length."""
    starts = other.starts + np.rint(rotation * other.lengths / into.period).astype(np.int64)
    lengths = other.lengths
    ends = starts + lengths
    keep = (starts >= 0) & (ends <= x.shape[0])
    finite = np.concatenate([[0], np.cumsum(~np.isfinite(x).all(axis=1))])
    keep[keep] &= finite[ends[keep]] == finite[starts[keep]]
    order = np.argsort(into.starts)
    a_start, a_end = into.starts[order], into.starts[order] + into.lengths[order]
    after = np.searchsorted(a_start, starts)
    for side in (after - 1, after):  # the instances of ``into`` just before and just after
        inside = (side >= 0) & (side < a_start.size)
        near = np.clip(side, 0, max(a_start.size - 1, 0))
        overlap = np.where(inside, np.minimum(ends, a_end[near]) - np.maximum(starts, a_start[near]), 0)
        keep &= overlap <= OVERLAP * lengths
    return starts[keep], lengths[keep]


def _padded(x: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    longest = int(lengths.max()) if lengths.size else 0
    offsets = np.arange(longest)
    inside = offsets[None, :] < lengths[:, None]
    X = np.zeros((starts.size, longest, x.shape[1]))
    X[inside] = x[(starts[:, None] + offsets[None, :])[inside]]
    return X


def merge_pair(x: np.ndarray, into: Cluster, other: Cluster, comparison: Comparison, *,
               band: float | None, sampling_period: float, dba: dict[str, Any]) -> Cluster:
    """``other`` merged into ``into``: its instances cut at ``into``'s phase and pooled, the
    representative re-averaged by DBA from ``into``'s."""
    if abs(comparison.rotation) > KEEP_CUT * into.period:
        starts, lengths = recut(x, into, other, comparison.rotation)
    else:
        starts, lengths = other.starts, other.lengths
    starts = np.concatenate([into.starts, starts])
    lengths = np.concatenate([into.lengths, lengths])
    order = np.argsort(starts, kind="stable")
    starts, lengths = starts[order], lengths[order]
    X = _padded(x, starts, lengths)
    avg = average.dba(X, lengths, band=band, init=into.average.pattern, **dba)
    record = {
        "from": [{"period_s": c.period * sampling_period, "n_instances": c.n_instances}
                 for c in (into, other)],
        "distance": comparison.distance, "noise": comparison.noise, "ratio": comparison.ratio,
        "shift": comparison.rotation, "dropped": other.n_instances - (starts.size - into.n_instances)}
    return Cluster(X, starts, lengths, avg, into.merges + other.merges + (record,))


def merge_same_shape(x: np.ndarray, clusters: list[Cluster], *, band: float | None,
                     period_tolerance: float, sampling_period: float, ratio: float = MERGE_RATIO,
                     dba: dict[str, Any] | None = None) -> list[Cluster]:
    """``clusters`` with every pair of the same period whose representatives differ only at
    noise level merged (the module's rule), closest pair first; ``x`` is the analyzed
    profile (samples x metrics, NaN where missing) the instances index. A negative ``ratio``
    merges nothing."""
    clusters = list(clusters)
    known: dict[tuple[int, int], tuple[Cluster, Cluster, Comparison]] = {}  # pairs compared

    def comparison(into: Cluster, other: Cluster) -> Comparison:
        key = (id(into), id(other))
        if key not in known:  # the clusters are kept with it, so their ids are not reused
            known[key] = (into, other, compare(into, other))
        return known[key][2]

    while True:
        best: tuple[float, int, int, Comparison] | None = None
        for i, a in enumerate(clusters):
            for j in range(i + 1, len(clusters)):
                b = clusters[j]
                if not same_period(a, b, period_tolerance):
                    continue
                into, other = (i, j) if _larger(a, b) else (j, i)
                found = comparison(clusters[into], clusters[other])
                if found.ratio <= ratio and (best is None or found.ratio < best[0]):
                    best = (found.ratio, into, other, found)
        if best is None:
            return clusters
        _, into, other, found = best
        clusters[into] = merge_pair(x, clusters[into], clusters[other], found, band=band,
                                    sampling_period=sampling_period, dba=dba or {})
        del clusters[other]


def _larger(a: Cluster, b: Cluster) -> bool:
    """``a`` has more instances than ``b`` (more samples on a tie, then ``a`` first)."""
    return (a.n_instances, int(a.lengths.sum())) >= (b.n_instances, int(b.lengths.sum()))


def records(clusters: list[Cluster]) -> list[dict[str, Any]]:
    """The merges behind each cluster, in order, each with ``into``: the cluster's index in
    ``clusters`` (the patterns' order)."""
    return [{"into": k, **record} for k, c in enumerate(clusters) for record in c.merges]
