"""Recording sources: procfs, RAPL (powercap sysfs) and external commands (phasekit.record.sources).

The procfs and powercap files are faked in tmp_path with the kernel's exact formats
(Documentation/filesystems/proc.rst, Documentation/admin-guide/iostats.rst,
Documentation/power/powercap/powercap.rst); ProcSource also runs on this machine's /proc and
CommandSource on real commands.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import sys
import time
from pathlib import Path

import pytest

from phasekit.errors import UnsupportedError, UsageError
from phasekit.record import sources
from phasekit.record.sources import (
    Availability,
    CommandSource,
    Metric,
    ProcSource,
    RaplSource,
    Source,
)
from phasekit.record.sources import rapl as rapl_module
from phasekit.record.sources.command import parse_number
from phasekit.record.sources.procfs import is_whole_disk

TICK = os.sysconf("SC_CLK_TCK")

# ---------------------------------------------------------------------------------- fake procfs

STAT = """\
cpu  31534 12 4032 43590 348 7 57 158 11 3
cpu0 8234 6 1022 30379 72 3 11 79 5 1
cpu1 23300 6 3010 13211 276 4 46 79 6 2
intr 315908 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 15 0 0 0 0 122 84 0 22
ctxt 400302
btime 1795371564
processes 7527
procs_running 1
procs_blocked 0
softirq 180682 0 30582 3 7268 43682 0 4 50764 0 48379
"""

MEMINFO = """\
MemTotal:       24684096 kB
MemFree:        23278348 kB
MemAvailable:   24299156 kB
Buffers:           13692 kB
Cached:          1169016 kB
SwapCached:            0 kB
Active:           458508 kB
Inactive:         722596 kB
Active(anon):       1540 kB
Inactive(anon):    90540 kB
SwapTotal:             0 kB
SwapFree:              0 kB
Dirty:               428 kB
AnonPages:         98164 kB
Shmem:              8788 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
"""

# 20 columns (kernel >= 5.5) except mmcblk0/mmcblk0p1 in the original 14-column format.
DISK_LINES = {
    "loop0": "   7       0 loop0 512 0 8192 40 0 0 0 0 0 52 40 0 0 0 0 0 0",
    "sda": "   8       0 sda 10300 5803 2020634 7766 7284 46740 4405648 13663 0 5516 22108 5691 45 467616 634 696 43",
    "sda1": "   8       1 sda1 10000 5800 2000000 7700 7000 46000 4400000 13600 0 5500 22000 5600 40 460000 600 0 0",
    "sda2": "   8       2 sda2 300 3 20634 66 284 740 5648 63 0 16 108 91 5 7616 34 0 0",
    "nvme0n1": " 259       0 nvme0n1 2500 10 300000 500 1200 30 150000 900 0 1000 1400 0 0 0 0 0 0",
    "nvme0n1p1": " 259       1 nvme0n1p1 2400 10 290000 480 1100 30 140000 850 0 950 1330 0 0 0 0 0 0",
    "mmcblk0": " 179       0 mmcblk0 40 0 640 10 4 0 32 3 0 10 13",
    "mmcblk0p1": " 179       1 mmcblk0p1 40 0 640 10 4 0 32 3 0 10 13",
    "dm-0": " 253       0 dm-0 9000 0 1900000 7000 50000 0 4300000 14000 0 5400 21000 0 0 0 0 0 0",
    "md0": "   9       0 md0 77 0 7700 0 88 0 8800 0 0 0 0 0 0 0 0 0 0",
    "zram0": " 252       0 zram0 4 0 32 0 100 0 800 1 0 1 1 0 0 0 0 0 0",
}

NET_HEADER = """\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
"""
NET_LINES = {
    "lo": "    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0",
    "eth0": "  eth0: 268174679    5859    0    0    0     0          0         0   325737    3523    0    0    0     0       0          0",
    # more than 8 digits: no space after the colon
    "eth1": "  eth1:12345678901 9876543    0    0    0     0          0        12 987654321 1234567    0    0    0     0       0          0",
}

# Hand-computed from the lines above.
EXPECTED = {
    "cpu_user_s": (31534 + 12) / TICK,
    "cpu_system_s": (4032 + 7 + 57) / TICK,
    "cpu_iowait_s": 348 / TICK,
    "cpu_idle_s": 43590 / TICK,
    "mem_used_bytes": (24684096 - 24299156) * 1024.0,
    "mem_cached_bytes": 1169016 * 1024.0,
    # whole disks: sda, nvme0n1, mmcblk0
    "disk_read_bytes": (2020634 + 300000 + 640) * 512.0,
    "disk_write_bytes": (4405648 + 150000 + 32) * 512.0,
    "disk_reads": 10300 + 2500 + 40.0,
    "disk_writes": 7284 + 1200 + 4.0,
    # all but lo
    "net_rx_bytes": 268174679 + 12345678901.0,
    "net_tx_bytes": 325737 + 987654321.0,
    "net_rx_packets": 5859 + 9876543.0,
    "net_tx_packets": 3523 + 1234567.0,
}


def write_proc(root: Path, *, stat: str = STAT, meminfo: str = MEMINFO,
               disks: dict[str, str] = DISK_LINES, nets: dict[str, str] = NET_LINES) -> Path:
    """Write (or rewrite in place: same inode, as procfs regenerates) the fake files."""
    (root / "net").mkdir(parents=True, exist_ok=True)
    (root / "stat").write_text(stat)
    (root / "meminfo").write_text(meminfo)
    (root / "diskstats").write_text("".join(line + "\n" for line in disks.values()))
    (root / "net" / "dev").write_text(NET_HEADER + "".join(line + "\n" for line in nets.values()))
    return root


def disk_line(name: str, reads: int, sectors_read: int, writes: int, sectors_written: int) -> str:
    return (f"   8      16 {name} {reads} 0 {sectors_read} 10 {writes} 0 {sectors_written} 20 "
            "0 30 30 0 0 0 0 0 0")


def net_line(name: str, rx: int, rx_packets: int, tx: int, tx_packets: int) -> str:
    return f"{name:>6}: {rx:8d} {rx_packets:7d}    0    0    0     0          0         0 " \
           f"{tx:8d} {tx_packets:7d}    0    0    0     0       0          0"


def as_dict(metrics: tuple[Metric, ...], values: list[float]) -> dict[str, float]:
    assert len(metrics) == len(values)
    return {m.name: v for m, v in zip(metrics, values, strict=True)}


# ---------------------------------------------------------------------------------- procfs

def test_package_exports() -> None:
    assert set(sources.__all__) >= {"Source", "Metric", "Availability", "Scope", "ProcSource",
                                    "RaplSource", "CommandSource"}
    for cls in (ProcSource, RaplSource, CommandSource):
        assert issubclass(cls, Source)
    assert (ProcSource.name, RaplSource.name, CommandSource.name) == ("proc", "rapl", "command")


def test_proc_parses_exact_values(tmp_path: Path) -> None:
    src = ProcSource(root=str(write_proc(tmp_path)))
    avail = src.probe()
    assert avail.available and not avail.unavailable_metrics
    metrics = src.open("node")
    assert [m.name for m in metrics] == list(EXPECTED)
    assert [m.name for m in avail.metrics] == list(EXPECTED)
    kinds = {m.name: (m.kind, m.unit) for m in metrics}
    assert kinds["cpu_user_s"] == ("counter", "s")
    assert kinds["mem_used_bytes"] == ("gauge", "B")
    assert kinds["disk_read_bytes"] == ("counter", "B")
    assert kinds["net_rx_packets"][0] == "counter"
    got = as_dict(metrics, src.read())
    assert got == pytest.approx(EXPECTED, rel=1e-12)
    src.close()


def test_proc_process_scope_is_node_wide(tmp_path: Path) -> None:
    src = ProcSource(root=str(write_proc(tmp_path)))
    metrics = src.open("process", pid=os.getpid())
    assert as_dict(metrics, src.read()) == pytest.approx(EXPECTED, rel=1e-12)
    src.close()
    with pytest.raises(UsageError):
        src.open("cluster")  # type: ignore[arg-type]


def test_proc_counters_advance_exactly(tmp_path: Path) -> None:
    write_proc(tmp_path)
    src = ProcSource(root=str(tmp_path))
    metrics = src.open("node")
    disks = dict(DISK_LINES)
    disks["sda"] = disk_line("sda", 10300 + 5, 2020634 + 80, 7284 + 2, 4405648 + 16)
    disks["sda1"] = disk_line("sda1", 10000 + 5, 2000000 + 80, 7000 + 2, 4400000 + 16)
    nets = dict(NET_LINES)
    nets["eth0"] = net_line("eth0", 268174679 + 1500, 5859 + 1, 325737 + 60, 3523 + 1)
    stat = STAT.replace("cpu  31534 12 4032 43590 348", "cpu  31544 12 4032 43600 348")
    write_proc(tmp_path, stat=stat, disks=disks, nets=nets)
    got = as_dict(metrics, src.read())
    want = dict(EXPECTED)
    want["cpu_user_s"] += 10 / TICK
    want["cpu_idle_s"] += 10 / TICK
    want["disk_reads"] += 5
    want["disk_read_bytes"] += 80 * 512
    want["disk_writes"] += 2
    want["disk_write_bytes"] += 16 * 512
    want["net_rx_bytes"] += 1500
    want["net_rx_packets"] += 1
    want["net_tx_bytes"] += 60
    want["net_tx_packets"] += 1
    assert got == pytest.approx(want, rel=1e-12)
    src.close()


def test_proc_devices_appear_and_disappear_monotonic(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    disks = {"sda": disk_line("sda", 100, 1000, 50, 400)}
    nets = {"lo": NET_LINES["lo"], "eth0": net_line("eth0", 5000, 50, 700, 7)}
    write_proc(tmp_path, disks=disks, nets=nets)
    src = ProcSource(root=str(tmp_path), groups=["disk", "net"])
    metrics = src.open("node")
    names = [m.name for m in metrics]
    assert names == ["disk_read_bytes", "disk_write_bytes", "disk_reads", "disk_writes",
                     "net_rx_bytes", "net_tx_bytes", "net_rx_packets", "net_tx_packets"]
    history = [src.read()]
    assert history[0] == [1000 * 512, 400 * 512, 100, 50, 5000, 700, 50, 7]
    caplog.set_level(logging.WARNING, logger="phasekit.record.sources.procfs")

    # a disk and an interface with large totals appear: counted from their first value on
    disks["sdb"] = disk_line("sdb", 10**6, 10**9, 10**6, 10**9)
    nets["usb0"] = net_line("usb0", 10**9, 10**6, 10**9, 10**6)
    write_proc(tmp_path, disks=disks, nets=nets)
    history.append(src.read())
    assert history[1] == history[0]

    # they then count their increments
    disks["sdb"] = disk_line("sdb", 10**6 + 3, 10**9 + 24, 10**6 + 1, 10**9 + 8)
    nets["usb0"] = net_line("usb0", 10**9 + 100, 10**6 + 2, 10**9 + 40, 10**6 + 1)
    write_proc(tmp_path, disks=disks, nets=nets)
    history.append(src.read())
    assert history[2] == [(1000 + 24) * 512, (400 + 8) * 512, 103, 51, 5100, 740, 52, 8]

    # the original devices disappear: totals do not drop
    del disks["sda"], nets["eth0"]
    write_proc(tmp_path, disks=disks, nets=nets)
    history.append(src.read())
    assert history[3] == history[2]

    # another device appears (second appearance: no second warning)
    disks["sdc"] = disk_line("sdc", 7, 56, 0, 0)
    write_proc(tmp_path, disks=disks, nets=nets)
    history.append(src.read())
    assert history[4] == history[3]

    # a counter goes backwards (interface re-created under the same name): re-based
    nets["usb0"] = net_line("usb0", 10, 1, 0, 0)
    write_proc(tmp_path, disks=disks, nets=nets)
    history.append(src.read())
    assert history[5] == history[4]
    nets["usb0"] = net_line("usb0", 110, 2, 30, 1)
    write_proc(tmp_path, disks=disks, nets=nets)
    history.append(src.read())
    assert history[6][4:] == [5200, 770, 53, 9]

    for before, after in itertools.pairwise(history):
        assert all(b <= a for b, a in zip(before, after, strict=True))
    messages = [r.getMessage() for r in caplog.records]
    assert sum(" appeared" in m for m in messages) == 2  # once per group
    assert sum(" disappeared" in m for m in messages) == 2
    assert sum("backwards" in m for m in messages) == 1
    src.close()


def test_proc_cpu_counter_going_backwards_stays_monotonic(tmp_path: Path) -> None:
    # idle/iowait can decrease slightly on NO_HZ kernels (proc.rst, iowait caveat)
    write_proc(tmp_path)
    src = ProcSource(root=str(tmp_path), groups=["cpu"])
    src.open("node")
    first = src.read()
    write_proc(tmp_path, stat=STAT.replace("43590 348", "43590 340"))
    second = src.read()
    write_proc(tmp_path, stat=STAT.replace("43590 348", "43590 345"))
    third = src.read()
    assert second == first and third[2] == pytest.approx((348 + 5) / TICK)
    src.close()


def test_proc_corrupt_file_mid_run_gives_nan(tmp_path: Path,
                                             caplog: pytest.LogCaptureFixture) -> None:
    write_proc(tmp_path)
    src = ProcSource(root=str(tmp_path))
    metrics = src.open("node")
    assert src.probe().available  # probing while open leaves the open files alone
    caplog.set_level(logging.WARNING, logger="phasekit.record.sources.procfs")
    (tmp_path / "stat").write_text("garbage\n")
    for _ in range(3):
        got = as_dict(metrics, src.read())
        assert all(math.isnan(got[n]) for n in list(EXPECTED)[:4])
        assert {n: got[n] for n in list(EXPECTED)[4:]} == pytest.approx(
            {n: EXPECTED[n] for n in list(EXPECTED)[4:]})
    assert sum("cannot read" in r.getMessage() for r in caplog.records) == 1
    write_proc(tmp_path)  # back: the counters resume where they were
    assert as_dict(metrics, src.read()) == pytest.approx(EXPECTED, rel=1e-12)
    src.close()


@pytest.mark.parametrize(("name", "whole"), [
    ("sda", True), ("sda1", False), ("sda15", False), ("sdp", True), ("sdp1", False),
    ("nvme0n1", True), ("nvme0n1p1", False), ("nvme0n12", True),
    ("mmcblk0", True), ("mmcblk0p1", False), ("vda", True), ("vda1", False),
    ("xvda", True), ("xvda2", False), ("dm-0", False), ("md127", False), ("loop3", False),
    ("ram0", False), ("zram0", False), ("sr0", True), ("nbd0", True),
])
def test_whole_disk_rule(name: str, whole: bool) -> None:
    names = ["sda", "sda1", "sda15", "sdp", "sdp1", "nvme0n1", "nvme0n1p1", "nvme0n12",
             "mmcblk0", "mmcblk0p1", "vda", "vda1", "xvda", "xvda2", "dm-0", "md127", "loop3",
             "ram0", "zram0", "sr0", "nbd0"]
    assert is_whole_disk(name, names) is whole


def test_proc_meminfo_without_memavailable(tmp_path: Path) -> None:
    old = "".join(line + "\n" for line in MEMINFO.splitlines() if "MemAvailable" not in line)
    write_proc(tmp_path, meminfo=old)
    src = ProcSource(root=str(tmp_path), groups=["mem"])
    metrics = src.open("node")
    got = as_dict(metrics, src.read())
    assert got["mem_used_bytes"] == (24684096 - (23278348 + 13692 + 1169016)) * 1024
    src.close()


def test_proc_missing_files_and_bad_groups(tmp_path: Path) -> None:
    write_proc(tmp_path)
    (tmp_path / "net" / "dev").unlink()
    src = ProcSource(root=str(tmp_path))
    avail = src.probe()
    assert avail.available
    assert set(avail.unavailable_metrics) == {"net_rx_bytes", "net_tx_bytes", "net_rx_packets",
                                              "net_tx_packets"}
    assert "net/dev" in avail.unavailable_metrics["net_rx_bytes"]
    metrics = src.open("node")
    assert [m.name for m in metrics] == list(EXPECTED)[:10]
    assert len(src.read()) == 10
    src.close()

    empty = ProcSource(root=str(tmp_path / "nowhere"))
    avail = empty.probe()
    assert isinstance(avail, Availability) and not avail.available
    assert "nowhere" in avail.reason
    with pytest.raises(UnsupportedError, match="nowhere"):
        empty.open("node")
    with pytest.raises(UsageError, match="unknown"):
        ProcSource(root=str(tmp_path), groups=["gpu"]).probe()
    with pytest.raises(UsageError):
        ProcSource(root=str(tmp_path)).read()


def test_proc_large_files_grow_the_buffer(tmp_path: Path) -> None:
    disks = {f"sd{chr(97 + i // 26)}{chr(97 + i % 26)}": "" for i in range(400)}
    disks = {n: disk_line(n, 1, 8, 2, 16) for n in disks}
    write_proc(tmp_path, disks=disks)
    assert (tmp_path / "diskstats").stat().st_size > 16384
    src = ProcSource(root=str(tmp_path), groups=["disk"])
    src.open("node")
    assert src.read() == [400 * 8 * 512, 400 * 16 * 512, 400, 800]
    src.close()


def test_proc_on_this_machine() -> None:
    src = ProcSource()
    avail = src.probe()
    assert avail.available, avail.reason
    metrics = src.open("node")
    first = src.read()
    assert len(first) == len(metrics)
    assert all(math.isfinite(v) and v >= 0 for v in first)
    got = as_dict(metrics, first)
    assert got["mem_used_bytes"] > 0
    end = time.process_time() + 0.3
    while time.process_time() < end:  # burn CPU
        pass
    second = as_dict(metrics, src.read())
    busy = (second["cpu_user_s"] + second["cpu_system_s"]
            - got["cpu_user_s"] - got["cpu_system_s"])
    assert busy >= 0.15
    for m in metrics:
        if m.kind == "counter":
            assert second[m.name] >= got[m.name], m.name
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        src.read()
    cost_us = (time.perf_counter() - start) / n * 1e6
    logging.getLogger(__name__).info("ProcSource.read(): %.1f us", cost_us)  # not asserted
    src.close()


# ---------------------------------------------------------------------------------- RAPL

# A two-socket server with DRAM domains, and a laptop with core/uncore/psys and the MMIO
# interface (values of the kind Documentation/power/powercap/powercap.rst shows).
SERVER = {
    "intel-rapl:0": ("package-0", 53426578345, 262143328850),
    "intel-rapl:0:0": ("dram", 4372129004, 65712999613),
    "intel-rapl:1": ("package-1", 47816310942, 262143328850),
    "intel-rapl:1:0": ("dram", 3936411551, 65712999613),
}
LAPTOP = {
    "intel-rapl:0": ("package-0", 10983647418, 262143328850),
    "intel-rapl:0:0": ("core", 4102637190, 262143328850),
    "intel-rapl:0:1": ("uncore", 171245671, 262143328850),
    "intel-rapl:1": ("psys", 28476293014, 262143328850),
    "intel-rapl-mmio:0": ("package-0", 10983647418, 262143328850),
}


def write_powercap(sys_root: Path, zones: dict[str, tuple[str, int, int]]) -> Path:
    """The real layout: nested zones under devices/virtual/powercap, symlinked flat from
    class/powercap; returns the class directory."""
    devices = sys_root / "devices" / "virtual" / "powercap"
    klass = sys_root / "class" / "powercap"
    klass.mkdir(parents=True, exist_ok=True)
    for control in ("intel-rapl", "intel-rapl-mmio"):
        (devices / control).mkdir(parents=True, exist_ok=True)
        (devices / control / "enabled").write_text("1\n")
        if not (klass / control).exists():
            (klass / control).symlink_to(devices / control)
    for zone, (label, energy, max_range) in zones.items():
        control = zone.split(":")[0]
        parts = zone.split(":")
        path = devices / control
        for depth in range(2, len(parts) + 1):
            path = path / ":".join(parts[:depth])
        path.mkdir(parents=True, exist_ok=True)
        (path / "name").write_text(label + "\n")
        (path / "energy_uj").write_text(f"{energy}\n")
        (path / "max_energy_range_uj").write_text(f"{max_range}\n")
        (path / "max_power_range_uw").write_text("0\n")
        (path / "enabled").write_text("1\n")
        if not (klass / zone).exists():
            (klass / zone).symlink_to(path)
    return klass


def set_energy(klass: Path, zone: str, value: int) -> None:
    (klass / zone / "energy_uj").write_text(f"{value}\n")  # same inode, like sysfs


def test_rapl_server_metrics_and_values(tmp_path: Path) -> None:
    klass = write_powercap(tmp_path, SERVER)
    src = RaplSource(root=str(klass))
    avail = src.probe()
    assert avail.available, avail.reason
    metrics = src.open("node")
    assert [m.name for m in metrics] == ["power_package0", "power_dram0", "power_package1",
                                         "power_dram1"]
    assert all((m.unit, m.kind, m.rate_unit) == ("J", "counter", "W") for m in metrics)
    assert src.read() == pytest.approx([53426.578345, 4372.129004, 47816.310942, 3936.411551],
                                       rel=1e-15)
    set_energy(klass, "intel-rapl:1:0", 3936411551 + 2_500_000)
    assert src.read()[3] == pytest.approx(3938.911551, rel=1e-15)
    src.close()
    # the nested devices tree gives the same domains
    nested = RaplSource(root=str(tmp_path / "devices" / "virtual" / "powercap"))
    assert [m.name for m in nested.probe().metrics] == [m.name for m in metrics]


def test_rapl_laptop_names_and_mmio_skipped(tmp_path: Path) -> None:
    klass = write_powercap(tmp_path, LAPTOP)
    src = RaplSource(root=str(klass))
    metrics = src.open("process", pid=os.getpid())
    assert [m.name for m in metrics] == ["power_package0", "power_core0", "power_uncore0",
                                         "power_psys"]
    assert [z.zone for z in src.zones] == ["intel-rapl:0", "intel-rapl:0:0", "intel-rapl:0:1",
                                           "intel-rapl:1"]
    assert src.read()[3] == pytest.approx(28476.293014)
    src.close()


def test_rapl_wraparound_stays_monotonic(tmp_path: Path) -> None:
    max_range = 262143328850
    klass = write_powercap(tmp_path, {"intel-rapl:0": ("package-0", max_range - 1_000_000,
                                                       max_range)})
    src = RaplSource(root=str(klass))
    src.open("node")
    values = [src.read()[0]]
    assert values[0] == pytest.approx((max_range - 1_000_000) * 1e-6)
    for raw in (max_range - 10, 3_000_000, 9_000_000, max_range - 5, 1_000):
        set_energy(klass, "intel-rapl:0", raw)
        values.append(src.read()[0])
    assert all(b > a for a, b in itertools.pairwise(values))
    assert values[2] == pytest.approx((max_range + 3_000_000) * 1e-6, rel=1e-15)
    assert values[3] == pytest.approx((max_range + 9_000_000) * 1e-6, rel=1e-15)
    assert values[5] == pytest.approx((2 * max_range + 1_000) * 1e-6, rel=1e-15)
    # energy between reads: 4 J over the first wrap (1 J before it, 3 J after)
    assert values[2] - values[0] == pytest.approx(4.0, abs=1e-5)
    src.close()


def test_rapl_probe_reasons(tmp_path: Path) -> None:
    missing = RaplSource(root=str(tmp_path / "class" / "powercap")).probe()
    assert not missing.available and "no powercap interface" in missing.reason
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "dtpm").mkdir()  # another control type, no RAPL
    empty = RaplSource(root=str(tmp_path / "empty")).probe()
    assert not empty.available and "no RAPL domain" in empty.reason
    assert "modprobe intel_rapl_msr" in empty.reason
    with pytest.raises(UnsupportedError, match="no RAPL domain"):
        RaplSource(root=str(tmp_path / "empty")).open("node")


def test_rapl_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    klass = write_powercap(tmp_path, SERVER)
    real_open = rapl_module._open_ro
    denied = {"all"}

    def fake_open(path: str) -> int:
        if path.endswith("energy_uj") and ("all" in denied or ":0:0" in path):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path)

    monkeypatch.setattr(rapl_module, "_open_ro", fake_open)
    avail = RaplSource(root=str(klass)).probe()
    assert not avail.available
    assert "5.10" in avail.reason and "chmod" in avail.reason and "root" in avail.reason
    with pytest.raises(UnsupportedError, match=r"5\.10"):
        RaplSource(root=str(klass)).open("node")

    denied.clear()  # only intel-rapl:0:0 (dram of package 0) is root-only
    src = RaplSource(root=str(klass))
    avail = src.probe()
    assert avail.available
    assert list(avail.unavailable_metrics) == ["power_dram0"]
    assert "permission denied" in avail.unavailable_metrics["power_dram0"]
    assert [m.name for m in src.open("node")] == ["power_package0", "power_package1",
                                                  "power_dram1"]
    src.close()


def test_rapl_probe_on_this_machine() -> None:
    avail = RaplSource().probe()  # never raises: a reason when RAPL cannot be read here
    assert isinstance(avail, Availability)
    if avail.available:
        assert all(m.name.startswith("power_") for m in avail.metrics)
    else:
        assert avail.reason and ("powercap" in avail.reason or "RAPL" in avail.reason)


# ---------------------------------------------------------------------------------- command

def wait_for(predicate, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize(("text", "value"), [
    (b"42\n", 42.0), (b"123.4 W\n", 123.4), (b"  -7.5e1 mW", -75.0), (b".5", 0.5),
    (b"Instantaneous power reading: 231 Watts", 231.0), (b"1\n2\n3\n", 1.0),
])
def test_parse_number(text: bytes, value: float) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize("text", [b"", b"N/A", b"[Not Supported]\n", b"nan"])
def test_parse_number_none(text: bytes) -> None:
    with pytest.raises(ValueError):
        parse_number(text)


def test_command_echo() -> None:
    src = CommandSource("power_node", "echo 42", interval=0.05, unit="W")
    avail = src.probe()
    assert avail.available and avail.metrics == (Metric("power_node", "W", "gauge"),)
    assert src.open("node") == (Metric("power_node", "W", "gauge"),)
    assert src.read() == [42.0]  # open ran the command once
    time.sleep(0.2)
    assert src.read() == [42.0]
    assert src.last_error is None
    src.close()


def test_command_units_and_argument_list() -> None:
    src = CommandSource("power_gpu0", [sys.executable, "-c", "print('123.4 W')"], interval=0.5)
    src.open("node")
    assert src.read() == [123.4]
    src.close()
    loop = CommandSource("x", "for i in 3 4 5; do echo $i; done")
    loop.open("node")
    assert loop.read() == [3.0]
    loop.close()


def test_command_values_follow_the_command(tmp_path: Path) -> None:
    # a shell snippet printing an increasing number at each run (like an energy counter)
    state = tmp_path / "n"
    cmd = f"n=$(cat {state} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {state}; echo $n"
    src = CommandSource("energy", cmd, interval=0.05, kind="counter", unit="J", rate_unit="W")
    assert src.open("node") == (Metric("energy", "J", "counter", "W"),)
    first = src.read()[0]
    assert first == 1.0
    assert wait_for(lambda: src.read()[0] >= 4.0)
    seen = [src.read()[0] for _ in range(20)]
    assert all(b >= a for a, b in itertools.pairwise(seen))
    src.close()
    runs = int(state.read_text())
    time.sleep(0.2)
    assert int(state.read_text()) == runs  # stopped


def test_command_nan_before_first_value() -> None:
    src = CommandSource("x", "sleep 0.3; echo 7", interval=0.05, check_on_open=False)
    start = time.monotonic()
    src.open("node")
    assert time.monotonic() - start < 0.25  # open did not wait for the command
    t = time.monotonic()
    assert math.isnan(src.read()[0])
    assert time.monotonic() - t < 0.01  # read never blocks
    assert wait_for(lambda: src.read()[0] == 7.0)
    src.close()


def test_command_failing_at_open() -> None:
    src = CommandSource("x", "echo 'ipmi: no BMC found' >&2; exit 1")
    avail = src.probe()
    assert not avail.available and "ipmi: no BMC found" in avail.reason
    assert "status 1" in avail.reason
    with pytest.raises(UnsupportedError, match="no BMC found"):
        src.open("node")
    with pytest.raises(UnsupportedError, match="cannot be started"):
        CommandSource("x", ["/nonexistent/reader"]).open("node")


def test_command_garbage_at_open() -> None:
    src = CommandSource("x", "echo '[N/A]'")
    assert "no number" in src.probe().reason
    with pytest.raises(UnsupportedError, match=r"no number.*N/A"):
        src.open("node")


def test_command_timeout_at_open() -> None:
    src = CommandSource("x", "sleep 30 | cat; echo 1", timeout=0.3)
    start = time.monotonic()
    with pytest.raises(UnsupportedError, match=r"timed out after 0\.3 s"):
        src.open("node")
    assert time.monotonic() - start < 3.0  # the pipeline was killed, not waited for


def test_command_failing_mid_run(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    value = tmp_path / "value"
    value.write_text("5\n")
    src = CommandSource("x", f"cat {value}", interval=0.03)
    src.open("node")
    assert src.read() == [5.0]
    caplog.set_level(logging.DEBUG, logger="phasekit.record.sources.command")
    value.write_text("garbage\n")
    assert wait_for(lambda: math.isnan(src.read()[0]))
    assert wait_for(lambda: src.n_failures >= 3)
    assert src.last_error is not None and "no number" in src.last_error
    value.unlink()  # now a non-zero exit with stderr
    assert wait_for(lambda: src.last_error is not None and "status 1" in src.last_error)
    assert "No such file" in src.last_error
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "warned once" in warnings[0].getMessage()
    value.write_text("6\n")  # recovers: the recording went on
    assert wait_for(lambda: src.read() == [6.0])
    src.close()


def test_command_stale_value_reads_nan(tmp_path: Path) -> None:
    # the first run prints a value, the next ones hang (a stuck BMC)
    flag = tmp_path / "ran"
    cmd = f"if [ -e {flag} ]; then sleep 30; else touch {flag}; echo 9; fi"
    src = CommandSource("x", cmd, interval=0.05, timeout=20)
    src.open("node")
    assert src.read() == [9.0]
    assert wait_for(lambda: math.isnan(src.read()[0]), timeout=2.0)  # 3 × 0.05 s + slack
    start = time.monotonic()
    src.close()  # kills the hanging run
    assert time.monotonic() - start < 2.0
    assert src.last_error is None  # stale, not failed


def test_command_timeout_mid_run(tmp_path: Path) -> None:
    flag = tmp_path / "ran"
    cmd = f"if [ -e {flag} ]; then sleep 30; else touch {flag}; echo 9; fi"
    src = CommandSource("x", cmd, interval=0.05, timeout=0.2)
    src.open("node")
    assert wait_for(lambda: src.last_error is not None)
    assert "timed out" in str(src.last_error)
    assert math.isnan(src.read()[0])
    src.close()


@pytest.mark.parametrize("command", ["echo 1", "sleep 30; echo 1", "sleep 30 | cat"])
def test_command_close_is_prompt(command: str) -> None:
    src = CommandSource("x", command, interval=60.0, timeout=50.0, check_on_open=False)
    src.open("node")
    time.sleep(0.1)  # the first run is in progress (or done and waiting 60 s)
    start = time.monotonic()
    src.close()
    assert time.monotonic() - start < 2.0
    assert src._thread is None
    src.close()  # idempotent


def test_command_validation() -> None:
    with pytest.raises(UsageError, match="interval"):
        CommandSource("x", "echo 1", interval=0).open("node")
    with pytest.raises(UsageError, match="timeout"):
        CommandSource("x", "echo 1", timeout=-1).probe()
    with pytest.raises(UsageError, match="empty"):
        CommandSource("x", "").probe()
    with pytest.raises(UsageError, match="kind"):
        CommandSource("x", "echo 1", kind="rate").probe()  # type: ignore[arg-type]


# ---------------------------------------------------------------------- phasekit sources, piped
def _sources_output(*, terminal: bool) -> str:
    """What ``phasekit sources`` prints to a pipe, or to a terminal (a pseudo-terminal of
    120 columns)."""
    import subprocess

    command = [sys.executable, "-m", "phasekit.cli", "sources"]
    if not terminal:
        return subprocess.run(command, capture_output=True, text=True, timeout=60,
                              check=True).stdout
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    process = subprocess.Popen(command, stdout=follower, stderr=subprocess.DEVNULL,
                               env=env | {"TERM": "xterm"})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    process.wait(timeout=60)
    return b"".join(chunks).decode(errors="replace")


def test_sources_piped_fits_80_columns_and_keeps_every_name_whole() -> None:
    import json
    import re
    import subprocess

    listing = json.loads(subprocess.run(
        [sys.executable, "-m", "phasekit.cli", "sources", "--json"], capture_output=True,
        text=True, timeout=60, check=True).stdout)
    piped = _sources_output(terminal=False)
    widest = max(piped.splitlines(), key=len)
    assert len(widest) <= 80, widest
    words = set(re.findall(r"[\w./-]+", piped))
    for entry in listing:
        assert entry["name"] in words
        for metric in (*entry["metrics"], *entry["command_metrics"]):
            assert metric["name"] in words  # whole, not folded across lines
        for name in entry["unavailable_metrics"]:
            assert name in words
    # one source a paragraph, its name and whether it is available first
    heads = [line for line in piped.splitlines() if line and not line.startswith(" ")]
    for entry in listing:
        state = "available" if entry["available"] else "not available"
        assert f"{entry['name']}: {state}" in heads
    # on a terminal, a table with its header row
    shown = re.sub(r"\x1b\[[0-9;]*m", "", _sources_output(terminal=True))
    assert ["source", "available", "metrics", "reason"] in [line.split()
                                                          for line in shown.splitlines()]
