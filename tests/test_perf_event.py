"""The perf_event source: through a fake kernel at the system-call boundary, then for real.

The fake (``FakePerf``) answers ``perf_event_open`` like the kernel does for the cases that
matter here (errno per event, group size limits, inherit + PERF_FORMAT_GROUP refused as before
Linux 4.13, kernel counting refused as at perf_event_paranoid 2) and builds its ``read(2)``
buffers itself from the layout documented in perf_event_open(2), "Reading results"::

    PERF_FORMAT_GROUP:  u64 nr; u64 time_enabled; u64 time_running; u64 values[nr];
    otherwise:          u64 value; u64 time_enabled; u64 time_running;

(with PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING), native byte order.
"""

from __future__ import annotations

import ctypes
import errno
import math
import mmap
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from phasekit.errors import UnsupportedError, UsageError
from phasekit.record.sources import perf_event as pe
from phasekit.record.sources.perf_event import (
    HARDWARE_EVENTS,
    SOFTWARE_EVENTS,
    PerfEventAttr,
    PerfHardwareSource,
    PerfSoftwareSource,
    errno_reason,
    parse_cpu_list,
    perf_event_open_number,
)

GROUP = 1 << 3
ENA_RUN = (1 << 0) | (1 << 1)
NAMES = {(e.type, e.config): e.name for e in HARDWARE_EVENTS + SOFTWARE_EVENTS}


# ----------------------------------------------------------------------------- the fake kernel
class FakePerf:
    """A fake of the four system calls, keeping what was asked of it."""

    def __init__(self, *, fail=None, group_capacity: int = 16,
                 refuse_inherit_group: bool = False, kernel_needs_priv: bool = False) -> None:
        self.fail = fail or {}
        self.group_capacity = group_capacity
        self.refuse_inherit_group = refuse_inherit_group
        self.kernel_needs_priv = kernel_needs_priv
        self.attempts: list[tuple[str, PerfEventAttr, int, int, int, int]] = []
        self.events: dict[int, dict] = {}
        self.counts: dict[tuple[str, int, int], int] = {}
        self.times: dict[tuple, tuple[int, int]] = {}
        self.ioctls: list[tuple[int, int, int]] = []
        self.closed: list[int] = []
        self.reads = 0
        self._next = 100

    def open(self, attr, pid, cpu, group_fd, flags):
        a = PerfEventAttr.from_buffer_copy(bytes(attr))
        name = NAMES[(a.type, a.config)]
        self.attempts.append((name, a, pid, cpu, group_fd, flags))
        err = self.fail(name, a, pid, cpu, group_fd) if callable(self.fail) else \
            self.fail.get(name, 0)
        if not err and self.kernel_needs_priv and not a.exclude_kernel:
            err = errno.EACCES
        if not err and self.refuse_inherit_group and a.inherit and a.read_format & GROUP:
            err = errno.EINVAL
        if not err and group_fd >= 0 and 1 + len(self.events[group_fd]["members"]) >= \
                self.group_capacity:
            err = errno.EINVAL
        if err:
            raise OSError(err, os.strerror(err))
        fd = self._next
        self._next += 1
        self.events[fd] = {"name": name, "attr": a, "pid": pid, "cpu": cpu,
                           "group_fd": group_fd, "flags": flags, "members": []}
        if group_fd >= 0:
            self.events[group_fd]["members"].append(fd)
        return fd

    def _times(self, ev: dict) -> tuple[int, int]:
        """(time_enabled, time_running): a group read reports its leader's, a single read
        the event's own."""
        grouped = ev["attr"].read_format & GROUP and ev["group_fd"] >= 0
        owner = self.events[ev["group_fd"]] if grouped else ev
        key = (owner["name"], ev["pid"], ev["cpu"])
        # by default the counters were just enabled: (0, 0), then what a test sets
        return self.times.get(key, self.times.get((ev["pid"], ev["cpu"]), (0, 0)))

    def read(self, fd, n):
        self.reads += 1
        ev = self.events[fd]
        ena, run = self._times(ev)
        if ev["attr"].read_format & GROUP:
            fds = [fd, *ev["members"]]
            vals = [self.counts.get((self.events[f]["name"], ev["pid"], ev["cpu"]), 0)
                    for f in fds]
            buf = struct.pack("=QQQ" + "Q" * len(vals), len(vals), ena, run, *vals)
        else:
            value = self.counts.get((ev["name"], ev["pid"], ev["cpu"]), 0)
            buf = struct.pack("=QQQ", value, ena, run)
        if n < len(buf):
            raise OSError(errno.ENOSPC, "buffer too small")
        return buf

    def ioctl(self, fd, request, arg=0):
        self.ioctls.append((fd, request, arg))

    def close(self, fd):
        self.closed.append(fd)

    def opened(self) -> list[dict]:
        return [ev for fd, ev in self.events.items() if fd not in self.closed]


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    """A fake /proc and /sys: paranoid 2, no capabilities, CPUs 0-1 and 4 online, a CPU PMU."""
    proc, sysfs = tmp_path / "proc", tmp_path / "sys"
    (proc / "sys" / "kernel").mkdir(parents=True)
    (proc / "sys" / "kernel" / "perf_event_paranoid").write_text("2\n")
    (proc / "self").mkdir()
    (proc / "self" / "status").write_text("Name:\tpython\nCapEff:\t0000000000000000\n")
    (sysfs / "devices" / "system" / "cpu").mkdir(parents=True)
    (sysfs / "devices" / "system" / "cpu" / "online").write_text("0-1,4\n")
    (sysfs / "bus" / "event_source" / "devices" / "cpu").mkdir(parents=True)
    (sysfs / "bus" / "event_source" / "devices" / "software").mkdir(parents=True)
    return proc, sysfs


def add_process(proc: Path, pid: int, threads: dict[int, list[int]]) -> None:
    """/proc/PID/task/TID/children for a process with ``threads`` (tid -> child pids)."""
    for tid, children in threads.items():
        d = proc / str(pid) / "task" / str(tid)
        d.mkdir(parents=True)
        (d / "children").write_text(" ".join(map(str, children)) + (" " if children else ""))


def make(cls, fake, roots, **kw):
    proc, sysfs = roots
    return cls(syscalls=fake, proc_root=str(proc), sys_root=str(sysfs), **kw)


# ----------------------------------------------------------------------------- struct layout
UAPI_OFFSETS = {  # include/uapi/linux/perf_event.h, x86_64/aarch64 (same on every 64-bit ABI)
    "type": 0, "size": 4, "config": 8, "sample_period": 16, "sample_type": 24,
    "read_format": 32, "wakeup_events": 48, "bp_type": 52, "config1": 56, "config2": 64,
    "branch_sample_type": 72, "sample_regs_user": 80, "sample_stack_user": 88, "clockid": 92,
    "sample_regs_intr": 96, "aux_watermark": 104, "sample_max_stack": 108,
    "aux_sample_size": 112, "sig_data": 120, "config3": 128,
}
UAPI_SIZES = {  # PERF_ATTR_SIZE_VERn: the field that ends at each published size
    64: "config1", 72: "config2", 80: "branch_sample_type", 96: "clockid",
    104: "sample_regs_intr", 112: "reserved_2", 120: "aux_action", 128: "sig_data",
    136: "config3",
}
UAPI_BITS = {  # bit of each flag in the u64 after read_format
    "disabled": 0, "inherit": 1, "pinned": 2, "exclusive": 3, "exclude_user": 4,
    "exclude_kernel": 5, "exclude_hv": 6, "exclude_idle": 7, "mmap": 8, "comm": 9, "freq": 10,
    "inherit_stat": 11, "enable_on_exec": 12, "task": 13, "watermark": 14, "precise_ip": 15,
    "mmap_data": 17, "sample_id_all": 18, "exclude_host": 19, "exclude_guest": 20,
    "exclude_callchain_kernel": 21, "exclude_callchain_user": 22, "mmap2": 23,
    "comm_exec": 24, "use_clockid": 25, "context_switch": 26, "write_backward": 27,
    "namespaces": 28, "ksymbol": 29, "bpf_event": 30, "aux_output": 31, "cgroup": 32,
    "text_poke": 33, "build_id": 34, "inherit_thread": 35, "remove_on_exec": 36, "sigtrap": 37,
}


def flag_word(attr: PerfEventAttr) -> int:
    return int.from_bytes(bytes(attr)[40:48], sys.byteorder)


def test_attr_layout_matches_uapi() -> None:
    assert ctypes.sizeof(PerfEventAttr) == pe.PERF_ATTR_SIZE_VER8 == 136
    for name, offset in UAPI_OFFSETS.items():
        assert getattr(PerfEventAttr, name).offset == offset, name
    for size, name in UAPI_SIZES.items():
        f = getattr(PerfEventAttr, name)
        assert f.offset + f.size == size, name
    a = PerfEventAttr()
    assert flag_word(a) == 0
    for name, bit in UAPI_BITS.items():
        a = PerfEventAttr()
        setattr(a, name, 1)
        assert flag_word(a) == 1 << bit, name
    a = PerfEventAttr()
    a.precise_ip = 3
    assert flag_word(a) == 3 << 15
    a = PerfEventAttr()
    a.type, a.config, a.read_format = 1, 0x1122334455667788, GROUP | ENA_RUN
    raw = bytes(a)
    assert int.from_bytes(raw[0:4], sys.byteorder) == 1
    assert int.from_bytes(raw[8:16], sys.byteorder) == 0x1122334455667788
    assert int.from_bytes(raw[32:40], sys.byteorder) == 11


C_CHECK = r"""
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <linux/perf_event.h>
#define OFF(f) printf(#f " %zu\n", offsetof(struct perf_event_attr, f))
#define BIT(f) do { struct perf_event_attr a; unsigned long long w; memset(&a, 0, sizeof a); \
    a.f = 1; memcpy(&w, (char *)&a + offsetof(struct perf_event_attr, read_format) + 8, 8); \
    printf("bit:" #f " %llu\n", w); } while (0)
int main(void) {
    printf("sizeof %zu\n", sizeof(struct perf_event_attr));
    OFF(type); OFF(size); OFF(config); OFF(sample_period); OFF(sample_type); OFF(read_format);
    OFF(wakeup_events); OFF(bp_type); OFF(config1); OFF(config2); OFF(branch_sample_type);
    OFF(sample_regs_user); OFF(sample_stack_user); OFF(clockid); OFF(sample_regs_intr);
    OFF(aux_watermark); OFF(sample_max_stack); OFF(aux_sample_size); OFF(sig_data);
#ifdef PERF_ATTR_SIZE_VER8
    OFF(config3);
#endif
    BIT(disabled); BIT(inherit); BIT(pinned); BIT(exclusive); BIT(exclude_user);
    BIT(exclude_kernel); BIT(exclude_hv); BIT(exclude_idle); BIT(enable_on_exec);
    BIT(precise_ip); BIT(exclude_guest); BIT(mmap2); BIT(sigtrap);
    printf("ioc:enable %lu\n", (unsigned long)PERF_EVENT_IOC_ENABLE);
    printf("ioc:disable %lu\n", (unsigned long)PERF_EVENT_IOC_DISABLE);
    printf("fmt:group %d\n", (int)PERF_FORMAT_GROUP);
    printf("hw:ref_cycles %d\n", (int)PERF_COUNT_HW_REF_CPU_CYCLES);
    printf("sw:task_clock %d\n", (int)PERF_COUNT_SW_TASK_CLOCK);
    return 0;
}
"""


@pytest.mark.needs_gcc
def test_attr_layout_matches_the_installed_c_header(tmp_path: Path) -> None:
    """The same layout as the C compiler sees in <linux/perf_event.h> (when it exists)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc is not None
    if not Path("/usr/include/linux/perf_event.h").exists():
        pytest.skip("no Linux uapi headers (Debian: apt-get install linux-libc-dev)")
    src = tmp_path / "check.c"
    src.write_text(C_CHECK)
    exe = tmp_path / "check"
    done = subprocess.run([cc, str(src), "-o", str(exe)], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"the installed header is older than the fields checked: {done.stderr}")
    out = dict(line.rsplit(" ", 1) for line in
               subprocess.run([str(exe)], capture_output=True, text=True, check=True)
               .stdout.splitlines())
    # A header older than VER8 is a prefix of our struct.
    assert int(out.pop("sizeof")) <= ctypes.sizeof(PerfEventAttr)
    for key, value in out.items():
        kind, _, name = key.partition(":")
        if not name:
            assert getattr(PerfEventAttr, key).offset == int(value), key
        elif kind == "bit":
            a = PerfEventAttr()
            setattr(a, name, 1)
            assert flag_word(a) == int(value), name
        elif kind == "ioc":
            assert getattr(pe, f"PERF_EVENT_IOC_{name.upper()}") == int(value)
        elif kind == "fmt":
            assert int(value) == pe.PERF_FORMAT_GROUP
        elif kind == "hw":
            assert int(value) == pe.PERF_COUNT_HW_REF_CPU_CYCLES
        else:
            assert int(value) == pe.PERF_COUNT_SW_TASK_CLOCK


@pytest.mark.parametrize(("machine", "bits", "number"), [
    ("x86_64", 64, 298), ("x86_64", 32, 336), ("i686", 32, 336), ("aarch64", 64, 241),
    ("aarch64", 32, 364), ("armv7l", 32, 364), ("riscv64", 64, 241),
    ("loongarch64", 64, 241), ("ppc64le", 64, 319), ("s390x", 64, 331), ("sparc64", 64, None),
])
def test_syscall_number_per_architecture(machine: str, bits: int, number: int | None) -> None:
    assert perf_event_open_number(machine, bits) == number


def test_ioctl_numbers() -> None:
    # _IO('$', 0) and _IO('$', 1) with the generic encoding (x86, arm, riscv, s390)
    if pe._MACHINE.startswith(("ppc", "powerpc", "mips", "sparc")):
        assert pe.PERF_EVENT_IOC_ENABLE == 0x20002400
    else:
        assert (pe.PERF_EVENT_IOC_ENABLE, pe.PERF_EVENT_IOC_DISABLE) == (0x2400, 0x2401)


@pytest.mark.parametrize(("text", "cpus"), [
    ("0\n", [0]), ("0-3\n", [0, 1, 2, 3]), ("0-1,4,6-7\n", [0, 1, 4, 6, 7]), ("", []),
])
def test_parse_cpu_list(text: str, cpus: list[int]) -> None:
    assert parse_cpu_list(text) == cpus


# ----------------------------------------------------------------------------- node scope
def test_node_scope_opens_one_group_per_cpu(roots) -> None:
    fake = FakePerf()
    src = make(PerfHardwareSource, fake, roots)
    metrics = src.open("node")
    assert [m.name for m in metrics] == [e.name for e in HARDWARE_EVENTS]
    opened = fake.opened()
    assert sorted({ev["cpu"] for ev in opened}) == [0, 1, 4]
    assert len(opened) == 3 * len(HARDWARE_EVENTS)
    for ev in opened:
        a = ev["attr"]
        assert ev["pid"] == -1
        assert a.size == 136 and a.type == pe.PERF_TYPE_HARDWARE
        assert a.read_format == GROUP | ENA_RUN
        assert (a.disabled, a.inherit, a.exclude_kernel, a.exclude_user) == (1, 0, 0, 0)
        assert ev["flags"] == pe.PERF_FLAG_FD_CLOEXEC
    leaders = [fd for fd, ev in fake.events.items() if ev["group_fd"] == -1]
    groups = [[fake.events[fd]["name"]] + [fake.events[m]["name"]
                                           for m in fake.events[fd]["members"]]
              for fd in leaders]
    assert groups[:3] == [["instructions", "cycles", "ref_cycles"],
                          ["cache_references", "cache_misses"], ["branches", "branch_misses"]]
    for fd in leaders:  # members follow their leader on the same CPU
        assert all(fake.events[m]["cpu"] == fake.events[fd]["cpu"]
                   for m in fake.events[fd]["members"])
    assert sorted(fd for fd, _, _ in fake.ioctls) == sorted(leaders)
    assert {(req, arg) for _, req, arg in fake.ioctls} == {(pe.PERF_EVENT_IOC_ENABLE,
                                                            pe.PERF_IOC_FLAG_GROUP)}
    src.close()
    assert sorted(fake.closed) == sorted(fake.events)
    src.close()  # idempotent


def test_group_reads_are_decoded_and_summed_over_cpus(roots) -> None:
    fake = FakePerf()
    src = make(PerfHardwareSource, fake, roots)
    src.open("node")
    for i, ev in enumerate(HARDWARE_EVENTS):
        for cpu in (0, 1, 4):
            fake.counts[(ev.name, -1, cpu)] = (i + 1) * 1_000_000 + cpu
    n = fake.reads
    values = src.read()
    assert fake.reads - n == 3 * 3  # one read(2) per group per CPU
    assert values == [3 * (i + 1) * 1_000_000 + 5 for i in range(len(HARDWARE_EVENTS))]
    assert src.running_ratio == 1.0


def test_a_group_read_refused_while_a_child_exits_is_read_again(roots) -> None:
    """The kernel refuses a group read of inherited counters with ECHILD while a child's
    copy of the group is torn down (a child of the recorded command exiting): read again,
    not a failed source; a read that keeps refusing is that interval's unknown count."""
    fake = FakePerf()
    src = make(PerfHardwareSource, fake, roots)
    src.open("node")
    for i, ev in enumerate(HARDWARE_EVENTS):
        for cpu in (0, 1, 4):
            fake.counts[(ev.name, -1, cpu)] = (i + 1) * 1_000_000 + cpu
    raw: list = [fake.read(fd, size) for fd, size, *_ in src._readers]
    expected = src.decode(raw)
    raw[0] = errno.ECHILD  # the compiled sampler's failed read: its errno
    assert src.decode(raw) == expected
    refusing = fake.read
    fake.read = lambda fd, n: (_ for _ in ()).throw(ChildProcessError(errno.ECHILD, "child"))
    src._read = fake.read
    values = src.decode(raw)
    fake.read = src._read = refusing
    leader = NAMES[(HARDWARE_EVENTS[0].type, HARDWARE_EVENTS[0].config)]
    assert math.isnan(dict(zip([e.name for e in HARDWARE_EVENTS], values, strict=True))[leader])
    assert not all(math.isnan(v) for v in values)


def test_multiplexing_scales_by_enabled_over_running(roots) -> None:
    fake = FakePerf()
    src = make(PerfHardwareSource, fake, roots)
    src.open("node")
    for cpu in (0, 1, 4):
        fake.counts[("instructions", -1, cpu)] = 1000
        fake.counts[("cycles", -1, cpu)] = 500
        fake.counts[("cache_misses", -1, cpu)] = 30
    fake.times[("instructions", -1, 1)] = (4000, 1000)  # the core group on CPU 1 ran 1/4
    fake.times[("cache_references", -1, 4)] = (3000, 2000)
    v = dict(zip([e.name for e in HARDWARE_EVENTS], src.read(), strict=True))
    assert v["instructions"] == 1000 + 4000 + 1000
    assert v["cycles"] == 500 + 2000 + 500
    assert v["cache_misses"] == pytest.approx(30 + 30 + 45)
    assert src.running_ratio == 0.25
    assert src.metadata()["running_ratio"] == 0.25


def test_group_that_never_ran_reads_nan_and_not_enabled_reads_zero(roots) -> None:
    fake = FakePerf()
    src = make(PerfHardwareSource, fake, roots)
    src.open("node")
    fake.counts[("branches", -1, 0)] = 7
    fake.times[("instructions", -1, 0)] = (5000, 0)  # enabled, never scheduled: no estimate
    fake.times[("cache_references", -1, 0)] = (0, 0)  # not enabled yet: nothing counted
    fake.times[("cache_references", -1, 1)] = (0, 0)
    fake.times[("cache_references", -1, 4)] = (0, 0)
    v = dict(zip([e.name for e in HARDWARE_EVENTS], src.read(), strict=True))
    assert math.isnan(v["instructions"]) and math.isnan(v["ref_cycles"])
    assert v["cache_references"] == 0.0 and v["cache_misses"] == 0.0
    assert v["branches"] == 7
    assert src.running_ratio == 0.0


def test_task_clock_in_seconds_and_dropped_in_node_scope(roots) -> None:
    fake = FakePerf()
    src = make(PerfSoftwareSource, fake, roots)
    metrics = src.open("node")
    assert [m.name for m in metrics] == ["context_switches", "page_faults", "cpu_migrations"]
    assert "wall time" in src.dropped["task_clock"]
    assert all(ev["attr"].type == pe.PERF_TYPE_SOFTWARE for ev in fake.opened())
    src.close()
    add_process(roots[0], 500, {500: []})
    fake.counts[("task_clock", 500, -1)] = 1_500_000_000
    fake.counts[("page_faults", 500, -1)] = 42
    metrics = src.open("process", 500)
    assert metrics[0].name == "task_clock" and metrics[0].unit == "s"
    assert src.read()[:3] == [1.5, 0.0, 42.0]


# ----------------------------------------------------------------------------- process scope
def test_process_scope_inherits_over_the_existing_tree(roots) -> None:
    proc = roots[0]
    add_process(proc, 1000, {1000: [1003], 1001: []})  # a second thread, a child process
    add_process(proc, 1003, {1003: []})
    fake = FakePerf()
    src = make(PerfSoftwareSource, fake, roots)
    src.open("process", 1000)
    opened = fake.opened()
    assert [ev["pid"] for ev in opened if ev["group_fd"] == -1] == [1000, 1001, 1003]
    for ev in opened:
        a = ev["attr"]
        assert ev["cpu"] == -1 and a.inherit == 1 and a.read_format == GROUP | ENA_RUN
    for tid in (1000, 1001, 1003):
        fake.counts[("task_clock", tid, -1)] = 100_000_000
        fake.counts[("context_switches", tid, -1)] = tid
    v = src.read()
    assert v[0] == pytest.approx(0.3) and v[1] == 1000 + 1001 + 1003
    meta = src.metadata()
    assert meta["targets"] == 3 and meta["inherit"] is True and meta["group_read"] is True
    assert src.per_process  # the recorder's flag: not a node-wide value in process scope


def test_process_scope_falls_back_when_inherit_and_group_read_are_refused(roots) -> None:
    """Kernels before 4.13 return EINVAL for inherit with PERF_FORMAT_GROUP: one read per
    event, each scaled by its own times."""
    add_process(roots[0], 77, {77: []})
    fake = FakePerf(refuse_inherit_group=True)
    src = make(PerfHardwareSource, fake, roots)
    src.open("process", 77)
    opened = fake.opened()
    assert len(opened) == len(HARDWARE_EVENTS)
    assert all(ev["attr"].read_format == ENA_RUN and ev["attr"].inherit for ev in opened)
    leaders = [fd for fd, ev in fake.events.items()
               if ev["group_fd"] == -1 and fd not in fake.closed]
    assert all(ev["group_fd"] in [-1, *leaders] for ev in opened)  # still kernel groups
    fake.counts[("cycles", 77, -1)] = 9
    fake.counts[("ref_cycles", 77, -1)] = 2
    fake.times[("cycles", 77, -1)] = (1000, 500)  # a member's own times
    n = fake.reads
    v = src.read()
    assert fake.reads - n == len(HARDWARE_EVENTS)  # one read(2) per event
    assert v[1:3] == [18.0, 2.0]
    assert src.metadata()["group_read"] is False


def test_software_counters_are_never_scaled(roots) -> None:
    """Software events are not multiplexed; inherited ones report ``time_running`` below
    ``time_enabled`` as exited children's times are folded in, and scaling by that ratio
    over-counted the task clock of a busy command tree."""
    add_process(roots[0], 77, {77: []})
    fake = FakePerf(refuse_inherit_group=True)
    src = make(PerfSoftwareSource, fake, roots)
    src.open("process", 77)
    fake.counts[("page_faults", 77, -1)] = 9
    fake.times[("page_faults", 77, -1)] = (1000, 500)
    assert src.read()[2] == 9.0


def test_user_space_only_when_the_kernel_refuses_kernel_counting(roots) -> None:
    add_process(roots[0], 88, {88: []})
    fake = FakePerf(kernel_needs_priv=True)
    src = make(PerfSoftwareSource, fake, roots)
    src.open("process", 88)
    assert all(ev["attr"].exclude_kernel == 1 and ev["attr"].exclude_hv == 1
               for ev in fake.opened())
    assert src.metadata()["counting"] == "user"
    avail = make(PerfSoftwareSource, FakePerf(kernel_needs_priv=True), roots).probe()
    assert avail.available and "user space only" in avail.reason


def test_missing_root_process_is_a_usage_error_and_vanished_tasks_are_skipped(roots) -> None:
    fake = FakePerf(fail=lambda name, a, pid, cpu, g: errno.ESRCH if pid in (9, 11) else 0)
    src = make(PerfSoftwareSource, fake, roots)
    with pytest.raises(UsageError, match="no process with pid 9"):
        src.open("process", 9)
    add_process(roots[0], 10, {10: [], 11: []})
    src.open("process", 10)
    assert src.metadata()["targets"] == 1
    assert {ev["pid"] for ev in fake.opened()} == {10}


# ----------------------------------------------------------------------------- dropping, errors
def test_events_that_fail_are_dropped_with_their_reason(roots) -> None:
    fake = FakePerf(fail={"ref_cycles": errno.ENOENT, "branch_misses": errno.EOPNOTSUPP})
    src = make(PerfHardwareSource, fake, roots)
    metrics = src.open("node")
    assert [m.name for m in metrics] == ["instructions", "cycles", "cache_references",
                                         "cache_misses", "branches"]
    assert "not supported" in src.dropped["ref_cycles"]
    assert "EOPNOTSUPP" in src.dropped["branch_misses"]
    fake.counts[("branches", -1, 4)] = 5
    assert src.read()[-1] == 5
    avail = make(PerfHardwareSource, fake, roots).probe()
    assert avail.available
    assert set(avail.unavailable_metrics) == {"ref_cycles", "branch_misses"}
    assert [m.name for m in avail.metrics] == [m.name for m in metrics]


def test_member_refused_in_a_full_group_gets_a_group_of_its_own(roots) -> None:
    fake = FakePerf(group_capacity=2)  # a PMU with two counters
    src = make(PerfHardwareSource, fake, roots)
    src.open("node")
    groups = src.metadata()["groups"]
    assert groups == [["instructions", "cycles"], ["ref_cycles"],
                      ["cache_references", "cache_misses"], ["branches", "branch_misses"]]
    fake.counts[("ref_cycles", -1, 1)] = 11
    assert src.read()[2] == 11


def test_event_failing_on_one_cpu_is_dropped_on_all(roots) -> None:
    fake = FakePerf(fail=lambda name, a, pid, cpu, g: errno.ENOENT
                    if (name, cpu) == ("cache_misses", 4) else 0)
    src = make(PerfHardwareSource, fake, roots)
    metrics = src.open("node")
    assert "cache_misses" not in [m.name for m in metrics]
    assert src.dropped["cache_misses"].startswith("fails on cpu 4: not supported")
    assert not any(ev["name"] == "cache_misses" for ev in fake.opened())
    assert {ev["cpu"] for ev in fake.opened() if ev["name"] == "cache_references"} == {0, 1, 4}


def test_unsupported_when_nothing_opens(roots) -> None:
    fake = FakePerf(fail=dict.fromkeys(NAMES.values(), errno.ENOENT))
    src = make(PerfHardwareSource, fake, roots)
    with pytest.raises(UnsupportedError, match="not supported by this CPU or virtual machine"):
        src.open("node")
    assert fake.opened() == []
    (roots[1] / "bus" / "event_source" / "devices" / "cpu").rmdir()
    avail = make(PerfHardwareSource, fake, roots).probe()
    assert not avail.available and avail.metrics == ()
    assert set(avail.unavailable_metrics) == {e.name for e in HARDWARE_EVENTS}
    assert "no CPU PMU" in avail.reason


def test_node_scope_permission_error_names_paranoid(roots) -> None:
    fake = FakePerf(fail=lambda name, a, pid, cpu, g: errno.EACCES if pid == -1 else 0)
    with pytest.raises(UnsupportedError,
                       match=r"perf_event_paranoid=2; needs CAP_PERFMON or perf_event_paranoid "
                             r"<= 0 for node scope"):
        make(PerfSoftwareSource, fake, roots).open("node")
    avail = make(PerfSoftwareSource, fake, roots).probe()
    assert avail.available and "node scope unavailable: permission denied" in avail.reason


@pytest.mark.parametrize(("err", "expected"), [
    (errno.ENOENT, "not supported by this CPU or virtual machine (ENOENT)"),
    (errno.EOPNOTSUPP, "not supported by this CPU or virtual machine (EOPNOTSUPP)"),
    (errno.ENODEV, "not supported by this CPU or virtual machine"),
    (errno.EACCES, "permission denied (perf_event_paranoid=2; needs CAP_PERFMON or "
                   "perf_event_paranoid <= 2 for process scope (user space)) (EACCES)"),
    (errno.EPERM, "permission denied (perf_event_paranoid=2"),
    (errno.ENOSYS, "the kernel has no perf events"),
    (errno.EMFILE, "ulimit -n"),
    (errno.EBUSY, "exclusive use"),
    (errno.EINVAL, "rejected the event configuration (EINVAL)"),
])
def test_probe_maps_errno_to_reason(roots, err: int, expected: str) -> None:
    fake = FakePerf(fail=dict.fromkeys(NAMES.values(), err))
    avail = make(PerfSoftwareSource, fake, roots).probe()
    assert not avail.available
    assert all(expected in r for r in avail.unavailable_metrics.values())
    assert expected in avail.reason
    assert fake.opened() == []  # probe keeps nothing open


def test_errno_reason_variants() -> None:
    assert "<= 0 for node scope" in errno_reason(errno.EACCES, scope="node", paranoid=1)
    assert "<= 1 for process scope" in errno_reason(errno.EACCES, scope="process", paranoid=2)
    assert "forbids" in errno_reason(errno.EPERM, scope="process", paranoid=3)
    assert "paranoid=unknown" in errno_reason(errno.EPERM, scope="node", paranoid=None)
    assert "seccomp" in errno_reason(errno.EPERM, scope="node", paranoid=-1, privileged=True)
    assert "(ENOSPC)" in errno_reason(errno.ENOSPC, scope="node", paranoid=0)


def test_usage_errors(roots) -> None:
    src = make(PerfSoftwareSource, FakePerf(), roots)
    with pytest.raises(UsageError, match="read"):
        src.read()
    with pytest.raises(UsageError, match="scope"):
        src.open("cluster")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="pid"):
        src.open("process")
    with pytest.raises(UsageError, match="unknown event"):
        make(PerfSoftwareSource, FakePerf(), roots, events=["instructions"]).probe()
    src = make(PerfSoftwareSource, FakePerf(), roots, events=["page_faults"])
    assert [m.name for m in src.open("node")] == ["page_faults"]


def test_enable_on_exec_leaves_enabling_to_the_kernel(roots) -> None:
    add_process(roots[0], 5, {5: []})
    fake = FakePerf()
    make(PerfSoftwareSource, fake, roots, enable_on_exec=True).open("process", 5)
    assert fake.ioctls == []
    assert all(ev["attr"].enable_on_exec == 1 and ev["attr"].disabled == 1
               for ev in fake.opened())


# ----------------------------------------------------------------------------- recorded outputs
class RecordedPerf(FakePerf):
    """Returns fixed read(2) buffers per (group leader, CPU) once ``recorded`` is set; before
    (the reads of ``open``, when the counters were just enabled) all zeros but the count."""

    def __init__(self, buffers: dict[tuple[str, int], bytes]) -> None:
        super().__init__()
        self.buffers = buffers
        self.recorded = False

    def read(self, fd, n):
        ev = self.events[fd]
        buf = self.buffers[(ev["name"], ev["cpu"])]
        assert n >= len(buf)
        return buf if self.recorded else buf[:8] + bytes(len(buf) - 8)


# What a two-CPU x86_64 node with hardware counters returns for the three hardware groups in
# node scope, about 1 s after enabling (PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
# TOTAL_TIME_RUNNING, little-endian u64). Not captured (this VM has no PMU): built from the
# layout in perf_event_open(2) with plausible values; CPU 1's core group was multiplexed
# (running 600119259 of 1000198765 ns) and its cache group never got a counter (running 0).
RECORDED = {
    ("instructions", 0): bytes.fromhex(
        "030000000000000079079e3b0000000079079e3b000000002df4db8f00000000"
        "d0466f76000000008d27327d00000000"),
    ("instructions", 1): bytes.fromhex(
        "03000000000000006dd29d3b00000000db17c52300000000b19b8647000000003d949b3b00000000"
        "92e8983e00000000"),
    ("cache_references", 0): bytes.fromhex(
        "020000000000000079079e3b0000000079079e3b00000000cbc71702000000006123400000000000"),
    ("cache_references", 1): bytes.fromhex(
        "02000000000000006dd29d3b0000000000000000000000000000000000000000"
        "0000000000000000"),
    ("branches", 0): bytes.fromhex(
        "020000000000000079079e3b0000000079079e3b0000000000389c1c00000000ec4d2f0000000000"),
    ("branches", 1): bytes.fromhex(
        "02000000000000006dd29d3b000000006dd29d3b00000000c0d1981b00000000a0bb0d0000000000"),
}


@pytest.mark.skipif(sys.byteorder != "little", reason="the recorded buffers are little-endian")
def test_recorded_hardware_group_reads(roots) -> None:
    (roots[1] / "devices" / "system" / "cpu" / "online").write_text("0-1\n")
    fake = RecordedPerf(RECORDED)
    src = make(PerfHardwareSource, fake, roots)
    src.open("node")
    fake.recorded = True
    v = dict(zip([e.name for e in HARDWARE_EVENTS], src.read(), strict=True))
    scale1 = 1_000_198_765 / 600_119_259
    assert v["instructions"] == pytest.approx(2_413_556_781 + 1_200_004_017 * scale1, rel=1e-12)
    assert v["cycles"] == pytest.approx(1_987_004_112 + 1_000_051_773 * scale1, rel=1e-12)
    assert v["ref_cycles"] == pytest.approx(2_100_438_925 + 1_050_208_402 * scale1, rel=1e-12)
    assert math.isnan(v["cache_references"]) and math.isnan(v["cache_misses"])
    assert v["branches"] == 480_000_000 + 463_000_000
    assert v["branch_misses"] == 3_100_140 + 900_000
    assert src.running_ratio == 0.0  # the cache group on CPU 1 never ran
    ipc = v["instructions"] / v["cycles"]
    assert 1.0 < ipc < 1.5


def test_recorded_group_read_with_wrong_count_is_refused(roots) -> None:
    (roots[1] / "devices" / "system" / "cpu" / "online").write_text("0\n")
    bad = dict(RECORDED)
    bad[("branches", 0)] = struct.pack("=5Q", 3, 1, 1, 0, 0)  # nr says 3, two were opened
    with pytest.raises(UnsupportedError, match="reports 3 events, 2 were opened"):
        make(PerfHardwareSource, RecordedPerf(bad), roots).open("node")


# ----------------------------------------------------------------------------- this machine
def _real_sw_available() -> bool:
    return sys.platform.startswith("linux") and PerfSoftwareSource().probe().available


needs_perf = pytest.mark.skipif(not _real_sw_available(),
                                reason="perf software events cannot be opened here")

CHILD = textwrap.dedent(r"""
    import os, sys, time
    print(time.process_time(), flush=True)  # started up: counters may be opened now
    sys.stdin.readline()
    def busy(t):
        end = time.process_time() + t
        while time.process_time() < end:
            pass
    pid = os.fork()
    if pid == 0:
        busy(0.15)
        os._exit(0)
    busy(0.15)
    b = bytearray(8 << 20)
    b[::4096] = b"x" * len(range(0, len(b), 4096))
    time.sleep(0.05)
    os.waitpid(pid, 0)
""")


@needs_perf
def test_real_software_counters_on_a_child_process() -> None:
    """task_clock of the tree (the child and a grandchild it forks after open) matches the
    CPU time the kernel reports for it at wait4()."""
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    src = PerfSoftwareSource()
    try:
        assert child.stdin is not None and child.stdout is not None
        started = float(child.stdout.readline())
        metrics = src.open("process", child.pid)
        names = [m.name for m in metrics]
        assert names == ["task_clock", "context_switches", "page_faults", "cpu_migrations"]
        first = src.read()
        child.stdin.write(b"go\n")
        child.stdin.flush()
        time.sleep(0.05)
        mid = src.read()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        last = src.read()
        assert src.read() == last  # an exited tree keeps its final counts
    finally:
        src.close()
        if child.returncode is None:
            child.kill()
            child.wait()
    assert child.returncode == 0
    assert all(a <= b <= c for a, b, c in zip(first, mid, last, strict=True))
    v = dict(zip(names, last, strict=True))
    expected = usage.ru_utime + usage.ru_stime - started  # CPU time after open
    assert expected >= 0.3
    assert v["task_clock"] == pytest.approx(expected, abs=0.03, rel=0.1)
    assert v["page_faults"] > 0
    assert v["context_switches"] >= 1
    assert src.metadata()["group_read"] in (True, False)
    assert src.running_ratio == 1.0  # software events are never multiplexed


@needs_perf
def test_real_software_counters_on_the_node() -> None:
    src = PerfSoftwareSource()
    try:
        metrics = src.open("node")
        names = [m.name for m in metrics]
        assert "task_clock" not in names and "task_clock" in src.dropped
        before = src.read()
        # fresh anonymous pages (a bytearray may reuse pages glibc already holds)
        with mmap.mmap(-1, 4 << 20) as fresh:
            for offset in range(0, len(fresh), 4096):
                fresh[offset] = 1
        time.sleep(0.02)
        after = src.read()
    finally:
        src.close()
    d = {n: a - b for n, a, b in zip(names, after, before, strict=True)}
    assert d["page_faults"] >= 1000
    assert d["context_switches"] > 0
    assert src.metadata()["targets"] == len(os.sched_getaffinity(0)) or \
        src.metadata()["targets"] >= 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")
def test_real_hardware_counters_or_the_reason_they_are_missing() -> None:
    """On this project's VM the hardware events are refused (ENOENT: no virtual PMU); where
    they exist, instructions are counted."""
    avail = PerfHardwareSource().probe()
    if not avail.available:
        assert set(avail.unavailable_metrics) == {e.name for e in HARDWARE_EVENTS}
        assert "not supported" in avail.reason or "permission denied" in avail.reason
        with pytest.raises(UnsupportedError):
            PerfHardwareSource().open("process", os.getpid())
        return
    src = PerfHardwareSource()
    try:
        src.open("process", os.getpid())
        before = src.read()
        sum(range(200_000))
        after = src.read()
    finally:
        src.close()
    names = [m.name for m in src._metrics]
    if "instructions" in names:
        i = names.index("instructions")
        assert after[i] - before[i] > 0 or math.isnan(after[i])


def test_multiplexing_is_corrected_interval_by_interval(roots) -> None:
    """Each interval's increase is scaled by that interval's Δenabled/Δrunning, so totals
    never step back; an interval in which the group did not run reads NaN."""
    fake = FakePerf()
    src = make(PerfHardwareSource, fake, roots)
    src.open("node")
    key = ("instructions", -1, 0)
    timeline = [  # cumulative (count, enabled, running) on CPU 0
        (100, 1000, 1000),   # interval 1: ran all the time
        (150, 2000, 1500),   # interval 2: ran half: 50 counted -> 100
        (150, 3000, 1500),   # interval 3: did not run: unknown
        (250, 4000, 2500),   # interval 4: ran all: +100
    ]
    totals = []
    for count, enabled, running in timeline:
        fake.counts[key] = count
        fake.times[key] = (enabled, running)
        totals.append(dict(zip([e.name for e in HARDWARE_EVENTS], src.read(),
                               strict=True))["instructions"])
    assert totals[0] == 100
    assert totals[1] == pytest.approx(100 + 50 * 2)
    assert math.isnan(totals[2])
    assert totals[3] == pytest.approx(200 + 100)
    finite = [t for t in totals if not math.isnan(t)]
    assert finite == sorted(finite)
