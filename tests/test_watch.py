"""``phasekit watch``: the times it reports for a change (start, detection, latency) are one
definition, the same in its text and JSON lines and in the result of ``phasekit phases``."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

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


def test_a_missed_sample_does_not_move_the_later_changes(tmp_path) -> None:
    """A recording followed live has no row for a missed tick: each change is placed at its
    own sample's time stamp, not at its index times the period (one period early per
    sample missed before it)."""
    period = 0.2
    path, values = steps_csv(tmp_path, period, 100.0)
    lines = path.read_text().splitlines()
    del lines[1 + 90]  # the sample at 118.0 s, between the first and second change
    expected = reference_changes(np.delete(values, 90, axis=0), period)
    done = CliRunner().invoke(app, ["watch", "-", "--json"], input="\n".join(lines) + "\n")
    assert done.exit_code == 0, done.output
    reports = [json.loads(line) for line in done.stdout.strip().splitlines()][:-1]
    assert len(reports) == len(expected) == 3
    for report, (start, detected) in zip(reports, expected, strict=True):
        row_time = [100.0 + period * (i + (i >= 90)) for i in (start, detected)]
        assert [report["start_s"], report["detected_at_s"]] == pytest.approx(row_time)


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


def test_the_help_gives_each_online_detectors_own_default_threshold() -> None:
    from phasekit.cli.watch import DEFAULT_THRESHOLDS
    from phasekit.phases import DETECTORS

    online = {name: found.threshold for name, found in DETECTORS.items() if found.online}
    assert online == DEFAULT_THRESHOLDS
    done = CliRunner().invoke(app, ["watch", "--help"], terminal_width=200)
    assert done.exit_code == 0, done.output
    said = " ".join(done.stdout.split())
    for name, value in online.items():
        assert f"{name} {value:g}," in said or f"{name} {value:g})" in said, name


def partial_recording(tmp_path, recording: dict[str, object]):
    """A recording cut short: ``run.parquet.partial.arrows`` holding the steps data, with no
    end-of-stream marker and no final file (its recorder killed); the number of samples."""
    from phasekit.io.arrow import StreamAppender

    _, values = steps_csv(tmp_path, 0.2)
    partial = tmp_path / "run.parquet.partial.arrows"
    header = {"version": 1, "period": 0.2, "start": 0.0, "metrics": list(METRICS),
              "meta": {"recording": {"flush_interval_s": 0.1, **recording}}}
    appender = StreamAppender(partial, METRICS, header)
    appender.append(0.2 * np.arange(len(values)), values)
    appender.abandon()
    return partial, len(values)


def run_watch(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``phasekit watch ARGS`` in a subprocess; fails (does not hang) past ``timeout``."""
    try:
        return subprocess.run([sys.executable, "-m", "phasekit.cli", "watch", *args],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"phasekit watch {' '.join(args)} still running after {timeout} s")


@pytest.mark.slow
def test_watch_stops_on_a_recording_cut_short_after_the_idle_time(tmp_path) -> None:
    partial, n_samples = partial_recording(tmp_path, {})
    started = time.monotonic()
    done = run_watch(str(tmp_path / "run.parquet"), "--json", "--idle", "1s", timeout=30)
    elapsed = time.monotonic() - started
    assert done.returncode == 3, done.stderr
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 1 and "Traceback" not in done.stderr
    assert str(partial) in errors[0] and "cut short" in errors[0] and "1 s" in errors[0]
    assert f"{n_samples} samples" in errors[0]
    # what was seen is still reported: the three known changes, then the summary
    lines = [json.loads(line) for line in done.stdout.strip().splitlines()]
    assert [r["start_s"] for r in lines[:-1]] == pytest.approx([60 * 0.2, 120 * 0.2,
                                                                180 * 0.2])
    assert lines[-1]["phases"] == 4
    assert 1.0 <= elapsed < 20


@pytest.mark.slow
def test_watch_stops_at_once_when_the_recorder_that_wrote_it_is_gone(tmp_path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid is no longer a running process
    partial_recording(tmp_path, {"host": socket.gethostname(), "pid": gone.pid})
    started = time.monotonic()
    done = run_watch(str(tmp_path / "run.parquet"), "--idle", "60s", timeout=30)
    assert done.returncode == 3, done.stderr
    assert f"pid {gone.pid}" in done.stderr and "cut short" in done.stderr
    assert time.monotonic() - started < 20  # well before the idle time


@pytest.mark.slow
def test_watch_stops_at_once_on_a_real_recording_whose_recorder_was_killed(tmp_path) -> None:
    """The recorder writes its pid into the recording: a SIGKILLed ``phasekit record`` is
    noticed without waiting for the idle time."""
    output = tmp_path / "run.parquet"
    partial = tmp_path / "run.parquet.partial.arrows"
    recorder = subprocess.Popen([sys.executable, "-m", "phasekit.cli", "record", "--interval",
                                 "10ms", "--scope", "node", "--sources", "proc", "-o",
                                 str(output), "--", "sleep", "30"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (
                not partial.exists() or partial.stat().st_size < 4096):
            time.sleep(0.1)
        time.sleep(1.5)  # a chunk of samples past the header
    finally:
        os.killpg(recorder.pid, signal.SIGKILL)  # the recorder and its command
        recorder.wait()
    assert partial.exists() and not output.exists()
    started = time.monotonic()
    done = run_watch(str(output), "--idle", "60s", timeout=40)
    assert done.returncode == 3, done.stderr
    assert f"pid {recorder.pid}" in done.stderr and "cut short" in done.stderr
    assert time.monotonic() - started < 30  # well before the idle time


@pytest.mark.slow
def test_watch_follows_a_slow_recording_that_keeps_growing(tmp_path) -> None:
    """Gaps shorter than --idle are waited through; the end-of-stream marker ends it."""
    from phasekit.io.arrow import StreamAppender

    _, values = steps_csv(tmp_path, 0.2)
    partial = tmp_path / "run.parquet.partial.arrows"
    appender = StreamAppender(partial, METRICS, {"version": 1, "period": 0.2,
                                                 "metrics": list(METRICS)})
    chunks = np.array_split(np.arange(len(values)), 4)

    def write() -> None:
        for rows in chunks:
            appender.append(0.2 * rows, values[rows])
            time.sleep(0.7)
        appender.close()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        done = run_watch(str(tmp_path / "run.parquet"), "--json", "--idle", "1.5s",
                         timeout=30)
    finally:
        writer.join()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["phases"] == 4
