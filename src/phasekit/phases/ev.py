"""The ``ev`` phase detector (default, ours): a robust online detector over execution vectors.

Written once, as a compiled step function over a small state array: the streaming detector
(:class:`RobustDetector`, ``update(vector) -> PhaseChange | None``, O(sensors) work per
vector) and the offline function (a compiled loop over all vectors) call the same step, so
they give identical phases by construction. NaN vectors (gaps) are skipped by both.

Why (ours): the published algorithm (Tsafack Chetsa et al., Algorithm 1:
:mod:`phasekit.phases.literal`) fires on every large fluctuation inside a phase of real
counters. Every default below is ours (the published algorithm has none of these), chosen
on bench_1/bench_2 and on the real recording in tests/data:

- features z = log(v + eps) (negative values: see below): every sensor counts by its relative change whatever its unit;
  eps = ``eps_rel`` (1 %) of the sensor's running mean, never lowered, so that a sensor at
  zero (disk, network between bursts) has a constant feature and a small count on it is not
  an infinite change;
- per-sensor scale = max(the phase's spread, the run's noise, ``min_spread`` = 0.05, i.e.
  5 %): the phase's spread is the mean absolute deviation of its features (running mean over
  its first ``horizon`` = 20 vectors, exponentially weighted over the last 20 after; a Huber
  update clipped at 3 scales, so that one odd sensor of an in-phase vector does not drag
  it); the run's noise is the mean |difference| between consecutive features over about
  100 vectors, each difference clipped at 10 times the current level: a bursty sensor (a disk
  written every few seconds) gets a scale as large as its bursts, a steady one a small scale;
- score = mean over sensors of |z - phase mean| / scale, each term capped at ``cap`` = 100;
  a vector is out of phase when the score exceeds ``threshold`` (3);
- confirmation (``confirm`` = 2): a change is confirmed by the next vector when that one is
  still out of phase by ``hysteresis`` (0.75) x threshold, or at once when the change is
  *broad*: the score without its largest term still exceeds ``strong`` (2) x threshold (a
  burst on one sensor never confirms at once). The new phase starts at the first
  out-of-phase vector (the located change point) and its statistics restart from the last;
  the latency is 0 or 1 vector after the located start (Tsafack Chetsa et al., III-C, want
  it under a second);
- minimum duration (``min_length`` = 8 vectors): during its first 8 vectors a phase is
  *young*: its mean follows the vectors closely (weight 1/2) and an out-of-phase vector
  restarts its statistics instead of starting a phase, so that a program's launch, set-up
  and ramp belong to it rather than making phases of their own;
- transients (``TRANSIENT`` = 1): when an out-of-phase vector of a young phase is back in
  the phase before the change, as close to it as a typical member (score against that
  phase's kept statistics, every sensor and the load included, <= 1: a mean deviation of
  one spread), the change was a transient, e.g. a daemon burst of two samples on an idle
  node: the phase resumes the previous phase's statistics and maturity, so that its youth
  does not hide a real change right after it (bench_2: a burst 7 s before a workload's
  start hid that start). The reported change stands (a streaming detector cannot withdraw
  it); identification usually gives it the previous phase's id;
- the load (``load_column``; the sensor ``cycles_per_s`` that :func:`phasekit.phases.phases`
  adds to the published per-cycle vectors when there is a ``cycles`` metric) is left out of
  the score but counts in the transient test and in identification: per cycle, an idle node
  and a set-up step at full load can look alike (bench_2: CG's matrix generation after an
  idle period looked like the idle node, and the start of CG was taken for a transient
  without the load); in the score, the load turned bursts on an idle node (a monitoring
  agent adds 75 % to an idle node's cycles for a quarter of a second) into changes: over
  bench_2 with seeds 0-8, 43 false changes and 6 misses instead of 22 and 1.

- a lasting shift (a change of application that stays under the threshold in every
  single vector, IPC 1.8 -> 0.63 against a wide spread): every in-phase vector of a mature
  phase enters a window of the last ``shift_window`` (8) in-phase vectors; when the window's
  mean differs from the phase's mean before the window by more than ``shift_threshold`` (2)
  phase scales on average over the sensors, the load included (a lasting change of load is
  a change, a burst is not), a new phase starts where the window splits best
  (:func:`_lasting_shift`). On the dcslab back-to-back benchmark it raised Covering from
  0.81 to 0.84 (40 sequences); 1 and 1.5 fired inside applications.
- negative values (a difference, a signed sensor) are not clipped: the feature is
  :func:`signed_log`, log(v + eps) for v >= 0 and mirrored below log(eps) for v < 0;
- ``confirm`` and ``min_length`` follow the sampling period (:func:`timing`): the same 2 and 8
  vectors at Tsafack Chetsa et al.'s 1 s sampling, 3 and 10 at 200 ms.

Out-of-phase vectors that are not confirmed (spikes) never enter the phase's statistics.
Work per vector is O(sensors).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from phasekit.errors import UsageError
from phasekit.phases.registry import (
    LOAD_SENSOR,
    Detection,
    PhaseChange,
    PhaseDetector,
    check_period,
    positive_threshold,
    register_detector,
)

__all__ = [
    "CAP",
    "CONFIRM",
    "EPS_REL",
    "HORIZON",
    "HYSTERESIS",
    "MIN_LENGTH",
    "MIN_SPREAD",
    "ROBUST_THRESHOLD",
    "SHIFT_THRESHOLD",
    "SHIFT_WINDOW",
    "STRONG",
    "EvDetector",
    "RobustDetector",
    "settled_starts",
    "signed_log",
    "timing",
]

ROBUST_THRESHOLD = 3.0
MIN_LENGTH = 8
CONFIRM = 2
STRONG = 2.0
HYSTERESIS = 0.75
CAP = 100.0
MIN_SPREAD = 0.05
EPS_REL = 0.01
NOISE_HORIZON = 100.0
NOISE_CLIP = 10.0
HUBER = 3.0
YOUNG_WEIGHT = 0.5
HORIZON = 20
TRANSIENT = 1.0
SHIFT_WINDOW = 8
SHIFT_THRESHOLD = 2.0
CONFIRM_S = 0.6
CONFIRM_MAX = 8
MIN_PHASE_S = 2.0

# event codes of the step functions
_NONE, _CHANGE_STARTS, _NEW_PHASE = 0, 1, 2


# --- the robust method -------------------------------------------------------------------------
# counts: [n_seen, n_phase, n_candidates, age, n_previous]; n_phase: vectors in the phase's
# statistics, age: vectors since the phase's located start (its min_length clock),
# n_previous: n_phase of the phase before the last change (0: none).
# arrays: level (2 x d: running sum, feature floor), mean (d), spread (d), noise (d),
# last_z (d), candidates (confirm x d), previous (2 x d: the previous phase's mean, spread)
@njit(cache=True)
def _robust_features(x: np.ndarray, level: np.ndarray, n_seen: float, eps_rel: float,
                     out: np.ndarray) -> None:
    """z = log(x + eps): eps is ``eps_rel`` of the sensor's running mean, never lowered
    (``level[1]`` keeps its largest value), so that a sensor at zero keeps a constant
    feature instead of drifting as its running mean decays."""
    for j in range(x.shape[0]):
        value = abs(x[j])
        level[0, j] += value
        eps = eps_rel * level[0, j] / n_seen
        if eps > level[1, j]:
            level[1, j] = eps
        eps = level[1, j]
        if eps <= 0.0:
            eps = 1e-300
        out[j] = signed_log(x[j], eps)


@njit(cache=True)
def signed_log(value: float, eps: float) -> float:
    """log(value + eps) for value >= 0, and negative values mirrored below log(eps):
    2 log(eps) - log(eps - value), instead of clipped to 0 (continuous and increasing)."""
    if value >= 0.0:
        return math.log(value + eps)
    return 2.0 * math.log(eps) - math.log(eps - value)


@njit(cache=True)
def _phase_add(z: np.ndarray, counts: np.ndarray, mean: np.ndarray, spread: np.ndarray,
               noise: np.ndarray, min_spread: float, horizon: float) -> None:
    """Add a vector to the phase's mean and spread: running means over the phase's first
    ``horizon`` vectors, exponentially weighted over the last ``horizon`` ones after; each
    sensor's deviation is clipped at ``HUBER`` times its scale (a Huber update), so that one
    outlying sensor of an in-phase vector does not drag the phase's statistics."""
    counts[1] += 1.0
    n = counts[1]
    weight = 1.0 / min(n, horizon)
    spread_weight = 1.0 / min(max(n - 1.0, 1.0), horizon)
    for j in range(z.shape[0]):
        limit = HUBER * max(spread[j], noise[j], min_spread)
        dev = z[j] - mean[j]
        if dev > limit:
            dev = limit
        elif dev < -limit:
            dev = -limit
        if n > 1.0:
            spread[j] += spread_weight * (abs(dev) - spread[j])
        mean[j] += weight * dev


@njit(cache=True)
def _phase_seed(z: np.ndarray, counts: np.ndarray, mean: np.ndarray, spread: np.ndarray) -> None:
    """Restart the phase's statistics from the vector ``z``."""
    counts[1] = 1.0
    for j in range(z.shape[0]):
        mean[j] = z[j]
        spread[j] = 0.0


@njit(cache=True)
def _deviation(z: np.ndarray, mean: np.ndarray, spread: np.ndarray, noise: np.ndarray,
               min_spread: float, cap: float, j: int) -> float:
    """|z - mean| of sensor ``j`` in its scale, capped at ``cap``."""
    scale = spread[j]
    if scale < noise[j]:
        scale = noise[j]
    if scale < min_spread:
        scale = min_spread
    u = abs(z[j] - mean[j]) / scale
    return cap if u > cap else u


@njit(cache=True)
def _robust_score(z: np.ndarray, mean: np.ndarray, spread: np.ndarray, noise: np.ndarray,
                  min_spread: float, cap: float, skip: int) -> tuple[float, float]:
    """The score (mean over sensors of the capped deviations, sensor ``skip`` left out: the
    load, -1: none) and the same without its largest term (how broad the change is)."""
    d = z.shape[0]
    score = 0.0
    top = 0.0
    m = 0
    for j in range(d):
        if j == skip:
            continue
        u = _deviation(z, mean, spread, noise, min_spread, cap, j)
        score += u
        m += 1
        if u > top:
            top = u
    if m == 0:
        return 0.0, 0.0
    return score / m, (score - top) / m


@njit(cache=True)
def _lasting_shift(counts: np.ndarray, shift: np.ndarray, mean: np.ndarray, spread: np.ndarray,
                   noise: np.ndarray, z: np.ndarray, min_spread: float, cap: float,
                   shift_threshold: float) -> bool:
    """The lasting-shift test of an in-phase vector ``z`` of a mature phase: the mean of the
    last ``L`` in-phase vectors (``shift[:L]``, a ring) against the phase's mean just before
    them (``shift[L:2L]``, a ring of past means), in the phase's scale; above
    ``shift_threshold``, a new phase starts where the split of the window differs most from
    the old mean, with its statistics from the vectors after the split."""
    L = (shift.shape[0] - 1) // 2
    d = z.shape[0]
    slot = int(counts[6]) % L
    if counts[5] >= L:  # the oldest vector leaves the window
        for j in range(d):
            shift[2 * L, j] -= shift[slot, j]
    for j in range(d):
        shift[slot, j] = z[j]
        shift[L + slot, j] = mean[j]
        shift[2 * L, j] += z[j]
    counts[5] = min(counts[5] + 1.0, L)
    counts[6] += 1.0
    if counts[5] < L:
        return False
    reference = (slot + 1) % L  # the mean before the window's oldest vector was added
    statistic = 0.0
    for j in range(d):
        scale = max(spread[j], noise[j], min_spread)
        statistic += min(abs(shift[2 * L, j] / L - shift[L + reference, j]) / scale, cap)
    if d == 0 or statistic / d <= shift_threshold:
        return False
    # locate: the split k (window order) maximizing (L - k) x the tail's mean deviation
    best, best_k = -1.0, 0
    for k in range(L):
        total = 0.0
        for j in range(d):
            tail = 0.0
            for i in range(k, L):
                tail += shift[(reference + i) % L, j]
            scale = max(spread[j], noise[j], min_spread)
            total += min(abs(tail / (L - k) - shift[L + reference, j]) / scale, cap)
        value = (L - k) * total
        if value > best:
            best, best_k = value, k
    age = L - best_k
    for j in range(d):
        tail = 0.0
        for i in range(best_k, L):
            tail += shift[(reference + i) % L, j]
        mean[j] = tail / age
        spread[j] = 0.0
    counts[1] = age
    counts[3] = age
    counts[4] = 0.0
    counts[5] = 0.0
    for j in range(d):
        shift[2 * L, j] = 0.0
    return True


@njit(cache=True)
def _robust_step(counts: np.ndarray, level: np.ndarray, mean: np.ndarray,
                 spread: np.ndarray, noise: np.ndarray, last_z: np.ndarray,
                 candidates: np.ndarray, previous: np.ndarray, z: np.ndarray, x: np.ndarray,
                 threshold: float, min_length: int, confirm: int, min_spread: float,
                 eps_rel: float, horizon: float, cap: float, strong: float,
                 hysteresis: float, load: int, shift: np.ndarray,
                 shift_threshold: float) -> tuple[int, float, float]:
    d = x.shape[0]
    counts[0] += 1.0
    _robust_features(x, level, counts[0], eps_rel, z)
    if counts[0] > 1.0:  # the run's noise level: mean |consecutive difference|, ~100 vectors
        weight = 1.0 / min(counts[0] - 1.0, NOISE_HORIZON)
        for j in range(d):
            step = abs(z[j] - last_z[j])
            ceiling = NOISE_CLIP * max(noise[j], min_spread)
            noise[j] += weight * (min(step, ceiling) - noise[j])
    last_z[:] = z
    if counts[1] == 0.0:  # the first vector
        _phase_seed(z, counts, mean, spread)
        counts[3] = 1.0
        return _NONE, math.nan, threshold
    score, broad = _robust_score(z, mean, spread, noise, min_spread, cap, load)
    if counts[3] < min_length:  # a young phase: its transition may still be going on
        counts[3] += 1.0
        counts[5] = 0.0  # the lasting-shift window starts with the mature phase
        shift[-1, :] = 0.0
        if score > threshold and counts[4] > 0.0:
            # back in the previous phase, load included: the change was a transient
            back, _ = _robust_score(z, previous[0], previous[1], noise, min_spread, cap, -1)
            if back <= TRANSIENT:
                counts[1] = counts[4]
                counts[3] = min_length
                counts[4] = 0.0
                mean[:] = previous[0]
                spread[:] = previous[1]
                _phase_add(z, counts, mean, spread, noise, min_spread, horizon)
                return _NONE, score, threshold
        if score > threshold:
            _phase_seed(z, counts, mean, spread)
        else:  # follow the phase closely; its spread is learnt once it has settled
            counts[1] += 1.0
            weight = max(1.0 / counts[1], YOUNG_WEIGHT)
            for j in range(d):
                mean[j] += weight * (z[j] - mean[j])
        return _NONE, score, threshold
    if score <= (threshold if counts[2] == 0.0 else hysteresis * threshold):
        counts[2] = 0.0
        counts[3] += 1.0
        if shift_threshold > 0.0 and _lasting_shift(counts, shift, mean, spread, noise, z,
                                                    min_spread, cap, shift_threshold):
            return _NEW_PHASE, score, threshold
        _phase_add(z, counts, mean, spread, noise, min_spread, horizon)
        return _NONE, score, threshold
    slot = int(counts[2])
    candidates[slot, :] = z
    counts[2] += 1.0
    if counts[2] < confirm and broad <= strong * threshold:
        return _NONE, score, threshold
    # a new phase: it starts at the first candidate; its statistics start from the last one;
    # the previous phase's are kept, to recognize a transient (module docstring)
    counts[4] = counts[1]
    previous[0, :] = mean
    previous[1, :] = spread
    counts[3] = counts[2]
    counts[2] = 0.0
    counts[5] = 0.0
    shift[-1, :] = 0.0
    _phase_seed(z, counts, mean, spread)
    return _NEW_PHASE, score, threshold



# --- offline loop -----------------------------------------------------------------------------
@njit(cache=True)
def _robust_all(X: np.ndarray, threshold: float, min_length: int, confirm: int,
                min_spread: float, eps_rel: float, horizon: float, cap: float, strong: float,
                hysteresis: float, load: int, shift_window: int, shift_threshold: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n, d = X.shape
    counts = np.zeros(7)
    shift = np.zeros((2 * shift_window + 1, d))
    level = np.zeros((2, d))
    previous = np.zeros((2, d))
    mean = np.zeros(d)
    spread = np.zeros(d)
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
        event, value, lim = _robust_step(counts, level, mean, spread, noise, last_z,
                                         candidates, previous, z, X[t], threshold,
                                         min_length, confirm, min_spread, eps_rel, horizon,
                                         cap, strong, hysteresis, load, shift,
                                         shift_threshold)
        score[t] = value
        limit[t] = lim
        if event == _NEW_PHASE:
            starts[n_starts] = valid_index[n_valid - int(counts[3])]
            detected[n_starts] = t
            n_starts += 1
    return (starts[:n_starts].copy(), detected[:n_starts].copy(), score, limit)


def timing(period: float, *, confirm: int | None = None, min_length: int | None = None
           ) -> tuple[int, int]:
    """The ev method's ``confirm`` and ``min_length`` in vectors for a sampling ``period``
    (s), where not given: a change is confirmed by ``CONFIRM_S`` (0.6 s) of vectors, at least
    ``CONFIRM`` (2: at Tsafack Chetsa et al.'s 1 s sampling, the next vector) and at most ``CONFIRM_MAX``
    (8); a phase is young for ``MIN_PHASE_S`` (2 s), at least ``MIN_LENGTH`` (8) vectors.
    At Tsafack Chetsa et al.'s 1 s sampling both are the previous defaults (2 and 8). Ours:
    at 200 ms single vectors are noisier than at 1 s; on 20 dcslab back-to-back sequences
    (benchmarks/phases_real.py), 2 vectors of confirmation gave F1 0.62-0.68 and 3 gave
    0.73-0.76 (youth 15-40 vectors), and youth of 10, 15 and 25 vectors gave the same
    Covering (0.836-0.838, 40 sequences): 2 s keeps phases of 2.5 s detectable at 50 ms."""
    check_period(period)
    if confirm is None:
        confirm = min(max(CONFIRM, round(CONFIRM_S / period)), CONFIRM_MAX)
    if min_length is None:
        min_length = max(MIN_LENGTH, round(MIN_PHASE_S / period))
    return int(confirm), int(min_length)


def _load_index(load_column: int | None, d: int) -> int:
    if load_column is None:
        return -1
    if not 0 <= load_column < d:
        raise UsageError(f"load column {load_column} is not one of the {d} sensors")
    return int(load_column)


def _check_robust(min_length: int, confirm: int, cap: float, strong: float,
                  shift_window: int) -> None:
    if confirm < 1 or min_length < 1 or shift_window < 1:
        raise UsageError("the ev method needs confirm >= 1, min_length >= 1 and "
                         "shift_window >= 1")
    if not (cap > 0 and strong > 0):
        raise UsageError("the ev method needs cap > 0 and strong > 0")


def settled_starts(X: np.ndarray, starts: np.ndarray, min_length: int) -> np.ndarray:
    """``starts`` without the changes of the end of the run that the ev detector has not
    settled: a last phase with fewer than ``min_length`` valid vectors is merged into the
    phase before it, repeatedly (ours, from the detector's own rule). The detector keeps a
    phase *young* for its first ``min_length`` vectors and reports no change meanwhile: a
    phase shorter than that becomes the start-up of the next one, or, when its vectors fall
    back into the phase before it, a transient that identification merges back. The last
    phase of a run gets neither test: a change in the last vectors (a program exiting within
    its last, partial sample) would otherwise be a phase of one or two samples with an id of
    its own."""
    starts = np.asarray(starts)
    if starts.size < 2:
        return starts
    valid = np.isfinite(X).all(axis=1)
    after = np.cumsum(valid[::-1])[::-1]  # valid vectors from index t to the end
    keep = starts.size
    while keep > 1 and after[int(starts[keep - 1])] < min_length:
        keep -= 1
    return starts[:keep]


# --- streaming detector -----------------------------------------------------------------------
class RobustDetector:
    """The ``ev`` method online (module docstring); same parameters as :func:`detect`."""

    method = "ev"

    def __init__(self, n_sensors: int, *, threshold: float | None = None,
                 period: float = 1.0, min_length: int | None = None,
                 confirm: int | None = None,
                 min_spread: float = MIN_SPREAD, eps_rel: float = EPS_REL,
                 horizon: int = HORIZON, cap: float = CAP, strong: float = STRONG,
                 hysteresis: float = HYSTERESIS, load_column: int | None = None,
                 shift_window: int = SHIFT_WINDOW, shift_threshold: float = SHIFT_THRESHOLD
                 ) -> None:
        self.load = _load_index(load_column, n_sensors)
        self.threshold = positive_threshold(threshold, ROBUST_THRESHOLD)
        confirm, min_length = timing(period, confirm=confirm, min_length=min_length)
        self.horizon = float(horizon)
        _check_robust(min_length, confirm, cap, strong, shift_window)
        self.shift_threshold = float(shift_threshold)
        self.min_length, self.confirm = int(min_length), int(confirm)
        self.min_spread, self.eps_rel = float(min_spread), float(eps_rel)
        self.cap, self.strong, self.hysteresis = float(cap), float(strong), float(hysteresis)
        d = n_sensors
        self._counts = np.zeros(7)
        self._shift = np.zeros((2 * int(shift_window) + 1, d))
        self._keep = max(self.confirm, int(shift_window))
        self._level = np.zeros((2, d))
        self._previous = np.zeros((2, d))
        self._mean = np.zeros(d)
        self._spread = np.zeros(d)
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
        if len(self._recent) > self._keep:
            del self._recent[0]
        event, score, _ = _robust_step(self._counts, self._level, self._mean,
                                       self._spread, self._noise, self._last_z,
                                       self._candidates, self._previous, self._z, x,
                                       self.threshold, self.min_length, self.confirm,
                                       self.min_spread, self.eps_rel, self.horizon, self.cap,
                                       self.strong, self.hysteresis, self.load,
                                       self._shift, self.shift_threshold)
        self.last_score = score
        if event == _NEW_PHASE:
            return PhaseChange(self._recent[-int(self._counts[3])], self.t, float(score))
        return None




@register_detector
class EvDetector(PhaseDetector):
    """The ``ev`` method (module docstring): online, every metric that varies (the default
    sensors), identification by its own score; a change in the last ``min_length`` vectors
    is not kept (:func:`settled_starts`)."""

    name = "ev"
    threshold = ROBUST_THRESHOLD
    online = True

    def detect(self, X: np.ndarray, *, threshold: float, period: float = 1.0,
               sensors: Sequence[str] | None = None, min_length: int | None = None,
               confirm: int | None = None, min_spread: float = MIN_SPREAD,
               eps_rel: float = EPS_REL, horizon: int = HORIZON, cap: float = CAP,
               strong: float = STRONG, hysteresis: float = HYSTERESIS,
               load_column: int | None = None, shift_window: int = SHIFT_WINDOW,
               shift_threshold: float = SHIFT_THRESHOLD) -> Detection:
        """Phase starts of ``X``; ``load_column`` is the column of the load sensor
        (``cycles_per_s``; default: found in ``sensors``): kept out of the score, used to
        tell a transient (module docstring); ``period`` (s) sets ``confirm`` and
        ``min_length`` where they are not given (:func:`timing`)."""
        confirm, min_length = timing(period, confirm=confirm, min_length=min_length)
        if load_column is None and sensors is not None and LOAD_SENSOR in sensors:
            load_column = list(sensors).index(LOAD_SENSOR)
        _check_robust(min_length, confirm, cap, strong, shift_window)
        starts, detected, score, limit = _robust_all(X, threshold, min_length, confirm,
                                                     min_spread, eps_rel, float(horizon),
                                                     float(cap), float(strong),
                                                     float(hysteresis),
                                                     _load_index(load_column, X.shape[1]),
                                                     int(shift_window), float(shift_threshold))
        return Detection(starts=starts, detected_at=detected, score=score, limit=limit,
                         method=self.name, threshold=threshold,
                         params={"confirm": confirm, "min_length": min_length,
                                 "shift_window": int(shift_window),
                                 "shift_threshold": float(shift_threshold)})

    def stream(self, n_sensors: int, *, threshold: float, sensors: Sequence[str] | None = None,
               period: float = 1.0) -> RobustDetector:
        load = list(sensors).index(LOAD_SENSOR) if sensors and LOAD_SENSOR in sensors else None
        return RobustDetector(n_sensors, threshold=threshold, load_column=load, period=period)

    def settled(self, X: np.ndarray, starts: np.ndarray, min_length: int) -> np.ndarray:
        return settled_starts(X, starts, min_length)

    def id_threshold(self, given: float | None, found: Detection) -> float | None:
        """The detection threshold when none is given (:mod:`phasekit.phases.identify`)."""
        return found.threshold if given is None else given
