"""Execution vectors (Tsafack Chetsa et al., section III-A).

An execution vector (EV) holds, for one sampling interval, the node's sensors: retired
instructions, LLC references and misses, branch instructions and misses, network bytes sent
and received, disk bytes read and written. The published algorithm normalizes every sensor
by the number of cycles of the interval; a profile without a ``cycles`` metric is normalized
by the interval length instead (rates per second; our choice, so that any profile gives
vectors).

Our choice for profiles without hardware counters (a virtual machine, a /proc recording):
when ``instructions`` is missing, the CPU-activity metrics that exist (``cpu_user_s``,
``cpu_system_s``, ``cpu_iowait_s``, ``task_clock``, ``page_faults``, ``context_switches``)
stand in for the processor sensors, and the vectors say which sensors they hold.

Every numeric metric takes part in the ev method's vectors (ours, beyond the nine published
sensors, which real counter sets rarely name: l2miss, stall_cycles, local_mem ...):
:func:`choose_sensors` asks the detector (:mod:`phasekit.phases.registry`), whose default
keeps every metric of the profile except those with no value and those constant over the
profile analysed (they are listed as left out, with the reason), and
``cycles``, which becomes the load sensor. Constant means every value within
:data:`CONSTANT_SPREAD` (5 %) of the largest (ours): the ev detector's per-sensor scale is at
least 5 % (``MIN_SPREAD`` of :mod:`phasekit.phases.ev`), so such a sensor cannot move a
vector out of its phase and only dilutes the others' deviations, while the table of
representative vectors showed it as a dimension (the LLC occupancy of a busy node: the cache's
size with rare dips of a few percent). When no other metric varies more, these are kept: a
single series is segmented by its shape, whatever its scale. Each sensor is normalized by its kind
(:func:`sensor_kind`): an event count per cycle (or per second without ``cycles``), a *level*
(a gauge: memory in use, power, temperature, frequency, a ratio) as it is, since dividing an
instantaneous value by the interval's cycles would turn the load into a change of the level.
A recording says which metrics are gauges (``meta["recording"]["kinds"]``); otherwise units
(W, °C, Hz, %) and names (power, temp, freq, util, ratio, ipc, size, used, cached, free)
tell. The detector's signed-log features and per-sensor scales make counts, rates and levels
comparable (:mod:`phasekit.phases.ev`). ev-literal keeps the published sensors.

Beyond the published algorithm, for the ev method: the load sensor ``cycles_per_s``
(``LOAD_SENSOR``), the ``cycles`` of the interval divided by its length, not by the cycles. Per-cycle vectors say
what the busy cores do, not how busy the node is: an idle node (1 % of its cycles, spent by
the kernel and daemons) and a set-up step at full load can have the same instruction mix.
:func:`phasekit.phases.phases` adds it to the default sensors of the ev method when the
profile has a ``cycles`` metric (``default_sensors(metrics, load=True)``); ev-literal keeps
the published vectors. Without ``cycles`` the vectors are rates per second and carry the load
already. Any sensor list may name it (``--sensor cycles_per_s``).

Smoothing is the published unweighted sliding average (III-A), trailing (over the ``smooth``
most recent vectors, fewer at the start) so that the online and offline detectors see the same vectors.
Rows with a missing value stay NaN rows: the detectors skip them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.phases.registry import CONSTANT_SPREAD, LOAD_SENSOR, SensorChoice, detector
from phasekit.profile import Profile, resolve_metric

__all__ = ["CONSTANT_SPREAD", "FALLBACK_SENSORS", "LOAD_SENSOR", "SENSORS", "ExecutionVectors", "SensorChoice",
           "choose_sensors", "execution_vectors", "metric_kind", "sensor_kind", "smooth"]

#: The sensors of Tsafack Chetsa et al. (III-A), in phasekit's metric names.
SENSORS = ("instructions", "cache_references", "cache_misses", "branches", "branch_misses",
           "net_tx_bytes", "net_rx_bytes", "disk_read_bytes", "disk_write_bytes")
#: CPU-activity metrics that stand in for the processor counters when they are missing.
FALLBACK_SENSORS = ("cpu_user_s", "cpu_system_s", "cpu_iowait_s", "task_clock", "page_faults",
                    "context_switches")


@dataclass(frozen=True, eq=False)
class ExecutionVectors:
    """``values[t]`` is the EV of interval t (NaN row: a gap); ``times`` in seconds from the
    profile start; ``normalization`` is "cycles" (per cycle) or "interval" (per second)."""

    values: np.ndarray
    sensors: tuple[str, ...]
    times: np.ndarray
    period: float
    normalization: str
    smooth: int
    levels: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return int(self.values.shape[0])

    @property
    def valid(self) -> np.ndarray:
        return np.isfinite(self.values).all(axis=1)


LEVEL_UNITS = frozenset({"w", "mw", "kw", "c", "°c", "degc", "k", "hz", "khz", "mhz", "ghz",
                         "%", "ratio", "v", "a"})
LEVEL_WORDS = ("power", "temp", "freq", "util", "ratio", "ipc", "percent", "size", "used",
               "cached", "free", "watt", "volt", "gauge")


def sensor_kind(name: str, *, unit: str = "", recorded: str | None = None) -> str:
    """"count" (normalized per cycle or per second) or "level" (kept as it is) for a metric
    (module docstring); ``recorded`` is the recorder's own kind ("counter"/"gauge")."""
    if recorded is not None:
        return "level" if recorded == "gauge" else "count"
    lowered = name.lower()
    if unit.strip().lower() in LEVEL_UNITS or any(word in lowered for word in LEVEL_WORDS):
        return "level"
    return "count"


def metric_kind(profile: Profile, metric: str) -> str:
    """:func:`sensor_kind` of a profile's metric, from its unit and the recorder's kinds."""
    kinds = (profile.meta.get("recording") or {}).get("kinds") or {}
    return sensor_kind(metric, unit=profile.units.get(metric, ""), recorded=kinds.get(metric))


def choose_sensors(profile: Profile, *, method: str = "ev") -> SensorChoice:
    """The default sensors of the detector ``method`` for ``profile``
    (:meth:`phasekit.phases.registry.PhaseDetector.choose_sensors`): for ev (and by
    default) every metric with values that vary, ``cycles`` as the load sensor (module
    docstring); for ev-literal, the published sensors that the profile has
    (:func:`default_sensors`)."""
    return detector(method).choose_sensors(profile)


def streaming_sensors(metrics: Sequence[str], *, method: str = "ev") -> list[str]:
    """The default sensors of the detector ``method`` for a stream whose values are not known
    yet: for ev every metric (``cycles`` as the load sensor), for ev-literal the published
    ones (:func:`choose_sensors`)."""
    return detector(method).streaming_sensors(metrics)


def default_sensors(metrics: Sequence[str], *, load: bool = False) -> list[str]:
    """The published sensors (III-A) among ``metrics``, plus the CPU-activity stand-ins when
    there is no instruction counter (see the module docstring); with ``load`` (the ev
    method), plus the load sensor ``cycles_per_s`` when there is a ``cycles`` metric."""
    names = [s for s in SENSORS if s in metrics]
    if "instructions" not in metrics:
        names += [s for s in FALLBACK_SENSORS if s in metrics]
    if load and "cycles" in metrics and names:
        names.append(LOAD_SENSOR)
    return names


def stored_sensors(profile: Profile, names: Sequence[str]) -> list[str]:
    """``names`` under the profile's stored metric names (a source name, another case or
    other punctuation also names a metric: :meth:`~phasekit.profile.Profile.find`); a name
    that is no metric stays as given, for the error to name it."""
    return [name if name == LOAD_SENSOR else (profile.find(name) or name) for name in names]


def _columns(metrics: Sequence[str], names: Sequence[str]) -> list[int]:
    """Column of every sensor in ``metrics`` (-1: the load sensor, always derived from
    ``cycles``; another case or punctuation names a metric too,
    :func:`~phasekit.profile.resolve_metric`); a UsageError naming the missing ones."""
    found = {s: resolve_metric(s, metrics) for s in names if s != LOAD_SENSOR}
    missing = [s for s in names
               if (found[s] is None if s != LOAD_SENSOR else "cycles" not in metrics)]
    if missing:
        raise UsageError(f"no metric {', '.join(missing)} in this profile; it has: "
                         + ", ".join(metrics)
                         + ("" if LOAD_SENSOR not in missing else
                            f" ({LOAD_SENSOR} is derived from a cycles metric)"))
    return [-1 if s == LOAD_SENSOR else list(metrics).index(str(found[s])) for s in names]


def execution_vectors(profile: Profile, *, sensors: Sequence[str] | None = None,
                      smooth_window: int = 1) -> ExecutionVectors:
    """The EVs of ``profile`` (Tsafack Chetsa et al., III-A); ``smooth_window`` = 1 is no smoothing."""
    if smooth_window < 1:
        raise UsageError("expected a window of at least 1 vector", parameter="smooth",
                         value=smooth_window)
    names = (stored_sensors(profile, sensors) if sensors is not None
             else default_sensors(profile.metrics))
    columns = _columns(profile.metrics, names)
    if not names:
        raise InputError("none of the execution-vector sensors is in this profile (expected "
                         "some of " + ", ".join(SENSORS + FALLBACK_SENSORS) + "); it has: "
                         + ", ".join(profile.metrics))
    values = np.column_stack([profile.values[:, c] if c >= 0 else profile.column("cycles")
                              for c in columns]).astype(np.float64)
    load = np.array([c < 0 for c in columns])
    counts = ~load & np.array([metric_kind(profile, s) == "count" for s in names])
    if "cycles" in profile.metrics:
        cycles = profile.column("cycles")
        with np.errstate(invalid="ignore", divide="ignore"):
            values[:, counts] /= np.where(cycles > 0, cycles, np.nan)[:, None]
        values[:, load] /= profile.period
        normalization = "cycles"
    else:
        values[:, counts] /= profile.period
        normalization = "interval"
    values[~np.isfinite(values)] = np.nan
    return ExecutionVectors(values=smooth(values, smooth_window), sensors=tuple(names),
                            times=profile.times(), period=profile.period,
                            normalization=normalization, smooth=smooth_window,
                            levels=tuple(s for s, c, lo in zip(names, counts, load, strict=True)
                                         if not c and not lo))


def smooth(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing unweighted sliding average over ``window`` rows (III-A); a NaN row stays
    NaN and is left out of its neighbours' averages."""
    if window <= 1:
        return values.copy()
    finite = np.isfinite(values).all(axis=1)
    filled = np.where(finite[:, None], values, 0.0)
    sums = np.cumsum(filled, axis=0)
    counts = np.cumsum(finite.astype(np.int64))
    lagged_sums = np.vstack([np.zeros((window, values.shape[1])), sums[:-window]])
    lagged_counts = np.concatenate([np.zeros(window, np.int64), counts[:-window]])
    n = counts - lagged_counts
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (sums - lagged_sums) / n[:, None]
    out[~finite] = np.nan
    return out


class StreamingVectors:
    """Execution vectors one sample at a time, equal to :func:`execution_vectors` bit for bit:
    the same normalization and the trailing average computed from the same running sums."""

    def __init__(self, metrics: Sequence[str], sensors: Sequence[str], period: float,
                 smooth_window: int = 1, *, levels: Sequence[str] = ()) -> None:
        if smooth_window < 1:
            raise UsageError("expected a window of at least 1 vector", parameter="smooth",
                             value=smooth_window)
        columns = _columns(metrics, sensors)
        self.sensors = tuple(sensors)
        self.cycles = list(metrics).index("cycles") if "cycles" in metrics else None
        self._load = np.array([c < 0 for c in columns], bool)
        self._counts = ~self._load & np.array([s not in levels for s in sensors], bool)
        self.columns = np.array([c if c >= 0 else self.cycles for c in columns], np.int64)
        self.period = period
        self.window = smooth_window
        d = len(self.sensors)
        self._sums = np.zeros(d)
        self._count = 0
        self._past_sums = np.zeros((smooth_window, d))  # running sums `window` rows ago
        self._past_counts = np.zeros(smooth_window, np.int64)
        self._t = 0

    def push(self, row: np.ndarray) -> np.ndarray:
        """The (smoothed) vector of one profile row (all metrics, in ``metrics`` order)."""
        x = np.asarray(row, dtype=np.float64)[self.columns]
        if self.cycles is not None:
            cycles = float(row[self.cycles])
            with np.errstate(invalid="ignore", divide="ignore"):
                x[self._counts] /= cycles if cycles > 0 else np.nan
            x[self._load] /= self.period
        else:
            x[self._counts] /= self.period
        x[~np.isfinite(x)] = np.nan
        if self.window == 1:
            return x
        finite = bool(np.isfinite(x).all())
        slot = self._t % self.window
        lagged_sums = self._past_sums[slot].copy()
        lagged_count = self._past_counts[slot]
        self._sums = self._sums + (x if finite else 0.0)
        self._count += int(finite)
        self._past_sums[slot] = self._sums
        self._past_counts[slot] = self._count
        self._t += 1
        if not finite:
            return np.full(x.shape, np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (self._sums - lagged_sums) / (self._count - lagged_count)
