"""The ``ev-literal`` phase detector: Algorithm 1 of Tsafack Chetsa et al. (section III-A) exactly,
with the published sensors and identification.

Detection: d_t is the Manhattan distance between EV_t and EV_{t-1}; the running maximum is
raised to d_t when d_t exceeds it; while no change is under way, d_t > threshold x max starts
one (phase_start) and resets the maximum to 0; while a change is under way, d_t <= threshold
x max starts a new phase at t. threshold = 0.15 (Tsafack Chetsa et al., III-B). The first
distance of a run always starts a change (max is 0): that is the algorithm as published.
Written once, as a compiled step function: the streaming detector (:class:`LiteralDetector`)
and the offline loop call the same step, so they give identical phases; NaN vectors (gaps)
are skipped by both.

Sensors: the published ones (III-A) that the profile has
(:func:`phasekit.phases.vectors.default_sensors`), without the ev method's load sensor.
Identification as published (IV-B, :func:`phasekit.phases.identify.ids_by_distance`): no merge,
and consecutive phases may share an id (the algorithm's false changes inside a workload would
otherwise alternate ids and hide the workload's recurrence).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from phasekit.phases.identify import (
    ID_SKIP,
    PhaseSummary,
    ids_by_distance,
    reference_matrix,
    summarize,
)
from phasekit.phases.registry import (
    Detection,
    PhaseChange,
    PhaseDetector,
    SensorChoice,
    positive_threshold,
    register_detector,
)
from phasekit.phases.vectors import default_sensors
from phasekit.profile import Profile

__all__ = ["LITERAL_THRESHOLD", "EvLiteralDetector", "LiteralDetector"]

LITERAL_THRESHOLD = 0.15

# event codes of the step function
_NONE, _CHANGE_STARTS, _NEW_PHASE = 0, 1, 2


# state: [max_distance, phase_start (0/1), has_previous (0/1)], previous vector
@njit(cache=True)
def _literal_step(state: np.ndarray, previous: np.ndarray, x: np.ndarray, threshold: float
                  ) -> tuple[int, float, float]:
    if state[2] == 0.0:
        previous[:] = x
        state[2] = 1.0
        return _NONE, math.nan, math.nan
    dist = 0.0
    for j in range(x.shape[0]):
        dist += abs(x[j] - previous[j])
    previous[:] = x
    if state[0] <= dist:
        state[0] = dist
    limit = state[0] * threshold
    if dist <= limit and state[1] == 1.0:
        state[1] = 0.0
        return _NEW_PHASE, dist, limit
    if dist > limit and state[1] == 0.0:
        state[1] = 1.0
        state[0] = 0.0
        return _CHANGE_STARTS, dist, limit
    return _NONE, dist, limit



@njit(cache=True)
def _literal_all(X: np.ndarray, threshold: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n, d = X.shape
    state = np.zeros(3)
    previous = np.empty(d)
    score = np.full(n, np.nan)
    limit = np.full(n, np.nan)
    starts = np.zeros(n + 1, np.int64)
    n_starts = 1
    for t in range(n):
        if not np.isfinite(X[t]).all():
            continue
        event, dist, lim = _literal_step(state, previous, X[t], threshold)
        score[t] = dist
        limit[t] = lim
        if event == _NEW_PHASE:
            starts[n_starts] = t
            n_starts += 1
    out = starts[:n_starts].copy()
    return out, out.copy(), score, limit



class LiteralDetector:
    """Algorithm 1 online: ``update(vector)`` returns a PhaseChange when a new phase starts."""

    method = "ev-literal"

    def __init__(self, n_sensors: int, *, threshold: float | None = None) -> None:
        self.threshold = positive_threshold(threshold, LITERAL_THRESHOLD)
        self._state = np.zeros(3)
        self._previous = np.empty(n_sensors)
        self.t = -1
        self.last_score = math.nan

    def update(self, vector: Sequence[float] | np.ndarray) -> PhaseChange | None:
        x = np.asarray(vector, dtype=np.float64)
        self.t += 1
        if not np.isfinite(x).all():
            return None
        event, dist, _ = _literal_step(self._state, self._previous, x, self.threshold)
        self.last_score = dist
        if event == _NEW_PHASE:
            return PhaseChange(self.t, self.t, float(dist))
        return None



@register_detector
class EvLiteralDetector(PhaseDetector):
    """Algorithm 1 of Tsafack Chetsa et al., its sensors and its identification (module
    docstring)."""

    name = "ev-literal"
    threshold = LITERAL_THRESHOLD
    online = True
    merges = False

    def detect(self, X: np.ndarray, *, threshold: float, period: float = 1.0,
               sensors: Sequence[str] | None = None, **options: Any) -> Detection:
        """Phase starts of ``X`` (``options``, the ev method's, are not used)."""
        starts, detected, score, limit = _literal_all(X, threshold)
        return Detection(starts=starts, detected_at=detected, score=score, limit=limit,
                         method=self.name, threshold=threshold)

    def stream(self, n_sensors: int, *, threshold: float, sensors: Sequence[str] | None = None,
               period: float = 1.0) -> LiteralDetector:
        return LiteralDetector(n_sensors, threshold=threshold)

    def choose_sensors(self, profile: Profile) -> SensorChoice:
        """The published sensors (III-A) that the profile has."""
        names = default_sensors(profile.metrics)
        return SensorChoice(tuple(names), {m: "not one of the paper's sensors (ev-literal)"
                                           for m in profile.metrics if m not in names},
                            "the paper's sensors (III-A) that the profile has")

    def streaming_sensors(self, metrics: Sequence[str]) -> list[str]:
        return default_sensors(metrics)

    def identify(self, references: np.ndarray, *, threshold: float,
                 max_consecutive: float = math.nan, id_threshold: float | None = None,
                 vectors: np.ndarray | None = None, starts: np.ndarray | None = None,
                 min_length: int = ID_SKIP, apart: bool = False) -> np.ndarray:
        """The same id when the Manhattan distance between reference vectors is at most
        ``threshold`` x ``max_consecutive``, the largest consecutive-EV distance of the run."""
        limit = threshold * max_consecutive if np.isfinite(max_consecutive) else 0.0
        return ids_by_distance(references, limit, apart=apart)

    def identify_phases(self, X: np.ndarray, found: Detection, starts: np.ndarray,
                        id_threshold: float | None, min_length: int
                        ) -> tuple[np.ndarray, list[PhaseSummary], np.ndarray]:
        """As published (IV): reference vectors closest to the mean in the vectors' units,
        no merge, and the detection threshold against the run's largest distance."""
        summaries = summarize(X, starts)
        largest = float(np.nanmax(found.score)) if np.isfinite(found.score).any() else math.nan
        ids = self.identify(reference_matrix(summaries, X.shape[1]), threshold=found.threshold,
                            max_consecutive=largest)
        return starts, summaries, ids
