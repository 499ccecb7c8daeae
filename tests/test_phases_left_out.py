"""Constant metrics are no dimension of the execution vectors: a column constant over the
profile analysed (exactly, or every value within CONSTANT_SPREAD of the largest, as the LLC
occupancy of a busy node) is left out, and ``phasekit phases`` says so in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers import run
from phasekit.io import write_profile
from phasekit.phases import phases
from phasekit.phases.vectors import CONSTANT_SPREAD, choose_sensors
from phasekit.profile import Profile

N, CHANGE, PERIOD = 300, 150, 0.2
LLC = 41943040.0  # a full 40 MiB LLC


def counters(seed: int = 0) -> Profile:
    """Two regimes (the change at sample CHANGE) in the varying counters; llc_size at LLC but
    for 3 samples one 64 KiB step lower (0.16 %); mem_total exactly constant."""
    rng = np.random.default_rng(seed)
    cycles = rng.normal(4e10, 4e8, N)
    ipc = np.where(np.arange(N) < CHANGE, 1.6, 0.6) * rng.normal(1, 0.02, N)
    misses = np.where(np.arange(N) < CHANGE, 1e6, 2e7) * rng.normal(1, 0.05, N)
    branches = 0.2 * ipc * cycles * rng.normal(1, 0.02, N)
    llc = np.full(N, LLC)
    llc[[40, 41, 220]] -= 65536
    total = np.full(N, 6.4e10)
    return Profile(values=np.column_stack([ipc * cycles, misses, branches, cycles, llc, total]),
                   period=PERIOD, metrics=("instructions", "cache_misses", "branches", "cycles",
                                           "llc_size", "mem_total_bytes"))


def test_constant_columns_are_left_out_with_the_reason() -> None:
    profile = counters()
    choice = choose_sensors(profile)
    assert choice.sensors == ("instructions", "cache_misses", "branches", "cycles_per_s")
    spread = 100 * 65536 / LLC
    assert choice.left_out == {"llc_size": f"constant at {LLC:.3g} within {spread:.2g} %",
                               "mem_total_bytes": "constant at 6.4e+10"}
    result = phases(profile)
    assert "llc_size" not in result.sensors and "mem_total_bytes" not in result.sensors
    assert all("llc_size" not in p.representative for p in result.phases)
    assert result.params["sensor_choice"]["left_out"] == choice.left_out
    starts = [p.start_index for p in result.phases[1:]]
    assert any(abs(s - CHANGE) <= 2 for s in starts), starts  # the change is still found
    # named, a constant metric is a sensor; varying by more than the spread, it is one anyway
    assert phases(profile, metrics=["instructions", "llc_size"]).sensors == (
        "instructions", "llc_size")
    values = profile.values.copy()
    values[:CHANGE, 4] *= 1 - 2 * CONSTANT_SPREAD
    choice = choose_sensors(profile.replace(values=values))
    assert "llc_size" in choice.sensors and "llc_size" not in choice.left_out


def test_a_lone_nearly_constant_series_is_still_analysed() -> None:
    """When nothing varies more, the nearly constant series are what there is to segment."""
    t = np.arange(400)
    temperature = 60.0 + 0.5 * (t >= 200) + 0.05 * np.sin(t)  # within 1 %
    profile = Profile(values=np.column_stack([temperature, np.full(400, 7.0)]), period=1.0,
                      metrics=("temp_c", "fans"))
    choice = choose_sensors(profile)
    assert choice.sensors == ("temp_c",) and choice.left_out == {"fans": "constant at 7"}
    assert phases(profile).sensors == ("temp_c",)


@pytest.mark.parametrize("json_output", [False, True])
def test_cli_says_what_is_left_out(tmp_path: Path, json_output: bool) -> None:
    path = tmp_path / "node.csv"
    write_profile(counters(), path)
    code, out, err = run("phases", path, *(["--json"] if json_output else []))
    assert code == 0, err
    if json_output:
        data = json.loads(out)
        assert "llc_size" not in data["sensors"]
        assert set(data["params"]["sensor_choice"]["left_out"]) == {"llc_size",
                                                                    "mem_total_bytes"}
        return
    lines = [line for line in out.splitlines() if line.startswith("left out:")]
    spread = 100 * 65536 / LLC
    assert lines == [f"left out: llc_size (constant at {LLC:.3g} within {spread:.2g} %); "
                     "mem_total_bytes (constant at 6.4e+10)"]
    below = out.split("Representative vectors", 1)[1]  # the vectors' table, not the ids'
    header = next(line for line in below.splitlines() if line.lstrip().startswith("id "))
    assert "llc_size" not in header and "instr" in header
