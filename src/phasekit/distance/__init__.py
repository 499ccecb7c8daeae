"""Distances between series: DTW_2 with bands and early abandoning (numba kernels)."""

from phasekit.distance.dtw import (
    as_band,
    band_radius,
    dba_update,
    dtw2,
    dtw2_matrix,
    dtw2_pairs,
    dtw2_to_all,
)

__all__ = ["as_band", "band_radius", "dba_update", "dtw2", "dtw2_matrix", "dtw2_pairs", "dtw2_to_all"]
