"""The recorder: samples sources at a fixed interval while a command runs, crash-safe.

Timing. Sample k is taken at ``t0 + k * interval`` on the monotonic clock: deadlines are
absolute, so the sampling does not drift however long the run. A sample taken more than one
interval late is taken at the tick just passed instead, and the ticks it skipped are missing
rows (NaN once read back), never filled. The lateness of every sample is kept: the summary
gives the achieved interval and the jitter (median, 99th percentile, maximum).

Values. Sources report cumulative counters or instantaneous gauges
(:mod:`phasekit.record.sources.base`). Row ``k`` describes the interval that ends at tick
``k``; its time is the start of that interval, ``(k - 1) * interval``. A counter is stored as
its increase over the interval scaled by ``interval / measured span`` (so a late sample is
not a burst), or divided by the measured span when the metric has a ``rate_unit`` (energy in
J becomes power in W); a decrease (a counter reset) is NaN. Gauges are stored as read.

Storage. Rows are handed every ``flush_interval`` (1 s) to a writer thread that appends them
as one chunk to an Arrow IPC stream ``OUTPUT.partial.arrows`` (:class:`StreamAppender`), so a
recording killed with SIGKILL keeps every chunk but the last second's. When the recording
ends (the command exits, the duration is over, or SIGINT/SIGTERM) the stream is closed and
converted atomically into OUTPUT (Parquet, CSV or Arrow by its name) with the summary in its
metadata (``meta["recording"]``, ``"complete": true``), and the partial file is removed.

The command. It is started paused (a tiny trampoline waits on a pipe), the sources are
opened on its process (scope "process": counters inherited by its process tree), and only
then released, so nothing of it runs unmeasured. On SIGINT or SIGTERM the recorder lets the
command end on its own for ``grace`` seconds (a terminal's Ctrl-C reaches both), then sends
it the same signal, then SIGKILL; sampling goes on until it has exited.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import logging
import math
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from phasekit.errors import PhasekitWarning, UnsupportedError, UsageError
from phasekit.record.sources.base import Metric, Scope, Source

__all__ = ["MIN_INTERVAL", "Recorder", "RecordingSummary", "partial_path"]

logger = logging.getLogger(__name__)

#: Shortest sampling interval accepted (our choice: below 1 ms the sampling cost of a Python
#: loop is a large share of the interval and the timer jitter is of the same order).
MIN_INTERVAL = 0.001
#: How often chunks go to disk (the issue: an interruption loses at most the last second).
FLUSH_INTERVAL = 1.0
#: Seconds the command gets to end by itself after SIGINT/SIGTERM, then after the signal.
GRACE = 2.0

_TRAMPOLINE = (
    "import os, sys\n"
    "fd = int(sys.argv[1])\n"
    "go = os.read(fd, 1)\n"
    "os.close(fd)\n"
    "if not go:\n"
    "    sys.exit(125)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def partial_path(output: str | os.PathLike[str]) -> Path:
    """Where the recording streams while it runs: ``OUTPUT.partial.arrows``."""
    output = Path(output)
    return output.with_name(output.name + ".partial.arrows")


@dataclass(frozen=True)
class RecordingSummary:
    """What a recording did: the file, the timing achieved and how it ended."""

    output: Path
    n_samples: int
    interval: float
    duration: float
    achieved_interval: float
    jitter_p50: float
    jitter_p99: float
    jitter_max: float
    missed_ticks: int
    stopped_by: str
    exit_code: int | None
    metrics: tuple[str, ...]
    sources: tuple[str, ...]
    dropped: dict[str, str] = field(default_factory=dict)
    recorder_cpu_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": str(self.output), "n_samples": self.n_samples, "interval_s": self.interval,
            "duration_s": self.duration, "achieved_interval_s": self.achieved_interval,
            "jitter_s": {"p50": self.jitter_p50, "p99": self.jitter_p99, "max": self.jitter_max},
            "missed_ticks": self.missed_ticks, "stopped_by": self.stopped_by,
            "exit_code": self.exit_code, "metrics": list(self.metrics),
            "sources": list(self.sources), "dropped_sources": dict(self.dropped),
            "recorder_cpu_s": self.recorder_cpu_s,
        }


@dataclass
class _Opened:
    """A source opened for this recording and the columns of its readings we keep."""

    source: Source
    metrics: tuple[Metric, ...]
    keep: list[int]


class Recorder:
    """Samples ``sources`` every ``interval`` seconds into a crash-safe profile file.

    ``metrics`` selects metrics by name (all metrics of the sources when None); a name no
    source provides is a UsageError before anything starts. ``scope`` "node" measures the
    whole node, "process" the command's process tree (sources without a per-process view,
    such as /proc or RAPL, still measure the node, which the metadata says).
    """

    def __init__(self, sources: Sequence[Source], *, interval: float = 0.005,
                 metrics: Sequence[str] | None = None, scope: Scope = "node",
                 flush_interval: float = FLUSH_INTERVAL, grace: float = GRACE) -> None:
        self.sources = list(sources)
        self.interval = interval
        self.metrics = None if metrics is None else list(metrics)
        self.scope = scope
        self.flush_interval = flush_interval
        self.grace = grace

    # --- checks before anything starts ----------------------------------------------------
    def _validate(self, output: Path, command: Sequence[str] | None,
                  duration: float | None) -> None:
        if not (math.isfinite(self.interval) and self.interval >= MIN_INTERVAL):
            raise UsageError(f"--interval {self.interval:g} s: the shortest interval is "
                             f"{MIN_INTERVAL * 1e3:g} ms")
        if self.scope not in ("node", "process"):
            raise UsageError(f"--scope {self.scope!r}: expected node or process")
        if not command and duration is None:
            raise UsageError("nothing to record: give a command after -- or a --duration")
        if duration is not None and not (math.isfinite(duration) and duration > 0):
            raise UsageError(f"--duration {duration:g} s: expected a positive duration")
        if self.scope == "process" and not command:
            raise UsageError("--scope process measures a command's process tree: give the "
                             "command after --")
        if not self.sources:
            raise UnsupportedError("no source to record from")
        if command:
            _check_command(command[0])
        from phasekit.io import profile_format

        profile_format(output)  # a name whose format is known
        if output.is_dir():
            raise UsageError(f"-o {output}: is a directory; expected a file name")
        if not output.parent.is_dir():
            raise UsageError(f"-o {output}: directory {output.parent} does not exist")
        if not os.access(output.parent, os.W_OK):
            raise UsageError(f"-o {output}: directory {output.parent} is not writable")

    def _open_sources(self, pid: int | None) -> list[_Opened]:
        """Open every source that provides a wanted metric; check the names first."""
        wanted = self.metrics
        offered: dict[str, Source] = {}
        for source in self.sources:
            for metric in source.probe().metrics:
                offered.setdefault(metric.name, source)
        if wanted is not None:
            unknown = [m for m in wanted if m not in offered]
            if unknown:
                available = ", ".join(offered) or "none"
                raise UsageError(f"--metrics: no source here provides {', '.join(unknown)}; "
                                 f"available: {available} (see 'phasekit sources')")
            if len(set(wanted)) != len(wanted):
                raise UsageError(f"--metrics: a metric is named twice in {','.join(wanted)}")
        opened: list[_Opened] = []
        taken: set[str] = set()
        try:
            for source in self.sources:
                if wanted is not None and not any(offered.get(m) is source for m in wanted):
                    continue
                try:
                    metrics = source.open(self.scope, pid)
                except UnsupportedError as exc:
                    if wanted is not None:
                        raise
                    warnings.warn(f"source {source.name} left out: {exc}", PhasekitWarning,
                                  stacklevel=3)
                    continue
                keep = [j for j, m in enumerate(metrics)
                        if m.name not in taken and (wanted is None or m.name in wanted)]
                taken.update(metrics[j].name for j in keep)
                opened.append(_Opened(source, metrics, keep))
        except BaseException:
            for entry in opened:
                entry.source.close()
            raise
        if wanted is not None:
            missing = [m for m in wanted if m not in taken]
            if missing:
                for entry in opened:
                    entry.source.close()
                raise UnsupportedError(f"--metrics: {', '.join(missing)} could not be opened")
        if not any(entry.keep for entry in opened):
            for entry in opened:
                entry.source.close()
            raise UnsupportedError("no source could be opened here (see 'phasekit sources')")
        return opened

    # --- the recording ------------------------------------------------------------------
    def run(self, output: str | os.PathLike[str], *, command: Sequence[str] | None = None,
            duration: float | None = None,
            status: Callable[[float, int], None] | None = None,
            command_stdout: int | None = None) -> RecordingSummary:
        """Record until ``command`` exits (or ``duration`` seconds pass, or a signal).

        ``status(elapsed_s, n_samples)`` is called after every chunk written;
        ``command_stdout`` is a file descriptor for the command's standard output (default:
        ours). Returns the summary; OUTPUT then holds the complete profile.
        """
        output = Path(output)
        command = list(command) if command else None
        self._validate(output, command, duration)
        child = _PausedChild(command, command_stdout) if command else None
        try:
            opened = self._open_sources(child.pid if child else None)
        except BaseException:
            if child:
                child.abandon()
            raise
        try:
            return self._record(output, opened, child, command, duration, status)
        finally:
            for entry in opened:
                with contextlib.suppress(Exception):
                    entry.source.close()
            if child:
                child.abandon()

    def _header(self, opened: list[_Opened], command: list[str] | None,
                start_utc: _dt.datetime) -> dict[str, Any]:
        from phasekit import __version__

        metrics = [entry.metrics[j] for entry in opened for j in entry.keep]
        units = {m.name: (m.rate_unit or m.unit) if m.kind == "counter" else m.unit
                 for m in metrics}
        node_only = [entry.source.name for entry in opened
                     if self.scope == "process" and not getattr(entry.source, "per_process", False)]
        recording = {
            "host": socket.gethostname(), "cpu_model": _cpu_model(), "n_cpus": os.cpu_count(),
            "interval_s": self.interval, "scope": self.scope,
            "sources": [{"name": entry.source.name,
                         "metrics": [entry.metrics[j].name for j in entry.keep],
                         **_source_metadata(entry.source)}
                        for entry in opened],
            "node_wide_sources": node_only,
            "kinds": {m.name: m.kind for m in metrics},
            "command": command, "start_utc": start_utc.isoformat(),
            "phasekit_version": __version__, "flush_interval_s": self.flush_interval,
            "complete": False,
        }
        return {"version": 1, "period": self.interval, "start": 0.0,
                "node": socket.gethostname(), "metrics": [m.name for m in metrics],
                "units": {k: v for k, v in units.items() if v}, "meta": {"recording": recording}}

    def _record(self, output: Path, opened: list[_Opened], child: _PausedChild | None,
                command: list[str] | None, duration: float | None,
                status: Callable[[float, int], None] | None) -> RecordingSummary:
        from phasekit.io.arrow import StreamAppender

        start_utc = _dt.datetime.now(_dt.UTC)
        header = self._header(opened, command, start_utc)
        partial = partial_path(output)
        appender = StreamAppender(partial, header["metrics"], header)
        layout = _Layout.of(opened)
        writer = _ChunkWriter(appender, layout, self.interval, status)
        stop = _StopFlag()
        previous_handlers = _install_handlers(stop)
        cpu_start = time.process_time()
        try:
            loop = _SamplingLoop(opened, layout, self.interval, self.flush_interval, writer)
            loop.run(stop, child, duration, self.grace)
        except BaseException:
            writer.finish()
            appender.abandon()
            raise
        finally:
            _restore_handlers(previous_handlers)
        cpu = time.process_time() - cpu_start
        writer.finish()
        appender.close()
        exit_code = child.exit_code() if child else None
        summary = loop.summary(output, exit_code, header["metrics"], cpu,
                               stopped_by=stop.reason or ("command exited" if child
                                                          else "duration"),
                               sources=[e.source.name for e in opened])
        _finalize(partial, output, header, summary, start_utc)
        return summary


# --- the pieces ------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Layout:
    """Columns of one sampling row (cumulative readings of every source, all their metrics)
    and how each kept column becomes a stored value."""

    width: int
    keep: np.ndarray
    counter: np.ndarray
    rate: np.ndarray
    source_slices: tuple[tuple[int, int], ...]

    @staticmethod
    def of(opened: list[_Opened]) -> _Layout:
        keep, counter, rate, slices = [], [], [], []
        offset = 0
        for entry in opened:
            slices.append((offset, offset + len(entry.metrics)))
            for j in entry.keep:
                metric = entry.metrics[j]
                keep.append(offset + j)
                counter.append(metric.kind == "counter")
                rate.append(metric.kind == "counter" and bool(metric.rate_unit))
            offset += len(entry.metrics)
        return _Layout(offset, np.array(keep, np.int64), np.array(counter, bool),
                       np.array(rate, bool), tuple(slices))


class _StopFlag:
    def __init__(self) -> None:
        self.reason: str | None = None
        self.signum: int | None = None
        self.at: float | None = None

    def set(self, reason: str, signum: int | None = None) -> None:
        if self.reason is None:
            self.reason, self.signum, self.at = reason, signum, time.monotonic()


def _install_handlers(stop: _StopFlag) -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        def handler(number: int, frame: object) -> None:
            stop.set(signal.Signals(number).name, number)
        previous[signum] = signal.signal(signum, handler)
    return previous


def _restore_handlers(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


class _PausedChild:
    """The command, started but held before ``exec`` until :meth:`release`."""

    def __init__(self, command: list[str], stdout: int | None = None) -> None:
        read_end, self._go = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-S", "-c", _TRAMPOLINE, str(read_end), *command],
                pass_fds=(read_end,), stdout=stdout)
        except OSError as exc:
            os.close(self._go)
            raise UsageError(f"cannot start {command[0]}: {exc.strerror or exc}") from None
        finally:
            os.close(read_end)
        self.pid = self.process.pid
        self.released = False

    def release(self) -> None:
        os.write(self._go, b"g")
        os.close(self._go)
        self.released = True

    def exited(self) -> bool:
        return self.process.poll() is not None

    def exit_code(self) -> int | None:
        code = self.process.poll()
        if code is None:
            return None
        return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as shells say

    def abandon(self) -> None:
        """Stop a child that was never released (or is still running after the recording)."""
        if not self.released:
            with contextlib.suppress(OSError):
                os.close(self._go)  # the trampoline reads EOF and exits 125 without exec
            self.released = True
        if self.process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=GRACE)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class _ChunkWriter:
    """Turns chunks of cumulative readings into stored values, in a thread of its own."""

    def __init__(self, appender: Any, layout: _Layout, interval: float,
                 status: Callable[[float, int], None] | None) -> None:
        self.appender = appender
        self.layout = layout
        self.interval = interval
        self.status = status
        self.queue: queue.Queue[tuple[np.ndarray, np.ndarray] | None] = queue.Queue()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, name="phasekit-writer", daemon=True)
        self.thread.start()

    def put(self, previous: np.ndarray, rows: np.ndarray) -> None:
        """``previous``: the row before the chunk (tick, time, readings); ``rows``: the chunk."""
        if self.error is not None:
            raise self.error
        self.queue.put((previous, rows))

    def finish(self) -> None:
        if self.thread.is_alive():
            self.queue.put(None)
            self.thread.join()
        if self.error is not None:
            raise self.error

    def _work(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            if self.error is not None:
                continue
            try:
                times, values = stored_values(item[0], item[1], self.layout, self.interval)
                self.appender.append(times, values)
                if self.status is not None:
                    self.status(float(item[1][-1, 1]), self.appender.n_rows)
            except BaseException as exc:  # reported to the sampling loop at its next flush
                self.error = exc


def stored_values(previous: np.ndarray, rows: np.ndarray, layout: _Layout, interval: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Row times and stored values of a chunk of raw rows (see the module docstring).

    Raw rows are ``[tick, seconds since t0, reading...]``; ``previous`` is the raw row before
    the chunk.
    """
    both = np.vstack([previous[None, :], rows])
    span = np.diff(both[:, 1])
    readings = both[:, 2:][:, layout.keep]
    increase = np.diff(readings, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(layout.rate, 1.0, interval)[None, :] / span[:, None]
        values = np.where(layout.counter[None, :], increase * scale, readings[1:])
        values[layout.counter[None, :] & ~(increase >= 0)] = np.nan
    times = (rows[:, 0] - 1) * interval
    return times, values


class _SamplingLoop:
    """The timed loop: read every source at each tick, hand chunks to the writer."""

    def __init__(self, opened: list[_Opened], layout: _Layout, interval: float,
                 flush_interval: float, writer: _ChunkWriter) -> None:
        self.opened = opened
        self.layout = layout
        self.interval = interval
        self.chunk_rows = max(1, round(flush_interval / interval))
        self.writer = writer
        self.lateness: list[np.ndarray] = []
        self.n_rows = 0
        self.missed = 0
        self.first_time = 0.0
        self.last_time = 0.0
        self.last_tick = 0
        self.dropped: dict[str, str] = {}

    def _read_all(self, readers: list[Callable[[], list[float]]], row: np.ndarray) -> None:
        for index, (read, (lo, hi)) in enumerate(zip(readers, self.layout.source_slices,
                                                     strict=True)):
            try:
                row[lo:hi] = read()
            except Exception as exc:
                name = self.opened[index].source.name
                self.dropped[name] = f"{type(exc).__name__}: {exc}"
                warnings.warn(f"source {name} failed and was dropped at "
                              f"{self.last_time:.3f} s ({exc}); its metrics are NaN from "
                              "there on", PhasekitWarning, stacklevel=2)
                width = hi - lo
                readers[index] = lambda width=width: [math.nan] * width
                row[lo:hi] = math.nan

    def run(self, stop: _StopFlag, child: _PausedChild | None, duration: float | None,
            grace: float) -> None:
        interval = self.interval
        readers = [entry.source.read for entry in self.opened]
        width = 2 + self.layout.width
        chunk = np.empty((self.chunk_rows, width))
        late = np.empty(self.chunk_rows)
        previous = np.empty(width)
        monotonic, sleep = time.monotonic, time.sleep
        t0 = monotonic()
        previous[0] = 0
        self._read_all(readers, previous[2:])
        previous[1] = monotonic() - t0
        if child is not None:
            child.release()  # only now: the first readings precede every step of the command
        end = math.inf if duration is None else t0 + duration
        signalled = False
        tick = 0
        filled = 0
        last_read = previous[1]
        while True:
            tick += 1
            if tick * interval < last_read + 0.5 * interval:  # the last read ran late
                skipped = math.ceil((last_read + 0.5 * interval) / interval) - tick
                tick += skipped
                self.missed += skipped
            deadline = t0 + tick * interval
            delay = deadline - monotonic()
            if delay > 0:
                sleep(delay)
            now = monotonic()
            lateness = now - deadline
            if lateness >= interval:
                skipped = int(lateness // interval)
                tick += skipped
                self.missed += skipped
                lateness -= skipped * interval
            row = chunk[filled]
            row[0] = tick
            self._read_all(readers, row[2:])
            row[1] = last_read = monotonic() - t0  # when the readings were complete
            late[filled] = lateness
            filled += 1
            if filled == self.chunk_rows:
                self._flush(previous, chunk, late, filled)
                previous = chunk[filled - 1].copy()
                filled = 0
            if child is not None:
                if child.exited():
                    break
                if stop.reason is not None:
                    signalled = self._escalate(stop, child, grace, signalled)
            elif stop.reason is not None or now >= end:
                break
        if filled:
            self._flush(previous, chunk, late, filled)

    def _escalate(self, stop: _StopFlag, child: _PausedChild, grace: float,
                  signalled: bool) -> bool:
        """After a stop signal: wait ``grace``, pass the signal on, then kill."""
        waited = time.monotonic() - (stop.at or 0.0)
        if not signalled and waited >= grace:
            with contextlib.suppress(ProcessLookupError):
                child.process.send_signal(stop.signum or signal.SIGTERM)
            return True
        if signalled and waited >= 2 * grace:
            with contextlib.suppress(ProcessLookupError):
                child.process.kill()
        return signalled

    def _flush(self, previous: np.ndarray, chunk: np.ndarray, late: np.ndarray,
               filled: int) -> None:
        rows = chunk[:filled].copy()
        if self.n_rows == 0:
            self.first_time = float(previous[1])
        self.writer.put(previous.copy(), rows)
        self.lateness.append(late[:filled].copy())
        self.n_rows += filled
        self.last_time = float(rows[-1, 1])
        self.last_tick = int(rows[-1, 0])

    def summary(self, output: Path, exit_code: int | None, metrics: list[str], cpu: float, *,
                stopped_by: str, sources: list[str]) -> RecordingSummary:
        lateness = np.concatenate(self.lateness) if self.lateness else np.zeros(1)
        achieved = ((self.last_time - self.first_time) / self.n_rows if self.n_rows
                    else math.nan)
        return RecordingSummary(
            output=output, n_samples=self.n_rows, interval=self.interval,
            duration=self.last_time, achieved_interval=achieved,
            jitter_p50=float(np.percentile(lateness, 50)),
            jitter_p99=float(np.percentile(lateness, 99)), jitter_max=float(lateness.max()),
            missed_ticks=self.missed, stopped_by=stopped_by, exit_code=exit_code,
            metrics=tuple(metrics), sources=tuple(sources), dropped=dict(self.dropped),
            recorder_cpu_s=cpu)


def _finalize(partial: Path, output: Path, header: dict[str, Any], summary: RecordingSummary,
              start_utc: _dt.datetime) -> None:
    """Convert the closed stream into OUTPUT with the summary; remove the stream."""
    from phasekit.io import read_profile, write_profile

    if summary.n_samples == 0:
        raise UnsupportedError(f"the recording ended before its first sample; nothing written "
                               f"(the stream is at {partial})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhasekitWarning)
        profile = read_profile(partial, format="arrow")
    recording = dict(header["meta"]["recording"])
    recording.update({
        "complete": True, "end_utc": (start_utc + _dt.timedelta(
            seconds=summary.duration + summary.interval)).isoformat(),
        **{k: v for k, v in summary.to_dict().items() if k not in ("output", "metrics")},
    })
    write_profile(profile.replace(meta={**profile.meta, "recording": recording}), output)
    with contextlib.suppress(OSError):
        partial.unlink()


def _source_metadata(source: Source) -> dict[str, Any]:
    """What a source says about its own setup (perf: groups, counting mode, dropped events),
    when it offers ``metadata()``; JSON-safe or left out."""
    describe = getattr(source, "metadata", None)
    if describe is None:
        return {}
    try:
        import json

        details = describe()
        json.dumps(details)
    except Exception:
        return {}
    return {"details": details} if isinstance(details, dict) else {}


def _check_command(program: str) -> None:
    if os.sep in program:
        path = Path(program)
        if not path.exists():
            raise UsageError(f"command not found: {program}")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise UsageError(f"command not executable: {program}")
    elif shutil.which(program) is None:
        raise UsageError(f"command not found: {program} (not on PATH)")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model", "Processor"):
                    return value.strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()
