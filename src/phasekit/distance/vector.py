"""Vector distances (C kernels in ``_dtw.c``).

Each distance sums the squared differences in column order, four distances at a time (four
independent sums), so a result does not depend on the number of threads or on a BLAS
library. (BLAS worker threads also keep spinning after a call, which slows the parallel
kernels that follow on a small machine.) The kernels run on
:func:`phasekit.parallel.worker_threads` threads.
"""

from __future__ import annotations

import numpy as np

from phasekit.distance import _dtw


def _threads() -> int:
    from phasekit.parallel import worker_threads

    return worker_threads()


def squared_euclidean(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared Euclidean distance between every row of ``A`` and every row of ``B``."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    B = np.ascontiguousarray(B, dtype=np.float64)
    out = np.empty((A.shape[0], B.shape[0]))
    _dtw.squared_euclidean(A, B, _threads(), out)
    return out


def pairwise_squared_euclidean(Y: np.ndarray) -> np.ndarray:
    """``squared_euclidean(Y, Y)``, from one triangle mirrored ((a - b)^2 == (b - a)^2 exactly)."""
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    out = np.zeros((Y.shape[0], Y.shape[0]))
    _dtw.pairwise_squared_euclidean(Y, _threads(), out)
    return out
