"""The compiled sampling loop (phasekit.record._sampler) and the recorder running on it.

The extension is built by ``pip install`` (setup.py); these tests fail when it was not built,
since the overhead targets of ``phasekit record`` depend on it.
"""

from __future__ import annotations

import math
import os
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from phasekit.record._sampler import Sampler

from phasekit.errors import PhasekitWarning
from phasekit.io import read_profile
from phasekit.record import Recorder
from phasekit.record.sources.base import (
    Availability,
    Metric,
    Raw,
    RawRead,
    Source,
    perform,
    raw_error,
)
from phasekit.record.sources.command import CommandSource
from phasekit.record.sources.procfs import ProcSource


def take_all(sampler: Sampler) -> tuple[list[int], list[float], list[float], list[list[Raw]]]:
    ticks: list[int] = []
    times: list[float] = []
    late: list[float] = []
    rows: list[list[Raw]] = []
    while (chunk := sampler.take(0.05)) != ():
        if chunk is not None:
            ticks += chunk[0]
            times += chunk[1]
            late += chunk[2]
            rows += chunk[3]
    sampler.join()
    return ticks, times, late, rows


def test_reads_whole_files_of_any_length_and_reports_errors_as_errno(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    text = b"".join(b"line %d\n" % i for i in range(5000))  # far above the 64-byte buffer
    big.write_bytes(text)
    fd = os.open(big, os.O_RDONLY)
    folder = os.open(tmp_path, os.O_RDONLY)
    try:
        sampler = Sampler([(fd, 64, True), (folder, 16, False)], 0.01, 0.05, 0.25, 0.1)
        t0, read_end, raw = sampler.first()
        assert raw[0] == text
        assert raw[1] == 21  # EISDIR: read(2) of a directory
        assert raw_error(21).errno == 21
        assert 0 <= read_end < 0.05 and abs(t0 - time.monotonic()) < 1.0
        assert perform([RawRead(fd, 64, pread=True), RawRead(folder, 16)]) == raw
        sampler.start()
        ticks, times, late, rows = take_all(sampler)
    finally:
        os.close(fd)
        os.close(folder)
    assert rows and all(r == [text, 21] for r in rows)
    assert ticks == sorted(ticks) and ticks[0] >= 1
    assert times[-1] >= 0.1  # stopped by `end` after the first sample at or past it
    assert all(0 <= x < 0.01 for x in late)


@pytest.mark.slow
def test_a_stop_takes_a_final_sample_and_ends_the_stream(tmp_path: Path) -> None:
    path = tmp_path / "value"
    path.write_bytes(b"1")
    fd = os.open(path, os.O_RDONLY)
    try:
        sampler = Sampler([(fd, 8, True)], 10.0, 1.0, 0.25)  # a 10 s interval: no tick comes
        sampler.first()
        sampler.start()
        time.sleep(2.6)  # past min_span: the stop takes one final sample
        started = time.monotonic()
        sampler.stop()
        ticks, times, late, rows = take_all(sampler)
        assert time.monotonic() - started < 1.0, "a stop must not wait for the next deadline"
    finally:
        os.close(fd)
    assert ticks == [1] and late == [0.0] and rows == [[b"1"]]
    assert 2.5 < times[0] < 4.0
    assert sampler.status()["running"] is False


def test_long_reads_skip_ticks_instead_of_taking_slivers() -> None:
    """A read that blocks 3.5 intervals: the next deadline is never less than min_span
    intervals after the end of the previous read, and a sample is never a whole interval
    late (recorder module docstring)."""
    interval, min_span = 0.01, 0.25
    read_end, write_end = os.pipe()
    stop = threading.Event()

    def feed() -> None:
        while not stop.is_set():
            os.write(write_end, b"x")
            time.sleep(3.5 * interval)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        sampler = Sampler([(read_end, 1, False)], interval, 0.1, min_span, 0.5)
        sampler.first()
        sampler.start()
        ticks, times, late, _rows = take_all(sampler)
    finally:
        stop.set()
        feeder.join()
        os.close(read_end)
        os.close(write_end)
    missed = sampler.status()["missed"]
    assert missed >= 20  # about 2.5 of every 3.5 ticks
    assert len(ticks) + missed >= 45
    for k in range(1, len(ticks)):
        assert ticks[k] > ticks[k - 1]
        assert ticks[k] * interval >= times[k - 1] + min_span * interval - 1e-9
    assert all(0 <= x < interval for x in late)


def test_no_reads_at_all_still_keeps_time() -> None:
    """Ticks of 20 ms until the first sample at or past 0.2 s: the tenth, or a later one
    when a late wake-up skipped to it (a skipped tick counts as missed, not as a sample)."""
    interval, end = 0.02, 0.2
    sampler = Sampler([], interval, 0.1, 0.25, end)
    _t0, _end, raw = sampler.first()
    assert raw == []
    sampler.start()
    ticks, times, _late, rows = take_all(sampler)
    assert rows == [[] for _ in ticks]
    assert len(ticks) + sampler.status()["missed"] == ticks[-1]  # each tick: sample or miss
    assert max(times[:-1], default=0.0) < end <= times[-1]
    # taken less than an interval late, plus one for a preemption before the read's end
    assert ticks[-1] * interval <= times[-1] < (ticks[-1] + 2) * interval, (ticks, times)


def test_bad_arguments_are_errors_not_crashes() -> None:
    with pytest.raises(ValueError):
        Sampler([(0, 8, True)], 0.0, 1.0, 0.25)
    with pytest.raises(ValueError):
        Sampler([(-1, 8, True)], 0.01, 1.0, 0.25)
    with pytest.raises(TypeError):
        Sampler([("x", 8, True)], 0.01, 1.0, 0.25)
    sampler = Sampler([], 0.01, 1.0, 0.25)
    with pytest.raises(RuntimeError):
        sampler.start()  # first() comes first


def test_proc_raw_reads_in_c_are_the_bytes_python_reads(tmp_path: Path) -> None:
    root = tmp_path / "proc"
    (root / "net").mkdir(parents=True)
    (root / "stat").write_text("cpu  10 2 30 400 5 6 7 0 0 0\ncpu0 1 1 1 1 1 1 1 0 0 0\n")
    (root / "meminfo").write_text("MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 400 kB\n"
                                  "Cached: 200 kB\n" + "Filler: 1 kB\n" * 2000)
    (root / "diskstats").write_text("   8 0 sda 10 0 80 0 20 0 160 0 0 0 0\n")
    (root / "net" / "dev").write_text("h1\nh2\n  eth0: 100 2 0 0 0 0 0 0 300 4 0 0 0 0 0 0\n")
    source = ProcSource(str(root))
    source.open("node")
    try:
        reads = source.raw_reads()
        assert reads is not None and len(reads) == 4
        sampler = Sampler([(r.fd, r.size, r.pread) for r in reads], 1.0, 1.0, 0.25)
        _t0, _end, raw = sampler.first()
        assert raw == perform(reads)
        assert len(raw[1]) > 20000  # meminfo grew past its first buffer
        assert source.decode(raw) == source.read()
    finally:
        source.close()


class UptimeSource(Source):
    """``/proc/uptime`` as a raw-read source: a counter of 1 s per second (10 ms steps), read
    by the compiled loop at the sample's time, not when its chunk is decoded."""

    name = "uptime"
    METRICS = (Metric("uptime_s", "s", "counter"),)

    def __init__(self, fail_after: int | None = None) -> None:
        self.fail_after = fail_after
        self.decoded = 0
        self.fd = -1

    def probe(self) -> Availability:
        return Availability(self.name, True, metrics=self.METRICS)

    def open(self, scope: str, pid: int | None = None) -> tuple[Metric, ...]:
        self.fd = os.open("/proc/uptime", os.O_RDONLY | os.O_CLOEXEC)
        return self.METRICS

    def raw_reads(self) -> tuple[RawRead, ...] | None:
        return (RawRead(self.fd, 64, pread=True),)

    def decode(self, raw: Sequence[Raw]) -> list[float]:
        self.decoded += 1
        if self.fail_after is not None and self.decoded > self.fail_after:
            raise OSError("device vanished")
        data = raw[0]
        assert isinstance(data, bytes)
        return [float(data.split()[0])]

    def read(self) -> list[float]:
        return self.decode(perform(self.raw_reads() or ()))

    def close(self) -> None:
        os.close(self.fd)


@pytest.mark.parametrize("loop", ["compiled", "python"])
@pytest.mark.slow
def test_the_recorder_stores_the_known_rate_with_either_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loop: str) -> None:
    if loop == "python":
        monkeypatch.setenv("PHASEKIT_SAMPLER", "python")
    output = tmp_path / "uptime.parquet"
    summary = Recorder([UptimeSource()], interval=0.02).run(output, duration=1.5)
    assert summary.sampler.startswith(loop)
    profile = read_profile(output)
    assert profile.meta["recording"]["sampler"] == summary.sampler
    assert abs(profile.n_samples - 75) <= 2
    values = profile.values[:, 0]
    # 1 s of uptime per second: 0.02 s per 20 ms interval, on average (10 ms resolution)
    assert abs(np.nanmean(values) - 0.02) < 0.002
    assert np.nanmax(values) <= 0.04


def test_a_source_whose_decoding_fails_is_dropped_by_the_compiled_loop(tmp_path: Path) -> None:
    output = tmp_path / "drop.parquet"
    with pytest.warns(PhasekitWarning, match="uptime failed and was dropped"):
        summary = Recorder([UptimeSource(fail_after=30)], interval=0.01).run(output,
                                                                             duration=1.0)
    assert summary.sampler.startswith("compiled") and "uptime" in summary.dropped
    values = read_profile(output).values[:, 0]
    read = np.flatnonzero(np.isfinite(values))
    # a tick skipped under load is a missing row, so the rows before the drop may hold gaps
    assert read.size >= 25 and np.isnan(values[read[-1] + 1:]).all()
    assert read[-1] + 1 - read.size <= summary.missed_ticks and values.size - read[-1] > 40


def test_command_values_are_read_as_of_the_sample_time() -> None:
    source = CommandSource("watts", "echo 1", interval=1.0)
    source._publish((10.0, 100.0, 0.1))
    source._publish((20.0, 101.0, 0.1))
    assert math.isnan(source.read_at(99.0)[0])  # before the first run
    assert source.read_at(100.5) == [10.0]
    assert source.read_at(101.0) == [20.0]
    assert math.isnan(source.read_at(101.0 + 3.1)[0])  # stale: 3 x max(interval, duration)


def test_the_real_recording_of_phasekit_record_uses_the_compiled_loop(tmp_path: Path) -> None:
    from phasekit.record import builtin_sources, select_sources

    output = tmp_path / "node.parquet"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhasekitWarning)
        summary = Recorder(select_sources(None, builtin_sources()), interval=0.01).run(
            output, duration=0.5)
    assert summary.sampler.startswith("compiled"), summary.sampler
    assert summary.n_samples >= 45
