"""Hardware and software counters through the Linux ``perf_event_open`` system call.

Everything cited here is from perf_event_open(2) (man-pages) and the kernel's uapi header
``include/uapi/linux/perf_event.h``.

Two sources: :class:`PerfHardwareSource` (``"perf-hw"``: instructions, cycles, ref_cycles,
cache_references, cache_misses, branches, branch_misses; ``PERF_TYPE_HARDWARE``) and
:class:`PerfSoftwareSource` (``"perf-sw"``: task_clock in s, context_switches, page_faults,
cpu_migrations; ``PERF_TYPE_SOFTWARE``). All metrics are cumulative counters.

Scopes
    ``open("node")`` opens the events on every online CPU (``pid=-1, cpu=c``, CPUs from
    ``/sys/devices/system/cpu/online``) and sums over CPUs. It needs CAP_PERFMON (or
    CAP_SYS_ADMIN) or ``perf_event_paranoid <= 0``. ``task_clock`` is dropped there: on a CPU
    (not a task) the kernel's task clock runs with the CPU context, i.e. it counts wall time
    whether the CPU is busy or idle (measured: 1.0 s per CPU per second, with or without
    ``exclude_idle``), which says nothing about the node; the procfs source has CPU time.

    ``open("process", pid)`` opens the events with ``inherit=1`` on every task (thread) of the
    process tree rooted at ``pid`` that exists at open time (``pid=tid, cpu=-1``); tasks created
    later inherit the counters of the task that creates them (perf_event_open(2), "inherit":
    only children created after the counter), and the kernel adds the counts of exited children
    to their parent's. Tasks are listed before any counter is attached, so no task is counted
    twice; a task created during ``open`` by a task not yet attached is missed. With
    ``enable_on_exec=True`` the counters start at the target's next ``execve`` (for a runner
    that forks, opens, then lets the child exec).

Groups and reads
    Events that must be compared are opened as one counter group, scheduled together by the
    kernel: (instructions, cycles, ref_cycles), (cache_references, cache_misses),
    (branches, branch_misses), and the software events together. A member that the kernel
    refuses in a group (too many counters for the PMU) is opened as its own group. Each group
    is read with one ``read(2)`` of ``PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
    PERF_FORMAT_TOTAL_TIME_RUNNING``::

        struct read_format { u64 nr; u64 time_enabled; u64 time_running;
                             struct { u64 value; } values[nr]; };

    Kernels before 4.13 refuse ``inherit`` together with ``PERF_FORMAT_GROUP`` (``EINVAL``;
    kernel commit ba5213ae6b88 lifted it); in process scope the source then falls back to one
    read per event of ``{ u64 value; u64 time_enabled; u64 time_running; }`` (the events stay
    in one kernel group, so they are still scheduled together).

Multiplexing
    When the PMU has fewer counters than events, the kernel time-shares them; the count of
    each interval between two reads is scaled by that interval's ``Δtime_enabled /
    Δtime_running`` (perf_event_open(2), "read_format", applied per interval as ``perf stat
    -I`` does), and the cumulative totals ``read`` returns are sums of these, so they never
    step back. A group that was enabled but did not run in an interval (``Δtime_running == 0
    < Δtime_enabled``) has no estimate: its metrics read NaN for that read (the recorder's
    increases around it are then NaN, a gap, never a made-up zero). A group not enabled yet
    (both 0, e.g. a task that has not run) reads 0. :attr:`PerfEventSource.running_ratio` is
    the smallest ``Δrunning / Δenabled`` of the last read (1.0: no multiplexing).

Permissions (perf_event_open(2), "perf_event related configuration files")
    In process scope a counter that includes kernel time needs ``perf_event_paranoid <= 1``;
    at 2 an unprivileged user may count user space only: the source then retries with
    ``exclude_kernel=1, exclude_hv=1`` and says so in :meth:`PerfEventSource.metadata`.

The system calls go through a :class:`PerfSyscalls` object (``open``/``read``/``ioctl``/
``close``); tests pass a fake one.
"""

from __future__ import annotations

import ctypes
import errno as errno_mod
import logging
import math
import os
import platform
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from phasekit.errors import UnsupportedError, UsageError
from phasekit.record.sources.base import (
    Availability,
    Metric,
    Raw,
    RawRead,
    Scope,
    Source,
    raw_error,
)

logger = logging.getLogger(__name__)

__all__ = [
    "HARDWARE_EVENTS",
    "SOFTWARE_EVENTS",
    "PerfEvent",
    "PerfEventAttr",
    "PerfEventSource",
    "PerfHardwareSource",
    "PerfSoftwareSource",
    "PerfSyscalls",
    "errno_reason",
    "parse_cpu_list",
]

# ----------------------------------------------------------------------------- uapi constants
# include/uapi/linux/perf_event.h
PERF_TYPE_HARDWARE = 0
PERF_TYPE_SOFTWARE = 1

PERF_COUNT_HW_CPU_CYCLES = 0
PERF_COUNT_HW_INSTRUCTIONS = 1
PERF_COUNT_HW_CACHE_REFERENCES = 2
PERF_COUNT_HW_CACHE_MISSES = 3
PERF_COUNT_HW_BRANCH_INSTRUCTIONS = 4
PERF_COUNT_HW_BRANCH_MISSES = 5
PERF_COUNT_HW_REF_CPU_CYCLES = 9

PERF_COUNT_SW_TASK_CLOCK = 1
PERF_COUNT_SW_PAGE_FAULTS = 2
PERF_COUNT_SW_CONTEXT_SWITCHES = 3
PERF_COUNT_SW_CPU_MIGRATIONS = 4

PERF_FORMAT_TOTAL_TIME_ENABLED = 1 << 0
PERF_FORMAT_TOTAL_TIME_RUNNING = 1 << 1
PERF_FORMAT_ID = 1 << 2
PERF_FORMAT_GROUP = 1 << 3

PERF_FLAG_FD_CLOEXEC = 1 << 3
PERF_IOC_FLAG_GROUP = 1

PERF_ATTR_SIZE_VER0 = 64
PERF_ATTR_SIZE_VER8 = 136  # add: config3 (Linux 6.3)

_READ_FORMAT_SINGLE = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING
_READ_FORMAT_GROUP = _READ_FORMAT_SINGLE | PERF_FORMAT_GROUP

_MACHINE = platform.machine().lower()
_POINTER_BITS = struct.calcsize("P") * 8


def _ioc_none(nr: int) -> int:
    """``_IO('$', nr)``: the perf ioctls (PERF_EVENT_IOC_ENABLE = _IO('$', 0), …).

    ``_IOC_NONE`` is 0 with the generic ioctl encoding and 1 << 29 on powerpc, mips and sparc
    (arch/*/include/uapi/asm/ioctl.h)."""
    none = (1 << 29) if _MACHINE.startswith(("ppc", "powerpc", "mips", "sparc")) else 0
    return none | (ord("$") << 8) | nr


PERF_EVENT_IOC_ENABLE = _ioc_none(0)
PERF_EVENT_IOC_DISABLE = _ioc_none(1)
PERF_EVENT_IOC_RESET = _ioc_none(3)


def perf_event_open_number(machine: str = _MACHINE, pointer_bits: int = _POINTER_BITS) -> int | None:
    """``__NR_perf_event_open`` for a CPU architecture, from the kernel's syscall tables.

    x86_64 298 (arch/x86/entry/syscalls/syscall_64.tbl); i386 336 (syscall_32.tbl, also a
    32-bit Python on an x86_64 kernel); 241 for the architectures on the generic table
    (include/uapi/asm-generic/unistd.h: arm64, riscv, loongarch); arm 364
    (arch/arm/tools/syscall.tbl, also 32-bit userland on arm64); powerpc 319; s390 331.
    None for others."""
    m = machine.lower()
    if m in ("x86_64", "amd64"):
        return 298 if pointer_bits == 64 else 336
    if m in ("i386", "i486", "i586", "i686", "x86"):
        return 336
    if m in ("aarch64", "arm64", "aarch64_be"):
        return 241 if pointer_bits == 64 else 364
    if m.startswith("arm"):
        return 364
    if m.startswith(("riscv", "loongarch")):
        return 241
    if m.startswith(("ppc", "powerpc")):
        return 319
    if m.startswith("s390"):
        return 331
    return None


# ----------------------------------------------------------------------------- perf_event_attr
_u32, _u64, _u16, _s32 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint16, ctypes.c_int32

_FLAG_BITS: tuple[tuple[str, int], ...] = (
    ("disabled", 1), ("inherit", 1), ("pinned", 1), ("exclusive", 1),
    ("exclude_user", 1), ("exclude_kernel", 1), ("exclude_hv", 1), ("exclude_idle", 1),
    ("mmap", 1), ("comm", 1), ("freq", 1), ("inherit_stat", 1), ("enable_on_exec", 1),
    ("task", 1), ("watermark", 1), ("precise_ip", 2), ("mmap_data", 1), ("sample_id_all", 1),
    ("exclude_host", 1), ("exclude_guest", 1), ("exclude_callchain_kernel", 1),
    ("exclude_callchain_user", 1), ("mmap2", 1), ("comm_exec", 1), ("use_clockid", 1),
    ("context_switch", 1), ("write_backward", 1), ("namespaces", 1), ("ksymbol", 1),
    ("bpf_event", 1), ("aux_output", 1), ("cgroup", 1), ("text_poke", 1), ("build_id", 1),
    ("inherit_thread", 1), ("remove_on_exec", 1), ("sigtrap", 1), ("reserved_1", 26),
)


#: Times a refused group read of inherited counters (ECHILD: a child's copy of the group is
#: being torn down) is tried again before the interval counts as unknown.
READ_RETRIES = 3

class PerfEventAttr(ctypes.Structure):
    """``struct perf_event_attr`` up to ``PERF_ATTR_SIZE_VER8`` (136 bytes), as in
    include/uapi/linux/perf_event.h; unions are given one member (``sample_period``,
    ``wakeup_events``, ``config1``, ``config2``). The flag bit-fields fill one ``__u64`` at
    offset 40, from bit 0 (``disabled``) upwards, as GCC lays them out on little-endian
    targets. A kernel older than the struct accepts it when the bytes it does not know are zero
    (perf_event_open(2), "size"); ``size`` must be set to ``ctypes.sizeof``.
    """

    _fields_: ClassVar = [
        ("type", _u32),
        ("size", _u32),
        ("config", _u64),
        ("sample_period", _u64),
        ("sample_type", _u64),
        ("read_format", _u64),
        *[(name, _u64, bits) for name, bits in _FLAG_BITS],
        ("wakeup_events", _u32),
        ("bp_type", _u32),
        ("config1", _u64),
        ("config2", _u64),
        ("branch_sample_type", _u64),
        ("sample_regs_user", _u64),
        ("sample_stack_user", _u32),
        ("clockid", _s32),
        ("sample_regs_intr", _u64),
        ("aux_watermark", _u32),
        ("sample_max_stack", _u16),
        ("reserved_2", _u16),
        ("aux_sample_size", _u32),
        ("aux_action", _u32),
        ("sig_data", _u64),
        ("config3", _u64),
    ]


# ----------------------------------------------------------------------------- system calls
class PerfSyscalls:
    """The system-call boundary: ``perf_event_open``, ``read``, ``ioctl`` and ``close``.

    ``open`` returns a file descriptor or raises ``OSError`` with the errno; tests substitute
    an object with the same four methods."""

    read = staticmethod(os.read)  # read(fd, n) -> bytes, bound directly: no Python frame
    close = staticmethod(os.close)

    def __init__(self) -> None:
        self._syscall = None
        self._number = perf_event_open_number()

    def open(self, attr: PerfEventAttr, pid: int, cpu: int, group_fd: int, flags: int) -> int:
        """``syscall(__NR_perf_event_open, &attr, pid, cpu, group_fd, flags)``."""
        if self._number is None:
            raise OSError(errno_mod.ENOSYS, f"perf_event_open: unknown system call number "
                                            f"for architecture {platform.machine()!r}")
        if self._syscall is None:
            libc = ctypes.CDLL(None, use_errno=True)
            fn = libc.syscall
            fn.restype = ctypes.c_long
            self._syscall = fn
        # Every argument is passed as a long: syscall(2) is variadic and reads longs.
        fd = self._syscall(ctypes.c_long(self._number), ctypes.byref(attr), ctypes.c_long(pid),
                           ctypes.c_long(cpu), ctypes.c_long(group_fd), ctypes.c_ulong(flags))
        if fd < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        return int(fd)

    def ioctl(self, fd: int, request: int, arg: int = 0) -> None:
        import fcntl

        fcntl.ioctl(fd, request, arg)


# ----------------------------------------------------------------------------- events
@dataclass(frozen=True)
class PerfEvent:
    """One counter: phasekit's metric name, the kernel's ``type``/``config``, the unit of the
    reported value, the factor from the kernel's count to that unit, and the counter group it
    joins."""

    name: str
    type: int
    config: int
    unit: str = ""
    scale: float = 1.0
    group: str = ""
    process_only: str = ""  # reason the event is not offered in node scope, when it is not

    @property
    def metric(self) -> Metric:
        return Metric(self.name, self.unit, "counter")


HARDWARE_EVENTS: tuple[PerfEvent, ...] = (
    PerfEvent("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, group="core"),
    PerfEvent("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, group="core"),
    PerfEvent("ref_cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, group="core"),
    PerfEvent("cache_references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
              group="cache"),
    PerfEvent("cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, group="cache"),
    PerfEvent("branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, group="branch"),
    PerfEvent("branch_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, group="branch"),
)

SOFTWARE_EVENTS: tuple[PerfEvent, ...] = (
    PerfEvent("task_clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "s", 1e-9, "sw",
              process_only="process scope only: on a CPU the kernel's task clock counts wall "
                           "time, busy or idle (use the proc source's CPU time)"),
    PerfEvent("context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, group="sw"),
    PerfEvent("page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, group="sw"),
    PerfEvent("cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, group="sw"),
)


# ----------------------------------------------------------------------------- system facts
def parse_cpu_list(text: str) -> list[int]:
    """CPU numbers of a kernel cpulist such as ``"0-3,8,10-11"``
    (Documentation/admin-guide/cputopology.rst)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    return cpus


def _read_int(path: str) -> int | None:
    try:
        with open(path, "rb") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _has_perf_capability(proc_root: str) -> bool:
    """Whether this process has CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in its effective set."""
    try:
        with open(os.path.join(proc_root, "self", "status"), "rb") as f:
            for line in f:
                if line.startswith(b"CapEff:"):
                    caps = int(line.split()[1], 16)
                    return bool(caps & ((1 << 38) | (1 << 21)))
    except (OSError, ValueError, IndexError):
        pass
    return False


def errno_reason(err: int, *, scope: Scope, paranoid: int | None, privileged: bool = False,
                 user_only_tried: bool = False) -> str:
    """Why ``perf_event_open`` failed, in words a user can act on (perf_event_open(2), ERRORS).

    ``paranoid`` is ``/proc/sys/kernel/perf_event_paranoid`` (None when absent); ``privileged``
    whether this process has CAP_PERFMON/CAP_SYS_ADMIN; ``user_only_tried`` whether the call
    already excluded kernel counting."""
    # errno names as the kernel spells them (Python calls 95 ENOTSUP on Linux)
    name = "EOPNOTSUPP" if err == errno_mod.EOPNOTSUPP else errno_mod.errorcode.get(err, str(err))
    if err in (errno_mod.ENOENT, errno_mod.EOPNOTSUPP, errno_mod.ENODEV):
        return f"not supported by this CPU or virtual machine ({name})"
    if err in (errno_mod.EACCES, errno_mod.EPERM):
        if privileged:
            return (f"permission denied although this process has CAP_PERFMON/CAP_SYS_ADMIN: "
                    f"a seccomp filter or security module (e.g. a container runtime) blocks "
                    f"perf_event_open ({name})")
        p = "unknown" if paranoid is None else str(paranoid)
        if paranoid is not None and paranoid >= 3:
            need = "CAP_PERFMON (perf_event_paranoid >= 3 forbids perf events to other users)"
        elif scope == "node":
            need = "CAP_PERFMON or perf_event_paranoid <= 0 for node scope"
        else:
            need = ("CAP_PERFMON or perf_event_paranoid <= 2 for process scope (user space)"
                    if user_only_tried else
                    "CAP_PERFMON or perf_event_paranoid <= 1 for process scope")
        return f"permission denied (perf_event_paranoid={p}; needs {need}) ({name})"
    if err == errno_mod.ENOSYS:
        return ("the kernel has no perf events (CONFIG_PERF_EVENTS) or no known "
                f"perf_event_open system call for this architecture ({name})")
    if err == errno_mod.ESRCH:
        return f"no such process ({name})"
    if err == errno_mod.EMFILE:
        return f"too many open files: raise the file descriptor limit, ulimit -n ({name})"
    if err == errno_mod.EBUSY:
        return f"the counter is in exclusive use by another tool ({name})"
    if err == errno_mod.ENOSPC:
        return f"not enough hardware counters ({name})"
    if err == errno_mod.E2BIG:
        return f"the kernel rejected the perf_event_attr size ({name})"
    if err == errno_mod.EINVAL:
        return f"the kernel rejected the event configuration ({name})"
    return f"perf_event_open failed: {os.strerror(err)} ({name})"


# ----------------------------------------------------------------------------- readers
@dataclass
class _Group:
    """One opened counter group on one target: its fds (leader first) and event names."""

    fds: list[int]
    names: list[str]
    grouped_read: bool


class _OpenError(Exception):
    def __init__(self, event: str, err: int, target: tuple[int, int]) -> None:
        super().__init__(event, err, target)
        self.event, self.err, self.target = event, err, target


class _FirstError(Exception):
    """An event refused on the first target (its errno; whether user-only was tried)."""

    def __init__(self, err: int, user_only: bool = False) -> None:
        super().__init__(err)
        self.err = err
        self.user_only = user_only


# ----------------------------------------------------------------------------- the sources
class PerfEventSource(Source):
    """Counters through ``perf_event_open`` (module docstring); see the two subclasses.

    Parameters (keyword-only)
    ----------
    events:
        Metric names to open, a subset of the source's events (default: all).
    exclude_kernel:
        None (default): count user and kernel space, or user space only when the kernel allows
        no more (perf_event_paranoid 2 without CAP_PERFMON); True/False to force it.
    group_read:
        None (default): read each group with ``PERF_FORMAT_GROUP`` where the kernel accepts it;
        False: one read per event.
    enable_on_exec:
        Process scope: start counting at the target's next ``execve`` instead of at ``open``.
    syscalls:
        The system-call boundary (default: the real :class:`PerfSyscalls`).
    proc_root, sys_root:
        Where procfs and sysfs are mounted (``perf_event_paranoid``, process trees, online
        CPUs, PMUs); tests point them at fake trees.
    """

    name = "perf"
    #: Whether the kernel may time-share these counters (hardware PMUs). Software events are
    #: always scheduled; their ``time_enabled`` and ``time_running`` of inherited counters
    #: still drift apart as exited children's times are folded in, so scaling them would
    #: over-count (perf_event_open(2), "read_format").
    multiplexed = True
    EVENTS: ClassVar[tuple[PerfEvent, ...]] = ()
    per_process: ClassVar[bool] = True  # scope "process" measures the tree, not the node

    def __init__(self, *, events: Sequence[str] | None = None,
                 exclude_kernel: bool | None = None, group_read: bool | None = None,
                 enable_on_exec: bool = False, syscalls: PerfSyscalls | None = None,
                 proc_root: str = "/proc", sys_root: str = "/sys") -> None:
        self.events = None if events is None else tuple(events)
        self.exclude_kernel = exclude_kernel
        self.group_read = group_read
        self.enable_on_exec = enable_on_exec
        self.syscalls = syscalls
        self.proc_root = proc_root
        self.sys_root = sys_root
        self._sys: PerfSyscalls | None = None
        self._groups: list[_Group] = []
        self._readers: list[tuple[int, int, Callable[[bytes], tuple[int, ...]], int, int,
                                  tuple[tuple[int, int], ...]]] = []
        self._nr_check: tuple[tuple[int, int], ...] = ()
        self._scales: tuple[tuple[int, float], ...] = ()
        self._n = 0
        self._metrics: tuple[Metric, ...] = ()
        self._ratio = 1.0
        self._read = os.read
        self.dropped: dict[str, str] = {}
        self._meta: dict[str, object] = {}

    # ------------------------------------------------------------------ helpers
    def _selected(self) -> tuple[PerfEvent, ...]:
        if self.events is None:
            return self.EVENTS
        known = {e.name: e for e in self.EVENTS}
        unknown = [n for n in self.events if n not in known]
        if unknown:
            raise UsageError(f"{self.name} source: unknown event(s) {unknown}; "
                             f"choose from {list(known)}", parameter="events")
        if not self.events:
            raise UsageError(f"{self.name} source: no event selected; choose from "
                             f"{list(known)}", parameter="events")
        return tuple(e for e in self.EVENTS if e.name in self.events)

    def _get_sys(self) -> PerfSyscalls:
        if self._sys is None:
            self._sys = self.syscalls if self.syscalls is not None else PerfSyscalls()
        return self._sys

    def _paranoid(self) -> int | None:
        return _read_int(os.path.join(self.proc_root, "sys", "kernel", "perf_event_paranoid"))

    def _online_cpus(self) -> list[int]:
        path = os.path.join(self.sys_root, "devices", "system", "cpu", "online")
        try:
            with open(path) as f:
                cpus = parse_cpu_list(f.read())
        except (OSError, ValueError) as e:
            raise UnsupportedError(f"{self.name} source: cannot read the online CPUs from "
                                   f"{path}: {e}") from e
        if not cpus:
            raise UnsupportedError(f"{self.name} source: no online CPU in {path}")
        return cpus

    def _has_core_pmu(self) -> bool | None:
        """Whether sysfs lists a CPU PMU (``cpu``, or one with a ``cpus`` file: hybrid x86
        ``cpu_core``/``cpu_atom``, arm64 ``armv8_*``); None when the bus cannot be read."""
        root = os.path.join(self.sys_root, "bus", "event_source", "devices")
        try:
            names = os.listdir(root)
        except OSError:
            return None
        return any(n == "cpu" or os.path.exists(os.path.join(root, n, "cpus")) for n in names)

    def _reason(self, err: int, scope: Scope, user_only_tried: bool,
                ev: PerfEvent | None = None) -> str:
        reason = errno_reason(err, scope=scope, paranoid=self._paranoid(),
                              privileged=_has_perf_capability(self.proc_root),
                              user_only_tried=user_only_tried)
        if (ev is not None and ev.type == PERF_TYPE_HARDWARE
                and err in (errno_mod.ENOENT, errno_mod.EOPNOTSUPP, errno_mod.ENODEV)
                and self._has_core_pmu() is False):
            reason += ("; the kernel lists no CPU PMU in /sys/bus/event_source/devices "
                       "(typical of a virtual machine without a virtual PMU)")
        return reason

    def _attr(self, ev: PerfEvent, *, inherit: bool, read_format: int, user_only: bool,
              on_exec: bool = False) -> PerfEventAttr:
        attr = PerfEventAttr()
        attr.type = ev.type
        attr.size = ctypes.sizeof(PerfEventAttr)
        attr.config = ev.config
        attr.read_format = read_format
        attr.disabled = 1
        attr.inherit = int(inherit)
        attr.exclude_kernel = int(user_only)
        attr.exclude_hv = int(user_only)
        attr.enable_on_exec = int(on_exec)
        return attr

    def _try_open(self, ev: PerfEvent, pid: int, cpu: int, user_only: bool) -> int:
        """Open one event alone and close it again; 0 when it opens, else the errno."""
        sys_ = self._get_sys()
        try:
            fd = sys_.open(self._attr(ev, inherit=False, read_format=_READ_FORMAT_SINGLE,
                                      user_only=user_only), pid, cpu, -1, PERF_FLAG_FD_CLOEXEC)
        except OSError as e:
            return e.errno or errno_mod.EIO
        sys_.close(fd)
        return 0

    def _process_tasks(self, pid: int) -> list[int]:
        """Thread ids of the process tree rooted at ``pid``, the root's main thread first."""
        proc = self.proc_root
        tasks: list[int] = []
        todo = [pid]
        seen: set[int] = set()
        ppid_map: dict[int, list[int]] | None = None
        while todo:
            p = todo.pop(0)
            if p in seen:
                continue
            seen.add(p)
            try:
                tids = sorted(int(t) for t in os.listdir(os.path.join(proc, str(p), "task")))
            except (OSError, ValueError):
                if p == pid:
                    tids = [pid]  # no /proc view of it: let perf_event_open decide
                else:
                    continue
            if p in tids:
                tids.remove(p)
            tasks.extend([p, *tids])
            children: list[int] = []
            for tid in [p, *tids]:
                try:
                    with open(os.path.join(proc, str(p), "task", str(tid), "children"),
                              "rb") as f:
                        children.extend(int(c) for c in f.read().split())
                except FileNotFoundError:
                    if ppid_map is None:  # kernel without CONFIG_PROC_CHILDREN: scan ppids
                        ppid_map = self._ppid_map()
                    children = ppid_map.get(p, [])
                    break
                except (OSError, ValueError):
                    continue
            todo.extend(children)
        return tasks

    def _ppid_map(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        try:
            names = [n for n in os.listdir(self.proc_root) if n.isdigit()]
        except OSError:
            return out
        for n in names:
            try:
                with open(os.path.join(self.proc_root, n, "stat"), "rb") as f:
                    data = f.read()
                ppid = int(data[data.rfind(b")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            out.setdefault(ppid, []).append(int(n))
        return out

    # ------------------------------------------------------------------ Source API
    def probe(self) -> Availability:
        """Open and close each event on this process (process scope), then the first one that
        opens on the first online CPU (node scope); the reasons for what fails."""
        events = self._selected()
        metrics: list[Metric] = []
        missing: dict[str, str] = {}
        user_only = bool(self.exclude_kernel)
        notes: list[str] = []
        for ev in events:
            err = self._try_open(ev, 0, -1, user_only)
            tried_user = user_only
            if err in (errno_mod.EACCES, errno_mod.EPERM) and self.exclude_kernel is None:
                tried_user = True
                err2 = self._try_open(ev, 0, -1, True)
                if not err2:
                    if not user_only:
                        notes.append("process scope counts user space only "
                                     f"(perf_event_paranoid={self._paranoid()})")
                    user_only = True
                    err = 0
                elif err2 not in (errno_mod.EACCES, errno_mod.EPERM):
                    err = err2
            if err:
                missing[ev.name] = self._reason(err, "process", tried_user, ev)
            else:
                metrics.append(ev.metric)
        if not metrics:
            reasons = sorted(set(missing.values()))
            return Availability(self.name, False, "; ".join(reasons),
                                unavailable_metrics=missing)
        try:
            cpu0 = self._online_cpus()[0]
            first = next(e for e in events if e.name not in missing)
            err = self._try_open(first, -1, cpu0, False)
            if err:
                notes.append("node scope unavailable: " + self._reason(err, "node", False))
        except UnsupportedError as e:
            notes.append(f"node scope unavailable: {e}")
        for ev in events:
            if ev.process_only and ev.name not in missing:
                notes.append(f"{ev.name}: {ev.process_only}")
        if missing:
            notes.append(f"{len(missing)} of {len(events)} events unavailable")
        return Availability(self.name, True, "; ".join(notes) or "all events available",
                            tuple(metrics), missing)

    def open(self, scope: Scope, pid: int | None = None) -> tuple[Metric, ...]:
        """Open the events (module docstring, "Scopes"); returns the metrics ``read`` reports.

        Events that fail are dropped with their reason in :attr:`dropped` (logged as
        warnings); UnsupportedError when none opens, UsageError for a bad scope or pid."""
        if scope not in ("node", "process"):
            raise UsageError("expected 'node' or 'process'", parameter="scope", value=scope)
        if scope == "process":
            if pid is None or int(pid) < 0:
                raise UsageError(f"{self.name} source: scope 'process' needs the pid of the "
                                 "process tree's root", parameter="pid", value=pid)
            pid = int(pid) or os.getpid()
        self.close()
        events = list(self._selected())
        dropped: dict[str, str] = {}
        if scope == "node":
            for ev in [e for e in events if e.process_only]:
                dropped[ev.name] = ev.process_only
                events.remove(ev)
            targets = [(-1, c) for c in self._online_cpus()]
        else:
            assert pid is not None
            targets = [(t, -1) for t in self._process_tasks(pid)]
        inherit = scope == "process"
        user_only = bool(self.exclude_kernel)
        grouped = self.group_read is not False
        sys_ = self._get_sys()

        groups: list[_Group] = []
        while True:  # each pass either succeeds or drops one more event (bounded)
            if not events:
                self.dropped = dropped
                reasons = sorted(set(dropped.values()))
                raise UnsupportedError(f"{self.name} source: no event can be opened: "
                                       + "; ".join(reasons))
            try:
                plan, groups, skipped, grouped, user_only = self._open_first(
                    events, targets[0], inherit, user_only, grouped, dropped, scope)
                live_targets = [targets[0]]
                for target in targets[1:]:
                    got = self._open_plan(plan, target, inherit, user_only, grouped,
                                          tolerate_esrch=scope == "process")
                    if got is not None:
                        groups.extend(got)
                        live_targets.append(target)
                events = [e for e in events if e.name not in skipped]
                if not groups:
                    self.dropped = dropped
                    reasons = sorted(set(dropped.values()))
                    raise UnsupportedError(f"{self.name} source: no event can be opened: "
                                           + "; ".join(reasons))
                break
            except _OpenError as e:
                for g in groups:
                    for fd in g.fds:
                        sys_.close(fd)
                groups = []
                if e.err == errno_mod.ESRCH and e.target == targets[0] and scope == "process":
                    raise UsageError(f"{self.name} source: no process with pid {pid}") from None
                where = f"cpu {e.target[1]}" if scope == "node" else f"task {e.target[0]}"
                ev_failed = next((ev for ev in events if ev.name == e.event), None)
                dropped[e.event] = (f"fails on {where}: "
                                    + self._reason(e.err, scope, user_only, ev_failed))
                events = [ev for ev in events if ev.name not in dropped]
        by_design = {ev.name for ev in self.EVENTS if ev.process_only} if scope == "node" else set()
        for name, reason in dropped.items():  # a drop by design is no news: info only
            log = logger.info if name in by_design else logger.warning
            log("%s source: %s unavailable: %s", self.name, name, reason)
        self._groups = groups
        self.dropped = dropped
        try:
            if not self.enable_on_exec:
                for g in groups:
                    sys_.ioctl(g.fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP)
            self._build_readers(events)
            self._verify_layout()
            self.read()
        except BaseException:
            self.close()
            raise
        self._meta = {
            "source": self.name, "scope": scope, "pid": pid,
            "targets": len(live_targets),
            "groups": [list(n) for n in dict.fromkeys(tuple(g.names) for g in groups)],
            "group_read": grouped, "inherit": inherit,
            "counting": "user" if user_only else "user+kernel",
            "dropped": dict(dropped),
        }
        return self._metrics

    def _open_first(self, events: list[PerfEvent], target: tuple[int, int], inherit: bool,
                    user_only: bool, grouped: bool, dropped: dict[str, str], scope: Scope,
                    ) -> tuple[list[list[PerfEvent]], list[_Group], set[str], bool, bool]:
        """Open the events on the first target, deciding the groups, the read format and
        user-only counting as the kernel answers; events that fail go to ``dropped``."""
        sys_ = self._get_sys()
        pid, cpu = target
        plan: list[list[PerfEvent]] = []
        groups: list[_Group] = []
        skipped: set[str] = set()

        def try_open(ev: PerfEvent, leader: int, group_fmt: bool, user: bool) -> int:
            """The fd, or minus the errno."""
            fmt = _READ_FORMAT_GROUP if group_fmt else _READ_FORMAT_SINGLE
            try:
                return sys_.open(self._attr(ev, inherit=inherit, read_format=fmt, user_only=user,
                                            on_exec=self.enable_on_exec),
                                 pid, cpu, leader, PERF_FLAG_FD_CLOEXEC)
            except OSError as e:
                return -(e.errno or errno_mod.EIO)

        def attempt(ev: PerfEvent, leader: int) -> int:
            """Open ``ev``; the first event that opens settles user-only counting and the read
            format for all (the kernel's answer does not depend on the event)."""
            nonlocal grouped, user_only
            first = leader == -1 and not groups
            g, u = grouped, user_only
            r = try_open(ev, leader, g, u)
            if (r < 0 and first and -r in (errno_mod.EACCES, errno_mod.EPERM) and not u
                    and self.exclude_kernel is None and scope == "process"):
                u = True  # perf_event_paranoid 2: user space only (perf_event_open(2))
                r = try_open(ev, leader, g, u)
            if (r < 0 and first and -r == errno_mod.EINVAL and g and inherit
                    and self.group_read is None):
                g = False  # kernels < 4.13: inherit together with PERF_FORMAT_GROUP is EINVAL
                r = try_open(ev, leader, g, u)
            if r < 0:
                raise _FirstError(-r, u)
            if u and not user_only:
                user_only = True
                logger.warning("%s source: counting user space only (perf_event_paranoid=%s)",
                               self.name, self._paranoid())
            if grouped and not g:
                grouped = False
                logger.info("%s source: the kernel refuses inherit with PERF_FORMAT_GROUP; "
                            "reading one event at a time", self.name)
            return r

        try:
            for key in dict.fromkeys(e.group for e in events):
                current: _Group | None = None
                for ev in [e for e in events if e.group == key]:
                    if current is not None:
                        try:
                            fd = attempt(ev, current.fds[0])
                            current.fds.append(fd)
                            current.names.append(ev.name)
                            plan[-1].append(ev)
                            continue
                        except _FirstError:
                            pass  # refused in this group: try it as a group of its own
                    try:
                        fd = attempt(ev, -1)
                    except _FirstError as e:
                        if e.err == errno_mod.ESRCH:
                            raise _OpenError(ev.name, e.err, target) from None
                        dropped[ev.name] = self._reason(e.err, scope, e.user_only, ev)
                        skipped.add(ev.name)
                        continue
                    current = _Group([fd], [ev.name], grouped)
                    groups.append(current)
                    plan.append([ev])
        except BaseException:
            for g in groups:
                for fd in g.fds:
                    sys_.close(fd)
            raise
        return plan, groups, skipped, grouped, user_only

    def _open_plan(self, plan: list[list[PerfEvent]], target: tuple[int, int], inherit: bool,
                   user_only: bool, grouped: bool, tolerate_esrch: bool) -> list[_Group] | None:
        """Open the groups decided on the first target on another one; None if that task has
        exited meanwhile (process scope)."""
        sys_ = self._get_sys()
        pid, cpu = target
        fmt = _READ_FORMAT_GROUP if grouped else _READ_FORMAT_SINGLE
        groups: list[_Group] = []
        try:
            for members in plan:
                g = _Group([], [], grouped)
                groups.append(g)
                for ev in members:
                    try:
                        fd = sys_.open(self._attr(ev, inherit=inherit, read_format=fmt,
                                                  user_only=user_only,
                                                  on_exec=self.enable_on_exec),
                                       pid, cpu, g.fds[0] if g.fds else -1, PERF_FLAG_FD_CLOEXEC)
                    except OSError as e:
                        raise _OpenError(ev.name, e.errno or errno_mod.EIO, target) from None
                    g.fds.append(fd)
                    g.names.append(ev.name)
        except _OpenError as e:
            for g in groups:
                for fd in g.fds:
                    sys_.close(fd)
            if tolerate_esrch and e.err == errno_mod.ESRCH:
                return None
            raise
        return groups

    def _build_readers(self, events: list[PerfEvent]) -> None:
        """Precompile one (fd, size, unpack, enabled index, running index, slots) per read."""
        index = {ev.name: i for i, ev in enumerate(events)}
        readers = []
        for g in self._groups:
            if g.grouped_read:
                st = struct.Struct(f"={3 + len(g.fds)}Q")
                slots = tuple((3 + k, index[n]) for k, n in enumerate(g.names))
                readers.append((g.fds[0], st.size, st.unpack, 1, 2, slots, len(g.fds)))
            else:
                st = struct.Struct("=3Q")
                for fd, n in zip(g.fds, g.names, strict=True):
                    readers.append((fd, st.size, st.unpack, 1, 2, ((0, index[n]),), -1))
        self._nr_check = tuple((r[0], r[6]) for r in readers if r[6] >= 0)
        self._readers = [r[:6] for r in readers]
        self._last: list[tuple[int, ...] | None] = [None] * len(readers)
        self._totals = [0.0] * len(events)
        self._unknown = [False] * len(events)
        self._scales = tuple((i, ev.scale) for i, ev in enumerate(events) if ev.scale != 1.0)
        self._n = len(events)
        self._metrics = tuple(ev.metric for ev in events)
        self._read = self._get_sys().read

    def read(self) -> list[float]:
        """Cumulative values, one per opened metric, summed over CPUs or tasks (``decode``)."""
        if not self._readers:
            raise UsageError(f"{self.name} source: read() before open()")
        rd = self._read
        return self.decode([rd(r[0], r[1]) for r in self._readers])

    def raw_reads(self) -> tuple[RawRead, ...] | None:
        """One ``read(2)`` per group (or per event); None with a substitute ``syscalls``."""
        if self.syscalls is not None or not self._readers:
            return None
        return tuple(RawRead(r[0], r[1]) for r in self._readers)

    def _read_again(self, fd: int, size: int) -> bytes | None:
        """A group read the kernel refused with ECHILD, tried again: it refuses a read of
        inherited counters while a child's copy of the group is being torn down (a child of
        the recorded command exiting), which passes at once. None if it keeps refusing."""
        for _ in range(READ_RETRIES):
            try:
                return self._read(fd, size)
            except ChildProcessError:
                continue
        return None

    def decode(self, raw: Sequence[Raw]) -> list[float]:
        """Cumulative values from the bytes of one read per group.

        Multiplexing is corrected interval by interval: each read adds the increase of every
        counter since the previous read scaled by ``Δtime_enabled / Δtime_running`` of its
        group, so the totals never step back and an interval in which a group did not run at
        all reads NaN (its count is unknown), not a made-up share of a cumulative estimate.
        """
        totals = self._totals
        unknown = self._unknown
        for m in range(self._n):
            unknown[m] = False
        ratio = 1.0
        last = self._last
        for k, (fd, size, unpack, ie, ir, slots) in enumerate(self._readers):
            buf = raw[k]
            if buf == errno_mod.ECHILD:
                buf = self._read_again(fd, size)
            if buf is None:  # still refused: this interval's count is unknown
                for _p, m in slots:
                    unknown[m] = True
                ratio = 0.0
                continue
            if isinstance(buf, int):
                raise raw_error(buf)
            try:
                t = unpack(buf)
            except struct.error:
                # A short read: an event in error state reads end-of-file (perf_event_open(2)).
                for _p, m in slots:
                    unknown[m] = True
                ratio = 0.0
                continue
            before = last[k]
            last[k] = t
            if before is None:  # the first read: the counts so far, scaled as a whole
                enabled, running = t[ie], t[ir]
            else:
                enabled, running = t[ie] - before[ie], t[ir] - before[ir]
            if running == enabled or not self.multiplexed:
                scale = 1.0
            elif running > 0:
                scale = enabled / running
                if running / enabled < ratio:
                    ratio = running / enabled
            else:  # enabled but never scheduled in this interval
                for _p, m in slots:
                    unknown[m] = True
                ratio = 0.0
                continue
            if before is None:
                for p, m in slots:
                    totals[m] += t[p] * scale
            else:
                for p, m in slots:
                    totals[m] += (t[p] - before[p]) * scale
        out = [math.nan if unknown[m] else totals[m] for m in range(self._n)]
        for m, f in self._scales:
            out[m] *= f
        self._ratio = ratio
        return out

    def _verify_layout(self) -> None:
        """Once at open: each group read starts with the number of events it holds."""
        for fd, nr in self._nr_check:
            head = struct.unpack_from("=Q", self._read(fd, 8 * (3 + nr)))[0]
            if head != nr:
                raise UnsupportedError(f"{self.name} source: a group read reports {head} "
                                       f"events, {nr} were opened")

    @property
    def running_ratio(self) -> float:
        """Smallest ``time_running / time_enabled`` over the groups at the last read: 1.0
        without multiplexing, 0.0 when a group has not run at all."""
        return self._ratio

    def metadata(self) -> dict[str, object]:
        """What the recorder should keep about this source: scope, groups, counting mode,
        dropped events and the last read's running ratio."""
        return {**self._meta, "running_ratio": self._ratio}

    def close(self) -> None:
        """Close every counter (idempotent)."""
        sys_ = self._sys
        for g in self._groups:
            for fd in g.fds:
                try:
                    if sys_ is not None:
                        sys_.close(fd)
                except OSError:
                    pass
        self._groups = []
        self._readers = []


class PerfHardwareSource(PerfEventSource):
    """Hardware counters (``PERF_TYPE_HARDWARE``): instructions, cycles, ref_cycles,
    cache_references, cache_misses, branches, branch_misses (counts)."""

    name = "perf-hw"
    EVENTS = HARDWARE_EVENTS


class PerfSoftwareSource(PerfEventSource):
    """Kernel software counters (``PERF_TYPE_SOFTWARE``): task_clock (s, process scope only),
    context_switches, page_faults, cpu_migrations (counts)."""

    name = "perf-sw"
    EVENTS = SOFTWARE_EVENTS
    multiplexed = False

    def for_command(self, interval: float = 0.01) -> Source | None:
        """The same counters on the recorded command's process tree, named ``cmd_...``
        (:class:`phasekit.record.sources.tree.CommandCounters`)."""
        from phasekit.record.sources.tree import CommandCounters

        return CommandCounters(PerfSoftwareSource(
            events=self.events, exclude_kernel=self.exclude_kernel, group_read=self.group_read,
            syscalls=self.syscalls, proc_root=self.proc_root, sys_root=self.sys_root))
