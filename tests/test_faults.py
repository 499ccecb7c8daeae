"""Fault injection where data is at stake: real processes, real faults.

- ``campaign run`` killed with SIGKILL twice (one log line cut short, as a crash mid-write
  leaves it) and run again with the same command: every configuration and repetition of the
  grid is in the final file exactly once, and the runs made before each kill are kept, not
  made again.
- ``record`` on a full disk (a 160 KiB tmpfs; where mounting is not allowed, and always in a
  second case, ENOSPC injected at the writer's file boundary in the recording process): every
  chunk written before the disk filled is kept and readable, the error is one line, and the
  command runs to its end and gives ``phasekit record`` its exit code. The same when it is the
  final file that does not fit (fsync reports ENOSPC, as delayed allocation and NFS do).
- A Dask worker (LocalCluster on loopback, worker processes) killed by PID while it analyzes
  a node, through ``phasekit.many`` and through ``phasekit analyze FILES --scheduler``: the
  task is retried and the result complete, or (the scheduler allowed no retry) the node is
  reported by name in one line; never a hang or a traceback. A cluster whose only worker
  (no nanny) is killed reports the nodes not analyzed instead of waiting for ever.

Every process started here runs in a process group of its own, killed at the end of its test
whatever happens; every wait has a timeout.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from phasekit.campaign import read_campaign
from phasekit.errors import PhasekitWarning
from phasekit.io import read_profile
from phasekit.record.recorder import FLUSH_INTERVAL

PHASEKIT = [sys.executable, "-m", "phasekit.cli"]


@contextlib.contextmanager
def started(argv: Sequence[str], **kwargs: Any) -> Iterator[subprocess.Popen[str]]:
    """``argv`` started in a process group of its own, which is killed when the block ends
    (whatever the test made of it: stragglers of a killed parent included)."""
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    process = subprocess.Popen(list(argv), start_new_session=True, text=True, **options)
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)


class Background:
    """``func()`` in a daemon thread: a hang fails the test instead of blocking it."""

    def __init__(self, func: Callable[[], Any]) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(func,), daemon=True)
        self.thread.start()

    def _run(self, func: Callable[[], Any]) -> None:
        try:
            self.value = func()
        except BaseException as exc:  # re-raised by result()
            self.error = exc

    def done(self) -> bool:
        return not self.thread.is_alive()

    def result(self, timeout: float) -> Any:
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise AssertionError(f"still running after {timeout:g} s: a hang")
        if self.error is not None:
            raise self.error
        return self.value


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.01)


# --- campaign run: killed and resumed ---------------------------------------------------------
THREADS, INPUTS, REPS = (1, 2), ("a", "b", "c"), 3
GRID = {(t, None, None, i, r) for t in THREADS for i in INPUTS for r in range(1, REPS + 1)}


def _campaign_argv(output: Path) -> list[str]:
    return [*PHASEKIT, "campaign", "run", "--threads", ",".join(map(str, THREADS)),
            "--inputs", ",".join(INPUTS), "--reps", str(REPS), "--power-estimate", "10,6",
            "-o", str(output), "--", "sh", "-c", "sleep 0.1", "run", "{input}"]


def _logged(log: Path) -> dict[tuple[Any, ...], float]:
    """The runs of a campaign log that are whole lines: key -> start time."""
    runs = {}
    for line in log.read_text().splitlines()[1:]:
        with contextlib.suppress(ValueError):
            run = json.loads(line)
            key = (run["threads"], run["cores"], run["frequency_ghz"], run["input"],
                   run["repetition"])
            runs[key] = run["start_s"]
    return runs


def _own_tmp(output: Path) -> dict[str, str]:
    """The environment with TMPDIR in the test's folder: the temporary folder of the run a
    kill interrupts is left there, not in /tmp."""
    tmp = output.parent / "tmp"
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp)}


def _run_lines(log: Path) -> int:
    return max(0, log.read_text().count("\n") - 1) if log.exists() else 0


def _kill_after(output: Path, log: Path, lines: int) -> None:
    """Start the campaign and SIGKILL it (the phasekit process alone, as the OOM killer or a
    crash would) once its log holds ``lines`` runs."""
    with started(_campaign_argv(output), env=_own_tmp(output)) as process:
        wait_until(lambda: _run_lines(log) >= lines or process.poll() is not None, 60,
                   f"{lines} runs in {log}")
        process.kill()
        process.wait(timeout=10)
        assert process.returncode == -signal.SIGKILL, "the campaign ended before the kill"


@pytest.mark.slow
def test_campaign_killed_twice_resumes_without_losing_or_repeating_a_run(tmp_path: Path
                                                                         ) -> None:
    output = tmp_path / "c.json"
    log = tmp_path / "c.json.partial.jsonl"
    _kill_after(output, log, 4)
    first = _logged(log)
    assert len(first) >= 4 and not output.exists()
    # a crash in the middle of a write: the last line cut short (its run must be made again)
    text = log.read_text()
    cut = text.rstrip("\n").rsplit("\n", 1)[-1]
    log.write_text(text[:len(text) - len(cut) // 2 - 1])
    cut_key = next(k for k in first if k not in _logged(log))
    first = _logged(log)
    _kill_after(output, log, len(first) + 4)
    second = _logged(log)
    assert len(second) >= len(first) + 3 and not output.exists()

    with started(_campaign_argv(output), env=_own_tmp(output)) as process:
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    runs = read_campaign(output).runs
    made = collections.Counter(r.key for r in runs)
    assert set(made) == GRID, f"lost: {GRID - set(made)}; unknown: {set(made) - GRID}"
    assert max(made.values()) == 1, f"made twice: {[k for k, n in made.items() if n > 1]}"
    assert all(r.ok and r.energy_j is not None for r in runs)
    start = {r.key: r.start_s for r in runs}
    assert all(start[k] == s for k, s in second.items()), "a run made before a kill was redone"
    assert start[cut_key] > max(first.values())  # the cut run: made again, after the kill
    assert not log.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "tmp"]
    # the resume says what it kept and skipped; the progress names only what the plan varies
    assert "skipped 1 line(s) cut short" in err
    assert f"[{len(second)}/{len(GRID)}] resuming" in err
    assert f"[{len(GRID)}/{len(GRID)}] t=2 in=c r=3: ok" in err and "None" not in err


def test_a_log_of_another_campaign_is_refused_before_any_run(tmp_path: Path) -> None:
    """Runs of two commands, or of two energy sensors, never mix in one campaign."""
    output = tmp_path / "c.json"
    log = tmp_path / "c.json.partial.jsonl"
    _kill_after(output, log, 2)
    kept = log.read_bytes()
    argv = _campaign_argv(output)
    other_command = [*argv[:-3], "sleep 0.2", *argv[-2:]]
    no_estimate = [a for a in argv if a not in ("--power-estimate", "10,6")]
    for changed, message in ((other_command, "holds runs of"),
                             (no_estimate, "holds runs with energy ESTIMATED")):
        with started(changed, env=_own_tmp(output)) as process:
            _, err = process.communicate(timeout=60)
        assert process.returncode == 2, err
        assert err.count("\n") == 1 and message in err, err
        assert log.read_bytes() == kept and not output.exists()


def test_a_jsonl_campaign_ends_without_the_line_a_crash_cut(tmp_path: Path) -> None:
    """With ``-o FILE.jsonl`` the log is the result: a line cut by a crash is skipped on
    resume (with a warning) and gone from the final file, which then reads cleanly."""
    from phasekit.campaign import Run, append_run
    from phasekit.record.runner import CampaignPlan, run_campaign

    log = tmp_path / "c.jsonl"
    append_run(log, Run(threads=1, input="a", repetition=1, time_s=0.5))
    with log.open("a") as fh:
        fh.write('{"threads":1,"cores":null,"frequency_ghz":null,"input":"b","repeti')
    plan = CampaignPlan(("sh", "-c", "true", "run", "{input}"), threads=(1,),
                        inputs=("a", "b"), use_rapl=False)
    with pytest.warns(PhasekitWarning, match="skipped 1 line"):
        run_campaign(plan, log)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs = read_campaign(log).runs
    assert sorted(r.key for r in runs) == [(1, None, None, "a", 1), (1, None, None, "b", 1)]
    assert [r.time_s for r in runs if r.input == "a"] == [0.5]  # kept, not made again


# --- record: a full disk ----------------------------------------------------------------------
#: The recording process with ENOSPC at the boundary where the stream is written: its file
#: object writes what fits in FAULT_FREE_BYTES, then fails as write(2) does on a full disk.
FULL_DISK = r"""
import errno, os, sys
import pyarrow as pa

real = pa.OSFile
left = [int(os.environ["FAULT_FREE_BYTES"])]


class FullDisk:
    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        self.closed = False

    def write(self, data):
        view = memoryview(data).cast("B")
        fits, done = min(len(view), left[0]), 0
        while done < fits:
            done += os.write(self.fd, view[done:fits])
        left[0] -= fits
        if fits < len(view):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return fits

    def writable(self):
        return True

    def readable(self):
        return False

    def seekable(self):
        return False

    def flush(self):
        pass

    def tell(self):
        return os.lseek(self.fd, 0, os.SEEK_CUR)

    def close(self):
        if not self.closed:
            os.close(self.fd)
            self.closed = True


def os_file(path, mode="r", *args, **kwargs):
    if "w" in mode and str(path).endswith(".partial.arrows"):
        return FullDisk(path)
    return real(path, mode, *args, **kwargs)


pa.OSFile = os_file
from phasekit.cli import entry_point

entry_point()
"""

#: fsync of the final file's temporary fails with ENOSPC (as on delayed-allocation file
#: systems and NFS, where the space is found missing at fsync, not at write).
FSYNC_FAILS = r"""
import errno, os
real = os.fsync

def fsync(fd):
    if ".tmp.parquet" in os.readlink(f"/proc/self/fd/{fd}"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real(fd)

os.fsync = fsync
from phasekit.cli import entry_point

entry_point()
"""

COMMAND = "sleep 3.5; echo ran > {marker}; exit 7"
INTERVAL = 0.001
#: A chunk holds a second of rows (FLUSH_INTERVAL): one lost leaves a hole that long, while
#: a paused VM delays a sample by tens of milliseconds.
NO_CHUNK_MISSING_S = FLUSH_INTERVAL / 2


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str) -> Iterator[bool]:
    """A tmpfs of ``size`` mounted on ``where``; False (nothing mounted) where mounting is
    not allowed."""
    where.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755",
                               "tmpfs", str(where)], capture_output=True, timeout=30)
    except OSError:
        yield False
        return
    try:
        yield done.returncode == 0
    finally:
        if done.returncode == 0:
            umounted = subprocess.run(["umount", str(where)], capture_output=True, timeout=30)
            if umounted.returncode:
                subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)


def _stream_rows(path: Path) -> tuple[list[float], int]:
    """Times of the rows of an Arrow stream read strictly to its end (an incomplete message
    raises), and its chunks."""
    times: list[float] = []
    chunks = 0
    with pa.OSFile(str(path)) as source:
        for batch in pa.ipc.open_stream(source):
            times.extend(batch.column(0).to_pylist())
            chunks += 1
    return times, chunks


def _record_full_disk(argv: list[str], disk: Path, tmp_path: Path, env: dict[str, str]
                      ) -> None:
    output = disk / "run.parquet"
    partial = disk / "run.parquet.partial.arrows"
    marker = tmp_path / "command-ended"
    command = ["sh", "-c", COMMAND.format(marker=marker)]
    with started([*argv, "record", "--sources", "proc", "--scope", "node", "--interval",
                  f"{INTERVAL * 1e3:g}ms", "-o", str(output), "--", *command],
                 env={**os.environ, **env}) as process:  # node: the sizes above are its columns
        _, err = process.communicate(timeout=60)
    lines = err.strip().splitlines()
    assert process.returncode == 7, err  # the command's exit code, as documented
    assert marker.read_text() == "ran\n"  # it ran to its end: not killed with the recording
    assert len(lines) == 1 and lines[0].startswith("phasekit: error: recording failed at "), err
    assert "No space left on device" in lines[0] and str(partial) in lines[0]
    assert "sh ran to its end and exited with code 7" in lines[0]
    said = re.search(r"failed at ([\d.]+) s: .*the (\d+) samples", lines[0])
    assert said is not None, lines[0]
    failed_at, samples = float(said.group(1)), int(said.group(2))
    assert sorted(p.name for p in disk.iterdir()) == [partial.name]
    times, chunks = _stream_rows(partial)  # strictly: whole chunks, nothing cut in the middle
    assert chunks >= 1 and len(times) == samples
    steps = [b - a for a, b in itertools.pairwise(times)]
    assert times[0] < NO_CHUNK_MISSING_S and min(steps) > 0
    assert max(steps) < NO_CHUNK_MISSING_S, max(steps)
    # kept up to the failure, nothing before lost
    assert abs(times[-1] - failed_at) < NO_CHUNK_MISSING_S, (times[-1], failed_at)
    with pytest.warns(PhasekitWarning, match="cut short"):
        profile = read_profile(partial)  # what a user reads back
    assert profile.duration == pytest.approx(times[-1], abs=0.05)


@pytest.mark.parametrize("fault", ["tmpfs", "injected"])
@pytest.mark.slow
def test_record_on_a_full_disk_keeps_every_chunk_and_the_exit_code(fault: str, tmp_path: Path
                                                                   ) -> None:
    if fault == "tmpfs":
        with small_tmpfs(tmp_path / "disk", "160k") as mounted:
            if mounted:  # 160 KiB: the header and one chunk (1 s at 1 ms) fit, not two
                _record_full_disk(PHASEKIT, tmp_path / "disk", tmp_path, {})
                return
    # injected (and tmpfs where mounting is not allowed): ENOSPC past 150 000 bytes of stream
    script = tmp_path / "full_disk.py"
    script.write_text(FULL_DISK)
    disk = tmp_path / "injected"
    disk.mkdir()
    _record_full_disk([sys.executable, str(script)], disk, tmp_path,
                      {"FAULT_FREE_BYTES": "150000"})


@pytest.mark.slow
def test_record_whose_final_file_does_not_fit_keeps_the_whole_stream(tmp_path: Path) -> None:
    script = tmp_path / "fsync_fails.py"
    script.write_text(FSYNC_FAILS)
    output = tmp_path / "run.parquet"
    partial = tmp_path / "run.parquet.partial.arrows"
    with started([sys.executable, str(script), "record", "--sources", "proc", "--interval",
                  "5ms", "-o", str(output), "--", "sh", "-c", "sleep 1; exit 3"]) as process:
        _, err = process.communicate(timeout=60)
    lines = err.strip().splitlines()
    assert process.returncode == 3 and len(lines) == 1, err
    assert lines[0].startswith(f"phasekit: error: could not write {output}: No space left")
    said = re.search(r"the (\d+) samples", lines[0])
    assert said is not None and str(partial) in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([partial.name, script.name])
    times, _ = _stream_rows(partial)
    assert len(times) == int(said.group(1)) and times[-1] > 0.9  # the whole recording


# --- Dask: a worker killed mid-analysis -------------------------------------------------------
@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Four 30-minute node profiles (each about a second of analysis on a worker)."""
    from phasekit.io import write_profile
    from phasekit.synth import generate_nodes

    folder = tmp_path_factory.mktemp("nodes")
    profiles, _ = generate_nodes("nemo", n_nodes=4, minutes=30.0, seed=3)
    for profile in profiles:
        write_profile(profile, folder / f"{profile.node}.parquet")
    return [str(folder / f"{profile.node}.parquet") for profile in profiles]


@contextlib.contextmanager
def dask_cluster(allowed_failures: int) -> Iterator[Any]:
    """Two worker processes (one thread each, under nannies that restart a killed worker) on
    loopback; the scheduler retries a task whose worker died ``allowed_failures`` times."""
    import dask
    import distributed

    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     host="127.0.0.1", dashboard_address=None,
                                     memory_limit="1GiB") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client


def kill_a_busy_worker(client: Any, running: Callable[[], bool]) -> str:
    """SIGKILL, by PID, the first worker seen executing a task; its address."""
    def busy(dask_worker: Any) -> list[str]:  # nested: pickled by value for any worker
        return [str(ts.key) for ts in dask_worker.state.executing]

    pids = client.run(os.getpid)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and running():
        for address, keys in client.run(busy).items():
            if keys:
                os.kill(pids[address], signal.SIGKILL)
                return str(address)
        time.sleep(0.01)
    raise AssertionError("no worker was seen analyzing before the end")


def _retried(client: Any) -> int:
    """How many tasks the scheduler started more than once."""
    def count(dask_scheduler: Any) -> int:
        started = collections.Counter(t[0] for t in dask_scheduler.transition_log
                                      if t[2] == "processing")
        return sum(n > 1 for n in started.values())

    return int(client.run_on_scheduler(count))


@pytest.mark.slow
def test_dask_worker_killed_mid_analysis_the_task_is_retried(nodes: list[str]) -> None:
    from phasekit.many import periodicity_many

    with dask_cluster(allowed_failures=3) as client:
        analysis = Background(lambda: periodicity_many(nodes, client=client))
        kill_a_busy_worker(client, lambda: not analysis.done())
        result = analysis.result(timeout=60)
        assert _retried(client) >= 1  # the kill hit a task, which ran again elsewhere
    assert not result.errors
    assert sorted(n.file for n in result.nodes) == sorted(nodes)
    assert all(n.patterns for n in result.nodes)


@pytest.mark.slow
def test_dask_worker_killed_mid_analysis_the_cli_names_the_node(nodes: list[str]) -> None:
    with dask_cluster(allowed_failures=0) as client:
        address = client.scheduler.address
        with started([*PHASEKIT, "analyze", *nodes, "--json", "--scheduler", address]
                     ) as process:
            reader = Background(process.communicate)
            kill_a_busy_worker(client, lambda: process.poll() is None)
            stdout, stderr = reader.result(timeout=60)
    assert process.returncode == 5, stderr
    result = json.loads(stdout)
    done = [n["file"] for n in result["nodes"]]
    failed = [e["file"] for e in result["errors"]]
    assert sorted(done + failed) == sorted(nodes) and failed and done
    lines = stderr.strip().splitlines()
    assert len(lines) == len(failed), stderr
    for file, line in zip(failed, lines, strict=True):
        assert line.startswith(f"phasekit: error: {file}: the Dask worker running it died")
    assert "Traceback" not in stderr and "internal error" not in stderr


@pytest.mark.slow
def test_dask_cluster_left_without_workers_reports_the_nodes(nodes: list[str],
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """The only worker, without a nanny to restart it, is killed: the nodes not analyzed are
    reported as failed once the cluster has had no worker for NO_WORKERS_TIMEOUT, instead of
    being waited for forever."""
    import distributed

    from phasekit import parallel
    from phasekit.many import periodicity_many

    monkeypatch.setattr(parallel, "NO_WORKERS_TIMEOUT", 2.0)
    monkeypatch.setattr(parallel, "WORKER_CHECK_S", 0.2)
    with distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client, \
            started([sys.executable, "-m", "distributed.cli.dask_worker",
                     cluster.scheduler_address, "--no-nanny", "--nthreads", "1",
                     "--no-dashboard", "--host", "127.0.0.1"], stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL):
        client.wait_for_workers(1, timeout=60)
        analysis = Background(lambda: periodicity_many(nodes, client=client))
        kill_a_busy_worker(client, lambda: not analysis.done())
        result = analysis.result(timeout=30)
    failed = [e.file for e in result.errors]
    assert failed and sorted(failed + [n.file for n in result.nodes]) == sorted(nodes)
    assert all(e.message == f"{e.file}: no Dask worker left to run it (none on the cluster "
               "for 2 s)" for e in result.errors), result.errors
