"""Actuators of a measurement campaign (Silva 2024 §3.1): threads, cores, CPU frequency.

- Threads: ``OMP_NUM_THREADS`` in the program's environment.
- Cores: the program runs pinned to the first ``cores`` CPUs this process may use
  (``sched_setaffinity`` in the child before ``exec``). PaScal switches cores off through CPU
  hotplug, which needs root and changes the machine for everyone; affinity gives the program
  the same number of cores without either (our choice).
- Frequency: the cpufreq ``userspace`` governor and ``scaling_setspeed`` of every CPU the
  program runs on (the thesis: acpi-cpufreq userspace governor). This needs the cpufreq
  sysfs interface, the userspace governor, and write access (root); :func:`frequency_support`
  says up front why it cannot be done (a virtual machine has no cpufreq interface), and
  :class:`FrequencyActuator` restores the previous governors when the campaign ends.

The sysfs root is a parameter so that the frequency paths are tested on a fake tree.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from phasekit.errors import UnsupportedError, UsageError

__all__ = ["FrequencyActuator", "affinity_setter", "frequency_support", "usable_cpus"]

CPU_ROOT = "/sys/devices/system/cpu"


def usable_cpus() -> list[int]:
    """The CPUs this process may run on, in order."""
    return sorted(os.sched_getaffinity(0))


def affinity_setter(cores: int, cpus: Sequence[int] | None = None) -> Callable[[], None]:
    """A ``preexec_fn`` pinning the child to the first ``cores`` usable CPUs."""
    cpus = list(cpus) if cpus is not None else usable_cpus()
    if not 1 <= cores <= len(cpus):
        raise UsageError(f"this process may use {len(cpus)} CPU(s) "
                         f"({', '.join(map(str, cpus))})", parameter="cores", value=cores)
    chosen = set(cpus[:cores])
    return lambda: os.sched_setaffinity(0, chosen)


def _read(path: Path) -> str:
    return path.read_text().strip()


def _available_frequencies_khz(cpufreq: Path) -> list[int]:
    listed = cpufreq / "scaling_available_frequencies"
    if listed.exists():
        return sorted(int(v) for v in _read(listed).split())
    low, high = (int(_read(cpufreq / f"cpuinfo_{k}_freq")) for k in ("min", "max"))
    return [low, high]


def frequency_support(cpus: Sequence[int], root: str = CPU_ROOT) -> tuple[list[float], str]:
    """(available frequencies in GHz, "") when the userspace governor can set the frequency
    of ``cpus``, else ([], the reason)."""
    base = Path(root)
    frequencies: set[int] | None = None
    for cpu in cpus:
        cpufreq = base / f"cpu{cpu}" / "cpufreq"
        if not cpufreq.is_dir():
            return [], (f"{cpufreq} does not exist: this machine exposes no cpufreq interface "
                        "(a virtual machine, or a kernel without a cpufreq driver)")
        governors = _read(cpufreq / "scaling_available_governors").split() \
            if (cpufreq / "scaling_available_governors").exists() else []
        if "userspace" not in governors:
            return [], (f"the cpufreq driver of cpu{cpu} offers no userspace governor (it has: "
                        f"{', '.join(governors) or 'none'}); intel_pstate in active mode "
                        "needs intel_pstate=passive on the kernel command line")
        for name in ("scaling_governor", "scaling_setspeed"):
            if not os.access(cpufreq / name, os.W_OK) and (cpufreq / name).exists():
                return [], f"{cpufreq / name} is not writable (run the campaign as root)"
        available = set(_available_frequencies_khz(cpufreq))
        frequencies = available if frequencies is None else frequencies & available
    return sorted(f / 1e6 for f in (frequencies or set())), ""


@dataclass
class FrequencyActuator:
    """Sets the frequency of ``cpus`` with the userspace governor; :meth:`restore` puts the
    previous governors back (call it in a ``finally``)."""

    cpus: Sequence[int]
    root: str = CPU_ROOT
    _saved: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        available, reason = frequency_support(self.cpus, self.root)
        if reason:
            raise UnsupportedError(f"cannot set the CPU frequency: {reason}")
        self.available_ghz = available

    def set(self, ghz: float) -> float:
        """Set every CPU to the available frequency nearest ``ghz``; returns it (GHz)."""
        nearest = min(self.available_ghz, key=lambda f: abs(f - ghz))
        if abs(nearest - ghz) > 0.051:
            raise UsageError("not available; this machine offers "
                             + ", ".join(f"{f:g}" for f in self.available_ghz) + " GHz",
                             parameter="frequencies_ghz", value=ghz, option="--freqs")
        for cpu in self.cpus:
            cpufreq = Path(self.root) / f"cpu{cpu}" / "cpufreq"
            if cpu not in self._saved:
                self._saved[cpu] = _read(cpufreq / "scaling_governor")
            (cpufreq / "scaling_governor").write_text("userspace")
            (cpufreq / "scaling_setspeed").write_text(str(round(nearest * 1e6)))
        return nearest

    def restore(self) -> None:
        for cpu, governor in self._saved.items():
            (Path(self.root) / f"cpu{cpu}" / "cpufreq" / "scaling_governor").write_text(governor)
        self._saved.clear()
