"""Node-wide CPU time, memory, disk and network totals from procfs.

Four groups of metrics, read from files that stay open and are re-read with
``os.pread(fd, size, 0)`` at every sample (procfs regenerates a file when it is read from
offset 0), parsed as bytes:

``cpu`` (counters, s), from the aggregate ``cpu`` line of ``/proc/stat``
(Documentation/filesystems/proc.rst, "1.8 Miscellaneous kernel statistics in /proc/stat"),
jiffies divided by ``SC_CLK_TCK``:

- ``cpu_user_s`` = user + nice; ``cpu_system_s`` = system + irq + softirq;
  ``cpu_iowait_s`` = iowait; ``cpu_idle_s`` = idle.
- ``guest`` and ``guest_nice`` are not added: the kernel already counts guest time in
  ``user`` and ``nice`` (adding them would count it twice).
- ``steal`` (time a hypervisor gave this VM's CPUs to someone else) is in none of the four:
  on a VM the four add up to less than wall time × CPUs by the stolen time.

``mem`` (gauges, B), from ``/proc/meminfo`` (proc.rst, "meminfo"):

- ``mem_used_bytes`` = MemTotal − MemAvailable (memory not available to start new work;
  kernels older than 3.14 have no MemAvailable: MemFree + Buffers + Cached is used instead);
- ``mem_cached_bytes`` = Cached (page cache, including tmpfs/shmem pages).

``disk`` (counters), from ``/proc/diskstats`` (Documentation/admin-guide/iostats.rst):
``disk_read_bytes`` and ``disk_write_bytes`` (sectors × 512: the kernel counts 512-byte
sectors whatever the device's sector size), ``disk_reads`` and ``disk_writes`` (completed
requests). Summed over whole physical disks only, so that no I/O is counted twice:

- partitions are skipped, with the kernel's own naming rule: a partition is named after its
  disk followed by its number, with a ``p`` between them when the disk's name ends with a digit
  (``sda`` → ``sda1``, ``nvme0n1`` → ``nvme0n1p1``, ``mmcblk0`` → ``mmcblk0p1``); a device is a
  partition when such a disk is listed in the same file;
- stacked and memory-backed devices are skipped by name: ``dm-*`` (LVM, dm-crypt), ``md*``
  (software RAID), ``loop*``, ``ram*`` and ``zram*`` — their I/O is either counted again on the
  disks below them or is not disk I/O.

``net`` (counters), from ``/proc/net/dev`` (proc.rst, "1.3 Networking info in /proc/net"):
``net_rx_bytes``, ``net_tx_bytes``, ``net_rx_packets``, ``net_tx_packets``, summed over every
interface of the reader's network namespace except the loopback ``lo``. Virtual interfaces
(bridges, veth pairs, bonds) are summed too: on a node with containers or bonding, pass
``exclude_interfaces`` to keep only what should count.

Counters stay monotonic when devices come and go: the source keeps each device's last values
and adds only non-negative increments. A device that appears mid-run starts from its first
value (the I/O it did before that read is not counted, at most one interval of it); one that
disappears keeps what it contributed; a device counter that goes backwards (a device removed and
re-created under the same name, a 32-bit counter wrapping) is re-based. Each kind of event is
logged as a warning once per ``open``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from collections.abc import Iterable, Sequence

from phasekit.errors import UnsupportedError, UsageError
from phasekit.record.sources.base import (
    Availability,
    Metric,
    Raw,
    RawRead,
    Scope,
    Source,
    perform,
    raw_error,
)

logger = logging.getLogger(__name__)

GROUPS: tuple[str, ...] = ("cpu", "mem", "disk", "net")

_GROUP_METRICS: dict[str, tuple[Metric, ...]] = {
    "cpu": (
        Metric("cpu_user_s", "s", "counter"),
        Metric("cpu_system_s", "s", "counter"),
        Metric("cpu_iowait_s", "s", "counter"),
        Metric("cpu_idle_s", "s", "counter"),
    ),
    "mem": (
        Metric("mem_used_bytes", "B", "gauge"),
        Metric("mem_cached_bytes", "B", "gauge"),
    ),
    "disk": (
        Metric("disk_read_bytes", "B", "counter"),
        Metric("disk_write_bytes", "B", "counter"),
        Metric("disk_reads", "", "counter"),
        Metric("disk_writes", "", "counter"),
    ),
    "net": (
        Metric("net_rx_bytes", "B", "counter"),
        Metric("net_tx_bytes", "B", "counter"),
        Metric("net_rx_packets", "", "counter"),
        Metric("net_tx_packets", "", "counter"),
    ),
}

_GROUP_FILES: dict[str, str] = {
    "cpu": "stat",
    "mem": "meminfo",
    "disk": "diskstats",
    "net": "net/dev",
}

# Bytes asked of each file at the first read; doubled while a read fills the buffer.
_INITIAL_SIZE: dict[str, int] = {"cpu": 512, "mem": 8192, "disk": 16384, "net": 8192}

_SKIPPED_DISK_PREFIXES: tuple[str, ...] = ("dm-", "md", "loop", "ram", "zram")

_SECTOR_BYTES = 512


def is_whole_disk(name: str, names: Iterable[str]) -> bool:
    """Whether the ``/proc/diskstats`` device ``name`` counts as a whole physical disk, given
    every device ``names`` listed in the same file (see the module docstring for the rule)."""
    if name.startswith(_SKIPPED_DISK_PREFIXES):
        return False
    stem = name.rstrip("0123456789")
    if stem == name or not stem:
        return True  # no trailing number: cannot be a partition
    names = set(names)
    if stem[-1] == "p" and stem[-2:-1].isdigit():  # nvme0n1p1 → nvme0n1, mmcblk0p2 → mmcblk0
        return stem[:-1] not in names
    return stem not in names  # sda1 → sda


def _meminfo_kib(data: bytes, key: bytes) -> int | None:
    """The value of ``key`` (e.g. ``b"MemTotal:"``) in /proc/meminfo text, in kB; None if absent."""
    i = data.find(b"\n" + key)
    if i < 0:
        if not data.startswith(key):
            return None
        i = 0
    else:
        i += 1
    j = data.find(b"\n", i)
    return int(data[i + len(key):j if j >= 0 else None].split()[0])


class _Accumulator:
    """Monotonic sums over devices: per-device last values, non-negative increments only."""

    def __init__(self, group: str, width: int) -> None:
        self.group = group
        self.totals = [0] * width
        self.last: dict[bytes, tuple[int, ...]] = {}
        self.started = False
        self._warned: set[str] = set()

    def _warn(self, event: str, message: str, *args: object) -> None:
        if event in self._warned:
            logger.debug(message, *args)
        else:
            self._warned.add(event)
            logger.warning(message + " (warned once)", *args)

    def update(self, rows: dict[bytes, tuple[int, ...]]) -> list[int]:
        last = self.last
        totals = self.totals
        if rows == last:  # nothing moved (idle devices): one comparison in C
            return totals
        if not self.started:
            for values in rows.values():
                for i, v in enumerate(values):
                    totals[i] += v
            self.last = dict(rows)
            self.started = True
            return totals
        for key, values in rows.items():
            prev = last.get(key)
            if prev is None:
                self._warn("appeared", "procfs %s: %s appeared mid-run; counting it from now",
                           self.group, key.decode(errors="replace"))
            elif prev != values:
                for i, v in enumerate(values):
                    d = v - prev[i]
                    if d > 0:
                        totals[i] += d
                    elif d < 0:
                        self._warn("backwards", "procfs %s: a counter of %s went backwards "
                                   "(%d -> %d); re-based, no negative increment",
                                   self.group, key.decode(errors="replace"), prev[i], v)
            last[key] = values
        if len(last) != len(rows):
            for key in [k for k in last if k not in rows]:
                self._warn("disappeared", "procfs %s: %s disappeared mid-run; keeping what it "
                           "counted", self.group, key.decode(errors="replace"))
                del last[key]
        return totals


class ProcSource(Source):
    """Node-wide CPU time, memory, disk and network totals from ``/proc`` (module docstring).

    Parameters
    ----------
    root:
        The procfs mount point; tests point it at a fake tree.
    groups:
        Which of ``"cpu"``, ``"mem"``, ``"disk"``, ``"net"`` to read (default: all four).
    exclude_interfaces:
        Interfaces of ``/proc/net/dev`` left out of the ``net`` sums (default: the loopback).

    The values are node-wide in both scopes: with scope "process" the ``pid`` is accepted and
    ignored (procfs has no per-process-tree view of these totals). The command's own process
    tree is :meth:`for_command`'s source.
    """

    name = "proc"

    def __init__(self, root: str = "/proc", *, groups: Sequence[str] | None = None,
                 exclude_interfaces: Sequence[str] = ("lo",)) -> None:
        self.root = str(root)
        self.groups = tuple(GROUPS if groups is None else groups)
        self.exclude_interfaces = tuple(exclude_interfaces)
        self._fds: dict[str, int] = {}
        self._sizes: dict[str, int] = {}
        self._metrics: tuple[Metric, ...] = ()
        self._groups_open: tuple[str, ...] = ()
        self._acc: dict[str, _Accumulator] = {}
        #: the last text decoded per group and its values: the same text decodes the same
        self._decoded: dict[str, tuple[Raw, list[float]]] = {}
        self._disk_whole: dict[bytes, bool] = {}
        self._exclude_bytes = frozenset(n.encode() for n in self.exclude_interfaces)
        self._tick = 100.0
        self._mem_fallback_warned = False
        self._read_warned: set[str] = set()

    # ------------------------------------------------------------------ helpers
    def _check_groups(self) -> None:
        unknown = [g for g in self.groups if g not in GROUPS]
        if unknown:
            raise UsageError(f"unknown proc metric group(s) {unknown}; choose from "
                             f"{list(GROUPS)}", parameter="groups")
        if not self.groups:
            raise UsageError(f"no proc metric group selected; choose from {list(GROUPS)}",
                             parameter="groups")

    def _path(self, group: str) -> str:
        return os.path.join(self.root, _GROUP_FILES[group])

    def _check_file(self, group: str) -> str:
        """Open, read and parse one group's file once; the reason it is unusable, or ""."""
        path = self._path(group)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            return f"cannot open {path}: {e.strerror or e}"
        try:
            data = perform([RawRead(fd, _INITIAL_SIZE[group], pread=True)])[0]
            if isinstance(data, int):
                raise raw_error(data)
            self._parse(group, data)
        except (OSError, ValueError, IndexError) as e:
            return f"cannot parse {path}: {e}"
        finally:
            os.close(fd)
        return ""

    # ------------------------------------------------------------------ parsers
    def _parse(self, group: str, data: bytes) -> object:
        if group == "cpu":
            return self._cpu_fields(data)
        if group == "mem":
            return self._parse_mem(data)
        if group == "disk":
            return self._parse_disk(data)
        return self._parse_net(data)

    @staticmethod
    def _cpu_fields(data: bytes) -> list[int]:
        end = data.find(b"\n")
        f = data[:end if end >= 0 else None].split()
        if not f or f[0] != b"cpu":
            raise ValueError("the first line is not the aggregate 'cpu' line")
        v = [int(x) for x in f[1:8]]
        v += [0] * (7 - len(v))
        user, nice, system, idle, iowait, irq, softirq = v
        return [user + nice, system + irq + softirq, iowait, idle]

    def _parse_mem(self, data: bytes) -> list[float]:
        total = _meminfo_kib(data, b"MemTotal:")
        if total is None:
            raise ValueError("no MemTotal line")
        cached = _meminfo_kib(data, b"Cached:") or 0
        available = _meminfo_kib(data, b"MemAvailable:")
        if available is None:
            if not self._mem_fallback_warned:
                self._mem_fallback_warned = True
                logger.warning("procfs mem: no MemAvailable (kernel < 3.14); used memory is "
                               "MemTotal - (MemFree + Buffers + Cached)")
            available = ((_meminfo_kib(data, b"MemFree:") or 0)
                         + (_meminfo_kib(data, b"Buffers:") or 0) + cached)
        return [float((total - available) * 1024), float(cached * 1024)]

    def _parse_disk(self, data: bytes) -> dict[bytes, tuple[int, ...]]:
        whole = self._disk_whole
        rows: dict[bytes, tuple[int, ...]] = {}
        lines = data.splitlines()
        for line in lines:
            f = line.split(None, 3)  # major, minor, name, the rest (split only when kept)
            if len(f) < 4:
                continue
            name = f[2]
            keep = whole.get(name)
            if keep is None:  # a device not seen yet: classify every name listed now
                names = [ln.split(None, 3)[2].decode(errors="replace") for ln in lines
                         if len(ln.split(None, 3)) >= 4]
                for n in names:
                    whole[n.encode()] = is_whole_disk(n, names)
                keep = whole[name]
            if keep:
                r = f[3].split()
                # iostats.rst fields 1, 3, 5, 7: reads completed, sectors read,
                # writes completed, sectors written
                rows[name] = (int(r[2]), int(r[6]), int(r[0]), int(r[4]))
        return rows

    def _parse_net(self, data: bytes) -> dict[bytes, tuple[int, ...]]:
        rows: dict[bytes, tuple[int, ...]] = {}
        exclude = self._exclude_bytes
        for line in data.splitlines()[2:]:
            name, sep, rest = line.partition(b":")
            if not sep:
                continue
            name = name.strip()
            if name in exclude:
                continue
            f = rest.split()
            rows[name] = (int(f[0]), int(f[8]), int(f[1]), int(f[9]))
        return rows

    # ------------------------------------------------------------------ Source API
    def probe(self) -> Availability:
        """Which groups' files exist and parse under ``root``."""
        self._check_groups()
        self._tick = float(os.sysconf("SC_CLK_TCK"))
        metrics: list[Metric] = []
        missing: dict[str, str] = {}
        for group in self.groups:
            reason = self._check_file(group)
            if reason:
                for m in _GROUP_METRICS[group]:
                    missing[m.name] = reason
            else:
                metrics.extend(_GROUP_METRICS[group])
        if not metrics:
            reasons = sorted(set(missing.values()))
            return Availability(self.name, False, "; ".join(reasons),
                                unavailable_metrics=missing)
        return Availability(self.name, True, "node-wide values" if not missing else
                            "some groups unavailable", tuple(metrics), missing)

    def for_command(self, interval: float = 0.01) -> Source | None:
        """The recorded command's process tree from /proc/PID, its metrics named ``cmd_...``
        (:class:`phasekit.record.sources.tree.ProcTreeSource`), read every ``interval`` s."""
        from phasekit.record.sources.tree import ProcTreeSource

        return ProcTreeSource(self.root, interval=interval)

    def open(self, scope: Scope, pid: int | None = None) -> tuple[Metric, ...]:
        """Open the files of the available groups (node-wide in both scopes)."""
        if scope not in ("node", "process"):
            raise UsageError("expected 'node' or 'process'", parameter="scope", value=scope)
        self.close()
        avail = self.probe()
        if not avail.available:
            raise UnsupportedError(f"proc source: {avail.reason}")
        for name, reason in avail.unavailable_metrics.items():
            logger.warning("proc source: %s unavailable: %s", name, reason)
        groups = [g for g in self.groups
                  if _GROUP_METRICS[g][0].name not in avail.unavailable_metrics]
        try:
            for group in groups:
                self._fds[group] = os.open(self._path(group), os.O_RDONLY | os.O_CLOEXEC)
                self._sizes[group] = _INITIAL_SIZE[group]
        except OSError as e:
            self.close()
            raise UnsupportedError(f"proc source: cannot open {e.filename}: {e.strerror}") from e
        self._acc = {g: _Accumulator(g, 4) for g in groups if g != "mem"}
        self._decoded = {}
        self._disk_whole = {}
        self._mem_fallback_warned = False
        self._read_warned = set()
        self._metrics = tuple(m for g in groups for m in _GROUP_METRICS[g])
        self._groups_open = tuple(groups)
        self.read()  # baseline of the per-device accumulators
        return self._metrics

    def read(self) -> list[float]:
        """Current totals (cumulative for counters), in the order of the opened metrics."""
        reads = self.raw_reads()
        if reads is None:
            raise UsageError("proc source: read() before open()")
        return self.decode(perform(reads))

    def raw_reads(self) -> tuple[RawRead, ...] | None:
        """One ``pread`` from offset 0 of each open group's file."""
        if not self._fds:
            return None
        return tuple(RawRead(self._fds[g], self._sizes[g], pread=True)
                     for g in self._groups_open)

    def decode(self, raw: Sequence[Raw]) -> list[float]:
        """Totals from the text of each group's file; a group whose file cannot be read or
        parsed is NaN (warned once)."""
        out: list[float] = []
        tick = self._tick
        decoded = self._decoded
        for group, data in zip(self._groups_open, raw, strict=True):
            last = decoded.get(group)
            if last is not None and last[0] == data:  # unchanged text (idle disks, network)
                out.extend(last[1])
                continue
            try:
                if isinstance(data, int):
                    raise raw_error(data)
                while len(data) >= self._sizes[group]:  # the next reads need no retry
                    self._sizes[group] *= 2
                if group == "cpu":
                    t = self._acc["cpu"].update({b"cpu": tuple(self._cpu_fields(data))})
                    values = [t[0] / tick, t[1] / tick, t[2] / tick, t[3] / tick]
                elif group == "mem":
                    values = self._parse_mem(data)
                elif group == "disk":
                    t = self._acc["disk"].update(self._parse_disk(data))
                    values = [float(t[0] * _SECTOR_BYTES), float(t[1] * _SECTOR_BYTES),
                              float(t[2]), float(t[3])]
                else:
                    t = self._acc["net"].update(self._parse_net(data))
                    values = [float(t[0]), float(t[1]), float(t[2]), float(t[3])]
            except (OSError, ValueError, IndexError) as e:
                if group not in self._read_warned:
                    self._read_warned.add(group)
                    logger.warning("procfs %s: cannot read %s (%s); NaN (warned once)", group,
                                   self._path(group), e)
                values = [math.nan] * len(_GROUP_METRICS[group])
                data = b""  # never matches a successful read
            decoded[group] = (data, values)
            out.extend(values)
        return out

    def close(self) -> None:
        """Close the procfs files."""
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = {}
        self._sizes = {}

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
