"""Phase detectors are plug-ins: a new one is one class and one registry line, and everything
that takes a method name (phases, detect, make_detector, identify, the sensor defaults, the
command line's --method) asks the registry."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest

import helpers
from phasekit.errors import UsageError
from phasekit.phases import (
    DETECTORS,
    METHODS,
    Detection,
    PhaseDetector,
    PhaseResult,
    detect,
    identify,
    make_detector,
    phases,
    register_detector,
)
from phasekit.phases.registry import SensorChoice
from phasekit.phases.vectors import choose_sensors, streaming_sensors
from phasekit.profile import Profile

LOW, HIGH = 100.0, 300.0


@pytest.fixture
def registry() -> Iterator[None]:
    """The registry as it was after the test (a test registers its own detectors)."""
    saved = dict(DETECTORS)
    yield
    DETECTORS.clear()
    DETECTORS.update(saved)


def steps() -> Profile:
    """Power at a low, high, low level (40 s each, 1 % noise), beside a busy counter."""
    rng = np.random.default_rng(0)
    power = np.repeat([LOW, HIGH, LOW], 40) * rng.lognormal(0, 0.01, 120)
    instructions = 1e9 * rng.lognormal(0, 0.3, 120)
    return Profile(values=np.column_stack([power, instructions]), period=1.0,
                   metrics=("power_w", "instructions"), units={"power_w": "W"})


def test_a_new_detector_is_one_class_and_one_registry_line(registry: None) -> None:
    @register_detector
    class Above(PhaseDetector):
        """A phase starts where the first sensor crosses the threshold."""

        name = "toy"
        threshold = (LOW + HIGH) / 2

        def detect(self, X: np.ndarray, *, threshold: float, period: float = 1.0,
                   sensors: Sequence[str] | None = None, **options: Any) -> Detection:
            above = X[:, 0] > threshold
            starts = np.concatenate([[0], np.flatnonzero(above[1:] != above[:-1]) + 1])
            return Detection(starts=starts, detected_at=starts, score=X[:, 0],
                             limit=np.full(len(X), threshold), method=self.name,
                             threshold=threshold)

    result = phases(steps(), method="toy", metrics=["power_w"])
    assert isinstance(result, PhaseResult) and result.method == "toy"
    assert [p.start_s for p in result.phases] == [0.0, 40.0, 80.0]
    assert [p.id for p in result.phases] == [1, 2, 1]  # identified as ev identifies
    assert result.threshold == (LOW + HIGH) / 2
    assert result.params["method_choice"] == "--method toy"
    assert [p.start_s for p in phases(steps(), method="toy", metrics=["power_w"],
                                      threshold=1.5 * HIGH).phases] == [0.0]
    assert list(detect(np.array([[LOW], [HIGH], [HIGH]]), method="toy").starts) == [0, 1]
    assert "toy" in METHODS and list(METHODS)[:3] == ["ev", "ev-literal", "shape"]


def test_a_detector_brings_its_sensor_and_identification_rules(registry: None) -> None:
    @register_detector
    class PowerOnly(PhaseDetector):
        """Power alone, and every phase an id of its own."""

        name = "power-only"
        threshold = (LOW + HIGH) / 2
        merges = False

        def detect(self, X: np.ndarray, *, threshold: float, period: float = 1.0,
                   sensors: Sequence[str] | None = None, **options: Any) -> Detection:
            above = X[:, 0] > threshold
            starts = np.concatenate([[0], np.flatnonzero(above[1:] != above[:-1]) + 1])
            return Detection(starts=starts, detected_at=starts, score=X[:, 0],
                             limit=np.full(len(X), threshold), method=self.name,
                             threshold=threshold)

        def choose_sensors(self, profile: Profile) -> SensorChoice:
            return SensorChoice(("power_w",), {"instructions": "not power"}, "power alone")

        def streaming_sensors(self, metrics: Sequence[str]) -> list[str]:
            return [m for m in metrics if m == "power_w"]

        def identify(self, references: np.ndarray, **_: Any) -> np.ndarray:
            return np.arange(1, references.shape[0] + 1)

    result = phases(steps(), method="power-only")
    assert result.sensors == ("power_w",)
    assert result.params["sensor_choice"]["left_out"] == {"instructions": "not power"}
    assert [p.id for p in result.phases] == [1, 2, 3]
    assert choose_sensors(steps(), method="power-only").sensors == ("power_w",)
    assert streaming_sensors(["instructions", "power_w"], method="power-only") == ["power_w"]
    assert list(identify(np.ones((2, 1)), method="power-only", threshold=1.0)) == [1, 2]


def test_the_command_line_lists_the_registered_detectors(registry: None) -> None:
    @register_detector
    class Offline(PhaseDetector):
        name = "toy"
        threshold = 1.0

        def detect(self, X: np.ndarray, **options: Any) -> Detection:
            raise NotImplementedError

    code, out, _ = helpers.run("phases", "--help")
    assert code == 0 and re.search(r"--method auto\|ev\|ev-literal\|shape\|toy\s", out)
    code, out, _ = helpers.run("watch", "--help")
    assert code == 0 and re.search(r"--method ev\|ev-literal\s", out)  # online ones only


def test_an_offline_detector_does_not_stream() -> None:
    assert [name for name, d in DETECTORS.items() if d.online] == ["ev", "ev-literal"]
    with pytest.raises(UsageError, match=r"^method='shape': an offline detector") as error:
        make_detector("shape", 1)
    assert error.value.command_line().startswith("--method shape: an offline detector")
    with pytest.raises(UsageError, match=r"^method='nope': expected one of ev, ev-literal"):
        make_detector("nope", 1)
    code, _, err = helpers.run("watch", helpers.DATA / "real_backtoback_1s.parquet",
                               "--method", "shape")
    assert code == 2 and "--method shape: an offline detector" in err


def test_registering_checks_the_name_and_threshold(registry: None) -> None:
    def detector(name: str, threshold: float = 1.0) -> type[PhaseDetector]:
        def detect(self: PhaseDetector, X: np.ndarray, **options: Any) -> Detection:
            raise NotImplementedError

        return type("Named", (PhaseDetector,), {"name": name, "threshold": threshold,
                                                "detect": detect})

    for name in ("ev", "auto", "two words", ""):
        with pytest.raises(UsageError, match=r"^name="):
            register_detector(detector(name))
    with pytest.raises(UsageError, match=r"^threshold=0: "):
        register_detector(detector("toy", 0))
    assert "toy" not in METHODS
