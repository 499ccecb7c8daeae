"""DTW_2: dynamic time warping with squared pointwise distances (Phase-TA, section II-A).

DTW_2 sums the *squared* Euclidean distances of the aligned points; it is not the square of
DTW. Series are 2-D arrays (length x dimensions): with several dimensions this is the
"dependent" DTW, the pointwise distance being the squared Euclidean distance over all
dimensions.

The band is a Sakoe-Chiba band that follows the diagonal of the (n, m) cost matrix, so
series of different lengths are aligned end to end: cell (i, j) is inside when
|i (m - 1) - j (n - 1)| <= radius * max(n - 1, m - 1), that is within ``radius`` samples of the
diagonal measured along the longer series (symmetric in the two series). ``band_radius``
turns a relative band (a share of the longer length) into that radius; ``band=None`` is
unconstrained DTW.

Batched kernels take instances padded into one array ``X[n_series, max_len, dims]`` with
their true ``lengths``; they run in parallel over pairs or series, on
:func:`phasekit.parallel.worker_threads` threads. The kernels are C (``_dtw.c``: a
command loads no numba); the functions here check and convert their arguments.
"""

from __future__ import annotations

import math

import numpy as np

from phasekit.distance import _dtw

INF = np.inf


def band_radius(n: int, m: int, band: float | None) -> int:
    """Radius in samples of a relative Sakoe-Chiba band (our default band is 10 %)."""
    longest = max(n, m)
    if band is None:
        return longest
    return max(1, math.ceil(band * longest))


def as_band(band: float | None) -> float:
    """The kernels' encoding of a band: a share of the longer length, or -1 for none."""
    if band is None:
        return -1.0
    if not 0 < band <= 1:
        raise ValueError(f"band must be in (0, 1] or None, got {band}")
    return float(band)


def _floats(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64)


def _ints(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.int64)


def _threads() -> int:
    from phasekit.parallel import worker_threads

    return worker_threads()


def dtw2(a: np.ndarray, b: np.ndarray, radius: int, cutoff: float = INF) -> float:
    """DTW_2 between ``a`` (n x d) and ``b`` (m x d) within a band of ``radius`` samples.

    Early abandoning: returns ``inf`` once every cell of a row exceeds ``cutoff`` (checked
    after each sweep of up to four rows; a row's minimum never decreases). Only the band is
    touched: O(n * radius) time, O(m) memory. ``inf`` too when a row has no cell in the band
    (``radius`` < 1 only).
    """
    return _dtw.dtw2(_floats(a), _floats(b), int(radius), float(cutoff))


def dtw2_pairs(X: np.ndarray, lengths: np.ndarray, left: np.ndarray, right: np.ndarray,
               band: float) -> np.ndarray:
    """DTW_2 for each pair ``(X[left[p]], X[right[p]])``; ``band < 0`` means unconstrained."""
    left = _ints(left)
    out = np.empty(left.shape[0])
    _dtw.dtw2_pairs(_floats(X), _ints(lengths), left, _ints(right), float(band), _threads(),
                    out)
    return out


def dtw2_matrix(X: np.ndarray, lengths: np.ndarray, band: float | None) -> np.ndarray:
    """Symmetric matrix of DTW_2 between all padded series (zero diagonal)."""
    n = X.shape[0]
    left, right = np.triu_indices(n, k=1)
    values = dtw2_pairs(X, lengths, left, right, -1.0 if band is None else float(band))
    matrix = np.zeros((n, n))
    matrix[left, right] = values
    matrix[right, left] = values
    return matrix


def dtw2_to_all(query: np.ndarray, X: np.ndarray, lengths: np.ndarray, band: float) -> np.ndarray:
    """DTW_2 from one series (n x d) to every padded series of ``X``."""
    out = np.empty(X.shape[0])
    _dtw.dtw2_to_all(_floats(query), _floats(X), _ints(lengths), float(band), _threads(), out)
    return out


def dtw2_path_accumulate(avg: np.ndarray, series: np.ndarray, radius: int,
                         sums: np.ndarray, counts: np.ndarray) -> float:
    """DTW_2 of ``avg`` to ``series``; adds every point of ``series`` aligned with ``avg[i]``
    to ``sums[i]`` and counts it in ``counts[i]`` (the accumulation step of DBA). ``sums``
    (n x d) and ``counts`` (n) are C-contiguous float64 arrays, updated in place.

    The rows are computed as in ``dtw2`` and kept for the band only, for the walk back along
    the optimal path, which prefers the diagonal, then (i - 1, j), on ties. The points are
    added in path order, so sums of exact values are exact. When no path stays in the band
    (``radius`` < 1 only) returns ``inf`` and adds nothing.
    """
    return _dtw.path_accumulate(_floats(avg), _floats(series), int(radius), sums, counts)


def dba_update(avg: np.ndarray, X: np.ndarray, lengths: np.ndarray,
               band: float) -> tuple[np.ndarray, float]:
    """One DBA refinement step (Petitjean et al. 2011, Phase-TA section III-C).

    Aligns every series with ``avg`` by DTW_2 and moves each point of ``avg`` to the
    barycenter of the points aligned with it (a point aligned with none stays). Returns the
    refined average and the WGSS of the *input* average (sum of its DTW_2 to every series).
    The sums run in the order of the series whatever the number of threads.
    """
    avg = _floats(avg)
    refined = np.empty_like(avg)
    wgss = _dtw.dba_update(avg, _floats(X), _ints(lengths), float(band), _threads(), refined)
    return refined, wgss
