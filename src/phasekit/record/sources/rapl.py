"""Energy of the CPU packages, cores, uncore, DRAM and platform from RAPL, through powercap sysfs.

The powercap framework (Documentation/power/powercap/powercap.rst, and the ABI in
Documentation/ABI/testing/sysfs-class-powercap) exposes each RAPL domain as a power zone
``/sys/class/powercap/intel-rapl:N`` (a package, or the platform ``psys``) with sub-zones
``intel-rapl:N:M`` (``core``, ``uncore``, ``dram``). Each zone has a ``name``, a cumulative
``energy_uj`` (µJ) and the ``max_energy_range_uj`` at which that counter wraps back to 0. AMD
processors (family 17h and later) are driven by the same ``intel_rapl_msr`` module on recent
kernels and appear under the same names. The ``intel-rapl-mmio:N`` zones are left out: they are a
second interface to a package domain that ``intel-rapl:N`` already reports.

One metric per zone, unit J, kind counter, stored by the recorder as power (rate unit W):

- ``package-K`` → ``power_packageK``;
- a sub-zone → its name with the index K of its package: ``power_core0``, ``power_uncore0``,
  ``power_dram1``;
- any other top-level zone → its name: ``psys`` → ``power_psys``;
- a name already taken gets the zone's numbers as a suffix (``power_psys_1``).

Wrap-around: when a zone's ``energy_uj`` is lower than at the previous read, the counter wrapped
once and ``max_energy_range_uj`` is added to that zone's offset, so ``read()`` stays monotonic.
This assumes at most one wrap between two reads: the range is 2^32 energy units (≈ 262 kJ for
the usual 61 µJ unit), over 10 minutes even at 400 W, far longer than any sampling interval.
(The counter wraps modulo the range plus one energy unit; the unit, ~61 µJ a wrap, is
neglected.)

The values are node-wide (whole packages) in both scopes.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

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

_ZONE = re.compile(r"^intel-rapl:(\d+)(?::(\d+))?$")
_PACKAGE = re.compile(r"^package-(\d+)$")

PERMISSION_HINT = (
    "energy_uj is readable only by root since Linux 5.10 (CVE-2020-8694): run the recorder as "
    "root, or grant read access until the next reboot with "
    "`sudo chmod a+r /sys/class/powercap/intel-rapl:*/energy_uj /sys/class/powercap/intel-rapl:*:*/energy_uj` "
    "(or a udev rule to make it permanent)"
)


@dataclass(frozen=True)
class RaplZone:
    """One powercap zone: its directory, kernel name, metric name and wrap range (µJ)."""

    zone: str  # "intel-rapl:0:2"
    path: str
    label: str  # the zone's name file: "dram"
    metric: str  # "power_dram0"
    max_energy_range_uj: int


def _open_ro(path: str) -> int:
    """Open a sysfs file for reading (one place, so that tests can simulate permissions)."""
    return os.open(path, os.O_RDONLY | os.O_CLOEXEC)


def _read_text(path: str) -> str:
    fd = _open_ro(path)
    try:
        return os.pread(fd, 256, 0).decode(errors="replace").strip()
    finally:
        os.close(fd)


def _sanitize(label: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", label.lower()) or "zone"


def _zone_dirs(root: str) -> dict[str, str]:
    """``intel-rapl:N[:M]`` zone directories under ``root``: flat (``/sys/class/powercap``) or
    nested (``/sys/devices/virtual/powercap/intel-rapl/intel-rapl:N/intel-rapl:N:M``)."""
    found: dict[str, str] = {}
    for dirpath, dirnames, _ in os.walk(root):
        for d in dirnames:
            if _ZONE.match(d) and d not in found:
                found[d] = os.path.join(dirpath, d)
        dirnames[:] = [d for d in dirnames if d == "intel-rapl" or _ZONE.match(d)]
    return found


def _zone_key(zone: str) -> tuple[int, int]:
    m = _ZONE.match(zone)
    assert m is not None
    return int(m.group(1)), -1 if m.group(2) is None else int(m.group(2))


class RaplSource(Source):
    """Cumulative energy (J) of every RAPL domain under ``root`` (module docstring)."""

    name = "rapl"

    def __init__(self, root: str = "/sys/class/powercap") -> None:
        self.root = str(root)
        self._zones: tuple[RaplZone, ...] = ()
        self._fds: list[int] = []
        self._last: list[int] = []
        self._offset: list[int] = []
        self._warned = False

    def _discover(self) -> tuple[list[RaplZone], dict[str, str], str]:
        """The readable zones, the unreadable ones with their reason, and the reason none
        can be used ("" when some can)."""
        root = self.root
        if not os.path.isdir(root):
            return [], {}, (f"no powercap interface: {root} does not exist (a kernel without "
                            "CONFIG_POWERCAP, a machine that is not Linux, or a container "
                            "without /sys)")
        dirs = _zone_dirs(root)
        if not dirs:
            return [], {}, (f"no RAPL domain under {root}: the CPU or the virtual machine does "
                            "not expose RAPL, or the driver is not loaded "
                            "(`sudo modprobe intel_rapl_msr`)")
        labels: dict[str, str] = {}
        for zone in dirs:
            try:
                labels[zone] = _read_text(os.path.join(dirs[zone], "name"))
            except OSError:
                labels[zone] = zone
        zones: list[RaplZone] = []
        unavailable: dict[str, str] = {}
        taken: set[str] = set()
        for zone in sorted(dirs, key=_zone_key):
            n, m = _zone_key(zone)
            label = labels[zone]
            pkg = _PACKAGE.match(label)
            if pkg is not None:
                metric = f"power_package{pkg.group(1)}"
            elif m >= 0:
                parent = _PACKAGE.match(labels.get(f"intel-rapl:{n}", ""))
                metric = f"power_{_sanitize(label)}{parent.group(1) if parent else n}"
            else:
                metric = f"power_{_sanitize(label)}"
            if metric in taken:
                metric += f"_{n}" if m < 0 else f"_{n}_{m}"
            taken.add(metric)
            path = dirs[zone]
            energy = os.path.join(path, "energy_uj")
            try:
                int(_read_text(energy))
                max_range = int(_read_text(os.path.join(path, "max_energy_range_uj")))
            except PermissionError:
                unavailable[metric] = f"{energy}: permission denied; {PERMISSION_HINT}"
                continue
            except (OSError, ValueError) as e:
                unavailable[metric] = f"{energy}: cannot read: {e}"
                continue
            zones.append(RaplZone(zone, path, label, metric, max_range))
        if not zones:
            reasons = sorted(set(unavailable.values()))
            if any("permission denied" in r for r in reasons):
                reason = (f"energy_uj of the RAPL domains under {root} is not readable: "
                          + PERMISSION_HINT)
            else:
                reason = "; ".join(reasons)
            return [], unavailable, reason
        return zones, unavailable, ""

    def probe(self) -> Availability:
        """Which RAPL domains exist and can be read; the reason when none can."""
        zones, unavailable, reason = self._discover()
        if not zones:
            return Availability(self.name, False, reason, unavailable_metrics=unavailable)
        metrics = tuple(Metric(z.metric, "J", "counter", "W") for z in zones)
        return Availability(self.name, True, "node-wide (whole packages)", metrics, unavailable)

    @property
    def zones(self) -> tuple[RaplZone, ...]:
        """The zones opened, in the order of the metrics."""
        return self._zones

    def open(self, scope: Scope, pid: int | None = None) -> tuple[Metric, ...]:
        """Open ``energy_uj`` of every readable domain (node-wide in both scopes)."""
        if scope not in ("node", "process"):
            raise UsageError("expected 'node' or 'process'", parameter="scope", value=scope)
        self.close()
        zones, unavailable, reason = self._discover()
        if not zones:
            raise UnsupportedError(f"rapl source: {reason}")
        for metric, why in unavailable.items():
            logger.warning("rapl source: %s unavailable: %s", metric, why)
        try:
            for z in zones:
                self._fds.append(_open_ro(os.path.join(z.path, "energy_uj")))
        except OSError as e:
            self.close()
            raise UnsupportedError(f"rapl source: cannot open {e.filename}: {e.strerror}") from e
        self._zones = tuple(zones)
        self._offset = [0] * len(zones)
        self._last = [-1] * len(zones)
        self._warned = False
        self.read()
        return tuple(Metric(z.metric, "J", "counter", "W") for z in zones)

    def read(self) -> list[float]:
        """Cumulative energy of each domain in J, unwrapped (monotonic)."""
        reads = self.raw_reads()
        if reads is None:
            raise UsageError("rapl source: read() before open()")
        return self.decode(perform(reads))

    def raw_reads(self) -> tuple[RawRead, ...] | None:
        """One ``pread`` of each domain's ``energy_uj``."""
        if not self._fds:
            return None
        return tuple(RawRead(fd, 32, pread=True) for fd in self._fds)

    def decode(self, raw: Sequence[Raw]) -> list[float]:
        """Energy in J from the ``energy_uj`` texts; a failed read is NaN (warned once)."""
        out: list[float] = []
        last = self._last
        offset = self._offset
        for i, data in enumerate(raw):
            try:
                if isinstance(data, int):
                    raise raw_error(data)
                value = int(data)
            except (OSError, ValueError) as e:
                if not self._warned:
                    self._warned = True
                    logger.warning("rapl source: cannot read %s energy_uj (%s); NaN "
                                   "(warned once)", self._zones[i].zone, e)
                out.append(math.nan)
                continue
            if value < last[i]:  # wrapped once since the previous read
                offset[i] += self._zones[i].max_energy_range_uj
            last[i] = value
            out.append((value + offset[i]) * 1e-6)
        return out

    def close(self) -> None:
        """Close the ``energy_uj`` files."""
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = []

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
