"""Distances between series: DTW_2 with bands and early abandoning, squared Euclidean
(C kernels, ``_dtw.c``, parallel with OpenMP).

The kernels' OpenMP threads wait passively (``OMP_WAIT_POLICY=PASSIVE``, set only while the
extension and its OpenMP runtime load, unless the environment sets it): a node being
profiled has busy cores, and the many short parallel regions of DBA suffer from spinning
threads there. ``analyze`` of a 3-minute hpcg profile beside two busy loops on this 2-core
VM took 0.06-0.10 s waiting passively, 0.09-0.22 s with GNU OpenMP's default (spin, then
sleep) and 0.10-0.43 s spinning; on idle cores 47 ms against 43 ms.
"""

import os

_set_here = "OMP_WAIT_POLICY" not in os.environ
if _set_here:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
try:
    from phasekit.distance import _dtw  # noqa: F401 (loads libgomp with the policy above)
finally:
    if _set_here:  # not inherited by the programs phasekit starts
        del os.environ["OMP_WAIT_POLICY"]

from phasekit.distance.dtw import (  # noqa: E402
    as_band,
    band_radius,
    dba_update,
    dtw2,
    dtw2_matrix,
    dtw2_pairs,
    dtw2_to_all,
)
from phasekit.distance.vector import (  # noqa: E402
    pairwise_squared_euclidean,
    squared_euclidean,
)

__all__ = ["as_band", "band_radius", "dba_update", "dtw2", "dtw2_matrix", "dtw2_pairs", "dtw2_to_all",
           "pairwise_squared_euclidean", "squared_euclidean"]
