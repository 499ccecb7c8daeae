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


@njit(cache=True, inline="always")
def _band_row(a: np.ndarray, i: int, b: np.ndarray, lo: int, hi: int, prev: np.ndarray,
              curr: np.ndarray) -> float:
    """Row ``i`` of the DTW_2 recursion over columns ``lo..hi``; returns the row's minimum.

    Buffers are shifted by one (column j at j + 1): ``prev`` holds row i - 1 with INF outside
    its band, ``curr[lo]`` must be INF. The cell to the left stays in a register, and the
    minimum of the two cells above is taken before it, so that the serial chain from cell to
    cell is one minimum and one addition.
    """
    width = hi - lo + 1
    above = prev[lo:lo + width + 1]  # above[t], above[t + 1]: columns lo + t - 1, lo + t
    out = curr[lo + 1:lo + 1 + width]
    left = INF
    row_min = INF
    if a.shape[1] == 1:
        ai = a[i, 0]
        row = b[lo:lo + width, 0]
        for t in range(width):
            diff = ai - row[t]
            up, diag = above[t + 1], above[t]
            near = up if up < diag else diag
            left = diff * diff + (left if left < near else near)
            out[t] = left
            row_min = left if left < row_min else row_min
    else:
        for t in range(width):
            up, diag = above[t + 1], above[t]
            near = up if up < diag else diag
            left = _sqdist(a, i, b, lo + t) + (left if left < near else near)
            out[t] = left
            row_min = left if left < row_min else row_min
    return row_min


@njit(cache=True, inline="always")
def _band_rows2(a0: float, a1: float, b: np.ndarray, lo0: int, hi0: int, lo1: int, hi1: int,
                prev: np.ndarray, curr: np.ndarray, keep: bool, row0: np.ndarray) -> None:
    """Rows i and i + 1 of a one-dimensional DTW_2 in one sweep over the columns.

    ``a0``, ``a1`` are the points of rows i and i + 1, ``b`` the other series (1-D). ``prev``
    holds row i - 1 as in ``_band_row``; row i + 1 goes to ``curr`` (``curr[lo1]`` must be
    INF), row i stays in registers, and in ``row0`` (from its first column) when ``keep``.
    The two rows are two serial chains that the processor runs side by side; every cell is
    the same sum of the same minimum as in ``_band_row``.
    """
    left0 = INF
    left1 = INF
    for j in range(lo0, min(hi0, lo1 - 1) + 1):  # row i alone, left of row i + 1's band
        up, diag = prev[j + 1], prev[j]
        near = up if up < diag else diag
        diff = a0 - b[j]
        left0 = diff * diff + (left0 if left0 < near else near)
        if keep:
            row0[j - lo0] = left0
    for j in range(lo1, hi0 + 1):  # both rows: (i + 1, j) takes (i, j) and (i, j - 1) at hand
        up, diag = prev[j + 1], prev[j]
        near = up if up < diag else diag
        bj = b[j]
        diff0 = a0 - bj
        cell0 = diff0 * diff0 + (left0 if left0 < near else near)
        near1 = cell0 if cell0 < left0 else left0
        diff1 = a1 - bj
        left1 = diff1 * diff1 + (left1 if left1 < near1 else near1)
        left0 = cell0
        curr[j + 1] = left1
        if keep:
            row0[j - lo0] = cell0
    for j in range(max(lo1, hi0 + 1), hi1 + 1):  # row i + 1 alone: only (i, hi0) is in the band
        near1 = left0 if j - 1 == hi0 else INF
        diff1 = a1 - b[j]
        left1 = diff1 * diff1 + (left1 if left1 < near1 else near1)
        curr[j + 1] = left1


@njit(cache=True, inline="always")
def _cell(a: float, bj: float, left: float, near: float) -> float:
    """One cell: its squared distance plus the least of the cell to the left and ``near``."""
    diff = a - bj
    return diff * diff + (left if left < near else near)


@njit(cache=True, inline="always")
def _band_rows4(a: np.ndarray, i: int, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                prev: np.ndarray, curr: np.ndarray, keep: bool, c0: np.ndarray, c1: np.ndarray,
                c2: np.ndarray) -> None:
    """Rows i .. i + 3 of a one-dimensional DTW_2 in one sweep over the columns, as
    ``_band_rows2`` does with two: four serial chains side by side. Rows i .. i + 2 stay in
    registers (and go to ``c0``, ``c1``, ``c2`` from their first column when ``keep``), row
    i + 3 goes to ``curr``; ``lo``/``hi`` hold the four rows' bands. Columns where only some
    rows are in their band (a few at each end) give INF to the others."""
    a0, a1, a2, a3 = a[i], a[i + 1], a[i + 2], a[i + 3]
    lo0, lo1, lo2, lo3 = lo[0], lo[1], lo[2], lo[3]
    hi0, hi1, hi2, hi3 = hi[0], hi[1], hi[2], hi[3]
    l0 = l1 = l2 = l3 = INF
    start = min(lo3, hi0 + 1)  # columns start .. hi0 are inside all four bands
    for j in range(lo0, start):  # left end: rows i + 1 .. i + 3 enter their bands
        up, diag = prev[j + 1], prev[j]
        near = up if up < diag else diag
        bj = b[j]
        n0 = _cell(a0, bj, l0, near)
        n1 = _cell(a1, bj, l1, n0 if n0 < l0 else l0) if lo1 <= j else INF
        n2 = _cell(a2, bj, l2, n1 if n1 < l1 else l1) if lo2 <= j else INF
        n3 = INF
        if keep:
            c0[j - lo0] = n0
            if lo1 <= j:
                c1[j - lo1] = n1
            if lo2 <= j:
                c2[j - lo2] = n2
        l0, l1, l2, l3 = n0, n1, n2, n3
        curr[j + 1] = n3
    # all four rows, on views that start at column ``start`` (indices from 0: no wraparound)
    width = hi0 + 1 - start
    above, row, out = prev[start:start + width + 1], b[start:start + width], curr[start + 1:]
    o0, o1, o2 = c0[start - lo0:], c1[start - lo1:], c2[start - lo2:]
    for t in range(width):
        up, diag = above[t + 1], above[t]
        near = up if up < diag else diag
        bj = row[t]
        n0 = _cell(a0, bj, l0, near)
        n1 = _cell(a1, bj, l1, n0 if n0 < l0 else l0)
        n2 = _cell(a2, bj, l2, n1 if n1 < l1 else l1)
        n3 = _cell(a3, bj, l3, n2 if n2 < l2 else l2)
        if keep:
            o0[t] = n0
            o1[t] = n1
            o2[t] = n2
        l0, l1, l2, l3 = n0, n1, n2, n3
        out[t] = n3
    for j in range(max(hi0 + 1, lo0), hi3 + 1):  # right end: rows i .. i + 2 leave their bands
        bj = b[j]
        n1 = _cell(a1, bj, l1, l0) if lo1 <= j <= hi1 else INF
        n2 = _cell(a2, bj, l2, n1 if n1 < l1 else l1) if lo2 <= j <= hi2 else INF
        n3 = _cell(a3, bj, l3, n2 if n2 < l2 else l2) if lo3 <= j else INF
        if keep:
            if lo1 <= j <= hi1:
                c1[j - lo1] = n1
            if lo2 <= j <= hi2:
                c2[j - lo2] = n2
        l0, l1, l2, l3 = INF, n1, n2, n3
        curr[j + 1] = n3


@njit(cache=True, inline="always")
def _band_rows(a: np.ndarray, b: np.ndarray, radius: int, cutoff: float, keep: bool,
               cost: np.ndarray) -> float:
    """The DTW_2 recursion over the band: four rows at a time (then two, then one) for one
    dimension, one at a time otherwise. With ``keep``, row i's cells go to ``cost[i, :]``
    (from the row's first column in the band). Returns DTW_2, or INF when every cell of a row
    exceeds ``cutoff``.

    A row's minimum never decreases from one row to the next (each cell adds a nonnegative
    cost to a neighbour of the row above or of its own row), so checking the last row of each
    sweep abandons the same computations, at most three rows later.
    """
    n, m = a.shape[0], b.shape[0]
    prev = np.full(m + 1, INF)
    curr = np.full(m + 1, INF)
    prev[0] = 0.0
    start = 0
    if a.shape[1] == 1:
        av, bv = a[:, 0], b[:, 0]
        lo = np.empty(4, np.int64)
        hi = np.empty(4, np.int64)
        while start + 3 < n:
            i = start
            for r in range(4):
                lo[r], hi[r] = _column_range(i + r, n, m, radius)
            curr[lo[3]] = INF
            _band_rows4(av, i, bv, lo, hi, prev, curr, keep, cost[i] if keep else curr,
                        cost[i + 1] if keep else curr, cost[i + 2] if keep else curr)
            if hi[3] + 2 <= m:
                curr[hi[3] + 2] = INF
            if keep:
                cost[i + 3, :hi[3] - lo[3] + 1] = curr[lo[3] + 1:hi[3] + 2]
            if cutoff < INF and curr[lo[3] + 1:hi[3] + 2].min() > cutoff:
                return INF
            prev, curr = curr, prev
            start += 4
        while start + 1 < n:
            i = start
            lo0, hi0 = _column_range(i, n, m, radius)
            lo1, hi1 = _column_range(i + 1, n, m, radius)
            curr[lo1] = INF
            _band_rows2(av[i], av[i + 1], bv, lo0, hi0, lo1, hi1, prev, curr, keep,
                        cost[i] if keep else curr)
            if hi1 + 2 <= m:
                curr[hi1 + 2] = INF
            if keep:
                cost[i + 1, :hi1 - lo1 + 1] = curr[lo1 + 1:hi1 + 2]
            if cutoff < INF and curr[lo1 + 1:hi1 + 2].min() > cutoff:
                return INF
            prev, curr = curr, prev
            start += 2
    for i in range(start, n):
        lo, hi = _column_range(i, n, m, radius)
        curr[lo] = INF  # left of the band
        row_min = _band_row(a, i, b, lo, hi, prev, curr)
        if hi + 2 <= m:
            curr[hi + 2] = INF  # right of the band, read by the next row
        if keep:
            cost[i, :hi - lo + 1] = curr[lo + 1:hi + 2]
        if row_min > cutoff:
            return INF
        prev, curr = curr, prev
    return prev[m]


@njit(cache=True)
def dtw2(a: np.ndarray, b: np.ndarray, radius: int, cutoff: float = INF) -> float:
    """DTW_2 between ``a`` (n x d) and ``b`` (m x d) within a band of ``radius`` samples.

    Early abandoning: returns ``inf`` once every cell of a row exceeds ``cutoff`` (checked
    after each sweep of up to four rows). Only the band is touched: O(n * radius) time, O(m)
    memory. Row buffers are shifted by one (column j is at j + 1) so that the cell left of
    the band is always at hand; the buffer's first entry starts at 0, the cost before cell
    (0, 0).
    """
    return _band_rows(a, b, radius, cutoff, False, np.empty((0, 0)))


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

    The rows are computed as in ``dtw2`` and kept for the band only (row ``i`` holds columns
    ``first[i] .. last[i]``) for the walk back along the optimal path, which prefers the
    diagonal, then (i - 1, j), on ties.
    """
    n, m = avg.shape[0], series.shape[0]
    first = np.empty(n, np.int64)
    last = np.empty(n, np.int64)
    widest = 0
    for i in range(n):
        lo, hi = _column_range(i, n, m, radius)
        first[i] = lo
        last[i] = hi
        widest = max(widest, hi - lo + 1)
    cost = np.empty((n, widest))
    total = _band_rows(avg, series, radius, INF, True, cost)
    i, j = n - 1, m - 1
    while True:
        for d in range(series.shape[1]):
            sums[i, d] += series[j, d]
        counts[i] += 1
        if i == 0 and j == 0:
            break
        here = cost[i, j - 1 - first[i]] if j - 1 >= first[i] else INF  # (i, j - 1)
        up = INF  # (i - 1, j)
        diag = INF  # (i - 1, j - 1)
        if i > 0:
            if first[i - 1] <= j <= last[i - 1]:
                up = cost[i - 1, j - first[i - 1]]
            if first[i - 1] <= j - 1 <= last[i - 1]:
                diag = cost[i - 1, j - 1 - first[i - 1]]
        if diag <= up and diag <= here:
            i -= 1
            j -= 1
        elif up <= here:
            i -= 1
        else:
            j -= 1
    return total


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
