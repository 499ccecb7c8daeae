"""DTW_2: dynamic time warping with squared pointwise distances (seed 000, section II-A).

DTW_2 sums the *squared* Euclidean distances of the aligned points; it is not the square of
DTW. Series are 2-D arrays (length x dimensions): with several dimensions this is the
"dependent" DTW, the pointwise distance being the squared Euclidean distance over all
dimensions.

The band is a Sakoe-Chiba band that follows the diagonal of the (n, m) cost matrix, so
series of different lengths are aligned end to end: cell (i, j) is inside when
|i (m - 1) - j (n - 1)| <= radius * max(n - 1, m - 1), that is within ``radius`` samples of the
diagonal measured along the longer series (symmetric in the two series). ``band_radius`` turns a relative band (a share of
the longer length) into that radius; ``band=None`` is unconstrained DTW.

Batched kernels take instances padded into one array ``X[n_series, max_len, dims]`` with
their true ``lengths``; they run in parallel over pairs or series with numba.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

INF = np.inf


def band_radius(n: int, m: int, band: float | None) -> int:
    """Radius in samples of a relative Sakoe-Chiba band (our default band is 10 %)."""
    longest = max(n, m)
    if band is None:
        return longest
    return max(1, math.ceil(band * longest))


@njit(cache=True, inline="always")
def _radius(n: int, m: int, band: float) -> int:
    """The kernels' band radius: ``band`` < 0 means none (see ``band_radius``)."""
    longest = max(n, m)
    return longest if band < 0 else max(1, math.ceil(band * longest))


@njit(cache=True, inline="always")
def _column_range(i: int, n: int, m: int, radius: int) -> tuple[int, int]:
    """Columns of row ``i`` inside the band |i (m-1) - j (n-1)| <= radius * max(n-1, m-1),
    which is symmetric in the two series (DTW_2(a, b) = DTW_2(b, a))."""
    if n == 1 or m == 1:
        return 0, m - 1
    reach = radius * max(n - 1, m - 1)
    lo = -((reach - i * (m - 1)) // (n - 1))
    hi = (i * (m - 1) + reach) // (n - 1)
    return max(0, lo), min(m - 1, hi)


@njit(cache=True)
def _sqdist(a: np.ndarray, i: int, b: np.ndarray, j: int) -> float:
    total = 0.0
    for d in range(a.shape[1]):
        diff = a[i, d] - b[j, d]
        total += diff * diff
    return total


@njit(cache=True)
def dtw2(a: np.ndarray, b: np.ndarray, radius: int, cutoff: float = INF) -> float:
    """DTW_2 between ``a`` (n x d) and ``b`` (m x d) within a band of ``radius`` samples.

    Early abandoning: returns ``inf`` as soon as every cell of a row exceeds ``cutoff``.
    Only the band is touched: O(n * radius) time, O(m) memory. Row buffers are shifted by
    one (column j is at j + 1) so that the cell left of the band is always at hand.
    """
    n, m, dims = a.shape[0], b.shape[0], a.shape[1]
    prev = np.full(m + 1, INF)
    curr = np.full(m + 1, INF)
    for i in range(n):
        lo, hi = _column_range(i, n, m, radius)
        curr[lo] = INF  # left of the band
        row_min = INF
        for j in range(lo, hi + 1):
            if dims == 1:
                diff = a[i, 0] - b[j, 0]
                cost = diff * diff
            else:
                cost = _sqdist(a, i, b, j)
            if i == 0 and j == 0:
                best = 0.0
            else:
                best = curr[j]
                if prev[j + 1] < best:
                    best = prev[j + 1]
                if prev[j] < best:
                    best = prev[j]
            value = cost + best
            curr[j + 1] = value
            if value < row_min:
                row_min = value
        if hi + 2 <= m:
            curr[hi + 2] = INF  # right of the band, read by the next row
        if row_min > cutoff:
            return INF
        prev, curr = curr, prev
    return prev[m]


@njit(cache=True, parallel=True)
def dtw2_pairs(X: np.ndarray, lengths: np.ndarray, left: np.ndarray, right: np.ndarray,
               band: float) -> np.ndarray:
    """DTW_2 for each pair ``(X[left[p]], X[right[p]])``; ``band < 0`` means unconstrained."""
    out = np.empty(left.shape[0])
    for p in prange(left.shape[0]):
        i, j = left[p], right[p]
        n, m = lengths[i], lengths[j]
        out[p] = dtw2(X[i, :n], X[j, :m], _radius(n, m, band), INF)
    return out


def dtw2_matrix(X: np.ndarray, lengths: np.ndarray, band: float | None) -> np.ndarray:
    """Symmetric matrix of DTW_2 between all padded series (zero diagonal)."""
    n = X.shape[0]
    left, right = np.triu_indices(n, k=1)
    values = dtw2_pairs(X, lengths.astype(np.int64), left.astype(np.int64),
                        right.astype(np.int64), -1.0 if band is None else float(band))
    matrix = np.zeros((n, n))
    matrix[left, right] = values
    matrix[right, left] = values
    return matrix


@njit(cache=True)
def dtw2_path_accumulate(avg: np.ndarray, series: np.ndarray, radius: int,
                         sums: np.ndarray, counts: np.ndarray) -> float:
    """DTW_2 of ``avg`` to ``series``; adds every point of ``series`` aligned with ``avg[i]``
    to ``sums[i]`` and counts it in ``counts[i]`` (the accumulation step of DBA).

    The cumulative costs are kept for the band only: row ``i`` holds columns
    ``first[i] .. first[i] + width[i] - 1``.
    """
    n, m = avg.shape[0], series.shape[0]
    first = np.empty(n, np.int64)
    width = np.empty(n, np.int64)
    widest = 0
    for i in range(n):
        lo, hi = _column_range(i, n, m, radius)
        first[i] = lo
        width[i] = hi - lo + 1
        widest = max(widest, hi - lo + 1)
    cost = np.full((n, widest), INF)
    for i in range(n):
        lo = first[i]
        for c in range(width[i]):
            j = lo + c
            local = _sqdist(avg, i, series, j)
            if i == 0 and j == 0:
                cost[i, c] = local
                continue
            best = cost[i, c - 1] if c > 0 else INF
            if i > 0:
                up = j - first[i - 1]
                if 0 <= up < width[i - 1] and cost[i - 1, up] < best:
                    best = cost[i - 1, up]
                if 0 <= up - 1 < width[i - 1] and cost[i - 1, up - 1] < best:
                    best = cost[i - 1, up - 1]
            cost[i, c] = local + best
    i, j = n - 1, m - 1
    while True:
        for d in range(series.shape[1]):
            sums[i, d] += series[j, d]
        counts[i] += 1
        if i == 0 and j == 0:
            break
        here = cost[i, j - first[i] - 1] if j - first[i] - 1 >= 0 else INF  # (i, j - 1)
        up_index = j - first[i - 1] if i > 0 else -1
        up = cost[i - 1, up_index] if 0 <= up_index < width[max(i - 1, 0)] and i > 0 else INF
        diag = (cost[i - 1, up_index - 1]
                if i > 0 and 0 <= up_index - 1 < width[i - 1] else INF)
        if diag <= up and diag <= here:
            i -= 1
            j -= 1
        elif up <= here:
            i -= 1
        else:
            j -= 1
    return cost[n - 1, m - 1 - first[n - 1]]


@njit(cache=True, parallel=True)
def dba_update(avg: np.ndarray, X: np.ndarray, lengths: np.ndarray,
               band: float) -> tuple[np.ndarray, float]:
    """One DBA refinement step (Petitjean et al. 2011, seed 000 section III-C).

    Aligns every series with ``avg`` by DTW_2 and moves each point of ``avg`` to the
    barycenter of the points aligned with it. Returns the refined average and the WGSS of
    the *input* average (sum of its DTW_2 to every series).
    """
    n_series = X.shape[0]
    length, dims = avg.shape
    sums = np.zeros((n_series, length, dims))
    counts = np.zeros((n_series, length))
    dists = np.empty(n_series)
    for s in prange(n_series):
        m = lengths[s]
        dists[s] = dtw2_path_accumulate(avg, X[s, :m], _radius(length, m, band), sums[s], counts[s])
    total = sums.sum(axis=0)
    count = counts.sum(axis=0)
    refined = np.empty_like(avg)
    for i in range(length):
        for d in range(dims):
            refined[i, d] = total[i, d] / count[i] if count[i] > 0 else avg[i, d]
    return refined, dists.sum()


@njit(cache=True, parallel=True)
def dtw2_to_all(query: np.ndarray, X: np.ndarray, lengths: np.ndarray, band: float) -> np.ndarray:
    """DTW_2 from one series to every padded series of ``X``."""
    out = np.empty(X.shape[0])
    n = query.shape[0]
    for s in prange(X.shape[0]):
        m = lengths[s]
        out[s] = dtw2(query, X[s, :m], _radius(n, m, band), INF)
    return out


def as_band(band: float | None) -> float:
    """The kernels' encoding of a band: a share of the longer length, or -1 for none."""
    if band is None:
        return -1.0
    if not 0 < band <= 1:
        raise ValueError(f"band must be in (0, 1] or None, got {band}")
    return float(band)
