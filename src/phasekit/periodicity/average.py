"""Representative patterns by DBA (Phase-TA, section III-C).

DBA (Petitjean et al. 2011) starts from the cluster's medoid, the instance with the least sum
of DTW_2 to the others (Phase-TA, III-C), and refines until ``max_iter`` = 31 iterations were done
or ``n_consecutive`` = 5 consecutive iterations each lowered the WGSS by less than
``tolerance`` = 2.5 % (Phase-TA, III-C).

For large clusters the medoid is searched among a shortlist: the ``shortlist`` = 4 most
central instances in Euclidean distance after resampling to a common length (our choice),
each scored by its exact sum of DTW_2 to every member.

A cluster of more than ``sample`` = :data:`DBA_SAMPLE` instances (a long run: 4096 cycles of
1.1 s are 75 minutes) is averaged on that many of them, evenly spaced in the run (our
choice): the medoid and every refinement see the sample, so the work no longer grows with
the run's length, and the WGSS of the result is then computed once over every instance
(the trace's values are the sample's, scaled to the whole). The clusters, and so the
coverage and the instances, do not depend on it; on a 2-hour NEMO-like run (5038 instances)
the WGSS of the average moved by 0.02 %.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phasekit.distance.dtw import as_band, dba_update, dtw2_matrix, dtw2_pairs, dtw2_to_all
from phasekit.periodicity.cluster import resample_series

MAX_ITER = 31
N_CONSECUTIVE = 5
TOLERANCE = 0.025
SHORTLIST = 4
EXACT_MEDOID_BELOW = 48
DBA_SAMPLE = 4096


def medoid(X: np.ndarray, lengths: np.ndarray, *, band: float | None,
           shortlist: int = SHORTLIST, exact_below: int = EXACT_MEDOID_BELOW) -> int:
    """Index of the series with the least sum of DTW_2 to all the others."""
    n = X.shape[0]
    lengths = lengths.astype(np.int64)
    if n <= exact_below:
        return int(np.argmin(dtw2_matrix(X, lengths, band).sum(axis=1)))
    Y = resample_series(X, lengths, int(np.median(lengths)))
    centered = Y - Y.mean(axis=0)
    # sum of squared Euclidean distances to all others = n |y_i - mean|^2 + const
    candidates = np.argsort((centered * centered).sum(axis=1))[:shortlist]
    # every candidate against every instance in one parallel call (as ``dtw2_to_all`` does it)
    left = np.repeat(candidates, n).astype(np.int64)
    right = np.tile(np.arange(n, dtype=np.int64), candidates.size)
    to_all = dtw2_pairs(X, lengths, left, right, as_band(band)).reshape(candidates.size, n)
    sums = [row.sum() for row in to_all]
    return int(candidates[int(np.argmin(sums))])


@dataclass(frozen=True)
class Average:
    pattern: np.ndarray
    wgss: float
    iterations: int
    wgss_trace: tuple[float, ...]


def dba(X: np.ndarray, lengths: np.ndarray, *, band: float | None, init: np.ndarray | None = None,
        max_iter: int = MAX_ITER, n_consecutive: int = N_CONSECUTIVE,
        tolerance: float = TOLERANCE, sample: int = DBA_SAMPLE) -> Average:
    """DBA average of padded series ``X`` (n x max_len x d) with their ``lengths``; above
    ``sample`` series, of that many evenly spaced ones (module docstring)."""
    lengths = lengths.astype(np.int64)
    n = X.shape[0]
    if n > sample:
        chosen = np.unique(np.linspace(0, n - 1, sample).round().astype(np.int64))
        part = dba(X[chosen], lengths[chosen], band=band, init=init, max_iter=max_iter,
                   n_consecutive=n_consecutive, tolerance=tolerance, sample=n)
        whole = float(dtw2_to_all(part.pattern, X, lengths, as_band(band)).sum())
        scale = n / chosen.size
        return Average(part.pattern, whole, part.iterations,
                       tuple(scale * w for w in part.wgss_trace))
    if init is None:
        start = medoid(X, lengths, band=band)
        init = X[start, :lengths[start]]
    average = np.ascontiguousarray(init, dtype=np.float64)
    kernel_band = as_band(band)
    trace: list[float] = []
    best, best_wgss = average, np.inf
    small_steps = 0
    for _ in range(max_iter):
        refined, wgss = dba_update(average, X, lengths, kernel_band)
        trace.append(float(wgss))
        if wgss < best_wgss:
            best, best_wgss = average, float(wgss)
        if len(trace) > 1:
            previous = trace[-2]
            decrease = (previous - wgss) / previous if previous > 0 else 0.0
            small_steps = small_steps + 1 if decrease < tolerance else 0
            if small_steps >= n_consecutive:
                break
        average = refined
    else:
        final = float(dtw2_to_all(average, X, lengths, kernel_band).sum())
        trace.append(final)
        if final < best_wgss:
            best, best_wgss = average, final
    return Average(best, best_wgss, len(trace), tuple(trace))


def wgss(pattern: np.ndarray, X: np.ndarray, lengths: np.ndarray, *, band: float | None) -> float:
    """WGSS of a pattern relative to instances: sum of DTW_2 (Phase-TA, equation 1)."""
    pattern = np.asarray(pattern, dtype=np.float64)
    if pattern.ndim == 1:
        pattern = pattern[:, None]
    return float(dtw2_to_all(pattern, X, lengths.astype(np.int64), as_band(band)).sum())
