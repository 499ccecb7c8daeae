"""The recorded command's own metrics: its process tree, beside the node's metrics.

Recording a command, the recorder measures the node (every process on it) and, unless told
otherwise (``--scope node``), the command itself: its process and every descendant. Those
metrics are named ``cmd_...`` (:data:`~phasekit.record.sources.base.COMMAND_PREFIX`) and the
profile's metadata lists them (``meta["recording"]["command_metrics"]``). Two sources:

:class:`CommandCounters` (``cmd-perf-sw``)
    The perf software counters opened in process scope on the command (``inherit``: every
    child counts, from its creation; an exited child's counts are added to its parent's by the
    kernel), from the command's ``exec`` on: ``cmd_task_clock`` (s of CPU), ``cmd_context_
    switches``, ``cmd_page_faults``, ``cmd_cpu_migrations``. Exact for the whole tree, read by
    the compiled sampling loop like the node's counters. (Hardware counters stay node-wide
    when the node is recorded too: opening them twice would make the kernel time-share the
    few counters of the PMU; ``--scope process`` counts them on the command's tree.)

:class:`ProcTreeSource` (``cmd-proc``)
    /proc of the tree's processes (proc(5)), found from the command's pid through
    ``/proc/PID/task/TID/children`` (or, on kernels without it, every process's parent):

    - ``cmd_cpu_user_s``, ``cmd_cpu_system_s``: utime + cutime and stime + cstime of
      ``/proc/PID/stat`` (clock ticks), summed over the tree's processes: a process's own CPU
      time plus that of the children it has waited for, so a child that has ended still
      counts, once, in its parent's;
    - ``cmd_runnable_s``, ``cmd_cpu_wait_s``: from ``/proc/PID/task/TID/schedstat`` of every
      thread (time on a CPU, time waiting for one on a run queue; ns): the time the command
      wanted a CPU (on one or waiting) and the time it waited. A CPU-bound command sharing
      its cores with other jobs gets less CPU time, but is runnable all the time it computes:
      ``cmd_runnable_s`` shows its own activity whatever else runs on the node;
    - ``cmd_runnable_threads`` (gauge): the tree's threads running or waiting for a CPU
      (state R of ``/proc/PID/task/TID/stat``) when read: 1 while a single-threaded command
      computes, 0 while it sleeps or waits for I/O, whether it gets a CPU at once or shares
      one; the number of busy threads of a parallel region;
    - ``cmd_rss_bytes`` (gauge): resident memory (``/proc/PID/statm``), summed over the tree;
    - ``cmd_read_bytes``, ``cmd_write_bytes``: bytes passed to read and write system calls
      (``rchar``, ``wchar`` of ``/proc/PID/io``: files, pipes, sockets, cached or not);
      ``cmd_disk_read_bytes``, ``cmd_disk_write_bytes``: bytes the storage layer read for the
      command and the bytes it dirtied for writing (``read_bytes``, ``write_bytes``; a file
      deleted before its pages are written out still counts). Like CPU times, /proc/PID/io
      includes the children a process has waited for.

    These files are a different set at every sample (processes and threads come and go), so
    they are read in a thread of this source, every recording interval but at most
    1/:data:`MIN_POLL` (100) times a second, and the recorder takes the values at each
    sample's time from it (``read_at``: counters interpolated between the two readings around
    that time, the gauges as last read). The thread never takes more than about
    1/:data:`COST_SHARE` of a core: after a reading that took d seconds of its CPU time (a
    tree of many threads), the next waits at least ``COST_SHARE`` x d. Counters are kept
    monotonic: sums over the tree only ever add (a process that leaves the tree without being
    waited for, re-parented to init, keeps what it had counted); schedstat is kept per
    thread, and a thread that ends keeps its time but for its last interval. A process or
    thread that lives less than one reading between two is not seen itself: its CPU time and
    I/O still count once its parent has waited for it; its run-queue time and memory are
    lost. The perf counters have none of these limits.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from phasekit.errors import UnsupportedError, UsageError
from phasekit.record.sources.base import (
    COMMAND_PREFIX,
    Availability,
    Metric,
    Raw,
    RawRead,
    Scope,
    Source,
)

__all__ = ["COST_SHARE", "MIN_POLL", "CommandCounters", "ProcTreeSource", "process_tree"]

#: The /proc thread takes at most about 1 / COST_SHARE of a core (ours: 5 %).
COST_SHARE = 20.0
#: Shortest time between two readings of the tree, s (ours: a reading costs about 0.1 ms for
#: a one-process command on the 2-core VM of the benchmarks, 1 % of a core at this rate).
MIN_POLL = 0.01
#: Readings kept for ``read_at`` (the recorder decodes about a second behind the samples).
HISTORY = 4096
#: Bytes read of each /proc file (they are far shorter).
READ_SIZE = 4096

_GROUP_METRICS: dict[str, tuple[Metric, ...]] = {
    "stat": (Metric("cmd_cpu_user_s", "s", "counter"), Metric("cmd_cpu_system_s", "s", "counter")),
    "schedstat": (Metric("cmd_runnable_s", "s", "counter"),
                  Metric("cmd_cpu_wait_s", "s", "counter")),
    "threads": (Metric("cmd_runnable_threads", "", "gauge"),),
    "statm": (Metric("cmd_rss_bytes", "B", "gauge"),),
    "io": (Metric("cmd_read_bytes", "B", "counter"), Metric("cmd_write_bytes", "B", "counter"),
           Metric("cmd_disk_read_bytes", "B", "counter"),
           Metric("cmd_disk_write_bytes", "B", "counter")),
}


class CommandCounters(Source):
    """A per-process source (perf) opened on the command's process tree, its metrics named
    ``cmd_...`` (module docstring). ``inner`` is a fresh instance, used by this one only."""

    per_process = True

    def __init__(self, inner: Source) -> None:
        self.inner = inner
        self.name = f"cmd-{inner.name}"

    @staticmethod
    def _renamed(metrics: Sequence[Metric]) -> tuple[Metric, ...]:
        return tuple(replace(m, name=COMMAND_PREFIX + m.name) for m in metrics)

    def probe(self) -> Availability:
        found = self.inner.probe()
        missing = {COMMAND_PREFIX + k: v for k, v in found.unavailable_metrics.items()}
        reason = ("the command's process tree, children included" if found.available
                  else found.reason)
        return Availability(self.name, found.available, reason, self._renamed(found.metrics),
                            missing)

    def open(self, scope: Scope, pid: int | None = None) -> tuple[Metric, ...]:
        """Open the inner source on the tree rooted at ``pid``, counting from its next
        ``exec`` (``scope`` is the command's whatever is asked)."""
        if pid is None:
            raise UsageError(f"{self.name} source: measures a command: give its pid")
        if hasattr(self.inner, "enable_on_exec"):
            self.inner.enable_on_exec = True
        return self._renamed(self.inner.open("process", pid))

    def read(self) -> list[float]:
        return self.inner.read()

    def raw_reads(self) -> tuple[RawRead, ...] | None:
        return self.inner.raw_reads()

    def decode(self, raw: Sequence[Raw]) -> list[float]:
        return self.inner.decode(raw)

    def metadata(self) -> dict[str, Any]:
        describe = getattr(self.inner, "metadata", None)
        return {} if describe is None else dict(describe())

    def close(self) -> None:
        self.inner.close()


def process_tree(pid: int, root: str = "/proc") -> dict[int, list[int]]:
    """The live processes of the tree rooted at ``pid`` and the thread ids of each, ``pid``
    first, from ``ROOT/PID/task/TID/children`` (every process's parent in ``ROOT/*/stat`` on
    kernels without those files); {} when ``pid`` is gone."""
    tree: dict[int, list[int]] = {}
    todo = [pid]
    parents: dict[int, list[int]] | None = None
    while todo:
        process = todo.pop(0)
        if process in tree:
            continue
        try:
            tids = sorted(int(t) for t in os.listdir(f"{root}/{process}/task"))
        except (OSError, ValueError):
            continue  # ended meanwhile
        tree[process] = tids
        for tid in tids:
            try:
                with open(f"{root}/{process}/task/{tid}/children", "rb") as handle:
                    todo.extend(int(c) for c in handle.read().split())
            except FileNotFoundError:
                if parents is None:
                    parents = _children_by_parent(root)
                todo.extend(parents.get(process, ()))
                break
            except (OSError, ValueError):
                continue
    return tree


def _children_by_parent(root: str) -> dict[int, list[int]]:
    """Every process's children, from the parent pid of each ``ROOT/PID/stat``."""
    out: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir(root):
            if not name.isdigit():
                continue
            try:
                with open(f"{root}/{name}/stat", "rb") as handle:
                    data = handle.read()
                parent = int(data[data.rfind(b")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            out.setdefault(parent, []).append(int(name))
    return out


class ProcTreeSource(Source):
    """The command's process tree from /proc, read in a thread of its own (module
    docstring). ``interval``: seconds between two readings (the recording's interval; at
    least :data:`MIN_POLL`)."""

    name = "cmd-proc"
    per_process = True

    def __init__(self, root: str = "/proc", *, interval: float = 0.01) -> None:
        self.root = str(root)
        self.interval = float(interval)
        self._groups: tuple[str, ...] = ()
        self._metrics: tuple[Metric, ...] = ()
        self._pid = 0
        self._start_ticks = -1
        self._tick = float(os.sysconf("SC_CLK_TCK"))
        self._page = float(os.sysconf("SC_PAGE_SIZE"))
        self._fds: dict[tuple[str, int, int], int] = {}
        self._threads: dict[int, tuple[int, int]] = {}
        self._run_ns = 0
        self._wait_ns = 0
        self._peaks: list[float] = []
        self._times: list[float] = []
        self._values: list[list[float]] = []
        self._lock = threading.Lock()  # the readings kept
        self._polling = threading.Lock()  # one reading at a time
        self._alive = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._counter: list[bool] = []
        self.polls = 0
        self.poll_seconds = 0.0

    # ------------------------------------------------------------------ Source API
    def probe(self) -> Availability:
        """Which of this process's own /proc files exist and parse here."""
        me, tid = os.getpid(), threading.get_native_id()
        paths = {"stat": f"{self.root}/{me}/stat", "statm": f"{self.root}/{me}/statm",
                 "io": f"{self.root}/{me}/io",
                 "schedstat": f"{self.root}/{me}/task/{tid}/schedstat",
                 "threads": f"{self.root}/{me}/task/{tid}/stat"}
        why = {"io": "no per-process I/O accounting (a kernel without "
                     "CONFIG_TASK_IO_ACCOUNTING)",
               "schedstat": "no per-thread scheduler times (a kernel without "
                            "CONFIG_SCHED_INFO)"}
        metrics: list[Metric] = []
        missing: dict[str, str] = {}
        for group, path in paths.items():
            try:
                with open(path, "rb") as handle:
                    self._parse(group, handle.read())
            except (OSError, ValueError, IndexError) as exc:
                for m in _GROUP_METRICS[group]:
                    missing[m.name] = f"cannot read {path}: {why.get(group, exc)}"
                continue
            metrics.extend(_GROUP_METRICS[group])
        if not any(m.name == "cmd_cpu_user_s" for m in metrics):
            return Availability(self.name, False, missing.get("cmd_cpu_user_s", "no /proc"),
                                unavailable_metrics=missing)
        order = [m for g in _GROUP_METRICS for m in _GROUP_METRICS[g] if m in metrics]
        return Availability(self.name, True, "the command's process tree, from /proc/PID",
                            tuple(order), missing)

    def open(self, scope: Scope, pid: int | None = None) -> tuple[Metric, ...]:
        """Read the tree rooted at ``pid`` once, then every ``interval`` in a thread."""
        if pid is None or int(pid) <= 0:
            raise UsageError(f"{self.name} source: measures a command: give its pid",
                             parameter="pid", value=pid)
        if not (math.isfinite(self.interval) and self.interval > 0):
            raise UsageError(f"{self.name} source: expected a positive number of seconds",
                             parameter="interval", value=self.interval)
        self.close()
        found = self.probe()
        if not found.available:
            raise UnsupportedError(f"{self.name} source: {found.reason}")
        wanted = {m.name for m in found.metrics}
        self._groups = tuple(g for g in _GROUP_METRICS if _GROUP_METRICS[g][0].name in wanted)
        self._metrics = tuple(m for g in self._groups for m in _GROUP_METRICS[g])
        self._counter = [m.kind == "counter" for m in self._metrics]
        self._pid = int(pid)
        try:
            with open(f"{self.root}/{pid}/stat", "rb") as handle:
                data = handle.read()
            self._start_ticks = int(data[data.rfind(b")") + 2:].split()[19])
        except (OSError, ValueError, IndexError):
            raise UsageError(f"{self.name} source: no process with pid {pid}") from None
        self._threads, self._run_ns, self._wait_ns = {}, 0, 0
        self._peaks = [0.0] * len(self._metrics)
        self._times, self._values = [], []
        self.polls, self.poll_seconds = 0, 0.0
        self._alive = True
        self._poll_and_publish()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="phasekit-cmd-proc",
                                        daemon=True)
        self._thread.start()
        return self._metrics

    def read(self) -> list[float]:
        """The values now (``read_at`` the current time)."""
        return self.read_at(time.monotonic())

    def read_at(self, when: float) -> list[float]:
        """The values at monotonic time ``when``: counters interpolated between the readings
        around it, the gauge as last read before it. A time past the latest reading takes a
        reading now (the latest stays once the command has ended)."""
        if self._alive and self._times and when > self._times[-1]:
            with self._polling:
                if self._alive and when > self._times[-1]:
                    self._poll_and_publish()
        with self._lock:
            times, values = self._times, self._values
            if not times:
                return [math.nan] * len(self._metrics)
            at = bisect.bisect_right(times, when) - 1
            if at < 0:
                return list(values[0])
            if at == len(times) - 1:
                return list(values[at])
            t0, t1 = times[at], times[at + 1]
            before, after = values[at], values[at + 1]
        share = (when - t0) / (t1 - t0) if t1 > t0 else 0.0
        return [b + (a - b) * share if counter else b
                for b, a, counter in zip(before, after, self._counter, strict=True)]

    def metadata(self) -> dict[str, Any]:
        """The command's pid and the time between two readings of its tree."""
        return {"pid": self._pid, "reading_interval_s": max(self.interval, MIN_POLL)}

    def close(self) -> None:
        """Stop the thread and close the /proc files."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)
        self._thread = None
        with self._polling:
            self._alive = False
            for fd in self._fds.values():
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._fds = {}

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    # ------------------------------------------------------------------ the readings
    def _loop(self) -> None:
        step = max(self.interval, MIN_POLL)
        next_at = time.monotonic() + step
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            started, cpu = time.monotonic(), time.thread_time()
            with self._polling:
                if self._alive:
                    self._poll_and_publish()
            if not self._alive:
                return  # the command has ended and been waited for: its totals are final
            cost = time.thread_time() - cpu  # CPU time: waiting for a core costs nothing
            next_at = max(next_at + step, started + COST_SHARE * cost)

    def _poll_and_publish(self) -> None:
        """One reading, kept with its time (the middle of its reads of the files)."""
        started = time.monotonic()
        values, alive, when = self._poll()
        self.polls += 1
        self.poll_seconds += time.monotonic() - started
        self._publish(when, values)
        self._alive = alive

    def _publish(self, when: float, values: list[float]) -> None:
        with self._lock:
            self._times.append(when)
            self._values.append(values)
            if len(self._times) > 2 * HISTORY:
                del self._times[:HISTORY], self._values[:HISTORY]

    def _read(self, kind: str, pid: int, tid: int, path: str) -> bytes | None:
        """The text of one /proc file, its descriptor kept open between readings; None when
        the process or thread has ended."""
        key = (kind, pid, tid)
        for attempt in (0, 1):
            fd = self._fds.get(key)
            if fd is None:
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    return None
                self._fds[key] = fd
            try:
                data = os.pread(fd, READ_SIZE, 0)
            except OSError as exc:
                data = b""
                if exc.errno not in (errno.ESRCH, errno.ENOENT, errno.EACCES, errno.EPERM):
                    raise
            if data:
                return data
            del self._fds[key]  # a stale descriptor (its task ended): open the path again
            with contextlib.suppress(OSError):
                os.close(fd)
            if attempt:
                return None
        return None

    def _poll(self) -> tuple[list[float], bool, float]:
        """One reading of the whole tree: the cumulative values, whether the command's
        process is still there, and the time of the reading (the middle of its reads)."""
        tree = process_tree(self._pid, self.root)
        sums = dict.fromkeys(("user", "system", "rss", "rchar", "wchar", "rbytes", "wbytes",
                              "runnable"), 0.0)
        began = time.monotonic()
        touched: set[tuple[str, int, int]] = set()
        alive = self._pid in tree
        threads: dict[int, tuple[int, int]] = {}
        for process, tids in tree.items():
            base = f"{self.root}/{process}"
            stat = self._read("stat", process, 0, f"{base}/stat")
            if stat is None:
                continue
            fields = stat[stat.rfind(b")") + 2:].split()
            if process == self._pid and int(fields[19]) != self._start_ticks:
                alive = False  # the pid was taken by another process
                break
            touched.add(("stat", process, 0))
            sums["user"] += (int(fields[11]) + int(fields[13])) / self._tick
            sums["system"] += (int(fields[12]) + int(fields[14])) / self._tick
            if "statm" in self._groups:
                statm = self._read("statm", process, 0, f"{base}/statm")
                if statm is not None:
                    touched.add(("statm", process, 0))
                    sums["rss"] += int(statm.split()[1]) * self._page
            if "io" in self._groups:
                io = self._read("io", process, 0, f"{base}/io")
                if io is not None:
                    touched.add(("io", process, 0))
                    rchar, wchar, rbytes, wbytes = self._parse("io", io)
                    sums["rchar"] += rchar
                    sums["wchar"] += wchar
                    sums["rbytes"] += rbytes
                    sums["wbytes"] += wbytes
            if "threads" in self._groups:
                for tid in tids:
                    text = self._read("threads", process, tid, f"{base}/task/{tid}/stat")
                    if text is None:
                        continue
                    touched.add(("threads", process, tid))
                    at = text.rfind(b")") + 2
                    sums["runnable"] += text[at:at + 1] == b"R"
            if "schedstat" in self._groups:
                for tid in tids:
                    text = self._read("schedstat", process, tid,
                                      f"{base}/task/{tid}/schedstat")
                    if text is None:
                        continue
                    touched.add(("schedstat", process, tid))
                    run, wait = self._parse("schedstat", text)
                    threads[tid] = (run, wait)
        when = (began + time.monotonic()) / 2
        if not alive:
            threads = {}
            sums["rss"] = sums["runnable"] = 0.0
        self._count_threads(threads)
        for key in [k for k in self._fds if k not in touched]:
            with contextlib.suppress(OSError):
                os.close(self._fds.pop(key))
        return self._values_of(sums), alive, when

    def _count_threads(self, threads: dict[int, tuple[int, int]]) -> None:
        """Add every thread's run and wait time since the last reading (a thread seen for the
        first time: since it started; a time gone back: a new thread with an old id)."""
        last = self._threads
        for tid, (run, wait) in threads.items():
            before = last.get(tid, (0, 0))
            if run < before[0] or wait < before[1]:
                before = (0, 0)
            self._run_ns += run - before[0]
            self._wait_ns += wait - before[1]
        self._threads = threads

    def _values_of(self, sums: dict[str, float]) -> list[float]:
        by_group = {
            "stat": [sums["user"], sums["system"]],
            "schedstat": [(self._run_ns + self._wait_ns) * 1e-9, self._wait_ns * 1e-9],
            "threads": [sums["runnable"]],
            "statm": [sums["rss"]],
            "io": [sums["rchar"], sums["wchar"], sums["rbytes"], sums["wbytes"]],
        }
        values = [v for g in self._groups for v in by_group[g]]
        peaks = self._peaks
        for j, counter in enumerate(self._counter):
            if counter:  # sums over the tree only add (module docstring)
                peaks[j] = values[j] = max(peaks[j], values[j])
        return values

    @staticmethod
    def _parse(group: str, data: bytes) -> list[int]:
        if group == "stat":
            fields = data[data.rfind(b")") + 2:].split()
            return [int(fields[11]), int(fields[12]), int(fields[13]), int(fields[14])]
        if group == "statm":
            return [int(data.split()[1])]
        if group == "threads":
            return [data[data.rfind(b")") + 2:].split()[0] == b"R"]
        if group == "schedstat":
            run, wait = data.split()[:2]
            return [int(run), int(wait)]
        values = {}
        for line in data.splitlines():
            key, _, value = line.partition(b":")
            values[key.strip()] = int(value)
        return [values[b"rchar"], values[b"wchar"], values[b"read_bytes"],
                values[b"write_bytes"]]
