"""``phasekit watch``: the times it reports for a change (start, detection, latency) are one
definition, the same in its text and JSON lines and in the result of ``phasekit phases``."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from phasekit.cli import app
from phasekit.phases import make_detector
from phasekit.phases.vectors import StreamingVectors, streaming_sensors

METRICS = ("cycles", "instructions", "cache_misses", "branches")
TEXT = re.compile(r"phase (\d+) starts at ([\d.e+-]+) s: detected at ([\d.e+-]+) s "
                  r"\(latency ([\d.e+-]+) s")


def steps_csv(tmp_path, period: float, t0: float = 0.0):
    """Four steps of 60 samples (known change points 60, 120, 180; the last on one sensor:
    confirmed by the next vectors, not at once), noisy, as a CSV with a time column
    ``t0 + period x row``; also the values."""
    rng = np.random.default_rng(7)
    mixes = [[1.8, 0.003, 0.04], [0.6, 0.05, 0.2], [1.8, 0.003, 0.04], [1.8, 0.03, 0.04]]
    blocks = []
    for mix, cycles in zip(mixes, (4e10, 3e10, 4e10, 4e10), strict=True):
        c = cycles * rng.lognormal(0, 0.02, (60, 1))
        blocks.append(np.hstack([c, np.asarray(mix) * rng.lognormal(0, 0.05, (60, 3)) * c]))
    values = np.vstack(blocks)
    times = t0 + period * np.arange(len(values))
    path = tmp_path / "steps.csv"
    lines = ["time_s," + ",".join(METRICS)]
    lines += [f"{t:.6f}," + ",".join(f"{v:.9g}" for v in row)
              for t, row in zip(times, values, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path, values


def reference_changes(values: np.ndarray, period: float) -> list[tuple[int, int]]:
    """(start, detected_at) vector indices of the streaming detector fed row by row."""
    names = streaming_sensors(METRICS)
    stream = StreamingVectors(METRICS, names, period)
    detector = make_detector("ev", len(names), sensors=names, period=period)
    return [(c.start, c.detected_at) for row in values
            if (c := detector.update(stream.push(row))) is not None]


@pytest.mark.parametrize(("period", "t0", "stdin"), [(0.2, 0.0, False), (1.0, 0.0, False),
                                                     (0.2, 100.0, False), (0.2, 100.0, True)])
def test_watch_start_detection_and_latency_are_consistent(tmp_path, period: float, t0: float,
                                                          stdin: bool) -> None:
    path, values = steps_csv(tmp_path, period, t0)
    expected = reference_changes(values, period)
    assert [s for s, _ in expected] == [60, 120, 180]  # the known change points
    assert any(d > s for s, d in expected)  # some confirmed after their first vector
    # a replayed file is timed from the profile's start (as 'phasekit phases' is); CSV lines
    # on stdin by their time column
    first = t0 if stdin else 0.0
    source, given = ("-", path.read_text()) if stdin else (str(path), None)
    runner = CliRunner()
    done = runner.invoke(app, ["watch", source, "--json"], input=given)
    assert done.exit_code == 0, done.output
    lines = [json.loads(line) for line in done.stdout.strip().splitlines()]
    reports, summary = lines[:-1], lines[-1]
    assert len(reports) == len(expected)
    for report, (start, detected) in zip(reports, expected, strict=True):
        # start_s and detected_at_s: time stamps of the phase's first sample and of the
        # sample that confirmed it; the latency is their difference
        assert report["start_s"] == pytest.approx(first + start * period, abs=1e-9)
        assert report["detected_at_s"] == pytest.approx(first + detected * period, abs=1e-9)
        assert report["latency_s"] == pytest.approx(report["detected_at_s"] - report["start_s"],
                                                    abs=1e-9)
        assert report["latency_s"] == pytest.approx((detected - start) * period, abs=1e-9)
    assert summary["starts_s"] == pytest.approx([first] + [r["start_s"] for r in reports])
    text = runner.invoke(app, ["watch", source], input=given)
    assert text.exit_code == 0, text.output
    printed = [tuple(map(float, m.groups())) for m in TEXT.finditer(text.stdout)]
    assert len(printed) == len(reports)
    for (phase, start_s, detected_s, latency_s), report in zip(printed, reports, strict=True):
        assert phase == report["phase"]
        assert (start_s, detected_s, latency_s) == pytest.approx(
            (report["start_s"], report["detected_at_s"], report["latency_s"]), abs=1e-5)
        assert latency_s == pytest.approx(detected_s - start_s, abs=1e-5)


def test_phases_reports_detection_as_watch_does(tmp_path) -> None:
    period = 0.2
    path, values = steps_csv(tmp_path, period)
    runner = CliRunner()
    done = runner.invoke(app, ["phases", str(path), "--json"])
    assert done.exit_code == 0, done.output
    found = json.loads(done.stdout)["phases"]
    watched = [json.loads(line) for line in
               runner.invoke(app, ["watch", str(path), "--json"]).stdout.strip().splitlines()]
    # the same changes (no merge here), the same start and detection times
    assert [p["start_s"] for p in found[1:]] == pytest.approx([r["start_s"]
                                                               for r in watched[:-1]])
    assert [p["detected_at_s"] for p in found[1:]] == pytest.approx(
        [r["detected_at_s"] for r in watched[:-1]])
    expected = reference_changes(values, period)
    assert [p["detected_at_s"] for p in found[1:]] == pytest.approx(
        [d * period for _, d in expected])
