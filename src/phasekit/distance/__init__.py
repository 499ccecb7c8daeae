"""Distances between series: DTW_2 with bands and early abandoning, squared Euclidean
(C kernels, ``_dtw.c``)."""

from phasekit.distance.dtw import (
    as_band,
    band_radius,
    dba_update,
    dtw2,
    dtw2_matrix,
    dtw2_pairs,
    dtw2_to_all,
)
from phasekit.distance.vector import pairwise_squared_euclidean, squared_euclidean

__all__ = ["as_band", "band_radius", "dba_update", "dtw2", "dtw2_matrix", "dtw2_pairs", "dtw2_to_all",
           "pairwise_squared_euclidean", "squared_euclidean"]
