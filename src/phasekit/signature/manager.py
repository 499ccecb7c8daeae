"""The execution manager (Salinas Hilburg 2020, 4.1.4): partial runs of a signature's executables in
parallel, with the stop criteria of 4.3-4.4.

Scheduling. Main's own code (the ``base`` executable) runs first: it says how long the
input setup lasts. Then the paths and the shared prefixes run, one per usable core
(``os.sched_getaffinity``), each pinned to its core, first in first out when there are more
executables than cores (4.1.4.1). T_sig is the wall time of the whole (eq. 2.1 sums the
partial times instead; both are reported). The thesis assumes the parallel runs do not slow
each other; on a virtual machine whose vCPUs share physical cores they do (``cores=1`` runs
them one after the other).

Counters. Each run is sampled every ``interval`` seconds with the recorder's per-process
sources (:mod:`phasekit.record.sources`): hardware counters (perf-hw) where the machine has
them, the kernel's software counters (perf-sw: task_clock, context switches, page faults,
migrations) otherwise, or the task's CPU time from ``/proc/PID/schedstat`` when perf_event is
not allowed at all. Values are rates per second (task_clock: busy cores). The CPU time of a
whole run comes from the kernel's accounting of the child (``wait4``), exact to the
microsecond.

Stop criteria (4.1.4). (1) p % of the executable's instructions; (2) a stable counter window:
m = Tp' / s samples with Tp' = I x TPIb x p / 100 (eq. 4.3-4.4; TPIb, the initial time per
instruction, is 1 / (IPCb x f)), the Euclidean distance between consecutive normalized
counter vectors of the window (each counter divided by its mean absolute rate over the run,
so that no counter dominates by its unit), and :func:`find_change` on that distance signal:
no change means stable.

With hardware counters (``mode="hardware"``) the executables run with the program's real
arguments and are stopped by whichever criterion comes first, as in the thesis (TPIb from
each run's first samples); the time per instruction comes from the instructions and the CPU
time in the final window.

Without them (``mode="software"``, this virtual machine) the instructions retired cannot be
followed while a program runs, so a run stopped at an arbitrary moment would have an unknown
instruction count, and time per instruction would be unmeasurable. Criterion (1) is then
applied by construction: with a trip-count argument each executable runs k = ceil(p/100 x
STEPS) steps (at least ``min_steps``), whose exact instruction count the build measured, to
its own end, and once more 1 step (the difference of the two runs is a window of known
instructions: see :mod:`phasekit.signature.reconstruct`). Such a run lasts Tp' by
construction, so criterion (2) uses m = its samples / s and is applied to its samples once it
has ended: the first stable window after main's own code (the base run's duration) gives the
counters that represent the path; it cannot cut the run. Without a trip-count argument the
executables run to completion (no compression: said in the notes).

Simulated (``mode="simulated"``, any machine with valgrind): the same runs as in software
mode, each under callgrind's cache and branch simulation of a fixed reference machine
(:data:`SIMULATED_OPTIONS`), timed by KCachegrind's cycle estimate (:func:`simulated_cycles`)
at :data:`SIMULATED_HZ`. Nothing of this machine's time enters, so the estimate and the full
run it is compared with are deterministic: an exact check of the method (the paths, the
extrapolation, the reconstruction) free of the timing noise of a shared or virtual machine,
not a measurement of this machine. Each run is one counter sample (instructions, cycles,
L1 and LL misses, mispredicted branches, task_clock = 1), callgrind running tens of times
slower than the program.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from phasekit.errors import UnsupportedError, UsageError
from phasekit.record.process import kill_group, start_command
from phasekit.record.sources.base import Availability, Metric, Scope, Source
from phasekit.signature.paths import Signature, Unit, callgrind_events, exit_reason

__all__ = [
    "MIN_STEPS",
    "MIN_WINDOW",
    "ManagerResult",
    "PartialRun",
    "SchedstatSource",
    "default_sources",
    "distance_signal",
    "execute_signature",
    "find_change",
    "first_stable_window",
    "merge_results",
    "partial_steps",
    "run_program",
    "simulated_cycles",
]

#: Fewest trip counts a truncated partial run executes (our choice: one step is often
#: special, the first touch of the data).
MIN_STEPS = 2
#: Fewest samples in a stability window (our choice: the change test needs two points on
#: each side of a split of the m - 1 distances).
MIN_WINDOW = 5
#: Penalty factor of the change test, in units of noise variance x log(window length) (our
#: choice; the thesis does not give MATLAB findchangepts' threshold): on the distance signal
#: of steady Gaussian counters the statistic's 99th percentile is about 24 (windows of 10-20
#: samples), a level shift of the counters gives 100 or more.
PENALTY = 30.0
#: Samples at the start of a hardware-counter run used for the initial IPC (our choice).
INITIAL_SAMPLES = 3

#: Clock of the simulated mode (our choice: a round figure for a 2020s server core).
SIMULATED_HZ = 2.0e9
#: callgrind's simulation in the simulated mode: a fixed reference machine (our choice: 32
#: KiB 8-way L1 caches, an 8 MiB 16-way last level, 64-byte lines), so that every machine
#: gives the same counts (callgrind would otherwise take the caches of the host's CPUID).
SIMULATED_OPTIONS = ("--cache-sim=yes", "--branch-sim=yes", "--I1=32768,8,64",
                     "--D1=32768,8,64", "--LL=8388608,16,64")
SIMULATED_METRICS = ("task_clock", "instructions", "cycles", "l1_misses", "ll_misses",
                     "branch_misses")
MODES = ("hardware", "software", "simulated")

SourceFactory = Callable[[], Sequence[Source]]
Progress = Callable[[str, float], None]


# --- the change test -------------------------------------------------------------------------
def distance_signal(values: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """Euclidean distances between consecutive rows of ``values`` (samples x counters),
    each counter divided by ``scale`` (default: its mean absolute value; 1 where that is 0)."""
    values = np.asarray(values, float)
    if values.ndim == 1:
        values = values[:, None]
    if scale is None:
        scale = np.mean(np.abs(values), axis=0)
    scale = np.where(np.asarray(scale, float) > 0, scale, 1.0)
    return np.sqrt(np.sum(np.diff(values / scale, axis=0) ** 2, axis=1))


def best_split(x: np.ndarray) -> tuple[int, float, float]:
    """The split of ``x`` in two (each side two points or more) with the least total squared
    deviation from each side's mean: (split index, that total, the total without a split).
    Vectorized with cumulative sums (tests check it against a plain loop)."""
    x = np.asarray(x, float)
    n = len(x)
    if n < 4:
        raise ValueError("a split needs at least four points")
    s1 = np.cumsum(x)
    s2 = np.cumsum(x * x)
    k = np.arange(2, n - 1)  # left side x[:k]
    left = s2[k - 1] - s1[k - 1] ** 2 / k
    right = (s2[-1] - s2[k - 1]) - (s1[-1] - s1[k - 1]) ** 2 / (n - k)
    total = left + right
    best = int(np.argmin(total))
    whole = float(s2[-1] - s1[-1] ** 2 / n)
    return int(k[best]), float(max(total[best], 0.0)), max(whole, 0.0)


def find_change(x: np.ndarray, *, penalty: float = PENALTY) -> int | None:
    """An abrupt change of the mean of ``x`` (4.1.4, after Lavielle and Killick et al.): the
    best split of :func:`best_split` when it lowers the squared deviation by more than
    ``penalty`` x sigma^2 x log(n), else None (no change: stable).

    sigma is a robust noise level: the median absolute deviation of the first differences
    (/ 0.6745 / sqrt 2), at least 1 % of the signal's mean absolute value, so that a signal
    quantized to a few levels is not "changing" at every step.
    """
    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    n = len(x)
    if n < 4:
        return None
    split, total, whole = best_split(x)
    d = np.diff(x)
    sigma = np.median(np.abs(d - np.median(d))) / 0.6745 / math.sqrt(2)
    sigma = max(float(sigma), 0.01 * float(np.mean(np.abs(x))), 1e-12)
    return split if whole - total > penalty * sigma ** 2 * math.log(n) else None


def first_stable_window(rates: np.ndarray, times: np.ndarray, m: int, *,
                        search_from: float = 0.0, penalty: float = PENALTY
                        ) -> tuple[int, int] | None:
    """The first window of ``m`` samples, starting at or after ``search_from`` seconds, whose
    distance signal has no change (criterion 2 of 4.1.4, the window slid one sample at a
    time); None when there is none. ``times`` are the samples' end times."""
    rates = np.asarray(rates, float)
    n = len(rates)
    if m < 2 or n < m:
        return None
    scale = np.nanmean(np.abs(rates), axis=0)
    starts = np.concatenate([[0.0], np.asarray(times, float)[:-1]])
    for a in range(0, n - m + 1):
        if starts[a] < search_from:
            continue
        window = rates[a:a + m]
        if np.all(np.isfinite(window)) and find_change(distance_signal(window, scale),
                                                       penalty=penalty) is None:
            return a, a + m
    return None


def partial_steps(steps: int, p: float, min_steps: int = MIN_STEPS) -> int:
    """Trip count of a truncated partial run: ceil(p/100 x steps), at least ``min_steps``,
    at most ``steps``."""
    return int(min(steps, max(min_steps, math.ceil(p / 100.0 * steps - 1e-9))))


# --- sources ---------------------------------------------------------------------------------
class SchedstatSource(Source):
    """CPU time of one task from ``/proc/PID/schedstat`` (time on CPU, ns): the fallback when
    perf_event is not allowed. One metric, ``task_clock`` (s), like perf's."""

    name = "schedstat"
    per_process = True

    def __init__(self, proc_root: str = "/proc") -> None:
        self.proc_root = proc_root
        self._path: str | None = None
        self._last = 0.0

    def probe(self) -> Availability:
        path = os.path.join(self.proc_root, str(os.getpid()), "schedstat")
        if not os.path.exists(path):
            return Availability(self.name, False, f"{path} does not exist (a kernel without "
                                "CONFIG_SCHED_INFO)")
        return Availability(self.name, True, "", (Metric("task_clock", "s"),))

    def open(self, scope: Scope, pid: int | None = None) -> tuple[Metric, ...]:
        if scope != "process" or pid is None:
            raise UsageError("schedstat source: process scope only")
        self._path = os.path.join(self.proc_root, str(pid), "schedstat")
        self._last = 0.0
        return (Metric("task_clock", "s"),)

    def read(self) -> list[float]:
        if self._path is None:
            raise UsageError("schedstat source: read() before open()")
        try:
            with open(self._path, encoding="ascii") as fh:
                self._last = int(fh.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            pass  # the task has exited: its last reading stands
        return [self._last]


def default_sources() -> SourceFactory:
    """A factory of fresh per-process sources: perf-hw and perf-sw where they can run,
    else the schedstat fallback."""
    from phasekit.record.sources.perf_event import PerfHardwareSource, PerfSoftwareSource

    classes: list[type[Source]] = []
    for cls in (PerfHardwareSource, PerfSoftwareSource):
        try:
            if cls().probe().available:
                classes.append(cls)
        except Exception:  # a probe that fails offers nothing
            continue
    if not classes:
        classes = [SchedstatSource]

    def make() -> list[Source]:
        return [cls() for cls in classes]

    make.names = tuple(cls.name for cls in classes)  # type: ignore[attr-defined]
    return make


def hardware_reason() -> str:
    """Why hardware counters cannot be used here ("" when they can)."""
    from phasekit.record.sources.perf_event import PerfHardwareSource

    try:
        availability = PerfHardwareSource().probe()
    except Exception as exc:
        return f"perf-hw probe failed: {exc}"
    if availability.available and {"instructions", "cycles"} <= {
            m.name for m in availability.metrics}:
        return ""
    return availability.reason or "perf-hw offers no instructions and cycles counters"


# --- results ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class PartialRun:
    """One run of one executable: what was run, how it ended, its sampled counters.

    ``instructions``: instructions executed (the build's exact count at ``steps`` for a run
    that ended by itself; the retired count at the stop with hardware counters; NaN when
    unknown). ``rates``: samples x metrics, per second, sample ``i`` covering
    (``times[i-1]``, ``times[i]``] (``times[-1]`` of the first is 0). ``window``: sample indices
    [a, b) of the counter window; ``stable``: whether criterion (2) found it stable.
    """

    unit: str
    label: str
    argv: tuple[str, ...]
    steps: int | None
    instructions: float
    cpu_time_s: float
    wall_time_s: float
    stopped_by: str  # end, instructions, stable, failed, timeout
    metrics: tuple[str, ...]
    times: np.ndarray = field(repr=False)
    rates: np.ndarray = field(repr=False)
    window: tuple[int, int] | None = None
    stable: bool = False
    m: int = 0
    stable_at_s: float | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.stopped_by not in ("failed", "timeout")

    def counters(self) -> dict[str, float]:
        """Mean rate of each metric over the counter window (all samples without one). A run
        of a few milliseconds may end before its counters are open or sampled: its
        task_clock rate is then its CPU time over its wall time, its other counters are
        unknown (NaN)."""
        seen = math.nan
        if "task_clock" in self.metrics and len(self.rates):
            edges = np.concatenate([[0.0], self.times])
            seen = float(np.nansum(self.rates[:, self.metrics.index("task_clock")]
                                   * np.diff(edges)))
        if len(self.rates) == 0 or seen < 0.5 * self.cpu_time_s:
            # no sample, or the counters opened after most of the run (a run of a few ms)
            out = {m: math.nan for m in self.metrics}
            if self.wall_time_s > 0 and math.isfinite(self.cpu_time_s):
                out["task_clock"] = self.cpu_time_s / self.wall_time_s
            return out
        a, b = self.window if self.window is not None else (0, len(self.rates))
        block = self.rates[a:b]
        with np.errstate(invalid="ignore"), contextlib.suppress(RuntimeWarning):
            means = np.nanmean(block, axis=0) if len(block) else np.full(len(self.metrics),
                                                                          np.nan)
        return {m: float(v) for m, v in zip(self.metrics, means, strict=True)}

    def window_totals(self, metric: str) -> tuple[float, float]:
        """(increase of ``metric``, seconds) over the counter window."""
        if metric not in self.metrics or len(self.rates) == 0:
            return math.nan, math.nan
        a, b = self.window if self.window is not None else (0, len(self.rates))
        edges = np.concatenate([[0.0], self.times])
        dt = np.diff(edges)[a:b]
        column = self.rates[a:b, self.metrics.index(metric)]
        return float(np.nansum(column * dt)), float(np.sum(dt))

    def to_dict(self, samples: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "unit": self.unit, "label": self.label, "argv": list(self.argv),
            "steps": self.steps, "instructions": self.instructions,
            "cpu_time_s": self.cpu_time_s, "wall_time_s": self.wall_time_s,
            "stopped_by": self.stopped_by, "reason": self.reason,
            "metrics": list(self.metrics), "window": None if self.window is None
            else list(self.window), "stable": self.stable, "m": self.m,
            "stable_at_s": self.stable_at_s, "counters": self.counters()}
        if samples:
            out["times"] = self.times
            out["rates"] = self.rates
        return out

    @staticmethod
    def from_dict(data: dict[str, Any]) -> PartialRun:
        metrics = tuple(data["metrics"])
        times = np.asarray(data.get("times", []), float)
        rates = np.asarray([[math.nan if v is None else v for v in row]
                            for row in data.get("rates", [])], float).reshape(-1, len(metrics))
        window = data.get("window")
        return PartialRun(
            str(data["unit"]), str(data["label"]), tuple(data["argv"]),
            None if data.get("steps") is None else int(data["steps"]),
            math.nan if data.get("instructions") is None else float(data["instructions"]),
            float(data["cpu_time_s"]), float(data["wall_time_s"]), str(data["stopped_by"]),
            metrics, times, rates, None if window is None else (int(window[0]),
                                                                int(window[1])),
            bool(data.get("stable", False)), int(data.get("m", 0)),
            None if data.get("stable_at_s") is None else float(data["stable_at_s"]),
            str(data.get("reason", "")))


@dataclass(frozen=True)
class ManagerResult:
    """The partial runs of a signature and how they were made."""

    mode: str  # "hardware", "software" or "simulated"
    p: float
    s: int
    interval: float
    runs: tuple[PartialRun, ...]
    cores: tuple[int, ...]
    wall_time_s: float
    sources: tuple[str, ...]
    notes: tuple[str, ...] = ()
    unmeasured: tuple[str, ...] = ()
    repeats: int = 1
    all_runs_wall_s: float = math.nan  # every run's wall time summed, repeats included

    def runs_of(self, unit: str) -> tuple[PartialRun, ...]:
        """The runs of ``unit``, fewest steps first."""
        return tuple(sorted((r for r in self.runs if r.unit == unit),
                            key=lambda r: r.steps or 0))

    def run(self, unit: str) -> PartialRun | None:
        """The longest run of ``unit`` (the one whose counters represent it)."""
        runs = self.runs_of(unit)
        return runs[-1] if runs else None

    @property
    def sum_partial_s(self) -> float:
        """Sum of the partial runs' wall times, repeats included: T_sig of eq. 2.1."""
        if math.isfinite(self.all_runs_wall_s):
            return self.all_runs_wall_s
        return float(sum(r.wall_time_s for r in self.runs))


# --- running ---------------------------------------------------------------------------------
class _Running:
    """One executable running: its process, its sources, its samples and stop state."""

    def __init__(self, unit: Unit, label: str, argv: list[str], steps: int | None,
                 core: int | None, sources: Sequence[Source], cwd: str,
                 instructions: float, target: float, m: int, search_from: float,
                 window_from: tuple[float, int, float] | None = None,
                 segments: int | None = None) -> None:
        self.unit, self.label, self.argv, self.steps = unit, label, argv, steps
        self.core = core
        self.instructions = instructions  # exact count of the complete run (NaN unknown)
        self.target = target  # criterion (1) in instructions (hardware), inf otherwise
        self.m = m
        self.search_from = search_from
        # hardware mode: (instructions of the complete run x p / 100, s, interval), for the
        # window length from the first samples' time per instruction (eq. 4.3-4.4)
        self.window_from = window_from
        # software mode: the window is chosen after the run, m = its samples / segments
        self.segments = segments
        self.penalty = PENALTY
        self.errfile = tempfile.TemporaryFile()  # noqa: SIM115 - open for the run's life
        self.start = time.monotonic()
        try:
            self.process = start_command(argv, cwd=cwd, stderr=self.errfile, core=core)
        except UsageError:
            self.errfile.close()
            raise
        self.sources: list[Source] = []
        self.metrics: list[str] = []
        for source in sources:
            try:
                metrics = source.open("process", self.process.pid)
            except Exception:  # the process may be gone already; a source may refuse
                continue
            self.sources.append(source)
            self.metrics.extend(m.name for m in metrics)
        self.readings: list[np.ndarray] = []
        self.stamps: list[float] = []
        self.end = math.nan
        self.exited = threading.Event()
        self.stopped_by: str | None = None
        self.window: tuple[int, int] | None = None
        self.stable = False
        self.stable_at: float | None = None
        self.cpu = math.nan
        self.wall = math.nan
        self.status: int | None = None
        self.retired = math.nan
        self._read(time.monotonic())
        threading.Thread(target=self._wait, name=f"wait-{self.process.pid}",
                         daemon=True).start()

    def _read(self, now: float) -> None:
        values: list[float] = []
        for source in self.sources:
            try:
                values.extend(source.read())
            except Exception:
                values.extend([math.nan] * (len(self.metrics) - len(values)))
        if self.sources:
            self.readings.append(np.array(values, float))
            self.stamps.append(now - self.start)

    def rates(self) -> np.ndarray:
        if len(self.readings) < 2:
            return np.empty((0, len(self.metrics)))
        cum = np.vstack(self.readings)
        dt = np.diff(np.array(self.stamps))
        dt = np.where(dt > 0, dt, np.nan)
        return np.diff(cum, axis=0) / dt[:, None]

    def sample(self, now: float, stop_early: bool, penalty: float) -> None:
        """Read the counters; test the stop criteria (``stop_early``: hardware mode)."""
        self._read(now)
        if "instructions" in self.metrics and self.readings:
            i = self.metrics.index("instructions")
            self.retired = float(self.readings[-1][i])
            if stop_early and self.retired >= self.target:
                self.kill("instructions")
                return
            if self.m == 0 and self.window_from and len(self.readings) > INITIAL_SAMPLES:
                partial, s, interval = self.window_from
                done = self.retired - float(self.readings[0][i])
                elapsed = self.stamps[-1] - self.stamps[0]
                if done > 0:  # eq. 4.3 with the initial IPC x f = done / elapsed
                    self.m = max(MIN_WINDOW, round(partial * elapsed / done / s / interval))
        if not stop_early or self.m <= 0 or self.stable:
            return
        rates = self.rates()
        n = len(rates)
        if n < self.m:
            return
        a = n - self.m
        times = np.array(self.stamps[1:])
        if (times[a - 1] if a else 0.0) < self.search_from:
            return  # the window starts before main's own code is done
        window = rates[a:]
        if not np.all(np.isfinite(window)):
            return
        scale = np.nanmean(np.abs(rates), axis=0)
        if find_change(distance_signal(window, scale), penalty=penalty) is None:
            self.window = (a, n)
            self.stable = True
            self.stable_at = float(times[-1])
            self.kill("stable")

    def kill(self, why: str) -> None:
        self.stopped_by = why
        kill_group(self.process.pid)

    def _wait(self) -> None:
        """Waiter thread: reap the process the moment it ends (exact wall and CPU time)."""
        try:
            _, status, usage = os.wait4(self.process.pid, 0)
            self.end = time.monotonic()
            self.status = os.waitstatus_to_exitcode(status)
            self.cpu = usage.ru_utime + usage.ru_stime
        except ChildProcessError:
            self.end = time.monotonic()
        self.process.returncode = self.status if self.status is not None else 0
        self.exited.set()

    def poll(self) -> bool:
        """Whether the process has ended; then its last reading is taken and the sources
        closed."""
        if not self.exited.is_set():
            return False
        self.wall = self.end - self.start
        self._read(self.end)
        kill_group(self.process.pid)  # stragglers of its session
        for source in self.sources:
            with contextlib.suppress(Exception):
                source.close()
        return True

    def result(self) -> PartialRun:
        self.errfile.seek(0)
        stderr = self.errfile.read().decode(errors="replace")
        self.errfile.close()
        reason = ""
        stopped = self.stopped_by
        if stopped is None:
            if self.status:
                stopped, reason = "failed", exit_reason(self.status, stderr)
            else:
                stopped = "end"
        rates = self.rates()
        instructions = self.instructions
        if stopped in ("instructions", "stable"):
            instructions = self.retired
        window = self.window
        times = np.array(self.stamps[1:])
        if window is None and self.segments and len(rates):
            self.m = max(MIN_WINDOW, round(len(rates) / self.segments))
            window = first_stable_window(rates, times, self.m, search_from=self.search_from,
                                         penalty=self.penalty)
            if window is not None:
                self.stable, self.stable_at = True, float(times[window[1] - 1])
        if window is None and len(rates):  # no stable window: the samples after main's code
            after = np.nonzero(times > self.search_from)[0]
            window = (int(after[0]), len(rates)) if len(after) else (0, len(rates))
        return PartialRun(self.unit.name, self.label, tuple(self.argv), self.steps,
                          instructions, self.cpu, self.wall, stopped, tuple(self.metrics),
                          np.array(self.stamps[1:]), rates, window, self.stable, self.m,
                          self.stable_at, reason)


def simulated_cycles(events: dict[str, float]) -> float:
    """KCachegrind's cycle estimate of callgrind's events: CEst = Ir + 10 Bm + 10 L1m +
    100 LLm (instructions, mispredicted branches, L1 misses, last-level misses)."""
    get = events.get
    l1 = get("I1mr", 0.0) + get("D1mr", 0.0) + get("D1mw", 0.0)
    ll = get("ILmr", 0.0) + get("DLmr", 0.0) + get("DLmw", 0.0)
    branches = get("Bcm", 0.0) + get("Bim", 0.0)
    return events["Ir"] + 10.0 * (l1 + branches) + 100.0 * ll


def _simulate(job: dict[str, Any], timeout: float | None) -> PartialRun:
    """One run of a job (keyword arguments of _Running) under callgrind's simulation: its
    time is its estimated cycles at :data:`SIMULATED_HZ`, on the CPU all along."""
    unit, argv = job["unit"], tuple(job["argv"])
    empty = np.empty((0, len(SIMULATED_METRICS)))
    try:
        events = callgrind_events(argv, cwd=job["cwd"], timeout=timeout,
                                  options=SIMULATED_OPTIONS)
    except UnsupportedError:  # no valgrind: not this run's failure
        raise
    except RuntimeError as exc:
        stopped = "timeout" if str(exc).startswith("did not finish") else "failed"
        return PartialRun(unit.name, job["label"], argv, job["steps"], math.nan, math.nan,
                          math.nan, stopped, SIMULATED_METRICS, np.empty(0), empty,
                          reason=str(exc))
    cycles = simulated_cycles(events)
    seconds = cycles / SIMULATED_HZ
    get = events.get
    totals = np.array([seconds, events["Ir"], cycles,
                       get("I1mr", 0.0) + get("D1mr", 0.0) + get("D1mw", 0.0),
                       get("ILmr", 0.0) + get("DLmr", 0.0) + get("DLmw", 0.0),
                       get("Bcm", 0.0) + get("Bim", 0.0)])
    return PartialRun(unit.name, job["label"], argv, job["steps"], float(events["Ir"]),
                      seconds, seconds, "end", SIMULATED_METRICS, np.array([seconds]),
                      (totals / seconds)[None, :], (0, 1))


def _simulate_all(jobs: list[dict[str, Any]], cores: int, timeout: float | None,
                  progress: Progress | None, done_before: int, total: int
                  ) -> tuple[list[PartialRun], float]:
    """Run ``jobs`` under callgrind, ``cores`` at a time; (their results, the simulated wall
    time of running them first in first out on ``cores`` cores)."""
    from concurrent.futures import ThreadPoolExecutor

    results: list[PartialRun] = []
    with ThreadPoolExecutor(max_workers=max(cores, 1)) as pool:
        for run in pool.map(lambda job: _simulate(job, timeout), jobs):
            results.append(run)
            if progress:
                progress(f"simulated runs: {run.label}",
                         (done_before + len(results)) / max(total, 1))
    free = [0.0] * max(cores, 1)
    for run in results:
        core = free.index(min(free))
        free[core] += run.wall_time_s if math.isfinite(run.wall_time_s) else 0.0
    return results, max(free)


def _fastest_runs(runs: Sequence[PartialRun]) -> list[PartialRun]:
    """One run per (executable, trip count): the one with the least CPU time of those that
    ended well (other jobs on the machine only ever add time: cache, memory bandwidth, a
    busy sibling hardware thread), or a failed one when none did."""
    groups: dict[tuple[str, int | None], list[PartialRun]] = {}
    for r in runs:
        groups.setdefault((r.unit, r.steps), []).append(r)
    chosen = []
    for group in groups.values():
        good = sorted((r for r in group if r.ok), key=lambda r: r.cpu_time_s)
        chosen.append(good[0] if good else group[0])
    return chosen


def merge_results(results: Sequence[ManagerResult]) -> ManagerResult:
    """Rounds of partial runs of one signature as one result: the fastest run of each
    executable and trip count, every round's time counted in T_sig."""
    if not results:
        raise ValueError("nothing to merge")
    first = results[0]
    every = [r for result in results for r in result.runs]
    order = {r.unit: i for i, r in enumerate(first.runs)}
    runs = sorted(_fastest_runs(every), key=lambda r: (order.get(r.unit, 0), r.steps or 0))
    notes = [n for n in first.notes if "left out" not in n]
    notes += [f"{r.label} ({r.steps} steps): {r.reason or r.stopped_by}; left out of the "
              "estimate" for r in runs if not r.ok]
    if len(results) > 1:
        notes.append(f"{len(results)} rounds of partial runs; the run with the least CPU "
                     "time of each is kept")
    return ManagerResult(first.mode, first.p, first.s, first.interval, tuple(runs),
                         first.cores, float(sum(r.wall_time_s for r in results)),
                         first.sources, tuple(dict.fromkeys(notes)), first.unmeasured,
                         sum(r.repeats for r in results),
                         float(sum(r.sum_partial_s for r in results)))


def _cores(cores: Sequence[int] | int | None) -> tuple[int, ...]:
    usable = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    if cores is None:
        return tuple(usable)
    if isinstance(cores, int):
        if cores < 1:
            raise UsageError("expected at least 1", parameter="cores", value=cores)
        return tuple(usable[:cores])
    chosen = tuple(int(c) for c in cores)
    missing = [c for c in chosen if c not in usable]
    if missing:
        raise UsageError(f"cores {missing} are not usable by this process (usable: "
                         f"{usable})", parameter="cores", value=cores)
    return chosen


def _run_all(jobs: list[dict[str, Any]], cores: tuple[int, ...], sources: SourceFactory,
             interval: float, stop_early: bool, penalty: float, timeout: float | None,
             progress: Progress | None, done_before: int, total: int) -> list[PartialRun]:
    """Run ``jobs`` (keyword arguments of _Running) FIFO on ``cores``, sampling them."""
    pending = deque(jobs)
    running: dict[int, _Running] = {}
    results: list[PartialRun] = []
    free = list(cores)
    try:
        while pending or running:
            while pending and free:
                core = free.pop(0)
                job = pending.popleft()
                running[core] = _Running(core=core, sources=sources(), **job)
                running[core].penalty = penalty
            time.sleep(interval)
            now = time.monotonic()
            for core, run in list(running.items()):
                if run.poll():
                    results.append(run.result())
                    del running[core]
                    free.append(core)
                    if progress:
                        progress(f"partial runs: {run.label}",
                                 (done_before + len(results)) / max(total, 1))
                    continue
                if timeout is not None and now - run.start > timeout:
                    run.kill("timeout")
                    continue
                run.sample(now, stop_early, penalty)
    finally:
        for run in running.values():
            run.kill("failed")
            run.exited.wait(5.0)
            with contextlib.suppress(Exception):
                run.poll()
                run.errfile.close()
    return results


def execute_signature(signature: Signature, *, p: float = 5.0, s: int = 10,
                      interval: float = 0.005, cores: Sequence[int] | int | None = None,
                      sources: SourceFactory | None = None, mode: str = "auto",
                      min_steps: int = MIN_STEPS, penalty: float = PENALTY,
                      timeout: float | None = None, repeats: int = 1,
                      progress: Progress | None = None) -> ManagerResult:
    """Partial runs of ``signature``'s base, paths and prefixes (module docstring).

    ``p`` (percent of instructions) and ``s`` (segment division) default to the thesis's 5
    and 10 (4.4); ``interval`` is the sampling period sm (our default 5 ms: the partial runs of
    the bundled kernels last tens of milliseconds). ``mode``: "hardware", "software",
    "simulated" (callgrind's simulation, on any machine with valgrind) or "auto" (hardware
    when perf-hw gives instructions and cycles, else software); "hardware" with given
    ``sources`` trusts them to provide ``instructions`` and ``cycles``. ``repeats`` (default
    1, as the thesis) runs every partial run that many times and keeps the one with the
    least CPU time (our addition, for machines shared with other jobs; T_sig counts them
    all). Failed runs are kept with their reason; the others go on.
    """
    if not (0 < p <= 100):
        raise UsageError("expected a percentage in (0, 100]", parameter="p", value=p)
    if s < 1:
        raise UsageError("expected a positive number of segments", parameter="s", value=s)
    if not (interval >= 0.001 and math.isfinite(interval)):
        raise UsageError("seconds; the shortest is 1 ms (0.001)", parameter="interval",
                         value=interval)
    if repeats < 1:
        raise UsageError("expected at least 1", parameter="repeats", value=repeats)
    if mode not in ("auto", *MODES):
        raise UsageError(f"expected auto, {', '.join(MODES)}", parameter="mode", value=mode)
    reason = "" if mode == "simulated" else hardware_reason()
    if mode == "auto":
        mode = "software" if reason else "hardware"
    elif mode == "hardware" and reason and sources is None:
        raise UnsupportedError(f"no hardware counters here: {reason}")
    simulated = mode == "simulated"
    sources = sources or default_sources()
    names = ("callgrind-sim",) if simulated else tuple(getattr(sources, "names", ()))
    chosen_cores = _cores(cores)
    notes: list[str] = []
    unmeasured: list[str] = []
    steps = signature.steps
    trips: tuple[int | None, ...] = (None,)  # trip counts each executable runs at
    if simulated:
        unmeasured += ["this machine's time and power: every run is timed by callgrind's "
                       f"cycle estimate at {SIMULATED_HZ / 1e9:g} GHz on a simulated "
                       "reference machine (32 KiB L1, 8 MiB LL), the estimate and the full "
                       "run alike"]
        if repeats > 1:
            notes.append("simulated runs are deterministic: --repeats is not needed")
            repeats = 1
    elif mode == "software":
        unmeasured += [f"hardware counters ({reason})", "IPC (no instructions or cycles "
                       "counter)", "CPU frequency (no cycles counter)",
                       "instructions retired while a program runs (counted exactly by "
                       f"{signature.counter} at build time instead)"]
    if mode != "hardware":
        if steps is not None:
            high = partial_steps(steps, p, min_steps)
            trips = (1, high) if 1 < high < steps else (steps,)
            if len(trips) == 2:
                clock = ("simulated time (callgrind's cycle estimate)" if simulated
                         else "CPU time (task clock)")
                notes.append(
                    f"{'simulated' if simulated else 'no hardware counters'}: every "
                    f"executable runs {high} of {steps} steps (p = {p:g} % of its "
                    f"instructions by construction) and 1 step, each to its end; the time "
                    f"per instruction is the {clock} between the two runs over their exact "
                    "instruction difference (a window with a known instruction count), the "
                    "one-off costs come from the 1-step run"
                    + ("" if simulated else "; the stability test only chooses the counter "
                       "window"))
            else:
                notes.append(f"{steps} step(s) is too few to run a part: every executable "
                             "runs to completion (no compression)")
        else:
            notes.append("no hardware counters and no trip-count argument (--steps-arg): "
                         "a run cannot be cut at p % of its instructions, so every "
                         "executable runs to completion (no compression)")
    units = [u for u in signature.units if u.kind in ("base", "path", "prefix")]
    for u in units:
        if not u.ok:
            notes.append(f"{u.label}: not run ({u.reason})")
    units = [u for u in units if u.ok]
    total = len(units) * len(trips) * repeats
    report = progress or (lambda stage, fraction: None)
    started = time.monotonic()

    def job(unit: Unit, k: int | None, search_from: float) -> dict[str, Any]:
        count = unit.count
        full = count.at_args if count is not None else math.nan
        hardware = mode == "hardware"
        target = p / 100.0 * full if hardware and math.isfinite(full) else math.inf
        return {"unit": unit, "label": unit.label, "argv": signature.argv(unit, k),
                "steps": k if k is not None else steps, "cwd": signature.workdir,
                "instructions": count.at(k) if count is not None else math.nan,
                "target": target, "m": 0, "search_from": search_from,
                "window_from": (target, s, interval) if hardware else None,
                "segments": None if hardware else s}

    base = next(u for u in units if u.kind == "base")
    report("partial runs: main's own code", 0.0)
    if simulated:
        jobs = [job(u, k, 0.0) for u in [base, *[u for u in units if u.kind != "base"]]
                for k in reversed(trips)]
        done, makespan = _simulate_all(jobs, len(chosen_cores), timeout, report, 0, total)
        order = {u.name: i for i, u in enumerate(signature.units)}
        done.sort(key=lambda r: (order.get(r.unit, 0), r.steps or 0))
        notes += [f"{r.label} ({r.steps} steps): {r.reason or r.stopped_by}; left out of "
                  "the estimate" for r in done if not r.ok]
        return ManagerResult(mode, float(p), int(s), float(interval), tuple(done),
                             chosen_cores, makespan, names, tuple(notes), tuple(unmeasured),
                             1, float(sum(r.wall_time_s for r in done
                                          if math.isfinite(r.wall_time_s))))
    every: list[PartialRun] = []
    every += _run_all([job(base, k, 0.0) for k in reversed(trips)
                       for _ in range(repeats)], chosen_cores, sources, interval,
                      mode == "hardware", penalty, timeout, report, 0, total)
    base_runs = _fastest_runs(every)
    base_run = max(base_runs, key=lambda r: r.steps or 0)
    search_from = base_run.cpu_time_s if mode == "software" and base_run.ok else 0.0
    if not math.isfinite(search_from):
        search_from = 0.0
    others = [job(u, k, search_from) for u in units if u.kind != "base"
              for k in reversed(trips) for _ in range(repeats)]
    runs = _run_all(others, chosen_cores, sources, interval, mode == "hardware", penalty,
                    timeout, report, len(every), total) if others else []
    every += runs
    runs = _fastest_runs(runs)
    order = {u.name: i for i, u in enumerate(signature.units)}
    all_runs = sorted([*base_runs, *runs], key=lambda r: (order.get(r.unit, 0), r.steps or 0))
    for r in all_runs:
        if not r.ok:
            notes.append(f"{r.label} ({r.steps} steps): {r.reason or r.stopped_by}; left "
                         "out of the estimate")
    if repeats > 1:
        notes.append(f"every partial run was repeated {repeats} times; the run with the "
                     "least CPU time is kept")
    return ManagerResult(mode, float(p), int(s), float(interval), tuple(all_runs),
                         chosen_cores, time.monotonic() - started, names, tuple(notes),
                         tuple(unmeasured), repeats,
                         float(sum(r.wall_time_s for r in every
                                   if math.isfinite(r.wall_time_s))))


def run_program(signature: Signature, *, interval: float = 0.005,
                sources: SourceFactory | None = None, core: int | None = None,
                timeout: float | None = None, repeats: int = 1,
                simulated: bool = False) -> PartialRun:
    """A full run of the unmodified program with its real arguments, measured with the same
    sources and sampling as the partial runs (for the comparison of 4.12); with ``repeats``,
    the run with the least CPU time; ``simulated``: under callgrind, as the simulated mode's
    partial runs."""
    binary = Path(signature.directory) / "bin" / "program"
    if not binary.exists():
        raise UsageError(f"{binary} is missing: rebuild the signature")
    unit = Unit("program", "original", (), binary="bin/program")
    count = signature.original.count if signature.original is not None else None
    cores = _cores(None)
    job = {"unit": unit, "label": "program", "argv": [str(binary), *signature.args],
           "steps": signature.steps, "cwd": signature.workdir,
           "instructions": count.at_args if count is not None else math.nan,
           "target": math.inf, "m": 0, "search_from": 0.0, "window_from": None}
    if simulated:
        return _simulate(job, timeout)
    runs = _run_all([dict(job) for _ in range(max(repeats, 1))],
                    (cores[0] if core is None else core,), sources or default_sources(),
                    interval, False, PENALTY, timeout, None, 0, 1)
    return _fastest_runs(runs)[0]
