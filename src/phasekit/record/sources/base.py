"""The interface every recording source implements (one small plug-in per kind of sensor).

A source is opened once for a scope (the whole node, or one process tree), then read at every
sample. ``read()`` returns one float per metric, in the order of ``metrics``:

- ``kind="counter"`` metrics are cumulative totals (instructions, bytes, jiffies, joules…); the
  recorder stores their increase over each interval (per-interval counts, power in W for
  energy counters divided by the interval);
- ``kind="gauge"`` metrics are instantaneous values (memory in use, a power reading) and are
  stored as read.

``probe()`` says, without opening anything long-lived, whether the source can run here and
why not: the reason a user reads in ``phasekit sources``.

The command's own metrics. Recording a command, the recorder measures the node and, beside it,
the command's process tree: a source that can measure one process tree returns, from
``for_command()``, a source of its own for that, whose metrics are named ``cmd_...``
(:data:`COMMAND_PREFIX`) so that they never collide with the node's (perf-sw: the
software counters inherited by the tree; proc: /proc/PID of the tree's processes). Sources
that measure the node only (RAPL, a --sensor command) return None.

Compiled sampling. A source whose reading is a few system calls on open file descriptors
says which in ``raw_reads()`` and turns their bytes into values in ``decode(raw)``; its
``read()`` is then ``decode(perform(raw_reads()))``. The recorder's compiled loop
(``phasekit.record._sampler``) performs the same reads in a native thread and decodes whole
chunks later, so that no Python code runs per sample. A source whose values come from a
thread of its own (the command source) offers ``read_at(monotonic_time)`` instead.
"""

from __future__ import annotations

import errno
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

Scope = Literal["node", "process"]

#: How the metrics of the recorded command's own process tree are named: ``cmd_task_clock``
#: beside the node's ``cpu_user_s`` (the profile's metadata lists them too).
COMMAND_PREFIX = "cmd_"


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    kind: Literal["counter", "gauge"] = "counter"
    rate_unit: str = ""  # unit of the stored per-interval value when it differs (e.g. "W")


@dataclass(frozen=True)
class Availability:
    """Whether a source can run here; ``reason`` when it cannot (or for metrics it drops)."""

    name: str
    available: bool
    reason: str = ""
    metrics: tuple[Metric, ...] = ()
    unavailable_metrics: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RawRead:
    """One system call of a sample: ``read(fd, size)``, or with ``pread`` the whole file from
    offset 0 (procfs and sysfs regenerate a file read from offset 0), ``size`` being the first
    buffer size, doubled while the file fills it."""

    fd: int
    size: int
    pread: bool = False


#: Largest file a ``pread`` raw read accepts (as the compiled loop: EFBIG beyond).
MAX_PREAD = 64 << 20

#: The bytes a raw read returned, or the errno of its failure.
Raw = bytes | int


def perform(reads: Sequence[RawRead]) -> list[Raw]:
    """Do ``reads`` now, in Python: what the compiled loop does at every tick."""
    out: list[Raw] = []
    for r in reads:
        try:
            if not r.pread:
                out.append(os.read(r.fd, r.size))
                continue
            size = r.size
            data = os.pread(r.fd, size, 0)
            while len(data) >= size:
                if size * 2 > MAX_PREAD:
                    raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))
                size *= 2
                data = os.pread(r.fd, size, 0)
            out.append(data)
        except OSError as exc:
            out.append(exc.errno or errno.EIO)
    return out


def raw_error(errno_value: int) -> OSError:
    """The error of a failed raw read, from its errno."""
    return OSError(errno_value, os.strerror(errno_value))


class Source(ABC):
    """One kind of sensor. Constructors take configuration only; ``open`` acquires resources."""

    name: str = "source"

    @abstractmethod
    def probe(self) -> Availability:
        """Can this source run on this machine, and with which metrics?"""

    @abstractmethod
    def open(self, scope: Scope, pid: int | None = None) -> tuple[Metric, ...]:
        """Start measuring (``pid`` is the root of the process tree for scope "process");
        returns the metrics ``read`` will report. Raises UnsupportedError with the reason."""

    @abstractmethod
    def read(self) -> list[float]:
        """Current values, one per metric (cumulative for counters)."""

    def close(self) -> None:  # noqa: B027 - optional for sources that hold nothing
        """Release what ``open`` acquired."""

    def for_command(self, interval: float = 0.01) -> Source | None:
        """A new source measuring the recorded command's process tree, its metrics named
        ``cmd_...``, sampled every ``interval`` s; None when this source has no such view."""
        return None

    def raw_reads(self) -> tuple[RawRead, ...] | None:
        """The system calls of one reading, once open; None when ``read`` is not only that."""
        return None

    def decode(self, raw: Sequence[Raw]) -> list[float]:
        """Values of one reading from the results of ``raw_reads`` (in their order)."""
        raise NotImplementedError(f"{self.name} source has no raw reads")
