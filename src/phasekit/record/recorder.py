"""The recorder: samples sources at a fixed interval while a command runs, crash-safe.

Timing. Sample k is taken at ``t0 + k * interval`` on the monotonic clock: deadlines are
absolute, so the sampling does not drift however long the run. A sample that wakes up more
than one interval late is taken at the tick just passed; a tick whose deadline falls less
than a quarter interval after the previous reading ended (that reading ran long) is skipped
so that no sample spans a sliver of time. Skipped ticks are missing rows (NaN once read
back), never filled. The lateness of every sample is kept (a 1 µs histogram, so memory does
not grow with the run): the summary gives the achieved interval and the jitter (median, 99th
percentile, maximum).

Sampling loop. By default the loop runs in a native thread (``phasekit.record._sampler``,
built from C at install time): at each tick it performs the sources' raw reads (their
``raw_reads()``: a ``read`` of each perf counter group, a ``pread`` of each procfs or sysfs
file) with no Python code, and this module decodes whole chunks with the sources' ``decode``
(sources with a thread of their own, such as the command source, give ``read_at`` the
sample's time). The thread asks for a 0.3 ms time slice (Linux >= 6.12) so that its wake-ups
preempt a CPU-bound command at once. The pure-Python loop (:class:`_SamplingLoop`, the same
rules) runs when the extension is not built, when a source can only ``read()``, or with
``PHASEKIT_SAMPLER=python``; ``meta["recording"]["sampler"]`` says which ran and why.

Values. Sources report cumulative counters or instantaneous gauges
(:mod:`phasekit.record.sources.base`). Row ``k`` describes the interval that ends at tick
``k``; its time is the start of that interval, ``(k - 1) * interval``. A counter is stored as
its increase over the interval scaled by ``interval / measured span`` — a count per nominal
interval, so a late sample is not a burst — or divided by the measured span when the metric
has a ``rate_unit`` (energy in J becomes power in W); a decrease (a counter reset) is NaN.
Gauges are stored as read at the end of the interval. ``meta["recording"]["values"]`` says so.

Storage. Rows go to a writer thread at least every ``flush_interval`` (1 s), which appends
them as one chunk to an Arrow IPC stream ``OUTPUT.partial.arrows`` (:class:`StreamAppender`):
a recording killed with SIGKILL keeps every chunk but the last second's. When the recording
ends (the command exits, ``duration`` is over, SIGINT, SIGTERM or SIGHUP) the stream is
closed and converted, chunk by chunk, into OUTPUT (Parquet or Arrow by its name; CSV in
memory) with the summary in its metadata (``meta["recording"]``, ``"complete": true``), and
the partial file is removed. An existing partial file is never overwritten. A write that
fails once the recording has started (a full disk) stops the sampling, not the command: the
stream is cut back to its whole chunks and kept, the command runs to its end, and
:class:`RecordingFailed` (one line: why, what is kept where) carries its exit code.

Scopes. "node" measures every process on the node; "process" opens the sources that can
count one process tree (perf) on the command's, under their plain names, and the others
(/proc totals, RAPL) on the node; "both", the default with a command, measures the node as
"node" does and, beside it, the command's own process tree with the sources' ``for_command``
counterparts, whose metrics are named ``cmd_...``
(:mod:`phasekit.record.sources.tree`). ``meta["recording"]["command_metrics"]`` lists the
metrics that measure the command (in "process" scope, those of the per-process sources).

The command. It is started held before ``exec`` (a tiny trampoline waits on a pipe, with the
default dispositions of SIGINT, SIGPIPE and SIGXFSZ restored), the sources are opened on it
(its process tree: counters inherited by its children, started at its ``exec``), the first
readings are taken, and only then is it released; a failed ``exec`` is a UsageError and
nothing is written. When standard input is not a terminal the command gets a process group
of its own and stop signals go to the whole group at once (batch schedulers send SIGTERM
before SIGKILL); in a terminal, Ctrl-C reaches the command directly, so the recorder lets it
end on its own for ``grace`` seconds before passing the signal on. ``grace`` seconds after
that, or at a second signal, the command is killed. Sampling goes on until it has exited.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import math
import os
import queue
import re
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
from typing import Any, Literal

import numpy as np

from phasekit.errors import PhasekitError, PhasekitWarning, UnsupportedError, UsageError
from phasekit.record.sources.base import COMMAND_PREFIX, Metric, Scope, Source
from phasekit.results import short_repr

__all__ = ["MIN_INTERVAL", "RecordScope", "Recorder", "RecordingFailed", "RecordingSummary",
           "partial_path"]

#: What a recording measures: the node, the command's process tree, or both (module docstring).
RecordScope = Literal["node", "process", "both"]

logger = logging.getLogger(__name__)

#: Shortest sampling interval accepted (our choice: below 1 ms the sampling cost of a Python
#: loop is a large share of the interval and the timer jitter is of the same order).
MIN_INTERVAL = 0.001
#: How often chunks go to disk (the issue: an interruption loses at most the last second).
FLUSH_INTERVAL = 1.0
#: Seconds the command gets to end after a stop signal before it is signalled, then killed.
GRACE = 2.0
#: Shortest span of a sample, in intervals (see the module docstring).
MIN_SPAN = 0.25
#: Rows per Parquet row group (or Arrow chunk) of the final file.
ROWS_PER_GROUP = 65_536
#: Longest single sleep: a stop signal or the command's exit is noticed within it.
MAX_SLEEP = 0.05
_STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP")
                      if hasattr(signal, n))

_TRAMPOLINE = r"""
import errno, os, signal, sys
for name in ("SIGINT", "SIGPIPE", "SIGXFSZ"):
    if hasattr(signal, name):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
go_fd, status_fd = int(sys.argv[1]), int(sys.argv[2])
os.set_inheritable(status_fd, False)
go = os.read(go_fd, 1)
os.close(go_fd)
if not go:
    os._exit(125)
argv = sys.argv[3:]
try:
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        if exc.errno != errno.ENOEXEC:
            raise
        os.execv("/bin/sh", ["/bin/sh", *argv])  # a script without #!, as shells run it
except OSError as exc:
    os.write(status_fd, ("%d:%s" % (exc.errno or 0, exc.strerror or exc)).encode())
    os._exit(127 if exc.errno == errno.ENOENT else 126)
"""


def partial_path(output: str | os.PathLike[str]) -> Path:
    """Where the recording streams while it runs: ``OUTPUT.partial.arrows``."""
    output = Path(output)
    return output.with_name(output.name + ".partial.arrows")


@dataclass(frozen=True)
class RecordingSummary:
    """What a recording did: the file, the timing achieved and how it ended.

    ``n_samples`` counts the samples taken; the file has ``n_samples + missed_ticks`` rows
    once read back when ticks were skipped after the first sample.
    """

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
    sampler: str = "python"
    command_metrics: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return short_repr(
            self, self.output, f"{self.n_samples} samples", f"{len(self.metrics)} metrics",
            f"every {self.interval * 1e3:g} ms", f"stopped: {self.stopped_by}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": str(self.output), "n_samples": self.n_samples, "interval_s": self.interval,
            "duration_s": self.duration, "achieved_interval_s": self.achieved_interval,
            "jitter_s": {"p50": self.jitter_p50, "p99": self.jitter_p99, "max": self.jitter_max},
            "missed_ticks": self.missed_ticks, "stopped_by": self.stopped_by,
            "exit_code": self.exit_code, "metrics": list(self.metrics),
            "sources": list(self.sources), "dropped_sources": dict(self.dropped),
            "recorder_cpu_s": self.recorder_cpu_s, "sampler": self.sampler,
            "command_metrics": list(self.command_metrics),
        }


@dataclass
class _Opened:
    """A source opened for this recording and the columns of its readings we keep."""

    source: Source
    metrics: tuple[Metric, ...]
    keep: list[int]
    scope: Scope = "node"


class Recorder:
    """Samples ``sources`` every ``interval`` seconds into a crash-safe profile file.

    ``metrics`` selects metrics by name (all metrics of the sources when None); a name no
    source provides is a UsageError before anything starts. ``scope`` "node" measures the
    whole node, "process" the command's process tree (sources without a per-process view,
    such as /proc or RAPL, still measure the node, which the metadata says), "both" the node
    and, beside it, the command's process tree as ``cmd_...`` metrics (module docstring).
    None (default): "both" with a command, "node" without.
    """

    def __init__(self, sources: Sequence[Source], *, interval: float = 0.005,
                 metrics: Sequence[str] | None = None, scope: RecordScope | None = None,
                 flush_interval: float = FLUSH_INTERVAL, grace: float = GRACE) -> None:
        self.sources = list(sources)
        self.interval = interval
        self.metrics = None if metrics is None else list(metrics)
        self.scope = scope
        self.flush_interval = flush_interval
        self.grace = grace
        self._scope: RecordScope = scope or "node"  # of the run in progress

    def scope_for(self, command: Sequence[str] | None) -> RecordScope:
        """The scope a run of ``command`` records: ``scope``, else "both" with a command and
        "node" without."""
        return self.scope or ("both" if command else "node")

    # --- checks before anything starts ----------------------------------------------------
    def _validate(self, output: Path, command: Sequence[str] | None,
                  duration: float | None) -> None:
        if not (math.isfinite(self.interval) and self.interval >= MIN_INTERVAL):
            raise UsageError(f"seconds; the shortest interval is {MIN_INTERVAL * 1e3:g} ms",
                             parameter="interval", value=self.interval)
        if self._scope not in ("node", "process", "both"):
            raise UsageError("expected node, process or both", parameter="scope",
                             value=self._scope)
        if not command and duration is None:
            raise UsageError("nothing to record: give a command or a duration")
        if duration is not None and not (math.isfinite(duration) and duration > 0):
            raise UsageError("expected a positive number of seconds", parameter="duration",
                             value=duration)
        if self._scope in ("process", "both") and not command:
            raise UsageError("measures a command's process tree: give the command",
                             parameter="scope", value=self._scope)
        if not self.sources:
            raise UnsupportedError("no source to record from")
        names = [s.name for s in self.sources if s.name != "command"]
        if len(set(names)) != len(names):
            raise UsageError(f"a source is named twice in {','.join(names)}",
                             parameter="sources")
        if command:
            _check_command(command[0])
        from phasekit.io import profile_format

        profile_format(output)  # a name whose format is known
        named = {"parameter": "output", "value": os.fspath(output), "option": "-o"}
        if output.is_dir():
            raise UsageError("is a directory; expected a file name", **named)
        if not output.parent.is_dir():
            raise UsageError(f"directory {output.parent} does not exist", **named)
        if not os.access(output.parent, os.W_OK):
            raise UsageError(f"directory {output.parent} is not writable", **named)
        partial = partial_path(output)
        if partial.exists():
            raise UsageError(f"{partial} exists: the samples of a recording cut short, which "
                             "this one would overwrite; read it (phasekit info / analyze) and "
                             "move it away or delete it first")

    def _plan(self) -> list[tuple[Source, Scope]]:
        """Each source to open and the scope to open it in: with scope "both", the node's
        sources in node scope and, after them, their counterparts for the command."""
        if self._scope != "both":
            return [(source, self._scope) for source in self.sources]
        counterparts = []
        for source in self.sources:
            make = getattr(source, "for_command", None)
            counterpart = make(self.interval) if make is not None else None
            if counterpart is not None:
                counterparts.append((counterpart, "process"))
        return [*((source, "node") for source in self.sources), *counterparts]

    def _open_sources(self, pid: int | None) -> list[_Opened]:
        """Open every source that provides a wanted metric; check the names first."""
        wanted = self.metrics
        offered: dict[str, Source] = {}
        plan = self._plan()
        for source, _ in plan:
            try:
                metrics = source.probe().metrics
            except Exception as exc:  # a probe that fails offers nothing
                logger.warning("source %s: probe failed: %s", source.name, exc)
                continue
            for metric in metrics:
                if metric.name in offered and (wanted is None or metric.name in wanted):
                    raise UsageError(f"metric {metric.name!r} is provided by both "
                                     f"{offered[metric.name].name} and {source.name}; give "
                                     "one of them another name", parameter="sources")
                offered.setdefault(metric.name, source)
        if wanted is not None:
            unknown = [m for m in wanted if m not in offered]
            if unknown:
                available = ", ".join(offered) or "none"
                raise UsageError(f"no source here provides {', '.join(unknown)}; available: "
                                 f"{available} (see 'phasekit sources')", parameter="metrics",
                                 option="--metric")
            if len(set(wanted)) != len(wanted):
                raise UsageError(f"a metric is named twice in {','.join(wanted)}",
                                 parameter="metrics", option="--metric")
        opened: list[_Opened] = []
        try:
            for source, scope in plan:
                if wanted is not None and not any(offered.get(m) is source for m in wanted):
                    continue
                if scope == "process" and hasattr(source, "enable_on_exec"):
                    source.enable_on_exec = True  # count from the command's exec on
                try:
                    metrics = source.open(scope, pid)
                except UnsupportedError as exc:
                    if wanted is not None:
                        raise
                    warnings.warn(f"source {source.name} left out: {exc}", PhasekitWarning,
                                  stacklevel=3)
                    continue
                keep = [j for j, m in enumerate(metrics)
                        if offered.get(m.name) is source and (wanted is None or m.name in wanted)]
                opened.append(_Opened(source, metrics, keep, scope))
            taken = {entry.metrics[j].name for entry in opened for j in entry.keep}
            if wanted is not None:
                missing = [m for m in wanted if m not in taken]
                if missing:
                    own = [COMMAND_PREFIX + m for m in missing if COMMAND_PREFIX + m in offered]
                    hint = (f" here (the command's own: {', '.join(own)})" if own else "")
                    raise UnsupportedError(f"metric {', '.join(missing)} could not be "
                                           f"opened{hint}")
            if not taken:
                raise UnsupportedError("no source could be opened here (see 'phasekit "
                                       "sources')")
        except BaseException:
            for entry in opened:
                with contextlib.suppress(Exception):
                    entry.source.close()
            raise
        return opened

    # --- the recording ------------------------------------------------------------------
    def run(self, output: str | os.PathLike[str], *, command: Sequence[str] | None = None,
            duration: float | None = None,
            status: Callable[[float, int], None] | None = None,
            command_stdout: int | None = None,
            command_stdin: int | None = None) -> RecordingSummary:
        """Record until ``command`` exits (or ``duration`` seconds pass, or a signal).

        With both a command and a duration the command is stopped (SIGTERM, then SIGKILL)
        when the duration is over. ``status(elapsed_s, n_samples)`` is called after every
        chunk written; ``command_stdout`` and ``command_stdin`` are file descriptors for the
        command's standard output and input (default: ours; a command given its own input
        never reads the terminal, so it always gets a process group of its own). Returns the
        summary; OUTPUT then holds the complete profile.
        """
        output = Path(output)
        command = list(command) if command else None
        self._scope = self.scope_for(command)
        self._validate(output, command, duration)
        stop = _StopFlag()
        previous_handlers = _install_handlers(stop)
        try:
            child = PausedChild(command, command_stdout, command_stdin) if command else None
            try:
                opened = self._open_sources(child.pid if child else None)
                try:
                    return self._record(output, opened, child, command, duration, status,
                                        stop)
                finally:
                    for entry in opened:
                        with contextlib.suppress(Exception):
                            entry.source.close()
            finally:
                if child:
                    child.abandon(self.grace)
        finally:
            _restore_handlers(previous_handlers)

    def _header(self, opened: list[_Opened], command: list[str] | None,
                start_utc: _dt.datetime) -> dict[str, Any]:
        from phasekit.version import version

        metrics = [entry.metrics[j] for entry in opened for j in entry.keep]
        units = {m.name: (m.rate_unit or m.unit) if m.kind == "counter" else m.unit
                 for m in metrics}
        node_only = [entry.source.name for entry in opened
                     if self._scope != "node" and not _measures_command(entry)]
        recording = {
            "host": socket.gethostname(), "pid": os.getpid(), "cpu_model": _cpu_model(),
            "n_cpus": os.cpu_count(), "interval_s": self.interval, "scope": self._scope,
            "sources": [{"name": entry.source.name,
                         "measures": "command" if _measures_command(entry) else "node",
                         "metrics": [entry.metrics[j].name for j in entry.keep],
                         **_source_metadata(entry.source)}
                        for entry in opened],
            "node_wide_sources": node_only,
            "command_metrics": _command_metrics(opened),
            "kinds": {m.name: m.kind for m in metrics},
            "values": "counters: increase per nominal interval (increase x interval / measured "
                      "span), or per second where the unit is a rate (W); gauges: as read at "
                      "the end of the interval; row time: start of the interval",
            "command": command, "start_utc": start_utc.isoformat(),
            "phasekit_version": version(), "flush_interval_s": self.flush_interval,
            "complete": False,
        }
        return {"version": 1, "period": self.interval, "start": 0.0,
                "node": socket.gethostname(), "metrics": [m.name for m in metrics],
                "units": {k: v for k, v in units.items() if v}, "meta": {"recording": recording}}

    def _record(self, output: Path, opened: list[_Opened], child: PausedChild | None,
                command: list[str] | None, duration: float | None,
                status: Callable[[float, int], None] | None, stop: _StopFlag
                ) -> RecordingSummary:
        from phasekit.io.arrow import StreamAppender

        start_utc = _dt.datetime.now(_dt.UTC)
        header = self._header(opened, command, start_utc)
        partial = partial_path(output)
        try:
            appender = StreamAppender(partial, header["metrics"], header)
        except OSError as exc:  # the header does not fit (a full disk): nothing has run yet
            partial.unlink(missing_ok=True)
            raise UsageError(f"cannot write {partial}: {_why(exc)}") from None
        layout = _Layout.of(opened)
        writer = _ChunkWriter(appender, layout, self.interval, status)
        loop = _choose_loop(opened, layout, self.interval, self.flush_interval, writer)
        cpu_start = time.process_time()
        started = time.monotonic()
        try:
            loop.run(stop, child, duration, self.grace)
            writer.finish()
        except _ExecFailed as exc:
            writer.finish(raise_error=False)
            appender.abandon()
            partial.unlink(missing_ok=True)
            raise UsageError(f"cannot run {command[0] if command else '?'}: {exc}") from None
        except _WriteFailed as failed:
            writer.finish(raise_error=False)
            appender.abandon()
            writer.cut_back()
            code = _outlive(child, stop, started + (duration or math.inf), self.grace)
            raise _write_failure(failed.error, partial, appender.n_rows, command, code,
                                 f"recording failed at {writer.failed_at:.1f} s") from None
        except BaseException as exc:
            writer.finish(raise_error=False)
            appender.abandon()
            if appender.n_rows == 0:  # nothing recorded: leave nothing behind
                partial.unlink(missing_ok=True)
                if isinstance(exc, PhasekitError):
                    raise
            if isinstance(exc, OSError | PhasekitError):
                raise _kept(partial, exc) from None
            raise
        cpu = time.process_time() - cpu_start
        exit_code = child.exit_code() if child else None
        try:
            appender.close()
        except OSError as exc:  # the end-of-stream marker does not fit
            writer.cut_back()
            raise _write_failure(exc, partial, appender.n_rows, command, exit_code,
                                 "recording could not be closed") from None
        summary = loop.summary(output, exit_code, header["metrics"], cpu,
                               stopped_by=stop.reason or ("command exited" if child
                                                          else "duration"),
                               sources=[e.source.name for e in opened],
                               command_metrics=header["meta"]["recording"]["command_metrics"])
        try:
            _finalize(partial, output, header, summary, start_utc)
        except (OSError, PhasekitError) as exc:
            raise _write_failure(exc, partial, appender.n_rows, command, exit_code,
                                 f"could not write {output}") from None
        return summary


class RecordingFailed(PhasekitError, RuntimeError):
    """A recording that could not be written once it had started (a full disk). The samples
    written before are kept in ``partial`` (``n_samples`` of them; the file is removed when
    there are none); the command was left to run to its end, and ``exit_code`` is its exit
    code (what ``phasekit record`` exits with, as documented), 1 without a command."""

    def __init__(self, message: str, *, partial: Path, n_samples: int,
                 command_exit_code: int | None) -> None:
        super().__init__(message)
        self.partial = partial
        self.n_samples = n_samples
        self.command_exit_code = command_exit_code
        self.exit_code = 1 if command_exit_code is None else command_exit_code


def _why(exc: BaseException) -> str:
    """The reason of an I/O error in a few words: its strerror (Arrow's errors carry the
    errno in their text only), else its first line."""
    text = str(exc).strip()
    found = re.search(r"\[errno (\d+)\]", text)
    if found:
        return os.strerror(int(found.group(1)))
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return (text.splitlines() or [type(exc).__name__])[0][:200]


def _write_failure(exc: BaseException, partial: Path, n_samples: int,
                   command: list[str] | None, exit_code: int | None, what: str
                   ) -> RecordingFailed:
    """The one-line error of a recording that could not be written: why, what is kept where,
    what became of the command."""
    if n_samples and partial.exists():
        kept = (f"the {n_samples} samples written before are kept in {partial} (phasekit "
                "info and analyze read it)")
    else:
        partial.unlink(missing_ok=True)
        kept = "no sample had been written"
    ran = (f"; {command[0]} ran to its end and exited with code {exit_code}"
           if command and exit_code is not None else "")
    return RecordingFailed(f"{what}: {_why(exc)}; {kept}{ran}",
                           partial=partial, n_samples=n_samples, command_exit_code=exit_code)


def _outlive(child: PausedChild | None, stop: _StopFlag, end: float, grace: float
             ) -> int | None:
    """After the recording stopped early: wait for the command to end on its own (a stop
    signal, or the end of ``--duration`` at monotonic time ``end``, still reaches it as
    while recording); its exit code."""
    if child is None or not child.released:
        return None
    escalation = _Escalation(child, grace)
    while not child.exited():
        if time.monotonic() >= end and stop.reason is None:
            stop.set("duration", signal.SIGTERM)
        escalation.step(stop)
        time.sleep(MAX_SLEEP)
    return child.exit_code()


def _kept(partial: Path, exc: BaseException) -> PhasekitError:
    """The one-line error of a recording that failed after it started: what was kept."""
    what = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
    kept = (f"; the samples recorded so far are in {partial}" if partial.exists()
            else "")
    return UsageError(f"recording failed: {what}{where}{kept}")


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
    """Why and when the recording was asked to stop; how many stop signals came."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self.signum: int | None = None
        self.at: float | None = None
        self.count = 0

    def set(self, reason: str, signum: int | None = None) -> None:
        self.count += 1
        if self.reason is None:
            self.reason, self.signum, self.at = reason, signum, time.monotonic()


class _ExecFailed(Exception):
    """The command could not be executed (its trampoline reported the errno)."""


def _install_handlers(stop: _StopFlag) -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, Any] = {}

    def handler(number: int, frame: object) -> None:
        stop.set(signal.Signals(number).name, number)

    for signum in _STOP_SIGNALS:
        previous[signum] = signal.signal(signum, handler)
    return previous


def _restore_handlers(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


class PausedChild:
    """The command, started but held before ``exec`` until :meth:`release`."""

    def __init__(self, command: list[str], stdout: int | None = None,
                 stdin: int | None = None) -> None:
        read_end, self._go = os.pipe()
        self._status, status_end = os.pipe()
        self.own_group = stdin is not None or not _stdin_is_terminal()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-S", "-c", _TRAMPOLINE, str(read_end), str(status_end),
                 *command], pass_fds=(read_end, status_end), stdout=stdout, stdin=stdin,
                process_group=0 if self.own_group else None)
        except OSError as exc:
            os.close(self._go)
            os.close(self._status)
            raise UsageError(f"cannot start {command[0]}: {exc.strerror or exc}") from None
        finally:
            os.close(read_end)
            os.close(status_end)
        self.pid = self.process.pid
        self.released = False

    def release(self) -> None:
        """Let the command ``exec``; raises _ExecFailed when that fails."""
        os.write(self._go, b"g")
        os.close(self._go)
        self.released = True
        report = b""
        while chunk := os.read(self._status, 512):  # EOF: exec closed the status pipe
            report += chunk
        os.close(self._status)
        if report:
            code, _, message = report.decode(errors="replace").partition(":")
            self.process.wait()
            raise _ExecFailed(message or os.strerror(int(code or 0)))

    def exited(self) -> bool:
        return self.process.poll() is not None

    def exit_code(self) -> int | None:
        code = self.process.poll()
        if code is None:
            return None
        return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as shells say

    def send(self, signum: int) -> None:
        """``signum`` to the command's process group (or to the command when it shares ours)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self.own_group:
                os.killpg(self.pid, signum)
            else:
                os.kill(self.pid, signum)

    def abandon(self, grace: float) -> None:
        """Make sure nothing of the command outlives the recorder."""
        if not self.released:
            with contextlib.suppress(OSError):
                os.close(self._go)  # the trampoline reads EOF and exits 125 without exec
            with contextlib.suppress(OSError):
                os.close(self._status)
            self.released = True
        if self.process.poll() is None:
            self.send(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=grace)
        if self.process.poll() is None:
            self.send(signal.SIGKILL)
            self.process.wait()
        elif self.own_group:  # the leader is gone; stragglers of its group must go too
            self.send(signal.SIGKILL)


def _stdin_is_terminal() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


class _WriteFailed(Exception):
    """The writer thread could not append a chunk (``error``: why, e.g. a full disk)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _ChunkWriter:
    """Turns chunks of cumulative readings into stored values, in a thread of its own.

    After each chunk appended it notes the size of the stream (``good_size``); when an append
    fails (a full disk), later chunks are dropped, :meth:`put` and :meth:`finish` raise
    :class:`_WriteFailed`, and :meth:`cut_back` truncates the stream to its whole chunks."""

    def __init__(self, appender: Any, layout: _Layout, interval: float,
                 status: Callable[[float, int], None] | None) -> None:
        self.appender = appender
        self.layout = layout
        self.interval = interval
        self.status = status
        self.path: Path | None = getattr(appender, "path", None)
        self.good_size = self._size()
        self.queue: queue.Queue[tuple[np.ndarray, np.ndarray] | None] = queue.Queue()
        self.error: BaseException | None = None
        self.failed_at = 0.0  # seconds into the recording of the first sample not written
        self.thread = threading.Thread(target=self._work, name="phasekit-writer", daemon=True)
        self.thread.start()

    def _size(self) -> int | None:
        try:
            return None if self.path is None else os.stat(self.path).st_size
        except OSError:
            return None

    def put(self, previous: np.ndarray, rows: np.ndarray) -> None:
        """``previous``: the row before the chunk (tick, time, readings); ``rows``: the chunk."""
        if self.error is not None:
            raise _WriteFailed(self.error)
        self.queue.put((previous, rows))

    def finish(self, raise_error: bool = True) -> None:
        if self.thread.is_alive():
            self.queue.put(None)
            self.thread.join()
        if self.error is not None and raise_error:
            raise _WriteFailed(self.error)

    def cut_back(self) -> None:
        """Truncate the stream to the chunks appended whole (a failed append may leave part
        of a chunk, and a full disk gets the space back)."""
        if self.path is None or self.good_size is None:
            return
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_size > self.good_size:
                os.truncate(self.path, self.good_size)

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
            except BaseException as exc:  # reported to the sampling loop at its next flush
                self.error = exc
                self.failed_at = float(item[1][0, 1])
                continue
            self.good_size = self._size()
            if self.status is not None:
                try:
                    self.status(float(item[1][-1, 1]), self.appender.n_rows)
                except Exception as exc:  # a display problem never stops a recording
                    logger.debug("status display failed: %s", exc)


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


class _Lateness:
    """Sample lateness as a 1 µs histogram (exact percentiles to 1 µs, bounded memory)."""

    BINS = 1_000_000  # up to 1 s; later samples go to the last bin, the maximum is exact

    def __init__(self) -> None:
        self.counts = np.zeros(self.BINS, np.int64)
        self.max = 0.0

    def add(self, values: np.ndarray) -> None:
        if values.size:
            index = np.clip((values * 1e6).astype(np.int64), 0, self.BINS - 1)
            self.counts += np.bincount(index, minlength=self.BINS)
            self.max = max(self.max, float(values.max()))

    def percentile(self, q: float) -> float:
        total = int(self.counts.sum())
        if total == 0:
            return 0.0
        rank = max(1, math.ceil(q / 100 * total))
        return float(np.searchsorted(np.cumsum(self.counts), rank)) * 1e-6


class _SamplingLoop:
    """The timed loop: read every source at each tick, hand chunks to the writer."""

    def __init__(self, opened: list[_Opened], layout: _Layout, interval: float,
                 flush_interval: float, writer: _ChunkWriter) -> None:
        self.opened = opened
        self.layout = layout
        self.interval = interval
        self.flush_interval = flush_interval
        self.chunk_rows = max(1, math.ceil(flush_interval / interval))
        self.writer = writer
        self.lateness = _Lateness()
        self.n_rows = 0
        self.missed = 0
        self.first_time = 0.0
        self.last_time = 0.0
        self.dropped: dict[str, str] = {}
        self.description = "python"

    def _drop(self, index: int, exc: Exception, elapsed: float) -> None:
        """Source ``index`` failed: warn once; its metrics are NaN from here on."""
        name = self.opened[index].source.name
        self.dropped[name] = f"{type(exc).__name__}: {exc}"
        warnings.warn(f"source {name} failed and was dropped at {elapsed:.3f} s "
                      f"({exc}); its metrics are NaN from there on", PhasekitWarning,
                      stacklevel=3)

    def _read_all(self, readers: list[Callable[[], list[float]]], row: np.ndarray,
                  elapsed: float) -> None:
        for index, (read, (lo, hi)) in enumerate(zip(readers, self.layout.source_slices,
                                                     strict=True)):
            try:
                row[lo:hi] = read()
            except Exception as exc:
                self._drop(index, exc, elapsed)
                width = hi - lo
                readers[index] = lambda width=width: [math.nan] * width
                row[lo:hi] = math.nan

    def _first_readings(self, row: np.ndarray) -> None:
        """The baseline readings: a source failing here fails the recording, before the
        command runs."""
        for entry, (lo, hi) in zip(self.opened, self.layout.source_slices, strict=True):
            try:
                row[lo:hi] = entry.source.read()
            except Exception as exc:
                raise UnsupportedError(f"source {entry.source.name}: the first reading "
                                       f"failed: {exc}") from None

    def run(self, stop: _StopFlag, child: PausedChild | None, duration: float | None,
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
        self._first_readings(previous[2:])
        previous[1] = last_read = monotonic() - t0
        if child is not None:
            child.release()  # only now: the first readings precede every step of the command
        end = math.inf if duration is None else duration
        escalation = _Escalation(child, grace)
        tick = 0
        filled = 0
        last_flush = last_read
        while True:
            tick += 1
            if tick * interval < last_read + MIN_SPAN * interval:  # the last read ran long
                skipped = math.ceil((last_read + MIN_SPAN * interval) / interval) - tick
                tick += skipped
                self.missed += skipped
            deadline = t0 + tick * interval
            final = False
            while (delay := deadline - monotonic()) > 0:  # sleep, awake to stops and exits
                sleep(min(delay, MAX_SLEEP))
                if child is None:
                    if stop.reason is not None:
                        final = True
                        break
                elif child.exited():
                    final = True
                    break
                else:
                    escalation.step(stop)
            now = monotonic()
            if final and now - t0 - last_read < MIN_SPAN * interval:
                break  # too close to the last sample to be one
            lateness = 0.0 if final else now - deadline
            if lateness >= interval:
                skipped = int(lateness // interval)
                tick += skipped
                self.missed += skipped
                lateness -= skipped * interval
            row = chunk[filled]
            row[0] = tick
            self._read_all(readers, row[2:], now - t0)
            row[1] = last_read = monotonic() - t0
            late[filled] = lateness
            filled += 1
            if filled == self.chunk_rows or last_read - last_flush >= self.flush_interval:
                self._flush(previous, chunk, late, filled)
                previous = chunk[filled - 1].copy()
                filled = 0
                last_flush = last_read
            if final:
                break
            if child is not None:
                if child.exited():
                    break
                if last_read >= end and stop.reason is None:
                    stop.set("duration", signal.SIGTERM)
                escalation.step(stop)
            elif stop.reason is not None or last_read >= end:
                break
        if filled:
            self._flush(previous, chunk, late, filled)

    def _flush(self, previous: np.ndarray, chunk: np.ndarray, late: np.ndarray,
               filled: int) -> None:
        rows = chunk[:filled].copy()
        if self.n_rows == 0:
            self.first_time = float(previous[1])
        self.writer.put(previous.copy(), rows)
        self.lateness.add(late[:filled])
        self.n_rows += filled
        self.last_time = float(rows[-1, 1])

    def summary(self, output: Path, exit_code: int | None, metrics: list[str], cpu: float, *,
                stopped_by: str, sources: list[str],
                command_metrics: Sequence[str] = ()) -> RecordingSummary:
        achieved = ((self.last_time - self.first_time) / self.n_rows if self.n_rows
                    else math.nan)
        return RecordingSummary(
            output=output, n_samples=self.n_rows, interval=self.interval,
            duration=self.last_time, achieved_interval=achieved,
            jitter_p50=self.lateness.percentile(50), jitter_p99=self.lateness.percentile(99),
            jitter_max=self.lateness.max, missed_ticks=self.missed, stopped_by=stopped_by,
            exit_code=exit_code, metrics=tuple(metrics), sources=tuple(sources),
            dropped=dict(self.dropped), recorder_cpu_s=cpu, sampler=self.description,
            command_metrics=tuple(command_metrics))


#: The time slice the compiled sampling thread asks for (sched_setattr, Linux >= 6.12): short
#: enough that its wake-up preempts a CPU-bound task at once (measured, 2-core VM, both cores
#: busy, an ad-hoc C test: sample jitter p99 3.6 ms with the default slice, 0.17 ms with
#: 0.3 ms); our choice.
SAMPLER_SLICE_NS = 300_000


def _slice_words(status: int) -> str:
    """What became of the time slice request (the sampler's status code)."""
    if status == 1:
        return f"time slice {SAMPLER_SLICE_NS / 1e6:g} ms"
    if status == 2:
        return "time slice request not honoured: Linux < 6.12"
    if status < 0:
        return f"time slice request refused: {os.strerror(-status)}"
    return "default time slice"


def _choose_loop(opened: list[_Opened], layout: _Layout, interval: float,
                 flush_interval: float, writer: _ChunkWriter) -> _SamplingLoop:
    """The compiled loop when every source can be sampled by it, else the Python loop (and
    why, in ``description``). ``PHASEKIT_SAMPLER=python`` forces the Python loop."""
    why = ""
    if os.environ.get("PHASEKIT_SAMPLER", "").lower() == "python":
        why = "PHASEKIT_SAMPLER=python"
    else:
        try:
            from phasekit.record import _sampler  # noqa: F401
        except ImportError as exc:
            why = f"the compiled sampler is not built: {exc}"
    if not why:
        slow = [e.source.name for e in opened
                if e.source.raw_reads() is None and not hasattr(e.source, "read_at")]
        if slow:
            why = f"source {', '.join(slow)} reads in Python only"
    if why:
        loop = _SamplingLoop(opened, layout, interval, flush_interval, writer)
        loop.description = f"python ({why})"
        return loop
    return _NativeLoop(opened, layout, interval, flush_interval, writer)


class _NativeLoop(_SamplingLoop):
    """The same timing in a native thread (``phasekit.record._sampler``): the thread performs
    the sources' raw reads at each tick; this thread takes a chunk of raw rows about every
    flush interval, decodes it with the sources' ``decode`` (or ``read_at`` for sources with
    a thread of their own) and hands it to the writer. No Python code runs per sample."""

    def run(self, stop: _StopFlag, child: PausedChild | None, duration: float | None,
            grace: float) -> None:
        from phasekit.record._sampler import Sampler

        reads, spans = [], []
        for entry in self.opened:
            raw = entry.source.raw_reads()
            if raw is None:
                spans.append(None)
                continue
            spans.append((len(reads), len(reads) + len(raw)))
            reads.extend((r.fd, r.size, r.pread) for r in raw)
        end = math.inf if duration is None else duration
        sampler = Sampler(reads, self.interval, self.flush_interval,
                          MIN_SPAN, end if child is None else math.inf, SAMPLER_SLICE_NS)
        self._spans = spans
        width = 2 + self.layout.width
        previous = np.empty(width)
        t0, read_end, raw = sampler.first()
        self._t0 = t0
        for index, (entry, (lo, hi)) in enumerate(zip(self.opened, self.layout.source_slices,
                                                      strict=True)):
            try:
                previous[2 + lo:2 + hi] = self._decode(index, raw, t0 + read_end)
            except Exception as exc:
                raise UnsupportedError(f"source {entry.source.name}: the first reading "
                                       f"failed: {exc}") from None
        previous[0], previous[1] = 0, read_end
        if child is not None:
            child.release()
        sampler.start()
        escalation = _Escalation(child, grace)
        stopping = False
        try:
            while True:
                chunk = sampler.take(MAX_SLEEP)
                if chunk == ():
                    break
                if chunk is not None:
                    previous = self._take(chunk, previous, width)
                if stopping:
                    continue
                if child is None:
                    if stop.reason is not None:
                        sampler.stop()
                        stopping = True
                elif child.exited():
                    sampler.stop()
                    stopping = True
                else:
                    if sampler.status()["last_read"] >= end and stop.reason is None:
                        stop.set("duration", signal.SIGTERM)
                    escalation.step(stop)
        finally:
            sampler.stop()
            sampler.join()
            status = sampler.status()
            self.missed = int(status["missed"])
            self.description = f"compiled ({_slice_words(int(status['slice']))})"

    def _decode(self, index: int, raw: list[bytes | int], when: float) -> list[float]:
        span = self._spans[index]
        source = self.opened[index].source
        if span is None:
            return source.read_at(when)  # type: ignore[attr-defined]
        return source.decode(raw[span[0]:span[1]])

    def _take(self, chunk: tuple[list[int], list[float], list[float], list[list[bytes | int]]],
              previous: np.ndarray, width: int) -> np.ndarray:
        ticks, times, late, rows = chunk
        n = len(ticks)
        block = np.empty((n, width))
        block[:, 0] = ticks
        block[:, 1] = times
        for i, raw in enumerate(rows):
            row = block[i, 2:]
            for index, (lo, hi) in enumerate(self.layout.source_slices):
                if self.opened[index].source.name in self.dropped:
                    row[lo:hi] = math.nan
                    continue
                try:
                    row[lo:hi] = self._decode(index, raw, self._t0 + times[i])
                except Exception as exc:
                    self._drop(index, exc, times[i])
                    row[lo:hi] = math.nan
        self._flush(previous, block, np.asarray(late), n)
        return block[-1].copy()


class _Escalation:
    """How a stop request reaches the command (see the module docstring)."""

    def __init__(self, child: PausedChild | None, grace: float) -> None:
        self.child = child
        self.grace = grace
        self.signalled_at: float | None = None
        self.killed = False

    def step(self, stop: _StopFlag) -> None:
        child = self.child
        if child is None or stop.reason is None or self.killed:
            return
        now = time.monotonic()
        if stop.count > 1 or (self.signalled_at is not None
                              and now - self.signalled_at >= self.grace):
            child.send(signal.SIGKILL)
            self.killed = True
            return
        if self.signalled_at is None:
            from_terminal = not child.own_group and stop.reason != "duration"
            if not from_terminal or now - (stop.at or now) >= self.grace:
                child.send(stop.signum or signal.SIGTERM)
                self.signalled_at = now


def _finalize(partial: Path, output: Path, header: dict[str, Any], summary: RecordingSummary,
              start_utc: _dt.datetime) -> None:
    """Convert the closed stream into OUTPUT with the summary; remove the stream."""
    from phasekit.io import profile_format

    recording = dict(header["meta"]["recording"])
    recording.update({
        "complete": True, "end_utc": (start_utc + _dt.timedelta(
            seconds=summary.duration + summary.interval)).isoformat(),
        **{k: v for k, v in summary.to_dict().items()
           if k not in ("output", "metrics", "sources", "command_metrics")},
    })
    metadata = {**header, "meta": {**header["meta"], "recording": recording}}
    if profile_format(output) == "csv":
        _finalize_in_memory(partial, output, recording)
    else:
        _finalize_by_chunks(partial, output, metadata, summary.interval)
    with contextlib.suppress(OSError):
        partial.unlink()


def _finalize_in_memory(partial: Path, output: Path, recording: dict[str, Any]) -> None:
    from phasekit.io import read_profile, write_profile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhasekitWarning)
        profile = read_profile(partial, format="arrow")
    write_profile(profile.replace(meta={**profile.meta, "recording": recording}), output)


def _finalize_by_chunks(partial: Path, output: Path, metadata: dict[str, Any],
                        interval: float) -> None:
    """Copy the stream chunk by chunk into Parquet or Arrow, skipped ticks as NaN rows, with
    the final metadata; memory is one chunk, whatever the length of the recording."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from phasekit.io import atomic_path, profile_format
    from phasekit.io.parquet import float64_array

    as_parquet = profile_format(output) == "parquet"
    with pa.OSFile(str(partial), "rb") as source:
        reader = pa.ipc.open_stream(source)
        time_name = reader.schema.names[0]
        schema = reader.schema.with_metadata({b"phasekit": json.dumps(
            {**metadata, "time_column": time_name}, ensure_ascii=True,
            separators=(",", ":")).encode()})
        with atomic_path(output) as tmp, contextlib.ExitStack() as stack:
            if as_parquet:
                writer: Any = stack.enter_context(pq.ParquetWriter(str(tmp), schema))
            else:
                sink = stack.enter_context(pa.OSFile(str(tmp), "wb"))
                writer = stack.enter_context(pa.ipc.new_stream(sink, schema))
            next_row = 0
            pending: list[Any] = []  # tables not written yet: big row groups, small files
            pending_rows = 0
            for batch in reader:
                if batch.num_rows == 0:
                    continue
                rows = np.rint(batch.column(0).to_numpy() / interval).astype(np.int64)
                n = int(rows[-1]) + 1 - next_row
                grid = np.full((n, batch.num_columns - 1), np.nan)
                for j in range(1, batch.num_columns):
                    grid[rows - next_row, j - 1] = batch.column(j).to_numpy(
                        zero_copy_only=False)
                times = (next_row + np.arange(n)) * interval
                arrays = [float64_array(times)] + [float64_array(grid[:, j])
                                                   for j in range(grid.shape[1])]
                pending.append(pa.Table.from_arrays(arrays, schema=schema))
                pending_rows += n
                next_row += n
                if pending_rows >= ROWS_PER_GROUP:
                    writer.write_table(pa.concat_tables(pending))
                    pending, pending_rows = [], 0
            if pending:
                writer.write_table(pa.concat_tables(pending))


def _measures_command(entry: _Opened) -> bool:
    """Whether an opened source measures the command's process tree (not the node)."""
    return entry.scope == "process" and bool(getattr(entry.source, "per_process", False))


def _command_metrics(opened: Sequence[_Opened]) -> list[str]:
    """The metrics, among those kept, that measure the recorded command's process tree."""
    return [entry.metrics[j].name for entry in opened if _measures_command(entry)
            for j in entry.keep]


def _source_metadata(source: Source) -> dict[str, Any]:
    """What a source says about its own setup (perf: groups, counting mode, dropped events),
    when it offers ``metadata()``; JSON-safe or left out."""
    describe = getattr(source, "metadata", None)
    if describe is None:
        return {}
    try:
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
