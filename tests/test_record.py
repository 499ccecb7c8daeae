"""The recorder: timing, stored values, crash safety (SIGKILL), signals, errors, and a real run.

Sources here are fakes with known readings, except the last tests, which record a real child
process with the sources that work on this machine.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from phasekit.errors import PhasekitWarning, UnsupportedError, UsageError
from phasekit.io import read_profile
from phasekit.record import Recorder, partial_path
from phasekit.record.recorder import _Layout, _Opened, stored_values
from phasekit.record.sources.base import Availability, Metric, Source


class Fake(Source):
    """Readings that are functions of the monotonic clock: rates known exactly."""

    name = "fake"
    METRICS = (Metric("ticks", "", "counter"), Metric("level", "B", "gauge"),
               Metric("energy", "J", "counter", rate_unit="W"))

    def __init__(self, rate: float = 1000.0, watts: float = 50.0, fail_after: int | None = None,
                 slow_every: int = 0, slow_by: float = 0.0) -> None:
        self.rate, self.watts = rate, watts
        self.fail_after, self.slow_every, self.slow_by = fail_after, slow_every, slow_by
        self.reads = 0
        self.closed = False

    def probe(self) -> Availability:
        return Availability(self.name, True, metrics=self.METRICS)

    def open(self, scope: str, pid: int | None = None) -> tuple[Metric, ...]:
        return self.METRICS

    def read(self) -> list[float]:
        self.reads += 1
        if self.fail_after is not None and self.reads > self.fail_after:
            raise OSError("device vanished")
        if self.slow_every and self.reads % self.slow_every == 0:
            time.sleep(self.slow_by)
        now = time.monotonic()
        return [self.rate * now, 42.0, self.watts * now]

    def close(self) -> None:
        self.closed = True


class Unopenable(Fake):
    name = "broken"
    METRICS = (Metric("other", "", "counter"),)

    def open(self, scope: str, pid: int | None = None) -> tuple[Metric, ...]:
        raise UnsupportedError("not here")


def test_stored_values_against_a_naive_computation() -> None:
    metrics = Fake.METRICS
    layout = _Layout.of([_Opened(Fake(), metrics, [0, 1, 2])])
    interval = 0.01
    previous = np.array([0, 0.0, 100.0, 7.0, 10.0])
    rows = np.array([[1, 0.010, 110.0, 8.0, 10.5],
                     [2, 0.021, 121.0, 9.0, 11.6],
                     [4, 0.040, 119.0, 9.5, 12.0]])  # tick 3 missed; a counter reset
    times, values = stored_values(previous, rows, layout, interval)
    expected = []
    for k in range(len(rows)):
        before = previous if k == 0 else rows[k - 1]
        span = rows[k, 1] - before[1]
        increase = rows[k, 2] - before[2]
        expected.append([increase * interval / span if increase >= 0 else math.nan,
                         rows[k, 3], (rows[k, 4] - before[4]) / span])
    np.testing.assert_allclose(times, [0.0, 0.01, 0.03])
    np.testing.assert_allclose(values, np.array(expected), rtol=1e-12)
    assert math.isnan(values[2, 0])


@pytest.mark.slow
def test_a_recording_holds_the_known_rates(tmp_path: Path) -> None:
    output = tmp_path / "run.parquet"
    summary = Recorder([Fake()], interval=0.005).run(output, duration=1.5)
    assert not partial_path(output).exists()
    profile = read_profile(output)
    assert profile.period == 0.005
    assert profile.metrics == ("ticks", "level", "energy")
    assert profile.units == {"level": "B", "energy": "W"}
    assert abs(profile.n_samples - 300) <= 3
    assert profile.n_samples <= summary.n_samples + summary.missed_ticks  # missed: NaN rows
    ticks, level, power = (profile.values[:, j] for j in range(3))
    # 1000 ticks/s stored per 5 ms interval: 5 each; 50 J/s stored as 50 W
    np.testing.assert_allclose(np.nanmedian(ticks), 5.0, rtol=1e-3)
    np.testing.assert_allclose(np.nanmedian(power), 50.0, rtol=1e-3)
    assert np.all(level[np.isfinite(level)] == 42.0)
    recording = profile.meta["recording"]
    assert recording["complete"] is True
    assert recording["interval_s"] == 0.005
    assert recording["stopped_by"] == "duration"
    for key in ("host", "cpu_model", "start_utc", "end_utc", "phasekit_version", "sources",
                "command", "jitter_s", "achieved_interval_s", "missed_ticks"):
        assert key in recording
    assert recording["kinds"] == {"ticks": "counter", "level": "gauge", "energy": "counter"}
    assert abs(summary.achieved_interval - 0.005) < 5e-4
    assert 0 <= summary.jitter_p50 <= summary.jitter_p99 <= summary.jitter_max


@pytest.mark.slow
def test_missed_ticks_are_gaps_not_bursts(tmp_path: Path) -> None:
    output = tmp_path / "late.parquet"
    source = Fake(slow_every=40, slow_by=0.025)  # every 40th read takes 5 intervals
    summary = Recorder([source], interval=0.005).run(output, duration=2.0)
    assert summary.missed_ticks >= 5
    profile = read_profile(output)
    ticks = profile.values[:, 0]
    assert np.isnan(ticks).sum() >= summary.missed_ticks  # skipped ticks are NaN rows
    finite = ticks[np.isfinite(ticks)]
    # unscaled, each late sample (about 10 here) would hold 10 to 25 ticks; a preemption of
    # this VM between a read and its timestamp moves the two samples beside it (by 7.2 once,
    # under load)
    off = finite[np.abs(finite - 5.0) >= 2.5]
    assert off.size <= 2, f"a late sample must be scaled to one interval: {off}"


def test_a_source_that_fails_mid_run_is_dropped_with_a_warning(tmp_path: Path) -> None:
    output = tmp_path / "drop.parquet"
    with pytest.warns(PhasekitWarning, match="fake failed and was dropped"):
        summary = Recorder([Fake(fail_after=100)], interval=0.005).run(output, duration=1.0)
    assert "fake" in summary.dropped
    profile = read_profile(output)
    assert np.isfinite(profile.values[:50, 0]).mean() > 0.8  # a missed tick is a NaN row
    assert np.isnan(profile.values[-50:, :]).all()
    assert profile.meta["recording"]["dropped_sources"]["fake"].startswith("OSError")


def test_metrics_selection_and_errors_before_anything_starts(tmp_path: Path) -> None:
    output = tmp_path / "sel.parquet"
    Recorder([Fake(), Unopenable()], interval=0.01, metrics=["energy"]).run(output,
                                                                             duration=0.3)
    assert read_profile(output).metrics == ("energy",)
    with pytest.raises(UsageError, match="no source here provides nope"):
        Recorder([Fake()], metrics=["nope"]).run(tmp_path / "x.parquet", duration=1)
    with pytest.raises(UsageError, match="shortest interval is 1 ms"):
        Recorder([Fake()], interval=0.0005).run(tmp_path / "x.parquet", duration=1)
    with pytest.raises(UsageError, match="does not exist"):
        Recorder([Fake()]).run(tmp_path / "missing" / "x.parquet", duration=1)
    with pytest.raises(UsageError, match="command not found"):
        Recorder([Fake()]).run(tmp_path / "x.parquet", command=["no-such-program-xyz"])
    with pytest.raises(UsageError, match="cannot tell the profile format"):
        Recorder([Fake()]).run(tmp_path / "x.dat", duration=1)
    with pytest.raises(UsageError, match="process tree"):
        Recorder([Fake()], scope="process").run(tmp_path / "x.parquet", duration=1)
    with pytest.raises(UnsupportedError, match="not here"):
        Recorder([Unopenable()], metrics=["other"]).run(tmp_path / "x.parquet", duration=1)
    with warnings.catch_warnings():  # a source that cannot open is left out with a warning
        warnings.simplefilter("ignore", PhasekitWarning)
        with pytest.raises(UnsupportedError, match="no source could be opened"):
            Recorder([Unopenable()]).run(tmp_path / "x.parquet", duration=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sel.parquet"]


def test_the_command_exit_code_is_returned(tmp_path: Path) -> None:
    source = Fake()
    summary = Recorder([source], interval=0.01).run(
        tmp_path / "exit.csv", command=["sh", "-c", "sleep 0.3; exit 3"])
    assert summary.exit_code == 3 and summary.stopped_by == "command exited"
    assert source.closed
    profile = read_profile(tmp_path / "exit.csv")
    # a sample per 10 ms tick until the exit, but for the ticks missed under load
    assert 0.3 <= summary.duration < 3, summary
    ticks = summary.n_samples + summary.missed_ticks
    assert abs(ticks - summary.duration / 0.01) <= 2, summary
    assert summary.n_samples <= profile.n_samples <= ticks
    assert profile.meta["recording"]["command"] == ["sh", "-c", "sleep 0.3; exit 3"]
    killed = Recorder([Fake()], interval=0.01).run(
        tmp_path / "killed.parquet", command=["sh", "-c", "kill -9 $$"])
    assert killed.exit_code == 128 + 9


def _cli(*args: str, log: Path) -> subprocess.Popen[str]:
    """``phasekit ARGS`` in a process of its own; its output goes to ``log`` (a pipe would
    stay open as long as the recorded command lives)."""
    with open(log, "w") as sink:
        return subprocess.Popen([sys.executable, "-m", "phasekit.cli", *args], text=True,
                                stdout=sink, stderr=subprocess.STDOUT)


def _wait_for_samples(partial: Path, seconds: float) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if partial.exists() and partial.stat().st_size > 0:
            break
        time.sleep(0.05)
    time.sleep(seconds)


@pytest.mark.slow
def test_sigkill_keeps_every_flushed_chunk(tmp_path: Path) -> None:
    output = tmp_path / "cut.parquet"
    pid_file = tmp_path / "child.pid"
    recorder = _cli("record", "--sources", "proc", "--interval", "10ms", "-o", str(output),
                    "--", "sh", "-c", f"echo $$ > {pid_file}; exec sleep 60",
                    log=tmp_path / "log.txt")
    partial = partial_path(output)
    try:
        _wait_for_samples(partial, 3.2)
        recorder.send_signal(signal.SIGKILL)
        recorder.wait(timeout=30)
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert not output.exists(), "a recording cut short must not look complete"
    with pytest.warns(PhasekitWarning, match="cut short"):
        profile = read_profile(partial)
    # chunks are flushed every second: at least the 2 s before the last flush survive
    assert profile.n_samples >= 200, profile.n_samples
    assert profile.meta["recording"]["complete"] is False
    assert profile.meta["truncated"]["chunks_kept"] >= 2
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "info", str(partial), "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["n_samples"] == profile.n_samples and info["period_s"] == 0.01
    assert "cut short" in done.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.slow
def test_a_signal_stops_the_command_and_finalizes_the_file(tmp_path: Path, signum: int) -> None:
    output = tmp_path / "stopped.parquet"
    log = tmp_path / "log.txt"
    recorder = _cli("record", "--sources", "proc", "--interval", "10ms", "-o", str(output),
                    "--", sys.executable, "-c", "import time; time.sleep(60)", log=log)
    _wait_for_samples(partial_path(output), 1.0)
    recorder.send_signal(signum)
    recorder.wait(timeout=30)
    assert output.exists(), log.read_text()
    assert not partial_path(output).exists()
    recording = read_profile(output).meta["recording"]
    assert recording["complete"] is True
    assert recording["stopped_by"] == signal.Signals(signum).name
    # the child (not in a terminal here) got the signal from the recorder after the grace
    assert recorder.returncode == 128 + signum == recording["exit_code"]


@pytest.mark.slow
def test_cli_errors_are_one_line_with_exit_code_2(tmp_path: Path) -> None:
    for args, message in [
        (["--interval", "0.5ms", "--duration", "1s"], "shortest interval is 1 ms"),
        (["--metrics", "nope", "--duration", "1s"], "no source here provides nope"),
        (["--duration", "1s", "-o", str(tmp_path / "no" / "x.parquet")], "does not exist"),
        (["--", "no-such-program-xyz"], "command not found"),
        (["--sources", "nosuch", "--duration", "1s"], "unknown source nosuch"),
        (["--sensor", "bad", "--duration", "1s"], "expected NAME=COMMAND"),
        ([], "nothing to record"),
    ]:
        done = subprocess.run([sys.executable, "-m", "phasekit.cli", "record",
                               "-o", str(tmp_path / "x.parquet"), *args],
                              capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, done.stderr)
    assert not any(tmp_path.glob("*.parquet*"))


def test_sources_lists_what_works_and_why_not() -> None:
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "sources", "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    listing = {entry["name"]: entry for entry in json.loads(done.stdout)}
    assert set(listing) == {"perf-hw", "perf-sw", "proc", "rapl"}
    assert listing["proc"]["available"]
    for entry in listing.values():
        if not entry["available"]:
            assert entry["reason"], entry
    if not Path("/sys/class/powercap").exists():
        assert not listing["rapl"]["available"]


@pytest.mark.slow
def test_recording_a_real_child_finds_its_known_period(tmp_path: Path) -> None:
    """The built-in workload (period 0.4 s by construction) recorded with the software
    counters of its process tree; the analysis finds 0.4 s."""
    output = tmp_path / "workload.parquet"
    done = subprocess.run(
        [sys.executable, "-m", "phasekit.cli", "record", "--scope", "process",
         "--sources", "perf-sw", "--interval", "10ms", "-o", str(output), "--json", "--",
         sys.executable, "-m", "phasekit.record.workload", "--iterations", "24",
         "--period", "0.4", "--checkpoint-every", "0", "--dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["exit_code"] == 0 and summary["n_samples"] > 800
    analyzed = subprocess.run(
        [sys.executable, "-m", "phasekit.cli", "analyze", str(output), "--metric", "task_clock",
         "--metric", "page_faults", "--json"], capture_output=True, text=True, timeout=120)
    assert analyzed.returncode == 0, analyzed.stderr
    result = json.loads(analyzed.stdout)
    assert result["patterns"], result.get("explanation")
    top = result["patterns"][0]
    assert top["period_s"] == pytest.approx(0.4, rel=0.05)
    assert result["coverage"] > 0.6


def test_first_reading_failure_stops_before_the_command_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(UnsupportedError, match="first reading failed"):
        Recorder([Fake(fail_after=0)]).run(tmp_path / "x.parquet",
                                          command=["touch", str(marker)])
    assert not marker.exists()
    assert not any(tmp_path.glob("x.parquet*"))


def test_a_stale_partial_file_is_never_overwritten(tmp_path: Path) -> None:
    output = tmp_path / "run.parquet"
    partial_path(output).write_bytes(b"the samples of a recording cut short")
    with pytest.raises(UsageError, match=r"partial\.arrows exists"):
        Recorder([Fake()]).run(output, duration=0.2)
    assert partial_path(output).read_bytes() == b"the samples of a recording cut short"


def test_exec_failure_is_one_usage_error_and_nothing_is_written(tmp_path: Path) -> None:
    script = tmp_path / "bad-interpreter"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    with pytest.raises(UsageError, match="cannot run"):
        Recorder([Fake()]).run(tmp_path / "x.parquet", command=[str(script)])
    assert not any(tmp_path.glob("x.parquet*"))
    plain = tmp_path / "no-shebang"  # run by /bin/sh, as a shell would
    plain.write_text("exit 7\n")
    plain.chmod(0o755)
    assert Recorder([Fake()], interval=0.01).run(tmp_path / "y.parquet",
                                                 command=[str(plain)]).exit_code == 7


def test_the_command_gets_default_signal_dispositions(tmp_path: Path) -> None:
    """Python ignores SIGPIPE and SIGXFSZ, a background shell SIGINT: the command gets their
    defaults back (the other ignored signals are inherited, as from any launcher: nohup's
    SIGHUP, say, so only these three bits are checked)."""
    import signal

    probe = "grep SigIgn /proc/self/status"
    log = tmp_path / "out.txt"
    with open(log, "w") as sink:
        Recorder([Fake()], interval=0.01).run(tmp_path / "x.parquet",
                                              command=["sh", "-c", probe],
                                              command_stdout=sink.fileno())
    ignored = int(log.read_text().split()[1], 16)
    for restored in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
        assert not ignored & (1 << (restored - 1)), f"{restored.name} left ignored"


def test_a_duration_stops_the_command(tmp_path: Path) -> None:
    started = time.monotonic()
    summary = Recorder([Fake()], interval=0.01).run(tmp_path / "d.parquet",
                                                    command=["sleep", "30"], duration=0.5)
    assert time.monotonic() - started < 10
    assert summary.stopped_by == "duration"
    assert summary.exit_code == 128 + signal.SIGTERM
    assert 0.4 <= summary.duration <= 3


def test_long_intervals_still_stop_promptly(tmp_path: Path) -> None:
    started = time.monotonic()
    summary = Recorder([Fake()], interval=3.0).run(tmp_path / "l.parquet",
                                                   command=["sleep", "0.3"])
    assert time.monotonic() - started < 2.5
    assert summary.exit_code == 0


@pytest.mark.parametrize("suffix", [".arrows", ".csv"])
def test_other_output_formats(tmp_path: Path, suffix: str) -> None:
    output = tmp_path / f"run{suffix}"
    summary = Recorder([Fake()], interval=0.01).run(output, duration=0.5)
    profile = read_profile(output)
    assert profile.n_samples >= summary.n_samples
    assert profile.meta["recording"]["complete"] is True
    assert profile.units["energy"] == "W"


def test_two_sources_with_one_metric_name_is_a_usage_error(tmp_path: Path) -> None:
    class Twin(Fake):
        name = "twin"

    with pytest.raises(UsageError, match="provided by both fake and twin"):
        Recorder([Fake(), Twin()]).run(tmp_path / "x.parquet", duration=0.2)
    with pytest.raises(UsageError, match="named twice"):
        Recorder([Fake(), Fake()]).run(tmp_path / "x.parquet", duration=0.2)


@pytest.mark.slow
def test_stop_signals_reach_the_whole_command_and_a_second_one_kills(tmp_path: Path) -> None:
    """Without a terminal, the command has its own process group: SIGTERM reaches its
    grandchildren at once; a command that ignores it is killed at the second signal."""
    output = tmp_path / "group.parquet"
    pid_file = tmp_path / "grandchild.pid"
    recorder = _cli("record", "--sources", "proc", "--interval", "10ms", "-o", str(output),
                    "--", "sh", "-c", f"trap '' TERM; sleep 60 & echo $! > {pid_file}; wait",
                    log=tmp_path / "log.txt")
    _wait_for_samples(partial_path(output), 1.0)
    grandchild = int(pid_file.read_text())
    recorder.send_signal(signal.SIGTERM)  # sleep dies, sh ignores it and waits
    time.sleep(0.5)
    recorder.send_signal(signal.SIGTERM)  # second signal: kill
    recorder.wait(timeout=20)
    assert output.exists(), (tmp_path / "log.txt").read_text()
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(grandchild, 0)
            time.sleep(0.1)
    assert read_profile(output).meta["recording"]["stopped_by"] == "SIGTERM"


@pytest.mark.slow
def test_a_write_failure_is_one_line_naming_what_was_kept(tmp_path: Path) -> None:
    import resource

    output = tmp_path / "big.parquet"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))

    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "record", "--sources", "proc",
                           "--interval", "5ms", "-o", str(output), "--", "sh", "-c",
                           "sleep 3; exit 7"],
                          capture_output=True, text=True, timeout=60, preexec_fn=small_files)
    assert done.returncode == 7, done.stderr  # the command's own exit code, kept
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "recording failed" in lines[0] and "partial.arrows" in lines[0]
    assert not output.exists()


def test_workload_checkpoints_between_iterations_only() -> None:
    """A checkpoint after every 10th iteration, none after the run's last one."""
    from phasekit.record.workload import Workload

    def after(iterations: int, every: int = 10) -> list[int]:
        workload = Workload(checkpoint_every=every)
        return [i + 1 for i in range(iterations) if workload._checkpoint_after(i, iterations)]

    assert after(40) == [10, 20, 30]
    assert after(41) == [10, 20, 30, 40]
    assert after(9) == []
    assert after(40, every=0) == []
