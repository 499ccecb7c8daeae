"""Campaign actuators: affinity for cores, the userspace governor for frequency (on a fake
sysfs tree; this VM has no cpufreq interface, which must be said up front)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from phasekit.errors import UnsupportedError, UsageError
from phasekit.record.actuators import (
    FrequencyActuator,
    affinity_setter,
    frequency_support,
    usable_cpus,
)


def fake_cpufreq(root: Path, cpus: int, *, governors: str = "ondemand userspace performance",
                 frequencies: str = "1200000 1600000 2200000") -> Path:
    for cpu in range(cpus):
        d = root / f"cpu{cpu}" / "cpufreq"
        d.mkdir(parents=True)
        (d / "scaling_available_governors").write_text(governors + "\n")
        (d / "scaling_available_frequencies").write_text(frequencies + "\n")
        (d / "scaling_governor").write_text("ondemand\n")
        (d / "scaling_setspeed").write_text("<unsupported>\n")
    return root


def test_frequency_is_set_and_governors_restored(tmp_path: Path) -> None:
    root = fake_cpufreq(tmp_path, 2)
    actuator = FrequencyActuator([0, 1], str(root))
    assert actuator.available_ghz == [1.2, 1.6, 2.2]
    assert actuator.set(1.6) == 1.6
    for cpu in (0, 1):
        d = root / f"cpu{cpu}" / "cpufreq"
        assert (d / "scaling_governor").read_text() == "userspace"
        assert (d / "scaling_setspeed").read_text() == "1600000"
    with pytest.raises(UsageError, match="not available"):
        actuator.set(1.9)
    actuator.restore()
    assert (root / "cpu0" / "cpufreq" / "scaling_governor").read_text() == "ondemand"


def test_frequency_refused_with_its_reason(tmp_path: Path) -> None:
    assert "no cpufreq interface" in frequency_support([0], str(tmp_path / "none"))[1]
    root = fake_cpufreq(tmp_path / "pstate", 1, governors="performance powersave")
    reason = frequency_support([0], str(root))[1]
    assert "no userspace governor" in reason and "performance" in reason
    with pytest.raises(UnsupportedError, match="cannot set the CPU frequency"):
        FrequencyActuator([0], str(root))


def test_this_machine_says_whether_it_can() -> None:
    available, reason = frequency_support(usable_cpus())
    assert bool(available) != bool(reason)


def test_affinity_pins_the_child() -> None:
    cpus = usable_cpus()
    done = subprocess.run([sys.executable, "-c", "import os; print(len(os.sched_getaffinity(0)))"],
                          preexec_fn=affinity_setter(1), capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "1"
    with pytest.raises(UsageError, match="may use"):
        affinity_setter(len(cpus) + 1)
    assert os.sched_getaffinity(0) == set(cpus)  # the parent is untouched
