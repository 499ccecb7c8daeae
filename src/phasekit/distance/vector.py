"""Vector distances (numba kernels).

Each distance sums the squared differences in column order, four distances at a time (four
independent sums), so a result does not depend on the number of threads or on a BLAS
library. (BLAS worker threads also keep spinning after a call, which slows the parallel
kernels that follow on a small machine.)
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
def _distances_from(a: np.ndarray, B: np.ndarray, start: int, out: np.ndarray) -> None:
    """``out[j]`` = squared Euclidean distance from ``a`` to ``B[j]`` for j >= ``start``."""
    m, width = B.shape
    j = start
    while j + 3 < m:
        b0, b1, b2, b3 = B[j], B[j + 1], B[j + 2], B[j + 3]
        s0 = s1 = s2 = s3 = 0.0
        for t in range(width):
            v = a[t]
            d0 = v - b0[t]
            d1 = v - b1[t]
            d2 = v - b2[t]
            d3 = v - b3[t]
            s0 += d0 * d0
            s1 += d1 * d1
            s2 += d2 * d2
            s3 += d3 * d3
        out[j], out[j + 1], out[j + 2], out[j + 3] = s0, s1, s2, s3
        j += 4
    for jj in range(j, m):
        b = B[jj]
        total = 0.0
        for t in range(width):
            d = a[t] - b[t]
            total += d * d
        out[jj] = total


@njit(cache=True, parallel=True)
def squared_euclidean(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared Euclidean distance between every row of ``A`` and every row of ``B``."""
    out = np.empty((A.shape[0], B.shape[0]))
    for i in prange(A.shape[0]):
        _distances_from(A[i], B, 0, out[i])
    return out


@njit(cache=True, parallel=True)
def pairwise_squared_euclidean(Y: np.ndarray) -> np.ndarray:
    """``squared_euclidean(Y, Y)``, from one triangle mirrored ((a - b)^2 == (b - a)^2 exactly):
    rows ``r`` and ``n - 1 - r`` go to one thread, for balance."""
    n = Y.shape[0]
    out = np.zeros((n, n))
    for r in prange((n + 1) // 2):
        _distances_from(Y[r], Y, r + 1, out[r])
        if n - 1 - r != r:
            _distances_from(Y[n - 1 - r], Y, n - r, out[n - 1 - r])
    for i in range(n):
        for j in range(i + 1, n):
            out[j, i] = out[i, j]
    return out
