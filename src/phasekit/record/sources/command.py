"""A metric read from an external command that prints a number (IPMI, GPU, PDU power readers).

Examples::

    CommandSource("power_node", "ipmitool dcmi power reading | awk '/Instantaneous/ {print $4}'",
                  unit="W")
    CommandSource("power_gpu0", ["nvidia-smi", "-i", "0", "--query-gpu=power.draw",
                                 "--format=csv,noheader,nounits"], unit="W")

The command runs in a background thread every ``interval`` seconds (our default 1 s: these
readers are slow and their sensors rarely update faster), so that ``read()``, called every few
milliseconds by the recorder, never blocks: it returns the latest value. A string command runs
through ``/bin/sh -c``; a list runs without a shell. The first number in the standard output is
the value (``"123.4 W"`` → 123.4, ``"1.5e2"`` → 150.0); select the line or field with the
command itself (``awk``, ``cut``) when the output holds several numbers.

``read()`` gives NaN:

- before the first value (only with ``check_on_open=False``: otherwise ``open`` runs the
  command once and that value is the first);
- after a failed run (non-zero exit status, no number in the output, or ``timeout``): the
  failure is logged as a warning once, kept in ``last_error``, and the recording goes on;
- when the latest value is stale: older than ``stale_after`` seconds, by default
  3 × max(interval, duration of the last run) — a reader that hangs shows as a gap, not as a
  frozen value.

Each run gets its own session (process group); on timeout or ``close()`` the whole group is
killed, so shell pipelines do not outlive it and ``close()`` returns promptly.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Literal

from phasekit.errors import UnsupportedError, UsageError
from phasekit.record.sources.base import Availability, Metric, Scope, Source

logger = logging.getLogger(__name__)

_NUMBER = re.compile(rb"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")

#: Runs remembered for ``read_at`` (minutes of a 1 s reader; a chunk spans about 1 s).
_HISTORY = 256

_EXCERPT = 300  # characters of a command's stderr (or stdout) quoted in an error


class CommandFailed(Exception):
    """One run of the command failed; the message says how, with an excerpt of its output."""


class _Stopped(Exception):
    """The source was closed while the command ran."""


def parse_number(output: bytes) -> float:
    """The first number in a command's output; ValueError when there is none."""
    m = _NUMBER.search(output)
    if m is None:
        raise ValueError("no number in the output")
    return float(m.group())


def _excerpt(data: bytes) -> str:
    text = " ".join(data.decode(errors="replace").split())
    return text if len(text) <= _EXCERPT else "…" + text[-_EXCERPT:]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class CommandSource(Source):
    """One metric sampled from an external command in a background thread (module docstring).

    Parameters
    ----------
    metric:
        The metric's name (e.g. ``"power_node"``).
    command:
        A shell command line (string) or an argument list (no shell).
    interval:
        Seconds between the starts of two runs (a run longer than that delays the next one).
    unit, kind, rate_unit:
        Of the metric; ``kind="counter"`` when the command prints a cumulative total (e.g. an
        energy counter in J, with ``rate_unit="W"``).
    timeout:
        Seconds after which a run is killed and counts as failed (our default 5 s: enough for
        ``ipmitool`` over a slow BMC).
    stale_after:
        Age in seconds past which the latest value reads as NaN (default: 3 × max(interval,
        duration of the last run)).
    check_on_open:
        Run the command once in ``open`` and raise UnsupportedError if it fails (default);
        with False, ``open`` returns at once and ``read`` gives NaN until the first value.
    """

    name = "command"

    def __init__(self, metric: str, command: str | Sequence[str], *, interval: float = 1.0,
                 unit: str = "", kind: Literal["gauge", "counter"] = "gauge",
                 rate_unit: str = "", timeout: float = 5.0, stale_after: float | None = None,
                 check_on_open: bool = True) -> None:
        self.metric = metric
        self.command = command if isinstance(command, str) else list(command)
        self.interval = interval
        self.unit = unit
        self.kind = kind
        self.rate_unit = rate_unit
        self.timeout = timeout
        self.stale_after = stale_after
        self.check_on_open = check_on_open
        self.last_error: str | None = None
        self.n_failures = 0
        self._latest: tuple[float, float, float] | None = None  # value, time done, duration
        self._history: collections.deque[tuple[float, float, float]] = collections.deque(
            maxlen=_HISTORY)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._warned = False

    # ------------------------------------------------------------------ helpers
    @property
    def _metric(self) -> Metric:
        return Metric(self.metric, self.unit, self.kind, self.rate_unit)

    @property
    def command_text(self) -> str:
        """The command as a user would type it."""
        return self.command if isinstance(self.command, str) else shlex.join(self.command)

    def _validate(self) -> None:
        if not self.metric:
            raise UsageError("command source: the metric needs a name")
        if not self.command:
            raise UsageError(f"command source {self.metric!r}: empty command")
        if self.kind not in ("gauge", "counter"):
            raise UsageError(f"command source {self.metric!r}: expected 'gauge' or "
                             "'counter'", parameter="kind", value=self.kind)
        for label, value in (("interval", self.interval), ("timeout", self.timeout)):
            if not (isinstance(value, int | float) and value > 0 and math.isfinite(value)):
                raise UsageError(f"command source {self.metric!r}: expected a positive "
                                 "number of seconds", parameter=label, value=value)
        if self.stale_after is not None and not self.stale_after > 0:
            raise UsageError(f"command source {self.metric!r}: expected a positive number "
                             "of seconds", parameter="stale_after", value=self.stale_after)

    def _run_once(self, stop: threading.Event | None = None) -> float:
        """Run the command once; its value, or CommandFailed saying why (or _Stopped when
        ``stop`` is set meanwhile: ``close()`` from the sampling thread's point of view)."""
        shell = isinstance(self.command, str)
        try:
            proc = subprocess.Popen(self.command, shell=shell, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
        except OSError as e:
            raise CommandFailed(f"cannot be started: {e.strerror or e}") from e
        if stop is not None:
            with self._lock:
                self._proc = proc
        try:
            if stop is not None and stop.is_set():  # close() came between the start and the registration
                _kill_group(proc)
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            try:
                out, err = proc.communicate(timeout=1.0)
            except subprocess.TimeoutExpired:  # a descendant left the group with the pipes
                proc.kill()
                out, err = b"", b""
            if stop is not None and stop.is_set():
                raise _Stopped from None
            raise CommandFailed(f"timed out after {self.timeout:g} s"
                                + (f"; stderr: {_excerpt(err)}" if err.strip() else "")) from None
        finally:
            if stop is not None:
                with self._lock:
                    self._proc = None
        if stop is not None and stop.is_set():
            raise _Stopped
        if proc.returncode != 0:
            how = (f"was killed by signal {-proc.returncode}" if proc.returncode < 0
                   else f"exited with status {proc.returncode}")
            detail = _excerpt(err) or _excerpt(out)
            raise CommandFailed(how + (f"; stderr: {detail}" if detail else ""))
        try:
            return parse_number(out)
        except ValueError:
            raise CommandFailed(f"printed no number: {_excerpt(out)!r}"
                                + (f"; stderr: {_excerpt(err)}" if err.strip() else "")) from None

    def _failure(self, message: str) -> None:
        self.last_error = message
        self.n_failures += 1
        self._publish((math.nan, time.monotonic(), 0.0))
        if self._warned:
            logger.debug("command source %s: `%s` %s", self.metric, self.command_text, message)
        else:
            self._warned = True
            logger.warning("command source %s: `%s` %s; NaN until it succeeds again (warned "
                           "once, see last_error)", self.metric, self.command_text, message)

    def _loop(self) -> None:
        stop = self._stop
        next_start = time.monotonic() + (self.interval if self._latest is not None else 0.0)
        failing = False
        while True:
            delay = next_start - time.monotonic()
            if stop.wait(delay if delay > 0 else 0):
                return
            start = time.monotonic()
            next_start = max(next_start + self.interval, start)
            try:
                value = self._run_once(stop)
            except _Stopped:
                return
            except CommandFailed as e:
                failing = True
                self._failure(str(e))
                continue
            except Exception as e:  # never let the thread die silently
                failing = True
                self._failure(f"failed: {e!r}")
                continue
            done = time.monotonic()
            self._publish((value, done, done - start))
            if failing:
                failing = False
                logger.info("command source %s: `%s` works again", self.metric,
                            self.command_text)

    # ------------------------------------------------------------------ Source API
    def probe(self) -> Availability:
        """Run the command once: available if it prints a number in time."""
        self._validate()
        try:
            self._run_once()
        except CommandFailed as e:
            return Availability(self.name, False, f"`{self.command_text}` {e}",
                                unavailable_metrics={self.metric: str(e)})
        return Availability(self.name, True, "", (self._metric,))

    def open(self, scope: Scope, pid: int | None = None) -> tuple[Metric, ...]:
        """Start sampling (the command decides what it measures: ``scope`` is not used).

        With ``check_on_open`` (default), runs the command once first and raises
        UnsupportedError with its stderr when it fails."""
        if scope not in ("node", "process"):
            raise UsageError("expected 'node' or 'process'", parameter="scope", value=scope)
        self._validate()
        self.close()
        self._stop = threading.Event()
        self._latest = None
        self._history.clear()
        self.last_error = None
        self.n_failures = 0
        self._warned = False
        if self.check_on_open:
            start = time.monotonic()
            try:
                value = self._run_once()
            except CommandFailed as e:
                raise UnsupportedError(f"command source {self.metric!r}: "
                                       f"`{self.command_text}` {e}") from None
            done = time.monotonic()
            self._publish((value, done, done - start))
        self._thread = threading.Thread(target=self._loop, name=f"phasekit-command-{self.metric}",
                                        daemon=True)
        self._thread.start()
        return (self._metric,)

    def read(self) -> list[float]:
        """The latest value (NaN before the first, after a failure, or when stale); never
        blocks."""
        return self.read_at(time.monotonic())

    def read_at(self, when: float) -> list[float]:
        """What ``read()`` returned at monotonic time ``when`` (the recent past): the value of
        the last run finished by then. The compiled recorder loop asks this of its chunks."""
        history = list(self._history)
        for value, done, duration in reversed(history):
            if done <= when:
                limit = self.stale_after if self.stale_after is not None else \
                    3.0 * max(self.interval, duration)
                return [math.nan if when - done > limit else value]
        return [math.nan]

    def _publish(self, latest: tuple[float, float, float]) -> None:
        self._history.append(latest)
        self._latest = latest

    def close(self) -> None:
        """Stop the sampling thread, killing a run in progress; returns promptly."""
        self._stop.set()
        with self._lock:
            proc = self._proc
        if proc is not None:
            _kill_group(proc)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)
            if thread.is_alive():
                logger.warning("command source %s: the sampling thread did not stop within "
                               "5 s; left behind (daemon)", self.metric)
        self._thread = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stop.set()
