"""Phase-change detectors over execution vectors: the seed's Algorithm 1 and a robust default.

Both are written once, as a compiled step function over a small state array; the streaming
detectors (``update(vector) -> PhaseChange | None``, O(sensors) work per vector) and the
offline functions (a compiled loop over all vectors) call the same step, so they give
identical phases by construction. NaN vectors (gaps) are skipped by both.

``ev-literal`` — Algorithm 1 of seed 001 (section III-A), exactly: d_t is the Manhattan
distance between EV_t and EV_{t-1}; the running maximum is raised to d_t when d_t exceeds
it; while no change is under way, d_t > threshold x max starts one (phase_start) and resets
the maximum to 0; while a change is under way, d_t <= threshold x max starts a new phase at
t. threshold = 0.15 (seed III-B). The first distance of a run always starts a change (max is
0): that is the algorithm as published.

``ev`` (default, our method; the issue: the literal algorithm fires on every large
fluctuation inside a phase of real counters). Scale-free features z = log(v + eps), eps =
``eps_rel`` (1 %) of the sensor's running mean, so that every sensor counts by its relative
change whatever its unit, and a near-zero sensor does not dominate. Each phase keeps the
mean of its features and their mean absolute deviation (its within-phase spread), running
means over its first ``horizon`` (20) vectors and exponentially weighted over the last
``horizon`` after, so that a start-up ramp is forgotten and slow drift followed; the run keeps its noise level, the mean absolute difference between consecutive
features over about the last 100 vectors (each difference clipped at 3 times the level, so
that changes and spikes do not count as noise), which floors the spread of a young phase. A vector
is out of phase when the mean over sensors of |z - mean| / max(spread, noise, ``min_spread``)
exceeds ``threshold`` (4). A change is confirmed after ``confirm`` (3)
consecutive out-of-phase vectors, once the phase has lasted ``min_length`` (5) vectors; the
new phase starts at the first of them (the located change point) and its statistics start
from them. Out-of-phase vectors that are not confirmed (spikes) never enter the phase's
statistics. The detection latency is ``confirm - 1`` vectors after the located start.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from phasekit.errors import UsageError

__all__ = [
    "METHODS",
    "Detection",
    "LiteralDetector",
    "PhaseChange",
    "RobustDetector",
    "detect",
    "make_detector",
]

METHODS = ("ev", "ev-literal")
LITERAL_THRESHOLD = 0.15
ROBUST_THRESHOLD = 4.0
MIN_LENGTH = 5
CONFIRM = 3
MIN_SPREAD = 0.05
EPS_REL = 0.01
NOISE_HORIZON = 100.0
NOISE_CLIP = 3.0
HORIZON = 20

# event codes of the step functions
_NONE, _CHANGE_STARTS, _NEW_PHASE = 0, 1, 2


@dataclass(frozen=True)
class PhaseChange:
    """A new phase: it starts at vector ``start`` (the located change point) and was
    detected at vector ``detected_at`` (>= start)."""

    start: int
    detected_at: int
    score: float


@dataclass(frozen=True, eq=False)
class Detection:
    """The phases of a run of vectors: ``starts`` (vector indices, the first is 0), and per
    vector the detector's ``score`` and the ``limit`` it was compared with (the seed's Fig. 1
    (c): the distance and the threshold)."""

    starts: np.ndarray
    detected_at: np.ndarray
    score: np.ndarray
    limit: np.ndarray
    method: str
    threshold: float


# --- Algorithm 1 ---------------------------------------------------------------------------
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


# --- the robust method -------------------------------------------------------------------------
# state scalars: [n_seen, n_phase, n_candidates, next_candidate_slot]
# arrays: seen_sum (d), eps (d), mean (d), spread_sum (d), candidates (confirm x d)
@njit(cache=True)
def _robust_features(x: np.ndarray, seen_sum: np.ndarray, n_seen: float, eps_rel: float,
                     out: np.ndarray) -> None:
    for j in range(x.shape[0]):
        eps = eps_rel * seen_sum[j] / n_seen
        if eps <= 0.0:
            eps = 1e-300
        value = x[j] if x[j] > 0.0 else 0.0
        out[j] = math.log(value + eps)


@njit(cache=True)
def _phase_add(z: np.ndarray, counts: np.ndarray, mean: np.ndarray, spread: np.ndarray,
               horizon: float) -> None:
    """Add a vector to the phase's mean and spread: running means over the phase's first
    ``horizon`` vectors, exponentially weighted over the last ``horizon`` ones after."""
    counts[1] += 1.0
    n = counts[1]
    weight = 1.0 / min(n, horizon)
    for j in range(z.shape[0]):
        if n > 1.0:
            spread_weight = 1.0 / min(n - 1.0, horizon)
            spread[j] += spread_weight * (abs(z[j] - mean[j]) - spread[j])
        mean[j] += weight * (z[j] - mean[j])


@njit(cache=True)
def _robust_step(counts: np.ndarray, seen_sum: np.ndarray, mean: np.ndarray,
                 spread_sum: np.ndarray, noise: np.ndarray, last_z: np.ndarray,
                 candidates: np.ndarray, z: np.ndarray, x: np.ndarray, threshold: float,
                 min_length: int, confirm: int, min_spread: float, eps_rel: float,
                 horizon: float) -> tuple[int, float, float]:
    d = x.shape[0]
    counts[0] += 1.0
    for j in range(d):
        seen_sum[j] += x[j] if x[j] > 0.0 else 0.0
    _robust_features(x, seen_sum, counts[0], eps_rel, z)
    if counts[0] > 1.0:  # the run's noise level: mean |consecutive difference|, ~100 vectors
        weight = 1.0 / min(counts[0] - 1.0, NOISE_HORIZON)
        for j in range(d):
            step = abs(z[j] - last_z[j])
            if counts[0] > min_length and step > NOISE_CLIP * noise[j]:
                step = NOISE_CLIP * noise[j]  # a change or a spike is not noise
            noise[j] += weight * (step - noise[j])
    last_z[:] = z
    if counts[1] < min_length:
        _phase_add(z, counts, mean, spread_sum, horizon)
        return _NONE, math.nan, threshold
    score = 0.0
    for j in range(d):
        spread = spread_sum[j]
        if spread < noise[j]:
            spread = noise[j]
        if spread < min_spread:
            spread = min_spread
        score += abs(z[j] - mean[j]) / spread
    score /= d
    if score <= threshold:
        counts[2] = 0.0
        _phase_add(z, counts, mean, spread_sum, horizon)
        return _NONE, score, threshold
    slot = int(counts[2])
    candidates[slot, :] = z
    counts[2] += 1.0
    if counts[2] < confirm:
        return _NONE, score, threshold
    counts[1] = 0.0  # a new phase, from the confirmed candidates
    counts[2] = 0.0
    for j in range(d):
        mean[j] = 0.0
        spread_sum[j] = 0.0
    for k in range(confirm):
        _phase_add(candidates[k], counts, mean, spread_sum, horizon)
    return _NEW_PHASE, score, threshold


# --- offline loops -----------------------------------------------------------------------------
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


@njit(cache=True)
def _robust_all(X: np.ndarray, threshold: float, min_length: int, confirm: int,
                min_spread: float, eps_rel: float, horizon: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n, d = X.shape
    counts = np.zeros(3)
    seen_sum = np.zeros(d)
    mean = np.zeros(d)
    spread_sum = np.zeros(d)
    noise = np.zeros(d)
    last_z = np.zeros(d)
    candidates = np.zeros((confirm, d))
    z = np.empty(d)
    score = np.full(n, np.nan)
    limit = np.full(n, np.nan)
    starts = np.zeros(n + 1, np.int64)
    detected = np.zeros(n + 1, np.int64)
    valid_index = np.empty(n, np.int64)  # vector index of the k-th valid vector
    n_valid = 0
    n_starts = 1
    for t in range(n):
        if not np.isfinite(X[t]).all():
            continue
        valid_index[n_valid] = t
        n_valid += 1
        event, value, lim = _robust_step(counts, seen_sum, mean, spread_sum, noise, last_z,
                                         candidates, z, X[t], threshold, min_length, confirm,
                                         min_spread, eps_rel, horizon)
        score[t] = value
        limit[t] = lim
        if event == _NEW_PHASE:
            starts[n_starts] = valid_index[n_valid - confirm]
            detected[n_starts] = t
            n_starts += 1
    return (starts[:n_starts].copy(), detected[:n_starts].copy(), score, limit)


def detect(X: np.ndarray, *, method: str = "ev", threshold: float | None = None,
           min_length: int = MIN_LENGTH, confirm: int = CONFIRM,
           min_spread: float = MIN_SPREAD, eps_rel: float = EPS_REL,
           horizon: int = HORIZON) -> Detection:
    """Phase starts of the vectors ``X`` (n x sensors) by ``method`` (see the module
    docstring); ``threshold`` defaults to 0.15 for ev-literal (seed III-B) and 4 for ev."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] == 0:
        raise UsageError(f"execution vectors must be 2-D with at least one sensor, got {X.shape}")
    threshold = _threshold(method, threshold)
    if method == "ev-literal":
        starts, detected, score, limit = _literal_all(X, threshold)
    else:
        _check_robust(min_length, confirm)
        starts, detected, score, limit = _robust_all(X, threshold, min_length, confirm,
                                                     min_spread, eps_rel, float(horizon))
    return Detection(starts=starts, detected_at=detected, score=score, limit=limit,
                     method=method, threshold=threshold)


def _threshold(method: str, threshold: float | None) -> float:
    if method not in METHODS:
        raise UsageError(f"--method {method!r}: expected one of {', '.join(METHODS)}")
    if threshold is None:
        return LITERAL_THRESHOLD if method == "ev-literal" else ROBUST_THRESHOLD
    if not (math.isfinite(threshold) and threshold > 0):
        raise UsageError(f"--threshold {threshold}: expected a positive number")
    return float(threshold)


def _check_robust(min_length: int, confirm: int) -> None:
    if confirm < 1 or min_length < 2:
        raise UsageError("the ev method needs confirm >= 1 and min_length >= 2")


# --- streaming detectors -----------------------------------------------------------------------
class LiteralDetector:
    """Algorithm 1 online: ``update(vector)`` returns a PhaseChange when a new phase starts."""

    method = "ev-literal"

    def __init__(self, n_sensors: int, *, threshold: float | None = None) -> None:
        self.threshold = _threshold(self.method, threshold)
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


class RobustDetector:
    """The ``ev`` method online (module docstring); same parameters as :func:`detect`."""

    method = "ev"

    def __init__(self, n_sensors: int, *, threshold: float | None = None,
                 min_length: int = MIN_LENGTH, confirm: int = CONFIRM,
                 min_spread: float = MIN_SPREAD, eps_rel: float = EPS_REL,
                 horizon: int = HORIZON) -> None:
        self.threshold = _threshold(self.method, threshold)
        self.horizon = float(horizon)
        _check_robust(min_length, confirm)
        self.min_length, self.confirm = int(min_length), int(confirm)
        self.min_spread, self.eps_rel = float(min_spread), float(eps_rel)
        d = n_sensors
        self._counts = np.zeros(3)
        self._seen_sum = np.zeros(d)
        self._mean = np.zeros(d)
        self._spread_sum = np.zeros(d)
        self._noise = np.zeros(d)
        self._last_z = np.zeros(d)
        self._candidates = np.zeros((self.confirm, d))
        self._z = np.empty(d)
        self._recent: list[int] = []  # indices of the last `confirm` valid vectors
        self.t = -1
        self.last_score = math.nan

    def update(self, vector: Sequence[float] | np.ndarray) -> PhaseChange | None:
        x = np.asarray(vector, dtype=np.float64)
        self.t += 1
        if not np.isfinite(x).all():
            return None
        self._recent.append(self.t)
        if len(self._recent) > self.confirm:
            del self._recent[0]
        event, score, _ = _robust_step(self._counts, self._seen_sum, self._mean,
                                       self._spread_sum, self._noise, self._last_z,
                                       self._candidates, self._z, x, self.threshold,
                                       self.min_length, self.confirm, self.min_spread,
                                       self.eps_rel, self.horizon)
        self.last_score = score
        if event == _NEW_PHASE:
            return PhaseChange(self._recent[0], self.t, float(score))
        return None


def make_detector(method: str, n_sensors: int, *, threshold: float | None = None
                  ) -> LiteralDetector | RobustDetector:
    """A streaming detector for ``method``."""
    if method == "ev-literal":
        return LiteralDetector(n_sensors, threshold=threshold)
    _threshold(method, threshold)
    return RobustDetector(n_sensors, threshold=threshold)
